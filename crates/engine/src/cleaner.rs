//! The background page cleaner (InnoDB's LRU flush and page-cleaner thread): keeps a pool of
//! free frames ahead of the misses, evicting unreferenced frames at the clock hand and
//! writing the dirty ones back in large batches (one doublewrite batch, one store flush per
//! batch instead of one per few pages), and runs the page-writing steps of checkpoint passes.
//! Started by `Engine::start_background` when `Config::page_cleaner` is on; stopped and joined
//! by `close` and by dropping the engine (nothing touches the device after).

use crate::buffer::BufferPool;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the cleaner sleeps when it finds nothing to do (a miss or a new sweep wakes it).
const IDLE: Duration = Duration::from_millis(10);
/// How long it backs off after a write error (the foreground sees the same error).
const BACKOFF: Duration = Duration::from_millis(50);

/// Free frames the cleaner keeps for a pool of `frames` frames: 1/16 of the pool, at least
/// 16 and at most 1024.
#[must_use]
pub fn free_target(frames: usize) -> usize {
    (frames / 16).clamp(16, 1024).min(frames / 2)
}

/// A running page cleaner.
pub struct Cleaner {
    pool: Arc<BufferPool>,
    stop: Arc<AtomicBool>,
    handle: Mutex<Option<JoinHandle<()>>>,
}

impl Cleaner {
    /// Start the cleaner thread over `pool`.
    ///
    /// # Panics
    /// If the thread cannot be spawned.
    #[must_use]
    pub fn start(pool: Arc<BufferPool>) -> Cleaner {
        let cleaner = Cleaner::manual(pool);
        let (p, s) = (cleaner.pool.clone(), cleaner.stop.clone());
        let handle = std::thread::Builder::new()
            .name("nowa-page-cleaner".into())
            .spawn(move || run(&p, &s))
            .expect("spawn the page cleaner thread");
        *cleaner.handle.lock() = Some(handle);
        cleaner
    }

    /// A cleaner without a thread (`BackgroundMode::Caller`): the pool keeps its free-frame
    /// target and writers leave checkpoint steps to it, as with the thread, but only
    /// [`Cleaner::step`] runs its rounds, at points the caller picks.
    #[must_use]
    pub fn manual(pool: Arc<BufferPool>) -> Cleaner {
        let target = free_target(pool.frames());
        assert!(
            target > 0,
            "a cleaner for a pool of {} frames",
            pool.frames()
        );
        pool.set_free_target(target);
        Cleaner {
            pool,
            stop: Arc::new(AtomicBool::new(false)),
            handle: Mutex::new(None),
        }
    }

    /// One round on the caller's thread (what the thread runs in its loop): refill the free
    /// frames, advance the checkpoint sweep by one batch. Whether it did anything.
    ///
    /// # Errors
    /// WAL flush and store write errors.
    pub fn step(&self) -> crate::error::Result<bool> {
        assert!(
            self.handle.lock().is_none(),
            "a cleaner step beside the cleaner thread"
        );
        self.pool.clean_step()
    }

    /// Stop the thread and wait for it (idempotent).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.pool.wake_cleaner();
        if let Some(h) = self.handle.lock().take() {
            // A panic in the cleaner is a bug the tests must see.
            if let Err(p) = h.join() {
                std::panic::resume_unwind(p);
            }
        }
        self.pool.set_free_target(0);
    }
}

impl Drop for Cleaner {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.stop();
        }
    }
}

fn run(pool: &BufferPool, stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        match pool.clean_step() {
            Ok(true) => continue,
            Ok(false) => {
                let mut w = pool.wake_lock.lock();
                if !*w && !stop.load(Ordering::Acquire) {
                    pool.wake.wait_for(&mut w, IDLE);
                }
                *w = false;
            }
            Err(e) => {
                tracing::warn!(error = %e, "page cleaner: write-back failed; retrying");
                std::thread::sleep(BACKOFF);
            }
        }
    }
}
