//! Replay of a write log through the placement simulator (the FTL model of `nowa-flash`, the
//! one placement/victim mechanism of `nowa-logspace`), so every scheme sees exactly the same
//! user writes.
//!
//! - [`ReplayLog::load`]: one pass over the log. User writes and frees are kept in order
//!   (page ids made dense in first-write order); the original run's GC moves are counted and
//!   dropped (the simulator does its own GC). Each user write keeps its header records (for
//!   SepFrozen's model), its label (never invalidated again) and its next-invalidation
//!   distance in user writes (for the FK oracles).
//! - [`run`]: one scheme on a log-structured space of `unit_pages` zones sized by the
//!   garbage-proportion trigger (SepBIT's simulator and SepFrozen's paper: GC runs while the
//!   garbage of sealed zones exceeds `gp` of everything written; only zones with GP >= `gp`
//!   are victims), cost-benefit (SepBIT's formula) or greedy victims. The clock is the user
//!   write count (the paper's DB-written-page timer).
//! - Results: WAF = (user + GC writes) / user writes; FAR = frozen moves / GC moves, exact
//!   (the FTL counts, per live page, the GC moves since its last user write); per-class
//!   statistics; the victims' mean garbage proportion; the model's CPU time per victim.

use crate::error::FrozenError;
use crate::hotness::PageHotness;
use crate::metrics::as_f64;
use crate::model::Model;
use crate::online::OnlineConfig;
use crate::oracle::{
    Clock, CostHandle, InferenceCost, ModelOracle, OnlineOracle, TruthOracle, UserWrites,
};
use crate::writelog::{LogReader, LogSummary, WriteKind, WriteRecord};
use nowa_flash::{ClassRow, Ftl, FtlConfig, GcTrigger, GcUnit, PlacementKind, PolicyKind};
use nowa_logspace::{FrozenOracle, Placement, SepFrozen, NEVER};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// One replayed event: a user write or a free of a dense page id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Dense page id.
    pub page: u32,
    /// A free (TRIM) rather than a user write.
    pub free: bool,
}

/// A write log ready to replay (see the module docs).
#[derive(Debug, Default)]
pub struct ReplayLog {
    /// User writes and frees, in order.
    pub events: Vec<Event>,
    /// The user writes with their records and labels.
    pub writes: Arc<UserWrites>,
    /// Per user write: user writes until the version is invalidated, [`NEVER`] if it is not.
    pub next_write_in: Vec<u64>,
    /// Distinct pages.
    pub logical_pages: u64,
    /// The log's own counts.
    pub summary: LogSummary,
    /// GC moves of the original run that were frozen (its FAR's numerator).
    pub original_gc_frozen: u64,
}

/// Builds a [`ReplayLog`] record by record.
#[derive(Default)]
struct Builder {
    log: ReplayLog,
    writes: UserWrites,
    dense: HashMap<u64, u32>,
    /// Index of each dense page's live user write (`u32::MAX`: none).
    live: Vec<u32>,
    /// Original GC moves: the user write each moved (to count the frozen ones at the end).
    gc_of: Vec<u32>,
}

impl Builder {
    fn add(&mut self, rec: &WriteRecord) {
        match rec.kind {
            WriteKind::User => self.user(
                rec.page,
                PageHotness {
                    current: rec.hr_current,
                    last: rec.hr_last,
                },
            ),
            WriteKind::Free => self.free(rec.page),
            _ => self.gc(rec.page),
        }
    }

    fn end_version(&mut self, d: usize, now: u64) {
        let prev = self.live[d];
        if prev == u32::MAX {
            return;
        }
        let p = prev as usize;
        let written = u64::from(prev) + 1;
        assert!(now >= written, "a version ends after it was written");
        self.log.next_write_in[p] = now - written;
        self.writes.frozen[p] = false;
        self.live[d] = u32::MAX;
    }

    fn user(&mut self, page: u64, hr: PageHotness) {
        let next_id = u32::try_from(self.dense.len()).expect("fewer than 2^32 pages");
        let id = *self.dense.entry(page).or_insert(next_id);
        let d = id as usize;
        assert!(d <= self.live.len(), "dense ids are handed out in order");
        if d == self.live.len() {
            self.live.push(u32::MAX);
        }
        let u = u32::try_from(self.writes.len()).expect("fewer than 2^32 user writes");
        // The new write is user write u + 1 on the clock: the old version lived until then.
        self.end_version(d, u64::from(u) + 1);
        self.writes.page.push(id);
        self.writes.hr.push(hr);
        self.writes.frozen.push(true);
        self.log.next_write_in.push(NEVER);
        self.live[d] = u;
        self.log.events.push(Event {
            page: id,
            free: false,
        });
    }

