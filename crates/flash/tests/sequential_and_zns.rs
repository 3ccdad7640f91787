//! Patterns that must never cost a GC copy: WAF exactly 1.
mod common;
use common::*;
use nowa_flash::{Ftl, FtlConfig, Mode, PolicyKind};
use nowa_workload::{Op, Workload, ZnsLike};

/// Apply `writes` page writes of a workload (and the trims between them) to the FTL.
fn drive(f: &mut Ftl, w: &mut ZnsLike, writes: u64) {
    let mut done = 0u64;
    while done < writes {
        match w.next_op() {
            Op::Write(l) => {
                f.write(l, 0).expect("write");
                done += 1;
            }
            Op::Trim { start, len } => f.trim(start, len).expect("trim"),
        }
    }
}

#[test]
fn sequential_writes_have_waf_one() {
    for policy in [
        PolicyKind::Greedy,
        PolicyKind::TwoRFifo,
        PolicyKind::CostBenefit,
    ] {
        let mut f = Ftl::new(config(1 << 16, 0.07, 256, policy.clone())).unwrap();
        let n = f.logical_pages();
        let mut next = 0u64;
        let c = protocol(&mut f, n, 2.0, 3.0, || {
            next = (next + 1) % n;
            next
        });
        assert_eq!(
            c.media_pages, c.host_pages,
            "{policy}: sequential overwrite copied pages"
        );
        assert_eq!(c.waf(), 1.0);
    }
}

/// ssd-iq.md 4.5: pick a zone, trim it, write it sequentially; one write front and zones at
/// least as large as the GC unit (here 1x and 4x) give WAF = 1 on a conventional SSD.
#[test]
fn zns_like_single_front_has_waf_one() {
    for zone_units in [1u64, 4] {
        let unit = 256u32;
        let mut f = Ftl::new(config(1 << 16, 0.07, unit, PolicyKind::Greedy)).unwrap();
        let n = f.logical_pages();
        f.precondition_sequential(n).unwrap();
        let mut w = ZnsLike::new(n, zone_units * u64::from(unit), 1, 16, 5).unwrap();
        let c0 = f.counters();
        drive(&mut f, &mut w, 4 * n);
        let c = f.counters().since(&c0);
        assert_eq!(c.gc_pages, 0, "zone of {zone_units} units: GC copied pages");
        assert_eq!(c.waf(), 1.0);
        f.check_invariants().unwrap();
    }
}

/// The same pattern with several fronts on a conventional SSD interleaves zones in units and
/// makes GC copy (ssd-iq Figure 6b) — the reason ZNS exists.
#[test]
fn zns_like_many_fronts_costs_copies_on_conventional_ssd() {
    let mut f = Ftl::new(config(1 << 16, 0.07, 256, PolicyKind::Greedy)).unwrap();
    let n = f.logical_pages();
    f.precondition_sequential(n).unwrap();
    let mut w = ZnsLike::new(n, 256, 8, 1, 5).unwrap();
    let c0 = f.counters();
    drive(&mut f, &mut w, 4 * n);
    assert!(f.counters().since(&c0).waf() > 1.05);
}

fn zoned(zones: u64, zone_pages: u32, max_open: u32) -> Ftl {
    Ftl::new(FtlConfig {
        logical_pages: zones * u64::from(zone_pages),
        pages_per_block: zone_pages,
        blocks_per_superblock: 1,
        mode: Mode::Zoned {
            max_open_zones: max_open,
        },
        ..FtlConfig::default()
    })
    .expect("valid zoned config")
}

#[test]
fn zoned_device_runs_zns_pattern_with_waf_one() {
    let mut f = zoned(64, 128, 4);
    let n = f.logical_pages();
    let mut w = ZnsLike::new(n, 128, 4, 8, 11).unwrap();
    drive(&mut f, &mut w, 6 * n);
    let c = f.counters();
    assert_eq!(c.media_pages, c.host_pages);
    assert_eq!(c.gc_pages, 0);
    f.check_invariants().unwrap();
}

#[test]
fn zoned_device_enforces_rules() {
    let mut f = zoned(8, 16, 2);
    f.write(0, 0).unwrap();
    let e = f.write(5, 0).unwrap_err();
    assert!(e.to_string().contains("write pointer is at 1"), "{e}");
    f.write(16, 0).unwrap();
    let e = f.write(32, 0).unwrap_err();
    assert!(
        matches!(e, nowa_flash::FlashError::TooManyOpenZones { .. }),
        "{e}"
    );
    f.zone_reset(0).unwrap();
    assert_eq!(f.zone_write_pointer(0), Some(0));
    f.write(32, 0).unwrap();
    assert!(f.trim(3, 2).is_err(), "partial-zone trim must be refused");
    for l in 33..48 {
        f.write(l, 0).unwrap();
    }
    // A full zone no longer counts as open.
    f.write(48, 0).unwrap();
    f.check_invariants().unwrap();
}
