//! The early trim of dead zones (`OopConfig::trim_dead_zones`, src/oop/trim.rs): with
//! sub-page deltas, hot pages' deltas die within a few write-backs, so zones of dead deltas
//! accumulate; on a device with plenty of free zones DB GC never runs and nothing trims
//! them (the SSD holds them as valid data). With the option a zone is trimmed and freed as
//! soon as its last copy dies. Checked here: the trim happens (and not without the option),
//! trimmed blocks read back as zeros (so a wrongly trimmed live copy would be found), and
//! crash points during the run (torn / dropped n-th write, power loss) recover every
//! acknowledged write with zone metadata that agrees with the mapping.

#[path = "common/oop_crash_harness.rs"]
mod harness;
#[path = "common/oop_store.rs"]
mod oop_store;

use harness::Scenario;
use nowa_engine::{Compression, Engine, OopConfig};

const KEYS: u32 = 3000;
const OPS: u32 = 6000;

fn val(k: u64, i: u64) -> Vec<u8> {
    let mut x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i | 1;
    (0..100)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

/// A device far larger than the data (DB GC never needs a zone); sync updates of a hot tenth
/// of the keys (their leaves' deltas die fast, and zones written during the run hold nothing
/// else); 4-byte keys.
fn scenario(trim: bool) -> Scenario {
    Scenario {
        cfg: harness::small_sync_cfg(),
        ocfg: OopConfig {
            deltas: true,
            delta_chain: 4,
            delta_merge: 256,
            zone_bytes: Some(64 << 10),
            open_zones: 2,
            compression: Compression::Lz4,
            trim_dead_zones: trim,
            ..OopConfig::default()
        },
        device_bytes: 24 << 20,
        zero_trims: true,
        keys: u64::from(KEYS),
        key: |k| u32::try_from(k).expect("a u32 key").to_be_bytes().to_vec(),
        val,
        op_key: |i| {
            let i = u32::try_from(i).expect("a u32 operation");
            u64::from((i.wrapping_mul(2_654_435_761) >> 8) % (KEYS / 10))
        },
        ops: u64::from(OPS),
        checkpoint_every: None,
        after: (50_000, 600),
    }
}

/// Same run with and without the option: dead zones of deltas are trimmed early only with
/// it, DB GC reclaims nothing in either (the device has room), and the data reads back
/// after a reopen from the trimmed device.
#[test]
fn zones_of_dead_deltas_are_trimmed_only_with_the_option() {
    let mut trimmed = Vec::new();
    for trim in [false, true] {
        let sc = scenario(trim);
        let (b, slot) = sc.builder();
        let (dev, mut m) = sc.fresh(1, &b);
        let e = Engine::open_with_store(dev.clone(), sc.cfg.clone(), &b).unwrap();
        // (Creating the database trims the zone area: count the run's trims only.)
        let zeroed = dev.fault_stats().trimmed_zeroed;
        assert!(sc.run(&e, 0, sc.ops, &mut m).is_ok());
        let s = e.stats();
        assert!(s.delta_writes > 0, "deltas written: {s:?}");
        assert_eq!(s.gc_rounds_foreground + s.gc_rounds_background, 0, "{s:?}");
        assert_eq!(s.zones_reclaimed, s.zones_trimmed_dead, "{s:?}");
        trimmed.push((
            s.zones_trimmed_dead,
            dev.fault_stats().trimmed_zeroed - zeroed,
        ));
        e.close().unwrap();
        let e = Engine::open_with_store(dev.clone(), sc.cfg.clone(), &b).unwrap();
        slot.lock().as_ref().unwrap().check_consistency().unwrap();
        sc.verify(&e, &m, &None, &format!("trim {trim} after reopen"));
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
    let sc = scenario(true);
    let (calls, _, s) = sc.calibrate();
    assert!(s.zones_trimmed_dead > 0, "{s:?}");
    let mut after_trim = 0;
    sc.crash_seeds(20, calls, &mut |e: &Engine| {
        after_trim += u64::from(e.stats().zones_trimmed_dead > 0);
    });
    assert!(
        after_trim >= 5,
        "crashes after early trims: {after_trim} of 20 seeds"
    );
}
