//! The engine: configuration, the [`Engine`] handle and its accessors. Create / open
//! (`open.rs`), B+-tree operations (`tree.rs`), structure modifications (`split.rs`),
//! checkpoints (`checkpoint.rs`) and recovery (`recovery.rs`) are split by seam.
//!
//! Concurrency scheme (docs/design.md section 7): a striped tree-level lock guards the
//! *structure*. Ordinary get/put/delete/scan hold it shared; inner nodes only change under
//! the exclusive lock, so a shared holder descends with one page latch at a time and latches
//! only the leaf exclusively. A put that needs a split releases everything and retries under
//! the exclusive lock (structure modification, SMO).

mod blind;
mod bulk;
mod checkpoint;
mod freelist;
mod group;
mod merge;
mod open;
mod recovery;
mod salvage;
mod split;
mod tree;
pub(crate) use tree::LeafSeen;

use crate::buffer::BufferPool;
use crate::error::{Corruption, EngineError, Result};
use crate::format::superblock::{DiskLayout, SalvageRecord};
use crate::format::BLOCK;
use crate::num::{u64_of, usize_of};
use crate::stats::{EngineCounters, Stats};
use crate::store::PageStore;
use crate::treelock::TreeLock;
use crate::wal::{Wal, WalStop};
use nowa_device::BlockDevice;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use freelist::{LeafUsage, SpaceUsage};
pub use group::MAX_WRITE_SET;
pub use open::wal_region_bytes;

const BS: u64 = BLOCK as u64;

/// Durability of one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// Acknowledged only after its WAL record is flushed (group commit).
    Sync,
    /// Acknowledged at once; may be lost in a crash, but only as a suffix of the history.
    Async,
}

/// What `open` does when the live WAL is damaged in the middle (media damage, as opposed
/// to a torn tail left by a crash).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WalDamage {
    /// Fail the open with `EngineError::WalDamaged` (nothing is written).
    #[default]
    Refuse,
    /// Keep what precedes the damage, lose the rest: reported loudly (error log, recovery
    /// report) and recorded durably in the superblock's salvage record.
    Salvage,
}

/// Engine configuration. `Default` gives sensible values for tests and examples.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Config {
    /// Buffer pool capacity in bytes (frames = pool_bytes / 4096, at least 64).
    pub pool_bytes: u64,
    /// WAL size limit; a checkpoint starts at half of it and writers wait at the limit.
    /// None = pool_bytes (as in the paper).
    pub wal_limit_bytes: Option<u64>,
    /// Default durability for `put`/`delete`.
    pub durability: Durability,
    /// Write every page through the doublewrite area first. Off = "unsafe": a torn page is
    /// detected by its checksum and reported as corruption.
    pub doublewrite: bool,
    /// Doublewrite area size in pages (create only; the largest batch written at once).
    pub dw_pages: u64,
    /// WAL region size on the device (create only). None = limit + limit/4 + 1 MiB.
    pub wal_region_bytes: Option<u64>,
    /// Async mode: an appender flushes the WAL once this many bytes are unflushed.
    pub async_flush_bytes: u64,
    /// Mid-log WAL damage at open: refuse (default) or salvage.
    pub wal_damage: WalDamage,
    /// Run the background page cleaner (keeps free frames, writes back in large batches,
    /// runs checkpoint sweeps). Off by default: tests stay single-threaded and seeded.
    pub page_cleaner: bool,
    /// Hot-page-aware checkpointing: a dirty page may be deferred by this many checkpoint
    /// passes in a row before a pass writes it (0: every pass writes every dirty page).
    pub max_checkpoint_count: u32,
    /// Adaptive deferral under a recovery bound (docs/checkpointing.md): a pass defers a dirty
    /// page only while the redo range stays within this many log bytes (less one pass of log)
    /// and the page's observed redirty interval fits in what is left; passes start at a
    /// quarter of it, B/8 of log apart. With `flushing` (the page cleaner) every batch also
    /// writes the pages that would leave the redo LSN more than B less one pass of log
    /// behind, and a batch runs every B/8 of log between the cleaner's ticks. Either way a
    /// crash replays at most B + one pass of log. `max_checkpoint_count` 0 then sets no
    /// count limit. None: the fixed count alone.
    pub max_redo_bytes: Option<u64>,
    /// InnoDB's page cleaner (docs/checkpointing.md): once per second of the flush clock a
    /// flush-list batch writes the oldest-modified pages at the adaptive-flushing rate; that
    /// batch is the checkpoint selection deferral applies to. No passes at half the WAL
    /// limit then; the forced pass at the limit stays. None: passes from half the limit.
    pub flushing: Option<crate::buffer::flushing::Flushing>,
    /// Where every random choice of the engine comes from: the WAL salt of a new database and
    /// of each log epoch's origin, the out-of-place store's database id. `Some(seed)`: derived
    /// from the seed, so two runs with one seed write the same bytes (the whole-engine
    /// simulation, `nowa ycsb --threads 1` on the simulated SSD). None: the OS's entropy, so
    /// two databases never share a salt by accident.
    pub seed: Option<u64>,
    /// Who runs the background work (page cleaner, background DB GC): threads the engine
    /// starts, or the caller through [`Engine::run_background_step`].
    pub background: BackgroundMode,
    /// Memory for the record cache (hot records, key -> value, beside the pool; `rcache.rs`),
    /// in bytes; 0: off. Reads of cached records touch no page.
    pub record_cache_bytes: u64,
    /// Memory for blind updates (`crate::blind`), in bytes; 0: off. An upsert into a leaf
    /// that is not in the pool is logged and kept here without reading the leaf, and applied
    /// when the leaf is next loaded; past this memory the oldest leaves are loaded.
    pub blind_update_bytes: u64,
}

