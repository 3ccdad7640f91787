//! `nowa tpcc` as a user runs it: a checked run with JSON output, `kill -9` of a real child
//! process in the middle of a durable run on a file, then recovery and the consistency check
//! (`--check-only`), in place and out of place; the device sizing (a full device's message,
//! a large pool's WAL).

mod common;

use common::{nowa, nowa_json};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn a_checked_run_reports_and_is_consistent() {
    let v = nowa_json(&[
        "tpcc",
        "-q",
        "--device",
        "mem",
        "--warehouses",
        "1",
        "--transactions",
        "1500",
        "--check",
        "--json",
        "--seed",
        "7",
    ]);
    assert!(v["consistency"]["violations"]
        .as_array()
        .expect("test step")
        .is_empty());
    let run = &v["run"];
    let done = run["transactions"].as_u64().expect("test step")
        + run["rollbacks"].as_u64().expect("test step");
    assert_eq!(done, 1500);
    assert!(run["tpmc"].as_f64().expect("test step") > 0.0);
    assert!(
        v["load"]["warehouses_per_minute"]
            .as_f64()
            .expect("test step")
            > 0.0
    );
    assert!(v["wal_bytes_per_txn"].as_f64().expect("test step") > 0.0);
}

/// Both write paths report how many page writes each page-store flush made durable (the
/// JSON had no such field: `nowa ycsb` reported it, `nowa tpcc` did not); out of place one
/// flush per write-back batch gives at least 16.
#[test]
fn page_writes_per_store_flush_is_reported_on_both_write_paths() {
    for wp in ["inplace", "oop"] {
        let v = nowa_json(&[
            "tpcc",
            "-q",
            "--warehouses",
            "1",
            "--transactions",
            "1500",
            "--write-path",
            wp,
            "--json",
            "--seed",
            "7",
        ]);
        let per = v["page_writes_per_store_flush"]
            .as_f64()
            .unwrap_or_else(|| panic!("{wp}: page_writes_per_store_flush is a number"));
        let d = &v["drilldown"];
        assert!(d["store_flushes"].as_u64().expect("test step") > 0, "{wp}");
        assert!(per >= 16.0, "{wp}: {per} page writes per store flush");
    }
}

/// Starts a sync-commit run on `img`, kills it with SIGKILL a few seconds into the run phase,
/// then recovers and checks with `--check-only`.
fn kill_9_then_check(write_path: &str) {
    let dir = tempfile::tempdir().expect("test step");
    let img = dir.path().join("tpcc.img");
    let img = img.to_str().expect("test step");
    let common = [
        "--device",
        img,
        "--capacity",
        "512MiB",
        "--warehouses",
        "1",
        "--pool",
        "16MiB",
        "--write-path",
        write_path,
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .arg("tpcc")
        .args(common)
        .args(["--duration", "120", "--durability", "sync", "--seed", "11"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("test step");
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().expect("test step");
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let t = Instant::now();
    let mut samples = 0;
    while samples < 3 {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(l) if l.contains("txn/s") => samples += 1,
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("nowa tpcc exited early"),
        }
        assert!(t.elapsed() < Duration::from_secs(300), "no run progress");
    }
    child.kill().expect("test step"); // SIGKILL
    child.wait().expect("test step");
    let out = nowa(
        &["tpcc", "--check-only"]
            .iter()
            .copied()
            .chain(common)
            .collect::<Vec<_>>(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}{stderr}");
    assert!(out.status.success(), "{write_path}: {stdout}{stderr}");
    assert!(stdout.contains("consistent"), "{stdout}");
    assert!(stderr.contains("clean shutdown false"), "{stderr}");
}

#[test]
fn kill_9_mid_run_then_recovery_is_consistent_in_place() {
    kill_9_then_check("inplace");
}

#[test]
fn kill_9_mid_run_then_recovery_is_consistent_out_of_place() {
    kill_9_then_check("oop");
}

/// Standard TPC-C grows the database: on a device sized for the loaded data only, the run
/// fills it and `nowa tpcc` says so in one line naming what to change (exit 1, no panic).
#[test]
fn a_device_filled_by_a_growing_database_says_why_and_what_to_change() {
    let out = nowa(&[
        "tpcc",
        "-q",
        "--warehouses",
        "1",
        "--threads",
        "1",
        "--duration",
        "300",
        "--capacity",
        "170MiB",
        "--seed",
        "3",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let last = err.lines().last().expect("an error line");
    assert!(
        last.starts_with("nowa: error: ")
            && last.contains("the device is full during the run (data region full"),
        "{err}"
    );
    for hint in [
        "grows the database",
        "--steady",
        "--capacity",
        "--dataset-fill",
    ] {
        assert!(last.contains(hint), "{hint}: {last}");
    }
}

/// docs/tpcc.md section 10, item 7: a pool as large as the device's spare room made the
/// default WAL limit (the pool size) take the loaded data's space and the load failed. The
/// default WAL now shrinks to leave the data its room.
#[test]
fn a_large_pool_leaves_the_loaded_data_its_room() {
    let v = nowa_json(&[
        "tpcc",
        "-q",
        "--warehouses",
        "1",
        "--transactions",
        "300",
        "--capacity",
        "200MiB",
        "--pool",
        "150MiB",
        "--json",
    ]);
    let run = &v["run"];
    let done = run["transactions"].as_u64().expect("test step")
        + run["rollbacks"].as_u64().expect("test step");
    assert_eq!(done, 300);
}

/// `--device-writes K` ends the run once the device received K times its capacity (here 5%
/// of 400 MiB), promptly.
#[test]
fn device_writes_end_the_run_after_k_capacities() {
    let v = nowa_json(&[
        "tpcc",
        "-q",
        "--device",
        "mem",
        "--warehouses",
        "1",
        "--capacity",
        "400MiB",
        "--device-writes",
        "0.05",
        "--json",
    ]);
    let written = v["drilldown"]["device_host_bytes"]
        .as_f64()
        .expect("test step");
    let k = written / f64::from(400u32 << 20);
    assert!((0.05..0.15).contains(&k), "{k} capacities written");
    assert!(v["run"]["transactions"].as_u64().expect("test step") > 0);
}
