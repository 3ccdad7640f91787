//! Model-based test: random put/delete/get/scan against a BTreeMap, with clean restarts and
//! crash restarts, a tiny buffer pool (many evictions) and variable-length keys (many splits).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::CrashDevice;
use nowa_engine::{Config, Durability, Engine};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        durability: Durability::Sync,
        dw_pages: 8,
        ..Config::default()
    }
}

fn key(rng: &mut SmallRng) -> Vec<u8> {
    let id = rng.random_range(0..4000u32);
    // Variable length: the id prefix keeps order interesting, the suffix length varies.
    let mut k = format!("k{id:05}").into_bytes();
    k.extend(std::iter::repeat_n(b'x', (id % 7) as usize * 9));
    k
}

fn check_all(e: &Engine, m: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let all = e.scan(b"", None, usize::MAX).unwrap();
    assert_eq!(all.len(), m.len(), "scan length");
    for ((k, v), (mk, mv)) in all.iter().zip(m.iter()) {
        assert_eq!(k, mk);
        assert_eq!(v, mv);
    }
}

fn run(seed: u64, ops: usize) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let dev = Arc::new(CrashDevice::new(16 << 20, seed));
    let mut e = Engine::create(dev.clone(), cfg()).unwrap();
    let mut m: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let (mut evictions, mut checkpoints, mut page_writes) = (0, 0, 0);
    for i in 0..ops {
        match rng.random_range(0..100u32) {
            0..=49 => {
                let k = key(&mut rng);
                let len = rng.random_range(0..300usize);
                let v: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                e.put(&k, &v).unwrap();
                m.insert(k, v);
            }
            50..=64 => {
                let k = key(&mut rng);
                assert_eq!(e.delete(&k).unwrap(), m.remove(&k).is_some());
            }
            65..=89 => {
                let k = key(&mut rng);
                assert_eq!(e.get(&k).unwrap(), m.get(&k).cloned(), "get {k:?}");
            }
            _ => {
                let start = key(&mut rng);
                let got = e.scan(&start, None, 20).unwrap();
                let want: Vec<_> = m
                    .range(start..)
                    .take(20)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(got, want, "scan");
            }
        }
        if i % 1500 == 1499 {
            let s = e.stats();
            evictions += s.evictions;
            checkpoints += s.checkpoints;
            page_writes += s.eviction_page_writes + s.checkpoint_page_writes;
            if rng.random_range(0..2u32) == 0 {
                e.close().unwrap();
                drop(e);
                e = Engine::open(dev.clone(), cfg()).unwrap();
                assert!(e.recovery_report().unwrap().clean_shutdown);
            } else {
                // Every write was sync and acknowledged: all must survive the power loss.
                dev.power_loss();
                drop(e);
                dev.restart();
                e = Engine::open(dev.clone(), cfg()).unwrap();
            }
            check_all(&e, &m);
        }
    }
    check_all(&e, &m);
    let s = e.stats();
    eprintln!("seed {seed}: {} keys, {s:?}", m.len());
    eprintln!(
        "seed {seed}: evictions {evictions} checkpoints {checkpoints} page writes {page_writes}"
    );
    assert!(evictions > 1000, "pool should have evicted a lot");
    assert!(checkpoints > 5);
    assert!(page_writes > 500);
    e.close().unwrap();
}

#[test]
fn model_seed_1() {
    run(1, 30_000);
}

#[test]
fn model_seed_2() {
    run(2, 30_000);
}

#[test]
fn model_seed_3() {
    run(3, 30_000);
}

#[test]
fn model_seed_4() {
    run(4, 30_000);
}
