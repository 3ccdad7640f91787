//! The GC of the SSD-iq reference simulator (`gabriel-haas/ssdiq`, `sim/SSD.hpp`
//! `compactUntilFreeBlock(victims)` with `sim/TwoR.hpp`), used with the `2r-greedy` and
//! `2r-fifo` policies:
//!
//! - GC runs only when the host block is full and no block is free (no reserve).
//! - The policy picks a batch of victims whose garbage adds up to at least one unit.
//! - The batch is compacted into itself: from the last victim backwards, each victim is
//!   compacted in place and then filled with the valid pages of the victim before it, until
//!   it is full; the first victim ends up empty and is erased. Every valid page is written
//!   once. We reproduce the resulting fill of every victim exactly and which pages land in it
//!   (the pages in the order last victim first, each victim's pages in position order), but
//!   write them into fresh units: physical identity does not matter to the model.
//! - Full victims become cold units (class 1: the cold region of 2R-Greedy, the tail of
//!   2R-FIFO's list, in victim order). The rest, the erased first one and any victim left
//!   partly filled, go back to the free list in victim order and the host writes into them
//!   next (a partly filled one keeps its GC pages and gets host pages after them; when full it
//!   is a normal, class-0 unit).
//! - If the policy cannot gather one unit of garbage (the reference would loop forever or
//!   fail an assertion), the least valid sealed units complete the batch.

use crate::{FlashError, Frontier, Ftl, NONE};
use std::collections::VecDeque;

/// State of the reference GC: the units the host writer takes next.
#[derive(Default)]
pub(crate) struct Compact {
    /// `Some((unit, fill))`: an open unit partly filled by GC; `None`: a fresh free unit.
    pub(crate) queue: VecDeque<Option<(u32, u32)>>,
    buf: Vec<(u32, u16)>,
}

/// The fill of every victim after the reference's chain compaction (index = victim order).
/// The first victim always ends empty when the batch holds at least one unit of garbage.
pub(crate) fn chain_fills(valid: &[u32], cap: u32) -> Vec<u32> {
    let n = valid.len();
    let mut fills = vec![0u32; n];
    if n == 0 {
        return fills;
    }
    // The last victim is compacted in place first.
    let mut dest = valid[n - 1];
    for i in (1..n).rev() {
        let src = valid[i - 1];
        debug_assert!(dest <= cap && src <= cap, "fills within a unit");
        let moved = src.min(cap - dest);
        fills[i] = dest + moved;
        dest = src - moved;
    }
    fills[0] = dest;
    fills
}

fn garbage_of(f: &Ftl, victims: &[u32], cap: u64) -> u64 {
    victims
        .iter()
        .map(|&u| cap - u64::from(f.space.valid(u)))
        .sum()
}

impl Ftl {
    /// The host frontier (frontier 0) is full or has no unit: seal it; take the next queued
    /// unit, a free one, or run the reference GC.
    pub(crate) fn compact_make_room(&mut self) -> Result<(), FlashError> {
        let fr = self.frontiers[0];
        if fr.unit != NONE && fr.wp < self.unit_pages {
            return Ok(());
        }
        if fr.unit != NONE {
            self.seal_unit(fr.unit);
            self.frontiers[0].unit = NONE;
        }
        for _ in 0..=self.layout.units {
            let next = self.compact.as_mut().and_then(|c| c.queue.pop_front());
            match next {
                Some(Some((u, fill))) => {
                    assert!(fill < self.unit_pages, "a queued unit has room");
                    self.space.set_class(u, 0);
                    self.frontiers[0] = Frontier { unit: u, wp: fill };
                    return Ok(());
                }
                Some(None) => {
                    let u = self.space.open_unit(0)?;
                    self.frontiers[0] = Frontier { unit: u, wp: 0 };
                    return Ok(());
                }
                None if self.space.free_units() > 0 => {
                    let u = self.space.open_unit(0)?;
                    self.frontiers[0] = Frontier { unit: u, wp: 0 };
                    return Ok(());
                }
                None => self.compact_gc()?,
            }
        }
        Err(FlashError::DeviceFull)
    }

    /// Victims until their garbage reaches one unit: the policy's batch, completed with the
    /// least valid sealed units if the policy falls short.
    fn compact_victims(&mut self) -> Result<(), FlashError> {
        let cap = u64::from(self.unit_pages);
        self.victims.clear();
        let mut victims = std::mem::take(&mut self.victims);
        let _ = self.space.pick_victims(&mut victims);
        if garbage_of(self, &victims, cap) < cap {
            // The scan reached the end of the list: the next call starts from the head.
            let _ = self.space.pick_victims(&mut victims);
        }
        while garbage_of(self, &victims, cap) < cap {
            let least = (0..self.layout.units)
                .filter(|&u| self.space.state(u) == nowa_logspace::UnitState::Sealed)
                .min_by_key(|&u| self.space.valid(u));
            let Some(u) = least.filter(|&u| u64::from(self.space.valid(u)) < cap) else {
                self.victims = victims;
                return Err(FlashError::DeviceFull);
            };
            self.space.take_victim(u)?;
            victims.push(u);
        }
        self.victims = victims;
        Ok(())
    }

