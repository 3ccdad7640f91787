//! `nowa tpcc`: load TPC-C into the engine (either write path), run the standard or steady mix,
//! report throughput, per-type figures, conflicts, WAF and bytes per transaction; `--check`
//! verifies the consistency conditions at the end, `--check-only` opens (recovers) an existing
//! database and only checks it.

use crate::ckpt_flags::WriteBackFlags;
use crate::device_open::open_database;
use crate::engine_flags::EngineFlags;
use crate::flags::{self, MAX_THREADS};
use crate::frozen_cmd::engine::FrozenRun;
use crate::resources::{check_memory, check_output_file, sim_device_bytes};
use crate::ycsb_cmd::{oop_config, sim_mode, zone_of, OopFlags};
use crate::{interrupted, usage};
use anyhow::{Context, Result};
use clap::Args;
use nowa_bench::ycsb::{Drilldown, Snapshot};
use nowa_device::{BlockDevice, MemDevice, SimConfig, SimDevice, SimMode};
use nowa_engine::{in_place_store, out_of_place_store, Config, Engine, StoreBuilder};
use nowa_tpcc::{
    check_consistency, load, run, Consistency, EngineStore, LoadConfig, LoadReport, Observer,
    Report, RunConfig, Sample, Stop, Tables,
};
use std::path::PathBuf;
use std::sync::Arc;

mod size;

/// The largest device, pool or WAL a flag accepts (the memory check refuses far less).
const MAX_BYTES: u64 = 1 << 50;

