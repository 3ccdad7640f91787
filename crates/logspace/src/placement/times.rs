//! Per-page times on the user-write clock, 4 bytes a page while they fit.
//!
//! SepBIT's last write times, WARCIP's, FK's death times: one `u64` per logical page was 8 B
//! per page, the largest part of a placement scheme's memory (15.9 B per physical page in
//! all with SepBIT). The clock counts user writes, so every time fits 32 bits until 2^32 - 1
//! writes (16 TiB of 4 KiB writes): the table starts with `u32` entries and widens itself,
//! once, to `u64` when a value does not fit. Reads return exactly the value stored, so the
//! schemes' decisions are those of the `u64` table.

/// The "none" value (never written, never dies): `u64::MAX`, stored as `u32::MAX` while narrow.
pub(crate) const NONE: u64 = u64::MAX;

/// A per-page time table (see the module docs).
#[derive(Default)]
pub(crate) struct Times {
    narrow: Vec<u32>,
    wide: Vec<u64>,
}

impl Times {
    /// `pages` entries, all `init` (a value that fits 32 bits, or [`NONE`]).
    pub(crate) fn new(pages: usize, init: u64) -> Times {
        assert!(
            init == NONE || init < u64::from(u32::MAX),
            "initial time fits"
        );
        let v = u32::try_from(init).unwrap_or(u32::MAX);
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
            match self.narrow[i] {
                u32::MAX => NONE,
                v => u64::from(v),
            }
        } else {
            self.wide[i]
        }
    }

    /// Set the time of page `i` (widens the table if `t` needs 64 bits).
    #[inline]
    pub(crate) fn set(&mut self, i: usize, t: u64) {
        if self.wide.is_empty() {
            if t < u64::from(u32::MAX) || t == NONE {
                self.narrow[i] = u32::try_from(t).unwrap_or(u32::MAX);
                return;
            }
            self.widen();
        }
        self.wide[i] = t;
    }

    #[cold]
    fn widen(&mut self) {
        let narrow = std::mem::take(&mut self.narrow);
        self.wide = narrow
            .into_iter()
            .map(|v| if v == u32::MAX { NONE } else { u64::from(v) })
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
        let mut t = Times::new(4, NONE);
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
        let z = Times::new(2, 0);
        assert_eq!(z.get(1), 0);
    }
}
