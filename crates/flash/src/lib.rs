//! A page-mapped FTL model of an SSD, fast enough to simulate many drive writes per second.
//!
//! - Mapping: `l2p[lba] = ppn + 1` (0 = unmapped) and `p2l[ppn] = lba`. A physical page is valid
//!   iff `l2p[p2l[ppn]] == ppn + 1`, so an overwrite touches one random cache line only; GC
//!   checks validity while it scans the victim. Memory: 4 B per logical page + 4 B per physical
//!   page (the reverse map, FAR's GC-move counts packed in its spare bits: `reverse.rs`) + a
//!   few dozen bytes per unit + the placement scheme's per-page state.
//! - Units (superblocks, erase blocks or zones), valid counts, the free list, victim selection
//!   and placement classes live in [`nowa_logspace`], shared with the engine's zone GC.
//! - Placement: without a scheme, each host stream has its own open unit (multi-stream / FDP
//!   handles) and GC copies go where [`GcFrontier`] says; with a [`PlacementKind`] every write
//!   is classified by the scheme (driven by [`nowa_logspace::Placer`], the engine's driver)
//!   and goes to its class's open unit.
//! - GC triggers ([`GcTrigger`]): a free-unit watermark (a fixed-capacity SSD) or SepBIT's
//!   garbage-proportion threshold (a log that grows until GP exceeds it); `k` victims per round.
//! - The SSD-iq reference's GC for its 2R policies: victims compacted into each other, partly
//!   filled ones handed back to the host writer ([`PolicyKind::compacts_victims`]).
//! - Optional LRU write buffer that absorbs rewrites (ssd-iq.md 4.3).
//! - Zoned mode: units are zones, writes must hit the write pointer, the host resets zones.
//! - Counters like an OCP log page: host pages, media pages, GC copies, erases, victim valid
//!   ratio histogram; per-class statistics; FAR (the share of GC-moved pages never overwritten
//!   again).

mod buffer;
mod check;
mod compact;
mod config;
mod gc;
mod live;
pub mod parallel;
mod prefetch;
mod reverse;
mod write;
mod zoned;

pub use config::{
    ConfigError, FtlConfig, GcFrontier, GcFrontierParseError, GcTrigger, GcUnit, Layout, Mode,
    PAGE_SIZE,
};
pub use nowa_logspace::{
    lambert_waf, ClassRow, ClassStats, PlacementError, PlacementKind, PolicyKind, PolicyParseError,
    VictimHistogram, NEVER,
};

use buffer::WriteBuffer;
use compact::Compact;
use nowa_logspace::{Geometry, Placement, Placer, Space, SpaceError};
use serde::Serialize;

/// Errors of the FTL model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FlashError {
    /// The configuration cannot run.
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    /// An LBA beyond the logical capacity.
    #[error("LBA {lba} out of range (device has {logical} pages)")]
    LbaOutOfRange {
        /// The LBA.
        lba: u64,
        /// Logical pages.
        logical: u64,
    },
    /// A stream the device does not have.
    #[error("stream {stream} out of range (device has {streams} streams)")]
    BadStream {
        /// The stream.
        stream: u16,
        /// Streams configured.
        streams: u16,
    },
    /// A zoned write off the write pointer.
    #[error("zone {zone}: write at page {got} but the write pointer is at {expected}")]
    ZoneViolation {
        /// The zone.
        zone: u64,
        /// The write pointer.
        expected: u64,
        /// Where the write went.
        got: u64,
    },
    /// Too many open zones.
    #[error("zone {zone}: would exceed the limit of {max} open zones")]
    TooManyOpenZones {
        /// The zone.
        zone: u64,
        /// The limit.
        max: u32,
    },
    /// An operation the mode does not have.
    #[error("operation not supported in this mode: {0}")]
    Unsupported(&'static str),
    /// No reclaimable space.
    #[error("device full: GC found no unit with reclaimable space")]
    DeviceFull,
    /// The placement scheme needs each write's next-overwrite distance.
    #[error("placement {placement} needs future knowledge: write with write_hinted / write_batch_hinted")]
    NeedsFuture {
        /// The scheme.
        placement: String,
    },
    /// Hints and pages of a batch differ in length.
    #[error("{pages} pages but {hints} next-overwrite hints")]
    HintCount {
        /// Pages in the batch.
        pages: usize,
        /// Hints given.
        hints: usize,
    },
}

