//! `ycsb`: the engine under a YCSB mix on a simulated SSD (or in memory). [`Spec`] is the run
//! as resolved by `nowa ycsb` (pool, device capacity, zone size, stop all decided), so a
//! result's `nowa.spec` runs again with [`run`] (`nowa run RESULT.json`).
//!
//! Repeatable runs: with one worker, no page-cleaner thread, no background DB GC thread and
//! an operation-count stop, every byte the engine and the simulated SSD write is the same on
//! every run of a spec ([`Spec::nondeterminism`] names what else makes a run vary).

use crate::engine::EngineSpec;
use crate::frozen::engine::{FrozenReport, FrozenRun};
use crate::frozen::record::WriteLog;
use crate::text::{fraction, size};
use crate::{Cancel, Error, Identity, Progress, Report};
use nowa_bench::ycsb::{self as bench, KeyOrder, Mix, Stop, ValueKind, WritePath, YcsbSpec};
use nowa_device::SimMode;
use nowa_engine::{Compression, Config, Engine, OopConfig};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub mod flags;
#[cfg(test)]
mod tests;

/// One YCSB run, resolved: what ran, exactly (a `nowa ycsb` result's `nowa.spec`). Keys are
/// the flags of `nowa ycsb` with underscores; values their text or numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// `sim` (simulated SSD) or `mem`; a path names a file or block device (such a run is
    /// described, not run again: it would format the device).
    pub device: String,
    /// Device capacity in bytes.
    #[serde(with = "size")]
    pub capacity: u64,
    /// Simulated SSD over-provisioning (spare/logical); also the SSD OP estimate of NoWA's
    /// deferred compensation.
    #[serde(with = "fraction")]
    pub op: f64,
    /// Simulated SSD mode: `cns`, `fdp:HANDLES`, `zns`.
    pub sim_mode: String,
    /// Records loaded.
    pub records: u64,
    /// Bytes per value.
    pub value_size: usize,
    /// Values: pattern, paper, random.
    pub values: ValueKind,
    /// The mix: A, B, C, F, W.
    pub workload: Mix,
    /// Zipf theta (0: uniform).
    pub theta: f64,
    /// scrambled or ranked.
    pub key_order: KeyOrder,
    /// Worker threads.
    pub threads: usize,
    /// When the run phase ends: `{"ops": N}`, `{"seconds": S}`, `{"device-writes": K}`,
    /// `{"store-writes": K}`.
    pub stop: Stop,
    /// A durability point every N updates (async).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durable_every: Option<std::num::NonZeroU64>,
    /// Seed of keys and values (and of out-of-place placement).
    pub seed: u64,
    /// Reporting interval, seconds.
    pub interval: f64,
    /// The engine: pool, WAL, durability, write-back, timing model, write path.
    pub engine: EngineSpec,
}

/// InnoDB's adaptive flushing (`--flushing innodb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InnodbFlushing {
    /// innodb_io_capacity, pages per second.
    pub io_capacity: u64,
    /// innodb_io_capacity_max, pages per second.
    pub io_capacity_max: u64,
}

/// The write path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
#[expect(
    clippy::large_enum_variant,
    reason = "one spec per run, never in a collection; boxing would change every match site"
)]
pub enum Path {
    /// Fixed page homes.
    InPlace,
    /// Zones and DB GC.
    Oop(Oop),
}