#[derive(Args, Debug)]
pub struct TpccArgs {
    /// Warehouses to load.
    #[arg(long, default_value = "1", value_parser = flags::count::<u32>(1, 10_000))]
    warehouses: u32,
    /// Worker threads (and loader threads).
    #[arg(long, default_value = "2", value_parser = flags::count::<usize>(1, MAX_THREADS))]
    threads: usize,
    /// Stop after this long (30, 30s, 2m). Default: 10 s.
    #[arg(long, conflicts_with = "transactions", value_parser = flags::seconds(1e-3, 366.0 * 86400.0))]
    duration: Option<f64>,
    /// Stop after this many transactions (draws of the mix).
    #[arg(long, conflicts_with = "device_writes", value_parser = flags::count::<u64>(1, 1 << 62))]
    transactions: Option<u64>,
    /// Stop once the device received this many times its capacity in writes (WAL included).
    #[arg(long, value_name = "K", conflicts_with = "duration", value_parser = flags::number(0.0, true, 1e6))]
    device_writes: Option<f64>,
    /// Steady TPC-C (ZLeanStore's batch deletes, window 2100): the database does not grow.
    #[arg(long)]
    steady: bool,
    /// Seed of the load and of the transaction inputs.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Device: sim (simulated SSD in memory), mem (plain memory), or a file / block device path.
    #[arg(long, default_value = "sim")]
    device: String,
    /// Allow overwriting a --device path that holds something else; must repeat the path.
    #[arg(long, value_name = "PATH")]
    force: Option<PathBuf>,
    /// Device capacity. Default: sized so the data fills --dataset-fill of it. A given
    /// capacity shrinks the default WAL limit (the pool size) as far as the data needs.
    #[arg(long, value_parser = flags::size_4k(1 << 20, MAX_BYTES))]
    capacity: Option<u64>,
    /// The data's share of the device's page space (the device minus the WAL region and the
    /// engine's areas): with --steady throughout the run; standard TPC-C grows the database
    /// (~420 B of pages per transaction), so with --transactions N the share is reached at
    /// the end of the run (the loaded ~88 MiB per warehouse + 10 MiB, + N x 500 B), with --duration
    /// or --device-writes right after the load (the device fills up during a long run).
    #[arg(long, default_value = "0.5", value_parser = flags::fraction(0.0, true, 1.0, false))]
    dataset_fill: f64,
    /// Simulated SSD over-provisioning (spare/logical).
    #[arg(long, default_value = "7%", value_parser = flags::fraction(0.0, false, 1.0, false))]
    op: f64,
    /// Simulated SSD mode: cns, fdp:HANDLES, zns.
    #[arg(long, default_value = "cns", value_parser = sim_mode)]
    sim_mode: SimMode,
    #[command(flatten)]
    engine: EngineFlags,
    #[command(flatten)]
    oop: OopFlags,
    #[command(flatten)]
    write_back: WriteBackFlags,
    #[command(flatten)]
    pacing: crate::pacing_flags::PacingFlags,
    /// Keep the WAL on a separate in-memory device (as `nowa ycsb --separate-wal`): the
    /// device under test then holds only pages, and its SSD WAF excludes the WAL.
    #[arg(long)]
    separate_wal: bool,
    /// Record every request the engine makes to the device (not the separate WAL) in the
    /// nowa trace CSV; replay it with `nowa sim --trace FILE`. An existing FILE is refused.
    #[arg(long, value_name = "FILE")]
    record_trace: Option<PathBuf>,
    /// Check the consistency conditions (clause 3.3.2) at the end.
    #[arg(long)]
    check: bool,
    /// Open an existing database on --device (recovering it), check it, and exit. A database
    /// from a steady run (its HISTORY trimmed) skips clauses 3.3.2.8-9.
    #[arg(long, conflicts_with_all = ["duration", "transactions", "device_writes", "steady", "separate_wal", "record_trace"])]
    check_only: bool,
    /// Write this file (JSON: the load's report) once the load is done (`nowa ckpt figures`
    /// waits for it before it kills a crash run).
    #[arg(long, value_name = "FILE", hide = true)]
    ready_file: Option<PathBuf>,
    /// Sample interval (1, 1s, 500ms).
    #[arg(long, default_value = "1", value_parser = flags::seconds(0.01, 86400.0))]
    interval: f64,
    /// Per-interval CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write the JSON result to FILE.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// Out of place: record every DB page write, GC move and page free with its hotness
    /// records in FILE (SepFrozen's write log: `nowa frozen train|replay --writes FILE`).
    /// An existing FILE is refused.
    #[arg(long, value_name = "FILE")]
    record_writes: Option<PathBuf>,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

/// What `nowa tpcc` reports (`--json`, `--out`).
#[derive(serde::Serialize)]
struct Output {
    load: Option<LoadReport>,
    run: Report,
    drilldown: Drilldown,
    db_waf: Option<f64>,
    ssd_waf: Option<f64>,
    total_waf: Option<f64>,
    logical_bytes_per_txn: f64,
    host_bytes_per_txn: f64,
    flash_bytes_per_txn: Option<f64>,
    wal_bytes_per_txn: f64,
    /// Bytes the device read per transaction (page misses, GC reads).
    read_bytes_per_txn: f64,
    consistency: Option<Consistency>,
    /// The engine's counters at the end (flush causes, residency histograms).
    engine: nowa_engine::Stats,
    /// The simulated SSD's timing model (None: not a simulated SSD).
    pacing: Option<nowa_bench::ycsb::Pacing>,
    /// Media busy time of the run by the timing model, when paced.
    device_busy_secs: Option<f64>,
    /// Paced: the New-Orders per minute of device busy time (the throughput the simulated
    /// SSD's timing model allows, whatever the CPU did).
    device_bound_tpmc: Option<f64>,
    /// Out of place: the placement and its per-class table over the store's life (load and run).
    placement: Option<nowa_logspace::ClassReport>,
    /// `--frozen-model`: SepFrozen's model and its inference at GC.
    frozen: Option<crate::frozen_cmd::engine::FrozenReport>,
    /// Out of place: the zone (GC unit) size in bytes (`--zone-size`, resolved on the device).
    zone_bytes: Option<u64>,
}

/// A store builder, SepFrozen's model and the zone size out of place.
type Built = (Box<dyn StoreBuilder>, Option<FrozenRun>, Option<u64>);

/// The store builder of the flags, SepFrozen's model when `--placement` asks for it, and the
/// zone size out of place.
fn builder(a: &TpccArgs, dev: &dyn BlockDevice, sim: Option<&SimConfig>) -> Result<Built> {
    let (oop, frozen) = oop_config(&a.oop, a.op, a.seed, a.engine.no_doublewrite)?;
    let (b, zone): (Box<dyn StoreBuilder>, _) = match oop {
        None => (Box::new(in_place_store()), None),
        Some(mut o) => {
            let z = zone_of(&a.oop, dev, sim)?;
            o.zone_bytes = Some(z);
            (Box::new(out_of_place_store(o)), Some(z))
        }
    };
    Ok((b, frozen, zone))
}

/// The engine configuration and why the pool has its size (the rule of [`EngineFlags`], on
/// the estimated loaded data: on `sim` and `mem` the pool is 10% of it).
fn engine_config(a: &TpccArgs) -> (Config, String) {
    let data = size::loaded_bytes(a.warehouses);
    let (mut c, why) = a.engine.config(&a.device, data);
    a.write_back.apply(&mut c);
    (c, why)
}

/// Refuses a run whose device, pool and separate WAL would not fit the memory.
fn check_run_memory(a: &TpccArgs, cfg: &Config, capacity: u64) -> Result<()> {
    let mem = match a.device.as_str() {
        "sim" => sim_device_bytes(capacity),
        "mem" => capacity,
        _ => 0,
    };
    let flag = if a.capacity.is_some() {
        "--capacity"
    } else {
        "--warehouses"
    };
    check_memory(&[
        (flag, "device", mem),
        (
            "--pool",
            "buffer pool",
            cfg.pool_bytes + cfg.pool_bytes / 16,
        ),
        (
            "--wal-limit",
            "separate WAL device",
            if a.separate_wal {
                nowa_engine::wal_region_bytes(cfg)
            } else {
                0
            },
        ),
    ])
}

/// A device and, when it is a simulated SSD, that SSD.
type Opened = (Arc<dyn BlockDevice>, Option<Arc<SimDevice>>);

/// The device and WAL sizes of the flags (docs/tpcc.md section 10: what `--dataset-fill`
/// means for a growing database).
fn sizing(a: &TpccArgs, cfg: &Config) -> Result<size::Sizing> {
    let want = size::Want {
        warehouses: a.warehouses,
        growing_txns: a.transactions.filter(|_| !a.steady && !a.check_only),
        capacity: a.capacity,
        fill: a.dataset_fill,
        wal_limit: a.engine.wal_limit,
        separate_wal: a.separate_wal,
    };
    size::size(&want, cfg)
}

/// The device the flags ask for, of `capacity` bytes.
fn device(a: &TpccArgs, cfg: &Config, capacity: u64) -> Result<Opened> {
    assert!(
        capacity % 4096 == 0 && capacity > 0,
        "device capacity in whole blocks"
    );
    check_run_memory(a, cfg, capacity)?;
    Ok(match a.device.as_str() {
        "sim" => {
            let sc = SimConfig::for_capacity(capacity, a.op, a.sim_mode)
                .map_err(|e| usage(format!("--capacity / --op / --sim-mode: {e}")))?;
            let d = Arc::new(SimDevice::new(sc).map_err(|e| usage(format!("--sim-mode: {e}")))?);
            (d.clone(), Some(d))
        }
        "mem" => (Arc::new(MemDevice::new(capacity)), None),
        path => {
            let step = if a.check_only {
                format!(
                    "open the nowa database in {path}, recover and check it (nothing is formatted)"
                )
            } else {
                format!(
                    "format {path} as a new nowa database (its previous contents are lost) and load {} warehouses",
                    a.warehouses
                )
            };
            (
                open_database("nowa tpcc", path, a.force.as_deref(), capacity, step)?,
                None,
            )
        }
    })
}

/// The database size: the data pages the tables hold (below the allocation mark and not on
/// the free list), as pages and as bytes of 4 KiB pages; out of place also the pages the
/// mapping held at the last checkpoint.
#[derive(Debug, Clone, Copy, serde::Serialize)]
struct DbSize {
    pages: u64,
    bytes: u64,
    alloc_mark_pages: u64,
    mapped_pages: u64,
}

impl DbSize {
    fn of(eng: &Engine) -> DbSize {
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

    /// Into a sample's extra metrics (the `--csv` columns and the JSON time series).
    #[expect(clippy::cast_precision_loss, reason = "page counts far below 2^52")]
    fn record(&self, extra: &mut nowa_tpcc::Extra) {
        extra.insert("db_pages", self.pages as f64);
        extra.insert("db_bytes", self.bytes as f64);
        extra.insert("db_alloc_mark_pages", self.alloc_mark_pages as f64);
        extra.insert("db_mapped_pages", self.mapped_pages as f64);
    }
}

/// Progress on stderr, WAF in every sample, Ctrl-C ends the run.
struct Obs<'a> {
    eng: &'a Engine,
    dev: &'a dyn BlockDevice,
    start: Snapshot,
    quiet: bool,
    /// `--device-writes`: stop once the device received this many bytes since the start.
    stop_bytes: Option<u64>,
    start_written: u64,
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
        let db = DbSize::of(self.eng);
        db.record(&mut s.extra);
        if !self.quiet {
            eprintln!(
                "nowa tpcc: {:.0}s {:.0} txn/s tpmC {:.0} conflicts {} DB WAF {} SSD WAF {} DB {} MiB",
                s.elapsed_s,
                s.txn_per_s,
                s.tpmc,
                s.conflicts,
                fmt(d.db_waf()),
                fmt(d.ssd_waf()),
                db.bytes >> 20
            );
        }
    }

