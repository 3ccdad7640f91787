//! The write-path seam: [`PageStore`] decides where a page lives on the device and how it is
//! written; a [`StoreBuilder`] makes one for `create` or `open`. [`InPlaceStore`] (fixed
//! home per pid, optional doublewrite) is here; the out-of-place path is in `crate::oop`.

use crate::error::{Corruption, Pid, Result, WritePathKind};
use crate::format::superblock::{DiskLayout, WritePath};
use crate::num::{u64_of, usize_of};
use crate::page::{self, PAGE_SIZE};
use crate::stats::EngineCounters;
use nowa_device::BlockDevice;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};

const BS: u64 = PAGE_SIZE as u64;

/// Why a batch of pages is written (for per-category statistics).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// A dirty page evicted from the buffer pool.
    Eviction,
    /// A checkpoint writing dirty pages.
    Checkpoint,
    /// DB garbage collection (out-of-place path only).
    Gc,
    /// NoWA compensation write (out-of-place path only).
    Compensation,
    /// A bulk load writing pages no durable state references yet. In place: no doublewrite
    /// (a torn page is unreachable until the load is installed) and no flush per batch: the
    /// loader flushes the device once before it installs the load.
    Bulk,
}

impl WriteKind {
    /// A user write (eviction or checkpoint), as opposed to GC or compensation.
    #[must_use]
    pub fn is_user(self) -> bool {
        matches!(
            self,
            WriteKind::Eviction | WriteKind::Checkpoint | WriteKind::Bulk
        )
    }

    /// Count `pages` page writes of this kind, and their device bytes.
    pub(crate) fn count(self, c: &EngineCounters, pages: u64, bytes: u64) {
        let (p, b) = match self {
            WriteKind::Eviction => (&c.eviction_page_writes, &c.user_store_bytes),
            WriteKind::Checkpoint | WriteKind::Bulk => {
                (&c.checkpoint_page_writes, &c.user_store_bytes)
            }
            WriteKind::Gc => (&c.gc_page_writes, &c.gc_store_bytes),
            WriteKind::Compensation => (&c.compensation_page_writes, &c.compensation_store_bytes),
        };
        EngineCounters::add(p, pages);
        EngineCounters::add(b, bytes);
    }

    /// Count device bytes only (zone headers, partial runs).
    pub(crate) fn count_bytes(self, c: &EngineCounters, bytes: u64) {
        self.count(c, 0, bytes);
    }
}

/// Create a new database or open an existing one.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// `Engine::create*`: the store lays itself out; [`PageStore::format`] follows.
    Create,
    /// `Engine::open*`: the store loads its state and must not write before
    /// [`PageStore::recover`].
    Open,
}

/// What crash repair did (reported in the recovery report).
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreRecovery {
    /// Torn or stale pages restored (in place: from the doublewrite area).
    pub pages_repaired: u64,
    /// Out of place: the current mapping snapshot was unusable and the older one (plus the
    /// zone roll-forward) was used instead; why the current one was rejected.
    pub snapshot_fallback: Option<Corruption>,
}

