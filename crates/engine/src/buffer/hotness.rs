//! SepFrozen hotness records (HR) in the buffer pool (docs/design.md section 3, "hotness
//! records"; docs/sepfrozen.md).
//!
//! - The *DB-written-page timer* ([`PoolHotness`]): one tick per page the pool writes for the
//!   user (eviction, checkpoint, cleaner; bulk loads too), never for GC. It starts at 1 at
//!   create (0 is the "no record" write time); every checkpoint stores it in the superblock
//!   and an open resumes it there, and a page read with a later write time (written after
//!   the last checkpoint of a run that crashed) moves it past that time, so write times
//!   keep growing across restarts.
//! - Per frame ([`FrameHotness`]): the window of the page's current stay in the pool (from
//!   its read into the pool, or from its last write): accesses (every fix, shared or
//!   exclusive, counted up to AC's limit), modifications (every WAL record applied to the
//!   page) and the times of the
//!   last of each, as atomics (readers fix a page concurrently), plus the page's two records
//!   (HR_current, HR_last) as they are on the device.
//! - At a user write the pool computes HR_current = (WT = now, VD = live record bytes, AI,
//!   MI, AC, MC) with `nowa_logspace::hotness::HotnessTracker`'s rules, shifts the old
//!   HR_current to HR_last and stamps both into the copy it seals (page header bytes
//!   72..104). The frame's own image keeps the records it was read with (readers hold it
//!   while it is written); [`FrameHotness::records`] is the truth for a cached page, and the
//!   GC copy of a clean cached page gets them stamped in (`copy_if_clean`).
//! - Records with a write time at or above the current timer (a database written before the
//!   timer was stored: it restarted) are dropped at the page's first write, so HR_last is always older than
//!   HR_current (checked when the page is read back, `page::validate`).

use crate::error::Pid;
use crate::page;
use nowa_logspace::hotness::{HotnessTracker, PageHotness};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// The pool's DB-written-page timer.
#[derive(Debug)]
pub struct PoolHotness {
    clock: AtomicU64,
}

impl Default for PoolHotness {
    fn default() -> Self {
        Self {
            clock: AtomicU64::new(1),
        }
    }
}

impl PoolHotness {
    /// The timer now (the write time the next user page write gets).
    pub fn now(&self) -> u64 {
        self.clock.load(Ordering::Relaxed)
    }

    /// Move the timer forward to at least `t` (never back): the timer a checkpoint stored,
    /// resumed at open, or past a write time read from the device (a page written after
    /// the last checkpoint of a run that crashed).
    pub fn resume(&self, t: u64) {
        self.clock.fetch_max(t, Ordering::Relaxed);
        assert!(self.now() >= t.max(1), "the timer only grows");
    }

    /// Take the write time of one user page write (advances the timer by one).
    pub fn tick(&self) -> u64 {
        let t = self.clock.fetch_add(1, Ordering::Relaxed);
        assert!(t >= 1, "the timer starts at 1 and only grows");
        t
    }
}

/// Accesses a window counts at most: HR's AC saturates at 65,535 (`nowa_logspace::hotness`).
const ACCESS_CAP: u32 = u16::MAX as u32;

/// One frame's hotness bookkeeping (see the module docs).
#[derive(Debug, Default)]
pub struct FrameHotness {
    accesses: AtomicU32,
    modifications: AtomicU32,
    last_access: AtomicU64,
    last_modify: AtomicU64,
    /// Window start and the page's records as on the device.
    state: Mutex<(u64, PageHotness)>,
}

impl FrameHotness {
    /// The frame got a page at `now`: read from the device with records `records`
    /// (`PageHotness::default()` for a page created in memory).
    pub fn start(&self, now: u64, records: PageHotness) {
        let mut s = self.state.lock();
        self.accesses.store(0, Ordering::Relaxed);
        self.modifications.store(0, Ordering::Relaxed);
        self.last_access.store(now, Ordering::Relaxed);
        self.last_modify.store(now, Ordering::Relaxed);
        *s = (now, records);
    }

    /// A fix (shared or exclusive) at `now`.
    #[inline]
    pub fn on_access(&self, now: u64) {
        // Counted up to the record's AC limit only: past it the count would not change the
        // record's AC, and a hot page (the root, inner pages) fixed by every descent on every
        // core then stops taking an atomic write per fix (cache-line traffic between cores).
        if self.accesses.load(Ordering::Relaxed) < ACCESS_CAP {
            self.accesses.fetch_add(1, Ordering::Relaxed);
        }
        if self.last_access.load(Ordering::Relaxed) < now {
            self.last_access.fetch_max(now, Ordering::Relaxed);
        }
    }

    /// A change (a WAL record applied) under the exclusive fix that counted the latest
    /// access: it happens at that fix's time.
    #[inline]
    pub fn on_modify(&self) {
        self.modifications.fetch_add(1, Ordering::Relaxed);
        let now = self.last_access.load(Ordering::Relaxed);
        self.last_modify.fetch_max(now, Ordering::Relaxed);
    }

