//! Background DB GC (out of place): a thread per engine reclaims zones while fewer than the
//! high watermark zones are free, so the foreground GC (the writer that needs space, at the
//! low watermark) rarely runs. Checks: background passes keep the foreground GC rare on an
//! update-heavy run (driven on the test's thread, so the count is the code's and not the
//! scheduler's), the thread runs GC that relocates while every value survives (model check,
//! zone metadata = mapping, clean reopen), the thread stops on close and on drop (no device
//! write after the drop returns), and `background_gc: false` runs no thread and no background
//! round.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{BlockDevice, SimDevice, SimMode};
use nowa_engine::{Config, Engine, OopConfig};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

#[path = "common/oop_store.rs"]
mod oop_store;
use oop_store::{assert_model, builder, small_engine_cfg, Slot};

fn value(k: u64, v: u64) -> Vec<u8> {
    let mut out = vec![0u8; 100];
    let mut x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ v.wrapping_mul(0xD1B5_4A32_D192_ED03);
    for b in out.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x.to_le_bytes()[0];
    }
    out
}

fn cfg() -> Config {
    small_engine_cfg()
}

fn ocfg(bg: bool, nowa: bool) -> OopConfig {
    OopConfig {
        zone_bytes: Some(128 << 10),
        open_zones: 2,
        nowa,
        background_gc: bg,
        ..OopConfig::default()
    }
}

type Model = BTreeMap<u64, Vec<u8>>;

/// Load `keys` then `updates` uniform random updates; returns the model.
fn workload(e: &Engine, keys: u64, updates: u64, seed: u64) -> Model {
    workload_with(e, keys, updates, seed, |_| {})
}

/// [`workload`], calling `between(n)` after the `n`-th put.
fn workload_with(
    e: &Engine,
    keys: u64,
    updates: u64,
    seed: u64,
    mut between: impl FnMut(u64),
) -> Model {
    let mut model = Model::new();
    for k in 0..keys {
        let v = value(k, 0);
        e.put(&k.to_be_bytes(), &v).unwrap();
        model.insert(k, v);
        between(k);
    }
    let mut x = seed | 1;
    for i in 1..updates {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = x % keys;
        let v = value(k, i);
        e.put(&k.to_be_bytes(), &v).unwrap();
        model.insert(k, v);
        between(keys + i);
    }
    model
}

fn verify(e: &Engine, model: &Model) {
    assert_model(e, model);
}

/// The store's invariants hold and every value survives, before and after a clean reopen.
fn check_and_reopen(
    e: Engine,
    dev: &Arc<SimDevice>,
    b: &impl nowa_engine::StoreBuilder,
    slot: &Slot,
    model: &Model,
) {
    let store = slot.lock().clone().unwrap();
    store.check_consistency().unwrap();
    verify(&e, model);
    e.close().unwrap();
    assert!(!store.background_gc_running(), "close stops the GC thread");
    assert!(
        store.background_gc_error().is_none(),
        "{:?}",
        store.background_gc_error()
    );
    let e = Engine::open_with_store(dev.clone(), cfg(), b).unwrap();
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    verify(&e, model);
    e.close().unwrap();
}

/// GC relocated real data: zones reclaimed, pages moved.
fn assert_relocated(s: &nowa_engine::Stats) {
    assert!(
        s.zones_reclaimed > 20 && s.gc_page_writes + s.compensation_page_writes > 1000,
        "GC must relocate: {s:?}"
    );
}

/// Background passes driven on this thread every `PASS_EVERY` puts (the simulation's hook,
/// the thread off): the writers need the foreground GC at most a quarter as often as the
/// background passes run a round. Deterministic, so the ratio is the code's, whatever the
/// machine's load (a starved background thread made the threaded version of this fail).
fn background_dominates(nowa: bool) {
    const PASS_EVERY: u64 = 8;
    let dev = Arc::new(SimDevice::with_capacity(10 << 20, 0.1, SimMode::Conventional).unwrap());
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg(false, nowa), slot.clone());
    let e = Engine::create_with_store(dev.clone(), cfg(), &b).unwrap();
    let store = slot.lock().clone().unwrap();
    assert!(!store.background_gc_running());
    let mut passes = 0u64;
    let model = workload_with(&e, 25_000, 60_000, 7, |n| {
        if n % PASS_EVERY == 0 {
            store.background_pass_now().unwrap();
            passes += 1;
        }
    });
    drop(store);
    let s = e.stats();
    eprintln!(
        "nowa={nowa}: {passes} passes; GC rounds foreground {} background {}; gc pages {} compensation {} zones {} db_waf {:.2}",
        s.gc_rounds_foreground,
        s.gc_rounds_background,
        s.gc_page_writes,
        s.compensation_page_writes,
        s.zones_reclaimed,
        s.db_waf
    );
    assert_relocated(&s);
    assert!(
        s.gc_rounds_background >= 3 * s.gc_rounds_foreground,
        "background GC should do most rounds: {s:?}"
    );
    check_and_reopen(e, &dev, &b, &slot, &model);
}

#[test]
fn background_gc_does_most_rounds() {
    background_dominates(false);
}

#[test]
fn background_gc_does_most_rounds_nowa() {
    background_dominates(true);
}

/// The thread itself: it runs while the engine is open, GC relocates under it (background or
/// foreground: how the rounds split depends on the scheduler, so it is not asserted here),
/// the data survives, and close stops it without an error.
#[test]
fn background_thread_runs_and_stops() {
    let dev = Arc::new(SimDevice::with_capacity(10 << 20, 0.1, SimMode::Conventional).unwrap());
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg(true, false), slot.clone());
    let e = Engine::create_with_store(dev.clone(), cfg(), &b).unwrap();
    assert!(slot.lock().as_ref().unwrap().background_gc_running());
    let model = workload(&e, 25_000, 60_000, 7);
    assert_relocated(&e.stats());
    check_and_reopen(e, &dev, &b, &slot, &model);
}

/// Dropping the engine (a crash for the data) stops and joins the thread: the device sees no
/// write afterwards, and a reopen recovers every acknowledged (synced) write.
#[test]
fn drop_stops_the_thread() {
    let dev = Arc::new(SimDevice::with_capacity(10 << 20, 0.1, SimMode::Conventional).unwrap());
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg(true, false), slot.clone());
    let e = Engine::create_with_store(dev.clone(), cfg(), &b).unwrap();
    let model = workload(&e, 8_000, 20_000, 11);
    e.sync().unwrap();
    let store = slot.lock().clone().unwrap();
    drop(e);
    assert!(!store.background_gc_running(), "drop stops the GC thread");
    let w = dev.counters().host_bytes_written;
    std::thread::sleep(std::time::Duration::from_millis(60));
    assert_eq!(dev.counters().host_bytes_written, w, "no write after drop");
    drop(store);
    let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    verify(&e, &model);
    e.close().unwrap();
}

#[test]
fn switch_off_runs_foreground_only() {
    let dev = Arc::new(SimDevice::with_capacity(10 << 20, 0.1, SimMode::Conventional).unwrap());
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg(false, false), slot.clone());
    let e = Engine::create_with_store(dev.clone(), cfg(), &b).unwrap();
    assert!(!slot.lock().as_ref().unwrap().background_gc_running());
    let model = workload(&e, 8_000, 20_000, 13);
    let s = e.stats();
    assert!(s.gc_rounds_foreground > 0, "{s:?}");
    assert_eq!(s.gc_rounds_background, 0);
    verify(&e, &model);
    e.close().unwrap();
    let _ = dev.geometry();
}
