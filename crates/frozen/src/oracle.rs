//! Frozen-page oracles for SepFrozen placement ([`nowa_logspace::FrozenOracle`]).
//!
//! Every oracle follows the replayed user writes in order ([`UserWrites`]): at each one it
//! takes the hotness records the page's header would hold (`[HR_current, HR_last, older...]`,
//! up to [`MAX_TWL`] records per page, 64 bytes). At GC it judges the victim's valid pages in
//! one batch:
//!
//! - [`ModelOracle`]: a trained [`Model`] (`predict_into`), its CPU time per batch measured;
//! - [`TruthOracle`]: the exact label (this version is never invalidated): a perfect model,
//!   SepFrozen's upper bound;
//! - [`OnlineOracle`]: no offline model; versions are labeled by a horizon as the run goes
//!   ([`OutcomeTracker`]) and the model is refit every `retrain_every` samples
//!   ([`OnlineTrainer`]); until the first fit nothing is judged frozen.

use crate::features::{HrWindow, MAX_TWL};
use crate::hotness::PageHotness;
use crate::model::Model;
use crate::online::{OnlineConfig, OnlineTrainer, OutcomeTracker};
use nowa_logspace::{Ctx, FrozenOracle, Geometry};
use std::sync::{Arc, Mutex};

/// The user writes of a replay, in order: page (dense id), the page's header records after
/// the write, and whether this version is never invalidated (the label).
#[derive(Debug, Default)]
pub struct UserWrites {
    /// Dense page id of each user write.
    pub page: Vec<u32>,
    /// HR_current and HR_last of each user write.
    pub hr: Vec<PageHotness>,
    /// This version is never invalidated before the end (frozen).
    pub frozen: Vec<bool>,
}

impl UserWrites {
    /// User writes held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.page.len()
    }
    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.page.is_empty()
    }
}

/// Per-page state every oracle keeps: the header's records, fed by the user writes.
struct Headers {
    writes: Arc<UserWrites>,
    next: usize,
    window: Vec<HrWindow>,
    /// Index of each page's last user write (`u32::MAX`: none).
    last: Vec<u32>,
    /// The DB-written-page timer: the largest HR_current write time of the user writes so
    /// far, as the recording run's write log and the engine's oracle keep it. (The
    /// replay's `Ctx::now` counts the replayed user writes from 0: the same ticks, without
    /// the recording's offset, e.g. a bulk load before the log started.)
    now: u64,
}

impl Headers {
    fn new(writes: Arc<UserWrites>) -> Self {
        Headers {
            writes,
            next: 0,
            window: Vec::new(),
            last: Vec::new(),
            now: 0,
        }
    }
    fn init(&mut self, geo: &Geometry) {
        let n = usize::try_from(geo.logical_pages).expect("pages fit memory");
        let w = &self.writes;
        assert!(
            w.hr.len() == w.page.len() && w.frozen.len() == w.page.len(),
            "aligned writes"
        );
        self.window = vec![HrWindow::default(); n];
        self.last = vec![u32::MAX; n];
        self.next = 0;
        self.now = 0;
    }
    /// The next user write must be of `page`: shift its window.
    fn on_user_write(&mut self, page: u64) -> usize {
        let i = self.next;
        assert!(i < self.writes.len(), "more user writes than the log holds");
        let p = usize::try_from(page).expect("dense page ids");
        assert_eq!(
            u64::from(self.writes.page[i]),
            page,
            "user write {i} out of step with the log"
        );
        let hr = self.writes.hr[i];
        let old = self.window[p].0;
        let mut w = [hr.current, hr.last, old[1], old[2]];
        debug_assert_eq!(w.len(), MAX_TWL);
        if hr.last.is_none() {
            w[2] = crate::hotness::HotnessRecord::NONE;
            w[3] = crate::hotness::HotnessRecord::NONE;
        }
        self.window[p] = HrWindow(w, 0);
        self.now = self.now.max(hr.current.wt());
        self.last[p] = u32::try_from(i).expect("fewer than 2^32 user writes");
        self.next += 1;
        i
    }
    /// `page`'s window judged now (its age on the DB-written-page timer).
    fn window(&self, page: u64) -> HrWindow {
        self.window[usize::try_from(page).expect("dense page ids")].at(self.now)
    }
    fn frozen(&self, page: u64) -> bool {
        let l = self.last[usize::try_from(page).expect("dense page ids")];
        assert_ne!(l, u32::MAX, "GC moved page {page} that was never written");
        self.writes.frozen[l as usize]
    }
}

