//! Space reclaimed: queue-style churn (insert the next key, delete the oldest) with about
//! 3.4 MiB of live data in a 14 MiB database. Before pages were freed this filled the data
//! region after about 32 k operations; it must now run 10x longer (>= 320 k operations) on
//! both write paths, with the tree's page count staying flat (leaves emptied at the old end
//! are freed and reused at the new end), and read back exactly the live window.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::value_for;
use nowa_device::MemDevice;
use nowa_engine::{out_of_place_store, Config, Durability, Engine, OopConfig};
use std::sync::Arc;

/// Live records (100-byte values: about 3.4 MiB of leaves).
const LIVE: u64 = 28_000;
/// Operations after the window is full: one insert plus one delete each = 2 operations.
const ROUNDS: u64 = 165_000;
const DEVICE: u64 = 14 << 20;

fn cfg() -> Config {
    Config {
        pool_bytes: 1 << 20,
        wal_limit_bytes: Some(1 << 20),
        durability: Durability::Async,
        dw_pages: 16,
        ..Config::default()
    }
}

fn key(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

/// Runs the churn; returns the largest page usage seen (allocation mark, tree pages).
fn churn(e: &Engine) -> (u64, u64) {
    for i in 0..LIVE {
        e.put(&key(i), &value_for(i, 0, 100)).unwrap();
    }
    let (mut max_mark, mut max_tree) = (0, 0);
    for r in 0..ROUNDS {
        let i = LIVE + r;
        e.put(&key(i), &value_for(i, 0, 100)).unwrap();
        assert!(e.delete(&key(r)).unwrap(), "key {r} missing");
        if r % 5000 == 0 {
            let (mark, free) = e.page_usage();
            max_mark = max_mark.max(mark);
            max_tree = max_tree.max(mark - free);
        }
    }
    let got = e.scan(b"", None, usize::MAX).unwrap();
    assert_eq!(got.len() as u64, LIVE);
    for (n, (k, v)) in got.iter().enumerate() {
        let i = ROUNDS + n as u64;
        assert_eq!(k.as_slice(), key(i), "window position {n}");
        assert_eq!(v, &value_for(i, 0, 100));
    }
    (max_mark, max_tree)
}

fn check(name: &str, e: &Engine) {
    let (mark, tree) = churn(e);
    let cap = e.capacity_pages();
    eprintln!(
        "{name}: {} ops, allocation mark {mark} pages, tree at most {tree} pages, capacity {cap}",
        LIVE + 2 * ROUNDS
    );
    // About 870 full leaves hold the window; the old end is freed as the new end grows.
    assert!(tree < 1_500, "{name}: tree grew to {tree} pages");
    assert!(mark < 2_000 && mark < cap, "{name}: allocation mark {mark}");
}

#[test]
fn queue_churn_runs_in_a_bounded_database_in_place() {
    let e = Engine::create(Arc::new(MemDevice::new(DEVICE)), cfg()).unwrap();
    check("in place", &e);
    e.close().unwrap();
}

#[test]
fn queue_churn_runs_in_a_bounded_database_out_of_place() {
    let oop = OopConfig {
        zone_bytes: Some(256 << 10),
        ..OopConfig::default()
    };
    let b = out_of_place_store(oop);
    let e = Engine::create_with_store(Arc::new(MemDevice::new(DEVICE)), cfg(), &b).unwrap();
    check("out of place", &e);
    e.close().unwrap();
}
