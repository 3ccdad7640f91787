//! Logistic regression by SGD, operation for operation as scikit-learn 1.9's
//! `SGDClassifier(loss="log_loss")` with its defaults on dense float64 data:
//! `_plain_sgd` (sklearn/linear_model/_sgd_fast.pyx.tp), its `WeightVector`
//! (utils/_weight_vector.pyx.tp), `SequentialDataset.shuffle` (utils/_seq_dataset.pyx.tp)
//! with `our_rand_r` (utils/_random.pxd) and `CyHalfBinomialLoss` (_loss/_loss.pyx.tp).
//!
//! - labels 0/1 (frozen = 1), weights and intercept start at 0, `t` at 1;
//! - learning rate "optimal": `typw = sqrt(1 / sqrt(alpha))`,
//!   `eta0 = typw / max(1, dloss(y=1, p=-typw))`, `t0 = 1 / (eta0 alpha)`,
//!   `eta = 1 / (alpha (t0 + t - 1))`;
//! - per sample: `p = w.x + b`; objective += loss(y, p) + alpha 0.5 |w|^2 (before the
//!   update); `update = -eta clip(dloss)`; `w *= max(0, 1 - eta alpha)` (lazily, through a
//!   scale factor reset below 1e-9); `w += update x`; `b += update` (intercept decay 1: dense);
//! - each epoch first shuffles the index array in place with a copy of the same 32-bit seed
//!   (Fisher-Yates with an xorshift32, as sklearn: the same swap sequence every epoch,
//!   applied to the previous epoch's order);
//! - stop after `n_iter_no_change` epochs whose mean objective did not fall below the best
//!   minus `tol`, or after `max_iter` epochs.
//!
//! The seed here is the 32-bit value sklearn passes to `_plain_sgd`; sklearn draws it from
//! `random_state` (docs/sepfrozen.md shows how to reproduce a given `random_state`).

use crate::error::FrozenError;
use serde::{Deserialize, Serialize};

/// sklearn's `MAX_DLOSS`.
const MAX_DLOSS: f64 = 1e12;
/// sklearn's `reset_wscale` threshold for float64.
const WSCALE_THRESHOLD: f64 = 1e-9;
/// sklearn's `RAND_R_MAX`.
const RAND_R_MAX: u32 = 0x7FFF_FFFF;

/// Hyper-parameters (sklearn's defaults by [`Default`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SgdParams {
    /// L2 regularization strength (`alpha`, 1e-4).
    pub alpha: f64,
    /// Most epochs (`max_iter`, 1000).
    pub max_iter: u32,
    /// Stopping tolerance (`tol`, 1e-3; `None` = run all `max_iter` epochs).
    pub tol: Option<f64>,
    /// Epochs without improvement before stopping (`n_iter_no_change`, 5).
    pub n_iter_no_change: u32,
    /// Fit an intercept (`fit_intercept`, true).
    pub fit_intercept: bool,
    /// Shuffle every epoch (`shuffle`, true).
    pub shuffle: bool,
}

impl Default for SgdParams {
    fn default() -> Self {
        Self {
            alpha: 1e-4,
            max_iter: 1000,
            tol: Some(1e-3),
            n_iter_no_change: 5,
            fit_intercept: true,
            shuffle: true,
        }
    }
}

/// A fitted (or warm-start) linear model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SgdFit {
    /// Weights, one per feature.
    pub weights: Vec<f64>,
    /// Intercept.
    pub intercept: f64,
    /// Epochs run.
    pub epochs: u32,
    /// Stopped by the tolerance rule (not by `max_iter`).
    pub converged: bool,
    /// sklearn's `t_` after the fit: 1 + samples seen (the learning-rate clock).
    pub t: f64,
}

/// sklearn's `our_rand_r`: xorshift32, a 0 state becomes 1, result modulo 2^31.
fn our_rand_r(state: &mut u32) -> u32 {
    if *state == 0 {
        *state = 1;
    }
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    *state % (RAND_R_MAX + 1)
}

/// sklearn's `SequentialDataset.shuffle(seed)`: Fisher-Yates on `index` from a copy of `seed`.
///
/// # Panics
/// If `index` has 2^32 or more entries.
pub fn sklearn_shuffle(index: &mut [u32], seed: u32) {
    let mut s = seed;
    let n = u32::try_from(index.len()).expect("sklearn indexes samples with a C int");
    for i in 0..n.saturating_sub(1) {
        let j = i + our_rand_r(&mut s) % (n - i);
        index.swap(i as usize, j as usize);
    }
}

