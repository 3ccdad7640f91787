//! Blind upserts, the engine's side (`crate::blind` keeps the changes, the pool applies
//! them): a put whose leaf is not in the pool is logged without reading the leaf; loads of
//! the oldest leaves bound the memory and let checkpoints move the redo LSN.

use super::Engine;
use crate::error::Result;
use crate::format::wal::RecordRef;
use crate::stats::EngineCounters;

/// Leaves a blind put loads at most when the pending changes are over their memory.
const DRAIN_PER_PUT: usize = 4;

impl Engine {
    /// Log `key -> value` as a blind change if blind updates are on and its leaf is not in
    /// the pool (nor is the root a leaf); its LSN then, else None (nothing logged).
    ///
    /// # Errors
    /// WAL append errors; `Corrupt` and device errors of the descent or of a drain.
    pub(super) fn put_blind(&self, key: &[u8], value: &[u8]) -> Result<Option<u64>> {
        let Some(b) = &self.blind else {
            return Ok(None);
        };
        let lsn = {
            let t = self.tree.read();
            if t.height < 2 {
                return Ok(None);
            }
            let pid = self.find_leaf(&t, key)?;
            b.try_add(
                pid,
                (key, value),
                || self.pool.is_mapped(pid),
                || {
                    // No previous LSN: the leaf is not read (redo skips that cross-check).
                    let rec = RecordRef::Put {
                        pid,
                        prev_lsn: 0,
                        key,
                        value,
                    };
                    let lsn = self.wal.append(&rec)?;
                    // Under the blind lock: no load of the leaf (which fills the cache) runs
                    // between the change and the cache's update.
                    if let Some(rc) = &self.rcache {
                        rc.update(key, value);
                    }
                    Ok(lsn)
                },
            )?
        };
        if lsn.is_some() {
            EngineCounters::add(&self.counters.blind_updates, 1);
            if b.over_limit() {
                self.drain_blind(u64::MAX, DRAIN_PER_PUT)?;
            }
        }
        Ok(lsn)
    }

    /// Load up to `max` leaves whose oldest blind change is below `below` (the load applies
    /// their changes); returns how many. Under the shared tree lock: no leaf with changes
    /// pending leaves the tree meanwhile (that takes the exclusive lock, after a load).
    ///
    /// # Errors
    /// As a page read.
    pub(super) fn drain_blind(&self, below: u64, max: usize) -> Result<usize> {
        let Some(b) = &self.blind else {
            return Ok(0);
        };
        let t = self.tree.read();
        let pids = b.oldest(below, max);
        for &pid in &pids {
            drop(self.pool.read(pid)?);
        }
        drop(t);
        EngineCounters::add(&self.counters.blind_drains, crate::num::u64_of(pids.len()));
        Ok(pids.len())
    }

    /// Blind changes pending: (leaves, changes, bytes); zeros with blind updates off. For
    /// tests and the simulation.
    #[must_use]
    pub fn blind_pending(&self) -> (usize, usize, u64) {
        self.blind.as_ref().map_or((0, 0, 0), |b| b.pending())
    }

    /// The oldest blind change's LSN, the floor a checkpoint pass keeps the redo LSN under
    /// (`u64::MAX`: none pending).
    pub(super) fn blind_floor(&self) -> u64 {
        self.blind
            .as_ref()
            .and_then(|b| b.min_lsn())
            .unwrap_or(u64::MAX)
    }
}
