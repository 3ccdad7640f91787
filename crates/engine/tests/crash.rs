//! Crash test: >= 200 seeded crash points during a write-heavy run with a tiny pool and a tiny
//! WAL limit, so evictions, checkpoints and doublewrite flushes all happen. Half of the seeds
//! tear the n-th device write and power off (n uniform over the run's writes), half pull the
//! power between two operations. After recovery: every acknowledged sync write is present,
//! and the state equals the model after some prefix of the history that contains every
//! acknowledged sync write (async writes may be lost, only as a suffix).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::{value_for, CrashDevice};
use nowa_device::{BlockDevice, FaultConfig, FaultyDevice, MemDevice};
use nowa_engine::{Config, Durability, Engine};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

const KEYS: u64 = 6000;
const SEEDS: u64 = 220;

/// The crash controls both devices offer.
trait Crashable: BlockDevice + 'static {
    fn crash_after_writes(&self, n: u64);
    fn power_loss(&self);
    fn restart(&self);
    fn is_powered_off(&self) -> bool;
    fn write_calls(&self) -> u64;
}

impl Crashable for CrashDevice {
    fn crash_after_writes(&self, n: u64) {
        CrashDevice::crash_after_writes(self, n)
    }
    fn power_loss(&self) {
        CrashDevice::power_loss(self)
    }
    fn restart(&self) {
        CrashDevice::restart(self)
    }
    fn is_powered_off(&self) -> bool {
        CrashDevice::is_powered_off(self)
    }
    fn write_calls(&self) -> u64 {
        CrashDevice::write_calls(self)
    }
}

impl Crashable for FaultyDevice<MemDevice> {
    fn crash_after_writes(&self, n: u64) {
        FaultyDevice::crash_after_writes(self, n)
    }
    fn power_loss(&self) {
        FaultyDevice::power_loss(self)
    }
    fn restart(&self) {
        FaultyDevice::restart(self)
    }
    fn is_powered_off(&self) -> bool {
        FaultyDevice::is_powered_off(self)
    }
    fn write_calls(&self) -> u64 {
        self.writes_issued()
    }
}
const OPS: usize = 1500;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(128 << 10),
        durability: Durability::Sync,
        dw_pages: 8,
        ..Config::default()
    }
}

fn k(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn load(dev: Arc<impl Crashable>) -> Model {
    let e = Engine::create(dev, cfg()).unwrap();
    let mut m = Model::new();
    for i in 0..KEYS {
        let v = value_for(i, 0, 100);
        e.put_with(&k(i), &v, Durability::Async).unwrap();
        m.insert(k(i).to_vec(), v);
    }
    e.close().unwrap();
    m
}

#[derive(Clone)]
struct Op {
    key: Vec<u8>,
    val: Option<Vec<u8>>,
    sync: bool,
}

fn workload(seed: u64) -> Vec<Op> {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0xABCD);
    (0..OPS)
        .map(|n| {
            let key = k(rng.random_range(0..KEYS + 500)).to_vec();
            let sync = rng.random_range(0..2u32) == 0;
            let val = if rng.random_range(0..100u32) < 75 {
                Some(value_for(
                    u64::from_be_bytes(key[..].try_into().unwrap()),
                    n as u64 + 1,
                    rng.random_range(20..180),
                ))
            } else {
                None
            };
            Op { key, val, sync }
        })
        .collect()
}

/// Runs until the device fails; returns (acknowledged ops, the failed op if any).
fn run<D: Crashable>(
    e: &Engine,
    ops: &[Op],
    power_loss_at: Option<(usize, &D)>,
) -> (Vec<Op>, Option<Op>) {
    let mut acked = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if let Some((at, dev)) = power_loss_at {
            if i == at {
                dev.power_loss();
            }
        }
        let d = if op.sync {
            Durability::Sync
        } else {
            Durability::Async
        };
        let r = match &op.val {
            Some(v) => e.put_with(&op.key, v, d).map(|_| ()),
            None => e.delete_with(&op.key, d).map(|_| ()),
        };
        match r {
            Ok(()) => acked.push(op.clone()),
            Err(_) => return (acked, Some(op.clone())),
        }
    }
    (acked, None)
}

fn apply(m: &mut Model, op: &Op) {
    match &op.val {
        Some(v) => {
            m.insert(op.key.clone(), v.clone());
        }
        None => {
            m.remove(&op.key);
        }
    }
}

/// Is `got` equal to base + ops[..p] for some p >= (index after the last sync op)?
/// `acked` = how many of `ops` were acknowledged (a final failed op may or may not apply).
fn prefix_matches(base: &Model, ops: &[Op], acked: usize, got: &Model) -> Result<usize, String> {
    let min = ops[..acked]
        .iter()
        .rposition(|o| o.sync)
        .map_or(0, |i| i + 1);
    let mut m = base.clone();
    for op in &ops[..min] {
        apply(&mut m, op);
    }
    let keys: HashSet<Vec<u8>> = m.keys().chain(got.keys()).cloned().collect();
    let mut bad: HashSet<Vec<u8>> = keys
        .into_iter()
        .filter(|k| m.get(k) != got.get(k))
        .collect();
    if bad.is_empty() {
        return Ok(min);
    }
    for (p, op) in ops.iter().enumerate().skip(min) {
        apply(&mut m, op);
        if m.get(&op.key) == got.get(&op.key) {
            bad.remove(&op.key);
        } else {
            bad.insert(op.key.clone());
        }
        if bad.is_empty() {
            return Ok(p + 1);
        }
    }
    for (i, op) in ops.iter().enumerate() {
        if bad.contains(&op.key) {
            eprintln!(
                "op {i}/{} (min {min}): key {:?} val {:?} sync {}",
                ops.len(),
                op.key,
                op.val.as_ref().map(|v| v.len()),
                op.sync
            );
        }
    }
    let sample: Vec<_> = bad
        .iter()
        .take(3)
        .map(|k| {
            (
                k.clone(),
                m.get(k).map(|v| v.len()),
                got.get(k).map(|v| v.len()),
            )
        })
        .collect();
    Err(format!(
        "{} keys differ from every allowed prefix, e.g. {sample:?}",
        bad.len()
    ))
}

