//! `nowa frozen` as a user runs it: synth -> train -> bench, refusals and bad flags.
mod common;
use common::{assert_usage_errors, nowa, nowa_ok as stdout};

/// `nowa frozen synth --out DIR --writes N --hot-pages H` (DIR under `dir`): the log it
/// wrote (DIR/writes.log) and the command's stdout.
fn synth(dir: &std::path::Path, writes: &str, hot: &str) -> (String, String) {
    let out = dir.join("synth");
    let o = out.to_str().expect("utf-8 temp path");
    let s = stdout(&[
        "frozen",
        "synth",
        "--out",
        o,
        "--writes",
        writes,
        "--hot-pages",
        hot,
    ]);
    let log = out.join("writes.log");
    assert!(s.contains(log.to_str().expect("utf-8")), "{s}");
    (log.to_str().expect("utf-8").to_owned(), s)
}

/// The model `nowa frozen train --out DIR` writes.
fn model_in(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join("model.json")
}

#[test]
fn synth_train_bench() {
    let dir = tempfile::tempdir().unwrap();
    let (log, s) = synth(dir.path(), "30k", "2k");
    let log = log.as_str();
    let model_dir = dir.path().join("m");
    let model = model_dir.to_str().unwrap();
    assert!(s.contains("30000 user writes"), "{s}");
    let t = stdout(&[
        "frozen", "train", "--writes", log, "--out", model, "--seed", "7",
    ]);
    assert!(t.contains("test:  accuracy"), "{t}");
    assert!(
        t.contains("samples: 30000 (12 inputs each), train 22500"),
        "{t}"
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model_in(&model_dir)).unwrap()).unwrap();
    assert_eq!(m["classifier"], "sgd");
    assert_eq!(m["seed"], 7);
    assert_eq!(m["params"]["weights"].as_array().unwrap().len(), 12);
    let acc = m["metrics"]["test"]["accuracy"].as_f64().unwrap();
    assert!(acc > 0.8, "{acc}");
    // The same seed again gives the same model, bit for bit.
    let again = dir.path().join("again");
    stdout(&[
        "frozen",
        "train",
        "--writes",
        log,
        "--out",
        again.to_str().unwrap(),
        "--seed",
        "7",
    ]);
    let m2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model_in(&again)).unwrap()).unwrap();
    assert_eq!(m["params"], m2["params"]);
    // Refuses a non-empty --out without --force; overwrites with it.
    let out = nowa(&["frozen", "train", "--writes", log, "--out", model]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--out") && err.contains("not empty"), "{err}");
    let j = stdout(&[
        "frozen",
        "train",
        "--writes",
        log,
        "--out",
        model,
        "--force",
        "--classifier",
        "tree",
        "--twl",
        "1",
        "--features",
        "vd+wt",
        "--json",
    ]);
    let j: serde_json::Value = serde_json::from_str(&j).unwrap();
    assert!(j["metrics"]["test"]["recall"].is_number());
    let file = model_in(&model_dir);
    let b = stdout(&[
        "frozen",
        "bench",
        "--model",
        file.to_str().unwrap(),
        "--pages",
        "4096",
        "--reps",
        "3",
    ]);
    assert!(b.contains("per batch") && b.contains("budget"), "{b}");
}

#[test]
fn a_damaged_log_is_an_error_not_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = synth(dir.path(), "5000", "100");
    let logs = log.as_str();
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[1000] ^= 1;
    std::fs::write(&log, &bytes).unwrap();
    let model = dir.path().join("m");
    let out = nowa(&[
        "frozen",
        "train",
        "--writes",
        logs,
        "--out",
        model.to_str().unwrap(),
    ]);
    // A damaged input file is bad input: exit 2 (issue 26), naming the flag and the file.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("damaged") && err.contains("--writes"), "{err}");
    assert!(
        !model.exists(),
        "no model (nor its directory) from a damaged log"
    );
}

