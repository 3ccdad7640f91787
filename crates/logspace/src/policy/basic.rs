//! Single-victim policies: greedy, cost-benefit (two formulas), FIFO, random, d-choices,
//! windowed greedy, second-chance FIFO.

use super::NONE;
use crate::stats::as_f64;
use crate::{UnitId, UnitView, VictimPolicy};
use std::collections::VecDeque;

/// The membership half of a policy that keeps its candidates in a [`UnitSet`] or [`SealQueue`]
/// field: sealed units join, removed units leave, valid counts are read at selection time.
macro_rules! candidate_membership {
    ($field:ident, $insert:ident) => {
        fn init(&mut self, units: u32, _capacity: u32) {
            self.$field.init(units);
        }
        fn on_seal(&mut self, u: UnitId, _view: &dyn UnitView) {
            self.$field.$insert(u);
        }
        fn on_valid_change(&mut self, _u: UnitId, _old: u32, _new: u32) {}
        fn on_remove(&mut self, u: UnitId, _view: &dyn UnitView) {
            self.$field.remove(u);
        }
    };
}

/// Units in buckets indexed by `valid >> shift` (intrusive doubly linked lists): a valid-count
/// change is O(1), and the minimum is found by scanning up from a hint that only moves down on
/// changes. Shared by [`Greedy`] and the 2R-Greedy regions.
#[derive(Default)]
pub(crate) struct Buckets {
    shift: u32,
    head: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    bucket: Vec<u32>,
    min_hint: usize,
}

impl Buckets {
    pub(crate) fn init(&mut self, units: u32, capacity: u32) {
        // At most ~4096 buckets: exact for page counts, coarse-grained for byte counts.
        self.shift = 0;
        while (capacity >> self.shift) > 4096 {
            self.shift += 1;
        }
        let nb = (capacity >> self.shift) as usize + 1;
        self.head = vec![NONE; nb];
        self.prev = vec![NONE; units as usize];
        self.next = vec![NONE; units as usize];
        self.bucket = vec![NONE; units as usize];
        self.min_hint = nb;
    }

    #[inline]
    pub(crate) fn unlink(&mut self, u: UnitId) {
        let b = self.bucket[u as usize];
        debug_assert_ne!(b, NONE, "unit {u} is in no bucket");
        let (p, n) = (self.prev[u as usize], self.next[u as usize]);
        if p == NONE {
            self.head[b as usize] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
        self.bucket[u as usize] = NONE;
    }

    #[inline]
    pub(crate) fn link(&mut self, u: UnitId, valid: u32) {
        let b = valid >> self.shift;
        debug_assert_eq!(self.bucket[u as usize], NONE, "unit {u} linked twice");
        let h = self.head[b as usize];
        self.prev[u as usize] = NONE;
        self.next[u as usize] = h;
        if h != NONE {
            self.prev[h as usize] = u;
        }
        self.head[b as usize] = u;
        self.bucket[u as usize] = b;
        if (b as usize) < self.min_hint {
            self.min_hint = b as usize;
        }
    }

    #[inline]
    pub(crate) fn change(&mut self, u: UnitId, old: u32, new: u32) {
        if old >> self.shift != new >> self.shift {
            self.unlink(u);
            self.link(u, new);
        }
    }

    /// Among the units of the lowest non-empty bucket, the one with the smallest `key`, left
    /// in place (O(bucket size)).
    pub(crate) fn min_by_key(&mut self, key: impl Fn(UnitId) -> u64) -> Option<UnitId> {
        let mut best = self.peek_min()?;
        let mut u = self.next[best as usize];
        while u != NONE {
            if key(u) < key(best) {
                best = u;
            }
            u = self.next[u as usize];
        }
        Some(best)
    }

    /// The unit with the fewest valid (head of the lowest non-empty bucket), left in place.
    pub(crate) fn peek_min(&mut self) -> Option<UnitId> {
        while self.min_hint < self.head.len() {
            let h = self.head[self.min_hint];
            if h != NONE {
                debug_assert_eq!(
                    self.bucket[h as usize] as usize, self.min_hint,
                    "head in its bucket"
                );
                return Some(h);
            }
            self.min_hint += 1;
        }
        None
    }
}

/// Greedy: the sealed unit with the least valid data.
#[derive(Default)]
pub struct Greedy {
    b: Buckets,
}

impl VictimPolicy for Greedy {
    fn name(&self) -> String {
        "greedy".into()
    }
    fn init(&mut self, units: u32, capacity: u32) {
        self.b.init(units, capacity);
    }
    fn on_seal(&mut self, u: UnitId, view: &dyn UnitView) {
        self.b.link(u, view.valid(u));
    }
    #[inline]
    fn on_valid_change(&mut self, u: UnitId, old: u32, new: u32) {
        self.b.change(u, old, new);
    }
    fn on_remove(&mut self, u: UnitId, _view: &dyn UnitView) {
        self.b.unlink(u);
    }
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        let h = self.b.peek_min()?;
        if view.valid(h) > view.max_victim_valid() {
            return None;
        }
        self.b.unlink(h);
        Some(h)
    }
}

