//! Victim-selection policies.
//!
//! | name | picks | cost per GC |
//! |---|---|---|
//! | `greedy` | fewest valid | O(1) amortized: units live in buckets by valid amount |
//! | `cost-benefit` | max (1-u)·age/(1+u) (Rosenblum & Ousterhout, LFS) | O(sealed units) scan |
//! | `fifo` | oldest sealed | O(1) |
//! | `random` | uniform random sealed | O(1) |
//! | `k-greedy:K` | fewest valid among K random samples (d-choices) | O(K) |
//! | `window:W` | fewest valid among the W oldest sealed | O(W) |
//! | `2r-fifo` | oldest sealed with valid ratio below a threshold; others get a second chance | O(1) amortized |
//!
//! `2r-greedy` uses [`Greedy`]: what makes it "2R" is that GC-relocated data is written to
//! units of its own (the placement, decided by the user of the space), not the victim choice.

use crate::{UnitId, UnitView, VictimPolicy};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

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

/// The policies known by name on the command line.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum PolicyKind {
    /// ssd-iq's "Naive Greedy": greedy, GC copies share the host write frontier.
    Greedy,
    /// Greedy with GC copies in their own units (Kang et al., two regions).
    TwoRGreedy,
    /// Second-chance FIFO with GC copies in their own units.
    TwoRFifo,
    CostBenefit,
    Fifo,
    Random,
    KGreedy(u32),
    Window(u32),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown GC policy '{0}' (expected one of: greedy, 2r-greedy, 2r-fifo, cost-benefit, fifo, random, k-greedy:K, window:W)")]
pub struct PolicyParseError(pub String);

impl std::str::FromStr for PolicyKind {
    type Err = PolicyParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || PolicyParseError(s.to_string());
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let num = |a: Option<&str>| -> Result<u32, PolicyParseError> {
            let v: u32 = a.ok_or_else(err)?.parse().map_err(|_| err())?;
            if v == 0 {
                return Err(err());
            }
            Ok(v)
        };
        Ok(match (name.to_ascii_lowercase().as_str(), arg) {
            ("greedy", None) => PolicyKind::Greedy,
            ("2r-greedy", None) | ("2r-g", None) => PolicyKind::TwoRGreedy,
            ("2r-fifo", None) | ("2r-f", None) => PolicyKind::TwoRFifo,
            ("cost-benefit", None) | ("cb", None) => PolicyKind::CostBenefit,
            ("fifo", None) => PolicyKind::Fifo,
            ("random", None) => PolicyKind::Random,
            ("k-greedy", a) => PolicyKind::KGreedy(num(a)?),
            ("window", a) => PolicyKind::Window(num(a)?),
            _ => return Err(err()),
        })
    }
}

impl std::fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolicyKind::Greedy => write!(f, "greedy"),
            PolicyKind::TwoRGreedy => write!(f, "2r-greedy"),
            PolicyKind::TwoRFifo => write!(f, "2r-fifo"),
            PolicyKind::CostBenefit => write!(f, "cost-benefit"),
            PolicyKind::Fifo => write!(f, "fifo"),
            PolicyKind::Random => write!(f, "random"),
            PolicyKind::KGreedy(k) => write!(f, "k-greedy:{k}"),
            PolicyKind::Window(w) => write!(f, "window:{w}"),
        }
    }
}

impl PolicyKind {
    /// Build the victim policy. `seed` feeds the randomized ones.
    pub fn build(&self, seed: u64) -> Box<dyn VictimPolicy> {
        match self {
            PolicyKind::Greedy | PolicyKind::TwoRGreedy => Box::new(Greedy::default()),
            PolicyKind::TwoRFifo => Box::new(SecondChanceFifo::default()),
            PolicyKind::CostBenefit => Box::new(CostBenefit::default()),
            PolicyKind::Fifo => Box::new(Fifo::default()),
            PolicyKind::Random => Box::new(RandomPolicy::new(seed)),
            PolicyKind::KGreedy(k) => Box::new(KGreedy::new(*k, seed)),
            PolicyKind::Window(w) => Box::new(WindowedGreedy::new(*w)),
        }
    }

    /// Whether GC-relocated data should go to units of its own. ssd-iq's naive greedy mixes it
    /// with host writes; every other policy here separates it.
    pub fn separates_gc_data(&self) -> bool {
        !matches!(self, PolicyKind::Greedy)
    }
}

