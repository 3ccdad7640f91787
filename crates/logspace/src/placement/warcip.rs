//! WARCIP (Yang et al., SYSTOR'19) as SepBIT's simulator codes it (`placement/Warcip.java`).
//!
//! User writes are clustered by *rewrite interval* `ui = now - last_write(page) + penalty(page)`
//! (0 for a first write) to the nearest of up to `classes - 1` centers (ties: the later
//! center); a center is the running mean of the intervals assigned to it since its current
//! open unit was opened. Class 0 takes every GC write, and a GC write sets the page's penalty to
//! `now - last_write` (so a page that survived GC looks colder on its next write). Every 256
//! sealed user units, a cluster holding more than half the period's writes is split (if fewer
//! than `classes` clusters exist), else the first cluster with fewer writes than a unit holds is
//! merged away when its open unit is next sealed.
//!
//! Choices: time is the user-write clock, not trace microseconds. Clusters are renumbered by
//! splits and merges in the reference (it shifts its open-segment list); here each cluster keeps
//! the class (open unit) it was given, and a merged cluster's class is reused by the next
//! split, so open units never move. The last user cluster is never merged (the reference would
//! index past its list).
//!
//! Per-page state: a writer that keeps GC in order ([`Geometry::gc_in_order`], the FTL model)
//! gets one 4-byte word per page, the last write time and a code from which the penalty is
//! decoded when the old copy is reported (`warcip_pages`); any other writer, a `last` and a
//! `penalty` time per page. The two give the same intervals.

use super::warcip_pages::Packed;
use super::{idx, Ctx, Geometry, Placement, UnitInfo};

struct Cluster {
    center: f64,
    blocks: u64,
    writes: u64,
    class: u16,
}

/// WARCIP placement (see the module docs).
pub struct Warcip {
    n: u16,
    clusters: Vec<Cluster>,
    free_classes: Vec<u16>,
    pages: Pages,
    ui: u64,
    total_writes: u64,
    sealed_user: u64,
    next_merge: Option<usize>,
    unit_pages: u64,
    period: u64,
}

use super::times::{Times, NONE as NEVER_WRITTEN};

/// The per-page state (see the module docs).
enum Pages {
    /// A last write time and a penalty per page (any writer).
    Tables { last: Times, penalty: Times },
    /// One word per page (writers that keep GC in order).
    Packed(Box<Packed>),
}

impl Pages {
    /// A user write of page `p` at `now`: its rewrite interval (0 for a first write).
    #[inline]
    fn user_write(&mut self, page: u64, now: u64) -> u64 {
        let p = idx(page);
        let (last, penalty) = match self {
            Pages::Tables { last, penalty } => {
                let l = last.get(p);
                let pen = penalty.get(p);
                last.set(p, now);
                penalty.set(p, 0);
                (l, pen)
            }
            Pages::Packed(k) => k.user_write(page, p, now),
        };
        if last == NEVER_WRITTEN {
            0
        } else {
            now - last + penalty
        }
    }

    /// A GC rewrite of page `p` at `now`: its interval since the last user write, which
    /// becomes its penalty.
    #[inline]
    fn gc_write(&mut self, page: u64, now: u64) -> u64 {
        let p = idx(page);
        match self {
            Pages::Tables { last, penalty } => {
                let l = last.get(p);
                assert_ne!(l, NEVER_WRITTEN, "GC moved unwritten page {page}");
                penalty.set(p, now - l);
                now - l
            }
            Pages::Packed(k) => now - k.gc_write(page, p, now),
        }
    }
}

impl Warcip {
    /// WARCIP with `n` classes (2..=16): class 0 for GC, up to `n - 1` user clusters.
    ///
    /// # Panics
    /// If `n` is out of range.
    #[must_use]
    pub fn new(n: u16) -> Self {
        assert!(
            (2..=super::MAX_CLASSES).contains(&n),
            "WARCIP needs 2..=16 classes"
        );
        Warcip {
            n,
            clusters: Vec::new(),
            free_classes: Vec::new(),
            pages: Pages::Tables {
                last: Times::default(),
                penalty: Times::default(),
            },
            ui: 0,
            total_writes: 0,
            sealed_user: 0,
            next_merge: None,
            unit_pages: 1,
            period: 256,
        }
    }

    fn split(&mut self, i: usize) {
        let class = self
            .free_classes
            .pop()
            .expect("fewer clusters than classes leaves a class free");
        assert!(
            i >= 1 && i < self.clusters.len(),
            "split inside the user clusters"
        );
        let center = f64::midpoint(self.clusters[i - 1].center, self.clusters[i].center);
        self.clusters.insert(
            i,
            Cluster {
                center,
                blocks: 0,
                writes: 0,
                class,
            },
        );
    }

