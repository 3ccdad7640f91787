//! Everything a seed decides before the first operation: the device (memory, simulated
//! conventional / FDP / ZNS SSD, a separate log device or not), the write path and its
//! options, the engine configuration, the workload's shape and the fault plan.

use crate::clock::Latency;
use crate::placement::PlacementDraw;
use nowa_device::{BlockDevice, FaultConfig, MemDevice, SimDevice, SimMode, TrimMode};
use nowa_engine::{
    leaf_records_per_page, BackgroundMode, Compression, Config, Durability, OopConfig, WalDamage,
};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

/// The random stream of one seed: every choice of a run comes from it, in program order.
pub type Rng = Xoshiro256PlusPlus;

/// The stream of `seed`.
#[must_use]
pub fn rng(seed: u64) -> Rng {
    Rng::seed_from_u64(nowa_units::mix64(seed ^ 0x766f_7072))
}

/// The device under the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// In-memory block device (TRIM keeps the bytes unless the fault plan says otherwise).
    Mem,
    /// Simulated SSD with a conventional namespace (the FTL model below).
    SimCns,
    /// Simulated SSD with FDP reclaim-unit handles.
    SimFdp {
        /// Reclaim-unit handles.
        handles: u16,
    },
    /// Simulated zoned SSD (needs the separate log device).
    SimZns {
        /// Open-zone limit of the device.
        max_open: u32,
    },
}

/// The workload's shape (the operations themselves are drawn as the run goes).
#[derive(Debug, Clone)]
pub struct Workload {
    /// Distinct keys.
    pub keys: u64,
    /// Largest key length (every key starts with its 4-byte id).
    pub max_key: usize,
    /// Largest value length.
    pub max_value: usize,
    /// Percent of operations that are puts / deletes / gets / scans; the rest are
    /// durability points (`sync`, `checkpoint`) and background GC steps.
    pub mix: [u32; 4],
    /// Percent of puts and deletes acknowledged only once durable (`Durability::Sync`).
    pub sync_pct: u32,
    /// Crash/recover cycles (epochs).
    pub epochs: u32,
    /// Largest number of operations per epoch.
    pub ops: u64,
    /// Percent of values that compress (text) rather than not (random bytes).
    pub text_pct: u32,
}

/// Faults of the seed (which epochs get media faults is drawn per epoch).
#[derive(Debug, Clone, Copy)]
pub struct Faults {
    /// Probability that an unflushed block is torn at a power loss.
    pub torn: f64,
    /// Probability that an untorn unflushed block survives a power loss.
    pub keep: f64,
    /// What TRIM leaves behind.
    pub trim: TrimMode,
    /// Percent of epochs with media faults (lost / misdirected writes, read errors, bit flips).
    pub media_pct: u32,
    /// Percent of crashes followed by a second crash inside recovery.
    pub recovery_crash_pct: u32,
}

/// Everything the seed fixed before the run.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The seed.
    pub seed: u64,
    /// The device.
    pub device: DeviceKind,
    /// Superblocks, WAL (and snapshots) on a separate log device.
    pub separate_log: bool,
    /// Main device capacity in bytes.
    pub capacity: u64,
    /// Engine configuration.
    pub cfg: Config,
    /// Out of place (None: in place).
    pub oop: Option<OopConfig>,
    /// The placement scheme or SepFrozen of the shared space (out of place, a share of the
    /// runs; `placement.rs`).
    pub placement: Option<PlacementDraw>,
    /// Percent of operations that are a background GC pass run by the harness (out of place).
    pub bg_pct: u32,
    /// The workload's shape.
    pub work: Workload,
    /// The fault plan.
    pub faults: Faults,
    /// Simulated time and the background tasks (`clock.rs`, `sched.rs`).
    pub time: TimeDraw,
}

