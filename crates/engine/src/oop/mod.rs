//! The out-of-place write path (how-to-write-to-ssds.md sections 3-6): zones (the DB GC
//! unit) managed by `nowa_logspace::Space` (the same log-structured space the FTL model uses
//! for superblocks), a pid -> (block, offset, compressed size) table, a reverse map per zone,
//! per-page compression (LZ4 / ZSTD) with 4 KiB best-fit page packing, greedy DB GC that
//! shares the buffer pool (clean cached pages are not re-read), FDP placement hints, and a
//! mapping-table snapshot per checkpoint. No doublewrite buffer: an old version stays mapped
//! until its new version is durable. On-disk formats and crash cases: docs/design.md section 14.
//!
//! Layout: `mod.rs` (configuration, store state, construction, the `PageStore` impl),
//! `codec.rs` (per-page compression), `pack.rs` (4 KiB best-fit slot packing), `gdt.rs`
//! (deathtime grouping), `write.rs` (zone opening, FDP/ZNS placement, slot writes),
//! `gc.rs` (DB GC: victims, relocation, background thread), `nowa.rs` (NoWA active groups
//! and deferred compensation), `recovery.rs` (checkpoint metadata, snapshot load, zone scan).

mod codec;
mod gc;
mod gdt;
mod nowa;
mod pack;
mod recovery;
mod write;

pub use codec::{compress_page, decompress_page};
pub use gdt::{closest_zone, edt, gc_order, gdt_groups, gdt_split};
pub use pack::pack;

use crate::error::{EngineError, Pid, Result};
use crate::page::{self, PAGE_SIZE};
use crate::stats::Counters;
use crate::store::{PageCache, PageStore, WriteKind};
use crate::superblock::Layout;
use gc::BgSignal;
use nowa::Pending;
use nowa_device::BlockDevice;
use nowa_logspace::{Greedy, Space, UnitState};
use parking_lot::{Mutex, RwLock};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

const BS: u64 = PAGE_SIZE as u64;
/// Zone header block magic "ZH" and packed slot magic "ZP" (a raw page has 0x574E here).
const ZONE_MAGIC: u16 = 0x485A;
const SLOT_MAGIC: u16 = 0x505A;
const META_MAGIC: u32 = 0x4D50_4F4F; // "OOPM"
const META_VERSION: u32 = 1;
const META_LEN: usize = 96;
/// Packed slot header and per-page entry sizes.
pub const SLOT_HDR: usize = 24;
pub const SLOT_ENTRY: usize = 24;
/// Snapshot entry size in the metadata region.
const SNAP_ENTRY: usize = 24;
const NO_BLOCK: u64 = u64::MAX;
/// Pages per GC relocation batch.
const GC_BATCH: usize = 64;

pub const CODEC_RAW: u8 = 0;
pub const CODEC_LZ4: u8 = 1;
pub const CODEC_ZSTD: u8 = 2;

/// Per-page compression before packing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Compression {
    Off,
    Lz4,
    Zstd,
}

impl std::str::FromStr for Compression {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "off" | "none" => Ok(Compression::Off),
            "lz4" => Ok(Compression::Lz4),
            "zstd" => Ok(Compression::Zstd),
            _ => Err(format!(
                "unknown compression '{s}' (expected off, lz4 or zstd)"
            )),
        }
    }
}

