//! The phases of a TPC-C run on the engine: create, load, run (with the observer that adds
//! WAF and the database size to every sample), check, close; and the recovery check of an
//! existing database.

use super::{size, FrozenSteps, Hooks, Spec, TpccOut};
use crate::{devices, Cancel, Error};
use nowa_bench::ycsb::{Drilldown, Snapshot};
use nowa_device::{BlockDevice, Paced};
use nowa_engine::{Engine, EngineError, Exhausted};
use nowa_tpcc::{
    check_consistency, Consistency, EngineStore, LoadConfig, LoadReport, Observer, RunConfig,
    Sample, Stop, Tables,
};
use serde::Serialize;
use std::sync::Arc;

/// The database size: the data pages the tables hold (below the allocation mark and not on
/// the free list), as pages and as bytes of 4 KiB pages; out of place also the pages the
/// mapping held at the last checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DbSize {
    /// Pages in use.
    pub pages: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The allocation mark.
    pub alloc_mark_pages: u64,
    /// Pages the out-of-place mapping held at the last checkpoint.
    pub mapped_pages: u64,
}

impl DbSize {
    /// The engine's database now.
    ///
    /// # Panics
    /// If the free list holds pages above the allocation mark (a bug).
    #[must_use]
    pub fn of(eng: &Engine) -> DbSize {
        let (mark, free) = eng.page_usage();
        assert!(free <= mark, "free pages lie below the allocation mark");
        let pages = mark - free;
        DbSize {
            pages,
            bytes: pages * 4096,
            alloc_mark_pages: mark,
            mapped_pages: eng.stats().mapping_pages,
        }
    }

    /// Into a sample's extra metrics (the CSV columns and the JSON time series).
    #[expect(clippy::cast_precision_loss, reason = "page counts far below 2^52")]
    fn record(&self, extra: &mut nowa_tpcc::Extra) {
        extra.insert("db_pages", self.pages as f64);
        extra.insert("db_bytes", self.bytes as f64);
        extra.insert("db_alloc_mark_pages", self.alloc_mark_pages as f64);
        extra.insert("db_mapped_pages", self.mapped_pages as f64);
    }
}

/// WAF and the database size in every sample; Ctrl-C and `device_writes` end the run.
struct Obs<'a> {
    eng: &'a Engine,
    dev: &'a dyn BlockDevice,
    start: Snapshot,
    on_sample: Option<&'a (dyn Fn(&Sample) + Sync)>,
    /// `device_writes`: stop once the device received this many bytes since the start.
    stop_bytes: Option<u64>,
    start_written: u64,
    cancel: Cancel,
}

impl Obs<'_> {
    fn drill(&self) -> Drilldown {
        Drilldown::between(&self.start, &Snapshot::take(self.eng, self.dev, 0))
    }
}

impl Observer for Obs<'_> {
    fn on_sample(&self, s: &mut Sample) {
        let d = self.drill();
        if let Some(w) = d.db_waf() {
            s.extra.insert("db_waf", w);
        }
        if let Some(w) = d.ssd_waf() {
            s.extra.insert("ssd_waf", w);
        }
        s.extra.insert("hit_ratio", self.eng.stats().hit_ratio);
        DbSize::of(self.eng).record(&mut s.extra);
        if let Some(f) = self.on_sample {
            f(s);
        }
    }

    fn should_stop(&self, _: &nowa_tpcc::Progress) -> bool {
        let written = || {
            let now = self.dev.counters().host_bytes_written;
            now.saturating_sub(self.start_written)
        };
        self.cancel.requested() || self.stop_bytes.is_some_and(|b| written() >= b)
    }
}

