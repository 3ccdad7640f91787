//! Bulk load (`Engine::bulk_load`): a sorted bottom-up build into the empty tree. The loaded
//! tree reads back exactly, takes puts, deletes and splits afterwards, survives a reopen, on
//! both write paths; bad input (unsorted, a tree that is not empty) is refused and changes
//! nothing; and a crash at any device write during the load leaves either the empty database
//! or the whole load (complete once `bulk_load` returned), never a part.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::{value_for, CrashDevice};
use nowa_device::{BlockDevice, MemDevice};
use nowa_engine::{
    in_place_store, out_of_place_store, Config, Durability, Engine, EngineError, OopConfig,
    StoreBuilder,
};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;

const N: u64 = 30_000;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        durability: Durability::Sync,
        dw_pages: 8,
        ..Config::default()
    }
}

fn records(n: u64) -> impl Iterator<Item = ([u8; 8], Vec<u8>)> {
    (0..n).map(|i| ((i * 3).to_be_bytes(), value_for(i * 3, 0, 100)))
}

fn model(n: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    records(n).map(|(k, v)| (k.to_vec(), v)).collect()
}

fn check(e: &Engine, m: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let got: BTreeMap<Vec<u8>, Vec<u8>> =
        e.scan(b"", None, usize::MAX).unwrap().into_iter().collect();
    assert_eq!(got.len(), m.len());
    assert!(got == *m, "scan differs from the model");
    for (k, v) in m.iter().step_by(97) {
        assert_eq!(e.get(k).unwrap().as_ref(), Some(v));
    }
}

fn load_use_reopen(dev: Arc<dyn BlockDevice>, b: &dyn StoreBuilder) {
    let e = Engine::create_with_store(dev.clone(), cfg(), b).unwrap();
    assert_eq!(e.bulk_load(records(N)).unwrap(), N);
    let mut m = model(N);
    check(&e, &m);
    // Full leaves: the first inserts between loaded keys split them.
    let mut rng = SmallRng::seed_from_u64(5);
    for _ in 0..5000 {
        let k = rng.random_range(0..3 * N);
        if rng.random_range(0..4u32) == 0 {
            e.delete(&k.to_be_bytes()).unwrap();
            m.remove(&k.to_be_bytes()[..]);
        } else {
            let v = value_for(k, 1, 100);
            e.put(&k.to_be_bytes(), &v).unwrap();
            m.insert(k.to_be_bytes().to_vec(), v);
        }
    }
    check(&e, &m);
    drop(e); // crash: the load and the changes come back from the pages and the log
    let e = Engine::open_with_store(dev.clone(), cfg(), b).unwrap();
    check(&e, &m);
    e.close().unwrap();
    let e = Engine::open_with_store(dev, cfg(), b).unwrap();
    check(&e, &m);
}

#[test]
fn bulk_load_reads_back_and_keeps_working_in_place() {
    load_use_reopen(Arc::new(MemDevice::new(32 << 20)), &in_place_store());
}

#[test]
fn bulk_load_reads_back_and_keeps_working_out_of_place() {
    let oop = OopConfig {
        zone_bytes: Some(256 << 10),
        ..OopConfig::default()
    };
    load_use_reopen(Arc::new(MemDevice::new(32 << 20)), &out_of_place_store(oop));
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let e = Engine::create(Arc::new(MemDevice::new(16 << 20)), cfg()).unwrap();
    let mut bad: Vec<([u8; 8], Vec<u8>)> = records(1000).collect();
    bad.swap(500, 501);
    match e.bulk_load(bad) {
        Err(EngineError::BulkUnsorted { index: 501 }) => {}
        other => panic!("{other:?}"),
    }
    assert!(e.scan(b"", None, 10).unwrap().is_empty());
    assert_eq!(e.bulk_load(records(1000)).unwrap(), 1000);
    assert!(matches!(
        e.bulk_load(records(10)),
        Err(EngineError::BulkNotEmpty { .. })
    ));
    check(&e, &model(1000));
}

#[test]
fn crash_at_any_write_of_the_load_leaves_nothing_or_everything() {
    let image = {
        let dev = Arc::new(CrashDevice::new(16 << 20, 0));
        Engine::create(dev.clone(), cfg()).unwrap().close().unwrap();
        dev.durable_image()
    };
    let calls = {
        let dev = Arc::new(CrashDevice::from_image(image.clone(), 0));
        let e = Engine::open(dev.clone(), cfg()).unwrap();
        let before = dev.write_calls();
        e.bulk_load(records(N)).unwrap();
        dev.write_calls() - before
    };
    let m = model(N);
    let (mut empty, mut full) = (0, 0);
    for seed in 0..40u64 {
        let dev = Arc::new(CrashDevice::from_image(image.clone(), seed));
        let e = Engine::open(dev.clone(), cfg()).unwrap();
        let mut rng = SmallRng::seed_from_u64(seed);
        // Every 5th seed near the end: the last writes are the install record's WAL flush.
        let n = if seed % 5 == 0 {
            calls + 1 - (seed / 5) % 3
        } else {
            rng.random_range(1..=calls)
        };
        dev.crash_after_writes(n);
        let loaded = e.bulk_load(records(N)).is_ok();
        if !dev.is_powered_off() {
            dev.power_loss();
        }
        drop(e);
        dev.restart();
        let e = Engine::open(dev.clone(), cfg())
            .unwrap_or_else(|err| panic!("seed {seed}: open failed: {err}"));
        let got = e.scan(b"", None, usize::MAX).unwrap();
        if got.is_empty() {
            assert!(!loaded, "seed {seed}: an acknowledged load was lost");
            empty += 1;
            // The database stays usable: load again.
            assert_eq!(e.bulk_load(records(100)).unwrap(), 100);
            check(&e, &model(100));
        } else {
            check(&e, &m);
            full += 1;
        }
    }
    eprintln!("{calls} writes per load; after a crash: {empty} empty, {full} complete");
    assert!(empty > 0 && full > 0, "{empty} empty, {full} complete");
}
