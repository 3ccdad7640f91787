//! Per-page times on the user-write clock, 4 bytes a page while they fit.
//!
//! SepBIT's last write times, WARCIP's, FK's death times: one `u64` per logical page was 8 B
//! per page, the largest part of a placement scheme's memory (15.9 B per physical page in
//! all with SepBIT). The clock counts user writes, so every time fits 32 bits until 2^32 - 1
//! writes (16 TiB of 4 KiB writes): the table starts with `u32` entries and widens itself,
//! once, to `u64` when a value does not fit. Reads return exactly the value stored, so the
//! schemes' decisions are those of the `u64` table.

/// The "none" value (never written, never dies): `u64::MAX`, the table's largest entry.
pub(crate) const NONE: u64 = u64::MAX;

/// A per-page time table (see the module docs). With `MARK`, each entry's top bit is a flag
/// a scheme lends to a wrapper ([`Times::set_mark`]: SepFrozenBIT's frozen bit beside
/// SepBIT's last write time, so one line per user write serves both); the times then keep
/// 31 of the 32 bits (63 of 64 once wide), and the table widens at 2^31 - 1 writes.
#[derive(Default)]
pub(crate) struct Times<const MARK: bool = false> {
    narrow: Vec<u32>,
    wide: Vec<u64>,
}

impl<const MARK: bool> Times<MARK> {
    /// The flag bit of a narrow entry (0 without `MARK`).
    const MARK32: u32 = if MARK { 1 << 31 } else { 0 };
    /// The flag bit of a wide entry (0 without `MARK`).
    const MARK64: u64 = if MARK { 1 << 63 } else { 0 };
    /// The largest narrow time field: it stands for [`NONE`].
    const NONE32: u32 = !Self::MARK32;
    /// The largest wide time field: it stands for [`NONE`].
    const NONE64: u64 = !Self::MARK64;

    /// `pages` entries, all `init` (a value that fits the narrow field, or [`NONE`]), flags
    /// clear.
    pub(crate) fn new(pages: usize, init: u64) -> Self {
        assert!(
            init == NONE || init < u64::from(Self::NONE32),
            "initial time fits"
        );
        let v = u32::try_from(init).map_or(Self::NONE32, |v| v.min(Self::NONE32));
        Times {
            // Random lookups: huge pages spare a TLB miss per lookup.
            narrow: crate::hugepage::filled(pages, v),
            wide: Vec::new(),
        }
    }

    /// The time of page `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> u64 {
        if self.wide.is_empty() {
            match self.narrow[i] & Self::NONE32 {
                v if v == Self::NONE32 => NONE,
                v => u64::from(v),
            }
        } else {
            match self.wide[i] & Self::NONE64 {
                v if v == Self::NONE64 => NONE,
                v => v,
            }
        }
    }

    /// Set the time of page `i`, keeping its flag (widens the table if `t` does not fit).
    #[inline]
    pub(crate) fn set(&mut self, i: usize, t: u64) {
        if self.wide.is_empty() {
            if t < u64::from(Self::NONE32) || t == NONE {
                let v = u32::try_from(t).map_or(Self::NONE32, |v| v.min(Self::NONE32));
                let e = &mut self.narrow[i];
                *e = (*e & Self::MARK32) | v;
                return;
            }
            self.widen();
        }
        assert!(t == NONE || t < Self::NONE64, "time {t} fits 63 bits");
        let e = &mut self.wide[i];
        *e = (*e & Self::MARK64) | t.min(Self::NONE64);
    }

    /// Page `i`'s flag (always false without `MARK`).
    #[inline]
    pub(crate) fn mark(&self, i: usize) -> bool {
        if self.wide.is_empty() {
            self.narrow[i] & Self::MARK32 != 0
        } else {
            self.wide[i] & Self::MARK64 != 0
        }
    }

    /// Set or clear page `i`'s flag, keeping its time.
    #[inline]
    pub(crate) fn set_mark(&mut self, i: usize, on: bool) {
        assert!(MARK, "a table without flags");
        if self.wide.is_empty() {
            let e = &mut self.narrow[i];
            *e = if on {
                *e | Self::MARK32
            } else {
                *e & !Self::MARK32
            };
        } else {
            let e = &mut self.wide[i];
            *e = if on {
                *e | Self::MARK64
            } else {
                *e & !Self::MARK64
            };
        }
    }

    #[cold]
    fn widen(&mut self) {
        let narrow = std::mem::take(&mut self.narrow);
        self.wide = narrow
            .into_iter()
            .map(|v| {
                let flag = if v & Self::MARK32 == 0 {
                    0
                } else {
                    Self::MARK64
                };
                let t = v & Self::NONE32;
                flag | if t == Self::NONE32 {
                    Self::NONE64
                } else {
                    u64::from(t)
                }
            })
            .collect();
        assert!(!self.wide.is_empty(), "widening an empty table");
    }

    /// Prefetch page `i`'s entry ([`crate::prefetch::line`]).
    #[inline]
    pub(crate) fn prefetch(&self, i: usize) {
        if self.wide.is_empty() {
            crate::prefetch::line(&self.narrow, i);
        } else {
            crate::prefetch::line(&self.wide, i);
        }
    }

    /// Bytes held.
    pub(crate) fn memory_bytes(&self) -> u64 {
        super::bytes_of(&self.narrow) + super::bytes_of(&self.wide)
    }
}

