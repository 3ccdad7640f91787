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
//! | `2r-fifo` | SSD-iq reference: persistent scan of the oldest 70% of the FIFO, victims below a utilization threshold until one unit of garbage | O(scan) |
//!
//! `age` is the space's write clock since the unit was sealed. The two `2r-*` policies select a
//! *batch* of victims ([`VictimPolicy::select_batch`]); the FTL compacts them into each other as
//! the reference simulator does (see `nowa_flash`).

mod basic;
mod tworef;

pub use basic::{
    CostBenefit, CostBenefitSepBit, Fifo, Greedy, KGreedy, RandomPolicy, SecondChanceFifo,
    WindowedGreedy,
};
pub use tworef::{TwoRFifo, TwoRGreedy};

use crate::VictimPolicy;

pub(crate) const NONE: u32 = u32::MAX;

/// The policies known by name on the command line.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
            PolicyKind::CostBenefit => Box::new(CostBenefit::default()),
            PolicyKind::CostBenefitSepBit => Box::new(CostBenefitSepBit::default()),
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
mod tests;
