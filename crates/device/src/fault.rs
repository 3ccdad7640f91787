//! Fault injection: [`FaultyDevice`] wraps any [`BlockDevice`] and models a volatile write
//! cache that loses (or tears) unflushed writes on power loss, armed crashes at the n-th write,
//! and bit flips on read. Everything is deterministic from [`FaultConfig::seed`].
//!
//! Model: writes since the last flush live in a volatile overlay (reads see them). `flush`
//! writes the overlay to the inner device and flushes it. On power loss each unflushed 4 KiB
//! block independently survives whole, is dropped, or is torn (a prefix of its 512-byte
//! sectors is new, the rest old). Only the newest unflushed version of a block is kept, so a
//! block written twice since the last flush comes back as old, newest, or a mix of the two.
//!
//! Zoned inner devices: the wrapper keeps a shadow write pointer per zone (inner pointer +
//! unflushed blocks), enforces the sequential-write rule and the open-zone limit itself, and at
//! power loss keeps a *prefix* of each zone's unflushed blocks (the last one possibly torn),
//! as a real ZNS drive would; `zone_reset` and `trim` are applied to the inner device at once.
//!
//! Media faults beyond power loss (all seeded or armed explicitly, all off by default):
//! [`TrimMode`] (what TRIM leaves in the trimmed blocks: zeros, the old bytes, or a seeded mix),
//! lost writes (acknowledged, never stored: [`FaultyDevice::lose_writes`],
//! [`FaultyDevice::set_lost_write_prob`]), misdirected writes (stored at another block:
//! [`FaultyDevice::misdirect_writes`]) and read errors ([`FaultyDevice::fail_reads`],
//! [`FaultyDevice::set_read_error_prob`]).
//!
//! Crash-test recipe: run the workload once and read [`FaultyDevice::writes_issued`]; then for
//! each k in 1..=that count, replay on a fresh device with `crash_after_writes(k)`, restart and
//! check recovery.

use crate::{
    check_io, BlockDevice, DeviceCounters, DeviceError, Geometry, Result, ZoneInfo, ZoneState,
    BLOCK_SIZE,
};
use parking_lot::{Mutex, RwLock};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Sector size at which torn writes split a block.
pub const SECTOR_SIZE: usize = 512;
const SECTORS: usize = BLOCK_SIZE / SECTOR_SIZE;

/// Fault probabilities and the seed that makes them reproducible.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultConfig {
    /// Seed of every random choice the device makes.
    pub seed: u64,
    /// Probability that an unflushed block is torn at power loss (else kept or dropped 50/50,
    /// see [`FaultyDevice::set_keep_prob`]); also the probability that the block in flight at
    /// an armed crash is torn rather than dropped.
    pub torn_write_prob: f64,
    /// Probability that a read call returns one flipped bit.
    pub bit_flip_read_prob: f64,
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            seed: 0,
            torn_write_prob: 0.0,
            bit_flip_read_prob: 0.0,
        }
    }
}

/// What fault injection did so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FaultStats {
    /// Power losses simulated.
    pub power_losses: u64,
    /// Unflushed blocks that survived whole / were dropped / were torn at power losses.
    pub blocks_kept: u64,
    /// See `blocks_kept`.
    pub blocks_dropped: u64,
    /// See `blocks_kept`.
    pub blocks_torn: u64,
    /// Bits flipped in reads.
    pub bit_flips: u64,
    /// Write calls acknowledged but never stored (lost writes).
    pub lost_writes: u64,
    /// Write calls stored at another offset than asked (misdirected writes).
    pub misdirected_writes: u64,
    /// Read calls failed with an injected I/O error.
    pub read_errors: u64,
    /// Trimmed 4 KiB blocks that read back as zeros / kept their old bytes.
    pub trimmed_zeroed: u64,
    /// See `trimmed_zeroed`.
    pub trimmed_kept: u64,
}

/// What a TRIM leaves in the trimmed blocks (the NVMe DSM deallocate contract allows all of
/// these unless the drive promises zeros).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrimMode {
    /// Forward the trim to the inner device and let it decide (`MemDevice` keeps the bytes).
    #[default]
    Inner,
    /// Trimmed blocks read back as zeros.
    Zero,
    /// Trimmed blocks keep their old bytes (the trim is not forwarded).
    Keep,
    /// Each trimmed block independently reads back as zeros or keeps its old bytes (seeded).
    Random,
}

/// An armed fault on the write calls that overlap a byte range.
#[derive(Debug, Clone)]
struct ArmedWrites {
    range: std::ops::Range<u64>,
    /// Calls left to hit.
    left: u64,
    /// None: lose the write; Some(to): store it at byte offset `to` instead.
    redirect: Option<u64>,
}

struct Pending {
    data: Box<[u8; BLOCK_SIZE]>,
    placement: Option<u16>,
}

/// Which unflushed blocks reached the media before a power loss, by byte offset: a write
/// cache that destages out of order (set by [`FaultyDevice::set_persisted`]).
pub type Persisted = std::sync::Arc<dyn Fn(u64) -> bool + Send + Sync>;

