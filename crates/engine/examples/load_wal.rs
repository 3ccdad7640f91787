//! WAL bytes of a put-by-put load: N records (8-byte keys, 120-byte values) inserted in
//! random or ascending key order on a memory device, in place, async durability, with the
//! given pool. Prints WAL record bytes (total and per record), device page writes and the
//! process CPU time. Measures what structure modifications cost in the log.
//!
//! `cargo run --release -p nowa-engine --example load_wal -- [records] [random|seq] [pool MiB]`
#![expect(
    clippy::unwrap_used,
    reason = "an example: a failure ends it with the error"
)]

use nowa_device::MemDevice;
use nowa_engine::{Config, Durability, Engine};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::sync::Arc;

/// Process CPU seconds (user + system) from /proc/self/stat (clock ticks of 1/100 s).
fn cpu_secs() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(200_000, |s| s.parse().unwrap());
    let random = args.get(2).is_none_or(|s| s == "random");
    let pool_mib: u64 = args.get(3).map_or(32, |s| s.parse().unwrap());
    let mut ids: Vec<u64> = (0..n).collect();
    if random {
        ids.shuffle(&mut SmallRng::seed_from_u64(42));
    }
    let cfg = Config {
        pool_bytes: pool_mib << 20,
        durability: Durability::Async,
        ..Config::default()
    };
    let cap = (n * 400 + (pool_mib << 21) + (64 << 20)).next_multiple_of(4096);
    let e = Engine::create(Arc::new(MemDevice::new(cap)), cfg).unwrap();
    let before = e.stats();
    let cpu0 = cpu_secs();
    let t = std::time::Instant::now();
    let mut v = [0u8; 120];
    for &i in &ids {
        v[..8].copy_from_slice(&i.to_le_bytes());
        e.put(&i.to_be_bytes(), &v).unwrap();
    }
    e.sync().unwrap();
    let s = e.stats();
    let wal = s.wal_record_bytes - before.wal_record_bytes;
    println!(
        "{n} records, {} order, pool {pool_mib} MiB: WAL {wal} bytes ({:.1} per record), \
         {} page writes (+{} doublewrite), {:.2} s CPU, {:.2} s wall",
        if random { "random" } else { "ascending" },
        wal as f64 / n as f64,
        s.eviction_page_writes + s.checkpoint_page_writes,
        s.doublewrite_page_writes,
        cpu_secs() - cpu0,
        t.elapsed().as_secs_f64()
    );
}
