//! Online retraining ("beyond the paper"): learn during a run from outcomes already
//! observed, with no offline step.
//!
//! - [`OutcomeTracker`] turns page events into labeled samples as their outcome becomes
//!   known: a version invalidated (rewritten or freed) within `horizon` ticks of being
//!   written or moved is *not frozen*; one still valid `horizon` ticks later is taken as
//!   *frozen*. (The paper's label, "never invalidated before the end", cannot be known during
//!   a run; the horizon is the online stand-in. A GC-time decision needs it to hold for a
//!   few zone lifespans, so a horizon of several times SepBIT's lifespan threshold fits.)
//! - [`OnlineTrainer`] keeps the most recent `capacity` labeled samples (a sliding window,
//!   so it follows drift) and, every `retrain_every` new samples, refits the model on the
//!   window: standardization and SGD exactly as the offline trainer (a fresh scikit-learn
//!   `fit`, seeded), or, in [`OnlineMode::Partial`], `partial_fit`-style epochs that continue
//!   the previous weights and learning-rate clock in the first window's standardization.
//!   Either way the result is the same [`Model`] type the placement code already uses.

use crate::dataset::{split, Dataset};
use crate::error::FrozenError;
use crate::features::{feature_count, FeatureSet, HrWindow, Standardization, Twl};
use crate::model::{ClassifierKind, Model, ModelMetrics, Params, TrainingInfo, MODEL_FORMAT};
use crate::sgd::{self, SgdParams};
use crate::train::{evaluate, sgd_seed};
use std::collections::{HashMap, VecDeque};

/// How a retrain uses the previous model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnlineMode {
    /// A fresh fit on the window each time (standardization refitted too).
    Refit,
    /// Continue the previous weights, intercept and learning-rate clock for `max_epochs`
    /// epochs over the window, in the standardization of the first fit.
    Partial,
}

/// Online trainer settings.
#[derive(Clone, Debug, PartialEq)]
pub struct OnlineConfig {
    /// HR fields.
    pub features: FeatureSet,
    /// Records per sample.
    pub twl: Twl,
    /// Samples kept (the most recent).
    pub capacity: usize,
    /// Retrain after this many new samples (once the window holds both labels).
    pub retrain_every: usize,
    /// Epoch cap per retrain.
    pub max_epochs: u32,
    /// Refit or continue.
    pub mode: OnlineMode,
    /// Seed of the SGD shuffles (mixed with the retrain count).
    pub seed: u64,
    /// Share of the window held out of each refit (0: train on all of it) to measure the
    /// new model on labels it did not see (`Model::metrics.test`).
    pub holdout: f64,
}

impl Default for OnlineConfig {
    fn default() -> Self {
        Self {
            features: FeatureSet::ALL,
            twl: Twl::PAPER,
            capacity: 65_536,
            retrain_every: 16_384,
            max_epochs: 20,
            mode: OnlineMode::Refit,
            seed: 42,
            holdout: 0.0,
        }
    }
}

/// Labeled samples in, a fresh [`Model`] out every `retrain_every` samples.
#[derive(Debug)]
pub struct OnlineTrainer {
    cfg: OnlineConfig,
    window: VecDeque<(HrWindow, bool)>,
    since_retrain: usize,
    rounds: u64,
    model: Option<Model>,
    /// SGD clock of the last partial fit.
    t: f64,
}

impl OnlineTrainer {
    /// A trainer with no model yet.
    ///
    /// # Panics
    /// If `capacity` or `retrain_every` is 0.
    #[must_use]
    pub fn new(cfg: OnlineConfig) -> Self {
        assert!(cfg.capacity > 0 && cfg.retrain_every > 0 && cfg.max_epochs > 0);
        assert!(
            (0.0..1.0).contains(&cfg.holdout),
            "a held-out share in [0, 1)"
        );
        assert!(
            !cfg.features.has_age(),
            "online samples are taken at the user write (age 0): no ag"
        );
        Self {
            window: VecDeque::with_capacity(cfg.capacity),
            cfg,
            since_retrain: 0,
            rounds: 0,
            model: None,
            t: 1.0,
        }
    }

