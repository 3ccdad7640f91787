//! The one seeded crash loop of the out-of-place tests (oop_crash.rs, oop_crash_bg.rs,
//! oop_deltas.rs, blind_updates.rs, oop_trim_dead.rs, snapshot_incremental.rs): a
//! [`Scenario`] says what the database, the device and the workload are; [`Scenario::crash_seeds`]
//! runs the crash points (a torn or dropped n-th device write, or a power loss between
//! operations; every fourth seed crashes again inside recovery) and checks that the reopened
//! database serves every acknowledged write, its zone metadata agrees with the mapping, it keeps
//! working and it survives a clean reopen. [`crash_points`] is the GC-heavy scenario of
//! oop_crash.rs in its variants ([`Mode`]).
#![allow(dead_code)]
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{FaultConfig, FaultyDevice, MemDevice, TrimMode};
use nowa_engine::{Compression, Config, Durability, Engine, OopConfig, Stats};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::oop_store::{builder, Slot};

pub type Model = BTreeMap<u64, Vec<u8>>;
pub type Dev = FaultyDevice<MemDevice>;
/// A put that was not acknowledged when the device failed: (key, value).
pub type Inflight = Option<(u64, Vec<u8>)>;

/// A database, its device and its workload, for the crash loop.
pub struct Scenario {
    pub cfg: Config,
    pub ocfg: OopConfig,
    pub device_bytes: u64,
    /// Trimmed blocks read back as zeros (so a wrongly trimmed live copy is found).
    pub zero_trims: bool,
    /// Keys 0..keys are loaded (asynchronous puts) before every run.
    pub keys: u64,
    /// A key's bytes in the database.
    pub key: fn(u64) -> Vec<u8>,
    /// The value of a key at an operation (operation 0: the load).
    pub val: fn(u64, u64) -> Vec<u8>,
    /// The key that operation i updates (its value: `val(key, i + 1)`).
    pub op_key: fn(u64) -> u64,
    /// Operations of the crash run (synchronous puts).
    pub ops: u64,
    /// A checkpoint after every this many operations (none: the engine's own).
    pub checkpoint_every: Option<u64>,
    /// After recovery: `after.1` more operations from index `after.0`.
    pub after: (u64, u64),
}

/// Big-endian u64 keys (most scenarios).
pub fn key_u64(k: u64) -> Vec<u8> {
    k.to_be_bytes().to_vec()
}

impl Scenario {
    pub fn builder(&self) -> (impl nowa_engine::StoreBuilder, Slot) {
        let slot: Slot = Arc::new(Mutex::new(None));
        (builder(self.ocfg.clone(), slot.clone()), slot)
    }

    /// A new device with the keys loaded and the database closed cleanly.
    pub fn fresh(&self, seed: u64, b: &impl nowa_engine::StoreBuilder) -> (Arc<Dev>, Model) {
        let dev = Arc::new(FaultyDevice::new(
            MemDevice::new(self.device_bytes),
            FaultConfig {
                seed,
                torn_write_prob: 0.5,
                bit_flip_read_prob: 0.0,
            },
        ));
        if self.zero_trims {
            dev.set_trim_mode(TrimMode::Zero);
        }
        let e = Engine::create_with_store(dev.clone(), self.cfg.clone(), b).unwrap();
        let mut m = Model::new();
        for k in 0..self.keys {
            let v = (self.val)(k, 0);
            e.put_with(&(self.key)(k), &v, Durability::Async).unwrap();
            m.insert(k, v);
        }
        e.close().unwrap();
        (dev, m)
    }

    /// Operations from..from+n until the device fails: Err carries the put in flight (none
    /// when a checkpoint failed).
    pub fn run(&self, e: &Engine, from: u64, n: u64, m: &mut Model) -> Result<(), Inflight> {
        for i in from..from + n {
            let k = (self.op_key)(i);
            let v = (self.val)(k, i + 1);
            if let Err(err) = e.put_with(&(self.key)(k), &v, Durability::Sync) {
                if std::env::var_os("HARNESS_DEBUG").is_some() {
                    eprintln!("op {i}: {err}");
                }
                return Err(Some((k, v)));
            }
            m.insert(k, v);
            let every = self.checkpoint_every.unwrap_or(u64::MAX);
            if i % every == every - 1 && e.checkpoint().is_err() {
                return Err(None);
            }
        }
        Ok(())
    }

