//! Power loss with the page cleaner running (and hot-page deferral off, by a fixed count, or
//! adaptive under a redo bound): seeded crash points during an update run with a tiny pool
//! and a tiny WAL limit, so the cleaner's batch write-back, the pipelined doublewrite and
//! checkpoint passes all run when the power goes.
//! After recovery every acknowledged (sync) write is present. The crash point is seeded;
//! which write it hits depends on the cleaner thread's timing.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::{value_for, CrashDevice};
use nowa_engine::{Config, Durability, Engine};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;

const KEYS: u64 = 4000;
const OPS: u64 = 1200;
const SEEDS: u64 = 40;

fn cfg(mcc: u32, bound: Option<u64>) -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(128 << 10),
        durability: Durability::Sync,
        dw_pages: 8,
        page_cleaner: true,
        max_checkpoint_count: mcc,
        max_redo_bytes: bound,
        ..Config::default()
    }
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn base_image(mcc: u32, bound: Option<u64>) -> (Vec<u8>, Model) {
    let dev = Arc::new(CrashDevice::new(6 << 20, 0));
    let e = Engine::create(dev.clone(), cfg(mcc, bound)).unwrap();
    let mut m = Model::new();
    for i in 0..KEYS {
        let v = value_for(i, 0, 100);
        e.put_with(&i.to_be_bytes(), &v, Durability::Async).unwrap();
        m.insert(i.to_be_bytes().to_vec(), v);
    }
    e.close().unwrap();
    (dev.durable_image(), m)
}

/// One crash point: returns the writes the device took before it and the deferrals.
fn crash_once(
    image: &[u8],
    model: &Model,
    (mcc, bound): (u32, Option<u64>),
    seed: u64,
) -> (u64, u64) {
    let dev = Arc::new(CrashDevice::from_image(image.to_vec(), seed));
    let e = Engine::open(dev.clone(), cfg(mcc, bound)).unwrap();
    let mut rng = SmallRng::seed_from_u64(seed);
    let stop_at = rng.random_range(0..OPS);
    if seed % 2 == 0 {
        dev.crash_after_writes(rng.random_range(1..400));
    }
    let mut m = model.clone();
    let mut failed = None;
    for n in 0..OPS {
        if n == stop_at {
            dev.power_loss();
        }
        let k = rng.random_range(0..KEYS).to_be_bytes().to_vec();
        let v = value_for(n, seed, rng.random_range(20..180));
        if e.put(&k, &v).is_err() {
            failed = Some(k);
            break;
        }
        m.insert(k, v);
    }
    if !dev.is_powered_off() {
        dev.power_loss();
    }
    let calls = dev.write_calls();
    let deferrals = e.stats().checkpoint_deferrals;
    drop(e);
    dev.restart();
    let e = Engine::open(dev, cfg(mcc, bound)).unwrap_or_else(|err| panic!("seed {seed}: {err}"));
    for (k, v) in &m {
        if failed.as_ref() != Some(k) {
            let got = e.get(k).unwrap();
            assert_eq!(
                got.as_ref(),
                Some(v),
                "seed {seed} mcc {mcc}: acknowledged write lost"
            );
        }
    }
    e.close().unwrap();
    (calls, deferrals)
}

fn campaign(mcc: u32, bound: Option<u64>) {
    let (image, model) = base_image(mcc, bound);
    let (mut writes, mut deferrals) = (0, 0);
    for seed in 0..SEEDS {
        let (w, d) = crash_once(&image, &model, (mcc, bound), seed);
        writes += w;
        deferrals += d;
    }
    eprintln!("mcc {mcc} bound {bound:?}: {SEEDS} crash points, {writes} device writes, {deferrals} deferrals");
    assert_eq!(
        deferrals > 0,
        mcc > 0 || bound.is_some(),
        "deferral must be exercised exactly when on"
    );
}

#[test]
fn power_loss_with_the_cleaner_running() {
    campaign(0, None);
}

#[test]
fn power_loss_with_the_cleaner_and_deferral() {
    campaign(4, None);
}

/// Adaptive deferral under a redo bound (half the WAL limit): no acknowledged write lost.
#[test]
fn power_loss_with_the_cleaner_and_adaptive_deferral() {
    campaign(0, Some(64 << 10));
}
