//! Append-biased splits: keys inserted in ascending order fill leaves completely (the old
//! leaf stays full when the new key goes to the end of the rightmost leaf), instead of the
//! half-full pages an even split leaves behind; random order still splits evenly; a run
//! appended in front of other keys splits at its insertion point (`split.rs`).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::value_for;
use nowa_device::MemDevice;
use nowa_engine::{leaf_records_per_page, Config, Durability, Engine, TableId, TreeOptions};
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

/// Leaves of table `t` filled by `n` records of 8-byte keys and 100-byte values, as a
/// fraction of full leaves (`Engine::space_usage`).
fn table_fill(e: &Engine, t: TableId, n: u64) -> f64 {
    let u = e.space_usage().unwrap();
    let leaves = u.leaves[&Some(t.number())].pages;
    n as f64 / (leaves as f64 * leaf_records_per_page(8 + 3, 100) as f64)
}

/// Runs appended in front of other keys (one tree holds every table): a table loaded before
/// the tables below it, and runs of one table continued behind the next run's keys (TPC-C's
/// districts). Each continuation splits at its insertion point, so the leaves stay full;
/// with even splits they were half full.
#[test]
fn runs_in_front_of_other_keys_fill_pages_over_90_percent() {
    let e = engine();
    let biased = TreeOptions {
        append_biased: true,
    };
    let (a, _) = e.open_table("a", biased).unwrap();
    let (b, _) = e.open_table("b", biased).unwrap();
    assert!(a.number() < b.number(), "a's keys sort before b's");
    for i in 0..N {
        e.load_put(b, &i.to_be_bytes(), &value_for(i, 0, 100))
            .unwrap();
    }
    for i in 0..N {
        e.load_put(a, &i.to_be_bytes(), &value_for(i, 0, 100))
            .unwrap();
    }
    let (fa, fb) = (table_fill(&e, a, N), table_fill(&e, b, N));
    eprintln!(
        "table loaded in front of another: {:.1}% full (the other {:.1}%)",
        100.0 * fa,
        100.0 * fb
    );
    assert!(fa > 0.9 && fb > 0.9, "fills {fa} {fb}");
    // Ten runs (first 4 key bytes) of table c, each continued after all were started.
    let (c, _) = e.open_table("c", biased).unwrap();
    let key = |run: u64, i: u64| ((run << 32) | i).to_be_bytes();
    let half = N / 20;
    for (lo, hi) in [(0, half), (half, 2 * half)] {
        for run in 0..10 {
            for i in lo..hi {
                e.load_put(c, &key(run, i), &value_for(i, run, 100))
                    .unwrap();
            }
        }
    }
    let fc = table_fill(&e, c, N);
    eprintln!(
        "runs continued behind the next run: {:.1}% full",
        100.0 * fc
    );
    assert!(fc > 0.9, "runs fill {fc}");
}
