//! WAL damage (issue 9 items 5 and 6): a torn tail (a crash) is told apart from damage in the
//! middle of the live log (media). Damage in the middle fails the open with `WalDamaged`
//! naming the LSN range and writes nothing, unless `Config::wal_damage` is `Salvage`, which
//! keeps the prefix, reports the loss and records it in the superblock. Damage at every block
//! of the live WAL either fails the open or loses nothing, the last flush included: its flush
//! mark vouches for it (issue 26 item 2).
//! No false alarm: a crash right after an open of a wrapped log reports a clean end.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;

use common::{device, image};
use nowa_device::{BlockDevice, FaultConfig, FaultyDevice, MemDevice};
use nowa_engine::{Config, Engine, EngineError, WalDamage, WalStop};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

const CAP: u64 = 4 << 20;
const KEYS: u32 = 400;

fn cfg() -> Config {
    common::log_only_cfg()
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:05}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i:05}-{}", "x".repeat(80)).into_bytes()
}

/// A crashed database whose acknowledged puts live only in the WAL: (image, WAL region start
/// byte, live log [redo, end) as LSNs, region size).
struct Crashed {
    img: Vec<u8>,
    wal_start: u64,
    redo: u64,
    end: u64,
    region: u64,
}

fn crashed() -> Crashed {
    let dev = Arc::new(MemDevice::new(CAP));
    let e = Engine::create(dev.clone(), cfg()).unwrap();
    for i in 0..KEYS {
        e.put(&key(i), &value(i)).unwrap();
    }
    let l = e.layout();
    drop(e); // crash: every put is only in the log
    let img = image(&*dev);
    let probe = Engine::open(device(&img), cfg()).unwrap();
    let rep = probe.recovery_report().unwrap().clone();
    assert_eq!(rep.wal_stop, WalStop::Clean, "{rep:?}");
    // One Put per key, plus one Struct record per split.
    assert!(rep.records_replayed >= u64::from(KEYS), "{rep:?}");
    Crashed {
        img,
        wal_start: l.wal_start * 4096,
        redo: rep.redo_lsn,
        end: rep.end_lsn,
        region: l.log_blocks() * 4096,
    }
}

impl Crashed {
    /// Device byte of stream LSN `lsn`.
    fn at(&self, lsn: u64) -> usize {
        usize::try_from(self.wal_start + lsn % self.region).unwrap()
    }
    /// The live blocks, as stream LSNs of their first byte.
    fn blocks(&self) -> Vec<u64> {
        (self.redo / 4096..self.end.div_ceil(4096))
            .map(|b| b * 4096)
            .collect()
    }
}

/// Keys whose values are missing or wrong.
fn lost(e: &Engine) -> Vec<u32> {
    (0..KEYS)
        .filter(|&i| e.get(&key(i)).unwrap() != Some(value(i)))
        .collect()
}

