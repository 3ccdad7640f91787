//! SepFrozen hotness records through the whole out-of-place write path (docs/design.md
//! section 3, "Hotness records"): every user write stamps HR_current and shifts the previous
//! one to HR_last; a GC move (read from the device or copied from a clean cached frame)
//! carries its version's records unchanged; the write times count the user page writes; after
//! a restart the timer resumes where the last checkpoint left it, so a page's first write
//! keeps its records of the earlier open as HR_last; and the write-log observer sees every
//! user write and GC move the counters count.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{SimDevice, SimMode};
use nowa_engine::{Config, Engine, OopConfig, PageWrite, PageWriteKind, WriteObserver};
use nowa_logspace::hotness::PageHotness;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

#[path = "common/oop_store.rs"]
mod oop_store;
use oop_store::{builder, small_engine_cfg, Slot};

#[derive(Default)]
struct Log(Mutex<Vec<PageWrite>>);

impl WriteObserver for Log {
    fn page_write(&self, w: &PageWrite) {
        self.0.lock().push(*w);
    }
}

fn ocfg() -> OopConfig {
    OopConfig {
        zone_bytes: Some(128 << 10),
        open_zones: 2,
        background_gc: false,
        gc_reserve_zones: 6,
        ..OopConfig::default()
    }
}

/// Skewed updates over `keys` keys (seeded xorshift).
fn churn(e: &Engine, keys: u64, n: u64, seed: u64) {
    let mut x = seed;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = if x % 10 < 8 { x % (keys / 5) } else { x % keys };
        e.put(&k.to_be_bytes(), &i.to_le_bytes().repeat(12))
            .unwrap();
    }
}

/// Checks one open's events; returns the last records of every page written.
fn check_events(events: &[PageWrite], first_open: bool) -> HashMap<u64, PageHotness> {
    let mut last: HashMap<u64, PageHotness> = HashMap::new();
    let mut prev_wt = 0u64;
    let (mut user, mut gc) = (0u64, 0u64);
    for w in events {
        let r = w.records;
        match w.kind {
            PageWriteKind::User => {
                user += 1;
                let c = r.current;
                assert!(c.wt() >= 1 && c.mc() <= c.ac() && c.vd() > 0, "{w:?}");
                // One store batch is written in the order of its groups, not of its times.
                assert!(
                    c.wt() + 256 > prev_wt,
                    "write times count the user writes: {w:?}"
                );
                prev_wt = prev_wt.max(c.wt());
                if let Some(p) = last.get(&w.pid) {
                    assert_eq!(r.last, p.current, "HR_current moves to HR_last: {w:?}");
                    assert!(p.current.wt() < c.wt());
                } else if first_open {
                    assert!(
                        r.last.is_none(),
                        "a page's first write has no HR_last: {w:?}"
                    );
                }
                last.insert(w.pid, r);
            }
            PageWriteKind::Gc => {
                gc += 1;
                if let Some(p) = last.get(&w.pid) {
                    assert_eq!(&r, p, "a GC move carries its version's records: {w:?}");
                }
                assert_ne!(w.from_zone, None);
            }
            _ => {}
        }
    }
    assert!(user > 1000 && gc > 100, "user writes {user}, GC moves {gc}");
    last
}

#[test]
fn hotness_records_follow_writes_gc_and_restarts() {
    let dev = Arc::new(SimDevice::with_capacity(10 << 20, 0.1, SimMode::Conventional).unwrap());
    let slot: Slot = Arc::new(Mutex::new(None));
    let cfg: Config = small_engine_cfg();
    let e = Engine::create_with_store(dev.clone(), cfg.clone(), &builder(ocfg(), slot.clone()))
        .unwrap();
    let log = Arc::new(Log::default());
    assert!(e.record_writes(log.clone()));
    assert!(!e.record_writes(log.clone()), "one observer per store");
    let before = e.stats();
    for k in 0..20_000u64 {
        e.put(&k.to_be_bytes(), &[1u8; 100]).unwrap();
    }
    churn(&e, 20_000, 40_000, 99);
    let s = e.stats();
    let events = std::mem::take(&mut *log.0.lock());
    let count = |k: PageWriteKind| events.iter().filter(|w| w.kind == k).count() as u64;
    assert_eq!(
        count(PageWriteKind::User),
        s.eviction_page_writes + s.checkpoint_page_writes
            - before.eviction_page_writes
            - before.checkpoint_page_writes
    );
    assert_eq!(
        count(PageWriteKind::Gc),
        s.gc_page_writes - before.gc_page_writes
    );
    assert!(
        s.gc_pool_hits > 0,
        "some GC moves copied clean cached frames"
    );
    let timer = e.write_timer();
    assert_eq!(
        timer,
        1 + count(PageWriteKind::User),
        "one tick per user page write"
    );
    check_events(&events, true);
    e.close().unwrap();
    drop(e);

    // Reopen: the timer resumes where the close's checkpoint left it, so a page's records
    // of the first open stay its HR_last at its first write of this one.
    let e = Engine::open_with_store(dev, cfg, &builder(ocfg(), slot)).unwrap();
    let resumed = e.write_timer();
    assert!(
        resumed >= timer,
        "timer {timer} before close, {resumed} after reopen"
    );
    let log = Arc::new(Log::default());
    assert!(e.record_writes(log.clone()));
    churn(&e, 20_000, 30_000, 7);
    let events = std::mem::take(&mut *log.0.lock());
    let mut kept = 0;
    for w in events.iter().filter(|w| w.kind == PageWriteKind::User) {
        let r = w.records;
        assert!(r.current.wt() >= resumed, "written after the reopen: {w:?}");
        assert!(r.last.is_none() || r.last.wt() < r.current.wt(), "{w:?}");
        kept += u32::from(!r.last.is_none() && r.last.wt() < resumed);
    }
    assert!(
        kept > 100,
        "only {kept} writes kept a record of the first open"
    );
    check_events(&events, false);
    e.close().unwrap();
}
