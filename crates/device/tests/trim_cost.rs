//! The measurement behind the file default of [`TrimPolicy`] (docs/design.md, "Trim on files
//! and block devices"): an out-of-place store's write pattern on a file on ext4 on a loop
//! device, once per trim policy, counting the bytes the loop device really received
//! (/sys/block/loopN/stat). Ignored by default (root, losetup, mkfs.ext4, about a minute):
//!
//! ```text
//! cargo test --release -p nowa-device --test trim_cost -- --ignored --nocapture
//! ```
//!
//! Pattern (the shape of nowa's out-of-place store): a file of `FILE` bytes cut into 1 MiB
//! zones; 4 zones open at once, 16 KiB writes round-robin over them (O_DIRECT); an fdatasync
//! after every 256 KiB, or every 32 KiB (group commits); when a zone is full, a victim zone is trimmed whole
//! and reopened (DB GC's zone reset). The file is filled once first, then `VOLUME` bytes of
//! the pattern are measured.

use nowa_device::{BlockDevice, FileDevice, FileOptions, TrimPolicy};
use std::path::{Path, PathBuf};
use std::process::Command;

const FILE: u64 = 256 << 20;
const ZONE: u64 = 1 << 20;
const WRITE: usize = 16 << 10;
const VOLUME: u64 = 1 << 30;

/// Loop device, mount point and image; cleaned up on drop.
struct Fs {
    dev: PathBuf,
    mnt: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Fs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

fn run(cmd: &mut Command) -> Option<String> {
    let o = cmd.output().ok()?;
    if !o.status.success() {
        println!(
            "SKIP: {cmd:?}: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        );
        return None;
    }
    Some(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// A fresh ext4 on a loop device (direct I/O to its backing file in /var/tmp), mounted.
fn ext4() -> Option<Fs> {
    let dir = tempfile::tempdir_in("/var/tmp").ok()?;
    let img = dir.path().join("fs.img");
    std::fs::File::create(&img).ok()?.set_len(FILE * 2).ok()?;
    let dev = PathBuf::from(run(Command::new("losetup")
        .args(["-f", "--show", "--direct-io=on"])
        .arg(&img))?);
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).ok()?;
    let fs = Fs {
        dev,
        mnt,
        _dir: dir,
    };
    run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&fs.dev))?;
    run(Command::new("mount").arg(&fs.dev).arg(&fs.mnt))?;
    Some(fs)
}

/// Sectors written to a block device so far (field 7 of /sys/block/NAME/stat).
fn sectors_written(dev: &Path) -> u64 {
    let name = dev.file_name().expect("a device name").to_string_lossy();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).expect("stat");
    stat.split_whitespace()
        .nth(6)
        .and_then(|v| v.parse().ok())
        .expect("field 7")
}

/// The pattern with an fdatasync every `flush_every` bytes; returns the bytes it wrote.
fn pattern(d: &FileDevice, flush_every: u64) -> u64 {
    let zones = FILE / ZONE;
    let buf = vec![0x5Au8; WRITE];
    let mut open: Vec<(u64, u64)> = (0..4).map(|z| (z, 0)).collect(); // (zone, bytes written)
    let (mut next, mut written, mut rng) = (4u64, 0u64, 0x9E37_79B9_7F4A_7C15u64);
    while written < VOLUME {
        let i = usize::try_from(written / WRITE as u64 % 4).expect("small");
        let (z, off) = open[i];
        d.write_at(z * ZONE + off, &buf).expect("write");
        written += WRITE as u64;
        if written % flush_every == 0 {
            d.flush().expect("flush");
        }
        open[i].1 += WRITE as u64;
        if open[i].1 == ZONE {
            // GC: reset a victim zone (not an open one) and reopen it.
            rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let mut v = (rng >> 33) % zones;
            while open.iter().any(|&(o, _)| o == v) {
                v = (v + 1) % zones;
            }
            d.trim(v * ZONE, ZONE).expect("trim");
            open[i] = (v, 0);
            next += 1;
        }
    }
    d.flush().expect("flush");
    assert!(next > zones, "the pattern reused zones");
    written
}

#[test]
#[ignore = "needs root, losetup and mkfs.ext4; about two minutes"]
fn trim_policy_cost_on_ext4() {
    println!("policy       flush every   app MiB   device MiB   device/app");
    for flush_every in [256 << 10, 32 << 10] {
        for policy in [
            TrimPolicy::Deallocate,
            TrimPolicy::ZeroRange,
            TrimPolicy::Ignore,
        ] {
            let Some(fs) = ext4() else { return };
            let (app, dev) = measure(&fs, policy, flush_every);
            println!(
                "{:<12} {:>8} KiB {:>9} {:>12} {:>12.3}",
                format!("{policy:?}"),
                flush_every >> 10,
                app >> 20,
                dev >> 20,
                dev as f64 / app as f64
            );
        }
    }
}

/// (application bytes, device bytes) of the pattern on a fresh file of `fs`.
fn measure(fs: &Fs, policy: TrimPolicy, flush_every: u64) -> (u64, u64) {
    let opts = FileOptions {
        trim: policy,
        ..FileOptions::default()
    };
    let d = FileDevice::create(fs.mnt.join("db"), FILE, &opts).expect("create");
    assert!(d.is_direct(), "O_DIRECT on ext4");
    // Fill once (allocates every block), then measure the steady pattern.
    let chunk = vec![0xA5u8; 1 << 20];
    for off in (0..FILE).step_by(1 << 20) {
        d.write_at(off, &chunk).expect("fill");
    }
    d.flush().expect("flush");
    run(&mut Command::new("sync"));
    let s0 = sectors_written(&fs.dev);
    let app = pattern(&d, flush_every);
    run(&mut Command::new("sync"));
    (app, (sectors_written(&fs.dev) - s0) * 512)
}
