//! Write-back's WAL flushes without a flush mark (out of place; docs/design.md section 4).
//! A flush forced only by the WAL rule before a page write acknowledges no write, so it
//! writes no mark; media damage to such a tail is found at open instead by the store's
//! check that no page or delta on disk holds an LSN past the log's end (`PageAhead`). In
//! place every flush keeps its mark (the store cannot list its pages' LSNs at open). Crashes
//! at every kind of write (between an unmarked flush and its page write, and after) lose
//! nothing synced and never trip the check.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{BlockDevice, FaultConfig, FaultyDevice, MemDevice};
use nowa_engine::{
    in_place_store, out_of_place_store, Compression, Config, Durability, Engine, EngineError,
    OopConfig, RecordDamage, StoreBuilder,
};
use std::collections::BTreeMap;
use std::sync::Arc;

const BS: u64 = 4096;
const KEYS: u64 = 6000;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * BS,
        // No checkpoint pass while a test runs: the log keeps every record.
        wal_limit_bytes: Some(4 << 20),
        durability: Durability::Async,
        page_cleaner: false,
        ..Config::default()
    }
}

fn oop() -> impl StoreBuilder {
    out_of_place_store(OopConfig {
        zone_bytes: Some(256 << 10),
        compression: Compression::Lz4,
        deltas: true,
        ..OopConfig::default()
    })
}

fn key(k: u64) -> [u8; 8] {
    k.to_be_bytes()
}

/// Version `ver` of key `k`'s value (both readable back from it).
fn val(k: u64, ver: u64) -> Vec<u8> {
    let mut v = vec![u8::try_from(k % 251).unwrap(); 100];
    v[..8].copy_from_slice(&ver.to_le_bytes());
    v
}

fn ver_of(v: &[u8]) -> u64 {
    u64::from_le_bytes(v[..8].try_into().unwrap())
}

/// The n-th update's key: spread over every leaf, so evictions write leaves it changed.
fn op_key(n: u64) -> u64 {
    n.wrapping_mul(0x9E37_79B9_7F4A_7C15) % KEYS
}

fn load(e: &Engine) {
    for k in 0..KEYS {
        e.put(&key(k), &val(k, 0)).unwrap();
    }
    e.sync().unwrap();
}

/// Out of place, write-back's flushes write no mark: fewer marks than flushes, one per
/// sync at least; in place every flush is marked. (Fails with every flush marked.)
#[test]
fn write_back_flushes_write_no_flush_mark_out_of_place() {
    for (name, build, marked) in [
        (
            "out of place",
            Box::new(oop()) as Box<dyn StoreBuilder>,
            false,
        ),
        ("in place", Box::new(in_place_store()), true),
    ] {
        let dev: Arc<dyn BlockDevice> = Arc::new(MemDevice::new(32 << 20));
        let e = Engine::create_with_wal(dev, None, cfg(), build.as_ref()).unwrap();
        load(&e);
        let s0 = e.stats();
        for n in 0..3000 {
            e.put(&key(op_key(n)), &val(op_key(n), n + 1)).unwrap();
            if n % 500 == 499 {
                e.sync().unwrap();
            }
        }
        let s = e.stats();
        let (flushes, marks) = (s.wal_flushes - s0.wal_flushes, s.wal_marks - s0.wal_marks);
        assert!(
            s.eviction_page_writes > s0.eviction_page_writes,
            "{name}: evictions"
        );
        assert!(marks >= 6, "{name}: a mark per sync: {marks}");
        if marked {
            assert_eq!(marks, flushes, "{name}");
        } else {
            assert!(
                marks < flushes / 2,
                "{name}: {marks} marks, {flushes} flushes"
            );
        }
    }
}

