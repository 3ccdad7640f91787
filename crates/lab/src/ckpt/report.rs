//! The fields `nowa ckpt` and `nowa reproduce` read from a `nowa tpcc --out FILE` report,
//! as types: a field missing or renamed in `nowa tpcc`'s output fails the read with the
//! file and the field named, instead of turning into a NaN in a figure.

use crate::Error;
use serde::Deserialize;
use std::path::Path;

/// A `nowa tpcc` JSON report (the fields read here; the others are ignored).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TpccReport {
    /// The run phase.
    pub run: Run,
    /// Write drill-down of the run phase.
    pub drilldown: Drilldown,
    /// The engine's counters at the end (load and run).
    pub engine: Engine,
    /// DB WAF (None: nothing written).
    pub db_waf: Option<f64>,
    /// SSD WAF (None: the device cannot tell).
    pub ssd_waf: Option<f64>,
    /// DB WAF x SSD WAF.
    pub total_waf: Option<f64>,
    /// WAL bytes per transaction.
    pub wal_bytes_per_txn: f64,
    /// Device write bytes per transaction.
    pub host_bytes_per_txn: f64,
    /// Device read bytes per transaction.
    pub read_bytes_per_txn: f64,
    /// Flash bytes per transaction (None: the device cannot tell).
    pub flash_bytes_per_txn: Option<f64>,
    /// Media busy seconds of the run (None: not a paced simulated SSD).
    pub device_busy_secs: Option<f64>,
    /// New-Orders per minute of device busy time (None: not paced).
    pub device_bound_tpmc: Option<f64>,
}

/// The run phase's totals and samples.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Run {
    /// Wall seconds.
    pub seconds: f64,
    /// Committed transactions.
    pub transactions: u64,
    /// Transactions per wall second.
    pub txn_per_s: f64,
    /// CPU microseconds per transaction.
    pub cpu_us_per_txn: f64,
    /// One per sample interval.
    pub samples: Vec<Sample>,
}

/// One sample interval.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Sample {
    /// End of the interval, seconds since the start of the run.
    pub elapsed_s: f64,
    /// Transactions per second in the interval.
    pub txn_per_s: f64,
}

/// The write drill-down's fields read here, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Drilldown {
    /// User page writes: eviction + checkpoint.
    pub user_bytes: u64,
    /// By eviction (the LRU path).
    pub eviction_bytes: u64,
    /// By checkpoints (forced included).
    pub checkpoint_bytes: u64,
    /// By forced checkpoints (the WAL limit).
    pub forced_checkpoint_bytes: u64,
    /// Doublewrite copies (in place).
    pub doublewrite_bytes: u64,
    /// DB GC copies (out of place).
    pub db_gc_bytes: u64,
    /// NoWA's compensation writes (out of place).
    pub compensation_bytes: u64,
    /// The user pages as stored (compressed and packed out of place).
    pub user_store_bytes: u64,
    /// Mapping snapshots (out of place).
    pub meta_bytes: u64,
    /// The SSD's own GC copies (None: the device cannot tell).
    pub ssd_gc_bytes: Option<u64>,
    /// Checkpoint deferrals.
    pub checkpoint_deferrals: u64,
    /// Checkpoint batches.
    pub checkpoints: u64,
}

/// The engine counters read here.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Engine {
    /// Buffer pool hit ratio.
    pub hit_ratio: f64,
    /// Evicted pages by the checkpoint selections they saw while resident and dirty.
    pub residency_pages: Vec<u64>,
    /// Their checkpoint writes, by the same buckets.
    pub residency_checkpoint_writes: Vec<u64>,
    /// The pages still resident at the end, by the same buckets (absent in reports of
    /// nowa before 2026-11-29 afternoon: empty).
    #[serde(default)]
    pub resident_pages: Vec<u64>,
    /// Their checkpoint writes.
    #[serde(default)]
    pub resident_checkpoint_writes: Vec<u64>,
}