#[test]
fn bad_flags_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = synth(dir.path(), "2000", "100");
    let logs = log.as_str();
    let out = dir.path().join("m");
    let m = out.to_str().unwrap();
    assert_usage_errors(&[
        vec!["frozen"],
        vec!["frozen", "train", "--out", m],
        vec!["frozen", "train", "--writes", logs],
        vec![
            "frozen",
            "train",
            "--writes",
            "/nonexistent/w.log",
            "--out",
            m,
        ],
        vec![
            "frozen", "train", "--writes", logs, "--out", m, "--twl", "0",
        ],
        vec![
            "frozen", "train", "--writes", logs, "--out", m, "--twl", "5",
        ],
        vec![
            "frozen",
            "train",
            "--writes",
            logs,
            "--out",
            m,
            "--features",
            "vd,xx",
        ],
        vec![
            "frozen",
            "train",
            "--writes",
            logs,
            "--out",
            m,
            "--features",
            "",
        ],
        vec![
            "frozen",
            "train",
            "--writes",
            logs,
            "--out",
            m,
            "--classifier",
            "svm",
        ],
        vec![
            "frozen",
            "train",
            "--writes",
            logs,
            "--out",
            m,
            "--samples",
            "some",
        ],
        vec![
            "frozen",
            "train",
            "--writes",
            logs,
            "--out",
            m,
            "--test-fraction",
            "100%",
        ],
        vec![
            "frozen",
            "train",
            "--writes",
            logs,
            "--out",
            m,
            "--test-fraction",
            "0",
        ],
        vec![
            "frozen",
            "train",
            "--writes",
            logs,
            "--out",
            m,
            "--exclude-tail",
            "2",
        ],
        vec![
            "frozen", "train", "--writes", logs, "--out", m, "--seed", "-1",
        ],
        vec![
            "frozen",
            "train",
            "--writes",
            logs,
            "--out",
            m,
            "--max-samples",
            "10",
        ],
        vec![
            "frozen",
            "train",
            "--writes",
            logs,
            "--out",
            m,
            "--tree-depth",
            "0",
        ],
        vec!["frozen", "synth", "--out", logs],
        vec!["frozen", "synth", "--out", dir.path().to_str().unwrap()],
        vec!["frozen", "synth", "--out", m, "--writes", "0"],
        vec!["frozen", "synth", "--out", m, "--append-share", "1.5"],
        vec!["frozen", "bench", "--pages", "0"],
        vec![
            "frozen",
            "bench",
            "--model",
            "/nonexistent/m.json",
            "--reps",
            "1",
        ],
    ]);
    let named = nowa(&[
        "frozen", "train", "--writes", logs, "--out", m, "--twl", "5",
    ]);
    assert!(String::from_utf8_lossy(&named.stderr).contains("--twl"));
    assert!(!out.exists(), "no --out directory from a refused command");
}

#[test]
fn replay_every_scheme_and_refuse_bad_flags() {
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = synth(dir.path(), "40k", "2k");
    let log = log.as_str();
    let model_dir = dir.path().join("m");
    let model_file = model_in(&model_dir);
    let model = model_file.to_str().unwrap();
    let csv = dir.path().join("r.csv");
    let csvs = csv.to_str().unwrap();
    stdout(&[
        "frozen",
        "train",
        "--writes",
        log,
        "--out",
        model_dir.to_str().unwrap(),
    ]);
    let r = stdout(&[
        "frozen",
        "replay",
        "--writes",
        log,
        "--model",
        model,
        "--zone-size",
        "256KiB",
        "--schemes",
        "paper,sepfrozen-bit-truth,sepfrozen-dac-online",
        "--csv",
        csvs,
        "--classes",
    ]);
    for s in [
        "nosep",
        "sepbit:6",
        "sepfrozen-bit:6",
        "sepfrozen-dac:6",
        "fk-kmeans:6",
        "sepfrozen-bit-truth:6",
    ] {
        assert!(r.lines().any(|l| l.starts_with(s)), "{s} missing: {r}");
    }
    assert!(r.contains("judged frozen") && r.contains(" ms"), "{r}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.starts_with("scheme,class,waf,far"), "{rows}");
    assert_usage_errors(&[
        vec!["frozen", "replay", "--writes", log],
        vec![
            "frozen",
            "replay",
            "--writes",
            "/nonexistent/w.log",
            "--schemes",
            "sepbit",
        ],
        vec!["frozen", "replay", "--writes", log, "--schemes", "bogus"],
        vec![
            "frozen",
            "replay",
            "--writes",
            log,
            "--schemes",
            "sepfrozen-bit:3",
        ],
        vec![
            "frozen",
            "replay",
            "--writes",
            log,
            "--schemes",
            "sepbit",
            "--gp",
            "0",
        ],
        vec![
            "frozen",
            "replay",
            "--writes",
            log,
            "--schemes",
            "sepbit",
            "--zone-size",
            "5000",
        ],
        vec![
            "frozen",
            "replay",
            "--writes",
            log,
            "--schemes",
            "sepbit",
            "--policy",
            "fifo",
        ],
        vec![
            "frozen",
            "from-trace",
            "--trace",
            "/nonexistent/t.csv",
            "--out",
            csvs,
        ],
    ]);
}

#[test]
fn stats_and_the_encodings() {
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = synth(dir.path(), "20k", "1k");
    let log = log.as_str();
    let s = stdout(&["frozen", "stats", "--writes", log]);
    assert!(s.contains("user writes 20000"), "{s}");
    for col in ["wt_diff", "vd_diff", "age", "+0.7369"] {
        assert!(s.contains(col), "{col}: {s}");
    }
    let j: serde_json::Value =
        serde_json::from_str(&stdout(&["frozen", "stats", "--writes", log, "--json"])).unwrap();
    assert_eq!(j["kinds"][0]["samples"], "user");
    assert_eq!(j["kinds"][0]["rows"].as_array().unwrap().len(), 16);
    assert_eq!(j["nowa"]["command"], "frozen-stats");
    let raw = dir.path().join("raw");
    let diff = dir.path().join("diff");
    for (m, enc) in [(&raw, "raw"), (&diff, "diff")] {
        let t = stdout(&[
            "frozen",
            "train",
            "--writes",
            log,
            "--out",
            m.to_str().unwrap(),
            "--encoding",
            enc,
            "--eval-writes",
            log,
        ]);
        assert!(
            t.contains("eval (all samples of --eval-writes): accuracy"),
            "{t}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(model_in(m)).unwrap()).unwrap();
        assert_eq!(
            (v["format"].as_u64(), v["encoding"].as_str()),
            (Some(2), Some(enc))
        );
    }
}
