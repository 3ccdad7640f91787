//! `nowa reproduce`: the output directory is never overwritten without --force, and one
//! paper's reproduction (SepFrozen's replay, ~2 s) writes the report as the schema says.

use std::path::Path;
use std::process::Command;

mod common;

fn nowa() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nowa"))
}

/// `args` then `out` exits 2 with one line of stderr and nothing else: that line.
fn refused(args: &[&str], out: &Path) -> String {
    let mut all = args.to_vec();
    all.push(common::arg(out));
    let err = common::usage_error(&all);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn an_existing_out_without_force_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("rep");
    std::fs::create_dir(&out).expect("mkdir");
    std::fs::write(out.join("keep.txt"), "mine").expect("write");
    let err = refused(&["reproduce", "--paper", "sepfrozen", "--out"], &out);
    assert!(
        err.contains(&out.display().to_string()) && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).expect("kept"),
        "mine"
    );
    assert!(!out.join("reproduction.json").exists());
}

#[test]
fn one_paper_writes_the_report_and_force_overwrites_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("rep");
    for force in [false, true] {
        let mut c = nowa();
        c.args([
            "reproduce",
            "--quick",
            "--paper",
            "sepfrozen",
            "-q",
            "--out",
        ])
        .arg(&out);
        if force {
            c.arg("--force");
        }
        let o = c.output().expect("runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let text = std::fs::read_to_string(out.join("reproduction.json")).expect("json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("parses");
    assert_eq!(v["nowa"]["command"], "reproduce");
    let entries = v["entries"].as_array().expect("entries");
    assert!(entries.len() >= 3, "{entries:?}");
    for e in entries {
        assert_eq!(e["paper"], "sepfrozen");
        let verdict = e["verdict"].as_str().expect("verdict");
        assert!(["reproduced", "shape", "off"].contains(&verdict), "{e}");
        assert!(
            e["nowa_value"].is_number() && e["paper_value"].is_number(),
            "{e}"
        );
        for k in ["item", "unit", "scale", "command"] {
            assert!(!e[k].as_str().expect(k).is_empty(), "{k}: {e}");
        }
    }
    let md = std::fs::read_to_string(out.join("REPRODUCTION.md")).expect("md");
    assert!(
        md.contains("## sepfrozen") && md.contains("nowa frozen figures"),
        "{md}"
    );
    assert!(out.join("sepfrozen/sepfrozen-schemes.png").is_file());
}

/// `--tpcc-only` runs how-to-write-to-ssds' TPC-C comparison without Table 1; with another
/// paper it is refused before anything runs: exit 2, one line naming the flag.
#[test]
fn tpcc_only_without_its_paper_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("rep");
    let err = refused(
        &["reproduce", "--paper", "ssd-iq", "--tpcc-only", "--out"],
        &out,
    );
    assert!(
        err.contains("--tpcc-only") && err.contains("the TPC-C comparison"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
}

/// The papers of the report at `p`, with each one's entries and provenance (JSON values).
fn by_paper(p: &Path) -> Vec<(String, Vec<serde_json::Value>, serde_json::Value)> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p).expect("json")).expect("parses");
    let prov = v["provenance"]
        .as_array()
        .expect("provenance per paper")
        .clone();
    prov.iter()
        .map(|pr| {
            let name = pr["paper"].as_str().expect("paper").to_owned();
            let es = v["entries"]
                .as_array()
                .expect("entries")
                .iter()
                .filter(|e| e["paper"] == name.as_str())
                .cloned()
                .collect();
            (name, es, pr.clone())
        })
        .collect()
}

/// `nowa reproduce merge --into FILE RUN_DIR` replaces exactly the run's paper (entries,
/// provenance, figures) in a report of five papers, keeps the other four as they were, and
/// renders REPRODUCTION.md again; the committed report names a provenance per paper.
#[test]
fn merge_replaces_exactly_one_paper() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = dir.path().join("run");
    let o = nowa()
        .args([
            "reproduce",
            "--quick",
            "--paper",
            "sepfrozen",
            "-q",
            "--out",
        ])
        .arg(&run)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rep = dir.path().join("docs/reproduction");
    std::fs::create_dir_all(&rep).expect("mkdir");
    let committed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reproduction/reproduction.json");
    let into = rep.join("reproduction.json");
    std::fs::copy(&committed, &into).expect("copy");
    let before = by_paper(&into);
    assert_eq!(
        before.len(),
        5,
        "the committed report: one provenance per paper"
    );
    let o = nowa()
        .args(["reproduce", "merge", "--into"])
        .arg(&into)
        .arg(&run)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = by_paper(&into);
    let fresh = by_paper(&run.join("reproduction.json"));
    assert_eq!(after.len(), 5);
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b.0, a.0, "the papers' order");
        if a.0 == "sepfrozen" {
            assert_eq!(
                (&a.1, &a.2),
                (&fresh[0].1, &fresh[0].2),
                "the run's sepfrozen"
            );
        } else {
            assert_eq!(b, a, "{} kept", a.0);
        }
    }
    assert!(
        rep.join("sepfrozen/sepfrozen-schemes.png").is_file(),
        "its figures"
    );
    let md = std::fs::read_to_string(rep.join("REPRODUCTION.md")).expect("md");
    let started = fresh[0].2["started"].as_str().expect("started");
    assert!(md.contains(started), "the run's start in its section");
}

/// A missing or malformed report, or a run directory without one: exit 2, one line naming the
/// file; nothing written.
#[test]
fn merge_refuses_missing_or_malformed_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let into = dir.path().join("reproduction.json");
    let run = dir.path().join("run");
    std::fs::create_dir(&run).expect("mkdir");
    let merge = |into: &Path, run: &Path| {
        common::usage_error(&[
            "reproduce",
            "merge",
            "--into",
            common::arg(into),
            common::arg(run),
        ])
    };
    let err = merge(&into, &run);
    assert!(err.contains(&into.display().to_string()), "{err}");
    std::fs::write(&into, "{ not json").expect("write");
    let err = merge(&into, &run);
    assert!(err.contains(&into.display().to_string()), "{err}");
    let committed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reproduction/reproduction.json");
    std::fs::copy(&committed, &into).expect("copy");
    let err = merge(&into, &run);
    assert!(err.contains("run/reproduction.json"), "{err}");
    let err = merge(&dir.path().join("other.json"), &run);
    assert!(err.contains("--into names a reproduction.json"), "{err}");
    assert!(
        !dir.path().join("REPRODUCTION.md").exists(),
        "nothing written"
    );
}
