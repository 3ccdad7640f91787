//! Ctrl-C in `nowa sim`, `ycsb`, `table1`, `tpcc`, `infer-gc-unit`, `trace gen`, `trace
//! stats`, `ckpt figures`, `reproduce`, `plan run`, `plan bench` and `frozen replay`: the run stops, prints and writes what it
//! measured so far, and exits with 130 (128 + SIGINT).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Starts `nowa args`, waits until its stderr shows `ready` (the run's header, printed once
/// the Ctrl-C handler is installed) and then `after`, sends SIGINT, and collects the output.
fn interrupt(args: &[&str], ready: &str, after: Duration) -> (Output, String, f64) {
    interrupt_at(args, ready, None, after)
}

/// [`interrupt`], waiting also for `file` to exist (a part of the run finished) before `after`.
fn interrupt_at(
    args: &[&str],
    ready: &str,
    file: Option<&Path>,
    after: Duration,
) -> (Output, String, f64) {
    let mut child: Child = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn nowa");
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut err = String::new();
    let t = Instant::now();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("{args:?}: no '{ready}' on stderr:\n{err}"));
        err.push_str(&line);
        err.push('\n');
        if line.contains(ready) {
            break;
        }
    }
    while let Some(f) = file.filter(|f| !f.exists()) {
        assert!(
            t.elapsed() < Duration::from_secs(900),
            "{} never written",
            f.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(after);
    assert!(
        child.try_wait().expect("poll nowa").is_none(),
        "{args:?} ended before Ctrl-C:\n{err}"
    );
    let pid = child.id().to_string();
    let sent = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("run kill");
    assert!(kill.success());
    let out = child.wait_with_output().expect("wait for nowa");
    let stop_secs = sent.elapsed().as_secs_f64();
    reader.join().expect("the stderr reader does not panic");
    err.extend(rx.try_iter().map(|l| l + "\n"));
    println!(
        "{args:?}: interrupted after {:.1} s, stopped in {stop_secs:.2} s",
        t.elapsed().as_secs_f64()
    );
    (out, err, stop_secs)
}

/// The run ended as Ctrl-C ends it: exit 130, "interrupted (Ctrl-C)" on stderr, within
/// `limit` seconds of the signal.
fn assert_stopped(out: &Output, err: &str, stop: f64, limit: f64) {
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted (Ctrl-C)"), "{err}");
    assert!(stop < limit, "took {stop} s to stop");
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn csv_rows(p: &Path) -> usize {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    // Not counted: the header and the run's identity line (`# nowa {...}`).
    text.lines()
        .filter(|l| !l.starts_with("# nowa "))
        .count()
        .saturating_sub(1)
}

#[test]
fn ctrl_c_in_sim_reports_the_intervals_measured_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("waf.csv");
    let (out, err, stop) = interrupt(
        &[
            "sim",
            "-q",
            "--json",
            "--capacity",
            "1GiB",
            "--warmup",
            "0.5",
            "--volume",
            "5000",
            "--interval",
            "0.1",
            "--csv",
            csv.to_str().unwrap(),
        ],
        "nowa sim: seed",
        Duration::from_millis(2500),
    );
    assert_stopped(&out, &err, stop, 10.0);
    let v = json(&out);
    // The JSON says it is partial (it did not: only the exit status told).
    assert!(
        v["interrupted"]
            .as_str()
            .unwrap()
            .contains("measured intervals ran"),
        "{v}"
    );
    let n = v["intervals"].as_array().unwrap().len();
    assert!((1..50_000).contains(&n), "{n} intervals");
    assert_eq!(csv_rows(&csv), n, "the CSV holds every interval printed");
    assert!(v["waf"].as_f64().unwrap() >= 1.0);
}

#[test]
fn ctrl_c_in_ycsb_reports_the_run_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("ticks.csv");
    let (out, err, stop) = interrupt(
        &[
            "ycsb",
            "-q",
            "--json",
            "--records",
            "20000",
            "--seconds",
            "1h",
            "--interval",
            "200ms",
            "--csv",
            csv.to_str().unwrap(),
        ],
        "nowa ycsb: seed",
        Duration::from_millis(3000),
    );
    assert_stopped(&out, &err, stop, 10.0);
    let v = json(&out);
    assert_eq!(v["interrupted"], true);
    assert!(v["ops"].as_u64().unwrap() > 0, "{v}");
    assert!(v["run_secs"].as_f64().unwrap() < 60.0);
    let ticks = v["ticks"].as_array().unwrap().len();
    assert!(ticks >= 1);
    assert_eq!(csv_rows(&csv), ticks, "the CSV holds every tick printed");
}

