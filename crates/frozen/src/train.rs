//! Offline training: samples -> seeded split -> standardization fitted on the training split
//! -> classifier -> metrics on both splits -> [`Model`].
//!
//! Seeds: one `seed` drives everything. The split shuffles with `SmallRng::seed_from_u64(seed)`;
//! the optional subsample with `SmallRng::seed_from_u64(mix64(seed))`; SGD's 32-bit shuffle
//! seed is [`sgd_seed`]`(seed)`.

use crate::classifiers::{fit_logreg, fit_tree};
use crate::dataset::{split, Dataset, SampleSpec};
use crate::error::FrozenError;
use crate::features::Standardization;
use crate::metrics::Confusion;
use crate::model::{ClassifierKind, Model, ModelMetrics, Params, TrainingInfo, MODEL_FORMAT};
use crate::sgd::{self, SgdParams};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Training settings.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    /// Classifier.
    pub classifier: ClassifierKind,
    /// Seed of the split, the subsample and SGD's shuffles.
    pub seed: u64,
    /// Share of samples held out for testing (0.25: the paper's 3:1).
    pub test_fraction: f64,
    /// Train and test on at most this many samples (a seeded uniform subsample).
    pub max_samples: Option<usize>,
    /// Depth limit of the tree classifier.
    pub tree_depth: usize,
    /// SGD hyper-parameters.
    pub sgd: SgdParams,
    /// Decision threshold stored in the model; its metrics are at it (0.5: `predict`).
    pub threshold: f64,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            classifier: ClassifierKind::Sgd,
            seed: 42,
            test_fraction: 0.25,
            max_samples: None,
            tree_depth: 8,
            sgd: SgdParams::default(),
            threshold: crate::model::DEFAULT_THRESHOLD,
        }
    }
}

/// Samples the tree classifier trains on by default (a seeded subsample above it): linfa's
/// CART scans every sample at every node, so millions of samples take minutes.
pub const TREE_SAMPLE_CAP: usize = 500_000;

/// SGD's 32-bit shuffle seed for a run seed (the low 32 bits of `mix64(seed ^ 0x5347_4421)`).
///
/// # Panics
/// Never (the value is masked to 32 bits).
#[must_use]
pub fn sgd_seed(seed: u64) -> u32 {
    let m = nowa_units::mix64(seed ^ 0x5347_4421);
    u32::try_from(m & 0xFFFF_FFFF).expect("masked to 32 bits")
}

/// Standardized copies of `rows` of `data`.
fn standardized(data: &Dataset, rows: &[usize], s: &Standardization) -> Dataset {
    let mut out = data.select(rows);
    for row in out.x.chunks_exact_mut(data.d) {
        s.apply(row);
    }
    out
}

fn check_two_classes(y: &[bool]) -> Result<(), FrozenError> {
    let positives = y.iter().filter(|&&v| v).count() as u64;
    let samples = y.len() as u64;
    if positives == 0 || positives == samples {
        return Err(FrozenError::OneClass { positives, samples });
    }
    Ok(())
}

/// Fits the configured classifier on standardized training data; returns the parameters,
/// epochs and whether SGD converged.
///
/// # Errors
/// The classifiers' errors.
pub fn fit_params(train: &Dataset, cfg: &TrainConfig) -> Result<(Params, u32, bool), FrozenError> {
    check_two_classes(&train.y)?;
    Ok(match cfg.classifier {
        ClassifierKind::Sgd => {
            let f = sgd::fit(
                &train.x,
                &train.y,
                train.d,
                &cfg.sgd,
                sgd_seed(cfg.seed),
                None,
            )?;
            let p = Params::Linear {
                weights: f.weights,
                intercept: f.intercept,
            };
            (p, f.epochs, f.converged)
        }
        ClassifierKind::Logreg => {
            let (weights, intercept) = fit_logreg(&train.x, &train.y, train.d)?;
            (Params::Linear { weights, intercept }, 0, true)
        }
        ClassifierKind::Tree => {
            let nodes = fit_tree(&train.x, &train.y, train.d, cfg.tree_depth)?;
            (Params::Tree { nodes }, 0, true)
        }
    })
}

