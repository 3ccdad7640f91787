//! Every command that writes to a path opens it through nowa-device's one opening path:
//! `nowa ycsb` and `nowa infer-gc-unit` refuse an ext4-formatted loop device and an existing
//! non-nowa file without --force (leaving them byte-identical), never create a file for a
//! mistyped /dev path, announce their steps before writing, check what they need before
//! writing, and a second process opening the same target fails naming the first.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::nowa;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code 2 with one error line containing `want`.
fn refused(o: &Output, want: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("nowa: error")).collect();
    assert_eq!(errors.len(), 1, "{e}");
    assert!(errors[0].contains(want), "want '{want}' in: {e}");
}

fn ycsb(device: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "ycsb",
        "-q",
        "--device",
        device.to_str().expect("UTF-8 path"),
        "--records",
        "2000",
        "--ops",
        "2000",
    ];
    args.extend_from_slice(extra);
    nowa(&args)
}

fn gc_unit(device: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "infer-gc-unit",
        "--device",
        device.to_str().expect("UTF-8 path"),
    ];
    args.extend_from_slice(extra);
    nowa(&args)
}

#[test]
fn non_nowa_file_is_refused_and_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("user.dat");
    let data: Vec<u8> = (0..(8u32 << 20)).map(|i| i.to_le_bytes()[1]).collect();
    std::fs::write(&f, &data).unwrap();
    refused(&ycsb(&f, &[]), "not a nowa database");
    refused(&gc_unit(&f, &[]), "not a nowa scratch target");
    assert_eq!(std::fs::read(&f).unwrap(), data, "byte-identical");
    // --force naming it: infer-gc-unit still refuses, before writing anything, because a file
    // has no media write counter.
    let p = f.to_str().unwrap();
    refused(
        &gc_unit(&f, &["--force", p]),
        "no media (physical) write counter",
    );
    assert_eq!(std::fs::read(&f).unwrap(), data, "checked before trimming");
}

#[test]
fn mistyped_dev_path_creates_nothing() {
    let typo = Path::new("/dev/nowa-test-nvme9n9");
    refused(&ycsb(typo, &[]), "does not create files in /dev");
    refused(&gc_unit(typo, &[]), "does not create files in /dev");
    assert!(!typo.exists());
}

#[test]
fn steps_are_listed_before_the_database_is_created_and_a_rerun_needs_no_force() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("db.img");
    let o = ycsb(&f, &["--capacity", "32MiB"]);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    let pos = |s: &str| e.find(s).unwrap_or_else(|| panic!("'{s}' missing in: {e}"));
    assert!(pos("nowa ycsb: create ") < pos("nowa ycsb: format "));
    assert!(pos("nowa ycsb: format ") < pos("nowa ycsb: seed"), "{e}");
    // The database it left is recognized: a second run needs no --force.
    let o = ycsb(&f, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Reads the child's stderr until `want` appears (or it exits / 60 s pass).
fn wait_for(child: &mut std::process::Child, want: &str) -> String {
    let mut err = child.stderr.take().expect("piped stderr");
    let mut seen = String::new();
    let t = Instant::now();
    let mut buf = [0u8; 256];
    while !seen.contains(want) && t.elapsed() < Duration::from_secs(60) {
        match err.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    seen
}

#[test]
fn a_second_process_is_refused_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("db.img");
    let p = f.to_str().unwrap();
    let mut first = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args([
            "ycsb",
            "--device",
            p,
            "--capacity",
            "32MiB",
            "--records",
            "2000",
        ])
        .args(["--seconds", "60", "--threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let seen = wait_for(&mut first, "nowa ycsb: seed");
    assert!(seen.contains("nowa ycsb: seed"), "{seen}");
    let o = ycsb(&f, &["--force", p]);
    let _ = first.kill();
    let _ = first.wait();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.contains("is busy") && e.contains(&format!("held by process {} (nowa)", first.id())),
        "{e}"
    );
}

/// Detaches a loop device when dropped.
struct Loop(PathBuf);

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

fn first_mib(p: &Path) -> Vec<u8> {
    let mut b = vec![0u8; 1 << 20];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut b))
        .expect("read the first MiB");
    b
}

#[test]
fn ext4_loop_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("fs.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&img)
        .output();
    let Some(lo) = out
        .ok()
        .filter(|o| o.status.success())
        .map(|o| Loop(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())))
    else {
        eprintln!("SKIPPED ext4_loop_device_is_refused: losetup is not permitted here");
        return;
    };
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&lo.0)
        .status();
    if !mkfs.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED ext4_loop_device_is_refused: mkfs.ext4 not available");
        return;
    }
    let before = first_mib(&lo.0);
    refused(&ycsb(&lo.0, &[]), "ext2/3/4");
    refused(&gc_unit(&lo.0, &[]), "ext2/3/4");
    assert_eq!(first_mib(&lo.0), before, "the file system is intact");
}