/// What a seed draws for simulated time and the engine's background work, from a third
/// stream of the seed ([`time_stream`]): the main stream's draws keep their values.
#[derive(Debug, Clone, Copy)]
pub struct TimeDraw {
    /// Device latencies and the destaging order.
    pub latency: Latency,
    /// Foreground CPU time per operation, simulated nanoseconds (base of a draw).
    pub op_ns: u64,
    /// The page cleaner runs (a simulated task: `Config::page_cleaner`).
    pub page_cleaner: bool,
    /// Its idle period (the thread's wait when it found nothing to do).
    pub cleaner_idle_ns: u64,
    /// The background DB GC runs as a simulated task (`OopConfig::background_gc`, out of
    /// place), woken at this period or when kicked.
    pub gc_period_ns: Option<u64>,
    /// Group commit's flusher runs as a simulated task at this period.
    pub log_flush_ns: Option<u64>,
    /// Percent of the gaps between two operations in which one task, picked at random,
    /// runs although not due (a thread woken early: a writer's kick, a spurious wake-up).
    pub wake_pct: u32,
    /// Most steps the tasks run in one gap (a busy thread keeps going, not forever).
    pub burst: u32,
    /// Percent of the yield points inside a write (`nowa_engine::YieldPoint`) at which the
    /// tasks step (0: only between operations). Drawn from a fourth stream
    /// ([`inside_stream`]), so every other draw of a seed keeps its value.
    pub inside_pct: u32,
}

/// The stream of the yield-point share of `seed` (independent of the other three).
#[must_use]
pub fn inside_stream(seed: u64) -> Rng {
    Rng::seed_from_u64(nowa_units::mix64(seed ^ 0x696e_7369_6465))
}

/// The time stream of `seed` (independent of the main and placement streams).
#[must_use]
pub fn time_stream(seed: u64) -> Rng {
    Rng::seed_from_u64(nowa_units::mix64(seed ^ 0x7469_6d65_5f73))
}

fn draw_time(r: &mut Rng, oop: bool) -> TimeDraw {
    let t = TimeDraw {
        latency: Latency::draw(r),
        op_ns: r.random_range(1..=50) * 1000,
        page_cleaner: r.random_bool(0.5),
        cleaner_idle_ns: r.random_range(1..=20) * 1_000_000,
        gc_period_ns: (oop && r.random_bool(0.5)).then(|| r.random_range(1..=40) * 1_000_000),
        log_flush_ns: r
            .random_bool(0.5)
            .then(|| r.random_range(1..=10) * 1_000_000),
        wake_pct: [0, 5, 20][r.random_range(0..3)],
        burst: r.random_range(1..=8),
        inside_pct: 0,
    };
    assert!(
        t.burst >= 1 && t.op_ns > 0,
        "tasks and operations take time"
    );
    t
}

const BS: u64 = 4096;