/// The confusion matrix of `model` on standardized samples.
///
/// # Panics
/// If `data`'s width is not the model's.
#[must_use]
pub fn evaluate(model: &Model, data: &Dataset) -> Confusion {
    let mut c = Confusion::default();
    for (row, &y) in data.x.chunks_exact(data.d).zip(&data.y) {
        c.add(y, model.decide_standardized(row).0);
    }
    assert_eq!(c.total(), data.len() as u64);
    c
}

/// The confusion matrix of `model` on raw (not standardized) samples, e.g. all samples of
/// another run's log ("trained on one run, deployed in the next").
///
/// # Panics
/// If `data`'s width is not the model's.
#[must_use]
pub fn evaluate_raw(model: &Model, data: &Dataset) -> Confusion {
    assert_eq!(data.d, model.feature_count(), "the model's inputs");
    let rows: Vec<usize> = (0..data.len()).collect();
    evaluate(model, &standardized(data, &rows, &model.standardization))
}

/// Trains a model on `data` (raw samples made with `spec` from a log of `log_records`
/// records).
///
/// # Errors
/// [`FrozenError::OneClass`], [`FrozenError::TooFewSamples`], [`SampleSpec::check`]'s, a
/// threshold outside (0, 1) ([`FrozenError::BadModel`]), the classifiers' errors.
pub fn train(
    data: &Dataset,
    spec: &SampleSpec,
    cfg: &TrainConfig,
    log_records: u64,
) -> Result<Model, FrozenError> {
    spec.check()?;
    check_two_classes(&data.y)?;
    let (train_rows, test_rows) = match cfg.max_samples {
        Some(cap) if cap < data.len() => {
            let mut pick: Vec<usize> = (0..data.len()).collect();
            pick.shuffle(&mut SmallRng::seed_from_u64(nowa_units::mix64(cfg.seed)));
            pick.truncate(cap);
            let (a, b) = split(cap, cfg.test_fraction, cfg.seed)?;
            (
                a.iter().map(|&i| pick[i]).collect(),
                b.iter().map(|&i| pick[i]).collect(),
            )
        }
        _ => split(data.len(), cfg.test_fraction, cfg.seed)?,
    };
    let (train_rows, test_rows): (Vec<usize>, Vec<usize>) = (train_rows, test_rows);
    let s = Standardization::fit(&data.x, data.d, &train_rows);
    let train_set = standardized(data, &train_rows, &s);
    let test_set = standardized(data, &test_rows, &s);
    let (params, epochs, converged) = fit_params(&train_set, cfg)?;
    let mut model = Model {
        format: MODEL_FORMAT,
        classifier: cfg.classifier,
        features: spec.features,
        twl: spec.twl,
        encoding: spec.encoding,
        standardization: s,
        params,
        seed: cfg.seed,
        training: TrainingInfo {
            log_records,
            samples: data.len() as u64,
            train: train_set.len() as u64,
            train_frozen: train_set.positives(),
            test: test_set.len() as u64,
            test_frozen: test_set.positives(),
            epochs,
            converged,
            settings: serde_json::json!({
                "sample_kinds": spec.kinds,
                "exclude_tail": spec.exclude_tail,
                "encoding": spec.encoding,
                "test_fraction": cfg.test_fraction,
                "max_samples": cfg.max_samples,
                "tree_depth": cfg.tree_depth,
                "sgd": cfg.sgd,
                "sgd_seed": sgd_seed(cfg.seed),
            }),
        },
        metrics: ModelMetrics::default(),
        threshold: cfg.threshold,
    };
    model.validate()?;
    model.metrics = ModelMetrics {
        train: evaluate(&model, &train_set).metrics(),
        test: evaluate(&model, &test_set).metrics(),
    };
    Ok(model)
}
