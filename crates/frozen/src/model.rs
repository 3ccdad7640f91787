//! A trained frozen-page model: what it reads (features, TWL, standardization), its
//! parameters, how it was trained and how well it did; JSON on disk; batched inference.
//!
//! Inference standardizes each window's raw features with the stored means and scales and
//! then, for the linear models, computes `p = w.z + b`: frozen iff `p > 0` (scikit-learn's
//! `predict`), probability `1 / (1 + exp(-p))`. A tree walks to a leaf: frozen is the leaf's
//! class, the probability its frozen share. A decision threshold `P` other than 0.5
//! ([`Model::threshold`]) judges frozen iff the probability is above `P` (linear: `p >
//! ln(P / (1 - P))`; tree: the leaf's class, moved by its frozen share); at 0.5 it is
//! exactly `predict`. [`Model::predict_into`] and [`Model::predict_proba_into`] reuse the
//! caller's output vector and a stack buffer: no allocation once the vector has grown to the
//! batch size.

use crate::classifiers::{walk, Node};
use crate::error::FrozenError;
use crate::features::MAX_FEATURES;
use crate::features::{
    extract_encoded, feature_count, Encoding, FeatureSet, HrWindow, Standardization, Twl,
};
use crate::metrics::Metrics;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Model file format version: 2 adds `encoding` (format-1 files load as [`Encoding::Raw`],
/// the only form they had). Later additions keep format 2, as a file without them loads
/// and predicts as before: the feature `ag` (such a file names it; older builds refuse it)
/// and `threshold` (absent: 0.5).
pub const MODEL_FORMAT: u32 = 2;

/// Which classifier a model is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ClassifierKind {
    /// Logistic regression by SGD, scikit-learn's `SGDClassifier(loss="log_loss")` (the paper's).
    Sgd,
    /// Plain logistic regression (L-BFGS, linfa-logistic).
    #[serde(alias = "lr")]
    #[value(alias = "lr")]
    Logreg,
    /// A depth-limited decision tree (linfa-trees).
    Tree,
}

impl ClassifierKind {
    /// The name used by `--classifier` and in model files.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Sgd => "sgd",
            Self::Logreg => "logreg",
            Self::Tree => "tree",
        }
    }
}

/// The fitted parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Params {
    /// `p = weights . z + intercept`.
    Linear {
        /// One weight per (standardized) feature.
        weights: Vec<f64>,
        /// Intercept.
        intercept: f64,
    },
    /// A decision tree over standardized features.
    Tree {
        /// Nodes in pre-order (root first).
        nodes: Vec<Node>,
    },
}

/// How a model was trained.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainingInfo {
    /// Records in the write log.
    pub log_records: u64,
    /// Samples taken from it.
    pub samples: u64,
    /// Training samples.
    pub train: u64,
    /// Frozen training samples.
    pub train_frozen: u64,
    /// Test samples.
    pub test: u64,
    /// Frozen test samples.
    pub test_frozen: u64,
    /// SGD epochs run (0 for other classifiers).
    pub epochs: u32,
    /// SGD stopped by its tolerance rule.
    pub converged: bool,
    /// Free-form settings (sample kinds, tail exclusion, tree depth, ...), for the record.
    pub settings: serde_json::Value,
}

/// Metrics on the training and the test split.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelMetrics {
    /// On the training split.
    pub train: Metrics,
    /// On the test split.
    pub test: Metrics,
}

/// A trained model (JSON on disk).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// [`MODEL_FORMAT`].
    pub format: u32,
    /// The classifier.
    pub classifier: ClassifierKind,
    /// HR fields read.
    pub features: FeatureSet,
    /// Records per sample.
    pub twl: Twl,
    /// How records become inputs (absent in format 1: raw).
    #[serde(default = "Encoding::format1")]
    pub encoding: Encoding,
    /// z-score parameters, one pair per feature.
    pub standardization: Standardization,
    /// Fitted parameters.
    pub params: Params,
    /// The seed of the split and the SGD shuffles.
    pub seed: u64,
    /// Training counts and settings.
    pub training: TrainingInfo,
    /// Train and test metrics.
    pub metrics: ModelMetrics,
    /// Decision threshold on the probability of frozen, in (0, 1) (absent: 0.5, scikit-learn's
    /// `predict`); set by `nowa frozen train --frozen-threshold`, overridden at deployment
    /// by [`Model::with_threshold`].
    #[serde(default = "default_threshold")]
    pub threshold: f64,
}

/// The paper's decision threshold (scikit-learn's `predict`).
pub const DEFAULT_THRESHOLD: f64 = 0.5;

