//! `nowa trace` and `nowa sim --trace` as a user runs them, and `nowa ycsb --record-trace`
//! output replayed.
mod common;
use common::{arg as p, assert_usage_errors, nowa, nowa_json, nowa_ok as run_ok};
use std::path::Path;

const GEOMETRY: &[&str] = &[
    "--pages-per-block",
    "64",
    "--blocks-per-superblock",
    "2",
    "-q",
];

#[test]
fn gen_convert_stats_agree_across_forms() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("u.csv");
    let bin = dir.path().join("u.nwt");
    let back = dir.path().join("back.csv");
    run_ok(&[
        "trace",
        "gen",
        p(&csv),
        "--capacity",
        "16MiB",
        "--writes",
        "20k",
        "--workload",
        "zipf:0.9",
    ]);
    run_ok(&["trace", "convert", p(&csv), p(&bin)]);
    run_ok(&["trace", "convert", p(&bin), p(&back)]);
    let stats = |f: &Path| nowa_json(&["trace", "stats", p(f), "--json"])["total"].clone();
    let (a, b, c) = (stats(&csv), stats(&bin), stats(&back));
    assert_eq!(a, b, "CSV and binary");
    assert_eq!(a, c, "binary back to CSV");
    assert_eq!(a["writes"], 20_000);
    assert!(
        a["footprint_pages"].as_u64().unwrap() < 4096,
        "zipf leaves pages unwritten"
    );
    assert!(std::fs::metadata(&bin).unwrap().len() < std::fs::metadata(&csv).unwrap().len() / 3);
}

#[test]
fn uniform_trace_replays_like_the_synthetic_workload() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("u.nwt");
    // 64 MiB = 16384 pages; 400k writes cover every page, so the footprint is the device.
    run_ok(&[
        "trace",
        "gen",
        p(&csv),
        "--capacity",
        "64MiB",
        "--writes",
        "400k",
        "--seed",
        "7",
    ]);
    let mut args = vec![
        "sim",
        "--json",
        "--trace",
        p(&csv),
        "--warmup",
        "2",
        "--volume",
        "4",
    ];
    args.extend_from_slice(GEOMETRY);
    let r = nowa_json(&args);
    let dev = &r["devices"][0]["sim"];
    assert_eq!(dev["layout"]["logical_pages"], 16384);
    let mut synth = vec![
        "sim",
        "--json",
        "--capacity",
        "64MiB",
        "--warmup",
        "2",
        "--volume",
        "4",
    ];
    synth.extend_from_slice(GEOMETRY);
    let s = nowa_json(&synth);
    let (wt, ws) = (r["waf"].as_f64().unwrap(), s["waf"].as_f64().unwrap());
    assert!(
        (wt / ws - 1.0).abs() < 0.03,
        "trace WAF {wt} vs synthetic {ws}"
    );
    assert!(wt > 2.0, "uniform at 7% OP amplifies: {wt}");
}

/// Two volumes in Alibaba's format, written by hand: volume 1 writes pages 0..400 twice,
/// volume 9 writes pages 1000..1300 once, discards a never-written range, flushes.
fn two_volume_trace(path: &Path) {
    let mut s = String::new();
    let mut ts = 1_000_000u64;
    for round in 0..2 {
        for i in 0..400u64 {
            s += &format!("1,W,{},4096,{ts}\n", ((i * 37 + round) % 400) * 4096);
            ts += 1;
        }
    }
    for i in 0..300u64 {
        s += &format!("9,W,{},4096,{ts}\n", (1000 + i) * 4096);
        ts += 1;
    }
    s += &format!("9,R,0,65536,{ts}\n");
    std::fs::write(path, s).expect("write the fixture");
}

