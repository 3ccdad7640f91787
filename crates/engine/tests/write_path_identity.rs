//! The write path is recorded in the superblock and checked at open before anything is
//! written (issue 9 item 2): opening a database with the other write path fails with
//! `WrongWritePath` naming the one it was created with, and leaves the image byte-identical
//! (on a device whose TRIM zeroes, so a stray trim would show). `identify` reads the same
//! record from block 0.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{BlockDevice, FaultConfig, FaultyDevice, MemDevice, TrimMode};
use nowa_engine::{
    identify, in_place_store, out_of_place_store, Config, ConfigError, Durability, Engine,
    EngineError, OopConfig, WritePath, WritePathKind,
};
use std::sync::Arc;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        dw_pages: 8,
        durability: Durability::Async,
        ..Config::default()
    }
}

fn oop() -> OopConfig {
    OopConfig {
        zone_bytes: Some(256 << 10),
        background_gc: false,
        ..OopConfig::default()
    }
}

fn device() -> Arc<FaultyDevice<MemDevice>> {
    let d = Arc::new(FaultyDevice::new(
        MemDevice::new(32 << 20),
        FaultConfig::default(),
    ));
    d.set_trim_mode(TrimMode::Zero);
    d
}

fn image(d: &dyn BlockDevice) -> Vec<u8> {
    let mut v = vec![0u8; usize::try_from(d.geometry().capacity).unwrap()];
    d.read_at(0, &mut v).unwrap();
    v
}

fn load(e: &Engine) {
    for i in 0..20_000u32 {
        e.put(&i.to_be_bytes(), &[7u8; 100]).unwrap();
    }
    e.close().unwrap();
}

#[test]
fn in_place_database_opened_out_of_place_is_refused_untouched() {
    let dev = device();
    load(&Engine::create_with_store(dev.clone(), cfg(), &in_place_store()).unwrap());
    let before = image(&*dev);
    match Engine::open_with_store(dev.clone(), cfg(), &out_of_place_store(oop())) {
        Err(EngineError::WrongWritePath {
            created: WritePath::InPlace,
            requested: WritePathKind::OutOfPlace,
        }) => {}
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("opened an in-place database out of place"),
    }
    assert!(image(&*dev) == before, "the refused open wrote");
    // The right write path still opens it.
    let e = Engine::open(dev, cfg()).unwrap();
    assert_eq!(e.get(&5u32.to_be_bytes()).unwrap(), Some(vec![7u8; 100]));
}

#[test]
fn out_of_place_database_opened_in_place_is_refused_untouched() {
    let dev = device();
    load(&Engine::create_with_store(dev.clone(), cfg(), &out_of_place_store(oop())).unwrap());
    let before = image(&*dev);
    let err = match Engine::open(dev.clone(), cfg()) {
        Err(e) => e,
        Ok(_) => panic!("opened an out-of-place database in place"),
    };
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            EngineError::WrongWritePath {
                created: WritePath::OutOfPlace { .. },
                ..
            }
        ),
        "{msg}"
    );
    assert!(
        msg.contains("created with the out-of-place write path"),
        "{msg}"
    );
    assert!(!msg.contains("corrupt"), "{msg}");
    assert!(image(&*dev) == before, "the refused open wrote");
    // Another zone size than the database's is a configuration error, also before any write.
    let other = OopConfig {
        zone_bytes: Some(128 << 10),
        ..oop()
    };
    assert!(matches!(
        Engine::open_with_store(dev.clone(), cfg(), &out_of_place_store(other)),
        Err(EngineError::Config(ConfigError::ZoneSizeMismatch { .. }))
    ));
    assert!(image(&*dev) == before, "the refused open wrote");
    let e = Engine::open_with_store(dev, cfg(), &out_of_place_store(oop())).unwrap();
    assert_eq!(e.get(&5u32.to_be_bytes()).unwrap(), Some(vec![7u8; 100]));
}

#[test]
fn identify_reads_the_write_path_from_block_zero() {
    let mut block = vec![0u8; 4096];
    let dev = device();
    Engine::create(dev.clone(), cfg()).unwrap().close().unwrap();
    dev.read_at(0, &mut block).unwrap();
    let id = identify(&block).unwrap();
    assert_eq!(id.write_path, Some(WritePath::InPlace));
    // Block 0 holds create's second superblock (not clean: only close writes clean); the
    // close wrote the third, to block 1.
    assert!(!id.clean && !id.wal_separate);
    dev.read_at(4096, &mut block).unwrap();
    assert!(identify(&block).unwrap().clean, "close's superblock");

    let dev = device();
    Engine::create_with_store(dev.clone(), cfg(), &out_of_place_store(oop()))
        .unwrap()
        .close()
        .unwrap();
    dev.read_at(0, &mut block).unwrap();
    match identify(&block).unwrap().write_path {
        Some(WritePath::OutOfPlace { zone_bytes, .. }) => assert_eq!(zone_bytes, 256 << 10),
        other => panic!("{other:?}"),
    }
    // Not a database.
    assert!(identify(&[0u8; 4096]).is_none());
    assert!(identify(&[0xABu8; 4096]).is_none());
}
