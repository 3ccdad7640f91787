//! FaultyDevice: unflushed writes are lost, flushed ones survive, torn blocks have a prefix of
//! new sectors, outcomes are deterministic from the seed, armed crashes replay, bit flips.

use nowa_device::{
    BlockDevice, DeviceError, FaultConfig, FaultyDevice, MemDevice, SimDevice, SimMode, SECTOR_SIZE,
};

const N: u64 = 64;

fn cfg(seed: u64, torn: f64) -> FaultConfig {
    FaultConfig {
        seed,
        torn_write_prob: torn,
        bit_flip_read_prob: 0.0,
    }
}

/// Flush N blocks of `old`, then overwrite them with `new` without flushing.
fn setup(d: &FaultyDevice<MemDevice>, old: u8, new: u8) {
    for i in 0..N {
        d.write_at(i * 4096, &[old; 4096]).expect("write");
    }
    d.flush().expect("flush");
    for i in 0..N {
        d.write_at(i * 4096, &[new; 4096]).expect("write");
    }
}

fn snapshot(d: &impl BlockDevice) -> Vec<u8> {
    let mut out = vec![0u8; usize::try_from(N * 4096).expect("small")];
    d.read_at(0, &mut out).expect("read");
    out
}

#[test]
fn unflushed_writes_dropped_flushed_survive() {
    let d = FaultyDevice::new(MemDevice::new(1 << 20), cfg(1, 0.0));
    d.set_keep_prob(0.0);
    setup(&d, 0xAA, 0xBB);
    assert_eq!(
        snapshot(&d),
        vec![0xBB; usize::try_from(N * 4096).expect("small")],
        "reads see unflushed writes"
    );
    d.power_loss();
    assert!(d.is_powered_off());
    let mut b = vec![0u8; 4096];
    assert!(matches!(d.read_at(0, &mut b), Err(DeviceError::PoweredOff)));
    assert!(matches!(d.write_at(0, &b), Err(DeviceError::PoweredOff)));
    assert!(matches!(d.flush(), Err(DeviceError::PoweredOff)));
    d.restart();
    assert_eq!(
        snapshot(&d),
        vec![0xAA; usize::try_from(N * 4096).expect("small")],
        "every unflushed write lost"
    );
    let s = d.fault_stats();
    assert_eq!(
        (
            s.blocks_dropped,
            s.blocks_kept,
            s.blocks_torn,
            s.power_losses
        ),
        (N, 0, 0, 1)
    );

    // Flushed data survives a power loss untouched.
    d.write_at(0, &[0xCC; 4096]).unwrap();
    d.flush().unwrap();
    d.power_loss();
    d.restart();
    d.read_at(0, &mut b).unwrap();
    assert!(b.iter().all(|&x| x == 0xCC));
}

#[test]
fn default_loss_is_a_per_block_mix() {
    let d = FaultyDevice::new(MemDevice::new(1 << 20), cfg(2, 0.0));
    setup(&d, 0xAA, 0xBB);
    d.power_loss();
    d.restart();
    let snap = snapshot(&d);
    let kept = snap
        .chunks(4096)
        .filter(|c| c.iter().all(|&x| x == 0xBB))
        .count() as u64;
    let old = snap
        .chunks(4096)
        .filter(|c| c.iter().all(|&x| x == 0xAA))
        .count() as u64;
    assert_eq!(kept + old, N, "no torn blocks with torn_write_prob 0");
    assert!(kept > 0 && old > 0, "kept {kept} dropped {old}");
    assert_eq!(d.fault_stats().blocks_kept, kept);
}

#[test]
fn torn_blocks_have_a_prefix_of_new_sectors() {
    let d = FaultyDevice::new(MemDevice::new(1 << 20), cfg(3, 1.0));
    setup(&d, 0xAA, 0xBB);
    d.power_loss();
    d.restart();
    let snap = snapshot(&d);
    let mut prefixes = std::collections::BTreeSet::new();
    for c in snap.chunks(4096) {
        let k = c.iter().take_while(|&&x| x == 0xBB).count();
        assert!(k % SECTOR_SIZE == 0 && k > 0 && k < 4096, "torn at {k}");
        assert!(c[k..].iter().all(|&x| x == 0xAA), "suffix is old data");
        prefixes.insert(k / SECTOR_SIZE);
    }
    assert!(prefixes.len() > 3, "tear points vary: {prefixes:?}");
    assert_eq!(d.fault_stats().blocks_torn, N);
}

