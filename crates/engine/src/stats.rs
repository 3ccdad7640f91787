//! Write statistics per category (how-to-write-to-ssds.md 7.1): live atomics
//! ([`EngineCounters`]) and their snapshot with derived ratios ([`Stats`]).

use crate::num::ratio;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, Ordering::Relaxed};

/// Striped counter: avoids one contended cache line for per-access statistics.
#[derive(Default)]
pub struct Striped([Padded; 16]);
#[derive(Default)]
#[repr(align(128))]
struct Padded(AtomicU64);

pub(crate) fn stripe() -> usize {
    use std::cell::Cell;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local!(static ID: Cell<usize> = const { Cell::new(usize::MAX) });
    ID.with(|c| {
        if c.get() == usize::MAX {
            c.set(NEXT.fetch_add(1, Ordering::Relaxed) % 16);
        }
        c.get()
    })
}

impl Striped {
    /// Add one.
    #[inline]
    pub fn inc(&self) {
        self.add(1);
    }
    /// Add `v` to this thread's stripe.
    #[inline]
    pub fn add(&self, v: u64) {
        self.0[stripe()].0.fetch_add(v, Ordering::Relaxed);
    }
    /// Sum over the stripes.
    #[must_use]
    pub fn sum(&self) -> u64 {
        self.0.iter().map(|p| p.0.load(Ordering::Relaxed)).sum()
    }
}

/// Buckets of the residency histograms: checkpoints a page was exposed to while resident,
/// 0 ..= 30, and the last bucket for 31 or more.
pub const RESIDENCY_BUCKETS: usize = 32;