/// Greedy: the sealed unit with the least valid data. Units sit in buckets indexed by
/// `valid >> shift` (intrusive doubly linked lists), so a valid-count change is O(1) and
/// finding the minimum scans up from a hint that only moves down on changes.
#[derive(Default)]
pub struct Greedy {
    shift: u32,
    head: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    bucket: Vec<u32>,
    min_hint: usize,
}

impl Greedy {
    #[inline]
    fn unlink(&mut self, u: UnitId) {
        let b = self.bucket[u as usize];
        debug_assert_ne!(b, NONE);
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
    fn link(&mut self, u: UnitId, b: u32) {
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
}

impl VictimPolicy for Greedy {
    fn name(&self) -> String {
        "greedy".into()
    }
    fn init(&mut self, units: u32, capacity: u32) {
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
    fn on_seal(&mut self, u: UnitId, view: &dyn UnitView) {
        self.link(u, view.valid(u) >> self.shift);
    }
    #[inline]
    fn on_valid_change(&mut self, u: UnitId, old: u32, new: u32) {
        let (ob, nb) = (old >> self.shift, new >> self.shift);
        if ob != nb {
            self.unlink(u);
            self.link(u, nb);
        }
    }
    fn on_remove(&mut self, u: UnitId, _view: &dyn UnitView) {
        self.unlink(u);
    }
    fn select(&mut self, _view: &dyn UnitView) -> Option<UnitId> {
        while self.min_hint < self.head.len() {
            let h = self.head[self.min_hint];
            if h != NONE {
                self.unlink(h);
                return Some(h);
            }
            self.min_hint += 1;
        }
        None
    }
}

/// A set of sealed units with O(1) insert, remove and random access.
#[derive(Default)]
struct UnitSet {
    items: Vec<UnitId>,
    pos: Vec<u32>,
}

impl UnitSet {
    fn init(&mut self, units: u32) {
        self.items.clear();
        self.pos = vec![NONE; units as usize];
    }
    fn insert(&mut self, u: UnitId) {
        debug_assert_eq!(self.pos[u as usize], NONE);
        self.pos[u as usize] = self.items.len() as u32;
        self.items.push(u);
    }
    fn remove(&mut self, u: UnitId) {
        let p = self.pos[u as usize];
        debug_assert_ne!(p, NONE);
        let last = *self.items.last().unwrap();
        self.items.swap_remove(p as usize);
        if last != u {
            self.pos[last as usize] = p;
        }
        self.pos[u as usize] = NONE;
    }
}

/// Cost-benefit of LFS (Rosenblum & Ousterhout 1992): maximize (1-u)·age/(1+u), u = valid ratio,
/// age = write clock since the unit was sealed. Scans all sealed units per GC.
#[derive(Default)]
pub struct CostBenefit {
    set: UnitSet,
}

impl VictimPolicy for CostBenefit {
    fn name(&self) -> String {
        "cost-benefit".into()
    }
    candidate_membership!(set, insert);
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        let cap = view.unit_capacity() as f64;
        let now = view.now();
        let best = self.set.items.iter().copied().max_by(|&a, &b| {
            let score = |x: UnitId| {
                let u = view.valid(x) as f64 / cap;
                let age = (now - view.sealed_at(x)) as f64 + 1.0;
                (1.0 - u) * age / (1.0 + u)
            };
            score(a).total_cmp(&score(b)).then(b.cmp(&a))
        })?;
        self.set.remove(best);
        Some(best)
    }
}

/// FIFO queue of sealed units with lazy deletion: an entry is live while the unit's seal
/// generation matches.
#[derive(Default)]
struct SealQueue {
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
        debug_assert!(self.live[u as usize]);
        self.live[u as usize] = false;
        self.len -= 1;
    }
    fn is_live(&self, e: (UnitId, u64)) -> bool {
        self.live[e.0 as usize] && self.gen[e.0 as usize] == e.1
    }
    fn pop(&mut self) -> Option<UnitId> {
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

/// SplitMix64: small, fast, seedable; enough for victim sampling.
#[derive(Clone)]
struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

/// Uniformly random sealed unit.
pub struct RandomPolicy {
    set: UnitSet,
    rng: SplitMix,
}

impl RandomPolicy {
    pub fn new(seed: u64) -> Self {
        RandomPolicy {
            set: UnitSet::default(),
            rng: SplitMix(seed),
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
        let u = self.set.items[self.rng.below(self.set.items.len())];
        self.set.remove(u);
        Some(u)
    }
}

/// d-choices greedy: the least valid among K uniformly sampled sealed units.
pub struct KGreedy {
    k: u32,
    set: UnitSet,
    rng: SplitMix,
}

impl KGreedy {
    pub fn new(k: u32, seed: u64) -> Self {
        KGreedy {
            k: k.max(1),
            set: UnitSet::default(),
            rng: SplitMix(seed),
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
        let best = (0..self.k)
            .map(|_| self.set.items[self.rng.below(n)])
            .min_by_key(|&u| view.valid(u))?;
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

/// Second-chance FIFO with a utilization threshold (the victim rule of 2R-FIFO, Kang et al.):
/// walk the seal order from the oldest; a unit whose valid ratio is below the threshold is the
/// victim; a fuller one goes back to the tail, giving its hot pages time to die. When a whole
/// pass finds nothing the threshold rises by 5 points, and returns to its base after a pick.
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
        "2r-fifo".into()
    }
    candidate_membership!(q, push);
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        let cap = view.unit_capacity() as f64;
        loop {
            let pass = self.q.len;
            if pass == 0 {
                return None;
            }
            for _ in 0..pass {
                let u = self.q.pop()?;
                if (view.valid(u) as f64) < self.threshold * cap {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Space;
    use proptest::prelude::*;

    fn all_kinds() -> Vec<PolicyKind> {
        vec![
            PolicyKind::Greedy,
            PolicyKind::TwoRFifo,
            PolicyKind::CostBenefit,
            PolicyKind::Fifo,
            PolicyKind::Random,
            PolicyKind::KGreedy(4),
            PolicyKind::Window(3),
        ]
    }

    #[test]
    fn parse_roundtrip() {
        for k in all_kinds().into_iter().chain([PolicyKind::TwoRGreedy]) {
            assert_eq!(k.to_string().parse::<PolicyKind>().unwrap(), k);
        }
        assert!("bogus".parse::<PolicyKind>().is_err());
        assert!("k-greedy:0".parse::<PolicyKind>().is_err());
        assert!("window".parse::<PolicyKind>().is_err());
    }

    proptest! {
        /// Any policy only ever returns sealed units, each once, and greedy always the minimum.
        #[test]
        fn policies_pick_sealed_units(ops in proptest::collection::vec((0u8..4, 0u32..16, 0u32..8), 1..300), which in 0usize..7) {
            let kind = all_kinds()[which].clone();
            let mut s = Space::new(16, 8, kind.build(7));
            for (op, u, n) in ops {
                match op {
                    0 => { if let Ok(x) = s.open_unit(0) { s.add_valid(x, n.min(8)); s.seal(x); } }
                    1 => { if s.state(u) == crate::UnitState::Sealed && s.valid(u) > 0 { s.sub_valid(u, 1); } }
                    2 => {
                        let min = (0..16).filter(|&x| s.state(x) == crate::UnitState::Sealed).map(|x| s.valid(x)).min();
                        match s.pick_victim() {
                            Ok(v) => {
                                prop_assert_eq!(s.state(v), crate::UnitState::InGc);
                                if kind == PolicyKind::Greedy { prop_assert_eq!(Some(s.valid(v)), min); }
                                let val = s.valid(v);
                                s.sub_valid(v, val);
                                s.erase(v);
                            }
                            Err(_) => prop_assert!(min.is_none()),
                        }
                    }
                    _ => { if s.state(u) == crate::UnitState::Sealed { let val = s.valid(u); s.sub_valid(u, val); s.erase(u); } }
                }
                s.check_invariants();
            }
        }
    }

    #[test]
    fn second_chance_skips_full_units() {
        let mut s = Space::new(4, 10, Box::new(SecondChanceFifo::default()));
        let a = s.open_unit(0).unwrap();
        s.add_valid(a, 10);
        s.seal(a);
        let b = s.open_unit(0).unwrap();
        s.add_valid(b, 2);
        s.seal(b);
        assert_eq!(
            s.pick_victim().unwrap(),
            b,
            "the older but full unit gets a second chance"
        );
        assert_eq!(
            s.pick_victim().unwrap(),
            a,
            "with nothing else left the threshold rises"
        );
    }
}