    fn free(&mut self, page: u64) {
        let Some(&id) = self.dense.get(&page) else {
            return;
        };
        let now = self.writes.len() as u64;
        if self.live[id as usize] == u32::MAX {
            return;
        }
        self.end_version(id as usize, now);
        self.log.events.push(Event {
            page: id,
            free: true,
        });
    }

    fn gc(&mut self, page: u64) {
        if let Some(&id) = self.dense.get(&page) {
            let l = self.live[id as usize];
            if l != u32::MAX {
                self.gc_of.push(l);
            }
        }
    }

    fn finish(mut self, summary: LogSummary) -> ReplayLog {
        self.log.original_gc_frozen = self
            .gc_of
            .iter()
            .filter(|&&u| self.writes.frozen[u as usize])
            .count() as u64;
        assert_eq!(
            self.dense.len(),
            self.live.len(),
            "one live slot per dense page"
        );
        assert_eq!(
            self.writes.page.len(),
            self.writes.hr.len(),
            "one record pair per write"
        );
        assert_eq!(
            self.writes.page.len(),
            self.writes.frozen.len(),
            "one label per write"
        );
        self.log.logical_pages = self.dense.len() as u64;
        self.log.summary = summary;
        assert_eq!(self.writes.len(), self.log.next_write_in.len());
        self.log.writes = Arc::new(self.writes);
        self.log
    }
}

impl ReplayLog {
    /// Read a write log (see the module docs).
    ///
    /// # Errors
    /// The reader's ([`FrozenError`]): I/O, damage, truncation.
    pub fn load(path: &Path) -> Result<Self, FrozenError> {
        let mut r = LogReader::open(path)?;
        let mut b = Builder::default();
        while let Some(rec) = r.next_record()? {
            b.add(&rec);
        }
        Ok(b.finish(r.summary()))
    }

    /// The same from records in memory (tests, converted traces).
    ///
    /// # Panics
    /// If a user record were lost (a bug).
    #[must_use]
    pub fn from_records(records: &[WriteRecord]) -> Self {
        let mut b = Builder::default();
        let mut s = LogSummary::default();
        for rec in records {
            b.add(rec);
            s.records += 1;
            match rec.kind {
                WriteKind::User => s.user += 1,
                WriteKind::Free => s.free += 1,
                _ => s.gc += 1,
            }
        }
        s.first_timer = records.first().map_or(0, |r| r.timer);
        s.last_timer = records.last().map_or(0, |r| r.timer);
        let log = b.finish(s);
        assert_eq!(log.user_writes(), s.user, "every user record kept");
        log
    }

    /// User writes in the log.
    #[must_use]
    pub fn user_writes(&self) -> u64 {
        self.writes.len() as u64
    }
    /// Share of user-written versions never invalidated (frozen).
    ///
    /// # Panics
    /// If the labels outnumber the writes (a bug).
    #[must_use]
    pub fn frozen_share(&self) -> f64 {
        let f = self.writes.frozen.iter().filter(|&&f| f).count() as u64;
        assert!(f <= self.user_writes(), "frozen versions are user writes");
        as_f64(f) / as_f64(self.user_writes().max(1))
    }
}

/// Which oracle a SepFrozen scheme consults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum OracleKind {
    /// The trained model (`--model`).
    Model,
    /// The exact label (a perfect model).
    Truth,
    /// Retrained during the run.
    Online,
}

/// A scheme of a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Scheme {
    /// A scheme of `nowa-logspace` by name.
    Plain(PlacementKind),
    /// SepFrozenBIT (`dac` false) or SepFrozenDAC with `classes` classes.
    Frozen {
        /// SepFrozenDAC rather than SepFrozenBIT.
        dac: bool,
        /// Classes (6 in the paper).
        classes: u16,
        /// The oracle.
        oracle: OracleKind,
    },
}

