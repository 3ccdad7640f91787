//! The page-writing part of a checkpoint pass: a sweep over the frames that writes dirty
//! pages in batches, or defers a page that stayed dirty across checkpoints (hot-page-aware
//! checkpointing, docs/design.md section 8): below `max_checkpoint_count` deferrals in a row
//! the sweep skips it and remembers its `rec_lsn`. The redo LSN the pass may record is
//! `min(begin, rec_lsn of every deferred page)`. A forced sweep (at the WAL limit, explicit
//! checkpoints) ignores the count. Steps run on writer threads and on the page cleaner.

use super::evict::WRITE_BATCH;
use super::{BufferPool, ReadGuard, NO_LSN, NO_PID};
use crate::error::{Pid, Result};
use crate::num::u64_of;
use crate::page;
use crate::stats::EngineCounters;
use crate::store::WriteKind;
use std::sync::atomic::Ordering;

/// A checkpoint sweep in progress.
#[derive(Debug)]
pub struct Sweep {
    /// WAL end when the pass began: every change below it is in a frame the sweep has not
    /// passed yet, or on the device.
    begin: u64,
    /// Next frame to visit.
    cursor: usize,
    /// Smallest rec_lsn of a page this sweep left dirty: deferred, or not selected by a
    /// flush-list batch (`u64::MAX`: none).
    min_deferred: u64,
    /// A flush-list batch selects only pages with `rec_lsn` <= this (the oldest-modified
    /// ones, `flushing.rs`); `u64::MAX`: every dirty page (a pass, a forced pass).
    limit: u64,
    /// Ignore deferral (from the moment it is set on).
    force: bool,
    /// Begin of the pass before this one (0: none).
    prev_begin: u64,
}

impl Sweep {
    /// The redo LSN this sweep allows once complete.
    fn redo(&self) -> u64 {
        self.begin.min(self.min_deferred)
    }
}

impl BufferPool {
    /// Start a sweep for a pass that began at WAL end `begin`.
    ///
    /// # Panics
    /// If a sweep is already in progress (one pass at a time, under the checkpoint lock).
    pub fn sweep_start(&self, begin: u64, force: bool, limit: u64) {
        let mut s = self.sweep.lock();
        assert!(s.is_none(), "checkpoint sweep started twice");
        let prev_begin = self.last_begin.swap(begin, Ordering::Relaxed);
        assert!(
            prev_begin <= begin,
            "pass begin {begin} below the last one {prev_begin}"
        );
        *s = Some(Sweep {
            begin,
            cursor: 0,
            min_deferred: u64::MAX,
            force,
            prev_begin,
            limit,
        });
        drop(s);
        self.wake_cleaner();
    }

    /// From now on the sweep in progress writes every dirty page it meets.
    pub fn sweep_force(&self) {
        if let Some(s) = self.sweep.lock().as_mut() {
            s.force = true;
        }
    }

    /// Advance the sweep by up to `pages` page writes (waiting for a step another thread
    /// runs). Returns the redo LSN the pass may record once every frame was visited.
    ///
    /// # Errors
    /// WAL flush and store write errors.
    ///
    /// # Panics
    /// If no sweep was started.
    pub fn sweep_step(&self, pages: usize) -> Result<Option<u64>> {
        // A zero budget only asks whether the sweep is complete: never wait for it.
        let mut s = if pages == 0 {
            match self.sweep.try_lock() {
                Some(s) => s,
                None => return Ok(None),
            }
        } else {
            self.sweep.lock()
        };
        let sw = s.as_mut().expect("checkpoint step without a sweep");
        self.step(sw, pages)?;
        Ok((sw.cursor >= self.frames.len()).then(|| sw.redo()))
    }