/// Write path for data pages.
pub trait PageStore: Send + Sync {
    /// What this store is (recorded in the superblock at create and every checkpoint).
    fn write_path(&self) -> WritePath;
    /// Create only, before any page is written: prepare the device area (in place: zero the
    /// doublewrite area; out of place: trim or reset the zones).
    ///
    /// # Errors
    /// Device errors.
    fn format(&self) -> Result<()> {
        Ok(())
    }
    /// Write a batch of sealed 4 KiB pages; every page is durable when this returns.
    /// The caller guarantees the WAL is durable up to each page's LSN (WAL rule) and that no
    /// two writes of the same pid are in flight at once.
    ///
    /// # Errors
    /// Device errors, `Full`.
    fn write_pages(&self, batch: &[(Pid, &[u8])], kind: WriteKind) -> Result<()>;
    /// Does the store write sub-page deltas (issue 31 item 1)? Then the buffer pool keeps a
    /// fingerprint of each page's last durable image and writes back through
    /// [`Self::write_pages_changed`]. Default: no.
    fn tracks_deltas(&self) -> bool {
        false
    }
    /// [`Self::write_pages`] with, per page, the byte ranges changed since its last durable
    /// image (`crate::format::delta::Spans`, normalized; None: unknown). Default: ignore
    /// them.
    ///
    /// # Errors
    /// As [`Self::write_pages`].
    fn write_pages_changed(
        &self,
        batch: &[(Pid, &[u8])],
        _changed: &[Option<crate::format::delta::Spans>],
        kind: WriteKind,
    ) -> Result<()> {
        self.write_pages(batch, kind)
    }
    /// Read the current durable image of `pid` (the caller validates it; a never-written
    /// page reads as zeros).
    ///
    /// # Errors
    /// Device errors, corruption the store itself detects (lost writes, bad slots).
    fn read_page(&self, pid: Pid, buf: &mut [u8]) -> Result<()>;
    /// Number of pids the store can hold.
    fn capacity_pages(&self) -> u64;
    /// The version (low 32 bits of the LSN) of each page whose durable version the store
    /// knows, for a clean close to log (in place: reverted pages are then detected after
    /// the next open). Default: none (out of place checks versions in its mapping).
    fn versions(&self) -> Vec<(Pid, u32)> {
        Vec::new()
    }
    /// Open: the copy (page or delta) with the highest LSN among those written since the
    /// store's checkpoint, (pid, LSN), if the store knows it (out of place: its zone
    /// roll-forward reads every such copy). The open refuses a log that ends below it: the
    /// log's records up to that LSN were durable and are lost. Default: None.
    fn newest_written(&self) -> Option<(Pid, u64)> {
        None
    }
    /// Does the open check [`Self::newest_written`] against the log's end? Then the WAL
    /// flushes write-back forces (the WAL rule) need no flush mark: media damage to their
    /// tail shows as a page past the log's end. Default: false (every flush is marked).
    fn checks_log_end(&self) -> bool {
        false
    }
    /// Versions logged by the last clean close ([`Self::versions`]), at open before any
    /// page is read: a read finding another valid version is a lost write. Default: ignored.
    fn expect_versions(&self, _versions: &[(Pid, u32)]) {}
    /// `pid` left the tree and no redo can need its image any more (a checkpoint passed
    /// the record that freed it): the store may drop it (out of place: its slot becomes
    /// garbage for DB GC). A later write of the pid brings it back. Idempotent. Default:
    /// nothing (in place, the pid keeps its home block and is simply reused).
    ///
    /// # Errors
    /// Device errors.
    fn release(&self, _pid: Pid) -> Result<()> {
        Ok(())
    }
    /// Attach the write log's observer (`--record-writes`): every page write, GC move and
    /// release from now on. Returns false if the store records no write log (the in-place
    /// path) or has an observer already. Default: false.
    fn attach_write_observer(&self, _obs: Arc<dyn crate::buffer::hotness::WriteObserver>) -> bool {
        false
    }
    /// The placement's per-class table (out of place); None for stores without placement.
    fn class_report(&self) -> Option<nowa_logspace::ClassReport> {
        None
    }
    /// Open only, after every check of the open passed and before WAL redo: crash repair
    /// (in place: restore torn pages from the doublewrite area). The first write of an open.
    ///
    /// # Errors
    /// Device errors.
    fn recover(&self) -> Result<StoreRecovery>;
    /// Called by a checkpoint right before the superblock write: persist whatever the store
    /// needs (out of place: the mapping-table snapshot) and return the metadata for the
    /// superblock, handed back in [`StoreContext::metadata`] at open.
    ///
    /// # Errors
    /// Device errors.
    fn checkpoint(&self) -> Result<Vec<u8>> {
        Ok(Vec::new())
    }
    /// Give the store a way to look into the buffer pool (GC uses clean cached pages
    /// instead of reading them). Default: ignored.
    fn attach_cache(&self, _cache: Weak<dyn PageCache>) {}
    /// Give the store the engine's yield site (`BackgroundMode::Caller`: where the store
    /// holds a lock a task may run beside, it calls it with the point). Default: ignored.
    fn attach_yields(&self, _at: crate::YieldFn) {}
    /// Start the store's background work (out of place: the background DB GC thread).
    /// Called by the engine once it is created or opened (after recovery). Default: none.
    fn start_background(self: Arc<Self>) {}
    /// One pass of the store's background work on the caller's thread (out of place: a
    /// background DB GC pass), for `BackgroundMode::Caller`; whether it did anything.
    /// Default: nothing to do.
    ///
    /// # Errors
    /// Device errors, `Corrupt` from relocation reads.
    fn background_step(&self) -> Result<bool> {
        Ok(false)
    }
    /// Stop the background work and wait for it (engine close and drop). Default: none.
    fn shutdown(&self) {}
    /// Clean shutdown (`Engine::close`, after [`Self::shutdown`] and the final checkpoint):
    /// the store's last writes, which must hold no data (the checkpoint does not cover
    /// them). Default: none.
    ///
    /// # Errors
    /// Device errors.
    fn close(&self) -> Result<()> {
        Ok(())
    }
}

