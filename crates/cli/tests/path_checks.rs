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

/// `--force` is given once per path it allows to be overwritten: the device's and a
/// non-empty `--out` together (before, one `--force` named one of them only, so a run on an
/// existing device could not write into a used `--out`). A third `--force` naming neither is
/// refused by name, before any work.
#[test]
fn tpcc_takes_a_force_for_the_device_and_one_for_out() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("db.img");
    // Not a nowa database (so it needs --force), sparse, and large enough for one warehouse.
    std::fs::write(&dev, vec![7u8; 4096]).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&dev)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("old.txt"), b"earlier").unwrap();
    let (d, o) = (dev.to_str().unwrap(), out.to_str().unwrap());
    let run = |extra: &[&str]| {
        let mut cmd = vec![
            "tpcc",
            "--device",
            d,
            "--warehouses",
            "1",
            "--transactions",
            "20",
            "--out",
            o,
            "-q",
        ];
        cmd.extend_from_slice(extra);
        nowa(&cmd)
    };
    let stray = dir.path().join("elsewhere");
    let refused = run(&[
        "--force",
        d,
        "--force",
        o,
        "--force",
        stray.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--force") && err.contains("elsewhere"),
        "{err}"
    );
    let mut head = [0u8; 4096];
    std::io::Read::read_exact(&mut std::fs::File::open(&dev).unwrap(), &mut head).unwrap();
    assert_eq!(head, [7u8; 4096], "untouched");
    let ran = run(&["--force", d, "--force", o]);
    let err = String::from_utf8_lossy(&ran.stderr);
    assert!(ran.status.success(), "{err}");
    assert!(out.join("tpcc.json").exists(), "{err}");
}

/// An existing file too small for a database is refused naming --device, before the run's
/// plan, by ycsb and tpcc (before: "capacity: 4096 is not in [1048576, ...]" after the plan).
#[test]
fn a_forced_device_file_too_small_for_a_database_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("small.img");
    std::fs::write(&dev, vec![7u8; 4096]).unwrap();
    let d = dev.to_str().unwrap();
    for cmd in [
        vec!["tpcc", "--device", d, "--force", d, "--transactions", "10"],
        vec![
            "ycsb",
            "--device",
            d,
            "--force",
            d,
            "--records",
            "1k",
            "--ops",
            "1k",
        ],
    ] {
        let out = nowa(&cmd);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(
            err.contains("--device") && err.contains("4096 bytes"),
            "{cmd:?}: {err}"
        );
        assert!(
            !err.contains("seed 42"),
            "{cmd:?}: no plan before the refusal: {err}"
        );
        assert_eq!(
            std::fs::read(&dev).unwrap(),
            vec![7u8; 4096],
            "{cmd:?}: untouched"
        );
    }
}