/// Inference cost at GC, shared with the caller (the oracle lives inside the FTL).
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct InferenceCost {
    /// Victim batches judged.
    pub batches: u64,
    /// Pages judged.
    pub pages: u64,
    /// Pages judged frozen.
    pub frozen: u64,
    /// CPU seconds in `predict` (this thread), window gathering included.
    pub cpu_secs: f64,
    /// The largest batch's CPU seconds.
    pub max_batch_secs: f64,
    /// Model refits (online oracle).
    pub retrains: u64,
    /// CPU seconds of the refits (not in `cpu_secs`).
    pub retrain_secs: f64,
}

impl InferenceCost {
    /// CPU seconds per 256 MiB of victim pages (65,536 pages of 4 KiB), the paper's unit.
    #[must_use]
    pub fn secs_per_256mib(&self) -> f64 {
        if self.pages == 0 {
            return 0.0;
        }
        self.cpu_secs / crate::metrics::as_f64(self.pages) * 65_536.0
    }
}

/// A handle on an oracle's [`InferenceCost`].
pub type CostHandle = Arc<Mutex<InferenceCost>>;

/// A CPU clock in seconds (the caller's, e.g. the thread CPU clock).
pub type Clock = fn() -> f64;

/// Add one judged batch to `cost`: `pages` pages, their verdicts `frozen`, `secs` CPU seconds
/// (every oracle over a [`Model`] reports through this, the engine's page-image oracle too).
///
/// # Panics
/// If there is not one verdict per page, `secs` is not a finite non-negative time, or the
/// lock was poisoned.
pub fn record(cost: &CostHandle, pages: usize, frozen: &[bool], secs: f64) {
    assert_eq!(frozen.len(), pages, "one verdict per page");
    assert!(secs >= 0.0 && secs.is_finite(), "a CPU time");
    let mut c = cost.lock().expect("cost lock");
    c.batches += 1;
    c.pages += pages as u64;
    c.frozen += frozen.iter().filter(|&&f| f).count() as u64;
    c.cpu_secs += secs;
    c.max_batch_secs = c.max_batch_secs.max(secs);
}

/// A trained model judging victims (see the module docs).
pub struct ModelOracle {
    model: Model,
    h: Headers,
    batch: Vec<HrWindow>,
    clock: Clock,
    cost: CostHandle,
}

impl ModelOracle {
    /// `model` over `writes`, timing batches with `clock`.
    #[must_use]
    pub fn new(model: Model, writes: Arc<UserWrites>, clock: Clock) -> (Self, CostHandle) {
        let cost = CostHandle::default();
        let o = ModelOracle {
            model,
            h: Headers::new(writes),
            batch: Vec::new(),
            clock,
            cost: cost.clone(),
        };
        (o, cost)
    }
}

impl FrozenOracle for ModelOracle {
    fn name(&self) -> String {
        format!(
            "{} twl {}",
            self.model.classifier.name(),
            self.model.twl.get()
        )
    }
    fn init(&mut self, geo: &Geometry) {
        self.h.init(geo);
    }
    fn on_user_write(&mut self, page: u64, _ctx: &Ctx) {
        self.h.on_user_write(page);
    }
    fn predict(&mut self, pages: &[u64], _ctx: &Ctx, out: &mut Vec<bool>) {
        let t0 = (self.clock)();
        self.batch.clear();
        self.batch.extend(pages.iter().map(|&p| self.h.window(p)));
        self.model.predict_into(&self.batch, out);
        let secs = (self.clock)() - t0;
        assert_eq!(out.len(), pages.len(), "one verdict per page");
        record(&self.cost, pages.len(), out, secs.max(0.0));
    }
}

