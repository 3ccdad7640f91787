//! The out-of-place write path (how-to-write-to-ssds.md sections 3-6): zones (the DB GC
//! unit) managed by `nowa_logspace::Space` (the same log-structured space the FTL model uses
//! for superblocks), a two-level pid -> (block, compressed size, generation) table of 12-byte
//! entries sized by the written pages (`map.rs`; no reverse map: GC reads its victims),
//! per-page compression (LZ4 / ZSTD) with 4 KiB best-fit page packing, DB GC through the
//! space's victim policy (greedy; GDT's batch policy; NoWA's groups) that shares the buffer
//! pool (clean cached pages are not re-read), FDP placement hints, a space limit, and an
//! incremental mapping snapshot per checkpoint. No doublewrite buffer: an old version stays mapped
//! until its new version is durable. On-disk formats and crash cases: docs/design.md section
//! 14; the formats themselves: `crate::format::{zone, meta}`.
//!
//! Layout: `mod.rs` (configuration, store state, the `PageStore` impl), `build.rs`
//! (construction at create and open), `codec.rs` (per-page compression), `pack.rs` (4 KiB
//! best-fit slot packing), `gdt.rs` (deathtime grouping), `write.rs` (zone opening, FDP/ZNS
//! placement, slot writes, reads), `map.rs` (the mapping), `gc.rs` (DB GC rounds,
//! relocation), `bg.rs` (the
//! background GC thread), `nowa.rs` (when NoWA's deferred compensation is due),
//! `snapshot.rs` (mapping snapshots), `recovery.rs` (zone roll-forward, ZNS partial zones),
//! `chain.rs` / `chain_gc.rs` / `dcache.rs` (sub-page deltas, their DB GC, the delta cache).

mod bg;
mod build;
mod chain;
mod chain_gc;
mod codec;
mod dcache;
mod frozen;
mod gc;
mod gdt;
mod map;
mod nowa;
mod pack;
mod place;
mod recovery;
mod snapshot;
mod trim;
mod wlog;
mod write;

pub use crate::format::zone::{
    Compression, CODEC_DELTA, CODEC_LZ4, CODEC_RAW, CODEC_ZSTD, SLOT_ENTRY, SLOT_HDR,
};
pub use build::snapshot_area_bytes;
pub use codec::{compress_page, decompress_page};
pub use frozen::{FrozenBase, FrozenHook, OracleFactory, PageOracle};
pub use gdt::{closest_zone, edt, gc_order, gdt_groups, gdt_split};
pub use pack::pack;

use crate::error::{Exhausted, MappingDamage, PageDamage, Pid, Result, WritePathKind};
use crate::format::delta;
use crate::format::superblock::WritePath;
use crate::format::zone::GEN_MASK;
use crate::num::{u64_of, usize_of};
use crate::page::PAGE_SIZE;
use crate::stats::EngineCounters;
use crate::store::{PageCache, PageStore, StoreBuilder, StoreContext, StoreRecovery, WriteKind};
use bg::BgSignal;
use nowa_device::BlockDevice;
use nowa_logspace::{Space, UnitState};
use parking_lot::{Mutex, RwLock};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

const BS: u64 = PAGE_SIZE as u64;
const NO_BLOCK: u64 = u64::MAX;
/// Pages per GC relocation batch.
const GC_BATCH: usize = 64;

