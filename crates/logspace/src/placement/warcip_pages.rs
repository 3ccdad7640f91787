//! WARCIP's per-page state in one 4-byte word per page, for writers that keep GC in order
//! ([`super::Geometry::gc_in_order`]).
//!
//! WARCIP keeps, per page, the time of its last user write `last` and a `penalty`: 0 after a
//! user write, `g - last` after a GC rewrite at time `g` (the latest one). Two times per page
//! were 8 bytes. But a page has a penalty exactly when its current copy was written by GC, so
//! `g` is the write time of that copy, which lies in a class-0 unit (WARCIP sends every GC
//! rewrite there and no user write). GC rewrites happen in *bursts* (the GC of one user write:
//! the clock does not move), and a class-0 unit is filled by a few consecutive bursts. So the
//! word keeps `last` (28 bits, 60 once widened) and a 4-bit code naming the burst *within
//! the unit holding the copy*:
//! - 0: no penalty (no GC rewrite since the last user write);
//! - 1..=14: the burst `b` with `b % 14 == code - 1`, among the 14 bursts from the unit's
//!   base (the burst current when the class-0 unit before it was sealed);
//! - 15: the GC time is kept exactly in a side map (a unit filled over more than 14 bursts).
//!
//! The writer reports the unit of the old copy when a page is overwritten or trimmed
//! ([`super::Placement::on_invalidate`]), which is when the code is read. Decoding is exact
//! because the writer appends each GC rewrite right after its `classify` in the same burst,
//! fills class 0's units one at a time and reports each seal before the next unit takes a page:
//! a page in unit U was rewritten in a burst `b >= base(U)`, and the encoder falls back to the
//! side map unless `b - base < 14` for the open unit's base, which is at most `base(U)`.

use super::{bytes_of, UnitInfo};
use std::collections::HashMap;

/// The "never written" time ([`super::times::NONE`]).
const NONE: u64 = u64::MAX;
/// Residues of a burst index a code names (codes 1..=14).
const RES: u64 = 14;
/// The code of a page whose GC time is in the side map.
const EXACT: u8 = 15;
/// A unit with no recorded base (never sealed as a class-0 unit).
const NO_BASE: u64 = u64::MAX;

/// A table of (`last`, code) words: `u32` entries (28-bit time) until a time needs more, then
/// `u64` (60-bit time), widened once; reads return exactly what was stored.
#[derive(Default)]
pub(super) struct Words {
    narrow: Vec<u32>,
    wide: Vec<u64>,
}

impl Words {
    const NONE32: u32 = (1 << 28) - 1;
    const NONE64: u64 = (1 << 60) - 1;

    /// `pages` words, all never written with code 0.
    pub(super) fn new(pages: usize) -> Self {
        Words {
            narrow: crate::hugepage::filled(pages, Self::NONE32),
            wide: Vec::new(),
        }
    }

    /// Page `i`'s last write time ([`NONE`]: never) and code.
    #[inline]
    pub(super) fn get(&self, i: usize) -> (u64, u8) {
        let (t, code) = if self.wide.is_empty() {
            let w = self.narrow[i];
            let t = w & Self::NONE32;
            (
                if t == Self::NONE32 {
                    NONE
                } else {
                    u64::from(t)
                },
                w >> 28,
            )
        } else {
            let w = self.wide[i];
            let t = w & Self::NONE64;
            (if t == Self::NONE64 { NONE } else { t }, (w >> 60) as u32)
        };
        (t, u8::try_from(code).expect("a 4-bit code"))
    }

    /// Set page `i`'s time and code (widens the table if `t` does not fit 28 bits).
    #[inline]
    pub(super) fn set(&mut self, i: usize, t: u64, code: u8) {
        assert!(code <= EXACT, "code {code} fits 4 bits");
        if self.wide.is_empty() {
            if t < u64::from(Self::NONE32) || t == NONE {
                let v = u32::try_from(t).map_or(Self::NONE32, |v| v.min(Self::NONE32));
                self.narrow[i] = (u32::from(code) << 28) | v;
                return;
            }
            self.widen();
        }
        assert!(t == NONE || t < Self::NONE64, "time {t} fits 60 bits");
        self.wide[i] = (u64::from(code) << 60) | t.min(Self::NONE64);
    }

    #[cold]
    fn widen(&mut self) {
        let narrow = std::mem::take(&mut self.narrow);
        self.wide = narrow
            .into_iter()
            .map(|w| {
                let t = w & Self::NONE32;
                let t = if t == Self::NONE32 {
                    Self::NONE64
                } else {
                    u64::from(t)
                };
                (u64::from(w >> 28) << 60) | t
            })
            .collect();
    }

    /// Prefetch page `i`'s word ([`crate::prefetch::line`]).
    #[inline]
    pub(super) fn prefetch(&self, i: usize) {
        if self.wide.is_empty() {
            crate::prefetch::line(&self.narrow, i);
        } else {
            crate::prefetch::line(&self.wide, i);
        }
    }

