//! What an open says about the state it found (issue 26 item 6): the clean-shutdown flag is
//! true only after `close` (a crash before the first checkpoint of a new database is not a
//! clean shutdown), and a database whose WAL lives on a separate device, opened without that
//! device, is refused by name (`LogDeviceMissing`), not as "not a nowa database". A
//! database of format 5 (25-byte WAL record headers, fixed-width Put fields) is refused by
//! its version, never read with format 6's log records.

use nowa_device::{BlockDevice, MemDevice};
use nowa_engine::format::{block_crc, superblock};
use nowa_engine::{
    in_place_store, Config, ConfigError, Durability, Engine, EngineError, SuperblockDamage,
};
use std::sync::Arc;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(1 << 20),
        dw_pages: 8,
        durability: Durability::Sync,
        ..Config::default()
    }
}

#[test]
fn a_crash_before_the_first_checkpoint_is_not_a_clean_shutdown() {
    let dev = Arc::new(MemDevice::new(8 << 20));
    let e = Engine::create(dev.clone(), cfg()).unwrap();
    for i in 0..200u32 {
        e.put(&i.to_be_bytes(), b"value").unwrap();
    }
    drop(e); // crash: no checkpoint since create
    let e = Engine::open(dev.clone(), cfg()).unwrap();
    let rep = e.recovery_report().unwrap().clone();
    assert!(rep.records_replayed >= 200, "{rep:?}");
    assert!(!rep.clean_shutdown, "a crash reported as clean: {rep:?}");
    // A crash after that open (its checkpoint) is not clean either.
    drop(e);
    let e = Engine::open(dev.clone(), cfg()).unwrap();
    assert!(!e.recovery_report().unwrap().clean_shutdown);
    e.close().unwrap();
    drop(e);
    let e = Engine::open(dev, cfg()).unwrap();
    assert!(e.recovery_report().unwrap().clean_shutdown, "after close");
}

#[test]
fn separate_wal_database_opened_without_its_log_device_names_it() {
    let main = Arc::new(MemDevice::new(8 << 20));
    // The main device held an older database with its WAL on it: its superblocks must not
    // be taken for the new database's.
    Engine::create(main.clone(), cfg())
        .unwrap()
        .close()
        .unwrap();
    let log: Arc<dyn BlockDevice> = Arc::new(MemDevice::new(4 << 20));
    let e =
        Engine::create_with_wal(main.clone(), Some(log.clone()), cfg(), &in_place_store()).unwrap();
    e.put(b"k", b"v").unwrap();
    e.close().unwrap();
    drop(e);
    match Engine::open_with_wal(main.clone(), None, cfg(), &in_place_store()) {
        Err(e @ EngineError::Config(ConfigError::LogDeviceMissing)) => {
            assert!(e.to_string().contains("separate device"), "{e}");
        }
        Err(e) => panic!("wrong refusal: {e}"),
        Ok(_) => panic!("opened without its log device"),
    }
    let e = Engine::open_with_wal(main, Some(log), cfg(), &in_place_store()).unwrap();
    assert_eq!(e.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn a_format_six_database_is_refused_by_its_version() {
    let dev = Arc::new(MemDevice::new(8 << 20));
    let e = Engine::create(dev.clone(), cfg()).unwrap();
    e.put(b"k", b"v").unwrap();
    drop(e);
    // Both superblock copies rewritten as format 6 would have written them (valid crc):
    // format 6's WAL records (a 17-byte header per record) do not decode as format 7's
    // groups, so the open must refuse them by the version, naming both.
    for copy in 0..2u64 {
        let mut b = vec![0u8; 4096];
        dev.read_at(copy * 4096, &mut b).unwrap();
        superblock::VERSION_F.put_u32(&mut b, 6);
        let c = block_crc(&b);
        superblock::CRC.put_u32(&mut b, c);
        dev.write_at(copy * 4096, &b).unwrap();
    }
    let old = Some(6);
    match Engine::open(dev, cfg()) {
        Err(
            e @ EngineError::NoSuperblock {
                a:
                    SuperblockDamage::Version {
                        found: fa,
                        supported: 7,
                    },
                b: SuperblockDamage::Version { found: fb, .. },
            },
        ) => {
            assert_eq!((Some(fa), Some(fb)), (old, old));
            let msg = e.to_string();
            assert!(msg.contains("version 6") && msg.contains('7'), "{msg}");
        }
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("a format-6 database opened with format 7's log groups"),
    }
}
