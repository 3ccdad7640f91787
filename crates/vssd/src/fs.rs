//! The FUSE file system: a root directory holding the disk files and `.stats`. Every file is
//! opened with FOPEN_DIRECT_IO, so the kernel's page cache is bypassed and each request of a
//! program (or of a loop device) reaches the [`Disk`] as it was made.

use crate::{Disk, Result, VssdError};
use fuser::consts::FOPEN_DIRECT_IO;
use fuser::{
    FileAttr, FileType, Filesystem, KernelConfig, MountOption, ReplyAttr, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, Session,
    SessionUnmounter, TimeOrNow,
};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The virtual file serving the counters as JSON.
pub const STATS_FILE: &str = ".stats";

const ROOT: u64 = 1;
const STATS: u64 = 2;
/// Inode of disk file 0; disk i is FIRST_DISK + i.
const FIRST_DISK: u64 = 3;
/// Attributes never change behind the kernel's back except `.stats`'s contents, which are
/// served with direct I/O: a long cache time is safe.
const TTL: Duration = Duration::from_secs(3600);
/// Largest write the kernel may send in one request (its own limit is 1 MiB).
const MAX_WRITE: u32 = 1 << 20;

struct Fs {
    disk: Arc<Disk>,
    /// `.stats` contents per open handle, frozen at open so a reader sees one snapshot.
    open_stats: HashMap<u64, Vec<u8>>,
    next_fh: u64,
    uid: u32,
    gid: u32,
    started: SystemTime,
}

impl Fs {
    /// The name of disk file `i`.
    fn disk_name(&self, i: u16) -> String {
        if self.disk.files() == 1 {
            "disk".to_owned()
        } else {
            format!("disk{i}")
        }
    }

    /// The disk file index of inode `ino`.
    fn disk_of(&self, ino: u64) -> Option<u16> {
        let i = ino.checked_sub(FIRST_DISK)?;
        u16::try_from(i).ok().filter(|&i| i < self.disk.files())
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let (kind, perm, size, nlink) = match ino {
            ROOT => (FileType::Directory, 0o755, 0, 2),
            STATS => (FileType::RegularFile, 0o444, 0, 1),
            _ => (
                FileType::RegularFile,
                0o600,
                self.disk_of(ino).map(|_| self.disk.file_bytes())?,
                1,
            ),
        };
        assert!(
            ino != ROOT || kind == FileType::Directory,
            "the root is the directory"
        );
        assert_eq!(size % 4096, 0, "disk files are whole pages");
        Some(FileAttr {
            ino,
            size,
            blocks: size / 512,
            atime: self.started,
            mtime: self.started,
            ctime: self.started,
            crtime: self.started,
            kind,
            perm,
            nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }
}

/// The errno of a failed disk operation.
fn errno(e: &VssdError) -> i32 {
    match e {
        VssdError::Device(nowa_device::DeviceError::OutOfRange { .. }) => libc::ENOSPC,
        VssdError::Device(nowa_device::DeviceError::Flash(nowa_flash::FlashError::DeviceFull)) => {
            libc::ENOSPC
        }
        _ => libc::EIO,
    }
}

/// A FUSE offset as a byte offset (the kernel never sends a negative one).
fn offset(off: i64) -> Option<u64> {
    u64::try_from(off).ok()
}

impl Filesystem for Fs {
    fn init(
        &mut self,
        _req: &Request<'_>,
        config: &mut KernelConfig,
    ) -> std::result::Result<(), libc::c_int> {
        // The kernel caps max_write at its own limit; a smaller grant is fine.
        let _ = config.set_max_write(MAX_WRITE);
        Ok(())
    }

    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        let ino = if parent != ROOT {
            None
        } else if name == STATS_FILE {
            Some(STATS)
        } else {
            (0..self.disk.files())
                .find(|&i| name == self.disk_name(i).as_str())
                .map(|i| FIRST_DISK + u64::from(i))
        };
        match ino.and_then(|i| self.attr(i)) {
            Some(a) => reply.entry(&TTL, &a, 0),
            None => reply.error(libc::ENOENT),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(libc::ENOENT),
        }
    }

    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        let Some(a) = self.attr(ino) else {
            return reply.error(libc::ENOENT);
        };
        // A disk has a fixed size. Size 0 is what open(O_TRUNC) asks (dd without
        // conv=notrunc): ignored, as a block device node ignores O_TRUNC. Any other size
        // is refused; times and modes are accepted and ignored, as on a device node.
        match size {
            Some(s) if s != a.size && s != 0 => reply.error(libc::EPERM),
            _ => reply.attr(&TTL, &a),
        }
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, _flags: i32, reply: ReplyOpen) {
        if ino == STATS {
            let mut json = serde_json::to_vec_pretty(&self.disk.snapshot()).unwrap_or_default();
            json.push(b'\n');
            self.next_fh += 1;
            self.open_stats.insert(self.next_fh, json);
            return reply.opened(self.next_fh, FOPEN_DIRECT_IO);
        }
        match self.disk_of(ino) {
            Some(_) => reply.opened(0, FOPEN_DIRECT_IO),
            None => reply.error(libc::EISDIR),
        }
    }