/// Out-of-place configuration (create time; at open the zone geometry comes from the
/// checkpoint metadata and the rest only steers new writes).
#[derive(Debug, Clone, serde::Serialize)]
pub struct OopConfig {
    /// Zone size in bytes (DB GC unit). None: the device's FDP reclaim-unit size or zone
    /// size if it has one, else 1 MiB. At open, Some(x) must equal the database's.
    pub zone_bytes: Option<u64>,
    /// Zones appended to concurrently (the active group). FDP: clamped to handles - 1.
    pub open_zones: u32,
    /// Compression of new writes.
    pub compression: Compression,
    /// ZSTD level.
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
    /// Seed of the placement randomness.
    pub seed: u64,
    /// Bound on the zone area in bytes (create time; None: the whole device). The store
    /// uses at most this much of the device (plus the metadata region), so DB GC starts
    /// when the limit is full, not when the device is; the page capacity shrinks with it
    /// (the store still guarantees room for every page uncompressed).
    pub space_limit_bytes: Option<u64>,
    /// Every this many checkpoints the mapping snapshot is a full one; the others write only
    /// the entries changed since the previous snapshot (>= 1; 1: always full).
    pub snapshot_full_every: u32,
    /// A placement scheme of the shared space (`nowa_logspace`): it chooses the class (open
    /// zone) of every user write and GC relocation, with one open zone per class (so
    /// `open_zones` is ignored). None: the engine's own placement (GDT, NoWA, or one random
    /// open zone per batch). Not with `gdt` or `nowa`. The FK oracles need the future and
    /// are refused (replay a recorded write log in the placement simulator instead).
    pub placement: Option<nowa_logspace::PlacementKind>,
    /// DB GC victim policy. None: greedy (GDT: its batch policy) without a placement scheme,
    /// SepBIT's cost-benefit with one.
    pub gc_victim: Option<nowa_logspace::PolicyKind>,
    /// Also run DB GC when the garbage proportion of the sealed zones exceeds this fraction
    /// (SepBIT's log, e.g. 0.15), collecting only zones whose own garbage proportion reaches
    /// it; the free-zone watermark stays as the backstop. None: the watermark alone.
    pub gc_garbage_proportion: Option<f64>,
    /// SepFrozenBIT / SepFrozenDAC with an oracle over page images (`frozen.rs`): replaces
    /// `placement`; not with it, GDT or NoWA.
    pub frozen: Option<FrozenHook>,
    /// Sub-page persistence (issue 31 item 1): a user write-back that changed few bytes of a
    /// page since its last durable copy is written as a delta over that copy's
    /// chain (`chain.rs`), packed with other pages and deltas.
    pub deltas: bool,
    /// Most deltas in one chain; the next write-back of the page writes it whole.
    pub delta_chain: u32,
    /// A new delta replaces the pid's newest delta (their ranges' union, the current bytes)
    /// while the merged payload stays within this many bytes (0: never merge). Merging
    /// keeps chains short (each element costs a read on a miss) at the price of rewriting
    /// recent changes (docs/engine-writes.md: the merging trade-off).
    pub delta_merge: u32,
    /// Bytes of memory for the delta cache (`dcache.rs`: the cumulative change of chained
    /// pages, so a miss reads the base alone); 0: off. Memory beside the buffer pool.
    pub delta_cache_bytes: u64,
    /// Trim and free a sealed zone as soon as every copy in it died (`trim.rs`), instead of
    /// when DB GC needs free zones: the SSD then stops holding dead deltas as valid data.
    pub trim_dead_zones: bool,
    /// NoWA with the WAL on the same conventional SSD (no separate log device, no FDP
    /// handles, not zoned): the background DB GC keeps at least this share of the zones free
    /// (trimmed), in [0, 1). The WAL's blocks interleave with the groups in the SSD's write
    /// stream, so a group no longer fills whole SSD superblocks, and zones that hold mostly
    /// dead copies but are not yet trimmed are valid data to the SSD: without a trimmed
    /// margin the SSD's own GC copies them once the device was written over
    /// (docs/engine-writes.md, session 8). 0: the reserve alone (`gc_high_zones`).
    pub shared_wal_free: f64,
}

/// Default of `OopConfig::shared_wal_free`.
pub const SHARED_WAL_FREE: f64 = 0.2;

impl OopConfig {
    /// Zones appended to concurrently: one per class of the placement scheme, else
    /// `open_zones` (before the device's limits).
    #[must_use]
    pub fn zones_open(&self) -> u32 {
        match (&self.frozen, self.placement) {
            (Some(f), _) => u32::from(f.classes),
            (None, Some(k)) => u32::from(k.build().classes()),
            (None, None) => self.open_zones.max(1),
        }
    }

    /// Zones kept out of the page capacity: the open zones, the GC reserve and one more.
    #[must_use]
    pub fn spare_zones(&self) -> u32 {
        let open = self.zones_open();
        open + OutOfPlaceStore::reserve_for(self, open) + 1
    }