/// Who runs the engine's background work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackgroundMode {
    /// The engine's own threads (the page cleaner with `Config::page_cleaner`, the DB GC
    /// thread with `OopConfig::background_gc`), as in production.
    #[default]
    Threads,
    /// No thread: the caller steps each task with [`Engine::run_background_step`] at points
    /// it picks (a deterministic scheduler: the whole-engine simulation interleaves the
    /// tasks with the foreground by its seed, so their races replay). The engine behaves as
    /// with the threads otherwise (writers leave checkpoint steps to the cleaner, wait for
    /// no GC thread).
    Caller,
}

/// A point inside an operation where, with the engine's own threads, a background task may
/// run between two steps of the operation. With `BackgroundMode::Caller` the engine calls
/// the caller's [`YieldHook`] there, so a deterministic scheduler can step tasks inside one
/// operation (through [`Engine::run_background_step`]) and the interleaving replays. At the
/// first two a write holds nothing; at the other three the thread is inside a section that
/// holds a latch or a lock, and only the tasks that never wait for it may step there
/// ([`YieldPoint::may_step`]): a thread running any other would block until the section
/// ends, which a scheduler models by stepping it later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YieldPoint {
    /// A write's WAL gate ran (it may have started or stepped a checkpoint pass); the change
    /// is not applied yet. No lock held.
    Gated,
    /// The change is applied and its WAL record appended, the page latch released; the
    /// write has not waited for its durability (`Sync`: the flush; `Async`: the threshold
    /// flush) and is not acknowledged. No lock held.
    Logged,
    /// A write-back batch (an eviction by a miss or by the page cleaner, or a checkpoint
    /// sweep's batch) forced the WAL past its pages and has not handed them to the store:
    /// the batch's frames are latched (exclusively by an eviction), and the thread may hold
    /// its tree latches and the checkpoint sweep. Every task may step: the cleaner and the
    /// DB GC only try those latches (a sweep stops at a frame it cannot latch while a hook
    /// runs), the log flush takes none.
    WriteBack,
    /// A DB GC round (foreground or background) picked its victims and holds the store's
    /// `io` lock before relocating them: the log flush may step (the cleaner's write-backs
    /// and a background GC pass need `io`).
    GcRound,
    /// A WAL flush (group commit's leader) cut the buffer and holds the flush lock before
    /// writing it: writers may append meanwhile; the background DB GC may step (the log
    /// flush and the cleaner's WAL force need the flush lock).
    GroupCommit,
}

