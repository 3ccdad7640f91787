//! Media damage to the last acknowledged flush, then the next flush torn over the block
//! after it (vopr seed 2501). Format 4 kept the flush mark in that block: the torn
//! overwrite destroyed it, nothing vouched for the acknowledged tail, and the open called
//! the damage a torn tail, dropping the acknowledged put silently. Format 5 keeps the marks
//! outside the log (`format::mark`): the open refuses with `WalDamaged`, and without the
//! damage the torn flush loses nothing acknowledged (no false alarm). A mark that breaks
//! the format's invariants (found in the other slot of its pair) is refused by name.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;

use common::{device, image, CrashDevice};
use nowa_device::MemDevice;
use nowa_engine::format::superblock::Superblock;
use nowa_engine::{Config, Corruption, Engine, EngineError, FlushMarkDamage, WalStop};
use std::sync::Arc;

const CAP: u64 = 4 << 20;
const BS: u64 = 4096;

fn cfg() -> Config {
    Config {
        seed: Some(2501),
        ..common::log_only_cfg()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:05}").into_bytes()
}

fn value(i: u32, len: usize) -> Vec<u8> {
    let mut v = format!("value-{i:05}-").into_bytes();
    v.resize(len, b'x');
    v
}

/// A crash image after: puts acknowledged up to one whose end lies in the last 1,400 bytes
/// of its block; then a put whose flush crosses into the next block, torn there (the block
/// format 4's mark held). Returns (image, acknowledged keys, LSN range of the last
/// acknowledged put, device byte of LSN 0 of the log).
fn torn_after_the_last_acknowledged_flush() -> (Vec<u8>, u32, (u64, u64), u64) {
    let dev = Arc::new(CrashDevice::new(CAP, 7));
    let e = Engine::create(dev.clone(), cfg()).unwrap();
    let l = e.layout();
    let mut i = 0u32;
    let mut last = (0, 0);
    while i < 20 || last.1 % BS < BS - 1400 {
        let before = e.wal_durable_lsn();
        e.put(&key(i), &value(i, 100)).unwrap();
        last = (before, e.wal_durable_lsn());
        i += 1;
    }
    let log0 = l.wal_start * BS;
    // The log has not wrapped: LSN x lives at device byte log0 + x, in either format.
    assert!(last.1 + 2 * BS < (l.wal_blocks - 4) * BS, "{last:?} {l:?}");
    let next_block = last.1 / BS * BS + BS;
    dev.tear_write_in(log0 + next_block, log0 + next_block + BS, 512);
    let torn = e.put(&key(i), &value(i, 1500));
    assert!(torn.is_err(), "the torn flush must not be acknowledged");
    assert!(dev.is_powered_off());
    drop(e);
    (dev.durable_image(), i, last, log0)
}

#[test]
fn a_torn_flush_after_the_last_acknowledged_one_loses_nothing_acknowledged() {
    let (img, acked, _, _) = torn_after_the_last_acknowledged_flush();
    let e = Engine::open(device(&img), cfg()).unwrap();
    let rep = e.recovery_report().unwrap().clone();
    assert!(
        matches!(rep.wal_stop, WalStop::Clean | WalStop::TornTail { .. }),
        "{rep:?}"
    );
    for i in 0..acked {
        assert_eq!(e.get(&key(i)).unwrap(), Some(value(i, 100)), "key {i}");
    }
    assert_eq!(
        e.get(&key(acked)).unwrap(),
        None,
        "the torn put was never acknowledged"
    );
}

#[test]
fn damage_to_the_last_acknowledged_flush_is_refused_after_a_torn_flush_over_its_mark() {
    let (mut img, acked, (from, to), log0) = torn_after_the_last_acknowledged_flush();
    let lsn = (from + to) / 2;
    img[usize::try_from(log0 + lsn).unwrap()] ^= 0x10;
    match Engine::open(device(&img), cfg()) {
        Err(EngineError::WalDamaged { from: f, to: t, .. }) => {
            assert!(
                f <= lsn && lsn < t,
                "[{f}, {t}) names the damaged LSN {lsn}"
            );
            assert!(t >= to, "[{f}, {t}) covers the acknowledged end {to}");
        }
        Ok(e) => {
            let rep = e.recovery_report().unwrap().clone();
            let got = e.get(&key(acked - 1)).unwrap();
            panic!(
                "opened ({:?}): acknowledged put {} reads {:?}",
                rep.wal_stop,
                acked - 1,
                got.map(|v| v.len())
            );
        }
        Err(other) => panic!("refused for another reason: {other}"),
    }
}

#[test]
fn a_flush_mark_in_the_wrong_slot_is_refused_by_name() {
    let dev = Arc::new(MemDevice::new(CAP));
    let e = Engine::create(dev.clone(), cfg()).unwrap();
    for i in 0..5 {
        e.put(&key(i), &value(i, 100)).unwrap();
    }
    let l = e.layout();
    drop(e); // crash: five flushes or more, so both slots of the pair hold a mark
    let mut img = image(&*dev);
    let sb = Superblock::decode(&img[..4096]).unwrap();
    let first = l.wal_start + l.wal_blocks - 4 + u64::from(sb.wal_salt % 2) * 2;
    let at = |slot: u64| usize::try_from((first + slot) * BS).unwrap();
    let even = img[at(0)..at(1)].to_vec();
    img[at(1)..at(2)].copy_from_slice(&even);
    match Engine::open(device(&img), cfg()) {
        Err(EngineError::Corrupt(Corruption::FlushMark { slot, damage })) => {
            assert_eq!(slot % 2, 1, "the slot it was found in");
            assert!(
                matches!(damage, FlushMarkDamage::WrongSlot { .. }),
                "{damage}"
            );
        }
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("a misplaced flush mark went unnoticed"),
    }
}
