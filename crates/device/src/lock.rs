//! The exclusive lock every [`crate::FileDevice`] takes at open: `flock(LOCK_EX | LOCK_NB)` on
//! the file or device node (held as long as the descriptor is open, released by the kernel
//! when the process dies), so a second open of the same target fails at once. When it fails,
//! the holder is looked up in `/proc/locks` (its pid) and `/proc/PID/comm` (its name).

use crate::error::{BusyReason, DeviceError, Holder, Result};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Takes the exclusive lock on `file` (opened from `path`), or says who holds it.
///
/// A lock whose holder cannot be found is being released: the kernel drops a file's last
/// reference asynchronously when it sat in an exiting process's io_uring (registered files),
/// so a run started right after another may see it for a few milliseconds. Such a lock is
/// retried for up to a second; a lock with a living holder fails at once.
pub(crate) fn lock_exclusive(file: &File, path: &Path) -> Result<()> {
    let t = std::time::Instant::now();
    loop {
        // SAFETY: flock takes an open descriptor (borrowed from `file`, alive for the call)
        // and integer flags; it touches no memory of ours.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(crate::safety::path_io(path)(e));
        }
        let holder = file
            .metadata()
            .ok()
            .and_then(|m| holder_of(m.dev(), m.ino()));
        let alive = holder.as_ref().is_some_and(|h| h.command.is_some());
        if alive || t.elapsed() > std::time::Duration::from_secs(1) {
            return Err(DeviceError::Busy {
                path: path.to_path_buf(),
                why: BusyReason::Locked,
                holder,
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The process holding a `flock` write lock on the inode (`dev`, `ino`), from `/proc/locks`.
pub(crate) fn holder_of(dev: u64, ino: u64) -> Option<Holder> {
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    let (major, minor) = crate::file::dev_major_minor(dev);
    let pid = parse_locks(&text, major, minor, ino)?;
    let command = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|c| c.trim_end().to_string());
    Some(Holder { pid, command })
}

/// The pid of the first granted FLOCK on (`major`:`minor`, `ino`) in `/proc/locks` text.
///
/// A line reads `1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF`: id, class, mode, access,
/// pid, device (major:minor in hex) and inode (decimal), range. Waiters are marked `->` and
/// skipped.
pub(crate) fn parse_locks(text: &str, major: u64, minor: u64, ino: u64) -> Option<u32> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(1) == Some(&"->") || f.get(1) != Some(&"FLOCK") {
            return None;
        }
        let pid: u32 = f.get(4)?.parse().ok()?;
        let mut id = f.get(5)?.split(':');
        let ma = u64::from_str_radix(id.next()?, 16).ok()?;
        let mi = u64::from_str_radix(id.next()?, 16).ok()?;
        let i: u64 = id.next()?.parse().ok()?;
        (ma == major && mi == minor && i == ino).then_some(pid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_lines() {
        let text = "1: POSIX  ADVISORY  WRITE 99 fd:01:77 0 EOF\n\
                    2: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF\n\
                    2: -> FLOCK  ADVISORY  WRITE 5151 fd:01:1234 0 EOF\n\
                    3: FLOCK  ADVISORY  WRITE 17 103:0a:1234 0 EOF\n";
        assert_eq!(parse_locks(text, 0xfd, 1, 1234), Some(4242));
        assert_eq!(parse_locks(text, 0x103, 0x0a, 1234), Some(17));
        assert_eq!(
            parse_locks(text, 0xfd, 1, 77),
            None,
            "POSIX locks are not ours"
        );
        assert_eq!(parse_locks(text, 0xfd, 2, 1234), None);
        assert_eq!(parse_locks("garbage\n\n1: FLOCK", 0, 0, 0), None);
    }

    #[test]
    fn second_lock_in_this_process_names_us() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, [0u8; 4096]).unwrap();
        let a = File::open(&p).unwrap();
        lock_exclusive(&a, &p).unwrap();
        let b = File::open(&p).unwrap();
        let e = lock_exclusive(&b, &p).unwrap_err();
        match &e {
            DeviceError::Busy {
                why: BusyReason::Locked,
                holder,
                ..
            } => {
                if let Some(h) = holder {
                    assert_eq!(h.pid, std::process::id(), "{e}");
                }
            }
            other => panic!("unexpected {other}"),
        }
        drop(a);
        lock_exclusive(&b, &p).unwrap();
    }
}