/// Read-only view of the buffer pool for the store's GC ("sharing the buffer pool").
pub trait PageCache: Send + Sync {
    /// Copy the cached image of `pid` into `buf` if it is in the pool and clean (its image
    /// equals the durable one). Never loads or evicts.
    fn copy_if_clean(&self, pid: Pid, buf: &mut [u8]) -> bool;
}

/// Everything a write path needs to build its [`PageStore`].
pub struct StoreContext {
    /// The device holding the pages.
    pub device: Arc<dyn BlockDevice>,
    /// Regions.
    pub layout: DiskLayout,
    /// Doublewrite on (in place).
    pub doublewrite: bool,
    /// Where the store counts its page writes per category.
    pub counters: Arc<EngineCounters>,
    /// Create or open.
    pub mode: OpenMode,
    /// What the store's `checkpoint` returned at the last checkpoint (empty at create).
    pub metadata: Vec<u8>,
    /// The metadata of the previous checkpoint (the other superblock copy), if that copy is
    /// valid: a fallback when the current one's structures are damaged.
    pub fallback_metadata: Option<Vec<u8>>,
    /// With a separate log device: that device and its first block free for the store's
    /// own metadata (after the superblocks and the WAL region), so the main device holds
    /// nothing but pages.
    pub meta_device: Option<(Arc<dyn BlockDevice>, u64)>,
    /// The buffer pool's DB-written-page timer the last checkpoint stored (0 at create and
    /// in databases written before it was kept): the write times of the pages the store
    /// holds are below it, so the out-of-place GC judges their age on it from the start.
    pub write_timer: u64,
    /// A random number for a store that needs an identity at create (the out-of-place
    /// store's database id): from `Config::seed` when set, so a seeded run writes the same
    /// bytes twice.
    pub create_id: u64,
}

/// Builds the page store of an engine.
pub trait StoreBuilder: Send + Sync {
    /// The write path this builder makes (checked against the superblock at open before
    /// anything is built or written).
    fn kind(&self) -> WritePathKind;
    /// Build the store. At open it must not write (see [`PageStore::recover`]).
    ///
    /// # Errors
    /// Configuration or on-disk state the store cannot use.
    fn build(&self, ctx: StoreContext) -> Result<Arc<dyn PageStore>>;
}

/// A [`StoreBuilder`] from a closure (custom stores, tests).
pub struct FnStoreBuilder<F> {
    kind: WritePathKind,
    f: F,
}

impl<F> StoreBuilder for FnStoreBuilder<F>
where
    F: Fn(StoreContext) -> Result<Arc<dyn PageStore>> + Send + Sync,
{
    fn kind(&self) -> WritePathKind {
        self.kind
    }
    fn build(&self, ctx: StoreContext) -> Result<Arc<dyn PageStore>> {
        (self.f)(ctx)
    }
}

