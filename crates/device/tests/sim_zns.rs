//! SimDevice (ZNS): the sequential-write rule, zone append / reset / report, the open-zone
//! limit, whole-zone trim only, WAF = 1.

use nowa_device::{BlockDevice, DeviceError, SimDevice, SimMode, ZoneState};

fn dev(max_open: u32) -> (SimDevice, u64) {
    let d = SimDevice::with_capacity(
        64 << 20,
        0.0,
        SimMode::Zoned {
            max_open_zones: max_open,
        },
    )
    .expect("zoned device");
    let zs = d.geometry().zone_size.expect("zoned");
    (d, zs)
}

#[test]
fn sequential_rule() {
    let (d, zs) = dev(4);
    let b = vec![3u8; 4096];
    let e = d.write_at(4096, &b).unwrap_err();
    assert!(
        matches!(
            e,
            DeviceError::NotAtWritePointer {
                offset: 4096,
                zone: 0,
                write_pointer: 0
            }
        ),
        "{e}"
    );
    d.write_at(0, &b).unwrap();
    d.write_at(4096, &b).unwrap();
    assert!(
        matches!(
            d.write_at(0, &b),
            Err(DeviceError::NotAtWritePointer { .. })
        ),
        "rewrite behind the write pointer"
    );
    assert!(
        matches!(
            d.write_at(5 * 4096, &b),
            Err(DeviceError::NotAtWritePointer { .. })
        ),
        "gap ahead of the write pointer"
    );
    // A write may not cross into the next zone.
    let z1 = zs;
    let big = vec![1u8; usize::try_from(zs).unwrap()];
    d.write_at(z1, &big[..usize::try_from(zs).unwrap() - 4096])
        .unwrap();
    let e = d.write_at(z1 + zs - 4096, &big[..8192]).unwrap_err();
    assert!(matches!(e, DeviceError::CrossesZoneEnd { .. }), "{e}");
    assert_eq!(d.counters().waf(), Some(1.0));
}

#[test]
fn append_reset_report() {
    let (d, zs) = dev(4);
    let zones = d.geometry().capacity / zs;
    assert!(zones >= 16);
    let rep = d.zone_report().unwrap();
    assert_eq!(rep.len() as u64, zones);
    assert!(rep
        .iter()
        .all(|z| z.state == ZoneState::Empty && z.write_pointer == z.start));

    let z = 3 * zs;
    let a = d.zone_append(z, &[1u8; 4096]).unwrap();
    let b = d.zone_append(z, &[2u8; 8192]).unwrap();
    assert_eq!((a, b), (z, z + 4096));
    let rep = d.zone_report().unwrap();
    assert_eq!(rep[3].state, ZoneState::Open);
    assert_eq!(rep[3].write_pointer, z + 3 * 4096);
    let mut out = vec![0u8; 3 * 4096];
    d.read_at(z, &mut out).unwrap();
    assert!(out[..4096].iter().all(|&x| x == 1) && out[4096..].iter().all(|&x| x == 2));

    // Fill the zone: Full, and a further append is refused.
    let rest = vec![9u8; usize::try_from(zs - 3 * 4096).unwrap()];
    d.zone_append(z, &rest).unwrap();
    assert_eq!(d.zone_report().unwrap()[3].state, ZoneState::Full);
    assert!(matches!(
        d.zone_append(z, &[0u8; 4096]),
        Err(DeviceError::CrossesZoneEnd { .. })
    ));
    assert!(
        matches!(
            d.zone_append(z + 4096, &[0u8; 4096]),
            Err(DeviceError::NotZoneStart { .. })
        ),
        "not a zone start"
    );

    d.zone_reset(z).unwrap();
    let rep = d.zone_report().unwrap();
    assert_eq!(rep[3].state, ZoneState::Empty);
    assert_eq!(rep[3].write_pointer, z);
    d.read_at(z, &mut out).unwrap();
    assert!(out.iter().all(|&x| x == 0), "reset zone reads zeroes");
    assert_eq!(d.zone_append(z, &[4u8; 4096]).unwrap(), z);

    // Trim: whole zones only.
    assert!(matches!(
        d.trim(z, 4096),
        Err(DeviceError::PartialZoneTrim { .. })
    ));
    d.trim(z, zs).unwrap();
    assert_eq!(d.zone_report().unwrap()[3].state, ZoneState::Empty);
    assert_eq!(d.counters().waf(), Some(1.0));
    d.with_ftl(|f| f.check_invariants()).unwrap();
}

#[test]
fn open_zone_limit() {
    let (d, zs) = dev(2);
    assert_eq!(d.geometry().max_open_zones, Some(2));
    let b = vec![0u8; 4096];
    d.write_at(0, &b).unwrap();
    d.write_at(zs, &b).unwrap();
    let e = d.zone_append(2 * zs, &b).unwrap_err();
    assert!(
        matches!(
            e,
            DeviceError::Flash(nowa_flash::FlashError::TooManyOpenZones { max: 2, .. })
        ),
        "{e}"
    );
    d.zone_reset(0).unwrap();
    d.zone_append(2 * zs, &b).unwrap();
}

#[test]
fn zone_ops_unsupported_elsewhere() {
    let d = SimDevice::with_capacity(16 << 20, 0.1, SimMode::Conventional).unwrap();
    assert!(matches!(d.zone_report(), Err(DeviceError::Unsupported(_))));
    assert!(matches!(
        d.zone_append(0, &[0u8; 4096]),
        Err(DeviceError::Unsupported(_))
    ));
}