struct State {
    /// See [`FaultyDevice::set_persisted`].
    persisted: Option<Persisted>,
    /// Unflushed blocks by byte offset (BTreeMap: deterministic order at power loss).
    overlay: BTreeMap<u64, Pending>,
    powered_off: bool,
    /// Write calls left before the armed crash (1 = the next write crashes).
    crash_in: Option<u64>,
    keep_prob: f64,
    rng: Xoshiro256PlusPlus,
    stats: FaultStats,
    /// Zoned inner device: shadow write pointers (absolute bytes), including unflushed data.
    zone_wps: Option<Vec<u64>>,
    trim_mode: TrimMode,
    armed: Vec<ArmedWrites>,
    lost_write_prob: f64,
}

#[derive(Default)]
struct ReadFaults {
    ranges: Vec<std::ops::Range<u64>>,
    prob: f64,
    errors: u64,
}

/// A device wrapper that injects power loss, torn writes and bit flips.
///
/// `trim` and `zone_reset` go straight to the inner device (durable at once); writes and zone
/// appends go through the volatile overlay. Outcomes are deterministic for a deterministic
/// order of calls (one writer thread, or a fixed interleaving).
pub struct FaultyDevice<D: BlockDevice> {
    inner: D,
    cfg: FaultConfig,
    state: RwLock<State>,
    /// Separate stream for read faults so that concurrent reads don't shift crash outcomes.
    read_rng: Mutex<Xoshiro256PlusPlus>,
    /// Injected read errors (ranges and probability), apart from the write state so that
    /// readers do not contend with writers.
    read_faults: Mutex<ReadFaults>,
    writes_issued: AtomicU64,
    bit_flips: AtomicU64,
    host_written: AtomicU64,
    host_read: AtomicU64,
    trimmed: AtomicU64,
    flushes: AtomicU64,
}

