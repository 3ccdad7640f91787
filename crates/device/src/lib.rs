//! Block devices for nowa: the [`BlockDevice`] trait and its implementations, the one way
//! commands open a target for writing, asynchronous queues, and the one SSD timing model.
//!
//! - [`MemDevice`]: plain in-memory device (tests, engine development).
//! - [`FileDevice`]: a regular file or block device, O_DIRECT + io_uring batches with a bounded
//!   queue depth, pread/pwrite fallback, an exclusive lock, a per-target [`TrimPolicy`].
//! - [`open_target`] / [`check_target`]: refuse targets holding data ([`safety_check`]) or not
//!   of the expected kind ([`Expect`]), announce destructive steps, open locked.
//! - [`SimDevice`]: a simulated SSD (CNS / FDP / ZNS) that stores data and drives the FTL model
//!   of `nowa-flash`, reporting host and media bytes like an OCP log page.
//! - [`IoQueue`]: submit / complete with fixed buffers, on files and block devices
//!   ([`FileDevice::queue`], io_uring or psync) and on a simulated SSD in virtual time
//!   ([`SimDevice::timed_queue`]).
//! - [`timing`]: the one timing model of a simulated SSD; [`Paced`] applies it in real time.
//! - [`FaultyDevice`]: seeded power loss (unflushed writes kept, dropped or torn), armed
//!   crashes at the n-th write, bit flips on read.
//! - [`AlignedBuf`]: aligned buffers, so O_DIRECT I/O needs no bounce copy.
//!
//! All offsets and lengths are in bytes and must be multiples of [`BLOCK_SIZE`] (4 KiB).

mod align;
mod error;
mod fault;
mod file;
mod lock;
mod mem;
mod open;
mod paced;
mod queue;
mod safety;
mod scratch;
mod sim;
mod simqueue;
pub mod timing;

pub use align::AlignedBuf;
pub use error::{BusyReason, DeviceError, Holder, Result};
pub use fault::{FaultConfig, FaultStats, FaultyDevice, Persisted, TrimMode, SECTOR_SIZE};
pub use file::{
    dev_major_minor, sysfs_dir, FileDevice, FileOptions, IoEngine, TargetKind, TrimPolicy,
};
pub use mem::MemDevice;
pub use open::{
    check_target, open_target, same_target, Expect, Identity, OpenError, Opened, Recognizer,
    Verdict,
};
pub use paced::Paced;
pub use queue::{Completion, IoQueue, Nanos, Request};
pub use safety::{safety_check, signatures, SafetyIssue, SafetyReport};
pub use scratch::{recognize_scratch, ScratchLabel, SCRATCH_MAGIC};
pub use sim::{SimConfig, SimDevice, SimMode};
pub use simqueue::SimQueue;

/// The unit of I/O: every offset and length is a multiple of this.
pub const BLOCK_SIZE: usize = 4096;
/// [`BLOCK_SIZE`] as a `u64` (byte offsets).
pub const BLOCK_SIZE_U64: u64 = 4096;
/// [`BLOCK_SIZE`] as a `u32`.
pub const BLOCK_SIZE_U32: u32 = 4096;

const _: () =
    assert!(BLOCK_SIZE as u64 == BLOCK_SIZE_U64 && BLOCK_SIZE_U64 == BLOCK_SIZE_U32 as u64);
// Linux io_uring and O_DIRECT: nowa runs on 64-bit targets, where `u64 -> usize` is lossless.
const _: () = assert!(usize::BITS == 64);

pub(crate) use nowa_units::num::usize_of;

/// Static facts about a device.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Geometry {
    /// Usable capacity in bytes (a multiple of BLOCK_SIZE).
    pub capacity: u64,
    /// Logical block size the device requires for direct I/O (512 or 4096).
    pub logical_block_size: u32,
    /// Zoned device: zone size in bytes (writes must be sequential per zone).
    pub zone_size: Option<u64>,
    /// Zoned device: maximum number of zones open for writing at once.
    pub max_open_zones: Option<u32>,
    /// FDP: number of reclaim-unit handles (placement ids 0..n).
    pub placement_handles: Option<u16>,
    /// FDP: reclaim-unit size in bytes (the SSD's GC unit, if the device tells it).
    pub reclaim_unit_size: Option<u64>,
}

impl Geometry {
    /// A conventional (not zoned, no FDP) device of `capacity` bytes with 4 KiB blocks.
    #[must_use]
    pub fn conventional(capacity: u64) -> Self {
        Geometry {
            capacity,
            logical_block_size: BLOCK_SIZE_U32,
            zone_size: None,
            max_open_zones: None,
            placement_handles: None,
            reclaim_unit_size: None,
        }
    }
    /// Capacity in 4 KiB blocks.
    #[must_use]
    pub fn blocks(&self) -> u64 {
        self.capacity / BLOCK_SIZE_U64
    }
}

/// Report of one zone on a zoned device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ZoneState {
    /// Nothing written since the last reset.
    Empty,
    /// Partly written.
    Open,
    /// Written to its end.
    Full,
}

/// One zone of a zoned device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ZoneInfo {
    /// First byte of the zone.
    pub start: u64,
    /// Next byte to write (write pointer), absolute.
    pub write_pointer: u64,
    /// Empty, open or full.
    pub state: ZoneState,
}

/// Byte counters a device exposes, in the spirit of an OCP SMART log page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceCounters {
    /// Bytes written by the host (what the device was asked to write).
    pub host_bytes_written: u64,
    /// Bytes written to the media (host + device GC copies); None if unknown (e.g. a plain file).
    pub media_bytes_written: Option<u64>,
    /// Bytes read by the host.
    pub host_bytes_read: u64,
    /// Bytes trimmed (asked; what the target did with them depends on its [`TrimPolicy`]).
    pub trimmed_bytes: u64,
    /// Flush (fdatasync / cache flush) calls.
    pub flushes: u64,
}

