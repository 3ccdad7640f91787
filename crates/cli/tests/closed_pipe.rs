//! `nowa ... | head`: output into a pipe whose reader has gone ends the process quietly (by
//! SIGPIPE, as other Unix tools), not with a panic ("failed printing to stdout").
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

#[test]
fn writing_into_a_closed_pipe_is_not_a_panic() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    // The reader is gone before the child starts: its first write meets a closed pipe.
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args([
            "sim",
            "-q",
            "--capacity",
            "64MiB",
            "--pages-per-block",
            "64",
        ])
        .args(["--blocks-per-superblock", "2"])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("nowa runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "ended by SIGPIPE: {:?}, stderr: {stderr}",
        out.status
    );
}