    /// Bytes of zone area that hold `pages` uncompressed pages with zones of `zone_bytes`
    /// (the capacity guarantee of the store: GC can always make progress, even when nothing
    /// compresses), plus two zones for alignment and the mapping snapshots.
    #[must_use]
    pub fn zone_area_for(&self, pages: u64, zone_bytes: u64) -> u64 {
        let per_zone = (zone_bytes / BS).saturating_sub(1).max(1);
        (pages.div_ceil(per_zone) + u64::from(self.spare_zones()) + 2) * zone_bytes
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
            space_limit_bytes: None,
            snapshot_full_every: 16,
            placement: None,
            gc_victim: None,
            gc_garbage_proportion: None,
            frozen: None,
            deltas: false,
            delta_chain: 8,
            delta_merge: chain::DELTA_MERGE_BYTES,
            delta_cache_bytes: 0,
            trim_dead_zones: false,
            shared_wal_free: SHARED_WAL_FREE,
        }
    }
}

/// The [`StoreBuilder`] of the out-of-place path.
struct OopBuilder(OopConfig);

impl StoreBuilder for OopBuilder {
    fn kind(&self) -> WritePathKind {
        WritePathKind::OutOfPlace
    }
    fn build(&self, ctx: StoreContext) -> Result<Arc<dyn PageStore>> {
        Ok(Arc::new(OutOfPlaceStore::new(ctx, self.0.clone())?))
    }
}

/// A [`StoreBuilder`] for the out-of-place path.
#[must_use]
pub fn out_of_place_store(cfg: OopConfig) -> impl StoreBuilder {
    OopBuilder(cfg)
}

/// Where a pid's current version lives (in memory: 12 bytes, `map::Packed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Loc {
    /// Absolute device block; NO_BLOCK = never written (or released: the generation stays).
    block: u64,
    /// Version check: the low `map::VER_BITS` bits of the page LSN.
    ver: u32,
    /// Compressed length; 0 = the block is the raw page.
    len: u16,
    /// The copy holds its slot alone (raw, or the only entry of a packed slot).
    whole: bool,
    codec: u8,
    /// Store generation of this copy (24 bits, +1 per write of the pid: orders the copies of
    /// a pid, the newest copy wins).
    gen: Gen,
}

/// A 24-bit store generation in 3 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Gen([u8; 3]);

impl Gen {
    const ZERO: Gen = Gen([0; 3]);
    fn new(g: u32) -> Gen {
        let [a, b, c, _] = (g & GEN_MASK).to_le_bytes();
        Gen([a, b, c])
    }
    fn get(self) -> u32 {
        let [a, b, c] = self.0;
        u32::from_le_bytes([a, b, c, 0])
    }
}

impl Loc {
    const NONE: Loc = Loc {
        block: NO_BLOCK,
        ver: 0,
        len: 0,
        whole: false,
        codec: 0,
        gen: Gen::ZERO,
    };
    /// Bytes this version occupies in its zone (the `Space` valid amount). A page alone in
    /// its slot (raw, or the only entry of a packed slot) holds the whole slot: the slot is
    /// freed only when that page dies.
    fn bytes(&self) -> u32 {
        // A delta counts its entry and payload even alone in a slot: the slot stays
        // allocated, but the chain it belongs to is rewritten soon (bounded chains).
        if self.codec == CODEC_DELTA {
            u32::from(self.len) + crate::num::u32_of(SLOT_ENTRY)
        } else if self.len == 0 || self.whole {
            crate::num::u32_of(PAGE_SIZE)
        } else {
            u32::from(self.len) + crate::num::u32_of(SLOT_ENTRY)
        }
    }

    /// Does this copy hold the page version with LSN `lsn` (as far as the check bits tell)?
    fn holds_lsn(&self, lsn: u64) -> bool {
        self.ver == map::ver_of(lsn)
    }

    /// Is `self` a newer durable copy than `cur`? Every write of a pid (user or GC) takes
    /// the mapped copy's generation + 1, so the generation orders the copies of a pid; a
    /// released pid keeps its generation. Equal generations (two copies that both followed
    /// one lost before a crash) are ordered by the LSN check bits, wrapping.
    fn newer_than(&self, cur: &Loc) -> bool {
        if cur.block == NO_BLOCK && cur.gen == Gen::ZERO {
            return true;
        }
        let (a, b) = (self.gen.get(), cur.gen.get());
        if a != b {
            return crate::format::zone::gen_newer(a, b);
        }
        // Same generation: the released copy itself, the same copy twice, or a fork.
        let d = self.ver.wrapping_sub(cur.ver) & ((1 << map::VER_BITS) - 1);
        cur.block != NO_BLOCK && d != 0 && d < 1 << (map::VER_BITS - 1)
    }