fn default_threshold() -> f64 {
    DEFAULT_THRESHOLD
}

/// Whether `p` is a decision threshold: a probability strictly inside (0, 1).
#[must_use]
pub fn valid_threshold(p: f64) -> bool {
    p > 0.0 && p < 1.0
}

impl Model {
    /// Number of inputs.
    #[must_use]
    pub fn feature_count(&self) -> usize {
        feature_count(self.features, self.twl)
    }

    /// Checks that the parts fit together (lengths, finite values, tree shape).
    ///
    /// # Errors
    /// [`FrozenError::BadModel`] naming the first mismatch.
    pub fn validate(&self) -> Result<(), FrozenError> {
        let d = self.feature_count() as u64;
        let bad = |what, expected: u64, found: u64| {
            Err(FrozenError::BadModel {
                what,
                expected,
                found,
            })
        };
        if self.format != MODEL_FORMAT && self.format != 1 {
            return bad("format (1 or 2)", MODEL_FORMAT.into(), self.format.into());
        }
        if self.format == 1 && self.encoding != Encoding::Raw {
            return bad("raw encoding in a format-1 model", 1, 2);
        }
        if !valid_threshold(self.threshold) {
            return bad("a threshold inside (0, 1)", 1, 0);
        }
        let s = &self.standardization;
        if s.mean.len() as u64 != d || s.scale.len() as u64 != d {
            return bad(
                "standardization length",
                d,
                s.mean.len().min(s.scale.len()) as u64,
            );
        }
        let scales_ok = s.scale.iter().all(|v| v.is_finite() && *v > 0.0);
        if !scales_ok || s.mean.iter().any(|v| !v.is_finite()) {
            return bad("finite means and positive scales", 1, 0);
        }
        match &self.params {
            Params::Linear { weights, intercept } => {
                if weights.len() as u64 != d {
                    return bad("weights length", d, weights.len() as u64);
                }
                if !intercept.is_finite() || weights.iter().any(|w| !w.is_finite()) {
                    return bad("finite weights", 1, 0);
                }
            }
            Params::Tree { nodes } => validate_tree(nodes, d)?,
        }
        Ok(())
    }

    /// Reads and validates a model file.
    ///
    /// # Errors
    /// I/O, JSON and [`Model::validate`] errors.
    pub fn load(path: &Path) -> Result<Self, FrozenError> {
        let text = std::fs::read_to_string(path).map_err(|e| FrozenError::io(path, e))?;
        let m: Self = serde_json::from_str(&text)?;
        m.validate()?;
        Ok(m)
    }

    /// Writes the model as pretty JSON, refusing an existing file unless `force`.
    ///
    /// # Errors
    /// [`FrozenError::Exists`], I/O errors.
    pub fn save(&self, path: &Path, force: bool) -> Result<(), FrozenError> {
        self.validate()?;
        let text = serde_json::to_string_pretty(self)?;
        crate::write_new_file(path, force, text.as_bytes())
    }

    /// The same model deciding at threshold `p` (see the module docs).
    ///
    /// # Errors
    /// [`FrozenError::BadModel`] if `p` is not inside (0, 1).
    pub fn with_threshold(mut self, p: f64) -> Result<Self, FrozenError> {
        self.threshold = p;
        self.validate()?;
        Ok(self)
    }

    /// Decision of one standardized row at [`Model::threshold`] `P`: `w.z + b > ln(P / (1 -
    /// P))` for linear models (at 0.5: `> 0`, scikit-learn's `predict`); for a tree at 0.5
    /// the leaf's class, below 0.5 the class or a frozen share above `P`, above 0.5 the class
    /// and a frozen share above `P` (so a lower `P` never judges fewer pages frozen); with
    /// `proba`, also the probability of frozen (the logistic of the score, or the leaf's
    /// frozen share), else NaN (saves an `exp`).
    fn decide(&self, z: &[f64], proba: bool, cut: f64) -> (bool, f64) {
        let t = self.threshold;
        match &self.params {
            Params::Linear { weights, intercept } => {
                let mut p = 0.0;
                for (w, v) in weights.iter().zip(z) {
                    p += w * v;
                }
                p += intercept;
                let prob = if proba {
                    1.0 / (1.0 + (-p).exp())
                } else {
                    f64::NAN
                };
                (p > cut, prob)
            }
            Params::Tree { nodes } => match &nodes[walk(nodes, z)] {
                Node::Leaf { frozen, proba } => {
                    let f = if t < DEFAULT_THRESHOLD {
                        *frozen || *proba > t
                    } else if t > DEFAULT_THRESHOLD {
                        *frozen && *proba > t
                    } else {
                        *frozen
                    };
                    (f, *proba)
                }
                Node::Split { .. } => unreachable!("walk ends at a leaf"),
            },
        }
    }

