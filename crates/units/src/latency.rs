//! The one latency summary: a histogram of nanoseconds summarized in microseconds, used by
//! every command that reports latency (ycsb, tpcc, ssdiq), so a p99 means one thing.

use hdrhistogram::Histogram;

/// Latency summary in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Latency {
    /// Latencies recorded.
    pub count: u64,
    /// Mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// 99.999th percentile.
    pub p99999_us: f64,
    /// Maximum.
    pub max_us: f64,
}

impl Latency {
    /// The summary of a histogram of nanoseconds (all zeros when it is empty).
    ///
    /// # Panics
    /// If the histogram's quantiles are not monotone (a broken histogram).
    #[must_use]
    pub fn of(h: &Histogram<u64>) -> Latency {
        if h.is_empty() {
            return Latency::default();
        }
        #[expect(
            clippy::cast_precision_loss,
            reason = "nanosecond latencies far below 2^52"
        )]
        let us = |v: u64| v as f64 / 1000.0;
        let l = Latency {
            count: h.len(),
            mean_us: h.mean() / 1000.0,
            p50_us: us(h.value_at_quantile(0.5)),
            p99_us: us(h.value_at_quantile(0.99)),
            p999_us: us(h.value_at_quantile(0.999)),
            p99999_us: us(h.value_at_quantile(0.99999)),
            max_us: us(h.max()),
        };
        assert!(
            l.p50_us <= l.p99_us && l.p99_us <= l.p999_us && l.p999_us <= l.p99999_us,
            "quantiles are monotone: {l:?}"
        );
        l
    }
}

/// A latency histogram in nanoseconds, 3 significant digits, sized for 1 ns .. 100 s up front
/// (so `saturating_record` clamps only beyond 100 s) and growing beyond that on `record`.
///
/// # Panics
/// Never: the bounds are constant and valid.
#[must_use]
pub fn new_histogram() -> Histogram<u64> {
    let mut h =
        Histogram::<u64>::new_with_bounds(1, 100_000_000_000, 3).expect("constant, valid bounds");
    h.auto(true);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_values() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let l = Latency::of(&h);
        assert_eq!(l.count, 1000);
        assert!((l.mean_us - 500.5).abs() < 1.0, "{l:?}");
        assert!(
            (l.p50_us - 500.0).abs() < 1.0 && (l.p99_us - 990.0).abs() < 1.0,
            "{l:?}"
        );
        assert!((l.max_us - 1000.0).abs() < 1.0, "{l:?}");
        assert_eq!(Latency::of(&new_histogram()), Latency::default());
    }

    /// `saturating_record` (what the drivers use) keeps milliseconds: an auto-sized histogram
    /// that starts tiny would clamp them to its first bucket.
    #[test]
    fn saturating_records_keep_their_value() {
        let mut h = new_histogram();
        h.saturating_record(5_000_000);
        h.saturating_record(7_000_000_000);
        let l = Latency::of(&h);
        assert!((l.p50_us - 5000.0).abs() < 10.0, "{l:?}");
        assert!((l.max_us - 7_000_000.0).abs() < 10_000.0, "{l:?}");
        h.record(200_000_000_000).unwrap();
        assert!(
            Latency::of(&h).max_us >= 199_000_000.0,
            "record grows past 100 s"
        );
    }
}
