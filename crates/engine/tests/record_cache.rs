//! The record cache (`Config::record_cache_bytes`, src/rcache.rs): hot records served
//! without touching a page. Its one invariant, checked here against a model and against the
//! tree itself (`Engine::record_cache_stale`): every cached value is the tree's value of its
//! key, through puts, deletes, splits, empty-leaf merges and evictions with sub-page deltas
//! out of place; and a crash (a torn or dropped n-th device write, a power loss) followed by
//! a reopen serves every acknowledged write, never a value the cache held before the crash.
#![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

#[path = "common/kv_model.rs"]
mod kv_model;
#[path = "common/oop_store.rs"]
mod oop_store;

use kv_model::{delta_ocfg as ocfg, key, val, Model};
use nowa_device::{FaultConfig, FaultyDevice, MemDevice};
use nowa_engine::{Config, Durability, Engine};
use oop_store::{builder, Slot};
use parking_lot::Mutex;
use proptest::prelude::*;
use std::sync::Arc;

fn cfg(cache: u64) -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(128 << 10),
        durability: Durability::Sync,
        dw_pages: 1,
        record_cache_bytes: cache,
        ..Config::default()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Get(u16),
    Put(u16, u64, usize),
    Delete(u16),
}

fn op(keys: u16) -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..keys).prop_map(Op::Get),
        4 => (0..keys, any::<u64>(), 1usize..400).prop_map(|(k, v, l)| Op::Put(k, v, l)),
        1 => (0..keys).prop_map(Op::Delete),
    ]
}

