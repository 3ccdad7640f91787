//! SepBIT (Wang et al., FAST'22) as its simulator codes it (`placement/SepBIT.java`).
//!
//! - ℓ (`threshold`) starts at +inf; every 16 collected class-0 units it becomes the mean of
//!   their lifespans (collection time - open time, in user writes).
//! - User write: class 0 if the page's previous user write is less than `min(ℓ, fifo)` user
//!   writes ago, else class 1. `fifo` is the length of the reference's FIFO of recent writes,
//!   which grows by one per user write and is trimmed to `min(live pages, ℓ)` (the reference
//!   trims to the log's valid blocks; we use the live pages, which differ by the invalid blocks
//!   of open units). An LBA is "in the FIFO" exactly when its last write is within that length,
//!   so we keep the length and each page's last write time instead of the queue.
//! - GC write: class 2 if the victim was class 0; else, with `age = now - last user write`,
//!   class 3 if `age < 4ℓ`, 4 if `age < 16ℓ`, ..., at most `classes - 1`. (SepFrozen's paper
//!   applies the age rule to class-1 victims only; the code, which we follow, to any victim
//!   not of class 0.)

use super::{idx, Ctx, Geometry, Placement, UnitInfo};
use crate::stats::as_f64;

use super::times::{Times, NONE as NEVER_WRITTEN};

/// SepBIT placement (see the module docs).
pub struct SepBit {
    n: u16,
    /// Last user write times; their flag bit is lent to a wrapper ([`Placement::page_bit`]).
    last: Times<true>,
    fifo: u64,
    threshold: f64,
    lifespan_sum: f64,
    collected: u32,
    victim_class: u16,
}

impl SepBit {
    /// SepBIT with `n` classes (4..=16; the paper uses 6).
    ///
    /// # Panics
    /// If `n` is out of range.
    #[must_use]
    pub fn new(n: u16) -> Self {
        assert!(
            (4..=super::MAX_CLASSES).contains(&n),
            "SepBIT needs 4..=16 classes"
        );
        SepBit {
            n,
            last: Times::default(),
            fifo: 0,
            threshold: f64::INFINITY,
            lifespan_sum: 0.0,
            collected: 0,
            victim_class: 0,
        }
    }

    /// The current lifespan threshold ℓ (+inf until 16 class-0 units were collected).
    #[must_use]
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
}

impl Placement for SepBit {
    fn wants_requests(&self) -> bool {
        false
    }
    fn prefetch(&self, page: u64) {
        self.last.prefetch(idx(page));
    }
    fn gc_reads_state(&self) -> bool {
        // A class-0 victim's pages all go to class 2, whatever their last write.
        self.victim_class != 0
    }
    fn gc_class(&self) -> Option<u16> {
        // A class-0 victim's pages all go to class 2, and GC's `classify` reads and changes
        // nothing for them: the writer may copy the victim in bulk.
        (self.victim_class == 0).then_some(2)
    }
    fn memory_bytes(&self) -> u64 {
        self.last.memory_bytes()
    }
    fn has_page_bit(&self) -> bool {
        true
    }
    fn set_page_bit(&mut self, page: u64, on: bool) {
        self.last.set_mark(idx(page), on);
    }
    fn page_bit(&self, page: u64) -> bool {
        self.last.mark(idx(page))
    }
    fn name(&self) -> String {
        format!("sepbit:{}", self.n)
    }
    fn classes(&self) -> u16 {
        self.n
    }
    fn init(&mut self, geo: &Geometry) {
        let logical_pages = geo.logical_pages;
        self.last = Times::new(idx(logical_pages), NEVER_WRITTEN);
    }
    fn classify(&mut self, is_gc: bool, page: u64, ctx: &Ctx) -> u16 {
        let p = idx(page);
        if is_gc && self.victim_class == 0 {
            // Not read: the writer skips its prefetch for such victims (`gc_reads_state`).
            return 2;
        }
        let last = self.last.get(p);
        debug_assert!(
            last == NEVER_WRITTEN || last <= ctx.now,
            "time runs forward"
        );
        if is_gc {
            assert_ne!(last, NEVER_WRITTEN, "GC moved unwritten page {page}");
            let age = as_f64(ctx.now - last);
            let mut level = 3;
            let mut base = self.threshold * 4.0;
            while age >= base && level < self.n - 1 {
                base *= 4.0;
                level += 1;
            }
            debug_assert!(level >= 3 && level < self.n);
            return level;
        }
        let hot =
            last != NEVER_WRITTEN && as_f64(ctx.now - last) < self.threshold.min(as_f64(self.fifo));
        self.last.set(p, ctx.now);
        self.fifo += 1;
        debug_assert!(self.fifo <= ctx.now, "the FIFO holds past writes only");
        if as_f64(self.fifo) > as_f64(ctx.live).min(self.threshold) {
            self.fifo -= 1;
            if as_f64(self.fifo) > self.threshold {
                self.fifo -= 1;
            }
        }
        u16::from(!hot)
    }
    fn on_collect(&mut self, unit: &UnitInfo, ctx: &Ctx) {
        assert!(
            unit.class < self.n,
            "victim of class {} beyond {}",
            unit.class,
            self.n
        );
        assert!(
            ctx.now >= unit.created_at,
            "a unit collected before it was opened"
        );
        self.victim_class = unit.class;
        if unit.class == 0 {
            self.lifespan_sum += as_f64(ctx.now - unit.created_at);
            self.collected += 1;
            if self.collected == 16 {
                self.threshold = self.lifespan_sum / 16.0;
                self.collected = 0;
                self.lifespan_sum = 0.0;
            }
        }
    }
    fn report(&self) -> String {
        format!(
            "sepbit threshold ℓ = {:.0} user writes, FIFO length {}",
            self.threshold, self.fifo
        )
    }
}
