//! [`SimDevice`]: a simulated SSD that stores data in memory and drives the FTL model of
//! `nowa-flash` with every write and trim, so the engine runs on it unchanged while we read
//! media writes (device WAF) off it like off an OCP SMART log page.
//!
//! Three flavours ([`SimMode`]): conventional (CNS, the FTL does GC), FDP (placement hints pick
//! the FTL stream = reclaim-unit handle) and ZNS (zones = FTL units, sequential writes, host
//! resets).

use crate::{
    check_io, BlockDevice, DeviceCounters, DeviceError, Geometry, Result, ZoneInfo, ZoneState,
    BLOCK_SIZE,
};
use nowa_flash::{Counters, FlashError, Ftl, FtlConfig, GcFrontier, Layout, Mode};
use parking_lot::{Mutex, RwLock};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The interface the simulated SSD shows the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum SimMode {
    /// Conventional namespace: one write stream, placement hints ignored.
    Conventional,
    /// Flexible Data Placement: `handles` reclaim-unit handles (FTL streams); the write's
    /// placement hint selects the handle (none = handle 0).
    Fdp { handles: u16 },
    /// Zoned namespace: zone = FTL unit, at most `max_open_zones` open zones.
    Zoned { max_open_zones: u32 },
}

/// Configuration of a [`SimDevice`]: the host interface plus the FTL underneath.
/// `ftl.streams` and `ftl.mode` are derived from `mode` when the device is built.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub mode: SimMode,
    pub ftl: FtlConfig,
}

impl SimConfig {
    pub fn new(mode: SimMode, ftl: FtlConfig) -> Self {
        SimConfig { mode, ftl }
    }

    /// A device of about `capacity` bytes with over-provisioning `op` (spare/logical; ignored
    /// for ZNS). Picks the largest unit (superblock / zone) up to 8 MiB that the FTL accepts for
    /// this size, so small test devices work. FDP keeps GC copies per handle
    /// ([`GcFrontier::PerStream`]), i.e. persistently isolated handles.
    pub fn for_capacity(capacity: u64, op: f64, mode: SimMode) -> Result<SimConfig> {
        let logical_pages = capacity / BLOCK_SIZE as u64;
        let mut last = String::from("capacity too small");
        for (ppb, bps) in [
            (256, 8),
            (256, 4),
            (256, 2),
            (256, 1),
            (128, 1),
            (64, 1),
            (32, 1),
            (16, 1),
            (8, 1),
            (4, 1),
        ] {
            let mut ftl = FtlConfig {
                logical_pages,
                op,
                pages_per_block: ppb,
                blocks_per_superblock: bps,
                gc_frontier: matches!(mode, SimMode::Fdp { .. }).then_some(GcFrontier::PerStream),
                ..FtlConfig::default()
            };
            let cfg = SimConfig {
                mode,
                ftl: ftl.clone(),
            };
            ftl = cfg.resolved_ftl();
            // ZNS: want at least 16 zones so the host has room to place data.
            if matches!(mode, SimMode::Zoned { .. }) && logical_pages / ftl.unit_pages() < 16 {
                continue;
            }
            match ftl.layout() {
                Ok(_) => return Ok(cfg),
                Err(e) => last = e.to_string(),
            }
        }
        Err(DeviceError::Config(format!(
            "no FTL geometry fits {capacity} bytes: {last}"
        )))
    }

    /// The FTL configuration with streams and mode set from [`SimConfig::mode`].
    pub fn resolved_ftl(&self) -> FtlConfig {
        let mut f = self.ftl.clone();
        match self.mode {
            SimMode::Conventional => {
                f.streams = 1;
                f.mode = Mode::Conventional;
            }
            SimMode::Fdp { handles } => {
                f.streams = handles;
                f.mode = Mode::Conventional;
            }
            SimMode::Zoned { max_open_zones } => {
                f.streams = 1;
                f.mode = Mode::Zoned { max_open_zones };
            }
        }
        f
    }
}

type Page = [u8; BLOCK_SIZE];
/// Pages per lock stripe (1 MiB): readers of different stripes never contend.
const STRIPE_PAGES: usize = 256;

/// Sparse page store: 8 bytes per absent page, 4 KiB (+ allocator header) per present one.
struct PageStore {
    stripes: Vec<RwLock<Vec<Option<Box<Page>>>>>,
    present: AtomicU64,
}

impl PageStore {
    fn new(pages: u64) -> Self {
        let n = (pages as usize).div_ceil(STRIPE_PAGES);
        PageStore {
            stripes: (0..n).map(|_| RwLock::new(Vec::new())).collect(),
            present: AtomicU64::new(0),
        }
    }