/// The out-of-place switches (`nowa ycsb --write-path oop ...`), resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Oop {
    /// Zone size in bytes (`auto` / `infer` resolved).
    #[serde(with = "size")]
    pub zone_size: u64,
    /// Zones appended concurrently.
    pub open_zones: u32,
    /// off, lz4, zstd.
    pub compression: String,
    /// 4 KiB packing of compressed pages.
    pub packing: bool,
    /// The background DB GC thread.
    pub background_gc: bool,
    /// NoWA.
    pub nowa: bool,
    /// GDT.
    pub gdt: bool,
    /// Sub-page deltas (issue 31).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deltas: bool,
    /// Most deltas per chain (with `deltas`; default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_chain: Option<u32>,
    /// Merging bound of deltas, bytes (with `deltas`; default 768).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_merge: Option<u32>,
    /// Delta cache memory, bytes (with `deltas`; default 0: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_cache: Option<u64>,
    /// Trim zones as soon as every copy in them died.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trim_dead_zones: bool,
    /// NoWA's deferred compensation.
    pub defer_compensation: bool,
    /// The zone area's bound, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space_limit: Option<u64>,
    /// NoWA with the WAL on the same conventional SSD: the share of zones DB GC keeps free
    /// (with `nowa`; absent: the engine's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_wal_free: Option<f64>,
    /// A placement scheme of the shared log space (its flag text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// The DB GC victim policy (its flag text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_victim: Option<String>,
    /// The garbage-proportion trigger's theta (absent: free-zone trigger only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_garbage_proportion: Option<f64>,
    /// SepFrozen's frozen-page model (`--frozen-model`: a model file, or `online[:...]`),
    /// with `placement` sepfrozen-bit|dac.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen_model: Option<std::path::PathBuf>,
    /// The model's decision threshold (`--frozen-threshold`; absent: the model's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen_threshold: Option<f64>,
    /// SepFrozen's write log (`--record-writes`): every DB page write, GC move and free,
    /// written to this file (which must not exist).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_writes: Option<std::path::PathBuf>,
}

/// A ycsb run's result: the engine's measurements and, with a frozen-page model, its report.
#[derive(Debug, Clone, Serialize)]
pub struct YcsbOut {
    /// What the run measured.
    #[serde(flatten)]
    pub result: bench::YcsbResult,
    /// SepFrozen's report (`nowa ycsb --frozen-model`), else null.
    pub frozen: Option<FrozenReport>,
    /// What the write log holds (`record_writes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_log: Option<nowa_frozen::LogSummary>,
}

/// A ycsb run's result under its identity.
pub type Outcome = Report<YcsbOut>;

/// `--sim-mode` text (`cns`, `fdp:8`, `zns`) of a mode.
#[must_use]
pub fn sim_mode_text(m: SimMode) -> String {
    match m {
        SimMode::Conventional => "cns".to_owned(),
        SimMode::Fdp { handles } => format!("fdp:{handles}"),
        SimMode::Zoned { .. } => "zns".to_owned(),
    }
}

/// `--sim-mode`: cns, fdp:HANDLES (1 to 4096), zns.
///
/// # Errors
/// Any other text.
pub fn parse_sim_mode(s: &str) -> Result<SimMode, String> {
    match s {
        "cns" => Ok(SimMode::Conventional),
        "zns" => Ok(SimMode::Zoned { max_open_zones: 14 }),
        m => match m.strip_prefix("fdp:") {
            Some(h) => {
                crate::flags::count::<u16>(1, 4096)(h).map(|handles| SimMode::Fdp { handles })
            }
            None => Err(format!(
                "unknown simulated SSD mode '{m}' (expected cns, fdp:HANDLES or zns)"
            )),
        },
    }
}

/// Device bytes beyond the pages for an engine configured as `engine`: superblocks, the
/// doublewrite area and, unless the WAL is on a separate device, the WAL region (the engine's
/// own [`nowa_engine::wal_region_bytes`]). The one sizing rule of `nowa ycsb`'s device.
///
/// # Panics
/// Never: the sum holds the superblocks and the WAL region (saturating).
#[must_use]
pub fn overhead_bytes(engine: &Config, separate_wal: bool) -> u64 {
    let wal = engine.wal_limit();
    let wal_region = if separate_wal {
        0
    } else {
        nowa_engine::wal_region_bytes(engine)
    };
    let overhead = wal_region
        .saturating_add(1 << 20)
        .saturating_add(engine.dw_pages.saturating_mul(4096));
    assert!(overhead >= 1 << 20, "superblocks take at least 1 MiB");
    assert!(
        separate_wal || overhead > wal,
        "the WAL region holds the WAL limit"
    );
    overhead
}

