//! Paths are checked before any work (issue 29): a `--device` or output file in a directory
//! that does not exist is one line naming the path, exit 2, before the plan is printed.
mod common;
use common::nowa;

#[test]
fn a_device_in_a_missing_directory_is_refused_before_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("no-such-dir").join("x.img");
    let dev = dev.to_str().unwrap();
    for cmd in [
        vec!["ycsb", "--device", dev, "--records", "1k", "--ops", "1k"],
        vec![
            "tpcc",
            "--device",
            dev,
            "--warehouses",
            "1",
            "--transactions",
            "10",
        ],
    ] {
        let out = nowa(&cmd);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(
            err.contains("--device") && err.contains(dev),
            "{cmd:?}: {err}"
        );
        assert!(
            !err.contains("pool"),
            "{cmd:?}: no plan before the refusal: {err}"
        );
        assert!(!std::path::Path::new(dev).exists());
    }
}

#[test]
fn a_trace_file_that_exists_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.csv");
    std::fs::write(&t, "keep me\n").unwrap();
    let out = nowa(&[
        "ycsb",
        "--records",
        "1k",
        "--ops",
        "1k",
        "--record-trace",
        t.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--record-trace") && !err.contains("pool"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&t).unwrap(), "keep me\n");
}
