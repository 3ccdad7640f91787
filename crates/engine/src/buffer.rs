//! Buffer pool: fixed number of 4 KiB frames, a lock-free pid -> frame table (one AtomicU32
//! per pid of the data region, as in vmcache), a per-frame RwLock latch, clock eviction with
//! batched write-back of dirty victims into a free list (kept filled by the page cleaner,
//! `crate::cleaner`, when it runs), and checkpoint sweeps with hot-page deferral (`sweep`).
//!
//! Each dirty frame carries `rec_lsn`, the LSN of its first change since it became dirty
//! (docs/design.md section 8): every change to the page below `rec_lsn` is on the device.
//!
//! Protocol: a lookup reads `map[pid]`, latches that frame and re-checks the frame's pid (the
//! frame may have been recycled in between; then retry). A miss takes a victim frame with its
//! latch held exclusively, claims `map[pid]` by CAS (losing the race = someone else loads it),
//! reads the page and releases the latch; concurrent lookups block on the latch meanwhile.
//! Eviction only ever *tries* latches, so a thread holding latches can always evict.

use crate::error::{page_damage, PageDamage, Pid, Result};
use crate::num::{u64_of, usize_of};
use crate::page;
use crate::stats::EngineCounters;
use crate::store::{PageCache, PageStore};
use crate::wal::Wal;
use parking_lot::{Condvar, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

mod evict;
pub mod flushing;
pub mod hotness;
mod sweep;
#[cfg(test)]
mod tests;
pub use sweep::Sweep;

const NONE: u32 = u32::MAX;
/// Pid of an unmapped frame.
pub const NO_PID: Pid = u64::MAX;
/// `rec_lsn` of a clean frame (LSNs start at one block, so 0 is never a record's).
const NO_LSN: u64 = 0;

/// A frame's contents (behind its latch).
pub struct FrameData {
    /// The page held ([`NO_PID`]: none).
    pub pid: Pid,
    /// The page image.
    pub page: Box<[u8]>,
}

struct Frame {
    latch: RwLock<FrameData>,
    /// Set under the exclusive latch by writers; cleared under (at least) a shared latch by
    /// write-back, which excludes writers.
    dirty: AtomicBool,
    refbit: AtomicBool,
    /// LSN of the first change since the frame became dirty ([`NO_LSN`]: clean, or dirtied
    /// but its record not appended yet). Set under the exclusive latch, cleared by write-back
    /// and eviction under a latch that excludes writers.
    rec_lsn: AtomicU64,
    /// Checkpoint passes in a row that selected this dirty page and deferred it.
    ckpt_count: AtomicU32,
    /// The page's place on the flush list of the adaptive page cleaner (`flushing.rs`): its
    /// `rec_lsn` when it became dirty, the batch's begin LSN when a batch deferred it (the
    /// paper's Algorithm 1 takes a deferred page off the list for that cycle: it comes back
    /// at the young end). Orders batch selection only; the redo LSN keeps `rec_lsn`.
    list_lsn: AtomicU64,
    /// Checkpoint passes that found this page dirty since it was loaded (Figures 1-2 of the
    /// hot-page paper), and how many of them wrote it.
    exposures: AtomicU32,
    ckpt_writes: AtomicU32,
    /// The page was created in memory and has never been written: never deferred (its home
    /// block holds no valid image for redo to start from).
    fresh: AtomicBool,
    /// SepFrozen hotness window and records (`hotness.rs`).
    hot: hotness::FrameHotness,
    /// Page LSN when the page was last written back (0: not written since it was loaded):
    /// `rec_lsn - prev_lsn` is its observed redirty interval (adaptive deferral).
    prev_lsn: AtomicU64,
    /// Sub-page deltas (the store tracks them, else empty): the first
    /// [`EXACT`](crate::format::delta::EXACT) bytes of the page's last durable image (the
    /// header, compared byte by byte) as words, and a fingerprint of each 16-byte grain after
    /// them (`crate::format::delta::grain_hash`), so write-back tells the store which byte
    /// ranges changed. 2,112 bytes per frame.
    exact: Box<[AtomicU64]>,
    fp: Box<[AtomicU64]>,
    /// `fp` describes the page's last durable image (false: created in memory, or a
    /// write-back failed after the store may have taken part of the batch).
    fp_ok: AtomicBool,
}

impl Frame {
    fn new(track_deltas: bool) -> Frame {
        use crate::format::delta::{EXACT, GRAINS};
        let (words, grains) = if track_deltas {
            (EXACT / 8, GRAINS)
        } else {
            (0, 0)
        };
        Frame {
            latch: RwLock::new(FrameData {
                pid: NO_PID,
                // Allocated when the frame first leaves the free list (`pop_free`): a large
                // pool that the data never fills does not touch (page-fault in) its memory.
                page: Box::default(),
            }),
            dirty: AtomicBool::new(false),
            refbit: AtomicBool::new(false),
            rec_lsn: AtomicU64::new(NO_LSN),
            ckpt_count: AtomicU32::new(0),
            list_lsn: AtomicU64::new(NO_LSN),
            exposures: AtomicU32::new(0),
            ckpt_writes: AtomicU32::new(0),
            fresh: AtomicBool::new(false),
            hot: hotness::FrameHotness::default(),
            prev_lsn: AtomicU64::new(0),
            exact: (0..words).map(|_| AtomicU64::new(0)).collect(),
            fp: (0..grains).map(|_| AtomicU64::new(0)).collect(),
            fp_ok: AtomicBool::new(false),
        }
    }

    /// `page` is the page's durable image now (loaded, or written back): keep its header and
    /// fingerprint its grains.
    fn remember(&self, page: &[u8]) {
        use crate::format::delta::{grain_hash, EXACT, GRAIN};
        if self.fp.is_empty() {
            return;
        }
        for (w, a) in page[..EXACT].chunks_exact(8).zip(self.exact.iter()) {
            a.store(crate::format::rd_u64(w, 0), Ordering::Relaxed);
        }
        for (c, h) in page[EXACT..].chunks_exact(GRAIN).zip(self.fp.iter()) {
            h.store(grain_hash(c), Ordering::Relaxed);
        }
        self.fp_ok.store(true, Ordering::Release);
    }

    /// The byte ranges of `page` changed since its last durable image (None: unknown).
    fn changed(&self, page: &[u8]) -> Option<crate::format::delta::Spans> {
        use crate::format::delta::{changes, EXACT};
        if self.fp.is_empty() || !self.fp_ok.load(Ordering::Acquire) {
            return None;
        }
        let mut exact = [0u8; EXACT];
        for (w, a) in exact.chunks_exact_mut(8).zip(self.exact.iter()) {
            w.copy_from_slice(&a.load(Ordering::Relaxed).to_le_bytes());
        }
        Some(changes(
            page,
            &exact,
            self.fp.iter().map(|h| h.load(Ordering::Relaxed)),
        ))
    }

    /// The page (image `page`) was written: clean, its deferral count reset.
    fn written(&self, page: &[u8]) {
        let rec = self.rec_lsn.load(Ordering::Acquire);
        // rec_lsn relation (checked when read back): the first change since the frame became
        // dirty is not after the page's last change.
        assert!(
            rec == NO_LSN || rec <= page::lsn(page),
            "rec_lsn {rec} above the page LSN {}",
            page::lsn(page)
        );
        self.dirty.store(false, Ordering::Release);
        self.rec_lsn.store(NO_LSN, Ordering::Release);
        self.list_lsn.store(NO_LSN, Ordering::Relaxed);
        self.ckpt_count.store(0, Ordering::Relaxed);
        self.fresh.store(false, Ordering::Relaxed);
        self.prev_lsn.store(page::lsn(page), Ordering::Relaxed);
    }

    /// The frame got a new page (load or create): no history.
    fn reset(&self, fresh: bool) {
        self.dirty.store(false, Ordering::Release);
        self.rec_lsn.store(NO_LSN, Ordering::Release);
        self.list_lsn.store(NO_LSN, Ordering::Relaxed);
        self.ckpt_count.store(0, Ordering::Relaxed);
        self.exposures.store(0, Ordering::Relaxed);
        self.ckpt_writes.store(0, Ordering::Relaxed);
        self.fresh.store(fresh, Ordering::Relaxed);
        self.prev_lsn.store(0, Ordering::Relaxed);
        self.fp_ok.store(false, Ordering::Release);
    }
}

/// The buffer pool.
pub struct BufferPool {
    frames: Box<[Frame]>,
    map: Box<[AtomicU32]>,
    free: Mutex<Vec<u32>>,
    hand: AtomicUsize,
    store: Arc<dyn PageStore>,
    wal: Arc<Wal>,
    counters: Arc<EngineCounters>,
    /// The checkpoint sweep in progress (run by checkpoint steps and the page cleaner).
    sweep: Mutex<Option<Sweep>>,
    /// `max_checkpoint_count`: deferrals in a row a dirty page may get (0: none).
    max_ckpt_count: AtomicU32,
    /// Adaptive deferral's redo bound in log bytes (0: none, the count alone decides).
    max_redo: AtomicU64,
    /// Log one pass covers: from the begin of the pass before the last complete one to the
    /// end of the last complete one (the slack the adaptive bound keeps: a crash before the
    /// next pass ends leaves at most that much log past the last pass begin).
    pass_log: AtomicU64,
    /// Begin LSN of the last sweep started (0: none yet).
    last_begin: AtomicU64,
    /// Free frames the page cleaner keeps (0: no cleaner running).
    free_target: AtomicUsize,
    /// Wakes the page cleaner (free list low, a sweep started, shutdown).
    pub(crate) wake: Condvar,
    pub(crate) wake_lock: Mutex<bool>,
    /// The engine refused further work (memory may hold changes the log lacks): no page may
    /// be written back any more, by a miss or by the page cleaner.
    poisoned: AtomicBool,
    /// During recovery an all-zero home block is a page that was never written (its image
    /// follows in the WAL); otherwise it is corruption.
    pub allow_unwritten: AtomicBool,
    /// The DB-written-page timer (SepFrozen hotness records, `hotness.rs`).
    hot: hotness::PoolHotness,
    /// LSN of the commit record of the commit group being applied ([`NO_LSN`]: none): a
    /// frame dirtied meanwhile gets it as its rec_lsn (see [`Self::set_group_floor`]).
    group_floor: AtomicU64,
    /// The adaptive page cleaner's averages and next batch (`flushing.rs`).
    flush: Mutex<flushing::FlushState>,
    /// The flush clock (None: wall clock since `t0`).
    clock: RwLock<Option<flushing::FlushClock>>,
    t0: std::time::Instant,
    /// The engine's yield site (`crate::yields`): write-backs yield there.
    pub(crate) yields: crate::yields::YieldTo,
    /// Blind updates (`crate::blind`), when on: a load applies the leaf's pending changes,
    /// an eviction gives the leaf its room.
    blind: std::sync::OnceLock<Arc<crate::blind::Blind>>,
}

/// Shared access to a page.
pub type ReadGuard<'a> = RwLockReadGuard<'a, FrameData>;

/// Exclusive access to a page; `set_lsn` marks it dirty.
pub struct WriteGuard<'a> {
    g: RwLockWriteGuard<'a, FrameData>,
    f: &'a Frame,
    /// The pool's group floor (`BufferPool::set_group_floor`).
    floor: &'a AtomicU64,
}

