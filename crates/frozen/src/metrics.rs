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

pub(crate) use nowa_units::num::f64_of as as_f64;

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

/// Pearson's correlation coefficient of two streams, accumulated in one pass with centered
/// updates (Welford's), so large values (WT in ticks) lose no precision.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pearson {
    n: u64,
    mean_x: f64,
    mean_y: f64,
    m2x: f64,
    m2y: f64,
    cxy: f64,
}

impl Pearson {
    /// Adds the pair `(x, y)`.
    ///
    /// # Panics
    /// If either value is not finite.
    pub fn add(&mut self, x: f64, y: f64) {
        assert!(x.is_finite() && y.is_finite(), "finite pairs only");
        self.n += 1;
        let n = as_f64(self.n);
        let dx = x - self.mean_x;
        self.mean_x += dx / n;
        let dy = y - self.mean_y;
        self.mean_y += dy / n;
        self.m2x += dx * (x - self.mean_x);
        self.m2y += dy * (y - self.mean_y);
        self.cxy += dx * (y - self.mean_y);
        assert!(self.m2x >= 0.0 && self.m2y >= 0.0, "sums of squares");
    }

    /// Pairs added.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Mean of the `x` values (`None` before the first pair).
    #[must_use]
    pub fn mean_x(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean_x)
    }

    /// The coefficient in [-1, 1], or `None` if either stream is constant (or empty).
    #[must_use]
    pub fn r(&self) -> Option<f64> {
        let d = (self.m2x * self.m2y).sqrt();
        (d > 0.0 && d.is_finite()).then(|| (self.cxy / d).clamp(-1.0, 1.0))
    }
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

    #[test]
    fn pearson_matches_the_two_pass_formula() {
        let x = [1.0e6, 2.0e6 + 3.0, 3.0e6, 4.0e6 - 7.0, 5.0e6];
        let y = [0.0, 1.0, 0.0, 1.0, 1.0];
        let mut p = Pearson::default();
        x.iter().zip(&y).for_each(|(a, b)| p.add(*a, *b));
        let mx = x.iter().sum::<f64>() / 5.0;
        let my = y.iter().sum::<f64>() / 5.0;
        let sxy: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
        let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
        let syy: f64 = y.iter().map(|b| (b - my) * (b - my)).sum();
        let want = sxy / (sxx * syy).sqrt();
        assert!(
            (p.r().unwrap() - want).abs() < 1e-12,
            "{:?} vs {want}",
            p.r()
        );
        assert_eq!(p.count(), 5);
        let mut exact = Pearson::default();
        (0..10).for_each(|i| exact.add(f64::from(i), f64::from(3 * i + 1)));
        assert!((exact.r().unwrap() - 1.0).abs() < 1e-12);
        let mut flat = Pearson::default();
        (0..10).for_each(|i| flat.add(f64::from(i), 2.0));
        assert_eq!(flat.r(), None, "a constant label has no correlation");
    }
}
