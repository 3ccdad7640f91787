//! The liveness phase, after the last epoch of a seed whose faults left the media intact:
//! the faults are off and the engine must make progress (TigerBeetle's VOPR checks liveness
//! the same way once it heals the network).
//!
//! - The page cleaner goes idle: with the foreground stopped, its steps run out of work
//!   within a bound, leave its free-frame target on the free list and add no dirty page.
//! - A full WAL recovers: overwrites (each value by one of its own length, so the live data
//!   keeps its size) run until the WAL passed 3/4 of its limit and came back under half of
//!   it; every write must succeed (the writers checkpoint at the limit instead of failing),
//!   and a checkpoint afterwards leaves less than half the limit live.
//! - DB GC frees zones: out of place, once the overwrites wrote more page bytes than the
//!   free zones held at the start (the fill is stated in the failure), GC must have
//!   reclaimed a zone, every write succeeded and the zone metadata equals the mapping.

use super::{Check, Sim, Stop};
use crate::model::Bytes;
use nowa_engine::{BackgroundTask, Engine};
use rand::RngExt;

/// Most overwrites of the phase.
const MAX_PUTS: usize = 4000;

impl Sim {
    /// The liveness phase (see the module documentation).
    pub(super) fn liveness(&mut self, e: &Engine) -> Check<()> {
        if self.media {
            return Ok(());
        }
        self.live_cleaner(e)?;
        self.live_overwrites(e)
    }

    fn live_cleaner(&mut self, e: &Engine) -> Check<()> {
        if !self.s.time.page_cleaner {
            return Ok(());
        }
        let (frames, dirty0) = e.pool_frames();
        let bound = frames + 16;
        let mut steps = 0;
        loop {
            let worked = self
                .step_task(e, BackgroundTask::PageCleaner)
                .map_err(|err| format!("liveness: a page cleaner step failed: {err}"))?;
            if !worked {
                break;
            }
            steps += 1;
            if steps > bound {
                return Err(format!(
                    "liveness: the page cleaner still finds work after {bound} steps with \
                     the foreground stopped"
                ));
            }
        }
        let (free, target) = e.pool_free_frames();
        let (_, dirty) = e.pool_frames();
        if free < target || dirty > dirty0 {
            return Err(format!(
                "liveness: the page cleaner went idle after {steps} steps with {free} free \
                 frames (target {target}) and {dirty} dirty (before: {dirty0})"
            ));
        }
        self.out.coverage.live_cleaner += 1;
        Ok(())
    }

    /// Free zones and zones of the out-of-place store (None in place).
    fn zone_fill(&self) -> Option<(usize, usize)> {
        let st = self.slot.lock().clone()?;
        let classes = st.zone_classes();
        let free = classes.iter().filter(|c| c.is_none()).count();
        Some((free, classes.len()))
    }

    fn live_overwrites(&mut self, e: &Engine) -> Check<()> {
        let mut pairs: Vec<(Bytes, Bytes)> = self.model.scan(&[], None, usize::MAX);
        if pairs.is_empty() {
            return Ok(());
        }
        // Longest values first: the WAL fills fastest.
        pairs.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
        pairs.truncate(256);
        let limit = e.config().wal_limit();
        let store_bytes = |e: &Engine| {
            let s = e.stats();
            s.user_store_bytes + s.gc_store_bytes + s.compensation_store_bytes
        };
        let (bytes0, zones0) = (store_bytes(e), e.stats().zones_reclaimed);
        let fill = self.zone_fill();
        let zone = self.s.oop.as_ref().map_or(0, |_| {
            self.slot.lock().as_ref().map_or(0, |s| s.zone_bytes())
        });
        let keys = self.model.len();
        let (mut high, mut back) = (false, false);
        for i in 0..MAX_PUTS {
            let (k, v) = &pairs[i % pairs.len()];
            let mut nv = v.clone();
            for b in &mut nv {
                *b = self.r.random();
            }
            self.model.issue(k, Some(&nv));
            if let Err(err) = e.put_with(k, &nv, nowa_engine::Durability::Async) {
                return Err(format!(
                    "liveness: overwrite {i} failed with the faults off (WAL {} of {limit} \
                     bytes live): {err}",
                    e.wal_used()
                ));
            }
            self.model.ack(false);
            self.out.ops += 1;
            match self.background(e) {
                Ok(()) => {}
                Err(Stop::Fail(w) | Stop::Explained(w)) => return Err(format!("liveness: {w}")),
                Err(Stop::Crash) => return Err("liveness: the power went off".into()),
            }
            let used = e.wal_used();
            high |= used >= limit / 4 * 3;
            back |= high && used < limit / 2;
            let gc_due =
                fill.is_some_and(|(free, _)| store_bytes(e) - bytes0 > (free as u64 + 2) * zone);
            if back && (fill.is_none() || gc_due) {
                break;
            }
        }
        assert_eq!(self.model.len(), keys, "overwrites keep the key set");
        e.checkpoint()
            .map_err(|err| format!("liveness: checkpoint failed: {err}"))?;
        self.model.durable();
        if e.wal_used() >= limit / 2 {
            return Err(format!(
                "liveness: {} of {limit} WAL bytes live after a checkpoint",
                e.wal_used()
            ));
        }
        self.out.coverage.live_wal += u64::from(back);
        self.live_gc(e, fill, store_bytes(e) - bytes0, zone, zones0)
    }

    fn live_gc(
        &mut self,
        e: &Engine,
        fill: Option<(usize, usize)>,
        written: u64,
        zone: u64,
        zones0: u64,
    ) -> Check<()> {
        let Some((free, zones)) = fill else {
            return Ok(());
        };
        let st = self.slot.lock().clone().expect("out of place");
        st.check_consistency()
            .map_err(|d| format!("liveness: store metadata inconsistent: {d}"))?;
        if written <= (free as u64 + 2) * zone {
            return Ok(());
        }
        let freed = e.stats().zones_reclaimed - zones0;
        if freed == 0 {
            return Err(format!(
                "liveness: {written} page bytes written into {free} free zones of {zones} \
                 ({}% full) and GC reclaimed none",
                (zones - free) * 100 / zones.max(1)
            ));
        }
        self.out.coverage.live_gc += 1;
        Ok(())
    }
}
