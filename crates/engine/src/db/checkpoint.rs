//! Fuzzy, continuous checkpoints (docs/design.md section 8): a pass takes the WAL end as its
//! begin LSN, sweeps the frames writing dirty pages (`crate::buffer::Sweep`; with
//! `max_checkpoint_count` > 0 it defers pages that stay dirty across passes), then flushes the
//! WAL to begin and writes the superblock with redo LSN = min(begin, rec_lsn of every
//! deferred page). Writers start passes from half the WAL limit on (`wal_gate`) and run steps
//! of the sweep; with the page cleaner running, the cleaner runs the steps and writers help
//! only from 3/4 of the limit. At the limit a forced pass ignores deferral.

use super::{BackgroundMode, BackgroundTask, CkptState, Engine};
use crate::cleaner::Cleaner;
use crate::error::{Exhausted, Pid, Result};
use crate::format::superblock::Superblock;
use crate::stats::EngineCounters;
use std::sync::atomic::Ordering;

/// Pages a writer writes in one step of a pass (one store batch).
const STEP_PAGES: usize = 64;

/// A fuzzy checkpoint pass: begin LSN and tree metadata taken at its start (the sweep itself
/// lives in the buffer pool, where the page cleaner can advance it).
pub(super) struct Pass {
    begin: u64,
    /// The oldest blind change pending after the begin was read (`u64::MAX`: none): a leaf
    /// loaded later gets it as its rec_lsn in a frame the sweep may have passed, so the
    /// redo LSN stays at or below it.
    blind_floor: u64,
    root: Pid,
    next_pid: Pid,
}

impl Engine {
    /// Called before each write, holding nothing: keeps the WAL under its limit.
    /// From half the limit on, every write that finds the checkpoint lock free starts a pass
    /// or does one step of it (with the cleaner running: only from 3/4 of the limit); at the
    /// limit, writers wait for (or run) whole forced passes.
    pub(super) fn wal_gate(&self) -> Result<()> {
        let used = self.wal.used();
        let active = self.ckpt_active.load(Ordering::Relaxed);
        // The page cleaner's batch of this second (`Config::flushing`).
        let tick = !active && self.cfg.flushing.is_some() && self.pool.flush_tick_due();
        // With a redo bound the cleaner also runs a batch every B/8 of log between its ticks
        // (`start_pass`): a second of redo may be larger than the bound.
        let bound = !active && self.bound_batches() && !self.too_soon();
        if used < self.pass_start() && !active && !tick && !bound {
            return Ok(());
        }
        if used < self.wal_limit {
            if !active && !tick && self.too_soon() {
                return Ok(());
            }
            if let Some(mut c) = self.ckpt.try_lock() {
                let cleaner = self.cleaner.lock().is_some();
                let budget = if cleaner && used < self.wal_limit / 4 * 3 {
                    0
                } else {
                    STEP_PAGES
                };
                self.checkpoint_step(&mut c, budget, false, false)?;
            }
            return Ok(());
        }
        let mut c = self.ckpt.lock();
        if self.wal.used() >= self.wal_limit {
            // Finish the pass in progress (its begin is the oldest), then a fresh one if
            // needed; both forced: deferred pages hold the redo LSN back.
            self.checkpoint_step(&mut c, usize::MAX, false, true)?;
            if self.wal.used() >= self.wal_limit {
                self.checkpoint_step(&mut c, usize::MAX, false, true)?;
            }
            if self.wal.used() >= self.wal_limit {
                return Err(Exhausted::WalLimit {
                    used: self.wal.used(),
                    limit: self.wal_limit,
                }
                .into());
            }
        }
        Ok(())
    }

    /// Live log from which writers start checkpoint passes: half the WAL limit, or a quarter
    /// of the adaptive redo bound (`Config::max_redo_bytes`) when that is smaller: a pass
    /// covers about a quarter of the bound, so a page written by one pass can be deferred
    /// for most of the rest whatever the WAL limit.
    fn pass_start(&self) -> u64 {
        if self.cfg.flushing.is_some() {
            // Only the once-a-second batches and the forced pass at the limit.
            return self.wal_limit;
        }
        let half = self.wal_limit / 2;
        self.cfg.max_redo_bytes.map_or(half, |b| half.min(b / 4))
    }

