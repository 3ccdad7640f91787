//! The early trim of dead zones (`OopConfig::trim_dead_zones`, src/oop/trim.rs): with
//! sub-page deltas, hot pages' deltas die within a few write-backs, so zones of dead deltas
//! accumulate; on a device with plenty of free zones DB GC never runs and nothing trims
//! them (the SSD holds them as valid data). With the option a zone is trimmed and freed as
//! soon as its last copy dies. Checked here: the trim happens (and not without the option),
//! trimmed blocks read back as zeros (so a wrongly trimmed live copy would be found), and
//! crash points during the run (torn / dropped n-th write, power loss) recover every
//! acknowledged write with zone metadata that agrees with the mapping.
#![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

#[path = "common/oop_store.rs"]
mod oop_store;

use nowa_device::{FaultConfig, FaultyDevice, MemDevice, TrimMode};
use nowa_engine::{Compression, Config, Durability, Engine, OopConfig};
use oop_store::{builder, Slot};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

const KEYS: u32 = 3000;
const OPS: u32 = 3000;

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(128 << 10),
        durability: Durability::Sync,
        dw_pages: 1,
        ..Config::default()
    }
}

fn ocfg(trim: bool) -> OopConfig {
    OopConfig {
        deltas: true,
        delta_chain: 4,
        delta_merge: 256,
        zone_bytes: Some(64 << 10),
        open_zones: 2,
        compression: Compression::Lz4,
        trim_dead_zones: trim,
        ..OopConfig::default()
    }
}

type Dev = FaultyDevice<MemDevice>;
type Model = BTreeMap<u32, Vec<u8>>;

