//! `nowa compare`: bad flags exit 2 naming the flag; where /dev/fuse, root and the tools
//! exist, a small comparison of nowa's engines and sqlite3 on ext4 on fresh vssds (table,
//! JSON with the run's identity, CSV), and an engine that is not installed reported as such.

mod common;
use common::{arg, assert_usage_errors, nowa, nowa_ok, on_path};
use std::path::Path;
use std::process::Command;

/// Why a comparison on ext4 cannot run here (it prints `SKIPPED test: why`), or None.
fn cannot_run(test: &str, tools: &[&str]) -> bool {
    // SAFETY: geteuid takes no arguments and cannot fail.
    let why = if unsafe { libc::geteuid() } != 0 {
        Some("not root (losetup and mount need it)".to_owned())
    } else if !Path::new("/dev/fuse").exists() {
        Some("no /dev/fuse on this machine".to_owned())
    } else {
        ["losetup", "mkfs.ext4", "mount", "umount"]
            .iter()
            .chain(tools)
            .find(|t| !on_path(t))
            .map(|t| format!("{t} is not installed (sqlite3: apt-get install sqlite3)"))
    };
    if let Some(why) = &why {
        println!("SKIPPED {test}: {why}");
    }
    why.is_some()
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let existing = tmp.path().join("out.csv");
    std::fs::write(&existing, b"keep").expect("file");
    let csv = existing.to_str().expect("utf-8");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--engines", "oracle"], "--engines"),
        (vec!["--workload", "ycsb-z"], "--workload"),
        (vec!["--records", "0"], "--records"),
        (vec!["--ops", "-5"], "--ops"),
        (vec!["--memory", "0"], "--memory"),
        (vec!["--fs", "zfs"], "--fs"),
        (vec!["--capacity", "1MiB"], "--capacity"),
        (vec!["--capacity", "64TiB"], "--capacity"),
        (vec!["--op", "-7%"], "--op"),
        (vec!["--fs", "raw", "--engines", "nowa-oop,sqlite3"], "--fs"),
        (vec!["--work", "/nonexistent/nowa"], "--work"),
        (vec!["--timing", "warp"], "--timing"),
        (vec!["--csv", csv], "--csv"),
    ];
    let all: Vec<Vec<&str>> = cases
        .iter()
        .map(|(a, _)| [&["compare"][..], a].concat())
        .collect();
    assert_usage_errors(&all);
    for (args, flag) in cases {
        let a = [&["compare"][..], &args].concat();
        let err = String::from_utf8_lossy(&nowa(&a).stderr).into_owned();
        assert!(err.contains(flag), "{a:?} does not name {flag}: {err}");
    }
    assert_eq!(
        std::fs::read(&existing).expect("read"),
        b"keep",
        "untouched"
    );
}

/// One `nowa compare` stream: `engines` each on a fresh vssd of `capacity`, `records` loaded
/// and `ops` of `workload` measured, `memory` for each engine.
struct Stream<'a> {
    engines: &'a str,
    workload: &'a str,
    records: u64,
    ops: u64,
    capacity: &'a str,
    memory: &'a str,
}

impl Stream<'_> {
    /// `compare` and the stream's flags, then `extra`.
    fn args(&self, extra: &[&str]) -> Vec<String> {
        let (records, ops) = (self.records.to_string(), self.ops.to_string());
        let flags = [
            "compare",
            "--engines",
            self.engines,
            "--workload",
            self.workload,
            "--records",
            &records,
            "--ops",
            &ops,
            "--capacity",
            self.capacity,
            "--memory",
            self.memory,
        ];
        flags.iter().chain(extra).map(|s| s.to_string()).collect()
    }

    /// Runs it with `--json` and `extra`, expecting success: the result as printed and parsed.
    fn json(&self, extra: &[&str]) -> (String, serde_json::Value) {
        let args = self.args(&[&["--json"][..], extra].concat());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let text = nowa_ok(&args);
        let j = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: bad JSON: {e}"));
        (text, j)
    }
}

/// The table row of `engine` in a `nowa compare` text output.
fn row<'a>(stdout: &'a str, engine: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(engine))
        .unwrap_or_else(|| panic!("no {engine} row: {stdout}"))
}

/// The vssd received exactly the bytes the loop device's /sys/block counters say were written,
/// from the attach (before mkfs) to the unmount after the engine stopped.
fn same_bytes_as_the_block_layer(r: &serde_json::Value) {
    let b = &r["measured"]["block_layer_write_bytes"];
    let (block, vssd) = (b[0].as_u64().expect("loop"), b[1].as_u64().expect("vssd"));
    assert!(block > 1 << 20, "mkfs and the engine wrote: {r}");
    assert_eq!(block, vssd, "/sys/block vs the vssd's host bytes: {r}");
}