/// The exact label: a perfect model (see the module docs).
pub struct TruthOracle {
    h: Headers,
}

impl TruthOracle {
    /// The labels of `writes`.
    #[must_use]
    pub fn new(writes: Arc<UserWrites>) -> Self {
        TruthOracle {
            h: Headers::new(writes),
        }
    }
}

impl FrozenOracle for TruthOracle {
    fn name(&self) -> String {
        "truth".into()
    }
    fn init(&mut self, geo: &Geometry) {
        self.h.init(geo);
    }
    fn on_user_write(&mut self, page: u64, _ctx: &Ctx) {
        self.h.on_user_write(page);
    }
    fn predict(&mut self, pages: &[u64], _ctx: &Ctx, out: &mut Vec<bool>) {
        out.clear();
        out.extend(pages.iter().map(|&p| self.h.frozen(p)));
        assert_eq!(out.len(), pages.len(), "one verdict per page");
    }
}

/// Retrained during the run from observed outcomes (see the module docs).
pub struct OnlineOracle {
    h: Headers,
    trainer: OnlineTrainer,
    outcomes: OutcomeTracker,
    batch: Vec<HrWindow>,
    clock: Clock,
    cost: CostHandle,
}

impl OnlineOracle {
    /// An online learner labeling versions alive `horizon` user writes as frozen.
    #[must_use]
    pub fn new(
        cfg: OnlineConfig,
        horizon: u64,
        writes: Arc<UserWrites>,
        clock: Clock,
    ) -> (Self, CostHandle) {
        let cost = CostHandle::default();
        let o = OnlineOracle {
            h: Headers::new(writes),
            trainer: OnlineTrainer::new(cfg),
            outcomes: OutcomeTracker::new(horizon),
            batch: Vec::new(),
            clock,
            cost: cost.clone(),
        };
        (o, cost)
    }

    fn observe(&mut self, w: HrWindow, frozen: bool) {
        let t0 = (self.clock)();
        // A diverged refit keeps the previous model: nothing to do here.
        if let Ok(true) = self.trainer.observe(w, frozen) {
            let mut c = self.cost.lock().expect("cost lock");
            c.retrains += 1;
            c.retrain_secs += ((self.clock)() - t0).max(0.0);
        }
    }
}

impl FrozenOracle for OnlineOracle {
    fn name(&self) -> String {
        "online sgd".into()
    }
    fn init(&mut self, geo: &Geometry) {
        self.h.init(geo);
    }
    fn on_user_write(&mut self, page: u64, ctx: &Ctx) {
        self.h.on_user_write(page);
        let mut labels = Vec::new();
        self.outcomes
            .write(page, self.h.window(page), ctx.now, |w, f| {
                labels.push((w, f))
            });
        for (w, f) in labels {
            self.observe(w, f);
        }
    }
    fn predict(&mut self, pages: &[u64], _ctx: &Ctx, out: &mut Vec<bool>) {
        let t0 = (self.clock)();
        out.clear();
        match self.trainer.model() {
            Some(m) => {
                self.batch.clear();
                self.batch.extend(pages.iter().map(|&p| self.h.window(p)));
                m.predict_into(&self.batch, out);
            }
            None => out.resize(pages.len(), false),
        }
        assert_eq!(out.len(), pages.len(), "one verdict per page");
        let secs = (self.clock)() - t0;
        record(&self.cost, pages.len(), out, secs.max(0.0));
    }
    fn report(&self) -> String {
        format!("online: {} refits", self.trainer.rounds())
    }
}

/// What an [`OnlineLearner`] did during a run.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct OnlineReport {
    /// A version still valid this many DB page writes after its write is labeled frozen.
    pub horizon: u64,
    /// Refits done (each at a GC batch).
    pub refits: u64,
    /// Refits that failed (one label only, too few samples, divergence): the model stayed.
    pub failed_refits: u64,
    /// CPU seconds of the refits (the caller's clock; not in the inference time).
    pub train_cpu_secs: f64,
    /// Versions labeled frozen (valid `horizon` writes after their write).
    pub labeled_frozen: u64,
    /// Versions labeled not frozen (rewritten or freed within the horizon).
    pub labeled_not_frozen: u64,
    /// Samples in the training window now.
    pub window: usize,
    /// Versions awaiting their outcome now.
    pub pending: usize,
    /// The current model's metrics on the share of its window held out of its refit.
    pub held_out: Option<crate::metrics::Metrics>,
}