/// `CyHalfBinomialLoss.cy_gradient(y, p)`: `expit(p) - y`, sklearn's branches.
fn half_binomial_gradient(y: f64, p: f64) -> f64 {
    if p > -37.0 {
        let e = (-p).exp();
        ((1.0 - y) - y * e) / (1.0 + e)
    } else {
        p.exp() - y
    }
}

/// `CyHalfBinomialLoss.cy_loss(y, p)`: `log1pexp(p) - y p`, sklearn's branches.
fn half_binomial_loss(y: f64, p: f64) -> f64 {
    let log1pexp = if p <= -37.0 {
        p.exp()
    } else if p <= -2.0 {
        p.exp().ln_1p()
    } else if p <= 18.0 {
        (1.0 + p.exp()).ln()
    } else if p <= 33.3 {
        p + (-p).exp()
    } else {
        p
    };
    log1pexp - y * p
}

/// sklearn's `WeightVector` (no averaging): `w = wscale * data`, with the squared norm kept
/// as sklearn keeps it (it enters the stopping objective).
struct WeightVector {
    data: Vec<f64>,
    wscale: f64,
    sq_norm: f64,
}

impl WeightVector {
    fn new(w: Vec<f64>) -> Self {
        let sq_norm = w.iter().map(|v| v * v).sum();
        Self {
            data: w,
            wscale: 1.0,
            sq_norm,
        }
    }

    fn dot(&self, x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (w, v) in self.data.iter().zip(x) {
            s += w * v;
        }
        s * self.wscale
    }

    fn scale(&mut self, c: f64) {
        self.wscale *= c;
        self.sq_norm *= c * c;
        if self.wscale < WSCALE_THRESHOLD {
            self.reset_wscale();
        }
    }

    fn reset_wscale(&mut self) {
        for w in &mut self.data {
            *w *= self.wscale;
        }
        self.wscale = 1.0;
    }

    fn add(&mut self, x: &[f64], c: f64) {
        let mut acc = 0.0;
        let wscale = self.wscale;
        for (w, v) in self.data.iter_mut().zip(x) {
            *w += v * (c / wscale);
            acc += *w * *w;
        }
        self.sq_norm = acc * (wscale * wscale);
    }
}

/// `optimal_init` of the "optimal" learning rate: `1 / (eta0 alpha)` with sklearn's `eta0`
/// heuristic `typw / max(1, dloss(y=1, p=-typw))`, `typw = sqrt(1 / sqrt(alpha))`.
fn optimal_init(alpha: f64) -> f64 {
    let typw = (1.0 / alpha.sqrt()).sqrt();
    let dl = half_binomial_gradient(1.0, -typw);
    let initial_eta0 = typw / if dl > 1.0 { dl } else { 1.0 };
    1.0 / (initial_eta0 * alpha)
}

/// The state one epoch updates.
struct Sgd<'a> {
    x: &'a [f64],
    y: &'a [bool],
    d: usize,
    alpha: f64,
    fit_intercept: bool,
    optimal_init: f64,
    w: WeightVector,
    intercept: f64,
    t: f64,
}

impl Sgd<'_> {
    /// One pass over `index`; returns the summed objective (loss + alpha/2 |w|^2 per sample,
    /// each before its update).
    fn epoch(&mut self, index: &[u32]) -> f64 {
        let (d, alpha) = (self.d, self.alpha);
        let mut objective_sum = 0.0;
        for &k in index {
            let k = k as usize;
            let row = &self.x[k * d..(k + 1) * d];
            let yk = if self.y[k] { 1.0 } else { 0.0 };
            let p = self.w.dot(row) + self.intercept;
            let eta = 1.0 / (alpha * (self.optimal_init + self.t - 1.0));
            objective_sum += half_binomial_loss(yk, p);
            let norm = self.w.sq_norm.sqrt();
            objective_sum += alpha * (0.5 * (norm * norm));
            let dloss = half_binomial_gradient(yk, p).clamp(-MAX_DLOSS, MAX_DLOSS);
            let update = -eta * dloss;
            let c = 1.0 - eta * alpha;
            self.w.scale(if c > 0.0 { c } else { 0.0 });
            if update != 0.0 {
                self.w.add(row, update);
                if self.fit_intercept {
                    self.intercept += update;
                }
            }
            self.t += 1.0;
        }
        objective_sum
    }

    fn finite(&self) -> bool {
        self.intercept.is_finite() && self.w.data.iter().all(|v| v.is_finite())
    }
}

