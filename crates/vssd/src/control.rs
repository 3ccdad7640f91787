//! Controlling a mounted virtual SSD from another process: is it mounted, unmount it (also
//! when its daemon was killed), wait for the daemon, attach a loop device over a disk file.

use crate::{Result, Snapshot, VssdError, STATS_FILE};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn io(path: &Path, source: std::io::Error) -> VssdError {
    VssdError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Decodes the octal escapes of /proc/self/mountinfo (`\040` = space).
fn unescape(s: &str) -> String {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let octal = b.get(i + 1..i + 4).and_then(|d| {
            std::str::from_utf8(d)
                .ok()
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        });
        match (b[i], octal) {
            (b'\\', Some(c)) => {
                out.push(c);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// (source, mount point, file system type) of every mount.
fn mounts() -> Vec<(String, PathBuf, String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let dash = f.iter().position(|&x| x == "-")?;
            Some((
                unescape(f.get(dash + 2)?),
                PathBuf::from(unescape(f.get(4)?)),
                (*f.get(dash + 1)?).to_owned(),
            ))
        })
        .collect()
}

/// The canonical form of `dir` without touching a dead FUSE mount (canonicalize would stat
/// it and fail with ENOTCONN) and without needing it to exist: its parent is canonicalized
/// instead.
#[must_use]
pub fn absolute(dir: &Path) -> PathBuf {
    let name = dir.file_name().map(Path::new).unwrap_or(Path::new(""));
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    parent
        .canonicalize()
        .map_or_else(|_| dir.to_path_buf(), |p| p.join(name))
}

/// Whether a vssd (a FUSE mount named nowa-vssd) is mounted at `dir`.
#[must_use]
pub fn is_mounted(dir: &Path) -> bool {
    let dir = absolute(dir);
    mounts()
        .iter()
        .any(|(src, at, fs)| *at == dir && (src == "nowa-vssd" || fs.contains("nowa-vssd")))
}

/// Reads the live counters of the vssd at `dir`.
///
/// # Errors
/// No daemon answers (`.stats` cannot be read: not mounted, or the daemon was killed).
pub fn read_stats(dir: &Path) -> Result<Snapshot> {
    let p = dir.join(STATS_FILE);
    let text = std::fs::read_to_string(&p).map_err(|e| io(&p, e))?;
    serde_json::from_str(&text).map_err(|e| io(&p, std::io::Error::other(e)))
}

/// Loop devices whose backing file is `file`.
#[must_use]
pub fn loop_devices_of(file: &Path) -> Vec<PathBuf> {
    let out = Command::new("losetup").arg("-j").arg(file).output();
    let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    text.unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(':').next())
        .filter(|d| d.starts_with("/dev/loop"))
        .map(PathBuf::from)
        .collect()
}

/// Where `dev` is mounted, if it is.
#[must_use]
pub fn mount_point_of(dev: &Path) -> Option<PathBuf> {
    let dev = dev.to_string_lossy();
    mounts()
        .into_iter()
        .find(|(src, _, _)| *src == dev)
        .map(|(_, at, _)| at)
}

/// Runs a helper program, turning a failure into an error naming `what`.
fn run(what: &Path, cmd: &mut Command) -> Result<String> {
    let out = cmd.output().map_err(|e| io(what, e))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned());
    }
    let msg = String::from_utf8_lossy(&out.stderr)
        .trim()
        .replace('\n', " ");
    Err(io(what, std::io::Error::other(msg)))
}

/// Attaches a loop device with direct I/O and 4 KiB sectors over `file`; returns it.
///
/// # Errors
/// losetup fails (needs root).
///
/// # Panics
/// If losetup succeeds without printing a device (a broken losetup).
pub fn attach(file: &Path) -> Result<PathBuf> {
    let mut cmd = Command::new("losetup");
    cmd.args([
        "--find",
        "--show",
        "--direct-io=on",
        "--sector-size",
        "4096",
    ])
    .arg(file);
    let dev = run(file, &mut cmd).map(PathBuf::from)?;
    assert!(
        dev.starts_with("/dev/"),
        "losetup --show prints the device: {}",
        dev.display()
    );
    Ok(dev)
}

/// Detaches loop device `dev`.
///
/// # Errors
/// losetup fails.
pub fn detach(dev: &Path) -> Result<()> {
    run(dev, Command::new("losetup").arg("-d").arg(dev)).map(|_| ())
}

/// Unmounts `dir`: umount(2) as root, fusermount3 -u otherwise; `lazy` detaches a mount
/// whose daemon is gone.
///
/// # Errors
/// Both fail (busy, or no permission).
pub fn unmount(dir: &Path, lazy: bool) -> Result<()> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|e| io(dir, std::io::Error::other(e)))?;
    let flags = if lazy { libc::MNT_DETACH } else { 0 };
    // SAFETY: a NUL-terminated path that lives across the call and integer flags. Test:
    // tests/vssd_fuse.rs stops a mount, and one whose daemon was killed.
    if unsafe { libc::umount2(c.as_ptr(), flags) } == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::EPERM) {
        return Err(io(dir, err));
    }
    let mut cmd = Command::new("fusermount3");
    cmd.arg(if lazy { "-uz" } else { "-u" }).arg(dir);
    run(dir, &mut cmd).map(|_| ())
}