/// The engine on `dev` (recording its requests when asked), its flush clock on the timing
/// model when paced.
fn create(
    spec: &Spec,
    dev: Arc<dyn BlockDevice>,
    paced: Option<&Arc<Paced>>,
    hooks: &Hooks<'_>,
    steps: &FrozenSteps<'_>,
) -> Result<Engine, Error> {
    let cfg = spec.engine.config()?;
    let b = spec.engine.store(spec.op, spec.seed, steps.hook.clone())?;
    let wal = spec
        .engine
        .separate_wal
        .then(|| nowa_bench::ycsb::separate_wal_device(dev.geometry().capacity, &cfg));
    let dev = devices::record_trace(dev, hooks.record_trace)?;
    let eng = Engine::create_with_wal(dev, wal, cfg, &*b).map_err(|e| match e {
        EngineError::Config(m) => Error::Usage(format!("--capacity / --pool: {m}")),
        e => Error::failed("creating the engine", e),
    })?;
    if let Some(p) = paced {
        // The page cleaner's second is the timing model's (docs/checkpointing.md).
        let p = p.clone();
        eng.set_flush_clock(Some(Arc::new(move || p.busy().as_secs_f64())));
    }
    (steps.attach)(&eng)?;
    Ok(eng)
}

/// Creates the engine on `dev`, loads, runs, checks and closes.
pub(super) fn run(
    spec: &Spec,
    dev: Arc<dyn BlockDevice>,
    hooks: &Hooks<'_>,
    steps: &FrozenSteps<'_>,
    cancel: &Cancel,
) -> Result<TpccOut, Error> {
    let (dev, paced) = nowa_bench::ycsb::pace(dev, spec.engine.pacing.as_ref());
    let eng = create(spec, dev.clone(), paced.as_ref(), hooks, steps)?;
    assert_eq!(
        eng.stats().logical_user_bytes,
        0,
        "a fresh engine has no user data"
    );
    let store = EngineStore::new(eng, spec.engine.config()?.durability);
    let tables = Tables::open(&store).map_err(|e| Error::failed("creating the tables", e))?;
    let lr = load(spec, &store, &tables, hooks).map_err(|e| out_of_space(e, spec, "the load"))?;
    if let Some(p) = &paced {
        p.reset(); // the run's timeline starts after the load
    }
    let mut out = measure(spec, &store, &tables, dev.as_ref(), hooks, *cancel, lr)
        .map_err(|e| out_of_space(e, spec, "the run"))?;
    out.pacing = spec.engine.pacing;
    out.device_busy_secs = paced.map(|p| p.busy().as_secs_f64());
    out.device_bound_tpmc = out
        .device_busy_secs
        .filter(|&b| b > 0.0)
        .map(|b| out.run.tpmc * out.run.seconds / b);
    out.zone_bytes = spec.engine.zone_bytes();
    store
        .engine()
        .close()
        .map_err(|e| Error::failed("closing the engine", e))?;
    (steps.on_closed)(store.engine())?;
    Ok(out)
}

fn load(
    spec: &Spec,
    store: &EngineStore,
    tables: &Tables,
    hooks: &Hooks<'_>,
) -> Result<LoadReport, Error> {
    let lc = LoadConfig {
        warehouses: spec.warehouses,
        threads: spec.threads,
        seed: spec.seed,
    };
    let on_load = hooks.on_load;
    let lr = nowa_tpcc::load(store, tables, &lc, &|p| {
        if let Some(f) = on_load {
            f(p);
        }
    })
    .map_err(|e| Error::failed("loading", e))?;
    if let Some(f) = hooks.on_loaded {
        f(&lr)?;
    }
    Ok(lr)
}

/// The driver's configuration and the byte count that ends a `device_writes` run.
fn run_config(spec: &Spec) -> (RunConfig, Option<u64>) {
    let mut rc = RunConfig::new(spec.warehouses, spec.threads);
    rc.seed = spec.seed;
    rc.steady_window = if spec.steady { 2100 } else { 0 };
    let (stop, stop_bytes) = spec.driver_stop();
    rc.stop = stop;
    rc.sample_interval = std::time::Duration::from_secs_f64(spec.interval);
    (rc, stop_bytes)
}

/// The driver's report is of the run asked for.
fn check_report(spec: &Spec, rc: &RunConfig, report: &nowa_tpcc::Report) {
    assert_eq!(
        report.kinds.len(),
        nowa_tpcc::TxnKind::ALL.len(),
        "one report per type"
    );
    if let Stop::Transactions(n) = rc.stop {
        assert!(
            report.transactions + report.rollbacks <= n || spec.steady,
            "the run did more draws than asked"
        );
    }
}