    /// The current model (`None` before the first retrain).
    #[must_use]
    pub fn model(&self) -> Option<&Model> {
        self.model.as_ref()
    }

    /// Retrains done.
    #[must_use]
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Samples in the window.
    #[must_use]
    pub fn window_len(&self) -> usize {
        self.window.len()
    }

    /// Adds one labeled sample; retrains when due. Returns true when a new model is ready.
    ///
    /// # Errors
    /// SGD divergence (the previous model stays).
    pub fn observe(&mut self, w: HrWindow, frozen: bool) -> Result<bool, FrozenError> {
        self.push(w, frozen);
        if !self.due() {
            return Ok(false);
        }
        self.retrain()?;
        Ok(true)
    }

    /// Adds one labeled sample without retraining (the engine refits later, at GC:
    /// [`OnlineTrainer::due`]). The oldest sample leaves a full window.
    ///
    /// # Panics
    /// Never (the window is kept within its capacity).
    pub fn push(&mut self, w: HrWindow, frozen: bool) {
        if self.window.len() == self.cfg.capacity {
            self.window.pop_front();
        }
        self.window.push_back((w, frozen));
        assert!(self.window.len() <= self.cfg.capacity);
        self.since_retrain += 1;
    }

    /// Whether `retrain_every` samples arrived since the last refit and the window holds
    /// both labels.
    #[must_use]
    pub fn due(&self) -> bool {
        self.since_retrain >= self.cfg.retrain_every
            && self.window.iter().any(|s| s.1)
            && self.window.iter().any(|s| !s.1)
    }

    fn raw_dataset(&self) -> Dataset {
        let mut d = Dataset::new(feature_count(self.cfg.features, self.cfg.twl));
        for (w, y) in &self.window {
            d.push(w, *y, self.cfg.features, self.cfg.twl);
        }
        d
    }

    /// Refits on the current window now (on its training share when `holdout` > 0; the
    /// held-out share's metrics go to `metrics.test`).
    ///
    /// # Errors
    /// [`FrozenError::OneClass`] if the training samples hold one label only,
    /// [`FrozenError::TooFewSamples`] if the window is too small to hold some out; SGD
    /// divergence.
    pub fn retrain(&mut self) -> Result<&Model, FrozenError> {
        // A failed refit waits for `retrain_every` new samples too.
        self.since_retrain = 0;
        let raw = self.raw_dataset();
        let round = self.cfg.seed ^ self.rounds.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let (mut data, test) = if self.cfg.holdout > 0.0 {
            let (train, test) = split(raw.len(), self.cfg.holdout, round)?;
            (raw.select(&train), Some(raw.select(&test)))
        } else {
            (raw, None)
        };
        let s = self.standardization(&data);
        standardize(&mut data, &s);
        let positives = data.positives();
        if positives == 0 || positives == data.len() as u64 {
            return Err(FrozenError::OneClass {
                positives,
                samples: data.len() as u64,
            });
        }
        let params = SgdParams {
            max_iter: self.cfg.max_epochs,
            ..SgdParams::default()
        };
        let warm = match (&self.model, self.cfg.mode) {
            (Some(m), OnlineMode::Partial) => match &m.params {
                Params::Linear { weights, intercept } => Some((weights.clone(), *intercept)),
                Params::Tree { .. } => unreachable!("online models are linear"),
            },
            _ => None,
        };
        let warm_ref = warm.as_ref().map(|(w, b)| (w.as_slice(), *b, self.t));
        let f = sgd::fit(&data.x, &data.y, data.d, &params, sgd_seed(round), warm_ref)?;
        self.t = f.t;
        self.rounds += 1;
        let mut model = Model {
            format: MODEL_FORMAT,
            classifier: ClassifierKind::Sgd,
            features: self.cfg.features,
            twl: self.cfg.twl,
            encoding: crate::features::Encoding::Raw,
            standardization: s,
            params: Params::Linear {
                weights: f.weights,
                intercept: f.intercept,
            },
            seed: self.cfg.seed,
            training: TrainingInfo {
                samples: (data.len() + test.as_ref().map_or(0, Dataset::len)) as u64,
                train: data.len() as u64,
                train_frozen: positives,
                epochs: f.epochs,
                converged: f.converged,
                settings: serde_json::json!({ "online_round": self.rounds }),
                ..TrainingInfo::default()
            },
            metrics: ModelMetrics::default(),
            threshold: crate::model::DEFAULT_THRESHOLD,
        };
        model.validate()?;
        model.metrics.train = evaluate(&model, &data).metrics();
        if let Some(mut t) = test {
            standardize(&mut t, &model.standardization);
            model.metrics.test = evaluate(&model, &t).metrics();
        }
        Ok(self.model.insert(model))
    }