#[cfg(test)]
mod tests {
    use super::{Times, NONE};

    /// Values read back exactly across the widening; 4 B a page before it, 8 after.
    #[test]
    fn narrow_until_a_value_needs_64_bits() {
        let mut t: Times = Times::new(4, NONE);
        assert_eq!(t.memory_bytes(), 16);
        t.set(0, 0);
        t.set(1, u64::from(u32::MAX) - 1);
        assert_eq!(
            (t.get(0), t.get(1), t.get(2)),
            (0, u64::from(u32::MAX) - 1, NONE)
        );
        assert_eq!(t.memory_bytes(), 16, "still narrow");
        t.set(2, u64::from(u32::MAX));
        assert_eq!(t.memory_bytes(), 32, "widened");
        assert_eq!(t.get(1), u64::from(u32::MAX) - 1);
        assert_eq!((t.get(2), t.get(3)), (u64::from(u32::MAX), NONE));
        t.set(3, 1 << 40);
        assert_eq!(t.get(3), 1 << 40);
        let z: Times = Times::new(2, 0);
        assert_eq!(z.get(1), 0);
        assert!(!z.mark(1), "no flags without MARK");
    }

    /// With flags: a time and its flag are set apart and read back apart, before and after
    /// the widening (now at 2^31 - 1), and NONE keeps its flag too.
    #[test]
    fn a_flag_rides_beside_each_time() {
        let mut t: Times<true> = Times::new(3, NONE);
        assert_eq!(t.memory_bytes(), 12);
        t.set_mark(0, true);
        assert_eq!((t.get(0), t.mark(0), t.mark(1)), (NONE, true, false));
        t.set(0, 7);
        t.set(1, (1 << 31) - 2);
        assert_eq!((t.get(0), t.mark(0)), (7, true), "the time keeps the flag");
        assert_eq!((t.get(1), t.mark(1)), ((1 << 31) - 2, false));
        t.set_mark(1, true);
        t.set_mark(0, false);
        assert_eq!(
            (t.get(0), t.mark(0), t.get(1), t.mark(1)),
            (7, false, (1 << 31) - 2, true)
        );
        assert_eq!(t.memory_bytes(), 12, "still narrow");
        t.set(2, (1 << 31) - 1);
        assert_eq!(t.memory_bytes(), 24, "widened where the flag starts");
        assert_eq!((t.get(0), t.mark(0)), (7, false));
        assert_eq!(
            (t.get(1), t.mark(1)),
            ((1 << 31) - 2, true),
            "flag carried over"
        );
        assert_eq!((t.get(2), t.mark(2)), ((1 << 31) - 1, false));
        t.set_mark(2, true);
        t.set(2, 1 << 40);
        t.set(0, NONE);
        assert_eq!((t.get(2), t.mark(2), t.get(0)), (1 << 40, true, NONE));
    }
}
