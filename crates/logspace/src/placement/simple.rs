//! NoSep, SepGC and DAC (SepBIT's `NoSep.java`, `SepGC.java`, `DAC.java`).

use super::{idx, Ctx, Geometry, Placement};

/// Everything in one class.
pub struct NoSep;

impl Placement for NoSep {
    fn wants_requests(&self) -> bool {
        false
    }
    fn name(&self) -> String {
        "nosep".into()
    }
    fn classes(&self) -> u16 {
        1
    }
    fn init(&mut self, _geo: &Geometry) {}
    fn classify(&mut self, _is_gc: bool, _page: u64, _ctx: &Ctx) -> u16 {
        0
    }
}

/// User writes to class 0, GC writes to class 1: the two regions of 2R, SepBIT's `SepGC`.
pub struct SepGc;

impl Placement for SepGc {
    fn wants_requests(&self) -> bool {
        false
    }
    fn name(&self) -> String {
        "sepgc".into()
    }
    fn classes(&self) -> u16 {
        2
    }
    fn init(&mut self, _geo: &Geometry) {}
    fn classify(&mut self, is_gc: bool, _page: u64, _ctx: &Ctx) -> u16 {
        u16::from(is_gc)
    }
}

const UNSEEN: u8 = u8::MAX;

/// DAC as SepBIT's simulator codes it: a page's first write gets level 0; every later user
/// write raises its level by one (at most `classes - 1`), every GC rewrite lowers it by one (at
/// least 0); the class is the level, so class `classes - 1` is the hottest. The level is updated
/// *before* classifying (SepBIT's `append`/`gcAppend` run before `classify`), unlike
/// SepFrozen's description ("write to the level, then raise it"); we follow the code.
pub struct Dac {
    n: u16,
    level: Vec<u8>,
}

impl Dac {
    /// DAC with `n` classes (2..=16).
    ///
    /// # Panics
    /// If `n` is out of range.
    #[must_use]
    pub fn new(n: u16) -> Self {
        assert!(
            (2..=super::MAX_CLASSES).contains(&n),
            "DAC needs 2..=16 classes"
        );
        Dac {
            n,
            level: Vec::new(),
        }
    }
}

impl Placement for Dac {
    fn wants_requests(&self) -> bool {
        false
    }
    fn prefetch(&self, page: u64) {
        crate::prefetch::line(&self.level, idx(page));
    }
    fn memory_bytes(&self) -> u64 {
        super::bytes_of(&self.level)
    }
    fn name(&self) -> String {
        format!("dac:{}", self.n)
    }
    fn classes(&self) -> u16 {
        self.n
    }
    fn init(&mut self, geo: &Geometry) {
        let logical_pages = geo.logical_pages;
        self.level = vec![UNSEEN; idx(logical_pages)];
    }
    fn on_user_write(&mut self, page: u64, _ctx: &Ctx) {
        let top = u8::try_from(self.n - 1).expect("n <= 16");
        let l = &mut self.level[idx(page)];
        *l = if *l == UNSEEN { 0 } else { (*l + 1).min(top) };
    }
    fn on_gc_write(&mut self, page: u64, _ctx: &Ctx) {
        let l = &mut self.level[idx(page)];
        assert_ne!(*l, UNSEEN, "GC moved page {page} that was never written");
        *l = l.saturating_sub(1);
    }
    fn classify(&mut self, _is_gc: bool, page: u64, _ctx: &Ctx) -> u16 {
        let l = self.level[idx(page)];
        debug_assert!(u16::from(l) < self.n);
        u16::from(l)
    }
}
