//! WAL salvage after pages reached disk (issue 26 item 1). Many keys, a 64-frame pool and a
//! small WAL limit, so pages are evicted and checkpoints run during the load; then a crash
//! and damage at 7 positions of the live WAL. Opening with `Config::wal_damage = Salvage`
//! must either give a consistent tree holding exactly the writes before the damaged range
//! (a full scan succeeds and equals the model at that LSN), or refuse with
//! `SalvageRefused`, after which `Engine::export_readable` returns what is readable.
//! Both write paths.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;

use common::{device, image};
use nowa_device::MemDevice;
use nowa_engine::{
    in_place_store, out_of_place_store, Config, Durability, Engine, EngineError, OopConfig,
    StoreBuilder, WalDamage, WalStop,
};
use std::collections::BTreeMap;
use std::sync::Arc;

const CAP: u64 = 16 << 20;
const KEYS: u32 = 6000;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(512 << 10),
        dw_pages: 8,
        durability: Durability::Async,
        ..Config::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

fn value(i: u32, v: u32) -> Vec<u8> {
    format!("value-{i:06}-{v}-{}", "s".repeat(60)).into_bytes()
}

/// Every write in order: (key, value, WAL end after it).
type Log = Vec<(u32, Vec<u8>, u64)>;

/// Load, update, crash. Returns the image and the write log.
fn crashed(build: &dyn StoreBuilder) -> (Vec<u8>, Log) {
    let dev = Arc::new(MemDevice::new(CAP));
    let e = Engine::create_with_wal(dev.clone(), None, cfg(), build).unwrap();
    let mut log = Log::new();
    for (pass, step) in [(0, 1), (1, 3), (2, 7)] {
        for i in (0..KEYS).step_by(step) {
            let v = value(i, pass);
            e.put(&key(i), &v).unwrap();
            log.push((i, v, e.wal_end_lsn()));
        }
    }
    e.sync().unwrap();
    let s = e.stats();
    assert!(s.checkpoints >= 4, "checkpoints during the load: {s:?}");
    assert!(s.eviction_page_writes > 0, "pages reached disk: {s:?}");
    drop(e); // crash
    (image(&*dev), log)
}

/// The model after the writes whose records all end at or before `lsn`.
fn model_at(log: &Log, lsn: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    for (i, v, end) in log {
        if *end <= lsn {
            m.insert(key(*i), v.clone());
        }
    }
    m
}

/// Damage the live WAL at 7 positions, salvage each; returns (salvaged, refused).
fn salvage_at_seven_positions(build: &dyn StoreBuilder) -> (u32, u32) {
    let (img, log) = crashed(build);
    let probe = Engine::open_with_wal(device(&img), None, cfg(), build).unwrap();
    let rep = probe.recovery_report().unwrap().clone();
    drop(probe);
    let l = nowa_engine::identify(&img[..4096]).unwrap().layout.unwrap();
    let region = l.log_blocks() * 4096;
    let (redo, end) = (rep.redo_lsn, rep.end_lsn);
    assert!(end - redo > 64 << 10, "a live log worth damaging: {rep:?}");
    let (mut salvaged, mut refused) = (0, 0);
    for k in 0..7u64 {
        let lsn = redo + (end - redo) * (2 * k + 1) / 14;
        let at = usize::try_from(l.wal_start * 4096 + lsn % region).unwrap();
        let mut bad = img.clone();
        for b in &mut bad[at..at + 512] {
            *b ^= 0x5A;
        }
        let dev = device(&bad);
        let salvage = Config {
            wal_damage: WalDamage::Salvage,
            ..cfg()
        };
        match Engine::open_with_wal(dev.clone(), None, salvage, build) {
            Ok(e) => {
                let rep = e.recovery_report().unwrap().clone();
                let from = match rep.wal_stop {
                    WalStop::Salvaged { from, .. } | WalStop::TornTail { lsn: from, .. } => from,
                    other => panic!("position {k}: damage at {lsn} not seen: {other:?}"),
                };
                assert!(
                    from <= lsn + 512,
                    "position {k}: loss from {from}, damage {lsn}"
                );
                let want = model_at(&log, from);
                let got: BTreeMap<_, _> = e
                    .scan(b"", None, usize::MAX)
                    .unwrap_or_else(|err| panic!("position {k}: full scan: {err}"))
                    .into_iter()
                    .collect();
                assert!(
                    got == want,
                    "position {k}: salvaged tree != writes before {from}"
                );
                e.close().unwrap();
                drop(e);
                let e = Engine::open_with_wal(dev, None, cfg(), build).unwrap();
                assert_eq!(e.scan(b"", None, usize::MAX).unwrap().len(), want.len());
                salvaged += 1;
            }
            Err(err @ EngineError::SalvageRefused { .. }) => {
                assert!(
                    err.to_string().contains("export_readable"),
                    "the refusal says how to export: {err}"
                );
                // A refused salvage leaves the log and superblocks as they were.
                assert!(
                    image(&*dev)[..usize::try_from((l.wal_start + l.wal_blocks) * 4096).unwrap()]
                        == bad[..usize::try_from((l.wal_start + l.wal_blocks) * 4096).unwrap()],
                    "position {k}: a refused salvage changed the log"
                );
                let out = Engine::export_readable(dev, None, cfg(), build).unwrap();
                assert!(!out.is_empty(), "position {k}: nothing exported");
                // Every exported pair is a version that was written.
                for (kk, v) in &out {
                    assert!(
                        log.iter().any(|(i, vv, _)| key(*i) == *kk && vv == v),
                        "position {k}: exported a value never written"
                    );
                }
                refused += 1;
            }
            Err(err) => panic!("position {k} (LSN {lsn}): {err}"),
        }
    }
    eprintln!("7 damage positions: {salvaged} salvaged, {refused} refused with an export");
    (salvaged, refused)
}

#[test]
fn salvage_in_place_is_consistent_or_refused() {
    let (s, r) = salvage_at_seven_positions(&in_place_store());
    assert_eq!(s + r, 7);
}

#[test]
fn salvage_out_of_place_is_consistent_or_refused() {
    let oop = OopConfig {
        zone_bytes: Some(256 << 10),
        ..OopConfig::default()
    };
    let (s, r) = salvage_at_seven_positions(&out_of_place_store(oop));
    assert_eq!(s + r, 7);
}