#[test]
fn ctrl_c_in_table1_keeps_the_rows_run_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let (out, err, stop) = interrupt(
        &[
            "table1",
            "--quick",
            "--records",
            "100000",
            "--device-writes",
            "100000",
            "--json",
            "--out",
            dir.path().to_str().unwrap(),
        ],
        "nowa table1:",
        Duration::from_millis(5000),
    );
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(stop < 20.0, "took {stop} s to stop");
    let v = json(&out);
    assert_eq!(v["interrupted"], true);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        1,
        "the first row runs 100000 device writes: interrupted"
    );
    assert_eq!(rows[0]["interrupted"], true);
    assert!(rows[0]["ops_per_sec"].as_f64().unwrap() > 0.0);
    for f in ["table1.csv", "table1.json", "table1.txt", "table1.svg"] {
        assert!(dir.path().join(f).exists(), "{f} missing");
    }
    assert_eq!(csv_rows(&dir.path().join("table1.csv")), 1);
    let txt = std::fs::read_to_string(dir.path().join("table1.txt")).unwrap();
    assert!(txt.contains("INTERRUPTED"), "{txt}");
}

/// Ctrl-C in the run phase of `nowa tpcc`: exit 130, the summary opens with the
/// "interrupted" line, and the JSON (`--out DIR`: DIR/tpcc.json) says `"interrupted": true`
/// with the part run; DIR/samples.csv holds the intervals under the identity line.
#[test]
fn ctrl_c_in_tpcc_reports_the_run_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let file = out_dir.join("tpcc.json");
    let (out, err, stop) = interrupt(
        &[
            "tpcc",
            "-q",
            "--warehouses",
            "1",
            "--threads",
            "1",
            "--steady",
            "--duration",
            "1h",
            "--out",
            out_dir.to_str().unwrap(),
        ],
        "nowa tpcc: loaded",
        Duration::from_millis(2000),
    );
    assert_stopped(&out, &err, stop, 20.0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .next()
            .is_some_and(|l| l.starts_with("interrupted (Ctrl-C) after")),
        "{stdout}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["nowa"]["command"], "tpcc");
    assert!(v["run"]["transactions"].as_u64().unwrap() > 0, "{v}");
    let samples = out_dir.join("samples.csv");
    let csv = std::fs::read_to_string(&samples).unwrap();
    assert!(csv.starts_with("# nowa {"), "{csv}");
    assert_eq!(
        csv_rows(&samples),
        v["run"]["samples"].as_array().unwrap().len(),
        "every interval of the JSON"
    );
}

/// Ctrl-C in `nowa sim` without `--json`: the text summary is printed and says it is partial
/// on stdout (only the exit status and stderr told).
#[test]
fn ctrl_c_in_sim_marks_the_text_summary() {
    let (out, err, _) = interrupt(
        &[
            "sim",
            "-q",
            "--capacity",
            "1GiB",
            "--warmup",
            "0.5",
            "--volume",
            "5000",
        ],
        "nowa sim: seed",
        Duration::from_millis(2500),
    );
    assert_eq!(out.status.code(), Some(130), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().any(
            |l| l.starts_with("interrupted (Ctrl-C): ") && l.contains("measured intervals ran")
        ),
        "{stdout}"
    );
    assert!(stdout.contains("WAF"), "the summary so far: {stdout}");
}

