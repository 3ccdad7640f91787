//! Buffer pool: fixed number of 4 KiB frames, a lock-free pid -> frame table (one AtomicU32
//! per pid of the data region, as in vmcache), a per-frame RwLock latch, clock eviction with
//! batched write-back of dirty victims.
//!
//! Protocol: a lookup reads `map[pid]`, latches that frame and re-checks the frame's pid (the
//! frame may have been recycled in between; then retry). A miss takes a victim frame with its
//! latch held exclusively, claims `map[pid]` by CAS (losing the race = someone else loads it),
//! reads the page and releases the latch; concurrent lookups block on the latch meanwhile.
//! Eviction only ever *tries* latches, so a thread holding latches can always evict.

use crate::error::{corrupt, EngineError, Pid, Result};
use crate::page::{self, PAGE_SIZE};
use crate::stats::Counters;
use crate::store::{PageCache, PageStore, WriteKind};
use crate::wal::Wal;
use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

const NONE: u32 = u32::MAX;
pub const NO_PID: Pid = u64::MAX;
const EVICT_BATCH: usize = 16;
const CKPT_BATCH: usize = 32;

pub struct FrameData {
    pub pid: Pid,
    pub page: Box<[u8]>,
}

struct Frame {
    latch: RwLock<FrameData>,
    /// Set under the exclusive latch by writers; cleared under (at least) a shared latch by
    /// write-back, which excludes writers.
    dirty: AtomicBool,
    refbit: AtomicBool,
}

pub struct BufferPool {
    frames: Box<[Frame]>,
    map: Box<[AtomicU32]>,
    free: Mutex<Vec<u32>>,
    hand: AtomicUsize,
    store: Arc<dyn PageStore>,
    wal: Arc<Wal>,
    counters: Arc<Counters>,
    /// During recovery an all-zero home block is a page that was never written (its image
    /// follows in the WAL); otherwise it is corruption.
    pub allow_unwritten: AtomicBool,
}

pub type ReadGuard<'a> = RwLockReadGuard<'a, FrameData>;

/// Exclusive access to a page; `set_lsn` marks it dirty.
pub struct WriteGuard<'a> {
    g: RwLockWriteGuard<'a, FrameData>,
    dirty: &'a AtomicBool,
}

impl WriteGuard<'_> {
    pub fn page(&self) -> &[u8] {
        &self.g.page
    }
    pub fn page_mut(&mut self) -> &mut [u8] {
        &mut self.g.page
    }
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
    pub fn set_lsn(&mut self, lsn: u64) {
        page::set_lsn(&mut self.g.page, lsn);
        self.dirty.store(true, Ordering::Release);
    }
}

impl BufferPool {
    pub fn new(
        frames: usize,
        data_pages: u64,
        store: Arc<dyn PageStore>,
        wal: Arc<Wal>,
        counters: Arc<Counters>,
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
        let n = frames.len() as u32;
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

    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    fn check_pid(&self, pid: Pid) -> Result<()> {
        if pid >= self.map.len() as u64 {
            return Err(corrupt(pid, "pid beyond data region"));
        }
        Ok(())
    }

    #[inline]
    fn touch(&self, f: &Frame) {
        // Read first: avoid dirtying a shared cache line on every hit.
        if !f.refbit.load(Ordering::Relaxed) {
            f.refbit.store(true, Ordering::Relaxed);
        }
    }

    pub fn read(&self, pid: Pid) -> Result<ReadGuard<'_>> {
        self.check_pid(pid)?;
        loop {
            let idx = self.map[pid as usize].load(Ordering::Acquire);
            if idx != NONE {
                let f = &self.frames[idx as usize];
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

    pub fn write(&self, pid: Pid) -> Result<WriteGuard<'_>> {
        self.check_pid(pid)?;
        loop {
            let idx = self.map[pid as usize].load(Ordering::Acquire);
            if idx != NONE {
                let f = &self.frames[idx as usize];
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
    pub fn create(&self, pid: Pid) -> Result<WriteGuard<'_>> {
        self.check_pid(pid)?;
        let (idx, mut g) = self.victim()?;
        if self.map[pid as usize]
            .compare_exchange(NONE, idx, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            self.free.lock().push(idx);
            return Err(corrupt(pid, "new page already cached"));
        }
        g.pid = pid;
        page::init(&mut g.page, page::KIND_LEAF, pid);
        let f = &self.frames[idx as usize];
        f.refbit.store(true, Ordering::Relaxed);
        Ok(WriteGuard { g, dirty: &f.dirty })
    }

    fn load(&self, pid: Pid) -> Result<()> {
        let (idx, mut g) = self.victim()?;
        if self.map[pid as usize]
            .compare_exchange(NONE, idx, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            drop(g);
            self.free.lock().push(idx);
            return Ok(());
        }
        g.pid = pid;
        Counters::add(&self.counters.pool_misses, 1);
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
            self.map[pid as usize].store(NONE, Ordering::Release);
            drop(g);
            self.free.lock().push(idx);
            return Err(e);
        }
        self.frames[idx as usize]
            .dirty
            .store(false, Ordering::Release);
        Ok(())
    }

    /// Get an unmapped frame, latched exclusively.
    fn victim(&self) -> Result<(u32, RwLockWriteGuard<'_, FrameData>)> {
        if let Some(i) = self.free.lock().pop() {
            return Ok((i, self.frames[i as usize].latch.write()));
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
            if f.dirty.load(Ordering::Acquire) {
                dirty.push((i as u32, g));
                if dirty.len() >= EVICT_BATCH {
                    break;
                }
                continue;
            }
            found = Some((i as u32, g));
            break;
        }
        if !dirty.is_empty() {
            let pages: Vec<(Pid, &[u8])> =
                dirty.iter().map(|(_, g)| (g.pid, &g.page[..])).collect();
            self.write_back(&pages, WriteKind::Eviction)?;
            for (i, _) in &dirty {
                self.frames[*i as usize]
                    .dirty
                    .store(false, Ordering::Release);
            }
        }
        let (i, mut g) = match found {
            Some(x) => x,
            None => match dirty.pop() {
                Some(x) => x,
                None => {
                    return Err(EngineError::Full(
                        "buffer pool: every frame is latched".into(),
                    ))
                }
            },
        };
        drop(dirty);
        // Only mapped frames get here (free ones were skipped above).
        let unmapped =
            self.map[g.pid as usize].compare_exchange(i, NONE, Ordering::AcqRel, Ordering::Acquire);
        debug_assert!(
            unmapped.is_ok(),
            "frame {i} holds pid {} but the map disagrees",
            g.pid
        );
        g.pid = NO_PID;
        Counters::add(&self.counters.evictions, 1);
        Ok((i, g))
    }

    /// Seal copies and write them through the store, after forcing the WAL (WAL rule).
    fn write_back(&self, pages: &[(Pid, &[u8])], kind: WriteKind) -> Result<()> {
        let max_lsn = pages.iter().map(|(_, p)| page::lsn(p)).max().unwrap_or(0);
        // page LSN is the record's start; the record ends later, so flush past it.
        self.wal.flush(max_lsn + 1)?;
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
            let n = batch.len() as u64;
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
        if pid >= self.map.len() as u64 {
            return false;
        }
        let idx = self.map[pid as usize].load(Ordering::Acquire);
        if idx == NONE {
            return false;
        }
        let f = &self.frames[idx as usize];
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
