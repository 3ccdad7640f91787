//! Page packing as its own switch (`OopConfig::packing`). With LZ4 and compressible values:
//! packing off writes exactly 4096 device bytes per page write (every page, compressed or
//! not, in a slot of its own; zone headers aside), packing on far less; both keep every value
//! through DB GC, a crash reopen (zone scan of single-page packed slots) and a clean reopen,
//! with zone metadata equal to the mapping.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{SimDevice, SimMode};
use nowa_engine::{Compression, Config, Durability, Engine, OopConfig, Stats};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

#[path = "common/oop_store.rs"]
mod oop_store;
use oop_store::{assert_model, builder, Slot};

fn value(k: u64, v: u64) -> Vec<u8> {
    let mut out = vec![0u8; 100];
    for (i, b) in out.iter_mut().enumerate() {
        *b = b"nowa-packing-"[i % 13];
    }
    out[..8].copy_from_slice(&(k ^ v.rotate_left(17)).to_le_bytes());
    out
}

/// Device bytes of page slots (store bytes without zone headers) and page writes.
fn slot_bytes_and_pages(s: &Stats) -> (u64, u64) {
    let bytes =
        s.user_store_bytes + s.gc_store_bytes + s.compensation_store_bytes - s.zone_header_bytes;
    let pages = s.eviction_page_writes
        + s.checkpoint_page_writes
        + s.gc_page_writes
        + s.compensation_page_writes;
    (bytes, pages)
}

fn run(packing: bool) -> Stats {
    let dev = Arc::new(SimDevice::with_capacity(8 << 20, 0.1, SimMode::Conventional).unwrap());
    let cfg = Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        durability: Durability::Async,
        ..Config::default()
    };
    let ocfg = OopConfig {
        zone_bytes: Some(128 << 10),
        open_zones: 2,
        compression: Compression::Lz4,
        packing,
        // Deterministic write sequence.
        background_gc: false,
        ..OopConfig::default()
    };
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg, slot.clone());
    let e = Engine::create_with_store(dev.clone(), cfg.clone(), &b).unwrap();
    let keys = 12_000u64;
    let mut model = BTreeMap::new();
    for k in 0..keys {
        let v = value(k, 0);
        e.put(&k.to_be_bytes(), &v).unwrap();
        model.insert(k, v);
    }
    let mut x = 3u64;
    for i in 1..30_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = x % keys;
        let v = value(k, i);
        e.put(&k.to_be_bytes(), &v).unwrap();
        model.insert(k, v);
    }
    e.sync().unwrap();
    let s = e.stats();
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    // Crash reopen: the zone scan must adopt single-page packed slots.
    drop(e);
    let e = Engine::open_with_store(dev.clone(), cfg.clone(), &b).unwrap();
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    assert_model(&e, &model);
    e.close().unwrap();
    let e = Engine::open_with_store(dev.clone(), cfg, &b).unwrap();
    assert_eq!(e.get(&5u64.to_be_bytes()).unwrap().as_ref(), model.get(&5));
    e.close().unwrap();
    s
}

#[test]
fn packing_off_is_one_slot_per_page() {
    let s = run(false);
    let (bytes, pages) = slot_bytes_and_pages(&s);
    eprintln!(
        "packing off: {pages} page writes, {bytes} slot bytes, ratio {:.3}, db_waf {:.2}, gc pages {}",
        s.compression_ratio, s.db_waf, s.gc_page_writes
    );
    assert!(s.gc_page_writes > 0, "GC must run: {s:?}");
    assert_eq!(
        bytes,
        pages * 4096,
        "device bytes per page write must be 4096"
    );
}

#[test]
fn packing_on_shares_slots() {
    let s = run(true);
    let (bytes, pages) = slot_bytes_and_pages(&s);
    eprintln!(
        "packing on: {pages} page writes, {bytes} slot bytes ({:.0} per page), ratio {:.3}, db_waf {:.2}",
        bytes as f64 / pages as f64,
        s.compression_ratio,
        s.db_waf
    );
    assert!(bytes * 2 < pages * 4096, "packing must share slots");
}
