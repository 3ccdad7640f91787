//! [`FileDevice`]: a regular file or a block device, with O_DIRECT when the file system allows
//! it and batched I/O through io_uring (pread/pwrite fallback).
//!
//! Why O_DIRECT: the benchmark measures what reaches the device; the page cache would absorb
//! rewrites and reorder writeback. Why io_uring for batches: one syscall keeps `queue_depth`
//! I/Os in flight, which is how an SSD reaches its internal parallelism.

use crate::align::{is_aligned, AlignedBuf};
use crate::error::BusyReason;
use crate::safety::path_io;
use crate::{
    check_io, BlockDevice, DeviceCounters, DeviceError, Geometry, Result, BLOCK_SIZE,
    BLOCK_SIZE_U32, BLOCK_SIZE_U64,
};
use io_uring::{opcode, types, IoUring};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// `_IOR(0x12, 114, size_t)`: block device size in bytes.
const BLKGETSIZE64: u64 = 0x8008_1272;
/// `_IO(0x12, 119)`: discard a byte range `[start, len]` of a block device.
const BLKDISCARD: u64 = 0x1277;
/// Largest single read/write we hand to the kernel; longer buffers are split (resubmitted).
const MAX_OP: usize = 1 << 30;

/// How batches are submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub enum IoEngine {
    /// io_uring with up to `queue_depth` I/Os in flight.
    Uring,
    /// One pread/pwrite at a time.
    Sync,
}

impl std::fmt::Display for IoEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IoEngine::Uring => "io_uring",
            IoEngine::Sync => "psync",
        })
    }
}

/// What kind of target a [`FileDevice`] opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub enum TargetKind {
    /// A regular file on a file system.
    RegularFile,
    /// A block device node.
    BlockDevice,
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TargetKind::RegularFile => "regular file",
            TargetKind::BlockDevice => "block device",
        })
    }
}

/// What [`BlockDevice::trim`] does on a [`FileDevice`]. See docs/design.md, "Trim on files and
/// block devices", for the measurements behind the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub enum TrimPolicy {
    /// Per target: [`TrimPolicy::Deallocate`] on a block device, [`TrimPolicy::Ignore`] on a
    /// regular file (a trimmed file range is rewritten soon; deallocating it makes every
    /// rewrite allocate blocks again, and the file system journals each allocation).
    Auto,
    /// Give the space back: `BLKDISCARD` on a block device, `FALLOC_FL_PUNCH_HOLE` on a file.
    Deallocate,
    /// `FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE`: the range reads as zeroes, a file keeps
    /// its extents (marked unwritten).
    ZeroRange,
    /// Nothing reaches the target (the trim is only counted); the range keeps its old bytes,
    /// which the [`BlockDevice::trim`] contract allows.
    Ignore,
}

/// Options for [`FileDevice::open`] / [`FileDevice::create`].
#[derive(Debug, Clone)]
pub struct FileOptions {
    /// Requested engine; `Uring` falls back to `Sync` if the ring cannot be set up.
    pub engine: IoEngine,
    /// Maximum I/Os in flight per batch (io_uring); 1..=4096.
    pub queue_depth: u32,
    /// Try O_DIRECT (falls back to buffered I/O where the file system refuses it).
    pub direct: bool,
    /// Take the exclusive lock (`flock`) and, on block devices, open with `O_EXCL`, which the
    /// kernel refuses (EBUSY) while the device is mounted or held by another driver. On by
    /// default; a second open of a locked target fails with [`DeviceError::Busy`].
    pub exclusive: bool,
    /// What a trim does (default [`TrimPolicy::Auto`]).
    pub trim: TrimPolicy,
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions {
            engine: IoEngine::Uring,
            queue_depth: 32,
            direct: true,
            exclusive: true,
            trim: TrimPolicy::Auto,
        }
    }
}

/// A regular file or block device as a [`BlockDevice`].
///
/// Single `read_at`/`write_at` calls use pread/pwrite (a ring buys nothing for one I/O);
/// `read_batch`/`write_batch` go through io_uring when available. Buffers whose address is
/// not aligned for O_DIRECT are copied through an aligned bounce buffer. Queues with their own
/// registered buffers, for callers that keep many I/Os in flight (benchmarks), come from
/// [`FileDevice::queue`].
pub struct FileDevice {
    file: File,
    path: PathBuf,
    kind: TargetKind,
    geo: Geometry,
    direct: bool,
    direct_note: Option<String>,
    engine: IoEngine,
    engine_note: Option<String>,
    /// One ring shared by all threads: batches from several threads take turns.
    ring: Option<Mutex<IoUring>>,
    queue_depth: u32,
    /// Memory alignment O_DIRECT needs (1 when buffered).
    mem_align: usize,
    trim: TrimPolicy,
    trim_supported: AtomicBool,
    /// Highest number of ring I/Os seen in flight at once (tests check the queue-depth bound).
    max_inflight: AtomicU64,
    pub(crate) stats: Stats,
}

