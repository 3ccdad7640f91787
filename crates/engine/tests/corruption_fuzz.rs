//! Bad on-disk data never panics: random byte corruption anywhere in a database image, and
//! random bit flips on reads, yield errors (or correct data), never a panic or a wrong value
//! read silently from a page.

mod common;
use common::{value_for, CrashDevice};
use nowa_device::{FaultConfig, FaultyDevice, MemDevice};
use nowa_engine::{Config, Durability, Engine};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(128 << 10),
        dw_pages: 8,
        ..Config::default()
    }
}

/// Exercise everything; count values that differ from what was written (must stay 0 when
/// the call returned Ok).
fn exercise(e: &Engine, n: u64) -> u64 {
    let mut wrong = 0;
    for i in 0..n {
        if let Ok(Some(v)) = e.get(&i.to_be_bytes()) {
            if v != value_for(i, 0, 100) && v != value_for(i, 1, 100) {
                wrong += 1;
            }
        }
    }
    let _ = e.scan(b"", None, usize::MAX);
    let _ = e.put(&7u64.to_be_bytes(), &value_for(7, 1, 100));
    let _ = e.checkpoint();
    wrong
}

#[test]
fn random_image_corruption_is_an_error_not_a_panic() {
    let n = 3000u64;
    let dev = Arc::new(CrashDevice::new(4 << 20, 0));
    let e = Engine::create(dev.clone(), cfg()).unwrap();
    for i in 0..n {
        e.put_with(&i.to_be_bytes(), &value_for(i, 0, 100), Durability::Async)
            .unwrap();
    }
    e.checkpoint().unwrap();
    for i in (0..n).step_by(5) {
        e.put(&i.to_be_bytes(), &value_for(i, 1, 100)).unwrap();
    }
    let used_blocks = usize::try_from(e.layout().data_start + 200).unwrap();
    drop(e); // crash: the WAL holds the updates
    let image = dev.durable_image();
    let (mut opened, mut wrong) = (0, 0);
    for seed in 0..150u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut img = image.clone();
        for _ in 0..rng.random_range(1..6u32) {
            // Hit the superblocks, doublewrite area, WAL or data pages.
            let b = rng.random_range(0..used_blocks);
            let o = b * 4096 + rng.random_range(0..4096usize);
            img[o] ^= 1 << rng.random_range(0..8u32);
        }
        let d = Arc::new(CrashDevice::from_image(img, seed));
        if let Ok(e) = Engine::open(d, cfg()) {
            opened += 1;
            wrong += exercise(&e, n);
        }
    }
    eprintln!("150 corrupted images: {opened} opened, {wrong} wrong values");
    assert_eq!(wrong, 0);
}

#[test]
fn bit_flips_on_read_are_errors_not_panics() {
    let n = 3000u64;
    let mut wrong = 0;
    for seed in 0..20u64 {
        let fc = FaultConfig {
            seed,
            torn_write_prob: 0.0,
            bit_flip_read_prob: 0.0,
        };
        let dev = Arc::new(FaultyDevice::new(MemDevice::new(4 << 20), fc));
        let e = Engine::create(dev.clone(), cfg()).unwrap();
        for i in 0..n {
            e.put_with(&i.to_be_bytes(), &value_for(i, 0, 100), Durability::Async)
                .unwrap();
        }
        e.close().unwrap();
        drop(e);
        // Reopen through a device that flips bits on reads.
        let fc = FaultConfig {
            seed,
            torn_write_prob: 0.0,
            bit_flip_read_prob: 0.02,
        };
        let flippy = Arc::new(FaultyDevice::new(dev, fc));
        if let Ok(e) = Engine::open(flippy, cfg()) {
            wrong += exercise(&e, n);
        }
    }
    assert_eq!(wrong, 0);
}
