//! `tpcc`: TPC-C (standard or steady) on the engine, with WAF, bytes per transaction and the
//! consistency check. [`Spec`] is the run as resolved by `nowa tpcc` (pool, WAL limit, device
//! capacity from [`size`], zone size, stop all decided), so a result's `nowa.spec` runs again
//! with [`run`] (`nowa run RESULT.json`).
//!
//! Repeatable runs: with one worker (and loader), no page-cleaner thread, no background DB GC
//! thread and a transaction-count stop, the engine and the simulated SSD write the same bytes
//! on every run of a spec ([`Spec::nondeterminism`]); the samples and speeds are the wall
//! clock's.

use crate::engine::EngineSpec;
use crate::text::{fraction, size as bytes};
use crate::ycsb::Path;
use crate::{devices, Cancel, Error, Identity, Progress, Report};
use nowa_bench::ycsb::{Drilldown, Pacing};
use nowa_device::SimMode;
use nowa_engine::{Engine, FrozenHook};
use nowa_tpcc::{Consistency, LoadProgress, LoadReport, Sample};
use serde::{Deserialize, Serialize};

pub mod flags;
mod phases;
pub mod size;
#[cfg(test)]
mod tests;
mod text;

pub use phases::{check_database, CheckOutcome, DbSize, OpenWork};
pub use text::{check_lines, consistency_text, load_line, loaded_line, sample_line, summary};

/// One TPC-C run, resolved: what ran, exactly (a `nowa tpcc` result's `nowa.spec`). Keys are
/// the flags of `nowa tpcc` with underscores; the engine's under `engine`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// `sim` (simulated SSD) or `mem`; a path names a file or block device (such a run is
    /// described, not run again: it would format the device).
    pub device: String,
    /// Device capacity in bytes (`--dataset-fill` resolved).
    #[serde(with = "bytes")]
    pub capacity: u64,
    /// Simulated SSD over-provisioning (spare/logical).
    #[serde(with = "fraction")]
    pub op: f64,
    /// Simulated SSD mode: `cns`, `fdp:HANDLES`, `zns`.
    pub sim_mode: String,
    /// Warehouses loaded.
    pub warehouses: u32,
    /// Worker (and loader) threads.
    pub threads: usize,
    /// When the run ends: `{"transactions": N}`, `{"seconds": S}`, `{"device_writes": K}`.
    pub stop: Stop,
    /// Steady TPC-C (batch deletes, window 2100): the database does not grow.
    pub steady: bool,
    /// Seed of the load and of the transaction inputs.
    pub seed: u64,
    /// Sample interval, seconds.
    pub interval: f64,
    /// The consistency check (clause 3.3.2) at the end.
    pub check: bool,
    /// The engine.
    pub engine: EngineSpec,
}

/// When the run phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Stop {
    /// After this many draws of the mix.
    Transactions(u64),
    /// After this many seconds.
    Seconds(f64),
    /// Once the device received this many times its capacity in writes (WAL included).
    DeviceWrites(f64),
}

/// What `nowa tpcc` reports (`--json`, `--out`).
#[derive(Debug, Clone, Serialize)]
pub struct TpccOut {
    /// The load's report.
    pub load: Option<LoadReport>,
    /// The run's report.
    pub run: nowa_tpcc::Report,
    /// Where the bytes went.
    pub drilldown: Drilldown,
    /// DB WAF.
    pub db_waf: Option<f64>,
    /// SSD WAF.
    pub ssd_waf: Option<f64>,
    /// DB WAF x SSD WAF.
    pub total_waf: Option<f64>,
    /// Bytes the transactions changed, per transaction.
    pub logical_bytes_per_txn: f64,
    /// Bytes the device received per transaction.
    pub host_bytes_per_txn: f64,
    /// Bytes the flash received per transaction (a simulated SSD).
    pub flash_bytes_per_txn: Option<f64>,
    /// WAL bytes per transaction.
    pub wal_bytes_per_txn: f64,
    /// Bytes the device read per transaction (page misses, GC reads).
    pub read_bytes_per_txn: f64,
    /// Page writes (whole pages or deltas, plus doublewrite pages) per page-store flush in
    /// the run (None: no store flush), as `nowa ycsb` reports it.
    pub page_writes_per_store_flush: Option<f64>,
    /// The consistency check (`check`).
    pub consistency: Option<Consistency>,
    /// The engine's counters at the end (flush causes, residency histograms).
    pub engine: nowa_engine::Stats,
    /// The simulated SSD's timing model (None: not a simulated SSD).
    pub pacing: Option<Pacing>,
    /// Media busy time of the run by the timing model, when paced.
    pub device_busy_secs: Option<f64>,
    /// Paced: the New-Orders per minute of device busy time (the throughput the simulated
    /// SSD's timing model allows, whatever the CPU did).
    pub device_bound_tpmc: Option<f64>,
    /// Out of place: the placement and its per-class table over the store's life.
    pub placement: Option<nowa_logspace::ClassReport>,
    /// SepFrozen's model and its inference at GC (`--frozen-model`), else null.
    pub frozen: Option<crate::frozen::engine::FrozenReport>,
    /// What the write log holds (`record_writes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_log: Option<nowa_frozen::LogSummary>,
    /// Out of place: the zone (GC unit) size in bytes.
    pub zone_bytes: Option<u64>,
    /// The database at the end.
    pub db: DbSize,
    /// Ctrl-C stopped the run: the figures cover the part that ran.
    pub interrupted: bool,
}

