//! Hot-page-aware checkpointing: Table I, Figures 4 and 5 and Table II (`nowa ckpt figures`)
//! with InnoDB's page cleaner on TPC-C; the runs through [`super::EngineRuns::ckpt`].

use super::{EngineRuns, Measured, Scale, Spec};
use crate::Error;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One paced run of `nowa ckpt figures` (a row of its `ckpt-runs.csv`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CkptRun {
    /// Write path: inplace or oop.
    pub path: String,
    /// Buffer pool, percent of the database.
    pub buffer_pct: u32,
    /// max_checkpoint_count.
    pub mcc: u32,
    /// Adaptive deferral's redo bound, if any.
    pub redo_bound: Option<u64>,
    /// Transactions per second (wall).
    pub tps: f64,
    /// Transactions per second of simulated-SSD busy time.
    pub bound_tps: f64,
    /// Device write KB per transaction (pages, doublewrite, WAL).
    pub write_kb_txn: f64,
    /// User page write KB per transaction.
    pub page_kb_txn: f64,
    /// Checkpoint share of the user page writes, percent.
    pub ckpt_pct: f64,
    /// LRU (eviction) share of the user page writes, percent.
    pub lru_pct: f64,
}

/// One crash and recovery (Table II).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CkptCrash {
    /// max_checkpoint_count of the crashed run.
    pub mcc: u32,
    /// Seconds to open (recover) the database.
    pub open_secs: f64,
    /// Analysis phase, microseconds.
    pub analysis_us: u64,
    /// Redo phase, microseconds.
    pub redo_us: u64,
    /// Bytes of log from the redo LSN to the end.
    pub redo_bytes: u64,
}

/// What `nowa ckpt figures` measured.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CkptResult {
    /// The paced runs.
    pub runs: Vec<CkptRun>,
    /// The crashes.
    pub crashes: Vec<CkptCrash>,
}

/// The grid of `scale` as `nowa ckpt figures` flags (without --out and --work).
fn grid(scale: Scale, seed: u64) -> Vec<String> {
    let mut f: Vec<String> = match scale {
        Scale::Quick => ["--seconds=15", "--buffers=20,50", "--counts=0,3,8"],
        Scale::Full => [
            "--seconds=20",
            "--buffers=10,20,50",
            "--counts=0,3,4,6,8,10",
        ],
    }
    .map(String::from)
    .to_vec();
    f.extend(["--warehouses=1", "--paths=inplace", "--recovery-counts=0,3"].map(String::from));
    f.push(format!("--seed={seed}"));
    f
}

fn at(r: &CkptResult, buffer: u32, mcc: u32) -> Option<&CkptRun> {
    r.runs.iter().find(|x| {
        x.buffer_pct == buffer && x.mcc == mcc && x.path == "inplace" && x.redo_bound.is_none()
    })
}

fn items(r: &CkptResult) -> Vec<(&'static str, f64)> {
    let nan = f64::NAN;
    let both = |b, m, f: &dyn Fn(&CkptRun, &CkptRun) -> f64| {
        at(r, b, m).zip(at(r, b, 0)).map_or(nan, |(x, v)| f(x, v))
    };
    let crash = |m| r.crashes.iter().find(|c| c.mcc == m);
    let crashes =
        |f: &dyn Fn(&CkptCrash) -> f64| crash(3).zip(crash(0)).map_or(nan, |(a, b)| f(a) / f(b));
    #[expect(clippy::cast_precision_loss, reason = "microseconds below 2^53")]
    let redo = |c: &CkptCrash| c.redo_us as f64;
    vec![
        (
            "Table I: vanilla checkpoint share of page flushes",
            at(r, 50, 0).map_or(nan, |v| v.ckpt_pct),
        ),
        (
            "Table I: TPS, mcc 3 / vanilla",
            both(50, 3, &|x, v| x.bound_tps / v.bound_tps),
        ),
        (
            "Table I: write KB/txn, mcc 3 / vanilla",
            both(50, 3, &|x, v| x.write_kb_txn / v.write_kb_txn),
        ),
        (
            "Table I: LRU share, mcc 3 - vanilla",
            both(50, 3, &|x, v| x.lru_pct - v.lru_pct),
        ),
        (
            "Fig. 5: TPS, mcc 8 / vanilla",
            both(50, 8, &|x, v| x.bound_tps / v.bound_tps),
        ),
        (
            "Fig. 5: checkpoint share, mcc 8 - vanilla",
            both(50, 8, &|x, v| x.ckpt_pct - v.ckpt_pct),
        ),
        (
            "Fig. 4: TPS at 20% buffer, mcc 3 / vanilla",
            both(20, 3, &|x, v| x.bound_tps / v.bound_tps),
        ),
        (
            "Fig. 4: vanilla checkpoint share at 20% buffer",
            at(r, 20, 0).map_or(nan, |v| v.ckpt_pct),
        ),
        (
            "Table II: recovery time, mcc 3 / vanilla",
            crashes(&|c| c.open_secs),
        ),
        ("Table II: redo time, mcc 3 / vanilla", crashes(&redo)),
    ]
}

