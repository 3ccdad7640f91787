//! The device write buffer absorbs rewrites of hot pages (ssd-iq.md 4.3, Figure 4b).
mod common;
use common::*;
use nowa_flash::{Ftl, FtlConfig, PolicyKind};
use nowa_workload::Zipfian;

fn zipf_waf(theta: f64, buffer_fraction: f64) -> (f64, u64) {
    let logical = 1u64 << 17;
    let cfg = FtlConfig {
        write_buffer_pages: pages(buffer_fraction, logical),
        ..config(logical, 0.07, 128, PolicyKind::Greedy)
    };
    let mut f = Ftl::new(cfg).expect("valid config");
    let mut w = Zipfian::new(logical, theta, 3).expect("valid workload");
    let c = protocol(&mut f, logical, 4.0, 3.0, || w.next_write());
    f.check_invariants().expect("consistent FTL");
    (c.waf(), c.buffer_absorbed)
}

#[test]
fn buffer_absorbs_hot_rewrites_at_high_skew() {
    let (plain, absorbed0) = zipf_waf(1.0, 0.0);
    let (buffered, absorbed) = zipf_waf(1.0, 0.0002);
    println!("zipf 1.0: no buffer {plain:.3}, 0.02% buffer {buffered:.3} ({absorbed} absorbed)");
    assert_eq!(absorbed0, 0);
    assert!(absorbed > 0);
    assert!(
        buffered < plain * 0.8,
        "buffer should cut WAF: {buffered:.3} vs {plain:.3}"
    );
}

#[test]
fn buffer_barely_matters_for_mild_skew() {
    let (plain, _) = zipf_waf(0.6, 0.0);
    let (buffered, _) = zipf_waf(0.6, 0.0002);
    assert!(
        (plain - buffered).abs() / plain < 0.05,
        "{plain:.3} vs {buffered:.3}"
    );
}