    /// The page cleaner (`Config::flushing`) under a redo bound: besides its once-a-second
    /// batches it runs a bound batch every B/8 of log (docs/checkpointing.md section 5).
    fn bound_batches(&self) -> bool {
        self.cfg.flushing.is_some() && self.cfg.max_redo_bytes.is_some()
    }

    /// Adaptive mode: a new pass waits until B/8 of log was written since the last one began
    /// (a pass that defers its hot pages does not move the redo LSN much; back-to-back passes
    /// would only burn CPU and superblock writes). The WAL limit still forces passes.
    fn too_soon(&self) -> bool {
        self.cfg
            .max_redo_bytes
            .is_some_and(|b| self.wal.next_lsn() < self.pool.last_pass_begin() + b / 8)
    }

    /// Replace the clock of the page cleaner's once-a-second batches (`Config::flushing`):
    /// the timing model's clock on a simulated SSD, a deterministic one in simulations;
    /// None: wall clock.
    pub fn set_flush_clock(&self, clock: Option<crate::buffer::flushing::FlushClock>) {
        self.pool.set_flush_clock(clock);
    }

    /// Log one checkpoint pass covers: from the begin of the pass before the last complete
    /// one to the end of that one (the slack of the adaptive redo bound: the redo range after
    /// a crash stays within the bound plus it).
    #[must_use]
    pub fn checkpoint_pass_log_bytes(&self) -> u64 {
        self.pool.pass_log_bytes()
    }

    /// Full fuzzy checkpoint: every change made before the call is on disk and the redo LSN
    /// moves to the start of this call (an explicit checkpoint ignores deferral).
    ///
    /// # Errors
    /// Device errors.
    pub fn checkpoint(&self) -> Result<()> {
        let mut c = self.ckpt.lock();
        self.full_checkpoint(&mut c, false)
    }

    /// One complete checkpoint pass that honors deferral (`Config::max_checkpoint_count`), as
    /// the WAL gate and the page cleaner run them: a pass in progress is finished first.
    /// Hot pages may stay dirty; the redo LSN moves to min(pass begin, their rec_lsn).
    ///
    /// # Errors
    /// Device errors.
    pub fn checkpoint_pass(&self) -> Result<()> {
        let mut c = self.ckpt.lock();
        if c.pass.is_some() {
            self.checkpoint_step(&mut c, usize::MAX, false, false)?;
        }
        self.checkpoint_step(&mut c, usize::MAX, false, false)
    }

    pub(super) fn full_checkpoint(&self, c: &mut CkptState, clean: bool) -> Result<()> {
        // A pass already in progress started earlier: finish it, then run a complete one.
        if c.pass.is_some() {
            self.checkpoint_step(c, usize::MAX, false, true)?;
        }
        self.checkpoint_step(c, usize::MAX, clean, true)
    }

    /// Start the store's background work and, with `Config::page_cleaner`, the page cleaner.
    /// Called once the engine is created or opened (after recovery).
    pub(super) fn start_background(&self) {
        let threads = self.cfg.background == BackgroundMode::Threads;
        if threads {
            self.store.clone().start_background();
        }
        if self.cfg.page_cleaner {
            let mut c = self.cleaner.lock();
            assert!(c.is_none(), "page cleaner started twice");
            *c = Some(if threads {
                Cleaner::start(self.pool.clone())
            } else {
                Cleaner::manual(self.pool.clone())
            });
        }
    }