/// A builder of `kind` that calls `f`.
pub fn store_builder<F>(kind: WritePathKind, f: F) -> FnStoreBuilder<F>
where
    F: Fn(StoreContext) -> Result<Arc<dyn PageStore>> + Send + Sync,
{
    FnStoreBuilder { kind, f }
}

/// The default write path: [`InPlaceStore`].
#[must_use]
pub fn in_place_store() -> impl StoreBuilder {
    store_builder(WritePathKind::InPlace, |ctx: StoreContext| {
        Ok(Arc::new(InPlaceStore::new(
            ctx.device,
            ctx.layout,
            ctx.doublewrite,
            ctx.counters,
        )) as Arc<dyn PageStore>)
    })
}

/// The low 32 bits of an LSN.
fn low32(lsn: u64) -> u32 {
    let [a, b, c, d, ..] = lsn.to_le_bytes();
    u32::from_le_bytes([a, b, c, d])
}

/// Doublewrite slots whose home writes may not be durable yet: `len` slots from `start`
/// (mod the area size). The next chunk goes right after them.
#[derive(Debug, Default)]
struct DwRing {
    start: usize,
    len: usize,
}

/// In-place writes: pid p lives at block `data_start + p`. With doublewrite on, each chunk is
/// first written to free doublewrite slots and flushed, then written home *without* a flush:
/// the next chunk's doublewrite flush makes those home writes durable, so one flush per
/// chunk (a doublewrite batch pair) instead of two. Until then the durable doublewrite copy
/// stands for the page: recovery restores every home page older than (or torn against) a
/// valid slot, and a slot is reused only after a flush that followed its home write
/// (docs/design.md section 8). Without doublewrite each chunk is written home and flushed.
pub struct InPlaceStore {
    dev: Arc<dyn BlockDevice>,
    layout: DiskLayout,
    doublewrite: bool,
    /// Serializes doublewrite-area use and holds the slots whose home writes are pending.
    dw_lock: Mutex<DwRing>,
    counters: Arc<EngineCounters>,
    /// Low 32 bits of the LSN of the durable version of each page (0: unknown), 4 bytes per
    /// page like the buffer pool's map: what this instance wrote, what the last clean close
    /// logged (`expect_versions`), or else what the first read found. A read that finds a
    /// valid page with another LSN is a lost (or misdirected) write, or a page reverted while
    /// the database was closed. The device can only hold exactly the version written last; a
    /// lost write differs in the low bits unless 2^32 bytes of log separate the versions
    /// (then it goes unnoticed, never falsely reported).
    written: Box<[AtomicU32]>,
}