    /// The cleaner's step: only if no one else runs one and the sweep is not complete.
    pub(super) fn sweep_try_step(&self, pages: usize) -> Result<bool> {
        let Some(mut s) = self.sweep.try_lock() else {
            return Ok(false);
        };
        match s.as_mut() {
            Some(sw) if sw.cursor < self.frames.len() => {
                self.step(sw, pages)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// End the complete sweep; returns its redo LSN.
    ///
    /// # Panics
    /// If the sweep is missing or incomplete.
    pub fn sweep_finish(&self) -> u64 {
        let sw = self.sweep.lock().take().expect("no sweep to finish");
        assert!(sw.cursor >= self.frames.len(), "sweep finished early");
        let redo = sw.redo();
        assert!(redo <= sw.begin, "redo LSN {redo} past the pass begin");
        let end = self.wal.next_lsn();
        assert!(
            end >= sw.begin,
            "WAL end {end} below the pass begin {}",
            sw.begin
        );
        self.pass_log.store(end - sw.prev_begin, Ordering::Relaxed);
        redo
    }

    fn step(&self, sw: &mut Sweep, pages: usize) -> Result<()> {
        let n = self.frames.len();
        let mut written = 0usize;
        let mut retry = Vec::new();
        let mut batch: Vec<(usize, ReadGuard<'_>)> = Vec::new();
        while sw.cursor < n && written + batch.len() < pages {
            let i = sw.cursor;
            sw.cursor += 1;
            let f = &self.frames[i];
            // Unlatched pre-check: a writer whose record precedes `begin` set `dirty` before
            // appending (WriteGuard::mark_dirty), and the WAL append/next_lsn pair orders
            // that store before the pass read `begin`.
            if !f.dirty.load(Ordering::Acquire) {
                continue;
            }
            // try: a thread holding this latch may be waiting for one we hold.
            match f.latch.try_read() {
                Some(g) => self.select(sw, i, g, &mut batch),
                // A step run by a yield hook: the latch is held by the operation the hook
                // interrupted, on this very thread, and comes free only once the step
                // returns. Stop here and go on from this frame at the next step (the
                // cleaner thread would wait here for the latch, then go on).
                None if self.yields.inside() => {
                    sw.cursor = i;
                    break;
                }
                None => retry.push(i),
            }
            if batch.len() >= WRITE_BATCH {
                written += self.write_selected(&mut batch, sw.force)?;
            }
        }
        self.write_selected(&mut batch, sw.force)?;
        for i in retry {
            let g = self.frames[i].latch.read();
            self.select(sw, i, g, &mut batch);
            self.write_selected(&mut batch, sw.force)?;
        }
        Ok(())
    }

    /// A latched frame the sweep reached: queue it for writing, or defer it.
    fn select<'a>(
        &'a self,
        sw: &mut Sweep,
        i: usize,
        g: ReadGuard<'a>,
        batch: &mut Vec<(usize, ReadGuard<'a>)>,
    ) {
        let f = &self.frames[i];
        if g.pid == NO_PID || !f.dirty.load(Ordering::Acquire) {
            return;
        }
        let rec = f.rec_lsn.load(Ordering::Acquire);
        let place = f.list_lsn.load(Ordering::Relaxed);
        if !sw.force && rec != NO_LSN && place > sw.limit && !self.bound_due(sw, rec) {
            // Younger than this batch's flush-list prefix: not selected, stays dirty and
            // holds the redo LSN back at its rec_lsn (InnoDB's checkpoint LSN is the oldest
            // modification in memory).
            assert!(
                rec >= self.wal.redo_lsn(),
                "page {}: rec_lsn {rec} below the redo LSN {}",
                g.pid,
                self.wal.redo_lsn()
            );
            sw.min_deferred = sw.min_deferred.min(rec);
            return;
        }
        f.exposures.fetch_add(1, Ordering::Relaxed);
        let count = f.ckpt_count.load(Ordering::Relaxed);
        if sw.force
            || rec == NO_LSN
            || f.fresh.load(Ordering::Relaxed)
            || !self.may_defer(sw, f, rec, count)
        {
            batch.push((i, g));
            return;
        }
        // Deferred: its changes from rec_lsn on stay in the log past this checkpoint.
        assert!(
            rec <= page::lsn(&g.page) && rec >= self.wal.redo_lsn(),
            "page {}: rec_lsn {rec} outside [redo LSN {}, page LSN {}]",
            g.pid,
            self.wal.redo_lsn(),
            page::lsn(&g.page)
        );
        f.ckpt_count.store(count + 1, Ordering::Relaxed);
        // Off the flush list for this cycle: back at its young end (Algorithm 1, line 5).
        f.list_lsn.store(sw.begin.max(rec), Ordering::Relaxed);
        sw.min_deferred = sw.min_deferred.min(rec);
        EngineCounters::add(&self.counters.checkpoint_deferrals, 1);
    }

    /// Whether the redo bound B (`Config::max_redo_bytes`) makes a dirty page with rec_lsn
    /// `rec` due in this sweep whatever its place on the flush list: left dirty, it would hold
    /// the redo LSN more than `B - P` behind the pass begin (P: one pass of log, as in
    /// [`BufferPool::may_defer`]), and a crash before the next pass ends would replay more
    /// than B + P. A flush-list batch of the InnoDB cleaner selects only its oldest pages by
    /// rate, so without this the age of the list (set against the WAL limit) exceeds B.
    fn bound_due(&self, sw: &Sweep, rec: u64) -> bool {
        let bound = self.max_redo.load(Ordering::Relaxed);
        let window = bound.saturating_sub(self.pass_log.load(Ordering::Relaxed));
        bound > 0 && sw.begin.saturating_sub(rec) > window
    }

    /// Whether a dirty page with rec_lsn `rec`, deferred `count` times in a row, may be
    /// deferred again. Fixed mode: `count < max_checkpoint_count`. Adaptive mode (a redo
    /// bound B): the redo LSN this pass records is at most `rec`, and the range replayed after
    /// a crash grows by up to one more pass of log P before the next pass can write the page,
    /// so it defers only while `begin - rec + P <= B`; and only a page whose observed redirty
    /// interval (first change after its last write minus its LSN at that write) fits in
    /// `B - P`, i.e. one expected to be changed again (a write saved) while it may stay
    /// dirty; a colder page is written at once (deferring it saves nothing and holds the redo
    /// LSN back). A page not written since it was loaded has no interval yet.
    fn may_defer(&self, sw: &Sweep, f: &super::Frame, rec: u64, count: u32) -> bool {
        let mcc = self.max_ckpt_count.load(Ordering::Relaxed);
        let bound = self.max_redo.load(Ordering::Relaxed);
        if bound == 0 {
            return count < mcc;
        }
        if mcc > 0 && count >= mcc {
            return false;
        }
        let prev = f.prev_lsn.load(Ordering::Relaxed);
        if prev == 0 || rec < prev {
            return false;
        }
        let age = sw.begin.saturating_sub(rec);
        let window = bound.saturating_sub(self.pass_log.load(Ordering::Relaxed));
        let interval = rec - prev;
        let ok = age <= window && interval <= window;
        assert!(!ok || age <= bound, "deferral past the redo bound");
        ok
    }

    /// Write the queued frames (one store batch); returns how many.
    fn write_selected(
        &self,
        batch: &mut Vec<(usize, ReadGuard<'_>)>,
        force: bool,
    ) -> Result<usize> {
        if batch.is_empty() {
            return Ok(0);
        }
        let pages: Vec<(Pid, &[u8])> = batch.iter().map(|(_, g)| (g.pid, &g.page[..])).collect();
        let frames: Vec<&super::Frame> = batch.iter().map(|(i, _)| &self.frames[*i]).collect();
        self.write_back(&pages, &frames, WriteKind::Checkpoint)?;
        for (i, g) in batch.iter() {
            let f = &self.frames[*i];
            f.written(&g.page);
            f.ckpt_writes.fetch_add(1, Ordering::Relaxed);
        }
        let n = batch.len();
        if force {
            EngineCounters::add(&self.counters.forced_checkpoint_page_writes, u64_of(n));
        }
        batch.clear();
        Ok(n)
    }
}
