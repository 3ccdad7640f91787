//! Placement-specific checks (a placement scheme or SepFrozen drawn, `placement.rs`), made
//! where the harness checks the zone metadata: every zone holding data or open has a class of
//! the scheme; across a clean close and reopen every zone holding data keeps the class its
//! header names; at a clean close the per-class collection counters add up to the zones the
//! DB GC reclaimed; the seeded oracle saw only valid images of the pages it was asked about.

use super::{Check, Sim};
use nowa_engine::{Engine, OutOfPlaceStore};

impl Sim {
    /// Classes of the drawn scheme (None: no scheme drawn).
    fn classes(&self) -> Option<u16> {
        self.s.placement.as_ref().map(|p| p.classes)
    }

    /// After an open (zone metadata = mapping already checked): the zones' classes.
    pub(super) fn check_classes_after_open(&mut self, st: &OutOfPlaceStore) -> Check<()> {
        let before = self.classes_at_close.take();
        let Some(n) = self.classes() else {
            return Ok(());
        };
        let after = st.zone_classes();
        if let Some((z, c)) = after
            .iter()
            .enumerate()
            .find_map(|(z, c)| c.filter(|&c| c >= n).map(|c| (z, c)))
        {
            return Err(format!(
                "zone {z} has class {c}, the scheme has {n} classes"
            ));
        }
        for (z, c) in after.iter().enumerate() {
            self.trace(u64::from(c.map_or(u16::MAX, |c| c)) ^ ((z as u64) << 16));
        }
        let Some(before) = before else {
            return Ok(());
        };
        if before.len() != after.len() {
            return Err(format!(
                "{} zones before the close, {} after the reopen",
                before.len(),
                after.len()
            ));
        }
        for (z, (b, a)) in before.iter().zip(&after).enumerate() {
            if a.is_some() && a != b {
                return Err(format!(
                    "zone {z}: class {a:?} after a clean reopen, {b:?} at the close"
                ));
            }
        }
        Ok(())
    }

    /// Before a clean close (no crash in the epoch, no media faults): the per-class counters
    /// against the engine's.
    pub(super) fn check_classes_before_close(&self, e: &Engine) -> Check<()> {
        if self.classes().is_none() || self.media {
            return Ok(());
        }
        let Some(st) = self.slot.lock().clone() else {
            return Ok(());
        };
        let collected: u64 = st.class_stats().iter().map(|c| c.units_collected).sum();
        let reclaimed = e.stats().zones_reclaimed;
        if collected != reclaimed {
            return Err(format!(
                "the classes count {collected} zones collected, the DB GC reclaimed {reclaimed}"
            ));
        }
        Ok(())
    }

    /// After a clean close: remember the zones' classes (as the close left them: its
    /// checkpoint writes, and may collect) for the reopen.
    pub(super) fn remember_classes(&mut self) {
        self.classes_at_close = None;
        if self.classes().is_none() || self.media {
            return;
        }
        if let Some(st) = self.slot.lock().clone() {
            self.classes_at_close = Some(st.zone_classes());
        }
    }

    /// The seeded oracle's log: no broken contract (unless media faults explain it); what it
    /// judged goes to the coverage and the trace.
    pub(super) fn check_oracle(&mut self) -> Check<()> {
        let Some(log) = self.s.placement.as_ref().and_then(|p| p.oracle.clone()) else {
            return Ok(());
        };
        let l = log.lock().clone();
        assert!(l.frozen <= l.pages, "more pages frozen than judged");
        self.out.coverage.frozen_batches = l.batches;
        self.out.coverage.frozen_pages = l.frozen;
        self.trace(l.pages ^ (l.frozen << 20) ^ (l.batches << 40));
        match l.bad {
            Some(why) if !self.media => Err(format!("SepFrozen: {why}")),
            _ => Ok(()),
        }
    }
}