/// `fresh(seed)`: a device holding the loaded base database (closed cleanly).
fn crash_points<D: Crashable>(
    name: &str,
    base_model: &Model,
    mut fresh: impl FnMut(u64) -> Arc<D>,
) {
    // Calibrate: how many device writes a full run issues.
    let calls = {
        let dev = fresh(u64::MAX);
        let e = Engine::open(dev.clone(), cfg()).unwrap();
        let before = dev.write_calls();
        run::<D>(&e, &workload(1), None);
        dev.write_calls() - before
    };
    assert!(calls > 1000, "workload too light: {calls} writes");
    let mut torn_tail = 0;
    let mut repaired = 0;
    let mut lost_async = 0;
    let (mut crashed_in_recovery, mut recovered_twice_ok) = (0, 0);
    for seed in 0..SEEDS {
        let dev = fresh(seed);
        let e = Engine::open(dev.clone(), cfg()).unwrap();
        let ops = workload(seed);
        let mut rng = SmallRng::seed_from_u64(seed);
        let (acked, failed) = if seed % 2 == 0 {
            dev.crash_after_writes(rng.random_range(1..=calls));
            run::<D>(&e, &ops, None)
        } else {
            run(&e, &ops, Some((rng.random_range(0..OPS), &*dev)))
        };
        if !dev.is_powered_off() {
            dev.power_loss();
        }
        drop(e);
        dev.restart();
        if seed % 4 == 3 {
            // Crash again during recovery (doublewrite repair, redo evictions, the final
            // checkpoint): recovery must be idempotent.
            dev.crash_after_writes(rng.random_range(1..40));
            match Engine::open(dev.clone(), cfg()) {
                Ok(e) => {
                    recovered_twice_ok += 1;
                    drop(e);
                    dev.power_loss();
                }
                Err(_) => crashed_in_recovery += 1,
            }
            dev.restart();
        }
        let e = Engine::open(dev.clone(), cfg())
            .unwrap_or_else(|err| panic!("seed {seed}: open failed: {err}"));
        let rep = e.recovery_report().unwrap().clone();
        torn_tail += rep.bad_wal_records;
        repaired += rep.pages_repaired;
        let got: Model = e.scan(b"", None, usize::MAX).unwrap().into_iter().collect();
        let failed_key = failed.as_ref().map(|o| o.key.clone());
        let mut hist = acked.clone();
        hist.extend(failed);
        match prefix_matches(base_model, &hist, acked.len(), &got) {
            Ok(p) => lost_async += (hist.len() - p) as u64,
            Err(msg) => panic!("seed {seed}: {msg} (acked {}, report {rep:?})", acked.len()),
        }
        // Every acknowledged sync write must be visible through get as well.
        let mut last: BTreeMap<&[u8], &Op> = BTreeMap::new();
        for op in &acked {
            last.insert(&op.key, op);
        }
        for (key, op) in last {
            // (The failed op, if any, may or may not have been applied.)
            if op.sync && failed_key.as_deref() != Some(key) {
                assert_eq!(
                    e.get(key).unwrap(),
                    op.val,
                    "seed {seed}: acknowledged sync write lost"
                );
            }
        }
        // The recovered engine keeps working.
        e.put(b"after-crash", b"ok").unwrap();
        e.close().unwrap();
    }
    eprintln!("{name}: {SEEDS} crash points, {calls} writes per run, {torn_tail} torn WAL tails, {repaired} pages repaired from doublewrite, {lost_async} async ops lost, \
         {crashed_in_recovery} crashes inside recovery (+{recovered_twice_ok} recoveries that finished before the armed crash)");
}

#[test]
fn crash_points_test_device() {
    let dev = Arc::new(CrashDevice::new(6 << 20, 0));
    let base_model = load(dev.clone());
    let image = dev.durable_image();
    crash_points("tests/common CrashDevice", &base_model, |seed| {
        Arc::new(CrashDevice::from_image(image.clone(), seed))
    });
}

#[test]
fn crash_points_nowa_device_faulty_device() {
    let mut base_model = None;
    crash_points(
        "nowa_device::FaultyDevice",
        &load(Arc::new(CrashDevice::new(6 << 20, 0))),
        |seed| {
            let cfg = FaultConfig {
                seed,
                torn_write_prob: 0.3,
                bit_flip_read_prob: 0.0,
            };
            let dev = Arc::new(FaultyDevice::new(MemDevice::new(6 << 20), cfg));
            let m = load(dev.clone());
            assert_eq!(base_model.get_or_insert_with(|| m.clone()), &m);
            dev
        },
    );
}
