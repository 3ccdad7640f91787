//! AutoStream's SFR and MultiQueue (Yang et al., SYSTOR'17) as SepBIT's simulator codes them
//! (`placement/SFR.java`, `placement/MultiQueue.java`). User writes are classified by the
//! statistics of the chunk (a fixed LBA range) they fall in; GC writes all go to the last class.
//!
//! Differences from the AutoStream kernel module (`zhxq/AutoStream`, `autostream.c`): the module
//! decays by wall-clock seconds and picks the stream by powers of two (`1 << (i+1) >= count`);
//! SepBIT's port decays by user-written blocks and levels by the natural log. We follow SepBIT.

use super::{cap_class, idx, Ctx, Geometry, Placement};

/// Natural-log level of a positive count: `(int) Math.log(count)`.
fn ln_level(count: u64) -> u64 {
    debug_assert!(count > 0);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "ln of a count >= 1 is in [0, 45)"
    )]
    let l = (count as f64).ln() as u64;
    l
}

fn chunks_of(start: u64, len: u64, chunk: u64) -> std::ops::RangeInclusive<u64> {
    let last = start + len.max(1) - 1;
    (start / chunk)..=(last / chunk)
}

/// SFR: sequentiality, frequency, recency. Chunks of 512 pages (2 MiB); a chunk's write count
/// is halved once per 16384 user writes (64 MiB) since its last write, then incremented; the
/// class is `floor(ln(count))`, at most `classes - 2`; a request that starts where the previous
/// one ended keeps the previous class; GC writes go to `classes - 1`.
pub struct Sfr {
    n: u16,
    chunk: u64,
    decay: u64,
    writes: Vec<u64>,
    last: Vec<u64>,
    prev_end: u64,
    prev_level: u16,
    sequential: bool,
}

const NEVER_WRITTEN: u64 = u64::MAX;

impl Sfr {
    /// SFR with `n` classes (3..=16).
    ///
    /// # Panics
    /// If `n` is out of range.
    #[must_use]
    pub fn new(n: u16) -> Self {
        assert!(
            (3..=super::MAX_CLASSES).contains(&n),
            "SFR needs 3..=16 classes"
        );
        Sfr {
            n,
            chunk: 512,
            decay: 16384,
            writes: Vec::new(),
            last: Vec::new(),
            prev_end: 0,
            prev_level: 0,
            sequential: false,
        }
    }

    fn promote(&mut self, c: usize, now: u64) {
        let (w, l) = if self.last[c] == NEVER_WRITTEN {
            (0, now)
        } else {
            (self.writes[c], self.last[c])
        };
        debug_assert!(now >= l, "chunk written in the future");
        let halvings = (now - l) / self.decay;
        let w = if halvings >= 64 { 0 } else { w >> halvings };
        self.writes[c] = w + 1;
        self.last[c] = now;
    }
}

impl Placement for Sfr {
    fn memory_bytes(&self) -> u64 {
        super::bytes_of(&self.writes) + super::bytes_of(&self.last)
    }
    fn name(&self) -> String {
        format!("sfr:{}", self.n)
    }
    fn classes(&self) -> u16 {
        self.n
    }
    fn init(&mut self, geo: &Geometry) {
        let logical_pages = geo.logical_pages;
        let chunks = idx(logical_pages / self.chunk + 1);
        self.writes = vec![0; chunks];
        self.last = vec![NEVER_WRITTEN; chunks];
    }
    fn on_request(&mut self, start: u64, len: u64, ctx: &Ctx) {
        self.sequential = start == self.prev_end;
        self.prev_end = start + len;
        for c in chunks_of(start, len, self.chunk) {
            self.promote(idx(c), ctx.now);
        }
    }
    fn classify(&mut self, is_gc: bool, page: u64, _ctx: &Ctx) -> u16 {
        if is_gc {
            return self.n - 1;
        }
        if self.sequential {
            return self.prev_level;
        }
        let level = cap_class(ln_level(self.writes[idx(page / self.chunk)]), self.n - 1);
        debug_assert!(level < self.n - 1, "user classes stay below the GC class");
        self.prev_level = level;
        level
    }
}

/// MultiQueue: chunks of 256 pages (1 MiB); a chunk's class is `floor(ln(writes))`, at most
/// `classes - 2` (its first write: 0); GC writes go to `classes - 1`. The reference also keeps
/// LRU queues per level and demotes expired chunks, but demotion moves the chunk between the
/// queue *lists* only: the level used by `classify` (`chunkQueue`) is set at promotion alone.
/// So the queues cannot change a class, and we keep just the counts.
pub struct MultiQueue {
    n: u16,
    chunk: u64,
    count: Vec<u64>,
}

impl MultiQueue {
    /// MultiQueue with `n` classes (3..=16).
    ///
    /// # Panics
    /// If `n` is out of range.
    #[must_use]
    pub fn new(n: u16) -> Self {
        assert!(
            (3..=super::MAX_CLASSES).contains(&n),
            "MultiQueue needs 3..=16 classes"
        );
        MultiQueue {
            n,
            chunk: 256,
            count: Vec::new(),
        }
    }
}

impl Placement for MultiQueue {
    fn memory_bytes(&self) -> u64 {
        super::bytes_of(&self.count)
    }
    fn name(&self) -> String {
        format!("multiqueue:{}", self.n)
    }
    fn classes(&self) -> u16 {
        self.n
    }
    fn init(&mut self, geo: &Geometry) {
        let logical_pages = geo.logical_pages;
        self.count = vec![0; idx(logical_pages / self.chunk + 1)];
    }
    fn on_request(&mut self, start: u64, len: u64, _ctx: &Ctx) {
        for c in chunks_of(start, len, self.chunk) {
            self.count[idx(c)] += 1;
        }
    }
    fn classify(&mut self, is_gc: bool, page: u64, _ctx: &Ctx) -> u16 {
        if is_gc {
            return self.n - 1;
        }
        let c = self.count[idx(page / self.chunk)];
        assert!(c > 0, "page {page} classified before its request");
        // The first write is level 0 whatever ln(1) says (it is 0 anyway).
        cap_class(ln_level(c), self.n - 1)
    }
}
