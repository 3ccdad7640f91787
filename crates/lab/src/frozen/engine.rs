//! SepFrozen inside the engine (`nowa ycsb|tpcc --write-path oop --placement
//! sepfrozen-bit|sepfrozen-dac --frozen-model MODEL.json`): the trained model of `nowa-frozen`
//! as the engine's [`PageOracle`], and what a run reports about its placement.
//!
//! The adapter lives here, not in either library, because the engine must not depend on
//! `nowa-frozen` (the learning half stays independent of the engine); the lab depends on both.
//! At DB GC the engine hands the oracle the images of a victim's valid pages in one batch;
//! the oracle decodes HR_current and HR_last from each page header
//! (`nowa_engine::page::hotness`), judges the whole batch with `Model::predict_into` and adds
//! the batch's thread CPU time to the shared [`InferenceCost`] (seconds per 256 MiB of victim,
//! the paper's unit and budget of 0.05 s).
//!
//! `--frozen-model online[:HORIZON[:EVERY[:FEATURES]]]` learns during the run instead (no
//! offline step):
//! [`OnlineFeed`], attached as the engine's write observer, hands every user write (with
//! its header records) and every free to one `nowa_frozen::oracle::OnlineLearner`, which
//! labels versions by their observed outcome (rewritten or freed within HORIZON DB page
//! writes: not frozen; still valid after it: frozen); [`OnlinePageOracle`] refits it at
//! GC when EVERY new labels arrived and judges the victim; nothing is frozen before the
//! first fit. By default the model reads every HR field but WT (see `default_features`).

use crate::placement::EnginePlacement;
use crate::Error;
use nowa_engine::{Engine, FrozenHook, PageOracle, PageWrite, PageWriteKind, WriteObserver};
use nowa_frozen::oracle::{record, CostHandle, InferenceCost, OnlineLearner, OnlineReport};
use nowa_frozen::{FeatureSet, HrWindow, Model, OnlineConfig};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

/// The paper's inference budget: seconds per 256 MiB of victim pages.
pub const BUDGET_SECS_PER_256MIB: f64 = 0.05;

/// A trained model judging page images (see the module docs).
pub struct ModelPageOracle {
    model: Arc<Model>,
    batch: Vec<HrWindow>,
    cost: CostHandle,
}

impl ModelPageOracle {
    /// `model`, reporting into `cost`.
    #[must_use]
    pub fn new(model: Arc<Model>, cost: CostHandle) -> Self {
        ModelPageOracle {
            model,
            batch: Vec::new(),
            cost,
        }
    }
}

/// The windows of a victim's page images judged at `now` (the DB-written-page timer).
fn image_windows(batch: &mut Vec<HrWindow>, pages: &[(u64, &[u8])], now: u64) {
    batch.clear();
    batch.extend(pages.iter().map(|(_, img)| {
        let h = nowa_engine::page::hotness(img);
        HrWindow::from_pair(h.current, h.last).at(now)
    }));
}

impl PageOracle for ModelPageOracle {
    fn name(&self) -> String {
        model_name(&self.model)
    }

    /// Without the timer: every page's age is 0 (use `predict_at`).
    fn predict(&mut self, pages: &[(u64, &[u8])], out: &mut Vec<bool>) {
        self.predict_at(pages, 0, out);
    }

    fn predict_at(&mut self, pages: &[(u64, &[u8])], now: u64, out: &mut Vec<bool>) {
        let t0 = nowa_units::cpu::thread_cpu_secs();
        image_windows(&mut self.batch, pages, now);
        self.model.predict_into(&self.batch, out);
        assert_eq!(out.len(), pages.len(), "one verdict per victim page");
        let secs = nowa_units::cpu::thread_cpu_secs() - t0;
        // A clock that stepped back (thread migrated between CPUs) counts as no time.
        record(&self.cost, pages.len(), out, secs.max(0.0));
    }
}

/// The run's online learner, shared by the oracles of every store and the write feed.
type Learner = Arc<Mutex<OnlineLearner>>;

/// The online learner judging page images at GC (see the module docs).
pub struct OnlinePageOracle {
    learner: Learner,
    batch: Vec<HrWindow>,
}

impl PageOracle for OnlinePageOracle {
    fn name(&self) -> String {
        "online sgd twl 2".into()
    }

    fn predict(&mut self, pages: &[(u64, &[u8])], out: &mut Vec<bool>) {
        self.predict_at(pages, 0, out);
    }

    fn predict_at(&mut self, pages: &[(u64, &[u8])], now: u64, out: &mut Vec<bool>) {
        image_windows(&mut self.batch, pages, now);
        let mut l = self.learner.lock().unwrap_or_else(PoisonError::into_inner);
        l.predict(&self.batch, out);
        assert_eq!(out.len(), pages.len(), "one verdict per victim page");
    }
}