/// Live counters of one engine (atomics, updated on the I/O paths; `Stats` is their
/// snapshot).
#[derive(Default)]
pub struct EngineCounters {
    /// User page writes caused by eviction.
    pub eviction_page_writes: AtomicU64,
    /// User page writes issued by checkpoints.
    pub checkpoint_page_writes: AtomicU64,
    /// Copies written to the doublewrite area.
    pub doublewrite_page_writes: AtomicU64,
    /// Eviction page writes done by the background page cleaner (part of eviction writes).
    pub cleaner_page_writes: AtomicU64,
    /// Checkpoint page writes by forced passes (at the WAL limit, explicit checkpoints);
    /// part of checkpoint writes.
    pub forced_checkpoint_page_writes: AtomicU64,
    /// Times a checkpoint sweep deferred a dirty page (hot-page-aware checkpointing).
    pub checkpoint_deferrals: AtomicU64,
    /// Device flushes issued by the page store (in place: doublewrite and home batches).
    pub store_flushes: AtomicU64,
    /// Device flushes issued by checkpoints (superblock writes).
    pub checkpoint_flushes: AtomicU64,
    /// Flush-list batches of the adaptive page cleaner (`Config::flushing`): one per second
    /// of the flush clock, each one checkpoint selection.
    pub flush_batches: AtomicU64,
    /// Pages evicted, by the number of checkpoint passes that found them dirty while they
    /// were resident (the hot-page paper's Figure 1), see [`RESIDENCY_BUCKETS`].
    pub residency_pages: [AtomicU64; RESIDENCY_BUCKETS],
    /// Checkpoint writes of those pages, by the same count (Figure 2).
    pub residency_checkpoint_writes: [AtomicU64; RESIDENCY_BUCKETS],
    /// Pages rewritten by DB GC.
    pub gc_page_writes: AtomicU64,
    /// NoWA compensation page writes (out-of-place only).
    pub compensation_page_writes: AtomicU64,
    /// Device bytes the store wrote for user (eviction + checkpoint) pages: 4096 per page
    /// in place; the packed, compressed slots (+ zone headers) out of place.
    pub user_store_bytes: AtomicU64,
    /// Device bytes written by DB GC / compensation writes (out-of-place).
    pub gc_store_bytes: AtomicU64,
    /// Device bytes written by NoWA compensation.
    pub compensation_store_bytes: AtomicU64,
    /// Mapping-table snapshots (out-of-place checkpoints); not part of DB WAF.
    pub meta_store_bytes: AtomicU64,
    /// Pages GC had to read from the device / found in the buffer pool.
    pub gc_page_reads: AtomicU64,
    /// Pages GC found clean in the buffer pool.
    pub gc_pool_hits: AtomicU64,
    /// Zones erased (trimmed / reset) by DB GC.
    pub zones_reclaimed: AtomicU64,
    /// Of those, zones trimmed early because every copy in them died (`trim_dead_zones`).
    pub zones_trimmed_dead: AtomicU64,
    /// DB GC rounds (one victim zone, or one NoWA group) run by the writer that needed space
    /// (low watermark) / by the background GC thread (high watermark).
    pub gc_rounds_foreground: AtomicU64,
    /// DB GC rounds run by the background thread.
    pub gc_rounds_background: AtomicU64,
    /// Zone header blocks written (included in the user / gc / compensation store bytes).
    pub zone_header_bytes: AtomicU64,
    /// WAL record bytes appended.
    pub wal_record_bytes: AtomicU64,
    /// WAL pad bytes appended by group flushes (block ends; not in `wal_record_bytes`).
    pub wal_pad_bytes: AtomicU64,
    /// WAL bytes written to the device.
    pub wal_device_bytes: AtomicU64,
    /// WAL flushes.
    pub wal_flushes: AtomicU64,
    /// WAL flush marks written (one 4 KiB block each, in `wal_device_bytes`).
    pub wal_marks: AtomicU64,
    /// Key + value bytes the user put.
    pub logical_user_bytes: Striped,
    /// Page reads from the store.
    pub page_reads: AtomicU64,
    /// Extra device reads of page misses for delta chains (one per delta applied; issue 31).
    pub delta_reads: AtomicU64,
    /// User page writes stored as deltas, and their payload bytes (entry headers excluded).
    pub delta_writes: AtomicU64,
    /// Payload bytes of the deltas written.
    pub delta_bytes: AtomicU64,
    /// Delta chains ended by a whole-page user write (consolidation) / by a DB GC copy.
    pub delta_consolidations: AtomicU64,
    /// Delta chains ended by a DB GC (or compensation) copy of the page.
    pub delta_gc_merges: AtomicU64,
    /// Deltas DB GC moved as deltas (chains whose base was not in the victims).
    pub delta_gc_moves: AtomicU64,
    /// Deltas written over the newest delta (cumulative) instead of extending the chain.
    pub delta_merges: AtomicU64,
    /// Misses of pages whose newest copy is a delta (served from a chain or the delta cache).
    pub delta_chain_misses: AtomicU64,
    /// Of those, misses served by the delta cache: the base read alone, no delta read.
    pub delta_cache_hits: AtomicU64,
    /// Gets served by the record cache (no page touched).
    pub record_cache_hits: Striped,
    /// Gets the record cache did not hold (with the cache on).
    pub record_cache_misses: Striped,
    /// Upserts logged as blind changes (their leaf not read, `crate::blind`).
    pub blind_updates: AtomicU64,
    /// Blind changes applied when their leaf was loaded.
    pub blind_applied: AtomicU64,
    /// Leaf loads that applied blind changes.
    pub blind_leaf_loads: AtomicU64,
    /// Leaves loaded only to apply their blind changes (memory limit, checkpoints).
    pub blind_drains: AtomicU64,
    /// Buffer pool hits.
    pub pool_hits: Striped,
    /// Buffer pool misses.
    pub pool_misses: AtomicU64,
    /// Frames evicted.
    pub evictions: AtomicU64,
    /// Checkpoints completed.
    pub checkpoints: AtomicU64,
    /// Puts.
    pub puts: Striped,
    /// Deletes.
    pub deletes: Striped,
    /// Gets.
    pub gets: Striped,
    /// Out of place: RAM the pid -> location mapping holds (gauge, set at each checkpoint).
    pub mapping_ram_bytes: AtomicU64,
    /// Out of place: pids the mapping holds a location for (gauge, with the above).
    pub mapping_pages: AtomicU64,
    /// Out of place: mapping snapshots that were full (the others wrote deltas).
    pub full_snapshots: AtomicU64,
    /// Transaction commits with writes (each takes the commit lock exclusively).
    pub txn_commits: AtomicU64,
    /// Nanoseconds those commits waited for the commit lock.
    pub commit_lock_wait_ns: AtomicU64,
    /// Nanoseconds they held it (validation, logging and applying the write set).
    pub commit_lock_hold_ns: AtomicU64,
}

impl EngineCounters {
    /// Relaxed add.
    #[inline]
    pub fn add(c: &AtomicU64, v: u64) {
        c.fetch_add(v, Relaxed);
    }

