//! `nowa tpcc --separate-wal` keeps the WAL off the device under test, `--record-trace` records
//! that device's requests, and every sample reports the database size (`--csv` columns and
//! the JSON time series).

mod common;

use common::{nowa, nowa_json};

fn run_json(extra: &[&str]) -> serde_json::Value {
    let base = [
        "tpcc",
        "-q",
        "--device",
        "mem",
        "--warehouses",
        "1",
        "--threads",
        "1",
        "--transactions",
        "1500",
        "--seed",
        "7",
        "--json",
    ];
    nowa_json(
        &base
            .iter()
            .copied()
            .chain(extra.iter().copied())
            .collect::<Vec<_>>(),
    )
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().expect("a number")
}

#[test]
fn separate_wal_takes_the_wal_off_the_device() {
    let shared = run_json(&[]);
    let sep = run_json(&["--separate-wal"]);
    let wal = f(&sep["wal_bytes_per_txn"]);
    assert!(wal > 1000.0, "commits still log: {wal}");
    let (h_shared, h_sep) = (
        f(&shared["host_bytes_per_txn"]),
        f(&sep["host_bytes_per_txn"]),
    );
    assert!(
        h_shared - h_sep > wal / 2.0,
        "device bytes/txn {h_shared} shared vs {h_sep} separate, WAL {wal}"
    );
}

#[test]
fn trace_and_database_size_are_recorded() {
    let dir = tempfile::tempdir().expect("test step");
    let trace = dir.path().join("tpcc.csv");
    let csv = dir.path().join("samples.csv");
    let t = trace.to_str().expect("UTF-8 temp path");
    let c = csv.to_str().expect("UTF-8 temp path");
    let v = run_json(&["--record-trace", t, "--csv", c, "--interval", "100ms"]);
    let samples = v["run"]["samples"].as_array().expect("a time series");
    assert!(!samples.is_empty());
    for s in samples {
        let (pages, bytes) = (f(&s["extra"]["db_pages"]), f(&s["extra"]["db_bytes"]));
        assert!(pages > 1000.0, "a loaded warehouse has pages: {s}");
        assert!((bytes - pages * 4096.0).abs() < 1.0, "{s}");
        assert!(f(&s["extra"]["db_alloc_mark_pages"]) >= pages);
    }
    let text = std::fs::read_to_string(&csv).expect("the CSV");
    let mut lines = text.lines();
    let id = lines.next().expect("the identity line");
    assert!(
        id.starts_with("# nowa {") && id.contains("\"command\":\"tpcc\""),
        "{id}"
    );
    let header = lines.next().expect("a header");
    assert!(
        header.contains("db_pages") && header.contains("db_bytes"),
        "{header}"
    );
    let stats = nowa_json(&["trace", "stats", t, "--json"])["total"].clone();
    assert!(stats["writes"].as_u64().expect("a count") > 100, "{stats}");
    // The recorder never overwrites.
    let again = nowa(&[
        "tpcc",
        "-q",
        "--device",
        "mem",
        "--transactions",
        "10",
        "--record-trace",
        t,
    ]);
    assert_eq!(again.status.code(), Some(2));
}