/// The engine's online learner (`--frozen-model online[:HORIZON]`): fed every page write
/// of the store in the order the mapping changes (user writes with their header records,
/// frees), it labels versions by their observed outcome ([`OutcomeTracker`]) into a
/// bounded window ([`OnlineTrainer`]); it refits only when asked to judge a GC victim, off
/// the write path, at most once per victim batch (bounded by the window and the epoch cap).
/// Until the first fit nothing is judged frozen (the base scheme places every page).
pub struct OnlineLearner {
    trainer: OnlineTrainer,
    outcomes: OutcomeTracker,
    /// The DB-written-page timer (the largest user write's WT seen).
    now: u64,
    clock: Clock,
    cost: CostHandle,
    report: OnlineReport,
}

impl OnlineLearner {
    /// The trainer settings the engine uses: a refit per `every` new samples (16,384 by
    /// default) over a window of the last `2 * every`, at most 10 epochs, 25% of the
    /// window held out, seeded by `seed`.
    ///
    /// # Panics
    /// If `every` is 0.
    #[must_use]
    pub fn engine_config(seed: u64, every: usize) -> OnlineConfig {
        assert!(every > 0, "a refit per at least one sample");
        OnlineConfig {
            capacity: 2 * every,
            retrain_every: every,
            max_epochs: 10,
            holdout: 0.25,
            seed,
            ..OnlineConfig::default()
        }
    }

    /// A learner labeling versions alive `horizon` DB page writes as frozen, timing its
    /// refits and inference with `clock`.
    ///
    /// # Panics
    /// If `horizon` is 0, or `cfg` is invalid (see [`OnlineTrainer::new`]).
    #[must_use]
    pub fn new(cfg: OnlineConfig, horizon: u64, clock: Clock) -> (Self, CostHandle) {
        let cost = CostHandle::default();
        let l = OnlineLearner {
            trainer: OnlineTrainer::new(cfg),
            outcomes: OutcomeTracker::new(horizon),
            now: 0,
            clock,
            cost: cost.clone(),
            report: OnlineReport {
                horizon,
                ..OnlineReport::default()
            },
        };
        (l, cost)
    }

    /// A user write of `page` at timer `wt` with header `records`: the page's pending
    /// version (if any) is labeled not frozen, the new one tracked, and versions older than
    /// the horizon labeled frozen.
    pub fn user_write(&mut self, page: u64, records: PageHotness, wt: u64) {
        self.now = self.now.max(wt);
        let w = HrWindow::from_pair(records.current, records.last);
        let mut labels = Vec::new();
        self.outcomes
            .write(page, w, self.now, |w, f| labels.push((w, f)));
        for (w, f) in labels {
            self.label(w, f);
        }
    }

    /// `page` was released: its pending version (if any) is labeled not frozen.
    pub fn freed(&mut self, page: u64) {
        if let Some((w, f)) = self.outcomes.invalidated(page, self.now) {
            self.label(w, f);
        }
    }

    fn label(&mut self, w: HrWindow, frozen: bool) {
        if frozen {
            self.report.labeled_frozen += 1;
        } else {
            self.report.labeled_not_frozen += 1;
        }
        self.trainer.push(w, frozen);
    }

    /// Refit if due (see the type's docs), then judge a victim's pages from their header
    /// records; nothing is frozen before the first fit.
    ///
    /// # Panics
    /// If the cost lock was poisoned.
    pub fn predict(&mut self, windows: &[HrWindow], out: &mut Vec<bool>) {
        if self.trainer.due() {
            let t0 = (self.clock)();
            match self.trainer.retrain() {
                Ok(m) => {
                    self.report.refits += 1;
                    self.report.held_out = Some(m.metrics.test);
                }
                Err(_) => self.report.failed_refits += 1,
            }
            let secs = ((self.clock)() - t0).max(0.0);
            self.report.train_cpu_secs += secs;
            let mut c = self.cost.lock().expect("cost lock");
            c.retrains = self.report.refits;
            c.retrain_secs += secs;
        }
        let t0 = (self.clock)();
        match self.trainer.model() {
            Some(m) => m.predict_into(windows, out),
            None => {
                out.clear();
                out.resize(windows.len(), false);
            }
        }
        assert_eq!(out.len(), windows.len(), "one verdict per page");
        record(
            &self.cost,
            windows.len(),
            out,
            ((self.clock)() - t0).max(0.0),
        );
    }