/// Ctrl-C in `nowa infer-gc-unit`: the sweep ends after the zone size being measured, the
/// sizes measured are printed with an "interrupted" line (not "no zone size up to MAX
/// reached", as if every size had been tried), the JSON says so, exit 130 (it had no Ctrl-C
/// handler: the process died without a word).
#[test]
fn ctrl_c_in_infer_gc_unit_reports_the_sizes_measured() {
    let args = [
        "infer-gc-unit",
        "--capacity",
        "1GiB",
        "--pages-per-block",
        "16",
        "--blocks-per-superblock",
        "512",
        "--volume",
        "2",
    ];
    let (out, err, stop) = interrupt(
        &args,
        "nowa infer-gc-unit: seed",
        Duration::from_millis(2000),
    );
    assert_stopped(&out, &err, stop, 60.0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("interrupted (Ctrl-C): ") && l.contains("zone sizes measured")),
        "{stdout}"
    );
    assert!(!stdout.contains("reached WAF"), "{stdout}");
    let mut json = args.to_vec();
    json.push("--json");
    let (out, err, _) = interrupt(
        &json,
        "nowa infer-gc-unit: seed",
        Duration::from_millis(2000),
    );
    assert_eq!(out.status.code(), Some(130), "{err}");
    let v = self::json(&out);
    assert_eq!(v["interrupted"], true, "{v}");
    assert!(v["gc_unit_bytes"].is_null(), "{v}");
    assert_eq!(v["nowa"]["command"], "infer-gc-unit", "{v}");
}

/// A trace job checks Ctrl-C between records: `nowa trace gen` of a billion writes stops,
/// says so on stdout, exits 130 and keeps the records written (a whole CSV).
#[test]
fn ctrl_c_in_trace_gen_keeps_the_trace_so_far() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("t.csv");
    let o = out.to_str().expect("utf-8");
    let args = [
        "trace",
        "gen",
        o,
        "--writes",
        "1000M",
        "--capacity",
        "64MiB",
    ];
    let (res, err, _) = interrupt(&args, "nowa trace gen: seed", Duration::from_millis(700));
    let text = String::from_utf8_lossy(&res.stdout);
    assert_eq!(res.status.code(), Some(130), "{text}\n{err}");
    assert!(text.contains("interrupted (Ctrl-C)"), "{text}");
    let rows = csv_rows(&out);
    assert!(rows > 0 && rows < 1_000_000_000, "{rows} rows");
    let st = common_stats(o);
    assert_eq!(
        st["total"]["writes"].as_u64(),
        Some(rows as u64),
        "every row reads back"
    );
}

fn common_stats(file: &str) -> serde_json::Value {
    let o = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args(["trace", "stats", file, "--json"])
        .output()
        .expect("run nowa");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("json")
}

/// Ctrl-C in `nowa ckpt figures` during its second paced run (the first finished): the child
/// is stopped, the tables and figures cover the finished run, stdout says "interrupted", exit
/// 130, and the part-run is not left in --work (a later run would reuse it as whole).
#[test]
fn ctrl_c_in_ckpt_figures_keeps_the_runs_that_finished() {
    let dir = tempfile::tempdir().expect("tmp");
    let (out, work) = (dir.path().join("out"), dir.path().join("work"));
    let first = work.join("run-inplace-b50-m0-s42-1s.json");
    let args = [
        "ckpt",
        "figures",
        "-q",
        "--warehouses",
        "1",
        "--seconds",
        "1",
        "--buffers",
        "50",
        "--counts",
        "0,3",
        "--paths",
        "inplace",
        "--recovery-counts",
        "--jobs",
        "1",
        "--out",
        out.to_str().expect("utf-8"),
        "--work",
        work.to_str().expect("utf-8"),
    ];
    let (res, err, stop) = interrupt_at(
        &args,
        "nowa ckpt: seed",
        Some(&first),
        Duration::from_millis(1500),
    );
    let text = String::from_utf8_lossy(&res.stdout);
    assert_eq!(res.status.code(), Some(130), "{text}\n{err}");
    assert!(stop < 20.0, "took {stop} s to stop");
    assert!(
        text.lines()
            .any(|l| l.starts_with("interrupted (Ctrl-C): 1 of 2 paced runs")),
        "{text}"
    );
    assert!(text.contains("## Table I"), "{text}");
    assert_eq!(csv_rows(&out.join("ckpt-runs.csv")), 1, "the finished run");
    let left: Vec<_> = std::fs::read_dir(&work)
        .expect("work")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert_eq!(left, ["run-inplace-b50-m0-s42-1s.json"], "no part-run kept");
}

