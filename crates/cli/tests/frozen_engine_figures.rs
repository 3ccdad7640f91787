//! `nowa frozen figures --engine` at a tiny scale: every workload x scheme gets an engine row
//! with sane numbers (measured, not fixed: WAF at least 1, FAR a share, GC moves, throughput,
//! SepFrozen's model and inference columns on its rows only), the SepBIT run's log is
//! replayed with the FK oracles, the charts and the summary are written, the logs are
//! removed, and existing outputs are refused without --force.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;

use common::nowa;
use std::collections::HashMap;
use std::path::Path;

const ENGINE_SCHEMES: [&str; 12] = [
    "nosep",
    "2r",
    "warcip",
    "dac",
    "dac-paper",
    "sepfrozen-dac",
    "sepbit",
    "sepfrozen-bit",
    "sepfrozen-dac-online",
    "sepfrozen-bit-online",
    "sepfrozen-dac-tree",
    "sepfrozen-bit-tree",
];

const REPLAY_SCHEMES: [&str; 12] = [
    "nosep",
    "sepgc",
    "warcip",
    "dac",
    "dac-paper",
    "sepfrozen-dac",
    "sepbit",
    "sepfrozen-bit",
    "fk",
    "fk-kmeans",
    "sepfrozen-bit-truth",
    "sepfrozen-dac-truth",
];

/// The CSV as (workload, source, scheme) -> column -> cell.
type Rows = HashMap<(String, String, String), HashMap<String, String>>;

fn read_csv(p: &Path) -> Rows {
    let text = std::fs::read_to_string(p).unwrap();
    let mut lines = text.lines();
    let identity = lines.next().unwrap();
    assert!(
        identity.starts_with("# nowa {"),
        "the run's identity first: {identity}"
    );
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let mut rows = Rows::new();
    for l in lines {
        let cells: Vec<&str> = l.split(',').collect();
        assert_eq!(cells.len(), header.len(), "{l}");
        let m: HashMap<String, String> = header
            .iter()
            .zip(&cells)
            .map(|(h, c)| ((*h).to_owned(), (*c).to_owned()))
            .collect();
        let key = (
            m["workload"].clone(),
            m["source"].clone(),
            m["scheme"].clone(),
        );
        assert!(
            rows.insert(key, m).is_none(),
            "one row per workload, source and scheme: {l}"
        );
    }
    rows
}

fn num(row: &HashMap<String, String>, col: &str) -> f64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col} = '{}' in {row:?}", row[col]))
}