#[test]
fn nowa_and_sqlite3_on_ext4_on_fresh_vssds_one_stream() {
    let name = "nowa_and_sqlite3_on_ext4_on_fresh_vssds_one_stream";
    if cannot_run(name, &["sqlite3"]) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let csv = tmp.path().join("c.csv");
    let stream = Stream {
        engines: "nowa-inplace,nowa-oop,sqlite3",
        workload: "ycsb-a",
        records: 2000,
        ops: 400,
        capacity: "256MiB",
        memory: "16MiB",
    };
    let (_, j) = stream.json(&["--csv", arg(&csv), "--work", arg(tmp.path())]);
    assert_eq!(j["nowa"]["command"], "compare");
    assert_eq!(j["nowa"]["seed"], 42);
    assert_eq!(j["nowa"]["spec"]["records"], 2000);
    assert_eq!(j["ops"], 400);
    let rows = j["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 3);
    for r in rows {
        assert_eq!(r["status"], "ok", "{r}");
        let m = &r["measured"];
        assert_eq!(m["ops"], 400, "{r}");
        // About half the ops update a row, durably: every engine writes to the device.
        assert!(
            m["device_bytes_per_op"].as_f64().expect("bytes") > 100.0,
            "{r}"
        );
        assert!(m["ssd_waf"].as_f64().expect("waf") >= 1.0, "{r}");
        assert!(m["p99_us"].as_u64().expect("p99") >= m["p50_us"].as_u64().expect("p50"));
        // The stall tail: p99.9 and the longest operation, and how many took >= 1 ms.
        let (p999, max) = (
            m["p999_us"].as_u64().expect("p99.9"),
            m["max_us"].as_u64().expect("max"),
        );
        assert!(
            p999 >= m["p99_us"].as_u64().expect("p99") && max >= p999,
            "{r}"
        );
        assert!(m["stalls"].as_u64().expect("stalls") <= 400, "{r}");
        let share = m["stall_time_share"].as_f64().expect("share");
        assert!((0.0..=1.0).contains(&share), "{r}");
        assert!(m["memory_bytes"].as_u64().expect("memory") > 0, "{r}");
        same_bytes_as_the_block_layer(r);
    }
    let text = std::fs::read_to_string(&csv).expect("csv");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("# nowa {"), "{}", lines[0]);
    assert!(lines[1].starts_with("engine,status,device_bytes_per_op"));
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[4].starts_with("sqlite3,ok,"), "{}", lines[4]);
    // Nothing is left mounted or attached (under this run's --work: other tests run beside).
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let work = tmp.path().to_str().expect("utf-8");
    assert!(!mounts.contains(work), "a mount was left behind");
}

#[test]
fn an_engine_that_is_not_installed_is_reported_not_skipped() {
    let name = "an_engine_that_is_not_installed_is_reported_not_skipped";
    if cannot_run(name, &[]) {
        return;
    }
    // A PATH with the system tools but no sqlite3.
    let tmp = tempfile::tempdir().expect("tempdir");
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).expect("mkdir");
    for t in ["losetup", "mkfs.ext4", "mount", "umount"] {
        let real = std::env::split_paths(&std::env::var_os("PATH").expect("PATH"))
            .map(|d| d.join(t))
            .find(|p| p.is_file())
            .expect("on PATH");
        std::os::unix::fs::symlink(real, bin.join(t)).expect("symlink");
    }
    let small = Stream {
        engines: "sqlite3,nowa-inplace",
        workload: "ycsb-a",
        records: 500,
        ops: 50,
        capacity: "128MiB",
        memory: "8MiB",
    };
    let out = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .env("PATH", &bin)
        .args(small.args(&[]))
        .output()
        .expect("run nowa");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sqlite = row(&stdout, "sqlite3");
    assert!(
        sqlite.contains("not installed") && sqlite.contains("scripts/install-peers.sh sqlite3"),
        "{stdout}"
    );
    let nowa_row = row(&stdout, "nowa-inplace");
    assert!(!nowa_row.contains("not installed"), "{stdout}");
}

