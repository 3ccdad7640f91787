//! Incremental mapping snapshots (issue 16 item 4): a checkpoint writes only the mapping
//! entries changed since the copy's previous snapshot (plus a full snapshot every
//! `snapshot_full_every`-th time); crashes at seeded device writes while checkpoints write
//! deltas and full snapshots recover every acknowledged write; damage to the current record's
//! delta prefix falls back to the older record.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{BlockDevice, MemDevice};
use nowa_engine::format::meta::MetaRecord;
use nowa_engine::format::superblock::Superblock;
use nowa_engine::{Config, Corruption, Durability, Engine, OopConfig};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

#[path = "common/oop_crash_harness.rs"]
mod harness;
#[path = "common/oop_store.rs"]
mod oop_store;

const KEYS: u64 = 4000;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(512 << 10),
        durability: Durability::Sync,
        ..Config::default()
    }
}

fn ocfg(full_every: u32) -> OopConfig {
    OopConfig {
        zone_bytes: Some(64 << 10),
        open_zones: 2,
        background_gc: false,
        snapshot_full_every: full_every,
        ..OopConfig::default()
    }
}

fn val(k: u64, v: u64) -> Vec<u8> {
    val_len(k, v, 40)
}

fn val_len(k: u64, v: u64, len: usize) -> Vec<u8> {
    format!(
        "{k:08}-{v:06}-{}",
        "z".repeat(len + usize::try_from(k % 40).unwrap_or(0))
    )
    .into_bytes()
}

type Model = BTreeMap<u64, Vec<u8>>;

fn load(e: &Engine, m: &mut Model) {
    for k in 0..KEYS {
        let v = val(k, 0);
        e.put_with(&k.to_be_bytes(), &v, Durability::Async).unwrap();
        m.insert(k, v);
    }
}

/// Newest superblock's metadata record.
fn current_record(d: &dyn BlockDevice) -> MetaRecord {
    let mut best: Option<Superblock> = None;
    for b in 0..2u64 {
        let mut blk = vec![0u8; 4096];
        d.read_at(b * 4096, &mut blk).unwrap();
        if let Ok(s) = Superblock::decode(&blk) {
            if best.as_ref().is_none_or(|x| s.seq > x.seq) {
                best = Some(s);
            }
        }
    }
    MetaRecord::decode(&best.unwrap().store_meta).unwrap()
}

#[test]
fn deltas_write_only_the_changed_entries() {
    let dev = Arc::new(MemDevice::new(32 << 20));
    let slot: oop_store::Slot = Arc::new(Mutex::new(None));
    let b = oop_store::builder(ocfg(64), slot);
    let e = Engine::create_with_store(dev.clone(), cfg(), &b).unwrap();
    let mut m = Model::new();
    // Large values: thousands of pages, a full snapshot of several blocks.
    for k in 0..KEYS {
        let v = val_len(k, 0, 900);
        e.put_with(&k.to_be_bytes(), &v, Durability::Async).unwrap();
        m.insert(k, v);
    }
    e.checkpoint().unwrap();
    e.checkpoint().unwrap();
    let s0 = e.stats();
    let mapped = s0.mapping_pages;
    assert!(mapped > 1000, "{s0:?}");
    // A full snapshot of `mapped` entries takes this many bytes.
    let full = (mapped * 16).div_ceil(4096) * 4096;
    // Few changed pages per checkpoint: each delta is one block.
    for round in 0..6u64 {
        for k in (0..KEYS).step_by(997) {
            let v = val_len(k, round + 1, 900);
            e.put(&k.to_be_bytes(), &v).unwrap();
            m.insert(k, v);
        }
        e.checkpoint().unwrap();
    }
    let s1 = e.stats();
    let cps = s1.checkpoints - s0.checkpoints;
    let bytes = s1.meta_store_bytes - s0.meta_store_bytes;
    let fulls = s1.full_snapshots - s0.full_snapshots;
    eprintln!("{cps} checkpoints, {fulls} full, {bytes} snapshot bytes, full = {full}");
    assert!(cps >= 6 && fulls == 0, "{s1:?}");
    assert!(
        bytes < full * 2 + cps * 4096 * 2,
        "{bytes} bytes over {cps} checkpoints"
    );
    assert!(bytes / cps < full, "deltas smaller than a full snapshot");
    let ram_per_page = s1.mapping_ram_bytes as f64 / s1.mapping_pages as f64;
    assert!(
        ram_per_page < 16.0,
        "{ram_per_page} bytes of RAM per mapped page"
    );
    let rec = current_record(&*dev);
    assert!(rec.deltas > 0 && rec.delta_blocks > 0, "{rec:?}");
    drop(e); // crash: the mapping comes from a full snapshot and its deltas
    let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
    oop_store::assert_model(&e, &m);
    e.close().unwrap();
}

