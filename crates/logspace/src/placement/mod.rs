//! Data placement: which class (open unit) a write goes to.
//!
//! Modeled on the `Separator` of SepBIT's simulator (`fallfish/sepbit`,
//! `trace_replay/src/main/java/gcsimulator/placement/`): the writer calls, for every user
//! write, [`Placement::on_user_write`] then [`Placement::classify`]`(false, ..)`; for every page
//! GC relocates, [`Placement::on_gc_write`] then [`Placement::classify`]`(true, ..)`, after
//! [`Placement::on_collect`] announced the victim (so its class is known). Overwrites report
//! [`Placement::on_invalidate`] (when [`Placement::wants_invalidate`]), filled units
//! [`Placement::on_seal`]. A placement that manages its own victims (MiDAS's per-group FIFOs)
//! answers [`Placement::victim`].
//!
//! Time base: `Ctx::now` is the user-write clock (user pages written so far, the current write
//! included), SepBIT's `accessId`. GC writes do not advance it. Schemes whose original code uses
//! trace wall-clock time (WARCIP, the cost-benefit age) use this clock instead.
//!
//! Page ids are `u64`; per-page state is sized by the logical pages given to
//! [`Placement::init`] ([`Geometry`]). Amounts in [`UnitInfo`] are in the space's unit (pages or bytes).

mod autostream;
mod fk;
mod midas;
mod sepbit;
mod simple;
mod warcip;

pub use autostream::{MultiQueue, Sfr};
pub use fk::{FkOracle, KMeansFk};
pub use midas::MiDas;
pub use sepbit::SepBit;
pub use simple::{Dac, NoSep, SepGc};
pub use warcip::Warcip;

use crate::{UnitId, UnitView};

/// A next-overwrite distance meaning "never overwritten again" (or unknown).
pub const NEVER: u64 = u64::MAX;

/// The space a placement works in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Geometry {
    /// Pages addressed (per-page state is sized by it).
    pub logical_pages: u64,
    /// Capacity of a unit in pages.
    pub unit_pages: u32,
    /// Units in the space.
    pub units: u32,
}

/// What placement hooks learn about a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitInfo {
    /// The unit.
    pub unit: UnitId,
    /// Its class (the open unit it was).
    pub class: u16,
    /// Write clock when it was opened.
    pub created_at: u64,
    /// Write clock when it was sealed (meaningless while open).
    pub sealed_at: u64,
    /// Its valid amount.
    pub valid: u32,
    /// Capacity of every unit.
    pub capacity: u32,
    /// Sealed (or in GC), as opposed to open.
    pub sealed: bool,
}

/// What a placement sees at a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ctx {
    /// The user-write clock (see the module docs).
    pub now: u64,
    /// Live pages (mapped) in the space: SepBIT bounds its FIFO by it.
    pub live: u64,
    /// User writes until this page is overwritten next, [`NEVER`] if it is not (or unknown):
    /// the future, for the FK oracles. Meaningful for user writes only.
    pub next_write_in: u64,
}

/// The victim choice of a placement (see [`Placement::victim`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Victim {
    /// Use the space's victim policy.
    Policy,
    /// Collect this sealed unit.
    Unit(UnitId),
    /// Nothing to collect.
    Nothing,
}