impl DeviceCounters {
    /// Device-level write amplification = media / host, if known (1.0 before any write).
    #[must_use]
    pub fn waf(&self) -> Option<f64> {
        self.media_bytes_written
            .map(|m| nowa_units::waf(m, self.host_bytes_written).unwrap_or(1.0))
    }
}

/// A block device with 4 KiB-aligned I/O. Implementations are thread safe: the engine issues
/// I/O from several threads.
///
/// Every method returning a `Result` fails with a [`DeviceError`]: misaligned or out-of-range
/// I/O, a zone rule broken, a simulated power loss, an operation the device lacks, or an I/O
/// error of the operating system.
#[expect(
    clippy::missing_errors_doc,
    reason = "the errors of every method are documented once, on the trait"
)]
pub trait BlockDevice: Send + Sync {
    /// Capacity, block size, zones, placement handles.
    fn geometry(&self) -> &Geometry;

    /// Read `buf.len()` bytes at `offset`. Both aligned to BLOCK_SIZE.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;

    /// Write `buf` at `offset`. Both aligned to BLOCK_SIZE. Not durable until [`flush`](Self::flush).
    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<()> {
        self.write_at_hinted(offset, buf, None)
    }

    /// Write with a placement hint (FDP reclaim-unit handle / stream id). Devices without
    /// placement support ignore the hint.
    fn write_at_hinted(&self, offset: u64, buf: &[u8], placement: Option<u16>) -> Result<()>;

    /// Batched writes: implementations may submit them together (io_uring). Default: one by one.
    fn write_batch(&self, writes: &[(u64, &[u8])], placement: Option<u16>) -> Result<()> {
        for (off, buf) in writes {
            self.write_at_hinted(*off, buf, placement)?;
        }
        Ok(())
    }

    /// Batched reads. Default: one by one.
    fn read_batch(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        for (off, buf) in reads.iter_mut() {
            self.read_at(*off, buf)?;
        }
        Ok(())
    }

    /// Make every completed write durable.
    fn flush(&self) -> Result<()>;

    /// Deallocate a range (TRIM / discard). Reading it afterwards returns zeroes or old data,
    /// unspecified; callers must not rely on either.
    fn trim(&self, offset: u64, len: u64) -> Result<()>;

    /// Zoned devices: append `buf` to the zone starting at `zone_start`; returns the offset written.
    fn zone_append(&self, _zone_start: u64, _buf: &[u8]) -> Result<u64> {
        Err(DeviceError::Unsupported("zone append"))
    }

    /// Zoned devices: reset a zone (its data is gone, write pointer back to the start).
    fn zone_reset(&self, _zone_start: u64) -> Result<()> {
        Err(DeviceError::Unsupported("zone reset"))
    }

    /// Zoned devices: report all zones.
    fn zone_report(&self) -> Result<Vec<ZoneInfo>> {
        Err(DeviceError::Unsupported("zone report"))
    }

    /// Counters (host bytes, media bytes when the device knows them).
    fn counters(&self) -> DeviceCounters;

    /// Buffer address alignment that lets I/O skip a bounce copy (O_DIRECT DMAs straight
    /// into user memory). Allocate with `AlignedBuf::zeroed(len, dev.buffer_alignment())`.
    /// Any buffer works; misaligned ones just cost a copy. Default: 1 (no requirement).
    fn buffer_alignment(&self) -> usize {
        1
    }
}

/// Check that offset/len are aligned and in range.
///
/// # Errors
/// [`DeviceError::Unaligned`] or [`DeviceError::OutOfRange`].
pub fn check_io(geo: &Geometry, offset: u64, len: usize) -> Result<()> {
    let align = BLOCK_SIZE;
    if offset % BLOCK_SIZE_U64 != 0 || len % align != 0 {
        return Err(DeviceError::Unaligned { offset, len, align });
    }
    if offset
        .checked_add(u64::try_from(len).unwrap_or(u64::MAX))
        .is_none_or(|end| end > geo.capacity)
    {
        return Err(DeviceError::OutOfRange {
            offset,
            len,
            capacity: geo.capacity,
        });
    }
    Ok(())
}

impl<T: BlockDevice + ?Sized> BlockDevice for std::sync::Arc<T> {
    fn geometry(&self) -> &Geometry {
        (**self).geometry()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        (**self).read_at(offset, buf)
    }
    fn write_at_hinted(&self, offset: u64, buf: &[u8], placement: Option<u16>) -> Result<()> {
        (**self).write_at_hinted(offset, buf, placement)
    }
    fn write_batch(&self, writes: &[(u64, &[u8])], placement: Option<u16>) -> Result<()> {
        (**self).write_batch(writes, placement)
    }
    fn read_batch(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        (**self).read_batch(reads)
    }
    fn flush(&self) -> Result<()> {
        (**self).flush()
    }
    fn trim(&self, offset: u64, len: u64) -> Result<()> {
        (**self).trim(offset, len)
    }
    fn zone_append(&self, zone_start: u64, buf: &[u8]) -> Result<u64> {
        (**self).zone_append(zone_start, buf)
    }
    fn zone_reset(&self, zone_start: u64) -> Result<()> {
        (**self).zone_reset(zone_start)
    }
    fn zone_report(&self) -> Result<Vec<ZoneInfo>> {
        (**self).zone_report()
    }
    fn counters(&self) -> DeviceCounters {
        (**self).counters()
    }
    fn buffer_alignment(&self) -> usize {
        (**self).buffer_alignment()
    }
}
