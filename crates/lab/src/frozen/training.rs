//! `nowa frozen train` and `nowa frozen synth` (jobs `frozen-train`, `frozen-synth`): a
//! frozen-page model trained on a write log, and a synthetic write log.

use super::{failed, pct};
use crate::{Cancel, Error, Identity, Report};
use nowa_frozen::{
    ClassifierKind, Dataset, Encoding, FeatureSet, FrozenError, Labels, LogSummary, LogWriter,
    Metrics, Model, SampleKinds, SampleSpec, Synth, SynthConfig, TrainConfig, Twl,
};
use nowa_units::cpu::process_cpu_secs;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A write log or model file's fault (damaged, cut, foreign, missing) is bad input naming its
/// flag; other errors are the run's.
pub(crate) fn file_error(flag: &str, path: &Path, e: FrozenError) -> Error {
    if super::is_bad_input(&e) {
        Error::Usage(format!("{flag} {}: {e}", path.display()))
    } else {
        Error::io(path, e)
    }
}

/// One training run (keys: the flags of `nowa frozen train` with underscores).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainSpec {
    /// The write log.
    pub writes: PathBuf,
    /// Output directory: the model goes to `out/model.json` ([`TrainSpec::model`]).
    pub out: PathBuf,
    /// Write into a non-empty `out`.
    pub force: bool,
    /// Seed of the split and of SGD's shuffles.
    pub seed: u64,
    /// Records per sample, 1 to 4.
    pub twl: u8,
    /// HR fields (`all`, or wt, vd, ai, mi, ac, mc, ag joined by `,` or `+`).
    pub features: String,
    /// sgd, logreg or tree.
    pub classifier: ClassifierKind,
    /// user, gc or all.
    pub samples: SampleKinds,
    /// Share of samples held out for testing.
    pub test_fraction: f64,
    /// diff or raw.
    pub encoding: Encoding,
    /// Evaluate on every sample of this log too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_writes: Option<PathBuf>,
    /// Leave out samples in the last fraction of the log's timer range.
    pub exclude_tail: f64,
    /// A seeded subsample of at most this many samples (absent: all; 500k for the tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_samples: Option<u64>,
    /// Depth limit of the tree.
    pub tree_depth: u8,
    /// Decision threshold stored in the model.
    pub frozen_threshold: f64,
}

/// The parsed settings of a [`TrainSpec`].
struct Parsed {
    sample: SampleSpec,
    cfg: TrainConfig,
}

/// The model's name in `--out` of `nowa frozen train`.
pub const MODEL_FILE: &str = "model.json";

/// The write log's name in `--out` of `nowa frozen synth` and `nowa frozen from-trace`.
pub const LOG_FILE: &str = "writes.log";

impl TrainSpec {
    /// The model file (`out/model.json`).
    #[must_use]
    pub fn model(&self) -> PathBuf {
        self.out.join(MODEL_FILE)
    }

    /// The run's setup in one line (what `nowa frozen train` announces).
    #[must_use]
    pub fn banner(&self) -> String {
        let samples = clap::ValueEnum::to_possible_value(&self.samples)
            .map_or_else(String::new, |v| v.get_name().to_owned());
        format!(
            "seed {}, log {}, {} with TWL {} on {} ({} encoding, {samples} samples)",
            self.seed,
            self.writes.display(),
            self.classifier.name(),
            self.twl,
            self.features,
            self.encoding.name(),
        )
    }

    fn parsed(&self) -> Result<Parsed, Error> {
        let bad = |f: &str, e: &dyn std::fmt::Display| Error::Usage(format!("{f}: {e}"));
        let features: FeatureSet = self.features.parse().map_err(|e| bad("features", &e))?;
        let (classifier, kinds, encoding) = (self.classifier, self.samples, self.encoding);
        let twl = Twl::new(self.twl)
            .ok_or_else(|| bad("twl", &format!("{} is not in [1, 4]", self.twl)))?;
        crate::check_ranges(&[("tree_depth", u64::from(self.tree_depth), 1, 30)])?;
        let fractions = [
            ("test_fraction", self.test_fraction, 1.0),
            ("exclude_tail", self.exclude_tail + f64::EPSILON, 0.99),
            ("frozen_threshold", self.frozen_threshold, 1.0),
        ];
        if let Some((f, v, _)) = fractions.iter().find(|(_, v, hi)| !(*v > 0.0 && v < hi)) {
            return Err(bad(f, &format!("{v} is out of range")));
        }
        if features.has_age() && kinds == SampleKinds::User {
            return Err(Error::Usage(format!(
                "--features {features}: the age (ag) is 0 at every user write; add --samples gc or all"
            )));
        }
        let default_cap =
            (classifier == ClassifierKind::Tree).then_some(nowa_frozen::TREE_SAMPLE_CAP);
        let cfg = TrainConfig {
            classifier,
            seed: self.seed,
            test_fraction: self.test_fraction,
            max_samples: self
                .max_samples
                .map(|m| usize::try_from(m).unwrap_or(usize::MAX))
                .or(default_cap),
            tree_depth: usize::from(self.tree_depth),
            threshold: self.frozen_threshold,
            ..TrainConfig::default()
        };
        let sample = SampleSpec {
            features,
            twl,
            kinds,
            exclude_tail: self.exclude_tail,
            encoding,
        };
        assert!(
            cfg.threshold > 0.0 && cfg.threshold < 1.0,
            "a checked threshold"
        );
        Ok(Parsed { sample, cfg })
    }

