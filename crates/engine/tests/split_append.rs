//! Append-biased splits: keys inserted in ascending order fill leaves completely (the old
//! leaf stays full when the new key goes to the end of the rightmost leaf), instead of the
//! half-full pages an even split leaves behind; random order still splits evenly.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::value_for;
use nowa_device::MemDevice;
use nowa_engine::{leaf_records_per_page, Config, Durability, Engine};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::sync::Arc;

const N: u64 = 20_000;

fn engine() -> Engine {
    let cfg = Config {
        pool_bytes: 8 << 20,
        durability: Durability::Async,
        ..Config::default()
    };
    Engine::create(Arc::new(MemDevice::new(64 << 20)), cfg).unwrap()
}

/// Records per tree page, as a fraction of what a full leaf holds.
fn fill(e: &Engine) -> f64 {
    let (mark, free) = e.page_usage();
    N as f64 / ((mark - free) as f64 * leaf_records_per_page(8, 100) as f64)
}

#[test]
fn sequential_keys_fill_pages_over_90_percent() {
    let e = engine();
    for i in 0..N {
        e.put(&i.to_be_bytes(), &value_for(i, 0, 100)).unwrap();
    }
    let f = fill(&e);
    eprintln!("sequential: {:.1}% full", 100.0 * f);
    assert!(f > 0.9, "sequential fill {f}");
    assert_eq!(e.scan(b"", None, usize::MAX).unwrap().len() as u64, N);
}

#[test]
fn random_keys_split_evenly() {
    let e = engine();
    let mut keys: Vec<u64> = (0..N).collect();
    keys.shuffle(&mut SmallRng::seed_from_u64(7));
    for &i in &keys {
        e.put(&i.to_be_bytes(), &value_for(i, 0, 100)).unwrap();
    }
    let f = fill(&e);
    eprintln!("random (seed 7): {:.1}% full", 100.0 * f);
    // ln 2 = 69% expected for random inserts with even splits.
    assert!((0.55..0.85).contains(&f), "random fill {f}");
}