    /// The linear score's cut: `ln(P / (1 - P))`, exactly 0 at 0.5 (sklearn's `p > 0`).
    fn cut(&self) -> f64 {
        let t = self.threshold;
        (t / (1.0 - t)).ln()
    }

    fn decide_window_inner(&self, w: &HrWindow, proba: bool, cut: f64) -> (bool, f64) {
        let d = self.feature_count();
        let mut buf = [0.0f64; MAX_FEATURES];
        let z = &mut buf[..d];
        extract_encoded(w, self.features, self.twl, self.encoding, z);
        self.standardization.apply(z);
        self.decide(z, proba, cut)
    }

    /// (frozen, probability) of a row already standardized.
    ///
    /// # Panics
    /// If the row length is not [`Model::feature_count`].
    #[must_use]
    pub fn decide_standardized(&self, z: &[f64]) -> (bool, f64) {
        assert_eq!(z.len(), self.feature_count(), "row length");
        self.decide(z, true, self.cut())
    }

    /// (frozen, probability) of one window.
    #[must_use]
    pub fn decide_window(&self, w: &HrWindow) -> (bool, f64) {
        self.decide_window_inner(w, true, self.cut())
    }

    /// Frozen or not for each window, into `out` (cleared first; no allocation once `out`
    /// holds `windows.len()` elements).
    ///
    /// # Panics
    /// If a window's features do not fit the model (the model was validated).
    pub fn predict_into(&self, windows: &[HrWindow], out: &mut Vec<bool>) {
        out.clear();
        let cut = self.cut();
        out.extend(
            windows
                .iter()
                .map(|w| self.decide_window_inner(w, false, cut).0),
        );
        assert_eq!(out.len(), windows.len());
    }

    /// The probability of being frozen for each window, into `out` (as `predict_into`).
    ///
    /// # Panics
    /// If a window's features do not fit the model (the model was validated).
    pub fn predict_proba_into(&self, windows: &[HrWindow], out: &mut Vec<f64>) {
        out.clear();
        out.extend(windows.iter().map(|w| self.decide_window(w).1));
        assert_eq!(out.len(), windows.len());
    }

    /// Frozen or not for each window.
    #[must_use]
    pub fn predict_batch(&self, windows: &[HrWindow]) -> Vec<bool> {
        let mut out = Vec::with_capacity(windows.len());
        self.predict_into(windows, &mut out);
        out
    }

    /// The probability of being frozen for each window.
    #[must_use]
    pub fn predict_proba_batch(&self, windows: &[HrWindow]) -> Vec<f64> {
        let mut out = Vec::with_capacity(windows.len());
        self.predict_proba_into(windows, &mut out);
        out
    }
}

