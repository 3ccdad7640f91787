//! `nowa ycsb` as a user runs it, including a kill -9 in the middle of a durable run.
use nowa_device::{FileDevice, FileOptions};
use nowa_engine::{Config, Engine};
use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{assert_usage_errors, nowa, nowa_json};

#[test]
fn bad_flags_exit_2() {
    assert_usage_errors(&[
        vec!["ycsb", "--records", "0"],
        vec!["ycsb", "--workload", "Z"],
        vec!["ycsb", "--values", "weird"],
        vec!["ycsb", "--dataset-fill", "2"],
        vec!["ycsb", "--sim-mode", "fdp:0"],
        vec!["ycsb", "--durability", "maybe"],
        vec!["ycsb", "--threads", "0"],
    ]);
}

/// how-to-write-to-ssds.md Table 1, first row: in place with doublewrite, DB WAF = 2.00.
#[test]
fn in_place_with_doublewrite_has_db_waf_two_on_simulated_ssd() {
    let v = nowa_json(&[
        "ycsb",
        "-q",
        "--json",
        "--records",
        "50000",
        "--ops",
        "300000",
        "--seed",
        "3",
    ]);
    let db = v["db_waf"].as_f64().unwrap();
    assert!((db - 2.0).abs() <= 0.05, "DB WAF {db}");
    let ssd = v["ssd_waf"].as_f64().unwrap();
    assert!(ssd >= 1.0, "SSD WAF {ssd}");
    assert!(v["drilldown"]["doublewrite_bytes"].as_u64().unwrap() > 0);
    assert!(!v["ticks"].as_array().unwrap().is_empty());
}

/// Kill the process with SIGKILL while it runs durable updates on a file (`extra` says how),
/// reopen, and check every update the ack log lists is there (same or newer version).
#[test]
fn kill_9_during_ycsb_on_a_file_loses_no_acknowledged_write() {
    kill_9_during_ycsb(&["--durability", "sync", "--pool", "1MiB"]);
}

/// Async commits with a durability point every 40 updates (`--durable-every`): the ack log
/// lists updates once a durability point covered them, and none of those is lost. The pool
/// holds the data, so no eviction flushes the WAL: without the points, the acknowledged
/// updates of up to 1 MiB of WAL would be lost.
#[test]
fn kill_9_with_durable_every_loses_no_durable_write() {
    kill_9_during_ycsb(&[
        "--durability",
        "async",
        "--durable-every",
        "40",
        "--pool",
        "8MiB",
    ]);
}

/// The same with hot-page-aware checkpointing deferring pages (and the page cleaner on).
#[test]
fn kill_9_with_checkpoint_deferral_loses_no_acknowledged_write() {
    kill_9_during_ycsb(&[
        "--durability",
        "sync",
        "--pool",
        "1MiB",
        "--max-checkpoint-count",
        "8",
        "--wal-limit",
        "1MiB",
    ]);
}