/// Out-of-place configuration (create time; at open the zone geometry comes from the
/// checkpoint metadata and these only steer new writes).
#[derive(Debug, Clone, serde::Serialize)]
pub struct OopConfig {
    /// Zone size in bytes (DB GC unit). None: the device's FDP reclaim-unit size or zone
    /// size if it has one, else 1 MiB.
    pub zone_bytes: Option<u64>,
    /// Zones appended to concurrently (the active group). FDP: clamped to handles - 1.
    pub open_zones: u32,
    pub compression: Compression,
    pub zstd_level: i32,
    /// Foreground GC runs when fewer than this many zones are free (>= 2).
    pub gc_reserve_zones: u32,
    /// NoWA: active groups, group GC with compensation writes.
    pub nowa: bool,
    /// GDT (section 4.2): write history in the page header, EDT-grouped placement into the
    /// open zone with the closest average EDT, GC relocating in descending EDT order.
    pub gdt: bool,
    /// Use FDP placement hints when the device has reclaim-unit handles.
    pub fdp_hints: bool,
    /// 4 KiB page packing (section 3.2): several compressed pages share a slot. Off: every
    /// page, compressed or not, takes a 4 KiB slot of its own.
    pub packing: bool,
    /// Background DB GC: a thread per engine reclaims zones while fewer than
    /// `gc_high_zones` zones are free, so the foreground GC (at `gc_reserve_zones`, kept as
    /// the fallback) rarely runs.
    pub background_gc: bool,
    /// High watermark of the background GC in free zones. 0: the foreground reserve + 1
    /// (every zone kept free beyond the reserve costs the DB GC over-provisioning).
    pub gc_high_zones: u32,
    /// NoWA: defer compensation writes (section 5.4: they must happen "before the SSD
    /// reaches its minimum free-space threshold"). GC then relocates only the group's least
    /// valid zone; its siblings wait (their pages keep dying meanwhile) until the estimated
    /// SSD free space runs short, then they are compensated, oldest group first. Off: the
    /// whole group at once.
    pub defer_compensation: bool,
    /// The SSD's over-provisioning (spare / logical capacity), as configured or estimated
    /// (e.g. with SSD-iq); used by `defer_compensation`.
    pub ssd_op: f64,
    pub seed: u64,
}

impl OopConfig {
    /// Zones kept out of the page capacity: the open zones, the GC reserve and one more.
    pub fn spare_zones(&self) -> u32 {
        let open = self.open_zones.max(1);
        open + OutOfPlaceStore::reserve_for(self, open) + 1
    }

    /// Bytes of zone area that hold `pages` uncompressed pages with zones of `zone_bytes`
    /// (the capacity guarantee of the store: GC can always make progress, even when nothing
    /// compresses), plus two zones for alignment and the mapping snapshots.
    pub fn zone_area_for(&self, pages: u64, zone_bytes: u64) -> u64 {
        let per_zone = (zone_bytes / BS).saturating_sub(1).max(1);
        (pages.div_ceil(per_zone) + self.spare_zones() as u64 + 2) * zone_bytes
    }
}

impl Default for OopConfig {
    fn default() -> Self {
        OopConfig {
            zone_bytes: None,
            open_zones: 4,
            compression: Compression::Off,
            zstd_level: 1,
            gc_reserve_zones: 3,
            nowa: false,
            gdt: false,
            fdp_hints: true,
            packing: true,
            background_gc: true,
            gc_high_zones: 0,
            defer_compensation: false,
            ssd_op: 0.07,
            seed: 1,
        }
    }
}

/// A `StoreBuilder` for the out-of-place path.
pub fn out_of_place_store(
    cfg: OopConfig,
) -> impl Fn(crate::StoreContext) -> Result<Arc<dyn PageStore>> + Send + Sync {
    move |ctx| Ok(Arc::new(OutOfPlaceStore::new(ctx, cfg.clone())?) as Arc<dyn PageStore>)
}

/// Where a pid's current version lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Loc {
    /// Absolute device block; NO_BLOCK = never written.
    block: u64,
    lsn: u64,
    off: u16,
    /// Compressed length; 0 = the block is the raw page.
    len: u16,
    codec: u8,
}

impl Loc {
    const NONE: Loc = Loc {
        block: NO_BLOCK,
        lsn: 0,
        off: 0,
        len: 0,
        codec: 0,
    };
    /// Bytes this version occupies in its zone (the `Space` valid amount). A page alone in
    /// its slot (raw, or the only entry of a packed slot: its payload starts right after one
    /// entry) holds the whole slot: the slot is freed only when that page dies.
    fn bytes(&self) -> u32 {
        if self.len == 0 || self.off as usize == SLOT_HDR + SLOT_ENTRY {
            PAGE_SIZE as u32
        } else {
            self.len as u32 + SLOT_ENTRY as u32
        }
    }
}