/// A tpcc run's result under its identity.
pub type Outcome = Report<TpccOut>;

/// The result's name in `nowa tpcc --out DIR` (the JSON of `--json`).
pub const RESULT_FILE: &str = "tpcc.json";

/// The per-interval samples' name in `nowa tpcc --out DIR` (CSV, the identity line first).
pub const SAMPLES_FILE: &str = "samples.csv";

/// Writes `nowa tpcc --out DIR`'s files: [`RESULT_FILE`] and [`SAMPLES_FILE`] into `dir`,
/// prepared (new or empty, or forced) before the run.
///
/// # Errors
/// The files' write errors.
///
/// # Panics
/// If `dir` is not a directory (it was not prepared: a bug).
pub fn write_out(dir: &std::path::Path, o: &Outcome) -> Result<(), Error> {
    assert!(dir.is_dir(), "--out was prepared before the run");
    let json = serde_json::to_string_pretty(o).map_err(|e| Error::failed("the result", e))?;
    let file = dir.join(RESULT_FILE);
    std::fs::write(&file, json).map_err(|e| Error::io(&file, e))?;
    write_samples(&dir.join(SAMPLES_FILE), o)?;
    assert!(dir.join(SAMPLES_FILE).is_file(), "both files written");
    Ok(())
}

/// The per-interval samples as CSV under the run's identity line (`--csv FILE`).
///
/// # Errors
/// The file's errors.
pub fn write_samples(path: &std::path::Path, o: &Outcome) -> Result<(), Error> {
    let f = crate::csv_file(path, &o.nowa)?;
    nowa_tpcc::write_samples_csv(&o.result.run.samples, f).map_err(|e| Error::io(path, e))
}

/// A caller's step on the engine (attach observers, finish a log).
pub type EngineHook<'a> = &'a dyn Fn(&Engine) -> Result<(), Error>;
/// A caller's step once the load is done.
pub type LoadedHook<'a> = &'a dyn Fn(&LoadReport) -> Result<(), Error>;

/// What a caller adds to a run: its own device and files, and what it shows on the way.
/// `Hooks::default()` for a plain run of the spec.
#[derive(Default)]
pub struct Hooks<'a> {
    /// The device, opened by the caller (a file or block device, or the simulated SSD on
    /// which it resolved the zone size). None: a fresh one of the spec's capacity.
    pub device: Option<devices::Opened>,
    /// `--record-trace`: record the device's requests in this trace CSV.
    pub record_trace: Option<&'a std::path::Path>,
    /// After every loaded warehouse.
    pub on_load: Option<&'a (dyn Fn(&LoadProgress) + Sync)>,
    /// Once the load is done.
    pub on_loaded: Option<LoadedHook<'a>>,
    /// Every sample, with the engine's metrics in `extra`.
    pub on_sample: Option<&'a (dyn Fn(&Sample) + Sync)>,
}

/// SepFrozen's part of a run, from its spec: the store's hook, the write observers attached
/// once the engine exists, the write log sealed once it closed.
pub(crate) struct FrozenSteps<'a> {
    pub(crate) hook: Option<FrozenHook>,
    pub(crate) attach: EngineHook<'a>,
    pub(crate) on_closed: EngineHook<'a>,
}

impl Spec {
    /// The simulated SSD's mode.
    ///
    /// # Errors
    /// [`Error::Usage`] naming `sim_mode`.
    pub fn mode(&self) -> Result<SimMode, Error> {
        crate::ycsb::parse_sim_mode(&self.sim_mode)
            .map_err(|e| Error::Usage(format!("sim_mode: {e}")))
    }

