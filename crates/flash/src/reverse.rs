//! The reverse map (`p2l[ppn] = lba`) with FAR's GC-move counts packed into the LBA's unused
//! high bits.
//!
//! FAR needs, per physical page, how many times GC moved its data since the last user write.
//! A separate `u16` per page cost 2 B per physical page (9.8 B per page with FAR on instead of
//! 7.8 B). An LBA of a device with 2^k logical pages needs k bits, so the top `32 - k` bits of
//! each entry hold the count (8 bits at 64 GiB, 4 at 1 TiB). A count that does not fit (the
//! field at its maximum) lives in a side table keyed by the physical page, so the counts stay
//! exactly what the `u16` counts were (saturating at `u16::MAX`). The side table is cleared
//! per unit at erase (only units that hold such entries are scanned) and counted in the
//! model's memory.
//!
//! A user write stores the bare LBA: count 0, which is what an erased page has.

use std::collections::HashMap;

/// The reverse map and, when FAR is tracked, the packed move counts.
pub(crate) struct Reverse {
    map: Vec<u32>,
    /// The LBA bits of an entry.
    mask: u32,
    /// Where the count field starts (32: no field).
    shift: u32,
    /// The field value that means "look in `overflow`" (0 when there is no field).
    full: u32,
    far: bool,
    /// Counts of pages whose field is `full`, by physical page.
    overflow: HashMap<u32, u16>,
    /// Entries of `overflow` per unit (an erase scans only units that hold some).
    in_unit: Vec<u32>,
    unit_pages: u32,
}

impl Reverse {
    /// A reverse map of `physical` pages for `logical` LBAs, in units of `unit_pages`, with
    /// move counts when `far`.
    pub(crate) fn new(physical: u64, logical: u64, unit_pages: u32, far: bool) -> Reverse {
        Reverse::with_field(physical, logical, unit_pages, far, 16)
    }

    /// [`Reverse::new`] with the count field cut to at most `max_bits` (tests use a narrow
    /// field to drive the side table).
    pub(crate) fn with_field(
        physical: u64,
        logical: u64,
        unit_pages: u32,
        far: bool,
        max_bits: u32,
    ) -> Reverse {
        assert!(physical < u64::from(u32::MAX), "32-bit reverse map");
        assert!(logical <= physical, "more logical pages than physical");
        assert!(max_bits <= 16, "counts are u16");
        // Bits to hold every LBA below `logical`.
        let lba_bits = 64 - logical.saturating_sub(1).leading_zeros();
        let shift = if far { lba_bits.max(1) } else { 32 };
        let count_bits = (32 - shift).min(max_bits);
        let units = physical / u64::from(unit_pages);
        let mut map = vec![0u32; crate::to_usize(physical)];
        nowa_logspace::hugepage::advise(&mut map);
        Reverse {
            map,
            mask: u32::MAX.checked_shr(32 - shift).unwrap_or(0),
            shift,
            full: (1u32 << count_bits) - 1,
            far,
            overflow: HashMap::new(),
            in_unit: if far {
                vec![0; crate::to_usize(units)]
            } else {
                Vec::new()
            },
            unit_pages,
        }
    }

    /// The LBA stored at `ppn` (stale entries included: validity is the forward map's call).
    #[inline(always)]
    pub(crate) fn lba(&self, ppn: u32) -> u32 {
        self.map[ppn as usize] & self.mask
    }

    /// The whole entry at `ppn` (LBA and packed count), for [`Reverse::copy_moved`].
    #[inline(always)]
    pub(crate) fn raw(&self, ppn: u32) -> u32 {
        self.map[ppn as usize]
    }

    /// The LBA of an entry from [`Reverse::raw`].
    #[inline(always)]
    pub(crate) fn lba_of(&self, raw: u32) -> u32 {
        raw & self.mask
    }

    /// A user write (or a GC move without FAR) of `lba` into `ppn`: no moves behind it.
    #[inline(always)]
    pub(crate) fn set(&mut self, ppn: u32, lba: u32) {
        debug_assert_eq!(lba & !self.mask, 0, "LBA {lba} beyond the map's LBA bits");
        self.map[ppn as usize] = lba;
    }

    fn field(&self, raw: u32) -> u32 {
        raw.checked_shr(self.shift).unwrap_or(0)
    }

    /// GC moves of the data at `ppn` since its last user write (0 without FAR).
    pub(crate) fn moves(&self, ppn: u32) -> u16 {
        if !self.far {
            return 0;
        }
        let f = self.field(self.map[ppn as usize]);
        if f < self.full {
            u16::try_from(f).expect("the count field has at most 16 bits")
        } else {
            self.overflow.get(&ppn).copied().unwrap_or(0)
        }
    }

