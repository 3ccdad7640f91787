//! `nowa table1` (small) and `nowa ycsb --write-path oop` as a user runs them: the shape of
//! Table 1 of how-to-write-to-ssds.md on a simulated conventional SSD.

mod common;
use common::{assert_usage_errors, nowa_json};

#[test]
fn bad_flags_exit_2() {
    assert_usage_errors(&[
        vec!["table1", "--records", "0"],
        vec!["table1", "--device-writes", "0"],
        vec!["table1", "--values", "sideways"],
        vec!["ycsb", "--write-path", "sideways"],
        vec!["ycsb", "--write-path", "oop", "--compression", "brotli"],
    ]);
}

/// A table already in `--out` (docs/table1 is one) is kept unless `--force`: refused in one
/// line before any row runs (it was overwritten after the run).
#[test]
fn an_existing_table_is_not_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("table1.svg");
    std::fs::write(&svg, "keep me").unwrap();
    let out = common::nowa(&[
        "table1",
        "--quick",
        "-q",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("table1.svg") && err.contains("--force"),
        "{err}"
    );
    assert!(!err.contains("records, "), "refused before the run: {err}");
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "keep me");
}

#[test]
fn table1_small_has_the_papers_shape_and_writes_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let v = nowa_json(&[
        "table1",
        "--quick",
        "--records",
        "500000",
        "--device-writes",
        "4",
        "--out",
        dir.path().to_str().unwrap(),
        "--json",
    ]);
    let rows = v["rows"].as_array().unwrap();
    let row = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap().clone();
    let f = |r: &serde_json::Value, k: &str| r[k].as_f64().unwrap();
    let inplace = row("in-place");
    let oop = row("-> out-of-place");
    let comp = row("+ comp. + pagepack");
    let aligned = row("+ aligning GC unit");
    assert!((f(&inplace, "db_waf") - 2.0).abs() < 0.05);
    assert!(
        f(&oop, "db_waf") > f(&inplace, "db_waf"),
        "out of place raises DB WAF"
    );
    assert_eq!(f(&oop, "compensation_mb"), 0.0);
    assert!(f(&comp, "db_waf") < 1.0, "compression cuts DB WAF below 1");
    // Packing works within a write batch: with write-back batches of many pages, the
    // compressed pages (the paper-like values: 0.41 of 4 KiB per leaf) share slots and the
    // ratio is ~0.52-0.56. Batches of one or two pages, each page in a slot of its own, give
    // 0.7 or more (docs/table1.md, "Why the numbers moved").
    assert!(
        f(&comp, "compression_ratio") < 0.62,
        "compression ratio {}: are write-back batches tiny again?",
        f(&comp, "compression_ratio")
    );
    assert!(
        f(&aligned, "ssd_waf") <= 1.02,
        "NoWA + alignment: SSD WAF 1.00"
    );
    // Total WAF near the compression ratio: the user bytes as compressed plus DB GC and
    // compensation (paper: total 0.60 with the dataset compressed to 0.52), no SSD GC.
    let total = f(&aligned, "total_waf");
    let ratio = f(&aligned, "compression_ratio");
    assert!(
        total >= ratio && total <= 1.35 * ratio,
        "total WAF {total} vs compression ratio {ratio}"
    );
    assert_eq!(rows.len(), 7);
    // Every row says what bounds it: the timing model's device-bound throughput, the CPU
    // time per operation, and which of the two.
    for r in rows {
        assert!(f(r, "device_bound_ops_per_sec") > 0.0, "{r}");
        assert!(f(r, "cpu_us_per_op") > 0.0, "{r}");
        assert!(
            ["device", "cpu"].contains(&r["bound"].as_str().unwrap()),
            "{r}"
        );
        assert_eq!(r["interrupted"], false);
    }
    assert_eq!(
        v["spec"]["pacing"]["paced"], true,
        "table1 is paced by default"
    );
    for f in ["table1.csv", "table1.json", "table1.txt", "table1.svg"] {
        assert!(dir.path().join(f).exists(), "{f} missing");
    }
    // The bar chart passes the layout check every figure's test applies.
    nowa_bench::plot_layout::check_file(&dir.path().join("table1.svg")).unwrap();
    // The inferred GC unit equals the simulated SSD's superblock.
    assert_eq!(v["inferred_gc_unit_bytes"], v["ssd_gc_unit_bytes"]);
}

/// A table's JSON names its run (`nowa` identity with the resolved spec) and runs again as a
/// job: the same spec, seven rows.
#[test]
fn a_table1_result_runs_again_as_a_job() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "table1",
        "--quick",
        "--records",
        "20k",
        "--device-writes",
        "1",
        "-q",
        "--json",
    ];
    let first = nowa_json(&args);
    let id = &first["nowa"];
    assert_eq!(id["command"], "table1");
    assert_eq!(id["spec"]["records"], 20_000);
    assert_eq!(id["spec"]["values"], "paper");
    assert_eq!(id["spec"], first["spec"], "the identity names the spec run");
    let path = dir.path().join("t.json");
    std::fs::write(&path, first.to_string()).unwrap();
    let again = nowa_json(&["run", "-q", "--json", path.to_str().unwrap()]);
    assert_eq!(again["nowa"]["spec"], id["spec"]);
    assert_eq!(again["rows"].as_array().map(Vec::len), Some(7));
    assert_eq!(
        again["rows"][0]["db_waf"], first["rows"][0]["db_waf"],
        "in place: 2.0"
    );
}

/// FDP: every zone fills exactly one reclaim unit of its own handle, so the SSD never copies.
/// Both the default (4 open zones, background GC) and the most open zones FDP allows (7 on 8
/// handles, handle 0 kept for metadata) with foreground GC only (deterministic).
#[test]
fn ycsb_out_of_place_on_fdp_has_ssd_waf_exactly_one() {
    for (open, bg) in [("4", "on"), ("7", "off")] {
        let v = nowa_json(&[
            "ycsb",
            "-q",
            "--json",
            "--records",
            "50000",
            "--ops",
            "200000",
            "--write-path",
            "oop",
            "--compression",
            "zstd",
            "--sim-mode",
            "fdp:8",
            "--zone-size",
            "auto",
            "--separate-wal",
            "--open-zones",
            open,
            "--background-gc",
            bg,
        ]);
        assert!(v["db_waf"].as_f64().unwrap() < 1.0);
        assert_eq!(v["drilldown"]["doublewrite_bytes"].as_u64().unwrap(), 0);
        // The device was written several times over, so SSD GC had every chance to run.
        let written = v["drilldown"]["device_host_bytes"].as_f64().unwrap();
        assert!(
            written > 4.0 * v["device_capacity"].as_f64().unwrap(),
            "{v}"
        );
        assert_eq!(
            v["drilldown"]["ssd_gc_bytes"].as_u64().unwrap(),
            0,
            "open {open} bg {bg}"
        );
        assert_eq!(v["ssd_waf"].as_f64().unwrap(), 1.0, "open {open} bg {bg}");
    }
}

#[test]
fn ycsb_out_of_place_on_zns_has_ssd_waf_exactly_one() {
    let v = nowa_json(&[
        "ycsb",
        "-q",
        "--json",
        "--records",
        "50000",
        "--device-writes",
        "3",
        "--write-path",
        "oop",
        "--compression",
        "lz4",
        "--sim-mode",
        "zns",
        "--zone-size",
        "auto",
        "--separate-wal",
    ]);
    assert_eq!(v["ssd_waf"].as_f64().unwrap(), 1.0);
    assert!(v["stats"]["zones_reclaimed"].as_u64().unwrap() > 0);
}