/// Ctrl-C in `nowa reproduce`: the report is written with the interrupted paper's entries
/// missing and `"interrupted"` in its JSON and Markdown, stdout says so, exit 130.
#[test]
fn ctrl_c_in_reproduce_writes_the_report_so_far() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("rep");
    let args = [
        "reproduce",
        "-q",
        "--quick",
        "--paper",
        "hot-page-aware-checkpointing",
        "--out",
        out.to_str().expect("utf-8"),
    ];
    let (res, err, stop) = interrupt(&args, "nowa reproduce:", Duration::from_millis(1500));
    let text = String::from_utf8_lossy(&res.stdout);
    assert_eq!(res.status.code(), Some(130), "{text}\n{err}");
    assert!(stop < 20.0, "took {stop} s to stop");
    assert!(
        text.lines()
            .any(|l| l.starts_with("interrupted (Ctrl-C): papers finished: none")),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("reproduction.json")).expect("json"),
    )
    .expect("a report");
    assert!(v["interrupted"].is_string(), "{v}");
    let es = v["entries"].as_array().expect("entries");
    assert!(!es.is_empty());
    for e in es {
        assert_eq!(e["verdict"], "missing", "{e}");
        assert!(
            e["note"]
                .as_str()
                .is_some_and(|n| n.contains("interrupted")),
            "{e}"
        );
    }
    let md = std::fs::read_to_string(out.join("REPRODUCTION.md")).expect("md");
    assert!(md.contains("**Interrupted (Ctrl-C)**"), "{md}");
}

/// `trace stats` on a trace that never ends (a FIFO fed by this test): Ctrl-C stops the
/// reading between records, prints the statistics of the records read, "interrupted", and
/// exits 130 (before, it had no handler and died of the signal with nothing printed).
#[test]
fn ctrl_c_in_trace_stats_prints_the_statistics_so_far() {
    let dir = tempfile::tempdir().expect("tmp");
    let fifo = dir.path().join("endless.csv");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success(), "mkfifo");
    let path = fifo.clone();
    // Opening blocks until nowa opens the FIFO; writing fails (EPIPE) once it exits.
    let feeder = std::thread::spawn(move || {
        use std::io::Write as _;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("open fifo"));
        let mut sent = 0u64;
        let ok = writeln!(f, "ts_sec,op,offset_bytes,len_bytes").is_ok();
        while ok && writeln!(f, "0.{sent:09},W,{},4096", sent % 1024 * 4096).is_ok() {
            sent += 1;
        }
        sent
    });
    let o = fifo.to_str().expect("utf-8");
    let args = ["trace", "stats", "--json", "--format", "csv", o];
    let (res, err, stop) = interrupt(
        &args,
        "nowa trace stats: reading",
        Duration::from_millis(700),
    );
    let text = String::from_utf8_lossy(&res.stdout);
    assert_eq!(res.status.code(), Some(130), "{text}\n{err}");
    assert!(text.contains("interrupted (Ctrl-C)"), "{text}");
    assert!(stop < 10.0, "took {stop} s to stop");
    let sent = feeder.join().expect("the feeder does not panic");
    let json_end = text.find("\ninterrupted").expect("the line after the JSON");
    let v: serde_json::Value = serde_json::from_str(&text[..json_end]).expect("JSON");
    assert_eq!(v["interrupted"], true, "{v}");
    let read = v["total"]["writes"].as_u64().expect("writes");
    assert!(read > 0 && read <= sent, "{read} of {sent} records read");
}

/// Ctrl-C in `nowa plan run`: the run stops between request batches, prints the line of what
/// it measured, "interrupted" on stdout, exit 130 (before, it had no handler: the process
/// died of the signal with nothing printed).
#[test]
fn ctrl_c_in_plan_run_prints_the_run_so_far() {
    let args = [
        "plan",
        "run",
        "-q",
        "--workload",
        "fio",
        "--drive-writes",
        "200",
    ];
    let (res, err, stop) = interrupt(&args, "device: ", Duration::from_millis(1500));
    let text = String::from_utf8_lossy(&res.stdout);
    assert_eq!(res.status.code(), Some(130), "{text}\n{err}");
    assert!(stop < 20.0, "took {stop} s to stop");
    assert!(text.contains("WAF"), "the run's line: {text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("interrupted (Ctrl-C): the figures cover")),
        "{text}"
    );
}

