//! Corrupt WAL tail: recovery stops at the first bad record, reports it in the recovery
//! report, and keeps everything before it.

use nowa_device::{BlockDevice, MemDevice};
use nowa_engine::{Config, Engine, WalStop};
use std::sync::Arc;

#[test]
fn recovery_stops_at_first_bad_record() {
    let dev = Arc::new(MemDevice::new(64 << 20));
    let cfg = Config {
        pool_bytes: 16 << 20,
        ..Config::default()
    };
    let e = Engine::create(dev.clone(), cfg.clone()).unwrap();
    let n = 300u32;
    for i in 0..n {
        let v = format!("value-{i:04}-{}", "x".repeat(50));
        e.put(format!("key-{i:04}").as_bytes(), v.as_bytes())
            .unwrap();
    }
    let layout = e.layout();
    // Crash (no close): the pages are only in memory, the WAL holds everything.
    drop(e);

    // Find the record of key-0200 in the WAL region and flip a byte of its value.
    let start = layout.wal_start * 4096;
    let len = (layout.wal_blocks * 4096) as usize;
    let mut wal = vec![0u8; len];
    dev.read_at(start, &mut wal).unwrap();
    let needle = b"value-0200-";
    let pos = wal
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("record in WAL");
    let blk = pos / 4096 * 4096;
    wal[pos + 3] ^= 0x55;
    dev.write_at(start + blk as u64, &wal[blk..blk + 4096])
        .unwrap();

    let e = Engine::open(dev.clone(), cfg.clone()).unwrap();
    let rep = e.recovery_report().unwrap().clone();
    assert_eq!(rep.bad_wal_records, 1, "{rep:?}");
    assert!(
        matches!(&rep.wal_stop, WalStop::BadRecord { detail, .. } if detail.contains("checksum")),
        "{rep:?}"
    );
    for i in 0..n {
        let got = e.get(format!("key-{i:04}").as_bytes()).unwrap();
        if i < 200 {
            assert!(got.is_some(), "key {i} before the bad record must survive");
        } else {
            assert!(
                got.is_none(),
                "key {i} at/after the bad record must be gone"
            );
        }
    }
    // The engine continues on a fresh log epoch; a clean reopen sees a clean log.
    e.put(b"key-new", b"v").unwrap();
    e.close().unwrap();
    drop(e);
    let e = Engine::open(dev, cfg).unwrap();
    assert_eq!(e.recovery_report().unwrap().wal_stop, WalStop::Clean);
    assert_eq!(e.get(b"key-new").unwrap(), Some(b"v".to_vec()));
    assert_eq!(e.scan(b"", None, usize::MAX).unwrap().len(), 201);
}
