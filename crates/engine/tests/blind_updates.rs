//! Blind updates (`Config::blind_update_bytes`, src/blind.rs, docs/design.md 14.12): an
//! upsert into a leaf that is not in the pool is logged without reading the leaf and applied
//! when the leaf is next loaded. Here: such a put reads nothing from the device (one read
//! without the option); every get, scan and delete sees the latest value against a model
//! through splits, deletes, checkpoints, drains at the memory limit and reopens; and the
//! seeded crash points of oop_crash.rs (torn / dropped n-th write, power loss, crashes in
//! recovery) with blind updates and deltas on: recovery replays the blind records by LSN.
#![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

#[path = "common/oop_crash_harness.rs"]
mod harness;
#[path = "common/kv_model.rs"]
mod kv_model;
#[path = "common/oop_store.rs"]
mod oop_store;

use kv_model::{delta_ocfg as ocfg, key, val, Model};
use nowa_device::MemDevice;
use nowa_engine::{Compression, Config, Durability, Engine};
use oop_store::{builder, Slot};
use parking_lot::Mutex;
use proptest::prelude::*;
use std::sync::Arc;

/// Keys of the property test: ~300 leaves over a pool of 64 frames.
const KEYS: u16 = 10_000;

fn cfg(blind: u64) -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        durability: Durability::Async,
        dw_pages: 1,
        blind_update_bytes: blind,
        ..Config::default()
    }
}

fn engine(dev: &Arc<MemDevice>, blind: u64, create: bool) -> Engine {
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg(), slot);
    if create {
        Engine::create_with_store(dev.clone(), cfg(blind), &b).unwrap()
    } else {
        Engine::open_with_store(dev.clone(), cfg(blind), &b).unwrap()
    }
}

/// Page reads of `n` updates of cold keys (spread over a table 20x the pool), after their
/// leaves were pushed out of the pool.
fn reads_of_cold_updates(blind: u64) -> (u64, u64) {
    let dev = Arc::new(MemDevice::new(16 << 20));
    let e = engine(&dev, blind, true);
    for k in 0..6000u16 {
        e.put(&key(k), &val(k, 0, 100)).unwrap();
    }
    // Scan the last keys: the first leaves leave the pool.
    e.scan(&key(5000), None, 1000).unwrap();
    let before = e.stats().page_reads;
    for k in (0..1000u16).step_by(50) {
        e.put(&key(k), &val(k, 1, 100)).unwrap();
    }
    let reads = e.stats().page_reads - before;
    for k in (0..1000u16).step_by(50) {
        assert_eq!(e.get(&key(k)).unwrap(), Some(val(k, 1, 100)), "key {k}");
    }
    (reads, e.stats().blind_updates)
}

/// The point of the option: an update of a key whose leaf is not in the pool reads nothing
/// (20 updates, 20 leaves read without it), and the gets after them see the new values.
#[test]
fn an_update_of_a_leaf_out_of_the_pool_reads_nothing() {
    let (without, n0) = reads_of_cold_updates(0);
    let (with, n1) = reads_of_cold_updates(1 << 20);
    assert_eq!((n0, n1), (0, 20), "blind updates counted");
    assert!(without >= 20, "without: {without} page reads");
    assert_eq!(with, 0, "with blind updates: {with} page reads");
}

/// The log covers what memory holds: by default the WAL limit is the pool plus the
/// blind-update memory (with the pool alone, half the memory in blind changes doubled the
/// checkpoint passes, each draining them), and the WAL region `create` makes grows with it.
/// A given limit is kept.
#[test]
fn the_default_wal_limit_covers_the_blind_update_memory() {
    let default = |blind| Config {
        wal_limit_bytes: None,
        ..cfg(blind)
    };
    assert_eq!(default(0).wal_limit(), 64 * 4096);
    assert_eq!(default(1 << 20).wal_limit(), 64 * 4096 + (1 << 20));
    assert!(
        nowa_engine::wal_region_bytes(&default(1 << 20))
            > nowa_engine::wal_region_bytes(&default(0)) + (1 << 20)
    );
    assert_eq!(cfg(1 << 20).wal_limit(), 256 << 10, "a given limit is kept");
}

#[derive(Debug, Clone)]
enum Op {
    Get(u16),
    Put(u16, u64, usize),
    Delete(u16),
    Scan(u16, usize),
    Checkpoint,
    Reopen,
}