fn val(k: u32, i: u32) -> Vec<u8> {
    let mut x = u64::from(k).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(i) | 1;
    (0..100)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

/// A device far larger than the data (DB GC never needs a zone), loaded and closed.
fn fresh(seed: u64, b: &impl nowa_engine::StoreBuilder) -> (Arc<Dev>, Model) {
    let dev = Arc::new(FaultyDevice::new(
        MemDevice::new(24 << 20),
        FaultConfig {
            seed,
            torn_write_prob: 0.5,
            bit_flip_read_prob: 0.0,
        },
    ));
    dev.set_trim_mode(TrimMode::Zero);
    let e = Engine::create_with_store(dev.clone(), cfg(), b).unwrap();
    let mut m = Model::new();
    for k in 0..KEYS {
        e.put_with(&k.to_be_bytes(), &val(k, 0), Durability::Async)
            .unwrap();
        m.insert(k, val(k, 0));
    }
    e.close().unwrap();
    (dev, m)
}

/// Sync updates of a hot tenth of the keys (their leaves' deltas die fast, and zones written
/// during the run hold nothing else); stops at the first failure, returns the write in flight.
fn run(e: &Engine, from: u32, n: u32, m: &mut Model) -> Option<(u32, Vec<u8>)> {
    for i in from..from + n {
        let r = i.wrapping_mul(2_654_435_761) >> 8;
        let k = r % (KEYS / 10);
        let v = val(k, i + 1);
        if e.put_with(&k.to_be_bytes(), &v, Durability::Sync).is_err() {
            return Some((k, v));
        }
        m.insert(k, v);
    }
    None
}

fn verify(e: &Engine, m: &Model, inflight: Option<&(u32, Vec<u8>)>, what: &str) {
    for (k, v) in m {
        let got = e.get(&k.to_be_bytes()).unwrap();
        let ok = got.as_ref() == Some(v)
            || inflight.is_some_and(|(ik, iv)| ik == k && got.as_ref() == Some(iv));
        assert!(ok, "{what}: key {k} lost or wrong");
    }
}

/// Same run with and without the option: dead zones of deltas are trimmed early only with
/// it, DB GC reclaims nothing in either (the device has room), and the data reads back
/// after a reopen from the trimmed device.
#[test]
fn zones_of_dead_deltas_are_trimmed_only_with_the_option() {
    let mut trimmed = Vec::new();
    for trim in [false, true] {
        let slot: Slot = Arc::new(Mutex::new(None));
        let b = builder(ocfg(trim), slot.clone());
        let (dev, mut m) = fresh(1, &b);
        let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
        // (Creating the database trims the zone area: count the run's trims only.)
        let zeroed = dev.fault_stats().trimmed_zeroed;
        assert!(run(&e, 0, OPS, &mut m).is_none());
        let s = e.stats();
        assert!(s.delta_writes > 0, "deltas written: {s:?}");
        assert_eq!(s.gc_rounds_foreground + s.gc_rounds_background, 0, "{s:?}");
        assert_eq!(s.zones_reclaimed, s.zones_trimmed_dead, "{s:?}");
        trimmed.push((
            s.zones_trimmed_dead,
            dev.fault_stats().trimmed_zeroed - zeroed,
        ));
        e.close().unwrap();
        let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
        slot.lock().as_ref().unwrap().check_consistency().unwrap();
        verify(&e, &m, None, &format!("trim {trim} after reopen"));
    }
    assert_eq!(trimmed[0], (0, 0), "nothing trimmed without the option");
    // Every block of each trimmed zone (64 KiB = 16 blocks) reads back as zeros.
    assert!(
        trimmed[1].0 >= 2 && trimmed[1].1 == 16 * trimmed[1].0,
        "dead zones trimmed with it: {trimmed:?}"
    );
}

/// Crash points over the run with the option on (a torn or dropped n-th device write, or a
/// power loss between operations; every fourth seed crashes again inside recovery): the
/// open recovers every acknowledged write and zone metadata that agrees with the mapping,
/// and the database goes on trimming.
#[test]
fn a_crash_around_early_trims_recovers() {
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg(true), slot.clone());
    let (dev, mut m) = fresh(u64::MAX, &b);
    let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
    let w0 = dev.writes_issued();
    assert!(run(&e, 0, OPS, &mut m).is_none());
    let calls = dev.writes_issued() - w0;
    assert!(e.stats().zones_trimmed_dead > 0);
    drop(e);
    let mut after_trim = 0;
    for seed in 0..20u64 {
        let (dev, mut m) = fresh(seed, &b);
        let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
        let x = (seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1) >> 3;
        let inflight = if seed % 3 == 2 {
            let r = run(&e, 0, u32::try_from(x % u64::from(OPS)).unwrap(), &mut m);
            dev.power_loss();
            r
        } else {
            dev.crash_after_writes(1 + x % calls);
            run(&e, 0, OPS, &mut m)
        };
        after_trim += u64::from(e.stats().zones_trimmed_dead > 0);
        drop(e);
        dev.restart();
        if seed % 4 == 0 {
            dev.crash_after_writes(1 + (x >> 7) % 40);
            let _ = Engine::open_with_store(dev.clone(), cfg(), &b);
            dev.restart();
        }
        let e = Engine::open_with_store(dev.clone(), cfg(), &b)
            .unwrap_or_else(|err| panic!("seed {seed}: open failed: {err}"));
        slot.lock()
            .as_ref()
            .unwrap()
            .check_consistency()
            .unwrap_or_else(|err| panic!("seed {seed}: {err}"));
        verify(&e, &m, inflight.as_ref(), &format!("seed {seed}"));
        let mut m2 = m.clone();
        if let Some((k, _)) = &inflight {
            m2.insert(*k, e.get(&k.to_be_bytes()).unwrap().unwrap());
        }
        assert!(run(&e, 50_000, 600, &mut m2).is_none(), "seed {seed}");
        e.close().unwrap();
        let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
        verify(&e, &m2, None, &format!("seed {seed} after reopen"));
    }
    assert!(
        after_trim >= 5,
        "crashes after early trims: {after_trim} of 20 seeds"
    );
}
