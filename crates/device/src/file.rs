//! [`FileDevice`]: a regular file or a block device, with O_DIRECT when the file system allows
//! it and batched I/O through io_uring (pread/pwrite fallback).
//!
//! Why O_DIRECT: the benchmark measures what reaches the device; the page cache would absorb
//! rewrites and reorder writeback. Why io_uring for batches: one syscall keeps `queue_depth`
//! I/Os in flight, which is how an SSD reaches its internal parallelism.

use crate::align::{is_aligned, AlignedBuf};
use crate::{check_io, BlockDevice, DeviceCounters, DeviceError, Geometry, Result, BLOCK_SIZE};
use io_uring::{opcode, types, IoUring};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
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
pub enum IoEngine {
    /// io_uring with up to `queue_depth` I/Os in flight.
    Uring,
    /// One pread/pwrite at a time.
    Sync,
}

/// What kind of target a [`FileDevice`] opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum TargetKind {
    RegularFile,
    BlockDevice,
}

/// Options for [`FileDevice::open`] / [`FileDevice::create`].
#[derive(Debug, Clone)]
pub struct FileOptions {
    /// Requested engine; `Uring` falls back to `Sync` if the ring cannot be set up.
    pub engine: IoEngine,
    /// Maximum I/Os in flight per batch (io_uring); >= 1.
    pub queue_depth: u32,
    /// Try O_DIRECT (falls back to buffered I/O where the file system refuses it).
    pub direct: bool,
    /// Block devices only: open with O_EXCL, which the kernel refuses (EBUSY) while the device
    /// is mounted or held by another driver — a last safety belt after [`crate::safety_check`].
    pub exclusive: bool,
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions {
            engine: IoEngine::Uring,
            queue_depth: 32,
            direct: true,
            exclusive: true,
        }
    }
}

/// A regular file or block device as a [`BlockDevice`].
///
/// Single `read_at`/`write_at` calls use pread/pwrite (a ring buys nothing for one I/O);
/// `read_batch`/`write_batch` go through io_uring when available. Buffers whose address is
/// not aligned for O_DIRECT are copied through an aligned bounce buffer.
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
    trim_supported: AtomicBool,
    /// Highest number of ring I/Os seen in flight at once (tests check the queue-depth bound).
    max_inflight: AtomicU64,
    host_written: AtomicU64,
    host_read: AtomicU64,
    trimmed: AtomicU64,
    flushes: AtomicU64,
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
            .finish()
    }
}

/// Split a Linux `dev_t` into (major, minor) (glibc's encoding).
pub fn dev_major_minor(dev: u64) -> (u64, u64) {
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0xff);
    (major, minor)
}

/// The sysfs directory of a block device or partition.
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

fn config_err(msg: String) -> DeviceError {
    DeviceError::Config(msg)
}

impl FileDevice {
    /// Create (or resize) a regular file of exactly `size` bytes and open it. `size` must be a
    /// positive multiple of 4 KiB. The file is sparse: unwritten blocks cost no disk space.
    pub fn create(path: impl AsRef<Path>, size: u64, opts: &FileOptions) -> Result<Self> {
        let path = path.as_ref();
        if size == 0 || size % BLOCK_SIZE as u64 != 0 {
            return Err(config_err(format!(
                "file size {size} must be a positive multiple of {BLOCK_SIZE}"
            )));
        }
        if let Ok(m) = std::fs::metadata(path) {
            if !m.file_type().is_file() {
                return Err(config_err(format!(
                    "{}: exists and is not a regular file",
                    path.display()
                )));
            }
        }
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        f.set_len(size)?;
        drop(f);
        Self::open(path, opts)
    }

    /// Open an existing regular file (capacity = its length rounded down to 4 KiB) or a block
    /// device (capacity from BLKGETSIZE64, logical block size from sysfs).
    pub fn open(path: impl AsRef<Path>, opts: &FileOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let meta = std::fs::metadata(&path)?;
        let kind = if meta.file_type().is_block_device() {
            TargetKind::BlockDevice
        } else if meta.file_type().is_file() {
            TargetKind::RegularFile
        } else {
            return Err(config_err(format!(
                "{}: neither a regular file nor a block device",
                path.display()
            )));
        };
        if opts.queue_depth == 0 {
            return Err(config_err("queue depth must be >= 1".into()));
        }
        let queue_depth = opts.queue_depth.min(4096);

        let mut flags = 0;
        if kind == TargetKind::BlockDevice && opts.exclusive {
            flags |= libc::O_EXCL;
        }
        let open = |direct: bool| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(flags | if direct { libc::O_DIRECT } else { 0 })
                .open(&path)
                .map_err(|e| {
                    if e.raw_os_error() == Some(libc::EBUSY) {
                        config_err(format!(
                            "{}: device busy (mounted or held by another driver; O_EXCL open failed)",
                            path.display()
                        ))
                    } else {
                        DeviceError::Io(e)
                    }
                })
        };
        let (mut file, mut direct, mut direct_note) = if opts.direct {
            match open(true) {
                Ok(f) => (f, true, None),
                Err(DeviceError::Io(e)) if e.raw_os_error() == Some(libc::EINVAL) => (
                    open(false)?,
                    false,
                    Some(format!(
                        "O_DIRECT refused at open ({e}); using buffered I/O"
                    )),
                ),
                Err(e) => return Err(e),
            }
        } else {
            (
                open(false)?,
                false,
                Some("O_DIRECT not requested".to_string()),
            )
        };

