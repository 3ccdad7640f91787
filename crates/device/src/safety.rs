//! [`safety_check`]: refuse to benchmark a target that holds somebody's data.
//!
//! The benchmark overwrites the whole target, so it must not run on a device that is mounted,
//! used as swap, partitioned, held by device-mapper/md, or that carries a file-system
//! signature. Every problem found is listed, not only the first, so the user can judge.

use crate::file::{dev_major_minor, sysfs_dir, TargetKind};
use crate::{DeviceError, Result};
use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// One reason a target is unsafe to overwrite.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum SafetyIssue {
    /// The device or one of its partitions is mounted.
    Mounted {
        /// The mounted device (source of the mount).
        device: String,
        /// Where it is mounted.
        mount_point: String,
    },
    /// The device, a partition of it, or the file is active swap.
    Swap {
        /// The swap area.
        device: String,
    },
    /// The disk has a partition table with these partitions (e.g. `sda1`).
    HasPartitions(Vec<String>),
    /// Other block devices are stacked on it (device-mapper, md, bcache: `holders/`).
    Holders(Vec<String>),
    /// A signature of a file system, partition table or volume was found in the first blocks.
    Signature(&'static str),
    /// The file backs a loop device.
    LoopBacking {
        /// The loop device, e.g. `/dev/loop3`.
        loop_device: String,
    },
    /// The device is (a partition of) the disk holding `/` or `/boot`.
    SystemDisk,
}

impl std::fmt::Display for SafetyIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SafetyIssue::Mounted {
                device,
                mount_point,
            } => write!(f, "{device} is mounted on {mount_point}"),
            SafetyIssue::Swap { device } => write!(f, "{device} is in use as swap"),
            SafetyIssue::HasPartitions(p) => write!(f, "has partitions: {}", p.join(", ")),
            SafetyIssue::Holders(h) => write!(f, "in use by stacked devices: {}", h.join(", ")),
            SafetyIssue::Signature(s) => write!(f, "contains a {s} signature"),
            SafetyIssue::LoopBacking { loop_device } => {
                write!(f, "is the backing file of {loop_device}")
            }
            SafetyIssue::SystemDisk => f.write_str("is (on) the system disk holding / or /boot"),
        }
    }
}

/// Result of [`safety_check`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SafetyReport {
    /// The canonical path checked.
    pub path: PathBuf,
    /// File or block device.
    pub kind: TargetKind,
    /// Every problem found; empty = safe to overwrite.
    pub issues: Vec<SafetyIssue>,
}

impl SafetyReport {
    /// No problem found.
    #[must_use]
    pub fn is_safe(&self) -> bool {
        self.issues.is_empty()
    }
    /// The issues as human-readable lines.
    #[must_use]
    pub fn reasons(&self) -> Vec<String> {
        self.issues.iter().map(|i| i.to_string()).collect()
    }
}

/// Bytes read from the start of the target to look for signatures: 64 KiB plus the btrfs
/// superblock, which lives at 64 KiB.
const PROBE_BYTES: usize = 64 * 1024 + 4096;

/// Check whether `path` (a block device or regular file) is safe to overwrite.
///
/// # Errors
/// Only when the target cannot be inspected: missing, unreadable (unless it is the system
/// disk, which is reported as such even where it may not be opened), or neither a regular file
/// nor a block device.
pub fn safety_check(path: impl AsRef<Path>) -> Result<SafetyReport> {
    let path = std::fs::canonicalize(path.as_ref()).map_err(path_io(path.as_ref()))?;
    let meta = std::fs::metadata(&path).map_err(path_io(&path))?;
    let kind = target_kind(&path, &meta)?;
    // The system-disk check needs no access to the device itself: do it first, so that it is
    // reported even when the device cannot be opened for inspection (containers).
    let system = kind == TargetKind::BlockDevice && is_system_disk(meta.rdev());
    let mut issues = match kind {
        TargetKind::BlockDevice => block_device_issues(meta.rdev()),
        TargetKind::RegularFile => file_issues(&path, &meta),
    };
    if system {
        issues.push(SafetyIssue::SystemDisk);
    }
    let head = match read_head(&path) {
        Ok(h) => h,
        Err(_) if system => Vec::new(),
        Err(e) => return Err(path_io(&path)(e)),
    };
    issues.extend(signatures(&head).into_iter().map(SafetyIssue::Signature));
    Ok(SafetyReport { path, kind, issues })
}

/// Regular file or block device; anything else is an error.
pub(crate) fn target_kind(path: &Path, meta: &std::fs::Metadata) -> Result<TargetKind> {
    let ft = meta.file_type();
    if ft.is_block_device() {
        Ok(TargetKind::BlockDevice)
    } else if ft.is_file() {
        Ok(TargetKind::RegularFile)
    } else {
        Err(DeviceError::NotFileOrBlockDevice {
            path: path.to_path_buf(),
            what: describe(ft),
        })
    }
}