/// The run phase and its figures.
fn measure(
    spec: &Spec,
    store: &EngineStore,
    tables: &Tables,
    dev: &dyn BlockDevice,
    hooks: &Hooks<'_>,
    cancel: Cancel,
    lr: LoadReport,
) -> Result<TpccOut, Error> {
    let (rc, stop_bytes) = run_config(spec);
    let eng = store.engine();
    let obs = Obs {
        eng,
        dev,
        start: Snapshot::take(eng, dev, 0),
        on_sample: hooks.on_sample,
        stop_bytes,
        start_written: dev.counters().host_bytes_written,
        cancel,
    };
    let logical0 = eng.stats().logical_user_bytes;
    let read0 = dev.counters().host_bytes_read;
    let report =
        nowa_tpcc::run(store, tables, &rc, &obs).map_err(|e| Error::failed("running TPC-C", e))?;
    check_report(spec, &rc, &report);
    let d = obs.drill();
    assert!(
        d.device_host_bytes >= d.wal_bytes || spec.engine.separate_wal,
        "the device received the WAL it shares"
    );
    let consistency = spec
        .check
        .then(|| check_consistency(store, tables, spec.warehouses, !spec.steady))
        .transpose()
        .map_err(|e| Error::failed("checking", e))?;
    #[expect(clippy::cast_precision_loss, reason = "byte counts far below 2^52")]
    let per = |b: u64| b as f64 / report.transactions.max(1) as f64;
    Ok(TpccOut {
        load: Some(lr),
        db_waf: d.db_waf(),
        ssd_waf: d.ssd_waf(),
        total_waf: d.total_waf(),
        logical_bytes_per_txn: per(eng.stats().logical_user_bytes - logical0),
        host_bytes_per_txn: per(d.device_host_bytes),
        flash_bytes_per_txn: d.media_bytes.map(per),
        wal_bytes_per_txn: per(d.wal_bytes),
        read_bytes_per_txn: per(dev.counters().host_bytes_read - read0),
        page_writes_per_store_flush: d.page_writes_per_store_flush(eng.stats().page_size),
        drilldown: d,
        run: report,
        consistency,
        engine: eng.stats(),
        pacing: None,
        device_busy_secs: None,
        device_bound_tpmc: None,
        placement: eng.class_report(),
        frozen: None,
        write_log: None,
        zone_bytes: None,
        db: DbSize::of(eng),
        interrupted: cancel.requested(),
    })
}

/// An engine out of space becomes one line saying why and what to change (a run failure,
/// not a bad flag); other errors pass unchanged.
fn out_of_space(e: Error, spec: &Spec, phase: &str) -> Error {
    let full = {
        let mut cause: Option<&(dyn std::error::Error + 'static)> = match &e {
            Error::Failed { source, .. } => Some(source.as_ref()),
            _ => None,
        };
        let mut found = None;
        while let Some(c) = cause {
            if let Some(EngineError::Full(
                x @ (Exhausted::DataRegion { .. }
                | Exhausted::StoreCapacity { .. }
                | Exhausted::NoFreeZone
                | Exhausted::NoGcVictim
                | Exhausted::GcNoProgress),
            )) = c.downcast_ref::<EngineError>()
            {
                found = Some(*x);
                break;
            }
            cause = c.source();
        }
        found
    };
    let Some(x) = full else { return e };
    Error::Failed {
        what: "tpcc",
        source: format!(
            "the device is full during {phase} ({x}; {} MiB of data estimated after the load): \
             standard TPC-C grows the database (up to {} B of pages per transaction); use \
             --steady (flat size), a larger --capacity or a smaller --dataset-fill, or fewer \
             --transactions",
            size::loaded_bytes(spec.warehouses) >> 20,
            size::GROWTH_PER_TXN
        )
        .into(),
    }
}

