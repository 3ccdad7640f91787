//! WAL groups against the device: a flush torn at any byte of its group is a torn tail at
//! the group's start, and the scan of a redo LSN inside a group starts at the group.

use super::*;
use crate::error::RecordDamage;
use crate::format::wal::{Record, HEADER};
use nowa_device::MemDevice;

/// Flush marks (4 blocks) and an 8-block circular log.
const BLOCKS: u64 = mark::BLOCKS + 8;
const SALT: u32 = 9;

fn wal(dev: &Arc<MemDevice>) -> Wal {
    let w = Wal::new(
        dev.clone(),
        0,
        BLOCKS,
        SALT,
        BS,
        Arc::new(EngineCounters::default()),
    );
    w.start_epoch().unwrap();
    w
}

fn key(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

fn value(i: u64) -> Vec<u8> {
    vec![u8::try_from(i % 251).unwrap(); 100]
}

fn append(w: &Wal, i: u64) -> u64 {
    let (k, v) = (key(i), value(i));
    w.append(&RecordRef::Put {
        pid: i,
        prev_lsn: 0,
        key: &k,
        value: &v,
    })
    .unwrap()
}

fn image(dev: &MemDevice) -> Vec<u8> {
    let mut b = vec![0u8; usize_of(BLOCKS * BS)];
    dev.read_at(0, &mut b).unwrap();
    b
}

fn device(img: &[u8]) -> MemDevice {
    let d = MemDevice::new(u64_of(img.len()));
    d.write_at(0, img).unwrap();
    d
}

/// Every record the scan from `(from, redo)` returns before it stops: (LSN, key).
fn scan(dev: &dyn BlockDevice, from: u64, redo: u64) -> Vec<(u64, Vec<u8>)> {
    let mut sc = WalScanner::new(dev, 0, BLOCKS, SALT, (from, redo));
    let mut out = Vec::new();
    while let Ok((lsn, r)) = sc.next_record().unwrap() {
        let Record::Put { key, .. } = r else {
            panic!("{r:?}")
        };
        out.push((lsn, key));
    }
    out
}

#[test]
fn a_flush_torn_at_any_byte_of_its_group_is_a_torn_tail_at_the_group() {
    let dev = Arc::new(MemDevice::new(BLOCKS * BS));
    let w = wal(&dev);
    let first: Vec<u64> = (0..5).map(|i| append(&w, i)).collect();
    w.flush_all().unwrap();
    let g2 = w.flushed_lsn();
    assert_ne!(
        g2 % BS,
        0,
        "a small group is not padded: the next flush shares its block"
    );
    let before = image(&dev);
    w.set_unmarked_rule_flushes(true);
    for i in 5..15 {
        append(&w, i);
    }
    let end = w.next_lsn();
    w.flush_for_pages(end).unwrap();
    let after = image(&dev);
    assert_eq!(scan(&*dev, BS, BS).len(), 15, "both groups whole");
    let at = usize_of(g2);
    for k in 0..usize_of(end - g2) {
        // The flush reached the device up to byte k of its group; the old bytes after it.
        let img = [&after[..at + k], &before[at + k..]].concat();
        let d = device(&img);
        let verdict = analyze(&d, 0, BLOCKS, SALT, (BS, BS), false).unwrap();
        assert!(
            matches!(verdict, LogVerdict::Torn { end, .. } | LogVerdict::Clean { end } if end == g2),
            "torn at byte {k}: {verdict:?}"
        );
        let got = scan(&d, BS, BS);
        let want: Vec<(u64, Vec<u8>)> = (0..5)
            .map(|i| (first[usize_of(i)], key(i).to_vec()))
            .collect();
        assert_eq!(got, want, "torn at byte {k}");
    }
}

#[test]
fn the_scan_of_a_redo_lsn_inside_a_group_starts_at_the_group() {
    let dev = Arc::new(MemDevice::new(BLOCKS * BS));
    let w = wal(&dev);
    let lsns: Vec<u64> = (0..6).map(|i| append(&w, i)).collect();
    assert_eq!(
        lsns[0],
        BS + u64_of(HEADER),
        "the first entry follows its group's header"
    );
    w.flush_all().unwrap();
    let redo = lsns[3];
    assert_eq!(w.scan_from(redo), BS);
    w.set_redo_lsn(redo, BS);
    let got: Vec<u64> = scan(&*dev, BS, redo).iter().map(|e| e.0).collect();
    assert_eq!(
        got,
        lsns[3..].to_vec(),
        "records below the redo LSN are skipped"
    );
    let end = w.flushed_lsn();
    assert_eq!(
        analyze(&*dev, 0, BLOCKS, SALT, (BS, redo), false).unwrap(),
        LogVerdict::Clean { end }
    );
    // A record appended later begins the next group: its own start.
    let l = append(&w, 9);
    assert_eq!(w.scan_from(l), l - u64_of(HEADER));
    assert_eq!(w.scan_from(end), end, "between groups: the LSN itself");
    // At the redo LSN itself there is no unit: reading from there is damage, not an end.
    assert!(matches!(
        analyze(&*dev, 0, BLOCKS, SALT, (redo, redo), false).unwrap(),
        LogVerdict::Damaged { .. }
    ));
    // Damage to the group holding the redo LSN, even below it, is damage: the group was
    // durable when the checkpoint named it.
    let mut img = image(&dev);
    img[usize_of(BS) + HEADER + 3] ^= 1;
    let d = device(&img);
    assert_eq!(
        analyze(&d, 0, BLOCKS, SALT, (BS, redo), false).unwrap(),
        LogVerdict::Damaged {
            from: redo,
            to: end,
            damage: RecordDamage::Checksum
        }
    );
}