fn validate_tree(nodes: &[Node], d: u64) -> Result<(), FrozenError> {
    let bad = |what, expected: u64, found: u64| {
        Err(FrozenError::BadModel {
            what,
            expected,
            found,
        })
    };
    if nodes.is_empty() {
        return bad("tree nodes", 1, 0);
    }
    let n = nodes.len() as u64;
    for (i, node) in nodes.iter().enumerate() {
        match node {
            Node::Split {
                feature,
                threshold,
                left,
                right,
            } => {
                if u64::from(*feature) >= d {
                    return bad("tree feature index", d, (*feature).into());
                }
                let (l, r) = (u64::from(*left), u64::from(*right));
                if l <= i as u64 || r <= i as u64 || l >= n || r >= n || !threshold.is_finite() {
                    return bad("tree child after its parent", i as u64 + 1, l.min(r));
                }
            }
            Node::Leaf { proba, .. } => {
                if !(0.0..=1.0).contains(proba) {
                    return bad("leaf probability in [0, 1]", 1, 0);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hotness::HotnessRecord;

    fn linear(weights: Vec<f64>, intercept: f64) -> Model {
        let d = weights.len();
        Model {
            format: MODEL_FORMAT,
            classifier: ClassifierKind::Sgd,
            features: "vd".parse().unwrap(),
            twl: Twl::new(u8::try_from(d).unwrap()).unwrap(),
            encoding: Encoding::Raw,
            standardization: Standardization {
                mean: vec![1000.0; d],
                scale: vec![500.0; d],
            },
            params: Params::Linear { weights, intercept },
            seed: 1,
            training: TrainingInfo::default(),
            metrics: ModelMetrics::default(),
            threshold: DEFAULT_THRESHOLD,
        }
    }

    #[test]
    fn linear_inference_by_hand() {
        let m = linear(vec![2.0, -1.0], 0.5);
        m.validate().unwrap();
        let hr = |vd| HotnessRecord::new(1, vd, 0.0, 0.0, 0, 0);
        // z = ((2000 - 1000) / 500, (1000 - 1000) / 500) = (2, 0): p = 4.5.
        let a = HrWindow::from_pair(hr(2000), hr(1000));
        // z = (-2, 2): p = -4 - 2 + 0.5 = -5.5.
        let b = HrWindow::from_pair(hr(0), hr(2000));
        assert_eq!(m.predict_batch(&[a, b]), [true, false]);
        let p = m.predict_proba_batch(&[a, b]);
        assert!((p[0] - 1.0 / (1.0 + (-4.5f64).exp())).abs() < 1e-15);
        assert!((p[1] - 1.0 / (1.0 + 5.5f64.exp())).abs() < 1e-15);
        let mut out = Vec::with_capacity(2);
        let ptr = out.as_ptr();
        m.predict_into(&[b, a], &mut out);
        assert_eq!((out, ptr), (vec![false, true], ptr), "no reallocation");
    }

    #[test]
    fn json_round_trip_and_validation() {
        let m = linear(vec![0.25, 1.0], -0.125);
        let text = serde_json::to_string(&m).unwrap();
        let back: Model = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
        let mut short = m.clone();
        short.params = Params::Linear {
            weights: vec![1.0],
            intercept: 0.0,
        };
        assert!(matches!(
            short.validate(),
            Err(FrozenError::BadModel {
                what: "weights length",
                ..
            })
        ));
        let mut zero_scale = m.clone();
        zero_scale.standardization.scale[1] = 0.0;
        assert!(zero_scale.validate().is_err());
        let mut cyclic = m;
        cyclic.params = Params::Tree {
            nodes: vec![Node::Split {
                feature: 0,
                threshold: 0.0,
                left: 0,
                right: 0,
            }],
        };
        assert!(cyclic.validate().is_err(), "a child must follow its parent");
    }

    #[test]
    fn format_1_files_load_as_raw_and_others_are_refused() {
        let m = linear(vec![0.25, 1.0], -0.125);
        let mut v = serde_json::to_value(&m).unwrap();
        v["format"] = 1.into();
        v.as_object_mut().unwrap().remove("encoding");
        let old: Model = serde_json::from_value(v.clone()).unwrap();
        old.validate().unwrap();
        assert_eq!(
            old.encoding,
            Encoding::Raw,
            "format 1 had the absolute WT only"
        );
        v["encoding"] = "diff".into();
        let mixed: Model = serde_json::from_value(v.clone()).unwrap();
        assert!(
            mixed.validate().is_err(),
            "format 1 never held a diff model"
        );
        v["format"] = 3.into();
        let future: Model = serde_json::from_value(v).unwrap();
        let e = future.validate().unwrap_err().to_string();
        assert!(e.contains("format"), "{e}");
        let mut diff = m;
        diff.encoding = Encoding::Diff;
        let text = serde_json::to_string(&diff).unwrap();
        assert!(text.contains(r#""encoding":"diff""#), "{text}");
        assert_eq!(serde_json::from_str::<Model>(&text).unwrap(), diff);
    }

    /// A format-2 file as the previous build wrote it (no `threshold`): loads at 0.5 and
    /// judges exactly as sklearn's `predict` (`w.z + b > 0`), the score of each window
    /// computed by hand.
    #[test]
    fn old_format_2_file_loads_and_predicts_unchanged() {
        let text = r#"{"format":2,"classifier":"sgd","features":["vd"],"twl":2,
            "encoding":"raw","standardization":{"mean":[1000.0,1000.0],"scale":[500.0,500.0]},
            "params":{"kind":"linear","weights":[2.0,-1.0],"intercept":-1.0},"seed":1,
            "training":{"log_records":0,"samples":0,"train":0,"train_frozen":0,"test":0,
            "test_frozen":0,"epochs":0,"converged":true,"settings":null},
            "metrics":{"train":{"confusion":{"tp":0,"tn":0,"fp":0,"fn":0},"accuracy":null,
            "recall":null,"fpr":null,"precision":null},"test":{"confusion":{"tp":0,"tn":0,
            "fp":0,"fn":0},"accuracy":null,"recall":null,"fpr":null,"precision":null}}}"#;
        let m: Model = serde_json::from_str(text).unwrap();
        m.validate().unwrap();
        assert_eq!(m.threshold, DEFAULT_THRESHOLD);
        let hr = |vd: u32| HotnessRecord::new(1, u64::from(vd), 0.0, 0.0, 0, 0);
        // (VD current, VD last, 2 z0 - z1 - 1 > 0): scores 0, 0.2, 1, -3.
        let cases = [
            (1250u32, 1000u32, false),
            (1300, 1000, true),
            (1000, 0, true),
            (0, 0, false),
        ];
        for (cur, last, want) in cases {
            let w = HrWindow::from_pair(hr(cur), hr(last));
            let z0 = (f64::from(cur) - 1000.0) / 500.0;
            let z1 = (f64::from(last) - 1000.0) / 500.0;
            assert_eq!((2.0 * z0 - z1 - 1.0 > 0.0), want, "{cur} {last}");
            assert_eq!(m.predict_batch(&[w]), [want], "{cur} {last}");
            // Judged at any time: a model without `ag` ignores the age.
            assert_eq!(m.predict_batch(&[w.at(1_000_000)]), [want]);
        }
        let back: Model = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m, "saved again with its threshold");
    }

    fn tree() -> Model {
        let mut m = linear(vec![0.0], 0.0);
        m.twl = Twl::new(1).unwrap();
        m.standardization = Standardization {
            mean: vec![0.0],
            scale: vec![1.0],
        };
        // VD < 1000: a leaf of frozen share 0.2 (class not frozen); < 2000: 0.45 (not
        // frozen); < 3000: 0.6 (frozen); else 0.9 (frozen).
        let leaf = |frozen, proba| Node::Leaf { frozen, proba };
        let split = |threshold, left, right| Node::Split {
            feature: 0,
            threshold,
            left,
            right,
        };
        m.params = Params::Tree {
            nodes: vec![
                split(2000.0, 1, 4),
                split(1000.0, 2, 3),
                leaf(false, 0.2),
                leaf(false, 0.45),
                split(3000.0, 5, 6),
                leaf(true, 0.6),
                leaf(true, 0.9),
            ],
        };
        m.classifier = ClassifierKind::Tree;
        m.validate().unwrap();
        m
    }

    /// P = 0.5 is `predict` (linear: the sign of the score; tree: the leaf's class); a lower
    /// P never judges fewer windows frozen, a higher never more; out-of-range P refused.
    #[test]
    fn threshold_semantics() {
        let hr = |vd| HotnessRecord::new(1, vd, 0.0, 0.0, 0, 0);
        let windows: Vec<HrWindow> = (0..80)
            .map(|i| HrWindow::from_pair(hr(i * 50), hr(4000 - i * 50)))
            .collect();
        let lin = linear(vec![2.0, -1.0], 0.5);
        let one: Vec<HrWindow> = windows
            .iter()
            .map(|w| HrWindow::from_pair(w.0[0], HotnessRecord::NONE))
            .collect();
        for (m, ws) in [(lin, &windows), (tree(), &one)] {
            let base = m.predict_batch(ws);
            let half = m.clone().with_threshold(0.5).unwrap();
            assert_eq!(half.predict_batch(ws), base, "0.5 = predict");
            let probs = m.predict_proba_batch(ws);
            let mut prev: Option<Vec<bool>> = None;
            for p in [0.05, 0.2, 0.3, 0.45, 0.5, 0.55, 0.7, 0.9, 0.95] {
                let v = m.clone().with_threshold(p).unwrap().predict_batch(ws);
                if let Some(prev) = &prev {
                    for (a, b) in prev.iter().zip(&v) {
                        assert!(*a || !*b, "P {p} judged a window frozen a lower P did not");
                    }
                }
                if m.classifier != ClassifierKind::Tree {
                    for (f, q) in v.iter().zip(&probs) {
                        assert_eq!(*f, *q > p, "linear: probability above P");
                    }
                }
                prev = Some(v);
            }
            assert!(m.clone().with_threshold(0.0).is_err());
            assert!(m.clone().with_threshold(1.0).is_err());
            assert!(m.clone().with_threshold(f64::NAN).is_err());
        }
        let t = tree();
        let at = |p: f64, vd| {
            let w = HrWindow::from_pair(hr(vd), HotnessRecord::NONE);
            t.clone().with_threshold(p).unwrap().predict_batch(&[w])[0]
        };
        assert_eq!([at(0.5, 1500), at(0.5, 2500)], [false, true], "the class");
        assert_eq!(
            [at(0.4, 1500), at(0.4, 500)],
            [true, false],
            "share 0.45 > 0.4"
        );
        assert_eq!(
            [at(0.7, 2500), at(0.7, 3500)],
            [false, true],
            "share 0.6 < 0.7"
        );
    }
}