    fn split_and_merge(&mut self) {
        let n = usize::from(self.n);
        let mut split = false;
        for i in 1..self.clusters.len() {
            if self.clusters[i].writes > self.total_writes / 2 && self.clusters.len() < n {
                self.split(i);
                split = true;
                break;
            }
        }
        if !split && self.clusters.len() > 2 {
            if let Some(i) =
                (1..self.clusters.len()).find(|&i| self.clusters[i].writes < self.unit_pages)
            {
                self.next_merge.get_or_insert(i);
            }
        }
        self.total_writes = 0;
        for c in &mut self.clusters {
            c.writes = 0;
        }
    }

    /// Current centers of the user clusters (tests, reports).
    #[must_use]
    pub fn centers(&self) -> Vec<f64> {
        self.clusters.iter().skip(1).map(|c| c.center).collect()
    }
}

impl Placement for Warcip {
    fn wants_requests(&self) -> bool {
        false
    }
    fn prefetch(&self, page: u64) {
        match &self.pages {
            Pages::Tables { last, penalty } => {
                last.prefetch(idx(page));
                penalty.prefetch(idx(page));
            }
            Pages::Packed(k) => k.prefetch(idx(page)),
        }
    }
    fn memory_bytes(&self) -> u64 {
        match &self.pages {
            Pages::Tables { last, penalty } => last.memory_bytes() + penalty.memory_bytes(),
            Pages::Packed(k) => k.memory_bytes(),
        }
    }
    fn wants_invalidate(&self) -> bool {
        matches!(self.pages, Pages::Packed(_))
    }
    fn on_invalidate(&mut self, page: u64, unit: &UnitInfo, _ctx: &Ctx) {
        if let Pages::Packed(k) = &mut self.pages {
            k.invalidated(page, idx(page), unit);
        }
    }
    fn name(&self) -> String {
        format!("warcip:{}", self.n)
    }
    fn classes(&self) -> u16 {
        self.n
    }
    fn init(&mut self, geo: &Geometry) {
        let logical_pages = geo.logical_pages;
        self.unit_pages = u64::from(geo.unit_pages);
        self.pages = if geo.gc_in_order {
            Pages::Packed(Box::new(Packed::new(idx(logical_pages), geo.units, 0)))
        } else {
            Pages::Tables {
                last: Times::new(idx(logical_pages), NEVER_WRITTEN),
                penalty: Times::new(idx(logical_pages), 0),
            }
        };
        self.clusters = (0..self.n)
            .map(|class| Cluster {
                center: 0.0,
                blocks: 0,
                writes: 0,
                class,
            })
            .collect();
        self.free_classes.clear();
    }
    fn on_user_write(&mut self, page: u64, ctx: &Ctx) {
        self.ui = self.pages.user_write(page, ctx.now);
    }
    fn on_gc_write(&mut self, page: u64, ctx: &Ctx) {
        self.ui = self.pages.gc_write(page, ctx.now);
    }
    fn classify(&mut self, is_gc: bool, _page: u64, _ctx: &Ctx) -> u16 {
        if is_gc {
            return self.clusters[0].class;
        }
        #[expect(clippy::cast_precision_loss, reason = "an interval of user writes")]
        let ui = self.ui as f64;
        let mut best = 1;
        let mut min = f64::MAX;
        for i in (1..self.clusters.len()).rev() {
            let d = (self.clusters[i].center - ui).abs();
            if d < min {
                best = i;
                min = d;
            }
        }
        assert!(self.clusters.len() >= 2, "at least one user cluster");
        let c = &mut self.clusters[best];
        #[expect(clippy::cast_precision_loss, reason = "unit fill counts are small")]
        let blocks = c.blocks as f64;
        c.center = (c.center * blocks + ui) / (blocks + 1.0);
        c.blocks += 1;
        c.writes += 1;
        self.total_writes += 1;
        debug_assert!(c.class < self.n);
        c.class
    }
    fn on_seal(&mut self, unit: &UnitInfo, _ctx: &Ctx) {
        if let Pages::Packed(k) = &mut self.pages {
            k.sealed(unit);
        }
        assert!(
            unit.class < self.n,
            "unit of class {} beyond {}",
            unit.class,
            self.n
        );
        let Some(i) = self.clusters.iter().position(|c| c.class == unit.class) else {
            return;
        };
        if i != 0 {
            self.sealed_user += 1;
        }
        if self.next_merge == Some(i) {
            let gone = self.clusters.remove(i);
            self.free_classes.push(gone.class);
            self.next_merge = None;
        } else {
            self.clusters[i].blocks = 0;
        }
        if self.sealed_user == self.period {
            self.sealed_user = 0;
            self.split_and_merge();
        }
    }
    fn report(&self) -> String {
        let c: Vec<String> = self.centers().iter().map(|c| format!("{c:.0}")).collect();
        format!("warcip centers (user writes): [{}]", c.join(", "))
    }
}
