//! Same seed, same numbers; different seeds agree within noise.
mod common;
use common::*;
use nowa_flash::{Counters, Ftl, PolicyKind};
use nowa_workload::{WorkloadParams, WorkloadSpec};

fn run_spec(spec: &str, policy: PolicyKind, seed: u64) -> Counters {
    let mut f = Ftl::new(nowa_flash::FtlConfig {
        seed,
        ..config(1 << 16, 0.1, 64, policy)
    })
    .unwrap();
    let n = f.logical_pages();
    let mut w = spec
        .parse::<WorkloadSpec>()
        .unwrap()
        .build(&WorkloadParams::new(n, 1.0, seed).unwrap())
        .unwrap();
    let mut buf = vec![0u64; 1];
    protocol(&mut f, n, 2.0, 3.0, || {
        w.fill_writes(&mut buf);
        buf[0]
    })
}

#[test]
fn same_seed_same_numbers() {
    for (spec, policy) in [
        ("zipf:0.8", PolicyKind::Greedy),
        ("two-zone:80/20", PolicyKind::Random),
        ("uniform", PolicyKind::KGreedy(4)),
    ] {
        assert_eq!(
            run_spec(spec, policy.clone(), 11),
            run_spec(spec, policy, 11),
            "{spec}"
        );
    }
}

#[test]
fn different_seeds_agree_within_noise() {
    let w: Vec<f64> = (1..=4)
        .map(|s| run_spec("uniform", PolicyKind::Greedy, s).waf())
        .collect();
    let mean = w.iter().sum::<f64>() / w.len() as f64;
    for x in &w {
        assert!(
            (x - mean).abs() / mean < 0.02,
            "seed spread too wide: {w:?}"
        );
    }
    assert!(
        w.windows(2).any(|p| p[0] != p[1]),
        "different seeds gave identical runs: {w:?}"
    );
}