/// Runs the command; returns its output directory's CSV rows.
fn figures(dir: &Path, extra: &[&str]) -> Rows {
    let out = dir.join("figs");
    let work = dir.join("work");
    let mut args = vec![
        "frozen",
        "figures",
        "--engine",
        "--out",
        out.to_str().unwrap(),
        "--work-dir",
        work.to_str().unwrap(),
    ];
    args.extend(extra);
    let o = nowa(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{args:?}: {err}");
    assert!(err.contains("seed 42"), "the seed is printed: {err}");
    for f in ["waf", "far", "throughput", "replay-waf"] {
        let p = out.join(format!("sepfrozen-engine-{f}.png"));
        assert!(
            std::fs::metadata(&p).unwrap().len() > 1000,
            "{}",
            p.display()
        );
    }
    let summary = std::fs::read_to_string(out.join("sepfrozen-engine-summary.txt")).unwrap();
    assert!(
        summary.contains("verdict: lowest WAF in the replay"),
        "{summary}"
    );
    assert!(
        summary.contains("verdict: replay sepfrozen-bit vs sepbit: model "),
        "the exact-label ceiling is stated: {summary}"
    );
    let logs = std::fs::read_dir(&work).unwrap().count();
    assert_eq!(
        logs, 0,
        "write logs and models are removed without --keep-logs"
    );
    read_csv(&out.join("sepfrozen-engine.csv"))
}

/// The engine row of `scheme` on `workload`: sane values; SepFrozen's columns only on its rows.
fn check_engine_row(rows: &Rows, workload: &str, scheme: &str) {
    let key = (workload.to_owned(), "engine".to_owned(), scheme.to_owned());
    let r = rows.get(&key).unwrap_or_else(|| panic!("no row {key:?}"));
    let waf = num(r, "waf");
    assert!((1.0..20.0).contains(&waf), "{key:?}: DB WAF {waf}");
    let far = num(r, "far");
    assert!((0.0..=1.0).contains(&far), "{key:?}: FAR {far}");
    assert!(num(r, "gc_moves") > 0.0, "{key:?}: DB GC ran");
    assert!(num(r, "frozen_moves") <= num(r, "gc_moves"), "{key:?}");
    assert!(num(r, "throughput") > 0.0 && num(r, "device_bound_throughput") > 0.0);
    assert!(num(r, "zone_pages") >= 16.0, "{key:?}");
    let frozen = scheme.starts_with("sepfrozen");
    for col in ["judged_pages", "infer_ms_per_256mib"] {
        assert_eq!(r[col].is_empty(), !frozen, "{key:?}: {col} = '{}'", r[col]);
    }
    // The offline model's metrics on the rows that deployed it (not on the online ones).
    let trained = frozen && !scheme.ends_with("-online");
    for col in ["model_accuracy", "model_recall", "train_cpu_secs"] {
        assert_eq!(r[col].is_empty(), !trained, "{key:?}: {col} = '{}'", r[col]);
    }
    if frozen {
        assert!(
            num(r, "judged_pages") > 0.0,
            "{key:?}: the model judged GC victims"
        );
        assert!(num(r, "judged_frozen") <= num(r, "judged_pages"));
        assert!(num(r, "infer_ms_per_256mib") > 0.0);
    }
    if trained {
        let acc = num(r, "model_accuracy");
        assert!(acc > 0.0 && acc <= 1.0, "{key:?}: accuracy {acc}");
    }
}

fn check_replay_rows(rows: &Rows, workload: &str) {
    for s in REPLAY_SCHEMES {
        let key = (workload.to_owned(), "replay".to_owned(), s.to_owned());
        let r = rows.get(&key).unwrap_or_else(|| panic!("no row {key:?}"));
        let waf = num(r, "waf");
        assert!((1.0..20.0).contains(&waf), "{key:?}: WAF {waf}");
        assert!((0.0..=1.0).contains(&num(r, "far")), "{key:?}");
    }
}

#[test]
fn every_ycsb_workload_and_scheme_has_a_row_and_outputs_are_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let workloads = ["ycsb-50w", "ycsb-100w"];
    let rows = figures(
        dir.path(),
        &[
            "--workloads",
            "ycsb-50w,ycsb-100w",
            "--records",
            "10k",
            "--ops",
            "20k",
        ],
    );
    for w in workloads {
        for s in ENGINE_SCHEMES {
            check_engine_row(&rows, w, s);
        }
        check_replay_rows(&rows, w);
        let unit =
            &rows[&(w.to_owned(), "engine".to_owned(), "sepbit".to_owned())]["throughput_unit"];
        assert_eq!(unit, "ops/s");
    }
    assert_eq!(
        rows.len(),
        workloads.len() * (ENGINE_SCHEMES.len() + REPLAY_SCHEMES.len())
    );
    // Again into the same --out: refused before any run (exit 2, one line naming the flag).
    let out = dir.path().join("figs");
    let args = [
        "frozen",
        "figures",
        "--engine",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = nowa(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--out") && err.contains("--force"), "{err}");
}

#[test]
fn tpcc_workloads_report_tpmc_and_replay_fk_on_the_sepbit_run() {
    let dir = tempfile::tempdir().unwrap();
    let rows = figures(
        dir.path(),
        &[
            "--workloads",
            "tpcc-standard,tpcc-steady",
            "--schemes",
            "sepbit,sepfrozen-bit",
            "--warehouses",
            "1",
            "--transactions",
            "5000",
        ],
    );
    for w in ["tpcc-standard", "tpcc-steady"] {
        for s in ["sepbit", "sepfrozen-bit"] {
            check_engine_row(&rows, w, s);
            let r = &rows[&(w.to_owned(), "engine".to_owned(), s.to_owned())];
            assert_eq!(r["throughput_unit"], "tpmC");
        }
        check_replay_rows(&rows, w);
    }
    assert_eq!(rows.len(), 2 * (2 + REPLAY_SCHEMES.len()));
}