impl YieldPoint {
    /// Whether `task` may step at this point: it takes no lock the section holds.
    #[must_use]
    pub fn may_step(self, task: BackgroundTask) -> bool {
        match self {
            YieldPoint::Gated | YieldPoint::Logged | YieldPoint::WriteBack => true,
            YieldPoint::GcRound => task == BackgroundTask::LogFlush,
            YieldPoint::GroupCommit => task == BackgroundTask::DbGc,
        }
    }
}

/// The caller's hook at each [`YieldPoint`] (`BackgroundMode::Caller` only): it may call
/// [`Engine::run_background_step`] on the engine it is given, nothing else of the engine.
/// Errors of those steps stay with the hook (the operation goes on, as beside a thread
/// whose step failed).
pub type YieldHook = Arc<dyn Fn(&Engine, YieldPoint) + Send + Sync>;

/// One kind of background work, for [`Engine::run_background_step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackgroundTask {
    /// One round of the page cleaner (`Config::page_cleaner`): refill the free frames, then
    /// one batch of the checkpoint sweep in progress. The cleaner thread runs exactly this.
    PageCleaner,
    /// One background DB GC pass (out of place): rounds until the background target of free
    /// zones is reached. The DB GC thread runs exactly this when kicked.
    DbGc,
    /// Group commit's flush: make every appended WAL record durable, as the leader of a
    /// commit group does for the writers queued behind it.
    LogFlush,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            pool_bytes: 64 << 20,
            wal_limit_bytes: None,
            durability: Durability::Sync,
            doublewrite: true,
            dw_pages: 64,
            wal_region_bytes: None,
            async_flush_bytes: 1 << 20,
            wal_damage: WalDamage::Refuse,
            page_cleaner: false,
            max_checkpoint_count: 0,
            max_redo_bytes: None,
            flushing: None,
            seed: None,
            background: BackgroundMode::Threads,
            record_cache_bytes: 0,
            blind_update_bytes: 0,
        }
    }
}

impl Config {
    /// The WAL limit: `wal_limit_bytes`, by default the memory whose changes the log
    /// covers: the pool (dirty pages) plus the blind-update memory (changes waiting for their
    /// leaves). A log the size of the pool alone starts checkpoint passes twice as often when
    /// half the memory holds blind changes, and each pass drains them (docs/engine-writes.md
    /// session 7a: 20 passes against 10, 612 against 590 B per update at 4 + 4 MiB).
    #[must_use]
    pub fn wal_limit(&self) -> u64 {
        self.wal_limit_bytes
            .unwrap_or(self.pool_bytes.saturating_add(self.blind_update_bytes))
    }

    fn frames(&self) -> usize {
        usize_of(self.pool_bytes / BS).max(64)
    }

    /// A random number for the engine's purpose `what` (a tag: one per use, so two uses
    /// never get the same number from one seed): from [`Config::seed`] when set, else from
    /// the OS's entropy.
    #[must_use]
    pub fn random(&self, what: u64) -> u64 {
        match self.seed {
            Some(seed) => {
                use rand::{RngExt, SeedableRng};
                rand::rngs::Xoshiro256PlusPlus::seed_from_u64(seed ^ what).random()
            }
            None => rand::random(),
        }
    }
}

/// [`Config::random`] purposes.
pub(crate) const RANDOM_WAL_SALT: u64 = 0x0077_616c_7361_6c74;
/// See [`RANDOM_WAL_SALT`].
pub(crate) const RANDOM_STORE_ID: u64 = 0x0073_746f_7265_6964;