/// Waits up to `timeout` for process `pid` to end; true if it did.
#[must_use]
pub fn wait_for_exit(pid: u32, timeout: Duration) -> bool {
    let t = Instant::now();
    let proc = PathBuf::from(format!("/proc/{pid}"));
    while t.elapsed() < timeout {
        let stat = std::fs::read_to_string(proc.join("stat")).unwrap_or_default();
        // Gone, or a zombie its parent has not reaped yet: either way it serves nothing.
        if stat.is_empty()
            || stat
                .rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'))
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_decoded() {
        assert_eq!(unescape(r"/tmp/a\040b"), "/tmp/a b");
        assert_eq!(unescape(r"/x\\y"), r"/x\\y");
        assert_eq!(unescape("plain"), "plain");
    }

    #[test]
    fn the_root_is_mounted_and_a_plain_directory_is_no_vssd() {
        assert!(mounts().iter().any(|(_, at, _)| at == Path::new("/")));
        assert!(!is_mounted(Path::new("/tmp")));
    }
}

/// Free bytes of the file system holding `p` (for an unprivileged user).
#[must_use]
pub fn free_bytes(p: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs reads a NUL-terminated path that lives across the call and fills one
    // zeroed struct owned here. Tests: tests/vssd_cli.rs refuses a backing file larger than
    // the free disk space; tests/compare_cli.rs sizes nowa's file on ext4 on a vssd.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let r = unsafe { libc::statvfs(c.as_ptr(), &raw mut s) };
    (r == 0).then(|| s.f_bavail.saturating_mul(s.f_frsize))
}

/// Makes `dir` ready to be a mount point: an existing empty directory (created now if
/// missing; a non-empty one only with `force`), where no vssd is mounted.
///
/// # Errors
/// [`VssdError::AlreadyMounted`], [`VssdError::NotEmpty`], or it cannot be created or read.
///
/// # Panics
/// On a broken invariant (a bug): the assertions state them.
pub fn prepare_mount_point(dir: &Path, force: bool) -> Result<()> {
    if is_mounted(dir) {
        return Err(VssdError::AlreadyMounted {
            dir: dir.to_path_buf(),
        });
    }
    if !dir.exists() {
        std::fs::create_dir(dir).map_err(|e| io(dir, e))?;
        assert!(dir.is_dir(), "the mount point was just made");
        return Ok(());
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| io(dir, e))?;
    if entries.next().is_some() && !force {
        return Err(VssdError::NotEmpty {
            dir: dir.to_path_buf(),
        });
    }
    Ok(())
}

/// The names of a vssd's disk files: `disk`, or `disk0 .. disk{N-1}`.
///
/// # Panics
/// On a broken invariant (a bug): the assertions state them.
#[must_use]
pub fn disk_names(files: u16) -> Vec<String> {
    let names: Vec<String> = if files <= 1 {
        vec!["disk".to_owned()]
    } else {
        (0..files).map(|i| format!("disk{i}")).collect()
    };
    assert_eq!(
        names.len(),
        usize::from(files.max(1)),
        "a name per disk file"
    );
    names
}

/// Detaches the loop devices over the vssd's disk files; refuses one that is still mounted.
/// Returns the devices detached.
///
/// # Errors
/// [`VssdError::LoopInUse`], or losetup fails.
///
/// # Panics
/// On a broken invariant (a bug): the assertions state them.
pub fn detach_loops(dir: &Path, files: u16) -> Result<Vec<PathBuf>> {
    let mut done = Vec::new();
    for file in disk_names(files) {
        for dev in loop_devices_of(&dir.join(&file)) {
            if let Some(at) = mount_point_of(&dev) {
                return Err(VssdError::LoopInUse {
                    dir: dir.to_path_buf(),
                    file,
                    dev,
                    at,
                });
            }
            assert!(dev.starts_with("/dev"), "losetup -j lists devices");
            detach(&dev)?;
            done.push(dev);
        }
    }
    Ok(done)
}

/// How a stop went.
#[derive(Debug)]
pub enum Stopped {
    /// The daemon was gone (killed): only its mount was left, and is removed; its counters
    /// died with it.
    DaemonGone,
    /// Unmounted cleanly.
    Unmounted {
        /// The counters just before the unmount.
        last: Box<Snapshot>,
        /// Loop devices detached first.
        detached: Vec<PathBuf>,
        /// Whether the daemon exited within 10 s of the unmount.
        exited: bool,
    },
}

/// Stops the vssd at `dir`: detaches its loop devices, unmounts it, waits for its daemon; a
/// mount whose daemon was killed is removed (lazily).
///
/// # Errors
/// [`VssdError::NotMounted`], [`VssdError::LoopInUse`], or the unmount fails.
///
/// # Panics
/// On a broken invariant (a bug): the assertions state them.
pub fn stop(dir: &Path) -> Result<Stopped> {
    if !is_mounted(dir) {
        return Err(VssdError::NotMounted {
            dir: dir.to_path_buf(),
        });
    }
    let Ok(s) = read_stats(dir) else {
        unmount(dir, true)?;
        return Ok(Stopped::DaemonGone);
    };
    let detached = detach_loops(dir, s.files)?;
    let last = Box::new(read_stats(dir).unwrap_or(s));
    assert!(last.pid > 0, "a live daemon reported its pid");
    unmount(dir, false)?;
    let exited = wait_for_exit(last.pid, Duration::from_secs(10));
    Ok(Stopped::Unmounted {
        last,
        detached,
        exited,
    })
}

/// Attaches a loop device over the disk file `file` of the vssd at `dir`.
///
/// # Errors
/// [`VssdError::NotMounted`], [`VssdError::NotADisk`], or losetup fails.
///
/// # Panics
/// On a broken invariant (a bug): the assertions state them.
pub fn attach_disk(dir: &Path, file: &str) -> Result<PathBuf> {
    if !is_mounted(dir) {
        return Err(VssdError::NotMounted {
            dir: dir.to_path_buf(),
        });
    }
    let path = dir.join(file);
    assert!(
        path.starts_with(dir),
        "a disk of this vssd, nothing outside it"
    );
    if !path.is_file() {
        return Err(VssdError::NotADisk {
            file: file.to_owned(),
        });
    }
    attach(&path)
}