    fn should_stop(&self, _: &nowa_tpcc::Progress) -> bool {
        let written = || {
            let now = self.dev.counters().host_bytes_written;
            now.saturating_sub(self.start_written)
        };
        nowa_bench::interrupt::requested() || self.stop_bytes.is_some_and(|b| written() >= b)
    }
}

fn fmt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
}

/// `nowa tpcc`.
/// The paths the run writes, checked before any work: one line naming the flag, exit 2.
fn check_paths(a: &TpccArgs) -> Result<()> {
    crate::resources::check_device_path(&a.device)?;
    check_output_file("--csv", a.csv.as_deref())?;
    check_output_file("--out", a.out.as_deref())
}

pub fn run_cmd(a: TpccArgs) -> Result<()> {
    check_paths(&a)?;
    if a.check_only && matches!(a.device.as_str(), "sim" | "mem") {
        return Err(usage(
            "--check-only needs a --device path holding a database",
        ));
    }
    let (mut cfg, pool_why) = engine_config(&a);
    let sz = sizing(&a, &cfg)?;
    if a.engine.wal_limit.is_none() && !a.check_only {
        cfg.wal_limit_bytes = Some(sz.wal_limit);
    }
    let (dev, sim) = device(&a, &cfg, sz.capacity)?;
    let pacing = a.pacing.pacing(&a.device)?;
    let (dev, paced) = nowa_bench::ycsb::pace(dev, pacing.as_ref());
    let (b, frozen, zone) = builder(&a, dev.as_ref(), sim.as_ref().map(|s| s.config()))?;
    if a.check_only {
        return check_only(&a, dev, cfg, &*b).and_then(consistent);
    }
    let wlog = crate::frozen_cmd::record::open_flag(
        a.record_writes.as_deref(),
        b.kind() == nowa_engine::WritePathKind::OutOfPlace,
    )?;
    nowa_bench::interrupt::install_sigint_handler();
    keep_heap();
    let pool_mib = cfg.pool_bytes >> 20;
    let wal = a
        .separate_wal
        .then(|| nowa_bench::ycsb::separate_wal_device(dev.geometry().capacity, &cfg));
    let dev = crate::trace_cmd::record_trace(dev, a.record_trace.as_deref())?;
    let eng = Engine::create_with_wal(dev.clone(), wal, cfg, &*b).map_err(|e| match e {
        nowa_engine::EngineError::Config(m) => usage(format!("--capacity / --pool: {m}")),
        e => anyhow::Error::new(e).context("creating the engine"),
    })?;
    crate::frozen_cmd::engine::attach(&eng, frozen.as_ref(), wlog.as_ref())?;
    flush_clock(&eng, paced.as_ref());
    print_banner(&a, pool_mib, dev.geometry().capacity >> 20, &pool_why);
    print_sizing(&a, &sz);
    let store = EngineStore::new(eng, a.engine.durability);
    let tables = Tables::open(&store).context("creating the tables")?;
    let lr = load_phase(&a, &store, &tables).map_err(|e| out_of_space(e, &sz, "the load"))?;
    if let Some(p) = &paced {
        p.reset(); // the run's timeline starts after the load
    }
    let mut out = run_phase(&a, &store, &tables, dev.as_ref(), lr)
        .map_err(|e| out_of_space(e, &sz, "the run"))?;
    out.pacing = pacing;
    out.device_busy_secs = paced.map(|p| p.busy().as_secs_f64());
    out.device_bound_tpmc = out
        .device_busy_secs
        .filter(|&b| b > 0.0)
        .map(|b| out.run.tpmc * out.run.seconds / b);
    out.frozen = crate::frozen_cmd::engine::report(frozen.as_ref());
    out.zone_bytes = zone;
    let interrupted_run = nowa_bench::interrupt::requested();
    store.engine().close().context("closing the engine")?;
    crate::frozen_cmd::record::finish_flag(wlog.as_ref(), store.engine(), "nowa tpcc")?;
    output(&a, &out)?;
    if interrupted_run {
        return Err(interrupted(format!(
            "after {:.1} s; the results above cover it",
            out.run.seconds
        )));
    }
    if out.consistency.as_ref().is_some_and(|c| !c.is_consistent()) {
        anyhow::bail!("the consistency check failed");
    }
    Ok(())
}

