//! [`SimDevice`]: a simulated SSD that stores data in memory and drives the FTL model of
//! `nowa-flash` with every write and trim, so the engine runs on it unchanged while we read
//! media writes (device WAF) off it like off an OCP SMART log page.
//!
//! Three flavours ([`SimMode`]): conventional (CNS, the FTL does GC), FDP (placement hints pick
//! the FTL stream = reclaim-unit handle) and ZNS (zones = FTL units, sequential writes, host
//! resets).

use crate::{
    check_io, BlockDevice, DeviceCounters, DeviceError, Geometry, Result, ZoneInfo, ZoneState,
    BLOCK_SIZE, BLOCK_SIZE_U64,
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
    Fdp {
        /// Number of reclaim-unit handles.
        handles: u16,
    },
    /// Zoned namespace: zone = FTL unit, at most `max_open_zones` open zones.
    Zoned {
        /// Open-zone limit.
        max_open_zones: u32,
    },
}

/// Configuration of a [`SimDevice`]: the host interface plus the FTL underneath.
/// `ftl.streams` and `ftl.mode` are derived from `mode` when the device is built.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Host interface.
    pub mode: SimMode,
    /// The FTL underneath.
    pub ftl: FtlConfig,
    /// Keep the data written (reads return it). Off: only the FTL state is kept and reads
    /// return zeroes, for benchmarks that never read their data back (`nowa ssdiq`), so a
    /// large simulated SSD costs no memory for its contents.
    pub store_data: bool,
}

impl SimConfig {
    /// A device storing its data.
    #[must_use]
    pub fn new(mode: SimMode, ftl: FtlConfig) -> Self {
        SimConfig {
            mode,
            ftl,
            store_data: true,
        }
    }

    /// A device of about `capacity` bytes with over-provisioning `op` (spare/logical; ignored
    /// for ZNS). Picks the largest unit (superblock / zone) up to 8 MiB that the FTL accepts for
    /// this size, so small test devices work. FDP keeps GC copies per handle
    /// ([`GcFrontier::PerStream`]), i.e. persistently isolated handles.
    ///
    /// # Errors
    /// [`DeviceError::NoGeometry`] when no unit size fits `capacity` and `op`.
    pub fn for_capacity(capacity: u64, op: f64, mode: SimMode) -> Result<SimConfig> {
        let logical_pages = capacity / BLOCK_SIZE_U64;
        // If no unit size is even tried (all skipped), the smallest one did not fit.
        let mut last = FlashError::Config(nowa_flash::ConfigError::UnitLargerThanDevice {
            unit_pages: 4,
            logical_pages,
        });
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
            let cfg = SimConfig::new(mode, ftl.clone());
            ftl = cfg.resolved_ftl();
            // ZNS: want at least 16 zones so the host has room to place data.
            if matches!(mode, SimMode::Zoned { .. }) && logical_pages / ftl.unit_pages() < 16 {
                continue;
            }
            match ftl.layout() {
                Ok(_) => return Ok(cfg),
                Err(e) => last = FlashError::Config(e),
            }
        }
        Err(DeviceError::NoGeometry {
            capacity,
            source: last,
        })
    }

    /// The FTL configuration with streams and mode set from [`SimConfig::mode`].
    #[must_use]
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
        let n = crate::usize_of(pages).div_ceil(STRIPE_PAGES);
        PageStore {
            stripes: (0..n).map(|_| RwLock::new(Vec::new())).collect(),
            present: AtomicU64::new(0),
        }
    }

    fn read(&self, first: u64, buf: &mut [u8]) {
        assert!(buf.len() % BLOCK_SIZE == 0, "whole pages");
        for (i, dst) in buf.chunks_exact_mut(BLOCK_SIZE).enumerate() {
            let p = crate::usize_of(first) + i;
            let s = self.stripes[p / STRIPE_PAGES].read();
            match s.get(p % STRIPE_PAGES).and_then(|x| x.as_deref()) {
                Some(page) => dst.copy_from_slice(page),
                None => dst.fill(0),
            }
        }
    }

    fn write(&self, first: u64, buf: &[u8]) {
        assert!(buf.len() % BLOCK_SIZE == 0, "whole pages");
        for (i, src) in buf.chunks_exact(BLOCK_SIZE).enumerate() {
            let p = crate::usize_of(first) + i;
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
                    let before = self.present.fetch_add(1, Relaxed);
                    assert!(
                        crate::usize_of(before) < self.stripes.len() * STRIPE_PAGES,
                        "more pages present than slots"
                    );
                }
            }
        }
    }

    fn drop_range(&self, first: u64, n: u64) {
        for p in crate::usize_of(first)..crate::usize_of(first + n) {
            let mut s = self.stripes[p / STRIPE_PAGES].write();
            if let Some(slot) = s.get_mut(p % STRIPE_PAGES) {
                if slot.take().is_some() {
                    let before = self.present.fetch_sub(1, Relaxed);
                    assert!(before > 0, "present count underflow");
                }
            }
        }
    }

    fn memory_bytes(&self) -> u64 {
        let slots: usize = self.stripes.iter().map(|s| s.read().capacity()).sum();
        self.present.load(Relaxed) * BLOCK_SIZE_U64
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
    /// None when the configuration does not store data.
    store: Option<PageStore>,
    zone_pages: u64,
    host_written: AtomicU64,
    host_read: AtomicU64,
    trimmed: AtomicU64,
    flushes: AtomicU64,
}