/// Byte and operation counters of a [`FileDevice`] (shared with its queues).
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) host_written: AtomicU64,
    pub(crate) host_read: AtomicU64,
    pub(crate) trimmed: AtomicU64,
    pub(crate) flushes: AtomicU64,
}

impl std::fmt::Debug for FileDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileDevice")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("geo", &self.geo)
            .field("direct", &self.direct)
            .field("engine", &self.engine)
            .field("queue_depth", &self.queue_depth)
            .field("trim", &self.trim)
            .finish_non_exhaustive()
    }
}

/// Split a Linux `dev_t` into (major, minor) (glibc's encoding).
#[must_use]
pub fn dev_major_minor(dev: u64) -> (u64, u64) {
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0xff);
    (major, minor)
}

/// The sysfs directory of a block device or partition.
#[must_use]
pub fn sysfs_dir(dev: u64) -> PathBuf {
    let (ma, mi) = dev_major_minor(dev);
    PathBuf::from(format!("/sys/dev/block/{ma}:{mi}"))
}

/// `queue/logical_block_size` of a whole disk or (via its parent) of a partition.
fn sysfs_logical_block_size(dev: u64) -> Option<u32> {
    let dir = sysfs_dir(dev);
    [
        dir.join("queue/logical_block_size"),
        dir.join("../queue/logical_block_size"),
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok()?.trim().parse().ok())
}

/// Build the ring, or fall back to `Sync` with the reason.
fn setup_engine(
    engine: IoEngine,
    entries: u32,
) -> (IoEngine, Option<Mutex<IoUring>>, Option<String>) {
    match engine {
        IoEngine::Sync => (IoEngine::Sync, None, None),
        IoEngine::Uring => match IoUring::new(entries) {
            Ok(r) => (IoEngine::Uring, Some(Mutex::new(r)), None),
            Err(e) => (
                IoEngine::Sync,
                None,
                Some(format!(
                    "io_uring setup with {entries} entries failed ({e}); using pread/pwrite"
                )),
            ),
        },
    }
}

/// True if `path` would be a new file directly in `/dev` (a mistyped device name).
pub(crate) fn in_dev(path: &Path) -> bool {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::canonicalize(&parent).is_ok_and(|p| p == Path::new("/dev"))
        || parent == Path::new("/dev")
}

/// The descriptor [`FileDevice::open`] settled on.
struct Opened {
    file: File,
    direct: bool,
    direct_note: Option<String>,
}

/// Open `path` read-write with `flags`, O_DIRECT if asked and accepted.
fn open_fd(path: &Path, flags: i32, want_direct: bool) -> Result<Opened> {
    let open = |direct: bool| {
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags | if direct { libc::O_DIRECT } else { 0 })
            .open(path)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::EBUSY) {
                    DeviceError::Busy {
                        path: path.to_path_buf(),
                        why: BusyReason::Exclusive,
                        holder: std::fs::metadata(path)
                            .ok()
                            .and_then(|m| crate::lock::holder_of(m.dev(), m.ino())),
                    }
                } else {
                    path_io(path)(e)
                }
            })
    };
    if !want_direct {
        return Ok(Opened {
            file: open(false)?,
            direct: false,
            direct_note: Some("O_DIRECT not requested".to_string()),
        });
    }
    match open(true) {
        Ok(file) => Ok(Opened {
            file,
            direct: true,
            direct_note: None,
        }),
        Err(DeviceError::PathIo { source: e, .. }) if e.raw_os_error() == Some(libc::EINVAL) => {
            Ok(Opened {
                file: open(false)?,
                direct: false,
                direct_note: Some(format!(
                    "O_DIRECT refused at open ({e}); using buffered I/O"
                )),
            })
        }
        Err(e) => Err(e),
    }
}

/// Capacity in bytes, rounded down to whole blocks.
fn capacity_of(file: &File, kind: TargetKind, meta: &std::fs::Metadata) -> io::Result<u64> {
    let bytes = match kind {
        TargetKind::RegularFile => meta.len(),
        TargetKind::BlockDevice => {
            let mut size = 0u64;
            // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points to a
            // live, properly aligned u64 on our stack; the fd is open.
            let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &raw mut size) };
            if r != 0 {
                return Err(io::Error::last_os_error());
            }
            size
        }
    };
    Ok(bytes / BLOCK_SIZE_U64 * BLOCK_SIZE_U64)
}