/// What `open` found and did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RecoveryReport {
    /// The previous instance was closed with `close()`.
    pub clean_shutdown: bool,
    /// Where redo started.
    pub redo_lsn: u64,
    /// LSN after the last record replayed.
    pub end_lsn: u64,
    /// Records applied.
    pub records_replayed: u64,
    /// Records whose pages were already newer on disk.
    pub records_skipped: u64,
    /// Torn pages restored from the doublewrite area.
    pub pages_repaired: u64,
    /// Why the WAL scan stopped.
    pub wal_stop: WalStop,
    /// Bad WAL records found: 1 for a torn tail or salvaged damage, else 0 (never a false
    /// alarm: stale bytes after the end are not records).
    pub bad_wal_records: u64,
    /// Out of place: the current mapping snapshot was unusable and the older one was used;
    /// why the current one was rejected.
    pub snapshot_fallback: Option<Corruption>,
    /// WAL salvages recorded in the superblock over the database's life (this one included).
    pub salvage: SalvageRecord,
    /// Recovery by phase: the analysis (WAL scan for the end), in microseconds.
    pub analysis_micros: u64,
    /// Redo (replay of `[redo_lsn, end_lsn)`, `end_lsn - redo_lsn` bytes), in microseconds.
    pub redo_micros: u64,
}

struct CkptState {
    /// Sequence number of the last superblock written.
    seq: u64,
    /// Incremental checkpoint pass in progress.
    pass: Option<checkpoint::Pass>,
    /// Recorded in every superblock.
    salvage: SalvageRecord,
    /// Redo LSN of the last superblock written (only moves forward).
    last_redo: u64,
}

/// The key-value engine. Share it between threads with `Arc<Engine>`.
/// Dropping it without `close()` is like a crash (nothing is flushed).
pub struct Engine {
    dev: Arc<dyn BlockDevice>,
    /// Where the WAL and the superblocks live: `dev` itself, or a separate device.
    wal_dev: Arc<dyn BlockDevice>,
    wal_separate: bool,
    cfg: Config,
    layout: DiskLayout,
    wal_limit: u64,
    salt: u32,
    store: Arc<dyn PageStore>,
    wal: Arc<Wal>,
    pool: Arc<BufferPool>,
    tree: TreeLock,
    /// Pages out of the tree, reusable (`freelist.rs`).
    free: Mutex<freelist::FreeList>,
    ckpt: Mutex<CkptState>,
    /// A checkpoint pass is in progress (lets the write fast path skip the lock otherwise).
    ckpt_active: AtomicBool,
    /// The page cleaner, when `Config::page_cleaner` is on and the engine is open.
    cleaner: Mutex<Option<crate::cleaner::Cleaner>>,
    counters: Arc<EngineCounters>,
    closed: AtomicBool,
    poisoned: AtomicBool,
    report: Option<RecoveryReport>,
    /// Named tables (`crate::catalog`).
    catalog: crate::catalog::Catalog,
    /// Transactions: validation shared (read-only) or exclusive (validate and apply).
    commit_lock: parking_lot::RwLock<()>,
    /// Recovery: a `TxnCommit` whose `TxnDone` has not been seen yet (LSN, write set).
    pending_txn: Mutex<Option<(u64, Vec<crate::format::wal::TxnOp>)>>,
    /// `BackgroundMode::Caller`: the hook called at each [`YieldPoint`], shared with the
    /// pool, the WAL and the store.
    yields: Arc<crate::yields::YieldSite>,
    /// The record cache (`Config::record_cache_bytes`; None: off).
    rcache: Option<crate::rcache::RecordCache>,
    /// Blind updates (`Config::blind_update_bytes`; None: off), shared with the pool.
    blind: Option<Arc<crate::blind::Blind>>,
}

impl Drop for Engine {
    /// Like a crash for the data (nothing is flushed), but the store's background work
    /// (DB GC thread) is stopped and joined: nothing touches the device after the drop.
    fn drop(&mut self) {
        self.stop_cleaner();
        self.store.shutdown();
    }
}

impl Engine {
    /// The report of the recovery `open` performed (None for `create`).
    #[must_use]
    pub fn recovery_report(&self) -> Option<&RecoveryReport> {
        self.report.as_ref()
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.cfg
    }
    /// The regions.
    #[must_use]
    pub fn layout(&self) -> DiskLayout {
        self.layout
    }
    /// The main device.
    #[must_use]
    pub fn device(&self) -> &Arc<dyn BlockDevice> {
        &self.dev
    }
    /// The device holding the WAL (the main device unless created with a separate one).
    #[must_use]
    pub fn wal_device(&self) -> &Arc<dyn BlockDevice> {
        &self.wal_dev
    }