impl From<SpaceError> for FlashError {
    fn from(_: SpaceError) -> Self {
        FlashError::DeviceFull
    }
}

/// Counters in pages, as an OCP SMART / extended log page would report them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Pages the host asked to write.
    pub host_pages: u64,
    /// Pages programmed on flash: host programs + GC copies.
    pub media_pages: u64,
    /// Pages relocated by GC.
    pub gc_pages: u64,
    /// Host writes absorbed by the write buffer (never reached flash).
    pub buffer_absorbed: u64,
    /// Pages trimmed (mapped ones only).
    pub trimmed_pages: u64,
    /// Units erased.
    pub erases: u64,
    /// GC rounds.
    pub gc_rounds: u64,
}

impl Counters {
    /// Write amplification = media / host (1.0 before any write): [`nowa_units::waf`].
    #[must_use]
    pub fn waf(&self) -> f64 {
        nowa_units::waf(self.media_pages, self.host_pages).unwrap_or(1.0)
    }
    /// Counters accumulated since `earlier`.
    #[must_use]
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            host_pages: self.host_pages - earlier.host_pages,
            media_pages: self.media_pages - earlier.media_pages,
            gc_pages: self.gc_pages - earlier.gc_pages,
            buffer_absorbed: self.buffer_absorbed - earlier.buffer_absorbed,
            trimmed_pages: self.trimmed_pages - earlier.trimmed_pages,
            erases: self.erases - earlier.erases,
            gc_rounds: self.gc_rounds - earlier.gc_rounds,
        }
    }
}

/// FAR: how many GC moves were wasted on data that is never overwritten again (frozen data,
/// SepFrozen's "Frozen page Amplification Rate" = frozen / all migrated).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Far {
    /// GC moves since the counts were last reset.
    pub moves: u64,
    /// Of those, moves of data still valid now (never overwritten after the move).
    pub frozen_moves: u64,
    /// `frozen_moves / moves` (0 without moves).
    pub far: f64,
}

pub(crate) const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Frontier {
    pub(crate) unit: u32,
    pub(crate) wp: u32,
}

/// Per-zone host state in zoned mode.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Zone {
    pub(crate) unit: u32,
    pub(crate) wp: u32,
}

/// The FTL model.
pub struct Ftl {
    cfg: FtlConfig,
    layout: Layout,
    unit_pages: u32,
    /// log2(unit_pages) when it is a power of two, to avoid a division per write.
    unit_shift: Option<u32>,
    l2p: Vec<u32>,
    /// The reverse map, with each page's GC moves since its last user write (FAR) packed in.
    p2l: reverse::Reverse,
    space: Space,
    frontiers: Vec<Frontier>,
    in_gc: bool,
    buffer: Option<WriteBuffer>,
    zones: Vec<Zone>,
    open_zones: u32,
    c: Counters,
    /// Host pages programmed to flash (host writes minus what the buffer absorbed or holds).
    host_programs: u64,
    /// Buffered pages dropped by a trim before reaching flash.
    buffer_trimmed: u64,
    /// No placement scheme and no garbage-proportion trigger: the fast path.
    plain: bool,
    /// The placement scheme, driven through logspace's `Placer` in the same call order as
    /// the engine's zone writer (it keeps the mapped-LBA count its context needs).
    placer: Option<Placer>,
    /// The garbage-proportion trigger's threshold.
    gp: Option<f64>,
    compact: Option<Compact>,
    /// GC moves counted when FAR counts were last reset.
    far_base: u64,
    victims: Vec<u32>,
    /// The valid pages of the victim the placed GC is moving (kept to reuse its buffer).
    moving: Vec<u32>,
}