/// Whether python3 can import `module` (the wheels scripts/install-peers.sh installs).
fn python_has(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn rocksdb_and_lmdb_run_the_stream_through_their_driver() {
    let name = "rocksdb_and_lmdb_run_the_stream_through_their_driver";
    if cannot_run(name, &["python3"]) {
        return;
    }
    if !python_has("rocksdict") || !python_has("lmdb") {
        println!("SKIPPED {name}: the rocksdict or lmdb wheel is not installed (scripts/install-peers.sh rocksdb lmdb)");
        return;
    }
    let stream = Stream {
        engines: "rocksdb,lmdb",
        workload: "tpcc-lite",
        records: 2000,
        ops: 100,
        capacity: "256MiB",
        memory: "8MiB",
    };
    let (_, j) = stream.json(&[]);
    let rows = j["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    for r in rows {
        // Every read of the stream found a whole value (else the row says failed).
        assert_eq!(r["status"], "ok", "{r}");
        let m = &r["measured"];
        assert_eq!(m["ops"], 100, "{r}");
        let dev = m["device_bytes_per_op"].as_f64().expect("bytes");
        // A new-order transaction updates 6 to 16 rows and commits durably.
        assert!(dev > 1000.0, "{r}");
        assert!(
            m["device_bytes_per_op_to_close"].as_f64().expect("bytes") >= dev,
            "{r}"
        );
        // ext4: the fsyncs made the journal commit.
        assert!(m["journal_commits"].as_u64().expect("ext4") > 0, "{r}");
        same_bytes_as_the_block_layer(r);
    }
    assert!(rows[1]["setup"]
        .as_str()
        .expect("setup")
        .contains("fsync at every commit"));
}

#[test]
fn a_compare_result_runs_again_through_nowa_run() {
    let name = "a_compare_result_runs_again_through_nowa_run";
    if cannot_run(name, &[]) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let stream = Stream {
        engines: "nowa-inplace,nowa-oop",
        workload: "ycsb-w",
        records: 3000,
        ops: 300,
        capacity: "128MiB",
        memory: "8MiB",
    };
    let work = ["--fs", "raw", "--seed", "9", "--timing", "femu", "--work"];
    let (first, a) = stream.json(&[&work[..], &[arg(tmp.path())]].concat());
    let result = tmp.path().join("result.json");
    std::fs::write(&result, &first).expect("write");
    let again = nowa_ok(&["run", result.to_str().expect("utf-8"), "--json", "--quiet"]);
    let b: serde_json::Value = serde_json::from_str(&again).expect("JSON");
    assert_eq!(b["nowa"]["command"], "compare");
    assert_eq!(a["nowa"]["spec"], b["nowa"]["spec"], "the same spec ran");
    for (ra, rb) in a["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .zip(b["rows"].as_array().expect("rows"))
    {
        // nowa's engines on the raw disk write the same bytes for the same stream.
        assert_eq!(
            ra["measured"]["host_write_bytes"], rb["measured"]["host_write_bytes"],
            "{ra} / {rb}"
        );
        // --timing femu: the figures on the model's clock, in both runs.
        for r in [ra, rb] {
            let m = &r["measured"];
            assert!(m["model_secs"].as_f64().is_some_and(|s| s > 0.0), "{m}");
            assert!(m["model_p99_us"].as_u64().is_some_and(|u| u > 0), "{m}");
            assert!(m["model_stalls"].as_u64().is_some(), "{m}");
        }
    }
    assert_eq!(
        a["nowa"]["spec"]["timing"], "femu",
        "the spec has the timing"
    );
    // A bad value in the result's spec is refused naming the field, exit 2.
    let bad = first.replace("\"records\": 3000", "\"records\": 0");
    std::fs::write(&result, bad).expect("write");
    let out = nowa(&["run", result.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("records"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// nowa out of place on the vssd's raw disk: its trims reach the vssd, and its zones are the
/// vssd's GC units filled one at a time. Before, trims were ignored (the disk was opened as a
/// regular file: trim_bytes 0) and four 1 MiB zones were filled by turns over 2 MiB GC units:
/// SSD WAF 3.69 on this run before, 1.58 after (docs/vssd.md, "Out of place on the raw disk").
#[test]
fn out_of_place_on_the_raw_disk_trims_and_fills_one_gc_unit_at_a_time() {
    let name = "out_of_place_on_the_raw_disk_trims_and_fills_one_gc_unit_at_a_time";
    if cannot_run(name, &[]) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let stream = Stream {
        engines: "nowa-oop",
        workload: "ycsb-w",
        records: 250_000,
        ops: 20_000,
        capacity: "64MiB",
        memory: "8MiB",
    };
    let (_, r) = stream.json(&["--fs", "raw", "--work", arg(tmp.path())]);
    let m = &r["rows"][0]["measured"];
    let waf = m["ssd_waf"].as_f64().expect("ssd_waf");
    println!("{name}: SSD WAF {waf:.3}, trimmed {} B", m["trim_bytes"]);
    assert!(m["trim_bytes"].as_u64().expect("trim_bytes") > 0, "{m}");
    assert!(waf < 2.5, "SSD WAF {waf} (3.69 with the old setup)");
}

/// A Rust engine whose cargo feature is off gets a row that says so, with the build line that
/// adds it; the other engines still run. (With the feature on, the engine runs instead: its
/// driver's tests are `cargo test -p nowa-lab --features rust-engines --test rust_engines`.)
#[cfg(not(feature = "sled"))]
#[test]
fn a_rust_engine_not_built_in_is_reported_with_its_build_line() {
    let name = "a_rust_engine_not_built_in_is_reported_with_its_build_line";
    if cannot_run(name, &[]) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let small = Stream {
        engines: "sled,nowa-inplace",
        workload: "ycsb-a",
        records: 500,
        ops: 50,
        capacity: "128MiB",
        memory: "8MiB",
    };
    let args = small.args(&["--work", arg(tmp.path())]);
    let stdout = nowa_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let sled = row(&stdout, "sled");
    assert!(
        sled.contains("not built in")
            && sled.contains("cargo build --release -p nowa-cli --features sled"),
        "{stdout}"
    );
    // Its setup line still states the durability it would run with.
    assert!(stdout.contains("flush() (fsync)"), "{stdout}");
    let nowa_row = row(&stdout, "nowa-inplace");
    assert!(!nowa_row.contains("not built in"), "{stdout}");
}
