//! The engine's random sources and background work under a caller's control (issue 26,
//! item 7; the whole-engine simulation relies on both):
//!
//! - `Config::seed`: two databases built with one seed and one history are equal byte for
//!   byte (WAL salt, out-of-place database id), two seeds differ, no seed differs per run;
//! - `BackgroundMode::Caller`: no thread runs (page cleaner, DB GC), and
//!   `Engine::run_background_step` runs each task's round on the caller's thread: the cleaner
//!   refills free frames and advances the checkpoint sweep, a DB GC pass reclaims zones, a
//!   log flush makes async writes durable (they survive a crash).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{BlockDevice, FaultConfig, FaultyDevice, MemDevice, SimDevice, SimMode};
use nowa_engine::{
    BackgroundMode, BackgroundTask, Config, Durability, Engine, OopConfig, YieldPoint,
};
use parking_lot::Mutex;
use std::sync::Arc;

#[path = "common/oop_store.rs"]
mod oop_store;
use oop_store::{builder, small_engine_cfg, Slot};

/// Every byte of the device.
fn image(d: &dyn BlockDevice) -> Vec<u8> {
    let mut b = vec![0u8; usize::try_from(d.geometry().capacity).unwrap()];
    d.read_at(0, &mut b).unwrap();
    b
}

fn puts(e: &Engine, n: u64) {
    for k in 0..n {
        e.put(&k.to_be_bytes(), &[u8::try_from(k % 251).unwrap(); 300])
            .unwrap();
    }
}

/// An out-of-place database on a memory device after `n` puts and a clean close.
fn oop_image(seed: Option<u64>, n: u64) -> Vec<u8> {
    let dev = Arc::new(MemDevice::new(8 << 20));
    let slot: Slot = Arc::new(Mutex::new(None));
    let oc = OopConfig {
        zone_bytes: Some(128 << 10),
        ..OopConfig::default()
    };
    let cfg = Config {
        seed,
        ..small_engine_cfg()
    };
    let e = Engine::create_with_store(dev.clone(), cfg, &builder(oc, slot)).unwrap();
    puts(&e, n);
    e.close().unwrap();
    image(dev.as_ref())
}

/// An in-place database after `n` puts and a clean close.
fn in_place_image(seed: Option<u64>, n: u64) -> Vec<u8> {
    let dev = Arc::new(MemDevice::new(8 << 20));
    let cfg = Config {
        seed,
        ..small_engine_cfg()
    };
    let e = Engine::create(dev.clone(), cfg).unwrap();
    puts(&e, n);
    e.close().unwrap();
    image(dev.as_ref())
}

#[test]
fn a_seed_gives_the_same_bytes_twice() {
    assert!(
        in_place_image(Some(5), 2000) == in_place_image(Some(5), 2000),
        "in place, seed 5: the two images differ"
    );
    assert!(
        oop_image(Some(5), 2000) == oop_image(Some(5), 2000),
        "out of place, seed 5: the two images differ"
    );
    assert!(
        in_place_image(Some(5), 2000) != in_place_image(Some(6), 2000),
        "seeds 5 and 6 give one WAL salt"
    );
    assert!(
        oop_image(None, 2000) != oop_image(None, 2000),
        "without a seed two databases share their salt and id"
    );
}

fn caller_cfg() -> Config {
    Config {
        background: BackgroundMode::Caller,
        page_cleaner: true,
        seed: Some(1),
        ..small_engine_cfg()
    }
}

/// The page cleaner without its thread: writers leave the sweep to it, its step refills
/// the free frames and advances the sweep; nothing runs unless stepped.
#[test]
fn the_cleaner_runs_only_when_stepped() {
    let dev = Arc::new(MemDevice::new(16 << 20));
    let e = Engine::create(dev.clone(), caller_cfg()).unwrap();
    puts(&e, 3000);
    let (_, dirty) = e.pool_frames();
    assert!(dirty > 0, "the puts left dirty pages");
    let w = dev.counters().host_bytes_written;
    // No thread: nothing is written while the test sleeps.
    std::thread::sleep(std::time::Duration::from_millis(30));
    assert_eq!(dev.counters().host_bytes_written, w, "a thread wrote");
    let before = e.stats().evictions;
    let mut steps = 0;
    while e.run_background_step(BackgroundTask::PageCleaner).unwrap() {
        steps += 1;
        assert!(steps < 1000, "the cleaner never runs out of work");
    }
    assert!(steps > 0, "the cleaner had work");
    assert!(
        e.stats().evictions > before || dev.counters().host_bytes_written > w,
        "the cleaner's steps evicted or wrote back"
    );
    // In place there is no DB GC; with nothing appended a log flush has nothing to do.
    assert!(!e.run_background_step(BackgroundTask::DbGc).unwrap());
    e.sync().unwrap();
    assert!(!e.run_background_step(BackgroundTask::LogFlush).unwrap());
    e.close().unwrap();
}