    /// The learner's counts now.
    #[must_use]
    pub fn report(&self) -> OnlineReport {
        OnlineReport {
            window: self.trainer.window_len(),
            pending: self.outcomes.pending(),
            ..self.report
        }
    }

    /// The current model (None before the first fit).
    #[must_use]
    pub fn model(&self) -> Option<&Model> {
        self.trainer.model()
    }
}

/// The page headers of a victim's valid pages, handed to a [`HeaderOracle`] by the engine's
/// DB GC (which reads those pages anyway) right before it asks for the victim's verdicts.
#[derive(Clone, Debug, Default)]
pub struct HeaderFeed(Arc<Mutex<std::collections::HashMap<u64, PageHotness>>>);

impl HeaderFeed {
    /// `page`'s header records (HR_current, HR_last), as read from its image.
    ///
    /// # Panics
    /// If the feed's lock was poisoned (a panic while judging).
    pub fn offer(&self, page: u64, records: PageHotness) {
        self.0.lock().expect("feed lock").insert(page, records);
    }

    /// Pages offered and not judged yet.
    ///
    /// # Panics
    /// If the feed's lock was poisoned.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.0.lock().expect("feed lock").len()
    }
}

/// A trained model judging a victim's pages from their page headers: what the engine's DB
/// GC deploys (the replay's [`ModelOracle`] follows the user writes instead). A page the
/// engine did not offer is judged not frozen (it walks the base scheme's classes) and
/// counted. Each judged page's records are dropped from the feed.
pub struct HeaderOracle {
    model: Model,
    feed: HeaderFeed,
    batch: Vec<HrWindow>,
    clock: Clock,
    cost: CostHandle,
    missing: u64,
}

impl HeaderOracle {
    /// `model`, timing batches with `clock`; the engine offers headers through the feed.
    ///
    /// # Panics
    /// If the model looks further back than a page header holds (TWL above 2).
    #[must_use]
    pub fn new(model: Model, clock: Clock) -> (Self, HeaderFeed, CostHandle) {
        assert!(
            model.twl.get() <= 2,
            "a page header holds HR_current and HR_last: TWL {} needs older records",
            model.twl.get()
        );
        let (feed, cost) = (HeaderFeed::default(), CostHandle::default());
        let o = HeaderOracle {
            model,
            feed: feed.clone(),
            batch: Vec::new(),
            clock,
            cost: cost.clone(),
            missing: 0,
        };
        (o, feed, cost)
    }
}

impl FrozenOracle for HeaderOracle {
    fn name(&self) -> String {
        format!(
            "{} twl {} (headers)",
            self.model.classifier.name(),
            self.model.twl.get()
        )
    }
    /// Judges the offered headers at `ctx.now`, which must be the DB-written-page timer (the
    /// clock of the headers' write times) for a model with the age input.
    fn predict(&mut self, pages: &[u64], ctx: &Ctx, out: &mut Vec<bool>) {
        let t0 = (self.clock)();
        let mut offered = Vec::with_capacity(pages.len());
        {
            let mut f = self.feed.0.lock().expect("feed lock");
            self.batch.clear();
            for p in pages {
                let h = f.remove(p);
                offered.push(h.is_some());
                let h = h.unwrap_or_default();
                self.batch
                    .push(HrWindow::from_pair(h.current, h.last).at(ctx.now));
            }
        }
        self.model.predict_into(&self.batch, out);
        for (v, o) in out.iter_mut().zip(&offered) {
            *v &= *o;
        }
        self.missing += offered.iter().filter(|o| !**o).count() as u64;
        let secs = (self.clock)() - t0;
        assert_eq!(out.len(), pages.len(), "one verdict per page");
        record(&self.cost, pages.len(), out, secs.max(0.0));
    }
    fn report(&self) -> String {
        if self.missing == 0 {
            String::new()
        } else {
            format!("{} pages judged without header records", self.missing)
        }
    }
}

