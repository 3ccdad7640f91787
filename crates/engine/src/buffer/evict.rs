//! Clock eviction in batches: a miss that finds the free list empty evicts up to
//! [`FG_EVICT`] unreferenced frames at once (clean or dirty: the sweep no longer stops at the
//! first clean frame), writes the dirty ones back as one batch and keeps the rest on the free
//! list. The page cleaner (`crate::cleaner`) runs the same code ahead of the misses.

use super::{BufferPool, FrameData, NO_PID};
use crate::error::{EngineError, Exhausted, Pid, Result};
use crate::num::u64_of;
use crate::page;
use crate::stats::EngineCounters;
use crate::store::WriteKind;
use parking_lot::RwLockWriteGuard;
use std::sync::atomic::Ordering;

/// Frames a miss evicts at once when the free list is empty.
const FG_EVICT: usize = 32;
/// How long a miss waits for a frame while every frame is latched by other threads.
const LATCHED_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
/// Most dirty pages written back in one batch (eviction, cleaner, checkpoint sweep).
pub(super) const WRITE_BATCH: usize = 64;

/// A frame index with its exclusive latch.
type Latched<'a> = (u32, RwLockWriteGuard<'a, FrameData>);

impl BufferPool {
    /// Get an unmapped frame, latched exclusively.
    ///
    /// Other threads may hold every frame latched for a moment (a miss latches a batch of
    /// victims while it writes the dirty ones back; frames leave the free list latched), so a
    /// sweep that finds none is retried until [`LATCHED_WAIT`] has passed: only a pool that
    /// stays latched is exhausted. A miss takes at most 1/8 of the pool at once.
    pub(super) fn victim(&self) -> Result<Latched<'_>> {
        let want = FG_EVICT.min((self.frames.len() / 8).max(1));
        let start = std::time::Instant::now();
        loop {
            if let Some(v) = self.pop_free() {
                return Ok(v);
            }
            let mut got = self.evict_batch(want, false)?;
            if let Some(first) = got.pop() {
                self.release_free(got);
                return Ok(first);
            }
            if start.elapsed() >= LATCHED_WAIT {
                return Err(Exhausted::PoolLatched.into());
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }

    /// A frame from the free list; wakes the cleaner when the list runs low.
    fn pop_free(&self) -> Option<Latched<'_>> {
        let (i, left) = {
            let mut free = self.free.lock();
            let i = free.pop()?;
            (i, free.len())
        };
        if left < self.free_target.load(Ordering::Relaxed) / 2 {
            self.wake_cleaner();
        }
        let mut g = self.frame(i).latch.write();
        assert_eq!(g.pid, NO_PID, "frame {i} on the free list holds a page");
        if g.page.is_empty() {
            // The frame's first use (`Frame::new` leaves its page unallocated).
            g.page = vec![0u8; page::PAGE_SIZE].into_boxed_slice();
        }
        assert_eq!(g.page.len(), page::PAGE_SIZE, "frame {i} page size");
        Some((i, g))
    }

    /// Put unmapped frames on the free list.
    pub(super) fn release_free(&self, frames: Vec<Latched<'_>>) {
        let idx: Vec<u32> = frames
            .into_iter()
            .map(|(i, g)| {
                assert_eq!(g.pid, NO_PID, "frame {i} freed while it holds a page");
                i
            })
            .collect();
        self.free.lock().extend(idx);
    }

    /// Wake the page cleaner (if one runs).
    pub(crate) fn wake_cleaner(&self) {
        if self.free_target.load(Ordering::Relaxed) > 0 {
            let mut w = self.wake_lock.lock();
            *w = true;
            self.wake.notify_one();
        }
    }