    /// Out of place: record the mapping's RAM and mapped pids (gauges).
    pub fn set_mapping(&self, ram: u64, pages: u64) {
        self.mapping_ram_bytes.store(ram, Relaxed);
        self.mapping_pages.store(pages, Relaxed);
    }

    /// A page left the pool after `exposures` checkpoint passes found it dirty, of which
    /// `ckpt_writes` wrote it.
    ///
    /// # Panics
    /// If a page was written by more passes than found it dirty.
    pub fn record_residency(&self, exposures: u32, ckpt_writes: u32) {
        assert!(
            ckpt_writes <= exposures,
            "{ckpt_writes} checkpoint writes of a page exposed to {exposures} checkpoints"
        );
        let b = usize::try_from(exposures)
            .unwrap_or(usize::MAX)
            .min(RESIDENCY_BUCKETS - 1);
        Self::add(&self.residency_pages[b], 1);
        Self::add(&self.residency_checkpoint_writes[b], u64::from(ckpt_writes));
    }
}

/// A snapshot of [`Counters`] plus derived ratios.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Page size in bytes.
    pub page_size: u64,
    /// User page writes caused by eviction of dirty pages.
    pub eviction_page_writes: u64,
    /// User page writes issued by checkpoints (including the one at close).
    pub checkpoint_page_writes: u64,
    /// Copies written to the doublewrite area.
    pub doublewrite_page_writes: u64,
    /// Eviction page writes done by the background page cleaner.
    pub cleaner_page_writes: u64,
    /// Checkpoint page writes by forced passes (WAL limit, explicit checkpoints).
    pub forced_checkpoint_page_writes: u64,
    /// Checkpoint deferrals of hot pages.
    pub checkpoint_deferrals: u64,
    /// Device flushes by the page store.
    pub store_flushes: u64,
    /// Device flushes by checkpoints (superblocks).
    pub checkpoint_flushes: u64,
    /// Flush-list batches of the adaptive page cleaner.
    pub flush_batches: u64,
    /// Evicted pages by checkpoints exposed to while resident (index = count, last = more).
    pub residency_pages: Vec<u64>,
    /// Checkpoint writes of the evicted pages, by the same count.
    pub residency_checkpoint_writes: Vec<u64>,
    /// Pages still resident at the snapshot, by the checkpoints exposed to so far (same
    /// buckets; filled by `Engine::stats`): in a short run the hot pages are never evicted.
    pub resident_pages: Vec<u64>,
    /// Checkpoint writes of the resident pages, by the same count.
    pub resident_checkpoint_writes: Vec<u64>,
    /// Pages rewritten by DB garbage collection (always 0 for the in-place path).
    pub gc_page_writes: u64,
    /// Pages rewritten by NoWA compensation writes.
    pub compensation_page_writes: u64,
    /// Device bytes written for user pages (compressed and packed out of place).
    pub user_store_bytes: u64,
    /// Device bytes written for doublewrite copies.
    pub doublewrite_bytes: u64,
    /// Device bytes written by DB GC.
    pub gc_store_bytes: u64,
    /// Device bytes written by NoWA compensation.
    pub compensation_store_bytes: u64,
    /// Mapping-snapshot bytes (not in DB WAF).
    pub meta_store_bytes: u64,
    /// Pages GC read from the device.
    pub gc_page_reads: u64,
    /// Pages GC found in the buffer pool.
    pub gc_pool_hits: u64,
    /// Zones trimmed / reset by DB GC.
    pub zones_reclaimed: u64,
    /// Of those, zones trimmed early because every copy in them died (`trim_dead_zones`).
    pub zones_trimmed_dead: u64,
    /// GC rounds run in the foreground (by a writer) / by the background GC thread.
    pub gc_rounds_foreground: u64,
    /// GC rounds run by the background thread.
    pub gc_rounds_background: u64,
    /// Zone header bytes (part of the store bytes above).
    pub zone_header_bytes: u64,
    /// WAL record bytes appended.
    pub wal_record_bytes: u64,
    /// WAL pad bytes appended by group flushes (block ends; not in `wal_record_bytes`).
    pub wal_pad_bytes: u64,
    /// WAL bytes written to the device (4 KiB blocks; a partial tail block is rewritten).
    pub wal_device_bytes: u64,
    /// WAL flushes.
    pub wal_flushes: u64,
    /// WAL flush marks written (one 4 KiB block each, in `wal_device_bytes`; write-back's
    /// flushes for the WAL rule write none out of place).
    pub wal_marks: u64,
    /// Bytes of keys + values the user put.
    pub logical_user_bytes: u64,
    /// Page reads from the store.
    pub page_reads: u64,
    /// Extra device reads of page misses for delta chains (one per delta applied).
    pub delta_reads: u64,
    /// User page writes stored as deltas.
    pub delta_writes: u64,
    /// Payload bytes of the deltas written.
    pub delta_bytes: u64,
    /// Delta chains ended by a whole-page user write (consolidation).
    pub delta_consolidations: u64,
    /// Delta chains ended by a DB GC (or compensation) copy of the page.
    pub delta_gc_merges: u64,
    /// Deltas DB GC moved as deltas (chains whose base was not in the victims).
    pub delta_gc_moves: u64,
    /// Deltas written over the newest delta (cumulative) instead of extending the chain.
    pub delta_merges: u64,
    /// Misses of pages whose newest copy is a delta (served from a chain or the delta cache).
    pub delta_chain_misses: u64,
    /// Of those, misses served by the delta cache: the base read alone, no delta read.
    pub delta_cache_hits: u64,
    /// Gets served by the record cache (no page touched).
    pub record_cache_hits: u64,
    /// Gets the record cache did not hold (with the cache on).
    pub record_cache_misses: u64,
    /// Upserts logged as blind changes (their leaf not read).
    pub blind_updates: u64,
    /// Blind changes applied when their leaf was loaded.
    pub blind_applied: u64,
    /// Leaf loads that applied blind changes.
    pub blind_leaf_loads: u64,
    /// Leaves loaded only to apply their blind changes (memory limit, checkpoints).
    pub blind_drains: u64,
    /// Blind changes pending when the snapshot was taken (a gauge): logged, not yet applied
    /// to their leaf, so their leaf's write-back is still to come.
    pub blind_pending_changes: u64,
    /// Leaves those pending changes wait for (a gauge): one write-back each, still to come.
    pub blind_pending_leaves: u64,
    /// Buffer pool hits.
    pub pool_hits: u64,
    /// Buffer pool misses.
    pub pool_misses: u64,
    /// Frames evicted.
    pub evictions: u64,
    /// Checkpoints completed.
    pub checkpoints: u64,
    /// Puts.
    pub puts: u64,
    /// Deletes.
    pub deletes: u64,
    /// Gets.
    pub gets: u64,
    /// (eviction + checkpoint) page bytes.
    pub user_page_bytes: u64,
    /// Device bytes of data pages the DB issued: user + doublewrite + gc + compensation
    /// store bytes (in place: (user + doublewrite) pages x 4096).
    pub db_page_bytes: u64,
    /// DB WAF = db_page_bytes / user_page_bytes (1.0 when nothing was written).
    pub db_waf: f64,
    /// user_store_bytes / user_page_bytes: what compression + packing leave (1.0 in place).
    pub compression_ratio: f64,
    /// Out of place: RAM of the pid -> location mapping at the last checkpoint.
    pub mapping_ram_bytes: u64,
    /// Out of place: mapped pids at the last checkpoint.
    pub mapping_pages: u64,
    /// Out of place: full mapping snapshots written.
    pub full_snapshots: u64,
    /// Transaction commits with writes.
    pub txn_commits: u64,
    /// Nanoseconds those commits waited for the commit lock.
    pub commit_lock_wait_ns: u64,
    /// Nanoseconds they held it.
    pub commit_lock_hold_ns: u64,
    /// Pool hits / accesses (1.0 with no access).
    pub hit_ratio: f64,
}

