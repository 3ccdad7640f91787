//! Out-of-place recovery tells zone incarnations apart whatever TRIM leaves (issue 9 item 3):
//! a crash during a GC-heavy run, then a crash at one of the first writes of recovery, on a
//! device whose TRIM keeps the old bytes (or zeroes them, or a seeded mix of both). After the
//! second restart every seed must open, hold every acknowledged write, have zone metadata
//! that agrees with the mapping, and keep working. Slots a zone's earlier incarnation left
//! behind must never be adopted. 2,000 seeds by default (`NOWA_INCARNATION_SEEDS` to change);
//! each prints its seed on failure and replays from it. Before the fix 22 of these 2,000 seeds
//! (136, 137, 333, 488, ...) ended unopenable with "no free zone left": recovery re-adopted
//! slots of trimmed zones and of earlier incarnations as live data.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

#[path = "common/oop_store.rs"]
mod oop_store;

use nowa_device::{BlockDevice, FaultConfig, FaultyDevice, MemDevice, TrimMode};
use nowa_engine::{Config, Durability, Engine, OopConfig};
use oop_store::{builder, Slot};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

/// About 75% of the zone area: GC runs all the time.
const KEYS: u64 = 13_000;
const OPS: u64 = 1500;
const DEVICE: u64 = 5 << 20;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        // No checkpoint during a run: every zone GC empties and reuses meanwhile is scanned
        // by recovery (its seq is above the snapshot's threshold).
        wal_limit_bytes: Some(1 << 20),
        durability: Durability::Sync,
        dw_pages: 1,
        ..Config::default()
    }
}

fn ocfg() -> OopConfig {
    OopConfig {
        background_gc: false,
        zone_bytes: Some(64 << 10),
        open_zones: 2,
        ..OopConfig::default()
    }
}

fn val(k: u64, v: u64) -> Vec<u8> {
    let mut x = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ v.wrapping_mul(0xD1B5_4A32_D192_ED03)) | 1;
    (0..60 + k % 50)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

fn op(i: u64) -> (u64, Vec<u8>) {
    let k = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % KEYS;
    (k, val(k, i + 1))
}

type Model = BTreeMap<u64, Vec<u8>>;

/// The loaded database image and its model.
fn base() -> (Vec<u8>, Model) {
    let dev = Arc::new(MemDevice::new(DEVICE));
    let e = Engine::create_with_store(
        dev.clone(),
        cfg(),
        &builder(ocfg(), Arc::new(Mutex::new(None))),
    )
    .unwrap();
    let mut m = Model::new();
    for k in 0..KEYS {
        let v = val(k, 0);
        e.put_with(&k.to_be_bytes(), &v, Durability::Async).unwrap();
        m.insert(k, v);
    }
    e.close().unwrap();
    let mut img = vec![0u8; usize::try_from(DEVICE).unwrap()];
    dev.read_at(0, &mut img).unwrap();
    (img, m)
}

fn device(img: &[u8], seed: u64) -> Arc<FaultyDevice<MemDevice>> {
    let inner = MemDevice::new(img.len() as u64);
    inner.write_at(0, img).unwrap();
    let d = Arc::new(FaultyDevice::new(
        inner,
        FaultConfig {
            seed,
            torn_write_prob: 0.5,
            bit_flip_read_prob: 0.0,
        },
    ));
    d.set_trim_mode(match seed % 4 {
        0 | 1 => TrimMode::Keep,
        2 => TrimMode::Random,
        _ => TrimMode::Zero,
    });
    d
}

/// Sync puts `from..from + n` until one fails: the failed one, if any.
fn run(e: &Engine, from: u64, n: u64, model: &mut Model) -> Option<(u64, Vec<u8>)> {
    for i in from..from + n {
        let (k, v) = op(i);
        if e.put(&k.to_be_bytes(), &v).is_err() {
            return Some((k, v));
        }
        model.insert(k, v);
    }
    None
}

fn verify(e: &Engine, model: &Model, inflight: Option<&(u64, Vec<u8>)>, seed: u64) {
    for (k, v) in model {
        let got = e.get(&k.to_be_bytes()).unwrap();
        let ok = got.as_ref() == Some(v)
            || inflight.is_some_and(|(ik, iv)| ik == k && got.as_ref() == Some(iv));
        assert!(ok, "seed {seed}: key {k} lost or wrong");
    }
}

/// Device writes of a full run (the crash points are drawn from them).
fn calibrate(img: &[u8]) -> u64 {
    let dev = device(img, u64::MAX);
    let e = Engine::open_with_store(
        dev.clone(),
        cfg(),
        &builder(ocfg(), Arc::new(Mutex::new(None))),
    )
    .unwrap();
    let w0 = dev.writes_issued();
    assert!(run(&e, 0, OPS, &mut Model::new()).is_none());
    let s = e.stats();
    assert!(
        s.zones_reclaimed >= 5 && s.gc_page_writes > 0,
        "GC must reclaim and reuse zones: {s:?}"
    );
    dev.writes_issued() - w0
}

fn one_seed(img: &[u8], base_model: &Model, calls: u64, seed: u64) {
    let mut x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
    x ^= x >> 29;
    let dev = device(img, seed);
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg(), slot.clone());
    let mut model = base_model.clone();
    let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
    dev.crash_after_writes(1 + x % calls);
    let inflight = run(&e, 0, OPS, &mut model);
    drop(e);
    dev.restart();
    // Crash again at one of the first writes of recovery (a zone header, a first slot).
    dev.crash_after_writes(1 + (x >> 7) % 4);
    let _ = Engine::open_with_store(dev.clone(), cfg(), &b);
    dev.restart();
    let e = Engine::open_with_store(dev.clone(), cfg(), &b)
        .unwrap_or_else(|err| panic!("seed {seed}: unopenable after two crashes: {err}"));
    let store = slot.lock().clone().unwrap();
    store
        .check_consistency()
        .unwrap_or_else(|err| panic!("seed {seed}: {err}"));
    verify(&e, &model, inflight.as_ref(), seed);
    if seed % 8 == 0 {
        // The recovered database keeps working (GC included) and survives a clean reopen.
        if let Some((k, _)) = &inflight {
            model.insert(*k, e.get(&k.to_be_bytes()).unwrap().unwrap());
        }
        assert!(run(&e, 10_000, 200, &mut model).is_none(), "seed {seed}");
        e.close().unwrap();
        let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
        verify(&e, &model, None, seed);
    }
}

#[test]
fn crash_then_crash_in_recovery_with_any_trim_behaviour() {
    let seeds: u64 = std::env::var("NOWA_INCARNATION_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let (img, model) = base();
    let calls = calibrate(&img);
    let t = std::time::Instant::now();
    // The seeds are independent: spread over the cores (one test in this binary, so cargo's
    // test threads leave them idle otherwise). Seed s runs on thread s % threads; a panic in
    // any names its seed and fails the test when the scope joins.
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    std::thread::scope(|scope| {
        for first in 0..threads {
            let (img, model) = (&img, &model);
            scope.spawn(move || {
                for seed in (0..seeds).skip(first).step_by(threads) {
                    one_seed(img, model, calls, seed);
                }
            });
        }
    });
    eprintln!(
        "{seeds} seeds (crash in a run of {calls} device writes, then in recovery): all opened, {:.1} s",
        t.elapsed().as_secs_f64()
    );
}