/// The run's one-line summary of its setup (always), and why the pool has its size.
fn print_banner(a: &TpccArgs, pool_mib: u64, capacity_mib: u64, pool_why: &str) {
    eprintln!(
        "nowa tpcc: seed {}, {} warehouses, {} threads, {}, pool {} MiB, device {} ({} MiB), WAL {}, {:?} commits",
        a.seed,
        a.warehouses,
        a.threads,
        if a.steady { "steady" } else { "standard" },
        pool_mib,
        a.device,
        capacity_mib,
        if a.separate_wal {
            "on a separate in-memory device"
        } else {
            "on the device"
        },
        a.engine.durability
    );
    if !a.quiet {
        eprintln!("nowa tpcc: pool {pool_mib} MiB: {pool_why}");
    }
}

/// The page space and the data's share of it (always), and a warning when the estimated
/// data at the end of the run does not fit.
fn print_sizing(a: &TpccArgs, sz: &size::Sizing) {
    let (start, end) = sz.fills();
    eprintln!(
        "nowa tpcc: page space ~{} MiB (device minus WAL region and engine areas): data ~{} MiB after the load ({:.0}%){}, WAL limit {} MiB",
        sz.page_space >> 20,
        sz.loaded >> 20,
        100.0 * start,
        if sz.end > sz.loaded {
            format!(", ~{} MiB at the end ({:.0}%)", sz.end >> 20, 100.0 * end)
        } else {
            String::new()
        },
        sz.wal_limit >> 20
    );
    if end > 1.0 {
        eprintln!(
            "nowa tpcc: warning: the estimated data at the end ({} MiB) exceeds the page space; the run may fill the device",
            sz.end >> 20
        );
    }
    if !a.steady && a.transactions.is_none() && !a.quiet {
        eprintln!("nowa tpcc: standard TPC-C grows the database (up to {} B of pages per transaction) until the device is full; --steady keeps it flat", size::GROWTH_PER_TXN);
    }
}