fn apply(e: &Engine, m: &mut Model, o: &Op) {
    match *o {
        Op::Get(k) => assert_eq!(e.get(&key(k)).unwrap().as_ref(), m.get(&k), "key {k}"),
        Op::Put(k, v, l) => {
            let v = val(k, v, l);
            e.put(&key(k), &v).unwrap();
            m.insert(k, v);
        }
        Op::Delete(k) => assert_eq!(e.delete(&key(k)).unwrap(), m.remove(&k).is_some()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Every get answers the model's value and the cache agrees with the tree at the end,
    /// through splits (values up to 400 B on 3,000 keys), deletes emptying leaves, and a
    /// pool of 64 frames writing deltas back; the cache served gets (the check is not empty).
    #[test]
    fn cached_values_are_the_trees_through_every_change(
        ops in proptest::collection::vec(op(3000), 1500..2500),
        cache in 4u64..64,
    ) {
        let dev = Arc::new(MemDevice::new(8 << 20));
        let slot: Slot = Arc::new(Mutex::new(None));
        let e = Engine::create_with_store(dev, cfg(cache << 10), &builder(ocfg(), slot)).unwrap();
        let mut m = Model::new();
        // Hot keys first, so gets repeat and hit.
        for k in 0..3000 {
            e.put(&key(k), &val(k, 0, 100)).unwrap();
            m.insert(k, val(k, 0, 100));
        }
        for o in &ops {
            apply(&e, &mut m, o);
            // Skew: every op is followed by a get of a hot key.
            let (Op::Put(k, ..) | Op::Delete(k) | Op::Get(k)) = *o;
            apply(&e, &mut m, &Op::Get(k % 40));
        }
        prop_assert_eq!(e.record_cache_stale().unwrap(), Vec::<Vec<u8>>::new());
        let s = e.stats();
        prop_assert!(s.record_cache_hits > 0 && s.record_cache_misses > 0, "{s:?}");
        prop_assert!(s.delta_writes > 0, "deltas written back: {s:?}");
    }
}

#[test]
fn a_cache_that_is_off_serves_nothing() {
    let dev = Arc::new(MemDevice::new(8 << 20));
    let slot: Slot = Arc::new(Mutex::new(None));
    let e = Engine::create_with_store(dev, cfg(0), &builder(ocfg(), slot)).unwrap();
    e.put(b"a", b"1").unwrap();
    for _ in 0..3 {
        assert_eq!(e.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    }
    let s = e.stats();
    assert_eq!((s.record_cache_hits, s.record_cache_misses), (0, 0));
    assert!(e.record_cache_stale().unwrap().is_empty());
}

/// Reads of the first 64 keys with sync puts of random keys between them, until the device
/// fails; the acknowledged puts go into `m`. Returns the put in flight.
fn run(e: &Engine, from: u64, n: u64, m: &mut Model) -> Option<(u16, Vec<u8>)> {
    for i in from..from + n {
        let k = u16::try_from((i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % 2000).unwrap();
        let hot = u16::try_from(i % 64).unwrap();
        match e.get(&key(hot)) {
            Ok(got) => assert_eq!(got.as_ref(), m.get(&hot), "hot key {hot} before the crash"),
            Err(_) => return None,
        }
        // Updates of hot keys too, so cached entries change before the crash.
        let k = if i % 4 == 0 { hot } else { k };
        let v = val(k, i + 1, 60 + usize::from(k % 90));
        match e.put_with(&key(k), &v, Durability::Sync) {
            Ok(()) => {
                m.insert(k, v);
            }
            Err(_) => return Some((k, v)),
        }
    }
    None
}

fn verify(e: &Engine, m: &Model, inflight: Option<&(u16, Vec<u8>)>, what: &str) {
    // Each key twice: the second get is served by the cache the first one filled.
    let hits = e.stats().record_cache_hits;
    for (k, v) in m {
        for _ in 0..2 {
            let got = e.get(&key(*k)).unwrap();
            let ok = got.as_ref() == Some(v)
                || inflight.is_some_and(|(ik, iv)| ik == k && got.as_ref() == Some(iv));
            assert!(ok, "{what}: key {k} lost or wrong");
        }
    }
    assert!(
        e.stats().record_cache_hits > hits,
        "{what}: the cache served reads"
    );
    assert!(e.record_cache_stale().unwrap().is_empty(), "{what}");
}

/// Crash points (the n-th device write torn or dropped, or a power loss between operations)
/// during a run whose reads fill the cache and whose puts change cached keys; after the
/// reopen (with the cache on) every acknowledged put reads back, twice (from the tree, then
/// from the cache), and the database keeps working.
#[test]
fn a_crash_and_reopen_serves_every_acknowledged_write() {
    const OPS: u64 = 600;
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg(), slot);
    let mut hits_before_crash = 0;
    for seed in 0..24u64 {
        let dev = Arc::new(FaultyDevice::new(
            MemDevice::new(3 << 20),
            FaultConfig {
                seed,
                torn_write_prob: 0.5,
                bit_flip_read_prob: 0.0,
            },
        ));
        let mut m = Model::new();
        {
            let e = Engine::create_with_store(dev.clone(), cfg(16 << 10), &b).unwrap();
            for k in 0..2000u16 {
                let v = val(k, 0, 60 + usize::from(k % 90));
                e.put_with(&key(k), &v, Durability::Async).unwrap();
                m.insert(k, v);
            }
            e.close().unwrap();
        }
        let e = Engine::open_with_store(dev.clone(), cfg(16 << 10), &b).unwrap();
        let x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
        let inflight = if seed % 3 == 2 {
            let r = run(&e, 0, x % OPS, &mut m);
            dev.power_loss();
            r
        } else {
            dev.crash_after_writes(1 + x % 400);
            run(&e, 0, OPS, &mut m)
        };
        hits_before_crash += e.stats().record_cache_hits;
        drop(e);
        dev.restart();
        let e = Engine::open_with_store(dev.clone(), cfg(16 << 10), &b)
            .unwrap_or_else(|err| panic!("seed {seed}: open failed: {err}"));
        verify(&e, &m, inflight.as_ref(), &format!("seed {seed}"));
        let mut m2 = m.clone();
        if let Some((k, _)) = &inflight {
            m2.insert(*k, e.get(&key(*k)).unwrap().unwrap());
        }
        assert!(run(&e, 10_000, 200, &mut m2).is_none(), "seed {seed}");
        verify(&e, &m2, None, &format!("seed {seed} after the crash run"));
        e.close().unwrap();
    }
    assert!(
        hits_before_crash > 0,
        "the cache served reads before the crashes"
    );
}
