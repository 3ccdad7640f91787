//! Out of place, one device flush per write-back batch (issue 31 item 2): the batch's pages
//! are placed class by class (GDT + NoWA: four placement classes) and made durable with one
//! flush, not one per class (10-14 page writes per flush on YCSB), and the flushes are
//! counted as store flushes (`page_writes_per_store_flush` was null out of place).
use nowa_device::{SimDevice, SimMode};
use nowa_engine::{Config, Durability, Engine, OopConfig};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

#[path = "common/oop_store.rs"]
mod oop_store;
use oop_store::{assert_model, builder, Slot};

const SEED: u64 = 31;

#[test]
fn out_of_place_write_back_issues_one_flush_per_batch() {
    eprintln!("seed {SEED}");
    let dev = Arc::new(SimDevice::with_capacity(48 << 20, 0.1, SimMode::Conventional).unwrap());
    let slot: Slot = Arc::new(Mutex::new(None));
    let ocfg = OopConfig {
        zone_bytes: Some(512 << 10),
        open_zones: 4,
        gdt: true,
        nowa: true,
        background_gc: false,
        seed: SEED,
        ..OopConfig::default()
    };
    let cfg = Config {
        pool_bytes: 256 * 4096,
        wal_limit_bytes: Some(8 << 20),
        durability: Durability::Async,
        page_cleaner: true,
        ..Config::default()
    };
    let e = Engine::create_with_store(dev, cfg, &builder(ocfg, slot.clone())).unwrap();
    let keys = 30_000u64;
    let mut model = BTreeMap::new();
    for k in 0..keys {
        e.put(&k.to_be_bytes(), &[1u8; 100]).unwrap();
        model.insert(k, vec![1u8; 100]);
    }
    let before = e.stats();
    let mut x = SEED;
    for i in 0..30_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = x % keys;
        let v = i.to_le_bytes().repeat(12);
        e.put(&k.to_be_bytes(), &v).unwrap();
        model.insert(k, v);
    }
    let s = e.stats();
    assert_model(&e, &model);
    slot.lock().clone().unwrap().check_consistency().unwrap();
    e.close().unwrap();
    let pages = (s.eviction_page_writes + s.checkpoint_page_writes)
        - (before.eviction_page_writes + before.checkpoint_page_writes);
    let flushes = s.store_flushes - before.store_flushes;
    eprintln!(
        "page writes {pages}, store flushes {flushes}, {:.1} per flush",
        pages as f64 / flushes.max(1) as f64
    );
    assert!(pages > 3_000, "the pool must be much smaller than the data");
    assert!(flushes > 0, "out-of-place flushes are counted");
    assert!(
        flushes * 16 <= pages,
        "{flushes} store flushes for {pages} page writes"
    );
}
