//! What GC did: the valid ratio of every victim, and per-class statistics as SepBIT's simulator
//! prints them at the end of a run.

/// Histogram of victim valid ratios, in 1% buckets (bucket 100 = fully valid).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VictimHistogram {
    /// Victims per 1% bucket of valid ratio.
    pub buckets: Vec<u64>,
}

impl Default for VictimHistogram {
    fn default() -> Self {
        VictimHistogram {
            buckets: vec![0; 101],
        }
    }
}

impl VictimHistogram {
    /// Record one victim holding `valid` of `capacity`.
    pub fn record(&mut self, valid: u32, capacity: u32) {
        let pct = (u64::from(valid) * 100 / u64::from(capacity.max(1))).min(100);
        self.buckets[usize::from(u8::try_from(pct).unwrap_or(100))] += 1;
    }
    /// Number of victims recorded.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }
    /// Mean valid ratio of victims (bucket midpoints), 0 if none.
    #[must_use]
    pub fn mean_ratio(&self) -> f64 {
        let n = self.count();
        if n == 0 {
            return 0.0;
        }
        let s: f64 = self
            .buckets
            .iter()
            .zip(0u32..)
            .map(|(c, i)| (f64::from(i) + 0.5).min(100.0) * as_f64(*c))
            .sum();
        s / as_f64(n) / 100.0
    }
    /// Victims recorded since `earlier` (bucket-wise difference).
    ///
    /// # Panics
    /// If `earlier` is not an earlier state of this histogram.
    #[must_use]
    pub fn since(&self, earlier: &VictimHistogram) -> VictimHistogram {
        VictimHistogram {
            buckets: self
                .buckets
                .iter()
                .zip(&earlier.buckets)
                .map(|(a, b)| {
                    assert!(a >= b, "victim histogram went backwards");
                    a - b
                })
                .collect(),
        }
    }
    /// The cumulative distribution: `cdf[i]` = share of victims with valid ratio below
    /// `(i + 1)%` (bucket `i` included). Empty histogram: all zeros.
    #[must_use]
    pub fn cdf(&self) -> Vec<f64> {
        let n = self.count();
        let mut acc = 0u64;
        let cdf: Vec<f64> = self
            .buckets
            .iter()
            .map(|&c| {
                acc += c;
                if n == 0 {
                    0.0
                } else {
                    as_f64(acc) / as_f64(n)
                }
            })
            .collect();
        debug_assert!(cdf.windows(2).all(|w| w[0] <= w[1]), "a CDF never falls");
        cdf
    }
}

/// The victim valid ratio `x` of FIFO cleaning, or greedy with large units, under uniform
/// random writes with `alpha` = space / data (Desnoyers, ACM TOS 2014; Van Houdt, SIGMETRICS
/// 2013): the smaller root of `x = exp(-alpha (1 - x))`; 1 when `alpha <= 1` (no spare space).
#[must_use]
pub fn lambert_victim_ratio(alpha: f64) -> f64 {
    if alpha.is_nan() || alpha <= 1.0 {
        return 1.0;
    }
    // From 0 the iteration rises monotonically to the smaller fixed point.
    let mut x = 0.0f64;
    for _ in 0..200_000 {
        let nx = (-alpha * (1.0 - x)).exp();
        if (nx - x).abs() < 1e-15 {
            return nx;
        }
        x = nx;
    }
    debug_assert!((0.0..=1.0).contains(&x), "a valid ratio, got {x}");
    x
}

/// The WAF of that model: `A(alpha) = 1 / (1 - x)` (infinite without spare space).
#[must_use]
pub fn lambert_waf(alpha: f64) -> f64 {
    1.0 / (1.0 - lambert_victim_ratio(alpha))
}

/// A count as a float (exact below 2^53, which every count here is).
#[inline]
#[must_use]
#[expect(
    clippy::cast_precision_loss,
    reason = "counts of pages and units stay far below 2^53"
)]
pub(crate) fn as_f64(x: u64) -> f64 {
    x as f64
}

/// Per-class statistics (SepBIT's `Separator.shutdown()` table). Amounts are in the space's
/// valid-amount unit (pages for the FTL).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ClassStats {
    /// Units of this class reclaimed by GC.
    pub units_collected: u64,
    /// Capacity of the reclaimed units (SepBIT's `numCollectedBlocks`).
    pub collected: u64,
    /// Valid amount found in them (copied out).
    pub collected_valid: u64,
    /// Sum over reclaimed units of (collection time - open time), in the write clock.
    pub lifespan_sum: u64,
    /// User writes placed in this class.
    pub user_writes: u64,
    /// GC writes placed in this class.
    pub gc_writes: u64,
}

impl ClassStats {
    /// Mean garbage proportion of the reclaimed units (SepBIT's `averageGp`).
    #[must_use]
    pub fn mean_gp(&self) -> f64 {
        if self.collected == 0 {
            0.0
        } else {
            as_f64(self.collected - self.collected_valid) / as_f64(self.collected)
        }
    }
    /// Mean lifespan of reclaimed units (open to collection), NaN if none.
    #[must_use]
    pub fn mean_lifespan(&self) -> f64 {
        as_f64(self.lifespan_sum) / as_f64(self.units_collected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_cdf_and_since() {
        let mut h = VictimHistogram::default();
        h.record(0, 10);
        h.record(5, 10);
        let early = h.clone();
        h.record(10, 10);
        h.record(10, 10);
        assert_eq!(h.count(), 4);
        let cdf = h.cdf();
        assert!((cdf[0] - 0.25).abs() < 1e-12);
        assert!((cdf[50] - 0.5).abs() < 1e-12);
        assert!((cdf[100] - 1.0).abs() < 1e-12);
        let d = h.since(&early);
        assert_eq!(d.count(), 2);
        assert_eq!(d.buckets[100], 2);
        assert!((h.mean_ratio() - (0.005 + 0.505 + 1.0 + 1.0) / 4.0).abs() < 1e-9);
        assert_eq!(VictimHistogram::default().cdf()[100], 0.0);
    }

    #[test]
    fn lambert_reference_values() {
        // REFERENCE.md: OP 7% -> 7.817, 10% -> 5.678, 20% -> 3.188, 28% -> 2.481.
        for (op, want) in [(0.07, 7.817), (0.10, 5.678), (0.20, 3.188), (0.28, 2.481)] {
            let got = lambert_waf(1.0 + op);
            assert!((got - want).abs() < 0.001, "OP {op}: {got} vs {want}");
        }
        assert!(lambert_waf(1.0).is_infinite());
    }

    #[test]
    fn class_stats_means() {
        let s = ClassStats {
            units_collected: 2,
            collected: 20,
            collected_valid: 5,
            lifespan_sum: 300,
            ..ClassStats::default()
        };
        assert!((s.mean_gp() - 0.75).abs() < 1e-12);
        assert!((s.mean_lifespan() - 150.0).abs() < 1e-12);
        assert!(ClassStats::default().mean_lifespan().is_nan());
    }
}