impl Ftl {
    /// A fresh device: every page unmapped, every unit free.
    ///
    /// # Errors
    /// [`FlashError::Config`] when the configuration cannot run.
    ///
    /// # Panics
    /// If the placement scheme's class count disagrees with the frontiers (a bug).
    pub fn new(cfg: FtlConfig) -> Result<Ftl, FlashError> {
        let layout = cfg.layout()?;
        let unit_pages = layout.unit_pages;
        assert_tables_fit(&layout);
        let nfront = frontier_count(&cfg, &layout);
        let zoned = matches!(cfg.mode, Mode::Zoned { .. });
        let buffer = (cfg.write_buffer_pages > 0).then(|| {
            WriteBuffer::new(usize::try_from(cfg.write_buffer_pages).unwrap_or(usize::MAX))
        });
        // vec![0; n] comes from calloc: untouched pages cost nothing until written. The tables
        // are hit at random, so ask for huge pages before the first touch (fewer TLB misses).
        let mut l2p = vec![0u32; to_usize(layout.logical_pages)];
        nowa_logspace::hugepage::advise(&mut l2p);
        let p2l = reverse::Reverse::new(
            layout.physical_pages,
            layout.logical_pages,
            unit_pages,
            cfg.track_far,
        );
        let placer = build_placer(&cfg, &layout);
        assert!(
            placer
                .as_ref()
                .is_none_or(|p| usize::from(p.classes()) == nfront),
            "one frontier per placement class"
        );
        let mut policy = cfg.policy.build(cfg.seed);
        if placer
            .as_ref()
            .is_some_and(|p| p.placement().chooses_victims())
        {
            // Never asked: keep its name, not its per-overwrite bookkeeping.
            policy = Box::new(nowa_logspace::Dormant::new(&*policy));
        }
        let mut space = Space::new(layout.units, unit_pages, policy);
        let gp = gp_trigger(&cfg, &mut space);
        Ok(Ftl {
            unit_shift: unit_pages
                .is_power_of_two()
                .then(|| unit_pages.trailing_zeros()),
            unit_pages,
            l2p,
            p2l,
            space,
            frontiers: vec![Frontier { unit: NONE, wp: 0 }; nfront],
            in_gc: false,
            buffer,
            zones: if zoned {
                vec![Zone { unit: NONE, wp: 0 }; layout.units as usize]
            } else {
                Vec::new()
            },
            open_zones: 0,
            c: Counters::default(),
            host_programs: 0,
            buffer_trimmed: 0,
            plain: cfg.placement.is_none() && gp.is_none(),
            placer,
            gp,
            compact: cfg.policy.compacts_victims().then(Compact::default),
            far_base: 0,
            victims: Vec::new(),
            moving: Vec::new(),
            layout,
            cfg,
        })
    }