/// The device capacity (a multiple of 4 KiB) that a dataset of `dataset` bytes fills to
/// `fill` with `overhead` bytes of engine space beside it.
///
/// # Panics
/// If `fill` is not in (0, 1] (the flag's range).
#[must_use]
pub fn capacity_for(dataset: u64, overhead: u64, fill: f64) -> u64 {
    assert!(fill > 0.0 && fill <= 1.0, "a fill in (0, 1]");
    nowa_bench::round_u64(dataset.saturating_add(overhead) as f64 / fill) / 4096 * 4096
}

impl Spec {
    /// The spec of a run `nowa ycsb` resolved into `b` on `device` of `capacity` bytes.
    ///
    /// # Panics
    /// If `b` sets an engine knob the flags do not (a spec would not carry it).
    #[must_use]
    pub fn from_bench(b: &YcsbSpec, device: &str, capacity: u64, op: f64, mode: SimMode) -> Spec {
        let write_path = match &b.store {
            WritePath::InPlace => Path::InPlace,
            WritePath::OutOfPlace(o) => Path::Oop(Oop::from_config(o)),
        };
        Spec {
            device: device.to_owned(),
            capacity,
            op,
            sim_mode: sim_mode_text(mode),
            records: b.records,
            value_size: b.value_size,
            values: b.value_kind,
            workload: b.mix,
            theta: b.theta,
            key_order: b.key_order,
            threads: b.threads,
            stop: b.stop,
            durable_every: b.durable_every,
            seed: b.seed,
            interval: b.interval_secs,
            engine: EngineSpec::from_config(&b.engine, b.separate_wal, b.pacing, write_path),
        }
    }

    /// The simulated SSD's mode.
    ///
    /// # Errors
    /// [`Error::Usage`] naming `sim_mode`.
    pub fn mode(&self) -> Result<SimMode, Error> {
        parse_sim_mode(&self.sim_mode).map_err(|e| Error::Usage(format!("sim_mode: {e}")))
    }

    /// The driver's spec: the engine configuration, the write path, the stop.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the first field out of its flag's range.
    ///
    /// # Panics
    /// If the conversion loses the pool or the write path (a bug).
    pub fn to_bench(&self) -> Result<YcsbSpec, Error> {
        self.check()?;
        let engine = self.engine.config()?;
        let store = match &self.engine.write_path {
            Path::InPlace => WritePath::InPlace,
            Path::Oop(o) => WritePath::OutOfPlace(o.to_config(self.op, self.seed)?),
        };
        assert_eq!(engine.pool_bytes, self.engine.pool, "the pool as resolved");
        Ok(YcsbSpec {
            records: self.records,
            value_size: self.value_size,
            value_kind: self.values,
            mix: self.workload,
            theta: self.theta,
            key_order: self.key_order,
            threads: self.threads,
            stop: self.stop,
            durability: engine.durability,
            durable_every: self.durable_every,
            seed: self.seed,
            interval_secs: self.interval,
            engine,
            store,
            separate_wal: self.engine.separate_wal,
            ack_log: None,
            pacing: self.engine.pacing,
        })
    }