        let capacity = match kind {
            TargetKind::RegularFile => meta.len(),
            TargetKind::BlockDevice => {
                let mut size = 0u64;
                // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points to a
                // live, properly aligned u64 on our stack; the fd is open.
                let r = unsafe {
                    libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64)
                };
                if r != 0 {
                    return Err(io::Error::last_os_error().into());
                }
                size
            }
        };
        let capacity = capacity / BLOCK_SIZE as u64 * BLOCK_SIZE as u64;
        if capacity == 0 {
            return Err(config_err(format!(
                "{}: smaller than one {BLOCK_SIZE}-byte block",
                path.display()
            )));
        }
        let lbs = match kind {
            TargetKind::BlockDevice => sysfs_logical_block_size(meta.rdev()).or_else(|| {
                let mut s: libc::c_int = 0;
                // SAFETY: BLKSSZGET writes one int through the pointer to our local `s`.
                let r = unsafe {
                    libc::ioctl(
                        file.as_raw_fd(),
                        libc::BLKSSZGET as _,
                        &mut s as *mut libc::c_int,
                    )
                };
                (r == 0 && s > 0).then_some(s as u32)
            }),
            // O_DIRECT on a file needs the alignment of the disk under the file system.
            TargetKind::RegularFile => sysfs_logical_block_size(meta.dev()),
        }
        .unwrap_or(BLOCK_SIZE as u32);
        if !lbs.is_power_of_two() || lbs as usize > BLOCK_SIZE {
            return Err(config_err(format!(
                "{}: logical block size {lbs} cannot be met by {BLOCK_SIZE}-byte aligned I/O",
                path.display()
            )));
        }

        // Some file systems accept O_DIRECT at open and fail the first I/O: probe one block.
        if direct && kind == TargetKind::RegularFile {
            let mut probe = AlignedBuf::zeroed(BLOCK_SIZE, BLOCK_SIZE);
            if let Err(e) = file.read_exact_at(&mut probe, 0) {
                if e.raw_os_error() == Some(libc::EINVAL) {
                    file = open(false)?;
                    direct = false;
                    direct_note = Some(format!("O_DIRECT read failed ({e}); using buffered I/O"));
                } else {
                    return Err(e.into());
                }
            }
        }

        let (engine, ring, engine_note) =
            setup_engine(opts.engine, queue_depth.next_power_of_two());

        Ok(FileDevice {
            file,
            path,
            kind,
            geo: Geometry {
                logical_block_size: lbs,
                ..Geometry::conventional(capacity)
            },
            mem_align: if direct { lbs.max(512) as usize } else { 1 },
            direct,
            direct_note,
            engine,
            engine_note,
            ring,
            queue_depth,
            trim_supported: AtomicBool::new(true),
            max_inflight: AtomicU64::new(0),
            host_written: AtomicU64::new(0),
            host_read: AtomicU64::new(0),
            trimmed: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn kind(&self) -> TargetKind {
        self.kind
    }
    /// True if I/O bypasses the page cache (O_DIRECT).
    pub fn is_direct(&self) -> bool {
        self.direct
    }
    /// Why O_DIRECT is not in use, if it is not.
    pub fn direct_fallback_reason(&self) -> Option<&str> {
        self.direct_note.as_deref()
    }
    /// The engine in use (may be `Sync` although `Uring` was requested).
    pub fn engine(&self) -> IoEngine {
        self.engine
    }
    /// Why io_uring is not in use although it was requested.
    pub fn engine_fallback_reason(&self) -> Option<&str> {
        self.engine_note.as_deref()
    }
    pub fn queue_depth(&self) -> u32 {
        self.queue_depth
    }
    /// False once a trim hit EOPNOTSUPP (the trim was then a no-op, which is allowed).
    pub fn trim_supported(&self) -> bool {
        self.trim_supported.load(Relaxed)
    }

    /// Most io_uring I/Os this device ever had in flight at once (<= queue depth).
    pub fn max_in_flight_observed(&self) -> u64 {
        self.max_inflight.load(Relaxed)
    }

    fn needs_bounce(&self, p: *const u8) -> bool {
        self.direct && !is_aligned(p, self.mem_align)
    }

    fn pread(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
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
        let fd = types::Fd(self.file.as_raw_fd());
        let qd = self.queue_depth as usize;
        let mut done = vec![0usize; ops.len()];
        let mut queue: VecDeque<usize> = (0..ops.len()).filter(|&i| ops[i].len > 0).collect();
        let mut inflight = 0usize;
        let mut first_err: Option<io::Error> = None;
        let mut reaped: Vec<(u64, i32)> = Vec::with_capacity(qd);
        loop {
            while first_err.is_none() && inflight < qd {
                let Some(i) = queue.pop_front() else { break };
                let op = &ops[i];
                let d = done[i];
                let len = (op.len - d).min(MAX_OP) as u32;
                // `d < op.len`, so the pointer stays inside the caller's buffer.
                let ptr = op.ptr.wrapping_add(d);
                let entry = if op.write {
                    opcode::Write::new(fd, ptr, len)
                        .offset(op.offset + d as u64)
                        .build()
                } else {
                    opcode::Read::new(fd, ptr, len)
                        .offset(op.offset + d as u64)
                        .build()
                }
                .user_data(i as u64);
                // SAFETY: the entry points into a buffer the caller borrows for the whole call
                // (`ops` outlives this function's loop), and this function does not return
                // until every submitted entry has completed (inflight == 0), so the kernel never
                // touches freed memory. The SQ cannot be full: inflight < qd <= SQ entries.
                unsafe { ring.submission().push(&entry) }
                    .expect("submission queue full despite qd bound");
                inflight += 1;
            }
            self.max_inflight.fetch_max(inflight as u64, Relaxed);
            if inflight == 0 {
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
                let i = ud as usize;
                inflight -= 1;
                if res == -libc::EINTR || res == -libc::EAGAIN {
                    queue.push_front(i);
                } else if res < 0 {
                    first_err.get_or_insert(io::Error::from_raw_os_error(-res));
                } else if res == 0 {
                    let kind = if ops[i].write {
                        io::ErrorKind::WriteZero
                    } else {
                        io::ErrorKind::UnexpectedEof
                    };
                    first_err.get_or_insert(io::Error::new(
                        kind,
                        format!("zero-length transfer at offset {}", ops[i].offset),
                    ));
                } else {
                    done[i] += res as usize;
                    if done[i] < ops[i].len {
                        queue.push_front(i);
                    }
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
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

impl BlockDevice for FileDevice {
    fn geometry(&self) -> &Geometry {
        &self.geo
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        self.pread(offset, buf)?;
        self.host_read.fetch_add(buf.len() as u64, Relaxed);
        Ok(())
    }

    fn write_at_hinted(&self, offset: u64, buf: &[u8], _placement: Option<u16>) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        self.pwrite(offset, buf)?;
        self.host_written.fetch_add(buf.len() as u64, Relaxed);
        Ok(())
    }

    fn write_batch(&self, writes: &[(u64, &[u8])], _placement: Option<u16>) -> Result<()> {
        for (off, buf) in writes {
            check_io(&self.geo, *off, buf.len())?;
        }
        let total: u64 = writes.iter().map(|(_, b)| b.len() as u64).sum();
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
                        ptr: bb.as_ref().map_or(b.as_ptr(), |x| x.as_ptr()) as *mut u8,
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
        self.host_written.fetch_add(total, Relaxed);
        Ok(())
    }

    fn read_batch(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        for (off, buf) in reads.iter() {
            check_io(&self.geo, *off, buf.len())?;
        }
        let total: u64 = reads.iter().map(|(_, b)| b.len() as u64).sum();
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
        self.host_read.fetch_add(total, Relaxed);
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        self.file.sync_data()?;
        self.flushes.fetch_add(1, Relaxed);
        Ok(())
    }

    fn trim(&self, offset: u64, len: u64) -> Result<()> {
        check_io(&self.geo, offset, len as usize)?;
        if len == 0 {
            return Ok(());
        }
        let fd = self.file.as_raw_fd();
        let r = match self.kind {
            // SAFETY: plain syscall on an open fd with integer arguments.
            TargetKind::RegularFile => unsafe {
                libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    offset as libc::off_t,
                    len as libc::off_t,
                )
            },
            TargetKind::BlockDevice => {
                let range = [offset, len];
                // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer, which
                // points to `range` on our stack.
                unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
            }
        };
        if r != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
                // Trim is advisory: not deallocating is a valid outcome.
                self.trim_supported.store(false, Relaxed);
            } else {
                return Err(e.into());
            }
        }
        self.trimmed.fetch_add(len, Relaxed);
        Ok(())
    }

    fn counters(&self) -> DeviceCounters {
        DeviceCounters {
            host_bytes_written: self.host_written.load(Relaxed),
            media_bytes_written: None,
            host_bytes_read: self.host_read.load(Relaxed),
            trimmed_bytes: self.trimmed.load(Relaxed),
            flushes: self.flushes.load(Relaxed),
        }
    }

    fn buffer_alignment(&self) -> usize {
        self.mem_align
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(block: u64, salt: u8) -> Vec<u8> {
        (0..BLOCK_SIZE)
            .map(|i| (i as u64 ^ block.wrapping_mul(131)) as u8 ^ salt)
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