    /// Replace the placement scheme built from [`FtlConfig::placement`] by `place` (a scheme
    /// that needs state the configuration cannot name, e.g. SepFrozen's model). Call before
    /// the first write; `place` must have as many classes as the configured scheme.
    ///
    /// # Panics
    /// If the device was written, has no placement scheme, or the class counts differ.
    pub fn set_placement(&mut self, place: Box<dyn Placement>) {
        assert_eq!(self.c.host_pages, 0, "set_placement before the first write");
        assert!(
            self.placer.is_some(),
            "set_placement needs a configured scheme"
        );
        assert_eq!(
            usize::from(place.classes()),
            self.frontiers.len(),
            "one frontier per placement class"
        );
        let configured = self
            .placer
            .as_ref()
            .map(|p| p.placement().chooses_victims());
        assert_eq!(
            Some(place.chooses_victims()),
            configured,
            "the space's policy was built for the configured scheme's victim choice"
        );
        self.placer = Some(Placer::new(place, &geometry(&self.cfg, &self.layout)));
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &FtlConfig {
        &self.cfg
    }
    /// The resolved geometry.
    #[must_use]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// Logical pages.
    #[must_use]
    pub fn logical_pages(&self) -> u64 {
        self.layout.logical_pages
    }
    /// Counters since the device was created.
    #[must_use]
    pub fn counters(&self) -> Counters {
        let mut c = self.c;
        c.erases = self.space.total_erases();
        c
    }
    /// Valid ratios of every victim so far.
    #[must_use]
    pub fn victim_histogram(&self) -> &VictimHistogram {
        &self.space.victims
    }
    /// Erase count of every unit.
    #[must_use]
    pub fn erase_counts(&self) -> &[u32] {
        self.space.erase_counts()
    }
    /// Name of the victim policy.
    #[must_use]
    pub fn policy_name(&self) -> String {
        self.space.policy_name()
    }
    /// Name of the placement scheme ("streams" without one).
    #[must_use]
    pub fn placement_name(&self) -> String {
        self.placer
            .as_ref()
            .map_or_else(|| "streams".into(), |p| p.placement().name())
    }
    /// The placement scheme's own state, one line (empty without one).
    #[must_use]
    pub fn placement_report(&self) -> String {
        self.placer
            .as_ref()
            .map_or_else(String::new, Placer::report)
    }
    /// Bytes of memory the model holds: the mapping tables (FAR's move counts included), the
    /// unit metadata (~48 B per unit), the write buffer and the placement scheme's state.
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        let units = u64::from(self.layout.units);
        u64::try_from(self.l2p.capacity() * 4).unwrap_or(u64::MAX)
            + self.p2l.memory_bytes()
            + units * 48
            + self.buffer.as_ref().map_or(0, WriteBuffer::memory_bytes)
            + self.placer.as_ref().map_or(0, Placer::memory_bytes)
    }
    /// Mapped LBAs (the host's live data on flash, excluding the write buffer): O(1) with a
    /// placement scheme (which keeps the count), a scan of the mapping otherwise.
    #[must_use]
    pub fn live_pages(&self) -> u64 {
        match &self.placer {
            Some(p) => p.live(),
            None => self.mapped_pages(),
        }
    }

    #[inline]
    pub(crate) fn unit_of(&self, ppn: u32) -> u32 {
        debug_assert!(
            u64::from(ppn) < self.layout.physical_pages,
            "page {ppn} beyond the device"
        );
        match self.unit_shift {
            Some(s) => ppn >> s,
            None => ppn / self.unit_pages,
        }
    }

    #[inline]
    fn check_lba(&self, lba: u64) -> Result<(), FlashError> {
        if lba >= self.layout.logical_pages {
            return Err(FlashError::LbaOutOfRange {
                lba,
                logical: self.layout.logical_pages,
            });
        }
        Ok(())
    }

    #[inline]
    fn check_stream(&self, stream: u16) -> Result<(), FlashError> {
        if stream >= self.cfg.streams {
            return Err(FlashError::BadStream {
                stream,
                streams: self.cfg.streams,
            });
        }
        Ok(())
    }

    /// Erase `u`: its pages start over with no GC moves behind them (so a user write, which
    /// lands in an erased page, needs no store to reset the count).
    pub(crate) fn erase_unit(&mut self, u: u32) {
        debug_assert!(
            self.frontiers.iter().all(|f| f.unit != u),
            "erasing unit {u} that a frontier still writes"
        );
        self.space.erase(u);
        self.p2l.erase(u);
    }

    /// Seal `u` and tell the placement.
    pub(crate) fn seal_unit(&mut self, u: u32) {
        self.space.seal(u);
        if let Some(p) = self.placer.as_mut() {
            p.sealed(&self.space, u);
        }
    }

    /// Per-class statistics: GC and writes per class, valid pages and shares.
    #[must_use]
    pub fn class_stats(&self) -> Vec<ClassRow> {
        self.space.class_rows()
    }

    /// FAR since the last [`Ftl::reset_far`] (or creation): GC moves whose data is still valid
    /// now, over all GC moves. Exact; O(logical pages). All zero when
    /// [`FtlConfig::track_far`] is off.
    ///
    /// # Panics
    /// If the counts are inconsistent (more frozen moves than moves: a bug).
    #[must_use]
    pub fn far(&self) -> Far {
        if !self.cfg.track_far {
            return Far::default();
        }
        let moves = self.c.gc_pages - self.far_base;
        let frozen: u64 = self
            .l2p
            .iter()
            .filter(|&&p| p != 0)
            .map(|&p| u64::from(self.p2l.moves(p - 1)))
            .sum();
        assert!(
            frozen <= moves,
            "frozen moves {frozen} exceed GC moves {moves}"
        );
        Far {
            moves,
            frozen_moves: frozen,
            far: if moves == 0 {
                0.0
            } else {
                config::as_f64(frozen) / config::as_f64(moves)
            },
        }
    }

