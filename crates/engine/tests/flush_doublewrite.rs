//! The pipelined doublewrite of the in-place store (docs/design.md section 5): one store
//! flush per chunk (the home writes of a chunk become durable with the next chunk's copy
//! flush), and a power loss that drops or tears the pending home writes loses nothing: the
//! repair at open restores them from their doublewrite slots. Seeded (the device's choice of
//! which pending writes survive, arrive torn or are lost).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::CrashDevice;
use nowa_engine::page::{self, KIND_LEAF, PAGE_SIZE};
use nowa_engine::{DiskLayout, EngineCounters, InPlaceStore, PageStore, WriteKind};
use std::sync::atomic::Ordering;
use std::sync::Arc;

const SLOTS: u64 = 16;

fn layout() -> DiskLayout {
    DiskLayout {
        dw_start: 2,
        dw_pages: SLOTS,
        wal_start: 2 + SLOTS,
        wal_blocks: 8,
        data_start: 2 + SLOTS + 8,
        data_pages: 256,
    }
}

fn image(pid: u64, lsn: u64) -> Vec<u8> {
    let mut p = vec![0u8; PAGE_SIZE];
    page::init(&mut p, KIND_LEAF, pid);
    page::set_lsn(&mut p, lsn);
    page::seal(&mut p);
    p
}

fn try_write(
    store: &InPlaceStore,
    pids: std::ops::Range<u64>,
    lsn: u64,
) -> nowa_engine::Result<()> {
    let imgs: Vec<(u64, Vec<u8>)> = pids.map(|p| (p, image(p, lsn))).collect();
    let batch: Vec<(u64, &[u8])> = imgs.iter().map(|(p, i)| (*p, &i[..])).collect();
    store.write_pages(&batch, WriteKind::Eviction)
}

fn write(store: &InPlaceStore, pids: std::ops::Range<u64>, lsn: u64) {
    try_write(store, pids, lsn).unwrap();
}

/// The in-place store with doublewrite on `dev` (not formatted, not recovered).
fn store_on(dev: &Arc<CrashDevice>, counters: &Arc<EngineCounters>) -> InPlaceStore {
    InPlaceStore::new(dev.clone(), layout(), true, counters.clone())
}

/// After a power loss: restart, reopen and repair, then every page of `pids` is valid and
/// holds the version `want(pid)`.
fn recover_and_check(
    dev: &Arc<CrashDevice>,
    counters: &Arc<EngineCounters>,
    seed: u64,
    pids: std::ops::Range<u64>,
    want: impl Fn(u64) -> u64,
) {
    dev.power_loss();
    dev.restart();
    let store = store_on(dev, counters);
    store.recover().unwrap();
    let mut buf = vec![0u8; PAGE_SIZE];
    for pid in pids {
        store.read_page(pid, &mut buf).unwrap();
        page::validate(&buf, pid).unwrap_or_else(|e| panic!("seed {seed} pid {pid}: {e}"));
        assert_eq!(page::lsn(&buf), want(pid), "seed {seed} pid {pid}");
    }
}

#[test]
fn one_store_flush_per_chunk() {
    let dev = Arc::new(CrashDevice::new(1 << 20, 0));
    let counters = Arc::new(EngineCounters::default());
    let store = store_on(&dev, &counters);
    store.format().unwrap();
    let base = counters.store_flushes.load(Ordering::Relaxed);
    // Four batches of half the area: each fits beside the pending one, one flush each.
    for b in 0..4 {
        write(&store, b * 8..b * 8 + 8, 4096 * (b + 1));
    }
    assert_eq!(counters.store_flushes.load(Ordering::Relaxed) - base, 4);
    // A batch of 40 pages with 8 slots pending: chunks of the 8 slots beside the pending
    // ones, one flush each (five).
    write(&store, 100..140, 4096 * 9);
    assert_eq!(counters.store_flushes.load(Ordering::Relaxed) - base, 4 + 5);
    assert_eq!(counters.doublewrite_page_writes.load(Ordering::Relaxed), 72);
}

#[test]
fn pending_home_writes_survive_a_power_loss() {
    for seed in 0..40 {
        let dev = Arc::new(CrashDevice::new(1 << 20, seed));
        let counters = Arc::new(EngineCounters::default());
        let store = store_on(&dev, &counters);
        store.format().unwrap();
        write(&store, 0..12, 4096);
        write(&store, 4..20, 8192); // overlaps: pids 4..12 get a newer version
        recover_and_check(&dev, &counters, seed, 0..20, |pid| {
            if pid < 4 {
                4096
            } else {
                8192
            }
        });
    }
}

/// A store reopened without a crash (a clean close whose superblock went to a separate log
/// device: nothing flushed this one) finds the last chunk's home writes still volatile and
/// their only durable copy in the doublewrite slots. Its first chunk must not overwrite those
/// slots before the home writes are durable: a crash inside that chunk lost the pages
/// (nowa-vopr seed 1,075,982: a torn home page after a clean close and reopen).
#[test]
fn a_reopened_store_keeps_the_slots_of_unflushed_home_writes() {
    for seed in 0..40 {
        let dev = Arc::new(CrashDevice::new(1 << 20, seed));
        let counters = Arc::new(EngineCounters::default());
        let store = store_on(&dev, &counters);
        store.format().unwrap();
        write(&store, 0..12, 4096);
        drop(store);
        let store = store_on(&dev, &counters);
        store.recover().unwrap();
        // The reopened store's first slot writes tear and the power fails.
        dev.crash_after_writes(1);
        assert!(try_write(&store, 100..116, 8192).is_err());
        recover_and_check(&dev, &counters, seed, 0..12, |_| 4096);
    }
}
