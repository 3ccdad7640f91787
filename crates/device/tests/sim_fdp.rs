//! SimDevice (FDP): geometry reports the handles and RU size; separating hot and cold data
//! onto two reclaim-unit handles gives a lower WAF than mixing them on one.

use nowa_device::{BlockDevice, DeviceError, SimDevice, SimMode};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

const CAP: u64 = 32 << 20;

/// Fill the device, then 6x capacity of 4 KiB writes: 90% to a hot 10% of the space.
/// `separate`: hot data on handle 1, cold on handle 0; otherwise everything on handle 0.
fn run(separate: bool) -> f64 {
    let d = SimDevice::with_capacity(CAP, 0.15, SimMode::Fdp { handles: 2 }).expect("device");
    let pages = CAP / 4096;
    let hot = pages / 10;
    let buf = vec![1u8; 4096];
    for l in 0..pages {
        let h = if separate && l < hot { 1 } else { 0 };
        d.write_at_hinted(l * 4096, &buf, Some(h)).expect("write");
    }
    let before = d.ftl_counters();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    for _ in 0..6 * pages {
        let l = if rng.random_bool(0.9) {
            rng.random_range(0..hot)
        } else {
            rng.random_range(hot..pages)
        };
        let h = if separate && l < hot { 1 } else { 0 };
        d.write_at_hinted(l * 4096, &buf, Some(h)).expect("write");
    }
    d.with_ftl(|f| f.check_invariants()).expect("invariants");
    d.ftl_counters().since(&before).waf()
}

#[test]
fn geometry_reports_handles() {
    let d = SimDevice::with_capacity(CAP, 0.15, SimMode::Fdp { handles: 4 }).unwrap();
    let g = d.geometry();
    assert_eq!(g.placement_handles, Some(4));
    assert_eq!(
        g.reclaim_unit_size,
        Some(u64::from(d.layout().unit_pages) * 4096)
    );
    assert_eq!(g.zone_size, None);
    // An out-of-range handle is refused, not silently remapped.
    let e = d.write_at_hinted(0, &[0u8; 4096], Some(4)).unwrap_err();
    assert!(
        matches!(e, DeviceError::BadPlacement { handle: 4, .. }),
        "{e}"
    );
    d.write_at_hinted(0, &[0u8; 4096], Some(3)).unwrap();
    d.write_at(4096, &[0u8; 4096]).unwrap(); // no hint = handle 0
}

#[test]
fn separating_lifetimes_lowers_waf() {
    let mixed = run(false);
    let separated = run(true);
    println!("FDP hot/cold: one handle WAF {mixed:.3}, two handles WAF {separated:.3}");
    assert!(
        separated < mixed * 0.9,
        "separated {separated} mixed {mixed}"
    );
}