struct State {
    /// In a Mutex only to make State Sync (the policy is Send); accessed via get_mut under
    /// the write lock.
    space: Mutex<Space>,
    map: Vec<Loc>,
    /// Reverse map: pids written into each zone incarnation (may hold stale entries).
    rev: Vec<Vec<Pid>>,
    zone_seq: Vec<u64>,
    /// Active group (NoWA) of each zone's current incarnation; the group history is in the
    /// zone headers.
    zone_group: Vec<u64>,
    next_group: u64,
    /// GDT: last 4 write timestamps per pid (user writes only), the write clock, and the
    /// EDT sum / count of the pages placed in each zone incarnation.
    wh: Vec<[u64; 4]>,
    clock: u64,
    zone_edt: Vec<(f64, u64)>,
    /// Next block inside each open zone (block 0 is the zone header).
    zone_wp: Vec<u64>,
    open: Vec<u32>,
    cursor: usize,
    next_seq: u64,
    /// Metadata copy written last.
    meta_copy: u8,
    rng: u64,
    /// NoWA deferred compensation: groups whose GC victim zone was reclaimed and whose
    /// sibling zones still wait for their compensation writes (oldest first), and the SSD
    /// space their trimmed zones pin (bytes in SSD superblocks that also hold the siblings).
    pending: std::collections::VecDeque<Pending>,
    pinned: u64,
}

/// Zone/area geometry (persisted in the checkpoint metadata).
#[derive(Debug, Clone, Copy)]
struct Geo {
    zone_first: u64,
    zone_pages: u64,
    zones: u32,
    meta_start: u64,
    meta_blocks: u64,
    capacity: u64,
    /// The metadata region is on the log device.
    meta_on_log: bool,
}

pub struct OutOfPlaceStore {
    dev: Arc<dyn BlockDevice>,
    /// Where the mapping snapshots go: the log device if there is one, else `dev`.
    meta_dev: Arc<dyn BlockDevice>,
    cfg: OopConfig,
    counters: Arc<Counters>,
    geo: Geo,
    db_id: u32,
    handles: Option<u16>,
    zoned: bool,
    open_limit: u32,
    st: RwLock<State>,
    cache: Mutex<Option<Weak<dyn PageCache>>>,
    /// Serializes checkpoints (metadata copy alternation).
    ckpt: Mutex<()>,
    /// One writer at a time (user batches, GC, snapshots of the mapping).
    io: Mutex<()>,
    /// Background GC thread and its wake-up / stop signal.
    bg: Mutex<Option<JoinHandle<()>>>,
    bg_sig: Arc<BgSignal>,
    bg_error: Mutex<Option<String>>,
}

/// One page prepared for writing: compressed (or raw) bytes.
struct Item {
    pid: Pid,
    lsn: u64,
    codec: u8,
    data: Vec<u8>,
    /// Estimated deathtime (GDT); u64::MAX = never rewritten (coldest).
    edt: u64,
    /// GDT: Some(B-tree index id) for an initial write (the page was never written before).
    index: Option<u32>,
}

impl Item {
    fn size(&self) -> usize {
        if self.codec == CODEC_RAW {
            PAGE_SIZE
        } else {
            self.data.len() + SLOT_ENTRY
        }
    }
}

/// A packed 4 KiB slot: either one raw page or several compressed pages.
struct Slot {
    raw: bool,
    members: Vec<usize>,
}

fn bad_meta(m: impl Into<String>) -> EngineError {
    EngineError::Superblock(format!("out-of-place metadata: {}", m.into()))
}

fn rd64(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}
fn rd32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}
fn rd16(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes(b[o..o + 2].try_into().expect("2 bytes"))
}