    /// The generation of the next copy of this pid.
    fn next_gen(&self) -> u32 {
        (self.gen.get() + 1) & GEN_MASK
    }
}

struct State {
    /// In a Mutex only to make State Sync (the policy is Send); accessed via get_mut under
    /// the write lock.
    space: Mutex<Space>,
    /// pid -> location, sized by the written pages (`map.rs`). No reverse map: DB GC finds
    /// a victim's pages by reading the victim (its slots name their pids).
    map: map::PageMap,
    zone_seq: Vec<u64>,
    /// The next active group (NoWA; every zone opened outside NoWA is a group of its own).
    /// Each zone's group is kept in the space (`Space::group`), the history in the zone
    /// headers.
    next_group: u64,
    /// GDT: last 4 write timestamps per pid (user writes only) and the write clock.
    wh: Vec<[u64; 4]>,
    clock: u64,
    /// The placement scheme (`place.rs`), driven as the FTL model drives it (in a Mutex only
    /// to make State Sync, like the space).
    placer: Mutex<nowa_logspace::Placer>,
    /// SepFrozen: where the DB GC leaves the images of the victim it announces.
    stash: Option<frozen::Stash>,
    /// The DB-written-page timer as this store knows it: the largest HR_current write time
    /// of its user writes since open (SepFrozen's age input, `frozen::PageOracle::predict_at`).
    hot_now: u64,
    /// Next block inside each open zone (block 0 is the zone header).
    zone_wp: Vec<u64>,
    open: Vec<u32>,
    /// Fallback zone choice of a class without an open zone (random, per group).
    cursor: usize,
    next_seq: u64,
    /// The mapping-snapshot chain (copy of the full snapshot, deltas after it).
    snap: snapshot::Chains,
    rng: u64,
    /// Pids whose newest copy is a delta: the rest of the chain, base first (`chain.rs`).
    chains: std::collections::HashMap<Pid, Vec<Loc>>,
    /// The ranges of each pid's newest delta written since open (merging needs them).
    head_spans: std::collections::HashMap<Pid, delta::Spans>,
}

/// Zone/area geometry (persisted in the checkpoint metadata).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Geo {
    zone_first: u64,
    zone_pages: u64,
    zones: u32,
    meta_start: u64,
    /// Blocks per metadata copy: the full area, then the delta area.
    meta_blocks: u64,
    full_blocks: u64,
    capacity: u64,
    /// The metadata region is on the log device.
    meta_on_log: bool,
}

/// The out-of-place page store.
pub struct OutOfPlaceStore {
    dev: Arc<dyn BlockDevice>,
    /// Where the mapping snapshots go: the log device if there is one, else `dev`.
    meta_dev: Arc<dyn BlockDevice>,
    cfg: OopConfig,
    counters: Arc<EngineCounters>,
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
    bg_error: Mutex<Option<Arc<crate::error::EngineError>>>,
    /// Open: why the current mapping snapshot was rejected (the older one was used).
    fallback: Option<crate::error::Corruption>,
    /// The write log's observer (`--record-writes`, `wlog.rs`).
    wlog: crate::buffer::hotness::ObserverSlot,
    /// The delta cache (`dcache.rs`); locked after `st`, never before it.
    dcache: Mutex<dcache::Cache>,
    /// The engine's yield site (`crate::yields`): a GC round yields holding `io`.
    yields: std::sync::OnceLock<crate::YieldFn>,
    /// Open: the copy with the highest LSN the roll-forward found (pid, LSN), for the
    /// engine's check against the log's end (`PageStore::newest_written`).
    newest: std::sync::OnceLock<(Pid, u64)>,
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
    /// The version's hotness records (its page header), for the write log.
    hot: nowa_logspace::hotness::PageHotness,
    /// Placement class (the open zone it goes to).
    class: u16,
    /// GC: the victim zone the page moves out of.
    from: Option<u32>,
    /// A user write-back that may become a delta: the changed ranges and the page image
    /// (decided under `io` by `finalize_deltas`).
    delta: Option<(delta::Spans, Vec<u8>)>,
    /// GC move of an older chain element (not the pid's newest copy): the copy keeps this
    /// generation and the chain, not the mapping, names it.
    keep_gen: Option<u32>,
    /// A delta: its ranges, and whether it replaces the newest delta (merged) instead of
    /// extending the chain (`finalize_deltas`).
    delta_spans: delta::Spans,
    replaces_head: bool,
    /// A delta whose chain's cumulative change is known: the union of the chain's ranges
    /// and the page's bytes there (for the delta cache, `dcache.rs`).
    cum: Option<(delta::Spans, Vec<u8>)>,
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

impl OutOfPlaceStore {
    fn zone_of(&self, block: u64) -> Option<u32> {
        if block < self.geo.zone_first {
            return None;
        }
        let z = (block - self.geo.zone_first) / self.geo.zone_pages;
        u32::try_from(z).ok().filter(|&z| z < self.geo.zones)
    }