impl TpccReport {
    /// The report in `file`.
    ///
    /// # Errors
    /// The file cannot be read, or a field is missing or of another type (named).
    pub fn read(file: &Path) -> Result<TpccReport, Error> {
        let text = std::fs::read_to_string(file).map_err(|e| Error::Failed {
            what: "reading a nowa tpcc report",
            source: format!("{}: {e}", file.display()).into(),
        })?;
        TpccReport::parse(&text).map_err(|e| Error::Failed {
            what: "reading a nowa tpcc report",
            source: format!("{}: {e}", file.display()).into(),
        })
    }

    /// The report in `text`.
    ///
    /// # Errors
    /// A field missing or of another type, with its path.
    pub fn parse(text: &str) -> Result<TpccReport, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let r: TpccReport = serde_path_to_error::deserialize(de).map_err(|e| e.to_string())?;
        let d = &r.drilldown;
        if d.eviction_bytes + d.checkpoint_bytes != d.user_bytes {
            return Err(format!(
                "drilldown: user_bytes {} is not eviction {} + checkpoint {}",
                d.user_bytes, d.eviction_bytes, d.checkpoint_bytes
            ));
        }
        let e = &r.engine;
        if e.residency_pages.len() != e.residency_checkpoint_writes.len()
            || e.resident_pages.len() != e.resident_checkpoint_writes.len()
        {
            return Err("engine: the residency histograms differ in length".into());
        }
        Ok(r)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A report with `txns` transactions in `secs` device-busy seconds.
    pub(crate) fn sample_json(txns: u64, secs: f64, evict: u64, ckpt: u64) -> String {
        serde_json::json!({
            "run": {"seconds": 10.0, "transactions": txns, "txn_per_s": txns as f64 / 10.0,
                    "cpu_us_per_txn": 50.0, "other": 1,
                    "samples": [{"elapsed_s": 1.0, "txn_per_s": 100.0, "extra": {}},
                                {"elapsed_s": 2.0, "txn_per_s": 90.0, "extra": {}},
                                {"elapsed_s": 2.3, "txn_per_s": 5.0, "extra": {}}]},
            "drilldown": {"user_bytes": evict + ckpt, "eviction_bytes": evict,
                          "checkpoint_bytes": ckpt, "forced_checkpoint_bytes": 0,
                          "checkpoint_deferrals": 7, "checkpoints": 3,
                          "doublewrite_bytes": evict + ckpt, "db_gc_bytes": 0,
                          "compensation_bytes": 0, "user_store_bytes": evict + ckpt,
                          "meta_bytes": 0, "ssd_gc_bytes": null},
            "engine": {"hit_ratio": 0.99, "residency_pages": [5, 3, 1],
                       "residency_checkpoint_writes": [0, 3, 2]},
            "db_waf": 2.0, "ssd_waf": null, "total_waf": null, "wal_bytes_per_txn": 512.0,
            "host_bytes_per_txn": 8192.0, "read_bytes_per_txn": 1024.0,
            "flash_bytes_per_txn": null, "device_busy_secs": secs, "device_bound_tpmc": null
        })
        .to_string()
    }

    #[test]
    fn a_report_reads_as_types() {
        let r = TpccReport::parse(&sample_json(1000, 5.0, 10, 90)).expect("parses");
        assert_eq!(r.run.transactions, 1000);
        assert_eq!(r.run.samples.len(), 3);
        assert_eq!(r.device_busy_secs, Some(5.0));
    }

    #[test]
    fn a_missing_field_is_an_error_naming_it() {
        let mut v: serde_json::Value =
            serde_json::from_str(&sample_json(1000, 5.0, 10, 90)).expect("json");
        v["drilldown"]
            .as_object_mut()
            .expect("object")
            .remove("checkpoint_bytes");
        let e = TpccReport::parse(&v.to_string()).expect_err("missing field");
        assert!(
            e.contains("drilldown") && e.contains("checkpoint_bytes"),
            "{e}"
        );
    }
}