/// What the check of an existing database found: the recovery (open time and report) and
/// the consistency check.
#[derive(Debug, Clone)]
pub struct CheckOutcome {
    /// Seconds to open (recover) the database.
    pub open_secs: f64,
    /// What the open (recovery) did, in quantities the machine's load does not set.
    pub open_work: OpenWork,
    /// The recovery's report (None: it shut down cleanly and needed none).
    pub recovery: Option<nowa_engine::RecoveryReport>,
    /// Whether HISTORY was trimmed (a steady run): clauses 3.3.2.8-9 skipped.
    pub history_trimmed: bool,
    /// The check.
    pub consistency: Consistency,
}

/// The work of opening (recovering) a database: CPU time and I/O, which, unlike the wall
/// clock of the open, a loaded machine does not inflate (`nowa ckpt figures`' Table II,
/// docs/checkpointing.md section 3).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OpenWork {
    /// CPU seconds (user + system) of this process during the open (the recovery's own
    /// threads: nothing else runs in a check).
    pub cpu_secs: f64,
    /// The device's counters before and after the open: its bytes read (log and pages) and
    /// written (pages evicted or checkpointed during redo).
    pub device: (nowa_device::DeviceCounters, nowa_device::DeviceCounters),
    /// Pages the engine read from the device during the open.
    pub pages_read: u64,
}

impl OpenWork {
    /// Bytes the open read from the device.
    ///
    /// # Panics
    /// If the counters went backwards (a device bug).
    #[must_use]
    pub fn read_bytes(&self) -> u64 {
        let (a, b) = &self.device;
        assert!(b.host_bytes_read >= a.host_bytes_read, "counters only grow");
        b.host_bytes_read - a.host_bytes_read
    }

    /// Bytes the open wrote to the device.
    ///
    /// # Panics
    /// If the counters went backwards (a device bug).
    #[must_use]
    pub fn written_bytes(&self) -> u64 {
        let (a, b) = &self.device;
        assert!(
            b.host_bytes_written >= a.host_bytes_written,
            "counters only grow"
        );
        b.host_bytes_written - a.host_bytes_written
    }
}

/// Opens (recovers) the database `spec` describes on `dev` and checks its consistency.
///
/// # Errors
/// [`Error::Failed`]: the database does not open, its tables or the check fail.
///
/// # Panics
/// If the check skipped a warehouse (a bug).
pub fn check_database(spec: &Spec, dev: Arc<dyn BlockDevice>) -> Result<CheckOutcome, Error> {
    let frozen = match &spec.engine.write_path {
        crate::ycsb::Path::Oop(o) => o.frozen_run(spec.seed)?.map(|f| f.hook),
        crate::ycsb::Path::InPlace => None,
    };
    let cfg = spec.engine.config()?;
    let durability = cfg.durability;
    let b = spec.engine.store(spec.op, spec.seed, frozen)?;
    let (t0, cpu0, io0) = (
        std::time::Instant::now(),
        nowa_units::cpu::process_cpu_secs(),
        dev.counters(),
    );
    let eng = Engine::open_with_wal(dev.clone(), None, cfg, &*b)
        .map_err(|e| Error::failed("opening the database", e))?;
    let open_secs = t0.elapsed().as_secs_f64();
    let open_work = OpenWork {
        cpu_secs: nowa_units::cpu::process_cpu_secs() - cpu0,
        device: (io0, dev.counters()),
        pages_read: eng.stats().page_reads,
    };
    assert!(open_secs >= 0.0 && open_work.cpu_secs >= 0.0, "durations");
    let recovery = eng.recovery_report().cloned();
    let store = EngineStore::new(eng, durability);
    let tables = Tables::open(&store).map_err(|e| Error::failed("opening the tables", e))?;
    // A steady run trims HISTORY: the database says so (docs/tpcc.md section 6).
    let trimmed =
        nowa_tpcc::history_trimmed(&store, &tables).map_err(|e| Error::failed("checking", e))?;
    let c = check_consistency(&store, &tables, spec.warehouses, !trimmed)
        .map_err(|e| Error::failed("checking", e))?;
    assert_eq!(c.warehouses, spec.warehouses, "every warehouse checked");
    store
        .engine()
        .close()
        .map_err(|e| Error::failed("closing the engine", e))?;
    Ok(CheckOutcome {
        open_secs,
        open_work,
        recovery,
        history_trimmed: trimmed,
        consistency: c,
    })
}