impl<D: BlockDevice> FaultyDevice<D> {
    /// Wrap `inner`, injecting faults as `cfg` says.
    pub fn new(inner: D, cfg: FaultConfig) -> Self {
        let zone_wps = Self::load_zone_wps(&inner);
        FaultyDevice {
            inner,
            cfg,
            state: RwLock::new(State {
                persisted: None,
                overlay: BTreeMap::new(),
                powered_off: false,
                crash_in: None,
                keep_prob: 0.5,
                rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed),
                stats: FaultStats::default(),
                zone_wps,
                trim_mode: TrimMode::Inner,
                armed: Vec::new(),
                lost_write_prob: 0.0,
            }),
            read_faults: Mutex::new(ReadFaults::default()),
            read_rng: Mutex::new(Xoshiro256PlusPlus::seed_from_u64(
                cfg.seed ^ 0x9e37_79b9_7f4a_7c15,
            )),
            writes_issued: AtomicU64::new(0),
            bit_flips: AtomicU64::new(0),
            host_written: AtomicU64::new(0),
            host_read: AtomicU64::new(0),
            trimmed: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
        }
    }

    /// Arm a crash: the n-th write call from now is torn/dropped and the device powers off
    /// (later I/O -> DeviceError::PoweredOff). n = 1 is the next write; n = 0 powers off at once.
    /// Each element of a `write_batch` counts as one write call.
    pub fn crash_after_writes(&self, n: u64) {
        if n == 0 {
            self.power_loss();
        } else {
            self.state.write().crash_in = Some(n);
        }
    }

    /// Power loss now: every write since the last flush is, per seed, kept, dropped, or torn at
    /// a 512-byte boundary; device goes offline.
    pub fn power_loss(&self) {
        let mut st = self.state.write();
        if !st.powered_off {
            self.lose_power(&mut st);
            if st.zone_wps.is_some() {
                st.zone_wps = Self::load_zone_wps(&self.inner);
            }
        }
    }

    /// Power back on with whatever survived. Disarms a pending crash.
    pub fn restart(&self) {
        let mut st = self.state.write();
        st.powered_off = false;
        st.crash_in = None;
    }

    /// True between a power loss and the next power-on.
    pub fn is_powered_off(&self) -> bool {
        self.state.read().powered_off
    }

    /// The wrapped device.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// The fault configuration this device was made with.
    pub fn config(&self) -> &FaultConfig {
        &self.cfg
    }

    /// Write calls accepted or crashed so far (batch elements count one each), over the
    /// device's lifetime — for picking crash points in a replay.
    pub fn writes_issued(&self) -> u64 {
        self.writes_issued.load(Relaxed)
    }

    /// 4 KiB blocks written but not yet flushed.
    pub fn unflushed_blocks(&self) -> usize {
        self.state.read().overlay.len()
    }

    /// Probability that an untorn unflushed block survives a power loss (default 0.5).
    /// 0.0 = every unflushed write is lost (unless torn); 1.0 = all kept.
    pub fn set_keep_prob(&self, p: f64) {
        self.state.write().keep_prob = p.clamp(0.0, 1.0);
    }

    /// Decide the fate of unflushed blocks at a power loss by their completion instead of
    /// the keep probability: a block `persisted(offset)` says reached the media survives
    /// whole; any other was still in flight: torn (`torn_write_prob`) or lost. The caller
    /// models the cache's destaging order (the whole-engine simulation: completion times
    /// drawn per write on a simulated clock, so a later write may be durable and an earlier
    /// one not). None: back to the keep probability.
    pub fn set_persisted(&self, persisted: Option<Persisted>) {
        self.state.write().persisted = persisted;
    }

    /// What fault injection did so far.
    pub fn fault_stats(&self) -> FaultStats {
        let mut s = self.state.read().stats;
        s.bit_flips = self.bit_flips.load(Relaxed);
        s.read_errors = self.read_faults.lock().errors;
        s
    }

    /// What later TRIMs leave in the trimmed blocks (default [`TrimMode::Inner`]).
    pub fn set_trim_mode(&self, mode: TrimMode) {
        self.state.write().trim_mode = mode;
    }

    /// The next `count` write calls overlapping `range` (bytes) are acknowledged but never
    /// stored: a lost write (firmware bug, a cache that drops a line).
    pub fn lose_writes(&self, range: std::ops::Range<u64>, count: u64) {
        self.state.write().armed.push(ArmedWrites {
            range,
            left: count,
            redirect: None,
        });
    }

    /// The next `count` write calls overlapping `range` are stored at byte offset `to`
    /// instead (a misdirected write); `to` must be block aligned and inside the device.
    pub fn misdirect_writes(&self, range: std::ops::Range<u64>, count: u64, to: u64) {
        self.state.write().armed.push(ArmedWrites {
            range,
            left: count,
            redirect: Some(to),
        });
    }

    /// Disarm every armed lost / misdirected write and the lost-write probability.
    pub fn clear_write_faults(&self) {
        let mut st = self.state.write();
        st.armed.clear();
        st.lost_write_prob = 0.0;
    }

    /// Probability that a write call is silently lost (seeded, from the write stream).
    pub fn set_lost_write_prob(&self, p: f64) {
        self.state.write().lost_write_prob = p.clamp(0.0, 1.0);
    }

    /// Reads overlapping `range` (bytes) fail with an I/O error until [`Self::clear_read_faults`].
    pub fn fail_reads(&self, range: std::ops::Range<u64>) {
        self.read_faults.lock().ranges.push(range);
    }

    /// Probability that a read call fails with an I/O error (seeded, from the read stream).
    pub fn set_read_error_prob(&self, p: f64) {
        self.read_faults.lock().prob = p.clamp(0.0, 1.0);
    }

    /// Remove every injected read fault (ranges and probability).
    pub fn clear_read_faults(&self) {
        let mut r = self.read_faults.lock();
        r.ranges.clear();
        r.prob = 0.0;
    }

    /// An injected read error for a read of `len` bytes at `offset`, if one applies.
    fn read_fault(&self, offset: u64, len: usize) -> Result<()> {
        let end = offset + len as u64;
        let mut r = self.read_faults.lock();
        let hit_range = r.ranges.iter().any(|x| x.start < end && offset < x.end);
        let hit_prob = r.prob > 0.0 && self.read_rng.lock().random::<f64>() < r.prob;
        if hit_range || hit_prob {
            r.errors += 1;
            return Err(DeviceError::Io(std::io::Error::other(format!(
                "injected read error at byte {offset} (+{len})"
            ))));
        }
        Ok(())
    }

    /// Where a (non-crashing) write call lands: its offset, another one (misdirected), or
    /// nowhere (None: lost, acknowledged but never stored).
    fn redirect(&self, st: &mut State, offset: u64, len: usize) -> Result<Option<u64>> {
        match Self::write_fault(st, offset, len as u64) {
            Some(None) => {
                st.stats.lost_writes += 1;
                self.host_written.fetch_add(len as u64, Relaxed);
                Ok(None)
            }
            Some(Some(to)) => {
                check_io(self.geometry(), to, len)?;
                st.stats.misdirected_writes += 1;
                Ok(Some(to))
            }
            None => Ok(Some(offset)),
        }
    }

    /// Armed lost / misdirected write for this call, if any: Some(None) = lose it,
    /// Some(Some(to)) = store it at `to`.
    fn write_fault(st: &mut State, offset: u64, len: u64) -> Option<Option<u64>> {
        let end = offset + len;
        if let Some(a) = st
            .armed
            .iter_mut()
            .find(|a| a.left > 0 && a.range.start < end && offset < a.range.end)
        {
            a.left -= 1;
            let r = a.redirect;
            st.armed.retain(|a| a.left > 0);
            return Some(r);
        }
        if st.lost_write_prob > 0.0 && st.rng.random::<f64>() < st.lost_write_prob {
            return Some(None);
        }
        None
    }

    /// Write pointers of a zoned device (None if it is not zoned or cannot report zones).
    fn load_zone_wps(inner: &D) -> Option<Vec<u64>> {
        inner.geometry().zone_size?;
        Some(
            inner
                .zone_report()
                .ok()?
                .iter()
                .map(|z| z.write_pointer)
                .collect(),
        )
    }

    /// Zoned: the shadow write pointers after a reset or trim reached the inner device: the
    /// inner pointers, advanced past the blocks still unflushed in the overlay. (Reloading
    /// the inner pointers alone forgot the unflushed appends of every other zone, so a later
    /// flush moved the device's pointer past the shadow one; found by nowa-vopr, seed 23.)
    fn reload_zone_wps(&self, st: &mut State) {
        if st.zone_wps.is_none() {
            return;
        }
        let mut wps = Self::load_zone_wps(&self.inner);
        if let Some(wps) = wps.as_mut() {
            let zs = self.zone_size();
            for &off in st.overlay.keys() {
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "a zone index is below the zone count, a usize"
                )]
                let z = (off / zs) as usize;
                wps[z] = wps[z].max(off + BLOCK_SIZE as u64);
                assert!(
                    wps[z] <= (z as u64 + 1) * zs,
                    "an unflushed block of zone {z} lies inside the zone"
                );
            }
        }
        st.zone_wps = wps;
    }

    fn zone_size(&self) -> u64 {
        self.inner.geometry().zone_size.unwrap_or(u64::MAX)
    }

    /// Resolve the overlay against the inner device and go offline. Inner I/O errors are
    /// ignored: the device is dying anyway and the outcome is whatever reached the media.
    fn lose_power(&self, st: &mut State) {
        let overlay = std::mem::take(&mut st.overlay);
        let before = st.stats.blocks_kept + st.stats.blocks_dropped + st.stats.blocks_torn;
        let unflushed = overlay.len() as u64;
        let zoned = st.zone_wps.is_some();
        let zs = self.zone_size();
        // Zoned: once a block of a zone is lost, the zone's later blocks are lost too.
        let mut dead_zone = u64::MAX;
        for (off, p) in overlay {
            if zoned && off / zs == dead_zone {
                st.stats.blocks_dropped += 1;
                continue;
            }
            let done = st.persisted.as_ref().map(|f| f(off));
            let r: f64 = st.rng.random();
            let outcome = if done == Some(true) {
                self.inner
                    .write_at_hinted(off, &p.data[..], p.placement)
                    .is_ok()
                    .then_some(false)
            } else if r < self.cfg.torn_write_prob {
                let keep = st.rng.random_range(1..SECTORS);
                self.tear_into_inner(off, &p.data[..], keep, p.placement)
                    .then_some(true)
            } else if done.is_none() && st.rng.random::<f64>() < st.keep_prob {
                self.inner
                    .write_at_hinted(off, &p.data[..], p.placement)
                    .is_ok()
                    .then_some(false)
            } else {
                None
            };
            match outcome {
                Some(true) => st.stats.blocks_torn += 1,
                Some(false) => st.stats.blocks_kept += 1,
                None => st.stats.blocks_dropped += 1,
            }
            // A torn block ends its zone's surviving prefix as well.
            if zoned && outcome != Some(false) {
                dead_zone = off / zs;
            }
        }
        // Every unflushed block got exactly one outcome.
        assert_eq!(
            st.stats.blocks_kept + st.stats.blocks_dropped + st.stats.blocks_torn,
            before + unflushed
        );
        let _ = self.inner.flush();
        st.powered_off = true;
        st.crash_in = None;
        st.stats.power_losses += 1;
    }

    /// Write the first `sectors` 512-byte sectors of `new` over the inner block at `off`.
    /// False if the inner device refused (e.g. not at a zone's write pointer).
    fn tear_into_inner(
        &self,
        off: u64,
        new: &[u8],
        sectors: usize,
        placement: Option<u16>,
    ) -> bool {
        assert!(
            (1..SECTORS).contains(&sectors) && new.len() == BLOCK_SIZE,
            "a torn block keeps 1..{SECTORS} sectors of one block"
        );
        let mut blk = vec![0u8; BLOCK_SIZE];
        if self.inner.read_at(off, &mut blk).is_err() {
            return false;
        }
        blk[..sectors * SECTOR_SIZE].copy_from_slice(&new[..sectors * SECTOR_SIZE]);
        self.inner.write_at_hinted(off, &blk, placement).is_ok()
    }

    /// Zoned: check the sequential rule and the open-zone limit against the shadow pointers.
    fn check_zone_write(&self, st: &State, offset: u64, len: u64) -> Result<()> {
        let Some(wps) = &st.zone_wps else {
            return Ok(());
        };
        let zs = self.zone_size();
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a zone index is below the zone count, a usize"
        )]
        let z = (offset / zs) as usize;
        let (start, wp) = (z as u64 * zs, wps[z]);
        if offset != wp {
            return Err(DeviceError::NotAtWritePointer {
                offset,
                zone: z as u64,
                write_pointer: wp,
            });
        }
        if offset + len > start + zs {
            return Err(DeviceError::CrossesZoneEnd {
                offset,
                len,
                zone: z as u64,
                zone_size: zs,
            });
        }
        if wp == start {
            if let Some(max) = self.inner.geometry().max_open_zones {
                // A zone filled in the overlay is full, as on a drive with a volatile
                // cache; `flush` writes the runs that fill a zone first, so the inner device
                // never has more zones open than this count (nowa-vopr seed 23).
                let open = wps
                    .iter()
                    .enumerate()
                    .filter(|&(i, &w)| {
                        let (zst, zend) = (i as u64 * zs, (i as u64 + 1) * zs);
                        w > zst && w < zend
                    })
                    .count();
                if open >= max as usize {
                    return Err(DeviceError::TooManyOpenZones {
                        zone: z as u64,
                        max_open: max,
                    });
                }
            }
        }
        Ok(())
    }

    /// One write call (already checked): overlay it, or crash if this is the armed one.
    fn write_one(
        &self,
        st: &mut State,
        offset: u64,
        buf: &[u8],
        placement: Option<u16>,
    ) -> Result<()> {
        if st.powered_off {
            return Err(DeviceError::PoweredOff);
        }
        self.check_zone_write(st, offset, buf.len() as u64)?;
        self.writes_issued.fetch_add(1, Relaxed);
        let crash = match st.crash_in.as_mut() {
            Some(n) if *n <= 1 => true,
            Some(n) => {
                *n -= 1;
                false
            }
            None => false,
        };
        let offset = if crash {
            offset
        } else {
            match self.redirect(st, offset, buf.len())? {
                Some(to) => to,
                None => return Ok(()),
            }
        };
        let blocks = buf.len() / BLOCK_SIZE;
        // At a crash a random prefix of the write's blocks reached the volatile cache.
        let reached = if crash {
            st.rng.random_range(0..=blocks)
        } else {
            blocks
        };
        for (i, chunk) in buf.chunks_exact(BLOCK_SIZE).take(reached).enumerate() {
            let mut data: Box<[u8; BLOCK_SIZE]> = Box::new([0; BLOCK_SIZE]);
            data.copy_from_slice(chunk);
            st.overlay.insert(
                offset + (i * BLOCK_SIZE) as u64,
                Pending { data, placement },
            );
        }
        if !crash {
            if let Some(wps) = st.zone_wps.as_mut() {
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "a zone index is below the zone count, a usize"
                )]
                let z = (offset / self.zone_size()) as usize;
                wps[z] += buf.len() as u64;
            }
            self.host_written.fetch_add(buf.len() as u64, Relaxed);
            return Ok(());
        }
        self.crash_now(st, offset, buf, reached, placement);
        Err(DeviceError::PoweredOff)
    }

    /// The armed crash hits a write whose first `reached` blocks reached the cache: power
    /// off; the block being transferred is torn against what survived, or lost.
    fn crash_now(
        &self,
        st: &mut State,
        offset: u64,
        buf: &[u8],
        reached: usize,
        placement: Option<u16>,
    ) {
        self.lose_power(st);
        if reached < buf.len() / BLOCK_SIZE {
            let r: f64 = st.rng.random();
            let torn = r < self.cfg.torn_write_prob && {
                let keep = st.rng.random_range(1..SECTORS);
                let off = offset + (reached * BLOCK_SIZE) as u64;
                let blk = &buf[reached * BLOCK_SIZE..(reached + 1) * BLOCK_SIZE];
                self.tear_into_inner(off, blk, keep, placement)
            };
            if torn {
                // The device is dying: the tear is whatever reached the media.
                let _ = self.inner.flush();
                st.stats.blocks_torn += 1;
            } else {
                st.stats.blocks_dropped += 1;
            }
        }
        if st.zone_wps.is_some() {
            st.zone_wps = Self::load_zone_wps(&self.inner);
        }
    }

    fn maybe_flip(&self, buf: &mut [u8]) {
        if self.cfg.bit_flip_read_prob <= 0.0 || buf.is_empty() {
            return;
        }
        let mut rng = self.read_rng.lock();
        if rng.random::<f64>() < self.cfg.bit_flip_read_prob {
            let bit = rng.random_range(0..buf.len() * 8);
            buf[bit / 8] ^= 1 << (bit % 8);
            self.bit_flips.fetch_add(1, Relaxed);
        }
    }

    fn read_visible(&self, st: &State, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read_at(offset, buf)?;
        let end = offset + buf.len() as u64;
        for (&off, p) in st.overlay.range(offset..end) {
            #[expect(
                clippy::cast_possible_truncation,
                reason = "an offset inside one request buffer, a usize"
            )]
            let i = (off - offset) as usize;
            buf[i..i + BLOCK_SIZE].copy_from_slice(&p.data[..]);
        }
        Ok(())
    }
}