/// The engine's page writes, fed to the online learner (see the module docs).
pub struct OnlineFeed(Learner);

impl WriteObserver for OnlineFeed {
    fn page_write(&self, w: &PageWrite) {
        let mut l = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match w.kind {
            PageWriteKind::User => l.user_write(w.pid, w.records, w.records.current.wt()),
            PageWriteKind::Free => l.freed(w.pid),
            // A GC move keeps the version (its outcome is still pending).
            _ => {}
        }
    }
}

fn model_name(m: &Model) -> String {
    let t = if (m.threshold - nowa_frozen::DEFAULT_THRESHOLD).abs() > 0.0 {
        format!(", threshold {}", m.threshold)
    } else {
        String::new()
    };
    let age = if m.features.has_age() { " + age" } else { "" };
    format!("{} twl {}{age}{t}", m.classifier.name(), m.twl.get())
}

/// `--frozen-threshold P` applied to the run's model (a model file only).
///
/// # Errors
/// The flag without a model file (usage error, exit 2).
pub fn with_threshold(run: Option<FrozenRun>, p: Option<f64>) -> Result<Option<FrozenRun>, Error> {
    let Some(p) = p else {
        return Ok(run);
    };
    let Some(mut run) = run else {
        return Err(Error::Usage(
            "--frozen-threshold needs --placement sepfrozen-bit|sepfrozen-dac --frozen-model MODEL.json".into(),
        ));
    };
    let Some(model) = run.loaded.take() else {
        return Err(Error::Usage(
            "--frozen-threshold needs a model file (--frozen-model online has no threshold)".into(),
        ));
    };
    let m = (*model)
        .clone()
        .with_threshold(p)
        .map_err(|e| Error::Usage(format!("--frozen-threshold {p}: {e}")))?;
    let fresh = model_run(run.hook.base, run.hook.classes, m, run.model_file.clone());
    Ok(Some(fresh))
}

/// SepFrozen as configured by the flags: the engine's hook and the run's inference cost.
pub struct FrozenRun {
    /// The engine's hook (its oracle factory shares [`FrozenRun::cost`] across opens).
    pub hook: FrozenHook,
    model: String,
    model_file: String,
    cost: CostHandle,
    online: Option<Learner>,
    /// The trained model (None: online learning).
    loaded: Option<Arc<Model>>,
}

impl FrozenRun {
    /// The write observer the run attaches to its engine (online learning only).
    #[must_use]
    pub fn observer(&self) -> Option<Arc<dyn WriteObserver>> {
        self.online
            .as_ref()
            .map(|l| Arc::new(OnlineFeed(l.clone())) as Arc<dyn WriteObserver>)
    }
}

/// The online learner's default horizon in DB page writes (256 MiB of page writes).
pub const DEFAULT_HORIZON: u64 = 65_536;

/// The online learner's default new labels per refit (its window holds twice as many).
pub const DEFAULT_REFIT_EVERY: u64 = 16_384;

/// `--frozen-model online[:HORIZON[:EVERY[:FEATURES]]]`, parsed.
#[derive(Debug, Clone, Copy, PartialEq)]
struct OnlineSpec {
    /// DB page writes a version must stay valid to be labeled frozen.
    horizon: u64,
    /// New labels per refit.
    every: usize,
    /// HR fields the model reads.
    features: FeatureSet,
}

/// The online model's default HR fields: all but WT. WT is the DB-written-page timer: with
/// it a model fit on horizon labels learns "written more than HORIZON writes ago", SepBIT's
/// own age rule (measured in docs/sepfrozen.md, "Online retraining in the engine").
fn default_features() -> FeatureSet {
    use nowa_frozen::Feature::{Ac, Ai, Mc, Mi, Vd};
    FeatureSet::of(&[Vd, Ai, Mi, Ac, Mc]).expect("five features")
}