    fn release(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        _flags: i32,
        _lock_owner: Option<u64>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.open_stats.remove(&fh);
        reply.ok();
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        fh: u64,
        off: i64,
        size: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyData,
    ) {
        let Some(off) = offset(off) else {
            return reply.error(libc::EINVAL);
        };
        if ino == STATS {
            let json = self.open_stats.get(&fh).map_or(&[][..], Vec::as_slice);
            let from = usize::try_from(off).unwrap_or(usize::MAX).min(json.len());
            let to = from.saturating_add(size as usize).min(json.len());
            return reply.data(&json[from..to]);
        }
        let Some(file) = self.disk_of(ino) else {
            return reply.error(libc::EISDIR);
        };
        let n = u64::from(size).min(self.disk.file_bytes().saturating_sub(off));
        let mut buf = vec![0u8; usize::try_from(n).unwrap_or(0)];
        match self.disk.read(file, off, &mut buf) {
            Ok(()) => reply.data(&buf),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn write(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        off: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyWrite,
    ) {
        let (Some(file), Some(off)) = (self.disk_of(ino), offset(off)) else {
            return reply.error(libc::EBADF);
        };
        match self.disk.write(file, off, data) {
            Ok(()) => reply.written(u32::try_from(data.len()).unwrap_or(u32::MAX)),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn flush(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _lo: u64, reply: ReplyEmpty) {
        // close(2), not fsync: no device flush.
        reply.ok();
    }

    fn fsync(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _ds: bool, reply: ReplyEmpty) {
        if self.disk_of(ino).is_none() {
            return reply.ok();
        }
        match self.disk.flush() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn fallocate(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        off: i64,
        len: i64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let (Some(file), Some(off), Some(len)) = (self.disk_of(ino), offset(off), offset(len))
        else {
            return reply.error(libc::EINVAL);
        };
        // PUNCH_HOLE is TRIM (a loop device's discard); ZERO_RANGE (its write-zeroes) is
        // deallocated the same way (a trimmed range reads back as zeroes here) but counted
        // as written. Plain allocation inside the fixed size has nothing to do.
        let r = if mode & libc::FALLOC_FL_ZERO_RANGE != 0 {
            self.disk.zero(file, off, len)
        } else if mode & libc::FALLOC_FL_PUNCH_HOLE != 0 {
            self.disk.punch(file, off, len)
        } else if mode & !libc::FALLOC_FL_KEEP_SIZE == 0 {
            match off.checked_add(len) {
                Some(e) if e <= self.disk.file_bytes() => Ok(()),
                _ => return reply.error(libc::ENOSPC),
            }
        } else {
            return reply.error(libc::EOPNOTSUPP);
        };
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn readdir(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        off: i64,
        mut reply: ReplyDirectory,
    ) {
        if ino != ROOT {
            return reply.error(libc::ENOTDIR);
        }
        let mut entries = vec![
            (ROOT, FileType::Directory, ".".to_owned()),
            (ROOT, FileType::Directory, "..".to_owned()),
            (STATS, FileType::RegularFile, STATS_FILE.to_owned()),
        ];
        for i in 0..self.disk.files() {
            entries.push((
                FIRST_DISK + u64::from(i),
                FileType::RegularFile,
                self.disk_name(i),
            ));
        }
        let skip = usize::try_from(off).unwrap_or(0);
        for (n, (ino, kind, name)) in entries.into_iter().enumerate().skip(skip) {
            let next = i64::try_from(n + 1).unwrap_or(i64::MAX);
            if reply.add(ino, next, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        let blocks = self.disk.capacity() / 4096;
        reply.statfs(
            blocks,
            0,
            0,
            u64::from(self.disk.files()) + 1,
            0,
            4096,
            255,
            4096,
        );
    }
}

/// A mounted virtual SSD; [`Mounted::run`] serves it until it is unmounted.
pub struct Mounted {
    session: Session<Fs>,
}

impl Mounted {
    /// A handle that unmounts from another thread (Ctrl-C).
    pub fn unmounter(&mut self) -> SessionUnmounter {
        self.session.unmount_callable()
    }

    /// Serves requests until the file system is unmounted (here, by `nowa vssd stop`, or by
    /// `umount`).
    ///
    /// # Errors
    /// Reading from /dev/fuse failed.
    pub fn run(&mut self) -> std::io::Result<()> {
        self.session.run()
    }
}

/// Mounts `disk` at `dir` (an existing, empty directory).
///
/// # Errors
/// The mount fails (no /dev/fuse, no permission, no fusermount3 for a non-root user).
pub fn mount(disk: Arc<Disk>, dir: &Path) -> Result<Mounted> {
    // SAFETY: getuid/getgid/geteuid take no arguments and cannot fail.
    let (uid, gid, euid) = unsafe { (libc::getuid(), libc::getgid(), libc::geteuid()) };
    let mut opts = vec![
        MountOption::FSName("nowa-vssd".to_owned()),
        MountOption::Subtype("nowa-vssd".to_owned()),
    ];
    // Root's mounts let other users in (a loop device opened by root reaches any mount
    // anyway); a user's mount needs user_allow_other in /etc/fuse.conf for that.
    if euid == 0 {
        opts.push(MountOption::AllowOther);
    }
    let fs = Fs {
        disk,
        open_stats: HashMap::new(),
        next_fh: 0,
        uid,
        gid,
        started: SystemTime::now(),
    };
    let session = Session::new(fs, dir, &opts).map_err(|source| VssdError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    Ok(Mounted { session })
}