impl InPlaceStore {
    /// A store over `layout` on `dev`.
    #[must_use]
    pub fn new(
        dev: Arc<dyn BlockDevice>,
        layout: DiskLayout,
        doublewrite: bool,
        counters: Arc<EngineCounters>,
    ) -> Self {
        InPlaceStore {
            dev,
            layout,
            doublewrite,
            dw_lock: Mutex::new(DwRing::default()),
            counters,
            written: (0..layout.data_pages).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    fn home(&self, pid: Pid) -> u64 {
        assert!(
            pid < self.layout.data_pages,
            "pid {pid} beyond the data region"
        );
        (self.layout.data_start + pid) * BS
    }

    fn dw_slot(&self, i: usize) -> u64 {
        (self.layout.dw_start + u64_of(i)) * BS
    }

    fn flush_store(&self) -> Result<()> {
        self.dev.flush()?;
        EngineCounters::add(&self.counters.store_flushes, 1);
        Ok(())
    }

    /// Write pages home (no flush) and remember their LSNs for the lost-write check.
    fn write_home(&self, chunk: &[(Pid, &[u8])]) -> Result<()> {
        let home: Vec<(u64, &[u8])> = chunk.iter().map(|(p, d)| (self.home(*p), *d)).collect();
        self.dev.write_batch(&home, None)?;
        for (pid, d) in chunk {
            assert!(page::checksum_ok(d), "page {pid} written unsealed");
            self.written[usize_of(*pid)].store(low32(page::lsn(d)), Ordering::Relaxed);
        }
        Ok(())
    }

    /// Bulk: write each run of consecutive pids with one device write (no flush).
    fn write_runs(&self, chunk: &[(Pid, &[u8])]) -> Result<()> {
        let mut i = 0;
        while i < chunk.len() {
            let mut j = i + 1;
            while j < chunk.len() && chunk[j].0 == chunk[j - 1].0 + 1 {
                j += 1;
            }
            let run: Vec<u8> = chunk[i..j]
                .iter()
                .flat_map(|(_, d)| d.iter().copied())
                .collect();
            self.dev.write_at(self.home(chunk[i].0), &run)?;
            i = j;
        }
        Ok(())
    }

    /// One doublewrite chunk from the front of `pages` into the slots after the pending
    /// ones: copies, flush (which also makes the pending home writes durable), home writes
    /// left pending. Returns the pages written.
    fn write_chunk_dw(&self, ring: &mut DwRing, pages: &[(Pid, &[u8])]) -> Result<usize> {
        let slots = usize_of(self.layout.dw_pages.max(1));
        assert!(ring.len <= slots, "{} pending slots of {slots}", ring.len);
        if ring.len == slots {
            // Every slot still stands for a pending home write: make them durable first.
            self.flush_store()?;
            ring.start = 0;
            ring.len = 0;
        }
        let n = pages.len().min(slots - ring.len);
        let first = (ring.start + ring.len) % slots;
        let dw: Vec<(u64, &[u8])> = pages[..n]
            .iter()
            .enumerate()
            .map(|(i, (_, d))| (self.dw_slot((first + i) % slots), *d))
            .collect();
        self.dev.write_batch(&dw, None)?;
        // The copies are durable before any home write of theirs starts, and the previous
        // chunk's home writes are durable from here on: its slots are free again.
        self.flush_store()?;
        EngineCounters::add(&self.counters.doublewrite_page_writes, u64_of(n));
        ring.start = first;
        ring.len = n;
        self.write_home(&pages[..n])?;
        Ok(n)
    }

    /// Restore `slot` (a valid doublewrite copy of `pid`) home if the home page is torn or
    /// older. Returns whether it did.
    fn repair(&self, pid: Pid, slot: &[u8], home: &mut [u8]) -> Result<bool> {
        self.dev.read_at(self.home(pid), home)?;
        let mut home_ok = page::validate(home, pid).is_ok();
        if !home_ok {
            // Re-read once: a transient read error must not make us overwrite a valid,
            // newer home page with an older slot.
            self.dev.read_at(self.home(pid), home)?;
            home_ok = page::validate(home, pid).is_ok();
        }
        if home_ok && page::lsn(home) >= page::lsn(slot) {
            return Ok(false);
        }
        tracing::info!(pid, home_ok, "restoring page from doublewrite area");
        self.dev.write_at(self.home(pid), slot)?;
        Ok(true)
    }
}

impl PageStore for InPlaceStore {
    fn write_path(&self) -> WritePath {
        WritePath::InPlace
    }

    /// Zero the doublewrite area, so slots of an older database on this device are ignored.
    fn format(&self) -> Result<()> {
        let zero = vec![0u8; usize_of(self.layout.dw_pages * BS)];
        self.dev.write_at(self.layout.dw_start * BS, &zero)?;
        self.dev.flush()?;
        Ok(())
    }

    fn write_pages(&self, batch: &[(Pid, &[u8])], kind: WriteKind) -> Result<()> {
        if kind == WriteKind::Bulk {
            // A bulk load: runs of consecutive pages, no doublewrite and no flush (the load
            // flushes once when it ends, and a crash before that leaves the empty tree).
            let _g = self.dw_lock.lock();
            self.write_runs(batch)?;
            for (pid, d) in batch {
                assert!(page::checksum_ok(d), "page {pid} written unsealed");
                self.written[usize_of(*pid)].store(low32(page::lsn(d)), Ordering::Relaxed);
            }
            kind.count(
                &self.counters,
                u64_of(batch.len()),
                u64_of(batch.len()) * BS,
            );
            return Ok(());
        }
        let mut ring = self.dw_lock.lock();
        let mut rest = batch;
        while !rest.is_empty() {
            let n = if self.doublewrite {
                self.write_chunk_dw(&mut ring, rest)?
            } else {
                let n = rest.len().min(usize_of(self.layout.dw_pages.max(1)));
                self.write_home(&rest[..n])?;
                self.flush_store()?;
                n
            };
            kind.count(&self.counters, u64_of(n), u64_of(n) * BS);
            rest = &rest[n..];
        }
        Ok(())
    }

    fn read_page(&self, pid: Pid, buf: &mut [u8]) -> Result<()> {
        self.dev.read_at(self.home(pid), buf)?;
        EngineCounters::add(&self.counters.page_reads, 1);
        let slot = &self.written[usize_of(pid)];
        let expected = slot.load(Ordering::Relaxed);
        let found = page::lsn(buf);
        if expected == 0 && page::checksum_ok(buf) && page::pid(buf) == pid {
            // Unknown (not written since a crash): the first read's version is the one
            // later reads must find. A write racing this read wins.
            let _ = slot.compare_exchange(0, low32(found), Ordering::Relaxed, Ordering::Relaxed);
        }
        // A valid page of another version than this instance wrote there: the write was lost.
        if expected != 0
            && page::checksum_ok(buf)
            && page::pid(buf) == pid
            && low32(found) != expected
        {
            return Err(Corruption::LostWrite {
                pid,
                expected: found & !u64::from(u32::MAX) | u64::from(expected),
                found,
            }
            .into());
        }
        Ok(())
    }

    fn capacity_pages(&self) -> u64 {
        self.layout.data_pages
    }

    fn versions(&self) -> Vec<(Pid, u32)> {
        self.written
            .iter()
            .enumerate()
            .map(|(pid, v)| (u64_of(pid), v.load(Ordering::Relaxed)))
            .filter(|(_, v)| *v != 0)
            .collect()
    }

    fn expect_versions(&self, versions: &[(Pid, u32)]) {
        for &(pid, v) in versions {
            // A damaged record could name any pid: only pids of the data region count.
            if let Some(slot) = self.written.get(usize_of(pid)) {
                slot.store(v, Ordering::Relaxed);
            }
        }
    }

    /// Restore every home page that is torn (bad checksum / layout) or older than a valid
    /// doublewrite copy. Stale slots (older than home) are ignored. Runs even with doublewrite
    /// off (the area is then simply never written by this instance).
    fn recover(&self) -> Result<StoreRecovery> {
        let mut repaired = 0;
        let mut slot = vec![0u8; PAGE_SIZE];
        let mut home = vec![0u8; PAGE_SIZE];
        for i in 0..usize_of(self.layout.dw_pages) {
            self.dev.read_at(self.dw_slot(i), &mut slot)?;
            if !page::checksum_ok(&slot) || page::is_zero(&slot) {
                continue; // torn or never-written slot: its home write never started
            }
            let pid = page::pid(&slot);
            if pid >= self.layout.data_pages || page::validate_layout(&slot, pid).is_err() {
                continue;
            }
            if self.repair(pid, &slot, &mut home)? {
                repaired += 1;
            }
        }
        // Always: after a clean close whose superblock went to a separate log device,
        // nothing flushed this device, and the home writes of the last chunk may still be
        // volatile with their only durable copy in the slots this instance reuses first
        // (its ring starts empty). Repaired pages become durable here too.
        self.flush_store()?;
        Ok(StoreRecovery {
            pages_repaired: repaired,
            snapshot_fallback: None,
        })
    }
}