/// What a file type is, for messages ("/dev/null is a character device").
pub(crate) fn describe(ft: std::fs::FileType) -> &'static str {
    if ft.is_file() {
        "a regular file"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "an unknown file type"
    }
}

/// Wrap an OS error about `path` so its message names the path.
pub(crate) fn path_io(path: &Path) -> impl FnOnce(std::io::Error) -> DeviceError + '_ {
    move |source| DeviceError::PathIo {
        path: path.to_path_buf(),
        source,
    }
}

/// The first [`PROBE_BYTES`] of the target (fewer if it is smaller).
pub(crate) fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    let f = File::open(path)?;
    let mut head = vec![0u8; PROBE_BYTES];
    let n = read_up_to(&f, &mut head)?;
    head.truncate(n);
    Ok(head)
}

/// Mounts, swap, partitions and stacked devices of a block device (number `rdev`).
fn block_device_issues(rdev: u64) -> Vec<SafetyIssue> {
    let dir = sysfs_dir(rdev);
    let mut devs: HashSet<u64> = HashSet::from([rdev]);
    let mut parts = Vec::new();
    let mut holders = list_dir(&dir.join("holders"));
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.join("partition").exists() {
            parts.push(entry.file_name().to_string_lossy().into_owned());
            if let Some(d) = read_dev_file(&p.join("dev")) {
                devs.insert(d);
            }
            holders.extend(list_dir(&p.join("holders")));
        }
    }
    parts.sort();
    holders.sort();
    holders.dedup();
    let mut issues: Vec<SafetyIssue> = mounts_of(&devs)
        .into_iter()
        .map(|(device, mount_point)| SafetyIssue::Mounted {
            device,
            mount_point,
        })
        .collect();
    for device in swaps_matching(|m| m.file_type().is_block_device() && devs.contains(&m.rdev())) {
        issues.push(SafetyIssue::Swap { device });
    }
    if !parts.is_empty() {
        issues.push(SafetyIssue::HasPartitions(parts));
    }
    if !holders.is_empty() {
        issues.push(SafetyIssue::Holders(holders));
    }
    issues
}

/// Swap and loop-device backing of a regular file.
fn file_issues(path: &Path, meta: &std::fs::Metadata) -> Vec<SafetyIssue> {
    let (dev, ino) = (meta.dev(), meta.ino());
    let mut issues: Vec<SafetyIssue> = swaps_matching(|m| m.dev() == dev && m.ino() == ino)
        .into_iter()
        .map(|device| SafetyIssue::Swap { device })
        .collect();
    for entry in std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(b) = std::fs::read_to_string(entry.path().join("loop/backing_file")) else {
            continue;
        };
        // The kernel appends " (deleted)" for unlinked files; compare the path part.
        let b = b.trim_end().trim_end_matches(" (deleted)");
        if Path::new(b) == path {
            issues.push(SafetyIssue::LoopBacking {
                loop_device: format!("/dev/{name}"),
            });
        }
    }
    issues
}

/// The whole disk (sysfs directory) a device number belongs to.
fn whole_disk_of(dev: u64) -> Option<PathBuf> {
    let p = std::fs::canonicalize(sysfs_dir(dev)).ok()?;
    Some(if p.join("partition").exists() {
        p.parent()?.to_path_buf()
    } else {
        p
    })
}

/// A sysfs block directory, or its whole disk if it is a partition.
fn disk_of_sysfs(p: PathBuf) -> PathBuf {
    if p.join("partition").exists() {
        p.parent().map(Path::to_path_buf).unwrap_or(p)
    } else {
        p
    }
}

/// Disks that hold the root file system or /boot (followed through device-mapper slaves).
fn system_disks() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for mp in ["/", "/boot", "/boot/efi"] {
        let Some(d) = std::fs::metadata(mp)
            .ok()
            .and_then(|m| whole_disk_of(m.dev()))
        else {
            continue;
        };
        // A dm/md device: its slaves are the real disks.
        let slaves: Vec<PathBuf> = std::fs::read_dir(d.join("slaves"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::canonicalize(e.path()).ok())
            .map(disk_of_sysfs)
            .collect();
        out.push(d);
        out.extend(slaves);
    }
    out
}

/// True if block device `rdev` is (a partition of) a disk holding `/` or `/boot`.
fn is_system_disk(rdev: u64) -> bool {
    whole_disk_of(rdev).is_some_and(|d| system_disks().contains(&d))
}

