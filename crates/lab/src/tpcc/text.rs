//! The text summary of a TPC-C run (what `nowa tpcc` and `nowa run` print).

use super::{CheckOutcome, TpccOut};
use nowa_tpcc::{Consistency, LoadProgress, LoadReport, Sample};
use std::fmt::Write as _;

/// One line of the run phase's progress (a sample).
#[must_use]
pub fn sample_line(s: &Sample) -> String {
    let x = |k: &str| {
        s.extra
            .get(k)
            .map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
    };
    let mib = s.extra.get("db_bytes").copied().unwrap_or(0.0) / f64::from(1 << 20);
    format!(
        "{:.0}s {:.0} txn/s tpmC {:.0} conflicts {} DB WAF {} SSD WAF {} DB {mib:.0} MiB",
        s.elapsed_s,
        s.txn_per_s,
        s.tpmc,
        s.conflicts,
        x("db_waf"),
        x("ssd_waf"),
    )
}

/// One line of the load's progress.
#[must_use]
pub fn load_line(p: &LoadProgress) -> String {
    format!(
        "loading: {} of {} warehouses, {} rows, {:.1}s",
        p.warehouses_done,
        p.warehouses,
        p.rows,
        p.elapsed.as_secs_f64()
    )
}

/// The load's end.
#[must_use]
pub fn loaded_line(warehouses: u32, lr: &LoadReport) -> String {
    format!(
        "loaded {warehouses} warehouses in {:.1}s ({:.1} warehouses/min, {:.0} rows/s)",
        lr.seconds, lr.warehouses_per_minute, lr.rows_per_second
    )
}

/// `--check-only`'s lines before the check's: the recovery (when one ran) and a trimmed
/// HISTORY.
#[must_use]
pub fn check_lines(c: &CheckOutcome) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(x) = &c.recovery {
        lines.push(format!(
            "recovered in {:.3} s (analysis {} us, redo {} us): clean shutdown {}, {} records replayed, redo range {} bytes",
            c.open_secs,
            x.analysis_micros,
            x.redo_micros,
            x.clean_shutdown,
            x.records_replayed,
            x.end_lsn.saturating_sub(x.redo_lsn)
        ));
    }
    if c.history_trimmed {
        lines.push("HISTORY is trimmed (a steady run): clauses 3.3.2.8-9 skipped".into());
    }
    lines
}

fn fmt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
}

/// The consistency check's lines.
#[must_use]
pub fn consistency_text(c: &Consistency) -> String {
    let mut s = String::new();
    if c.is_consistent() {
        let _ = writeln!(
            s,
            "check     consistent: clause 3.3.2.1-3.3.2.7{} hold on {} warehouses",
            if c.history_checked { " and .8-.9" } else { "" },
            c.warehouses
        );
    } else {
        let _ = writeln!(s, "check     {} VIOLATIONS", c.violations.len());
        for v in c.violations.iter().take(20) {
            let _ = writeln!(s, "          {v:?}");
        }
    }
    s
}

/// The run's summary: load, run, per type, commit lock, device, WAF, bytes per transaction,
/// placement and the check.
#[must_use]
pub fn summary(o: &TpccOut) -> String {
    let mut s = String::new();
    let r = &o.run;
    if o.interrupted {
        let _ = writeln!(
            s,
            "interrupted (Ctrl-C) after {:.1} s: the figures below cover the part that ran",
            r.seconds
        );
    }
    if let Some(l) = &o.load {
        let _ = writeln!(
            s,
            "load      {:.1} s, {:.1} warehouses/min, {:.0} rows/s",
            l.seconds, l.warehouses_per_minute, l.rows_per_second
        );
    }
    let _ = writeln!(
        s,
        "run       {:.1} s, {} txns, {:.0} txn/s, tpmC {:.0}, rollbacks {}, conflicts {} ({:.2}% of attempts), CPU {:.1} us/txn",
        r.seconds, r.transactions, r.txn_per_s, r.tpmc, r.rollbacks, r.conflicts,
        100.0 * r.conflict_rate, r.cpu_us_per_txn
    );
    for k in &r.kinds {
        let _ = writeln!(
            s,
            "{:<12}committed {:>9}, rolled back {:>6}, conflicts {:>6}, latency p50 {:.0} us p99 {:.0} us p99.9 {:.0} us",
            format!("{:?}", k.kind), k.committed, k.rolled_back, k.conflicts,
            k.latency.p50_us, k.latency.p99_us, k.latency.p999_us
        );
    }
    commit_and_device(&mut s, o);
    let _ = writeln!(
        s,
        "waf       DB {}, SSD {}, total {}",
        fmt(o.db_waf),
        fmt(o.ssd_waf),
        fmt(o.total_waf)
    );
    let _ = writeln!(
        s,
        "per txn   logical {:.0} B, device {:.0} B, flash {} B, WAL {:.0} B",
        o.logical_bytes_per_txn,
        o.host_bytes_per_txn,
        o.flash_bytes_per_txn
            .map_or_else(|| "-".to_string(), |b| format!("{b:.0}")),
        o.wal_bytes_per_txn
    );
    let _ = writeln!(
        s,
        "flushes   {} page writes per store flush",
        fmt(o.page_writes_per_store_flush)
    );
    if let Some(p) = &o.placement {
        s.push_str(&p.text());
    }
    s
}

fn commit_and_device(s: &mut String, o: &TpccOut) {
    let (e, r) = (&o.engine, &o.run);
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts and nanoseconds far below 2^52"
    )]
    let per_commit = |ns: u64| ns as f64 / 1e3 / e.txn_commits.max(1) as f64;
    #[expect(clippy::cast_precision_loss, reason = "nanoseconds far below 2^52")]
    let share = e.commit_lock_hold_ns as f64 / 1e9 / r.seconds.max(1e-9);
    let _ = writeln!(
        s,
        "commit    {} commits with writes: commit lock wait {:.1} us, held {:.1} us per commit (held {:.0}% of the run, wall); conflicts {:.2}% of attempts",
        e.txn_commits,
        per_commit(e.commit_lock_wait_ns),
        per_commit(e.commit_lock_hold_ns),
        100.0 * share,
        100.0 * r.conflict_rate
    );
    if let Some(b) = o.device_busy_secs {
        let _ = writeln!(
            s,
            "device    busy {b:.1} s of the run's {:.1} s (paced): tpmC {} per device-busy minute",
            r.seconds,
            o.device_bound_tpmc
                .map_or_else(|| "-".to_string(), |t| format!("{t:.0}"))
        );
    }
}
