//! The out-of-place write path (how-to-write-to-ssds.md sections 3-6): zones (the DB GC
//! unit) managed by `nowa_logspace::Space` (the same log-structured space the FTL model uses
//! for superblocks), a pid -> (block, offset, compressed size) table, a reverse map per zone,
//! per-page compression (LZ4 / ZSTD) with 4 KiB best-fit page packing, greedy DB GC that
//! shares the buffer pool (clean cached pages are not re-read), FDP placement hints, and a
//! mapping-table snapshot per checkpoint. No doublewrite buffer: an old version stays mapped
//! until its new version is durable. On-disk formats and crash cases: docs/design.md section 14.

use crate::error::{EngineError, Pid, Result};
use crate::page::{self, PAGE_SIZE};
use crate::stats::Counters;
use crate::store::{PageCache, PageStore, WriteKind};
use crate::superblock::Layout;
use nowa_device::{BlockDevice, DeviceError};
use nowa_logspace::{Greedy, Space, UnitState};
use parking_lot::{Condvar, Mutex, RwLock};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

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

/// A NoWA group waiting for its compensation writes (in memory only: after a restart the
/// siblings form an ordinary group again and greedy group GC picks them up).
struct Pending {
    group: u64,
    zones: Vec<u32>,
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

#[derive(Default)]
struct BgFlags {
    stop: bool,
    kick: bool,
    /// Background GC rounds and passes finished (writers waiting for space watch these).
    rounds: u64,
    passes: u64,
    /// The thread is running (cleared when it exits).
    alive: bool,
}

/// Wakes the background GC thread (a writer saw free zones below the high watermark) or
/// stops it (close / drop).
#[derive(Default)]
struct BgSignal {
    m: Mutex<BgFlags>,
    /// Wakes the thread.
    cv: Condvar,
    /// Signals a finished round or pass (to writers waiting for free zones).
    done: Condvar,
}

impl BgSignal {
    fn stopped(&self) -> bool {
        self.m.lock().stop
    }
    fn progress(&self, round: bool) {
        let mut f = self.m.lock();
        if round {
            f.rounds += 1;
        } else {
            f.passes += 1;
        }
        self.done.notify_all();
    }
}

/// How long a writer that would have to run GC itself waits for the background GC first.
const BG_WAIT: Duration = Duration::from_millis(50);

/// The background GC thread: a pass whenever kicked (or every 20 ms), until stopped or the
/// store is gone. It holds the store only during a pass.
fn bg_loop(weak: Weak<OutOfPlaceStore>, sig: Arc<BgSignal>) {
    struct Alive(Arc<BgSignal>);
    impl Drop for Alive {
        fn drop(&mut self) {
            self.0.m.lock().alive = false;
            self.0.done.notify_all();
        }
    }
    let _alive = Alive(sig.clone());
    loop {
        {
            let mut f = sig.m.lock();
            if !f.stop && !f.kick {
                sig.cv.wait_for(&mut f, Duration::from_millis(20));
            }
            if f.stop {
                return;
            }
            f.kick = false;
        }
        let Some(s) = weak.upgrade() else { return };
        let r = s.bg_pass();
        sig.progress(false);
        if let Err(e) = r {
            tracing::warn!(error = %e, "background DB GC stopped; foreground GC takes over");
            *s.bg_error.lock() = Some(e.to_string());
            return;
        }
    }
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

/// Compress one sealed page. Falls back to raw when the result does not fit a slot.
pub fn compress_page(page: &[u8], c: Compression, level: i32) -> (u8, Vec<u8>) {
    let max = PAGE_SIZE - SLOT_HDR - SLOT_ENTRY;
    let out = match c {
        Compression::Off => None,
        Compression::Lz4 => {
            let mut out = vec![0u8; lz4_flex::block::get_maximum_output_size(page.len())];
            lz4_flex::block::compress_into(page, &mut out)
                .ok()
                .map(|n| {
                    out.truncate(n);
                    (CODEC_LZ4, out)
                })
        }
        Compression::Zstd => zstd::bulk::compress(page, level)
            .ok()
            .map(|v| (CODEC_ZSTD, v)),
    };
    match out {
        Some((codec, v)) if v.len() <= max => (codec, v),
        _ => (CODEC_RAW, page.to_vec()),
    }
}

/// Decompress `src` (codec) into the 4 KiB `dst`.
pub fn decompress_page(codec: u8, src: &[u8], dst: &mut [u8]) -> std::result::Result<(), String> {
    let n = match codec {
        CODEC_LZ4 => lz4_flex::block::decompress_into(src, dst).map_err(|e| e.to_string())?,
        CODEC_ZSTD => zstd::bulk::decompress_to_buffer(src, dst).map_err(|e| e.to_string())?,
        c => return Err(format!("unknown codec {c}")),
    };
    if n != PAGE_SIZE {
        return Err(format!("decompressed to {n} bytes, expected {PAGE_SIZE}"));
    }
    Ok(())
}

/// Estimated deathtime from a write history (oldest first, 0 = empty): now + mean interval of
/// the recorded writes; u64::MAX (coldest) with fewer than two writes.
pub fn edt(wh: &[u64; 4], now: u64) -> u64 {
    let t: Vec<u64> = wh.iter().copied().filter(|&x| x != 0).collect();
    if t.len() < 2 {
        return u64::MAX;
    }
    let interval = (t[t.len() - 1] - t[0]) / (t.len() as u64 - 1);
    now.saturating_add(interval)
}

/// GDT grouping of a batch: indices sorted by EDT and cut into `k` contiguous groups of
/// (almost) equal size, so pages with similar deathtimes go to the same zone (Figure 5).
pub fn gdt_split(edts: &[u64], k: usize) -> Vec<Vec<usize>> {
    let mut idx: Vec<usize> = (0..edts.len()).collect();
    idx.sort_by_key(|&i| (edts[i], i));
    let k = k.clamp(1, edts.len().max(1));
    let per = edts.len().div_ceil(k).max(1);
    idx.chunks(per).map(|c| c.to_vec()).collect()
}

/// GDT grouping of a batch (section 4.2): initial writes (`index[i]` = Some(B-tree index
/// id): the page was never written before, so it has no EDT) form one group per index id;
/// the other pages are sorted by EDT and cut into the remaining `k - index groups` (>= 1)
/// groups ([`gdt_split`]; a single group when there are fewer than two pages per group).
/// Groups come hottest first (ascending EDT, initial writes last), which is the order they
/// are written in: an empty zone (one GC just freed) matches any group, so the first,
/// hottest group takes it (the newly emptied zone gets the minimum EDT range).
pub fn gdt_groups(edts: &[u64], index: &[Option<u32>], k: usize) -> Vec<Vec<usize>> {
    let mut by_index: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    let mut rest = Vec::new();
    for i in 0..edts.len() {
        match index.get(i).copied().flatten() {
            Some(id) => by_index.entry(id).or_default().push(i),
            None => rest.push(i),
        }
    }
    let k_rest = k.saturating_sub(by_index.len()).max(1);
    let mut out: Vec<Vec<usize>> = Vec::new();
    if rest.len() >= 2 * k_rest {
        let sub: Vec<u64> = rest.iter().map(|&i| edts[i]).collect();
        for g in gdt_split(&sub, k_rest) {
            out.push(g.into_iter().map(|j| rest[j]).collect());
        }
    } else if !rest.is_empty() {
        out.push(rest);
    }
    out.extend(by_index.into_values());
    out
}

/// GDT GC order of a victim's valid pages: descending EDT (stable), so pages that were never
/// rewritten (EDT u64::MAX) come first, as the coldest data.
pub fn gc_order(edts: &[u64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..edts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(edts[i]));
    order
}

/// GDT zone choice: the open zone whose pages have the closest average EDT to `want`; a zone
/// without pages yet (just opened, e.g. after GC) matches anything (distance 0), the first
/// such zone on ties. `zones`: (EDT sum, pages) per candidate. None if `zones` is empty.
pub fn closest_zone(zones: &[(f64, u64)], want: f64) -> Option<usize> {
    let d = |&(sum, n): &(f64, u64)| {
        if n == 0 {
            0.0
        } else {
            (sum / n as f64 - want).abs()
        }
    };
    (0..zones.len()).min_by(|&a, &b| d(&zones[a]).total_cmp(&d(&zones[b])))
}

fn mean_edt(items: &[Item]) -> f64 {
    if items.is_empty() {
        return 0.0;
    }
    items.iter().map(|i| i.edt.min(1 << 52) as f64).sum::<f64>() / items.len() as f64
}

/// Best-fit bin packing of item sizes into 4 KiB slots (section 3.2): items sorted by
/// decreasing size, each put into the fullest slot it still fits in. Raw items get a slot of
/// their own. No cap on pages per slot. Returns slots as lists of item indices.
pub fn pack(sizes: &[(usize, bool)]) -> Vec<(bool, Vec<usize>)> {
    let cap = PAGE_SIZE - SLOT_HDR;
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i].0));
    let mut bins: Vec<(usize, bool, Vec<usize>)> = Vec::new();
    for i in order {
        let (s, raw) = sizes[i];
        if raw {
            bins.push((0, true, vec![i]));
            continue;
        }
        let best = bins
            .iter_mut()
            .filter(|b| !b.1 && b.0 >= s)
            .min_by_key(|b| b.0);
        match best {
            Some(b) => {
                b.0 -= s;
                b.2.push(i);
            }
            None => bins.push((cap - s, false, vec![i])),
        }
    }
    bins.into_iter().map(|(_, r, m)| (r, m)).collect()
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

    /// Parse the superblock metadata and load the mapping snapshot it points to.
    #[allow(clippy::type_complexity)]
    fn parse_meta(
        m: &[u8],
        dev: &dyn BlockDevice,
        log: Option<&dyn BlockDevice>,
    ) -> Result<(Geo, u32, Option<(Vec<Loc>, u8, u64, u64)>)> {
        if m.len() < META_LEN || rd32(m, 0) != META_MAGIC || rd32(m, 4) != META_VERSION {
            return Err(bad_meta(
                "bad magic/version (not an out-of-place database?)",
            ));
        }
        let geo = Geo {
            zones: rd32(m, 12),
            zone_first: rd64(m, 16),
            zone_pages: rd64(m, 24),
            meta_start: rd64(m, 32),
            meta_blocks: rd64(m, 40),
            capacity: rd64(m, 48),
            meta_on_log: m[58] == 1,
        };
        let blocks = dev.geometry().capacity / BS;
        let mdev: &dyn BlockDevice = match (geo.meta_on_log, log) {
            (true, Some(l)) => l,
            (false, _) => dev,
            (true, None) => return Err(bad_meta("mapping snapshots are on a log device")),
        };
        let mblocks = mdev.geometry().capacity / BS;
        let ok = geo.zone_pages >= 8
            && geo.zone_pages <= u32::MAX as u64 / BS
            && geo.zones > 0
            && geo
                .zone_first
                .checked_add(geo.zones as u64 * geo.zone_pages)
                .is_some_and(|e| e <= blocks && (geo.meta_on_log || e <= geo.meta_start))
            && geo
                .meta_start
                .checked_add(2 * geo.meta_blocks)
                .is_some_and(|e| e <= mblocks)
            && geo.capacity * SNAP_ENTRY as u64 <= geo.meta_blocks * BS
            && geo.capacity <= geo.zones as u64 * geo.zone_pages;
        if !ok {
            return Err(bad_meta("geometry out of range"));
        }
        let db_id = rd32(m, 8);
        let copy = m[56];
        let has = m[57];
        let crc = rd32(m, 60);
        let n = rd64(m, 64);
        let threshold = rd64(m, 72);
        let next_seq = rd64(m, 80);
        if copy > 1 || n > geo.capacity {
            return Err(bad_meta("snapshot copy/length out of range"));
        }
        let mut map = vec![Loc::NONE; geo.capacity as usize];
        if has == 1 {
            let len = (n as usize) * SNAP_ENTRY;
            let mut buf = vec![0u8; len.div_ceil(PAGE_SIZE) * PAGE_SIZE];
            if !buf.is_empty() {
                mdev.read_at(
                    (geo.meta_start + copy as u64 * geo.meta_blocks) * BS,
                    &mut buf,
                )?;
            }
            if crc32c::crc32c(&buf[..len]) != crc {
                return Err(bad_meta("mapping snapshot checksum mismatch"));
            }
            for (i, e) in buf[..len].chunks_exact(SNAP_ENTRY).enumerate() {
                map[i] = Loc {
                    block: rd64(e, 0),
                    lsn: rd64(e, 8),
                    off: rd16(e, 16),
                    len: rd16(e, 18),
                    codec: e[20],
                };
            }
        }
        Ok((geo, db_id, Some((map, copy, threshold, next_seq))))
    }

    /// Free zones GC keeps: room to relocate a victim (NoWA: a whole group) and to open the
    /// next active group.
    fn reserve_for(cfg: &OopConfig, open_limit: u32) -> u32 {
        if cfg.nowa {
            cfg.gc_reserve_zones.max(2 * open_limit + 1)
        } else {
            cfg.gc_reserve_zones.max(2)
        }
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

    fn hint(&self, z: u32) -> Option<u16> {
        self.handles.map(|h| {
            if h >= 2 {
                1 + (z % (h as u32 - 1)) as u16
            } else {
                0
            }
        })
    }

    /// Recovery: start from the checkpoint snapshot, then scan every zone incarnation that
    /// may have been written after it (header seq >= threshold) and keep, per pid, the
    /// version with the highest LSN (a scanned copy wins a tie against the snapshot: the
    /// snapshot's location may have been garbage collected since). Rebuilds the zone
    /// metadata (valid bytes, reverse map, states) from the final mapping.
    fn rebuild(&self, snap: &[Loc], copy: u8, threshold: u64, next_seq: u64) -> Result<()> {
        let mut st = self.st.write();
        st.map.copy_from_slice(snap);
        st.meta_copy = copy;
        let mut max_seq = next_seq.saturating_sub(1);
        let zp = self.geo.zone_pages as usize;
        let mut zbuf = vec![0u8; zp * PAGE_SIZE];
        let mut out = vec![0u8; PAGE_SIZE];
        for z in 0..self.geo.zones {
            let zb = self.zone_block(z);
            self.dev.read_at(zb * BS, &mut zbuf[..PAGE_SIZE])?;
            let Some((seq, group)) = self.parse_zone_header(&zbuf[..PAGE_SIZE], z) else {
                continue;
            };
            st.zone_seq[z as usize] = seq;
            st.zone_group[z as usize] = group;
            st.next_group = st.next_group.max(group + 1);
            max_seq = max_seq.max(seq);
            if seq < threshold {
                continue;
            }
            self.dev.read_at((zb + 1) * BS, &mut zbuf[PAGE_SIZE..])?;
            for b in 1..zp {
                let slot = &zbuf[b * PAGE_SIZE..(b + 1) * PAGE_SIZE];
                let block = zb + b as u64;
                let mut found: Vec<(Pid, Loc)> = Vec::new();
                if rd16(slot, 4) == SLOT_MAGIC {
                    if crc32c::crc32c(&slot[4..]) != rd32(slot, 0) || rd32(slot, 8) != self.db_id {
                        continue;
                    }
                    let n = rd16(slot, 6) as usize;
                    if SLOT_HDR + n * SLOT_ENTRY > PAGE_SIZE {
                        continue;
                    }
                    for i in 0..n {
                        let e = &slot[SLOT_HDR + i * SLOT_ENTRY..SLOT_HDR + (i + 1) * SLOT_ENTRY];
                        let (off, len, codec) = (rd16(e, 16), rd16(e, 18), e[20]);
                        if off as usize + len as usize > PAGE_SIZE || len == 0 {
                            continue;
                        }
                        // Check the payload really decodes to a valid page of that pid.
                        let pid = rd64(e, 0);
                        if decompress_page(
                            codec,
                            &slot[off as usize..(off + len) as usize],
                            &mut out,
                        )
                        .is_err()
                            || page::validate_layout(&out, pid).is_err()
                            || !page::checksum_ok(&out)
                        {
                            continue;
                        }
                        found.push((
                            pid,
                            Loc {
                                block,
                                lsn: rd64(e, 8),
                                off,
                                len,
                                codec,
                            },
                        ));
                    }
                } else if page::checksum_ok(slot) && !page::is_zero(slot) {
                    let pid = page::pid(slot);
                    if page::validate_layout(slot, pid).is_ok() {
                        found.push((
                            pid,
                            Loc {
                                block,
                                lsn: page::lsn(slot),
                                off: 0,
                                len: 0,
                                codec: CODEC_RAW,
                            },
                        ));
                    }
                }
                for (pid, loc) in found {
                    if pid >= self.geo.capacity {
                        continue;
                    }
                    let cur = st.map[pid as usize];
                    if cur.block == NO_BLOCK || loc.lsn >= cur.lsn {
                        st.map[pid as usize] = loc;
                    }
                }
            }
        }
        st.next_seq = max_seq + 1;
        // Rebuild the zone metadata from the final mapping.
        let mut valid = vec![0u64; self.geo.zones as usize];
        for pid in 0..st.map.len() {
            let loc = st.map[pid];
            if loc.block == NO_BLOCK {
                continue;
            }
            let Some(z) = self.zone_of(loc.block) else {
                return Err(bad_meta(format!("pid {pid} maps outside the zone area")));
            };
            if loc.len != 0 && loc.off as usize + loc.len as usize > PAGE_SIZE {
                return Err(bad_meta(format!("pid {pid}: bad slot offset")));
            }
            valid[z as usize] += loc.bytes() as u64;
            st.rev[z as usize].push(pid as Pid);
        }
        let cap = st.space.get_mut().unit_capacity() as u64;
        for z in 0..self.geo.zones {
            let v = valid[z as usize];
            if v == 0 {
                continue;
            }
            if v > cap {
                return Err(bad_meta(format!("zone {z}: {v} valid bytes > capacity")));
            }
            st.space
                .get_mut()
                .open_specific(z, 0)
                .map_err(|e| bad_meta(e.to_string()))?;
            st.space.get_mut().add_valid(z, v as u32);
            // Zones holding data are treated as full: their write pointer is not trusted.
            st.space.get_mut().seal(z);
        }
        Ok(())
    }

    /// ZNS after recovery: zones the device still has open (partially written before the
    /// crash) count against its open-zone limit. Zones holding live pages are padded with zero
    /// blocks to their end (a zero block is no slot: the scanner skips it); zones without
    /// live pages are reset.
    fn close_partial_zones(&self) -> Result<()> {
        let report = self.dev.zone_report()?;
        let st = self.st.read();
        let space = st.space.lock();
        let zb = self.geo.zone_pages * BS;
        for z in 0..self.geo.zones {
            let start = self.zone_block(z) * BS;
            let Some(info) = report.iter().find(|i| i.start == start) else {
                continue;
            };
            if info.write_pointer == start || info.write_pointer >= start + zb {
                continue;
            }
            if space.state(z) == UnitState::Free {
                self.dev.zone_reset(start)?;
            } else {
                let pad = vec![0u8; (start + zb - info.write_pointer) as usize];
                self.dev.zone_append(start, &pad)?;
            }
        }
        self.dev.flush()?;
        Ok(())
    }

    fn parse_zone_header(&self, b: &[u8], z: u32) -> Option<(u64, u64)> {
        (rd16(b, 4) == ZONE_MAGIC
            && crc32c::crc32c(&b[4..]) == rd32(b, 0)
            && rd32(b, 8) == self.db_id
            && rd32(b, 12) == z)
            .then(|| (rd64(b, 16), rd64(b, 24)))
    }

    /// Open a zone: write and flush its header before any data goes in, so a zone whose
    /// header is invalid holds no data of its current incarnation.
    fn open_zone(&self, st: &mut State, kind: WriteKind, group: u64) -> Result<u32> {
        let full = || EngineError::Full("out-of-place: no free zone left".into());
        let z = match self.handles {
            // FDP: zone z writes with handle 1 + z mod (h - 1); pick a free zone whose handle
            // no open zone uses, so no two open zones share (multiplex into) one handle.
            Some(h) if h >= 2 => {
                let used: Vec<Option<u16>> = st.open.iter().map(|&o| self.hint(o)).collect();
                let space = st.space.get_mut();
                let pick = (0..self.geo.zones)
                    .filter(|&c| space.state(c) == UnitState::Free)
                    .find(|&c| !used.contains(&self.hint(c)));
                match pick {
                    Some(c) => {
                        space.open_specific(c, 0).map_err(|_| full())?;
                        c
                    }
                    None => space.open_unit(0).map_err(|_| full())?,
                }
            }
            _ => st.space.get_mut().open_unit(0).map_err(|_| full())?,
        };
        let seq = st.next_seq;
        st.next_seq += 1;
        st.zone_seq[z as usize] = seq;
        st.zone_group[z as usize] = group;
        st.zone_edt[z as usize] = (0.0, 0);
        st.zone_wp[z as usize] = 1;
        st.rev[z as usize].clear();
        let mut h = vec![0u8; PAGE_SIZE];
        h[4..6].copy_from_slice(&ZONE_MAGIC.to_le_bytes());
        h[6..8].copy_from_slice(&1u16.to_le_bytes());
        h[8..12].copy_from_slice(&self.db_id.to_le_bytes());
        h[12..16].copy_from_slice(&z.to_le_bytes());
        h[16..24].copy_from_slice(&seq.to_le_bytes());
        h[24..32].copy_from_slice(&group.to_le_bytes());
        h[32..36].copy_from_slice(&self.open_limit.to_le_bytes());
        let crc = crc32c::crc32c(&h[4..]);
        h[0..4].copy_from_slice(&crc.to_le_bytes());
        if self.zoned {
            // Zone reset (no-op for an empty zone), then zone append of the header.
            self.dev.zone_reset(self.zone_block(z) * BS)?;
            self.dev.zone_append(self.zone_block(z) * BS, &h)?;
        } else {
            self.dev
                .write_at_hinted(self.zone_block(z) * BS, &h, self.hint(z))?;
        }
        self.dev.flush()?;
        self.count_bytes(kind, BS);
        Counters::add(&self.counters.zone_header_bytes, BS);
        st.open.push(z);
        Ok(z)
    }

    fn count_bytes(&self, kind: WriteKind, b: u64) {
        let c = match kind {
            WriteKind::Eviction | WriteKind::Checkpoint => &self.counters.user_store_bytes,
            WriteKind::Gc => &self.counters.gc_store_bytes,
            WriteKind::Compensation => &self.counters.compensation_store_bytes,
        };
        Counters::add(c, b);
    }

    /// Pick the open zone for the next slots (opening zones as the policy allows).
    fn target_zone(&self, st: &mut State, kind: WriteKind, want_edt: Option<f64>) -> Result<u32> {
        if self.cfg.nowa {
            // NoWA rule 1: a new active group only when the whole group is written.
            if st.open.is_empty() {
                let g = st.next_group;
                st.next_group += 1;
                for _ in 0..self.open_limit {
                    if st.space.get_mut().free_units() == 0 && !st.open.is_empty() {
                        break;
                    }
                    self.open_zone(st, kind, g)?;
                }
            }
        } else {
            while st.open.len() < self.open_limit as usize
                && (st.space.get_mut().free_units() > 0 || st.open.is_empty())
            {
                let g = st.next_group;
                st.next_group += 1;
                self.open_zone(st, kind, g)?;
            }
        }
        if let Some(e) = want_edt {
            // GDT: the open zone whose pages have the closest average EDT (an empty zone
            // matches anything).
            let cands: Vec<(f64, u64)> = st.open.iter().map(|&z| st.zone_edt[z as usize]).collect();
            let best = closest_zone(&cands, e)
                .ok_or_else(|| EngineError::Full("out-of-place: no open zone".into()))?;
            return Ok(st.open[best]);
        }
        let i = st.cursor % st.open.len();
        Ok(st.open[i])
    }

    /// Pack and write a batch, then update the mapping. Caller holds `io` (one writer at a
    /// time); the state lock is held only to place the slots and to update the mapping, not
    /// during the data I/O, so readers proceed meanwhile.
    fn write_items(&self, items: Vec<Item>, kind: WriteKind) -> Result<()> {
        if !self.cfg.gdt {
            return self.write_group(items, kind, None);
        }
        let edts: Vec<u64> = items.iter().map(|i| i.edt).collect();
        let index: Vec<Option<u32>> = items.iter().map(|i| i.index).collect();
        let groups = gdt_groups(&edts, &index, self.open_limit as usize);
        let mut slots: Vec<Option<Item>> = items.into_iter().map(Some).collect();
        for g in groups {
            let part: Vec<Item> = g.iter().filter_map(|&i| slots[i].take()).collect();
            let want = mean_edt(&part);
            self.write_group(part, kind, Some(want))?;
        }
        Ok(())
    }

    /// Pack and write one group of pages (GDT: into the zone chosen for `want_edt`).
    fn write_group(&self, items: Vec<Item>, kind: WriteKind, want_edt: Option<f64>) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        let mut runs: Vec<(u64, Vec<u8>, u32)> = Vec::new();
        let mut guard = self.st.write();
        let st: &mut State = &mut guard;
        let sizes: Vec<(usize, bool)> = items
            .iter()
            .map(|it| (it.size(), it.codec == CODEC_RAW))
            .collect();
        let packed = if self.cfg.packing {
            pack(&sizes)
        } else {
            // No packing: every page (compressed or not) in a slot of its own.
            sizes
                .iter()
                .enumerate()
                .map(|(i, &(_, raw))| (raw, vec![i]))
                .collect()
        };
        let slots: Vec<Slot> = packed
            .into_iter()
            .map(|(raw, members)| Slot { raw, members })
            .collect();
        // Random placement among the open zones, one zone per batch (as long as it has room).
        st.rng ^= st.rng << 13;
        st.rng ^= st.rng >> 7;
        st.rng ^= st.rng << 17;
        st.cursor = (st.rng >> 16) as usize;
        let mut locs: Vec<(usize, Loc)> = Vec::with_capacity(items.len());
        let zp = self.geo.zone_pages;
        let mut i = 0;
        while i < slots.len() {
            let z = self.target_zone(st, kind, want_edt)?;
            let base = self.zone_block(z);
            let seq = st.zone_seq[z as usize];
            let first = base + st.zone_wp[z as usize];
            let room = (zp - st.zone_wp[z as usize]) as usize;
            let mut run: Vec<u8> = vec![0u8; room.min(slots.len() - i) * PAGE_SIZE];
            let mut k = 0;
            while i < slots.len() && st.zone_wp[z as usize] < zp {
                let block = base + st.zone_wp[z as usize];
                let s = &slots[i];
                let buf = &mut run[k * PAGE_SIZE..(k + 1) * PAGE_SIZE];
                k += 1;
                if s.raw {
                    let it = &items[s.members[0]];
                    buf.copy_from_slice(&it.data);
                    locs.push((
                        s.members[0],
                        Loc {
                            block,
                            lsn: it.lsn,
                            off: 0,
                            len: 0,
                            codec: CODEC_RAW,
                        },
                    ));
                } else {
                    let n = s.members.len();
                    buf[4..6].copy_from_slice(&SLOT_MAGIC.to_le_bytes());
                    buf[6..8].copy_from_slice(&(n as u16).to_le_bytes());
                    buf[8..12].copy_from_slice(&self.db_id.to_le_bytes());
                    buf[12..16].copy_from_slice(&z.to_le_bytes());
                    buf[16..24].copy_from_slice(&seq.to_le_bytes());
                    let mut off = SLOT_HDR + n * SLOT_ENTRY;
                    for (k, &m) in s.members.iter().enumerate() {
                        let it = &items[m];
                        let e = SLOT_HDR + k * SLOT_ENTRY;
                        buf[e..e + 8].copy_from_slice(&it.pid.to_le_bytes());
                        buf[e + 8..e + 16].copy_from_slice(&it.lsn.to_le_bytes());
                        buf[e + 16..e + 18].copy_from_slice(&(off as u16).to_le_bytes());
                        buf[e + 18..e + 20].copy_from_slice(&(it.data.len() as u16).to_le_bytes());
                        buf[e + 20] = it.codec;
                        buf[off..off + it.data.len()].copy_from_slice(&it.data);
                        locs.push((
                            m,
                            Loc {
                                block,
                                lsn: it.lsn,
                                off: off as u16,
                                len: it.data.len() as u16,
                                codec: it.codec,
                            },
                        ));
                        off += it.data.len();
                    }
                    debug_assert!(off <= PAGE_SIZE, "packing overflowed a slot");
                    let crc = crc32c::crc32c(&buf[4..]);
                    buf[0..4].copy_from_slice(&crc.to_le_bytes());
                }
                st.zone_wp[z as usize] += 1;
                i += 1;
            }
            if !run.is_empty() {
                runs.push((first, run, z));
            }
            if st.zone_wp[z as usize] >= zp {
                // Sealed before its data lands: safe, GC only runs under `io` (this thread).
                st.open.retain(|&o| o != z);
                st.space.get_mut().seal(z);
                if i < slots.len() {
                    // The full zone's data must reach the device before the next zone's
                    // header: ZNS would see one open zone too many, and on a conventional SSD
                    // the header would land inside the previous group's stream and shift every
                    // later active group against the SSD superblocks (NoWA alignment).
                    for (first, run, z) in runs.drain(..) {
                        self.write_run(first, &run, z, kind)?;
                    }
                }
            }
        }
        drop(guard);
        for (first, run, z) in &runs {
            self.write_run(*first, run, *z, kind)?;
        }
        // The new versions are durable before the mapping points at them.
        self.dev.flush()?;
        let mut guard = self.st.write();
        let st: &mut State = &mut guard;
        for (m, loc) in locs {
            let pid = items[m].pid;
            let z = self
                .zone_of(loc.block)
                .expect("placed inside the zone area");
            let old = st.map[pid as usize];
            if old.block != NO_BLOCK {
                let oz = self
                    .zone_of(old.block)
                    .expect("mapped inside the zone area");
                st.space.get_mut().sub_valid(oz, old.bytes());
            }
            st.space.get_mut().add_valid(z, loc.bytes());
            st.map[pid as usize] = loc;
            if self.cfg.gdt {
                let e = &mut st.zone_edt[z as usize];
                e.0 += items[m].edt.min(1 << 52) as f64;
                e.1 += 1;
            }
            st.rev[z as usize].push(pid);
        }
        let c = match kind {
            WriteKind::Eviction => &self.counters.eviction_page_writes,
            WriteKind::Checkpoint => &self.counters.checkpoint_page_writes,
            WriteKind::Gc => &self.counters.gc_page_writes,
            WriteKind::Compensation => &self.counters.compensation_page_writes,
        };
        Counters::add(c, items.len() as u64);
        Ok(())
    }

    /// Write one placed run of slots into zone `z` (ZNS: zone append; writers are serialized
    /// by `io`, so the append lands where the run was placed).
    fn write_run(&self, first: u64, run: &[u8], z: u32, kind: WriteKind) -> Result<()> {
        if self.zoned {
            let at = self.dev.zone_append(self.zone_block(z) * BS, run)?;
            if at != first * BS {
                return Err(EngineError::Device(DeviceError::Zone(format!(
                    "zone append landed at {at}, expected {}",
                    first * BS
                ))));
            }
        } else {
            self.dev.write_at_hinted(first * BS, run, self.hint(z))?;
        }
        self.count_bytes(kind, run.len() as u64);
        Ok(())
    }

    fn prepare(&self, pid: Pid, pg: &[u8], edt: u64) -> Item {
        let (codec, data) = compress_page(pg, self.cfg.compression, self.cfg.zstd_level);
        Item {
            pid,
            lsn: page::lsn(pg),
            codec,
            data,
            edt,
            index: None,
        }
    }

    /// Read the durable image of `pid` at `loc` into `buf` (decompressing).
    fn read_loc(&self, pid: Pid, loc: Loc, buf: &mut [u8], tmp: &mut [u8]) -> Result<()> {
        if loc.len == 0 {
            self.dev.read_at(loc.block * BS, buf)?;
            return Ok(());
        }
        self.dev.read_at(loc.block * BS, tmp)?;
        let (o, n) = (loc.off as usize, loc.len as usize);
        if o + n > PAGE_SIZE {
            return Err(crate::error::corrupt(pid, "slot entry outside its slot"));
        }
        decompress_page(loc.codec, &tmp[o..o + n], buf)
            .map_err(|e| crate::error::corrupt(pid, format!("decompression failed: {e}")))
    }

    /// The victims of one GC round: the greedy zone, or (NoWA) a whole group.
    fn pick_victims(&self, st: &mut State) -> Result<Vec<(u32, WriteKind)>> {
        if self.cfg.nowa {
            self.pick_group(st)
        } else {
            let v = st.space.get_mut().pick_victim().map_err(|_| {
                EngineError::Full("out-of-place: no GC victim (every zone fully valid)".into())
            })?;
            Ok(vec![(v, WriteKind::Gc)])
        }
    }

    /// Foreground DB GC: greedy victims (logspace) until `reserve` zones are free (the low
    /// watermark). Caller holds `io`.
    fn gc(&self) -> Result<()> {
        let reserve = Self::reserve_for(&self.cfg, self.open_limit);
        let mut rounds = 0u32;
        loop {
            let victims: Vec<(u32, WriteKind)> = {
                let mut guard = self.st.write();
                let st: &mut State = &mut guard;
                let due = self.due_compensation(st, false);
                if !due.is_empty() {
                    due
                } else {
                    if st.space.get_mut().free_units() >= reserve {
                        return Ok(());
                    }
                    rounds += 1;
                    if rounds > self.geo.zones * 2 {
                        return Err(EngineError::Full(
                            "out-of-place: GC cannot free a zone (data does not fit)".into(),
                        ));
                    }
                    match self.pick_victims(st) {
                        Err(EngineError::Full(_)) if !st.pending.is_empty() => {
                            self.due_compensation(st, true)
                        }
                        r => r?,
                    }
                }
            };
            Counters::add(&self.counters.gc_rounds_foreground, 1);
            for (v, kind) in victims {
                self.relocate_zone(v, kind)?;
            }
        }
    }

    /// High watermark of the background GC (free zones).
    fn high_watermark(&self) -> u32 {
        let low = Self::reserve_for(&self.cfg, self.open_limit);
        if self.cfg.gc_high_zones > low {
            self.cfg.gc_high_zones
        } else {
            low + 1
        }
    }

    /// Free zones the background GC aims for: the high watermark, but at most what the live
    /// data allows minus a margin of two zones (otherwise it would keep compacting almost
    /// fully valid zones for nothing when the store is nearly full).
    fn bg_target(&self, st: &mut State) -> u32 {
        let open = st.open.len() as u64;
        let space = st.space.get_mut();
        let cap = space.unit_capacity().max(1) as u64;
        let valid: u64 = (0..self.geo.zones).map(|z| space.valid(z) as u64).sum();
        let reachable = (self.geo.zones as u64).saturating_sub(open + valid.div_ceil(cap) + 2);
        (self.high_watermark() as u64).min(reachable) as u32
    }

    /// One background GC pass: rounds while fewer than the target free zones are free.
    /// Takes `io` per round (one victim zone or NoWA group), so foreground writers interleave
    /// between rounds; the relocation itself is the foreground one (same crash behaviour).
    fn bg_pass(&self) -> Result<()> {
        let mut rounds = 0u32;
        loop {
            if self.bg_sig.stopped() {
                return Ok(());
            }
            let io = self.io.lock();
            let victims: Vec<(u32, WriteKind)> = {
                let mut guard = self.st.write();
                let st: &mut State = &mut guard;
                let due = self.due_compensation(st, false);
                if !due.is_empty() {
                    due
                } else {
                    let target = self.bg_target(st);
                    if st.space.get_mut().free_units() >= target {
                        return Ok(());
                    }
                    rounds += 1;
                    if rounds > self.geo.zones * 2 {
                        return Ok(());
                    }
                    match self.pick_victims(st) {
                        Ok(v) => v,
                        // Nothing worth reclaiming now; the foreground GC decides if it is
                        // fatal.
                        Err(EngineError::Full(_)) => return Ok(()),
                        Err(e) => return Err(e),
                    }
                }
            };
            Counters::add(&self.counters.gc_rounds_background, 1);
            for (v, kind) in victims {
                self.relocate_zone(v, kind)?;
            }
            parking_lot::MutexGuard::unlock_fair(io);
            self.bg_sig.progress(true);
        }
    }

    /// Start the background GC thread (no-op when `background_gc` is off or it runs).
    pub fn start_background_gc(self: &Arc<Self>) {
        if !self.cfg.background_gc {
            return;
        }
        let mut h = self.bg.lock();
        if h.is_some() || self.bg_sig.stopped() {
            return;
        }
        let weak = Arc::downgrade(self);
        let sig = self.bg_sig.clone();
        self.bg_sig.m.lock().alive = true;
        match std::thread::Builder::new()
            .name("nowa-db-gc".into())
            .spawn(move || bg_loop(weak, sig))
        {
            Ok(j) => *h = Some(j),
            Err(e) => {
                self.bg_sig.m.lock().alive = false;
                tracing::warn!(error = %e, "cannot start the background DB GC thread");
                *self.bg_error.lock() = Some(e.to_string());
            }
        }
    }

    /// Stop the background GC thread and wait for it (its current round finishes first).
    pub fn stop_background_gc(&self) {
        {
            let mut f = self.bg_sig.m.lock();
            f.stop = true;
            self.bg_sig.cv.notify_all();
        }
        let h = self.bg.lock().take();
        if let Some(h) = h {
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }

    /// Is the background GC thread running?
    pub fn background_gc_running(&self) -> bool {
        self.bg.lock().as_ref().is_some_and(|h| !h.is_finished())
    }

    /// Why the background GC thread stopped on its own (a device error), if it did.
    pub fn background_gc_error(&self) -> Option<String> {
        self.bg_error.lock().clone()
    }

    /// A writer about to run foreground GC (fewer than `reserve` free zones) first waits up
    /// to `BG_WAIT` for the background GC: until enough zones are free, or a background pass
    /// ends without getting there (then the foreground GC does the rest), or the thread is
    /// gone. So foreground GC stays the fallback and rarely runs.
    fn wait_for_bg(&self) {
        if !self.cfg.background_gc {
            return;
        }
        let reserve = Self::reserve_for(&self.cfg, self.open_limit);
        let deadline = std::time::Instant::now() + BG_WAIT;
        let sig = &*self.bg_sig;
        let mut f = sig.m.lock();
        let passes = f.passes;
        loop {
            if f.stop || !f.alive || f.passes > passes + 1 {
                return;
            }
            if self.st.read().space.lock().free_units() >= reserve {
                return;
            }
            f.kick = true;
            sig.cv.notify_one();
            if sig.done.wait_until(&mut f, deadline).timed_out() {
                return;
            }
        }
    }

    /// Wake the background GC if free zones are below the high watermark.
    fn kick_bg(&self, free: u32) {
        if self.cfg.background_gc && free < self.high_watermark() {
            let mut f = self.bg_sig.m.lock();
            if !f.kick {
                f.kick = true;
                self.bg_sig.cv.notify_one();
            }
        }
    }

    /// Deferred NoWA compensation: the sibling zones of the oldest waiting group, once the
    /// estimated SSD free space runs short (or `force`: GC found no other victim). Estimate:
    /// the SSD holds physical capacity x (1 + `ssd_op`); everything but the free (trimmed)
    /// zones is taken as mapped, and the trimmed zones of waiting groups stay pinned in SSD
    /// superblocks shared with their siblings. Compensation is due when mapped + pinned +
    /// a margin of two groups (writes until the next check, the SSD's own GC reserve) would
    /// exceed the physical space: the latest point before the SSD would have to copy.
    fn due_compensation(&self, st: &mut State, force: bool) -> Vec<(u32, WriteKind)> {
        if st.pending.is_empty() {
            return Vec::new();
        }
        let zb = self.zone_bytes();
        let cap = self.dev.geometry().capacity;
        let free = st.space.get_mut().free_units() as u64;
        let mapped = cap.saturating_sub(free * zb);
        let physical = cap as f64 * (1.0 + self.cfg.ssd_op.max(0.0));
        let margin = 2 * self.open_limit as u64 * zb;
        if !force && ((mapped + st.pinned + margin) as f64) <= physical {
            return Vec::new();
        }
        let Some(p) = st.pending.pop_front() else {
            return Vec::new();
        };
        st.pinned = st.pinned.saturating_sub(p.pinned);
        let space = st.space.get_mut();
        let mut out = Vec::with_capacity(p.zones.len());
        for z in p.zones {
            // Still a sealed zone of that group (always, unless the invariant broke).
            if st.zone_group[z as usize] == p.group
                && space.state(z) == UnitState::Sealed
                && space.take_victim(z).is_ok()
            {
                out.push((z, WriteKind::Compensation));
            }
        }
        out
    }

    /// Groups waiting for deferred compensation writes (tests, reports).
    pub fn pending_compensation_groups(&self) -> usize {
        self.st.read().pending.len()
    }

    /// NoWA victim choice: whole active groups, so that every zone written together (and
    /// multiplexed into the same SSD superblocks) is invalidated together. The group with
    /// the least valid data wins (greedy over groups); its least valid zone is the GC
    /// victim proper, its siblings are compensation writes. Groups with an open zone are
    /// skipped (not fully written yet).
    fn pick_group(&self, st: &mut State) -> Result<Vec<(u32, WriteKind)>> {
        use std::collections::HashMap;
        let waiting: Vec<u64> = st.pending.iter().map(|p| p.group).collect();
        let space = st.space.get_mut();
        let mut groups: HashMap<u64, (u64, Vec<u32>, bool)> = HashMap::new();
        for z in 0..self.geo.zones {
            let g = st.zone_group[z as usize];
            if waiting.contains(&g) {
                // Its siblings wait for their (deferred) compensation writes.
                continue;
            }
            match space.state(z) {
                UnitState::Sealed => {
                    let e = groups.entry(g).or_default();
                    e.0 += space.valid(z) as u64;
                    e.1.push(z);
                }
                UnitState::Open => groups.entry(g).or_default().2 = true,
                _ => {}
            }
        }
        let cap = space.unit_capacity() as u64;
        let best = groups
            .into_iter()
            .filter(|(_, (v, zs, open))| !open && !zs.is_empty() && *v < cap * zs.len() as u64)
            .min_by_key(|(g, (v, zs, _))| (*v * 1024 / zs.len() as u64, *g));
        let Some((_, (_, mut zs, _))) = best else {
            return Err(EngineError::Full(
                "out-of-place: no GC victim group (every group fully valid)".into(),
            ));
        };
        zs.sort_by_key(|&z| space.valid(z));
        if self.cfg.defer_compensation && zs.len() > 1 {
            // Reclaim only the least valid zone now; the siblings wait.
            let v = zs.remove(0);
            space
                .take_victim(v)
                .map_err(|e| EngineError::Full(e.to_string()))?;
            let g = st.zone_group[v as usize];
            let pinned = self.zone_bytes();
            st.pinned += pinned;
            st.pending.push_back(Pending {
                group: g,
                zones: zs,
                pinned,
            });
            return Ok(vec![(v, WriteKind::Gc)]);
        }
        let mut out = Vec::with_capacity(zs.len());
        for (i, z) in zs.into_iter().enumerate() {
            space
                .take_victim(z)
                .map_err(|e| EngineError::Full(e.to_string()))?;
            out.push((
                z,
                if i == 0 {
                    WriteKind::Gc
                } else {
                    WriteKind::Compensation
                },
            ));
        }
        Ok(out)
    }

    /// Rewrite every valid page of zone `v` (InGc), then trim it and free it. Caller holds
    /// `io`, so the locations read here cannot change underneath.
    fn relocate_zone(&self, v: u32, kind: WriteKind) -> Result<()> {
        let valid: Vec<(Pid, Loc)> = {
            let mut st = self.st.write();
            let mut pids = std::mem::take(&mut st.rev[v as usize]);
            pids.sort_unstable();
            pids.dedup();
            pids.into_iter()
                .map(|p| (p, st.map[p as usize]))
                .filter(|(_, l)| l.block != NO_BLOCK && self.zone_of(l.block) == Some(v))
                .collect()
        };
        // GDT: relocate in descending EDT order (never-rewritten pages are the coldest);
        // GC writes do not update the write history.
        let edts: Vec<u64> = if self.cfg.gdt {
            let st = self.st.read();
            valid
                .iter()
                .map(|&(p, _)| {
                    let wh = st.wh[p as usize];
                    let last = wh.iter().copied().max().unwrap_or(0);
                    edt(&wh, last)
                })
                .collect()
        } else {
            vec![u64::MAX; valid.len()]
        };
        // Descending EDT; without GDT every EDT is MAX and the order stays as it is.
        let order = gc_order(&edts);
        let edt_map: std::collections::HashMap<Pid, u64> = valid
            .iter()
            .zip(&edts)
            .map(|(&(p, _), &e)| (p, e))
            .collect();
        let valid: Vec<(Pid, Loc)> = order.iter().map(|&i| valid[i]).collect();
        let edt_of = |p: Pid| edt_map.get(&p).copied().unwrap_or(u64::MAX);
        let cache = self.cache.lock().as_ref().and_then(|w| w.upgrade());
        let mut tmp = vec![0u8; PAGE_SIZE];
        let mut img = vec![0u8; PAGE_SIZE];
        for chunk in valid.chunks(GC_BATCH) {
            let mut items = Vec::with_capacity(chunk.len());
            for &(pid, loc) in chunk {
                // Sharing the buffer pool: a clean cached copy of this version saves the read.
                let hit = cache
                    .as_ref()
                    .is_some_and(|c| c.copy_if_clean(pid, &mut img));
                if hit && page::lsn(&img) == loc.lsn {
                    page::seal(&mut img);
                    Counters::add(&self.counters.gc_pool_hits, 1);
                } else {
                    self.read_loc(pid, loc, &mut img, &mut tmp)?;
                    Counters::add(&self.counters.gc_page_reads, 1);
                }
                page::validate(&img, pid)?;
                items.push(self.prepare(pid, &img, edt_of(pid)));
            }
            self.write_items(items, kind)?;
        }
        let zb = self.zone_block(v);
        {
            let st = self.st.read();
            let left = st.space.lock().valid(v);
            if left != 0 {
                return Err(EngineError::Full(format!(
                    "GC of zone {v} left {left} valid bytes"
                )));
            }
        }
        if self.zoned {
            self.dev.zone_reset(zb * BS)?;
        } else {
            match self.dev.trim(zb * BS, self.geo.zone_pages * BS) {
                Ok(()) | Err(DeviceError::Unsupported(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let mut st = self.st.write();
        st.space.get_mut().erase(v);
        st.rev[v as usize].clear();
        Counters::add(&self.counters.zones_reclaimed, 1);
        Ok(())
    }

    /// Serialize the superblock metadata.
    fn meta_bytes(
        &self,
        copy: u8,
        has: bool,
        crc: u32,
        n: u64,
        threshold: u64,
        next_seq: u64,
    ) -> Vec<u8> {
        let mut m = vec![0u8; META_LEN];
        m[0..4].copy_from_slice(&META_MAGIC.to_le_bytes());
        m[4..8].copy_from_slice(&META_VERSION.to_le_bytes());
        m[8..12].copy_from_slice(&self.db_id.to_le_bytes());
        m[12..16].copy_from_slice(&self.geo.zones.to_le_bytes());
        m[16..24].copy_from_slice(&self.geo.zone_first.to_le_bytes());
        m[24..32].copy_from_slice(&self.geo.zone_pages.to_le_bytes());
        m[32..40].copy_from_slice(&self.geo.meta_start.to_le_bytes());
        m[40..48].copy_from_slice(&self.geo.meta_blocks.to_le_bytes());
        m[48..56].copy_from_slice(&self.geo.capacity.to_le_bytes());
        m[56] = copy;
        m[57] = has as u8;
        m[58] = self.geo.meta_on_log as u8;
        m[60..64].copy_from_slice(&crc.to_le_bytes());
        m[64..72].copy_from_slice(&n.to_le_bytes());
        m[72..80].copy_from_slice(&threshold.to_le_bytes());
        m[80..88].copy_from_slice(&next_seq.to_le_bytes());
        m[88..96].copy_from_slice(&self.st.read().clock.to_le_bytes());
        m
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