    /// The standardization of a refit on `data`: the first fit's in partial mode, else
    /// `data`'s own.
    fn standardization(&self, data: &Dataset) -> Standardization {
        match (&self.model, self.cfg.mode) {
            (Some(m), OnlineMode::Partial) => m.standardization.clone(),
            _ => {
                let rows: Vec<usize> = (0..data.len()).collect();
                Standardization::fit(&data.x, data.d, &rows)
            }
        }
    }
}

/// z-score `data`'s rows in place.
fn standardize(data: &mut Dataset, s: &Standardization) {
    for row in data.x.chunks_exact_mut(data.d) {
        s.apply(row);
    }
}

/// Pending versions awaiting their outcome (see the module docs).
#[derive(Debug)]
pub struct OutcomeTracker {
    horizon: u64,
    pending: HashMap<u64, (HrWindow, u64, u64)>,
    /// (since, page, generation) in `since` order; stale entries are skipped.
    queue: VecDeque<(u64, u64, u64)>,
    generation: u64,
}

impl OutcomeTracker {
    /// A tracker labeling versions alive for `horizon` ticks as frozen.
    ///
    /// # Panics
    /// If `horizon` is 0.
    #[must_use]
    pub fn new(horizon: u64) -> Self {
        assert!(horizon > 0, "a horizon of at least one tick");
        Self {
            horizon,
            pending: HashMap::new(),
            queue: VecDeque::new(),
            generation: 0,
        }
    }

    /// Versions awaiting an outcome.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// A version of `page` with records `w` was written or moved at `now`. A pending
    /// version of the same page is replaced without a label (use
    /// [`OutcomeTracker::invalidated`] first when a user write ends it).
    ///
    /// # Panics
    /// If `now` is below an earlier call's (times come from the monotonic timer).
    pub fn track(&mut self, page: u64, w: HrWindow, now: u64) {
        if let Some(&(last, _, _)) = self.queue.back() {
            assert!(now >= last, "times never go back");
        }
        self.generation += 1;
        self.pending.insert(page, (w, now, self.generation));
        self.queue.push_back((now, page, self.generation));
    }

    /// `page`'s version was invalidated at `now`: if still pending (within the horizon), it
    /// is a non-frozen sample.
    ///
    /// # Panics
    /// If `now` is before the version was tracked.
    pub fn invalidated(&mut self, page: u64, now: u64) -> Option<(HrWindow, bool)> {
        let (w, since, _) = self.pending.remove(&page)?;
        assert!(now >= since, "invalidated after being tracked");
        Some((w, false))
    }

    /// A new version of `page` (records `w`) was written at `now`: `out` gets the label of
    /// the version it ends (not frozen, if still pending), then of every version that
    /// reached the horizon (frozen); the new version is tracked.
    pub fn write(&mut self, page: u64, w: HrWindow, now: u64, mut out: impl FnMut(HrWindow, bool)) {
        if let Some((old, f)) = self.invalidated(page, now) {
            out(old, f);
        }
        self.track(page, w, now);
        self.expire(now, out);
    }

