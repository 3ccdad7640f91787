//! Placement in the zone writer and DB GC: every user write and every GC relocation takes its
//! class (the open zone it goes to) from a `nowa_logspace::Placement`, driven by
//! `nowa_logspace::Placer` in the same call order as the FTL model drives it. The schemes of
//! logspace (NoSep, SepGC, DAC, WARCIP, SepBIT, ...) are used as they are; the engine's own
//! three are implementations of the same trait here:
//!
//! - [`Stripe`] (no `placement` configured, neither GDT nor NoWA): one class per open zone, one
//!   random class per written batch (the engine's placement before the seam).
//! - [`Gdt`] (section 4.2): a batch is grouped by estimated deathtime (`gdt_groups`) and each
//!   group goes to the class whose zone's mean EDT is closest (`closest_zone`). The EDTs come
//!   from the write history in the page header, as the batch hints of `on_batch`.
//! - [`NoWa`] (section 5): one class per zone of the active group, a random class among the
//!   group's zones still open per batch; the group is opened whole by the writer. NoWA's
//!   victims (whole groups, compensation) are chosen by the space's victim policy,
//!   `nowa_logspace::GroupGreedy` (`nowa.rs` only decides when deferred compensation is due).

use super::gdt::{closest_zone, gdt_groups};
use super::OopConfig;
use crate::num::{f64_of, u64_of, usize_of};
use nowa_logspace::{Ctx, Geometry, Placement, Placer, UnitInfo, FRESH};

/// xorshift64, the engine's placement randomness since before the seam.
fn roll(rng: &mut u64) -> usize {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    usize_of(*rng >> 16)
}

/// One class per open zone (the engine's own schemes are not bound by the logspace schemes'
/// `MAX_CLASSES`: `open_zones` goes up to 256).
fn classes_of(n: u32) -> u16 {
    u16::try_from(n.max(1)).unwrap_or(u16::MAX)
}

/// One random class per batch (see the module docs).
#[derive(Debug)]
pub(super) struct Stripe {
    classes: u16,
    rng: u64,
    cur: u16,
}

impl Stripe {
    pub(super) fn new(open_zones: u32, seed: u64) -> Self {
        Stripe {
            classes: classes_of(open_zones),
            rng: seed | 1,
            cur: 0,
        }
    }
}

impl Placement for Stripe {
    fn name(&self) -> String {
        "stripe".into()
    }
    fn classes(&self) -> u16 {
        self.classes
    }
    fn init(&mut self, _geo: &Geometry) {}
    fn on_batch(&mut self, _is_gc: bool, _pages: &[u64], _hints: &[u64], _ctx: &Ctx) {
        let r = roll(&mut self.rng) % usize::from(self.classes);
        self.cur = u16::try_from(r).expect("below the class count");
    }
    fn classify(&mut self, _is_gc: bool, _page: u64, _ctx: &Ctx) -> u16 {
        self.cur
    }
}

/// NoWA's active group (see the module docs).
#[derive(Debug)]
pub(super) struct NoWa {
    classes: u16,
    rng: u64,
    /// Classes whose zone of the active group is open.
    open: Vec<bool>,
    cur: u16,
}

impl NoWa {
    pub(super) fn new(open_zones: u32, seed: u64) -> Self {
        let classes = classes_of(open_zones);
        NoWa {
            classes,
            rng: seed | 1,
            open: vec![false; usize::from(classes)],
            cur: 0,
        }
    }
}

impl Placement for NoWa {
    fn name(&self) -> String {
        "nowa".into()
    }
    fn classes(&self) -> u16 {
        self.classes
    }
    fn init(&mut self, _geo: &Geometry) {}
    fn on_batch(&mut self, _is_gc: bool, _pages: &[u64], _hints: &[u64], _ctx: &Ctx) {
        let open: Vec<u16> = (0..self.classes)
            .filter(|&c| self.open[usize::from(c)])
            .collect();
        let r = roll(&mut self.rng);
        // No zone open: class 0, and the writer opens the next group whole.
        self.cur = if open.is_empty() {
            0
        } else {
            open[r % open.len()]
        };
    }
    fn classify(&mut self, _is_gc: bool, _page: u64, _ctx: &Ctx) -> u16 {
        self.cur
    }
    fn on_open(&mut self, unit: &UnitInfo, _ctx: &Ctx) {
        self.open[usize::from(unit.class)] = true;
    }
    fn on_seal(&mut self, unit: &UnitInfo, _ctx: &Ctx) {
        self.open[usize::from(unit.class)] = false;
    }
}

/// GDT (see the module docs).
#[derive(Debug)]
pub(super) struct Gdt {
    classes: u16,
    /// EDT sum and pages of the current zone of each class.
    zone_edt: Vec<(f64, u64)>,
    /// The class of each page of the current batch.
    batch: Vec<(u64, u16)>,
}

impl Gdt {
    pub(super) fn new(open_zones: u32) -> Self {
        let classes = classes_of(open_zones);
        Gdt {
            classes,
            zone_edt: vec![(0.0, 0); usize::from(classes)],
            batch: Vec::new(),
        }
    }
}

/// An EDT as a float (the zone means; `u64::MAX` capped as before the seam).
fn edt_f(e: u64) -> f64 {
    f64_of(e.min(1 << 52))
}