    /// Every key of the model reads back its value (or, for the put in flight, the old or
    /// the new one).
    pub fn verify(&self, e: &Engine, m: &Model, inflight: &Inflight, what: &str) {
        for (k, v) in m {
            let got = e.get(&(self.key)(*k)).unwrap();
            let ok = got.as_ref() == Some(v)
                || inflight
                    .as_ref()
                    .is_some_and(|(ik, iv)| ik == k && got.as_ref() == Some(iv));
            assert!(ok, "{what}: key {k} lost or wrong");
        }
    }

    /// A whole run without faults: its device write calls (the range of crash points) and
    /// the engine's counters before and after it.
    pub fn calibrate(&self) -> (u64, Stats, Stats) {
        let (b, _) = self.builder();
        let (dev, _) = self.fresh(u64::MAX, &b);
        let e = Engine::open_with_store(dev.clone(), self.cfg.clone(), &b).unwrap();
        let (w0, s0) = (dev.writes_issued(), e.stats());
        assert!(self.run(&e, 0, self.ops, &mut Model::new()).is_ok());
        (dev.writes_issued() - w0, s0, e.stats())
    }

    /// One crash point per seed over a run of `calls` device writes; `hook` sees the
    /// engine right after the crash, before it is dropped.
    pub fn crash_seeds(&self, seeds: u64, calls: u64, hook: &mut dyn FnMut(&Engine)) {
        assert!(calls > 0, "a calibrated run writes");
        for seed in 0..seeds {
            self.crash_seed(seed, calls, hook);
        }
    }

    fn crash_seed(&self, seed: u64, calls: u64, hook: &mut dyn FnMut(&Engine)) {
        let (b, slot) = self.builder();
        let (dev, mut model) = self.fresh(seed, &b);
        let e = Engine::open_with_store(dev.clone(), self.cfg.clone(), &b).unwrap();
        let mut x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
        x ^= x >> 29;
        let inflight = if seed % 3 == 2 {
            // Power loss between two operations.
            let r = self.run(&e, 0, x % self.ops, &mut model);
            dev.power_loss();
            r.err().flatten()
        } else {
            dev.crash_after_writes(1 + x % calls);
            self.run(&e, 0, self.ops, &mut model).err().flatten()
        };
        hook(&e);
        drop(e);
        dev.restart();
        if seed % 4 == 0 {
            // Crash again inside recovery.
            dev.crash_after_writes(1 + (x >> 7) % 40);
            let _ = Engine::open_with_store(dev.clone(), self.cfg.clone(), &b);
            dev.restart();
        }
        let e = Engine::open_with_store(dev.clone(), self.cfg.clone(), &b)
            .unwrap_or_else(|err| panic!("seed {seed}: open failed: {err}"));
        let store = slot.lock().as_ref().unwrap().clone();
        store
            .check_consistency()
            .unwrap_or_else(|err| panic!("seed {seed}: {err}"));
        self.verify(&e, &model, &inflight, &format!("seed {seed}"));
        // The recovered database keeps working (GC included) and survives a clean reopen.
        if let Some((k, _)) = &inflight {
            let g = e.get(&(self.key)(*k)).unwrap().unwrap();
            model.insert(*k, g);
        }
        let (from, n) = self.after;
        assert!(self.run(&e, from, n, &mut model).is_ok(), "seed {seed}");
        e.close().unwrap();
        let e = Engine::open_with_store(dev.clone(), self.cfg.clone(), &b).unwrap();
        self.verify(&e, &model, &None, &format!("seed {seed} after reopen"));
    }
}

/// The variants of the GC-heavy crash scenario.
#[derive(Clone, Copy, Debug)]
pub struct Mode {
    /// Lz4 stands for "GDT on", Zstd for "NoWA on" (group GC with compensation writes).
    pub compression: Compression,
    /// Background DB GC on (it then also runs while the crash hits).
    pub background_gc: bool,
    /// Sub-page deltas (oop_deltas.rs).
    pub deltas: bool,
    /// Blind updates (blind_updates.rs).
    pub blind: bool,
}

