//! Uniform random writes: the simulated steady-state WAF must match the analytic models.
mod common;
use common::*;
use nowa_flash::{Ftl, PolicyKind};

/// Greedy, uniform random writes over the whole logical space, OP = spare/logical.
/// Model: Desnoyers 2014 Eq. 12, A_greedy(alpha, Np) ~ A(k alpha)/k with k = 1 + 1/(2 Np) and
/// A(alpha) = 1/(1-x), x = exp(-alpha(1-x)); alpha is the effective alpha (open and reserved
/// units hold no data: REFERENCE.md). Tolerance 3%.
#[test]
fn greedy_matches_desnoyers_model() {
    let np = 256;
    for (i, op) in [0.07, 0.10, 0.20, 0.28].into_iter().enumerate() {
        let mut f = Ftl::new(config(1 << 18, op, np, PolicyKind::Greedy)).unwrap();
        let n = f.logical_pages();
        let mut rng = Rng(100 + i as u64);
        let c = protocol(&mut f, n, 3.0, 4.0, || rng.below(n));
        let alpha = f.layout().alpha_eff(n);
        let model = waf_greedy(alpha, np);
        let err = (c.waf() - model).abs() / model;
        println!(
            "op {op}: simulated {:.3}, model {model:.3}, error {:.2}%",
            c.waf(),
            err * 100.0
        );
        assert!(
            err < 0.03,
            "OP {op}: simulated WAF {:.3} vs model {model:.3} ({:.1}% off)",
            c.waf(),
            err * 100.0
        );
        f.check_invariants().unwrap();
    }
}

/// The paper-quoted worked values (REFERENCE.md, OP = spare/logical) of the Lambert-W form.
#[test]
fn model_reproduces_reference_values() {
    for (op, want) in [(0.07, 7.817), (0.10, 5.678), (0.20, 3.188), (0.28, 2.481)] {
        let got = waf_lambert(1.0 + op);
        assert!((got - want).abs() < 0.002, "OP {op}: {got} vs {want}");
    }
}

/// FIFO cleaning is exactly the Lambert-W model in the large-device limit.
#[test]
fn fifo_matches_lambert_model() {
    let op = 0.10;
    let mut f = Ftl::new(config(1 << 18, op, 256, PolicyKind::Fifo)).unwrap();
    let n = f.logical_pages();
    let mut rng = Rng(7);
    let c = protocol(&mut f, n, 3.0, 4.0, || rng.below(n));
    let model = waf_lambert(f.layout().alpha_eff(n));
    let err = (c.waf() - model).abs() / model;
    assert!(
        err < 0.03,
        "FIFO: simulated {:.3} vs model {model:.3}",
        c.waf()
    );
}

/// Fill below 1: unused LBAs act as spare space; the model with alpha = physical / in-use holds.
#[test]
fn fill_level_acts_as_extra_spare() {
    let mut f = Ftl::new(config(1 << 18, 0.07, 256, PolicyKind::Greedy)).unwrap();
    let in_use = pages(0.8, f.logical_pages());
    let mut rng = Rng(9);
    let c = protocol(&mut f, in_use, 3.0, 4.0, || rng.below(in_use));
    let model = waf_greedy(f.layout().alpha_eff(in_use), 256);
    assert!(
        (c.waf() - model).abs() / model < 0.03,
        "fill 0.8: {:.3} vs {model:.3}",
        c.waf()
    );
}