impl<D: BlockDevice> BlockDevice for FaultyDevice<D> {
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_io(self.geometry(), offset, buf.len())?;
        self.read_fault(offset, buf.len())?;
        {
            let st = self.state.read();
            if st.powered_off {
                return Err(DeviceError::PoweredOff);
            }
            self.read_visible(&st, offset, buf)?;
        }
        self.host_read.fetch_add(buf.len() as u64, Relaxed);
        self.maybe_flip(buf);
        Ok(())
    }

    fn write_at_hinted(&self, offset: u64, buf: &[u8], placement: Option<u16>) -> Result<()> {
        check_io(self.geometry(), offset, buf.len())?;
        let mut st = self.state.write();
        self.write_one(&mut st, offset, buf, placement)
    }

    fn write_batch(&self, writes: &[(u64, &[u8])], placement: Option<u16>) -> Result<()> {
        for (off, buf) in writes {
            check_io(self.geometry(), *off, buf.len())?;
        }
        let mut st = self.state.write();
        for (off, buf) in writes {
            self.write_one(&mut st, *off, buf, placement)?;
        }
        Ok(())
    }

    fn read_batch(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        for (off, buf) in reads.iter() {
            check_io(self.geometry(), *off, buf.len())?;
            self.read_fault(*off, buf.len())?;
        }
        {
            let st = self.state.read();
            if st.powered_off {
                return Err(DeviceError::PoweredOff);
            }
            self.inner.read_batch(reads)?;
            for (offset, buf) in reads.iter_mut() {
                let end = *offset + buf.len() as u64;
                for (&off, p) in st.overlay.range(*offset..end) {
                    #[expect(
                        clippy::cast_possible_truncation,
                        reason = "an offset inside one request buffer, a usize"
                    )]
                    let i = (off - *offset) as usize;
                    buf[i..i + BLOCK_SIZE].copy_from_slice(&p.data[..]);
                }
            }
        }
        for (_, buf) in reads.iter_mut() {
            self.host_read.fetch_add(buf.len() as u64, Relaxed);
            self.maybe_flip(buf);
        }
        Ok(())
    }

    /// Write the overlay to the inner device (contiguous runs with the same placement as one
    /// write, split at zone boundaries) and flush it. Runs that reached the inner device leave
    /// the overlay even if a later one fails.
    fn flush(&self) -> Result<()> {
        let mut st = self.state.write();
        if st.powered_off {
            return Err(DeviceError::PoweredOff);
        }
        let zs = self.zone_size();
        let mut runs: Vec<(u64, Option<u16>, Vec<u8>)> = Vec::new();
        for (&off, p) in &st.overlay {
            match runs.last_mut() {
                Some((start, pl, data))
                    if *pl == p.placement && *start + data.len() as u64 == off && off % zs != 0 =>
                {
                    data.extend_from_slice(&p.data[..])
                }
                _ => runs.push((off, p.placement, p.data.to_vec())),
            }
        }
        if st.zone_wps.is_some() {
            // Runs that fill their zone first: they close zones before others open any.
            runs.sort_by_key(|(off, _, data)| (off + data.len() as u64) % zs != 0);
            assert!(
                runs.iter()
                    .all(|(off, _, d)| off / zs == (off + d.len() as u64 - 1) / zs),
                "runs are split at zone boundaries"
            );
        }
        for (off, pl, data) in &runs {
            self.inner.write_at_hinted(*off, data, *pl)?;
            for k in (*off..*off + data.len() as u64).step_by(BLOCK_SIZE) {
                st.overlay.remove(&k);
            }
        }
        self.inner.flush()?;
        self.flushes.fetch_add(1, Relaxed);
        Ok(())
    }

    fn trim(&self, offset: u64, len: u64) -> Result<()> {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a request length fits memory, a usize"
        )]
        check_io(self.geometry(), offset, len as usize)?;
        let mut st = self.state.write();
        if st.powered_off {
            return Err(DeviceError::PoweredOff);
        }
        self.trim_blocks(&mut st, offset, len)?;
        // Trimmed data is unspecified afterwards: dropping the cached copies is allowed.
        Self::forget(&mut st, offset, len);
        self.reload_zone_wps(&mut st);
        self.trimmed.fetch_add(len, Relaxed);
        Ok(())
    }

    /// Append through the overlay: the offset comes from the shadow write pointer.
    fn zone_append(&self, zone_start: u64, buf: &[u8]) -> Result<u64> {
        let mut st = self.state.write();
        if st.powered_off {
            return Err(DeviceError::PoweredOff);
        }
        let Some(wps) = &st.zone_wps else {
            return self.inner.zone_append(zone_start, buf);
        };
        let zs = self.zone_size();
        if zone_start % zs != 0 || zone_start >= self.geometry().capacity {
            return Err(DeviceError::NotZoneStart {
                offset: zone_start,
                zone_size: zs,
                capacity: self.geometry().capacity,
            });
        }
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a zone index is below the zone count, a usize"
        )]
        let offset = wps[(zone_start / zs) as usize];
        check_io(self.geometry(), offset, buf.len())?;
        if offset + buf.len() as u64 > zone_start + zs {
            return Err(DeviceError::CrossesZoneEnd {
                offset,
                len: buf.len() as u64,
                zone: zone_start / zs,
                zone_size: zs,
            });
        }
        self.write_one(&mut st, offset, buf, None)?;
        Ok(offset)
    }

    fn zone_reset(&self, zone_start: u64) -> Result<()> {
        let mut st = self.state.write();
        if st.powered_off {
            return Err(DeviceError::PoweredOff);
        }
        self.inner.zone_reset(zone_start)?;
        Self::forget(&mut st, zone_start, self.zone_size());
        self.reload_zone_wps(&mut st);
        Ok(())
    }

    /// The inner report with write pointers advanced by unflushed data.
    fn zone_report(&self) -> Result<Vec<ZoneInfo>> {
        let st = self.state.read();
        if st.powered_off {
            return Err(DeviceError::PoweredOff);
        }
        let mut rep = self.inner.zone_report()?;
        if let Some(wps) = &st.zone_wps {
            let zs = self.zone_size();
            for (z, &wp) in rep.iter_mut().zip(wps) {
                z.write_pointer = wp;
                z.state = if wp == z.start {
                    ZoneState::Empty
                } else if wp >= z.start + zs {
                    ZoneState::Full
                } else {
                    ZoneState::Open
                };
            }
        }
        Ok(rep)
    }

    /// Host bytes/reads/flushes as seen at this layer; media bytes from the inner device (which
    /// only sees flushed or surviving writes).
    fn counters(&self) -> DeviceCounters {
        DeviceCounters {
            host_bytes_written: self.host_written.load(Relaxed),
            media_bytes_written: self.inner.counters().media_bytes_written,
            host_bytes_read: self.host_read.load(Relaxed),
            trimmed_bytes: self.trimmed.load(Relaxed),
            flushes: self.flushes.load(Relaxed),
        }
    }

    fn buffer_alignment(&self) -> usize {
        self.inner.buffer_alignment()
    }
}