/// `--frozen-model online[:HORIZON[:EVERY[:FEATURES]]]`, or None for a model file.
fn online_spec(path: &Path) -> Result<Option<OnlineSpec>, Error> {
    let Some(s) = path.to_str() else {
        return Ok(None);
    };
    let Some(rest) = s.strip_prefix("online") else {
        return Ok(None);
    };
    let mut parts = rest.split(':');
    if parts.next() != Some("") {
        return Ok(None); // a file named online...
    }
    let bad = |what: &str, e: &dyn std::fmt::Display| {
        Error::Usage(format!(
            "--frozen-model {s}: {what}: {e} (online[:HORIZON[:EVERY[:FEATURES]]])"
        ))
    };
    let horizon = match parts.next() {
        None => DEFAULT_HORIZON,
        Some(h) => nowa_units::parse_count_in(h, 1, 1 << 40).map_err(|e| bad("the horizon", &e))?,
    };
    let every = match parts.next() {
        None => DEFAULT_REFIT_EVERY,
        Some(n) => nowa_units::parse_count_in(n, 16, 1 << 22)
            .map_err(|e| bad("the labels per refit", &e))?,
    };
    let features = match parts.next() {
        None => default_features(),
        Some(f) => f.parse().map_err(|e| bad("the features", &e))?,
    };
    if let Some(x) = parts.next() {
        return Err(bad("one field too many", &x));
    }
    let every = usize::try_from(every).expect("bounded above");
    assert!(every >= 16 && horizon >= 1, "the parsers' floors");
    Ok(Some(OnlineSpec {
        horizon,
        every,
        features,
    }))
}

/// Attach the run's write observers to `engine`: the write log (`--record-writes`) and the
/// online learner's feed, either or both.
///
/// # Errors
/// The engine's write path reports no page writes (in place).
pub fn attach(
    engine: &Engine,
    frozen: Option<&FrozenRun>,
    wlog: Option<&Arc<super::record::WriteLog>>,
) -> Result<(), Error> {
    let feed = frozen.and_then(FrozenRun::observer);
    match (wlog, feed) {
        (Some(l), feed) => l.attach(engine, feed),
        (None, Some(f)) => {
            if engine.record_writes(f) {
                Ok(())
            } else {
                Err(Error::Usage(
                    "--frozen-model online: the write path reports no page writes".into(),
                ))
            }
        }
        (None, None) => Ok(()),
    }
}

/// The hook and run of online learning as `spec` says, seeded by `seed`.
fn online_run(
    (base, classes): (nowa_engine::FrozenBase, u16),
    spec: OnlineSpec,
    seed: u64,
) -> FrozenRun {
    let OnlineSpec {
        horizon,
        every,
        features,
    } = spec;
    let cfg = OnlineConfig {
        features,
        ..OnlineLearner::engine_config(seed, every)
    };
    let (learner, cost) = OnlineLearner::new(cfg, horizon, nowa_units::cpu::thread_cpu_secs);
    let learner: Learner = Arc::new(Mutex::new(learner));
    let l = learner.clone();
    let hook = FrozenHook {
        base,
        classes,
        oracle: Arc::new(move || {
            Box::new(OnlinePageOracle {
                learner: l.clone(),
                batch: Vec::new(),
            }) as Box<dyn PageOracle>
        }),
    };
    FrozenRun {
        hook,
        model: format!(
            "online sgd twl 2 on {features}, horizon {horizon}, refit per {every} labels"
        ),
        model_file: "online".into(),
        cost,
        online: Some(learner),
        loaded: None,
    }
}

/// Load `--frozen-model` for `--placement`: the engine's hook, or a usage error naming the
/// flag at fault (no model, unreadable model, a model that needs more records than a page
/// header holds, a model without a SepFrozen placement).
///
/// # Errors
/// As above (exit code 2).
///
/// # Panics
/// If the classes are outside the placement parser's bounds (a bug).
pub fn frozen_run(
    placement: Option<EnginePlacement>,
    model: Option<&Path>,
    seed: u64,
) -> Result<Option<FrozenRun>, Error> {
    let (base, classes) = match (placement, model) {
        (Some(EnginePlacement::Frozen(b, n)), _) => (b, n),
        (_, None) => return Ok(None),
        (_, Some(_)) => {
            return Err(Error::Usage(
                "--frozen-model needs --placement sepfrozen-bit or sepfrozen-dac".into(),
            ))
        }
    };
    let Some(path) = model else {
        return Err(Error::Usage(format!(
            "--placement {}: needs --frozen-model MODEL.json (train one with `nowa frozen train`)",
            EnginePlacement::Frozen(base, classes).name()
        )));
    };
    if let Some(spec) = online_spec(path)? {
        return Ok(Some(online_run((base, classes), spec, seed)));
    }
    let m = Model::load(path)
        .map_err(|e| Error::Usage(format!("--frozen-model {}: {e}", path.display())))?;
    if m.twl.get() > 2 {
        return Err(Error::Usage(format!(
            "--frozen-model {}: the model reads {} hotness records per page; a page header holds 2 (train with --twl 1 or 2)",
            path.display(),
            m.twl.get()
        )));
    }
    assert!(
        (2..=nowa_logspace::MAX_CLASSES).contains(&classes),
        "the --placement parser bounds the classes"
    );
    Ok(Some(model_run(
        base,
        classes,
        m,
        path.display().to_string(),
    )))
}