    /// Run one step of background work `task` on the caller's thread (the engine was opened
    /// with `BackgroundMode::Caller`): what the page cleaner thread, the DB GC thread or a
    /// group-commit leader does in one round. Returns whether it did anything (false also
    /// when the task does not exist here: no page cleaner configured, in place for DB GC).
    ///
    /// # Errors
    /// `Closed`/`Poisoned`; device errors and `Corrupt` as the task's own work.
    ///
    /// # Panics
    /// With `BackgroundMode::Threads`: the step would race the engine's own threads.
    pub fn run_background_step(&self, task: BackgroundTask) -> Result<bool> {
        assert_eq!(
            self.cfg.background,
            BackgroundMode::Caller,
            "background steps by the caller beside the engine's threads"
        );
        self.check_open()?;
        self.yields.check_step(task);
        match task {
            BackgroundTask::PageCleaner => match self.cleaner.lock().as_ref() {
                Some(c) => c.step(),
                None => Ok(false),
            },
            BackgroundTask::DbGc => self.store.background_step(),
            BackgroundTask::LogFlush => {
                let pending = self.wal.next_lsn() > self.wal.flushed_lsn();
                self.wal.flush_all()?;
                assert!(
                    self.wal.flushed_lsn() >= self.wal.next_lsn(),
                    "a log flush leaves nothing unflushed"
                );
                Ok(pending)
            }
        }
    }

    /// Stop the page cleaner and wait for it (close, drop).
    pub(super) fn stop_cleaner(&self) {
        let c = self.cleaner.lock().take();
        if let Some(c) = c {
            c.stop();
        }
    }

    /// Start a pass: under the shared tree lock no SMO is in flight, so root/next_pid match
    /// `begin`. A change with LSN < begin was applied to its page before `begin` was read,
    /// and its writer marked the frame dirty before appending (see `crate::buffer::Sweep`).
    fn start_pass(&self, force: bool) -> Result<Pass> {
        // Blind changes older than the pass before (every one when forced) are applied
        // first, so their leaves are dirty frames this sweep writes.
        let below = if force {
            self.wal.next_lsn()
        } else {
            self.pool.last_pass_begin()
        };
        self.drain_blind(below, usize::MAX)?;
        let t = self.tree.read();
        let begin = self.wal.next_lsn();
        let blind_floor = self.blind_floor();
        assert!(
            begin >= self.wal.redo_lsn(),
            "checkpoint begin {begin} below the redo LSN {}",
            self.wal.redo_lsn()
        );
        // A pass started on the flush clock's tick is one flush-list batch: only the
        // oldest-modified pages are selected.
        let limit = match &self.cfg.flushing {
            Some(fl) if !force && self.pool.flush_tick_due() => {
                self.pool.flush_batch_limit(fl, begin, self.wal_limit)
            }
            // A batch between ticks under a redo bound selects no page by its place on the
            // flush list: only those the bound makes due (`BufferPool::bound_due`).
            Some(_) if !force && self.bound_batches() => 0,
            _ => u64::MAX,
        };
        self.ckpt_active.store(true, Ordering::Relaxed);
        self.pool.sweep_start(begin, force, limit);
        Ok(Pass {
            begin,
            blind_floor,
            root: t.root,
            next_pid: t.next_pid,
        })
    }

    /// Start a pass if none is running, advance its sweep by up to `budget` page writes, and
    /// finish the pass (superblock) once the sweep has visited every frame. `force`: ignore
    /// deferral from now on.
    fn checkpoint_step(
        &self,
        c: &mut CkptState,
        budget: usize,
        clean: bool,
        force: bool,
    ) -> Result<()> {
        if c.pass.is_none() {
            c.pass = Some(self.start_pass(force)?);
        }
        if force {
            self.pool.sweep_force();
        }
        // A page dirty at `begin` is either still in a frame the sweep has not passed yet,
        // was deferred (its rec_lsn bounds the redo LSN), or was written by eviction
        // meanwhile: either way its changes below the redo LSN are on disk at the end.
        if self.pool.sweep_step(budget)?.is_none() {
            return Ok(());
        }
        let p = c.pass.take().expect("a pass in progress");
        let redo = self.pool.sweep_finish().min(p.blind_floor);
        self.finish_pass(c, &p, redo, clean)
    }

