//! Sub-page persistence out of place (issue 31 item 1, docs/design.md section 14.10): small
//! write-backs are stored as deltas over the page's chain, rebuilt on a miss, consolidated
//! when the chain reaches its bound, merged into a whole page when DB GC moves any of its
//! copies. Here: fewer device bytes per user page write than whole pages on the same run,
//! every key reads back (through chains) after a clean reopen, and the seeded crash points
//! of oop_crash.rs (torn / dropped n-th write, power loss, crashes inside recovery) with
//! deltas on: the calibration run must write, read, consolidate and GC-merge deltas, so crash
//! points land in delta writes, consolidations and GC merges of chains.
#![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

#[path = "common/oop_crash_harness.rs"]
mod harness;
#[path = "common/oop_store.rs"]
mod oop_store;

use nowa_device::MemDevice;
use nowa_engine::{Compression, Durability, Engine, OopConfig};
use oop_store::{assert_model, builder, small_engine_cfg, Slot};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Same-size value updates on a pool much smaller than the data: (user device bytes per
/// user page write, delta writes, delta chain reads), and the store checked after reopen.
fn update_run(deltas: bool) -> (f64, u64, u64) {
    let ocfg = OopConfig {
        deltas,
        background_gc: false,
        zone_bytes: Some(128 << 10),
        open_zones: 2,
        ..OopConfig::default()
    };
    let dev = Arc::new(MemDevice::new(16 << 20));
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg, slot.clone());
    let e = Engine::create_with_store(dev.clone(), small_engine_cfg(), &b).unwrap();
    let mut model = BTreeMap::new();
    let val = |k: u64, v: u64| -> Vec<u8> {
        let mut x = (k << 20 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..100)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()[0]
            })
            .collect()
    };
    for k in 0..6000u64 {
        e.put_with(&k.to_be_bytes(), &val(k, 0), Durability::Async)
            .unwrap();
        model.insert(k, val(k, 0));
    }
    e.checkpoint().unwrap();
    let s0 = e.stats();
    for i in 1..6000u64 {
        let k = (i.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 17) % 6000;
        e.put_with(&k.to_be_bytes(), &val(k, i), Durability::Async)
            .unwrap();
        model.insert(k, val(k, i));
    }
    e.checkpoint().unwrap();
    let s = e.stats();
    let pages = (s.eviction_page_writes + s.checkpoint_page_writes)
        - (s0.eviction_page_writes + s0.checkpoint_page_writes);
    let bytes = s.user_store_bytes - s0.user_store_bytes;
    assert_model(&e, &model);
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    e.close().unwrap();
    let e = Engine::open_with_store(dev, small_engine_cfg(), &b).unwrap();
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    assert_model(&e, &model);
    let r = e.stats();
    #[expect(clippy::cast_precision_loss, reason = "a ratio for the assertion")]
    let per = bytes as f64 / pages as f64;
    (per, s.delta_writes, s.delta_reads + r.delta_reads)
}

#[test]
fn deltas_write_fewer_bytes_per_page_write_and_read_back() {
    let (whole, d0, _) = update_run(false);
    let (delta, d1, reads) = update_run(true);
    eprintln!("device bytes per user page write: whole pages {whole:.0}, deltas {delta:.0}");
    assert_eq!(d0, 0, "no delta without the switch");
    assert!(d1 > 0, "deltas written");
    assert!(reads > 0, "misses rebuilt pages from chains");
    assert!(
        delta < 0.5 * whole,
        "deltas {delta:.0} B vs whole pages {whole:.0} B per page write"
    );
}

#[test]
fn crash_points_deltas_uncompressed() {
    harness::use_deltas();
    harness::crash_points(Compression::Off, false, 90);
}

#[test]
fn crash_points_deltas_lz4_gdt() {
    harness::use_deltas();
    harness::crash_points(Compression::Lz4, false, 40);
}

/// NoWA: crashes in the middle of group GC moving chains (compensation writes).
#[test]
fn crash_points_deltas_nowa() {
    harness::use_deltas();
    harness::crash_points(Compression::Zstd, false, 40);
}

/// Background GC on: rounds merge chains while the writer writes deltas.
#[test]
fn crash_points_deltas_background_gc() {
    harness::use_deltas();
    harness::crash_points(Compression::Off, true, 30);
}