#[expect(
    clippy::unwrap_used,
    reason = "a test helper fails the test by panicking"
)]
fn kill_9_during_ycsb(extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("db.img");
    let ack = dir.path().join("ack.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args([
            "ycsb",
            "-q",
            "--device",
            img.to_str().unwrap(),
            "--capacity",
            "64MiB",
            "--records",
            "20000",
            "--threads",
            "1",
            "--seconds",
            "60",
            "--ack-log",
            ack.to_str().unwrap(),
            "--seed",
            "5",
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        let acked = std::fs::read_to_string(&ack)
            .map(|s| s.lines().count())
            .unwrap_or(0);
        if acked > 300 {
            break;
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("nowa ycsb exited early: {st}");
        }
        assert!(
            t.elapsed() < Duration::from_secs(50),
            "no progress: {acked} acks"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let mut last: HashMap<u64, u64> = HashMap::new();
    for line in std::fs::read_to_string(&ack).unwrap().lines() {
        let mut it = line.split_whitespace();
        let (Some(id), Some(ver)) = (it.next(), it.next()) else {
            continue;
        }; // torn last line
        let (Ok(id), Ok(ver)) = (id.parse::<u64>(), ver.parse::<u64>()) else {
            continue;
        };
        last.insert(id, ver);
    }
    assert!(last.len() > 100);
    let dev = FileDevice::open(&img, &FileOptions::default()).unwrap();
    let engine = Engine::open(
        dev,
        Config {
            pool_bytes: 1 << 20,
            ..Config::default()
        },
    )
    .unwrap();
    for (id, ver) in &last {
        let v = engine
            .get(&id.to_be_bytes())
            .unwrap()
            .unwrap_or_else(|| panic!("acknowledged key {id} lost"));
        let got = nowa_bench::ycsb::pattern_version(&v, *id).unwrap();
        assert!(
            got >= *ver,
            "key {id}: acknowledged version {ver}, found {got}"
        );
    }
    // Records never updated still hold their loaded value.
    for id in (0..20000u64).step_by(997) {
        assert!(
            engine.get(&id.to_be_bytes()).unwrap().is_some(),
            "record {id} lost"
        );
    }
}

/// `--durable-every N` puts a durability point (one WAL flush) after every N updates: with
/// one thread, a pool holding the data and no checkpoint, the WAL flushes are updates / N
/// (plus the few async ones), and without it far fewer.
#[test]
fn durable_every_flushes_the_wal_once_per_n_updates() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "ycsb",
            "-q",
            "--json",
            "--device",
            "mem",
            "--records",
            "5000",
            "--pool",
            "8MiB",
            "--ops",
            "20000",
            "--threads",
            "1",
            "--seed",
            "4",
        ];
        args.extend_from_slice(extra);
        let v = nowa_json(&args);
        let updates = v["update"]["count"].as_u64().unwrap();
        let flushes = v["drilldown"]["wal_flushes"].as_u64().unwrap();
        (updates, flushes)
    };
    let (updates, flushes) = run(&["--durable-every", "100"]);
    assert!(updates > 9000, "{updates} updates");
    let points = updates / 100;
    assert!(
        flushes >= points && flushes <= points + 5,
        "{flushes} WAL flushes for {updates} updates, a point every 100"
    );
    let (updates, flushes) = run(&[]);
    assert!(
        flushes < updates / 1000,
        "async only: {flushes} WAL flushes for {updates} updates"
    );
}

fn ycsb_json(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "ycsb",
        "-q",
        "--json",
        "--records",
        "30000",
        "--ops",
        "120000",
        "--seed",
        "9",
        "--write-path",
        "oop",
        "--zone-size",
        "256KiB",
        "--pacing",
        "off",
    ];
    args.extend_from_slice(extra);
    nowa_json(&args)
}

/// The out-of-place switches as a user sets them: compression shrinks what the engine writes
/// per operation, and packing is what turns that into fewer bytes on the device.
#[test]
fn out_of_place_switches() {
    let off = ycsb_json(&["--compression", "off", "--background-gc", "off"]);
    let packed = ycsb_json(&["--compression", "lz4", "--packing", "on"]);
    let unpacked = ycsb_json(&["--compression", "lz4", "--packing", "off"]);
    let b = |v: &serde_json::Value| v["logical_bytes_per_op"].as_f64().unwrap();
    assert_eq!(
        off["drilldown"]["doublewrite_bytes"].as_u64(),
        Some(0),
        "out of place has no doublewrite"
    );
    assert!(
        b(&packed) < 0.8 * b(&off),
        "lz4+packing {} vs off {}",
        b(&packed),
        b(&off)
    );
    assert!(
        b(&packed) < b(&unpacked),
        "packing on {} vs off {}",
        b(&packed),
        b(&unpacked)
    );
    assert_usage_errors(&[
        vec!["ycsb", "--write-path", "sideways"],
        vec!["ycsb", "--compression", "gzip"],
        vec!["ycsb", "--packing", "maybe"],
        vec!["ycsb", "--write-path", "oop", "--zone-size", "0"],
        vec!["ycsb", "--compression", "lz4"],
        vec!["ycsb", "--nowa"],
    ]);
}