    /// The page's records as on the device (the last write's, or those it was read with).
    pub fn records(&self) -> PageHotness {
        self.state.lock().1
    }

    /// The page (image `p`, live bytes counted from it) is written by the user at `now`:
    /// its new records, which also become the frame's; the next window starts at `now`.
    ///
    /// # Panics
    /// If the new records break the order the header promises (HR_last before HR_current).
    pub fn at_write(&self, now: u64, p: &[u8]) -> PageHotness {
        let mut s = self.state.lock();
        let (start, old) = *s;
        let t = HotnessTracker::resume(
            start.min(now),
            self.last_access.load(Ordering::Relaxed).min(now),
            self.last_modify.load(Ordering::Relaxed).min(now),
            self.accesses.swap(0, Ordering::Relaxed),
            self.modifications.swap(0, Ordering::Relaxed),
        );
        let new = next_records(old, t, now, page::valid_bytes(p));
        self.last_access.store(now, Ordering::Relaxed);
        self.last_modify.store(now, Ordering::Relaxed);
        *s = (now, new);
        new
    }
}

/// The records after a write at `now` ending window `t`: HR_current from the window, the
/// old HR_current as HR_last unless it is from an earlier run's timer (then none).
fn next_records(old: PageHotness, mut t: HotnessTracker, now: u64, vd: u64) -> PageHotness {
    let hr = t.snapshot_at_write(now, vd);
    assert_eq!(hr.wt(), now.min(nowa_logspace::hotness::WT_MAX));
    let base = if old.current.wt() >= hr.wt() {
        PageHotness::default()
    } else {
        old
    };
    let new = base.after_write(hr);
    assert!(
        new.last.is_none() || new.last.wt() < new.current.wt(),
        "HR_last {:?} not before HR_current {:?}",
        new.last,
        new.current
    );
    new
}

/// The records of a page written without a pool window (a bulk load): no accesses.
#[must_use]
pub fn unpooled_records(now: u64, p: &[u8]) -> PageHotness {
    next_records(
        PageHotness::default(),
        HotnessTracker::new(now),
        now,
        page::valid_bytes(p),
    )
}

impl super::BufferPool {
    /// Stamp the records of a user write into `copy`, the image of cached page `pid` being
    /// written back (the caller holds the frame's latch; it is resealed afterwards).
    ///
    /// # Panics
    /// If `pid` is not cached (write-back only writes latched, mapped frames).
    pub(super) fn stamp_hotness(&self, pid: Pid, copy: &mut [u8]) {
        let idx = self.slot(pid).load(Ordering::Acquire);
        assert_ne!(idx, super::NONE, "page {pid} written back but not cached");
        let rec = self.frame(idx).hot.at_write(self.hot.tick(), copy);
        page::set_hotness(copy, &rec);
    }

    /// Stamp the records of a page written without a pool window (bulk load) into `p`
    /// (resealed afterwards): one tick of the timer, no accesses.
    pub fn stamp_unpooled(&self, p: &mut [u8]) {
        let rec = unpooled_records(self.hot.tick(), p);
        page::set_hotness(p, &rec);
    }

    /// The DB-written-page timer now.
    pub fn write_timer(&self) -> u64 {
        self.hot.now()
    }

    /// Resume the timer at `t` (a checkpoint's, at open): write times keep growing across
    /// restarts, so a page's records from before the restart stay its HR_last.
    pub fn resume_write_timer(&self, t: u64) {
        self.hot.resume(t);
    }

    /// A page read from the device with `records`: the timer moves past its write time, so
    /// the page's next write time is later than its HR_current (a page written after the
    /// last checkpoint of a run that crashed carries a time above the resumed timer).
    pub(super) fn timer_past(&self, records: &PageHotness) {
        let wt = records.current.wt();
        if wt >= self.hot.now() {
            self.hot.resume(wt.saturating_add(1));
        }
    }
}

/// One DB page write, GC move or free, as the write log (`--record-writes`) records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageWrite {
    /// The page.
    pub pid: Pid,
    /// What happened.
    pub kind: PageWriteKind,
    /// Zone written (`None`: a free, or the in-place path).
    pub zone: Option<u32>,
    /// Zone of the version this event invalidates or moves (`None`: none).
    pub from_zone: Option<u32>,
    /// Placement class of the zone written (`None`: a free, or no classes).
    pub class: Option<u16>,
    /// The version's records (HR_current, HR_last) from its page header.
    pub records: PageHotness,
}

/// What a [`PageWrite`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PageWriteKind {
    /// A user (DB) write: eviction, checkpoint, bulk load.
    User,
    /// A DB GC move (or NoWA compensation) of the same version.
    Gc,
    /// The page was released (its version is garbage).
    Free,
}