pub(super) fn run(
    spec: &Spec,
    dir: &Path,
    engines: &dyn EngineRuns,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<Vec<Measured>, Error> {
    let g = grid(spec.scale, spec.seed);
    // The per-run JSON under --work is reused when present: a reproduction starts empty.
    let work = dir.join("work");
    if work.exists() {
        std::fs::remove_dir_all(&work).map_err(|e| Error::io(&work, e))?;
    }
    let mut flags = g.clone();
    flags.push(format!("--out={}", dir.display()));
    flags.push(format!("--work={}", work.display()));
    sub(0, 1, "TPC-C runs");
    let r = engines.ckpt(&flags);
    // The crash images and per-run JSON are scratch; the CSVs and PNGs stay.
    let _ = std::fs::remove_dir_all(&work);
    let r = r?;
    for x in &r.runs {
        assert!(
            x.ckpt_pct.is_nan() || x.ckpt_pct + x.lru_pct <= 100.0 + 1e-6,
            "checkpoint and LRU shares of one run's page writes"
        );
    }
    let scale = "TPC-C 1 warehouse (~150 MiB), 1-2 threads, WAL 128 MiB, simulated SSD 10 MB/s, InnoDB page cleaner io_capacity 1000/10000";
    let cmd = format!("nowa ckpt figures {} --out DIR", g.join(" "));
    Ok(items(&r)
        .into_iter()
        .map(|(item, v)| Measured::new(item, v, scale, &cmd))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(buffer: u32, mcc: u32, tps: f64, ckpt: f64) -> CkptRun {
        CkptRun {
            path: "inplace".into(),
            buffer_pct: buffer,
            mcc,
            redo_bound: None,
            tps,
            bound_tps: tps,
            write_kb_txn: 10.0 - f64::from(mcc) * 0.5,
            page_kb_txn: 2.0,
            ckpt_pct: ckpt,
            lru_pct: 100.0 - ckpt,
        }
    }

    #[test]
    fn items_compare_each_count_with_vanilla_at_its_buffer() {
        let r = CkptResult {
            runs: vec![
                run_of(50, 0, 800.0, 96.0),
                run_of(50, 3, 900.0, 89.0),
                run_of(50, 8, 1000.0, 75.0),
                run_of(20, 0, 300.0, 77.0),
                run_of(20, 3, 330.0, 60.0),
            ],
            crashes: vec![],
        };
        let it = items(&r);
        let get = |k: &str| it.iter().find(|(i, _)| *i == k).map(|x| x.1).expect("item");
        assert!((get("Table I: TPS, mcc 3 / vanilla") - 1.125).abs() < 1e-9);
        assert!((get("Fig. 5: checkpoint share, mcc 8 - vanilla") + 21.0).abs() < 1e-9);
        assert!((get("Fig. 4: TPS at 20% buffer, mcc 3 / vanilla") - 1.1).abs() < 1e-9);
        assert!((get("Table I: LRU share, mcc 3 - vanilla") - 7.0).abs() < 1e-9);
        // No crash ran: Table II is missing, not made up.
        assert!(get("Table II: redo time, mcc 3 / vanilla").is_nan());
        for (item, _) in &it {
            assert!(super::super::values::lookup(item).is_some(), "{item}");
        }
    }
}