impl OutOfPlaceStore {
    pub fn new(ctx: crate::StoreContext, cfg: OopConfig) -> Result<Self> {
        let ctx_meta = ctx.metadata.clone();
        let dev = ctx.device;
        let g = dev.geometry().clone();
        let zoned = g.zone_size.is_some();
        if zoned && ctx.meta_device.is_none() {
            return Err(EngineError::Config(
                "out-of-place on a zoned device needs a separate (conventional) log device for \
                 the superblock, WAL and mapping snapshots: use Engine::create_with_wal"
                    .into(),
            ));
        }
        if let (Some(zs), Some(want)) = (g.zone_size, cfg.zone_bytes) {
            if zs != want {
                return Err(EngineError::Config(format!(
                    "zoned device: the DB zone size must be the device zone size {zs}, not {want}"
                )));
            }
        }
        let handles = if cfg.fdp_hints {
            g.placement_handles
        } else {
            None
        };
        let mut open_limit = cfg.open_zones.max(1);
        if let Some(h) = handles {
            // Handle 0 carries the WAL and metadata; zones use 1..h.
            open_limit = open_limit.min((h as u32).saturating_sub(1).max(1));
        }
        if let Some(m) = g.max_open_zones {
            // ZNS: the device's open-zone limit.
            open_limit = open_limit.min(m.max(1));
        }
        let (geo, db_id, snap) = if ctx.metadata.is_empty() {
            let zone_bytes = cfg
                .zone_bytes
                .or(g.reclaim_unit_size)
                .or(g.zone_size)
                .unwrap_or(1 << 20);
            if zone_bytes % BS != 0
                || zone_bytes < 8 * BS
                || zone_bytes / BS > (u32::MAX as u64 / BS)
            {
                return Err(EngineError::Config(format!(
                    "zone size {zone_bytes} must be a multiple of 4096, >= 32 KiB and < 4 GiB"
                )));
            }
            let zp = zone_bytes / BS;
            let l: Layout = ctx.layout;
            let end = l.data_start + l.data_pages;
            let meta_blocks = (l.data_pages * SNAP_ENTRY as u64).div_ceil(BS) + 1;
            let zone_first = l.data_start.div_ceil(zp) * zp;
            if let Some((m, first)) = &ctx.meta_device {
                if first + 2 * meta_blocks > m.geometry().capacity / BS {
                    return Err(EngineError::Config(format!(
                        "log device too small for the mapping snapshots: need {} bytes",
                        (first + 2 * meta_blocks) * BS
                    )));
                }
            }
            let meta_here = if ctx.meta_device.is_some() {
                0
            } else {
                2 * meta_blocks
            };
            let avail = end.saturating_sub(zone_first + meta_here);
            let zones = (avail / zp) as u32;
            let reserve = Self::reserve_for(&cfg, open_limit);
            let usable = zones as i64 - open_limit as i64 - reserve as i64 - 1;
            if usable < 2 {
                return Err(EngineError::Config(format!(
                    "device too small for out-of-place: {zones} zones of {zone_bytes} bytes, need > {}",
                    open_limit + reserve + 2
                )));
            }
            let capacity = (usable as u64 * (zp - 1)).min(l.data_pages);
            let geo = Geo {
                zone_first,
                zone_pages: zp,
                zones,
                meta_start: match &ctx.meta_device {
                    Some((_, first)) => *first,
                    None => zone_first + zones as u64 * zp,
                },
                meta_blocks,
                capacity,
                meta_on_log: ctx.meta_device.is_some(),
            };
            // Start from a clean zone area (best effort: trim may be unsupported).
            if zoned {
                for z in 0..zones as u64 {
                    dev.zone_reset((zone_first + z * zp) * BS)?;
                }
            } else {
                let _ = dev.trim(zone_first * BS, zones as u64 * zp * BS);
            }
            (geo, rand::random::<u32>() | 1, None)
        } else {
            let mdev = ctx.meta_device.as_ref().map(|(m, _)| m.clone());
            Self::parse_meta(&ctx.metadata, &*dev, mdev.as_deref())?
        };
        let meta_dev = match (&ctx.meta_device, geo.meta_on_log) {
            (Some((m, _)), true) => m.clone(),
            (None, false) => dev.clone(),
            _ => return Err(bad_meta("metadata device does not match the database")),
        };
        let units = geo.zones;
        let space = Space::new(
            units,
            ((geo.zone_pages - 1) * BS) as u32,
            Box::new(Greedy::default()),
        );
        let st = State {
            space: Mutex::new(space),
            map: vec![Loc::NONE; geo.capacity as usize],
            rev: vec![Vec::new(); units as usize],
            zone_seq: vec![0; units as usize],
            zone_group: vec![0; units as usize],
            next_group: 1,
            wh: if cfg.gdt {
                vec![[0; 4]; geo.capacity as usize]
            } else {
                Vec::new()
            },
            clock: 1,
            zone_edt: vec![(0.0, 0); units as usize],
            zone_wp: vec![0; units as usize],
            open: Vec::new(),
            cursor: 0,
            next_seq: 1,
            meta_copy: 1,
            rng: cfg.seed | 1,
            pending: Default::default(),
            pinned: 0,
        };
        let store = OutOfPlaceStore {
            dev,
            meta_dev,
            cfg,
            counters: ctx.counters,
            geo,
            db_id,
            handles,
            zoned,
            open_limit,
            st: RwLock::new(st),
            cache: Mutex::new(None),
            ckpt: Mutex::new(()),
            io: Mutex::new(()),
            bg: Mutex::new(None),
            bg_sig: Arc::new(BgSignal::default()),
            bg_error: Mutex::new(None),
        };
        if let Some((snap, copy, threshold, next_seq)) = snap {
            store.rebuild(&snap, copy, threshold, next_seq)?;
            // GDT write clock (bytes 88..96 of the record).
            if ctx_meta.len() >= META_LEN {
                store.st.write().clock = rd64(&ctx_meta, 88).max(1);
            }
            if store.zoned {
                store.close_partial_zones()?;
            }
        }
        Ok(store)
    }

