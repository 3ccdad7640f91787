//! Per-stream accounting of the chip-addressed FTL (docs/plan.md, Figure 1 breakdown): which
//! stream wrote the pages GC moves, and how mixed the host superblocks are when they seal.

/// Streams tracked one by one; higher stream ids fold into the last one.
pub const STREAM_STATS: usize = 8;
/// Index of the pages no tracked write touched (the aged SSD's fill).
pub const AGED: usize = STREAM_STATS;
const UNTRACKED: u8 = u8::MAX;

/// What each stream wrote and what GC moved of it. Index [`AGED`] = data written before
/// tracking began (the sequential fill).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct StreamStats {
    /// Host pages written per stream.
    pub host_pages: [u64; STREAM_STATS + 1],
    /// Pages GC relocated, by the stream that last wrote them.
    pub gc_pages: [u64; STREAM_STATS + 1],
    /// Host pages in sealed host superblocks.
    pub sealed_pages: u64,
    /// Of those, the pages of each superblock's dominant stream (sum over superblocks): the
    /// page-weighted mean share of one stream in a superblock is `dominant_pages /
    /// sealed_pages` (1.0 = no mixing, 1/streams = even mixing).
    pub dominant_pages: u64,
    /// Host superblocks sealed.
    pub sealed: u64,
}

impl StreamStats {
    /// Mean share of the dominant stream in a sealed host superblock (0 before any seal).
    #[must_use]
    pub fn dominant_share(&self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "page counts below 2^53")]
        let r = self.dominant_pages as f64 / self.sealed_pages.max(1) as f64;
        r
    }

    /// Counters accumulated since `e`.
    #[must_use]
    pub fn since(&self, e: &StreamStats) -> StreamStats {
        let mut d = self.clone();
        for i in 0..=STREAM_STATS {
            d.host_pages[i] -= e.host_pages[i];
            d.gc_pages[i] -= e.gc_pages[i];
        }
        d.sealed_pages -= e.sealed_pages;
        d.dominant_pages -= e.dominant_pages;
        d.sealed -= e.sealed;
        d
    }
}

/// The tracker: the last writer of every logical page and the mix of every open host slot.
#[derive(Debug, Clone, Default)]
pub(super) struct Tracker {
    last: Vec<u8>,
    open_mix: Vec<[u32; STREAM_STATS]>,
    pub(super) stats: StreamStats,
}

impl Tracker {
    /// Tracking `logical` pages over `slots` open slots; nothing is attributed yet.
    pub(super) fn new(logical: usize, slots: usize) -> Tracker {
        Tracker {
            last: vec![UNTRACKED; logical],
            open_mix: vec![[0; STREAM_STATS]; slots],
            stats: StreamStats::default(),
        }
    }

    /// A host write of `lpn` by `stream` into `slot`.
    #[inline]
    pub(super) fn host(&mut self, lpn: u32, stream: u16, slot: usize) {
        let s = usize::from(stream).min(STREAM_STATS - 1);
        self.last[lpn as usize] = u8::try_from(s).expect("STREAM_STATS < 255");
        self.stats.host_pages[s] += 1;
        self.open_mix[slot][s] += 1;
    }

    /// GC moved `lpn`.
    #[inline]
    pub(super) fn moved(&mut self, lpn: u32) {
        let s = self.last[lpn as usize];
        let i = if s == UNTRACKED { AGED } else { usize::from(s) };
        self.stats.gc_pages[i] += 1;
    }

    /// The open superblock of host `slot` sealed: account its mix and start a new one.
    pub(super) fn sealed(&mut self, slot: usize) {
        let mix = std::mem::take(&mut self.open_mix[slot]);
        let total: u64 = mix.iter().map(|&n| u64::from(n)).sum();
        if total == 0 {
            return; // Filled before tracking began.
        }
        let top = mix.iter().copied().max().map_or(0, u64::from);
        assert!(top <= total, "the dominant stream is part of the total");
        self.stats.sealed_pages += total;
        self.stats.dominant_pages += top;
        self.stats.sealed += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracker_attributes_moves_and_mix() {
        let mut t = Tracker::new(10, 2);
        t.host(1, 0, 0);
        t.host(2, 3, 0);
        t.host(3, 3, 0);
        t.host(4, 99, 1); // folds into the last tracked stream
        t.moved(3);
        t.moved(7); // never written while tracking: aged data
        t.sealed(0);
        t.sealed(1);
        let s = &t.stats;
        assert_eq!(s.host_pages[3], 2);
        assert_eq!(s.host_pages[STREAM_STATS - 1], 1);
        assert_eq!((s.gc_pages[3], s.gc_pages[AGED]), (1, 1));
        assert_eq!((s.sealed, s.sealed_pages, s.dominant_pages), (2, 4, 3));
        assert!((s.dominant_share() - 0.75).abs() < 1e-12);
        let later = s.clone();
        assert_eq!(later.since(s), StreamStats::default());
    }
}
