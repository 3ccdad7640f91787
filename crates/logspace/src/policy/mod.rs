//! Victim-selection policies.
//!
//! | name | picks | cost per GC |
//! |---|---|---|
//! | `greedy` | fewest valid | O(1) amortized: units live in buckets by valid amount |
//! | `cost-benefit` | max (1-u)·age/(1+u) (Rosenblum & Ousterhout, LFS) | O(sealed units) scan |
//! | `cb-sepbit` | max (1-u)/u·sqrt(age) (SepBIT's simulator) | O(sealed units) scan |
//! | `fifo` | oldest sealed | O(1) |
//! | `random` | uniform random sealed | O(1) |
//! | `k-greedy:K` | fewest valid among K random samples (d-choices) | O(K) |
//! | `window:W` | fewest valid among the W oldest sealed | O(W) |
//! | `sc-fifo` | oldest sealed with valid ratio below a threshold; others get a second chance | O(1) amortized |
//! | `2r-greedy` | SSD-iq reference: region by the two regions' minima, greedy victims until one unit of garbage | O(1) amortized |
//! | `greedy-unit` | the engine's GDT DB GC: greedy victims until their garbage adds up to one unit, their valid data fitting the free units but one | O(1) amortized per victim |
//! | `group-greedy` | NoWA's DB GC: the group (units opened together) with the least valid data per unit, whole, or its least valid unit now and the siblings deferred | O(units) scan |
//! | `2r-fifo` | SSD-iq reference: persistent scan of the oldest 70% of the FIFO, victims below a utilization threshold until one unit of garbage | O(scan) |
//!
//! `age` is the space's write clock since the unit was sealed. The two `2r-*` policies select a
//! *batch* of victims ([`VictimPolicy::select_batch`]); the FTL compacts them into each other as
//! the reference simulator does (see `nowa_flash`).

mod basic;
mod dormant;
mod engine;
mod groups;
mod tworef;

pub use basic::{
    Benefit, CostBenefit, Fifo, Greedy, KGreedy, RandomPolicy, SecondChanceFifo, WindowedGreedy,
};
pub use dormant::Dormant;
pub use engine::GreedyUntilUnit;
pub use groups::GroupGreedy;
pub use tworef::{TwoRFifo, TwoRGreedy};

use crate::VictimPolicy;

pub(crate) const NONE: u32 = u32::MAX;

/// The policies known by name on the command line.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
#[non_exhaustive]
pub enum PolicyKind {
    /// ssd-iq's "Naive Greedy": greedy, GC copies share the host write frontier.
    Greedy,
    /// The SSD-iq reference simulator's 2R-Greedy (`sim/TwoR.hpp`), with its compaction.
    TwoRGreedy,
    /// The SSD-iq reference simulator's 2R-FIFO (`sim/TwoR.hpp`), with its compaction.
    TwoRFifo,
    /// Second-chance FIFO (threshold 0.5, +0.05 per fruitless pass), GC copies separate: this
    /// simulator's earlier reading of 2R-FIFO.
    ScFifo,
    /// LFS cost-benefit: max (1-u)·age/(1+u).
    CostBenefit,
    /// SepBIT's cost-benefit: max (1-u)/u·sqrt(age).
    CostBenefitSepBit,
    /// Oldest sealed unit.
    Fifo,
    /// Uniformly random sealed unit.
    Random,
    /// Fewest valid among K random samples.
    KGreedy(u32),
    /// Fewest valid among the W oldest sealed units.
    Window(u32),
}

/// A policy name that is not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown GC policy '{text}' (expected one of: {FORMS})")]
pub struct PolicyParseError {
    /// The text given.
    pub text: String,
}

const FORMS: &str =
    "greedy, 2r-greedy, 2r-fifo, sc-fifo, cost-benefit, cb-sepbit, fifo, random, k-greedy:K, window:W";

/// Serialized as its name on the command line (`"k-greedy:4"`), never a Rust encoding.
impl From<PolicyKind> for String {
    fn from(p: PolicyKind) -> String {
        p.to_string()
    }
}