    /// Checks every field against its flag's range; the error names the field.
    ///
    /// # Errors
    /// [`Error::Usage`]: `field: why`.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |field: &str, why: String| Err(Error::Usage(format!("{field}: {why}")));
        self.mode()?;
        let max_value = (nowa_engine::page::MAX_KV - 8) as u64;
        let ranges: [(&str, u64, u64, u64); 4] = [
            ("records", self.records, 1, 1_000_000_000_000),
            ("value_size", self.value_size as u64, 1, max_value),
            ("threads", self.threads as u64, 1, crate::flags::MAX_THREADS),
            (
                "capacity",
                self.capacity,
                crate::devices::MIN_DATABASE_BYTES,
                1 << 50,
            ),
        ];
        crate::check_ranges(&ranges)?;
        crate::check_blocks("capacity", self.capacity)?;
        self.engine.check(self.op, self.seed)?;
        let fractions = [("op", self.op, 1.0), ("theta", self.theta, 100.0)];
        for (field, v, hi) in fractions {
            if !(v.is_finite() && v >= 0.0 && v < hi) || (field == "op" && v == 0.0) {
                return bad(field, format!("{v} is out of range"));
            }
        }
        if !(self.interval.is_finite() && self.interval >= 0.01) {
            return bad("interval", format!("{} is below 0.01 s", self.interval));
        }
        check_stop(self.stop).map_err(|e| Error::Usage(format!("stop: {e}")))?;
        Ok(())
    }

    /// Why two runs of this spec may differ in what they write (None: they do not): worker
    /// threads, the page-cleaner and background DB GC threads, and stops or flush clocks on
    /// the wall clock.
    #[must_use]
    pub fn nondeterminism(&self) -> Option<String> {
        let e = &self.engine;
        let oop_bg = matches!(&e.write_path, Path::Oop(o) if o.background_gc);
        let paced = e.pacing.is_some_and(|p| p.paced);
        let reasons = [
            (self.threads > 1, "more than one worker thread"),
            (
                e.page_cleaner,
                "the page-cleaner thread (--page-cleaner off)",
            ),
            (oop_bg, "the background DB GC thread (--background-gc off)"),
            (
                !matches!(self.stop, Stop::Ops(_)),
                "a stop checked on the wall clock (--ops)",
            ),
            (
                e.flushing.is_some() && !paced,
                "InnoDB flushing on the wall clock",
            ),
            (
                self.device != "sim" && self.device != "mem",
                "a real device",
            ),
        ];
        crate::named_reasons(&reasons)
    }
}

fn check_stop(stop: Stop) -> Result<(), String> {
    match stop {
        Stop::Ops(n) if (1..=1 << 62).contains(&n) => Ok(()),
        Stop::Seconds(s) if (1e-3..=366.0 * 86400.0).contains(&s) => Ok(()),
        Stop::DeviceWrites(k) | Stop::StoreWrites(k) if k.is_finite() && k > 0.0 && k <= 1e6 => {
            Ok(())
        }
        s => Err(format!("{s:?} is out of range")),
    }
}

impl Oop {
    /// The spec of an out-of-place configuration (its zone size resolved; a frozen-page model
    /// is named by the caller).
    ///
    /// # Panics
    /// If the zone size is not resolved, or `o` sets a knob the flags do not.
    #[must_use]
    pub fn from_config(o: &OopConfig) -> Oop {
        let d = OopConfig::default();
        assert!(
            o.zstd_level == d.zstd_level
                && o.gc_reserve_zones == d.gc_reserve_zones
                && o.fdp_hints == d.fdp_hints
                && o.gc_high_zones == d.gc_high_zones
                && o.snapshot_full_every == d.snapshot_full_every,
            "an out-of-place configuration the flags can give"
        );
        Oop {
            zone_size: o.zone_bytes.expect("a resolved zone size"),
            open_zones: o.open_zones,
            compression: compression_text(o.compression).to_owned(),
            packing: o.packing,
            background_gc: o.background_gc,
            nowa: o.nowa,
            gdt: o.gdt,
            deltas: o.deltas,
            delta_chain: o.deltas.then_some(o.delta_chain),
            delta_merge: o.deltas.then_some(o.delta_merge),
            delta_cache: o.deltas.then_some(o.delta_cache_bytes),
            trim_dead_zones: o.trim_dead_zones,
            defer_compensation: o.defer_compensation,
            space_limit: o.space_limit_bytes,
            shared_wal_free: o.nowa.then_some(o.shared_wal_free),
            placement: o.placement.map(|p| p.to_string()).or_else(|| {
                let h = o.frozen.as_ref()?;
                Some(crate::placement::EnginePlacement::Frozen(h.base, h.classes).name())
            }),
            gc_victim: o.gc_victim.as_ref().map(ToString::to_string),
            gc_garbage_proportion: o.gc_garbage_proportion,
            frozen_model: None,
            frozen_threshold: None,
            record_writes: None,
        }
    }