/// `--dataset-fill` means what it says: the simulated SSD is dataset / fill (the size Table 1
/// uses), unless out-of-place zones (open + GC reserve, uncompressed) would not fit; then the
/// device grows and a notice says so, instead of the load failing.
#[test]
fn dataset_fill_sizes_the_device_and_out_of_place_enlarges_it_when_needed() {
    let fill = |extra: &[&str]| -> (f64, String) {
        let mut args = vec![
            "ycsb",
            "-q",
            "--json",
            "--records",
            "200000",
            "--ops",
            "2000",
            "--separate-wal",
        ];
        args.extend_from_slice(extra);
        let out = nowa(&args);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{args:?}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let cap = v["device_capacity"].as_f64().unwrap();
        let data = nowa_bench::ycsb::estimate_dataset_bytes(200000, 120) as f64;
        (data / cap, err)
    };
    let (f, err) = fill(&[]);
    assert!((0.85..=0.9).contains(&f), "in place: fill {f}");
    assert!(!err.contains("enlarged"), "{err}");
    let (f, err) = fill(&[
        "--write-path",
        "oop",
        "--sim-mode",
        "zns",
        "--zone-size",
        "auto",
    ]);
    assert!(f < 0.85, "ZNS out of place: fill {f}");
    assert!(err.contains("device enlarged"), "{err}");
    // Plain memory is enlarged too (the load used to fail with "data region full").
    let (f, err) = fill(&["--write-path", "oop", "--device", "mem"]);
    assert!(f < 0.9, "memory out of place: fill {f}");
    assert!(err.contains("device enlarged"), "{err}");
}