    /// Sweep the clock for up to `want` unreferenced frames it can latch, write the dirty
    /// ones back in one batch, unmap them all and return them latched.
    pub(super) fn evict_batch(&self, want: usize, by_cleaner: bool) -> Result<Vec<Latched<'_>>> {
        let n = self.frames.len();
        let mut clean: Vec<Latched<'_>> = Vec::with_capacity(want);
        let mut dirty: Vec<Latched<'_>> = Vec::new();
        for _ in 0..n * 4 {
            if clean.len() + dirty.len() >= want {
                break;
            }
            let i = self.hand.fetch_add(1, Ordering::Relaxed) % n;
            let f = &self.frames[i];
            if f.refbit.load(Ordering::Relaxed) {
                f.refbit.store(false, Ordering::Relaxed);
                continue;
            }
            let Some(g) = f.latch.try_write() else {
                continue;
            };
            // Unmapped frames are owned by the free list; taking one here as well would let
            // two threads use the same frame.
            if g.pid == NO_PID {
                continue;
            }
            let idx = u32::try_from(i).expect("frame count checked in new");
            if f.dirty.load(Ordering::Acquire) {
                if dirty.len() < WRITE_BATCH {
                    dirty.push((idx, g));
                }
            } else {
                clean.push((idx, g));
            }
        }
        if !dirty.is_empty() {
            let pages: Vec<(Pid, &[u8])> =
                dirty.iter().map(|(_, g)| (g.pid, &g.page[..])).collect();
            let frames: Vec<&super::Frame> = dirty.iter().map(|(i, _)| self.frame(*i)).collect();
            self.write_back(&pages, &frames, WriteKind::Eviction)?;
            for (i, g) in &dirty {
                self.frame(*i).written(&g.page);
            }
            if by_cleaner {
                EngineCounters::add(&self.counters.cleaner_page_writes, u64_of(dirty.len()));
            }
        }
        clean.append(&mut dirty);
        for (i, g) in &mut clean {
            self.unmap(*i, g);
        }
        Ok(clean)
    }

    /// Unmap the (clean) page in frame `i`, recording how many checkpoints it was exposed to.
    fn unmap(&self, i: u32, g: &mut RwLockWriteGuard<'_, FrameData>) {
        let f = self.frame(i);
        assert!(
            !f.dirty.load(Ordering::Acquire),
            "frame {i} evicted dirty (page {})",
            g.pid
        );
        if let Some(b) = self.blind.get() {
            // Before the unmap: a blind put that sees the room also sees the page mapped
            // until it is unmapped, and a load (after the unmap) takes the room.
            if page::kind(&g.page) == page::KIND_LEAF {
                b.evicted(
                    g.pid,
                    page::room(&g.page),
                    crate::blind::summary_of(&g.page),
                );
            }
        }
        let unmapped =
            self.slot(g.pid)
                .compare_exchange(i, super::NONE, Ordering::AcqRel, Ordering::Acquire);
        assert!(
            unmapped.is_ok(),
            "frame {i} holds pid {} but the map disagrees",
            g.pid
        );
        self.counters.record_residency(
            f.exposures.load(Ordering::Relaxed),
            f.ckpt_writes.load(Ordering::Relaxed),
        );
        g.pid = NO_PID;
        f.reset(false);
        EngineCounters::add(&self.counters.evictions, 1);
    }

    /// One round of the page cleaner: refill the free list to its target, then advance the
    /// checkpoint sweep by one batch. Returns whether it did anything.
    ///
    /// # Errors
    /// WAL flush and store write errors.
    pub(crate) fn clean_step(&self) -> Result<bool> {
        let target = self.free_target.load(Ordering::Relaxed);
        let have = self.free.lock().len();
        let mut worked = false;
        if have < target {
            // Refill by a full write batch at least (a small pool's target alone would make
            // small batches: one store flush per few pages).
            let want = (target - have)
                .clamp(WRITE_BATCH, 2 * WRITE_BATCH)
                .min(self.frames.len() / 4);
            let got = self.evict_batch(want, true)?;
            worked = !got.is_empty();
            self.release_free(got);
        }
        if self.sweep_try_step(WRITE_BATCH)? {
            worked = true;
        }
        Ok(worked)
    }

    /// Free frames the cleaner keeps (0: none, no cleaner).
    pub(crate) fn set_free_target(&self, n: usize) {
        self.free_target.store(n, Ordering::Relaxed);
    }

    /// Seal copies and write them through the store, after forcing the WAL (WAL rule).
    /// `frames` hold the pages (their header copies and grain fingerprints give the store the
    /// changed byte ranges when it writes deltas).
    pub(super) fn write_back(
        &self,
        pages: &[(Pid, &[u8])],
        frames: &[&super::Frame],
        kind: WriteKind,
    ) -> Result<()> {
        assert_eq!(pages.len(), frames.len(), "one frame per page written back");
        if self.poisoned.load(Ordering::Acquire) {
            // A page may hold a change whose record was never logged: never write it.
            return Err(EngineError::Poisoned);
        }
        let max_lsn = pages.iter().map(|(_, p)| page::lsn(p)).max().unwrap_or(0);
        // page LSN is the record's start; the record ends later, so flush past it. No flush
        // mark where the store checks pages against the log's end at open (`Wal::flush_for_pages`).
        self.wal.flush_for_pages(max_lsn + 1)?;
        // The WAL rule: no page reaches the device ahead of its log record.
        assert!(
            self.wal.flushed_lsn() > max_lsn,
            "page LSN {max_lsn} not below the durable WAL end {}",
            self.wal.flushed_lsn()
        );
        // The batch's frames stay latched until the store has it: a task may run beside.
        self.yields.at(crate::YieldPoint::WriteBack);
        // The sealed copies share one buffer: one allocation per batch, not per page.
        let mut sealed = vec![0u8; pages.len() * page::PAGE_SIZE];
        for ((pid, p), c) in pages.iter().zip(sealed.chunks_exact_mut(page::PAGE_SIZE)) {
            assert_eq!(p.len(), page::PAGE_SIZE, "page {pid} written back whole");
            c.copy_from_slice(p);
            self.stamp_hotness(*pid, c);
            page::seal(c);
        }
        let batch: Vec<(Pid, &[u8])> = pages
            .iter()
            .zip(sealed.chunks_exact(page::PAGE_SIZE))
            .map(|((pid, _), c)| (*pid, c))
            .collect();
        if !self.store.tracks_deltas() {
            return self.store.write_pages(&batch, kind);
        }
        // Against the sealed copies: the header fields write-back stamps (hotness, crc) are
        // compared with those of the copy last written, which `remember` keeps.
        let changed: Vec<Option<crate::format::delta::Spans>> = frames
            .iter()
            .zip(&batch)
            .map(|(f, (_, c))| f.changed(c))
            .collect();
        let r = self.store.write_pages_changed(&batch, &changed, kind);
        if r.is_ok() {
            for (f, (_, c)) in frames.iter().zip(&batch) {
                f.remember(c);
            }
        } else {
            // Part of the batch may be durable: the fingerprints no longer name the store's
            // newest copy, so the next write-back of each of these pages is whole.
            for f in frames {
                f.fp_ok.store(false, Ordering::Release);
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::LATCHED_WAIT;
    use crate::{Config, Engine};
    use nowa_device::MemDevice;

    /// A miss while another thread holds every frame latched waits for one to come free
    /// (it used to fail at once with "every frame is latched": a flaky concurrency test under
    /// load), and still fails when the pool stays latched.
    #[test]
    fn a_miss_waits_for_frames_latched_by_others() {
        let cfg = Config {
            pool_bytes: 64 * 4096,
            wal_limit_bytes: Some(256 << 10),
            dw_pages: 8,
            ..Config::default()
        };
        let e = Engine::create(MemDevice::new(32 << 20), cfg).expect("create");
        let pool = e.pool_for_tests();
        let top = pool.data_pages_for_tests();
        let n = u64::try_from(pool.frames()).expect("frames");
        let held: Vec<_> = (0..n)
            .map(|k| pool.create(top - 1 - k).expect("a frame"))
            .collect();
        let t0 = std::time::Instant::now();
        let err = pool
            .create(top - 1 - n)
            .err()
            .expect("the pool stays latched");
        assert!(err.to_string().contains("latched"), "{err}");
        assert!(t0.elapsed() >= LATCHED_WAIT, "it waited before failing");
        std::thread::scope(|s| {
            let h = s.spawn(|| pool.create(top - 2 - n).map(|g| g.pid()));
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(held);
            assert_eq!(h.join().expect("joined").expect("a frame"), top - 2 - n);
        });
        std::mem::forget(e);
    }
}