    /// SepFrozen's run as the spec names it (None: no SepFrozen placement), its model loaded.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field: a model without a SepFrozen placement or the other
    /// way round, a model file that does not load.
    pub fn frozen_run(&self, seed: u64) -> Result<Option<FrozenRun>, Error> {
        let placement = match &self.placement {
            Some(p) => Some(
                crate::placement::engine_placement(p)
                    .map_err(|e| Error::Usage(format!("write_path.oop.placement: {e}")))?,
            ),
            None => None,
        };
        let run = crate::frozen::engine::frozen_run(placement, self.frozen_model.as_deref(), seed)?;
        crate::frozen::engine::with_threshold(run, self.frozen_threshold)
    }

    pub(crate) fn to_config(&self, op: f64, seed: u64) -> Result<OopConfig, Error> {
        let field =
            |f: &str, e: &dyn std::fmt::Display| Error::Usage(format!("write_path.oop.{f}: {e}"));
        let zone = crate::flags::size_4k(32 << 10, (4 << 30) - 4096)(&self.zone_size.to_string())
            .map_err(|e| field("zone_size", &e))?;
        let compression: Compression = self
            .compression
            .parse()
            .map_err(|e| field("compression", &e))?;
        let placement = match &self.placement {
            Some(p) => {
                match crate::placement::engine_placement(p).map_err(|e| field("placement", &e))? {
                    crate::placement::EnginePlacement::Scheme(k) => Some(k),
                    // SepFrozen's hook is the run's ([`Oop::frozen_run`]).
                    crate::placement::EnginePlacement::Frozen(..) => None,
                }
            }
            None => None,
        };
        let gc_victim = (self.gc_victim.as_deref())
            .map(str::parse::<nowa_logspace::PolicyKind>)
            .transpose()
            .map_err(|e| field("gc_victim", &e))?;
        if !(1..=256).contains(&self.open_zones) {
            return Err(field(
                "open_zones",
                &format!("{} is not in [1, 256]", self.open_zones),
            ));
        }
        if let Some(g) = self.gc_garbage_proportion {
            if !(g > 0.0 && g < 1.0) {
                return Err(field(
                    "gc_garbage_proportion",
                    &format!("{g} is not in (0, 1)"),
                ));
            }
        }
        assert!(
            zone % 4096 == 0 && zone >= 32 << 10,
            "the zone parser's range"
        );
        assert!(
            placement.is_none() || !self.nowa,
            "placement replaces NoWA's groups"
        );
        Ok(OopConfig {
            zone_bytes: Some(zone),
            open_zones: self.open_zones,
            compression,
            nowa: self.nowa,
            gdt: self.gdt,
            deltas: self.deltas,
            delta_chain: self.delta_chain.unwrap_or(OopConfig::default().delta_chain),
            delta_merge: self.delta_merge.unwrap_or(OopConfig::default().delta_merge),
            delta_cache_bytes: self.delta_cache.unwrap_or(0),
            trim_dead_zones: self.trim_dead_zones,
            packing: self.packing,
            background_gc: self.background_gc,
            defer_compensation: self.defer_compensation,
            ssd_op: op,
            seed,
            space_limit_bytes: self.space_limit,
            shared_wal_free: self.shared_wal_free.unwrap_or(nowa_engine::SHARED_WAL_FREE),
            placement,
            gc_victim,
            gc_garbage_proportion: self.gc_garbage_proportion,
            ..OopConfig::default()
        })
    }
}

fn compression_text(c: Compression) -> &'static str {
    match c {
        Compression::Off => "off",
        Compression::Lz4 => "lz4",
        Compression::Zstd => "zstd",
    }
}