impl Setup {
    /// Draw a setup from the seed's stream.
    ///
    /// # Panics
    /// If the drawn setup breaks its own rules (a harness bug).
    #[must_use]
    pub fn draw(seed: u64, r: &mut Rng) -> Setup {
        let work = draw_workload(r);
        let mut device = match r.random_range(0..10) {
            0..=4 => DeviceKind::Mem,
            5..=6 => DeviceKind::SimCns,
            7..=8 => DeviceKind::SimFdp {
                handles: r.random_range(2..=8),
            },
            _ => DeviceKind::SimZns {
                max_open: r.random_range(2..=4),
            },
        };
        let zns = matches!(device, DeviceKind::SimZns { .. });
        let mut oop = (zns || r.random_bool(0.6)).then(|| draw_oop(r));
        let placement = oop.as_mut().and_then(|o| {
            crate::placement::draw(&mut crate::placement::stream(seed), o, &mut device)
        });
        if let (Some(o), true) = (oop.as_mut(), zns) {
            // ZNS: the zone is the device's.
            o.zone_bytes = None;
        }
        let mut tr = time_stream(seed);
        let mut time = draw_time(&mut tr, oop.is_some());
        time.inside_pct = [0, 0, 10, 50][inside_stream(seed).random_range(0..4)];
        let mut cfg = draw_config(r, oop.is_some());
        // Every random source of the engine from the seed; its background work on the
        // simulation's scheduler, never on a thread.
        cfg.seed = Some(nowa_units::mix64(seed ^ 0x656e_6769_6e65));
        cfg.background = BackgroundMode::Caller;
        cfg.page_cleaner = time.page_cleaner;
        if let Some(f) = cfg.flushing.as_mut() {
            // The batches once per simulated period (an operation takes microseconds).
            f.period_secs = f64::from(tr.random_range(1..=50u32)) / 1000.0;
        }
        if let Some(o) = oop.as_mut() {
            o.background_gc = time.gc_period_ns.is_some();
        }
        let separate_log = zns || r.random_bool(0.25);
        let mut s = Setup {
            seed,
            device,
            separate_log,
            capacity: 0,
            cfg,
            oop,
            placement,
            bg_pct: 0,
            work,
            faults: draw_faults(r),
            time,
        };
        if s.oop.is_some() {
            s.bg_pct = [0, 1, 3][r.random_range(0..3)];
        }
        s.capacity = s.size_device(r);
        assert!(s.capacity >= 64 * BS, "a device of at least 64 blocks");
        assert!(
            !zns || (s.separate_log && s.oop.is_some()),
            "ZNS needs the out-of-place path and a log device"
        );
        assert_eq!(
            s.cfg.background,
            BackgroundMode::Caller,
            "no engine thread: the background work runs on the simulation's scheduler"
        );
        s
    }

    /// An estimate of the pages the tree reaches: leaves 2/3 full at the average key and
    /// value sizes, plus inner pages and a margin. Tight on purpose: the out-of-place store
    /// gets little more room than the tree needs, so DB GC runs often.
    fn page_bound(&self) -> u64 {
        let per_leaf =
            leaf_records_per_page(self.work.max_key / 2 + 2, self.work.max_value / 2).max(3);
        let leaves = self
            .work
            .keys
            .div_ceil(u64::try_from(per_leaf * 2 / 3).unwrap_or(1));
        leaves + leaves / 4 + 16
    }

    /// Main device bytes: room for the tree with a seeded slack (small slack: GC-heavy).
    fn size_device(&self, r: &mut Rng) -> u64 {
        let pages = self.page_bound();
        let wal = if self.separate_log {
            0
        } else {
            nowa_engine::wal_region_bytes(&self.cfg) + (self.cfg.dw_pages + 8) * BS
        };
        match (&self.oop, self.device) {
            (_, DeviceKind::SimZns { .. }) => 16 << 20,
            (None, _) => wal + (pages + 64) * BS,
            (Some(o), _) => {
                let zone = o.zone_bytes.unwrap_or(64 << 10);
                let slack = r.random_range(100..=150u64);
                let area = o.zone_area_for(pages * slack / 100, zone);
                (wal + area + area / 32 + 2 * zone).div_ceil(zone) * zone
            }
        }
    }

    /// One line on the placement of an out-of-place run (`--verbose`).
    #[must_use]
    pub fn placement_summary(&self) -> String {
        let Some(o) = &self.oop else {
            return "in place".into();
        };
        let Some(p) = &self.placement else {
            let own = match (o.nowa, o.gdt) {
                (true, _) => "nowa",
                (false, true) => "gdt",
                (false, false) => "one random open zone per batch",
            };
            return format!("placement: the engine's own ({own})");
        };
        let oracle = p.frozen_per_mille.map_or(String::new(), |m| {
            format!(", seeded oracle {m}/1000 frozen")
        });
        let victim = match (&o.placement, &o.gc_victim) {
            // MiDAS picks every victim itself (its FIFO groups, the last group greedy).
            (Some(nowa_logspace::PlacementKind::MiDas), _) => "MiDAS's own".to_string(),
            (_, Some(k)) => k.to_string(),
            (_, None) => "default".to_string(),
        };
        let trigger = o
            .gc_garbage_proportion
            .map_or_else(|| "free zones".to_string(), |t| format!("gp {t}"));
        format!(
            "placement {} ({} classes{oracle}), victim policy {victim}, GC trigger {trigger}",
            p.scheme, p.classes
        )
    }

