//! Shared harness of oop_crash.rs and oop_crash_bg.rs (see their docs).
#![allow(dead_code)]
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{FaultConfig, FaultyDevice, MemDevice};
use nowa_engine::{Compression, Config, Durability, Engine, OopConfig};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

const KEYS: u64 = 9000;
const OPS: u64 = 1500;

use crate::oop_store::{builder, Slot};

fn cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(128 << 10),
        durability: Durability::Sync,
        dw_pages: 1,
        // Small: the limit's drains run as well as the checkpoints'.
        blind_update_bytes: if BLIND.load(std::sync::atomic::Ordering::Relaxed) {
            24 << 10
        } else {
            0
        },
        ..Config::default()
    }
}

/// Blind updates (blind_updates.rs) on or off; set once per test binary.
static BLIND: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Run the crash points of this binary with blind updates on.
pub fn use_blind() {
    BLIND.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Sub-page deltas on (oop_deltas.rs) or off; set once per test binary.
static DELTAS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Run the crash points of this binary with sub-page deltas on.
pub fn use_deltas() {
    DELTAS.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn ocfg(c: Compression, bg: bool) -> OopConfig {
    OopConfig {
        deltas: DELTAS.load(std::sync::atomic::Ordering::Relaxed),
        delta_chain: 2,
        // Small merges: chains grow, so the calibration run consolidates them and GC finds
        // their bases (v2 deltas are small: with the default bound the LZ4 + GDT run merged
        // every write-back into the newest delta and GC never met a chain's base).
        delta_merge: 256,
        // The delta cache with compression on (small: it drops entries, and misses also
        // read whole chains).
        delta_cache_bytes: if c == Compression::Off { 0 } else { 16 << 10 },
        background_gc: bg,
        zone_bytes: Some(64 << 10),
        open_zones: 2,
        compression: c,
        // Zstd stands for "NoWA on": group GC with compensation writes (and ZSTD pages).
        nowa: c == Compression::Zstd,
        // Lz4 stands for "GDT on" (EDT placement and EDT-ordered GC).
        gdt: c == Compression::Lz4,
        ..OopConfig::default()
    }
}

fn val(k: u64, v: u64) -> Vec<u8> {
    let mut out = vec![0u8; 60 + (k % 50) as usize];
    let mut x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ v.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1;
    for (i, b) in out.iter_mut().enumerate() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Half random, half text: compresses somewhat.
        *b = if i % 2 == 0 {
            x.to_le_bytes()[0]
        } else {
            b'a' + u8::try_from(i % 7).expect("< 7")
        };
    }
    out
}

pub type Model = BTreeMap<u64, Vec<u8>>;
pub type Dev = FaultyDevice<MemDevice>;

pub fn fresh(seed: u64, c: Compression, bg: bool) -> (Arc<Dev>, Model) {
    let dev = Arc::new(FaultyDevice::new(
        MemDevice::new(3 << 20),
        FaultConfig {
            seed,
            torn_write_prob: 0.5,
            bit_flip_read_prob: 0.0,
        },
    ));
    let slot: Slot = Arc::new(Mutex::new(None));
    let e = Engine::create_with_store(dev.clone(), cfg(), &builder(ocfg(c, bg), slot)).unwrap();
    let mut m = Model::new();
    for k in 0..KEYS {
        let v = val(k, 0);
        e.put_with(&k.to_be_bytes(), &v, Durability::Async).unwrap();
        m.insert(k, v);
    }
    e.close().unwrap();
    (dev, m)
}

fn op(i: u64) -> (u64, Vec<u8>) {
    let k = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % KEYS;
    (k, val(k, i + 1))
}

/// Run ops until the device fails. Returns (acked count, failed op).
fn run(e: &Engine, from: u64, n: u64, model: &mut Model) -> Option<(u64, Vec<u8>)> {
    for i in from..from + n {
        let (k, v) = op(i);
        match e.put_with(&k.to_be_bytes(), &v, Durability::Sync) {
            Ok(()) => {
                model.insert(k, v);
            }
            Err(err) => {
                if std::env::var_os("HARNESS_DEBUG").is_some() {
                    eprintln!("op {i}: {err}");
                }
                return Some((k, v));
            }
        }
    }
    None
}

fn verify(e: &Engine, model: &Model, inflight: &Option<(u64, Vec<u8>)>, what: &str) {
    for (k, v) in model {
        let got = e.get(&k.to_be_bytes()).unwrap();
        let ok = got.as_ref() == Some(v)
            || inflight
                .as_ref()
                .is_some_and(|(ik, iv)| ik == k && got.as_ref() == Some(iv));
        assert!(ok, "{what}: key {k} lost or wrong");
    }
}

/// `bg`: background DB GC on (it then also runs while the crash hits, and its rounds are
/// required to happen during the calibration run).
pub fn crash_points(c: Compression, bg: bool, seeds: u64) {
    // Calibrate: device writes of a full run, and the share that is GC.
    let (dev, _) = fresh(u64::MAX, c, bg);
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(ocfg(c, bg), slot.clone());
    let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
    let w0 = dev.writes_issued();
    let mut m = Model::new();
    assert!(run(&e, 0, OPS, &mut m).is_none());
    let calls = dev.writes_issued() - w0;
    let s = e.stats();
    assert!(
        s.gc_page_writes > 0 && s.zones_reclaimed > 0,
        "GC must run: {s:?}"
    );
    if DELTAS.load(std::sync::atomic::Ordering::Relaxed) {
        // Crash points then fall into delta writes, consolidations and GC merges of chains.
        assert!(
            s.delta_writes > 0
                && s.delta_reads > 0
                && s.delta_consolidations > 0
                && s.delta_gc_merges > 0
                && s.delta_gc_moves > 0,
            "deltas must be written, read, consolidated, merged and moved by GC: {s:?}"
        );
        assert!(
            (c == Compression::Off) == (s.delta_cache_hits == 0),
            "the delta cache serves misses exactly when it is on: {s:?}"
        );
        eprintln!(
            "deltas: {} written ({} B), {} chain reads, {} consolidated, {} merged by GC, {} moved by GC, {} merged into the newest delta, {} of {} chained misses from the cache",
            s.delta_writes,
            s.delta_bytes,
            s.delta_reads,
            s.delta_consolidations,
            s.delta_gc_merges,
            s.delta_gc_moves,
            s.delta_merges,
            s.delta_cache_hits,
            s.delta_chain_misses
        );
    }
    if BLIND.load(std::sync::atomic::Ordering::Relaxed) {
        // Crash points then fall between blind changes and the loads that apply them.
        assert!(
            s.blind_updates > 0 && s.blind_applied > 0 && s.blind_drains > 0,
            "blind changes must be logged, applied and drained: {s:?}"
        );
        eprintln!(
            "blind: {} updates, {} applied in {} leaf loads, {} drained",
            s.blind_updates, s.blind_applied, s.blind_leaf_loads, s.blind_drains
        );
    }
    if bg {
        assert!(s.gc_rounds_background > 0, "background GC must run: {s:?}");
    } else {
        assert_eq!(s.gc_rounds_background, 0);
    }
    eprintln!(
        "{c:?} bg={bg}: {calls} write calls per run; GC rounds fg {} bg {}; GC {} + compensation {} pages ({} zones), user {} pages",
        s.gc_rounds_foreground,
        s.gc_rounds_background,
        s.gc_page_writes,
        s.compensation_page_writes,
        s.zones_reclaimed,
        s.eviction_page_writes + s.checkpoint_page_writes
    );
    drop(e);
    for seed in 0..seeds {
        let (dev, mut model) = fresh(seed, c, bg);
        let slot: Slot = Arc::new(Mutex::new(None));
        let b = builder(ocfg(c, bg), slot.clone());
        let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
        let mut x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
        x ^= x >> 29;
        let inflight = if seed % 3 == 2 {
            // Power loss between two operations.
            let at = x % OPS;
            let r = run(&e, 0, at, &mut model);
            dev.power_loss();
            r
        } else {
            dev.crash_after_writes(1 + x % calls);
            run(&e, 0, OPS, &mut model)
        };
        drop(e);
        dev.restart();
        if seed % 4 == 0 {
            // Crash again inside recovery.
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
        verify(&e, &model, &inflight, &format!("seed {seed}"));
        // The recovered database keeps working (GC included) and survives a clean reopen.
        let mut model2 = model.clone();
        if let Some((k, _)) = &inflight {
            let g = e.get(&k.to_be_bytes()).unwrap().unwrap();
            model2.insert(*k, g);
        }
        assert!(run(&e, 10_000, 300, &mut model2).is_none());
        e.close().unwrap();
        let e = Engine::open_with_store(dev.clone(), cfg(), &b).unwrap();
        verify(&e, &model2, &None, &format!("seed {seed} after reopen"));
    }
}