    fn zone_block(&self, z: u32) -> u64 {
        assert!(z < self.geo.zones, "zone {z} of {}", self.geo.zones);
        self.geo.zone_first + u64::from(z) * self.geo.zone_pages
    }

    /// Zone size in bytes.
    #[must_use]
    pub fn zone_bytes(&self) -> u64 {
        self.geo.zone_pages * BS
    }
    /// Zones.
    #[must_use]
    pub fn zones(&self) -> u32 {
        self.geo.zones
    }

    /// Name of the placement scheme (`stripe`, `gdt`, `nowa`, or a logspace scheme).
    #[must_use]
    pub fn placement_name(&self) -> String {
        self.st.read().placer.lock().placement().name()
    }

    /// The placement class of every zone holding data or open (None: free zone). The class
    /// is in each zone header, so it survives a restart (tests, reports).
    #[must_use]
    pub fn zone_classes(&self) -> Vec<Option<u16>> {
        let st = self.st.read();
        let space = st.space.lock();
        (0..self.geo.zones)
            .map(|z| (space.state(z) != UnitState::Free).then(|| space.class(z)))
            .collect()
    }

    /// Name of the DB GC's victim policy (a `nowa_logspace` policy: `greedy`,
    /// `greedy-unit` with GDT, `group-greedy` with NoWA, ...).
    #[must_use]
    pub fn victim_policy(&self) -> String {
        self.st.read().space.lock().policy_name()
    }

    /// Per-class statistics since this store was built (index = class; writes in pages,
    /// collected amounts in bytes, the space's unit).
    #[must_use]
    pub fn class_stats(&self) -> Vec<nowa_logspace::ClassStats> {
        self.st.read().space.lock().classes.clone()
    }

    /// The placement's per-class table since this store was built (writes in pages; collected
    /// and valid amounts in bytes, the space's unit; lifespans in user page writes).
    #[must_use]
    pub fn class_report(&self) -> nowa_logspace::ClassReport {
        let st = self.st.read();
        let (placement, report) = {
            let p = st.placer.lock();
            (p.placement().name(), p.report())
        };
        let classes = st.space.lock().class_rows();
        nowa_logspace::ClassReport {
            placement,
            report,
            amount: "bytes",
            classes,
        }
    }

