//! Running the built `nowa` binary from the CLI tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

pub fn nowa(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args(args)
        .output()
        .expect("run nowa")
}

/// Each argument list must fail with exit code 2, a one-line error and no panic.
pub fn assert_usage_errors(cases: &[Vec<&str>]) {
    for bad in cases {
        usage_error(bad);
    }
}

/// `args` must fail with exit code 2, one error line and no panic: its stderr.
pub fn usage_error(args: &[&str]) -> String {
    let out = nowa(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    let ours = err.lines().filter(|l| l.starts_with("nowa: error")).count();
    let clap = err.lines().filter(|l| l.starts_with("error:")).count();
    assert_eq!(
        ours + clap,
        1,
        "{args:?}: want exactly one error line:\n{err}"
    );
    err
}

/// Run `nowa` expecting success and JSON on stdout.
pub fn nowa_json(args: &[&str]) -> serde_json::Value {
    let out = nowa(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: bad JSON: {e}"))
}

/// Run `nowa` expecting success (its stderr is the message otherwise): its stdout.
pub fn nowa_ok(args: &[&str]) -> String {
    let out = nowa(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A temporary path as an argument.
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temp path")
}

/// Whether `tool` is a file in a PATH directory.
pub fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// `nowa ssdiq` on a simulated SSD, small and fast.
pub const SSDIQ_FAST: &[&str] = &[
    "--warmup",
    "0.5",
    "--volume",
    "1",
    "--read-time",
    "0.05",
    "--lat-time",
    "0.05",
    "--sweep-time",
    "0.05",
    "-q",
];

/// `nowa ARGS` (one shell word string) on a pseudo-terminal (`script`, so progress bars are
/// drawn): what it drew, carriage returns as line breaks.
pub fn on_a_terminal(args: &str) -> String {
    let cmd = format!("{} {args}", env!("CARGO_BIN_EXE_nowa"));
    let o = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("script runs");
    assert!(o.status.success(), "{o:?}");
    String::from_utf8_lossy(&o.stdout).replace('\r', "\n")
}
