//! YCSB-A in memory: load 1M records (8-byte keys, 120-byte values), then 50% reads / 50%
//! updates from 2 threads on a MemDevice with async durability and a pool larger than the
//! data. Prints ops/s.
//!
//! `cargo run --release -p nowa-engine --example ycsb_mem [-- --threads 2 --secs 5 --zipf 0.8 --sync]`
#![expect(
    clippy::unwrap_used,
    reason = "an example: a failure ends it with the error"
)]

use nowa_device::MemDevice;
use nowa_engine::{Config, Durability, Engine};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Zipf sampler (Gray et al., "Quickly generating billion-record synthetic databases").
struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

impl Zipf {
    fn new(n: u64, theta: f64) -> Self {
        let zeta = |m: u64| (1..=m).map(|i| 1.0 / (i as f64).powf(theta)).sum::<f64>();
        let zetan = zeta(n);
        let zeta2 = zeta(2);
        let alpha = 1.0 / (1.0 - theta);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
        Zipf {
            n,
            theta,
            alpha,
            zetan,
            eta,
        }
    }
    fn sample(&self, rng: &mut SmallRng) -> u64 {
        let u: f64 = rng.random();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        let x = (self.n as f64) * (self.eta * u - self.eta + 1.0).powf(self.alpha);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "x is in [0, n]: the zipf inversion maps u in (0, 1) into the key range"
        )]
        let k = x as u64;
        k % self.n
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let arg =
        |name: &str, def: f64| -> f64 { value(name).and_then(|v| v.parse().ok()).unwrap_or(def) };
    let count =
        |name: &str, def: u64| -> u64 { value(name).and_then(|v| v.parse().ok()).unwrap_or(def) };
    let threads = count("--threads", 2);
    let secs = arg("--secs", 5.0);
    let records = count("--records", 1_000_000);
    let theta = arg("--zipf", 0.0);
    let sync = args.iter().any(|a| a == "--sync");

    let cfg = Config {
        pool_bytes: 512 << 20,
        durability: Durability::Async,
        ..Config::default()
    };
    // --sync: updates of the run phase are Sync (group commit); the load stays Async.
    let run_durability = if sync {
        Durability::Sync
    } else {
        Durability::Async
    };
    let e = Arc::new(Engine::create(MemDevice::new(2 << 30), cfg).expect("create"));

    let t0 = Instant::now();
    let per = records.div_ceil(threads);
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let e = e.clone();
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(t);
                let mut v = [0u8; 120];
                for i in t * per..((t + 1) * per).min(records) {
                    rng.fill(&mut v[..]);
                    e.put(&i.to_be_bytes(), &v).unwrap();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let load = t0.elapsed();
    println!(
        "load: {records} records in {:.2}s = {:.0} inserts/s",
        load.as_secs_f64(),
        records as f64 / load.as_secs_f64()
    );

    let zipf = Arc::new((theta > 0.0).then(|| Zipf::new(records, theta)));
    let stop = Arc::new(AtomicBool::new(false));
    let total = Arc::new(AtomicU64::new(0));
    let before = e.stats();
    let c1 = nowa_units::cpu::process_cpu_secs();
    let t1 = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let (e, stop, total, zipf) = (e.clone(), stop.clone(), total.clone(), zipf.clone());
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(100 + t);
                let mut v = [0u8; 120];
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..1024 {
                        let k = match zipf.as_ref() {
                            Some(z) => {
                                z.sample(&mut rng).wrapping_mul(0x9E37_79B9_7F4A_7C15) % records
                            }
                            None => rng.random_range(0..records),
                        }
                        .to_be_bytes();
                        if rng.random::<bool>() {
                            std::hint::black_box(e.get(&k).unwrap());
                        } else {
                            rng.fill(&mut v[..8]);
                            e.put_with(&k, &v, run_durability).unwrap();
                        }
                    }
                    n += 1024;
                }
                total.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    let el = t1.elapsed().as_secs_f64();
    let cpu = nowa_units::cpu::process_cpu_secs() - c1;
    let ops = total.load(Ordering::Relaxed);
    let s = e.stats();
    println!(
        "YCSB-A ({}, {threads} threads, {run_durability:?}): {ops} ops in {el:.2}s = {:.0} ops/s; hit ratio {:.4}; WAL {:.1} MB; checkpoints {}",
        if theta > 0.0 { format!("zipf {theta}") } else { "uniform".to_string() },
        ops as f64 / el,
        s.hit_ratio,
        (s.wal_record_bytes - before.wal_record_bytes) as f64 / 1e6,
        s.checkpoints - before.checkpoints
    );
    println!(
        "CPU: {cpu:.2} CPU-seconds for {threads} threads over {el:.2}s (ideal {:.2}); {:.0} ops per CPU-second \
         => {:.0} ops/s if {threads} cores were dedicated",
        threads as f64 * el,
        ops as f64 / cpu,
        ops as f64 / cpu * threads as f64
    );
}
