//! Buffer pool: fixed number of 4 KiB frames, a lock-free pid -> frame table (one AtomicU32
//! per pid of the data region, as in vmcache), a per-frame RwLock latch, clock eviction with
//! batched write-back of dirty victims.
//!
//! Protocol: a lookup reads `map[pid]`, latches that frame and re-checks the frame's pid (the
//! frame may have been recycled in between; then retry). A miss takes a victim frame with its
//! latch held exclusively, claims `map[pid]` by CAS (losing the race = someone else loads it),
//! reads the page and releases the latch; concurrent lookups block on the latch meanwhile.
//! Eviction only ever *tries* latches, so a thread holding latches can always evict.

use crate::error::{page_damage, Exhausted, PageDamage, Pid, Result};
use crate::num::{u64_of, usize_of};
use crate::page::{self, PAGE_SIZE};
use crate::stats::EngineCounters;
use crate::store::{PageCache, PageStore, WriteKind};
use crate::wal::Wal;
use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

const NONE: u32 = u32::MAX;
/// Pid of an unmapped frame.
pub const NO_PID: Pid = u64::MAX;
const EVICT_BATCH: usize = 16;
const CKPT_BATCH: usize = 32;

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
    /// During recovery an all-zero home block is a page that was never written (its image
    /// follows in the WAL); otherwise it is corruption.
    pub allow_unwritten: AtomicBool,
}

/// Shared access to a page.
pub type ReadGuard<'a> = RwLockReadGuard<'a, FrameData>;

