//! Helpers shared by the FTL integration tests: a tiny seeded RNG and run loops.
#![allow(dead_code)]

use nowa_flash::{Counters, Ftl, FtlConfig, PolicyKind};

/// SplitMix64: a fixed, dependency-free stream so every failure replays from its seed.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub fn config(logical_pages: u64, op: f64, unit_pages: u32, policy: PolicyKind) -> FtlConfig {
    FtlConfig {
        logical_pages,
        op,
        pages_per_block: unit_pages,
        blocks_per_superblock: 1,
        policy,
        ..FtlConfig::default()
    }
}

/// Write `pages` pages drawn by `next`, in batches.
pub fn run(f: &mut Ftl, pages: u64, mut next: impl FnMut() -> u64) {
    let mut batch = Vec::with_capacity(1024);
    let mut done = 0;
    while done < pages {
        batch.clear();
        let n = (pages - done).min(1024);
        batch.extend((0..n).map(|_| next() as u32));
        f.write_batch(&batch, 0).unwrap();
        done += n;
    }
}

/// ssd-iq protocol: sequential fill of `in_use` pages, `warmup` x in_use writes, then the
/// measured phase of `measure` x in_use writes; returns the measured-phase counters.
pub fn protocol(
    f: &mut Ftl,
    in_use: u64,
    warmup: f64,
    measure: f64,
    mut next: impl FnMut() -> u64,
) -> Counters {
    f.precondition_sequential(in_use).unwrap();
    run(f, (warmup * in_use as f64) as u64, &mut next);
    let c0 = f.counters();
    run(f, (measure * in_use as f64) as u64, &mut next);
    f.counters().since(&c0)
}

/// Uniform-traffic WAF of FIFO cleaning / greedy with large units (Desnoyers, ACM TOS 2014;
/// Van Houdt, SIGMETRICS 2013): A(alpha) = 1 / (1 - x), where x solves x = exp(-alpha (1 - x)),
/// equivalently alpha / (alpha + W0(-alpha e^-alpha)).
pub fn waf_lambert(alpha: f64) -> f64 {
    let mut x: f64 = 0.5;
    for _ in 0..200_000 {
        x = (-alpha * (1.0 - x)).exp();
    }
    1.0 / (1.0 - x)
}

/// Greedy with Np pages per unit (Desnoyers 2014, Eq. 12): A(k alpha) / k, k = 1 + 1/(2 Np).
pub fn waf_greedy(alpha: f64, np: u32) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * np as f64);
    waf_lambert(k * alpha) / k
}