/// An engine out of space becomes one line saying why and what to change (exit 1: a run
/// failure, not a bad flag); other errors pass unchanged.
fn out_of_space(e: anyhow::Error, sz: &size::Sizing, phase: &str) -> anyhow::Error {
    use nowa_engine::{EngineError, Exhausted};
    let full = e
        .chain()
        .find_map(|c| match c.downcast_ref::<EngineError>() {
            Some(EngineError::Full(
                x @ (Exhausted::DataRegion { .. }
                | Exhausted::StoreCapacity { .. }
                | Exhausted::NoFreeZone
                | Exhausted::NoGcVictim
                | Exhausted::GcNoProgress),
            )) => Some(*x),
            _ => None,
        });
    let Some(x) = full else { return e };
    anyhow::anyhow!(
        "the device is full during {phase} ({x}; {} MiB of data estimated after the load): \
         standard TPC-C grows the database (up to {} B of pages per transaction); use \
         --steady (flat size), a larger --capacity or a smaller --dataset-fill, or fewer \
         --transactions",
        sz.loaded >> 20,
        size::GROWTH_PER_TXN
    )
}

/// Keep freed heap memory in the process: by default glibc returns the top of the heap to the
/// kernel once 128 KiB are free there and serves large blocks by mmap, so short-lived buffers
/// fault in (and zero) fresh pages again and again. In one `perf record` of a 1-thread
/// in-memory run (load included) on a loaded machine, kernel page clearing under `malloc`
/// took 47% of the samples; its share of the run phase alone was not separated
/// (docs/tpcc.md section 9).
fn keep_heap() {
    // SAFETY: mallopt only sets allocator parameters; called before the worker threads start.
    let trim = unsafe { libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30) };
    // SAFETY: as above (32 MiB is glibc's largest mmap threshold on 64-bit).
    let mmap = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20) };
    assert!(trim == 1 && mmap == 1, "glibc accepts both settings");
}