/// A placement scheme. See the module docs for the call order.
pub trait Placement: Send {
    /// Name as printed in results.
    fn name(&self) -> String;
    /// Number of classes (open units); every class is below it.
    fn classes(&self) -> u16;
    /// Whether the scheme needs [`Ctx::next_write_in`] (the FK oracles).
    fn needs_future(&self) -> bool {
        false
    }
    /// Called once, before any write.
    fn init(&mut self, geo: &Geometry);
    /// A user request of `len` pages from `start` begins (SepBIT's `addRequest`).
    fn on_request(&mut self, _start: u64, _len: u64, _ctx: &Ctx) {}
    /// A user write of `page` (SepBIT's `append`), before [`Placement::classify`].
    fn on_user_write(&mut self, _page: u64, _ctx: &Ctx) {}
    /// A GC rewrite of `page` (SepBIT's `gcAppend`), before [`Placement::classify`].
    fn on_gc_write(&mut self, _page: u64, _ctx: &Ctx) {}
    /// The class of this write.
    fn classify(&mut self, is_gc: bool, page: u64, ctx: &Ctx) -> u16;
    /// Whether [`Placement::on_invalidate`] should be called (it costs a lookup per write).
    fn wants_invalidate(&self) -> bool {
        false
    }
    /// The old copy of `page`, in `unit`, became garbage (overwrite or trim).
    fn on_invalidate(&mut self, _page: u64, _unit: &UnitInfo, _ctx: &Ctx) {}
    /// `unit` was filled and sealed.
    fn on_seal(&mut self, _unit: &UnitInfo, _ctx: &Ctx) {}
    /// GC is about to relocate the valid data of `unit`.
    fn on_collect(&mut self, _unit: &UnitInfo, _ctx: &Ctx) {}
    /// Which unit to collect next.
    fn victim(&mut self, _view: &dyn UnitView) -> Victim {
        Victim::Policy
    }
    /// Scheme state worth printing at the end of a run (one line, may be empty).
    fn report(&self) -> String {
        String::new()
    }
}

/// A placement name that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlacementError {
    /// Not a known scheme.
    #[error("unknown placement '{text}' (expected one of: {FORMS})")]
    Unknown {
        /// The text given.
        text: String,
    },
    /// A class count out of range.
    #[error("placement '{text}': class count must be between {min} and {max}")]
    Classes {
        /// The text given.
        text: String,
        /// Smallest count.
        min: u16,
        /// Largest count.
        max: u16,
    },
}

const FORMS: &str = "nosep, sepgc, dac[:N], sfr[:N], multiqueue[:N], warcip[:N], sepbit[:N], fk[:N], fk-kmeans[:N], midas";

/// Most classes a scheme may use (open units per writer).
pub const MAX_CLASSES: u16 = 16;

/// The placement schemes known by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum PlacementKind {
    /// Everything, user and GC writes, in one open unit.
    NoSep,
    /// User writes to class 0, GC writes to class 1 (= 2R's regions, SepBIT's `SepGC`).
    SepGc,
    /// Dynamic dAta Clustering: a per-page level, up on user writes, down on GC writes.
    Dac(u16),
    /// AutoStream SFR: sequentiality, frequency, recency of 2 MiB chunks.
    Sfr(u16),
    /// AutoStream MultiQueue: write counts of 1 MiB chunks.
    MultiQueue(u16),
    /// WARCIP: user writes clustered by rewrite interval; GC writes to class 0.
    Warcip(u16),
    /// SepBIT (FAST'22): lifespan inference from block invalidation times.
    SepBit(u16),
    /// Future knowledge: class = remaining lifespan / unit length, capped.
    Fk(u16),
    /// Future knowledge clustered by K-means over log lifespans (SepFrozen's FK oracle).
    FkKmeans(u16),
    /// MiDAS (FAST'24): migration chain of FIFO groups sized by a Markov-chain model.
    MiDas,
}

impl PlacementKind {
    /// Build the scheme (call [`Placement::init`] ([`Geometry`]) before use).
    #[must_use]
    pub fn build(&self) -> Box<dyn Placement> {
        match *self {
            PlacementKind::NoSep => Box::new(NoSep),
            PlacementKind::SepGc => Box::new(SepGc),
            PlacementKind::Dac(n) => Box::new(Dac::new(n)),
            PlacementKind::Sfr(n) => Box::new(Sfr::new(n)),
            PlacementKind::MultiQueue(n) => Box::new(MultiQueue::new(n)),
            PlacementKind::Warcip(n) => Box::new(Warcip::new(n)),
            PlacementKind::SepBit(n) => Box::new(SepBit::new(n)),
            PlacementKind::Fk(n) => Box::new(FkOracle::new(n)),
            PlacementKind::FkKmeans(n) => Box::new(KMeansFk::new(n)),
            PlacementKind::MiDas => Box::new(MiDas::new()),
        }
    }