/// A set of sealed units with O(1) insert, remove and random access.
#[derive(Default)]
pub(crate) struct UnitSet {
    pub(crate) items: Vec<UnitId>,
    pos: Vec<u32>,
}

impl UnitSet {
    pub(crate) fn init(&mut self, units: u32) {
        self.items.clear();
        self.pos = vec![NONE; units as usize];
    }
    pub(crate) fn insert(&mut self, u: UnitId) {
        debug_assert_eq!(self.pos[u as usize], NONE);
        self.pos[u as usize] = u32::try_from(self.items.len()).expect("fewer than 2^32 units");
        self.items.push(u);
    }
    pub(crate) fn remove(&mut self, u: UnitId) {
        let p = self.pos[u as usize];
        assert_ne!(p, NONE, "unit {u} is not a candidate");
        let last = self.items[self.items.len() - 1];
        self.items.swap_remove(p as usize);
        if last != u {
            self.pos[last as usize] = p;
        }
        self.pos[u as usize] = NONE;
    }

    /// The candidate with the highest `score` among those passing the victim filter (ties: the
    /// lowest unit id), removed.
    fn take_best(
        &mut self,
        view: &dyn UnitView,
        score: impl Fn(UnitId) -> f64,
        min_garbage: u32,
    ) -> Option<UnitId> {
        let cap = view.unit_capacity();
        let max = view.max_victim_valid().min(cap - min_garbage);
        let best = self
            .items
            .iter()
            .copied()
            .filter(|&x| view.valid(x) <= max)
            .max_by(|&a, &b| score(a).total_cmp(&score(b)).then(b.cmp(&a)))?;
        self.remove(best);
        Some(best)
    }
}

/// Which cost-benefit formula a [`CostBenefit`] policy scores units with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Benefit {
    /// LFS (Rosenblum & Ousterhout 1992): (1-u)·age/(1+u), age + 1 so fresh units score.
    #[default]
    Lfs,
    /// SepBIT's simulator (`selection/CostBenefit.java`): (1-u)/u·sqrt(age), an empty unit
    /// scores +inf; like its `filterEmptySegments`, only units with an invalid page qualify.
    SepBit,
}

/// Cost-benefit: the sealed unit with the highest score, u = valid ratio, age = write clock
/// since the unit was sealed (its last append). Scans all sealed units per GC.
#[derive(Default)]
pub struct CostBenefit {
    set: UnitSet,
    formula: Benefit,
}

impl CostBenefit {
    /// Cost-benefit with `formula`.
    #[must_use]
    pub fn new(formula: Benefit) -> Self {
        CostBenefit {
            set: UnitSet::default(),
            formula,
        }
    }
}

impl VictimPolicy for CostBenefit {
    fn name(&self) -> String {
        match self.formula {
            Benefit::Lfs => "cost-benefit".into(),
            Benefit::SepBit => "cb-sepbit".into(),
        }
    }
    candidate_membership!(set, insert);
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        let cap = f64::from(view.unit_capacity());
        let now = view.now();
        let formula = self.formula;
        let score = |x: UnitId| {
            let u = f64::from(view.valid(x)) / cap;
            let age = as_f64(now - view.sealed_at(x));
            match formula {
                Benefit::Lfs => (1.0 - u) * (age + 1.0) / (1.0 + u),
                Benefit::SepBit if u == 0.0 => f64::INFINITY,
                Benefit::SepBit => (1.0 - u) / u * age.sqrt(),
            }
        };
        let min_garbage = u32::from(formula == Benefit::SepBit);
        self.set.take_best(view, score, min_garbage)
    }
}

/// FIFO queue of sealed units with lazy deletion: an entry is live while the unit's seal
/// generation matches.
#[derive(Default)]
pub(crate) struct SealQueue {
    q: VecDeque<(UnitId, u64)>,
    gen: Vec<u64>,
    live: Vec<bool>,
    seq: u64,
    len: usize,
}

impl SealQueue {
    fn init(&mut self, units: u32) {
        self.q.clear();
        self.gen = vec![0; units as usize];
        self.live = vec![false; units as usize];
        self.len = 0;
    }
    fn push(&mut self, u: UnitId) {
        self.seq += 1;
        self.gen[u as usize] = self.seq;
        self.live[u as usize] = true;
        self.q.push_back((u, self.seq));
        self.len += 1;
    }
    fn remove(&mut self, u: UnitId) {
        assert!(self.live[u as usize], "unit {u} is not queued");
        self.live[u as usize] = false;
        self.len -= 1;
    }
    fn is_live(&self, e: (UnitId, u64)) -> bool {
        self.live[e.0 as usize] && self.gen[e.0 as usize] == e.1
    }
    fn pop(&mut self) -> Option<UnitId> {
        debug_assert!(self.len <= self.q.len(), "live entries are queued");
        while let Some(e) = self.q.pop_front() {
            if self.is_live(e) {
                self.live[e.0 as usize] = false;
                self.len -= 1;
                return Some(e.0);
            }
        }
        None
    }
}

