//! `nowa ssdiq` as a user runs it: exit codes, one-line errors, refusals, dry run, JSON,
//! `report`, Ctrl-C.

mod common;
use common::{nowa, SSDIQ_FAST as FAST};
use std::process::{Command, Output, Stdio};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_flags_exit_2_with_one_line() {
    let cases: &[&[&str]] = &[
        &["ssdiq", "sim", "--qd", "0"],
        &["ssdiq", "sim", "--bs", "1000"],
        &["ssdiq", "sim", "--bs", "4q"],
        &["ssdiq", "sim", "--workloads", "bogus"],
        &["ssdiq", "sim", "--engine", "aio"],
        &["ssdiq", "sim", "--fill", "1.5"],
        &["ssdiq", "sim", "--steps", "everything"],
        &["ssdiq", "sim", "--sweep", "2"],
        &["ssdiq", "sim", "--plot-format", "jpg"],
        &["ssdiq", "sim:1k"],
        &["ssdiq", "sim", "--sim-op", "0"],
        &["ssdiq"],
        &["ssdiq", "/nonexistent/dir/x.img"],
        &["ssdiq", "report", "/nonexistent.json"],
        // Ranges (issue 9): fractions above 1, nan/inf, zero rates and times, huge counts.
        &["ssdiq", "sim", "--fill", "50"],
        &["ssdiq", "sim", "--bg-load", "1.5"],
        &["ssdiq", "sim", "--warmup", "nan"],
        &["ssdiq", "sim", "--volume", "0"],
        &["ssdiq", "sim", "--volume", "inf"],
        &["ssdiq", "sim", "--read-time", "0"],
        &["ssdiq", "sim", "--lat-time", "-1"],
        &["ssdiq", "sim", "--interval", "0"],
        &["ssdiq", "sim", "--rate", "0"],
        &["ssdiq", "sim", "--threads", "1000"],
        &["ssdiq", "sim", "--qd", "5000"],
        &["ssdiq", "sim", "--bs", "1GiB"],
        &["ssdiq", "sim", "--sim-media-mbps", "0"],
        &["ssdiq", "sim", "--size", "1k"],
        &["ssdiq", "sim", "--workloads", ""],
        &["ssdiq", "sim", "--workloads", "zns:4"],
        &["ssdiq", "sim:1e300"],
    ];
    for args in cases {
        let o = nowa(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(
            e.trim_end().lines().count(),
            1,
            "{args:?}: not one line:\n{e}"
        );
        assert!(e.starts_with("nowa: error: "), "{args:?}: {e}");
        // A flag's error names the flag.
        if let Some(flag) = args.iter().find(|a| a.starts_with("--")) {
            assert!(e.contains(flag), "{args:?}: {e}");
        }
    }
    // Flags clap rejects (unknown flag, non-numeric value): also one line, exit 2.
    for args in [
        &["ssdiq", "sim", "--bogus"][..],
        &["ssdiq", "sim", "--qd", "x"],
    ] {
        let o = nowa(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert_eq!(
            e.trim_end().lines().count(),
            1,
            "{args:?}: not one line:\n{e}"
        );
        assert!(e.starts_with("nowa: error: "), "{args:?}: {e}");
    }
}

#[test]
fn refusals_and_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    // A file with an ext4 signature is refused without --force naming it.
    let sig = dir.path().join("ext4.img");
    let mut img = vec![0u8; 4 << 20];
    img[1024 + 0x38] = 0x53;
    img[1024 + 0x39] = 0xEF;
    std::fs::write(&sig, &img).unwrap();
    let p = sig.to_str().unwrap();
    let o = nowa(&["ssdiq", p]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("refusing") && e.contains("ext2/3/4") && e.trim_end().lines().count() == 1,
        "{e}"
    );
    assert_eq!(std::fs::read(&sig).unwrap(), img, "nothing may be written");
    // --force naming another path is refused as well.
    let o = nowa(&["ssdiq", p, "--force", "/dev/null"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A file that is not a nowa scratch target: refused, untouched.
    let user = dir.path().join("user.dat");
    std::fs::write(&user, vec![3u8; 4 << 20]).unwrap();
    let o = nowa(&["ssdiq", user.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a nowa scratch target"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&user).unwrap(), vec![3u8; 4 << 20]);

    // A block device without --force (a loop device, when we may create one).
    let back = dir.path().join("loop.img");
    std::fs::write(&back, vec![0u8; 8 << 20]).unwrap();
    match Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&back)
        .output()
    {
        Ok(out) if out.status.success() => {
            let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let o = nowa(&["ssdiq", &dev]);
            let _ = Command::new("losetup").args(["-d", &dev]).status();
            assert_eq!(o.status.code(), Some(2));
            assert!(
                stderr(&o).contains("refusing to write to block device"),
                "{}",
                stderr(&o)
            );
        }
        _ => eprintln!("SKIPPED block-device part: losetup not permitted"),
    }

    // --dry-run lists the destructive steps and creates nothing.
    let newf = dir.path().join("new.img");
    let o = nowa(&[
        "ssdiq",
        newf.to_str().unwrap(),
        "--size",
        "64MiB",
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("[DESTRUCTIVE] reset")
            && e.contains("[DESTRUCTIVE] seq-write")
            && e.contains("dry run"),
        "{e}"
    );
    assert!(!newf.exists());
}

#[test]
fn sim_json_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for op in ["0.07", "0.28"] {
        let out = dir.path().join(format!("op{op}"));
        let mut args = vec![
            "ssdiq",
            "sim:64MiB",
            "--sim-op",
            op,
            "--json",
            "--out",
            out.to_str().unwrap(),
            "--plot-format",
            "svg",
        ];
        args.extend_from_slice(FAST);
        let o = nowa(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let waf = v["summary"]["rand_write"][0]["waf_measured"]
            .as_f64()
            .unwrap();
        assert!(waf > 1.5, "{waf}");
        for f in [
            "ssdiq.json",
            "intervals.csv",
            "throughput.svg",
            "latency.svg",
        ] {
            assert!(out.join(f).exists(), "{f} missing");
        }
        files.push(out.join("ssdiq.json"));
    }
    let plot = dir.path().join("cmp.png");
    let o = nowa(&[
        "ssdiq",
        "report",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("OP 7%") && t.contains("OP 28%") && t.contains("Estimated OP"),
        "{t}"
    );
    assert!(std::fs::read(&plot).unwrap().starts_with(b"\x89PNG"));
    // The same chart as SVG passes the layout check every figure's test applies.
    let svg = dir.path().join("cmp.svg");
    let o = nowa(&[
        "ssdiq",
        "report",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    nowa_bench::plot_layout::check_file(&svg).unwrap();
}

#[test]
fn file_target_text_report() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.img");
    let o = nowa(&[
        "ssdiq",
        f.to_str().unwrap(),
        "--size",
        "64MiB",
        "--workloads",
        "uniform",
        "--steps",
        "rand-read,rand-write",
        "--warmup",
        "0.25",
        "--volume",
        "0.5",
        "--read-time",
        "0.3",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("NOT AN SSD") && t.contains("Rnd. Write [k IOPS]") && t.contains("regular file"),
        "{t}"
    );
    // The run left its scratch label: a second run on the file needs no --force.
    let o = nowa(&[
        "ssdiq",
        f.to_str().unwrap(),
        "--steps",
        "rand-write",
        "--workloads",
        "uniform",
        "--warmup",
        "0",
        "--volume",
        "0.1",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn ctrl_c_stops_cleanly_and_reports() {
    // A big simulated SSD so the run is still going when the signal arrives.
    let child = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args(["ssdiq", "sim:4GiB", "--volume", "20", "--read-time", "0.01"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = stderr(&o);
    // 130 as every command after Ctrl-C (was 1), and no "21 of 13 planned steps ran".
    assert_eq!(o.status.code(), Some(130), "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        out.contains("INTERRUPTED: stopped before the plan"),
        "{out}"
    );
    assert!(!out.contains("planned steps ran"), "{out}");
    assert!(err.contains("interrupted (Ctrl-C)"), "{err}");
}

#[test]
fn a_file_in_a_missing_directory_is_refused_before_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("no-such-dir").join("f.img");
    let o = nowa(&["ssdiq", f.to_str().unwrap(), "--size", "64MiB", "-q"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no-such-dir") && err.contains("does not exist"),
        "{err}"
    );
    assert!(!err.contains("plan for"), "refused before any work: {err}");
    assert!(!f.exists());
}

/// `nowa run RESULT.json` runs the same suite again: on the simulated SSD every number
/// repeats (the result carries its identity: command, complete spec, seed).
#[test]
fn a_json_result_runs_again_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["ssdiq", "sim:32MiB", "--workloads", "uniform", "--json"];
    args.extend_from_slice(FAST);
    let o = nowa(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(first["nowa"]["command"], "ssdiq");
    assert_eq!(first["nowa"]["spec"]["target"], "sim");
    assert_eq!(first["nowa"]["seed"], 42);
    let file = dir.path().join("r.json");
    std::fs::write(&file, &o.stdout).unwrap();
    let o = nowa(&["run", file.to_str().unwrap(), "--json", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut again: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut first = first;
    for v in [&mut first, &mut again] {
        v["nowa"]["started"] = serde_json::Value::Null;
    }
    assert_eq!(again, first);
}

/// A bad field of an ssdiq job file: one line naming it, exit 2.
#[test]
fn a_bad_job_field_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("j.json");
    std::fs::write(
        &file,
        r#"{"command": "ssdiq", "spec": {"target": "sim", "bogus": 1}}"#,
    )
    .unwrap();
    let o = nowa(&["run", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("bogus") && e.lines().count() == 1, "{e}");
}

/// Inside a phase the bar shows its share, the device's rate and an ETA (on a terminal:
/// `script` gives the run one); `-q` shows none.
#[test]
fn progress_inside_phases_shows_rate_and_eta() {
    let run = |quiet: &str| {
        common::on_a_terminal(&format!(
            "ssdiq sim:2GiB --workloads uniform --steps rand-write --warmup 0 --volume 1 {quiet}"
        ))
    };
    let shown = run("");
    assert!(
        shown
            .lines()
            .any(|l| l.contains("MB/s elapsed") && l.contains(" eta ")),
        "{shown}"
    );
    assert!(!run("-q").contains(" eta "));
}