#[cfg(test)]
mod header_tests {
    use super::*;
    use crate::hotness::HotnessRecord;
    use crate::model::{ModelMetrics, Params, TrainingInfo, MODEL_FORMAT};
    use crate::{ClassifierKind, Standardization, Twl};

    /// Frozen iff HR_current's VD is above HR_last's by more than 500 bytes.
    pub(super) fn model() -> Model {
        Model {
            format: MODEL_FORMAT,
            classifier: ClassifierKind::Sgd,
            features: "vd".parse().unwrap(),
            twl: Twl::new(2).unwrap(),
            encoding: crate::features::Encoding::Raw,
            standardization: Standardization {
                mean: vec![0.0; 2],
                scale: vec![1.0; 2],
            },
            params: Params::Linear {
                weights: vec![1.0, -1.0],
                intercept: -500.0,
            },
            seed: 1,
            training: TrainingInfo::default(),
            metrics: ModelMetrics::default(),
            threshold: crate::model::DEFAULT_THRESHOLD,
        }
    }

    #[test]
    fn header_oracle_judges_offered_headers_and_refuses_unknown_pages() {
        let (mut o, feed, cost) = HeaderOracle::new(model(), || 0.0);
        let hr = |wt, vd| HotnessRecord::new(wt, vd, 0.0, 0.0, 1, 1);
        let pair = |cur, last| PageHotness { current: cur, last };
        feed.offer(1, pair(hr(20, 3000), hr(10, 1000)));
        feed.offer(2, pair(hr(20, 1000), hr(10, 1000)));
        feed.offer(3, pair(hr(5, 900), HotnessRecord::NONE));
        let mut out = Vec::new();
        let ctx = Ctx {
            now: 30,
            live: 3,
            next_write_in: nowa_logspace::NEVER,
        };
        // Page 9 was never offered: not frozen whatever the model says of zeros.
        o.predict(&[1, 2, 3, 9], &ctx, &mut out);
        assert_eq!(out, [true, false, true, false]);
        assert_eq!(feed.pending(), 0, "judged pages leave the feed");
        assert!(o.report().contains("1 pages judged without"));
        let c = *cost.lock().unwrap();
        assert_eq!((c.batches, c.pages, c.frozen), (1, 4, 2));
    }
}

#[cfg(test)]
mod age_tests {
    use super::*;
    use crate::hotness::HotnessRecord;
    use crate::model::Params;
    use crate::{Standardization, Twl};

    /// Frozen iff the age is above 10 ticks (input ln(1 + age) > ln(11)).
    fn age_model() -> Model {
        Model {
            features: "ag".parse().unwrap(),
            twl: Twl::new(1).unwrap(),
            standardization: Standardization {
                mean: vec![0.0],
                scale: vec![1.0],
            },
            params: Params::Linear {
                weights: vec![1.0],
                intercept: -(11f64.ln()),
            },
            ..super::header_tests::model()
        }
    }

    fn ctx(now: u64) -> Ctx {
        Ctx {
            now,
            live: 2,
            next_write_in: nowa_logspace::NEVER,
        }
    }

    /// The header oracle judges at `ctx.now` (the engine-side caller's DB-written-page timer).
    #[test]
    fn header_oracle_judges_the_age_at_ctx_now() {
        let (mut o, feed, _) = HeaderOracle::new(age_model(), || 0.0);
        let hr = HotnessRecord::new(20, 100, 0.0, 0.0, 1, 1);
        let mut out = Vec::new();
        for (now, want) in [(25, false), (31, true), (10, false)] {
            feed.offer(
                1,
                PageHotness {
                    current: hr,
                    last: HotnessRecord::NONE,
                },
            );
            o.predict(&[1], &ctx(now), &mut out);
            assert_eq!(out, [want], "written at 20, judged at {now}");
        }
    }