impl TryFrom<String> for PolicyKind {
    type Error = PolicyParseError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl std::str::FromStr for PolicyKind {
    type Err = PolicyParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || PolicyParseError { text: s.to_owned() };
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
            ("2r-greedy" | "2r-g", None) => PolicyKind::TwoRGreedy,
            ("2r-fifo" | "2r-f", None) => PolicyKind::TwoRFifo,
            ("sc-fifo", None) => PolicyKind::ScFifo,
            ("cost-benefit" | "cb", None) => PolicyKind::CostBenefit,
            ("cb-sepbit" | "cost-benefit-sepbit", None) => PolicyKind::CostBenefitSepBit,
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
            PolicyKind::ScFifo => write!(f, "sc-fifo"),
            PolicyKind::CostBenefit => write!(f, "cost-benefit"),
            PolicyKind::CostBenefitSepBit => write!(f, "cb-sepbit"),
            PolicyKind::Fifo => write!(f, "fifo"),
            PolicyKind::Random => write!(f, "random"),
            PolicyKind::KGreedy(k) => write!(f, "k-greedy:{k}"),
            PolicyKind::Window(w) => write!(f, "window:{w}"),
        }
    }
}

impl PolicyKind {
    /// Build the victim policy. `seed` feeds the randomized ones.
    #[must_use]
    pub fn build(&self, seed: u64) -> Box<dyn VictimPolicy> {
        match self {
            PolicyKind::Greedy => Box::new(Greedy::default()),
            PolicyKind::TwoRGreedy => Box::new(TwoRGreedy::default()),
            PolicyKind::TwoRFifo => Box::new(TwoRFifo::default()),
            PolicyKind::ScFifo => Box::new(SecondChanceFifo::default()),
            PolicyKind::CostBenefit => Box::new(CostBenefit::new(Benefit::Lfs)),
            PolicyKind::CostBenefitSepBit => Box::new(CostBenefit::new(Benefit::SepBit)),
            PolicyKind::Fifo => Box::new(Fifo::default()),
            PolicyKind::Random => Box::new(RandomPolicy::new(seed)),
            PolicyKind::KGreedy(k) => Box::new(KGreedy::new(*k, seed)),
            PolicyKind::Window(w) => Box::new(WindowedGreedy::new(*w)),
        }
    }

    /// Whether GC-relocated data should go to units of its own. ssd-iq's naive greedy mixes it
    /// with host writes; every other policy here separates it.
    #[must_use]
    pub fn separates_gc_data(&self) -> bool {
        !matches!(self, PolicyKind::Greedy)
    }

    /// Whether the FTL should run the SSD-iq reference's GC: victims compacted into each other,
    /// partly filled victims handed back to the host writer, no reserved free unit.
    #[must_use]
    pub fn compacts_victims(&self) -> bool {
        matches!(self, PolicyKind::TwoRGreedy | PolicyKind::TwoRFifo)
    }

    /// Whether the policy honors [`crate::UnitView::max_victim_valid`] (needed by the
    /// garbage-proportion GC trigger).
    #[must_use]
    pub fn honors_victim_filter(&self) -> bool {
        matches!(
            self,
            PolicyKind::Greedy | PolicyKind::CostBenefit | PolicyKind::CostBenefitSepBit
        )
    }