    /// Check the zone metadata against the mapping: valid bytes per zone, no valid data in
    /// a free zone, every mapped copy inside the zones (tests and the recovery rebuild).
    ///
    /// # Errors
    /// The first inconsistency found.
    ///
    /// # Panics
    /// If the mapping's own count of mapped pids disagrees with its entries.
    pub fn check_consistency(&self) -> std::result::Result<(), MappingDamage> {
        let st = self.st.read();
        let space = st.space.lock();
        let mut valid = vec![0u64; usize_of(u64::from(self.geo.zones))];
        let mut mapped = 0u64;
        for (pid, l) in st.map.iter_mapped() {
            mapped += 1;
            let z = self.zone_of(l.block).ok_or(MappingDamage::OutsideZones {
                pid,
                block: l.block,
            })?;
            valid[usize_of(u64::from(z))] += u64::from(l.bytes());
        }
        for (&pid, chain) in &st.chains {
            for l in chain {
                let z = self.zone_of(l.block).ok_or(MappingDamage::OutsideZones {
                    pid,
                    block: l.block,
                })?;
                valid[usize_of(u64::from(z))] += u64::from(l.bytes());
            }
        }
        for z in 0..self.geo.zones {
            let mapped = valid[usize_of(u64::from(z))];
            let counted = u64::from(space.valid(z));
            if counted != mapped {
                return Err(MappingDamage::ValidCount {
                    zone: z,
                    counted,
                    mapped,
                });
            }
            if space.state(z) == UnitState::Free && mapped != 0 {
                return Err(MappingDamage::FreeZoneHoldsData { zone: z, mapped });
            }
        }
        assert_eq!(mapped, st.map.mapped(), "mapped pids counted twice agree");
        space.check_invariants();
        Ok(())
    }
}

impl OutOfPlaceStore {
    /// Write a batch of sealed pages; `changed` (user write-backs with deltas on): each
    /// page's byte ranges changed since its last durable copy (None: unknown).
    fn write_batch(
        &self,
        batch: &[(Pid, &[u8])],
        changed: Option<&[Option<delta::Spans>]>,
        kind: WriteKind,
    ) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        if let Some((pid, _)) = batch.iter().find(|(pid, _)| *pid >= self.geo.capacity) {
            return Err(Exhausted::StoreCapacity {
                pid: *pid,
                capacity: self.geo.capacity,
            }
            .into());
        }
        // Chunks of at most half a zone, so GC (run before each chunk) always leaves room.
        let chunk = (usize_of(self.geo.zone_pages - 1) / 2).clamp(1, GC_BATCH);
        for (ci, part) in batch.chunks(chunk).enumerate() {
            // Compress outside the lock (GDT stamps the write history first).
            let masks = changed.map(|c| &c[ci * chunk..ci * chunk + part.len()]);
            let mut items = self.prepare_batch(part, masks, kind);
            self.wait_for_bg();
            let io = self.io.lock();
            self.gc()?;
            self.finalize_deltas(&mut items);
            self.write_items(items, kind)?;
            // The write clock advanced per page as the placement classified it.
            let free = self.st.write().space.get_mut().free_units();
            // Fair hand-off: a waiting background GC round gets `io` before this writer's next
            // chunk (otherwise a busy writer re-takes the lock at once and starves it).
            parking_lot::MutexGuard::unlock_fair(io);
            self.kick_bg(free);
        }
        Ok(())
    }

    /// The current image of `pid` (rebuilt from its chain when its newest copy is a delta).
    fn read_current(&self, pid: Pid, buf: &mut [u8]) -> Result<()> {
        if pid >= self.geo.capacity {
            return Err(crate::error::page_damage(
                pid,
                PageDamage::BeyondCapacity {
                    capacity: self.geo.capacity,
                },
            ));
        }
        EngineCounters::add(&self.counters.page_reads, 1);
        let mut tmp = vec![0u8; PAGE_SIZE];
        loop {
            let (loc, seq) = self.locate(pid);
            if loc.block == NO_BLOCK {
                buf.fill(0);
                return Ok(());
            }
            let r = if loc.codec == CODEC_DELTA {
                let (chain, main) = self.locate_chain(pid);
                if main != loc {
                    continue;
                }
                self.read_chained(pid, &chain, &main, buf)
            } else {
                self.read_loc(pid, loc, seq, buf, &mut tmp)
            };
            // GC may have moved the page (and trimmed or reused its zone) while we read
            // without the lock: the image is good only if the mapping still names the same
            // version at the same place (a location only changes after the new copy is
            // durable, and a zone is reset only after all its pages moved).
            if self.st.read().map.get(pid) == loc {
                return r;
            }
        }
    }
}

impl OutOfPlaceStore {
    /// A miss on a chained page: the base and the delta cache's cumulative change when it
    /// has the chain's, else the base and every delta (one read per delta: the read cost of
    /// deltas, `delta_reads`).
    fn read_chained(
        &self,
        pid: Pid,
        chain: &chain::ChainLocs,
        main: &Loc,
        buf: &mut [u8],
    ) -> Result<()> {
        EngineCounters::add(&self.counters.delta_chain_misses, 1);
        if self.read_cached(pid, chain, main, buf)? {
            EngineCounters::add(&self.counters.delta_cache_hits, 1);
            return Ok(());
        }
        EngineCounters::add(&self.counters.delta_reads, u64_of(chain.len() - 1));
        let cum = self.read_chain(pid, chain, buf)?;
        self.cache_chain_read(pid, chain, main, cum);
        Ok(())
    }
}

