//! SimDevice (conventional): stored data round-trips, sequential writes have WAF 1, random
//! overwrites on a small device make the FTL copy pages (media > host).

use nowa_device::{BlockDevice, SimDevice, SimMode, BLOCK_SIZE};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

const CAP: u64 = 16 << 20;

fn stamp(lba: u64, version: u32) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK_SIZE];
    b[..8].copy_from_slice(&lba.to_le_bytes());
    b[8..12].copy_from_slice(&version.to_le_bytes());
    b[12..]
        .iter_mut()
        .enumerate()
        .for_each(|(i, x)| *x = (i as u64 ^ lba).to_le_bytes()[0]);
    b
}

#[test]
fn data_roundtrip_and_trim() {
    let d = SimDevice::with_capacity(CAP, 0.1, SimMode::Conventional).unwrap();
    assert_eq!(d.geometry().capacity, CAP);
    assert_eq!(d.geometry().zone_size, None);
    let two: Vec<u8> = [stamp(10, 1), stamp(11, 1)].concat();
    d.write_at(10 * 4096, &two).unwrap();
    let mut out = vec![0u8; 3 * 4096];
    d.read_at(9 * 4096, &mut out).unwrap();
    assert!(out[..4096].iter().all(|&b| b == 0));
    assert_eq!(&out[4096..], &two[..]);
    d.trim(10 * 4096, 4096).unwrap();
    d.read_at(10 * 4096, &mut out[..8192]).unwrap();
    assert!(
        out[..4096].iter().all(|&b| b == 0),
        "trimmed block reads as zeroes"
    );
    assert_eq!(&out[4096..8192], &stamp(11, 1)[..]);
    let c = d.counters();
    assert_eq!(c.host_bytes_written, 8192);
    assert_eq!(c.media_bytes_written, Some(8192));
    assert_eq!(d.ftl_counters().trimmed_pages, 1);
    d.with_ftl(|f| f.check_invariants()).unwrap();
}

#[test]
fn sequential_writes_have_waf_one() {
    let d = SimDevice::with_capacity(CAP, 0.1, SimMode::Conventional).unwrap();
    let chunk = vec![0x5au8; 256 * 1024];
    for _pass in 0..4 {
        for off in (0..CAP).step_by(chunk.len()) {
            d.write_at(off, &chunk).unwrap();
        }
    }
    let c = d.counters();
    assert_eq!(c.host_bytes_written, 4 * CAP);
    assert_eq!(c.waf(), Some(1.0), "{:?}", d.ftl_counters());
    assert_eq!(d.ftl_counters().gc_pages, 0);
}

#[test]
fn random_overwrites_amplify() {
    let d = SimDevice::with_capacity(CAP, 0.1, SimMode::Conventional).unwrap();
    let pages = CAP / 4096;
    for l in 0..pages {
        d.write_at(l * 4096, &stamp(l, 0)).unwrap();
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut version = vec![0u32; pages as usize];
    for v in 1..=u32::try_from(3 * pages).unwrap() {
        let l = rng.random_range(0..pages);
        version[usize::try_from(l).unwrap()] = v;
        d.write_at(l * 4096, &stamp(l, v)).unwrap();
    }
    let c = d.counters();
    let media = c.media_bytes_written.unwrap();
    assert!(
        media > c.host_bytes_written,
        "media {media} host {}",
        c.host_bytes_written
    );
    assert!(d.ftl_counters().gc_pages > 0);
    println!(
        "random overwrite WAF on a 16 MiB device with 10% OP: {:.2}",
        c.waf().unwrap()
    );
    // Every block holds its newest version despite GC.
    let mut out = vec![0u8; 4096];
    for l in 0..pages {
        d.read_at(l * 4096, &mut out).unwrap();
        assert_eq!(
            out,
            stamp(l, version[usize::try_from(l).unwrap()]),
            "lba {l}"
        );
    }
    d.with_ftl(|f| f.check_invariants()).unwrap();
}

#[test]
fn concurrent_writers_and_readers() {
    let d = SimDevice::with_capacity(CAP, 0.1, SimMode::Conventional).unwrap();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let d = &d;
            s.spawn(move || {
                let mut out = vec![0u8; 4096];
                for i in 0..512u64 {
                    let l = t * 1000 + i;
                    d.write_at(l * 4096, &stamp(l, 1)).unwrap();
                    d.read_at(l * 4096, &mut out).unwrap();
                    assert_eq!(out, stamp(l, 1));
                }
            });
        }
    });
    assert_eq!(d.counters().host_bytes_written, 4 * 512 * 4096);
    d.with_ftl(|f| f.check_invariants()).unwrap();
}