/// Oldest sealed unit first (Desnoyers' FIFO / LRW cleaning).
#[derive(Default)]
pub struct Fifo {
    q: SealQueue,
}

impl VictimPolicy for Fifo {
    fn name(&self) -> String {
        "fifo".into()
    }
    candidate_membership!(q, push);
    fn select(&mut self, _view: &dyn UnitView) -> Option<UnitId> {
        self.q.pop()
    }
}

/// Uniform index below `n` from a SplitMix64 stream (multiply-high, no division).
fn below(state: &mut u64, n: usize) -> usize {
    let r = nowa_units::splitmix64(state) >> 32;
    let n = u64::try_from(n).expect("usize fits u64");
    usize::try_from((r * n) >> 32).expect("below n")
}

/// Uniformly random sealed unit.
pub struct RandomPolicy {
    set: UnitSet,
    rng: u64,
}

impl RandomPolicy {
    /// Seeded random victims.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        RandomPolicy {
            set: UnitSet::default(),
            rng: seed,
        }
    }
}

impl VictimPolicy for RandomPolicy {
    fn name(&self) -> String {
        "random".into()
    }
    candidate_membership!(set, insert);
    fn select(&mut self, _view: &dyn UnitView) -> Option<UnitId> {
        if self.set.items.is_empty() {
            return None;
        }
        let u = self.set.items[below(&mut self.rng, self.set.items.len())];
        self.set.remove(u);
        Some(u)
    }
}

/// d-choices greedy: the least valid among K uniformly sampled sealed units.
pub struct KGreedy {
    k: u32,
    set: UnitSet,
    rng: u64,
}

impl KGreedy {
    /// `k` samples per selection (at least 1).
    #[must_use]
    pub fn new(k: u32, seed: u64) -> Self {
        KGreedy {
            k: k.max(1),
            set: UnitSet::default(),
            rng: seed,
        }
    }
}

impl VictimPolicy for KGreedy {
    fn name(&self) -> String {
        format!("k-greedy:{}", self.k)
    }
    candidate_membership!(set, insert);
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        let n = self.set.items.len();
        if n == 0 {
            return None;
        }
        let mut best: Option<UnitId> = None;
        for _ in 0..self.k {
            let u = self.set.items[below(&mut self.rng, n)];
            if best.is_none_or(|b| view.valid(u) < view.valid(b)) {
                best = Some(u);
            }
        }
        let best = best?;
        self.set.remove(best);
        Some(best)
    }
}

/// Windowed greedy: the least valid among the W oldest sealed units.
pub struct WindowedGreedy {
    w: u32,
    q: SealQueue,
}

impl WindowedGreedy {
    /// Window of `w` units (at least 1).
    #[must_use]
    pub fn new(w: u32) -> Self {
        WindowedGreedy {
            w: w.max(1),
            q: SealQueue::default(),
        }
    }
}

impl VictimPolicy for WindowedGreedy {
    fn name(&self) -> String {
        format!("window:{}", self.w)
    }
    candidate_membership!(q, push);
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        // Drop dead entries at the front so the window covers live units.
        while let Some(&e) = self.q.q.front() {
            if self.q.is_live(e) {
                break;
            }
            self.q.q.pop_front();
        }
        let mut best: Option<(usize, UnitId, u32)> = None;
        let mut seen = 0;
        for (i, &e) in self.q.q.iter().enumerate() {
            if !self.q.is_live(e) {
                continue;
            }
            let v = view.valid(e.0);
            if best.is_none_or(|b| v < b.2) {
                best = Some((i, e.0, v));
            }
            seen += 1;
            if seen >= self.w {
                break;
            }
        }
        let (i, u, _) = best?;
        self.q.q.remove(i);
        self.q.live[u as usize] = false;
        self.q.len -= 1;
        Some(u)
    }
}

/// Second-chance FIFO with a utilization threshold (this simulator's first reading of
/// 2R-FIFO, kept as `sc-fifo`): walk the seal order from the oldest; a unit whose valid ratio
/// is below the threshold is the victim; a fuller one goes back to the tail, giving its hot
/// pages time to die. When a whole pass finds nothing the threshold rises by 5 points, and
/// returns to its base after a pick.
pub struct SecondChanceFifo {
    base: f64,
    threshold: f64,
    q: SealQueue,
}

impl Default for SecondChanceFifo {
    fn default() -> Self {
        SecondChanceFifo {
            base: 0.5,
            threshold: 0.5,
            q: SealQueue::default(),
        }
    }
}

impl VictimPolicy for SecondChanceFifo {
    fn name(&self) -> String {
        "sc-fifo".into()
    }
    candidate_membership!(q, push);
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        let cap = f64::from(view.unit_capacity());
        loop {
            let pass = self.q.len;
            if pass == 0 {
                return None;
            }
            for _ in 0..pass {
                let u = self.q.pop()?;
                if f64::from(view.valid(u)) < self.threshold * cap {
                    self.threshold = self.base;
                    return Some(u);
                }
                // Second chance: requeue keeps it live, at the tail.
                self.q.push(u);
            }
            self.threshold += 0.05;
        }
    }
}