    /// Checks the settings and the files: the logs exist, `out` is a new or empty directory
    /// unless `force`.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field or flag.
    pub fn check(&self) -> Result<(), Error> {
        self.parsed()?;
        for (flag, p) in [
            ("--eval-writes", self.eval_writes.as_ref()),
            ("--writes", Some(&self.writes)),
        ] {
            if let Some(p) = p.filter(|p| !p.exists()) {
                return Err(Error::Usage(format!(
                    "{flag} {}: no such file",
                    p.display()
                )));
            }
        }
        crate::resources::check_out_dir("--out", &self.out, self.force)
    }
}

/// What a training run produced.
#[derive(Debug, Clone, Serialize)]
pub struct TrainResult {
    /// The model's training summary (settings, sample counts, epochs).
    pub training: nowa_frozen::model::TrainingInfo,
    /// Its metrics on the train and test splits.
    pub metrics: nowa_frozen::model::ModelMetrics,
    /// The report as text.
    #[serde(skip)]
    pub text: String,
}

/// A training run under its identity.
pub type TrainOutcome = Report<TrainResult>;

/// Trains the model the spec names and saves it.
///
/// # Errors
/// A bad spec or input file ([`Error::Usage`]); the training's or the save's errors.
///
/// # Panics
/// If the log gave more samples than records (a bug of the reader).
pub fn train(spec: &TrainSpec, _: &Cancel) -> Result<TrainOutcome, Error> {
    spec.check()?;
    let p = spec.parsed()?;
    let id = Identity::now("frozen-train", spec, spec.seed);
    let (cpu0, wall0) = (process_cpu_secs(), Instant::now());
    let (data, labels) = Dataset::from_log(&spec.writes, &p.sample)
        .map_err(|e| file_error("--writes", &spec.writes, e))?;
    assert!(data.len() <= labels.len(), "at most one sample per record");
    let (cpu1, wall1) = (process_cpu_secs(), Instant::now());
    let mut model =
        nowa_frozen::train(&data, &p.sample, &p.cfg, labels.len() as u64).map_err(failed)?;
    let (cpu2, wall2) = (process_cpu_secs(), Instant::now());
    let read = (cpu1 - cpu0, (wall1 - wall0).as_secs_f64());
    let fit = (cpu2 - cpu1, (wall2 - wall1).as_secs_f64());
    model.training.settings["read_cpu_seconds"] = read.0.into();
    model.training.settings["train_cpu_seconds"] = fit.0.into();
    if let Some(path) = &spec.eval_writes {
        let (other, _) =
            Dataset::from_log(path, &p.sample).map_err(|e| file_error("--eval-writes", path, e))?;
        let m = nowa_frozen::train::evaluate_raw(&model, &other).metrics();
        model.training.settings["eval_writes"] = path.display().to_string().into();
        model.training.settings["eval"] =
            serde_json::to_value(m).map_err(|e| Error::failed("the metrics", e))?;
    }
    // Created only now: a failed training leaves no directory behind.
    crate::resources::create_output_dir("--out", &spec.out)?;
    let file = spec.model();
    model
        .save(&file, spec.force)
        .map_err(|e| file_error("--out", &file, e))?;
    let text = report(spec, &labels, &data, &model, read, fit);
    Ok(Report {
        nowa: id,
        result: TrainResult {
            training: model.training.clone(),
            metrics: model.metrics,
            text,
        },
    })
}

fn metrics_line(m: &Metrics) -> String {
    let c = m.confusion;
    format!(
        "accuracy {}, recall {}, FPR {} (TP {} TN {} FP {} FN {})",
        pct(m.accuracy),
        pct(m.recall),
        pct(m.fpr),
        c.tp,
        c.tn,
        c.fp,
        c.fn_
    )
}

/// The log's labels, as the report's first lines.
fn labels_text(s: &mut String, labels: &Labels) {
    let l = labels.summary();
    let c = labels.counts();
    let _ = writeln!(
        s,
        "log: {} records ({} user writes, {} GC moves, {} frees), timer {}..{}",
        l.records, l.user, l.gc, l.free, l.first_timer, l.last_timer
    );
    #[expect(clippy::cast_precision_loss, reason = "counts as a share")]
    let share = (c.user > 0).then(|| c.user_frozen as f64 / c.user as f64);
    let _ = writeln!(
        s,
        "labels: {} of the user writes' versions are never invalidated (frozen); FAR of the recording run (frozen share of GC moves): {}",
        pct(share),
        pct(c.far())
    );
    if c.gc > 0 {
        let _ = writeln!(
            s,
            "2R's rule (GC-written = frozen) on all writes: {}",
            metrics_line(&c.rule_2r().metrics())
        );
    }
}