    fn memory_bytes(&self) -> u64 {
        bytes_of(&self.narrow) + bytes_of(&self.wide)
    }
}

/// The packed per-page state (see the module docs).
pub(super) struct Packed {
    words: Words,
    /// The distinct times of GC rewrites so far (bursts), ascending.
    bursts: Vec<u64>,
    /// Per unit: its base burst, recorded when it was sealed as a class-0 unit.
    base: Vec<u64>,
    /// The base of the open class-0 unit.
    open_base: u64,
    /// GC times of the pages coded [`EXACT`].
    exact: HashMap<u64, u64>,
    /// The GC time decoded at the last invalidation of a page with a penalty, for the user
    /// write that follows (or, if another invalidation comes first, a trimmed page's).
    pending: Option<(u64, u64)>,
    /// WARCIP's GC class.
    gc_class: u16,
    /// Debug builds: every page's penalty as the two-table WARCIP keeps it, to check each
    /// decoded penalty against.
    #[cfg(debug_assertions)]
    shadow: Vec<u64>,
}

impl Packed {
    /// State for `pages` pages in `units` units; GC rewrites go to `gc_class`.
    pub(super) fn new(pages: usize, units: u32, gc_class: u16) -> Self {
        Packed {
            words: Words::new(pages),
            bursts: Vec::new(),
            base: vec![NO_BASE; units as usize],
            open_base: 0,
            exact: HashMap::new(),
            pending: None,
            gc_class,
            #[cfg(debug_assertions)]
            shadow: vec![0; pages],
        }
    }

    /// The copy of `page` in `unit` became garbage (overwrite or trim): decode its GC time.
    pub(super) fn invalidated(&mut self, page: u64, i: usize, unit: &UnitInfo) {
        let (last, code) = self.words.get(i);
        if code == 0 || code == EXACT {
            return;
        }
        assert_eq!(
            unit.class, self.gc_class,
            "page {page} was last written by GC but its copy is in a class-{} unit",
            unit.class
        );
        let base = if unit.sealed {
            self.base[unit.unit as usize]
        } else {
            self.open_base
        };
        assert_ne!(
            base, NO_BASE,
            "sealed class-0 unit {} has a base",
            unit.unit
        );
        let r = u64::from(code - 1);
        let b = base + (r + RES - base % RES) % RES;
        let g = self.bursts[usize::try_from(b).expect("burst index")];
        assert!(
            g >= last,
            "GC time {g} of page {page} after its user write {last}"
        );
        if let Some((q, gq)) = self.pending.replace((page, g)) {
            if q != page {
                // A trimmed page (no user write followed): keep its GC time exactly.
                let (t, _) = self.words.get(usize::try_from(q).expect("page index"));
                self.words
                    .set(usize::try_from(q).expect("page index"), t, EXACT);
                self.exact.insert(q, gq);
            }
        }
    }

    /// A user write of `page` at `now`: the last write time before it ([`NONE`]: never) and
    /// the penalty; the page then has time `now` and no penalty.
    pub(super) fn user_write(&mut self, page: u64, i: usize, now: u64) -> (u64, u64) {
        let (last, code) = self.words.get(i);
        let g = match code {
            0 => None,
            EXACT => Some(self.exact.remove(&page).expect("an exact GC time")),
            _ => match self.pending {
                Some((q, g)) if q == page => {
                    self.pending = None;
                    Some(g)
                }
                _ => panic!("page {page} was moved by GC but its old copy was not reported"),
            },
        };
        self.words.set(i, now, 0);
        let penalty = g.map_or(0, |g| g - last);
        #[cfg(debug_assertions)]
        {
            assert_eq!(penalty, self.shadow[i], "page {page}'s decoded penalty");
            self.shadow[i] = 0;
        }
        (last, penalty)
    }

    /// A GC rewrite of `page` at `now`: its last user write time.
    pub(super) fn gc_write(&mut self, page: u64, i: usize, now: u64) -> u64 {
        let (last, code) = self.words.get(i);
        assert_ne!(last, NONE, "GC moved unwritten page {page}");
        debug_assert!(
            self.pending.is_none_or(|(q, _)| q != page),
            "GC moved page {page} whose copy was invalidated"
        );
        if code == EXACT {
            self.exact.remove(&page);
        }
        match self.bursts.last() {
            Some(&t) if t == now => {}
            t => {
                assert!(t.is_none_or(|&t| t < now), "GC times ascend");
                self.bursts.push(now);
            }
        }
        let b = self.bursts.len() as u64 - 1;
        let code = if b - self.open_base < RES {
            u8::try_from(1 + b % RES).expect("a code")
        } else {
            self.exact.insert(page, now);
            EXACT
        };
        self.words.set(i, last, code);
        #[cfg(debug_assertions)]
        {
            self.shadow[i] = now - last;
        }
        last
    }