    /// Every policy, with small parameters (tests, sweeps).
    #[must_use]
    pub fn all() -> Vec<PolicyKind> {
        vec![
            PolicyKind::Greedy,
            PolicyKind::TwoRGreedy,
            PolicyKind::TwoRFifo,
            PolicyKind::ScFifo,
            PolicyKind::CostBenefit,
            PolicyKind::CostBenefitSepBit,
            PolicyKind::Fifo,
            PolicyKind::Random,
            PolicyKind::KGreedy(4),
            PolicyKind::Window(3),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Space, UnitId, UnitState};
    use proptest::prelude::*;

    #[test]
    fn parse_roundtrip() {
        for k in PolicyKind::all() {
            assert_eq!(k.to_string().parse::<PolicyKind>().unwrap(), k);
        }
        assert!("bogus".parse::<PolicyKind>().is_err());
        assert!("k-greedy:0".parse::<PolicyKind>().is_err());
        assert!("window".parse::<PolicyKind>().is_err());
        let e = "nope".parse::<PolicyKind>().unwrap_err().to_string();
        assert!(
            e.contains("'nope'") && e.contains("2r-fifo") && !e.contains('\n'),
            "{e}"
        );
    }

    /// Seal a fresh unit of `class` holding `valid`.
    fn sealed(s: &mut Space, class: u16, valid: u32) -> UnitId {
        let u = s.open_unit(class).unwrap();
        s.add_valid(u, valid);
        s.seal(u);
        u
    }

    proptest! {
        /// Any policy only ever returns sealed units, each once, and greedy always the minimum.
        #[test]
        fn policies_pick_sealed_units(ops in proptest::collection::vec((0u8..4, 0u32..16, 0u32..8), 1..300), which in 0usize..10) {
            let kind = PolicyKind::all()[which].clone();
            let mut s = Space::new(16, 8, kind.build(7));
            for (op, u, n) in ops {
                match op {
                    0 => { if s.free_units() > 0 { sealed(&mut s, u16::from(n % 2 == 0), n.min(8)); } }
                    1 => { if s.state(u) == UnitState::Sealed && s.valid(u) > 0 { s.sub_valid(u, 1); } }
                    2 => {
                        let min = (0..16).filter(|&x| s.state(x) == UnitState::Sealed).map(|x| s.valid(x)).min();
                        let mut out = Vec::new();
                        match s.pick_victims(&mut out) {
                            Ok(()) => {
                                for &v in &out {
                                    prop_assert_eq!(s.state(v), UnitState::InGc);
                                }
                                if kind == PolicyKind::Greedy { prop_assert_eq!(Some(s.valid(out[0])), min); }
                                for v in out {
                                    let val = s.valid(v);
                                    s.sub_valid(v, val);
                                    s.erase(v);
                                }
                            }
                            Err(_) => prop_assert!(min.is_none() || !matches!(kind, PolicyKind::Greedy | PolicyKind::Fifo | PolicyKind::Random)),
                        }
                    }
                    _ => { if s.state(u) == UnitState::Sealed { let val = s.valid(u); s.sub_valid(u, val); s.erase(u); } }
                }
                s.check_invariants();
            }
        }
    }

    #[test]
    fn second_chance_skips_full_units() {
        let mut s = Space::new(4, 10, Box::new(SecondChanceFifo::default()));
        let a = sealed(&mut s, 0, 10);
        let b = sealed(&mut s, 0, 2);
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

    #[test]
    fn greedy_honors_the_victim_filter() {
        let mut s = Space::new(4, 10, Box::new(Greedy::default()));
        sealed(&mut s, 0, 9);
        s.set_max_victim_valid(8);
        assert!(s.pick_victim().is_err(), "valid 9 > max 8");
        s.set_max_victim_valid(9);
        assert!(s.pick_victim().is_ok());
    }

    #[test]
    fn cb_sepbit_prefers_old_and_empty() {
        let mut s = Space::new(8, 100, Box::new(CostBenefit::new(Benefit::SepBit)));
        let old = sealed(&mut s, 0, 50);
        s.tick(10_000);
        let young = sealed(&mut s, 0, 40);
        s.tick(1);
        // old: 1 * sqrt(10001) = 100; young: 1.5 * sqrt(1) = 1.5.
        assert_eq!(s.pick_victim().unwrap(), old);
        let full = sealed(&mut s, 0, 100);
        let empty = sealed(&mut s, 0, 0);
        assert_eq!(s.pick_victim().unwrap(), empty, "u = 0 scores +inf");
        assert_eq!(s.pick_victim().unwrap(), young);
        assert!(
            s.pick_victim().is_err(),
            "a fully valid unit never qualifies"
        );
        assert_eq!(s.state(full), UnitState::Sealed);
    }

    #[test]
    fn two_r_fifo_scans_with_a_persistent_cursor() {
        let mut s = Space::new(16, 10, Box::new(TwoRFifo::default()));
        // Ten units: valid 9,9,3,9,9,9,9,9,9,2 (oldest first).
        let us: Vec<UnitId> = [9, 9, 3, 9, 9, 9, 9, 9, 9, 2]
            .iter()
            .map(|&v| sealed(&mut s, 0, v))
            .collect();
        // First round: BLK_UTIL 0.5, threshold 7 steps: takes us[2] (7 garbage), then nothing
        // below 0.5 in the first 7, wraps with 0.55, ... until 0.95 admits us[0] (1 garbage).
        let mut out = Vec::new();
        s.pick_victims(&mut out).unwrap();
        assert_eq!(out, vec![us[2], us[0], us[1], us[3]]);
        // The next round starts at 0.7 from where the cursor stopped (us[4]) and scans only the
        // oldest 70% of what is left (4 of 6 units): the nearly empty newest unit is never seen.
        // The reference would spin forever here; we stop once BLK_UTIL passes 2.0.
        out.clear();
        s.pick_victims(&mut out).unwrap();
        assert_eq!(out, vec![us[4], us[5], us[6], us[7]]);
        assert!(!out.contains(&us[9]));
    }

    #[test]
    fn two_r_fifo_leaves_skipped_units_in_place() {
        let mut p = TwoRFifo::default();
        p.init(8, 10);
        let mut s = Space::new(8, 10, Box::new(Greedy::default()));
        let units: Vec<UnitId> = [9, 0, 9].iter().map(|&v| sealed(&mut s, 0, v)).collect();
        for &u in &units {
            p.on_seal(u, &ViewOf(&s));
        }
        let mut out = Vec::new();
        p.select_batch(&ViewOf(&s), &mut out);
        assert_eq!(out, vec![units[1]]);
        assert_eq!(p.order(), vec![units[0], units[2]]);
    }

    /// A [`crate::UnitView`] over a space (tests drive a policy by hand).
    struct ViewOf<'a>(&'a Space);
    impl crate::UnitView for ViewOf<'_> {
        fn unit_capacity(&self) -> u32 {
            self.0.unit_capacity()
        }
        fn valid(&self, u: UnitId) -> u32 {
            self.0.valid(u)
        }
        fn sealed_at(&self, u: UnitId) -> u64 {
            self.0.info(u).sealed_at
        }
        fn created_at(&self, u: UnitId) -> u64 {
            self.0.info(u).created_at
        }
        fn now(&self) -> u64 {
            self.0.now()
        }
        fn class(&self, u: UnitId) -> u16 {
            self.0.class(u)
        }
        fn max_victim_valid(&self) -> u32 {
            self.0.unit_capacity()
        }
        fn free_units(&self) -> u32 {
            self.0.free_units()
        }
    }

    #[test]
    fn two_r_greedy_chooses_the_region_by_minima() {
        let mut s = Space::new(16, 10, Box::new(TwoRGreedy::default()));
        let n1 = sealed(&mut s, 0, 4);
        let n2 = sealed(&mut s, 0, 5);
        let c1 = sealed(&mut s, 1, 2);
        let c2 = sealed(&mut s, 1, 3);
        // Both regions hold >= 10 garbage (11 and 15); cold min 2 < normal min 4: cold, until
        // garbage >= 10: c1 (8) + c2 (7).
        let mut out = Vec::new();
        s.pick_victims(&mut out).unwrap();
        assert_eq!(out, vec![c1, c2]);
        // Now the cold region is empty (garbage 0 < 10): normal, n1 (6) + n2 (5).
        out.clear();
        s.pick_victims(&mut out).unwrap();
        assert_eq!(out, vec![n1, n2]);
    }
}