/// Media work of one write, from the FTL's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WriteWork {
    /// Pages programmed (host pages and the GC copies they triggered).
    pub(crate) programmed: u64,
    /// Units erased.
    pub(crate) erased: u64,
}

impl SimDevice {
    /// Builds the device.
    ///
    /// # Errors
    /// [`DeviceError::SimConfig`] for FDP without handles; [`DeviceError::Flash`] when the
    /// FTL refuses the geometry.
    ///
    /// # Panics
    /// If the FTL's layout is inconsistent (a bug in `nowa-flash`).
    pub fn new(cfg: SimConfig) -> Result<Self> {
        if let SimMode::Fdp { handles: 0 } = cfg.mode {
            return Err(DeviceError::SimConfig {
                what: "FDP needs at least one reclaim-unit handle",
            });
        }
        let ftl = Ftl::new(cfg.resolved_ftl())?;
        let layout = ftl.layout().clone();
        let unit_bytes = u64::from(layout.unit_pages) * BLOCK_SIZE_U64;
        let mut geo = Geometry::conventional(layout.logical_pages * BLOCK_SIZE_U64);
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
        assert_eq!(geo.capacity % BLOCK_SIZE_U64, 0, "capacity in whole pages");
        Ok(SimDevice {
            store: cfg.store_data.then(|| PageStore::new(layout.logical_pages)),
            zone_pages: u64::from(layout.unit_pages),
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
    ///
    /// # Errors
    /// As [`SimConfig::for_capacity`] and [`SimDevice::new`].
    pub fn with_capacity(capacity: u64, op: f64, mode: SimMode) -> Result<Self> {
        Self::new(SimConfig::for_capacity(capacity, op, mode)?)
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }
    /// The host interface.
    #[must_use]
    pub fn mode(&self) -> SimMode {
        self.cfg.mode
    }
    /// The FTL's resolved geometry (units, OP, frontiers).
    #[must_use]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The FTL's page counters (host, media, GC copies, erases...).
    #[must_use]
    pub fn ftl_counters(&self) -> Counters {
        self.ftl.lock().counters()
    }
    /// Run `f` on the FTL (invariant checks, histograms). Holds the device's write lock.
    ///
    /// # Panics
    /// Only if `f` panics.
    pub fn with_ftl<R>(&self, f: impl FnOnce(&Ftl) -> R) -> R {
        f(&self.ftl.lock())
    }
    /// Bytes of memory holding the stored data (pages + slot tables), excluding the FTL.
    #[must_use]
    pub fn data_memory_bytes(&self) -> u64 {
        self.store.as_ref().map_or(0, PageStore::memory_bytes)
    }
    /// Total modelled memory: data + FTL tables.
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        self.data_memory_bytes() + self.ftl.lock().memory_bytes()
    }

    fn zone_bytes(&self) -> u64 {
        self.zone_pages * BLOCK_SIZE_U64
    }

    fn zone_index(&self, zone_start: u64) -> Result<u64> {
        if !matches!(self.cfg.mode, SimMode::Zoned { .. }) {
            return Err(DeviceError::Unsupported(
                "zone operation on a non-zoned device",
            ));
        }
        if zone_start % self.zone_bytes() != 0 || zone_start >= self.geo.capacity {
            return Err(DeviceError::NotZoneStart {
                offset: zone_start,
                zone_size: self.zone_bytes(),
                capacity: self.geo.capacity,
            });
        }
        Ok(zone_start / self.zone_bytes())
    }

    /// The FTL stream of a write of `n` pages at page `first`, after the mode's checks
    /// (FDP handle range; ZNS write pointer and zone end).
    fn stream_for(&self, ftl: &Ftl, first: u64, n: u64, placement: Option<u16>) -> Result<u16> {
        match self.cfg.mode {
            SimMode::Conventional => Ok(0),
            SimMode::Fdp { handles } => {
                let h = placement.unwrap_or(0);
                if h >= handles {
                    return Err(DeviceError::BadPlacement { handle: h, handles });
                }
                Ok(h)
            }
            SimMode::Zoned { .. } => {
                let zp = self.zone_pages;
                let (z, off) = (first / zp, first % zp);
                let wp = ftl.zone_write_pointer(z).unwrap_or(0);
                if off != wp {
                    return Err(DeviceError::NotAtWritePointer {
                        offset: first * BLOCK_SIZE_U64,
                        zone: z,
                        write_pointer: (z * zp + wp) * BLOCK_SIZE_U64,
                    });
                }
                if off + n > zp {
                    return Err(DeviceError::CrossesZoneEnd {
                        offset: first * BLOCK_SIZE_U64,
                        len: n * BLOCK_SIZE_U64,
                        zone: z,
                        zone_size: self.zone_bytes(),
                    });
                }
                Ok(0)
            }
        }
    }

    /// Apply a checked write of `buf` at page `first` under the FTL lock; returns the media
    /// work it caused.
    fn write_locked(
        &self,
        ftl: &mut Ftl,
        first: u64,
        buf: &[u8],
        placement: Option<u16>,
    ) -> Result<WriteWork> {
        let n = (buf.len() / BLOCK_SIZE) as u64;
        assert_eq!(n * BLOCK_SIZE_U64, buf.len() as u64, "checked by check_io");
        if n == 0 {
            return Ok(WriteWork::default());
        }
        let stream = self.stream_for(ftl, first, n, placement)?;
        let before = ftl.counters();
        let mut lbas = [0u32; 64];
        let mut p = first;
        while p < first + n {
            let k = (first + n - p).min(64);
            for (i, l) in lbas[..k as usize].iter_mut().enumerate() {
                // Logical pages of a simulated device fit in u32 (the FTL's l2p index type).
                *l = u32::try_from(p + i as u64).expect("page number fits the FTL's u32 index");
            }
            ftl.write_batch(&lbas[..k as usize], stream)?;
            p += k;
        }
        if let Some(store) = &self.store {
            store.write(first, buf);
        }
        self.host_written.fetch_add(buf.len() as u64, Relaxed);
        let after = ftl.counters();
        if let SimMode::Zoned { .. } = self.cfg.mode {
            // The zone write pointer moved by exactly the pages written (what zone_report and
            // zone_append rely on; checked again by zone_report).
            let z = first / self.zone_pages;
            assert_eq!(
                ftl.zone_write_pointer(z).unwrap_or(0),
                first % self.zone_pages + n,
                "zone {z} write pointer after a write of {n} pages"
            );
        }
        let w = WriteWork {
            programmed: after.media_pages - before.media_pages,
            erased: after.erases - before.erases,
        };
        assert!(
            after.host_pages - before.host_pages == n,
            "FTL counted {} host pages for a write of {n}",
            after.host_pages - before.host_pages
        );
        Ok(w)
    }

    /// A checked write at byte `offset` returning its media work (for the timed queue).
    pub(crate) fn write_work(&self, offset: u64, buf: &[u8]) -> Result<WriteWork> {
        check_io(&self.geo, offset, buf.len())?;
        let mut ftl = self.ftl.lock();
        self.write_locked(&mut ftl, offset / BLOCK_SIZE_U64, buf, None)
    }
}

impl BlockDevice for SimDevice {
    fn geometry(&self) -> &Geometry {
        &self.geo
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        match &self.store {
            Some(store) => store.read(offset / BLOCK_SIZE_U64, buf),
            None => buf.fill(0),
        }
        self.host_read.fetch_add(buf.len() as u64, Relaxed);
        Ok(())
    }

    fn write_at_hinted(&self, offset: u64, buf: &[u8], placement: Option<u16>) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        let mut ftl = self.ftl.lock();
        self.write_locked(&mut ftl, offset / BLOCK_SIZE_U64, buf, placement)
            .map(|_| ())
    }

    fn write_batch(&self, writes: &[(u64, &[u8])], placement: Option<u16>) -> Result<()> {
        for (off, buf) in writes {
            check_io(&self.geo, *off, buf.len())?;
        }
        let mut ftl = self.ftl.lock();
        for (off, buf) in writes {
            self.write_locked(&mut ftl, off / BLOCK_SIZE_U64, buf, placement)?;
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        // Data is "durable" as soon as it is stored; FaultyDevice models volatility.
        self.flushes.fetch_add(1, Relaxed);
        Ok(())
    }

    fn trim(&self, offset: u64, len: u64) -> Result<()> {
        check_io(&self.geo, offset, crate::usize_of(len))?;
        let (first, n) = (offset / BLOCK_SIZE_U64, len / BLOCK_SIZE_U64);
        assert!(
            first + n <= self.layout.logical_pages,
            "checked by check_io"
        );
        let mut ftl = self.ftl.lock();
        ftl.trim(first, n).map_err(|e| match e {
            FlashError::Unsupported(_) => DeviceError::PartialZoneTrim {
                offset,
                len,
                zone_size: self.zone_bytes(),
            },
            e => DeviceError::Flash(e),
        })?;
        if let Some(store) = &self.store {
            store.drop_range(first, n);
        }
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
        let n = buf.len() as u64;
        if wp * BLOCK_SIZE_U64 + n > self.zone_bytes() {
            return Err(DeviceError::CrossesZoneEnd {
                offset: first * BLOCK_SIZE_U64,
                len: n,
                zone: z,
                zone_size: self.zone_bytes(),
            });
        }
        self.write_locked(&mut ftl, first, buf, None)?;
        assert_eq!(
            ftl.zone_write_pointer(z).unwrap_or(0),
            wp + n / BLOCK_SIZE_U64,
            "append advanced the write pointer"
        );
        Ok(first * BLOCK_SIZE_U64)
    }

    fn zone_reset(&self, zone_start: u64) -> Result<()> {
        let z = self.zone_index(zone_start)?;
        let mut ftl = self.ftl.lock();
        ftl.zone_reset(z)?;
        assert_eq!(
            ftl.zone_write_pointer(z).unwrap_or(0),
            0,
            "a reset zone is empty"
        );
        if let Some(store) = &self.store {
            store.drop_range(z * self.zone_pages, self.zone_pages);
        }
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
                assert!(wp <= self.zone_pages, "write pointer inside the zone");
                ZoneInfo {
                    start: z * zb,
                    write_pointer: z * zb + wp * BLOCK_SIZE_U64,
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
        let media = self.ftl.lock().counters().media_pages * BLOCK_SIZE_U64;
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