    /// The devices: main, and the log device when the database has one.
    ///
    /// # Panics
    /// If the simulated SSD cannot be built for the capacity (a harness sizing bug).
    #[must_use]
    pub fn devices(&self) -> (Arc<dyn BlockDevice>, Option<Arc<dyn BlockDevice>>) {
        // Small simulated SSDs with many FDP handles need more spare units: raise the OP
        // until the FTL accepts the geometry.
        let sim = |mode| -> Arc<dyn BlockDevice> {
            let dev = [0.1, 0.3, 0.7, 1.5]
                .into_iter()
                .find_map(|op| SimDevice::with_capacity(self.capacity, op, mode).ok());
            Arc::new(dev.expect("a simulated SSD geometry for the capacity"))
        };
        let main: Arc<dyn BlockDevice> = match self.device {
            DeviceKind::Mem => Arc::new(MemDevice::new(self.capacity)),
            DeviceKind::SimCns => sim(SimMode::Conventional),
            DeviceKind::SimFdp { handles } => sim(SimMode::Fdp { handles }),
            DeviceKind::SimZns { max_open } => sim(SimMode::Zoned {
                max_open_zones: max_open,
            }),
        };
        let log = self.separate_log.then(|| {
            let bytes = nowa_engine::wal_region_bytes(&self.cfg) + (8 << 20);
            Arc::new(MemDevice::new(bytes)) as Arc<dyn BlockDevice>
        });
        (main, log)
    }

    /// The fault injector's configuration for device `index` (0 = main).
    #[must_use]
    pub fn fault_config(&self, index: u64) -> FaultConfig {
        FaultConfig {
            seed: nowa_units::mix64(self.seed.wrapping_add(index)),
            torn_write_prob: self.faults.torn,
            bit_flip_read_prob: 0.0,
        }
    }
}

fn draw_workload(r: &mut Rng) -> Workload {
    let max_value = [0, 16, 100, 400, 1400][r.random_range(0..5)];
    let max_key = r.random_range(4..=48);
    // Up to about 1 MiB of live data: larger than the buffer pool (so pages are evicted and
    // DB GC runs), small enough that a seed takes a fraction of a second.
    let keys_cap = (1u64 << 20) / u64::try_from(max_value / 2 + max_key / 2 + 16).unwrap_or(1);
    let keys = r.random_range(16..=keys_cap.clamp(32, 12_000));
    assert!(keys >= 16 && max_key >= 4, "a workload has keys");
    let put = r.random_range(20..=70);
    let del = r.random_range(0..=20);
    let get = r.random_range(5..=30);
    let scan = r.random_range(0..=5);
    Workload {
        keys,
        max_key,
        max_value,
        mix: [put, del, get, scan],
        sync_pct: [0, 5, 50, 100][r.random_range(0..4)],
        epochs: r.random_range(2..=5),
        ops: r.random_range(100..=1500),
        text_pct: r.random_range(0..=100),
    }
}

