//! FileDevice and safety_check on a real block device: a loop device over a temp image.
//! Skipped (with a message) when losetup is unavailable or we lack the privileges.

use nowa_device::{
    safety_check, BlockDevice, FileDevice, FileOptions, IoEngine, SafetyIssue, TargetKind,
};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Detaches the loop device when dropped, even if the test panics.
struct LoopGuard(PathBuf);

impl Drop for LoopGuard {
    fn drop(&mut self) {
        let ok = Command::new("losetup")
            .arg("-d")
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("warning: could not detach {}", self.0.display());
        }
    }
}

/// Unmounts when dropped.
struct MountGuard(PathBuf);

impl Drop for MountGuard {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn attach(img: &Path) -> Option<LoopGuard> {
    attach_with(img, &[])
}

fn attach_with(img: &Path, extra: &[&str]) -> Option<LoopGuard> {
    let out = Command::new("losetup")
        .args(["-f", "--show", "--direct-io=on"])
        .args(extra)
        .arg(img)
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
            Some(LoopGuard(PathBuf::from(dev)))
        }
        Ok(o) => {
            println!(
                "SKIP: losetup failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            None
        }
        Err(e) => {
            println!("SKIP: losetup not runnable: {e}");
            None
        }
    }
}

#[test]
fn loop_device_roundtrip_trim_and_safety() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("loop.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let Some(guard) = attach(&img) else { return };
    let dev = guard.0.clone();

    let r = safety_check(&dev).unwrap();
    assert_eq!(r.kind, TargetKind::BlockDevice);
    assert!(r.is_safe(), "{:?}", r.reasons());
    let r = safety_check(&img).unwrap();
    assert!(
        r.issues
            .iter()
            .any(|i| matches!(i, SafetyIssue::LoopBacking { .. })),
        "{:?}",
        r.reasons()
    );

    {
        let opts = FileOptions {
            engine: IoEngine::Uring,
            queue_depth: 8,
            ..FileOptions::default()
        };
        let d = FileDevice::open(&dev, &opts).unwrap();
        assert_eq!(d.kind(), TargetKind::BlockDevice);
        assert_eq!(d.geometry().capacity, 64 << 20);
        assert!(d.is_direct(), "{:?}", d.direct_fallback_reason());
        let lbs = d.geometry().logical_block_size;
        assert!(lbs == 512 || lbs == 4096, "lbs {lbs}");
        // A second exclusive open is refused while we hold the device.
        assert!(FileDevice::open(&dev, &opts).is_err(), "O_EXCL");

        let bufs: Vec<Vec<u8>> = (0..64u8)
            .map(|i| vec![i.wrapping_mul(37) | 1; 4096])
            .collect();
        let writes: Vec<(u64, &[u8])> = bufs
            .iter()
            .enumerate()
            .map(|(i, b)| (i as u64 * 4096 * 3, b.as_slice()))
            .collect();
        d.write_batch(&writes, None).unwrap();
        d.flush().unwrap();
        let mut outs = vec![vec![0u8; 4096]; 64];
        let mut reads: Vec<(u64, &mut [u8])> = outs
            .iter_mut()
            .enumerate()
            .map(|(i, b)| (i as u64 * 4096 * 3, b.as_mut_slice()))
            .collect();
        d.read_batch(&mut reads).unwrap();
        assert_eq!(outs, bufs);
        d.trim(0, 1 << 20).unwrap();
        println!(
            "loop device: lbs {lbs}, engine {:?}, discard supported: {}",
            d.engine(),
            d.trim_supported()
        );

        // Write an ext4 magic through the device: safety_check now refuses it.
        let mut sb = vec![0u8; 4096];
        sb[1024 + 0x38] = 0x53;
        sb[1024 + 0x39] = 0xEF;
        d.write_at(0, &sb).unwrap();
        d.flush().unwrap();
    }
    let r = safety_check(&dev).unwrap();
    assert!(
        r.issues.contains(&SafetyIssue::Signature("ext2/3/4")),
        "{:?}",
        r.reasons()
    );
    drop(guard);
}

#[test]
fn partitioned_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("part.img");
    // An MBR with one Linux partition at sector 2048, 8192 sectors long.
    let mut mbr = vec![0u8; 512];
    mbr[446 + 4] = 0x83;
    mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
    mbr[446 + 12..446 + 16].copy_from_slice(&8192u32.to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    std::fs::write(&img, &mbr).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let Some(guard) = attach_with(&img, &["-P"]) else {
        return;
    };
    // udev/kernel may need a moment to create the partition.
    let name = guard.0.file_name().unwrap().to_string_lossy().into_owned();
    let part = PathBuf::from(format!("/sys/block/{name}/{name}p1"));
    for _ in 0..50 {
        if part.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let r = safety_check(&guard.0).unwrap();
    println!("partitioned loop device: {:?}", r.reasons());
    assert!(r
        .issues
        .contains(&SafetyIssue::Signature("MBR / boot sector")));
    if part.exists() {
        assert!(
            r.issues
                .contains(&SafetyIssue::HasPartitions(vec![format!("{name}p1")])),
            "{:?}",
            r.reasons()
        );
    } else {
        println!("note: kernel did not create {name}p1; partition listing not checked");
    }
}

#[test]
fn mounted_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("fs.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let Some(guard) = attach(&img) else { return };
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&guard.0)
        .output();
    if !mkfs.as_ref().is_ok_and(|o| o.status.success()) {
        println!("SKIP: mkfs.ext4 unavailable or failed: {mkfs:?}");
        return;
    }
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let m = Command::new("mount").arg(&guard.0).arg(&mnt).output();
    if !m.as_ref().is_ok_and(|o| o.status.success()) {
        println!("SKIP: mount failed: {m:?}");
        return;
    }
    let mount = MountGuard(mnt.clone());
    let r = safety_check(&guard.0).unwrap();
    println!("mounted loop device: {:?}", r.reasons());
    assert!(r.issues.iter().any(
        |i| matches!(i, SafetyIssue::Mounted { mount_point, .. } if Path::new(mount_point) == mnt)
    ));
    assert!(r.issues.contains(&SafetyIssue::Signature("ext2/3/4")));
    // The exclusive open refuses a mounted device even if a caller skipped safety_check.
    let e = FileDevice::open(&guard.0, &FileOptions::default()).unwrap_err();
    assert!(e.to_string().contains("busy"), "{e}");
    drop(mount);
    drop(guard);
}