/// Loads the records and runs the measured phase on `engine` (the one load-and-run of
/// `nowa ycsb`, `nowa run` and Python); `paced` restarts the timing model's clock after the
/// load. None when a stop was asked during the load.
///
/// # Errors
/// The engine's or the driver's, as [`Error::Failed`].
///
/// # Panics
/// If the load or the run covers other records than the spec's (a bug).
pub fn load_and_run(
    engine: &Arc<Engine>,
    spec: &YcsbSpec,
    paced: Option<&nowa_bench::paced::Paced>,
    on_load: &(dyn Fn(u64) + Sync),
    on_tick: &mut dyn FnMut(&bench::Tick),
) -> Result<Option<bench::YcsbResult>, Error> {
    let t = std::time::Instant::now();
    let loaded =
        bench::load(engine, spec, on_load).map_err(|e| Error::failed("loading records", e))?;
    if loaded < spec.records {
        return Ok(None);
    }
    let load_secs = t.elapsed().as_secs_f64();
    if let Some(p) = paced {
        p.reset(); // the load phase is not measured
    }
    let mut r = bench::run(engine.clone(), spec, on_tick)
        .map_err(|e| Error::failed("running the workload", e))?;
    assert_eq!(
        loaded, spec.records,
        "the load stops at the records asked for"
    );
    assert_eq!(
        r.spec.records, spec.records,
        "the run is of the loaded records"
    );
    r.load_secs = load_secs;
    Ok(Some(r))
}

/// Creates the engine of `spec` on `dev`; a configuration the device cannot hold is bad
/// input naming the flags that size it.
///
/// # Errors
/// [`Error::Usage`] for such a configuration, else [`Error::Failed`].
pub fn create_engine(dev: bench::Device, spec: &YcsbSpec) -> Result<Engine, Error> {
    bench::create_engine(dev, spec).map_err(|e| match e {
        bench::YcsbError::Engine(nowa_engine::EngineError::Config(m)) => Error::Usage(format!(
            "creating the engine (--capacity, --pool, --zone-size): {m}"
        )),
        e => Error::failed("creating the engine", e),
    })
}

/// What a caller adds to a run: its own device and files, and what it shows on the way.
/// `Hooks::default()` for a plain run of the spec.
#[derive(Default)]
pub struct Hooks<'a> {
    /// The device, opened by the caller (a file or block device, or the simulated SSD on
    /// which it resolved the zone size). None: a fresh one of the spec's capacity.
    pub device: Option<crate::devices::Opened>,
    /// `--record-trace`: record the device's requests in this trace CSV.
    pub record_trace: Option<&'a std::path::Path>,
    /// `--ack-log`: "key-id version" after every acknowledged update.
    pub ack_log: Option<std::path::PathBuf>,
    /// Records loaded so far.
    pub on_load: Option<&'a (dyn Fn(u64) + Sync)>,
    /// Every reporting interval of the run phase.
    pub on_tick: Option<&'a mut dyn FnMut(&bench::Tick)>,
}

/// Runs the spec on a fresh simulated SSD (or memory device) of its capacity.
///
/// # Errors
/// As [`run_with`].
pub fn run(spec: &Spec, progress: Option<Progress<'_>>, cancel: &Cancel) -> Result<Outcome, Error> {
    let records = spec.records;
    let on_load = |n: u64| {
        if let Some(p) = progress {
            p(n, records.saturating_mul(2));
        }
    };
    let hooks = Hooks {
        on_load: Some(&on_load),
        ..Hooks::default()
    };
    run_with(spec, hooks, cancel)
}

/// The device of a run: the caller's, else a fresh simulated SSD or memory device.
fn device_of(spec: &Spec, given: Option<crate::devices::Opened>) -> Result<bench::Device, Error> {
    if let Some((dev, _)) = given {
        return Ok(dev);
    }
    let opened = crate::devices::in_memory(&spec.device, spec.capacity, spec.op, spec.mode()?)?;
    let (dev, _) = opened.ok_or_else(|| {
        Error::Usage(format!(
            "device: {p}: a run on a file or block device is not run again from its result (it would format the device); use `nowa ycsb --device {p}`",
            p = spec.device
        ))
    })?;
    assert_eq!(
        dev.geometry().capacity,
        spec.capacity,
        "a fresh device of the spec's capacity"
    );
    Ok(dev)
}