/// A log flush step makes every acknowledged async write durable: after a power loss all
/// of them are back.
#[test]
fn a_log_flush_step_makes_async_writes_durable() {
    let dev = Arc::new(FaultyDevice::new(
        Arc::new(MemDevice::new(16 << 20)) as Arc<dyn BlockDevice>,
        FaultConfig {
            seed: 3,
            torn_write_prob: 0.0,
            bit_flip_read_prob: 0.0,
        },
    ));
    dev.set_keep_prob(0.0);
    let cfg = Config {
        durability: Durability::Async,
        ..caller_cfg()
    };
    let e = Engine::create(dev.clone(), cfg.clone()).unwrap();
    puts(&e, 50);
    assert!(e.run_background_step(BackgroundTask::LogFlush).unwrap());
    dev.power_loss();
    drop(e);
    dev.restart();
    let e = Engine::open(dev.clone(), cfg).unwrap();
    for k in 0..50u64 {
        assert!(e.get(&k.to_be_bytes()).unwrap().is_some(), "key {k} lost");
    }
}

/// DB GC without its thread: `background_gc` on runs no thread; the step runs passes that
/// reclaim zones, and the values survive.
#[test]
fn a_db_gc_step_reclaims_zones() {
    let dev = Arc::new(SimDevice::with_capacity(6 << 20, 0.1, SimMode::Conventional).unwrap());
    let slot: Slot = Arc::new(Mutex::new(None));
    let oc = OopConfig {
        zone_bytes: Some(128 << 10),
        open_zones: 2,
        background_gc: true,
        ..OopConfig::default()
    };
    let e =
        Engine::create_with_store(dev.clone(), caller_cfg(), &builder(oc, slot.clone())).unwrap();
    let store = slot.lock().clone().unwrap();
    assert!(
        !store.background_gc_running(),
        "no GC thread in caller mode"
    );
    let mut stepped = 0u64;
    for round in 0..12u64 {
        for k in 0..1500u64 {
            e.put(&k.to_be_bytes(), &[u8::try_from(round).unwrap(); 400])
                .unwrap();
        }
        stepped += u64::from(e.run_background_step(BackgroundTask::DbGc).unwrap());
    }
    let s = e.stats();
    assert!(stepped > 0 && s.gc_rounds_background > 0, "{stepped} {s:?}");
    store.check_consistency().unwrap();
    for k in 0..1500u64 {
        assert_eq!(e.get(&k.to_be_bytes()).unwrap().unwrap(), vec![11u8; 400]);
    }
    e.close().unwrap();
}

