//! Fuzzy, continuous checkpoints (docs/design.md section 8): a pass takes the WAL end as its
//! begin LSN, sweeps the frames writing dirty pages, then flushes the WAL to begin and writes
//! the superblock with redo LSN = begin. Writers run steps of the pass from half the WAL
//! limit on (`wal_gate`), so the cost is spread over many operations.

use super::{CkptState, Engine};
use crate::error::{Exhausted, Pid, Result};
use crate::format::superblock::Superblock;
use crate::stats::EngineCounters;
use crate::store::WriteKind;
use std::sync::atomic::Ordering;

/// A fuzzy checkpoint pass: begin LSN and tree metadata taken at its start, and how far the
/// sweep over the frames has come.
pub(super) struct Pass {
    begin: u64,
    root: Pid,
    next_pid: Pid,
    cursor: usize,
}

impl Engine {
    /// Called before each write, holding nothing: keeps the WAL under its limit.
    /// From half the limit on, every write that finds the checkpoint lock free does one step
    /// of the current pass (a slice of the frames); at the limit, writers wait for (or run)
    /// whole passes.
    pub(super) fn wal_gate(&self) -> Result<()> {
        let used = self.wal.used();
        if used < self.wal_limit / 2 && !self.ckpt_active.load(Ordering::Relaxed) {
            return Ok(());
        }
        if used < self.wal_limit {
            if let Some(mut c) = self.ckpt.try_lock() {
                let step = (self.pool.frames() / 256).max(64);
                self.checkpoint_step(&mut c, step, false)?;
            }
            return Ok(());
        }
        let mut c = self.ckpt.lock();
        if self.wal.used() >= self.wal_limit {
            // Finish the pass in progress (its begin is the oldest), then a fresh one if needed.
            self.checkpoint_step(&mut c, usize::MAX, false)?;
            if self.wal.used() >= self.wal_limit {
                self.checkpoint_step(&mut c, usize::MAX, false)?;
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

    /// Full fuzzy checkpoint: every change made before the call is on disk and the redo LSN
    /// moves to the start of this call.
    ///
    /// # Errors
    /// Device errors.
    pub fn checkpoint(&self) -> Result<()> {
        let mut c = self.ckpt.lock();
        self.full_checkpoint(&mut c, false)
    }

    pub(super) fn full_checkpoint(&self, c: &mut CkptState, clean: bool) -> Result<()> {
        // A pass already in progress started earlier: finish it, then run a complete one.
        if c.pass.is_some() {
            self.checkpoint_step(c, usize::MAX, false)?;
        }
        self.checkpoint_step(c, usize::MAX, clean)
    }

    /// Start a pass: under the shared tree lock no SMO is in flight, so root/next_pid match
    /// `begin`. A change with LSN < begin was applied to its page before `begin` was read,
    /// and its writer marked the frame dirty before appending (see `flush_dirty_range`).
    fn start_pass(&self) -> Pass {
        let t = self.tree.read();
        let begin = self.wal.next_lsn();
        assert!(
            begin >= self.wal.redo_lsn(),
            "checkpoint begin {begin} below the redo LSN {}",
            self.wal.redo_lsn()
        );
        self.ckpt_active.store(true, Ordering::Relaxed);
        Pass {
            begin,
            root: t.root,
            next_pid: t.next_pid,
            cursor: 0,
        }
    }

    /// Start a pass if none is running, sweep up to `budget` frames, and finish the pass
    /// (superblock) when the sweep reaches the end.
    fn checkpoint_step(&self, c: &mut CkptState, budget: usize, clean: bool) -> Result<()> {
        let p = c.pass.get_or_insert_with(|| self.start_pass());
        let end = p.cursor.saturating_add(budget).min(self.pool.frames());
        // A page dirty at `begin` is either still in a frame the sweep has not passed yet, or
        // was written by eviction meanwhile: either way it is on disk when the sweep ends.
        self.pool
            .flush_dirty_range(p.cursor..end, WriteKind::Checkpoint)?;
        p.cursor = end;
        if end < self.pool.frames() {
            return Ok(());
        }
        let (begin, root, next_pid) = (p.begin, p.root, p.next_pid);
        self.finish_pass(c, begin, root, next_pid, clean)
    }

    /// WAL flush to `begin`, store checkpoint, superblock with redo LSN = begin.
    fn finish_pass(
        &self,
        c: &mut CkptState,
        begin: u64,
        root: Pid,
        next_pid: Pid,
        clean: bool,
    ) -> Result<()> {
        self.wal.flush(begin)?;
        assert!(
            self.wal.flushed_lsn() >= begin,
            "checkpoint begin {begin} not durable"
        );
        let sb = Superblock {
            seq: c.seq + 1,
            layout: self.layout,
            doublewrite: self.cfg.doublewrite,
            clean,
            wal_separate: self.wal_separate,
            write_path: self.store.write_path(),
            salvage: c.salvage,
            redo_lsn: begin,
            root,
            next_pid,
            wal_salt: self.salt,
            store_meta: self.store.checkpoint()?,
        };
        // Copy seq % 2, on the log device when there is one; the other copy keeps the
        // previous checkpoint.
        // Checkpoint LSN order: the redo LSN only moves forward.
        assert!(c.last_redo <= begin, "redo LSN {} -> {begin}", c.last_redo);
        self.wal_dev
            .write_at((sb.seq % 2) * super::BS, &sb.encode()?)?;
        self.wal_dev.flush()?;
        c.seq += 1;
        c.last_redo = begin;
        c.pass = None;
        self.ckpt_active.store(false, Ordering::Relaxed);
        self.wal.set_redo_lsn(begin);
        EngineCounters::add(&self.counters.checkpoints, 1);
        self.release_freed(begin)
    }

    /// Clean shutdown: flush the WAL, checkpoint, mark the superblock clean. Later calls fail.
    ///
    /// # Errors
    /// `Closed`/`Poisoned`, device errors.
    pub fn close(&self) -> Result<()> {
        self.check_open()?;
        // No background GC after (or during) the final checkpoint.
        self.store.shutdown();
        let mut c = self.ckpt.lock();
        self.wal.flush_all()?;
        self.full_checkpoint(&mut c, true)?;
        self.closed.store(true, Ordering::Relaxed);
        Ok(())
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
    }
}