/// The logical block size direct I/O must be aligned to.
fn logical_block_size(file: &File, kind: TargetKind, meta: &std::fs::Metadata) -> u32 {
    match kind {
        TargetKind::BlockDevice => sysfs_logical_block_size(meta.rdev()).or_else(|| {
            let mut s: libc::c_int = 0;
            // SAFETY: BLKSSZGET writes one int through the pointer to our local `s`.
            let r = unsafe { libc::ioctl(file.as_raw_fd(), libc::BLKSSZGET as _, &raw mut s) };
            if r == 0 {
                u32::try_from(s).ok().filter(|&s| s > 0)
            } else {
                None
            }
        }),
        // O_DIRECT on a file needs the alignment of the disk under the file system.
        TargetKind::RegularFile => sysfs_logical_block_size(meta.dev()),
    }
    .unwrap_or(BLOCK_SIZE_U32)
}

/// The trim a policy means on this kind of target.
fn resolve_trim(policy: TrimPolicy, kind: TargetKind) -> TrimPolicy {
    match (policy, kind) {
        (TrimPolicy::Auto, TargetKind::BlockDevice) => TrimPolicy::Deallocate,
        (TrimPolicy::Auto, TargetKind::RegularFile) => TrimPolicy::Ignore,
        (p, _) => p,
    }
}

/// Some file systems accept O_DIRECT at open and fail the first I/O: read one block, and on
/// EINVAL turn O_DIRECT off on the same descriptor (which keeps its lock).
fn probe_direct(mut fd: Opened, path: &Path) -> Result<Opened> {
    let mut probe = AlignedBuf::zeroed(BLOCK_SIZE, BLOCK_SIZE);
    let Err(e) = fd.file.read_exact_at(&mut probe, 0) else {
        return Ok(fd);
    };
    if e.raw_os_error() != Some(libc::EINVAL) {
        return Err(e.into());
    }
    let raw = fd.file.as_raw_fd();
    // SAFETY: fcntl on an open descriptor with integer arguments; no memory is passed.
    let flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(raw, libc::F_SETFL, flags & !libc::O_DIRECT) } < 0 {
        let e2 = io::Error::last_os_error();
        return Err(io::Error::new(
            e2.kind(),
            format!(
                "{}: O_DIRECT failed ({e}) and cannot be turned off ({e2})",
                path.display()
            ),
        )
        .into());
    }
    fd.direct = false;
    fd.direct_note = Some(format!("O_DIRECT read failed ({e}); using buffered I/O"));
    Ok(fd)
}

impl FileDevice {
    /// Create a new regular file of exactly `size` bytes and open it. `size` must be a positive
    /// multiple of 4 KiB. The file is allocated and written with zeros (see `preallocate`). An existing
    /// path is never truncated or resized: it is an error (open it with [`FileDevice::open`]).
    ///
    /// # Errors
    /// [`DeviceError::BadSize`]; [`DeviceError::CreateInDev`] for a path directly in `/dev`
    /// (a mistyped device name must not become a file); [`DeviceError::Io`] if the path
    /// exists or cannot be created; any error of [`FileDevice::open`].
    pub fn create(path: impl AsRef<Path>, size: u64, opts: &FileOptions) -> Result<Self> {
        let path = path.as_ref();
        if size == 0 || size % BLOCK_SIZE_U64 != 0 {
            return Err(DeviceError::BadSize {
                size,
                block: BLOCK_SIZE,
            });
        }
        // An existing path first: /dev/null exists (a character device), it is not a
        // mistyped name of a missing device.
        if let Ok(m) = std::fs::symlink_metadata(path) {
            return Err(DeviceError::Exists {
                path: path.to_path_buf(),
                what: crate::safety::describe(m.file_type()),
            });
        }
        if in_dev(path) {
            return Err(DeviceError::CreateInDev {
                path: path.to_path_buf(),
            });
        }
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(path_io(path))?;
        preallocate(&f, size).map_err(path_io(path))?;
        drop(f);
        Self::open(path, opts)
    }

