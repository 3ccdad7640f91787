//! Batch write-back (issue 16 item 2): in place, with the page cleaner keeping free frames,
//! dirty pages are written back in large batches and the doublewrite pipeline issues one
//! store flush per chunk, so an update-heavy run with a pool much smaller than the data
//! issues at most one store flush per 16 page writes. Without the cleaner, misses evict in
//! batches too (the sweep no longer stops at the first clean frame).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::MemDevice;
use nowa_engine::{Config, Durability, Engine, Stats};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

const SEED: u64 = 16;

fn run(page_cleaner: bool) -> Stats {
    eprintln!("seed {SEED}, page cleaner {page_cleaner}");
    let cfg = Config {
        pool_bytes: 256 * 4096,
        wal_limit_bytes: Some(8 << 20),
        durability: Durability::Async,
        page_cleaner,
        ..Config::default()
    };
    let e = Engine::create(MemDevice::new(64 << 20), cfg).unwrap();
    let mut rng = SmallRng::seed_from_u64(SEED);
    let keys = 40_000u64;
    for i in 0..keys {
        e.put(&i.to_be_bytes(), &[1u8; 100]).unwrap();
    }
    let before = e.stats();
    for n in 0..60_000u64 {
        let k = rng.random_range(0..keys);
        e.put(&k.to_be_bytes(), &n.to_le_bytes().repeat(12))
            .unwrap();
    }
    let s = e.stats();
    e.close().unwrap();
    let d = |f: fn(&Stats) -> u64| f(&s) - f(&before);
    let pages = d(|s| s.eviction_page_writes) + d(|s| s.checkpoint_page_writes);
    let flushes = d(|s| s.store_flushes);
    eprintln!(
        "page writes {pages} (cleaner {}), store flushes {flushes}, {:.1} pages per flush",
        d(|s| s.cleaner_page_writes),
        pages as f64 / flushes.max(1) as f64
    );
    assert!(
        pages > 5_000,
        "the pool must be much smaller than the data: {pages}"
    );
    s
}

#[test]
fn the_cleaner_writes_back_in_batches_of_at_least_16_pages_per_flush() {
    let s = run(true);
    assert!(s.cleaner_page_writes > 0, "{s:?}");
    assert!(
        s.store_flushes * 16 <= s.eviction_page_writes + s.checkpoint_page_writes,
        "{} store flushes for {} + {} page writes",
        s.store_flushes,
        s.eviction_page_writes,
        s.checkpoint_page_writes
    );
}

#[test]
fn misses_evict_in_batches_without_the_cleaner() {
    let s = run(false);
    assert_eq!(s.cleaner_page_writes, 0);
    assert!(
        s.store_flushes * 16 <= s.eviction_page_writes + s.checkpoint_page_writes,
        "{s:?}"
    );
    // Every evicted page is in the residency histogram.
    assert_eq!(s.residency_pages.iter().sum::<u64>(), s.evictions);
    assert!(s.residency_checkpoint_writes.iter().sum::<u64>() <= s.checkpoint_page_writes);
}