fn op(keys: u16) -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => (0..keys).prop_map(Op::Get),
        // Overwrites of the loaded size (taken blind by full leaves) and other sizes.
        60 => (0..keys, any::<u64>()).prop_map(|(k, v)| Op::Put(k, v, 100)),
        30 => (0..keys, any::<u64>(), 1usize..300).prop_map(|(k, v, l)| Op::Put(k, v, l)),
        10 => (0..keys).prop_map(Op::Delete),
        10 => (0..keys, 1usize..40).prop_map(|(k, n)| Op::Scan(k, n)),
        // Rare: a reopen starts with an empty pool (no leaf is out of it until it fills).
        2 => Just(Op::Checkpoint),
        1 => Just(Op::Reopen),
    ]
}

fn apply(dev: &Arc<MemDevice>, e: &mut Engine, m: &mut Model, o: &Op, blind: u64) {
    match *o {
        Op::Get(k) => assert_eq!(e.get(&key(k)).unwrap().as_ref(), m.get(&k), "key {k}"),
        Op::Put(k, v, l) => {
            let v = val(k, v, l);
            e.put(&key(k), &v).unwrap();
            m.insert(k, v);
        }
        Op::Delete(k) => assert_eq!(e.delete(&key(k)).unwrap(), m.remove(&k).is_some()),
        Op::Scan(k, n) => {
            let got = e.scan(&key(k), None, n).unwrap();
            let want: Vec<(Vec<u8>, Vec<u8>)> = m
                .range(k..)
                .take(n)
                .map(|(k, v)| (key(*k).to_vec(), v.clone()))
                .collect();
            assert_eq!(got, want, "scan from {k}");
        }
        Op::Checkpoint => {
            e.checkpoint().unwrap();
            // A full checkpoint applies every blind change older than it.
            assert_eq!(e.blind_pending().1, 0, "changes pending after a checkpoint");
        }
        Op::Reopen => {
            e.close().unwrap();
            *e = engine(dev, blind, false);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10))]

    /// Every get and scan answers the model's value through blind puts of existing keys
    /// (same size, and other sizes up to 300 B: leaves split once their changes are applied;
    /// deleted keys put again are inserts), deletes,
    /// checkpoints, reopens and drains at a small memory limit; the run took blind puts and
    /// applied them (the check is not empty).
    #[test]
    fn reads_see_the_latest_value_through_every_change(
        ops in proptest::collection::vec(op(KEYS), 1500..2500),
        blind in 2u64..64,
    ) {
        let dev = Arc::new(MemDevice::new(16 << 20));
        let mut e = engine(&dev, blind << 10, true);
        let mut m = Model::new();
        for k in 0..KEYS {
            e.put(&key(k), &val(k, 0, 100)).unwrap();
            m.insert(k, val(k, 0, 100));
        }
        let (mut updates, mut applied, mut drains) = (0, 0, 0);
        for o in &ops {
            if matches!(o, Op::Reopen) {
                let s = e.stats();
                (updates, applied, drains) =
                    (updates + s.blind_updates, applied + s.blind_applied, drains + s.blind_drains);
            }
            apply(&dev, &mut e, &mut m, o, blind << 10);
        }
        for k in 0..KEYS {
            let got = e.get(&key(k)).unwrap();
            prop_assert_eq!(got.as_ref(), m.get(&k), "key {}", k);
        }
        let s = e.stats();
        (updates, applied, drains) =
            (updates + s.blind_updates, applied + s.blind_applied, drains + s.blind_drains);
        prop_assert!(
            updates > 0 && applied > 0 && drains > 0,
            "blind: {updates} updates, {applied} applied, {drains} drains"
        );
        e.close().unwrap();
        prop_assert_eq!(e.blind_pending(), (0, 0, 0));
    }
}

/// The seeded crash points of oop_crash.rs with blind updates and sub-page deltas on: the
/// calibration run logs, applies and drains blind changes; after every crash the reopened
/// database serves every acknowledged put (replayed from the blind records), keeps working,
/// and survives a clean reopen.
#[test]
fn crash_points_with_blind_updates() {
    let mode = harness::Mode {
        deltas: true,
        blind: true,
        ..harness::Mode::plain(Compression::Lz4, false)
    };
    harness::crash_points(mode, 24);
}
