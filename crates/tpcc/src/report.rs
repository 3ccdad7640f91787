//! What a run reports: throughput, latency per transaction type, aborts by cause, per-interval
//! samples, and named metrics the caller adds (DB/SSD WAF, bytes per transaction, hit ratio,
//! database size...) through an [`Observer`].

use crate::txns::TxnKind;
use std::collections::BTreeMap;
use std::io::Write;

/// Caller-defined metrics by name (e.g. `"db_waf"`, `"ssd_waf"`, `"db_bytes"`, `"hit_ratio"`).
pub type Extra = BTreeMap<&'static str, f64>;

/// Where a run stands (given to [`Observer::should_stop`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Seconds since the run started.
    pub elapsed_s: f64,
    /// Committed transactions so far (all types).
    pub transactions: u64,
    /// Committed New-Orders so far.
    pub new_orders: u64,
}

/// The caller's hooks into a run. Every method has a default that does nothing.
pub trait Observer: Sync {
    /// Called from the driver's monitor thread (the caller's thread) once per sample interval,
    /// and once for the last partial interval: add metrics to `sample.extra`, print progress.
    fn on_sample(&self, sample: &mut Sample) {
        let _ = sample;
    }

    /// Polled about every 10 ms from the monitor thread: return true to end the run (e.g. when
    /// the device has received K times its capacity).
    fn should_stop(&self, progress: &Progress) -> bool {
        let _ = progress;
        false
    }

    /// Called once at the end, before the report is returned: add final metrics to
    /// `report.extra`.
    fn on_finish(&self, report: &mut Report) {
        let _ = report;
    }
}

/// An observer that observes nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoObserver;

impl Observer for NoObserver {}

/// One sample interval.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sample {
    /// End of the interval, seconds since the start of the run.
    pub elapsed_s: f64,
    /// Length of the interval in seconds.
    pub interval_s: f64,
    /// Transactions committed in the interval (all types).
    pub transactions: u64,
    /// Transactions per second in the interval.
    pub txn_per_s: f64,
    /// New-Orders committed in the interval.
    pub new_orders: u64,
    /// New-Orders per minute in the interval.
    pub tpmc: f64,
    /// New-Orders rolled back (TPC-C's 1%) in the interval.
    pub rollbacks: u64,
    /// Attempts aborted by conflict in the interval.
    pub conflicts: u64,
    /// Committed transactions since the start.
    pub total_transactions: u64,
    /// Caller metrics ([`Observer::on_sample`]).
    pub extra: Extra,
}

/// Latency summary of one transaction type, in microseconds (from the first attempt's begin to
/// the final commit or rollback, retries included): the one summary, [`nowa_units::latency`].
pub use nowa_units::latency::{new_histogram, Latency};

/// The figures of one transaction type.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KindReport {
    /// The type.
    pub kind: TxnKind,
    /// Committed.
    pub committed: u64,
    /// Rolled back on purpose (New-Order's unused item).
    pub rolled_back: u64,
    /// Attempts aborted by conflict (each was retried).
    pub conflicts: u64,
    /// Latency of the committed and rolled-back ones.
    pub latency: Latency,
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// The configuration run.
    pub config: crate::driver::RunConfig,
    /// Wall seconds of the run.
    pub seconds: f64,
    /// Committed transactions, all types (steady mode's no-op draws are not transactions).
    pub transactions: u64,
    /// `transactions / seconds`.
    pub txn_per_s: f64,
    /// Committed New-Orders.
    pub new_orders: u64,
    /// Committed New-Orders per minute.
    pub tpmc: f64,
    /// Per type, in [`TxnKind::ALL`] order.
    pub kinds: Vec<KindReport>,
    /// New-Orders rolled back on purpose.
    pub rollbacks: u64,
    /// Attempts aborted by conflict.
    pub conflicts: u64,
    /// `rollbacks / (transactions + rollbacks)`.
    pub rollback_rate: f64,
    /// `conflicts / (transactions + rollbacks + conflicts)`: the fraction of attempts lost.
    pub conflict_rate: f64,
    /// Steady mode's no-op draws (4% of the mix).
    pub noops: u64,
    /// Delivery districts that had no undelivered order.
    pub skipped_deliveries: u64,
    /// Orders deleted by batch deletes.
    pub deleted_orders: u64,
    /// CPU seconds (user + system) of the whole process during the run: the driver, the store,
    /// and any background threads of the store.
    pub cpu_s: f64,
    /// `cpu_s` per committed transaction, in microseconds.
    pub cpu_us_per_txn: f64,
    /// Per-interval samples.
    pub samples: Vec<Sample>,
    /// Caller metrics ([`Observer::on_finish`]).
    pub extra: Extra,
}

impl Report {
    /// The figures of one type.
    ///
    /// # Panics
    /// Never: the report holds every type.
    #[must_use]
    pub fn kind(&self, kind: TxnKind) -> &KindReport {
        let k = &self.kinds[kind.index()];
        assert_eq!(k.kind, kind, "kinds are in TxnKind::ALL order");
        k
    }
}

/// Writes samples as CSV: the fixed columns, then every extra metric (sorted by name, empty
/// where a sample lacks it).
///
/// # Errors
/// Any write error.
pub fn write_samples_csv<W: Write>(samples: &[Sample], out: W) -> Result<(), csv::Error> {
    let mut names: Vec<&'static str> = samples
        .iter()
        .flat_map(|s| s.extra.keys().copied())
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut w = csv::Writer::from_writer(out);
    let mut header = vec![
        "elapsed_s",
        "interval_s",
        "transactions",
        "txn_per_s",
        "new_orders",
        "tpmc",
        "rollbacks",
        "conflicts",
        "total_transactions",
    ];
    header.extend(&names);
    w.write_record(&header)?;
    for s in samples {
        let mut row = vec![
            format!("{:.3}", s.elapsed_s),
            format!("{:.3}", s.interval_s),
            s.transactions.to_string(),
            format!("{:.1}", s.txn_per_s),
            s.new_orders.to_string(),
            format!("{:.1}", s.tpmc),
            s.rollbacks.to_string(),
            s.conflicts.to_string(),
            s.total_transactions.to_string(),
        ];
        row.extend(
            names
                .iter()
                .map(|n| s.extra.get(n).map_or_else(String::new, f64::to_string)),
        );
        w.write_record(&row)?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_fixed_then_extra_columns() {
        let mut s = Sample {
            elapsed_s: 1.0,
            interval_s: 1.0,
            transactions: 10,
            txn_per_s: 10.0,
            new_orders: 4,
            tpmc: 240.0,
            rollbacks: 0,
            conflicts: 1,
            total_transactions: 10,
            extra: Extra::new(),
        };
        s.extra.insert("db_waf", 1.5);
        let mut out = Vec::new();
        write_samples_csv(&[s], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert!(lines.next().unwrap().ends_with("total_transactions,db_waf"));
        assert!(lines.next().unwrap().ends_with(",10,1.5"));
    }
}
