//! Torn home-page write: with doublewrite off the torn page is detected by its checksum and
//! reported as corruption (never read silently); with doublewrite on it is repaired.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::{value_for, CrashDevice};
use nowa_engine::{Config, Corruption, Durability, Engine, EngineError, PageDamage};
use std::sync::Arc;

fn cfg(doublewrite: bool) -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(1 << 20),
        doublewrite,
        dw_pages: 8,
        ..Config::default()
    }
}

/// Load, checkpoint, update every key, then tear the first home-page write of the next
/// checkpoint (first 512 bytes new, the rest old) and power off.
fn scenario(doublewrite: bool) -> Arc<CrashDevice> {
    let dev = Arc::new(CrashDevice::new(8 << 20, 7));
    let e = Engine::create(dev.clone(), cfg(doublewrite)).unwrap();
    for i in 0..2000u64 {
        e.put_with(&i.to_be_bytes(), &value_for(i, 0, 100), Durability::Async)
            .unwrap();
    }
    e.checkpoint().unwrap();
    for i in (0..2000u64).step_by(3) {
        e.put(&i.to_be_bytes(), &value_for(i, 1, 100)).unwrap();
    }
    let l = e.layout();
    let data = l.data_start * 4096;
    dev.tear_write_in(data, data + l.data_pages * 4096, 512);
    assert!(
        e.checkpoint().is_err(),
        "the torn write powers the device off"
    );
    drop(e);
    dev.restart();
    dev
}

#[test]
fn torn_page_without_doublewrite_is_reported() {
    let dev = scenario(false);
    // Either recovery (redo touches the page) or a later read must report corruption.
    let err = match Engine::open(dev.clone(), cfg(false)) {
        Err(e) => e,
        Ok(e) => {
            let mut found = None;
            for i in 0..2000u64 {
                if let Err(err) = e.get(&i.to_be_bytes()) {
                    found = Some(err);
                    break;
                }
            }
            found.expect("torn page was read silently")
        }
    };
    match err {
        EngineError::Corrupt(Corruption::Page {
            damage: PageDamage::Checksum { .. },
            ..
        }) => {}
        other => panic!("expected a page checksum mismatch, got {other}"),
    }
}

#[test]
fn torn_home_write_with_doublewrite_is_restored_from_copy() {
    // Same tear; the doublewrite area lies below the data region, so the torn write is a home
    // write whose doublewrite copy is already durable: recovery restores it.
    let dev = scenario(true);
    let e = Engine::open(dev.clone(), cfg(true)).unwrap();
    assert!(
        e.recovery_report().unwrap().pages_repaired >= 1,
        "{:?}",
        e.recovery_report()
    );
    for i in 0..2000u64 {
        let ver = if i % 3 == 0 { 1 } else { 0 };
        assert_eq!(
            e.get(&i.to_be_bytes()).unwrap(),
            Some(value_for(i, ver, 100))
        );
    }
}