impl std::str::FromStr for Scheme {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        let (name, classes) = match t.split_once(':') {
            Some((n, c)) => (
                n,
                c.parse::<u16>()
                    .map_err(|_| format!("bad class count in '{s}'"))?,
            ),
            None => (t.as_str(), 6),
        };
        let Some(rest) = name.strip_prefix("sepfrozen-") else {
            return t
                .parse::<PlacementKind>()
                .map(Scheme::Plain)
                .map_err(|e| e.to_string());
        };
        let (base, oracle) = match rest.split_once('-') {
            None => (rest, OracleKind::Model),
            Some((b, "truth")) => (b, OracleKind::Truth),
            Some((b, "online")) => (b, OracleKind::Online),
            Some(_) => {
                return Err(format!(
                    "unknown scheme '{s}' (sepfrozen-bit|dac[-truth|-online][:N])"
                ))
            }
        };
        let dac = match base {
            "bit" if (4..=16).contains(&classes) => false,
            "dac" if (2..=16).contains(&classes) => true,
            _ => {
                return Err(format!(
                    "unknown scheme '{s}' (sepfrozen-bit:4..16 or sepfrozen-dac:2..16)"
                ))
            }
        };
        Ok(Scheme::Frozen {
            dac,
            classes,
            oracle,
        })
    }
}

impl std::fmt::Display for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scheme::Plain(k) => write!(f, "{k}"),
            Scheme::Frozen {
                dac,
                classes,
                oracle,
            } => {
                let base = if *dac { "dac" } else { "bit" };
                let o = match oracle {
                    OracleKind::Model => "",
                    OracleKind::Truth => "-truth",
                    OracleKind::Online => "-online",
                };
                write!(f, "sepfrozen-{base}{o}:{classes}")
            }
        }
    }
}

impl Scheme {
    /// The paper's seven schemes plus the two FK oracles (Figures 3, 11, 12).
    #[must_use]
    pub fn paper() -> Vec<Scheme> {
        let f = |dac| Scheme::Frozen {
            dac,
            classes: 6,
            oracle: OracleKind::Model,
        };
        vec![
            Scheme::Plain(PlacementKind::NoSep),
            Scheme::Plain(PlacementKind::SepGc),
            Scheme::Plain(PlacementKind::Warcip(6)),
            Scheme::Plain(PlacementKind::Dac(6)),
            Scheme::Plain(PlacementKind::DacPaper(6)),
            f(true),
            Scheme::Plain(PlacementKind::SepBit(6)),
            f(false),
            Scheme::Plain(PlacementKind::Fk(6)),
            Scheme::Plain(PlacementKind::FkKmeans(6)),
        ]
    }
    /// Whether the scheme needs a trained model.
    #[must_use]
    pub fn needs_model(&self) -> bool {
        matches!(
            self,
            Scheme::Frozen {
                oracle: OracleKind::Model,
                ..
            }
        )
    }
}

/// Settings of a replay.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayConfig {
    /// Zone (GC unit) size in pages.
    pub unit_pages: u32,
    /// The garbage-proportion threshold (0.15 in the paper).
    pub gp: f64,
    /// Victim selection (`cb-sepbit` = the paper's cost-benefit, or `greedy`).
    pub policy: PolicyKind,
    /// Seed (randomized policies).
    pub seed: u64,
    /// The online oracle's trainer.
    #[serde(skip)]
    pub online: OnlineConfig,
    /// The online oracle's horizon in user writes (None: the log's distinct pages).
    pub horizon: Option<u64>,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        ReplayConfig {
            unit_pages: 1024,
            gp: 0.15,
            policy: PolicyKind::CostBenefitSepBit,
            seed: 42,
            online: OnlineConfig::default(),
            horizon: None,
        }
    }
}

/// One scheme's result.
#[derive(Debug, Clone, Serialize)]
pub struct SchemeRun {
    /// The scheme.
    pub scheme: String,
    /// The placement's own name.
    pub placement: String,
    /// User writes replayed.
    pub user_pages: u64,
    /// GC moves.
    pub gc_pages: u64,
    /// (user + GC) / user.
    pub waf: f64,
    /// GC moves of versions never invalidated again.
    pub frozen_moves: u64,
    /// frozen moves / GC moves.
    pub far: f64,
    /// Victims collected.
    pub victims: u64,
    /// Mean garbage proportion of the victims (1 - valid ratio).
    pub victim_gp: f64,
    /// Per-class statistics.
    pub classes: Vec<ClassRow>,
    /// The placement's report line.
    pub report: String,
    /// The oracle's inference cost (SepFrozen with a model or online).
    pub inference: Option<InferenceCost>,
    /// CPU seconds of the whole replay (the caller's clock).
    pub cpu_secs: f64,
}