/// `--check-only`'s verdict.
fn consistent(c: CheckOutcome) -> Result<()> {
    anyhow::ensure!(
        c.consistency.is_consistent(),
        "the consistency check failed"
    );
    Ok(())
}

/// The page cleaner's second is the timing model's on a paced simulated SSD
/// (docs/checkpointing.md), else the wall clock.
fn flush_clock(eng: &Engine, paced: Option<&Arc<nowa_device::Paced>>) {
    if let Some(p) = paced {
        let p = p.clone();
        eng.set_flush_clock(Some(Arc::new(move || p.busy().as_secs_f64())));
    }
}

fn load_phase(a: &TpccArgs, store: &EngineStore, tables: &Tables) -> Result<LoadReport> {
    let quiet = a.quiet;
    let lc = LoadConfig {
        warehouses: a.warehouses,
        threads: a.threads,
        seed: a.seed,
    };
    let lr = load(store, tables, &lc, &|p| {
        if !quiet {
            eprintln!(
                "nowa tpcc: loading: {} of {} warehouses, {} rows, {:.1}s",
                p.warehouses_done,
                p.warehouses,
                p.rows,
                p.elapsed.as_secs_f64()
            );
        }
    })
    .context("loading")?;
    eprintln!(
        "nowa tpcc: loaded {} warehouses in {:.1}s ({:.1} warehouses/min, {:.0} rows/s)",
        a.warehouses, lr.seconds, lr.warehouses_per_minute, lr.rows_per_second
    );
    if let Some(f) = &a.ready_file {
        std::fs::write(f, serde_json::to_string(&lr)?)
            .with_context(|| format!("--ready-file {}", f.display()))?;
    }
    Ok(lr)
}

/// When the run ends: `--transactions`, `--duration`, or (`--device-writes K`) when the
/// observer sees K x the capacity written: then also that byte count.
fn stop_of(a: &TpccArgs, dev: &dyn BlockDevice) -> (Stop, Option<u64>) {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "K x a device capacity: positive, far below 2^63"
    )]
    let bytes = |k: f64| (k * dev.geometry().capacity as f64).ceil() as u64;
    match (a.transactions, a.duration, a.device_writes) {
        (Some(n), _, _) => (Stop::Transactions(n), None),
        (_, Some(s), _) => (Stop::Seconds(s), None),
        (_, _, Some(k)) => (Stop::Observer, Some(bytes(k))),
        _ => (Stop::Seconds(10.0), None),
    }
}

