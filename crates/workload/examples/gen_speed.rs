//! Micro-benchmark: ns per generated LBA at n = 2^24 pages (64 GiB of 4 KiB pages).
//!
//! Run with `cargo run --release -p nowa-workload --example gen_speed`.

use nowa_workload::{Op, Sequential, TwoZone, Uniform, WorkloadSpec, Zipfian};
use std::hint::black_box;
use std::time::Instant;

const N: u64 = 1 << 24;
const OPS: u64 = 20_000_000;

fn time(label: &str, mut f: impl FnMut() -> u64) {
    // Warm up, then measure.
    for _ in 0..1_000_000 {
        black_box(f());
    }
    let start = Instant::now();
    let mut acc = 0u64;
    for _ in 0..OPS {
        acc = acc.wrapping_add(f());
    }
    let ns = start.elapsed().as_nanos() as f64 / OPS as f64;
    black_box(acc);
    println!("{label:<40} {ns:6.2} ns/op");
}

fn time_batch(spec: &str) {
    let spec: WorkloadSpec = spec.parse().expect("a valid benchmark setup");
    let mut w = spec.build_in_use(N, 1).expect("a valid benchmark setup");
    let batch = 4096;
    let start = Instant::now();
    let mut acc = 0u64;
    if w.is_write_only() {
        let mut buf = vec![0u64; batch];
        for _ in 0..OPS / batch as u64 {
            w.fill_writes(&mut buf);
            acc = acc.wrapping_add(buf.iter().sum::<u64>());
        }
    } else {
        let mut buf = Vec::with_capacity(batch);
        for _ in 0..OPS / batch as u64 {
            buf.clear();
            w.fill_batch(&mut buf, batch);
            for op in &buf {
                if let Op::Write(l) = op {
                    acc = acc.wrapping_add(*l);
                }
            }
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / OPS as f64;
    black_box(acc);
    println!("{:<40} {ns:6.2} ns/op", format!("dyn batch {}", w.name()));
}

fn main() {
    println!("n = 2^24 pages, {OPS} ops each");
    let mut u = Uniform::new(N, 1).expect("a valid benchmark setup");
    time("Uniform::next_write", || u.next_write());
    let mut z = Zipfian::new(N, 0.8, 1).expect("a valid benchmark setup");
    time("Zipfian(0.8)::next_write", || z.next_write());
    let mut z = Zipfian::new(N, 1.0, 1).expect("a valid benchmark setup");
    time("Zipfian(1.0)::next_write", || z.next_write());
    let mut t = TwoZone::new(N, 90.0, 10.0, 1).expect("a valid benchmark setup");
    time("TwoZone(90/10)::next_write", || t.next_write());
    let mut s = Sequential::new(N).expect("a valid benchmark setup");
    time("Sequential::next_write", || s.next_write());
    for spec in ["uniform", "zipf:0.8", "two-zone:90/10", "zns:65536:4"] {
        time_batch(spec);
    }
}