#[test]
fn multi_volume_traces_replay_per_volume_or_shared() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("ali.csv");
    two_volume_trace(&t);
    let base = [
        "sim",
        "--json",
        "--trace",
        p(&t),
        "--pages-per-block",
        "8",
        "--blocks-per-superblock",
        "1",
        "--op",
        "50%",
        "-q",
    ];
    let per = nowa_json(&base);
    let devs = per["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 2);
    assert_eq!(devs[0]["volume"], 1);
    assert_eq!(devs[0]["footprint_pages"], 400);
    assert_eq!(devs[1]["footprint_pages"], 300);
    assert_eq!(per["counts"]["reads"], 1);
    let mut shared = base.to_vec();
    shared.extend_from_slice(&["--trace-volumes", "shared"]);
    let sh = nowa_json(&shared);
    assert_eq!(sh["devices"].as_array().unwrap().len(), 1);
    assert_eq!(sh["devices"][0]["footprint_pages"], 700);
    let mut one = base.to_vec();
    one.extend_from_slice(&["--trace-volume", "9"]);
    let v9 = nowa_json(&one);
    assert_eq!(v9["devices"].as_array().unwrap().len(), 1);
    assert_eq!(v9["devices"][0]["volume"], 9);
}

#[test]
fn discards_of_unwritten_pages_are_noops_and_flushes_count() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("d.csv");
    let mut s = String::from("ts_sec,op,offset_bytes,len_bytes\n");
    // Discard 1 GiB nobody wrote, then write 256 pages, flush, discard half of them.
    s += "0.0,D,1073741824,1073741824\n";
    for i in 0..256u64 {
        s += &format!("0.{i:09},W,{},4096\n", i * 4096);
    }
    s += "1.0,F,0,0\n1.0,D,0,524288\n";
    std::fs::write(&t, s).unwrap();
    let r = nowa_json(&[
        "sim",
        "--json",
        "--trace",
        p(&t),
        "--pages-per-block",
        "8",
        "--blocks-per-superblock",
        "1",
        "--op",
        "50%",
        "--warmup",
        "0",
        "--volume",
        "2",
        "-q",
    ]);
    assert_eq!(r["counts"]["flushes"], 1);
    assert_eq!(r["counts"]["discards"], 2);
    let total = &r["devices"][0]["sim"]["total"];
    // Preconditioning pass trims 128 pages; the measured loop trims them again each pass.
    assert!(total["trimmed_pages"].as_u64().unwrap() >= 128);
    assert!(r["measured_flushes"].as_u64().unwrap() >= 1);
}

#[test]
fn recorded_ycsb_trace_replays() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("ycsb.csv");
    run_ok(&[
        "ycsb",
        "-q",
        "--records",
        "5000",
        "--ops",
        "20000",
        "--record-trace",
        p(&t),
    ]);
    let stats = nowa_json(&["trace", "stats", p(&t), "--json"])["total"].clone();
    assert!(stats["writes"].as_u64().unwrap() > 100);
    assert!(stats["flushes"].as_u64().unwrap() > 0);
    let r = nowa_json(&[
        "sim",
        "--json",
        "--trace",
        p(&t),
        "--pages-per-block",
        "8",
        "--blocks-per-superblock",
        "1",
        "--op",
        "30%",
        "-q",
    ]);
    assert!(r["measured"]["host_pages"].as_u64().unwrap() > 0);
    assert!(r["waf"].as_f64().unwrap() >= 1.0);
    // The recorder never overwrites.
    let again = nowa(&[
        "ycsb",
        "-q",
        "--records",
        "100",
        "--ops",
        "10",
        "--record-trace",
        p(&t),
    ]);
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn trace_usage_errors_are_one_line_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.csv");
    std::fs::write(&t, "ts_sec,op,offset_bytes,len_bytes\n0.0,W,0,4096\n").unwrap();
    let existing = dir.path().join("exists.nwt");
    std::fs::write(&existing, "x").unwrap();
    let junk = dir.path().join("junk.txt");
    std::fs::write(&junk, "hello there\n").unwrap();
    assert_usage_errors(&[
        vec!["trace", "stats", "/nonexistent/trace.csv"],
        vec!["trace", "stats", p(&junk)],
        vec!["trace", "stats", p(&t), "--format", "bogus"],
        vec!["trace", "convert", p(&t), p(&existing)],
        vec!["trace", "gen", "--capacity", "0", p(&junk)],
        vec!["sim", "--trace", "/nonexistent/trace.csv"],
        vec!["sim", "--trace", p(&t), "--trace-volumes", "bogus"],
        vec!["sim", "--trace", p(&t)],
        vec![
            "sim",
            "--trace",
            p(&t),
            "--trace-capacity",
            "4KiB",
            "--pages-per-block",
            "1",
            "--blocks-per-superblock",
            "1",
        ],
        vec!["sim", "--trace-volume", "3"],
    ]);
}

