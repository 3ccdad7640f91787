//! Out-of-place mapping snapshots (issue 9 item 7): one bad block in the current snapshot
//! copy falls back to the older copy plus the zone roll-forward (the report names the damaged
//! structure); with both copies damaged the open fails naming the mapping snapshots (not the
//! superblock) and writes nothing.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{BlockDevice, MemDevice};
use nowa_engine::format::meta::MetaRecord;
use nowa_engine::format::superblock::Superblock;
use nowa_engine::{
    out_of_place_store, Config, Corruption, Durability, Engine, EngineError, OopConfig,
};
use std::sync::Arc;

const KEYS: u32 = 6000;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        durability: Durability::Async,
        ..Config::default()
    }
}

fn oop() -> OopConfig {
    OopConfig {
        zone_bytes: Some(128 << 10),
        background_gc: false,
        ..OopConfig::default()
    }
}

fn value(i: u32, v: u32) -> Vec<u8> {
    format!("{i:06}-{v:04}-{}", "y".repeat(60)).into_bytes()
}

fn image(d: &dyn BlockDevice) -> Vec<u8> {
    let mut v = vec![0u8; usize::try_from(d.geometry().capacity).unwrap()];
    d.read_at(0, &mut v).unwrap();
    v
}

/// The superblock copies (newest first).
fn superblocks(d: &dyn BlockDevice) -> Vec<Superblock> {
    let mut out: Vec<Superblock> = (0..2u64)
        .filter_map(|b| {
            let mut blk = vec![0u8; 4096];
            d.read_at(b * 4096, &mut blk).unwrap();
            Superblock::decode(&blk).ok()
        })
        .collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.seq));
    out
}

/// Device byte of the snapshot a superblock names.
fn snapshot_at(sb: &Superblock) -> u64 {
    let m = MetaRecord::decode(&sb.store_meta).unwrap();
    (m.meta_start + u64::from(m.copy) * m.meta_blocks) * 4096
}

/// A database with updates after two checkpoints, crashed (the WAL holds the last ones).
fn crashed() -> Arc<MemDevice> {
    let dev = Arc::new(MemDevice::new(24 << 20));
    let e = Engine::create_with_store(dev.clone(), cfg(), &out_of_place_store(oop())).unwrap();
    for v in 0..3 {
        for i in 0..KEYS {
            e.put(&i.to_be_bytes(), &value(i, v)).unwrap();
        }
        e.checkpoint().unwrap();
    }
    for i in (0..KEYS).step_by(7) {
        e.put_with(&i.to_be_bytes(), &value(i, 9), Durability::Sync)
            .unwrap();
    }
    drop(e);
    dev
}

fn check(e: &Engine) {
    for i in 0..KEYS {
        let want = value(i, if i % 7 == 0 { 9 } else { 2 });
        assert_eq!(e.get(&i.to_be_bytes()).unwrap(), Some(want), "key {i}");
    }
}

#[test]
fn damaged_current_snapshot_opens_from_the_older_one() {
    let dev = crashed();
    let sbs = superblocks(&*dev);
    assert_eq!(sbs.len(), 2);
    let at = snapshot_at(&sbs[0]);
    assert_ne!(at, snapshot_at(&sbs[1]), "the copies alternate");
    // The first block of the current copy's full snapshot (live entries only: it may be
    // one block).
    dev.write_at(at, &[0x5Au8; 4096]).unwrap();
    let e = Engine::open_with_store(dev.clone(), cfg(), &out_of_place_store(oop())).unwrap();
    let rep = e.recovery_report().unwrap().clone();
    assert!(
        matches!(
            rep.snapshot_fallback,
            Some(Corruption::MappingSnapshot { .. })
        ),
        "{rep:?}"
    );
    check(&e);
    e.put_with(b"after", b"fallback", Durability::Sync).unwrap();
    drop(e); // crash again: the new checkpoint pair must carry the database
    let e = Engine::open_with_store(dev.clone(), cfg(), &out_of_place_store(oop())).unwrap();
    assert_eq!(e.recovery_report().unwrap().snapshot_fallback, None);
    check(&e);
    assert_eq!(e.get(b"after").unwrap(), Some(b"fallback".to_vec()));
    e.close().unwrap();
}

#[test]
fn both_snapshots_damaged_is_an_error_naming_them() {
    let dev = crashed();
    for sb in superblocks(&*dev) {
        dev.write_at(snapshot_at(&sb), &[0x5Au8; 4096]).unwrap();
    }
    let before = image(&*dev);
    match Engine::open_with_store(dev.clone(), cfg(), &out_of_place_store(oop())) {
        Err(EngineError::Corrupt(Corruption::MappingSnapshots { current, older })) => {
            assert!(
                matches!(*current, Corruption::MappingSnapshot { .. }),
                "{current}"
            );
            assert!(
                matches!(*older, Corruption::MappingSnapshot { .. }),
                "{older}"
            );
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("opened with both snapshots damaged"),
    }
    assert!(image(&*dev) == before, "the refused open wrote");
}