    /// The driver's stop and, for `device_writes`, the byte count that ends the run.
    #[must_use]
    pub fn driver_stop(&self) -> (nowa_tpcc::Stop, Option<u64>) {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "K x a device capacity: positive, far below 2^63"
        )]
        let bytes = |k: f64| (k * self.capacity as f64).ceil() as u64;
        match self.stop {
            Stop::Transactions(n) => (nowa_tpcc::Stop::Transactions(n), None),
            Stop::Seconds(s) => (nowa_tpcc::Stop::Seconds(s), None),
            Stop::DeviceWrites(k) => (nowa_tpcc::Stop::Observer, Some(bytes(k))),
        }
    }

    /// Checks every field against its flag's range; the error names the field.
    ///
    /// # Errors
    /// [`Error::Usage`]: `field: why`.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |field: &str, why: String| Err(Error::Usage(format!("{field}: {why}")));
        self.mode()?;
        let ranges: [(&str, u64, u64, u64); 3] = [
            ("warehouses", u64::from(self.warehouses), 1, 10_000),
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
        if !(self.op.is_finite() && self.op > 0.0 && self.op < 1.0) {
            return bad("op", format!("{} is not in (0, 1)", self.op));
        }
        if !(self.interval.is_finite() && (0.01..=86400.0).contains(&self.interval)) {
            return bad(
                "interval",
                format!("{} is not in [0.01, 86400] s", self.interval),
            );
        }
        let stop_ok = match self.stop {
            Stop::Transactions(n) => (1..=1 << 62).contains(&n),
            Stop::Seconds(s) => (1e-3..=366.0 * 86400.0).contains(&s),
            Stop::DeviceWrites(k) => k.is_finite() && k > 0.0 && k <= 1e6,
        };
        if !stop_ok {
            return bad("stop", format!("{:?} is out of range", self.stop));
        }
        self.engine.check(self.op, self.seed)
    }

    /// Why two runs of this spec may differ in what they write (None: they do not).
    #[must_use]
    pub fn nondeterminism(&self) -> Option<String> {
        let oop_bg = matches!(&self.engine.write_path, Path::Oop(o) if o.background_gc);
        let reasons = [
            (
                self.threads > 1,
                "more than one worker thread (--threads 1)",
            ),
            (
                self.engine.page_cleaner,
                "the page-cleaner thread (--page-cleaner off)",
            ),
            (oop_bg, "the background DB GC thread (--background-gc off)"),
            (
                !matches!(self.stop, Stop::Transactions(_)),
                "a stop checked on the wall clock (--transactions)",
            ),
            (
                self.device != "sim" && self.device != "mem",
                "a real device",
            ),
        ];
        crate::named_reasons(&reasons)
    }
}

/// Runs the spec on a fresh simulated SSD (or memory device) of its capacity.
///
/// # Errors
/// As [`run_with`]; also [`Error::Usage`] for a real device (a result describes such a run;
/// `nowa tpcc` runs it).
pub fn run(spec: &Spec, progress: Option<Progress<'_>>, cancel: &Cancel) -> Result<Outcome, Error> {
    let total = match spec.stop {
        Stop::Transactions(n) => n,
        _ => 0,
    };
    let load = |p: &LoadProgress| {
        if let Some(f) = progress {
            f(u64::from(p.warehouses_done), u64::from(p.warehouses) * 2);
        }
    };
    let sample = |s: &Sample| {
        if let (Some(f), true) = (progress, total > 0) {
            f(total + s.total_transactions.min(total), total * 2);
        }
    };
    let hooks = Hooks {
        on_load: Some(&load),
        on_sample: Some(&sample),
        ..Hooks::default()
    };
    run_with(spec, hooks, cancel)
}

/// Runs the spec with the caller's [`Hooks`].
///
/// # Errors
/// [`Error::Usage`]: a bad field, a configuration the device cannot hold; [`Error::Failed`]:
/// the engine's, the load's or the run's errors (a full device says what to change).
///
/// # Panics
/// If the identity names another seed (a bug).
pub fn run_with(spec: &Spec, hooks: Hooks<'_>, cancel: &Cancel) -> Result<Outcome, Error> {
    spec.check()?;
    let (frozen, wlog) = crate::ycsb::frozen_of(&spec.engine.write_path, spec.seed)?;
    let attach = |eng: &Engine| crate::frozen::engine::attach(eng, frozen.as_ref(), wlog.as_ref());
    let sealed = std::sync::Mutex::new(None);
    let closed = |eng: &Engine| {
        if let Some(l) = &wlog {
            *sealed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(l.finish(eng)?);
        }
        Ok(())
    };
    let steps = FrozenSteps {
        hook: frozen.as_ref().map(|f| f.hook.clone()),
        attach: &attach,
        on_closed: &closed,
    };
    let id = Identity::now("tpcc", spec, spec.seed);
    let (dev, _sim) = match hooks.device.clone() {
        Some(d) => d,
        None => devices::in_memory(&spec.device, spec.capacity, spec.op, spec.mode()?)?
            .ok_or_else(|| {
                Error::Usage(format!(
                    "device: {}: a run on a file or block device is not run again from its result (it would format the device); use `nowa tpcc --device {}`",
                    spec.device, spec.device
                ))
            })?,
    };
    assert!(
        hooks.device.is_some() || dev.geometry().capacity == spec.capacity,
        "a fresh device of the spec's capacity"
    );
    let mut result = phases::run(spec, dev, &hooks, &steps, cancel)?;
    result.frozen = crate::frozen::engine::report(frozen.as_ref());
    assert_eq!(
        result.frozen.is_some(),
        frozen.is_some(),
        "a report of SepFrozen's run"
    );
    result.write_log = sealed
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    assert_eq!(
        result.zone_bytes,
        spec.engine.zone_bytes(),
        "the result names the spec's zone size"
    );
    assert_eq!(
        id.spec["seed"], spec.seed,
        "the identity names the run's seed"
    );
    Ok(Report { nowa: id, result })
}
