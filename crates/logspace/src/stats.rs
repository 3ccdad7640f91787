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

pub(crate) use nowa_units::num::f64_of as as_f64;

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

/// One row of the per-class table (SepBIT's `Separator.shutdown()`), the same for the FTL
/// model and the engine's zone space ([`crate::Space::class_rows`], [`class_table`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClassRow {
    /// The class.
    pub class: u16,
    /// GC and write statistics.
    pub stats: ClassStats,
    /// Valid amount in the class now (the space's unit: pages or bytes).
    pub valid: u64,
    /// Share of user writes placed in the class.
    pub write_share: f64,
    /// Share of all valid data held by the class.
    pub valid_share: f64,
    /// Mean garbage proportion of its units at collection ([`ClassStats::mean_gp`]).
    pub mean_gp: f64,
    /// Mean lifespan of its collected units, open to collection, in user writes (None: none
    /// collected).
    pub mean_lifespan: Option<f64>,
}

/// The rows of `classes` with the valid amount per class `valid` (index = class; either may
/// be shorter: missing entries count as zero).
#[must_use]
pub fn class_rows(classes: &[ClassStats], valid: &[u64]) -> Vec<ClassRow> {
    let n = valid.len().max(classes.len());
    let total_valid: u64 = valid.iter().sum();
    let user: u64 = classes.iter().map(|s| s.user_writes).sum();
    let share = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            as_f64(a) / as_f64(b)
        }
    };
    (0..n)
        .map(|c| {
            let stats = classes.get(c).cloned().unwrap_or_default();
            let v = valid.get(c).copied().unwrap_or(0);
            debug_assert!(
                v <= total_valid && stats.user_writes <= user,
                "a part of the whole"
            );
            ClassRow {
                class: u16::try_from(c).unwrap_or(u16::MAX),
                write_share: share(stats.user_writes, user),
                valid_share: share(v, total_valid),
                valid: v,
                mean_gp: stats.mean_gp(),
                mean_lifespan: (stats.units_collected > 0).then(|| stats.mean_lifespan()),
                stats,
            }
        })
        .collect()
}

/// The per-class table as SepBIT's simulator prints it at the end of a run, one line per
/// class. `amount`: what collected amounts count ("pages" for the FTL, "bytes" for the
/// engine's zones).
#[must_use]
pub fn class_table(rows: &[ClassRow], amount: &str) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let collected = format!("collected({amount})");
    let _ = writeln!(
        s,
        "class  collected(units)  {collected:>16}  avg GP   user writes  GC writes   % writes  % valid  avg lifespan"
    );
    for c in rows {
        let st = &c.stats;
        let life = c
            .mean_lifespan
            .map_or_else(|| "-".to_owned(), |l| format!("{l:.0}"));
        let _ = writeln!(
            s,
            "{:>5}  {:>16}  {:>16}  {:>6.3}  {:>11}  {:>9}  {:>8.2}  {:>7.2}  {:>12}",
            c.class,
            st.units_collected,
            st.collected,
            c.mean_gp,
            st.user_writes,
            st.gc_writes,
            100.0 * c.write_share,
            100.0 * c.valid_share,
            life
        );
    }
    s
}

/// What a run prints about its placement: the scheme, its state line and the per-class table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClassReport {
    /// Name of the scheme.
    pub placement: String,
    /// Its state worth printing (may be empty).
    pub report: String,
    /// What collected and valid amounts count: "pages" or "bytes".
    pub amount: &'static str,
    /// One row per class.
    pub classes: Vec<ClassRow>,
}

impl ClassReport {
    /// The text form: a `placement` line, then [`class_table`].
    #[must_use]
    pub fn text(&self) -> String {
        let mut s = format!("placement {}", self.placement);
        if !self.report.is_empty() {
            s.push_str(": ");
            s.push_str(&self.report);
        }
        s.push('\n');
        s.push_str(&class_table(&self.classes, self.amount));
        s
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

    #[test]
    fn class_rows_shares_and_table() {
        let a = ClassStats {
            units_collected: 2,
            collected: 20,
            collected_valid: 5,
            lifespan_sum: 300,
            user_writes: 30,
            gc_writes: 4,
        };
        let b = ClassStats {
            user_writes: 10,
            ..ClassStats::default()
        };
        let rows = class_rows(&[a, b], &[6, 2, 0]);
        assert_eq!(
            rows.len(),
            3,
            "a class with valid data but no stats still has a row"
        );
        assert!((rows[0].write_share - 0.75).abs() < 1e-12);
        assert!((rows[1].valid_share - 0.25).abs() < 1e-12);
        assert!((rows[0].mean_gp - 0.75).abs() < 1e-12);
        assert_eq!(rows[0].mean_lifespan, Some(150.0));
        assert_eq!(rows[1].mean_lifespan, None, "nothing collected");
        let t = class_table(&rows, "bytes");
        assert_eq!(t.lines().count(), 4, "{t}");
        assert!(t.contains("collected(bytes)"), "{t}");
        let line0 = t.lines().nth(1).unwrap();
        assert!(
            line0.contains(" 75.00 ") && line0.contains(" 150"),
            "{line0}"
        );
        assert!(t.lines().nth(2).unwrap().trim_end().ends_with('-'), "{t}");
        assert!(class_rows(&[], &[]).is_empty());
    }
}
