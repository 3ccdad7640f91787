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
mod driver;
mod fk;
mod midas;
mod sepbit;
mod sepfrozen;
mod simple;
mod times;
mod warcip;
mod warcip_pages;

pub use autostream::{MultiQueue, Sfr};
pub use driver::Placer;
pub use fk::{FkOracle, KMeansFk};
pub use midas::MiDas;
pub use sepbit::SepBit;
pub use sepfrozen::{DacPaper, FrozenOracle, HintOracle, SepFrozen, SepFrozenBit, SepFrozenDac};
pub use simple::{Dac, NoSep, SepGc};
pub use warcip::Warcip;

use crate::{UnitId, UnitView};

/// A next-overwrite distance meaning "never overwritten again" (or unknown).
pub const NEVER: u64 = u64::MAX;
/// A batch hint ([`Placement::on_batch`]) meaning "first write of this page: nothing is known
/// about it" (GDT groups such pages apart).
pub const FRESH: u64 = u64::MAX - 1;

/// The space a placement works in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Geometry {
    /// Pages addressed (per-page state is sized by it).
    pub logical_pages: u64,
    /// Capacity of a unit in pages.
    pub unit_pages: u32,
    /// Units in the space.
    pub units: u32,
    /// Whether the writer keeps GC in order: it appends every GC rewrite right after its
    /// [`Placement::classify`] (the clock unchanged), fills a class's units one at a time and
    /// reports each seal ([`Placement::on_seal`]) before the class's next unit takes a page,
    /// and reports the unit of every overwritten or trimmed copy
    /// ([`Placement::on_invalidate`], when asked). The FTL model does. A scheme may then
    /// derive per-page state from the unit holding a page's copy (WARCIP's penalty).
    pub gc_in_order: bool,
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
    /// Whether [`Placement::on_request`] does anything: a scheme that answers false is not
    /// called per request (a virtual call per user write saved). Asked once, by [`Placer::new`].
    fn wants_requests(&self) -> bool {
        true
    }
    /// A writer that places in batches (the engine's zone writer) is about to classify `pages`
    /// (user or GC writes). `hints[i]`: the writer's estimate of when `pages[i]` dies, on its
    /// own clock (the engine's GDT: the estimated deathtime from the page's write history),
    /// [`NEVER`] when unknown, [`FRESH`] for a first write. The FTL model does not call it.
    fn on_batch(&mut self, _is_gc: bool, _pages: &[u64], _hints: &[u64], _ctx: &Ctx) {}
    /// A user write of `page` (SepBIT's `append`), before [`Placement::classify`].
    fn on_user_write(&mut self, _page: u64, _ctx: &Ctx) {}
    /// A GC rewrite of `page` (SepBIT's `gcAppend`), before [`Placement::classify`].
    fn on_gc_write(&mut self, _page: u64, _ctx: &Ctx) {}
    /// The class of this write.
    fn classify(&mut self, is_gc: bool, page: u64, ctx: &Ctx) -> u16;
    /// [`Placement::on_user_write`] then [`Placement::classify`]`(false, ..)`: what a writer
    /// calls per user write. One virtual call for the two (the default body is compiled per
    /// scheme, so its two calls are direct); a scheme should not override it.
    fn user_write(&mut self, page: u64, ctx: &Ctx) -> u16 {
        self.on_user_write(page, ctx);
        self.classify(false, page, ctx)
    }
    /// [`Placement::on_gc_write`] then [`Placement::classify`]`(true, ..)`, as
    /// [`Placement::user_write`] for a page GC moves.
    fn gc_write(&mut self, page: u64, ctx: &Ctx) -> u16 {
        self.on_gc_write(page, ctx);
        self.classify(true, page, ctx)
    }
    /// Whether [`Placement::on_invalidate`] should be called (it costs a lookup per write).
    fn wants_invalidate(&self) -> bool {
        false
    }
    /// The old copy of `page`, in `unit`, became garbage (overwrite or trim).
    fn on_invalidate(&mut self, _page: u64, _unit: &UnitInfo, _ctx: &Ctx) {}
    /// `unit` was opened for its class (the engine's zone writer reports it; the FTL model
    /// does not).
    fn on_open(&mut self, _unit: &UnitInfo, _ctx: &Ctx) {}
    /// `unit` was filled and sealed.
    fn on_seal(&mut self, _unit: &UnitInfo, _ctx: &Ctx) {}
    /// GC is about to relocate the valid data of `unit`.
    fn on_collect(&mut self, _unit: &UnitInfo, _ctx: &Ctx) {}
    /// Whether the writer should list a victim's valid pages before moving them
    /// ([`Placement::on_victim_pages`]; it costs a scan of the victim).
    fn wants_victim_pages(&self) -> bool {
        false
    }
    /// The valid pages of the victim just announced by [`Placement::on_collect`], in the order
    /// GC will move them (batched decisions: SepFrozen's model judges them at once).
    fn on_victim_pages(&mut self, _pages: &[u64], _ctx: &Ctx) {}
    /// Which unit to collect next.
    fn victim(&mut self, _view: &dyn UnitView) -> Victim {
        Victim::Policy
    }
    /// Whether [`Placement::victim`] never answers [`Victim::Policy`]: the space's victim
    /// policy is then never asked, and a writer may leave it dormant ([`crate::Dormant`])
    /// instead of keeping its structure current on every valid-count change.
    fn chooses_victims(&self) -> bool {
        false
    }
    /// When every GC rewrite of the victim just announced by [`Placement::on_collect`] goes
    /// to one class and its per-page hooks ([`Placement::on_gc_write`], GC
    /// [`Placement::classify`]) would change nothing but return that class: the class. The
    /// writer then moves the victim's pages without calling them (a bulk copy) and counts
    /// the writes at once. `None` (the default): call them page by page.
    fn gc_class(&self) -> Option<u16> {
        None
    }
    /// Scheme state worth printing at the end of a run (one line, may be empty).
    fn report(&self) -> String {
        String::new()
    }
    /// `page` will be written (by the user or GC) soon: bring its per-page state towards the
    /// core ([`crate::prefetch::line`]; a hint that changes no decision). Writers call it a
    /// few writes ahead so the state's cache misses overlap.
    fn prefetch(&self, _page: u64) {}
    /// `page` of the victim just announced will be moved by GC soon: bring the state that
    /// its GC [`Placement::classify`] reads (the writer asks only when
    /// [`Placement::gc_reads_state`]). The default is [`Placement::prefetch`]; a scheme whose
    /// GC hooks read less than its user writes (SepFrozen: its oracle judged the victim's
    /// pages in [`Placement::on_victim_pages`] already) asks for less: on a core whose
    /// line-fill buffers are all busy, every line not asked for is one miss fewer in flight.
    fn prefetch_gc(&self, page: u64) {
        self.prefetch(page);
    }
    /// Whether the GC rewrites of the victim just announced by [`Placement::on_collect`] read
    /// the per-page state [`Placement::prefetch`] fetches (SepBIT's class-0 victims and MiDAS's
    /// groups past 1 do not): when not, the writer skips those prefetches, one random line
    /// per moved page. A hint like the prefetch: it changes no decision.
    fn gc_reads_state(&self) -> bool {
        true
    }
    /// Bytes of memory the scheme's state holds (its per-page and per-unit tables), so that a
    /// model's memory per page counts it.
    fn memory_bytes(&self) -> u64 {
        0
    }
    /// Whether the scheme lends a spare bit beside its per-page state to a wrapper
    /// ([`Placement::set_page_bit`], [`Placement::page_bit`]; SepBIT: the top bit of each last
    /// write time). The bit then shares the line the scheme touches per user write: a
    /// wrapper's per-page flag costs no random line of its own. Its value changes no decision
    /// of the scheme.
    fn has_page_bit(&self) -> bool {
        false
    }
    /// Set or clear the lent bit of `page` (only if [`Placement::has_page_bit`]).
    ///
    /// # Panics
    /// The default: the scheme lends no bit.
    fn set_page_bit(&mut self, page: u64, _on: bool) {
        panic!("{} lends no bit per page (page {page})", self.name());
    }
    /// The lent bit of `page` (false until set; only if [`Placement::has_page_bit`]).
    ///
    /// # Panics
    /// The default: the scheme lends no bit.
    fn page_bit(&self, page: u64) -> bool {
        panic!("{} lends no bit per page (page {page})", self.name());
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

const FORMS: &str = "nosep, sepgc, dac[:N], dac-paper[:N], sfr[:N], multiqueue[:N], warcip[:N], sepbit[:N], fk[:N], fk-kmeans[:N], midas, sepfrozen-bit[:N]";

/// Most classes a scheme may use (open units per writer).
pub const MAX_CLASSES: u16 = 16;

/// The placement schemes known by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
#[non_exhaustive]
pub enum PlacementKind {
    /// Everything, user and GC writes, in one open unit.
    NoSep,
    /// User writes to class 0, GC writes to class 1 (= 2R's regions, SepBIT's `SepGC`).
    SepGc,
    /// Dynamic dAta Clustering: a per-page level, up on user writes, down on GC writes.
    Dac(u16),
    /// DAC as SepFrozen's paper states it (start at class 1, write then raise/lower).
    DacPaper(u16),
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
    /// SepFrozenBIT with a perfect frozen-page model (the hints' future: [`HintOracle`]).
    SepFrozenBit(u16),
}

impl PlacementKind {
    /// Build the scheme (call [`Placement::init`] ([`Geometry`]) before use).
    #[must_use]
    pub fn build(&self) -> Box<dyn Placement> {
        match *self {
            PlacementKind::NoSep => Box::new(NoSep),
            PlacementKind::SepGc => Box::new(SepGc),
            PlacementKind::Dac(n) => Box::new(Dac::new(n)),
            PlacementKind::DacPaper(n) => Box::new(DacPaper::new(n)),
            PlacementKind::Sfr(n) => Box::new(Sfr::new(n)),
            PlacementKind::MultiQueue(n) => Box::new(MultiQueue::new(n)),
            PlacementKind::Warcip(n) => Box::new(Warcip::new(n)),
            PlacementKind::SepBit(n) => Box::new(SepBit::new(n)),
            PlacementKind::Fk(n) => Box::new(FkOracle::new(n)),
            PlacementKind::FkKmeans(n) => Box::new(KMeansFk::new(n)),
            PlacementKind::MiDas => Box::new(MiDas::new()),
            PlacementKind::SepFrozenBit(n) => {
                Box::new(SepFrozen::bit(n, Box::new(HintOracle::default())))
            }
        }
    }

    /// Whether the scheme needs each write's next-overwrite distance.
    #[must_use]
    pub fn needs_future(&self) -> bool {
        matches!(
            self,
            PlacementKind::Fk(_) | PlacementKind::FkKmeans(_) | PlacementKind::SepFrozenBit(_)
        )
    }

    /// Every scheme with its default class count (tests, benchmarks), SepFrozenBIT aside: it
    /// came after the seed-fixed results the tests pin over this list, and `nowa sim
    /// --bench-schemes` adds it by name.
    #[must_use]
    pub fn all() -> Vec<PlacementKind> {
        vec![
            PlacementKind::NoSep,
            PlacementKind::SepGc,
            PlacementKind::Dac(6),
            PlacementKind::DacPaper(6),
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

/// Serialized as its name on the command line (`"sepbit:4"`), never a Rust encoding.
impl From<PlacementKind> for String {
    fn from(p: PlacementKind) -> String {
        p.to_string()
    }
}

impl TryFrom<String> for PlacementKind {
    type Error = PlacementError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
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
            "dac-paper" => Ok(PlacementKind::DacPaper(classes(2)?)),
            "sfr" => Ok(PlacementKind::Sfr(classes(3)?)),
            "multiqueue" | "mq" => Ok(PlacementKind::MultiQueue(classes(3)?)),
            "warcip" => Ok(PlacementKind::Warcip(classes(2)?)),
            "sepbit" => Ok(PlacementKind::SepBit(classes(4)?)),
            "fk" => Ok(PlacementKind::Fk(classes(2)?)),
            "fk-kmeans" | "fkkmeans" => Ok(PlacementKind::FkKmeans(classes(2)?)),
            "sepfrozen-bit" => Ok(PlacementKind::SepFrozenBit(classes(4)?)),
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
            PlacementKind::DacPaper(n) => write!(f, "dac-paper:{n}"),
            PlacementKind::Sfr(n) => write!(f, "sfr:{n}"),
            PlacementKind::MultiQueue(n) => write!(f, "multiqueue:{n}"),
            PlacementKind::Warcip(n) => write!(f, "warcip:{n}"),
            PlacementKind::SepBit(n) => write!(f, "sepbit:{n}"),
            PlacementKind::Fk(n) => write!(f, "fk:{n}"),
            PlacementKind::FkKmeans(n) => write!(f, "fk-kmeans:{n}"),
            PlacementKind::SepFrozenBit(n) => write!(f, "sepfrozen-bit:{n}"),
        }
    }
}

/// Per-page state vector index (placement state is sized by the logical pages).
#[inline]
pub(crate) fn idx(page: u64) -> usize {
    usize::try_from(page).expect("page ids fit the address space")
}

/// Bytes held by the elements of a state table.
#[inline]
pub(crate) fn bytes_of<T>(v: &[T]) -> u64 {
    u64::try_from(std::mem::size_of_val(v)).unwrap_or(u64::MAX)
}

/// `x` as a class number below `n` (saturating at `n - 1`).
#[inline]
pub(crate) fn cap_class(x: u64, n: u16) -> u16 {
    u16::try_from(x.min(u64::from(n - 1))).expect("capped below n")
}

#[cfg(test)]
mod tests {
    //! Class walks of every scheme on small scripted streams.

    use super::*;

    fn geo(pages: u64, unit: u32) -> Geometry {
        Geometry {
            logical_pages: pages,
            unit_pages: unit,
            units: 64,
            gc_in_order: false,
        }
    }

    fn ctx(now: u64) -> Ctx {
        Ctx {
            now,
            live: 1000,
            next_write_in: NEVER,
        }
    }

    /// A user write at `now`: hooks in the writer's order, the class it got.
    fn user(p: &mut dyn Placement, page: u64, now: u64) -> u16 {
        let c = ctx(now);
        p.on_request(page, 1, &c);
        p.on_user_write(page, &c);
        p.classify(false, page, &c)
    }

    fn gc(p: &mut dyn Placement, page: u64, now: u64, victim_class: u16) -> u16 {
        let c = ctx(now);
        p.on_collect(&unit(victim_class, 0), &c);
        p.on_gc_write(page, &c);
        p.classify(true, page, &c)
    }

    fn unit(class: u16, created_at: u64) -> UnitInfo {
        UnitInfo {
            unit: 0,
            class,
            created_at,
            sealed_at: created_at,
            valid: 0,
            capacity: 16,
            sealed: true,
        }
    }

    #[test]
    fn parse_and_display_roundtrip() {
        for k in PlacementKind::all() {
            assert_eq!(k.to_string().parse::<PlacementKind>(), Ok(k));
            let mut p = k.build();
            assert!(p.classes() >= 1 && p.classes() <= MAX_CLASSES);
            assert_eq!(p.needs_future(), k.needs_future());
            p.init(&geo(100, 16));
        }
        assert_eq!("2r".parse(), Ok(PlacementKind::SepGc));
        assert_eq!("dac".parse(), Ok(PlacementKind::Dac(6)));
        assert_eq!("SepBIT:5".parse(), Ok(PlacementKind::SepBit(5)));
        assert!(matches!(
            "sepbit:3".parse::<PlacementKind>(),
            Err(PlacementError::Classes { .. })
        ));
        assert!(matches!(
            "dac:17".parse::<PlacementKind>(),
            Err(PlacementError::Classes { .. })
        ));
        assert!(matches!(
            "nosep:2".parse::<PlacementKind>(),
            Err(PlacementError::Unknown { .. })
        ));
        let e = "bogus".parse::<PlacementKind>().unwrap_err().to_string();
        assert!(
            e.contains("'bogus'") && e.contains("sepbit") && !e.contains('\n'),
            "{e}"
        );
    }

    #[test]
    fn nosep_and_sepgc() {
        let mut n = NoSep;
        assert_eq!((user(&mut n, 3, 1), gc(&mut n, 3, 1, 0)), (0, 0));
        let mut s = SepGc;
        assert_eq!((user(&mut s, 3, 1), gc(&mut s, 3, 1, 0)), (0, 1));
    }

    #[test]
    fn dac_walks_up_on_writes_and_down_on_gc() {
        let mut d = Dac::new(4);
        d.init(&geo(10, 16));
        let walk: Vec<u16> = (1..=5).map(|t| user(&mut d, 7, t)).collect();
        assert_eq!(
            walk,
            vec![0, 1, 2, 3, 3],
            "first write 0, +1 per rewrite, capped"
        );
        let down: Vec<u16> = (0..5).map(|_| gc(&mut d, 7, 6, 3)).collect();
        assert_eq!(down, vec![2, 1, 0, 0, 0]);
        assert_eq!(user(&mut d, 8, 7), 0, "other pages unaffected");
    }

    #[test]
    fn sepbit_walks_a_frozen_page_to_the_coldest_class() {
        let mut s = SepBit::new(6);
        s.init(&geo(100, 16));
        // Before any threshold: the FIFO is as long as the writes so far (capped by live pages).
        assert_eq!(user(&mut s, 9, 1), 1, "first write: no previous write");
        assert_eq!(user(&mut s, 1, 2), 1);
        assert_eq!(
            user(&mut s, 9, 3),
            1,
            "interval 2, FIFO of 2: not strictly inside"
        );
        assert_eq!(user(&mut s, 1, 4), 0, "interval 2 < FIFO of 3");
        // 16 class-0 victims with lifespan 10 set the threshold to 10.
        for _ in 0..16 {
            s.on_collect(&unit(0, 90), &ctx(100));
        }
        assert!((s.threshold() - 10.0).abs() < 1e-9);
        assert_eq!(user(&mut s, 1, 105), 1, "interval 103 >= threshold 10");
        for t in 106..110 {
            user(&mut s, t - 50, t);
        }
        assert_eq!(
            user(&mut s, 1, 110),
            0,
            "interval 5 < min(threshold 10, FIFO 9)"
        );
        // The SepBIT class walk of a frozen page (SepFrozen Fig. 5): 1 -> 3 -> 4 -> 5.
        assert_eq!(user(&mut s, 2, 120), 1);
        assert_eq!(
            gc(&mut s, 2, 121, 0),
            2,
            "a class-0 victim's pages go to class 2"
        );
        assert_eq!(gc(&mut s, 2, 130, 1), 3, "age 10 < 4l");
        assert_eq!(gc(&mut s, 2, 170, 3), 4, "4l <= age 50 < 16l");
        assert_eq!(gc(&mut s, 2, 400, 4), 5, "age 280 >= 16l");
        assert_eq!(gc(&mut s, 2, 10_000, 5), 5, "capped at the last class");
    }

    #[test]
    fn sfr_levels_by_chunk_frequency_and_keeps_sequential_runs() {
        let mut s = Sfr::new(6);
        s.init(&geo(4096, 16));
        // Chunk 0 (pages 0..512) written 20 times at random offsets: ln(20) = 2.99 -> 2.
        let mut last = 0;
        for t in 0..20 {
            last = user(&mut s, (t * 37) % 500 + 2 * (t % 2), t + 1);
        }
        assert_eq!(last, 2);
        // A sequential continuation keeps the previous level even in a cold chunk.
        let c = ctx(30);
        s.on_request(600, 4, &c);
        let cold = s.classify(false, 600, &c);
        assert_eq!(cold, 0, "chunk 1 seen once");
        s.on_request(604, 4, &c);
        assert_eq!(
            s.classify(false, 604, &c),
            cold,
            "sequential: previous level"
        );
        assert_eq!(gc(&mut s, 0, 31, 0), 5, "GC writes: the last class");
        // Decay: after 2 x 16384 user writes chunk 0's count is quartered: (20 >> 2) + 1 = 6 -> 1.
        assert_eq!(user(&mut s, 3, 20 + 2 * 16384), 1);
    }

    #[test]
    fn multiqueue_levels_by_log_of_chunk_writes() {
        let mut m = MultiQueue::new(5);
        m.init(&geo(4096, 16));
        let levels: Vec<u16> = (1..=60).map(|t| user(&mut m, (t * 13) % 256, t)).collect();
        assert_eq!(levels[0], 0);
        assert_eq!(levels[2], 1, "3 writes: ln 3 = 1.1");
        assert_eq!(levels[7], 2, "8 writes: ln 8 = 2.08");
        assert_eq!(levels[59], 3, "capped at classes - 2");
        assert_eq!(gc(&mut m, 1, 61, 0), 4);
    }

    #[test]
    fn warcip_clusters_by_rewrite_interval() {
        let mut w = Warcip::new(4);
        w.init(&geo(1000, 4));
        // All centers start at 0; the first write (ui 0) goes to the last cluster (ties: later).
        assert_eq!(user(&mut w, 1, 1), 3);
        assert_eq!(gc(&mut w, 1, 5, 3), 0, "GC writes: class 0");
        // Page 1 rewritten at t = 10: ui = 10 - 1 + penalty (5 - 1 = 4) = 13.
        user(&mut w, 1, 10);
        assert!(
            w.centers().iter().any(|&c| (c - 6.5).abs() < 1e-9),
            "{:?}",
            w.centers()
        );
    }

    #[test]
    fn fk_places_by_remaining_lifespan() {
        let mut f = FkOracle::new(4);
        f.init(&geo(100, 10));
        let mut c = ctx(1);
        c.next_write_in = 25;
        f.on_user_write(5, &c);
        assert_eq!(f.classify(false, 5, &c), 2, "25 / 10");
        assert_eq!(f.classify(true, 5, &ctx(20)), 0, "6 left at t = 20");
        c.next_write_in = NEVER;
        f.on_user_write(6, &c);
        assert_eq!(
            f.classify(false, 6, &c),
            3,
            "never overwritten: the last class"
        );
    }

    #[test]
    fn kmeans_fk_separates_short_and_long_lives() {
        let mut k = KMeansFk::new(2);
        k.init(&geo(50, 10));
        for t in 0..50u64 {
            let mut c = ctx(t + 1);
            c.next_write_in = if t % 2 == 0 { 3 } else { 5000 };
            k.on_user_write(t, &c);
        }
        assert_eq!(k.centroids().len(), 2, "fitted after logical_pages writes");
        let c = ctx(51);
        let short = {
            let mut cc = c;
            cc.next_write_in = 4;
            k.on_user_write(0, &cc);
            k.classify(false, 0, &cc)
        };
        let long = {
            let mut cc = c;
            cc.next_write_in = 4000;
            k.on_user_write(1, &cc);
            k.classify(false, 1, &cc)
        };
        assert_eq!((short, long), (0, 1));
    }

    #[test]
    fn midas_chain_and_hot_filter() {
        let mut m = MiDas::new();
        m.init(&Geometry {
            logical_pages: 1000,
            unit_pages: 16,
            units: 100,
            gc_in_order: false,
        });
        assert_eq!(user(&mut m, 5, 1), 1, "cold by default: group 1");
        // Three quick rewrites while the old copy sits in open group-1 units: counter reaches 3.
        for t in 2..5 {
            m.on_invalidate(
                5,
                &UnitInfo {
                    sealed: false,
                    ..unit(1, 0)
                },
                &ctx(t),
            );
        }
        assert_eq!(user(&mut m, 5, 5), 0, "hot");
        assert_eq!(gc(&mut m, 5, 6, 0), 1, "HOT victims go to group 1");
        assert_eq!(
            gc(&mut m, 9, 6, 1),
            2,
            "group 1 -> 2 (the last of 2 groups)"
        );
        assert_eq!(gc(&mut m, 9, 6, 2), 2, "the last group loops");
        let (groups, sizes) = m.configuration();
        assert_eq!((groups, sizes.len()), (2, 2));
    }
}
