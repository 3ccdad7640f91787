//! Crash test for reclaimed space: seeded power losses during a churn that empties leaves
//! (queue deletes at the old end, a delete cursor through the middle, so emptied leaves have
//! left neighbours to relink), reuses the freed pages for splits at the new end, and updates,
//! with a tiny pool and WAL (evictions, checkpoints and page releases all happen). Half of
//! the seeds tear or drop the n-th device write, half pull the power between two operations;
//! every 4th seed crashes again inside recovery. Every operation is Sync: after recovery the
//! database is exactly the model after the acknowledged operations (the failed one applied or
//! not), through scan and get, keeps working, and survives a clean reopen. Both write paths.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
#[path = "common/oop_store.rs"]
mod oop_store;

use common::{value_for, CrashDevice};
use nowa_device::{BlockDevice, FaultConfig, FaultyDevice, MemDevice};
use nowa_engine::{Config, Durability, Engine, OopConfig, StoreBuilder};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;

const BASE: u64 = 3000;
const OPS: usize = 1200;
const DEVICE: u64 = 6 << 20;

type Model = BTreeMap<u64, Vec<u8>>;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(128 << 10),
        durability: Durability::Sync,
        dw_pages: 8,
        ..Config::default()
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Put(u64, u64),
    Delete(u64),
}

/// The churn: appends at the new end, deletes at the old end and through the middle.
fn workload(seed: u64) -> Vec<Op> {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x5BACE);
    let (mut next, mut oldest, mut cursor) = (BASE, 0, BASE / 2);
    (0..OPS)
        .map(|n| match rng.random_range(0..100u32) {
            0..40 => {
                next += 1;
                Op::Put(next - 1, n as u64 + 1)
            }
            40..70 => {
                oldest += 1;
                Op::Delete(oldest - 1)
            }
            70..85 => {
                cursor += 1;
                Op::Delete(cursor - 1)
            }
            _ => Op::Put(rng.random_range(oldest..next), n as u64 + 1),
        })
        .collect()
}

fn apply(e: &Engine, m: &mut Model, op: Op) -> nowa_engine::Result<()> {
    match op {
        Op::Put(k, ver) => {
            let v = value_for(k, ver, 100);
            e.put(&k.to_be_bytes(), &v)?;
            m.insert(k, v);
        }
        Op::Delete(k) => {
            e.delete(&k.to_be_bytes())?;
            m.remove(&k);
        }
    }
    Ok(())
}

fn model_of(op: Op, m: &mut Model) {
    match op {
        Op::Put(k, ver) => {
            m.insert(k, value_for(k, ver, 100));
        }
        Op::Delete(k) => {
            m.remove(&k);
        }
    }
}

fn read_all(e: &Engine) -> Model {
    let got: Model = e
        .scan(b"", None, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|(k, v)| (u64::from_be_bytes(k.try_into().unwrap()), v))
        .collect();
    for (k, v) in &got {
        assert_eq!(
            e.get(&k.to_be_bytes()).unwrap().as_ref(),
            Some(v),
            "get {k}"
        );
    }
    got
}

/// The write path under test: a fresh device holding the base database, its builder.
trait Path {
    type Dev: BlockDevice + 'static;
    fn fresh(&self, seed: u64) -> Arc<Self::Dev>;
    fn builder(&self) -> &dyn StoreBuilder;
    fn crash_after_writes(d: &Self::Dev, n: u64);
    fn power_loss(d: &Self::Dev);
    fn restart(d: &Self::Dev);
    fn writes(d: &Self::Dev) -> u64;
}

/// Runs `ops` until the device fails: (model after the acknowledged ops, the failed op).
fn run(e: &Engine, base: &Model, ops: &[Op], cut: Option<usize>) -> (Model, Option<Op>) {
    let mut m = base.clone();
    for (i, &op) in ops.iter().enumerate() {
        if Some(i) == cut {
            return (m, None);
        }
        if apply(e, &mut m, op).is_err() {
            return (m, Some(op));
        }
    }
    (m, None)
}