/// Media damage to the log past the last flush mark (zeroed from the last synced LSN on),
/// while leaves holding changes logged there are on disk: the open refuses, naming a page
/// past the log's end. Without the check the open took the zeroed tail for a clean end and
/// the changes those pages hold were kept while the log records before them were lost.
#[test]
fn a_page_past_a_damaged_unmarked_tail_is_refused() {
    let dev = Arc::new(MemDevice::new(32 << 20));
    let e = Engine::create_with_store(dev.clone(), cfg(), &oop()).unwrap();
    load(&e);
    let vouched = e.wal_vouched_lsn();
    assert_eq!(vouched, e.wal_durable_lsn(), "a sync vouches for its flush");
    let s0 = e.stats();
    for n in 0..2000 {
        e.put(&key(op_key(n)), &val(op_key(n), n + 1)).unwrap();
    }
    let s = e.stats();
    assert!(s.eviction_page_writes > s0.eviction_page_writes + 100);
    assert!(
        // 2,000 updates log ~220 KB (format 7: ~113 bytes each): most of it flushed.
        e.wal_durable_lsn() > vouched + 32 * BS,
        "write-back flushed the log"
    );
    assert_eq!(e.wal_vouched_lsn(), vouched, "no mark since the sync");
    let l = e.layout();
    drop(e); // power loss: every write reached the memory device
    let size = (l.wal_blocks - 4) * BS;
    let log0 = l.wal_start * BS;
    let durable_pos = vouched % size;
    assert!(durable_pos + 80 * BS < size, "the log did not wrap");
    let zeros = vec![0u8; usize::try_from(size - durable_pos).unwrap()];
    dev.write_at(log0 + durable_pos, &zeros).unwrap();
    match Engine::open_with_store(dev, cfg(), &oop()) {
        Err(EngineError::WalDamaged { from, to, damage }) => {
            assert_eq!(from, vouched, "{damage}");
            let RecordDamage::PageAhead { lsn, .. } = damage else {
                panic!("{damage}")
            };
            assert!(lsn >= vouched && to == lsn + 1, "{lsn} {to}");
        }
        Err(other) => panic!("{other}"),
        Ok(e) => panic!("opened: {:?}", e.recovery_report()),
    }
}

type Dev = FaultyDevice<MemDevice>;

/// Updates from `from` until the device fails or `n` ran; syncs every 100. Returns the
/// versions acknowledged durable (at the last sync) and the last written per key.
fn run(e: &Engine, from: u64, n: u64, synced: &mut BTreeMap<u64, u64>) -> BTreeMap<u64, u64> {
    let mut written = synced.clone();
    for i in from..from + n {
        let k = op_key(i);
        if e.put(&key(k), &val(k, i + 1)).is_err() {
            return written;
        }
        written.insert(k, i + 1);
        if i % 100 == 99 {
            if e.sync().is_err() {
                return written;
            }
            synced.clone_from(&written);
        }
    }
    written
}

/// Every key reads a version at least its synced one and at most its last written one.
fn verify(e: &Engine, synced: &BTreeMap<u64, u64>, written: &BTreeMap<u64, u64>, at: u64) {
    for (k, lo) in synced {
        let v = e.get(&key(*k)).unwrap().unwrap();
        let ver = ver_of(&v);
        assert!(
            ver >= *lo && ver <= written[k] && v == val(*k, ver),
            "crash at write {at}: key {k} has version {ver}, synced {lo}"
        );
    }
}

fn fresh(seed: u64) -> (Arc<Dev>, BTreeMap<u64, u64>) {
    let dev = Arc::new(FaultyDevice::new(
        MemDevice::new(32 << 20),
        FaultConfig {
            seed,
            torn_write_prob: 0.5,
            bit_flip_read_prob: 0.0,
        },
    ));
    let e = Engine::create_with_store(dev.clone(), cfg(), &oop()).unwrap();
    load(&e);
    e.close().unwrap();
    (dev, (0..KEYS).map(|k| (k, 0)).collect())
}

/// A crash at every 7th device write of a run of updates with evictions (unmarked flushes,
/// the page writes after them, syncs' marked flushes): the open succeeds (no page is past
/// the end of an undamaged log), keeps every synced version, and a clean reopen after more
/// updates agrees.
#[test]
fn crashes_around_unmarked_flushes_lose_nothing_synced() {
    let (dev, mut synced) = fresh(u64::MAX);
    let e = Engine::open_with_store(dev.clone(), cfg(), &oop()).unwrap();
    let (w0, s0) = (dev.writes_issued(), e.stats());
    run(&e, 0, 600, &mut synced);
    let calls = dev.writes_issued() - w0;
    let s = e.stats();
    let (flushes, marks) = (s.wal_flushes - s0.wal_flushes, s.wal_marks - s0.wal_marks);
    assert!(flushes > marks + 5, "{flushes} flushes, {marks} marks");
    drop(e);
    for at in (1..calls).step_by(7) {
        let (dev, mut synced) = fresh(at);
        let e = Engine::open_with_store(dev.clone(), cfg(), &oop()).unwrap();
        dev.crash_after_writes(at);
        let written = run(&e, 0, 600, &mut synced);
        dev.power_loss();
        drop(e);
        dev.restart();
        let e = Engine::open_with_store(dev.clone(), cfg(), &oop())
            .unwrap_or_else(|err| panic!("crash at write {at}: {err}"));
        verify(&e, &synced, &written, at);
        let mut now: BTreeMap<u64, u64> = (0..KEYS)
            .map(|k| (k, ver_of(&e.get(&key(k)).unwrap().unwrap())))
            .collect();
        let written = run(&e, 1000, 80, &mut now);
        e.close().unwrap();
        let e = Engine::open_with_store(dev, cfg(), &oop()).unwrap();
        verify(&e, &written, &written, at);
    }
}