    /// The replay's oracle judges on the log's timer (the largest WT of the user writes so
    /// far), not on `Ctx::now`, which counts the replayed writes from 0: here the log starts
    /// at timer 1001 (a bulk load before it), and at the third write page 1 is 8 ticks old.
    #[test]
    fn model_oracle_judges_on_the_log_timer() {
        let rec = |wt| PageHotness {
            current: HotnessRecord::new(wt, 100, 0.0, 0.0, 1, 1),
            last: HotnessRecord::NONE,
        };
        let writes = Arc::new(UserWrites {
            page: vec![0, 1, 0, 0],
            hr: vec![rec(1001), rec(1002), rec(1010), rec(1020)],
            frozen: vec![false; 4],
        });
        let (mut o, cost) = ModelOracle::new(age_model(), writes, || 0.0);
        o.init(&Geometry {
            logical_pages: 2,
            unit_pages: 4,
            units: 4,
            gc_in_order: false,
        });
        let mut out = Vec::new();
        for (i, p) in [0u64, 1, 0].into_iter().enumerate() {
            o.on_user_write(p, &ctx(i as u64 + 1));
        }
        o.predict(&[0, 1], &ctx(3), &mut out);
        assert_eq!(out, [false, false], "ages 0 and 8");
        o.on_user_write(0, &ctx(4));
        o.predict(&[0, 1], &ctx(4), &mut out);
        assert_eq!(out, [false, true], "ages 0 and 18");
        assert_eq!(cost.lock().unwrap().frozen, 1);
    }
}

#[cfg(test)]
mod online_tests {
    use super::*;
    use crate::hotness::HotnessRecord;
    use nowa_logspace::{Placement, SepFrozen, UnitInfo};
    use std::collections::HashMap;

    /// The learner behind a `FrozenOracle`, with the header records of each page's
    /// current version (what the engine reads from the victim's images).
    #[derive(Clone)]
    struct Shared(Arc<Mutex<(OnlineLearner, HashMap<u64, HrWindow>)>>);

    impl Shared {
        fn write(&self, page: u64, vd: u64, wt: u64) {
            let r = PageHotness {
                current: HotnessRecord::new(wt, vd, 1.0, 1.0, 2, 1),
                last: HotnessRecord::NONE,
            };
            let mut g = self.0.lock().unwrap();
            g.0.user_write(page, r, wt);
            g.1.insert(page, HrWindow::from_pair(r.current, r.last));
        }
    }

    impl FrozenOracle for Shared {
        fn name(&self) -> String {
            "online".into()
        }
        fn predict(&mut self, pages: &[u64], _ctx: &Ctx, out: &mut Vec<bool>) {
            let mut g = self.0.lock().unwrap();
            let w: Vec<HrWindow> = pages.iter().map(|p| g.1[p]).collect();
            g.0.predict(&w, out);
        }
    }

    /// GC of a class-0 victim holding `pages`: the class each one goes to.
    fn gc(p: &mut dyn Placement, pages: &[u64], now: u64) -> Vec<u16> {
        let c = Ctx {
            now,
            live: 4096,
            next_write_in: nowa_logspace::NEVER,
        };
        p.on_collect(
            &UnitInfo {
                unit: 0,
                class: 0,
                created_at: 0,
                sealed_at: now,
                valid: 2,
                capacity: 16,
                sealed: true,
            },
            &c,
        );
        p.on_victim_pages(pages, &c);
        pages
            .iter()
            .map(|&pg| {
                p.on_gc_write(pg, &c);
                p.classify(true, pg, &c)
            })
            .collect()
    }

