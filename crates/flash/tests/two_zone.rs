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

/// The SSD-iq reference simulator (`gabriel-haas/ssdiq` `sim/`, its GC code built as is with a
/// small driver of ours) at 1 GiB physical, 1 MiB blocks, ssdfill 0.9: sequential fill,
/// 1x physical random warm-up writes, 4x logical measured writes; mean of seeds 1-3.
/// (policy, hot %, reference WAF)
const REFERENCE: &[(PolicyKind, f64, f64)] = &[
    (PolicyKind::Greedy, 90.0, 6.128),
    (PolicyKind::Greedy, 95.0, 7.158),
    (PolicyKind::TwoRGreedy, 90.0, 5.376),
    (PolicyKind::TwoRGreedy, 95.0, 5.254),
    (PolicyKind::TwoRFifo, 90.0, 2.953),
    (PolicyKind::TwoRFifo, 95.0, 2.511),
];

#[test]
fn policies_match_the_ssdiq_reference_simulator() {
    let physical = 1u64 << 18;
    let logical = physical * 9 / 10;
    for (policy, hot, reference) in REFERENCE {
        let cfg = nowa_flash::FtlConfig {
            op: 1.0 / 9.0,
            ..config(logical, 0.0, 256, policy.clone())
        };
        let mut f = Ftl::new(cfg).unwrap();
        assert_eq!(
            f.layout().physical_pages,
            physical,
            "same geometry as the reference"
        );
        let mut w = TwoZone::new(logical, *hot, 100.0 - hot, 1).unwrap();
        let c = protocol(&mut f, logical, 1.0 / 0.9, 4.0, || w.next_write());
        f.check_invariants().unwrap();
        let err = (c.waf() - reference) / reference;
        println!(
            "{policy} {hot}: nowa {:.3}, reference {reference:.3} ({:+.1}%)",
            c.waf(),
            100.0 * err
        );
        assert!(
            err.abs() < 0.02,
            "{policy} {hot}: {:.3} vs reference {reference}",
            c.waf()
        );
    }
}