impl Placement for Gdt {
    fn name(&self) -> String {
        "gdt".into()
    }
    fn classes(&self) -> u16 {
        self.classes
    }
    fn init(&mut self, _geo: &Geometry) {}
    /// Groups hottest first; each takes the class with the closest mean EDT, and its EDTs
    /// count for that class before the next group chooses.
    fn on_batch(&mut self, _is_gc: bool, pages: &[u64], hints: &[u64], _ctx: &Ctx) {
        let edts: Vec<u64> = hints
            .iter()
            .map(|&h| if h == FRESH { u64::MAX } else { h })
            .collect();
        // The engine has one B+-tree: index id 0 for every first write.
        let index: Vec<Option<u32>> = hints.iter().map(|&h| (h == FRESH).then_some(0)).collect();
        self.batch.clear();
        let mut sums = self.zone_edt.clone();
        for g in gdt_groups(&edts, &index, usize::from(self.classes)) {
            let want =
                g.iter().map(|&i| edt_f(edts[i])).sum::<f64>() / f64_of(u64_of(g.len().max(1)));
            let c = closest_zone(&sums, want).expect("at least one class");
            for &i in &g {
                sums[c].0 += edt_f(edts[i]);
                sums[c].1 += 1;
                self.batch
                    .push((pages[i], u16::try_from(c).expect("below the class count")));
            }
        }
        assert_eq!(self.batch.len(), pages.len(), "every page grouped once");
        self.zone_edt = sums;
    }
    fn classify(&mut self, _is_gc: bool, page: u64, _ctx: &Ctx) -> u16 {
        self.batch
            .iter()
            .find(|&&(p, _)| p == page)
            .map_or(0, |&(_, c)| c)
    }
    fn on_seal(&mut self, unit: &UnitInfo, _ctx: &Ctx) {
        // The class's next zone starts empty (it matches any group).
        self.zone_edt[usize::from(unit.class)] = (0.0, 0);
    }
}

/// The placer of a store: SepFrozen (and the stash its oracle reads), the configured scheme,
/// else the engine's own (GDT, NoWA, stripe).
pub(super) fn build_placer(
    cfg: &OopConfig,
    geo: &Geometry,
    open_limit: u32,
) -> (Placer, Option<super::frozen::Stash>) {
    if let Some(h) = &cfg.frozen {
        let (place, stash) = super::frozen::build(h);
        return (Placer::new(place, geo), Some(stash));
    }
    let place: Box<dyn Placement> = match (cfg.placement, cfg.gdt, cfg.nowa) {
        (Some(k), _, _) => k.build(),
        (None, true, _) => Box::new(Gdt::new(open_limit)),
        (None, false, true) => Box::new(NoWa::new(open_limit, cfg.seed)),
        (None, false, false) => Box::new(Stripe::new(open_limit, cfg.seed)),
    };
    (Placer::new(place, geo), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nowa_logspace::NEVER;

    fn ctx() -> Ctx {
        Ctx {
            now: 1,
            live: 10,
            next_write_in: NEVER,
        }
    }

    fn unit(class: u16) -> UnitInfo {
        UnitInfo {
            unit: 0,
            class,
            created_at: 0,
            sealed_at: 0,
            valid: 0,
            capacity: 16,
            sealed: false,
        }
    }

    #[test]
    fn stripe_keeps_one_class_per_batch_and_visits_every_class() {
        let mut s = Stripe::new(4, 7);
        let mut seen = [false; 4];
        for _ in 0..64 {
            s.on_batch(false, &[1, 2, 3], &[NEVER; 3], &ctx());
            let c = s.classify(false, 1, &ctx());
            assert!([2, 3].iter().all(|&p| s.classify(false, p, &ctx()) == c));
            seen[usize::from(c)] = true;
        }
        assert_eq!(seen, [true; 4]);
    }

    #[test]
    fn nowa_writes_only_into_open_zones_of_the_group() {
        let mut n = NoWa::new(3, 7);
        n.on_batch(false, &[1], &[NEVER], &ctx());
        assert_eq!(n.classify(false, 1, &ctx()), 0, "nothing open: class 0");
        for c in 0..3 {
            n.on_open(&unit(c), &ctx());
        }
        n.on_seal(&unit(0), &ctx());
        n.on_seal(&unit(2), &ctx());
        for _ in 0..16 {
            n.on_batch(true, &[1], &[NEVER], &ctx());
            assert_eq!(n.classify(true, 1, &ctx()), 1, "the only open zone");
        }
    }

    #[test]
    fn gdt_groups_by_deathtime_and_sends_like_to_like() {
        let mut g = Gdt::new(2);
        // Hot pages (EDT 10) and cold ones (EDT 1000): two groups, two classes.
        let pages = [1, 2, 3, 4];
        g.on_batch(false, &pages, &[10, 1000, 10, 1000], &ctx());
        let c: Vec<u16> = pages
            .iter()
            .map(|&p| g.classify(false, p, &ctx()))
            .collect();
        assert_eq!(c[0], c[2]);
        assert_eq!(c[1], c[3]);
        assert_ne!(c[0], c[1]);
        // The next batch's hot pages join the hot class.
        g.on_batch(false, &[5, 6, 7, 8], &[12, 12, 990, 990], &ctx());
        assert_eq!(g.classify(false, 5, &ctx()), c[0]);
        assert_eq!(g.classify(false, 7, &ctx()), c[1]);
        // First writes form their own group.
        g.on_batch(false, &[9, 10, 11], &[FRESH, 10, 10], &ctx());
        assert_eq!(g.classify(false, 10, &ctx()), c[0]);
        // A sealed class starts empty and matches anything.
        g.on_seal(&unit(c[1]), &ctx());
        g.on_batch(false, &[12], &[10], &ctx());
        assert_eq!(g.classify(false, 12, &ctx()), c[1]);
    }
}