    /// A scripted stream: 64 hot pages (VD 100-300) rewritten round-robin, and every 4th
    /// write a new page (VD 3,800-4,000) never written again. Before the first refit GC
    /// places both kinds by SepBIT's rule; after it the learner has labeled the hot
    /// versions not frozen (rewritten within the horizon) and the others frozen (valid
    /// after it), refit at GC, and SepFrozenBIT sends the new-page kind to the frozen class.
    #[test]
    fn online_learner_refits_at_gc_and_changes_placement() {
        let cfg = OnlineConfig {
            capacity: 1024,
            retrain_every: 512,
            holdout: 0.25,
            ..OnlineConfig::default()
        };
        let (learner, cost) = OnlineLearner::new(cfg, 200, || 0.0);
        let shared = Shared(Arc::new(Mutex::new((learner, HashMap::new()))));
        let mut place = SepFrozen::bit(6, Box::new(shared.clone()));
        place.init(&Geometry {
            logical_pages: 4096,
            unit_pages: 16,
            units: 1024,
            gc_in_order: false,
        });
        let (hot, cold) = (5, 3000);
        let mut t = 0;
        let mut stream = |shared: &Shared, n: u64| {
            for _ in 0..n {
                t += 1;
                if t % 4 == 0 {
                    shared.write(1000 + t / 4, 3800 + t % 200, t);
                } else {
                    shared.write(t % 64, 100 + t % 200, t);
                }
            }
            t
        };
        stream(&shared, 100);
        shared.write(cold, 3900, 101);
        assert_eq!(gc(&mut place, &[hot, cold], 101), [2, 2], "no model yet");
        let now = stream(&shared, 4000);
        let r = shared.0.lock().unwrap().0.report();
        assert_eq!(r.refits, 0, "refits wait for GC");
        assert!(
            r.labeled_frozen > 500 && r.labeled_not_frozen > 2000,
            "{r:?}"
        );
        assert!(r.window == 1024 && r.pending > 0, "{r:?}");
        assert_eq!(
            gc(&mut place, &[hot, cold], now),
            [2, 5],
            "refit, then judged"
        );
        let r = shared.0.lock().unwrap().0.report();
        assert_eq!((r.refits, r.failed_refits), (1, 0));
        let acc = r.held_out.and_then(|m| m.accuracy).unwrap();
        assert!(acc > 0.95, "held-out accuracy {acc}");
        let c = *cost.lock().unwrap();
        assert_eq!((c.batches, c.pages, c.frozen, c.retrains), (2, 4, 1, 1));
        // No new samples: the next victim reuses the model without a refit.
        assert_eq!(gc(&mut place, &[hot, cold], now), [2, 5]);
        assert_eq!(shared.0.lock().unwrap().0.report().refits, 1);
    }

    /// The learner is a function of its event stream and seed: two learners fed the same
    /// stream judge alike and hold the same weights; another seed shuffles differently.
    #[test]
    fn online_learner_is_deterministic_per_seed() {
        let weights = |seed: u64| {
            let cfg = OnlineLearner::engine_config(seed, 256);
            let (mut l, _) = OnlineLearner::new(cfg, 100, || 0.0);
            let mut out = Vec::new();
            for t in 1..3000u64 {
                let (page, vd) = if t % 3 == 0 { (t, 4000) } else { (t % 50, 200) };
                let r = PageHotness {
                    current: HotnessRecord::new(t, vd + t % 97, 1.0, 2.0, 3, 1),
                    last: HotnessRecord::NONE,
                };
                l.user_write(page, r, t);
                if t % 500 == 0 {
                    l.predict(&[HrWindow::from_pair(r.current, r.last)], &mut out);
                }
            }
            assert!(l.report().refits >= 4, "{:?}", l.report());
            match &l.model().unwrap().params {
                crate::model::Params::Linear { weights, intercept } => {
                    (weights.clone(), *intercept)
                }
                crate::model::Params::Tree { .. } => unreachable!("linear"),
            }
        };
        assert_eq!(weights(7), weights(7));
        assert_ne!(weights(7), weights(8));
    }

    #[test]
    fn frees_label_versions_not_frozen() {
        let (mut l, _) = OnlineLearner::new(OnlineConfig::default(), 10, || 0.0);
        let r = PageHotness::default();
        l.user_write(1, r, 1);
        l.user_write(2, r, 2);
        l.freed(1);
        l.freed(1);
        l.user_write(3, r, 20);
        let r = l.report();
        assert_eq!((r.labeled_not_frozen, r.labeled_frozen), (1, 1));
        assert_eq!((r.window, r.pending), (2, 1));
    }
}
