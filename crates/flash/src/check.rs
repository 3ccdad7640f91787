//! Consistency checks of the whole model (tests, debug runs): O(device).

use crate::{Ftl, NONE};
use nowa_logspace::UnitState;

impl Ftl {
    /// Number of mapped LBAs (the host's live data on flash, excluding the write buffer), by
    /// scanning the mapping.
    #[must_use]
    pub fn mapped_pages(&self) -> u64 {
        self.l2p.iter().filter(|&&p| p != 0).count() as u64
    }

    /// Pages held by the write buffer.
    #[must_use]
    pub fn buffered_pages(&self) -> u64 {
        self.buffer.as_ref().map_or(0, |b| b.len() as u64)
    }

    /// How far unit `u` is written: open frontiers, zones and units queued for the host are
    /// written up to their pointer; sealed and in-GC units are full.
    fn written_up_to(&self, u: u32) -> u32 {
        let queued = self
            .compact
            .iter()
            .flat_map(|c| c.queue.iter().flatten().copied());
        self.frontiers
            .iter()
            .map(|f| (f.unit, f.wp))
            .chain(self.zones.iter().map(|z| (z.unit, z.wp)))
            .chain(queued)
            .find(|&(unit, _)| unit == u && unit != NONE)
            .map_or(self.unit_pages, |(_, wp)| wp)
    }

    /// Full consistency check (O(device)): every mapped LBA points to a programmed page of a
    /// non-free unit whose reverse entry names it; valid counts equal mapped pages per unit;
    /// media = host - absorbed + GC copies; the live counter equals the mapped pages.
    ///
    /// # Errors
    /// A description of the first broken invariant.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.space.check_invariants();
        let mut per_unit = vec![0u32; self.layout.units as usize];
        for (lba, &p) in self.l2p.iter().enumerate() {
            if p == 0 {
                continue;
            }
            let ppn = p - 1;
            let u = self.unit_of(ppn);
            if self.space.state(u) == UnitState::Free {
                return Err(format!("LBA {lba} maps to page {ppn} in erased unit {u}"));
            }
            if self.p2l.lba(ppn) as usize != lba {
                return Err(format!(
                    "LBA {lba} -> page {ppn} but page {ppn} -> LBA {}",
                    self.p2l.lba(ppn)
                ));
            }
            let written = self.written_up_to(u);
            if ppn % self.unit_pages >= written {
                return Err(format!(
                    "LBA {lba} maps to unwritten page {ppn} (unit {u} written up to {written})"
                ));
            }
            per_unit[u as usize] += 1;
        }
        for (u, &n) in (0u32..).zip(&per_unit) {
            if self.space.valid(u) != n {
                return Err(format!(
                    "unit {u}: valid count {} but {n} LBAs map to it",
                    self.space.valid(u)
                ));
            }
        }
        let mapped: u64 = per_unit.iter().map(|&n| u64::from(n)).sum();
        if let Some(live) = self.placer.as_ref().map(nowa_logspace::Placer::live) {
            if mapped != live {
                return Err(format!("live counter {live} but {mapped} LBAs mapped"));
            }
        }
        let c = self.counters();
        if c.media_pages != self.host_programs + c.gc_pages {
            return Err(format!(
                "media pages {} != host programs {} + GC copies {}",
                c.media_pages, self.host_programs, c.gc_pages
            ));
        }
        let accounted =
            self.host_programs + c.buffer_absorbed + self.buffer_trimmed + self.buffered_pages();
        if c.host_pages != accounted {
            return Err(format!("host pages {} != programmed + absorbed + trimmed in buffer + buffered = {accounted}", c.host_pages));
        }
        Ok(())
    }
}