/// Receives every page write of a store, in the order the store makes them durable (GC moves
/// between the user writes they precede). Called under the store's write lock: keep it short
/// (e.g. append to a buffered file).
pub trait WriteObserver: Send + Sync {
    /// One event.
    fn page_write(&self, w: &PageWrite);
}

/// The store's observer, if one is attached (once: a run records one log).
#[derive(Default)]
pub struct ObserverSlot(std::sync::OnceLock<Arc<dyn WriteObserver>>);

impl ObserverSlot {
    /// Attach `obs`; false if an observer is attached already (it stays).
    pub fn attach(&self, obs: Arc<dyn WriteObserver>) -> bool {
        self.0.set(obs).is_ok()
    }

    /// The attached observer (one atomic load when there is none).
    #[inline]
    pub fn get(&self) -> Option<&Arc<dyn WriteObserver>> {
        self.0.get()
    }
}

impl std::fmt::Debug for ObserverSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObserverSlot")
            .field("attached", &self.0.get().is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{self, KIND_LEAF, PAGE_SIZE};

    fn leaf_with_live(live: u16) -> Vec<u8> {
        let mut p = vec![0u8; PAGE_SIZE];
        page::init(&mut p, KIND_LEAF, 7);
        crate::format::page::LIVE.put_u16(&mut p, live);
        p
    }

    #[test]
    fn access_count_stops_at_the_ac_limit() {
        let f = FrameHotness::default();
        f.start(1, PageHotness::default());
        for _ in 0..ACCESS_CAP + 1000 {
            f.on_access(2);
        }
        assert_eq!(f.accesses.load(Ordering::Relaxed), ACCESS_CAP);
        let c = f.at_write(3, &leaf_with_live(10)).current;
        assert_eq!(c.ac(), u16::MAX, "AC saturates where the count stops");
        assert_eq!(f.accesses.load(Ordering::Relaxed), 0, "a new window");
    }

    #[test]
    fn frame_records_match_a_hand_computed_page_history() {
        let f = FrameHotness::default();
        // Read into the pool at 10 (no earlier records); fixes at 12 and 15, a change at 16,
        // a fix at 20; written at 25 with 300 live bytes.
        f.start(10, PageHotness::default());
        f.on_access(12);
        f.on_access(15);
        f.on_access(16);
        f.on_modify();
        f.on_access(20);
        let r1 = f.at_write(25, &leaf_with_live(300));
        let c = r1.current;
        assert_eq!((c.wt(), c.vd(), c.ac(), c.mc()), (25, 300, 4, 1));
        assert!((c.ai() - 2.5).abs() < 1e-3, "(20 - 10) / 4: {}", c.ai());
        assert!((c.mi() - 6.0).abs() < 1e-2, "(16 - 10) / 1: {}", c.mi());
        assert!(r1.last.is_none(), "first write: no HR_last");
        // Stays in the pool: fixes at 30 and 31 (each changes the page) and 34; written at 40.
        f.on_access(30);
        f.on_modify();
        f.on_access(31);
        f.on_modify();
        f.on_access(34);
        let r2 = f.at_write(40, &leaf_with_live(500));
        let c = r2.current;
        assert_eq!((c.wt(), c.vd(), c.ac(), c.mc()), (40, 500, 3, 2));
        assert!((c.ai() - 3.0).abs() < 1e-2, "(34 - 25) / 3: {}", c.ai());
        assert!((c.mi() - 3.0).abs() < 1e-2, "(31 - 25) / 2: {}", c.mi());
        assert_eq!(r2.last, r1.current, "HR_current moved to HR_last");
        assert_eq!(f.records(), r2);
        // Evicted, read again at 100 with the records from its header; written at 130
        // untouched: zero counts and intervals.
        f.start(100, r2);
        let r3 = f.at_write(130, &leaf_with_live(500));
        let c = r3.current;
        assert_eq!(
            (c.wt(), c.ac(), c.mc(), c.ai(), c.mi()),
            (130, 0, 0, 0.0, 0.0)
        );
        assert_eq!(r3.last, r2.current);
    }

    #[test]
    fn records_of_an_earlier_run_are_dropped() {
        let f = FrameHotness::default();
        let old = unpooled_records(5_000, &leaf_with_live(10));
        // A database written before the timer was stored (it restarted at open): the page
        // is read at 3 and written at 8.
        f.start(3, old);
        let r = f.at_write(8, &leaf_with_live(10));
        assert_eq!(r.current.wt(), 8);
        assert!(
            r.last.is_none(),
            "an HR_last from another clock is not kept"
        );
    }

    #[test]
    fn the_timer_starts_at_one_and_ticks_per_write() {
        let t = PoolHotness::default();
        assert_eq!((t.tick(), t.tick(), t.now()), (1, 2, 3));
    }
}