impl WriteGuard<'_> {
    /// The page.
    pub fn page(&self) -> &[u8] {
        &self.g.page
    }
    /// The page, writable.
    pub fn page_mut(&mut self) -> &mut [u8] {
        &mut self.g.page
    }
    /// Its pid.
    pub fn pid(&self) -> Pid {
        self.g.pid
    }
    /// Mark dirty *before* appending the WAL record of a change: a checkpoint that reads the
    /// WAL end after the append is then guaranteed to see the frame dirty (its unlatched
    /// pre-check is safe), see `flush_dirty_range`.
    pub fn mark_dirty(&self) {
        self.f.dirty.store(true, Ordering::Release);
    }
    /// Record that WAL record `lsn` modified this page.
    ///
    /// # Panics
    /// If `lsn` is not above the page's LSN (LSN order per page; checked again by redo).
    pub fn set_lsn(&mut self, lsn: u64) {
        let old = page::lsn(&self.g.page);
        assert!(
            old < lsn,
            "page {}: LSN {old} -> {lsn} does not grow",
            self.g.pid
        );
        page::set_lsn(&mut self.g.page, lsn);
        self.f.hot.on_modify();
        self.f.dirty.store(true, Ordering::Release);
        // First change since the frame became dirty: its rec_lsn, lowered to the commit
        // record of a commit group in progress (redo never starts inside a group).
        let rec = self.f.rec_lsn.load(Ordering::Acquire);
        if rec == NO_LSN {
            let floor = self.floor.load(Ordering::Acquire);
            let first = if floor == NO_LSN { lsn } else { lsn.min(floor) };
            self.f.rec_lsn.store(first, Ordering::Release);
            self.f.list_lsn.store(first, Ordering::Relaxed);
        } else {
            assert!(rec <= lsn, "rec_lsn {rec} above the new page LSN {lsn}");
        }
    }
}