fn ftl_config(log: &ReplayLog, kind: PlacementKind, cfg: &ReplayConfig) -> FtlConfig {
    FtlConfig {
        logical_pages: log.logical_pages.max(1),
        pages_per_block: cfg.unit_pages,
        blocks_per_superblock: 1,
        gc_unit: GcUnit::Superblock,
        policy: cfg.policy.clone(),
        placement: Some(kind),
        gc_trigger: GcTrigger::GarbageProportion(cfg.gp),
        track_far: true,
        seed: cfg.seed,
        ..FtlConfig::default()
    }
}

/// The placement of a SepFrozen scheme and its cost handle.
fn frozen_placement(
    log: &ReplayLog,
    dac: bool,
    classes: u16,
    oracle: OracleKind,
    model: Option<&Model>,
    cfg: &ReplayConfig,
    clock: Clock,
) -> Result<(Box<dyn Placement>, Option<CostHandle>), FrozenError> {
    let w = log.writes.clone();
    let (o, cost): (Box<dyn FrozenOracle>, Option<CostHandle>) = match oracle {
        OracleKind::Truth => (Box::new(TruthOracle::new(w)), None),
        OracleKind::Model => {
            let m = model.ok_or(FrozenError::NeedsModel)?.clone();
            let (o, c) = ModelOracle::new(m, w, clock);
            (Box::new(o), Some(c))
        }
        OracleKind::Online => {
            let h = cfg.horizon.unwrap_or(log.logical_pages).max(1);
            let (o, c) = OnlineOracle::new(cfg.online.clone(), h, w, clock);
            (Box::new(o), Some(c))
        }
    };
    let p: Box<dyn Placement> = if dac {
        Box::new(SepFrozen::dac(classes, o))
    } else {
        Box::new(SepFrozen::bit(classes, o))
    };
    Ok((p, cost))
}

/// The FTL of `scheme`, its SepFrozen placement installed.
fn build(
    log: &ReplayLog,
    scheme: Scheme,
    model: Option<&Model>,
    cfg: &ReplayConfig,
    clock: Clock,
) -> Result<(Ftl, Option<CostHandle>), FrozenError> {
    let kind = match scheme {
        Scheme::Plain(k) => k,
        Scheme::Frozen {
            dac: true, classes, ..
        } => PlacementKind::DacPaper(classes),
        Scheme::Frozen { classes, .. } => PlacementKind::SepBit(classes),
    };
    let flash = |source| FrozenError::Replay {
        scheme: scheme.to_string(),
        source,
    };
    let mut ftl = Ftl::new(ftl_config(log, kind, cfg)).map_err(flash)?;
    let mut cost = None;
    if let Scheme::Frozen {
        dac,
        classes,
        oracle,
    } = scheme
    {
        let (p, c) = frozen_placement(log, dac, classes, oracle, model, cfg, clock)?;
        ftl.set_placement(p);
        cost = c;
    }
    Ok((ftl, cost))
}

/// Replay `log` with `scheme` (see the module docs). `model` is needed by SepFrozen's
/// model variants; `clock` times the replay and the model's batches.
///
/// # Errors
/// [`FrozenError::NeedsModel`], [`FrozenError::Replay`] (the FTL model refused: a full log).
///
/// # Panics
/// If the FTL did not see every user write (a bug).
pub fn run(
    log: &ReplayLog,
    scheme: Scheme,
    model: Option<&Model>,
    cfg: &ReplayConfig,
    clock: Clock,
) -> Result<SchemeRun, FrozenError> {
    let run = run_until(log, scheme, model, cfg, clock, &|| false)?;
    Ok(run.expect("a replay never asked to stop replays the whole log"))
}

/// Events between two polls of a replay's `stop` (a few milliseconds of replay).
const STOP_POLL_EVENTS: usize = 1 << 16;

