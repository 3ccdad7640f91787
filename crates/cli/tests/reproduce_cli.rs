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