impl BufferPool {
    /// `frames` frames over a data region of `data_pages` pages.
    ///
    /// # Panics
    /// If `frames` does not fit the frame index type.
    pub fn new(
        frames: usize,
        data_pages: u64,
        store: Arc<dyn PageStore>,
        wal: Arc<Wal>,
        counters: Arc<EngineCounters>,
    ) -> Self {
        let track = store.tracks_deltas();
        let frames: Box<[Frame]> = (0..frames).map(|_| Frame::new(track)).collect();
        let n = u32::try_from(frames.len()).expect("fewer than 2^32 frames");
        assert!(n < NONE, "frame index {n} collides with the empty marker");
        BufferPool {
            frames,
            map: (0..data_pages).map(|_| AtomicU32::new(NONE)).collect(),
            free: Mutex::new((0..n).rev().collect()),
            hand: AtomicUsize::new(0),
            store,
            wal,
            counters,
            sweep: Mutex::new(None),
            max_ckpt_count: AtomicU32::new(0),
            max_redo: AtomicU64::new(0),
            pass_log: AtomicU64::new(0),
            last_begin: AtomicU64::new(0),
            free_target: AtomicUsize::new(0),
            wake: Condvar::new(),
            wake_lock: Mutex::new(false),
            poisoned: AtomicBool::new(false),
            allow_unwritten: AtomicBool::new(false),
            hot: hotness::PoolHotness::default(),
            group_floor: AtomicU64::new(NO_LSN),
            flush: Mutex::new(flushing::FlushState::default()),
            clock: RwLock::new(None),
            t0: std::time::Instant::now(),
            yields: crate::yields::YieldTo::default(),
            blind: std::sync::OnceLock::new(),
        }
    }