    fn zone_of(&self, block: u64) -> Option<u32> {
        if block < self.geo.zone_first {
            return None;
        }
        let z = (block - self.geo.zone_first) / self.geo.zone_pages;
        (z < self.geo.zones as u64).then_some(z as u32)
    }

    fn zone_block(&self, z: u32) -> u64 {
        self.geo.zone_first + z as u64 * self.geo.zone_pages
    }

    /// Zone size in bytes.
    pub fn zone_bytes(&self) -> u64 {
        self.geo.zone_pages * BS
    }
    pub fn zones(&self) -> u32 {
        self.geo.zones
    }
    /// Check the zone metadata against the mapping (tests).
    pub fn check_consistency(&self) -> std::result::Result<(), String> {
        let st = self.st.read();
        let space = st.space.lock();
        let mut valid = vec![0u64; self.geo.zones as usize];
        for l in st.map.iter().filter(|l| l.block != NO_BLOCK) {
            let z = self.zone_of(l.block).ok_or("mapped outside zones")?;
            valid[z as usize] += l.bytes() as u64;
        }
        for z in 0..self.geo.zones {
            if space.valid(z) as u64 != valid[z as usize] {
                return Err(format!(
                    "zone {z}: space says {} valid bytes, mapping {}",
                    space.valid(z),
                    valid[z as usize]
                ));
            }
            if space.state(z) == UnitState::Free && valid[z as usize] != 0 {
                return Err(format!("free zone {z} holds valid pages"));
            }
        }
        space.check_invariants();
        Ok(())
    }
}

