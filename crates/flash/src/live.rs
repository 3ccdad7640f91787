//! One bit per physical page: whether the page holds the newest copy of its LPN (the
//! chip-addressed FTL of the timing model).
//!
//! GC must tell a victim's live pages from its dead ones. Marking dead pages in the reverse
//! map costs a random reverse-map store per host write (the stores the timing model's run
//! loop waited behind); asking the forward map (`l2p[p2l[ppn]] == ppn + 1`) costs a random
//! `l2p` line per victim page, dead ones included. The bits are 1/32 of the reverse map's
//! size (128 KiB for the timing model's device, mostly in cache) and are read in order by
//! GC. The FTL model (`Ftl`) keeps asking its forward map: the same bits there (2 MiB at
//! 2^24 pages) measured no faster on the plain greedy path (docs/simulator.md, round 8).

/// The live bits of a device's physical pages.
#[derive(Debug, Clone)]
pub(crate) struct LiveBits {
    words: Vec<u64>,
}

impl LiveBits {
    /// `pages` physical pages, all dead (erased).
    pub(crate) fn new(pages: u64) -> LiveBits {
        LiveBits {
            words: vec![0; crate::to_usize(pages.div_ceil(64))],
        }
    }

    /// Page `ppn` now holds its LBA's newest copy (a program into an erased page).
    #[inline(always)]
    pub(crate) fn set(&mut self, ppn: u32) {
        let w = &mut self.words[(ppn / 64) as usize];
        debug_assert_eq!(
            *w & (1 << (ppn % 64)),
            0,
            "page {ppn} programmed twice before erase"
        );
        *w |= 1 << (ppn % 64);
    }

    /// Page `ppn` no longer holds its LBA's newest copy (the host overwrote or trimmed it).
    #[inline(always)]
    pub(crate) fn kill(&mut self, ppn: u32) {
        let w = &mut self.words[(ppn / 64) as usize];
        debug_assert_ne!(*w & (1 << (ppn % 64)), 0, "page {ppn} killed while dead");
        *w &= !(1 << (ppn % 64));
    }

    /// Whether page `ppn` holds its LBA's newest copy.
    #[inline(always)]
    pub(crate) fn is_live(&self, ppn: u32) -> bool {
        self.words[(ppn / 64) as usize] & (1 << (ppn % 64)) != 0
    }

    /// The live pages among `len` pages from `base`, in page order, appended to `out`.
    pub(crate) fn pages(&self, base: u32, len: u32, out: &mut Vec<u32>) {
        let end = base + len;
        let mut w = base / 64;
        while w * 64 < end {
            let at = w * 64;
            // Only the pages of [base, end) in this word.
            let mut bits = self.words[w as usize] & (u64::MAX << (base.max(at) - at));
            if end - at < 64 {
                bits &= (1u64 << (end - at)) - 1;
            }
            while bits != 0 {
                out.push(at + bits.trailing_zeros());
                bits &= bits - 1;
            }
            w += 1;
        }
    }

    /// Every page of `len` from `base` dead (an erase).
    pub(crate) fn clear(&mut self, base: u32, len: u32) {
        let end = base + len;
        let mut ppn = base;
        while ppn < end {
            let at = ppn / 64 * 64;
            let (lo, hi) = (ppn - at, (end - at).min(64));
            let span = if hi - lo == 64 {
                u64::MAX
            } else {
                ((1u64 << (hi - lo)) - 1) << lo
            };
            self.words[(at / 64) as usize] &= !span;
            ppn = at + hi;
        }
    }

    /// Live pages in all (consistency checks).
    pub(crate) fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::LiveBits;
    use proptest::prelude::*;

    proptest! {
        /// Against a Vec<bool>: pages set, killed and cleared in ranges that start and end
        /// inside words or across them; `pages` lists exactly the live pages of a range, in
        /// order, and `count` counts them.
        #[test]
        fn the_bits_are_a_set_of_pages(
            ops in prop::collection::vec((0u8..3, 0u32..300, 1u32..130), 1..200),
            range in (0u32..300, 0u32..100),
        ) {
            let n = 300u32;
            let mut bits = LiveBits::new(u64::from(n));
            let mut model = vec![false; n as usize];
            for (op, at, len) in ops {
                match op {
                    0 if !model[at as usize] => {
                        bits.set(at);
                        model[at as usize] = true;
                    }
                    1 if model[at as usize] => {
                        bits.kill(at);
                        model[at as usize] = false;
                    }
                    2 => {
                        let len = len.min(n - at);
                        bits.clear(at, len);
                        model[at as usize..(at + len) as usize].fill(false);
                    }
                    _ => {}
                }
            }
            for p in 0..n {
                prop_assert_eq!(bits.is_live(p), model[p as usize], "page {}", p);
            }
            let (base, len) = (range.0, range.1.min(n - range.0));
            let mut got = Vec::new();
            bits.pages(base, len, &mut got);
            let want: Vec<u32> = (base..base + len).filter(|&p| model[p as usize]).collect();
            prop_assert_eq!(got, want);
            prop_assert_eq!(bits.count(), model.iter().filter(|&&b| b).count() as u64);
        }
    }
}