    /// Whether the scheme needs each write's next-overwrite distance.
    #[must_use]
    pub fn needs_future(&self) -> bool {
        matches!(self, PlacementKind::Fk(_) | PlacementKind::FkKmeans(_))
    }

    /// Every scheme with its default class count (tests, benchmarks).
    #[must_use]
    pub fn all() -> Vec<PlacementKind> {
        vec![
            PlacementKind::NoSep,
            PlacementKind::SepGc,
            PlacementKind::Dac(6),
            PlacementKind::Sfr(6),
            PlacementKind::MultiQueue(6),
            PlacementKind::Warcip(6),
            PlacementKind::SepBit(6),
            PlacementKind::Fk(6),
            PlacementKind::FkKmeans(6),
            PlacementKind::MiDas,
        ]
    }
}

impl std::str::FromStr for PlacementKind {
    type Err = PlacementError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let (name, arg) = match lower.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (lower.as_str(), None),
        };
        let unknown = || PlacementError::Unknown { text: s.to_owned() };
        let classes = |min: u16| -> Result<u16, PlacementError> {
            let Some(a) = arg else { return Ok(6) };
            let n: u16 = a.trim().parse().map_err(|_| unknown())?;
            if (min..=MAX_CLASSES).contains(&n) {
                Ok(n)
            } else {
                Err(PlacementError::Classes {
                    text: s.to_owned(),
                    min,
                    max: MAX_CLASSES,
                })
            }
        };
        let bare = |k: PlacementKind| arg.map_or(Ok(k), |_| Err(unknown()));
        match name {
            "nosep" | "none" => bare(PlacementKind::NoSep),
            "sepgc" | "2r" => bare(PlacementKind::SepGc),
            "midas" => bare(PlacementKind::MiDas),
            "dac" => Ok(PlacementKind::Dac(classes(2)?)),
            "sfr" => Ok(PlacementKind::Sfr(classes(3)?)),
            "multiqueue" | "mq" => Ok(PlacementKind::MultiQueue(classes(3)?)),
            "warcip" => Ok(PlacementKind::Warcip(classes(2)?)),
            "sepbit" => Ok(PlacementKind::SepBit(classes(4)?)),
            "fk" => Ok(PlacementKind::Fk(classes(2)?)),
            "fk-kmeans" | "fkkmeans" => Ok(PlacementKind::FkKmeans(classes(2)?)),
            _ => Err(unknown()),
        }
    }
}

impl std::fmt::Display for PlacementKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlacementKind::NoSep => write!(f, "nosep"),
            PlacementKind::SepGc => write!(f, "sepgc"),
            PlacementKind::MiDas => write!(f, "midas"),
            PlacementKind::Dac(n) => write!(f, "dac:{n}"),
            PlacementKind::Sfr(n) => write!(f, "sfr:{n}"),
            PlacementKind::MultiQueue(n) => write!(f, "multiqueue:{n}"),
            PlacementKind::Warcip(n) => write!(f, "warcip:{n}"),
            PlacementKind::SepBit(n) => write!(f, "sepbit:{n}"),
            PlacementKind::Fk(n) => write!(f, "fk:{n}"),
            PlacementKind::FkKmeans(n) => write!(f, "fk-kmeans:{n}"),
        }
    }
}

/// Per-page state vector index (placement state is sized by the logical pages).
#[inline]
pub(crate) fn idx(page: u64) -> usize {
    usize::try_from(page).expect("page ids fit the address space")
}

/// `x` as a class number below `n` (saturating at `n - 1`).
#[inline]
pub(crate) fn cap_class(x: u64, n: u16) -> u16 {
    u16::try_from(x.min(u64::from(n - 1))).expect("capped below n")
}

#[cfg(test)]
mod tests;
