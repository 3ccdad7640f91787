//! `scripts/realio.sh`: `--help` documents its options, bad input is one line naming the flag
//! or variable with exit 2, and files it would write in its directory are never overwritten
//! without `--force`. All refusals happen before any loop device or mount is made.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/realio.sh")
}

/// `bash scripts/realio.sh ARGS NOWA` with `env` (and DIR, when given) set.
fn realio(args: &[&str], env: &[(&str, &str)], dir: Option<&Path>) -> Output {
    let mut c = Command::new("bash");
    c.arg(script()).args(args).arg(env!("CARGO_BIN_EXE_nowa"));
    // Small sizes: if a refusal were missing, the run stays short.
    c.envs([("RECORDS", "100"), ("OPS", "100"), ("CAPACITY", "16MiB")]);
    c.envs(env.iter().copied());
    if let Some(d) = dir {
        c.env("DIR", d);
    }
    c.output().expect("run bash")
}

/// Exit code 2 and exactly one stderr line, which names `flag`.
fn assert_refused(out: &Output, flag: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "want exit 2: {err}");
    assert_eq!(err.lines().count(), 1, "want one line: {err}");
    assert!(err.contains(flag), "the line names {flag}: {err}");
}

#[test]
fn help_documents_the_backing_and_force_options() {
    let out = Command::new("bash")
        .arg(script())
        .arg("--help")
        .output()
        .expect("run bash");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for want in [
        "--backing shm",
        "--backing disk",
        "--force",
        "RECORDS",
        "SEED",
    ] {
        assert!(text.contains(want), "--help mentions {want}:\n{text}");
    }
}

#[test]
fn bad_input_is_one_line_naming_the_flag_with_exit_2() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = Some(tmp.path());
    assert_refused(&realio(&["--backing", "nvme"], &[], dir), "--backing");
    assert_refused(&realio(&["--backing"], &[], dir), "--backing");
    assert_refused(&realio(&["--bogus"], &[], dir), "--bogus");
    assert_refused(&realio(&[], &[("RECORDS", "many")], dir), "RECORDS");
    assert_refused(&realio(&[], &[("OPS", "0")], dir), "OPS");
    assert_refused(&realio(&[], &[("POOL", "3QB")], dir), "POOL");
    assert_refused(&realio(&[], &[("PATHS", "oop sideways")], dir), "PATHS");
    assert_refused(&realio(&[], &[("FS", "zfs")], dir), "FS");
    assert_refused(&realio(&[], &[("SEED", "-1")], dir), "SEED");
    assert_refused(&realio(&[], &[("EXTRA", "--pacing off")], dir), "--pacing");
    assert!(
        std::fs::read_dir(tmp.path()).expect("dir").next().is_none(),
        "nothing written on refusal"
    );
}

/// A file the script writes in DIR, the options and the environment that make it write it.
type Case = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

#[test]
fn existing_files_are_kept_without_force() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cases: [Case; 4] = [
        ("loop-backing.img", &["--backing", "disk"], &[]),
        ("fs-backing.img", &["--backing", "disk"], &[]),
        ("db-oop.img", &[], &[("FS", "dir"), ("PATHS", "oop")]),
        ("loop-oop-100.json", &[], &[("PATHS", "oop")]),
    ];
    for (name, args, env) in cases {
        let file = tmp.path().join(name);
        std::fs::write(&file, b"precious").expect("write");
        let out = realio(args, env, Some(tmp.path()));
        assert_refused(&out, "--force");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(name),
            "the line names {name}"
        );
        assert_eq!(
            std::fs::read(&file).expect("read"),
            b"precious",
            "{name} kept"
        );
        std::fs::remove_file(&file).expect("remove");
    }
}
