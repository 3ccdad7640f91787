//! Helpers shared by the FTL integration tests: a tiny seeded RNG and run loops.
#![allow(dead_code)]

use nowa_flash::{Counters, Ftl, FtlConfig, PolicyKind};

/// SplitMix64 ([`nowa_units::splitmix64`]): a fixed stream so every failure replays from its
/// seed.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        nowa_units::splitmix64(&mut self.0)
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
        batch.extend((0..n).map(|_| u32::try_from(next()).expect("LBA below 2^32")));
        f.write_batch(&batch, 0).expect("writes succeed");
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
    f.precondition_sequential(in_use).expect("precondition");
    run(f, pages(warmup, in_use), &mut next);
    let c0 = f.counters();
    run(f, pages(measure, in_use), &mut next);
    f.counters().since(&c0)
}

/// `x` times `n` pages, rounded down.
pub fn pages(x: f64, n: u64) -> u64 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a non-negative page count"
    )]
    let p = (x * n as f64) as u64;
    p
}

/// Uniform-traffic WAF of FIFO cleaning / greedy with large units (Desnoyers, ACM TOS 2014;
/// Van Houdt, SIGMETRICS 2013): A(alpha) = 1 / (1 - x), where x solves x = exp(-alpha (1 - x)).
pub fn waf_lambert(alpha: f64) -> f64 {
    nowa_flash::lambert_waf(alpha)
}

/// Greedy with Np pages per unit (Desnoyers 2014, Eq. 12): A(k alpha) / k, k = 1 + 1/(2 Np).
pub fn waf_greedy(alpha: f64, np: u32) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * f64::from(np));
    waf_lambert(k * alpha) / k
}