/// Signatures found in the first bytes of a target.
#[must_use]
pub fn signatures(head: &[u8]) -> Vec<&'static str> {
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    let mut found = Vec::new();
    if at(1024 + 0x38, &[0x53, 0xEF]) {
        found.push("ext2/3/4");
    }
    if at(0, b"XFSB") {
        found.push("XFS");
    }
    if at(64 * 1024 + 0x40, b"_BHRfS_M") {
        found.push("btrfs");
    }
    if at(1024, &0xF2F5_2010u32.to_le_bytes()) {
        found.push("F2FS");
    }
    if [4096usize, 8192, 16384, 65536]
        .iter()
        .any(|&ps| at(ps - 10, b"SWAPSPACE2") || at(ps - 10, b"SWAP-SPACE"))
    {
        found.push("Linux swap");
    }
    if at(0, b"LUKS\xba\xbe") {
        found.push("LUKS");
    }
    if (0..4).any(|s| at(s * 512, b"LABELONE")) {
        found.push("LVM2 physical volume");
    }
    if at(512, b"EFI PART") || at(4096, b"EFI PART") {
        found.push("GPT partition table");
    }
    if at(510, &[0x55, 0xAA]) {
        found.push("MBR / boot sector");
    }
    found
}

fn read_up_to(f: &File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn list_dir(p: &Path) -> Vec<String> {
    std::fs::read_dir(p)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Parse a sysfs `dev` file ("MAJ:MIN") into a `dev_t` comparable with `st_rdev`.
fn read_dev_file(p: &Path) -> Option<u64> {
    parse_dev(std::fs::read_to_string(p).ok()?.trim())
}

/// "MAJ:MIN" -> `dev_t` (glibc encoding).
fn parse_dev(s: &str) -> Option<u64> {
    let (ma, mi) = s.split_once(':')?;
    let (ma, mi): (u64, u64) = (ma.parse().ok()?, mi.parse().ok()?);
    let dev =
        ((ma & 0xffff_f000) << 32) | ((ma & 0xfff) << 8) | ((mi & 0xffff_ff00) << 12) | (mi & 0xff);
    debug_assert_eq!(dev_major_minor(dev), (ma, mi));
    Some(dev)
}

/// Undo the octal escapes (`\040` for a space) of /proc/mounts and /proc/swaps.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Mounts of any device in `devs`: (source, mount point). Two views, merged: the source path
/// in /proc/mounts (resolves /dev/mapper and by-uuid links) and the st_dev "MAJ:MIN" field of
/// /proc/self/mountinfo (covers sources such as /dev/root that have no device node).
fn mounts_of(devs: &HashSet<u64>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let text = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (Some(src), Some(mp)) = (it.next(), it.next()) else {
            continue;
        };
        let (src, mp) = (unescape(src), unescape(mp));
        if !src.starts_with('/') {
            continue;
        }
        // metadata() follows symlinks such as /dev/mapper/x -> ../dm-0 or /dev/disk/by-uuid/...
        if let Ok(m) = std::fs::metadata(&src) {
            if m.file_type().is_block_device() && devs.contains(&m.rdev()) {
                out.push((src, mp));
            }
        }
    }
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in info.lines() {
        // id parent MAJ:MIN root mount-point options ... - fstype source super-options
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 {
            continue;
        }
        let Some(dev) = parse_dev(f[2]) else { continue };
        if !devs.contains(&dev) {
            continue;
        }
        let mp = unescape(f[4]);
        if out.iter().any(|(_, m)| *m == mp) {
            continue;
        }
        let src = f
            .iter()
            .position(|&x| x == "-")
            .and_then(|i| f.get(i + 2))
            .map_or_else(|| f[2].to_string(), |s| unescape(s));
        out.push((src, mp));
    }
    out
}

/// Active swap areas (from /proc/swaps) whose metadata satisfies `pred`.
fn swaps_matching(pred: impl Fn(&std::fs::Metadata) -> bool) -> Vec<String> {
    let text = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape)
        .filter(|name| std::fs::metadata(name).is_ok_and(|m| pred(&m)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_table() {
        let mut h = vec![0u8; PROBE_BYTES];
        assert!(signatures(&h).is_empty());
        h[1080] = 0x53;
        h[1081] = 0xEF;
        h[0..4].copy_from_slice(b"XFSB");
        h[65536 + 64..65536 + 72].copy_from_slice(b"_BHRfS_M");
        h[4086..4096].copy_from_slice(b"SWAPSPACE2");
        h[510] = 0x55;
        h[511] = 0xAA;
        h[512..520].copy_from_slice(b"EFI PART");
        let s = signatures(&h);
        for want in [
            "ext2/3/4",
            "XFS",
            "btrfs",
            "Linux swap",
            "GPT partition table",
            "MBR / boot sector",
        ] {
            assert!(s.contains(&want), "missing {want} in {s:?}");
        }
        // Short inputs never panic.
        assert!(signatures(&h[..100]).contains(&"XFS"));
    }

    #[test]
    fn dev_parsing_roundtrips() {
        for (ma, mi) in [(8u64, 0u64), (259, 3), (7, 1), (4095, 255), (4096, 1 << 19)] {
            assert_eq!(
                dev_major_minor(parse_dev(&format!("{ma}:{mi}")).unwrap()),
                (ma, mi)
            );
        }
        assert_eq!(parse_dev("x"), None);
    }

    #[test]
    fn unescape_octal() {
        assert_eq!(unescape(r"/mnt/a\040b"), "/mnt/a b");
        assert_eq!(unescape(r"/x\\"), r"/x\\");
    }
}
