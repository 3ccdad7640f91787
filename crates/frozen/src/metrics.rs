//! Classification metrics with frozen = positive (the paper's §5.1).

use serde::{Deserialize, Serialize};

/// A confusion matrix and the paper's three metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    /// Frozen, predicted frozen.
    pub tp: u64,
    /// Not frozen, predicted not frozen.
    pub tn: u64,
    /// Not frozen, predicted frozen.
    pub fp: u64,
    /// Frozen, predicted not frozen.
    #[serde(rename = "fn")]
    pub fn_: u64,
}

/// `x` as a float (counts far below 2^53).
#[expect(clippy::cast_precision_loss, reason = "counts far below 2^53")]
pub(crate) fn as_f64(x: u64) -> f64 {
    x as f64
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    #[expect(clippy::cast_precision_loss, reason = "counts as a ratio")]
    (b > 0).then(|| a as f64 / b as f64)
}

impl Confusion {
    /// Counts one prediction.
    pub fn add(&mut self, frozen: bool, predicted: bool) {
        match (frozen, predicted) {
            (true, true) => self.tp += 1,
            (false, false) => self.tn += 1,
            (false, true) => self.fp += 1,
            (true, false) => self.fn_ += 1,
        }
    }

    /// The matrix of `predicted` against `truth`.
    ///
    /// # Panics
    /// If the lengths differ.
    #[must_use]
    pub fn of(truth: &[bool], predicted: &[bool]) -> Self {
        assert_eq!(truth.len(), predicted.len(), "one prediction per sample");
        let mut c = Self::default();
        for (&t, &p) in truth.iter().zip(predicted) {
            c.add(t, p);
        }
        assert_eq!(c.total(), truth.len() as u64);
        c
    }

    /// Samples counted.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.tp + self.tn + self.fp + self.fn_
    }

    /// (TP + TN) / all.
    #[must_use]
    pub fn accuracy(&self) -> Option<f64> {
        ratio(self.tp + self.tn, self.total())
    }

    /// TP / (TP + FN).
    #[must_use]
    pub fn recall(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fn_)
    }

    /// FP / (FP + TN).
    #[must_use]
    pub fn fpr(&self) -> Option<f64> {
        ratio(self.fp, self.fp + self.tn)
    }

    /// TP / (TP + FP).
    #[must_use]
    pub fn precision(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fp)
    }

    /// The metrics as stored in a model file.
    #[must_use]
    pub fn metrics(&self) -> Metrics {
        Metrics {
            confusion: *self,
            accuracy: self.accuracy(),
            recall: self.recall(),
            fpr: self.fpr(),
            precision: self.precision(),
        }
    }
}

/// A confusion matrix with its metrics (`null` where a denominator is 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// The counts.
    pub confusion: Confusion,
    /// (TP + TN) / all.
    pub accuracy: Option<f64>,
    /// TP / (TP + FN).
    pub recall: Option<f64>,
    /// FP / (FP + TN).
    pub fpr: Option<f64>,
    /// TP / (TP + FP).
    pub precision: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_by_hand() {
        let truth = [true, true, true, false, false, false, false, true];
        let pred = [true, true, false, false, true, false, false, true];
        let c = Confusion::of(&truth, &pred);
        assert_eq!((c.tp, c.tn, c.fp, c.fn_), (3, 3, 1, 1));
        assert_eq!(c.accuracy(), Some(0.75));
        assert_eq!(c.recall(), Some(0.75));
        assert_eq!(c.fpr(), Some(0.25));
        assert_eq!(Confusion::default().accuracy(), None);
        let json = serde_json::to_string(&c.metrics()).unwrap();
        assert!(json.contains(r#""fn":1"#), "{json}");
    }
}