impl<D: BlockDevice> FaultyDevice<D> {
    /// Apply a TRIM to the inner device as the [`TrimMode`] says.
    fn trim_blocks(&self, st: &mut State, offset: u64, len: u64) -> Result<()> {
        let zero = [0u8; BLOCK_SIZE];
        let blocks = len / BLOCK_SIZE as u64;
        assert!(
            offset % BLOCK_SIZE as u64 == 0 && len == blocks * BLOCK_SIZE as u64,
            "trim of whole blocks (checked by check_io)"
        );
        match st.trim_mode {
            TrimMode::Inner => self.inner.trim(offset, len)?,
            TrimMode::Keep => st.stats.trimmed_kept += blocks,
            TrimMode::Zero => {
                self.inner.trim(offset, len)?;
                for b in 0..blocks {
                    self.inner.write_at(offset + b * BLOCK_SIZE as u64, &zero)?;
                }
                st.stats.trimmed_zeroed += blocks;
            }
            TrimMode::Random => {
                for b in 0..blocks {
                    if st.rng.random::<bool>() {
                        self.inner.write_at(offset + b * BLOCK_SIZE as u64, &zero)?;
                        st.stats.trimmed_zeroed += 1;
                    } else {
                        st.stats.trimmed_kept += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Drop unflushed blocks in `[offset, offset + len)`.
    fn forget(st: &mut State, offset: u64, len: u64) {
        let keys: Vec<u64> = st
            .overlay
            .range(offset..offset.saturating_add(len))
            .map(|(&k, _)| k)
            .collect();
        for k in keys {
            st.overlay.remove(&k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemDevice;

    #[test]
    fn overlay_visible_then_flushed() {
        let d = FaultyDevice::new(MemDevice::new(1 << 20), FaultConfig::default());
        d.write_at(4096, &[5u8; 8192]).unwrap();
        assert_eq!(d.unflushed_blocks(), 2);
        let mut b = vec![0u8; 12288];
        d.read_at(0, &mut b).unwrap();
        assert!(b[..4096].iter().all(|&x| x == 0) && b[4096..].iter().all(|&x| x == 5));
        // Not yet on the inner device.
        d.inner().read_at(4096, &mut b[..4096]).unwrap();
        assert!(b[..4096].iter().all(|&x| x == 0));
        d.flush().unwrap();
        assert_eq!(d.unflushed_blocks(), 0);
        d.inner().read_at(4096, &mut b[..4096]).unwrap();
        assert!(b[..4096].iter().all(|&x| x == 5));
        assert_eq!(d.writes_issued(), 1);
    }

    /// Out-of-order destaging: at a power loss exactly the blocks the oracle calls persisted
    /// survive (a later write without an earlier one), whatever the keep probability.
    #[test]
    fn persisted_blocks_survive_a_power_loss_out_of_order() {
        let d = FaultyDevice::new(MemDevice::new(1 << 20), FaultConfig::default());
        d.set_keep_prob(1.0);
        d.set_persisted(Some(std::sync::Arc::new(|off| off == 3 * 4096)));
        for b in 0..4u8 {
            d.write_at(u64::from(b) * 4096, &[b + 1; 4096]).unwrap();
        }
        d.power_loss();
        d.restart();
        let mut buf = vec![0u8; 4096];
        for b in 0..4u8 {
            d.read_at(u64::from(b) * 4096, &mut buf).unwrap();
            let want = if b == 3 { 4 } else { 0 };
            assert!(buf.iter().all(|&x| x == want), "block {b}");
        }
        let s = d.fault_stats();
        assert_eq!((s.blocks_kept, s.blocks_dropped), (1, 3));
    }

    #[test]
    fn lost_misdirected_writes_and_read_errors() {
        let d = FaultyDevice::new(MemDevice::new(1 << 20), FaultConfig::default());
        d.write_at(0, &[1u8; 4096]).unwrap();
        d.lose_writes(0..4096, 1);
        d.write_at(0, &[2u8; 4096]).unwrap();
        let mut b = vec![0u8; 4096];
        d.read_at(0, &mut b).unwrap();
        assert!(b.iter().all(|&x| x == 1), "the lost write never landed");
        d.misdirect_writes(0..4096, 1, 8192);
        d.write_at(0, &[3u8; 4096]).unwrap();
        d.read_at(8192, &mut b).unwrap();
        assert!(b.iter().all(|&x| x == 3), "misdirected to block 2");
        d.read_at(0, &mut b).unwrap();
        assert!(b.iter().all(|&x| x == 1));
        d.fail_reads(4096..8192);
        assert!(d.read_at(0, &mut b).is_ok());
        assert!(matches!(d.read_at(4096, &mut b), Err(DeviceError::Io(_))));
        d.clear_read_faults();
        d.read_at(4096, &mut b).unwrap();
        let s = d.fault_stats();
        assert_eq!(
            (s.lost_writes, s.misdirected_writes, s.read_errors),
            (1, 1, 1)
        );
    }

    #[test]
    fn trim_modes() {
        for (mode, zeroed) in [(TrimMode::Zero, true), (TrimMode::Keep, false)] {
            let d = FaultyDevice::new(MemDevice::new(1 << 20), FaultConfig::default());
            d.set_trim_mode(mode);
            d.write_at(0, &[7u8; 8192]).unwrap();
            d.flush().unwrap();
            d.trim(0, 8192).unwrap();
            let mut b = vec![0u8; 8192];
            d.read_at(0, &mut b).unwrap();
            assert_eq!(b.iter().all(|&x| x == 0), zeroed, "{mode:?}");
            assert_eq!(b.iter().all(|&x| x == 7), !zeroed, "{mode:?}");
        }
        let d = FaultyDevice::new(MemDevice::new(1 << 20), FaultConfig::default());
        d.set_trim_mode(TrimMode::Random);
        d.write_at(0, &[7u8; 64 * 4096]).unwrap();
        d.flush().unwrap();
        d.trim(0, 64 * 4096).unwrap();
        let s = d.fault_stats();
        assert_eq!(s.trimmed_zeroed + s.trimmed_kept, 64);
        assert!(s.trimmed_zeroed > 0 && s.trimmed_kept > 0);
    }

    /// A zone reset must not forget another zone's unflushed appends (nowa-vopr seed 23).
    #[test]
    fn zone_reset_keeps_unflushed_appends_of_other_zones() {
        use crate::{SimDevice, SimMode};
        let sim =
            SimDevice::with_capacity(16 << 20, 0.0, SimMode::Zoned { max_open_zones: 4 }).unwrap();
        let zs = sim.geometry().zone_size.unwrap();
        let d = FaultyDevice::new(sim, FaultConfig::default());
        d.zone_append(zs, &[1u8; 4096]).unwrap();
        d.flush().unwrap();
        d.zone_append(0, &[2u8; 8192]).unwrap();
        d.zone_reset(zs).unwrap();
        assert_eq!(d.zone_report().unwrap()[0].write_pointer, 8192);
        d.flush().unwrap();
        let (shadow, inner) = (d.zone_report().unwrap(), d.inner().zone_report().unwrap());
        assert_eq!(shadow, inner);
        assert_eq!(d.zone_append(0, &[3u8; 4096]).unwrap(), 8192);
        d.flush().unwrap();
    }

    /// A zone filled in the cache is full: another zone may open, and the flush fills the
    /// full zone first, within the inner open-zone limit (nowa-vopr seed 23).
    #[test]
    fn a_zone_filled_in_the_cache_is_not_open() {
        use crate::{SimDevice, SimMode};
        let sim =
            SimDevice::with_capacity(16 << 20, 0.0, SimMode::Zoned { max_open_zones: 2 }).unwrap();
        let zs = sim.geometry().zone_size.unwrap();
        let d = FaultyDevice::new(sim, FaultConfig::default());
        d.zone_append(0, &[1u8; 4096]).unwrap();
        d.zone_append(zs, &[1u8; 4096]).unwrap();
        d.flush().unwrap();
        let rest = vec![2u8; usize::try_from(zs).unwrap() - 4096];
        d.zone_append(zs, &rest).unwrap();
        d.zone_append(2 * zs, &[3u8; 4096]).unwrap();
        assert!(
            d.zone_append(3 * zs, &[3u8; 4096]).is_err(),
            "two zones open"
        );
        d.flush().unwrap();
        assert_eq!(d.zone_report().unwrap(), d.inner().zone_report().unwrap());
    }

    #[test]
    fn crash_after_zero_is_immediate() {
        let d = FaultyDevice::new(MemDevice::new(1 << 20), FaultConfig::default());
        d.crash_after_writes(0);
        assert!(d.is_powered_off());
        assert!(matches!(d.flush(), Err(DeviceError::PoweredOff)));
        d.restart();
        d.flush().unwrap();
    }
}