/// Damaged traces through every command that reads one: refused with the file and the first
/// bad line (exit 2), unless --skip-bad; a few bad lines are accepted and counted on stderr.
#[test]
fn damaged_traces_are_refused_or_counted_by_every_reader_command() {
    let dir = tempfile::tempdir().unwrap();
    let header_only = dir.path().join("h.csv");
    std::fs::write(&header_only, "ts_sec,op,offset_bytes,len_bytes\n").unwrap();
    let blk = dir.path().join("b.txt");
    std::fs::write(&blk, "8,0 3 7 0.1 697 D WS 223490 + 8 [k]\nhello\nworld\n").unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, "0.0,W,0,4096\n".repeat(2000).as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let cut = dir.path().join("cut.csv.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    let out = dir.path().join("o.nwt");
    let wl = dir.path().join("o.wlog");
    for t in [&header_only, &blk, &cut] {
        assert_usage_errors(&[
            vec!["trace", "stats", p(t)],
            vec!["trace", "convert", p(t), p(&out)],
            vec!["sim", "--trace", p(t), "-q"],
            vec!["plan", "run", "--trace", p(t), "--drive-writes", "0"],
            vec!["frozen", "from-trace", "--trace", p(t), "--out", p(&wl)],
        ]);
        let _ = std::fs::remove_file(&wl);
    }
    let e = nowa(&["trace", "stats", "--format", "blkparse", p(&blk)]);
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(
        err.contains("b.txt:2:") && err.contains("--skip-bad"),
        "{err}"
    );
    let ok = nowa(&[
        "trace",
        "stats",
        "--format",
        "blkparse",
        "--skip-bad",
        p(&blk),
    ]);
    let err = String::from_utf8_lossy(&ok.stderr);
    assert!(ok.status.success(), "{err}");
    assert!(err.contains("skipped 2 unreadable of 3 lines"), "{err}");
    // One bad line in 201: accepted, and said.
    let few = dir.path().join("few.csv");
    std::fs::write(&few, "0.0,W,0,4096\n".repeat(200) + "junk\n").unwrap();
    let ok = nowa(&["trace", "stats", p(&few)]);
    let err = String::from_utf8_lossy(&ok.stderr);
    assert!(ok.status.success(), "{err}");
    assert!(
        err.contains("few.csv: skipped 1 unreadable of 201 lines (first: line 201"),
        "{err}"
    );
}

/// Every `--seed` of trace gen, ssdiq and plan says what it seeds (they had no help text).
#[test]
fn seed_flags_are_documented() {
    for cmd in [
        &["trace", "gen"][..],
        &["ssdiq"],
        &["plan", "run"],
        &["plan", "figures"],
    ] {
        let mut args = cmd.to_vec();
        args.push("--help");
        let help = run_ok(&args);
        let lines: Vec<&str> = help.lines().collect();
        let i = lines
            .iter()
            .position(|l| l.trim_start().starts_with("--seed"))
            .unwrap_or_else(|| panic!("{cmd:?}: no --seed\n{help}"));
        // Short help: the text follows on the flag's line; long help: on the next line.
        let own = lines[i]
            .trim_start()
            .trim_start_matches("--seed <SEED>")
            .trim();
        let text = if own.starts_with("[default") || own.is_empty() {
            lines.get(i + 1).map_or("", |l| l.trim())
        } else {
            own
        };
        assert!(
            text.to_lowercase().contains("seed"),
            "{cmd:?}: --seed without help: {text:?}"
        );
    }
}
