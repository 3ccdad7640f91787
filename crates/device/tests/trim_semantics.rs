//! What a trim does on each target ([`TrimPolicy`]): on a regular file the default keeps the
//! blocks and the old bytes (nothing reaches the file system), `Deallocate` punches a hole
//! (blocks freed, zeroes read), `ZeroRange` keeps the blocks and reads zeroes; on a block
//! device the default discards (BLKDISCARD; a loop device then frees its backing file's
//! blocks). Every policy counts the trimmed bytes.

use nowa_device::{BlockDevice, FileDevice, FileOptions, TargetKind, TrimPolicy, BLOCK_SIZE};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 1 << 20;

fn payload() -> Vec<u8> {
    (0..MIB).map(|i| (i % 251).to_le_bytes()[0] | 1).collect()
}

/// 512-byte blocks allocated to a file.
fn allocated(p: &Path) -> u64 {
    std::fs::metadata(p).expect("metadata").blocks()
}

fn file_with(policy: TrimPolicy) -> (tempfile::TempDir, FileDevice) {
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = FileOptions {
        trim: policy,
        ..FileOptions::default()
    };
    let d = FileDevice::create(dir.path().join("t.img"), 4 * MIB, &opts).expect("create");
    d.write_at(0, &payload()).expect("write");
    d.flush().expect("flush");
    (dir, d)
}

/// Trims the first MiB; returns (blocks before, blocks after, first block read back).
fn trim_and_look(d: &FileDevice) -> (u64, u64, Vec<u8>) {
    let before = allocated(d.path());
    d.trim(0, MIB).expect("trim");
    d.flush().expect("flush");
    let after = allocated(d.path());
    let mut out = vec![0xEEu8; BLOCK_SIZE];
    d.read_at(4096, &mut out).expect("read");
    assert_eq!(
        d.counters().trimmed_bytes,
        MIB,
        "every policy counts the trim"
    );
    assert_eq!(
        std::fs::metadata(d.path()).expect("metadata").len(),
        4 * MIB,
        "size kept"
    );
    (before, after, out)
}

#[test]
fn file_default_keeps_blocks_and_bytes() {
    let (_dir, d) = file_with(TrimPolicy::Auto);
    assert_eq!(d.kind(), TargetKind::RegularFile);
    assert_eq!(d.trim_policy(), TrimPolicy::Ignore);
    let (before, after, out) = trim_and_look(&d);
    assert_eq!(after, before, "no block freed");
    assert_eq!(out, payload()[4096..8192], "old bytes stay");
}

#[test]
fn file_deallocate_punches_a_hole() {
    let (_dir, d) = file_with(TrimPolicy::Deallocate);
    let (before, after, out) = trim_and_look(&d);
    if !d.trim_supported() {
        println!("SKIP: the file system does not support hole punching");
        return;
    }
    assert!(after + 2048 <= before, "1 MiB freed: {before} -> {after}");
    assert!(out.iter().all(|&b| b == 0));
}

#[test]
fn file_zero_range_keeps_blocks_reads_zeroes() {
    let (_dir, d) = file_with(TrimPolicy::ZeroRange);
    let (before, after, out) = trim_and_look(&d);
    if !d.trim_supported() {
        println!("SKIP: the file system does not support FALLOC_FL_ZERO_RANGE");
        return;
    }
    assert!(out.iter().all(|&b| b == 0));
    assert!(after + 256 >= before, "extents kept: {before} -> {after}");
}

/// Detaches a loop device when dropped.
struct Loop(PathBuf);

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

#[test]
fn block_device_default_discards() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("loop.img");
    std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
    let out = Command::new("losetup")
        .args(["-f", "--show", "--direct-io=on"])
        .arg(&img)
        .output();
    let Some(lo) = out
        .ok()
        .filter(|o| o.status.success())
        .map(|o| Loop(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())))
    else {
        println!("SKIP: losetup is not permitted here");
        return;
    };
    let d = FileDevice::open(&lo.0, &FileOptions::default()).unwrap();
    assert_eq!(d.kind(), TargetKind::BlockDevice);
    assert_eq!(d.trim_policy(), TrimPolicy::Deallocate);
    d.write_at(0, &payload()).unwrap();
    d.flush().unwrap();
    let before = allocated(&img);
    d.trim(0, MIB).unwrap();
    d.flush().unwrap();
    let after = allocated(&img);
    println!("loop backing file blocks: {before} -> {after}");
    if d.trim_supported() {
        assert!(after < before, "the discard reached the backing file");
    }
    assert_eq!(d.counters().trimmed_bytes, MIB);
}