#[test]
fn deterministic_from_seed() {
    let run = |seed| {
        let d = FaultyDevice::new(MemDevice::new(1 << 20), cfg(seed, 0.3));
        setup(&d, 0xAA, 0xBB);
        d.power_loss();
        d.restart();
        (snapshot(&d), d.fault_stats())
    };
    assert_eq!(run(42), run(42));
    assert_ne!(run(42).0, run(43).0);
}

/// A little workload: writes with a flush every 5 writes; returns the flushed state.
fn workload(d: &FaultyDevice<MemDevice>) -> Result<(), DeviceError> {
    for i in 0..40u64 {
        let b = [u8::try_from(i + 1).expect("i < 40"); 8192];
        d.write_at((i % 20) * 8192, &b)?;
        if i % 5 == 4 {
            d.flush()?;
        }
    }
    Ok(())
}

#[test]
fn crash_replay_at_every_write() {
    let probe = FaultyDevice::new(MemDevice::new(1 << 20), cfg(5, 0.5));
    workload(&probe).unwrap();
    let writes = probe.writes_issued();
    assert_eq!(writes, 40);
    let mut outcomes = std::collections::BTreeSet::new();
    for k in 1..=writes {
        let d = FaultyDevice::new(MemDevice::new(1 << 20), cfg(5 + k, 0.5));
        d.crash_after_writes(k);
        let r = workload(&d);
        assert!(
            matches!(r, Err(DeviceError::PoweredOff)),
            "crash point {k}: {r:?}"
        );
        assert!(d.is_powered_off());
        assert_eq!(d.writes_issued(), k, "the crash hit exactly the k-th write");
        d.restart();
        // Flushed writes are intact; slots written after the last flush hold, per 512-byte
        // sector, the flushed version or a later one (kept, dropped or torn).
        let flushed = ((k - 1) / 5) * 5;
        let mut b = vec![0u8; 8192];
        for slot in 0..20u64 {
            let durable = (0..flushed)
                .filter(|j| j % 20 == slot)
                .map(|j| u8::try_from(j + 1).unwrap())
                .next_back()
                .unwrap_or(0);
            let mut allowed = vec![durable];
            allowed.extend(
                (flushed..k)
                    .filter(|j| j % 20 == slot)
                    .map(|j| u8::try_from(j + 1).unwrap()),
            );
            d.read_at(slot * 8192, &mut b).unwrap();
            for sector in b.chunks(SECTOR_SIZE) {
                assert!(
                    sector.iter().all(|&x| x == sector[0]),
                    "crash {k}: sector not uniform"
                );
                assert!(
                    allowed.contains(&sector[0]),
                    "crash {k}: slot {slot} has {} not in {allowed:?}",
                    sector[0]
                );
            }
            if allowed.len() == 1 {
                assert!(
                    b.iter().all(|&x| x == durable),
                    "crash {k}: slot {slot} lost flushed data"
                );
            }
        }
        outcomes.insert(d.fault_stats().blocks_torn);
    }
    assert!(outcomes.len() > 1, "some crash points tear, some don't");
}

#[test]
fn bit_flips_on_read() {
    let d = FaultyDevice::new(
        MemDevice::new(1 << 20),
        FaultConfig {
            seed: 9,
            torn_write_prob: 0.0,
            bit_flip_read_prob: 1.0,
        },
    );
    d.write_at(0, &[0u8; 8192]).unwrap();
    let mut b = vec![0u8; 8192];
    for _ in 0..10 {
        d.read_at(0, &mut b).unwrap();
        let ones: u32 = b.iter().map(|x| x.count_ones()).sum();
        assert_eq!(ones, 1, "exactly one flipped bit");
    }
    assert_eq!(d.fault_stats().bit_flips, 10);
    // The stored data is untouched: flips happen on the way out.
    d.flush().unwrap();
    d.inner().read_at(0, &mut b).unwrap();
    assert!(b.iter().all(|&x| x == 0));
}

