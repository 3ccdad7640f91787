//! `nowa tpcc` on the paced simulated SSD (`--sim-timing`, the one timing model `nowa ycsb`
//! uses) and its refusal on devices without a timing model.

mod common;
use common::{assert_usage_errors, nowa_json};

#[test]
fn tpcc_runs_paced_by_the_chip_model() {
    let v = nowa_json(&[
        "tpcc",
        "-q",
        "--json",
        "--transactions",
        "400",
        "--seed",
        "3",
        "--sim-timing",
        "femu",
        "--max-checkpoint-count",
        "3",
    ]);
    assert_eq!(v["pacing"]["chips"]["program_us"], 200.0);
    assert_eq!(v["pacing"]["paced"], true);
    let busy = v["device_busy_secs"].as_f64().unwrap();
    assert!(busy > 0.0, "the run's media work is timed: {busy}");
    assert!(v["read_bytes_per_txn"].as_f64().unwrap() >= 0.0);
    let done = v["run"]["transactions"].as_u64().unwrap() + v["run"]["rollbacks"].as_u64().unwrap();
    assert_eq!(done, 400);
}

#[test]
fn tpcc_timing_flags_need_the_simulated_ssd() {
    assert_usage_errors(&[
        vec!["tpcc", "--device", "mem", "--sim-timing", "femu"],
        vec!["tpcc", "--device", "mem", "--pacing", "off"],
        vec!["tpcc", "--sim-timing", "nand"],
    ]);
}