/// The hook and run of a trained model.
fn model_run(base: nowa_engine::FrozenBase, classes: u16, m: Model, file: String) -> FrozenRun {
    assert!(m.twl.get() <= 2, "a page header holds two records");
    let (model, cost) = (Arc::new(m), CostHandle::default());
    let name = model_name(&model);
    let (c, mo) = (cost.clone(), model.clone());
    let hook = FrozenHook {
        base,
        classes,
        oracle: Arc::new(move || {
            Box::new(ModelPageOracle::new(mo.clone(), c.clone())) as Box<dyn PageOracle>
        }),
    };
    FrozenRun {
        hook,
        model: name,
        model_file: file,
        cost,
        online: None,
        loaded: Some(model),
    }
}

/// SepFrozen's part of a run's report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FrozenReport {
    /// The model (classifier and records per page).
    pub model: String,
    /// Its file.
    pub model_file: String,
    /// Victim batches judged, pages judged and judged frozen, CPU seconds.
    pub inference: InferenceCost,
    /// Inference CPU seconds per 256 MiB of victim pages.
    pub secs_per_256mib: f64,
    /// The paper's budget for it.
    pub budget_secs_per_256mib: f64,
    /// Online learning (`--frozen-model online`): refits, training CPU, samples, the
    /// current model's held-out metrics.
    pub online: Option<OnlineReport>,
}

/// SepFrozen's report of a run (None without `--frozen-model`); the placement's per-class
/// table is the engine's (`Engine::class_report`), printed with the result.
///
/// # Panics
/// If more pages were judged frozen than judged (a bug of the oracle's accounting).
#[must_use]
pub fn report(frozen: Option<&FrozenRun>) -> Option<FrozenReport> {
    frozen.map(|f| {
        let c = *f
            .cost
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        assert!(c.frozen <= c.pages, "judged frozen among the pages judged");
        FrozenReport {
            model: f.model.clone(),
            model_file: f.model_file.clone(),
            inference: c,
            secs_per_256mib: c.secs_per_256mib(),
            budget_secs_per_256mib: BUDGET_SECS_PER_256MIB,
            online: f
                .online
                .as_ref()
                .map(|l| l.lock().unwrap_or_else(PoisonError::into_inner).report()),
        }
    })
}

/// `f` as text (lines).
#[must_use]
pub fn text(f: &FrozenReport) -> String {
    let c = &f.inference;
    let mut s = format!(
        "sepfrozen model {} ({}): {} of {} pages judged frozen at GC in {} victim batches; inference {:.2} ms per 256 MiB of victim (budget {:.0} ms), {:.3} s CPU in all\n",
        f.model,
        f.model_file,
        c.frozen,
        c.pages,
        c.batches,
        1e3 * f.secs_per_256mib,
        1e3 * f.budget_secs_per_256mib,
        c.cpu_secs
    );
    if let Some(o) = &f.online {
        s.push_str(&online_text(o));
    }
    s
}

fn online_text(o: &OnlineReport) -> String {
    let pct = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", 100.0 * v));
    let held = o.held_out.unwrap_or_default();
    format!(
        "sepfrozen online (horizon {}): {} refits ({} failed), training {:.3} s CPU; labeled {} frozen / {} not frozen (window {}, {} pending); current model on its held-out labels: accuracy {}, recall {}, FPR {} ({} samples)\n",
        o.horizon,
        o.refits,
        o.failed_refits,
        o.train_cpu_secs,
        o.labeled_frozen,
        o.labeled_not_frozen,
        o.window,
        o.pending,
        pct(held.accuracy),
        pct(held.recall),
        pct(held.fpr),
        held.confusion.total()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Option<OnlineSpec> {
        online_spec(Path::new(s)).unwrap()
    }

    #[test]
    fn online_specs_parse_with_their_defaults() {
        let d = spec("online").unwrap();
        assert_eq!((d.horizon, d.every), (DEFAULT_HORIZON, 16_384));
        assert_eq!(d.features.to_string(), "vd,ai,mi,ac,mc");
        let s = spec("online:4k:512:all").unwrap();
        assert_eq!((s.horizon, s.every), (4000, 512));
        assert_eq!(s.features, FeatureSet::ALL);
        assert_eq!(spec("online:100").unwrap().every, 16_384);
        assert_eq!(spec("m.json"), None, "a model file");
        assert_eq!(
            spec("online.json"),
            None,
            "a file whose name starts with online"
        );
        for bad in [
            "online:",
            "online:0",
            "online:1:15",
            "online:1:16:zz",
            "online:1:16:vd:x",
        ] {
            assert!(online_spec(Path::new(bad)).is_err(), "{bad}");
        }
    }
}
