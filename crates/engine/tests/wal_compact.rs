//! WAL format 7 (docs/design.md section 4): groups of entries with one header and one
//! checksum per group flush, update keys sharing their prefix with the group's previous
//! key, and group flushes that end on a block boundary (a pad) so that no log block is
//! written twice. Crash safety: crashes after padded flushes, over a log that wrapped many
//! times, lose nothing acknowledged and read as a clean end; a torn group is lost whole.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;

use nowa_device::MemDevice;
use nowa_engine::{Config, Durability, Engine, WalStop};
use std::sync::Arc;

fn cfg() -> Config {
    Config {
        durability: Durability::Async,
        ..common::log_only_cfg()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("k{:07}", i % 400).into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    let mut v = vec![u8::try_from(i % 251).unwrap(); 116];
    v[..4].copy_from_slice(&i.to_le_bytes());
    v
}

/// An update of an 8-byte key with a 116-byte value logs 124 bytes inside a group: the
/// entry's length and tag (2), the leaf's pid (1), the distance to its previous LSN (2), the
/// key bytes shared with the previous update (1: 7 of "k0000001"), the rest's length (1),
/// the rest (1) and the value. The first update after a flush begins a group: its 17-byte
/// header and all 8 key bytes. Format 6 logged 145 bytes per update, format 5 165.
#[test]
fn an_update_logs_its_value_and_8_bytes_in_a_group() {
    let e = Engine::create(Arc::new(MemDevice::new(8 << 20)), cfg()).unwrap();
    e.put(&key(1), &value(1)).unwrap();
    let before = e.stats().wal_record_bytes;
    e.put(&key(2), &value(2)).unwrap();
    let logged = e.stats().wal_record_bytes - before;
    assert_eq!(logged, 2 + 1 + 2 + 1 + 1 + 1 + 116, "format 6: 145");
    e.sync().unwrap();
    let before = e.stats().wal_record_bytes;
    e.put(&key(3), &value(3)).unwrap();
    let logged = e.stats().wal_record_bytes - before;
    assert_eq!(
        logged,
        17 + 2 + 1 + 1 + 2 + 1 + 1 + 8 + 116,
        "a group's first update"
    );
}

/// Groups of 200 updates (29 KB) each end with a pad to their block's end, so a flush writes
/// its records, its pad and its flush mark, and never rewrites the block the previous flush
/// ended in (format 5 rewrote it: ~4 KiB more per flush).
#[test]
fn a_group_flush_writes_no_block_twice() {
    let e = Engine::create(Arc::new(MemDevice::new(8 << 20)), cfg()).unwrap();
    for i in 0..400 {
        e.put(&key(i), &value(i)).unwrap();
    }
    e.sync().unwrap();
    let s0 = e.stats();
    for round in 0..12u32 {
        for i in 0..200 {
            e.put(&key(i * 7 + round), &value(round * 1000 + i))
                .unwrap();
        }
        e.sync().unwrap();
    }
    let s = e.stats();
    let flushes = s.wal_flushes - s0.wal_flushes;
    let device = s.wal_device_bytes - s0.wal_device_bytes;
    let logged = (s.wal_record_bytes - s0.wal_record_bytes) + (s.wal_pad_bytes - s0.wal_pad_bytes);
    assert!(flushes >= 12, "a flush per group at least: {flushes}");
    // Records and pads, one mark block per flush, and at most one group whose end fell too
    // close to its block's end for a pad header (then its block is written again).
    assert!(
        device <= logged + flushes * 4096 + 4096,
        "{device} device bytes for {logged} logged in {flushes} flushes"
    );
    assert!(s.wal_pad_bytes > s0.wal_pad_bytes, "{s:?}");
}

/// Crashes right after padded group flushes, over a log that wrapped many times (whatever an
/// older lap left after a block-aligned end must read as a clean end): every synced update
/// survives, no bad record is reported.
#[test]
fn crashes_after_padded_flushes_lose_nothing_synced() {
    let dev = Arc::new(MemDevice::new(8 << 20));
    let cfg = Config {
        wal_limit_bytes: Some(128 << 10),
        wal_region_bytes: Some(256 << 10),
        ..cfg()
    };
    let mut synced: std::collections::BTreeMap<Vec<u8>, Vec<u8>> =
        std::collections::BTreeMap::new();
    let mut n = 0u32;
    for round in 0..5 {
        let e = if round == 0 {
            Engine::create(dev.clone(), cfg.clone()).unwrap()
        } else {
            Engine::open(dev.clone(), cfg.clone()).unwrap()
        };
        if let Some(rep) = e.recovery_report() {
            assert_eq!(
                (rep.wal_stop, rep.bad_wal_records),
                (WalStop::Clean, 0),
                "round {round}: {rep:?}"
            );
        }
        for (k, v) in &synced {
            assert_eq!(e.get(k).unwrap().as_ref(), Some(v), "round {round}");
        }
        for group in 0..40 {
            for _ in 0..(150 + group % 7) {
                e.put(&key(n), &value(n)).unwrap();
                synced.insert(key(n), value(n));
                n += 1;
            }
            e.sync().unwrap();
        }
        assert!(e.stats().checkpoints > 3);
        // Unsynced puts after the last flush may be lost: leave none.
        drop(e); // crash
    }
}

/// A padded group flush ends on a block boundary, so the next group starts on a fresh block;
/// a crash tearing that block inside its entries (1 KiB of it new, the rest the old bytes)
/// is a torn tail at the group's start at open: the whole group is lost (none of it was
/// acknowledged), every synced update survives. (Without pads the durable end lies inside
/// a block the next flush rewrites: the first assertion fails. Format 6 checked each
/// record and replayed the records before the tear.)
#[test]
fn a_torn_first_block_after_a_padded_flush_is_a_torn_tail() {
    let dev = Arc::new(common::CrashDevice::new(8 << 20, 3));
    let e = Engine::create(dev.clone(), cfg()).unwrap();
    for i in 0..400 {
        e.put(&key(i), &value(i)).unwrap();
    }
    e.sync().unwrap();
    let durable = e.wal_durable_lsn();
    assert_eq!(durable % 4096, 0, "a padded flush ends on a block boundary");
    let l = e.layout();
    let at = l.wal_start * 4096 + durable % ((l.wal_blocks - 4) * 4096);
    dev.tear_write_in(at, at + 4096, 1024);
    for i in 400..600 {
        e.put(&key(i), &value(i)).unwrap();
    }
    assert!(e.sync().is_err(), "the torn flush is not acknowledged");
    drop(e);
    let e = Engine::open(common::device(&dev.durable_image()), cfg()).unwrap();
    let rep = e.recovery_report().unwrap();
    assert!(
        matches!(rep.wal_stop, WalStop::TornTail { lsn, .. } if lsn == durable),
        "{rep:?}"
    );
    // Keys 0..200 were updated again by the torn group: none of it is replayed, every key
    // keeps its synced value.
    for i in 0..400 {
        assert_eq!(e.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    assert_eq!(rep.bad_wal_records, 1);
}