/// SepFrozen's run and write log as a write path names them (`ycsb` and `tpcc`).
pub(crate) fn frozen_of(
    path: &Path,
    seed: u64,
) -> Result<(Option<FrozenRun>, Option<Arc<WriteLog>>), Error> {
    let Path::Oop(o) = path else {
        return Ok((None, None));
    };
    let run = o.frozen_run(seed)?;
    assert!(
        run.is_none() || o.frozen_model.is_some(),
        "SepFrozen runs a named model"
    );
    let log = crate::frozen::record::open(o.record_writes.as_deref(), true)?;
    assert_eq!(
        log.is_some(),
        o.record_writes.is_some(),
        "a log where the spec names one"
    );
    Ok((run, log))
}

/// Runs the spec with the caller's [`Hooks`] (SepFrozen's model and write log as the spec
/// names them).
///
/// # Errors
/// [`Error::Usage`]: a bad field, a configuration the device cannot hold; [`Error::Failed`]:
/// the engine's errors, or a stop asked during the load (nothing measured).
///
/// # Panics
/// If the driver reports another spec's run (a bug).
pub fn run_with(spec: &Spec, hooks: Hooks<'_>, cancel: &Cancel) -> Result<Outcome, Error> {
    let mut b = spec.to_bench()?;
    b.ack_log = hooks.ack_log;
    let (frozen, wlog) = frozen_of(&spec.engine.write_path, spec.seed)?;
    if let (Some(f), WritePath::OutOfPlace(o)) = (&frozen, &mut b.store) {
        o.frozen = Some(f.hook.clone());
    }
    let dev = device_of(spec, hooks.device)?;
    let dev = crate::devices::record_trace(dev, hooks.record_trace)?;
    let id = Identity::now("ycsb", spec, spec.seed);
    assert_eq!(
        id.spec["seed"], spec.seed,
        "the identity names the run's seed"
    );
    let (dev, paced) = bench::pace(dev, b.pacing.as_ref());
    let engine = Arc::new(create_engine(dev, &b)?);
    crate::frozen::engine::attach(&engine, frozen.as_ref(), wlog.as_ref())?;
    // A file or block device: the kernel's counters of the device under it, over the run.
    let blk = match spec.device.as_str() {
        "sim" | "mem" => None,
        path => bench::BlockDevReading::of(std::path::Path::new(path)),
    };
    let on_load = hooks.on_load.unwrap_or(&|_| {});
    let mut no_tick = |_: &bench::Tick| {};
    let on_tick = hooks.on_tick.unwrap_or(&mut no_tick);
    let r = load_and_run(&engine, &b, paced.as_deref(), on_load, on_tick);
    let placed = crate::frozen::engine::report(frozen.as_ref());
    assert_eq!(
        placed.is_some(),
        frozen.is_some(),
        "a report of SepFrozen's run"
    );
    engine
        .close()
        .map_err(|e| Error::failed("closing the engine", e))?;
    let write_log = wlog.map(|l| l.finish(&engine)).transpose()?;
    let Some(mut result) = r? else {
        return Err(Error::Failed {
            what: "ycsb",
            source: "interrupted during the load; nothing was measured".into(),
        });
    };
    result.block_device = blk
        .as_ref()
        .and_then(|k| Some(k.since(&k.again()?, result.ops)));
    assert_eq!(
        result.spec.seed, spec.seed,
        "the result is of this spec's run"
    );
    let _ = cancel; // the driver polls the same process-wide stop flag
    Ok(Report {
        nowa: id,
        result: YcsbOut {
            result,
            frozen: placed,
            write_log,
        },
    })
}