impl EngineCounters {
    /// Snapshot with derived ratios.
    #[must_use]
    pub fn snapshot(&self, page_size: u64) -> Stats {
        let l = |c: &AtomicU64| c.load(Relaxed);
        let mut s = Stats {
            page_size,
            eviction_page_writes: l(&self.eviction_page_writes),
            checkpoint_page_writes: l(&self.checkpoint_page_writes),
            doublewrite_page_writes: l(&self.doublewrite_page_writes),
            cleaner_page_writes: l(&self.cleaner_page_writes),
            forced_checkpoint_page_writes: l(&self.forced_checkpoint_page_writes),
            checkpoint_deferrals: l(&self.checkpoint_deferrals),
            store_flushes: l(&self.store_flushes),
            checkpoint_flushes: l(&self.checkpoint_flushes),
            flush_batches: l(&self.flush_batches),
            residency_pages: self.residency_pages.iter().map(l).collect(),
            residency_checkpoint_writes: self.residency_checkpoint_writes.iter().map(l).collect(),
            resident_pages: Vec::new(),
            resident_checkpoint_writes: Vec::new(),
            gc_page_writes: l(&self.gc_page_writes),
            compensation_page_writes: l(&self.compensation_page_writes),
            user_store_bytes: l(&self.user_store_bytes),
            gc_store_bytes: l(&self.gc_store_bytes),
            compensation_store_bytes: l(&self.compensation_store_bytes),
            meta_store_bytes: l(&self.meta_store_bytes),
            gc_page_reads: l(&self.gc_page_reads),
            gc_pool_hits: l(&self.gc_pool_hits),
            zones_reclaimed: l(&self.zones_reclaimed),
            zones_trimmed_dead: l(&self.zones_trimmed_dead),
            gc_rounds_foreground: l(&self.gc_rounds_foreground),
            gc_rounds_background: l(&self.gc_rounds_background),
            zone_header_bytes: l(&self.zone_header_bytes),
            wal_record_bytes: l(&self.wal_record_bytes),
            wal_pad_bytes: l(&self.wal_pad_bytes),
            wal_device_bytes: l(&self.wal_device_bytes),
            wal_flushes: l(&self.wal_flushes),
            wal_marks: l(&self.wal_marks),
            logical_user_bytes: self.logical_user_bytes.sum(),
            page_reads: l(&self.page_reads),
            delta_reads: l(&self.delta_reads),
            delta_writes: l(&self.delta_writes),
            delta_bytes: l(&self.delta_bytes),
            delta_consolidations: l(&self.delta_consolidations),
            delta_gc_merges: l(&self.delta_gc_merges),
            delta_gc_moves: l(&self.delta_gc_moves),
            delta_merges: l(&self.delta_merges),
            delta_chain_misses: l(&self.delta_chain_misses),
            delta_cache_hits: l(&self.delta_cache_hits),
            record_cache_hits: self.record_cache_hits.sum(),
            record_cache_misses: self.record_cache_misses.sum(),
            blind_updates: l(&self.blind_updates),
            blind_applied: l(&self.blind_applied),
            blind_leaf_loads: l(&self.blind_leaf_loads),
            blind_drains: l(&self.blind_drains),
            pool_hits: self.pool_hits.sum(),
            pool_misses: l(&self.pool_misses),
            evictions: l(&self.evictions),
            checkpoints: l(&self.checkpoints),
            puts: self.puts.sum(),
            deletes: self.deletes.sum(),
            gets: self.gets.sum(),
            mapping_ram_bytes: l(&self.mapping_ram_bytes),
            mapping_pages: l(&self.mapping_pages),
            full_snapshots: l(&self.full_snapshots),
            txn_commits: l(&self.txn_commits),
            commit_lock_wait_ns: l(&self.commit_lock_wait_ns),
            commit_lock_hold_ns: l(&self.commit_lock_hold_ns),
            ..Default::default()
        };
        s.derive_ratios();
        s
    }
}

impl Stats {
    /// The byte totals and ratios derived from the counters.
    fn derive_ratios(&mut self) {
        let page_size = self.page_size;
        let s = self;
        s.user_page_bytes = (s.eviction_page_writes + s.checkpoint_page_writes) * page_size;
        s.doublewrite_bytes = s.doublewrite_page_writes * page_size;
        s.db_page_bytes = s.user_store_bytes
            + s.doublewrite_bytes
            + s.gc_store_bytes
            + s.compensation_store_bytes;
        s.compression_ratio = if s.user_page_bytes == 0 {
            1.0
        } else {
            ratio(s.user_store_bytes, s.user_page_bytes)
        };
        s.db_waf = if s.user_page_bytes == 0 {
            1.0
        } else {
            ratio(s.db_page_bytes, s.user_page_bytes)
        };
        let acc = s.pool_hits + s.pool_misses;
        s.hit_ratio = if acc == 0 {
            1.0
        } else {
            ratio(s.pool_hits, acc)
        };
    }
}