    /// Turn blind updates on (once, before any page is loaded).
    ///
    /// # Panics
    /// If called twice.
    pub(crate) fn attach_blind(&self, b: Arc<crate::blind::Blind>) {
        assert!(self.blind.set(b).is_ok(), "blind updates attached twice");
    }

    /// Whether `pid` is mapped to a frame (being loaded, resident, or being evicted).
    pub(crate) fn is_mapped(&self, pid: Pid) -> bool {
        pid < u64_of(self.map.len()) && self.slot(pid).load(Ordering::Acquire) != NONE
    }

    /// Pages the pool can map (the data region).
    #[cfg(test)]
    pub(crate) fn data_pages_for_tests(&self) -> u64 {
        crate::num::u64_of(self.map.len())
    }

    /// Stop every write-back: pages in memory may be ahead of the log.
    pub fn poison(&self) {
        self.poisoned.store(true, Ordering::Release);
    }

    /// Set `max_checkpoint_count` (0: checkpoints write every dirty page, as before).
    pub fn set_max_checkpoint_count(&self, n: u32) {
        self.max_ckpt_count.store(n, Ordering::Relaxed);
    }

    /// Set the adaptive deferral's redo bound (None: the fixed count alone).
    pub fn set_max_redo_bytes(&self, bound: Option<u64>) {
        let b = bound.unwrap_or(0);
        assert!(bound.is_none() || b > 0, "a redo bound of 0 bytes");
        self.max_redo.store(b, Ordering::Relaxed);
    }