fn report(
    a: &TrainSpec,
    labels: &Labels,
    data: &Dataset,
    m: &Model,
    read: (f64, f64),
    fit: (f64, f64),
) -> String {
    let mut s = String::new();
    labels_text(&mut s, labels);
    let t = &m.training;
    let _ = writeln!(
        s,
        "samples: {} ({} inputs each), train {} ({} frozen), test {} ({} frozen); read+label {:.2} s CPU ({:.2} s wall)",
        data.len(), m.feature_count(), t.train, t.train_frozen, t.test, t.test_frozen, read.0, read.1
    );
    let epochs = if m.classifier == ClassifierKind::Sgd {
        let how = if t.converged {
            "converged"
        } else {
            "max_iter reached"
        };
        format!("{} epochs ({how}), ", t.epochs)
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "{}: {epochs}trained in {:.2} s CPU ({:.2} s wall)",
        m.classifier.name(),
        fit.0,
        fit.1
    );
    if (m.threshold - nowa_frozen::DEFAULT_THRESHOLD).abs() > 0.0 {
        let _ = writeln!(s, "decision threshold: probability > {}", m.threshold);
    }
    let _ = writeln!(s, "test:  {}", metrics_line(&m.metrics.test));
    let _ = writeln!(s, "train: {}", metrics_line(&m.metrics.train));
    if let Some(e) = t.settings.get("eval") {
        if let Ok(e) = serde_json::from_value::<Metrics>(e.clone()) {
            let _ = writeln!(
                s,
                "eval (all samples of --eval-writes): {}",
                metrics_line(&e)
            );
        }
    }
    let _ = writeln!(s, "model: {}", a.model().display());
    s
}

/// A synthetic write log (keys: the flags of `nowa frozen synth` with underscores).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthSpec {
    /// Output directory: the log goes to `out/writes.log` ([`SynthSpec::log`]).
    pub out: PathBuf,
    /// Write into a non-empty `out`.
    pub force: bool,
    /// DB page writes (timer ticks).
    pub writes: u64,
    /// Pages updated forever (Zipf-chosen).
    pub hot_pages: u64,
    /// Zipf skew of the hot pages.
    pub zipf: f64,
    /// Share of writes that go to the growing (append) page.
    pub append_share: f64,
    /// Writes that fill an append page (then it freezes).
    pub fill_writes: u64,
    /// Probability that a full page is updated once more later.
    pub late_update: f64,
    /// Probability that a full page is freed later.
    pub free_share: f64,
    /// Seed of the log.
    pub seed: u64,
}

impl SynthSpec {
    /// The write log (`out/writes.log`).
    #[must_use]
    pub fn log(&self) -> PathBuf {
        self.out.join(LOG_FILE)
    }
}

/// What a synthetic log holds.
#[derive(Debug, Clone, Serialize)]
pub struct SynthResult {
    /// Its counts.
    pub summary: LogSummary,
}

/// Writes the synthetic log the spec names.
///
/// # Errors
/// [`Error::Usage`]: a field out of its flag's range, `out` not a new or empty directory
/// without `force`; the file's errors.
///
/// # Panics
/// If the log counts fewer records than writes and frees (a bug).
pub fn synth(spec: &SynthSpec, _: &Cancel) -> Result<Report<SynthResult>, Error> {
    crate::check_ranges(&[
        ("writes", spec.writes, 1, 1 << 40),
        ("hot_pages", spec.hot_pages, 1, 1 << 32),
        ("fill_writes", spec.fill_writes, 1, 1 << 20),
    ])?;
    let shares = [
        ("zipf", spec.zipf, 10.0),
        ("append_share", spec.append_share, 1.0),
        ("late_update", spec.late_update, 1.0),
        ("free_share", spec.free_share, 1.0),
    ];
    if let Some((f, v, _)) = shares.iter().find(|(_, v, hi)| !(*v >= 0.0 && v <= hi)) {
        return Err(Error::Usage(format!("{f}: {v} is out of range")));
    }
    crate::resources::prepare_out_dir("--out", &spec.out, spec.force)?;
    let id = Identity::now("frozen-synth", spec, spec.seed);
    let cfg = SynthConfig {
        writes: spec.writes,
        hot_pages: spec.hot_pages,
        zipf: spec.zipf,
        append_share: spec.append_share,
        fill_writes: u32::try_from(spec.fill_writes).expect("at most 2^20"),
        late_update: spec.late_update,
        free_share: spec.free_share,
        page_size: 4096,
        seed: spec.seed,
    };
    assert!(
        cfg.fill_writes >= 1 && cfg.hot_pages >= 1,
        "the checked ranges"
    );
    let file = spec.log();
    let mut w =
        LogWriter::create(&file, spec.force, 4096).map_err(|e| file_error("--out", &file, e))?;
    for r in Synth::new(cfg) {
        w.append(&r).map_err(|e| Error::io(&file, e))?;
    }
    let summary = w.finish().map_err(|e| Error::io(&file, e))?;
    assert!(
        summary.records >= summary.user + summary.free,
        "every write and free is a record"
    );
    Ok(Report {
        nowa: id,
        result: SynthResult { summary },
    })
}