/// Fits logistic regression by SGD on the rows of `x` (row-major, `d` columns) in the order
/// given, labels `y` (true = 1). `warm`: start weights, intercept and `t` (sklearn's
/// `coef_init`/`intercept_init` with `t_`, as `partial_fit` continues); `None` = a fresh fit.
///
/// # Errors
/// [`FrozenError::Diverged`] if the weights become non-finite (sklearn raises then too).
///
/// # Panics
/// If the shapes disagree, `x` has no rows, or `alpha` is not positive.
pub fn fit(
    x: &[f64],
    y: &[bool],
    d: usize,
    params: &SgdParams,
    seed: u32,
    warm: Option<(&[f64], f64, f64)>,
) -> Result<SgdFit, FrozenError> {
    assert!(
        d > 0 && x.len() == y.len() * d,
        "x is n x d, y has n labels"
    );
    assert!(!y.is_empty(), "at least one sample");
    assert!(params.alpha > 0.0, "optimal learning rate needs alpha > 0");
    let (w0, intercept, t) = match warm {
        Some((w, b, t)) => {
            assert_eq!(w.len(), d, "warm weights");
            assert!(t >= 1.0, "sklearn's t starts at 1");
            (w.to_vec(), b, t)
        }
        None => (vec![0.0; d], 0.0, 1.0),
    };
    let mut s = Sgd {
        x,
        y,
        d,
        alpha: params.alpha,
        fit_intercept: params.fit_intercept,
        optimal_init: optimal_init(params.alpha),
        w: WeightVector::new(w0),
        intercept,
        t,
    };
    let n = u32::try_from(y.len()).expect("sklearn indexes samples with a C int");
    let mut index: Vec<u32> = (0..n).collect();
    let (mut best, mut no_improvement, mut epochs, mut converged) = (f64::INFINITY, 0, 0, false);
    for epoch in 0..params.max_iter {
        epochs = epoch + 1;
        if params.shuffle {
            sklearn_shuffle(&mut index, seed);
        }
        let objective = s.epoch(&index) / f64::from(n);
        if !s.finite() {
            return Err(FrozenError::Diverged { epoch: epochs });
        }
        match params.tol {
            Some(tol) if objective > best - tol => no_improvement += 1,
            _ => no_improvement = 0,
        }
        best = best.min(objective);
        if no_improvement >= params.n_iter_no_change {
            converged = true;
            break;
        }
    }
    s.w.reset_wscale();
    assert!(epochs >= 1 || params.max_iter == 0);
    Ok(SgdFit {
        weights: s.w.data,
        intercept: s.intercept,
        epochs,
        converged,
        t: s.t,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift_and_shuffle_follow_sklearn() {
        // xorshift32 from 1: 270369, 67634689, ... (Marsaglia's sequence), modulo 2^31.
        let mut s = 0;
        assert_eq!(our_rand_r(&mut s), 270_369);
        assert_eq!(our_rand_r(&mut s), 67_634_689);
        let mut a: Vec<u32> = (0..10).collect();
        sklearn_shuffle(&mut a, 42);
        let mut b: Vec<u32> = (0..10).collect();
        sklearn_shuffle(&mut b, 42);
        assert_eq!(a, b);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        sklearn_shuffle(&mut b, 42);
        assert_ne!(
            a, b,
            "the same swaps on the previous order give a new order"
        );
    }

    #[test]
    fn losses_match_their_definitions() {
        for p in [-50.0f64, -10.0, -1.0, 0.0, 0.5, 17.0, 20.0, 40.0] {
            for y in [0.0, 1.0] {
                let sig = 1.0 / (1.0 + (-p).exp());
                assert!((half_binomial_gradient(y, p) - (sig - y)).abs() < 1e-12);
                let exact = (1.0 + p.exp()).ln() - y * p;
                let l = half_binomial_loss(y, p);
                assert!((l - exact).abs() <= 1e-9 * exact.abs().max(1.0), "{p} {y}");
            }
        }
    }

    #[test]
    fn first_learning_rate_is_sklearns() {
        // alpha 1e-4: typw = 10, dloss(1, -10) < 0, so eta0 = 10 and t0 = 1000.
        let typw = (1.0 / 1e-4f64.sqrt()).sqrt();
        assert!((typw - 10.0).abs() < 1e-12);
        assert!(half_binomial_gradient(1.0, -typw) < 0.0);
        // One sample, one epoch, no shuffle: w = -eta dloss x with eta = 10 after the
        // (zero-norm) decay; dloss(1, 0) = -0.5.
        let params = SgdParams {
            max_iter: 1,
            shuffle: false,
            ..SgdParams::default()
        };
        let f = fit(&[2.0], &[true], 1, &params, 1, None).unwrap();
        assert!((f.weights[0] - 10.0).abs() < 1e-12 && (f.intercept - 5.0).abs() < 1e-12);
        assert_eq!((f.epochs, f.converged, f.t), (1, false, 2.0));
    }
}