    fn read(&self, first: u64, buf: &mut [u8]) {
        for (i, dst) in buf.chunks_exact_mut(BLOCK_SIZE).enumerate() {
            let p = first as usize + i;
            let s = self.stripes[p / STRIPE_PAGES].read();
            match s.get(p % STRIPE_PAGES).and_then(|x| x.as_deref()) {
                Some(page) => dst.copy_from_slice(page),
                None => dst.fill(0),
            }
        }
    }

    fn write(&self, first: u64, buf: &[u8]) {
        for (i, src) in buf.chunks_exact(BLOCK_SIZE).enumerate() {
            let p = first as usize + i;
            let mut s = self.stripes[p / STRIPE_PAGES].write();
            if s.is_empty() {
                s.resize_with(STRIPE_PAGES, || None);
            }
            match &mut s[p % STRIPE_PAGES] {
                Some(page) => page.copy_from_slice(src),
                slot @ None => {
                    let mut page: Box<Page> = Box::new([0; BLOCK_SIZE]);
                    page.copy_from_slice(src);
                    *slot = Some(page);
                    self.present.fetch_add(1, Relaxed);
                }
            }
        }
    }

    fn drop_range(&self, first: u64, n: u64) {
        for p in first as usize..(first + n) as usize {
            let mut s = self.stripes[p / STRIPE_PAGES].write();
            if let Some(slot) = s.get_mut(p % STRIPE_PAGES) {
                if slot.take().is_some() {
                    self.present.fetch_sub(1, Relaxed);
                }
            }
        }
    }

    fn memory_bytes(&self) -> u64 {
        let slots: usize = self.stripes.iter().map(|s| s.read().capacity()).sum();
        self.present.load(Relaxed) * BLOCK_SIZE as u64
            + (slots * std::mem::size_of::<Option<Box<Page>>>()) as u64
            + (self.stripes.len() * std::mem::size_of::<RwLock<Vec<Option<Box<Page>>>>>()) as u64
    }
}

/// A simulated SSD that stores data and counts media writes through the FTL model.
///
/// Writes take the FTL lock for the FTL update *and* the data copy, so the zone write pointer
/// and the stored data never disagree; reads only take page-store stripe locks.
pub struct SimDevice {
    cfg: SimConfig,
    geo: Geometry,
    layout: Layout,
    ftl: Mutex<Ftl>,
    store: PageStore,
    zone_pages: u64,
    host_written: AtomicU64,
    host_read: AtomicU64,
    trimmed: AtomicU64,
    flushes: AtomicU64,
}

fn map_flash(e: FlashError) -> DeviceError {
    match e {
        FlashError::ZoneViolation { .. } | FlashError::TooManyOpenZones { .. } => {
            DeviceError::Zone(e.to_string())
        }
        FlashError::Unsupported(s) => DeviceError::Unsupported(s),
        FlashError::Config(m) => DeviceError::Config(m.to_string()),
        FlashError::BadStream { .. } => DeviceError::Config(e.to_string()),
        FlashError::DeviceFull => DeviceError::Io(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            e.to_string(),
        )),
        FlashError::LbaOutOfRange { .. } => DeviceError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            e.to_string(),
        )),
        _ => DeviceError::Config(e.to_string()),
    }
}

impl SimDevice {
    pub fn new(cfg: SimConfig) -> Result<Self> {
        if let SimMode::Fdp { handles: 0 } = cfg.mode {
            return Err(DeviceError::Config(
                "FDP needs at least one reclaim-unit handle".into(),
            ));
        }
        let ftl = Ftl::new(cfg.resolved_ftl()).map_err(map_flash)?;
        let layout = ftl.layout().clone();
        let unit_bytes = layout.unit_pages as u64 * BLOCK_SIZE as u64;
        let mut geo = Geometry::conventional(layout.logical_pages * BLOCK_SIZE as u64);
        match cfg.mode {
            SimMode::Conventional => {}
            SimMode::Fdp { handles } => {
                geo.placement_handles = Some(handles);
                geo.reclaim_unit_size = Some(unit_bytes);
            }
            SimMode::Zoned { max_open_zones } => {
                geo.zone_size = Some(unit_bytes);
                geo.max_open_zones = Some(max_open_zones);
            }
        }
        Ok(SimDevice {
            store: PageStore::new(layout.logical_pages),
            zone_pages: layout.unit_pages as u64,
            geo,
            layout,
            ftl: Mutex::new(ftl),
            cfg,
            host_written: AtomicU64::new(0),
            host_read: AtomicU64::new(0),
            trimmed: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
        })
    }