/// Ctrl-C in `nowa plan figures`: the run in progress stops within a request batch, no
/// other starts, the CSV is written with the runs that finished (here none: its header),
/// the chart is not drawn, "interrupted" on stdout, exit 130 (before, the pipelines took no
/// cancel: the figures ran to their end, minutes later, or died of a second Ctrl-C with
/// nothing written).
#[test]
fn ctrl_c_in_plan_figures_keeps_the_finished_runs_csv() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("figs");
    let out_s = out.to_str().expect("utf-8 path");
    let args = [
        "plan",
        "figures",
        "-q",
        "--fig1-only",
        "--drive-writes",
        "200",
        "--out",
        out_s,
    ];
    let (res, err, stop) = interrupt(&args, "device: ", Duration::from_millis(1500));
    let text = String::from_utf8_lossy(&res.stdout);
    assert_eq!(res.status.code(), Some(130), "{text}\n{err}");
    assert!(stop < 20.0, "took {stop} s to stop");
    assert!(
        text.lines()
            .any(|l| l.starts_with("interrupted (Ctrl-C): 0 of 12 runs finished")),
        "{text}"
    );
    let csv = std::fs::read_to_string(out.join("plan-fig1.csv")).expect("the CSV is kept");
    assert_eq!(
        csv.lines().count(),
        1,
        "the header, no unfinished run: {csv}"
    );
    assert!(
        !out.join("plan-fig1.png").exists(),
        "no chart of 0 of 8 runs"
    );
}

/// Ctrl-C in `nowa frozen replay`: the replays stop (between schemes or inside one, which is
/// then dropped), the table of the schemes replayed is printed with an "interrupted" line on
/// stdout, the JSON says `interrupted` and carries the run's identity, exit 130 (before, it
/// had no handler: the process died of the signal with nothing printed).
#[test]
fn ctrl_c_in_frozen_replay_prints_the_schemes_replayed() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("synth");
    let made = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args([
            "frozen",
            "synth",
            "--writes",
            "1M",
            "--hot-pages",
            "20k",
            "--out",
        ])
        .arg(&out)
        .output()
        .expect("run nowa frozen synth");
    assert!(made.status.success(), "{made:?}");
    let log = out.join("writes.log");
    let log = log.to_str().expect("utf-8");
    // A hundred replays (~0.1 s CPU each): far longer than the test waits.
    let many = ["nosep,sepbit:6"; 50].join(",");
    for json_out in [false, true] {
        let mut args = vec!["frozen", "replay", "--writes", log, "--schemes", &many];
        args.extend(json_out.then_some("--json"));
        let (res, err, stop) = interrupt(&args, " WAF ", Duration::from_millis(300));
        assert_stopped(&res, &err, stop, 20.0);
        let text = String::from_utf8_lossy(&res.stdout);
        if json_out {
            let v = json(&res);
            assert_eq!(v["interrupted"], true, "{v}");
            assert_eq!(v["nowa"]["command"], "frozen-replay", "{v}");
            let runs = v["runs"].as_array().expect("runs").len();
            assert_eq!(v["schemes_planned"], 100, "{v}");
            assert!((1..100).contains(&runs), "{runs} schemes replayed");
        } else {
            let last = text.lines().last().unwrap_or_default();
            assert!(
                last.starts_with("interrupted (Ctrl-C): ")
                    && last.ends_with("of 100 schemes replayed"),
                "{text}"
            );
            assert!(
                text.starts_with("scheme "),
                "the table of the schemes replayed: {text}"
            );
        }
    }
}

/// Ctrl-C in `nowa plan bench`: the scheme being benchmarked stops between request batches,
/// its line says it is partial, "interrupted" on stdout, exit 130 (before, it had no handler:
/// the process died of the signal with nothing printed).
#[test]
fn ctrl_c_in_plan_bench_prints_the_partial_run() {
    let args = ["plan", "bench", "--drive-writes", "200"];
    let (res, err, stop) = interrupt(&args, "drive writes, seed", Duration::from_millis(1500));
    assert_stopped(&res, &err, stop, 20.0);
    let text = String::from_utf8_lossy(&res.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines
            .first()
            .is_some_and(|l| l.starts_with("baseline ") && l.ends_with("(partial: interrupted)")),
        "{text}"
    );
    assert_eq!(
        lines.last().copied(),
        Some("interrupted (Ctrl-C): 1 of 2 schemes ran, the last one partially"),
        "{text}"
    );
}