    /// Versions alive for `horizon` ticks at `now` become frozen samples, handed to `out`.
    pub fn expire(&mut self, now: u64, mut out: impl FnMut(HrWindow, bool)) {
        while let Some(&(since, page, generation)) = self.queue.front() {
            if now.saturating_sub(since) < self.horizon {
                break;
            }
            self.queue.pop_front();
            if let Some(&(w, _, g)) = self.pending.get(&page) {
                if g == generation {
                    self.pending.remove(&page);
                    out(w, true);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hotness::HotnessRecord;
    use rand::rngs::SmallRng;
    use rand::{RngExt, SeedableRng};

    /// A sample whose VD decides the label: phase 0, frozen iff VD > 2000; phase 1 (drift),
    /// frozen iff VD < 2000. WT carries noise.
    fn sample(rng: &mut SmallRng, phase: u8) -> (HrWindow, bool) {
        let vd: u64 = rng.random_range(0..4096);
        let wt: u64 = rng.random_range(1..1_000_000);
        let w = HrWindow::from_pair(
            HotnessRecord::new(wt, vd, 1.0, 1.0, 3, 1),
            HotnessRecord::NONE,
        );
        let frozen = if phase == 0 { vd > 2000 } else { vd < 2000 };
        (w, frozen)
    }

    fn accuracy(m: &Model, rng: &mut SmallRng, phase: u8) -> f64 {
        let mut right = 0;
        for _ in 0..2000 {
            let (w, y) = sample(rng, phase);
            right += u32::from(m.decide_window(&w).0 == y);
        }
        f64::from(right) / 2000.0
    }

    fn follows_drift(mode: OnlineMode) {
        let mut rng = SmallRng::seed_from_u64(7);
        let cfg = OnlineConfig {
            capacity: 4096,
            retrain_every: 1024,
            mode,
            ..OnlineConfig::default()
        };
        let mut t = OnlineTrainer::new(cfg);
        for _ in 0..8192 {
            let (w, y) = sample(&mut rng, 0);
            t.observe(w, y).unwrap();
        }
        let before = accuracy(t.model().unwrap(), &mut rng, 0);
        assert!(before > 0.97, "{mode:?}: phase 0 learned: {before}");
        assert!(
            accuracy(t.model().unwrap(), &mut rng, 1) < 0.1,
            "the drift flips labels"
        );
        for _ in 0..16_384 {
            let (w, y) = sample(&mut rng, 1);
            t.observe(w, y).unwrap();
        }
        let after = accuracy(t.model().unwrap(), &mut rng, 1);
        assert!(
            after > 0.95,
            "{mode:?}: phase 1 learned after the drift: {after}"
        );
        assert_eq!(t.rounds(), 24, "one retrain per 1024 samples");
    }

    #[test]
    fn refit_follows_a_drifting_stream() {
        follows_drift(OnlineMode::Refit);
    }

    #[test]
    fn partial_fit_follows_a_drifting_stream() {
        follows_drift(OnlineMode::Partial);
    }

    #[test]
    fn outcomes_by_horizon() {
        let w = |wt| {
            HrWindow::from_pair(
                HotnessRecord::new(wt, 1, 0.0, 0.0, 0, 0),
                HotnessRecord::NONE,
            )
        };
        let mut o = OutcomeTracker::new(100);
        o.track(1, w(10), 10);
        o.track(2, w(20), 20);
        o.track(1, w(50), 50); // page 1 moved by GC: the pending version is replaced
        assert_eq!(o.invalidated(2, 60), Some((w(20), false)));
        assert_eq!(o.invalidated(2, 61), None, "already labeled");
        let mut got = Vec::new();
        o.expire(149, |w, y| got.push((w, y)));
        assert!(got.is_empty(), "page 1's version is 99 ticks old");
        o.expire(150, |w, y| got.push((w, y)));
        assert_eq!(got, [(w(50), true)]);
        assert_eq!(o.pending(), 0);
    }
}