    /// Shorthand for `SimDevice::new(SimConfig::for_capacity(capacity, op, mode)?)`.
    pub fn with_capacity(capacity: u64, op: f64, mode: SimMode) -> Result<Self> {
        Self::new(SimConfig::for_capacity(capacity, op, mode)?)
    }

    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }
    pub fn mode(&self) -> SimMode {
        self.cfg.mode
    }
    /// The FTL's resolved geometry (units, OP, frontiers).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The FTL's page counters (host, media, GC copies, erases...).
    pub fn ftl_counters(&self) -> Counters {
        self.ftl.lock().counters()
    }
    /// Run `f` on the FTL (invariant checks, histograms). Holds the device's write lock.
    pub fn with_ftl<R>(&self, f: impl FnOnce(&Ftl) -> R) -> R {
        f(&self.ftl.lock())
    }
    /// Bytes of memory holding the stored data (pages + slot tables), excluding the FTL.
    pub fn data_memory_bytes(&self) -> u64 {
        self.store.memory_bytes()
    }
    /// Total modelled memory: data + FTL tables.
    pub fn memory_bytes(&self) -> u64 {
        self.data_memory_bytes() + self.ftl.lock().memory_bytes()
    }

    fn zone_bytes(&self) -> u64 {
        self.zone_pages * BLOCK_SIZE as u64
    }

    fn zone_index(&self, zone_start: u64) -> Result<u64> {
        if !matches!(self.cfg.mode, SimMode::Zoned { .. }) {
            return Err(DeviceError::Unsupported(
                "zone operation on a non-zoned device",
            ));
        }
        if zone_start % self.zone_bytes() != 0 || zone_start >= self.geo.capacity {
            return Err(DeviceError::Zone(format!(
                "offset {zone_start} is not the start of a zone (zone size {} bytes, capacity {})",
                self.zone_bytes(),
                self.geo.capacity
            )));
        }
        Ok(zone_start / self.zone_bytes())
    }

    /// Apply a checked write of `buf` at page `first` under the FTL lock.
    fn write_locked(
        &self,
        ftl: &mut Ftl,
        first: u64,
        buf: &[u8],
        placement: Option<u16>,
    ) -> Result<()> {
        let n = (buf.len() / BLOCK_SIZE) as u64;
        if n == 0 {
            return Ok(());
        }
        let stream = match self.cfg.mode {
            SimMode::Conventional => 0,
            SimMode::Fdp { handles } => {
                let h = placement.unwrap_or(0);
                if h >= handles {
                    return Err(DeviceError::Config(format!(
                        "placement handle {h} out of range: device has {handles} reclaim-unit handles"
                    )));
                }
                h
            }
            SimMode::Zoned { .. } => {
                let zp = self.zone_pages;
                let (z, off) = (first / zp, first % zp);
                let wp = ftl.zone_write_pointer(z).unwrap_or(0);
                if off != wp {
                    return Err(DeviceError::Zone(format!(
                        "write at byte {} (block {off} of zone {z}) but the zone's write pointer is at block {wp} \
                         (byte {}): zones must be written sequentially",
                        first * BLOCK_SIZE as u64,
                        (z * zp + wp) * BLOCK_SIZE as u64
                    )));
                }
                if off + n > zp {
                    return Err(DeviceError::Zone(format!(
                        "write of {n} blocks at block {off} of zone {z} crosses the zone end ({zp} blocks per zone)"
                    )));
                }
                0
            }
        };
        let lbas: Vec<u32> = (first..first + n).map(|l| l as u32).collect();
        ftl.write_batch(&lbas, stream).map_err(map_flash)?;
        self.store.write(first, buf);
        self.host_written.fetch_add(buf.len() as u64, Relaxed);
        Ok(())
    }
}

impl BlockDevice for SimDevice {
    fn geometry(&self) -> &Geometry {
        &self.geo
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        self.store.read(offset / BLOCK_SIZE as u64, buf);
        self.host_read.fetch_add(buf.len() as u64, Relaxed);
        Ok(())
    }

