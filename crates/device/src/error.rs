//! [`DeviceError`]: what a device operation, or opening a target, can fail with. Every fact a
//! caller may act on is a typed field; messages are one line.

use nowa_flash::FlashError;
use std::path::PathBuf;

/// The process holding a lock on a target, as far as `/proc/locks` tells.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Holder {
    /// Process id of the lock holder.
    pub pid: u32,
    /// Its command name (`/proc/PID/comm`), if readable.
    pub command: Option<String>,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.command {
            Some(c) => write!(f, "process {} ({c})", self.pid),
            None => write!(f, "process {}", self.pid),
        }
    }
}

/// " (held by process 123 (nowa))", or nothing when the holder is unknown.
fn held_by(h: Option<&Holder>) -> String {
    h.map(|h| format!(" (held by {h})")).unwrap_or_default()
}

/// Errors a device can return.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// Offset or length not a multiple of the alignment.
    #[error("unaligned I/O: offset {offset} length {len} (alignment {align} bytes)")]
    Unaligned {
        /// Byte offset asked for.
        offset: u64,
        /// Length asked for.
        len: usize,
        /// The alignment required.
        align: usize,
    },
    /// I/O past the device's end.
    #[error("I/O beyond device end: offset {offset} length {len}, capacity {capacity}")]
    OutOfRange {
        /// Byte offset asked for.
        offset: u64,
        /// Length asked for.
        len: usize,
        /// Device capacity in bytes.
        capacity: u64,
    },
    /// Zoned device: a write that does not start at the zone's write pointer.
    #[error("write at byte {offset} in zone {zone}, but the zone's write pointer is at byte {write_pointer}: zones are written sequentially")]
    NotAtWritePointer {
        /// Byte offset of the write.
        offset: u64,
        /// Zone index.
        zone: u64,
        /// The write pointer (absolute byte offset).
        write_pointer: u64,
    },
    /// Zoned device: a write or append running past the end of its zone.
    #[error(
        "{len} bytes at byte {offset} cross the end of zone {zone} ({zone_size} bytes per zone)"
    )]
    CrossesZoneEnd {
        /// Byte offset where the write would land.
        offset: u64,
        /// Its length in bytes.
        len: u64,
        /// Zone index.
        zone: u64,
        /// Zone size in bytes.
        zone_size: u64,
    },
    /// Zoned device: a zone operation on an offset that is not a zone start.
    #[error("offset {offset} is not the start of a zone (zone size {zone_size} bytes, capacity {capacity})")]
    NotZoneStart {
        /// The offset given.
        offset: u64,
        /// Zone size in bytes.
        zone_size: u64,
        /// Device capacity in bytes.
        capacity: u64,
    },
    /// Zoned device: a trim that is not a whole number of zones.
    #[error("trim of {len} bytes at {offset} on a zoned device: only whole zones ({zone_size} bytes) can be trimmed; use zone_reset")]
    PartialZoneTrim {
        /// Byte offset of the trim.
        offset: u64,
        /// Its length.
        len: u64,
        /// Zone size in bytes.
        zone_size: u64,
    },
    /// Zoned device: an append landed somewhere else than its caller placed it.
    #[error("zone append landed at byte {at}, expected byte {expected}")]
    AppendMisplaced {
        /// Where the device put the data.
        at: u64,
        /// Where the caller expected it.
        expected: u64,
    },
    /// Zoned device: opening another zone would exceed the device's open-zone limit.
    #[error("zone {zone}: opening it would exceed the limit of {max_open} open zones")]
    TooManyOpenZones {
        /// The zone the write would open.
        zone: u64,
        /// The device's open-zone limit.
        max_open: u32,
    },
    /// FDP: a placement handle the device does not have.
    #[error("placement handle {handle} out of range: device has {handles} reclaim-unit handles")]
    BadPlacement {
        /// Handle asked for.
        handle: u16,
        /// Handles the device has (0..handles).
        handles: u16,
    },
    /// The FTL model under a simulated device refused the operation (open-zone limit, device
    /// full, configuration).
    #[error("simulated SSD: {0}")]
    Flash(#[from] FlashError),
    /// The device does not implement this operation.
    #[error("operation not supported by this device: {0}")]
    Unsupported(&'static str),
    /// Simulated power loss: the device is off until restarted.
    #[error("device is powered off (simulated power loss)")]
    PoweredOff,
    /// A file size that is zero or not a multiple of the block size.
    #[error("file size {size} must be a positive multiple of {block} bytes")]
    BadSize {
        /// Size asked for.
        size: u64,
        /// The block size.
        block: usize,
    },
    /// A queue depth outside 1..=4096.
    #[error("queue depth must be in 1..=4096, got {got}")]
    BadQueueDepth {
        /// Queue depth asked for.
        got: u32,
    },
    /// A target that is neither a regular file nor a block device (a directory, a FIFO...).
    #[error("{path} is {what}, neither a regular file nor a block device")]
    NotFileOrBlockDevice {
        /// The path.
        path: PathBuf,
        /// What it is ("a character device", "a directory", ...).
        what: &'static str,
    },
    /// `create` was asked for a path that exists: it makes new regular files only and never
    /// overwrites or resizes anything.
    #[error(
        "{path} already exists ({what}); create makes a new regular file and never overwrites one"
    )]
    Exists {
        /// The path.
        path: PathBuf,
        /// What is there ("a regular file", "a character device", ...).
        what: &'static str,
    },
    /// An operating-system error about a path (missing, no permission...), with the path.
    #[error("{path}: {source}")]
    PathIo {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A target smaller than one block.
    #[error("{path}: smaller than one {block}-byte block")]
    TooSmall {
        /// The path.
        path: PathBuf,
        /// The block size.
        block: usize,
    },
    /// A device whose logical block size 4 KiB-aligned I/O cannot meet.
    #[error("{path}: logical block size {lbs} cannot be met by {block}-byte aligned I/O")]
    LogicalBlockSize {
        /// The path.
        path: PathBuf,
        /// Its logical block size.
        lbs: u32,
        /// Our I/O unit.
        block: usize,
    },
    /// The target is locked by another open (nowa's own lock, or a mount / another driver
    /// holding a block device exclusively).
    #[error("{path} is busy: {why}{}", held_by(holder.as_ref()))]
    Busy {
        /// The path.
        path: PathBuf,
        /// What refused the open.
        why: BusyReason,
        /// The process holding the lock, when it can be found.
        holder: Option<Holder>,
    },
    /// A new file would be created in `/dev`, where only device nodes belong.
    #[error("{path} does not exist; nowa does not create files in /dev (mistyped device name?)")]
    CreateInDev {
        /// The path.
        path: PathBuf,
    },
    /// A simulated device configuration that cannot be built.
    #[error("invalid simulated device: {what}")]
    SimConfig {
        /// What is wrong.
        what: &'static str,
    },
    /// No FTL geometry fits the capacity asked for.
    #[error("no FTL geometry fits {capacity} bytes: {source}")]
    NoGeometry {
        /// Capacity asked for.
        capacity: u64,
        /// Why the last candidate failed.
        source: FlashError,
    },
    /// An I/O error from the operating system.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// Why a target could not be opened exclusively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub enum BusyReason {
    /// Another open holds nowa's lock (`flock`) on it.
    Locked,
    /// The kernel refused `O_EXCL`: the block device is mounted or held by another driver.
    Exclusive,
}

impl std::fmt::Display for BusyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BusyReason::Locked => "another process has it open (lock held)",
            BusyReason::Exclusive => "mounted or held by another driver (exclusive open refused)",
        })
    }
}

/// Shorthand for device results.
pub type Result<T> = std::result::Result<T, DeviceError>;