fn crash_points<P: Path>(name: &str, p: &P, base: &Model, seeds: u64) {
    let calls = {
        let dev = p.fresh(u64::MAX);
        let e = Engine::open_with_store(dev.clone(), cfg(), p.builder()).unwrap();
        let before = P::writes(&dev);
        run(&e, base, &workload(1), None);
        P::writes(&dev) - before
    };
    assert!(calls > 500, "{name}: workload too light: {calls} writes");
    for seed in 0..seeds {
        let dev = p.fresh(seed);
        let e = Engine::open_with_store(dev.clone(), cfg(), p.builder()).unwrap();
        let mut rng = SmallRng::seed_from_u64(seed);
        let ops = workload(seed);
        let (model, failed) = if seed % 2 == 0 {
            P::crash_after_writes(&dev, rng.random_range(1..=calls));
            run(&e, base, &ops, None)
        } else {
            let at = rng.random_range(0..OPS);
            let r = run(&e, base, &ops, Some(at));
            P::power_loss(&dev);
            r
        };
        P::power_loss(&dev);
        drop(e);
        P::restart(&dev);
        if seed % 4 == 3 {
            P::crash_after_writes(&dev, rng.random_range(1..40));
            drop(Engine::open_with_store(dev.clone(), cfg(), p.builder()));
            P::power_loss(&dev);
            P::restart(&dev);
        }
        let e = Engine::open_with_store(dev.clone(), cfg(), p.builder())
            .unwrap_or_else(|err| panic!("{name} seed {seed}: open failed: {err}"));
        let got = read_all(&e);
        let mut with_failed = model.clone();
        if let Some(op) = failed {
            model_of(op, &mut with_failed);
        }
        assert!(
            got == model || got == with_failed,
            "{name} seed {seed}: {} keys recovered, {} expected (failed op {failed:?})",
            got.len(),
            model.len()
        );
        // Keeps working (frees and reuses again), and survives a clean reopen.
        let mut m = got;
        let more: Vec<Op> = workload(seed + 1000).into_iter().take(300).collect();
        for op in more {
            let op = match op {
                Op::Put(k, v) => Op::Put(k + 10 * BASE, v),
                Op::Delete(k) => Op::Delete(k),
            };
            apply(&e, &mut m, op).unwrap();
        }
        e.close().unwrap();
        let e = Engine::open_with_store(dev.clone(), cfg(), p.builder()).unwrap();
        assert_eq!(read_all(&e), m, "{name} seed {seed}: after a clean reopen");
    }
    eprintln!("{name}: {seeds} crash points, {calls} writes per run");
}

fn load(dev: Arc<impl BlockDevice + 'static>, b: &dyn StoreBuilder) -> Model {
    let e = Engine::create_with_store(dev, cfg(), b).unwrap();
    let mut m = Model::new();
    for k in 0..BASE {
        let v = value_for(k, 0, 100);
        e.put_with(&k.to_be_bytes(), &v, Durability::Async).unwrap();
        m.insert(k, v);
    }
    e.close().unwrap();
    m
}

struct InPlace {
    image: Vec<u8>,
    b: Box<dyn StoreBuilder>,
}

impl Path for InPlace {
    type Dev = CrashDevice;
    fn fresh(&self, seed: u64) -> Arc<CrashDevice> {
        Arc::new(CrashDevice::from_image(self.image.clone(), seed))
    }
    fn builder(&self) -> &dyn StoreBuilder {
        &*self.b
    }
    fn crash_after_writes(d: &CrashDevice, n: u64) {
        d.crash_after_writes(n);
    }
    fn power_loss(d: &CrashDevice) {
        if !d.is_powered_off() {
            d.power_loss();
        }
    }
    fn restart(d: &CrashDevice) {
        d.restart();
    }
    fn writes(d: &CrashDevice) -> u64 {
        d.write_calls()
    }
}

struct OutOfPlace {
    b: Box<dyn StoreBuilder>,
}

impl Path for OutOfPlace {
    type Dev = FaultyDevice<MemDevice>;
    fn fresh(&self, seed: u64) -> Arc<Self::Dev> {
        let f = FaultConfig {
            seed,
            torn_write_prob: 0.3,
            bit_flip_read_prob: 0.0,
        };
        let dev = Arc::new(FaultyDevice::new(MemDevice::new(DEVICE), f));
        load(dev.clone(), &*self.b);
        dev
    }
    fn builder(&self) -> &dyn StoreBuilder {
        &*self.b
    }
    fn crash_after_writes(d: &Self::Dev, n: u64) {
        d.crash_after_writes(n);
    }
    fn power_loss(d: &Self::Dev) {
        if !d.is_powered_off() {
            d.power_loss();
        }
    }
    fn restart(d: &Self::Dev) {
        d.restart();
    }
    fn writes(d: &Self::Dev) -> u64 {
        d.writes_issued()
    }
}

#[test]
fn power_loss_mid_free_and_reuse_in_place() {
    let b: Box<dyn StoreBuilder> = Box::new(nowa_engine::in_place_store());
    let dev = Arc::new(CrashDevice::new(DEVICE, 0));
    let base = load(dev.clone(), &*b);
    let p = InPlace {
        image: dev.durable_image(),
        b,
    };
    crash_points("in place", &p, &base, 120);
}

#[test]
fn power_loss_mid_free_and_reuse_out_of_place() {
    let oop = OopConfig {
        zone_bytes: Some(64 << 10),
        open_zones: 2,
        ..OopConfig::default()
    };
    let slot = oop_store::Slot::default();
    let b: Box<dyn StoreBuilder> = Box::new(oop_store::builder(oop, slot));
    let base = load(Arc::new(MemDevice::new(DEVICE)), &*b);
    crash_points("out of place", &OutOfPlace { b }, &base, 80);
}