fn draw_oop(r: &mut Rng) -> OopConfig {
    let nowa = r.random_bool(0.3);
    // Drawn in this order (the order of the fields below) so every seed keeps its setup.
    let zone_bytes = Some([32 << 10, 64 << 10, 128 << 10][r.random_range(0..3)]);
    let open_zones = r.random_range(1..=4);
    let compression = [Compression::Off, Compression::Lz4, Compression::Zstd][r.random_range(0..3)];
    let packing = r.random_bool(0.7);
    let gdt = r.random_bool(0.3);
    let defer_compensation = nowa && r.random_bool(0.5);
    let seed: u64 = r.random();
    // The delta cache (docs/design.md 14.10): off, or 16-480 KiB (the small ones drop entries, so
    // misses read both ways). Derived from the placement seed, not drawn: the draws after
    // this one keep their values, so every seed keeps its setup.
    let delta_cache_bytes = match seed % 4 {
        0 | 1 => 0,
        n => (n - 1) * ((seed >> 8) % 15 + 1) * (16 << 10),
    };
    OopConfig {
        zone_bytes,
        open_zones,
        compression,
        packing,
        nowa,
        gdt,
        defer_compensation,
        // Drawn from the time stream (`draw_time`): a simulated task when on.
        background_gc: false,
        seed,
        // Sub-page deltas (issue 31): power loss mid-delta, mid-consolidation, mid-GC of
        // chains, and crashes in recovery rebuilding chains. Only with packing (the store
        // refuses deltas without it); the draw is made either way so seeds keep their setup.
        deltas: r.random_bool(0.5) && packing,
        delta_chain: r.random_range(1..=8),
        delta_cache_bytes,
        // The early trim of dead zones (`trim.rs`): from bits of the placement seed the delta
        // cache does not use, so no draw moves.
        trim_dead_zones: (seed >> 40) % 2 == 1,
        ..OopConfig::default()
    }
}

fn draw_config(r: &mut Rng, oop: bool) -> Config {
    // The redo bound is drawn from a side stream seeded by a peek at the main one, not from
    // `r`: the draws after it keep their values, so every seed keeps the setup it had before
    // the bound was drawn (the regression seeds replay what they caught).
    let mut side = Rng::seed_from_u64(r.clone().random::<u64>() ^ 0x7265_646f_626e_6473);
    Config {
        pool_bytes: r.random_range(64..=192u64) * BS,
        wal_limit_bytes: Some(r.random_range(16..=128u64) * BS),
        durability: Durability::Async,
        doublewrite: !oop && r.random_bool(0.7),
        dw_pages: r.random_range(1..=32),
        async_flush_bytes: r.random_range(1..=64u64) * BS,
        // Salvage must change nothing unless the WAL is damaged (media faults only).
        wal_damage: if r.random_bool(0.2) {
            WalDamage::Salvage
        } else {
            WalDamage::Refuse
        },
        // Hot-page deferral and InnoDB's page cleaner (its batches on a clock of device
        // writes, `sim.rs`), each in part of the seeds.
        max_checkpoint_count: [0, 0, 3, 8][r.random_range(0..4)],
        flushing: r.random_bool(0.5).then(|| nowa_engine::Flushing {
            io_capacity: r.random_range(1..=16),
            io_capacity_max: r.random_range(16..=128),
            flushing_avg_loops: r.random_range(1..=30),
            ..nowa_engine::Flushing::default()
        }),
        // The adaptive redo bound, with the pass cadence or the cleaner's batches: the WAL
        // limit is 16-128 blocks, so a bound of 8-64 often binds before it.
        max_redo_bytes: side
            .random_bool(0.3)
            .then(|| side.random_range(8..=64u64) * BS),
        // The record cache (engine `rcache.rs`), from the side stream after the bound: off,
        // or 2-64 KiB (small: entries are dropped and refilled; every get checks the model).
        record_cache_bytes: if side.random_bool(0.5) {
            side.random_range(2..=64u64) << 10
        } else {
            0
        },
        // Blind updates (engine `blind.rs`), from the side stream after the record cache:
        // off, or 1-64 KiB (small: the memory limit drains leaves, checkpoints drain them).
        blind_update_bytes: if side.random_bool(0.5) {
            side.random_range(1..=64u64) << 10
        } else {
            0
        },
        ..Config::default()
    }
}

fn draw_faults(r: &mut Rng) -> Faults {
    Faults {
        torn: [0.0, 0.3, 0.9][r.random_range(0..3)],
        keep: [0.0, 0.5, 1.0][r.random_range(0..3)],
        trim: [
            TrimMode::Inner,
            TrimMode::Zero,
            TrimMode::Keep,
            TrimMode::Random,
        ][r.random_range(0..4)],
        media_pct: [0, 0, 20, 50][r.random_range(0..4)],
        recovery_crash_pct: [0, 25, 50][r.random_range(0..3)],
    }
}