    /// Open an existing regular file (capacity = its length rounded down to 4 KiB) or a block
    /// device (capacity from BLKGETSIZE64, logical block size from sysfs), and take the
    /// exclusive lock unless `opts.exclusive` is off.
    ///
    /// # Errors
    /// [`DeviceError::NotFileOrBlockDevice`], [`DeviceError::BadQueueDepth`],
    /// [`DeviceError::TooSmall`], [`DeviceError::LogicalBlockSize`], [`DeviceError::Busy`]
    /// (locked by another open, or a mounted / held block device), [`DeviceError::Io`].
    ///
    /// # Panics
    /// Only on a broken internal invariant (capacity or block size checked above).
    pub fn open(path: impl AsRef<Path>, opts: &FileOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let meta = std::fs::metadata(&path).map_err(path_io(&path))?;
        let kind = crate::safety::target_kind(&path, &meta)?;
        if !(1..=4096).contains(&opts.queue_depth) {
            return Err(DeviceError::BadQueueDepth {
                got: opts.queue_depth,
            });
        }
        let excl = kind == TargetKind::BlockDevice && opts.exclusive;
        let mut fd = open_fd(&path, if excl { libc::O_EXCL } else { 0 }, opts.direct)?;
        if opts.exclusive {
            crate::lock::lock_exclusive(&fd.file, &path)?;
        }
        let capacity = capacity_of(&fd.file, kind, &meta).map_err(path_io(&path))?;
        if capacity == 0 {
            return Err(DeviceError::TooSmall {
                path,
                block: BLOCK_SIZE,
            });
        }
        let lbs = logical_block_size(&fd.file, kind, &meta);
        if !lbs.is_power_of_two() || lbs > BLOCK_SIZE_U32 {
            return Err(DeviceError::LogicalBlockSize {
                path,
                lbs,
                block: BLOCK_SIZE,
            });
        }
        if fd.direct && kind == TargetKind::RegularFile {
            fd = probe_direct(fd, &path)?;
        }
        let (engine, ring, engine_note) =
            setup_engine(opts.engine, opts.queue_depth.next_power_of_two());
        assert!(
            capacity % BLOCK_SIZE_U64 == 0 && capacity > 0,
            "whole blocks"
        );
        assert!(
            lbs.is_power_of_two() && lbs <= BLOCK_SIZE_U32,
            "4 KiB I/O meets the lbs"
        );
        assert_eq!(
            engine == IoEngine::Uring,
            ring.is_some(),
            "a ring exactly for io_uring"
        );
        Ok(FileDevice {
            file: fd.file,
            path,
            kind,
            geo: Geometry {
                logical_block_size: lbs,
                ..Geometry::conventional(capacity)
            },
            mem_align: if fd.direct { lbs.max(512) as usize } else { 1 },
            direct: fd.direct,
            direct_note: fd.direct_note,
            engine,
            engine_note,
            ring,
            queue_depth: opts.queue_depth,
            trim: resolve_trim(opts.trim, kind),
            trim_supported: AtomicBool::new(true),
            max_inflight: AtomicU64::new(0),
            stats: Stats::default(),
        })
    }

    /// The path this device was opened from.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Regular file or block device.
    #[must_use]
    pub fn kind(&self) -> TargetKind {
        self.kind
    }
    /// True if I/O bypasses the page cache (O_DIRECT).
    #[must_use]
    pub fn is_direct(&self) -> bool {
        self.direct
    }
    /// Why O_DIRECT is not in use, if it is not.
    #[must_use]
    pub fn direct_fallback_reason(&self) -> Option<&str> {
        self.direct_note.as_deref()
    }
    /// The engine in use (may be `Sync` although `Uring` was requested).
    #[must_use]
    pub fn engine(&self) -> IoEngine {
        self.engine
    }
    /// Why io_uring is not in use although it was requested.
    #[must_use]
    pub fn engine_fallback_reason(&self) -> Option<&str> {
        self.engine_note.as_deref()
    }
    /// Maximum I/Os in flight of a batch.
    #[must_use]
    pub fn queue_depth(&self) -> u32 {
        self.queue_depth
    }
    /// What a trim does on this target (never [`TrimPolicy::Auto`]: resolved at open).
    #[must_use]
    pub fn trim_policy(&self) -> TrimPolicy {
        self.trim
    }
    /// False once a trim hit EOPNOTSUPP (the trim was then a no-op, which is allowed).
    #[must_use]
    pub fn trim_supported(&self) -> bool {
        self.trim_supported.load(Relaxed)
    }

    /// Most io_uring I/Os this device ever had in flight at once (<= queue depth).
    #[must_use]
    pub fn max_in_flight_observed(&self) -> u64 {
        self.max_inflight.load(Relaxed)
    }