/// [`run`], asking `stop` every [`STOP_POLL_EVENTS`] events (Ctrl-C): `None` when it said to
/// stop (a scheme replayed over part of the log is not comparable with the others: no result).
///
/// # Errors
/// As [`run`].
///
/// # Panics
/// As [`run`].
pub fn run_until(
    log: &ReplayLog,
    scheme: Scheme,
    model: Option<&Model>,
    cfg: &ReplayConfig,
    clock: Clock,
    stop: &dyn Fn() -> bool,
) -> Result<Option<SchemeRun>, FrozenError> {
    let t0 = clock();
    let (mut ftl, cost) = build(log, scheme, model, cfg, clock)?;
    if !feed(&mut ftl, log, scheme, stop)? {
        return Ok(None);
    }
    Ok(Some(finish(&ftl, log, scheme, cost, clock() - t0)))
}

/// Every event of the log into `ftl`; false when `stop` said to stop first.
fn feed(
    ftl: &mut Ftl,
    log: &ReplayLog,
    scheme: Scheme,
    stop: &dyn Fn() -> bool,
) -> Result<bool, FrozenError> {
    let future = matches!(scheme, Scheme::Plain(k) if k.needs_future());
    let flash = |source| FrozenError::Replay {
        scheme: scheme.to_string(),
        source,
    };
    let mut u = 0usize;
    for (i, e) in log.events.iter().enumerate() {
        if i % STOP_POLL_EVENTS == STOP_POLL_EVENTS - 1 && stop() {
            return Ok(false);
        }
        let page = u64::from(e.page);
        if e.free {
            ftl.trim(page, 1).map_err(flash)?;
            continue;
        }
        debug_assert_eq!(log.writes.page[u], e.page, "events and user writes in step");
        if future {
            ftl.write_hinted(page, 0, log.next_write_in[u])
                .map_err(flash)?;
        } else {
            ftl.write(page, 0).map_err(flash)?;
        }
        u += 1;
    }
    assert_eq!(u, log.writes.len(), "every user write replayed");
    Ok(true)
}

/// The result of a whole replay, its counters checked against the log.
fn finish(
    ftl: &Ftl,
    log: &ReplayLog,
    scheme: Scheme,
    cost: Option<CostHandle>,
    cpu_secs: f64,
) -> SchemeRun {
    let c = ftl.counters();
    assert_eq!(
        c.host_pages,
        log.user_writes(),
        "the FTL saw every user write"
    );
    assert_eq!(
        c.media_pages,
        c.host_pages + c.gc_pages,
        "media = user + GC writes"
    );
    let far = ftl.far();
    assert!(
        far.moves == c.gc_pages && far.frozen_moves <= far.moves,
        "FAR counts every move"
    );
    let vh = ftl.victim_histogram();
    SchemeRun {
        scheme: scheme.to_string(),
        placement: ftl.placement_name(),
        user_pages: c.host_pages,
        gc_pages: c.gc_pages,
        waf: c.waf(),
        frozen_moves: far.frozen_moves,
        far: far.far,
        victims: vh.count(),
        victim_gp: if vh.count() == 0 {
            0.0
        } else {
            1.0 - vh.mean_ratio()
        },
        classes: ftl.class_stats(),
        report: ftl.placement_report(),
        inference: cost.map(|c| *c.lock().expect("cost lock")),
        cpu_secs,
    }
}

/// One row per scheme and class (`class` empty on the scheme's total row).
///
/// # Errors
/// The CSV writer's.
pub fn write_csv(runs: &[SchemeRun], path: &Path) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record([
        "scheme",
        "class",
        "waf",
        "far",
        "user_writes",
        "gc_writes",
        "frozen_moves",
        "victims",
        "victim_gp",
        "infer_ms_per_256mib",
        "cpu_secs",
    ])?;
    for r in runs {
        let inf = r.inference.map_or(String::new(), |c| {
            format!("{:.4}", 1e3 * c.secs_per_256mib())
        });
        w.write_record([
            r.scheme.clone(),
            String::new(),
            format!("{:.4}", r.waf),
            format!("{:.4}", r.far),
            r.user_pages.to_string(),
            r.gc_pages.to_string(),
            r.frozen_moves.to_string(),
            r.victims.to_string(),
            format!("{:.4}", r.victim_gp),
            inf,
            format!("{:.3}", r.cpu_secs),
        ])?;
        for c in &r.classes {
            let st = &c.stats;
            w.write_record([
                r.scheme.clone(),
                c.class.to_string(),
                String::new(),
                String::new(),
                st.user_writes.to_string(),
                st.gc_writes.to_string(),
                String::new(),
                st.units_collected.to_string(),
                format!("{:.4}", st.mean_gp()),
                String::new(),
                String::new(),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}