/// Open `img` on `dev`; the verdict: Err(from) for WalDamaged, else the keys lost and the stop.
fn verdict(dev: Arc<dyn BlockDevice>, img: &[u8]) -> Result<(Vec<u32>, WalStop), u64> {
    match Engine::open_with_wal(dev.clone(), None, cfg(), &nowa_engine::in_place_store()) {
        Err(EngineError::WalDamaged { from, to, .. }) => {
            assert!(from < to, "empty damaged range");
            // A refused open writes nothing.
            assert!(image(&*dev) == img, "a refused open changed the image");
            Err(from)
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(e) => Ok((lost(&e), e.recovery_report().unwrap().wal_stop)),
    }
}

#[test]
fn unreadable_block_anywhere_in_the_live_wal_fails_the_open_or_loses_nothing() {
    let c = crashed();
    let (mut failed, mut clean) = (0, 0);
    for b in c.blocks() {
        let at = c.at(b) as u64;
        let dev = Arc::new(FaultyDevice::new(device(&c.img), FaultConfig::default()));
        dev.fail_reads(at..at + 4096);
        let img = c.img.clone();
        match Engine::open_with_wal(dev.clone(), None, cfg(), &nowa_engine::in_place_store()) {
            Err(EngineError::WalDamaged { from, .. }) => {
                assert!(from < b + 4096, "block {b}: damage reported at {from}");
                dev.clear_read_faults();
                assert!(
                    image(&*dev) == img,
                    "block {b}: a refused open changed the image"
                );
                failed += 1;
            }
            Err(e) => panic!("block {b}: unexpected error {e}"),
            Ok(e) => {
                assert!(lost(&e).is_empty(), "block {b}: lost {:?}", lost(&e));
                clean += 1;
            }
        }
    }
    eprintln!(
        "{} live blocks unreadable one at a time: {failed} refused, {clean} lossless",
        c.blocks().len()
    );
    assert!(
        failed >= c.blocks().len() - 1,
        "every block holding records must be refused"
    );
}

#[test]
fn corrupted_block_anywhere_in_the_live_wal_fails_the_open_or_loses_nothing() {
    let c = crashed();
    let last = *c.blocks().last().unwrap();
    let mut rng = SmallRng::seed_from_u64(0x5A1E);
    let (mut refused, mut lossless) = (0, 0);
    for (kind, b) in c.blocks().into_iter().flat_map(|b| [(0, b), (1, b)]) {
        let mut img = c.img.clone();
        let at = c.at(b);
        if kind == 0 {
            // One flipped byte inside the block's live bytes.
            let hi = usize::try_from((c.end - b).min(4096)).unwrap();
            let lo = usize::try_from(c.redo.saturating_sub(b)).unwrap();
            img[at + rng.random_range(lo..hi)] ^= 0xA5;
        } else {
            // The whole block garbage.
            rng.fill(&mut img[at..at + 4096]);
        }
        match verdict(device(&img), &img) {
            Err(from) => {
                assert!(from < b + 4096, "block {b}: damage reported at {from}");
                refused += 1;
            }
            Ok((gone, _)) if gone.is_empty() => lossless += 1,
            // Before flush marks (issue 26 item 2) damage to the last flush read as a
            // torn write of it and lost its acknowledged records.
            Ok((gone, stop)) => panic!("block {b} (last {last}): opened ({stop:?}), lost {gone:?}"),
        }
    }
    eprintln!(
        "{} live blocks, flipped byte and garbage each: {refused} refused, {lossless} lossless",
        c.blocks().len()
    );
    assert!(
        refused >= 2 * c.blocks().len() - 1,
        "damage to any block holding records is refused"
    );
}

#[test]
fn salvage_keeps_the_prefix_reports_the_loss_and_records_it() {
    let c = crashed();
    let mut img = c.img.clone();
    let needle = value(200);
    let region = &img[c.at(0)..c.at(0) + usize::try_from(c.region).unwrap()];
    let pos = region
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap();
    img[c.at(0) + pos + 3] ^= 0x55;
    assert!(
        verdict(device(&img), &img).is_err(),
        "refused without salvage"
    );
    let dev = device(&img);
    let salvage = Config {
        wal_damage: WalDamage::Salvage,
        ..cfg()
    };
    let e = Engine::open(dev.clone(), salvage).unwrap();
    let rep = e.recovery_report().unwrap().clone();
    assert!(
        matches!(rep.wal_stop, WalStop::Salvaged { from, to, .. } if from < to),
        "{rep:?}"
    );
    assert_eq!((rep.bad_wal_records, rep.salvage.count), (1, 1), "{rep:?}");
    assert_eq!(
        lost(&e),
        (200..KEYS).collect::<Vec<_>>(),
        "the prefix survives, the rest is gone"
    );
    e.put(b"after", b"salvage").unwrap();
    e.close().unwrap();
    drop(e);
    // The loss stays on record; the log is clean again.
    let e = Engine::open(dev, cfg()).unwrap();
    let rep = e.recovery_report().unwrap();
    assert_eq!(rep.wal_stop, WalStop::Clean);
    assert_eq!(rep.salvage.count, 1, "{rep:?}");
    assert!(rep.salvage.from < rep.salvage.to);
    assert_eq!(e.get(b"after").unwrap(), Some(b"salvage".to_vec()));
}

/// Item 6: after the WAL wrapped, a crash right after open must not report a bad record.
#[test]
fn no_false_alarm_after_the_log_wrapped() {
    let dev = Arc::new(MemDevice::new(8 << 20));
    let cfg = Config {
        wal_limit_bytes: Some(128 << 10),
        wal_region_bytes: Some(256 << 10),
        ..cfg()
    };
    let e = Engine::create(dev.clone(), cfg.clone()).unwrap();
    let mut rng = SmallRng::seed_from_u64(6);
    for i in 0..20_000u32 {
        let len = rng.random_range(10..200);
        e.put(
            &(i % 3000).to_be_bytes(),
            &vec![u8::try_from(i % 251).unwrap(); len],
        )
        .unwrap();
    }
    assert!(
        e.stats().checkpoints > 20,
        "the log must wrap several times"
    );
    drop(e);
    for round in 0..6 {
        let e = Engine::open(dev.clone(), cfg.clone()).unwrap();
        let rep = e.recovery_report().unwrap().clone();
        assert_eq!(
            (rep.wal_stop, rep.bad_wal_records),
            (WalStop::Clean, 0),
            "round {round}: {rep:?}"
        );
        if round % 2 == 1 {
            e.put(b"k", &[u8::try_from(round).unwrap(); 50]).unwrap();
        }
        drop(e); // crash right after the open
    }
}

/// Issue 26 item 2: media damage to the block holding the last (acknowledged) flush is not a
/// torn tail. The flush protocol leaves a durable mark of the flushed end after the tail
/// block (written after the data is durable, before the flush returns), so the open refuses
/// with the LSN range instead of dropping acknowledged writes.
#[test]
fn damage_to_the_last_acknowledged_flush_is_refused() {
    let c = crashed();
    let last = *c.blocks().last().unwrap();
    let mut rng = SmallRng::seed_from_u64(0x1A57);
    for kind in 0..3 {
        let mut img = c.img.clone();
        let at = c.at(last);
        let live = usize::try_from((c.end - last).min(4096)).unwrap();
        match kind {
            // One flipped byte in the last record's bytes.
            0 => img[at + live - 10] ^= 0x5A,
            // The last record's first sector zeroed (reads as a clean end).
            1 => img[at..at + live.min(512)].fill(0),
            // The whole block garbage.
            _ => rng.fill(&mut img[at..at + 4096]),
        }
        match verdict(device(&img), &img) {
            Err(from) => assert!(from < c.end, "kind {kind}: damage reported at {from}"),
            Ok((gone, stop)) => panic!("kind {kind}: opened ({stop:?}), lost {gone:?}"),
        }
    }
}