    /// The open descriptor (for queues and device-specific ioctls such as NVMe log pages).
    #[must_use]
    pub fn file(&self) -> &File {
        &self.file
    }

    fn needs_bounce(&self, p: *const u8) -> bool {
        self.direct && !is_aligned(p, self.mem_align)
    }

    fn pread(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        debug_assert!(buf.len() % BLOCK_SIZE == 0 && offset % BLOCK_SIZE_U64 == 0);
        if self.needs_bounce(buf.as_ptr()) {
            let mut b = AlignedBuf::zeroed(buf.len(), self.mem_align);
            self.file.read_exact_at(&mut b, offset)?;
            buf.copy_from_slice(&b);
            Ok(())
        } else {
            self.file.read_exact_at(buf, offset)
        }
    }

    fn pwrite(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        debug_assert!(buf.len() % BLOCK_SIZE == 0 && offset % BLOCK_SIZE_U64 == 0);
        if self.needs_bounce(buf.as_ptr()) {
            self.file
                .write_all_at(&AlignedBuf::from_slice(buf, self.mem_align), offset)
        } else {
            self.file.write_all_at(buf, offset)
        }
    }

    /// Run `ops` through the ring with at most `queue_depth` in flight. Short transfers are
    /// resubmitted for the remainder. Never returns while the kernel may still touch a buffer.
    fn run_uring(&self, ring: &mut IoUring, ops: &[Op]) -> io::Result<()> {
        let mut st = Batch {
            fd: types::Fd(self.file.as_raw_fd()),
            qd: self.queue_depth as usize,
            done: vec![0usize; ops.len()],
            queue: (0..ops.len()).filter(|&i| ops[i].len > 0).collect(),
            inflight: 0,
            first_err: None,
        };
        let mut reaped: Vec<(u64, i32)> = Vec::with_capacity(st.qd);
        loop {
            st.push_ready(ring, ops);
            self.max_inflight.fetch_max(st.inflight as u64, Relaxed);
            if st.inflight == 0 {
                break;
            }
            match ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                    ) => {}
                Err(e) => {
                    // Entries may still reference the caller's buffers and we cannot know
                    // whether the kernel holds them: returning would risk a use-after-free.
                    eprintln!("nowa-device: fatal io_uring_enter error with I/O in flight: {e}");
                    std::process::abort();
                }
            }
            reaped.clear();
            reaped.extend(ring.completion().map(|c| (c.user_data(), c.result())));
            for &(ud, res) in &reaped {
                st.complete(ops, ud, res);
            }
        }
        if st.first_err.is_none() {
            // Every op was transferred whole (short transfers were resubmitted).
            assert!(st.queue.is_empty(), "ops left after a clean batch");
            assert!(st.done.iter().zip(ops).all(|(&d, op)| d == op.len));
        }
        st.first_err.map_or(Ok(()), Err)
    }

    fn trim_range(&self, offset: u64, len: u64) -> io::Result<()> {
        assert!(offset + len <= self.geo.capacity, "checked by check_io");
        assert_ne!(self.trim, TrimPolicy::Auto, "resolved at open");
        let fd = self.file.as_raw_fd();
        let (Ok(off), Ok(n)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        };
        let r = match (self.trim, self.kind) {
            (TrimPolicy::Ignore | TrimPolicy::Auto, _) => 0,
            (TrimPolicy::Deallocate, TargetKind::BlockDevice) => {
                let range = [offset, len];
                // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer, which
                // points to `range` on our stack.
                unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
            }
            (TrimPolicy::Deallocate, TargetKind::RegularFile) => {
                let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
                // SAFETY: plain syscall on an open fd with integer arguments.
                unsafe { libc::fallocate(fd, mode, off, n) }
            }
            (TrimPolicy::ZeroRange, _) => {
                let mode = libc::FALLOC_FL_ZERO_RANGE | libc::FALLOC_FL_KEEP_SIZE;
                // SAFETY: plain syscall on an open fd with integer arguments.
                unsafe { libc::fallocate(fd, mode, off, n) }
            }
        };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// State of one [`FileDevice::run_uring`] call.
struct Batch {
    fd: types::Fd,
    qd: usize,
    /// Bytes done per op.
    done: Vec<usize>,
    /// Ops (indexes) with bytes left to submit.
    queue: VecDeque<usize>,
    inflight: usize,
    first_err: Option<io::Error>,
}

impl Batch {
    /// Submit queued ops while fewer than `qd` are in flight (none after an error).
    fn push_ready(&mut self, ring: &mut IoUring, ops: &[Op]) {
        while self.first_err.is_none() && self.inflight < self.qd {
            let Some(i) = self.queue.pop_front() else {
                break;
            };
            let op = &ops[i];
            let d = self.done[i];
            debug_assert!(d < op.len, "a queued op has bytes left");
            let len = u32::try_from((op.len - d).min(MAX_OP)).expect("MAX_OP fits in u32");
            // `d < op.len`, so the pointer stays inside the caller's buffer.
            let ptr = op.ptr.wrapping_add(d);
            let at = op.offset + d as u64;
            let entry = if op.write {
                opcode::Write::new(self.fd, ptr, len).offset(at).build()
            } else {
                opcode::Read::new(self.fd, ptr, len).offset(at).build()
            }
            .user_data(i as u64);
            // SAFETY: the entry points into a buffer the caller borrows for the whole call
            // (`ops` outlives the run_uring loop), and run_uring does not return until every
            // submitted entry has completed (inflight == 0), so the kernel never touches freed
            // memory. The SQ cannot be full: inflight < qd <= SQ entries.
            unsafe { ring.submission().push(&entry) }
                .expect("submission queue full despite qd bound");
            self.inflight += 1;
        }
    }

    /// Account one completion: done, a short transfer to resubmit, or an error.
    fn complete(&mut self, ops: &[Op], user_data: u64, res: i32) {
        let i = usize::try_from(user_data).expect("user_data is an op index");
        assert!(
            i < ops.len() && self.inflight > 0,
            "completion of an unknown op"
        );
        self.inflight -= 1;
        if res == -libc::EINTR || res == -libc::EAGAIN {
            self.queue.push_front(i);
        } else if res < 0 {
            self.first_err
                .get_or_insert(io::Error::from_raw_os_error(-res));
        } else if res == 0 {
            let kind = if ops[i].write {
                io::ErrorKind::WriteZero
            } else {
                io::ErrorKind::UnexpectedEof
            };
            self.first_err.get_or_insert(io::Error::new(
                kind,
                format!("zero-length transfer at offset {}", ops[i].offset),
            ));
        } else {
            self.done[i] += res.unsigned_abs() as usize;
            assert!(self.done[i] <= ops[i].len, "kernel transferred past the op");
            if self.done[i] < ops[i].len {
                self.queue.push_front(i);
            }
        }
    }
}

/// One I/O for the ring. `ptr` is `*mut` for both directions; writes only read through it.
struct Op {
    offset: u64,
    ptr: *mut u8,
    len: usize,
    write: bool,
}

/// Total bytes of a list of buffers.
fn total_len<'a>(bufs: impl Iterator<Item = &'a [u8]>) -> u64 {
    bufs.map(|b| b.len() as u64).sum()
}