impl PageStore for OutOfPlaceStore {
    fn write_path(&self) -> WritePath {
        WritePath::OutOfPlace {
            zone_bytes: self.zone_bytes(),
            open_zones: self.open_limit,
            compression: self.cfg.compression,
            nowa: self.cfg.nowa,
            gdt: self.cfg.gdt,
            packing: self.cfg.packing,
        }
    }

    fn format(&self) -> Result<()> {
        self.format_zones()
    }

    fn write_pages(&self, batch: &[(Pid, &[u8])], kind: WriteKind) -> Result<()> {
        self.write_batch(batch, None, kind)
    }

    fn newest_written(&self) -> Option<(Pid, u64)> {
        self.newest.get().copied()
    }

    fn checks_log_end(&self) -> bool {
        true
    }

    fn tracks_deltas(&self) -> bool {
        self.deltas_on()
    }

    fn write_pages_changed(
        &self,
        batch: &[(Pid, &[u8])],
        changed: &[Option<delta::Spans>],
        kind: WriteKind,
    ) -> Result<()> {
        assert_eq!(batch.len(), changed.len(), "one change set per page");
        self.write_batch(batch, Some(changed), kind)
    }

    fn read_page(&self, pid: Pid, buf: &mut [u8]) -> Result<()> {
        self.read_current(pid, buf)
    }

    fn capacity_pages(&self) -> u64 {
        self.geo.capacity
    }

    /// ZNS: zones the device still has open after the crash count against its open-zone
    /// limit; close them. The first write of an open.
    fn recover(&self) -> Result<StoreRecovery> {
        if self.zoned {
            self.close_partial_zones()?;
        }
        Ok(StoreRecovery {
            pages_repaired: 0,
            snapshot_fallback: self.fallback.clone(),
        })
    }

    fn checkpoint(&self) -> Result<Vec<u8>> {
        self.write_snapshot()
    }

    /// Unmap `pid`: its current copy becomes garbage for DB GC (under `io`, so no GC move
    /// of it is in flight). A crash before the next snapshot may map it again (zone
    /// roll-forward); the engine releases it again after the open's checkpoint.
    fn release(&self, pid: Pid) -> Result<()> {
        if pid >= self.geo.capacity {
            return Ok(());
        }
        let _io = self.io.lock();
        let mut guard = self.st.write();
        let st: &mut State = &mut guard;
        let old = st.map.get(pid);
        if old.block != NO_BLOCK {
            let z = self
                .zone_of(old.block)
                .expect("mapped inside the zone area");
            st.space.get_mut().sub_valid(z, old.bytes());
            self.drop_chain(st, pid);
            st.placer.get_mut().release(st.space.get_mut(), pid, z);
            // Unmapped, but the generation stays: recovery must not take the old copy back.
            st.map.set(
                pid,
                Loc {
                    gen: old.gen,
                    ..Loc::NONE
                },
            );
            self.log_free(pid, z);
        }
        Ok(())
    }

    fn attach_write_observer(&self, obs: Arc<dyn crate::buffer::hotness::WriteObserver>) -> bool {
        self.wlog.attach(obs)
    }

    fn class_report(&self) -> Option<nowa_logspace::ClassReport> {
        Some(OutOfPlaceStore::class_report(self))
    }

    fn attach_cache(&self, cache: Weak<dyn PageCache>) {
        *self.cache.lock() = Some(cache);
    }

    fn attach_yields(&self, at: crate::YieldFn) {
        let attached = self.yields.set(at).is_ok();
        assert!(attached, "a store attached to two engines' yield sites");
    }

    fn start_background(self: Arc<Self>) {
        self.start_background_gc();
    }

    fn background_step(&self) -> Result<bool> {
        Ok(self.bg_pass()? > 0)
    }

    fn shutdown(&self) {
        self.stop_background_gc();
    }

    fn close(&self) -> Result<()> {
        self.finish_active_group()
    }
}

impl Drop for OutOfPlaceStore {
    fn drop(&mut self) {
        // The thread holds only a weak reference between passes; if the last strong one is
        // dropped by the thread itself, it is not joined (it exits right after).
        self.stop_background_gc();
    }
}