impl PageStore for OutOfPlaceStore {
    fn write_pages(&self, batch: &[(Pid, &[u8])], kind: WriteKind) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        for (pid, _) in batch {
            if *pid >= self.geo.capacity {
                return Err(EngineError::Full(format!(
                    "pid {pid} beyond the out-of-place capacity {}",
                    self.geo.capacity
                )));
            }
        }
        // Chunks of at most half a zone, so GC (run before each chunk) always leaves room.
        let chunk = ((self.geo.zone_pages as usize - 1) / 2).clamp(1, GC_BATCH);
        let user = matches!(kind, WriteKind::Eviction | WriteKind::Checkpoint);
        for part in batch.chunks(chunk) {
            // GDT: append this write's timestamp to each page's write history (user writes
            // only), compute its EDT, and stamp the history into the page header copy.
            let stamps: Vec<Option<([u64; 4], u64, bool)>> = if self.cfg.gdt && user {
                let mut st = self.st.write();
                part.iter()
                    .map(|(p, d)| {
                        let now = st.clock;
                        st.clock += 1;
                        let mut wh = st.wh[*p as usize];
                        if wh == [0; 4] {
                            // First write since open: the history stored in the page header.
                            for (k, w) in wh.iter_mut().enumerate() {
                                *w = u64::from_le_bytes(
                                    d[24 + 8 * k..32 + 8 * k].try_into().expect("8 bytes"),
                                );
                            }
                            // Timestamps of an earlier run are from another clock: keep only
                            // the number of writes, not their spacing.
                            if wh.iter().any(|&x| x >= now) {
                                wh = [0; 4];
                            }
                        }
                        // Initial write: the page was never written before (no history).
                        let initial = wh == [0; 4];
                        wh.rotate_left(1);
                        wh[3] = now;
                        st.wh[*p as usize] = wh;
                        Some((wh, edt(&wh, now), initial))
                    })
                    .collect()
            } else {
                vec![None; part.len()]
            };
            // Compress outside the lock.
            let items: Vec<Item> = part
                .iter()
                .zip(stamps)
                .map(|((p, d), stamp)| match stamp {
                    Some((wh, e, initial)) => {
                        let mut c = d.to_vec();
                        for (k, w) in wh.iter().enumerate() {
                            c[24 + 8 * k..32 + 8 * k].copy_from_slice(&w.to_le_bytes());
                        }
                        page::seal(&mut c);
                        let mut it = self.prepare(*p, &c, e);
                        // The engine has one B+-tree: index id 0 for every page.
                        it.index = initial.then_some(0);
                        it
                    }
                    None => self.prepare(*p, d, u64::MAX),
                })
                .collect();
            self.wait_for_bg();
            let io = self.io.lock();
            self.gc()?;
            self.write_items(items, kind)?;
            let free = {
                let mut st = self.st.write();
                st.space.get_mut().tick(part.len() as u64);
                st.space.get_mut().free_units()
            };
            // Fair hand-off: a waiting background GC round gets `io` before this writer's next
            // chunk (otherwise a busy writer re-takes the lock at once and starves it).
            parking_lot::MutexGuard::unlock_fair(io);
            self.kick_bg(free);
        }
        Ok(())
    }

    fn read_page(&self, pid: Pid, buf: &mut [u8]) -> Result<()> {
        if pid >= self.geo.capacity {
            return Err(crate::error::corrupt(
                pid,
                "pid beyond the out-of-place capacity",
            ));
        }
        Counters::add(&self.counters.page_reads, 1);
        let mut tmp = vec![0u8; PAGE_SIZE];
        loop {
            let loc = self.st.read().map[pid as usize];
            if loc.block == NO_BLOCK {
                buf.fill(0);
                return Ok(());
            }
            let r = self.read_loc(pid, loc, buf, &mut tmp);
            // GC may have moved the page (and trimmed or reused its zone) while we read
            // without the lock: the image is good only if the mapping still names the same
            // version at the same place (a location only changes after the new copy is
            // durable, and a zone is reset only after all its pages moved).
            if self.st.read().map[pid as usize] == loc {
                return r;
            }
        }
    }

    fn capacity_pages(&self) -> u64 {
        self.geo.capacity
    }

    fn recover(&self) -> Result<u64> {
        Ok(0)
    }

    fn checkpoint_metadata(&self) -> Vec<u8> {
        self.checkpoint().unwrap_or_default()
    }

    /// Snapshot the mapping (consistent: taken under the lock that every mapping update
    /// holds) into the metadata copy not referenced by the current superblock, flush, and
    /// return the superblock metadata pointing at it.
    fn checkpoint(&self) -> Result<Vec<u8>> {
        let _c = self.ckpt.lock();
        let (buf, copy, threshold, next_seq) = {
            // `io`: no write between placement and mapping update, so the open zones and the
            // mapping agree.
            let _io = self.io.lock();
            let st = self.st.read();
            let mut buf = vec![0u8; (st.map.len() * SNAP_ENTRY).div_ceil(PAGE_SIZE) * PAGE_SIZE];
            for (i, l) in st.map.iter().enumerate() {
                let e = &mut buf[i * SNAP_ENTRY..(i + 1) * SNAP_ENTRY];
                e[0..8].copy_from_slice(&l.block.to_le_bytes());
                e[8..16].copy_from_slice(&l.lsn.to_le_bytes());
                e[16..18].copy_from_slice(&l.off.to_le_bytes());
                e[18..20].copy_from_slice(&l.len.to_le_bytes());
                e[20] = l.codec;
            }
            let threshold = st
                .open
                .iter()
                .map(|&z| st.zone_seq[z as usize])
                .min()
                .unwrap_or(st.next_seq);
            (buf, 1 - st.meta_copy, threshold, st.next_seq)
        };
        let n = self.geo.capacity;
        let len = n as usize * SNAP_ENTRY;
        let crc = crc32c::crc32c(&buf[..len]);
        let start = self.geo.meta_start + copy as u64 * self.geo.meta_blocks;
        // Metadata goes to the log device, or to handle 0 with the WAL (FDP).
        self.meta_dev.write_at_hinted(start * BS, &buf, None)?;
        self.meta_dev.flush()?;
        Counters::add(&self.counters.meta_store_bytes, buf.len() as u64);
        self.st.write().meta_copy = copy;
        Ok(self.meta_bytes(copy, true, crc, n, threshold, next_seq))
    }

    fn uses_doublewrite_area(&self) -> bool {
        false
    }

    fn attach_cache(&self, cache: Weak<dyn PageCache>) {
        *self.cache.lock() = Some(cache);
    }

    fn start_background(self: Arc<Self>) {
        self.start_background_gc();
    }

    fn shutdown(&self) {
        self.stop_background_gc();
    }
}

impl Drop for OutOfPlaceStore {
    fn drop(&mut self) {
        // The thread holds only a weak reference between passes; if the last strong one is
        // dropped by the thread itself, it is not joined (it exits right after).
        self.stop_background_gc();
    }
}