    /// Store `lba` at `ppn` with `count` GC moves behind it.
    pub(crate) fn set_moved(&mut self, ppn: u32, lba: u32, count: u16) {
        debug_assert!(self.far, "move counts without FAR");
        if u32::from(count) < self.full {
            self.map[ppn as usize] = lba | (u32::from(count) << self.shift);
            return;
        }
        self.map[ppn as usize] = lba | self.full.checked_shl(self.shift).unwrap_or(0);
        if self.overflow.insert(ppn, count).is_none() {
            self.in_unit[(ppn / self.unit_pages) as usize] += 1;
        }
    }

    /// GC moved the entry `raw` read at `old` to `new`: one more move (saturating).
    #[inline(always)]
    pub(crate) fn copy_moved(&mut self, old: u32, new: u32, raw: u32) {
        let f = self.field(raw);
        if f + 1 < self.full {
            // The common case: the count still fits its field.
            self.map[new as usize] = raw + (1 << self.shift);
        } else {
            self.copy_moved_wide(old, new, raw);
        }
    }

    #[cold]
    fn copy_moved_wide(&mut self, old: u32, new: u32, raw: u32) {
        let count = self.moves(old).saturating_add(1);
        self.set_moved(new, raw & self.mask, count);
    }

    /// Unit `u` was erased: drop its side-table entries.
    pub(crate) fn erase(&mut self, u: u32) {
        if !self.far || self.in_unit[u as usize] == 0 {
            return;
        }
        let base = u * self.unit_pages;
        for ppn in base..base + self.unit_pages {
            if self.field(self.map[ppn as usize]) == self.full {
                self.overflow.remove(&ppn);
                // The erased page's entry is rewritten before it is read again; clear it so a
                // stale count can never be taken for a live one.
                self.map[ppn as usize] &= self.mask;
            }
        }
        self.in_unit[u as usize] = 0;
    }

    /// Every count back to 0 (FAR's measured phase starts).
    pub(crate) fn reset_counts(&mut self) {
        if !self.far {
            return;
        }
        let mask = self.mask;
        self.map.iter_mut().for_each(|e| *e &= mask);
        self.overflow.clear();
        self.in_unit.fill(0);
    }

    /// Bytes held: the map, the per-unit entry counts and the side table (its slots and
    /// control bytes).
    pub(crate) fn memory_bytes(&self) -> u64 {
        let slot = std::mem::size_of::<(u32, u16)>() + 1;
        let bytes =
            self.map.capacity() * 4 + self.in_unit.capacity() * 4 + self.overflow.capacity() * slot;
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }

    /// Side-table entries (counts too large for their field).
    #[cfg(test)]
    pub(crate) fn overflow_len(&self) -> usize {
        self.overflow.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Reverse;

    /// Counts past the packed field's capacity go to the side table and come back exact, up
    /// to the u16 saturation the unpacked counts had; an erase drops them.
    #[test]
    fn counts_survive_the_field_and_the_side_table() {
        // 2^28 logical pages: 28 LBA bits, a 4-bit field (counts 0..=14 packed).
        let (physical, logical) = (1u64 << 29, 1u64 << 28);
        let mut r = Reverse::new(physical, logical, 1 << 20, true);
        let lba = (1u32 << 28) - 1;
        r.set(0, lba);
        let mut at = 0u32;
        for step in 1..=70_000u32 {
            let next = (at + 1) % (1 << 20);
            r.copy_moved(at, next, r.raw(at));
            at = next;
            let want = u16::try_from(step.min(u32::from(u16::MAX))).unwrap();
            assert_eq!(r.moves(at), want, "after {step} moves");
            assert_eq!(r.lba(at), lba);
        }
        assert!(r.overflow_len() > 0);
        r.erase(0);
        assert_eq!(
            r.overflow_len(),
            0,
            "an erase drops the unit's side entries"
        );
        r.set(5, 7);
        assert_eq!(r.moves(5), 0);
        r.set_moved(5, 7, 20);
        assert_eq!((r.lba(5), r.moves(5)), (7, 20));
        r.reset_counts();
        assert_eq!((r.lba(5), r.moves(5)), (7, 0));
    }

    /// Without FAR the entry is the bare LBA.
    #[test]
    fn without_far_entries_are_lbas() {
        let mut r = Reverse::new(1 << 20, 1 << 20, 256, false);
        r.set(3, (1 << 20) - 1);
        assert_eq!(r.lba(3), (1 << 20) - 1);
        assert_eq!(r.raw(3), (1 << 20) - 1);
        assert_eq!(r.moves(3), 0);
        r.erase(0);
        r.reset_counts();
        assert_eq!(r.lba(3), (1 << 20) - 1);
    }
}