impl BlockDevice for FileDevice {
    fn geometry(&self) -> &Geometry {
        &self.geo
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        self.pread(offset, buf)?;
        self.stats.host_read.fetch_add(buf.len() as u64, Relaxed);
        Ok(())
    }

    fn write_at_hinted(&self, offset: u64, buf: &[u8], _placement: Option<u16>) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        self.pwrite(offset, buf)?;
        self.stats.host_written.fetch_add(buf.len() as u64, Relaxed);
        Ok(())
    }

    fn write_batch(&self, writes: &[(u64, &[u8])], _placement: Option<u16>) -> Result<()> {
        for (off, buf) in writes {
            check_io(&self.geo, *off, buf.len())?;
        }
        let total = total_len(writes.iter().map(|(_, b)| *b));
        match &self.ring {
            Some(ring) if writes.len() > 1 => {
                let bounces: Vec<Option<AlignedBuf>> = writes
                    .iter()
                    .map(|(_, b)| {
                        self.needs_bounce(b.as_ptr())
                            .then(|| AlignedBuf::from_slice(b, self.mem_align))
                    })
                    .collect();
                let ops: Vec<Op> = writes
                    .iter()
                    .zip(&bounces)
                    .map(|((off, b), bb)| Op {
                        offset: *off,
                        ptr: bb.as_ref().map_or(b.as_ptr(), |x| x.as_ptr()).cast_mut(),
                        len: b.len(),
                        write: true,
                    })
                    .collect();
                self.run_uring(&mut ring.lock(), &ops)?;
            }
            _ => {
                for (off, buf) in writes {
                    self.pwrite(*off, buf)?;
                }
            }
        }
        self.stats.host_written.fetch_add(total, Relaxed);
        Ok(())
    }

    fn read_batch(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        for (off, buf) in reads.iter() {
            check_io(&self.geo, *off, buf.len())?;
        }
        let total = total_len(reads.iter().map(|(_, b)| &**b));
        match &self.ring {
            Some(ring) if reads.len() > 1 => {
                let mut bounces: Vec<Option<AlignedBuf>> = reads
                    .iter()
                    .map(|(_, b)| {
                        self.needs_bounce(b.as_ptr())
                            .then(|| AlignedBuf::zeroed(b.len(), self.mem_align))
                    })
                    .collect();
                let ops: Vec<Op> = reads
                    .iter_mut()
                    .zip(bounces.iter_mut())
                    .map(|((off, b), bb)| Op {
                        offset: *off,
                        len: b.len(),
                        ptr: bb.as_mut().map_or(b.as_mut_ptr(), |x| x.as_mut_ptr()),
                        write: false,
                    })
                    .collect();
                self.run_uring(&mut ring.lock(), &ops)?;
                drop(ops);
                for ((_, b), bb) in reads.iter_mut().zip(&bounces) {
                    if let Some(x) = bb {
                        b.copy_from_slice(x);
                    }
                }
            }
            _ => {
                for (off, buf) in reads.iter_mut() {
                    self.pread(*off, buf)?;
                }
            }
        }
        self.stats.host_read.fetch_add(total, Relaxed);
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        self.file.sync_data()?;
        self.stats.flushes.fetch_add(1, Relaxed);
        Ok(())
    }

    fn trim(&self, offset: u64, len: u64) -> Result<()> {
        check_io(&self.geo, offset, crate::usize_of(len))?;
        if len == 0 {
            return Ok(());
        }
        if let Err(e) = self.trim_range(offset, len) {
            if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
                // Trim is advisory: not deallocating is a valid outcome.
                self.trim_supported.store(false, Relaxed);
            } else {
                return Err(e.into());
            }
        }
        self.stats.trimmed.fetch_add(len, Relaxed);
        Ok(())
    }

    fn counters(&self) -> DeviceCounters {
        DeviceCounters {
            host_bytes_written: self.stats.host_written.load(Relaxed),
            media_bytes_written: None,
            host_bytes_read: self.stats.host_read.load(Relaxed),
            trimmed_bytes: self.stats.trimmed.load(Relaxed),
            flushes: self.stats.flushes.load(Relaxed),
        }
    }

    fn buffer_alignment(&self) -> usize {
        self.mem_align
    }
}

