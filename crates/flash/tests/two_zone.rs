//! Skewed writes (ssd-iq.md 4.2): naive greedy gets worse with skew; separating GC data helps.
mod common;
use common::*;
use nowa_flash::{Ftl, PolicyKind};
use nowa_workload::{TwoZone, Uniform};

const N: u64 = 1 << 17;
const OP: f64 = 0.10;

fn waf(policy: PolicyKind, skewed: bool, seed: u64) -> f64 {
    let mut f = Ftl::new(config(N, OP, 128, policy)).expect("valid config");
    let n = f.logical_pages();
    let c = if skewed {
        let mut w = TwoZone::new(n, 90.0, 10.0, seed).expect("valid workload");
        protocol(&mut f, n, 6.0, 4.0, || w.next_write())
    } else {
        let mut w = Uniform::new(n, seed).expect("valid workload");
        protocol(&mut f, n, 6.0, 4.0, || w.next_write())
    };
    f.check_invariants().expect("consistent FTL");
    c.waf()
}

#[test]
fn two_zone_90_10_is_worse_than_uniform_under_naive_greedy() {
    let uniform = waf(PolicyKind::Greedy, false, 1);
    let skewed = waf(PolicyKind::Greedy, true, 1);
    println!("greedy: uniform {uniform:.3}, two-zone 90/10 {skewed:.3}");
    assert!(
        skewed > uniform * 1.05,
        "two-zone {skewed:.3} should exceed uniform {uniform:.3}"
    );
}

#[test]
fn two_r_fifo_beats_greedy_on_two_zone() {
    let greedy = waf(PolicyKind::Greedy, true, 2);
    let fifo2r = waf(PolicyKind::TwoRFifo, true, 2);
    let greedy2r = waf(PolicyKind::TwoRGreedy, true, 2);
    println!("two-zone 90/10: greedy {greedy:.3}, 2r-greedy {greedy2r:.3}, 2r-fifo {fifo2r:.3}");
    assert!(
        fifo2r < greedy * 0.95,
        "2R-FIFO {fifo2r:.3} should be below greedy {greedy:.3}"
    );
}