    /// Log one checkpoint pass covers (see the field).
    pub fn pass_log_bytes(&self) -> u64 {
        self.pass_log.load(Ordering::Relaxed)
    }

    /// Begin LSN of the last checkpoint sweep started (0: none).
    pub fn last_pass_begin(&self) -> u64 {
        self.last_begin.load(Ordering::Relaxed)
    }

    /// Number of frames.
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    fn check_pid(&self, pid: Pid) -> Result<()> {
        if pid >= u64_of(self.map.len()) {
            return Err(page_damage(
                pid,
                PageDamage::BeyondCapacity {
                    capacity: u64_of(self.map.len()),
                },
            ));
        }
        Ok(())
    }

    fn slot(&self, pid: Pid) -> &AtomicU32 {
        &self.map[usize_of(pid)]
    }

    fn frame(&self, idx: u32) -> &Frame {
        &self.frames[usize_of(u64::from(idx))]
    }

    #[inline]
    fn touch(&self, f: &Frame) {
        // Read first: avoid dirtying a shared cache line on every hit.
        if !f.refbit.load(Ordering::Relaxed) {
            f.refbit.store(true, Ordering::Relaxed);
        }
    }

    /// Latch `pid` shared (loading it on a miss).
    ///
    /// # Errors
    /// Pid out of range, store read errors, a page that fails validation, `Full(PoolLatched)`.
    pub fn read(&self, pid: Pid) -> Result<ReadGuard<'_>> {
        self.check_pid(pid)?;
        loop {
            let idx = self.slot(pid).load(Ordering::Acquire);
            if idx != NONE {
                let f = self.frame(idx);
                let g = f.latch.read();
                if g.pid == pid {
                    self.touch(f);
                    f.hot.on_access(self.hot.now());
                    self.counters.pool_hits.inc();
                    return Ok(g);
                }
                continue;
            }
            self.load(pid)?;
        }
    }

    /// Latch `pid` exclusively (loading it on a miss).
    ///
    /// # Errors
    /// As [`Self::read`].
    pub fn write(&self, pid: Pid) -> Result<WriteGuard<'_>> {
        self.check_pid(pid)?;
        loop {
            let idx = self.slot(pid).load(Ordering::Acquire);
            if idx != NONE {
                if let Some(g) = self.latch_cached(pid, idx) {
                    return Ok(g);
                }
                continue;
            }
            self.load(pid)?;
        }
    }

    /// Latch frame `idx` exclusively if it still holds `pid` (a hit); None: the frame was
    /// recycled since `map[pid]` named it.
    fn latch_cached(&self, pid: Pid, idx: u32) -> Option<WriteGuard<'_>> {
        let f = self.frame(idx);
        let g = f.latch.write();
        if g.pid != pid {
            return None;
        }
        self.touch(f);
        f.hot.on_access(self.hot.now());
        self.counters.pool_hits.inc();
        Some(WriteGuard {
            g,
            f,
            floor: &self.group_floor,
        })
    }

    /// A frame for a brand-new page (not read from the device); the caller initializes it.
    ///
    /// # Errors
    /// The pid is already cached (an allocation mark gone backwards), `Full(PoolLatched)`.
    pub fn create(&self, pid: Pid) -> Result<WriteGuard<'_>> {
        self.check_pid(pid)?;
        self.try_create(pid)?
            .ok_or_else(|| page_damage(pid, PageDamage::AlreadyCached))
    }

    /// [`Self::create`], None if `pid` is cached already (`map[pid]` taken).
    fn try_create(&self, pid: Pid) -> Result<Option<WriteGuard<'_>>> {
        let (idx, mut g) = self.victim()?;
        if self
            .slot(pid)
            .compare_exchange(NONE, idx, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            assert_eq!(g.pid, NO_PID, "a victim frame still holds a page");
            self.free.lock().push(idx);
            return Ok(None);
        }
        g.pid = pid;
        if let Some(b) = self.blind.get() {
            // A page created in memory: whatever an older life of the pid left is void.
            let t = b.take(pid, || {});
            assert!(
                t.is_empty(),
                "page {pid} created with blind changes pending"
            );
        }
        page::init(&mut g.page, page::KIND_LEAF, pid);
        let f = self.frame(idx);
        f.reset(true);
        f.hot.start(self.hot.now(), Default::default());
        f.refbit.store(true, Ordering::Relaxed);
        Ok(Some(WriteGuard {
            g,
            f,
            floor: &self.group_floor,
        }))
    }

    /// A frame for `pid` whose device image is not trusted (recovery of a page allocated
    /// after the checkpoint, a freed page reused by a split): the cached frame if there is
    /// one, else a new one, never read. The check and the latch are one step: a frame
    /// evicted (by the page cleaner) between them is replaced by a new one, not loaded: the
    /// device image may be gone (a freed page released to an out-of-place store reads as
    /// zeros).
    ///
    /// # Errors
    /// As [`Self::create`].
    pub fn write_untrusted(&self, pid: Pid) -> Result<WriteGuard<'_>> {
        self.check_pid(pid)?;
        loop {
            let idx = self.slot(pid).load(Ordering::Acquire);
            if idx != NONE {
                if let Some(g) = self.latch_cached(pid, idx) {
                    return Ok(g);
                }
            } else if let Some(g) = self.try_create(pid)? {
                return Ok(g);
            }
        }
    }

    fn load(&self, pid: Pid) -> Result<()> {
        let (idx, mut g) = self.victim()?;
        if self
            .slot(pid)
            .compare_exchange(NONE, idx, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            drop(g);
            self.free.lock().push(idx);
            return Ok(());
        }
        g.pid = pid;
        EngineCounters::add(&self.counters.pool_misses, 1);
        let res = self.store.read_page(pid, &mut g.page).and_then(|_| {
            if self.allow_unwritten.load(Ordering::Relaxed) && page::is_zero(&g.page) {
                // kind 0: only a page image from the WAL may bring it to life.
                page::init(&mut g.page, 0, pid);
                return Ok(());
            }
            page::validate(&g.page, pid)
        });
        if let Err(e) = res {
            g.pid = NO_PID;
            self.slot(pid).store(NONE, Ordering::Release);
            drop(g);
            self.free.lock().push(idx);
            return Err(e);
        }
        let f = self.frame(idx);
        f.reset(false);
        if page::kind(&g.page) != 0 {
            // A page read from the store (not one recovery brought to life as kind 0).
            f.remember(&g.page);
        }
        let records = page::hotness(&g.page);
        self.timer_past(&records);
        f.hot.start(self.hot.now(), records);
        if let Some(b) = self.blind.get() {
            self.apply_blind(b, f, g);
        }
        Ok(())
    }

    /// A leaf just loaded into frame `f` (latched `g`): apply its pending blind changes in LSN
    /// order. The frame is marked dirty with the oldest change's LSN as its rec_lsn under the
    /// blind lock, so a checkpoint that no longer sees the change pending sees the frame dirty.
    ///
    /// # Panics
    /// If a change does not fit the room reserved for it, or the page is not a leaf (bugs).
    fn apply_blind(&self, b: &crate::blind::Blind, f: &Frame, g: RwLockWriteGuard<'_, FrameData>) {
        let pid = g.pid;
        let changes = b.take(pid, || {
            f.dirty.store(true, Ordering::Release);
        });
        let Some(&(first, ..)) = changes.first() else {
            return;
        };
        assert_eq!(
            page::kind(&g.page),
            page::KIND_LEAF,
            "page {pid}: blind changes for a page that is not a leaf"
        );
        f.rec_lsn.store(first, Ordering::Release);
        f.list_lsn.store(first, Ordering::Relaxed);
        let mut w = WriteGuard {
            g,
            f,
            floor: &self.group_floor,
        };
        for (lsn, k, v) in &changes {
            let applied = page::leaf_put(w.page_mut(), k, v);
            assert!(applied, "page {pid}: a blind change did not fit its room");
            w.set_lsn(*lsn);
        }
        EngineCounters::add(&self.counters.blind_applied, u64_of(changes.len()));
        EngineCounters::add(&self.counters.blind_leaf_loads, 1);
    }

    /// A commit group (`crate::db::group`) whose commit record is at `commit_lsn` is being
    /// applied (`None`: it is done). Its writes are logged as records naming that commit
    /// record's ops, so a redo must start at or before it: a frame first dirtied meanwhile
    /// gets `commit_lsn` as its rec_lsn (an earlier rec_lsn only makes redo start earlier;
    /// changes by other threads meanwhile get it too, harmlessly).
    ///
    /// # Panics
    /// If a group starts while another is in progress (groups are serialized).
    pub fn set_group_floor(&self, commit_lsn: Option<u64>) {
        let new = commit_lsn.unwrap_or(NO_LSN);
        let old = self.group_floor.swap(new, Ordering::AcqRel);
        assert!(
            (old == NO_LSN) != (new == NO_LSN),
            "commit groups nest: floor {old} -> {new}"
        );
    }

    /// Frames holding dirty pages.
    pub fn dirty_count(&self) -> usize {
        self.frames
            .iter()
            .filter(|f| f.dirty.load(Ordering::Relaxed))
            .count()
    }

    /// The pages resident now, by the checkpoint selections they were exposed to so far
    /// (the buckets of `residency_pages`), and their checkpoint writes: the pages the
    /// eviction histogram has not counted yet. An unlatched snapshot: a page evicted
    /// meanwhile may count in both or neither, and a frame reused meanwhile is reached from
    /// two map slots (the old page's, read before its eviction, and the new one's): each frame
    /// counts once, so the snapshot never holds more pages than the pool has frames (a
    /// `nowa table1` run failed the assertion below before frames were counted once).
    pub fn resident_residency(&self) -> (Vec<u64>, Vec<u64>) {
        let buckets = crate::stats::RESIDENCY_BUCKETS;
        let (mut pages, mut writes) = (vec![0u64; buckets], vec![0u64; buckets]);
        let mut counted = vec![false; self.frames.len()];
        for slot in &*self.map {
            let idx = slot.load(Ordering::Acquire);
            if idx == NONE || std::mem::replace(&mut counted[usize_of(u64::from(idx))], true) {
                continue;
            }
            let f = self.frame(idx);
            let e = f.exposures.load(Ordering::Relaxed);
            // A frame reset between the two loads reads 0 exposures: clamp, as the pair is
            // not read atomically (eviction checks writes <= exposures under the latch).
            let w = f.ckpt_writes.load(Ordering::Relaxed).min(e);
            let b = usize::try_from(e).unwrap_or(usize::MAX).min(buckets - 1);
            pages[b] += 1;
            writes[b] += u64::from(w);
        }
        assert!(
            pages.iter().sum::<u64>() <= u64_of(self.frames.len()),
            "more resident pages than frames"
        );
        (pages, writes)
    }

    /// Frames on the free list, and the page cleaner's target for it (0: no cleaner).
    pub fn free_frames(&self) -> (usize, usize) {
        (
            self.free.lock().len(),
            self.free_target.load(Ordering::Relaxed),
        )
    }
}

impl PageCache for BufferPool {
    /// Never blocks: a frame latched exclusively (being loaded, modified or evicted) is
    /// reported as a miss.
    fn copy_if_clean(&self, pid: Pid, buf: &mut [u8]) -> bool {
        if pid >= u64_of(self.map.len()) {
            return false;
        }
        let idx = self.slot(pid).load(Ordering::Acquire);
        if idx == NONE {
            return false;
        }
        let f = self.frame(idx);
        let Some(g) = f.latch.try_read() else {
            return false;
        };
        if g.pid != pid || f.dirty.load(Ordering::Acquire) || page::kind(&g.page) == 0 {
            return false;
        }
        buf.copy_from_slice(&g.page);
        // The records of the version on the device (the frame's image keeps those it was
        // read with, `hotness.rs`).
        page::set_hotness(buf, &f.hot.records());
        true
    }
}