/// Give a new file its `size` bytes, allocated and written with zeros, so a write into the
/// file allocates nothing and changes no extent: the file system's journal has no metadata
/// to commit at an fdatasync. A sparse file made every append an allocation (issue 31: jbd2
/// was 20% of the block writes on ext4), and `fallocate` alone is not enough: ext4 and xfs
/// allocate *unwritten* extents, and the first write of each block converts one, which the
/// next fdatasync commits through the journal (docs/compare.md: the out-of-place engine met
/// a journal commit per WAL block). So, as PostgreSQL does for each WAL segment
/// (`wal_init_zero`) and InnoDB for its redo log: fallocate first (contiguous space, ENOSPC
/// now rather than mid-run; a file system without it falls back to `set_len`), then write
/// zeros over all of it, synced. The cost is one sequential write of the file at creation.
fn preallocate(f: &std::fs::File, size: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let len = libc::off_t::try_from(size)
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: `f` is an open file descriptor owned by the caller for the whole call; mode 0
    // only allocates (and extends the size), it touches no memory of ours.
    let rc = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, len) };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EOPNOTSUPP) {
            return Err(err);
        }
        f.set_len(size)?;
    }
    zero_fill(f, size)
}

/// Write zeros over `0..size` of `f` and sync them. Synced and dropped from the page cache
/// every 64 MiB, so a large file neither piles up dirty pages (a memory cgroup counts them)
/// nor leaves its zeros cached in place of the data a run reads.
fn zero_fill(f: &std::fs::File, size: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;
    const CHUNK: usize = 1 << 20;
    const SYNC_EVERY: u64 = 64 << 20;
    let zeros = vec![0u8; CHUNK];
    let mut synced = 0u64;
    let mut off = 0u64;
    while off < size {
        let n = usize::try_from(size - off).map_or(CHUNK, |left| left.min(CHUNK));
        f.write_all_at(&zeros[..n], off)?;
        off += n as u64;
        if off - synced >= SYNC_EVERY || off == size {
            f.sync_data()?;
            let (start, len) = (
                libc::off_t::try_from(synced).unwrap_or(0),
                libc::off_t::try_from(off - synced).unwrap_or(0),
            );
            // SAFETY: an open descriptor we borrow for the call; the advice only drops clean
            // cached pages of this file, it touches no memory of ours. Advice failing is
            // harmless (the pages stay cached), so its result is not an error.
            let _ = unsafe {
                libc::posix_fadvise(f.as_raw_fd(), start, len, libc::POSIX_FADV_DONTNEED)
            };
            synced = off;
        }
    }
    assert_eq!(off, size, "every byte of the file is written");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(block: u64, salt: u8) -> Vec<u8> {
        (0..BLOCK_SIZE)
            .map(|i| (i as u64 ^ block.wrapping_mul(131)).to_le_bytes()[0] ^ salt)
            .collect()
    }

    #[test]
    fn ring_setup_failure_falls_back_to_sync() {
        // More entries than IORING_MAX_ENTRIES (32768): the kernel refuses the ring.
        let (engine, ring, note) = setup_engine(IoEngine::Uring, 1 << 20);
        assert_eq!(engine, IoEngine::Sync);
        assert!(ring.is_none());
        assert!(note.unwrap().contains("io_uring setup"));
        assert_eq!(setup_engine(IoEngine::Sync, 8).0, IoEngine::Sync);
    }

    /// A created file has its blocks allocated and written (issue 31: a sparse file made every
    /// append an allocation the ext4 journal committed at each fdatasync; fallocate alone left
    /// unwritten extents, whose first write the journal committed too). SEEK_HOLE reports an
    /// unwritten extent without cached pages as a hole on ext4 and xfs (iomap), so on the
    /// fallocate-only code this finds a hole at 0 (the test directory is on ext4 here).
    #[test]
    fn create_writes_the_whole_file() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let d = FileDevice::create(&p, 3 << 20, &FileOptions::default()).unwrap();
        assert_eq!(d.geometry().capacity, 3 << 20);
        drop(d);
        let m = std::fs::metadata(&p).unwrap();
        assert_eq!(m.len(), 3 << 20);
        // st_blocks counts 512-byte units allocated.
        assert!(
            m.blocks() * 512 >= 3 << 20,
            "{} blocks allocated",
            m.blocks()
        );
        let f = std::fs::File::open(&p).unwrap();
        // Drop cached pages, so SEEK_HOLE reads the extents, not the page cache.
        // SAFETY: an open descriptor of ours; the advice touches no memory.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        // SAFETY: an open descriptor of ours; lseek only moves its offset.
        let hole = unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_HOLE) };
        assert_eq!(
            hole,
            3 << 20,
            "the first hole (or unwritten extent) is at {hole}"
        );
        let mut buf = vec![1u8; 4096];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut buf, 2 << 20).unwrap();
        assert!(buf.iter().all(|&b| b == 0), "the file reads as zeros");
    }

    #[test]
    fn dev_t_split() {
        // makedev(259, 1) and makedev(8, 17) in glibc's encoding.
        assert_eq!(dev_major_minor((259 << 8) | 1), (259, 1));
        assert_eq!(dev_major_minor((8 << 8) | 17), (8, 17));
    }

    #[test]
    fn unaligned_buffer_memory_is_bounced() {
        let dir = tempfile::tempdir().unwrap();
        let d = FileDevice::create(dir.path().join("f"), 1 << 20, &FileOptions::default()).unwrap();
        // A buffer whose address is off by one byte: O_DIRECT would fail without a bounce.
        let mut backing = vec![0u8; 2 * BLOCK_SIZE + 1];
        backing[1..1 + 2 * BLOCK_SIZE].copy_from_slice(&[pattern(1, 1), pattern(2, 1)].concat());
        d.write_at(8192, &backing[1..1 + 2 * BLOCK_SIZE]).unwrap();
        let mut out = vec![0u8; 2 * BLOCK_SIZE + 3];
        d.read_at(8192, &mut out[3..3 + 2 * BLOCK_SIZE]).unwrap();
        assert_eq!(&out[3..], &backing[1..]);
        // Batched, unaligned memory too.
        let a = &backing[1..1 + BLOCK_SIZE];
        d.write_batch(&[(0, a), (16384, a)], None).unwrap();
        let (mut x, mut y) = (vec![0u8; BLOCK_SIZE + 1], vec![0u8; BLOCK_SIZE + 1]);
        d.read_batch(&mut [(0, &mut x[1..]), (16384, &mut y[1..])])
            .unwrap();
        assert_eq!(&x[1..], a);
        assert_eq!(&y[1..], a);
    }
}
