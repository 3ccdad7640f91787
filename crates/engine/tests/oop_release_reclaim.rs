//! A page the tree freed is released to the out-of-place store after a checkpoint: its copy
//! becomes garbage at once, but the checkpoint's mapping snapshot (taken just before) still
//! names it. When DB GC then empties and trims that zone and the power fails before the next
//! snapshot, the open starts from a snapshot entry into a zone that no longer holds it. The
//! open must drop such entries (the page is free), not count them as valid data: the open
//! failed with `ZoneOverfull` here, and in nowa-vopr (seed 1,077,914) the first DB GC of
//! such a zone with `ValidCount`.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

#[path = "common/oop_store.rs"]
mod oop_store;

use nowa_device::{FaultConfig, FaultyDevice, MemDevice, TrimMode};
use nowa_engine::{Compression, Config, Durability, Engine, OopConfig};
use nowa_logspace::PolicyKind;
use oop_store::{builder, Slot};
use parking_lot::Mutex;
use std::sync::Arc;

const KEYS: u32 = 6000;
/// Keys from here on stay; the others are deleted (their leaves freed).
const KEEP: u32 = 3000;

fn put(e: &Engine, k: u32, round: u8) {
    e.put_with(&k.to_be_bytes(), &[round; 100], Durability::Sync)
        .unwrap();
}

#[test]
fn entries_into_zones_reclaimed_after_the_snapshot_are_dropped() {
    let dev = Arc::new(FaultyDevice::new(
        MemDevice::new(4 << 20),
        FaultConfig {
            seed: 1,
            torn_write_prob: 0.0,
            bit_flip_read_prob: 0.0,
        },
    ));
    dev.set_trim_mode(TrimMode::Zero);
    let o = OopConfig {
        background_gc: false,
        zone_bytes: Some(32 << 10),
        compression: Compression::Off,
        gc_victim: Some(PolicyKind::Greedy),
        gc_garbage_proportion: Some(0.15),
        ..OopConfig::default()
    };
    let cfg = Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(1 << 20),
        ..Config::default()
    };
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(o, slot.clone());
    let e = Engine::create_with_store(dev.clone(), cfg.clone(), &b).unwrap();
    for k in 0..KEYS {
        put(&e, k, 1);
    }
    e.checkpoint().unwrap();
    // Free most leaves (merges), then a checkpoint releases them after its snapshot.
    for k in 0..KEEP {
        e.delete_with(&k.to_be_bytes(), Durability::Sync).unwrap();
    }
    e.checkpoint().unwrap();
    // Writes (evictions) run the DB GC (garbage-proportion trigger): the power fails right
    // after it trimmed a zone, before the next checkpoint.
    let (reclaimed, ckpts) = (e.stats().zones_reclaimed, e.stats().checkpoints);
    let mut round = 2u8;
    while e.stats().zones_reclaimed == reclaimed {
        for k in KEEP..KEYS {
            put(&e, k, round);
            if e.stats().zones_reclaimed > reclaimed {
                break;
            }
        }
        round += 1;
        assert!(round < 50, "GC ran after the release");
    }
    assert_eq!(
        e.stats().checkpoints,
        ckpts,
        "no checkpoint since the release"
    );
    dev.power_loss();
    drop(e);
    dev.restart();
    let e = Engine::open_with_store(dev.clone(), cfg, &b).unwrap();
    slot.lock().clone().unwrap().check_consistency().unwrap();
    // GC over every zone: rewrite everything twice.
    for round in 60..62 {
        for k in KEEP..KEYS {
            put(&e, k, round);
        }
    }
    for k in 0..KEYS {
        let want = (k >= KEEP).then(|| vec![61u8; 100]);
        assert_eq!(e.get(&k.to_be_bytes()).unwrap(), want, "key {k}");
    }
    slot.lock().clone().unwrap().check_consistency().unwrap();
    e.close().unwrap();
}
