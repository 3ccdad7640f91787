//! Incremental mapping snapshots (issue 16 item 4): a checkpoint writes only the mapping
//! entries changed since the copy's previous snapshot (plus a full snapshot every
//! `snapshot_full_every`-th time); crashes at seeded device writes while checkpoints write
//! deltas and full snapshots recover every acknowledged write; damage to the current record's
//! delta prefix falls back to the older record.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{BlockDevice, FaultConfig, FaultyDevice, MemDevice};
use nowa_engine::format::meta::MetaRecord;
use nowa_engine::format::superblock::Superblock;
use nowa_engine::{Config, Corruption, Durability, Engine, OopConfig};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

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

/// One seeded crash run: updates with a checkpoint every 40 operations (deltas, a full
/// snapshot every 3rd per copy), a crash at a seeded device write (torn or dropped), an
/// optional second crash inside recovery; then every acknowledged write must be there.
fn crash_run(seed: u64, calls: u64) {
    let dev = Arc::new(FaultyDevice::new(
        MemDevice::new(6 << 20),
        FaultConfig {
            seed,
            torn_write_prob: 0.5,
            bit_flip_read_prob: 0.0,
        },
    ));
    let slot: oop_store::Slot = Arc::new(Mutex::new(None));
    let b = oop_store::builder(ocfg(3), slot.clone());
    let e = Engine::create_with_store(dev.clone(), cfg(), &b).unwrap();
    let mut m = Model::new();
    load(&e, &mut m);
    e.checkpoint().unwrap();
    let mut x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
    x ^= x >> 29;
    dev.crash_after_writes(1 + x % calls);
    let mut inflight = None;
    for i in 0..1200u64 {
        let k = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % KEYS;
        let v = val(k, i + 1);
        if e.put(&k.to_be_bytes(), &v).is_err() {
            inflight = Some((k, v));
            break;
        }
        m.insert(k, v);
        if i % 40 == 39 && e.checkpoint().is_err() {
            break;
        }
    }
    drop(e);
    dev.restart();
    if seed % 4 == 0 {
        dev.crash_after_writes(1 + (x >> 7) % 30);
        let _ = Engine::open_with_store(dev.clone(), cfg(), &b);
        dev.restart();
    }
    let e = Engine::open_with_store(dev.clone(), cfg(), &b)
        .unwrap_or_else(|err| panic!("seed {seed}: open failed: {err}"));
    slot.lock()
        .as_ref()
        .unwrap()
        .check_consistency()
        .unwrap_or_else(|err| panic!("seed {seed}: {err}"));
    for (k, v) in &m {
        let got = e.get(&k.to_be_bytes()).unwrap();
        let ok = got.as_ref() == Some(v)
            || inflight
                .as_ref()
                .is_some_and(|(ik, iv): &(u64, Vec<u8>)| ik == k && got.as_ref() == Some(iv));
        assert!(ok, "seed {seed}: key {k} lost or wrong");
    }
    e.close().unwrap();
}

#[test]
fn crashes_while_checkpoints_write_deltas() {
    // Calibrate the device writes of a whole run.
    let dev = Arc::new(FaultyDevice::new(
        MemDevice::new(6 << 20),
        FaultConfig {
            seed: 1,
            torn_write_prob: 0.0,
            bit_flip_read_prob: 0.0,
        },
    ));
    let b = oop_store::builder(ocfg(3), Arc::new(Mutex::new(None)));
    let e = Engine::create_with_store(dev.clone(), cfg(), &b).unwrap();
    let mut m = Model::new();
    load(&e, &mut m);
    e.checkpoint().unwrap();
    let w0 = dev.writes_issued();
    let s0 = e.stats();
    for i in 0..1200u64 {
        let k = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % KEYS;
        e.put(&k.to_be_bytes(), &val(k, i + 1)).unwrap();
        if i % 40 == 39 {
            e.checkpoint().unwrap();
        }
    }
    let calls = dev.writes_issued() - w0;
    let s = e.stats();
    assert!(s.zones_reclaimed > 0, "GC must run: {s:?}");
    assert!(
        s.checkpoints - s0.checkpoints >= 30 && s.full_snapshots - s0.full_snapshots < 30,
        "deltas must be written: {s:?}"
    );
    drop(e);
    let seeds: u64 = std::env::var("NOWA_CRASH_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    eprintln!(
        "{calls} device writes per run, {} checkpoints, {} full snapshots; {seeds} seeds (NOWA_CRASH_SEEDS)",
        s.checkpoints - s0.checkpoints,
        s.full_snapshots - s0.full_snapshots
    );
    for seed in 0..seeds {
        crash_run(seed, calls);
    }
}