fn run_phase(
    a: &TpccArgs,
    store: &EngineStore,
    tables: &Tables,
    dev: &dyn BlockDevice,
    lr: LoadReport,
) -> Result<Output> {
    let mut rc = RunConfig::new(a.warehouses, a.threads);
    rc.seed = a.seed;
    rc.steady_window = if a.steady { 2100 } else { 0 };
    let (stop, stop_bytes) = stop_of(a, dev);
    rc.stop = stop;
    rc.sample_interval = std::time::Duration::from_secs_f64(a.interval);
    let obs = Obs {
        eng: store.engine(),
        dev,
        start: Snapshot::take(store.engine(), dev, 0),
        quiet: a.quiet,
        stop_bytes,
        start_written: dev.counters().host_bytes_written,
    };
    let logical0 = store.engine().stats().logical_user_bytes;
    let read0 = dev.counters().host_bytes_read;
    let report = run(store, tables, &rc, &obs).context("running TPC-C")?;
    if let Stop::Transactions(n) = rc.stop {
        assert!(
            report.transactions + report.rollbacks <= n || a.steady,
            "the run did more draws than asked"
        );
    }
    assert_eq!(
        report.kinds.len(),
        nowa_tpcc::TxnKind::ALL.len(),
        "one report per type"
    );
    let d = obs.drill();
    let consistency = if a.check {
        Some(check_consistency(store, tables, a.warehouses, !a.steady).context("checking")?)
    } else {
        None
    };
    #[expect(clippy::cast_precision_loss, reason = "byte counts far below 2^52")]
    let per = |b: u64| b as f64 / report.transactions.max(1) as f64;
    Ok(Output {
        load: Some(lr),
        db_waf: d.db_waf(),
        ssd_waf: d.ssd_waf(),
        total_waf: d.total_waf(),
        logical_bytes_per_txn: per(store.engine().stats().logical_user_bytes - logical0),
        host_bytes_per_txn: per(d.device_host_bytes),
        flash_bytes_per_txn: d.media_bytes.map(per),
        wal_bytes_per_txn: per(d.wal_bytes),
        read_bytes_per_txn: per(dev.counters().host_bytes_read - read0),
        drilldown: d,
        run: report,
        consistency,
        engine: store.engine().stats(),
        pacing: None,
        device_busy_secs: None,
        device_bound_tpmc: None,
        placement: store.engine().class_report(),
        frozen: None,
        zone_bytes: None,
    })
}

/// What `--check-only` found: the recovery (open time and report) and the consistency check.
#[derive(Debug, Clone)]
pub(crate) struct CheckOutcome {
    pub open_secs: f64,
    pub recovery: Option<nowa_engine::RecoveryReport>,
    pub consistency: Consistency,
}

/// `nowa tpcc --check-only ARGS` called as a library (`nowa ckpt figures`): the typed
/// outcome, nothing parsed from output.
pub(crate) fn check_database(args: &[String]) -> Result<CheckOutcome> {
    #[derive(clap::Parser)]
    struct Cmd {
        #[command(flatten)]
        a: TpccArgs,
    }
    let a = <Cmd as clap::Parser>::try_parse_from(
        std::iter::once("tpcc".to_string()).chain(args.iter().cloned()),
    )
    .context("nowa tpcc --check-only flags")?
    .a;
    anyhow::ensure!(a.check_only, "check_database without --check-only");
    let (cfg, _) = engine_config(&a);
    let sz = sizing(&a, &cfg)?;
    let (dev, sim) = device(&a, &cfg, sz.capacity)?;
    let (b, _, _) = builder(&a, dev.as_ref(), sim.as_ref().map(|s| s.config()))?;
    check_only(&a, dev, cfg, &*b)
}

fn check_only(
    a: &TpccArgs,
    dev: Arc<dyn BlockDevice>,
    cfg: Config,
    b: &dyn StoreBuilder,
) -> Result<CheckOutcome> {
    let t0 = std::time::Instant::now();
    let eng = Engine::open_with_wal(dev, None, cfg, b).context("opening the database")?;
    let open_s = t0.elapsed().as_secs_f64();
    let recovery = eng.recovery_report().cloned();
    if let Some(r) = &recovery {
        eprintln!(
            "nowa tpcc: recovered in {open_s:.3} s (analysis {} us, redo {} us): clean shutdown {}, {} records replayed, redo range {} bytes",
            r.analysis_micros,
            r.redo_micros,
            r.clean_shutdown,
            r.records_replayed,
            r.end_lsn.saturating_sub(r.redo_lsn)
        );
    }
    let store = EngineStore::new(eng, a.engine.durability);
    let tables = Tables::open(&store).context("opening the tables")?;
    // A steady run trims HISTORY: the database says so (docs/tpcc.md section 6).
    let trimmed = nowa_tpcc::history_trimmed(&store, &tables).context("checking")?;
    if trimmed {
        eprintln!("nowa tpcc: HISTORY is trimmed (a steady run): clauses 3.3.2.8-9 skipped");
    }
    let c = check_consistency(&store, &tables, a.warehouses, !trimmed).context("checking")?;
    assert_eq!(c.warehouses, a.warehouses, "every warehouse checked");
    store.engine().close().context("closing the engine")?;
    print_consistency(&c);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    }
    Ok(CheckOutcome {
        open_secs: open_s,
        recovery,
        consistency: c,
    })
}