/// Exclusive access to a page; `set_lsn` marks it dirty.
pub struct WriteGuard<'a> {
    g: RwLockWriteGuard<'a, FrameData>,
    dirty: &'a AtomicBool,
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
        self.dirty.store(true, Ordering::Release);
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
        self.dirty.store(true, Ordering::Release);
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
        let frames: Box<[Frame]> = (0..frames)
            .map(|_| Frame {
                latch: RwLock::new(FrameData {
                    pid: NO_PID,
                    page: vec![0u8; PAGE_SIZE].into_boxed_slice(),
                }),
                dirty: AtomicBool::new(false),
                refbit: AtomicBool::new(false),
            })
            .collect();
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
            allow_unwritten: AtomicBool::new(false),
        }
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
                let f = self.frame(idx);
                let g = f.latch.write();
                if g.pid == pid {
                    self.touch(f);
                    self.counters.pool_hits.inc();
                    return Ok(WriteGuard { g, dirty: &f.dirty });
                }
                continue;
            }
            self.load(pid)?;
        }
    }

    /// A frame for a brand-new page (not read from the device); the caller initializes it.
    ///
    /// # Errors
    /// The pid is already cached (an allocation mark gone backwards), `Full(PoolLatched)`.
    pub fn create(&self, pid: Pid) -> Result<WriteGuard<'_>> {
        self.check_pid(pid)?;
        let (idx, mut g) = self.victim()?;
        if self
            .slot(pid)
            .compare_exchange(NONE, idx, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            assert_eq!(g.pid, NO_PID, "a victim frame still holds a page");
            self.free.lock().push(idx);
            return Err(page_damage(pid, PageDamage::AlreadyCached));
        }
        g.pid = pid;
        page::init(&mut g.page, page::KIND_LEAF, pid);
        let f = self.frame(idx);
        f.refbit.store(true, Ordering::Relaxed);
        Ok(WriteGuard { g, dirty: &f.dirty })
    }

    /// A frame for `pid` whose device image is not trusted (recovery of a page allocated
    /// after the checkpoint): the cached frame if there is one, else a new one, never read.
    ///
    /// # Errors
    /// As [`Self::create`].
    pub fn write_untrusted(&self, pid: Pid) -> Result<WriteGuard<'_>> {
        self.check_pid(pid)?;
        if self.slot(pid).load(Ordering::Acquire) != NONE {
            return self.write(pid);
        }
        self.create(pid)
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
        self.frame(idx).dirty.store(false, Ordering::Release);
        Ok(())
    }

    /// Get an unmapped frame, latched exclusively.
    fn victim(&self) -> Result<(u32, RwLockWriteGuard<'_, FrameData>)> {
        if let Some(i) = self.free.lock().pop() {
            let g = self.frame(i).latch.write();
            assert_eq!(g.pid, NO_PID, "frame {i} on the free list holds a page");
            return Ok((i, g));
        }
        let n = self.frames.len();
        let mut dirty: Vec<(u32, RwLockWriteGuard<'_, FrameData>)> = Vec::new();
        let mut found = None;
        for _ in 0..n * 4 {
            let i = self.hand.fetch_add(1, Ordering::Relaxed) % n;
            let f = &self.frames[i];
            if f.refbit.load(Ordering::Relaxed) {
                f.refbit.store(false, Ordering::Relaxed);
                continue;
            }
            let Some(g) = f.latch.try_write() else {
                continue;
            };
            if g.pid == NO_PID {
                // Unmapped frames are owned by the free list; taking one here as well would
                // let two threads use the same frame.
                continue;
            }
            let idx = u32::try_from(i).expect("frame count checked in new");
            if f.dirty.load(Ordering::Acquire) {
                dirty.push((idx, g));
                if dirty.len() >= EVICT_BATCH {
                    break;
                }
                continue;
            }
            found = Some((idx, g));
            break;
        }
        if !dirty.is_empty() {
            let pages: Vec<(Pid, &[u8])> =
                dirty.iter().map(|(_, g)| (g.pid, &g.page[..])).collect();
            self.write_back(&pages, WriteKind::Eviction)?;
            for (i, _) in &dirty {
                self.frame(*i).dirty.store(false, Ordering::Release);
            }
        }
        let Some((i, mut g)) = found.or_else(|| dirty.pop()) else {
            return Err(Exhausted::PoolLatched.into());
        };
        drop(dirty);
        // Only mapped frames get here (free ones were skipped above).
        let unmapped =
            self.slot(g.pid)
                .compare_exchange(i, NONE, Ordering::AcqRel, Ordering::Acquire);
        assert!(
            unmapped.is_ok(),
            "frame {i} holds pid {} but the map disagrees",
            g.pid
        );
        g.pid = NO_PID;
        EngineCounters::add(&self.counters.evictions, 1);
        Ok((i, g))
    }

    /// Seal copies and write them through the store, after forcing the WAL (WAL rule).
    fn write_back(&self, pages: &[(Pid, &[u8])], kind: WriteKind) -> Result<()> {
        let max_lsn = pages.iter().map(|(_, p)| page::lsn(p)).max().unwrap_or(0);
        // page LSN is the record's start; the record ends later, so flush past it.
        self.wal.flush(max_lsn + 1)?;
        // The WAL rule: no page reaches the device ahead of its log record.
        assert!(
            self.wal.flushed_lsn() > max_lsn,
            "page LSN {max_lsn} not below the durable WAL end {}",
            self.wal.flushed_lsn()
        );
        let mut sealed: Vec<Vec<u8>> = Vec::with_capacity(pages.len());
        for (_, p) in pages {
            let mut c = p.to_vec();
            page::seal(&mut c);
            sealed.push(c);
        }
        let batch: Vec<(Pid, &[u8])> = pages
            .iter()
            .zip(&sealed)
            .map(|((pid, _), c)| (*pid, &c[..]))
            .collect();
        self.store.write_pages(&batch, kind)
    }

    /// Write every dirty page in `frames[range]` (one step of a checkpoint pass). Pages
    /// dirtied concurrently may or may not be included; every change made before the call to a
    /// page that is in one of these frames is. Returns pages written.
    ///
    /// # Errors
    /// WAL flush and store write errors.
    pub fn flush_dirty_range(&self, range: std::ops::Range<usize>, kind: WriteKind) -> Result<u64> {
        let mut written = 0u64;
        let mut retry = Vec::new();
        let mut batch: Vec<(usize, ReadGuard<'_>)> = Vec::new();
        let flush_batch = |batch: &mut Vec<(usize, ReadGuard<'_>)>| -> Result<u64> {
            let pages: Vec<(Pid, &[u8])> =
                batch.iter().map(|(_, g)| (g.pid, &g.page[..])).collect();
            self.write_back(&pages, kind)?;
            for (i, _) in batch.iter() {
                self.frames[*i].dirty.store(false, Ordering::Release);
            }
            let n = u64_of(batch.len());
            batch.clear();
            Ok(n)
        };
        for (i, f) in self
            .frames
            .iter()
            .enumerate()
            .take(range.end)
            .skip(range.start)
        {
            // Unlatched pre-check: a writer whose record precedes the caller's begin LSN set
            // `dirty` before appending (WriteGuard::mark_dirty), and the WAL append/next_lsn
            // pair orders that store before our read of the begin LSN.
            if !f.dirty.load(Ordering::Acquire) {
                continue;
            }
            // try: a thread holding this latch may be waiting for one we hold.
            match f.latch.try_read() {
                Some(g) => {
                    if g.pid != NO_PID && f.dirty.load(Ordering::Acquire) {
                        batch.push((i, g));
                        if batch.len() >= CKPT_BATCH {
                            written += flush_batch(&mut batch)?;
                        }
                    }
                }
                None => retry.push(i),
            }
        }
        written += flush_batch(&mut batch)?;
        for i in retry {
            let f = &self.frames[i];
            let g = f.latch.read();
            if g.pid != NO_PID && f.dirty.load(Ordering::Acquire) {
                batch.push((i, g));
                written += flush_batch(&mut batch)?;
            }
        }
        Ok(written)
    }

    /// Frames holding dirty pages.
    pub fn dirty_count(&self) -> usize {
        self.frames
            .iter()
            .filter(|f| f.dirty.load(Ordering::Relaxed))
            .count()
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
        true
    }
}