#[test]
fn damaged_delta_prefix_falls_back_to_the_older_record() {
    let dev = Arc::new(MemDevice::new(16 << 20));
    let slot: oop_store::Slot = Arc::new(Mutex::new(None));
    let b = oop_store::builder(ocfg(64), slot);
    let e = Engine::create_with_store(dev.clone(), cfg(), &b).unwrap();
    let mut m = Model::new();
    load(&e, &mut m);
    for round in 0..5u64 {
        for k in (0..KEYS).step_by(501) {
            let v = val(k, round + 1);
            e.put(&k.to_be_bytes(), &v).unwrap();
            m.insert(k, v);
        }
        e.checkpoint().unwrap();
    }
    drop(e);
    let rec = current_record(&*dev);
    assert!(rec.delta_blocks > 0, "{rec:?}");
    let at = (rec.meta_start + u64::from(rec.copy) * rec.meta_blocks + rec.full_blocks) * 4096;
    dev.write_at(at, &[0xA5u8; 4096]).unwrap();
    let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
    let rep = e.recovery_report().unwrap().clone();
    assert!(
        matches!(
            rep.snapshot_fallback,
            Some(Corruption::MappingSnapshot { .. })
        ),
        "{rep:?}"
    );
    oop_store::assert_model(&e, &m);
    e.close().unwrap();
    let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
    assert_eq!(e.recovery_report().unwrap().snapshot_fallback, None);
    oop_store::assert_model(&e, &m);
}

/// The crash scenario: updates with a checkpoint every 40 operations (deltas, a full snapshot
/// every 3rd per copy) on a device small enough for GC.
fn crash_scenario() -> harness::Scenario {
    harness::Scenario {
        cfg: cfg(),
        ocfg: ocfg(3),
        device_bytes: 6 << 20,
        zero_trims: false,
        keys: KEYS,
        key: harness::key_u64,
        val,
        op_key: |i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % KEYS,
        ops: 1200,
        checkpoint_every: Some(40),
        after: (50_000, 200),
    }
}

/// Crashes at seeded device writes (torn or dropped, or a power loss between operations; a
/// second crash inside recovery for every 4th seed) while checkpoints write mapping deltas
/// and full snapshots: every acknowledged write must be there after recovery.
#[test]
fn crashes_while_checkpoints_write_deltas() {
    let sc = crash_scenario();
    let (calls, s0, s) = sc.calibrate();
    assert!(s.zones_reclaimed > 0, "GC must run: {s:?}");
    assert!(
        s.checkpoints - s0.checkpoints >= 30 && s.full_snapshots - s0.full_snapshots < 30,
        "deltas must be written: {s:?}"
    );
    let seeds: u64 = std::env::var("NOWA_CRASH_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    eprintln!(
        "{calls} device writes per run, {} checkpoints, {} full snapshots; {seeds} seeds (NOWA_CRASH_SEEDS)",
        s.checkpoints - s0.checkpoints,
        s.full_snapshots - s0.full_snapshots
    );
    sc.crash_seeds(seeds, calls, &mut |_| {});
}
