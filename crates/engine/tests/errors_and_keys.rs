//! Error paths (full device, oversized records, garbage device, use after close) and
//! order-preserving composite keys through the tree.

use nowa_device::{BlockDevice, MemDevice};
use nowa_engine::keys::KeyBuilder;
use nowa_engine::{Config, Engine, EngineError};
use std::sync::Arc;

fn small() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        dw_pages: 8,
        ..Config::default()
    }
}

#[test]
fn full_data_region_is_an_error_not_a_panic() {
    // 2 superblocks + 8 dw + WAL region + 40 data pages.
    let cfg = small();
    let wal_blocks = (256u64 << 10) / 4096 + (64 << 10) / 4096 + 256;
    let dev = Arc::new(MemDevice::new((2 + 8 + wal_blocks + 40) * 4096));
    let e = Engine::create(dev.clone(), cfg.clone()).unwrap();
    let mut n = 0u32;
    let err = loop {
        match e.put(&n.to_be_bytes(), &[7u8; 200]) {
            Ok(()) => n += 1,
            Err(err) => break err,
        }
    };
    assert!(matches!(err, EngineError::Full(_)), "{err}");
    // Everything acknowledged is still there, and the engine still works for updates.
    for i in 0..n {
        assert_eq!(e.get(&i.to_be_bytes()).unwrap().unwrap().len(), 200);
    }
    e.put(&0u32.to_be_bytes(), &[1u8; 200]).unwrap();
    e.close().unwrap();
    let e = Engine::open(dev, cfg).unwrap();
    assert_eq!(e.scan(b"", None, usize::MAX).unwrap().len(), n as usize);
}

#[test]
fn oversized_and_closed() {
    let e = Engine::create(MemDevice::new(16 << 20), small()).unwrap();
    assert!(matches!(
        e.put(&[0u8; 513], b"v"),
        Err(EngineError::TooLarge { .. })
    ));
    assert!(matches!(
        e.put(b"k", &[0u8; 1600]),
        Err(EngineError::TooLarge { .. })
    ));
    e.put(&[1u8; 512], &[2u8; 1024]).unwrap();
    e.close().unwrap();
    assert!(matches!(e.get(b"k"), Err(EngineError::Closed)));
}

#[test]
fn garbage_device_is_rejected() {
    let dev = MemDevice::new(16 << 20);
    dev.write_at(0, &[0xAB; 8192]).unwrap();
    assert!(matches!(
        Engine::open(dev, small()),
        Err(EngineError::NoSuperblock { .. })
    ));
    assert!(matches!(
        Engine::open(MemDevice::new(16 << 20), small()),
        Err(EngineError::NoSuperblock { .. })
    ));
    assert!(matches!(
        Engine::create(MemDevice::new(64 << 10), small()),
        Err(EngineError::Config(_))
    ));
}

#[test]
fn corrupted_superblock_copy_falls_back_to_the_other() {
    let dev = Arc::new(MemDevice::new(16 << 20));
    let e = Engine::create(dev.clone(), small()).unwrap();
    e.put(b"a", b"1").unwrap();
    e.close().unwrap();
    // Corrupt the newest copy: the previous checkpoint is still a consistent state.
    let mut b0 = vec![0u8; 4096];
    let mut b1 = vec![0u8; 4096];
    dev.read_at(0, &mut b0).unwrap();
    dev.read_at(4096, &mut b1).unwrap();
    let seq = |b: &[u8]| u64::from_le_bytes(b[16..24].try_into().unwrap());
    let newest = if seq(&b0) > seq(&b1) { 0 } else { 4096 };
    dev.write_at(newest, &[0x11; 4096]).unwrap();
    let e = Engine::open(dev, small()).unwrap();
    // The older superblock's redo LSN still finds the put in the log (or on the page).
    assert_eq!(e.get(b"a").unwrap(), Some(b"1".to_vec()));
}

#[test]
fn composite_keys_scan_in_order() {
    let e = Engine::create(MemDevice::new(32 << 20), small()).unwrap();
    // TPC-C-like (w_id, d_id, o_id) with signed and variable parts.
    for w in (1..=4u32).rev() {
        for d in 1..=10u8 {
            for o in [-5i64, 0, 3, 1000] {
                let k = KeyBuilder::new()
                    .u32(w)
                    .u8(d)
                    .bytes(b"ord\0er")
                    .i64(o)
                    .finish();
                e.put(&k, format!("{w}-{d}-{o}").as_bytes()).unwrap();
            }
        }
    }
    let lo = KeyBuilder::new().u32(2).finish();
    let hi = KeyBuilder::new().u32(3).finish();
    let rows = e.scan(&lo, Some(&hi), usize::MAX).unwrap();
    assert_eq!(rows.len(), 40);
    let vals: Vec<String> = rows
        .iter()
        .map(|(_, v)| String::from_utf8(v.clone()).unwrap())
        .collect();
    assert_eq!(vals[0], "2-1--5");
    assert_eq!(vals[1], "2-1-0");
    assert_eq!(vals[3], "2-1-1000");
    assert_eq!(vals[39], "2-10-1000");
}

#[test]
fn a_wal_region_without_room_for_the_flush_marks_is_refused() {
    let dev = Arc::new(MemDevice::new(4 << 20));
    // Two log blocks and the four flush-mark blocks are the least (format 5).
    let cfg = |blocks: u64| Config {
        wal_region_bytes: Some(blocks * 4096),
        ..small()
    };
    match Engine::create(dev.clone(), cfg(5)) {
        Err(EngineError::Config(nowa_engine::ConfigError::WalRegionTooSmall { bytes, need })) => {
            assert_eq!((bytes, need), (5 * 4096, 6 * 4096));
        }
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("a WAL region of 5 blocks was accepted"),
    }
    let e = Engine::create(dev, cfg(6)).unwrap();
    e.put(b"k", b"v").unwrap();
}