/// The yield hook (`BackgroundMode::Caller`): a write calls it at `Gated` (before its change
/// is applied: the WAL end is where it was) and at `Logged` (its record appended, not yet
/// durable for an async write), and a log flush stepped at `Logged` makes the write durable
/// before it returns: it survives a power loss right after. A delete of an absent key logs
/// nothing and yields only at `Gated`.
#[test]
fn writes_yield_to_the_callers_tasks_inside_the_operation() {
    let dev = Arc::new(FaultyDevice::new(
        MemDevice::new(16 << 20),
        FaultConfig {
            seed: 3,
            torn_write_prob: 0.0,
            bit_flip_read_prob: 0.0,
        },
    ));
    let e = Arc::new(Engine::create(dev.clone(), caller_cfg()).unwrap());
    puts(&e, 10);
    e.sync().unwrap();
    let seen: Arc<Mutex<Vec<(YieldPoint, u64, u64)>>> = Arc::default();
    let s2 = seen.clone();
    e.set_yield_hook(Some(Arc::new(move |e: &Engine, at: YieldPoint| {
        let before = e.wal_end_lsn();
        if at == YieldPoint::Logged {
            assert!(e.run_background_step(BackgroundTask::LogFlush).unwrap());
        }
        s2.lock().push((at, before, e.wal_durable_lsn()));
    })));
    let end0 = e.wal_end_lsn();
    e.put_with(b"k", b"v", Durability::Async).unwrap();
    let got = seen.lock().clone();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        (got[0].0, got[0].1),
        (YieldPoint::Gated, end0),
        "before the change"
    );
    assert_eq!(got[1].0, YieldPoint::Logged);
    assert!(got[1].1 > end0, "the record was appended before Logged");
    assert_eq!(
        got[1].2,
        e.wal_end_lsn(),
        "the flush at Logged made it durable"
    );
    assert!(!e.delete_with(b"absent", Durability::Async).unwrap());
    assert_eq!(seen.lock().len(), 3, "an absent key yields at Gated only");
    // The async write is durable: it survives a power loss.
    dev.power_loss();
    drop(e);
    dev.restart();
    let e = Engine::open(dev, caller_cfg()).unwrap();
    assert_eq!(e.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// With the engine's own threads a hook would race them: refused.
#[test]
#[should_panic(expected = "a yield hook steps the tasks no thread runs")]
fn a_yield_hook_needs_caller_mode() {
    let e =
        Arc::new(Engine::create(Arc::new(MemDevice::new(16 << 20)), small_engine_cfg()).unwrap());
    e.set_yield_hook(Some(Arc::new(|_: &Engine, _: YieldPoint| {})));
}

/// Where a part holds a latch or a lock, it yields too (`WriteBack`: an eviction's or a
/// checkpoint batch's frames latched; `GcRound`: the store's `io`; `GroupCommit`: the WAL's
/// flush lock), and every task `YieldPoint::may_step` allows runs there on the writer's own
/// thread without waiting for the section (a wait would never end): the cleaner's sweep
/// stops at a frame the writer holds, the DB GC only tries the pool's latches. The writes
/// and the zone metadata stay right. Before these points only `Gated` and `Logged` existed.
#[test]
fn sections_holding_a_lock_yield_to_the_tasks_that_need_none_of_it() {
    let dev = Arc::new(SimDevice::with_capacity(6 << 20, 0.1, SimMode::Conventional).unwrap());
    let slot: Slot = Arc::new(Mutex::new(None));
    let oc = OopConfig {
        zone_bytes: Some(128 << 10),
        open_zones: 2,
        background_gc: true,
        ..OopConfig::default()
    };
    let e =
        Arc::new(Engine::create_with_store(dev, caller_cfg(), &builder(oc, slot.clone())).unwrap());
    // Per point: (times reached, steps run, steps that found work).
    type Seen = Vec<(YieldPoint, u64, u64, u64)>;
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let s2 = seen.clone();
    let calls = std::sync::atomic::AtomicU64::new(0);
    e.set_yield_hook(Some(Arc::new(move |e: &Engine, at: YieldPoint| {
        use std::sync::atomic::Ordering::Relaxed;
        let (mut ran, mut worked) = (0, 0);
        for task in [
            BackgroundTask::PageCleaner,
            BackgroundTask::DbGc,
            BackgroundTask::LogFlush,
        ] {
            // Only inside the sections: steps at `Gated` and `Logged` would keep the GC
            // and the log ahead, so no write would reach a section.
            // At most every 20th group commit steps the GC, so the passes between writes
            // below still find rounds to run.
            let skip = at == YieldPoint::GroupCommit && calls.fetch_add(1, Relaxed) % 20 != 0;
            if at.may_step(task) && !skip && !matches!(at, YieldPoint::Gated | YieldPoint::Logged) {
                ran += 1;
                worked += u64::from(e.run_background_step(task).unwrap());
            }
        }
        let mut s = s2.lock();
        match s.iter_mut().find(|x| x.0 == at) {
            Some(x) => (x.1, x.2, x.3) = (x.1 + 1, x.2 + ran, x.3 + worked),
            None => s.push((at, 1, ran, worked)),
        }
    })));
    for round in 0..10u64 {
        for k in 0..1500u64 {
            let d = if k % 7 == 0 {
                Durability::Sync
            } else {
                Durability::Async
            };
            e.put_with(&k.to_be_bytes(), &[u8::try_from(round).unwrap(); 400], d)
                .unwrap();
            // A background GC pass between writes (as its thread runs): its rounds yield
            // with async records not yet durable (a foreground round follows a write-back's
            // WAL force, which leaves the log flushed).
            if k % 100 == 0 {
                e.run_background_step(BackgroundTask::DbGc).unwrap();
            }
        }
        e.checkpoint().unwrap();
    }
    let got = seen.lock().clone();
    eprintln!("(point, reached, steps, steps that worked): {got:?}");
    for at in [
        YieldPoint::WriteBack,
        YieldPoint::GcRound,
        YieldPoint::GroupCommit,
    ] {
        let x = got.iter().find(|x| x.0 == at);
        assert!(x.is_some_and(|x| x.2 > 0 && x.3 > 0), "{at:?}: {got:?}");
    }
    slot.lock().clone().unwrap().check_consistency().unwrap();
    for k in 0..1500u64 {
        assert_eq!(e.get(&k.to_be_bytes()).unwrap().unwrap(), vec![9u8; 400]);
    }
    e.close().unwrap();
}

/// A task that would wait for the lock the interrupted section holds (a log flush inside
/// group commit's flush, which holds the flush lock) is refused with a panic naming both,
/// instead of a hang on the one thread.
#[test]
#[should_panic(expected = "LogFlush stepped at GroupCommit would wait for a lock")]
fn a_step_that_would_wait_for_the_section_is_refused() {
    let e = Arc::new(Engine::create(Arc::new(MemDevice::new(16 << 20)), caller_cfg()).unwrap());
    e.set_yield_hook(Some(Arc::new(|e: &Engine, at: YieldPoint| {
        if at == YieldPoint::GroupCommit {
            let _ = e.run_background_step(BackgroundTask::LogFlush);
        }
    })));
    e.put_with(b"k", b"v", Durability::Sync).unwrap();
}