    /// One reference GC round (see the module docs).
    pub(crate) fn compact_gc(&mut self) -> Result<(), FlashError> {
        self.compact_victims()?;
        let victims = std::mem::take(&mut self.victims);
        let valid: Vec<u32> = victims.iter().map(|&v| self.space.valid(v)).collect();
        let fills = chain_fills(&valid, self.unit_pages);
        assert_eq!(fills[0], 0, "the first victim must end empty");
        assert_eq!(
            fills.iter().map(|&f| u64::from(f)).sum::<u64>(),
            valid.iter().map(|&v| u64::from(v)).sum::<u64>(),
            "compaction keeps every valid page"
        );
        // Gather the valid pages, last victim first, each in position order.
        let mut st = self.compact.take().expect("compaction state");
        st.buf.clear();
        for &v in victims.iter().rev() {
            let base = v * self.unit_pages;
            for ppn in base..base + self.unit_pages {
                let lba = self.p2l.lba(ppn);
                if self.l2p[lba as usize] == ppn + 1 {
                    st.buf.push((lba, self.p2l.moves(ppn)));
                }
            }
        }
        let moved: u32 = valid.iter().sum();
        assert_eq!(
            st.buf.len(),
            moved as usize,
            "valid counts out of sync with the mapping"
        );
        for (&v, &n) in victims.iter().zip(&valid) {
            self.space.sub_valid(v, n);
            self.erase_unit(v);
        }
        let units = self.write_fills(&fills, &st.buf)?;
        // Victim order: the first (empty) is free, full ones are cold units, partial ones go
        // back to the host writer.
        st.queue.push_back(None);
        for (i, &fill) in fills.iter().enumerate().skip(1) {
            match units[i] {
                Some(u) if fill == self.unit_pages => self.seal_unit(u),
                Some(u) => st.queue.push_back(Some((u, fill))),
                None => st.queue.push_back(None),
            }
        }
        self.compact = Some(st);
        self.victims = victims;
        self.c.media_pages += u64::from(moved);
        self.c.gc_pages += u64::from(moved);
        self.c.gc_rounds += 1;
        Ok(())
    }

    /// Write the gathered pages into fresh units with the reference's fills (victim n-1
    /// first); returns the unit standing in for each victim (None: left empty).
    fn write_fills(
        &mut self,
        fills: &[u32],
        buf: &[(u32, u16)],
    ) -> Result<Vec<Option<u32>>, FlashError> {
        let mut units = vec![None; fills.len()];
        let mut k = 0usize;
        for i in (1..fills.len()).rev() {
            if fills[i] == 0 {
                continue;
            }
            let u = self.space.open_unit(1)?;
            let base = u * self.unit_pages;
            for (ppn, &(lba, moves)) in (base..base + fills[i]).zip(&buf[k..]) {
                if self.cfg.track_far {
                    self.p2l.set_moved(ppn, lba, moves.saturating_add(1));
                } else {
                    self.p2l.set(ppn, lba);
                }
                self.l2p[lba as usize] = ppn + 1;
            }
            k += fills[i] as usize;
            self.space.add_valid(u, fills[i]);
            units[i] = Some(u);
        }
        assert_eq!(k, buf.len(), "every gathered page written once");
        Ok(units)
    }
}

#[cfg(test)]
mod tests {
    use super::chain_fills;

    #[test]
    fn chain_fills_match_the_reference_compaction() {
        // Two victims: the last takes the first's pages.
        assert_eq!(chain_fills(&[3, 3], 10), vec![0, 6]);
        // Three, full chain: [v0 6, v1 5, v2 9] -> v2 full (9 + 1), v1 full (4 + 6).
        assert_eq!(chain_fills(&[6, 5, 9], 10), vec![0, 10, 10]);
        // A source empties into its destination: two partly filled victims.
        assert_eq!(chain_fills(&[7, 4, 5], 10), vec![0, 7, 9]);
        assert_eq!(chain_fills(&[0], 10), vec![0]);
        let f = chain_fills(&[9, 9, 9, 9, 1], 10);
        assert_eq!(f.iter().sum::<u32>(), 37);
        assert_eq!(f[0], 0);
    }
}