    /// Start counting FAR afresh (e.g. at the start of a measured phase). O(physical pages).
    pub fn reset_far(&mut self) {
        self.p2l.reset_counts();
        self.far_base = self.c.gc_pages;
    }

    /// Pages written to the open frontiers' units.
    pub(crate) fn open_pages(&self) -> u64 {
        self.frontiers
            .iter()
            .filter(|f| f.unit != NONE)
            .map(|f| u64::from(f.wp))
            .sum()
    }

    /// Pages written to units not yet erased over live pages: the log's own alpha (the
    /// garbage-proportion trigger sizes the log by it).
    #[must_use]
    pub fn log_alpha(&self) -> f64 {
        let (sealed, _) = self.space.sealed();
        let written = u64::from(sealed) * u64::from(self.unit_pages) + self.open_pages();
        config::as_f64(written) / config::as_f64(self.live_pages().max(1))
    }
}

/// The garbage-proportion threshold, if that trigger is on; it also restricts victims to units
/// with GP >= the threshold.
fn gp_trigger(cfg: &FtlConfig, space: &mut Space) -> Option<f64> {
    let GcTrigger::GarbageProportion(t) = cfg.gc_trigger else {
        return None;
    };
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a fraction of a u32 capacity"
    )]
    let max = ((1.0 - t) * f64::from(space.unit_capacity())).floor() as u32;
    space.set_max_victim_valid(max);
    Some(t)
}

/// The tables store `ppn + 1` and LBAs in u32 and cut physical pages into whole units.
fn assert_tables_fit(layout: &Layout) {
    assert!(
        layout.physical_pages < u64::from(u32::MAX),
        "{} physical pages do not fit the 32-bit mapping",
        layout.physical_pages
    );
    assert_eq!(
        u64::from(layout.units) * u64::from(layout.unit_pages),
        layout.physical_pages,
        "physical pages are whole units"
    );
    assert!(
        layout.logical_pages <= layout.physical_pages,
        "more logical pages than physical"
    );
}

/// Open frontiers: one per placement class, or per stream plus the GC frontiers.
fn frontier_count(cfg: &FtlConfig, layout: &Layout) -> usize {
    let streams = usize::from(cfg.streams);
    match (cfg.placement, layout.gc_frontier) {
        (Some(p), _) => usize::from(p.build().classes()),
        (None, _) if cfg.policy.compacts_victims() => 1,
        (None, GcFrontier::Separate) => streams + 1,
        (None, GcFrontier::PerStream) => streams * 2,
        (None, _) => streams,
    }
}

/// What a placement scheme of this device is initialized for. GC is in order (the placed
/// GC appends each rewrite right after classifying it, a frontier fills one unit at a time,
/// `make_room` seals before it opens, overwrites and trims report the old unit) unless a
/// compacting policy gathers victims or the device is zoned.
fn geometry(cfg: &FtlConfig, layout: &Layout) -> Geometry {
    Geometry {
        logical_pages: layout.logical_pages,
        unit_pages: layout.unit_pages,
        units: layout.units,
        gc_in_order: !cfg.policy.compacts_victims() && !matches!(cfg.mode, Mode::Zoned { .. }),
    }
}

/// The placement scheme, bound to the device.
fn build_placer(cfg: &FtlConfig, layout: &Layout) -> Option<Placer> {
    Some(Placer::new(cfg.placement?.build(), &geometry(cfg, layout)))
}

/// A page count as an index.
#[inline]
pub(crate) fn to_usize(x: u64) -> usize {
    usize::try_from(x).expect("page counts fit the address space")
}

#[cfg(test)]
mod tests;
