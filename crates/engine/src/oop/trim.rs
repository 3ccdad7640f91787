//! The early trim of dead zones (`OopConfig::trim_dead_zones`, docs/engine-writes.md
//! "Session 4"): a sealed zone whose every copy died (each page in it has a newer durable
//! copy elsewhere, or was released) is reclaimed at once, trimmed and freed, instead of
//! waiting until DB GC needs free zones. Why: with deltas most copies die young (merged or
//! consolidated deltas), and until the zone is trimmed the SSD holds them as valid data; when
//! the WAL shares the SSD's write stream, its GC copies them (SSD WAF 1.36 on the 3 M-op run).
//!
//! Crash safety is DB GC's for a victim without valid pages: it runs after the write batch's
//! device flush and mapping commit, so every newer copy that killed the zone's copies is
//! durable before the trim; the open drops snapshot entries into zones trimmed since
//! (`recovery.rs`), as it does after a GC round. The zone goes through the victim protocol
//! (taken from the victim policy, announced to the placement) so group and queue bookkeeping
//! (NoWA, MiDAS) see the same sequence as for a GC victim.

use super::{OutOfPlaceStore, State};
use crate::error::Result;
use crate::stats::EngineCounters;
use nowa_logspace::UnitState;

impl OutOfPlaceStore {
    /// Sealed zones without a valid byte.
    fn dead_zones(&self) -> Vec<u32> {
        let st = self.st.read();
        let space = st.space.lock();
        (0..self.geo.zones)
            .filter(|&z| space.state(z) == UnitState::Sealed && space.valid(z) == 0)
            .collect()
    }

    /// Reclaim every dead zone now (after a user write batch is durable and committed; caller
    /// holds `io`). Returns how many were trimmed.
    pub(super) fn trim_dead_zones(&self) -> Result<u32> {
        if !self.cfg.trim_dead_zones {
            return Ok(0);
        }
        let dead = self.dead_zones();
        for &z in &dead {
            {
                let mut guard = self.st.write();
                let st: &mut State = &mut guard;
                let space = st.space.get_mut();
                assert_eq!(space.valid(z), 0, "zone {z}: dead when chosen");
                space
                    .take_victim(z)
                    .expect("a sealed zone is a victim the space can take");
                st.placer.get_mut().collect(space, z, None);
            }
            self.reclaim_zone(z)?;
            EngineCounters::add(&self.counters.zones_trimmed_dead, 1);
        }
        Ok(u32::try_from(dead.len()).expect("zones fit u32"))
    }
}