impl Mode {
    pub fn plain(compression: Compression, background_gc: bool) -> Self {
        Mode {
            compression,
            background_gc,
            deltas: false,
            blind: false,
        }
    }
}

const KEYS: u64 = 9000;

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

fn ocfg(mode: Mode) -> OopConfig {
    let c = mode.compression;
    OopConfig {
        deltas: mode.deltas,
        delta_chain: 2,
        // Small merges: chains grow, so the calibration run consolidates them and GC finds
        // their bases (v2 deltas are small: with the default bound the LZ4 + GDT run merged
        // every write-back into the newest delta and GC never met a chain's base).
        delta_merge: 256,
        // The delta cache with compression on (small: it drops entries, and misses also
        // read whole chains).
        delta_cache_bytes: if c == Compression::Off { 0 } else { 16 << 10 },
        background_gc: mode.background_gc,
        zone_bytes: Some(64 << 10),
        open_zones: 2,
        compression: c,
        nowa: c == Compression::Zstd,
        gdt: c == Compression::Lz4,
        ..OopConfig::default()
    }
}

/// The engine of the crash scenarios: a 64-frame pool, a 128 KiB WAL, synchronous commits.
pub fn small_sync_cfg() -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(128 << 10),
        durability: Durability::Sync,
        dw_pages: 1,
        ..Config::default()
    }
}

/// The GC-heavy scenario: a 3 MiB device, so DB GC runs all the time.
pub fn scenario(mode: Mode) -> Scenario {
    Scenario {
        cfg: Config {
            // Small: the limit's drains run as well as the checkpoints'.
            blind_update_bytes: if mode.blind { 24 << 10 } else { 0 },
            ..small_sync_cfg()
        },
        ocfg: ocfg(mode),
        device_bytes: 3 << 20,
        zero_trims: false,
        keys: KEYS,
        key: key_u64,
        val,
        op_key: |i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % KEYS,
        ops: 1500,
        checkpoint_every: None,
        after: (10_000, 300),
    }
}

/// The calibration run must reach what the mode's crash points are meant to hit.
fn assert_mode_ran(mode: Mode, s: &Stats) {
    assert!(
        s.gc_page_writes > 0 && s.zones_reclaimed > 0,
        "GC must run: {s:?}"
    );
    if mode.deltas {
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
            (mode.compression == Compression::Off) == (s.delta_cache_hits == 0),
            "the delta cache serves misses exactly when it is on: {s:?}"
        );
    }
    if mode.blind {
        // Crash points then fall between blind changes and the loads that apply them.
        assert!(
            s.blind_updates > 0 && s.blind_applied > 0 && s.blind_drains > 0,
            "blind changes must be logged, applied and drained: {s:?}"
        );
    }
    if mode.background_gc {
        assert!(s.gc_rounds_background > 0, "background GC must run: {s:?}");
    } else {
        assert_eq!(s.gc_rounds_background, 0);
    }
}

/// The seeded crash points of the GC-heavy scenario in one mode.
pub fn crash_points(mode: Mode, seeds: u64) {
    let sc = scenario(mode);
    let (calls, _, s) = sc.calibrate();
    assert_mode_ran(mode, &s);
    eprintln!(
        "{mode:?}: {calls} write calls per run; GC rounds fg {} bg {}; GC {} + compensation {} pages ({} zones), user {} pages; deltas {} written, {} consolidated, {} merged by GC; blind {} updates, {} applied, {} drained",
        s.gc_rounds_foreground,
        s.gc_rounds_background,
        s.gc_page_writes,
        s.compensation_page_writes,
        s.zones_reclaimed,
        s.eviction_page_writes + s.checkpoint_page_writes,
        s.delta_writes,
        s.delta_consolidations,
        s.delta_gc_merges,
        s.blind_updates,
        s.blind_applied,
        s.blind_drains,
    );
    sc.crash_seeds(seeds, calls, &mut |_| {});
}