    /// WAL flush to `begin`, store checkpoint, superblock with the redo LSN `redo` (<= begin).
    fn finish_pass(&self, c: &mut CkptState, p: &Pass, redo: u64, clean: bool) -> Result<()> {
        self.wal.flush(p.begin)?;
        assert!(
            self.wal.flushed_lsn() >= p.begin,
            "checkpoint begin {} not durable",
            p.begin
        );
        // The redo-LSN rule: never past the pass begin, never behind the last checkpoint.
        assert!(
            redo <= p.begin && redo >= self.wal.redo_lsn(),
            "redo LSN {redo} outside [{}, begin {}]",
            self.wal.redo_lsn(),
            p.begin
        );
        assert!(
            !clean || redo == p.begin,
            "a clean checkpoint deferred pages"
        );
        let scan = self.wal.scan_from(redo);
        let store_meta = self.store.checkpoint()?;
        // Every page the snapshot names lies below a vouched end: the open's check of the
        // log's end sees only copies written after it (`PageStore::newest_written`).
        self.wal.vouch_durable()?;
        let sb = Superblock {
            seq: c.seq + 1,
            layout: self.layout,
            doublewrite: self.cfg.doublewrite,
            clean,
            wal_separate: self.wal_separate,
            write_path: self.store.write_path(),
            salvage: c.salvage,
            redo_lsn: redo,
            scan_lsn: scan,
            root: p.root,
            next_pid: p.next_pid,
            wal_salt: self.salt,
            store_meta,
            hr_timer: self.pool.write_timer(),
        };
        // Copy seq % 2, on the log device when there is one; the other copy keeps the
        // previous checkpoint.
        // Checkpoint LSN order: the redo LSN only moves forward.
        assert!(c.last_redo <= redo, "redo LSN {} -> {redo}", c.last_redo);
        self.wal_dev
            .write_at((sb.seq % 2) * super::BS, &sb.encode()?)?;
        self.wal_dev.flush()?;
        EngineCounters::add(&self.counters.checkpoint_flushes, 1);
        c.seq += 1;
        c.last_redo = redo;
        self.ckpt_active.store(false, Ordering::Relaxed);
        self.wal.set_redo_lsn(redo, scan);
        EngineCounters::add(&self.counters.checkpoints, 1);
        self.release_freed(redo)
    }

    /// Clean shutdown: flush the WAL, checkpoint, mark the superblock clean. Later calls fail.
    ///
    /// # Errors
    /// `Closed`/`Poisoned`, device errors.
    pub fn close(&self) -> Result<()> {
        self.check_open()?;
        // No background GC or cleaning after (or during) the final checkpoint.
        self.stop_cleaner();
        self.store.shutdown();
        let mut c = self.ckpt.lock();
        self.wal.flush_all()?;
        self.full_checkpoint(&mut c, true)?;
        self.log_page_versions()?;
        // After the checkpoint's page writes: the store's last writes hold no data.
        self.store.close()?;
        self.closed.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// After the clean checkpoint of `close`: log the store's page versions past the redo
    /// LSN, so the next (clean) open reloads them and detects a page reverted meanwhile
    /// (there is no redo then to cross-check pages). Records that do not fit the log region
    /// are left out: their pages are unknown at the next open (never a false alarm).
    fn log_page_versions(&self) -> Result<()> {
        let versions = self.store.versions();
        for chunk in versions.chunks(crate::format::wal::PV_MAX) {
            let rec = crate::format::wal::RecordRef::PageVersions { entries: chunk };
            if self.wal.used() + crate::num::u64_of(rec.encoded_len()) >= self.wal_limit {
                tracing::warn!(
                    pages = versions.len(),
                    "the WAL cannot hold every page version: some pages go unchecked after reopen"
                );
                break;
            }
            self.wal.append(&rec)?;
        }
        self.wal.flush_all()
    }

    /// Force the WAL (makes all async writes so far durable).
    ///
    /// # Errors
    /// Device errors, `Poisoned`.
    pub fn sync(&self) -> Result<()> {
        self.wal.flush_all()
    }

    /// Refuse further work: memory is ahead of the log.
    pub(super) fn poison(&self) {
        self.poisoned.store(true, Ordering::Relaxed);
        self.pool.poison();
    }
}