#[test]
fn wraps_a_simulated_ssd() {
    let sim = SimDevice::with_capacity(16 << 20, 0.1, SimMode::Conventional).unwrap();
    let d = FaultyDevice::new(sim, cfg(1, 0.0));
    d.set_keep_prob(0.0);
    d.write_at(0, &[1u8; 4096]).unwrap();
    assert_eq!(
        d.counters().media_bytes_written,
        Some(0),
        "nothing reached the media yet"
    );
    d.flush().unwrap();
    assert_eq!(d.counters().media_bytes_written, Some(4096));
    d.write_batch(&[(4096, &[2u8; 4096]), (8192, &[3u8; 4096])], Some(0))
        .unwrap();
    d.power_loss();
    d.restart();
    assert_eq!(
        d.inner().counters().host_bytes_written,
        4096,
        "the lost writes never reached the SSD"
    );
}

#[test]
fn zoned_inner_keeps_a_prefix_per_zone() {
    let sim =
        SimDevice::with_capacity(64 << 20, 0.0, SimMode::Zoned { max_open_zones: 3 }).unwrap();
    let zs = sim.geometry().zone_size.unwrap();
    let d = FaultyDevice::new(sim, cfg(21, 0.2));
    // Sequential rule enforced on the shadow write pointer, before anything reaches the SSD.
    assert!(matches!(
        d.write_at(4096, &[1u8; 4096]),
        Err(DeviceError::NotAtWritePointer {
            offset: 4096,
            zone: 0,
            write_pointer: 0
        })
    ));
    for z in 0..3u64 {
        for i in 0..8u64 {
            let off = d
                .zone_append(z * zs, &[u8::try_from(z * 8 + i + 1).unwrap(); 4096])
                .unwrap();
            assert_eq!(off, z * zs + i * 4096);
        }
    }
    assert!(
        matches!(
            d.zone_append(3 * zs, &[0u8; 4096]),
            Err(DeviceError::TooManyOpenZones {
                zone: 3,
                max_open: 3
            })
        ),
        "open-zone limit"
    );
    let rep = d.zone_report().unwrap();
    assert_eq!(
        rep[1].write_pointer,
        zs + 8 * 4096,
        "report includes unflushed appends"
    );
    assert_eq!(
        d.inner().zone_report().unwrap()[1].write_pointer,
        zs,
        "nothing reached the SSD"
    );
    // Flush zone data, then more unflushed appends, then power loss.
    d.flush().unwrap();
    assert_eq!(
        d.inner().zone_report().unwrap()[1].write_pointer,
        zs + 8 * 4096
    );
    for z in 0..3u64 {
        for i in 8..24u64 {
            d.zone_append(z * zs, &[u8::try_from(i + 100).unwrap(); 4096])
                .unwrap();
        }
    }
    d.power_loss();
    d.restart();
    let rep = d.zone_report().unwrap();
    let mut b = vec![0u8; 4096];
    for z in 0..3u64 {
        let wp = rep[usize::try_from(z).unwrap()].write_pointer - z * zs;
        assert!((8 * 4096..=24 * 4096).contains(&wp), "zone {z} wp {wp}");
        for i in 0..wp / 4096 {
            d.read_at(z * zs + i * 4096, &mut b).unwrap();
            let want = if i < 8 {
                u8::try_from(z * 8 + i + 1).unwrap()
            } else {
                u8::try_from(i + 100).unwrap()
            };
            let torn_tail = i + 1 == wp / 4096 && i >= 8;
            if torn_tail {
                assert_eq!(b[0], want, "a torn block starts with new sectors");
            } else {
                assert!(b.iter().all(|&x| x == want), "zone {z} block {i}");
            }
        }
        // Appends continue at the surviving write pointer.
        assert_eq!(d.zone_append(z * zs, &[9u8; 4096]).unwrap(), z * zs + wp);
    }
    d.flush().unwrap();
    d.zone_reset(0).unwrap();
    assert_eq!(d.zone_report().unwrap()[0].write_pointer, 0);
    d.inner().with_ftl(|f| f.check_invariants()).unwrap();
}
