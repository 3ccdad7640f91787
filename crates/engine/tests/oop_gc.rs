//! Out-of-place store: DB GC on a small simulated SSD conserves every live page (model check,
//! zone metadata consistent with the mapping), with and without compression; clean reopen and
//! crash reopen (drop without close) keep every value.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{SimDevice, SimMode};
use nowa_engine::{Compression, Config, Durability, Engine, OopConfig};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

#[path = "common/oop_store.rs"]
mod oop_store;
use oop_store::{assert_model, builder, Slot};

fn value(k: u64, v: u64, comp: bool) -> Vec<u8> {
    let mut out = vec![0u8; 100];
    if comp {
        for (i, b) in out.iter_mut().enumerate() {
            *b = b"nowa-value-"[i % 11];
        }
        out[..8].copy_from_slice(&(k ^ v.rotate_left(17)).to_le_bytes());
    } else {
        let mut x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ v.wrapping_mul(0xD1B5_4A32_D192_ED03);
        for b in out.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x.to_le_bytes()[0];
        }
    }
    out
}

fn run(compression: Compression, comp_values: bool) {
    run_with(compression, comp_values, false)
}

fn run_with(compression: Compression, comp_values: bool, gdt: bool) {
    let dev = Arc::new(SimDevice::with_capacity(10 << 20, 0.1, SimMode::Conventional).unwrap());
    let cfg = Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        durability: Durability::Async,
        ..Config::default()
    };
    let ocfg = OopConfig {
        zone_bytes: Some(128 << 10),
        open_zones: 2,
        compression,
        gdt,
        ..OopConfig::default()
    };
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg.clone(), slot.clone());
    let e = Engine::create_with_store(dev.clone(), cfg.clone(), &b).unwrap();
    let keys = if comp_values { 50_000u64 } else { 14_000 };
    let mut model = BTreeMap::new();
    for k in 0..keys {
        let v = value(k, 0, comp_values);
        e.put(&k.to_be_bytes(), &v).unwrap();
        model.insert(k, v);
    }
    let mut x = 7u64;
    for i in 1..60_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = x % keys;
        let v = value(k, i, comp_values);
        e.put(&k.to_be_bytes(), &v).unwrap();
        model.insert(k, v);
    }
    let s = e.stats();
    assert!(s.gc_page_writes > 0, "GC never ran: {s:?}");
    assert!(s.zones_reclaimed > 0);
    assert_eq!(s.doublewrite_page_writes, 0);
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    assert_model(&e, &model);
    if compression != Compression::Off && comp_values {
        assert!(s.compression_ratio < 0.8, "ratio {}", s.compression_ratio);
    }
    eprintln!(
        "{compression:?}: db_waf {:.2} gc pages {} zones {} ratio {:.2} gc pool hits {} reads {}",
        s.db_waf,
        s.gc_page_writes,
        s.zones_reclaimed,
        s.compression_ratio,
        s.gc_pool_hits,
        s.gc_page_reads
    );
    e.close().unwrap();
    drop(e);
    // Clean reopen.
    let e = Engine::open_with_store(dev.clone(), cfg.clone(), &b).unwrap();
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    for (k, v) in &model {
        assert_eq!(
            e.get(&k.to_be_bytes()).unwrap().as_ref(),
            Some(v),
            "key {k} after reopen"
        );
    }
    // More updates, then a "crash" (drop without close; the sim device keeps every write).
    for i in 0..20_000u64 {
        let k = (i * 7919) % keys;
        let v = value(k, 100_000 + i, comp_values);
        e.put_with(&k.to_be_bytes(), &v, Durability::Sync).unwrap();
        model.insert(k, v);
    }
    drop(e);
    let e = Engine::open_with_store(dev.clone(), cfg, &b).unwrap();
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    for (k, v) in &model {
        assert_eq!(
            e.get(&k.to_be_bytes()).unwrap().as_ref(),
            Some(v),
            "key {k} after crash"
        );
    }
}

#[test]
fn gc_conserves_live_pages_uncompressed() {
    run(Compression::Off, false);
}

#[test]
fn gc_conserves_live_pages_lz4() {
    run(Compression::Lz4, true);
}

#[test]
fn gc_conserves_live_pages_zstd_incompressible_values() {
    // Random values: most pages do not fit a slot compressed and are stored raw.
    run(Compression::Zstd, false);
}

#[test]
fn gc_conserves_live_pages_gdt() {
    // GDT: EDT-grouped placement, EDT-ordered relocation, write history in page headers
    // (which survive the reopen and the crash).
    run_with(Compression::Lz4, true, true);
}
