//! InnoDB's page cleaner (`Config::flushing`, docs/checkpointing.md): once-a-second
//! flush-list batches at the adaptive-flushing rate, on a clock the test drives (one "second"
//! per few updates, deterministic). Checks that batches checkpoint well below half the WAL
//! limit (the old passes started only there), that deferral in the batch stays within the count, and that power loss at seeded points loses no acknowledged write
//! (the redo LSN keeps the rec_lsn of every page a batch left dirty).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::{value_for, CrashDevice};
use nowa_device::MemDevice;
use nowa_engine::{Config, Durability, Engine, Flushing};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn cfg(mcc: u32, cleaner: bool) -> Config {
    Config {
        pool_bytes: 256 * 4096,
        wal_limit_bytes: Some(4 << 20),
        durability: Durability::Sync,
        dw_pages: 8,
        page_cleaner: cleaner,
        max_checkpoint_count: mcc,
        flushing: Some(Flushing {
            io_capacity: 20,
            io_capacity_max: 200,
            flushing_avg_loops: 3,
            ..Flushing::default()
        }),
        ..Config::default()
    }
}

/// A flush clock the test advances.
fn clock(e: &Engine) -> Arc<AtomicU64> {
    let t = Arc::new(AtomicU64::new(0));
    let c = t.clone();
    #[expect(clippy::cast_precision_loss, reason = "small tick counts")]
    e.set_flush_clock(Some(Arc::new(move || c.load(Ordering::Relaxed) as f64)));
    t
}

/// 2,000 keys loaded, then 6,000 updates: every 4th to one of 8 hot keys (one page, dirty
/// in every batch), the others walk the cold keys in order (a page is dirtied in one burst,
/// then not for ~100 clock seconds); a clock second every 25 updates. Returns the engine's counters after the run.
fn run(mcc: u32) -> nowa_engine::Stats {
    let e = Engine::create(MemDevice::new(32 << 20), cfg(mcc, false)).unwrap();
    let t = clock(&e);
    for i in 0..2000u64 {
        e.put_with(&i.to_be_bytes(), &value_for(i, 0, 100), Durability::Async)
            .unwrap();
    }
    for n in 0..6000u64 {
        let k = if n % 4 == 0 { n % 8 } else { 8 + n % 1992 };
        e.put_with(&k.to_be_bytes(), &value_for(n, 1, 100), Durability::Async)
            .unwrap();
        if n % 25 == 0 {
            t.fetch_add(1, Ordering::Relaxed);
        }
        assert!(
            e.wal_used() < (4 << 20) / 2,
            "the batches keep the log below half the limit"
        );
    }
    e.stats()
}

#[test]
fn batches_checkpoint_below_half_the_wal_limit_and_defer_within_the_count() {
    let (v, d) = (run(0), run(8));
    eprintln!(
        "vanilla: {} batches, {} checkpoint writes; mcc 8: {} batches, {} writes, {} deferrals",
        v.flush_batches,
        v.checkpoint_page_writes,
        d.flush_batches,
        d.checkpoint_page_writes,
        d.checkpoint_deferrals
    );
    assert!(v.flush_batches >= 200, "one batch per clock second");
    assert!(v.checkpoint_page_writes > 0, "batches write pages");
    assert_eq!(v.forced_checkpoint_page_writes, 0, "no sync flush");
    assert!(d.checkpoint_deferrals > 0, "deferral in the batches");
    // Each deferral postpones one selection; a page is written at its (mcc+1)-th selection
    // at the latest, so the batches still write (the saving itself is a TPC-C measurement:
    // docs/checkpointing.md; on this synthetic walk it is within +-15%).
    assert!(
        d.checkpoint_page_writes > 0,
        "deferred pages are written in the end"
    );
    assert!(
        d.checkpoint_deferrals <= 8 * (d.checkpoint_page_writes + 256),
        "at most mcc deferrals per write of a resident page"
    );
}

const KEYS: u64 = 3000;
const OPS: u64 = 1500;

#[test]
fn power_loss_with_innodb_flushing_and_deferral_loses_nothing() {
    let dev = Arc::new(CrashDevice::new(16 << 20, 0));
    let e = Engine::create(dev.clone(), cfg(4, true)).unwrap();
    let mut base = BTreeMap::new();
    for i in 0..KEYS {
        let v = value_for(i, 0, 100);
        e.put_with(&i.to_be_bytes(), &v, Durability::Async).unwrap();
        base.insert(i.to_be_bytes().to_vec(), v);
    }
    e.close().unwrap();
    let image = dev.durable_image();
    let (mut batches, mut deferrals) = (0, 0);
    for seed in 0..24u64 {
        let dev = Arc::new(CrashDevice::from_image(image.clone(), seed));
        let e = Engine::open(dev.clone(), cfg(4, seed % 3 != 0)).unwrap();
        let t = clock(&e);
        let stop_at = (seed * 613) % OPS;
        let mut m = base.clone();
        let mut failed = None;
        for n in 0..OPS {
            if n == stop_at {
                dev.power_loss();
            }
            let k = if n % 3 == 0 {
                n % 16
            } else {
                (n * 7919 + seed) % KEYS
            };
            let k = k.to_be_bytes().to_vec();
            let v = value_for(n, seed, 60 + (n % 100) as usize);
            if n % 10 == 0 {
                t.fetch_add(1, Ordering::Relaxed);
            }
            if e.put(&k, &v).is_err() {
                failed = Some(k);
                break;
            }
            m.insert(k, v);
        }
        if !dev.is_powered_off() {
            dev.power_loss();
        }
        batches += e.stats().flush_batches;
        deferrals += e.stats().checkpoint_deferrals;
        drop(e);
        dev.restart();
        let e = Engine::open(dev, cfg(4, false)).unwrap_or_else(|err| panic!("seed {seed}: {err}"));
        for (k, v) in &m {
            if failed.as_ref() != Some(k) {
                assert_eq!(
                    e.get(k).unwrap().as_ref(),
                    Some(v),
                    "seed {seed}: write lost"
                );
            }
        }
        e.close().unwrap();
    }
    eprintln!("24 crash points: {batches} batches, {deferrals} deferrals");
    assert!(
        batches > 0 && deferrals > 0,
        "batches and deferral exercised"
    );
}
