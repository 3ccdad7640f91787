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

/// What one update run measured.
struct Run {
    /// User device bytes per user page write.
    per_write: f64,
    delta_writes: u64,
    /// Payload bytes of the deltas written.
    delta_bytes: u64,
    /// Delta chain reads (before and after the reopen).
    delta_reads: u64,
    /// Misses on chained pages, and those the delta cache served (before the reopen).
    chain_misses: u64,
    cache_hits: u64,
}

/// Same-size value updates on a pool much smaller than the data (values of random bytes,
/// or `compressible`: one byte repeated), and the store checked after reopen.
fn update_run(deltas: bool, compressible: bool, compression: Compression) -> Run {
    update_run_with(deltas, compressible, compression, None, 0)
}

/// How a one-record-per-write-back run is set up.
#[derive(Clone, Copy)]
struct OnePerPage {
    gdt: bool,
    packing: bool,
}

/// [`update_run`]; `one_per_page`: keys 37 apart (a leaf holds fewer), so every write-back
/// of a leaf carries one changed record, and no merging (every delta holds one write-back).
fn update_run_with(
    deltas: bool,
    compressible: bool,
    compression: Compression,
    one_per_page: Option<OnePerPage>,
    delta_cache_bytes: u64,
) -> Run {
    let ocfg = OopConfig {
        deltas,
        gdt: one_per_page.is_some_and(|o| o.gdt),
        packing: one_per_page.is_none_or(|o| o.packing),
        delta_merge: if one_per_page.is_some() {
            0
        } else {
            OopConfig::default().delta_merge
        },
        compression,
        background_gc: false,
        zone_bytes: Some(128 << 10),
        open_zones: 2,
        delta_cache_bytes,
        ..OopConfig::default()
    };
    let dev = Arc::new(MemDevice::new(16 << 20));
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg, slot.clone());
    let e = Engine::create_with_store(dev.clone(), small_engine_cfg(), &b).unwrap();
    let mut model = BTreeMap::new();
    let val = |k: u64, v: u64| -> Vec<u8> {
        let mut x = (k << 20 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        if compressible {
            return vec![x.to_le_bytes()[3]; 100];
        }
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
        let k = if one_per_page.is_some() {
            (i * 37) % 6000
        } else {
            (i.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 17) % 6000
        };
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
    Run {
        per_write: per,
        delta_writes: s.delta_writes,
        delta_bytes: s.delta_bytes,
        delta_reads: s.delta_reads + r.delta_reads,
        chain_misses: s.delta_chain_misses,
        cache_hits: s.delta_cache_hits,
    }
}

#[test]
fn deltas_write_fewer_bytes_per_page_write_and_read_back() {
    let whole = update_run(false, false, Compression::Off);
    let delta = update_run(true, false, Compression::Off);
    let (w, d) = (whole.per_write, delta.per_write);
    eprintln!("device bytes per user page write: whole pages {w:.0}, deltas {d:.0}");
    assert_eq!(whole.delta_writes, 0, "no delta without the switch");
    assert!(delta.delta_writes > 0, "deltas written");
    assert!(delta.delta_reads > 0, "misses rebuilt pages from chains");
    assert!(
        d < 0.5 * w,
        "deltas {d:.0} B vs whole pages {w:.0} B per page write"
    );
}

/// The delta cache (docs/design.md 14.10): a miss on a chained page whose cumulative change
/// is cached reads the base alone; every key still reads back (the rebuilt pages pass their
/// checksums), before and after a reopen (which starts with an empty cache).
#[test]
fn the_delta_cache_serves_chained_misses_from_the_base() {
    let plain = update_run(true, false, Compression::Off);
    let cached = update_run_with(true, false, Compression::Off, None, 4 << 20);
    eprintln!(
        "chained misses {} / {}, cache hits {} / {}, delta reads {} / {}",
        plain.chain_misses,
        cached.chain_misses,
        plain.cache_hits,
        cached.cache_hits,
        plain.delta_reads,
        cached.delta_reads
    );
    assert_eq!(plain.cache_hits, 0, "no cache without memory for it");
    assert!(plain.chain_misses > 0 && cached.chain_misses > 0);
    assert!(
        cached.cache_hits * 2 > cached.chain_misses,
        "most chained misses served by a cache larger than the chains"
    );
    assert!(
        cached.delta_reads * 2 < plain.delta_reads,
        "delta reads {} with the cache vs {} without",
        cached.delta_reads,
        plain.delta_reads
    );
}

/// Average payload bytes per delta.
fn per_delta(r: &Run) -> f64 {
    assert!(r.delta_writes > 0, "deltas written");
    #[expect(clippy::cast_precision_loss, reason = "a ratio for the assertion")]
    let per = r.delta_bytes as f64 / r.delta_writes as f64;
    per
}

/// Deltas on, random values, no compression, one changed record per write-back.
fn one_per_page(gdt: bool, packing: bool) -> Run {
    update_run_with(
        true,
        false,
        Compression::Off,
        Some(OnePerPage { gdt, packing }),
        0,
    )
}

/// A 100-byte value overwritten in place costs a delta of its bytes, the header fields that
/// changed and the chain refs: version 1's 64-byte chunks cost at least 16 + 10 + 2 x 64
/// (header) + 2 x 64 (the value) = 282 bytes per delta. One changed record per write-back,
/// no merging.
#[test]
fn a_delta_carries_the_changed_bytes_not_chunks() {
    let r = one_per_page(false, true);
    let per = per_delta(&r);
    eprintln!("{} deltas, {per:.0} payload bytes each", r.delta_writes);
    assert!(per < 250.0, "{per:.0} payload bytes per delta");
}

/// GDT stamps a 32-byte write history into every page copy; a delta carries it only when it
/// is the first over its base (the base may hold a stamp the buffer never saw), so GDT adds
/// far less than 32 bytes per delta on average.
#[test]
fn gdt_history_is_not_in_every_delta() {
    let plain = per_delta(&one_per_page(false, true));
    let gdt = per_delta(&one_per_page(true, true));
    eprintln!("payload bytes per delta: without GDT {plain:.0}, with GDT {gdt:.0}");
    assert!(gdt < plain + 16.0, "{gdt:.0} vs {plain:.0}");
}

/// Without packing a delta would take a block of its own: deltas stay off (nowa-vopr seed
/// 24 ran out of zones with deltas in unpacked slots), and the run still reads back.
#[test]
fn no_deltas_without_packing() {
    let ocfg = OopConfig {
        deltas: true,
        packing: false,
        zone_bytes: Some(128 << 10),
        ..OopConfig::default()
    };
    let dev = Arc::new(MemDevice::new(16 << 20));
    let b = builder(ocfg, Arc::new(Mutex::new(None)));
    let err = Engine::create_with_store(dev, small_engine_cfg(), &b)
        .err()
        .expect("deltas without packing accepted");
    assert!(err.to_string().contains("need page packing"), "{err}");
}

/// With compression on, a delta's bytes are LZ4-compressed: compressible values give
/// smaller deltas than random ones (version 1 stored them raw: the same size).
#[test]
fn compressible_deltas_are_compressed() {
    let random = per_delta(&update_run(true, false, Compression::Lz4));
    let squeezed = per_delta(&update_run(true, true, Compression::Lz4));
    eprintln!("payload bytes per delta: random values {random:.0}, compressible {squeezed:.0}");
    assert!(squeezed < 0.6 * random, "{squeezed:.0} vs {random:.0}");
}

#[test]
fn crash_points_deltas_uncompressed() {
    let mode = harness::Mode {
        deltas: true,
        ..harness::Mode::plain(Compression::Off, false)
    };
    harness::crash_points(mode, 90);
}

#[test]
fn crash_points_deltas_lz4_gdt() {
    let mode = harness::Mode {
        deltas: true,
        ..harness::Mode::plain(Compression::Lz4, false)
    };
    harness::crash_points(mode, 40);
}

/// NoWA: crashes in the middle of group GC moving chains (compensation writes).
#[test]
fn crash_points_deltas_nowa() {
    let mode = harness::Mode {
        deltas: true,
        ..harness::Mode::plain(Compression::Zstd, false)
    };
    harness::crash_points(mode, 40);
}

/// Background GC on: rounds merge chains while the writer writes deltas.
#[test]
fn crash_points_deltas_background_gc() {
    let mode = harness::Mode {
        deltas: true,
        ..harness::Mode::plain(Compression::Off, true)
    };
    harness::crash_points(mode, 30);
}