    /// `unit` was sealed: a class-0 unit keeps the open base; the next one starts at the
    /// current burst.
    pub(super) fn sealed(&mut self, unit: &UnitInfo) {
        if unit.class == self.gc_class {
            self.base[unit.unit as usize] = self.open_base;
            self.open_base = (self.bursts.len() as u64).saturating_sub(1);
        }
    }

    /// Prefetch page `i`'s word.
    #[inline]
    pub(super) fn prefetch(&self, i: usize) {
        self.words.prefetch(i);
    }

    /// Bytes held (the side map at 24 bytes an entry).
    pub(super) fn memory_bytes(&self) -> u64 {
        self.words.memory_bytes()
            + bytes_of(&self.bursts)
            + bytes_of(&self.base)
            + 24 * self.exact.capacity() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::{Packed, UnitInfo, Words, EXACT, NONE};

    fn unit(unit: u32, sealed: bool) -> UnitInfo {
        UnitInfo {
            unit,
            class: 0,
            created_at: 0,
            sealed_at: 0,
            valid: 0,
            capacity: 4,
            sealed,
        }
    }

    /// Penalties come back exactly: from a sealed unit's base, from the open unit's, from the
    /// side map when the open unit has seen 14 bursts or more, and for a trimmed page whose
    /// GC time another invalidation moved to the side map.
    #[test]
    fn penalties_decode_from_the_unit_or_the_side_map() {
        let mut k = Packed::new(8, 4, 0);
        for (p, i) in (0..8u64).zip(0..) {
            assert_eq!(k.user_write(p, i, p + 1), (NONE, 0));
        }
        // Burst 0 (t = 10) fills unit 2; then bursts 1.. go to unit 3 (base 0).
        assert_eq!((k.gc_write(0, 0, 10), k.gc_write(1, 1, 10)), (1, 2));
        k.sealed(&unit(2, true));
        assert_eq!(k.gc_write(2, 2, 11), 3);
        for t in 12..=26 {
            k.gc_write(4, 4, t);
        }
        assert_eq!(k.words.get(4), (5, EXACT), "burst 15 of a unit based at 0");
        k.gc_write(3, 3, 26);
        assert_eq!(k.words.get(3).1, EXACT);
        assert_eq!(k.exact.len(), 2);
        k.invalidated(0, 0, &unit(2, true));
        assert_eq!(k.user_write(0, 0, 30), (1, 9), "GC at 10, sealed unit 2");
        k.invalidated(2, 2, &unit(3, false));
        assert_eq!(k.user_write(2, 2, 30), (3, 8), "GC at 11, open unit 3");
        k.invalidated(3, 3, &unit(3, false));
        assert_eq!(k.user_write(3, 3, 30), (4, 22), "GC at 26, side map");
        k.invalidated(1, 1, &unit(2, true)); // a trim: no user write follows
        k.sealed(&unit(3, true));
        assert_eq!(k.gc_write(5, 5, 32), 6);
        k.invalidated(5, 5, &unit(1, false));
        assert_eq!(
            k.words.get(1),
            (2, EXACT),
            "the trimmed page's GC time kept"
        );
        assert_eq!(k.user_write(5, 5, 40), (6, 26));
        assert_eq!(k.user_write(1, 1, 41), (2, 8), "rewritten after its trim");
        assert_eq!(k.user_write(4, 4, 42), (5, 21), "GC at 26, side map");
        assert!(k.exact.is_empty() && k.pending.is_none());
        assert_eq!(k.user_write(6, 6, 43), (7, 0), "never moved: no penalty");
    }

    /// Times and codes read back exactly across the widening; 4 B a page before it, 8 after.
    #[test]
    fn words_hold_time_and_code_until_a_time_needs_60_bits() {
        let mut w = Words::new(3);
        assert_eq!(w.memory_bytes(), 12);
        assert_eq!(w.get(0), (NONE, 0));
        w.set(0, (1 << 28) - 2, EXACT);
        w.set(1, 5, 3);
        assert_eq!((w.get(0), w.get(1)), (((1 << 28) - 2, EXACT), (5, 3)));
        assert_eq!(w.memory_bytes(), 12, "still narrow");
        w.set(2, (1 << 28) - 1, 1);
        assert_eq!(w.memory_bytes(), 24, "widened");
        assert_eq!(
            (w.get(0), w.get(1), w.get(2)),
            (((1 << 28) - 2, EXACT), (5, 3), ((1 << 28) - 1, 1))
        );
        w.set(1, 1 << 50, 14);
        w.set(2, NONE, 0);
        assert_eq!((w.get(1), w.get(2)), ((1 << 50, 14), (NONE, 0)));
    }
}