    fn write_at_hinted(&self, offset: u64, buf: &[u8], placement: Option<u16>) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        let mut ftl = self.ftl.lock();
        self.write_locked(&mut ftl, offset / BLOCK_SIZE as u64, buf, placement)
    }

    fn write_batch(&self, writes: &[(u64, &[u8])], placement: Option<u16>) -> Result<()> {
        for (off, buf) in writes {
            check_io(&self.geo, *off, buf.len())?;
        }
        let mut ftl = self.ftl.lock();
        for (off, buf) in writes {
            self.write_locked(&mut ftl, off / BLOCK_SIZE as u64, buf, placement)?;
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        // Data is "durable" as soon as it is stored; FaultyDevice models volatility.
        self.flushes.fetch_add(1, Relaxed);
        Ok(())
    }

    fn trim(&self, offset: u64, len: u64) -> Result<()> {
        check_io(&self.geo, offset, len as usize)?;
        let (first, n) = (offset / BLOCK_SIZE as u64, len / BLOCK_SIZE as u64);
        let mut ftl = self.ftl.lock();
        ftl.trim(first, n).map_err(|e| match e {
            FlashError::Unsupported(_) => DeviceError::Zone(format!(
                "trim of {len} bytes at {offset} on a zoned device: only whole zones ({} bytes) can be trimmed; use zone_reset",
                self.zone_bytes()
            )),
            e => map_flash(e),
        })?;
        self.store.drop_range(first, n);
        drop(ftl);
        self.trimmed.fetch_add(len, Relaxed);
        Ok(())
    }

    fn zone_append(&self, zone_start: u64, buf: &[u8]) -> Result<u64> {
        let z = self.zone_index(zone_start)?;
        check_io(&self.geo, zone_start, buf.len())?;
        let mut ftl = self.ftl.lock();
        let wp = ftl.zone_write_pointer(z).unwrap_or(0);
        let first = z * self.zone_pages + wp;
        if wp + (buf.len() / BLOCK_SIZE) as u64 > self.zone_pages {
            return Err(DeviceError::Zone(format!(
                "zone append of {} bytes to zone {z}: only {} bytes left before the zone end",
                buf.len(),
                (self.zone_pages - wp) * BLOCK_SIZE as u64
            )));
        }
        self.write_locked(&mut ftl, first, buf, None)?;
        Ok(first * BLOCK_SIZE as u64)
    }

    fn zone_reset(&self, zone_start: u64) -> Result<()> {
        let z = self.zone_index(zone_start)?;
        let mut ftl = self.ftl.lock();
        ftl.zone_reset(z).map_err(map_flash)?;
        self.store.drop_range(z * self.zone_pages, self.zone_pages);
        Ok(())
    }

    fn zone_report(&self) -> Result<Vec<ZoneInfo>> {
        if !matches!(self.cfg.mode, SimMode::Zoned { .. }) {
            return Err(DeviceError::Unsupported(
                "zone report on a non-zoned device",
            ));
        }
        let ftl = self.ftl.lock();
        let zb = self.zone_bytes();
        Ok((0..ftl.zone_count())
            .map(|z| {
                let wp = ftl.zone_write_pointer(z).unwrap_or(0);
                ZoneInfo {
                    start: z * zb,
                    write_pointer: z * zb + wp * BLOCK_SIZE as u64,
                    state: if wp == 0 {
                        ZoneState::Empty
                    } else if wp == self.zone_pages {
                        ZoneState::Full
                    } else {
                        ZoneState::Open
                    },
                }
            })
            .collect())
    }

    fn counters(&self) -> DeviceCounters {
        let media = self.ftl.lock().counters().media_pages * BLOCK_SIZE as u64;
        DeviceCounters {
            host_bytes_written: self.host_written.load(Relaxed),
            media_bytes_written: Some(media),
            host_bytes_read: self.host_read.load(Relaxed),
            trimmed_bytes: self.trimmed.load(Relaxed),
            flushes: self.flushes.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn for_capacity_small_and_large() {
        for cap in [4u64 << 20, 16 << 20, 64 << 20, 1 << 30] {
            for mode in [
                SimMode::Conventional,
                SimMode::Fdp { handles: 4 },
                SimMode::Zoned { max_open_zones: 4 },
            ] {
                let c = SimConfig::for_capacity(cap, 0.1, mode)
                    .unwrap_or_else(|e| panic!("{cap} {mode:?}: {e}"));
                assert!(c.resolved_ftl().layout().is_ok());
            }
        }
        assert!(SimConfig::for_capacity(4096, 0.1, SimMode::Conventional).is_err());
    }

    #[test]
    fn page_store_is_compact() {
        let d = SimDevice::with_capacity(64 << 20, 0.1, SimMode::Conventional).unwrap();
        let cap = d.geometry().capacity;
        let chunk = vec![0xabu8; 1 << 20];
        for off in (0..cap).step_by(1 << 20) {
            d.write_at(off, &chunk).unwrap();
        }
        let mem = d.data_memory_bytes();
        assert!(
            mem as f64 <= cap as f64 * 1.01,
            "data memory {mem} for capacity {cap}"
        );
        d.trim(0, cap).unwrap();
        assert!(d.data_memory_bytes() < cap / 100);
    }
}