fn print_consistency(c: &Consistency) {
    if c.is_consistent() {
        println!(
            "check     consistent: clause 3.3.2.1-3.3.2.7{} hold on {} warehouses",
            if c.history_checked { " and .8-.9" } else { "" },
            c.warehouses
        );
    } else {
        println!("check     {} VIOLATIONS", c.violations.len());
        for v in c.violations.iter().take(20) {
            println!("          {v:?}");
        }
    }
}

fn output(a: &TpccArgs, o: &Output) -> Result<()> {
    if let Some(p) = &a.csv {
        let f = std::fs::File::create(p).with_context(|| format!("writing {}", p.display()))?;
        nowa_tpcc::write_samples_csv(&o.run.samples, f)?;
    }
    let json = serde_json::to_string_pretty(o)?;
    if let Some(p) = &a.out {
        std::fs::write(p, &json).with_context(|| format!("writing {}", p.display()))?;
    }
    if a.json {
        println!("{json}");
        return Ok(());
    }
    summary(o);
    Ok(())
}

fn summary(o: &Output) {
    let r = &o.run;
    if let Some(l) = &o.load {
        println!(
            "load      {:.1} s, {:.1} warehouses/min, {:.0} rows/s",
            l.seconds, l.warehouses_per_minute, l.rows_per_second
        );
    }
    println!(
        "run       {:.1} s, {} txns, {:.0} txn/s, tpmC {:.0}, rollbacks {}, conflicts {} ({:.2}% of attempts), CPU {:.1} us/txn",
        r.seconds, r.transactions, r.txn_per_s, r.tpmc, r.rollbacks, r.conflicts,
        100.0 * r.conflict_rate, r.cpu_us_per_txn
    );
    for k in &r.kinds {
        println!(
            "{:<12}committed {:>9}, rolled back {:>6}, conflicts {:>6}, latency p50 {:.0} us p99 {:.0} us p99.9 {:.0} us",
            format!("{:?}", k.kind), k.committed, k.rolled_back, k.conflicts,
            k.latency.p50_us, k.latency.p99_us, k.latency.p999_us
        );
    }
    let e = &o.engine;
    #[expect(
        clippy::cast_precision_loss,
        reason = "counts and nanoseconds far below 2^52"
    )]
    let per_commit = |ns: u64| ns as f64 / 1e3 / e.txn_commits.max(1) as f64;
    #[expect(clippy::cast_precision_loss, reason = "nanoseconds far below 2^52")]
    let share = e.commit_lock_hold_ns as f64 / 1e9 / r.seconds.max(1e-9);
    println!(
        "commit    {} commits with writes: commit lock wait {:.1} us, held {:.1} us per commit (held {:.0}% of the run, wall); conflicts {:.2}% of attempts",
        e.txn_commits,
        per_commit(e.commit_lock_wait_ns),
        per_commit(e.commit_lock_hold_ns),
        100.0 * share,
        100.0 * r.conflict_rate
    );
    if let Some(b) = o.device_busy_secs {
        println!(
            "device    busy {b:.1} s of the run's {:.1} s (paced): tpmC {} per device-busy minute",
            r.seconds,
            o.device_bound_tpmc
                .map_or_else(|| "-".to_string(), |t| format!("{t:.0}"))
        );
    }
    println!(
        "waf       DB {}, SSD {}, total {}",
        fmt(o.db_waf),
        fmt(o.ssd_waf),
        fmt(o.total_waf)
    );
    println!(
        "per txn   logical {:.0} B, device {:.0} B, flash {} B, WAL {:.0} B",
        o.logical_bytes_per_txn,
        o.host_bytes_per_txn,
        o.flash_bytes_per_txn
            .map_or_else(|| "-".to_string(), |b| format!("{b:.0}")),
        o.wal_bytes_per_txn
    );
    if let Some(p) = &o.placement {
        print!("{}", p.text());
    }
    if let Some(f) = &o.frozen {
        crate::frozen_cmd::engine::print(f);
    }
    if let Some(c) = &o.consistency {
        print_consistency(c);
    }
}