    /// Install the hook called at each [`YieldPoint`] (None: none). It is handed the engine
    /// through a weak reference, so the hook the engine keeps does not keep it alive.
    ///
    /// # Panics
    /// With `BackgroundMode::Threads`: the engine's own threads run the tasks there.
    pub fn set_yield_hook(self: &Arc<Self>, hook: Option<YieldHook>) {
        assert_eq!(
            self.cfg.background,
            BackgroundMode::Caller,
            "a yield hook steps the tasks no thread runs"
        );
        let weak = Arc::downgrade(self);
        self.yields.set(hook.map(|h| {
            Arc::new(move |at| {
                if let Some(e) = weak.upgrade() {
                    h(&e, at);
                }
            }) as crate::yields::YieldFn
        }));
    }

    /// Call the yield hook at `at`.
    fn yield_at(&self, at: YieldPoint) {
        self.yields.at(at);
    }

    fn check_open(&self) -> Result<()> {
        if self.poisoned.load(Ordering::Relaxed) {
            return Err(EngineError::Poisoned);
        }
        if self.closed.load(Ordering::Relaxed) {
            return Err(EngineError::Closed);
        }
        Ok(())
    }

    /// Snapshot of the counters (since this instance was created or opened).
    #[must_use]
    pub fn stats(&self) -> Stats {
        let mut s = self.counters.snapshot(BS);
        (s.resident_pages, s.resident_checkpoint_writes) = self.pool.resident_residency();
        let (leaves, changes, _) = self.blind_pending();
        (s.blind_pending_leaves, s.blind_pending_changes) = (u64_of(leaves), u64_of(changes));
        s
    }

    /// The LSN the next WAL record gets: every write made so far is logged below it.
    #[must_use]
    pub fn wal_end_lsn(&self) -> u64 {
        self.wal.next_lsn()
    }

    /// Every WAL record below this LSN is durable (the log's flushed end).
    #[must_use]
    pub fn wal_durable_lsn(&self) -> u64 {
        self.wal.flushed_lsn()
    }

    /// Every WAL record below this LSN is durable and vouched for by a flush mark (what
    /// sync, group commit and checkpoints acknowledge; write-back's flushes for the WAL rule
    /// write no mark out of place, so the durable end may lie beyond it).
    #[must_use]
    pub fn wal_vouched_lsn(&self) -> u64 {
        self.wal.vouched_lsn()
    }

    /// WAL bytes currently live (between the last checkpoint's redo LSN and the end).
    #[must_use]
    pub fn wal_used(&self) -> u64 {
        self.wal.used()
    }

    /// Frames in the buffer pool, and how many hold dirty pages.
    #[must_use]
    pub fn pool_frames(&self) -> (usize, usize) {
        (self.pool.frames(), self.pool.dirty_count())
    }

    /// Frames on the free list, and how many the page cleaner keeps there (0: no cleaner).
    #[must_use]
    pub fn pool_free_frames(&self) -> (usize, usize) {
        self.pool.free_frames()
    }

    /// Pages the store can hold.
    #[must_use]
    pub fn capacity_pages(&self) -> u64 {
        self.store.capacity_pages()
    }

    /// Record every page write, GC move and release from now on (`--record-writes`,
    /// docs/sepfrozen.md). False if the write path records none (in place) or an observer
    /// is attached already.
    pub fn record_writes(&self, obs: Arc<dyn crate::buffer::hotness::WriteObserver>) -> bool {
        self.store.attach_write_observer(obs)
    }

    /// The write path's placement: scheme and per-class table (None in place).
    #[must_use]
    pub fn class_report(&self) -> Option<nowa_logspace::ClassReport> {
        self.store.class_report()
    }

    /// The DB-written-page timer now (one tick per user page write since this open).
    #[must_use]
    pub fn write_timer(&self) -> u64 {
        self.pool.write_timer()
    }
}