/// Honest numbers: on a simulated SSD every run reports the device-bound throughput of the
/// timing model, the CPU time per operation and which of the two bounds it; paced (the
/// default) the measured OPS stay at or below the device bound, unpaced they are free of it
/// and the output says so.
#[test]
fn every_run_says_what_bounds_it() {
    let run = |pacing: &str| {
        nowa_json(&[
            "ycsb",
            "-q",
            "--json",
            "--records",
            "30000",
            "--ops",
            "100000",
            "--seed",
            "4",
            "--pacing",
            pacing,
        ])
    };
    let paced = run("on");
    let b = &paced["bound"];
    assert_eq!(b["paced"], true);
    let device = b["device_bound_ops_per_sec"].as_f64().unwrap();
    let ops = paced["ops_per_sec"].as_f64().unwrap();
    assert!(
        device > 0.0 && b["cpu_us_per_op"].as_f64().unwrap() > 0.0,
        "{b}"
    );
    assert!(
        ops <= device * 1.05,
        "paced: {ops} ops/s above the device bound {device}"
    );
    let unpaced = run("off");
    assert_eq!(unpaced["bound"]["paced"], false);
    assert!(
        unpaced["bound"]["device_bound_ops_per_sec"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // The text summary names the bound and the pacing.
    let out = nowa(&[
        "ycsb",
        "-q",
        "--records",
        "20000",
        "--ops",
        "20000",
        "--pacing",
        "off",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("bound     ") && text.contains("UNPACED"),
        "{text}"
    );
    assert!(
        text.contains("device-bound") && text.contains("us/op"),
        "{text}"
    );
    // Memory and files have no timing model: no device bound, and the flag is refused.
    let mem = nowa_json(&[
        "ycsb",
        "-q",
        "--json",
        "--records",
        "20000",
        "--ops",
        "20000",
        "--device",
        "mem",
    ]);
    assert_eq!(mem["bound"]["by"], "unknown");
    assert!(mem["bound"]["device_bound_ops_per_sec"].is_null());
}

/// A failed write to the ack log stops the run with an error instead of being ignored (a crash
/// test must not miss an acknowledged update): /dev/full opens, and every write fails.
#[test]
fn a_failed_ack_log_write_fails_the_run() {
    let out = nowa(&[
        "ycsb",
        "-q",
        "--records",
        "5000",
        "--ops",
        "5000",
        "--ack-log",
        "/dev/full",
        "--threads",
        "1",
        "--pacing",
        "off",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ack log /dev/full"), "{err}");
}

/// The largest value the engine stores (its record limit minus the 8-byte key) loads and runs;
/// one byte more is refused up front (tests/bad_input.rs).
#[test]
fn the_largest_value_size_loads() {
    let v = nowa_json(&[
        "ycsb",
        "-q",
        "--json",
        "--records",
        "3000",
        "--ops",
        "3000",
        "--value-size",
        "1528",
        "--pacing",
        "off",
    ]);
    assert_eq!(v["spec"]["value_size"], 1528);
    assert!(v["ops"].as_u64().unwrap() >= 3000);
}

/// Out of place without a stop flag runs to steady state: the store writes --steady-writes
/// (3) times its space limit, so DB GC runs; the mapping's RAM is per mapped page.
#[test]
fn out_of_place_runs_to_steady_state_within_the_space_limit() {
    let limit = 12u64 << 20;
    let v = nowa_json(&[
        "ycsb",
        "-q",
        "--json",
        "--records",
        "30000",
        "--seed",
        "3",
        "--write-path",
        "oop",
        "--zone-size",
        "256KiB",
        "--space-limit",
        "12MiB",
        "--capacity",
        "64MiB",
        "--pacing",
        "off",
    ]);
    let d = &v["drilldown"];
    let u = |k: &str| d[k].as_u64().unwrap();
    let store = u("user_store_bytes") + u("db_gc_bytes") + u("compensation_bytes");
    assert!(store >= 3 * limit, "{d}");
    assert!(u("db_gc_bytes") > 0, "DB GC must run: {d}");
    assert!(v["db_waf"].as_f64().unwrap() > 1.0, "{v}");
    // 12 bytes per mapped page, in leaves of 1,024 pids (a small database pays one
    // partly used leaf).
    assert!(
        u("mapping_ram_bytes") < 16 * u("mapping_pages") + (16 << 10),
        "{d}"
    );
}

/// MiDAS in the engine's DB GC: its groups take the writes (user writes in HOT and group 1,
/// GC copies further down the chain) and its own victims free zones.
#[test]
fn out_of_place_runs_midas() {
    let v = ycsb_json(&["--placement", "midas"]);
    let p = &v["placement"];
    assert_eq!(p["placement"].as_str(), Some("midas"), "{p}");
    let classes = p["classes"].as_array().expect("per-class rows");
    let n = |c: &serde_json::Value, k: &str| c["stats"][k].as_u64().unwrap();
    let collected: u64 = classes.iter().map(|c| n(c, "units_collected")).sum();
    assert!(collected > 0, "DB GC ran: {p}");
    let gc_below_1 = classes
        .iter()
        .skip(2)
        .map(|c| n(c, "gc_writes"))
        .sum::<u64>();
    assert!(gc_below_1 > 0, "GC copies move down the chain: {p}");
    assert!(v["db_waf"].as_f64().unwrap() > 1.0, "{v}");
}

/// Out of place, the placement's per-class table (the same rows and formatter as `nowa sim`):
/// in the JSON with shares of writes and of valid data that each sum to 1, and in the text.
#[test]
fn out_of_place_prints_per_class_statistics() {
    let v = ycsb_json(&["--placement", "sepbit"]);
    let p = &v["placement"];
    assert_eq!(p["placement"].as_str(), Some("sepbit:6"), "{p}");
    let classes = p["classes"].as_array().expect("per-class rows");
    assert!(classes.len() >= 4, "{p}");
    let sum = |k: &str| -> f64 { classes.iter().map(|c| c[k].as_f64().unwrap()).sum() };
    assert!((sum("write_share") - 1.0).abs() < 1e-9, "{p}");
    assert!((sum("valid_share") - 1.0).abs() < 1e-9, "{p}");
    let collected: u64 = classes
        .iter()
        .map(|c| c["stats"]["units_collected"].as_u64().unwrap())
        .sum();
    assert!(collected > 0, "DB GC ran: {p}");
    let gp = classes
        .iter()
        .find(|c| c["stats"]["units_collected"].as_u64() > Some(0))
        .map(|c| c["mean_gp"].as_f64().unwrap())
        .unwrap();
    assert!(gp > 0.0 && gp <= 1.0, "{p}");
    assert!(
        classes
            .iter()
            .any(|c| c["mean_lifespan"].as_f64().is_some_and(|l| l > 0.0)),
        "{p}"
    );
    let out = nowa(&[
        "ycsb",
        "-q",
        "--records",
        "30000",
        "--ops",
        "60000",
        "--seed",
        "9",
        "--write-path",
        "oop",
        "--zone-size",
        "256KiB",
        "--pacing",
        "off",
        "--placement",
        "sepbit",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("placement sepbit:6"), "{text}");
    assert!(
        text.contains("% writes  % valid  avg lifespan") && text.contains("collected(bytes)"),
        "{text}"
    );
    let inplace = nowa_json(&[
        "ycsb",
        "-q",
        "--json",
        "--records",
        "2000",
        "--ops",
        "2000",
        "--pacing",
        "off",
    ]);
    assert!(inplace["placement"].is_null(), "in place has no placement");
}
