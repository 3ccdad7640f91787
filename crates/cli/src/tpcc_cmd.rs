//! `nowa tpcc`: flags -> [`nowa_lab::tpcc::Spec`] (pool, sizing, device, zone size
//! resolved) -> [`nowa_lab::tpcc::run_with`] -> print. `--check-only` opens (recovers) an
//! existing database and only checks it.

use crate::ckpt_flags::WriteBackFlags;
use crate::device_open::open_database;
use crate::engine_flags::EngineFlags;
use crate::flags::{self, MAX_THREADS};
use crate::frozen_cmd::engine::FrozenRun;
use crate::oop_flags::{oop_config, zone_of, OopFlags};
use crate::resources::{check_memory, check_output_file, sim_device_bytes};
use crate::{interrupted, lab_error, usage};
use anyhow::{Context, Result};
use clap::Args;
use nowa_device::SimMode;
use nowa_engine::Config;
use nowa_lab::devices::Opened;
use nowa_lab::engine::EngineSpec;
use nowa_lab::tpcc::{self as lab, size, Spec, Stop};
use nowa_lab::ycsb::{Oop, Path};
use std::path::PathBuf;

/// `--check-only`'s outcome (`nowa ckpt figures` reads it).
pub(crate) use nowa_lab::tpcc::CheckOutcome;

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
    #[arg(long, default_value = "cns", value_parser = nowa_lab::ycsb::parse_sim_mode)]
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
    let wal = if a.separate_wal {
        nowa_engine::wal_region_bytes(cfg)
    } else {
        0
    };
    check_memory(&[
        (flag, "device", mem),
        (
            "--pool",
            "buffer pool",
            cfg.pool_bytes + cfg.pool_bytes / 16,
        ),
        ("--wal-limit", "separate WAL device", wal),
    ])
}

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
    size::size(&want, cfg).map_err(lab_error)
}

/// The device the flags ask for, of `capacity` bytes.
fn device(a: &TpccArgs, cfg: &Config, capacity: u64) -> Result<Opened> {
    check_run_memory(a, cfg, capacity)?;
    if let Some(d) =
        nowa_lab::devices::in_memory(&a.device, capacity, a.op, a.sim_mode).map_err(lab_error)?
    {
        return Ok(d);
    }
    let path = a.device.as_str();
    let step = if a.check_only {
        format!("open the nowa database in {path}, recover and check it (nothing is formatted)")
    } else {
        format!(
            "format {path} as a new nowa database (its previous contents are lost) and load {} warehouses",
            a.warehouses
        )
    };
    let d = open_database("nowa tpcc", path, a.force.as_deref(), capacity, step)?;
    Ok((d, None))
}

/// A run as the flags resolve it: the spec, its sizes, the opened device and SepFrozen's
/// model.
struct Resolved {
    spec: Spec,
    sizing: size::Sizing,
    pool_why: String,
    device: Opened,
    frozen: Option<FrozenRun>,
}

/// Resolves every default and auto-sized value of the flags into a spec (opening the device
/// the zone size is resolved on).
fn resolve(a: &TpccArgs) -> Result<Resolved> {
    let (mut cfg, pool_why) = engine_config(a);
    let sz = sizing(a, &cfg)?;
    if a.engine.wal_limit.is_none() && !a.check_only {
        cfg.wal_limit_bytes = Some(sz.wal_limit);
    }
    let (dev, sim) = device(a, &cfg, sz.capacity)?;
    let pacing = a.pacing.pacing(&a.device)?;
    let (oop, frozen) = oop_config(&a.oop, a.op, a.seed, a.engine.no_doublewrite)?;
    let write_path = match oop {
        None => Path::InPlace,
        Some(mut o) => {
            o.zone_bytes = Some(zone_of(&a.oop, dev.as_ref(), sim.as_deref())?);
            o.frozen = None;
            let mut p = Oop::from_config(&o);
            p.frozen_model.clone_from(&a.oop.frozen_model);
            Path::Oop(p)
        }
    };
    let stop = match (a.transactions, a.duration, a.device_writes) {
        (Some(n), _, _) => Stop::Transactions(n),
        (_, Some(s), _) => Stop::Seconds(s),
        (_, _, Some(k)) => Stop::DeviceWrites(k),
        _ => Stop::Seconds(10.0),
    };
    let spec = Spec {
        device: a.device.clone(),
        capacity: dev.geometry().capacity,
        op: a.op,
        sim_mode: nowa_lab::ycsb::sim_mode_text(a.sim_mode),
        warehouses: a.warehouses,
        threads: a.threads,
        stop,
        steady: a.steady,
        seed: a.seed,
        interval: a.interval,
        check: a.check,
        engine: EngineSpec::from_config(&cfg, a.separate_wal, pacing, write_path),
    };
    assert_eq!(spec.seed, a.seed, "the spec names the run's seed");
    Ok(Resolved {
        spec,
        sizing: sz,
        pool_why,
        device: (dev, sim),
        frozen,
    })
}

/// The paths the run writes, checked before any work: one line naming the flag, exit 2.
fn check_paths(a: &TpccArgs) -> Result<()> {
    crate::resources::check_device_path(&a.device)?;
    check_output_file("--csv", a.csv.as_deref())?;
    check_output_file("--out", a.out.as_deref())
}

/// `nowa tpcc`.
pub fn run_cmd(a: TpccArgs) -> Result<()> {
    check_paths(&a)?;
    if a.check_only && matches!(a.device.as_str(), "sim" | "mem") {
        return Err(usage(
            "--check-only needs a --device path holding a database",
        ));
    }
    let r = resolve(&a)?;
    if a.check_only {
        return check_only(&a, &r).and_then(|c| consistent(&c));
    }
    let wlog = crate::frozen_cmd::record::open_flag(
        a.record_writes.as_deref(),
        matches!(r.spec.engine.write_path, Path::Oop(_)),
    )?;
    nowa_bench::interrupt::install_sigint_handler();
    keep_heap();
    print_banner(&a, &r);
    print_sizing(&a, &r.sizing);
    let out = run_engine(&a, &r, wlog.as_ref())?;
    if out.result.interrupted {
        return Err(interrupted(format!(
            "after {:.1} s; the results above cover it",
            out.result.run.seconds
        )));
    }
    if out
        .result
        .consistency
        .as_ref()
        .is_some_and(|c| !c.is_consistent())
    {
        anyhow::bail!("the consistency check failed");
    }
    Ok(())
}

/// The run on the resolved spec with the CLI's hooks (progress lines, `--ready-file`,
/// SepFrozen's model and write log, `--record-trace`), its output written and printed.
fn run_engine(
    a: &TpccArgs,
    r: &Resolved,
    wlog: Option<&std::sync::Arc<crate::frozen_cmd::record::WriteLog>>,
) -> Result<lab::Outcome> {
    let failed = |e: anyhow::Error| nowa_lab::Error::Failed {
        what: "nowa tpcc",
        source: e.into(),
    };
    let attach = |eng: &nowa_engine::Engine| {
        crate::frozen_cmd::engine::attach(eng, r.frozen.as_ref(), wlog).map_err(failed)
    };
    let closed = |eng: &nowa_engine::Engine| {
        crate::frozen_cmd::record::finish_flag(wlog, eng, "nowa tpcc").map_err(failed)
    };
    let quiet = a.quiet;
    let on_load = |p: &nowa_tpcc::LoadProgress| {
        if !quiet {
            eprintln!(
                "nowa tpcc: loading: {} of {} warehouses, {} rows, {:.1}s",
                p.warehouses_done,
                p.warehouses,
                p.rows,
                p.elapsed.as_secs_f64()
            );
        }
    };
    let on_loaded = |lr: &nowa_tpcc::LoadReport| loaded(a, lr).map_err(failed);
    let on_sample = |s: &nowa_tpcc::Sample| {
        if !quiet {
            print_sample(s);
        }
    };
    let hooks = lab::Hooks {
        device: Some(r.device.clone()),
        record_trace: a.record_trace.as_deref(),
        frozen: r.frozen.as_ref().map(|f| f.hook.clone()),
        attach: Some(&attach),
        on_load: Some(&on_load),
        on_loaded: Some(&on_loaded),
        on_sample: Some(&on_sample),
        on_closed: Some(&closed),
    };
    let mut out = lab::run_with(&r.spec, hooks, &nowa_lab::Cancel).map_err(lab_error)?;
    // `nowa run` re-runs a result from its identity: it must name this job and its seed.
    assert_eq!(out.nowa.command, "tpcc", "the result names its job");
    assert_eq!(out.nowa.seed, r.spec.seed, "the result names its seed");
    let frozen = crate::frozen_cmd::engine::report(r.frozen.as_ref());
    out.result.frozen = frozen.as_ref().map(serde_json::to_value).transpose()?;
    output(a, &out, frozen.as_ref())?;
    Ok(out)
}

/// The load's line, and `--ready-file`.
fn loaded(a: &TpccArgs, lr: &nowa_tpcc::LoadReport) -> Result<()> {
    eprintln!(
        "nowa tpcc: loaded {} warehouses in {:.1}s ({:.1} warehouses/min, {:.0} rows/s)",
        a.warehouses, lr.seconds, lr.warehouses_per_minute, lr.rows_per_second
    );
    if let Some(f) = &a.ready_file {
        std::fs::write(f, serde_json::to_string(lr)?)
            .with_context(|| format!("--ready-file {}", f.display()))?;
    }
    Ok(())
}

fn print_sample(s: &nowa_tpcc::Sample) {
    let x = |k: &str| {
        s.extra
            .get(k)
            .map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
    };
    let mib = s.extra.get("db_bytes").copied().unwrap_or(0.0) / f64::from(1 << 20);
    eprintln!(
        "nowa tpcc: {:.0}s {:.0} txn/s tpmC {:.0} conflicts {} DB WAF {} SSD WAF {} DB {mib:.0} MiB",
        s.elapsed_s,
        s.txn_per_s,
        s.tpmc,
        s.conflicts,
        x("db_waf"),
        x("ssd_waf"),
    );
}

/// The run's one-line summary of its setup (always), and why the pool has its size.
fn print_banner(a: &TpccArgs, r: &Resolved) {
    let pool_mib = r.spec.engine.pool >> 20;
    eprintln!(
        "nowa tpcc: seed {}, {} warehouses, {} threads, {}, pool {} MiB, device {} ({} MiB), WAL {}, {:?} commits",
        a.seed,
        a.warehouses,
        a.threads,
        if a.steady { "steady" } else { "standard" },
        pool_mib,
        a.device,
        r.spec.capacity >> 20,
        if a.separate_wal {
            "on a separate in-memory device"
        } else {
            "on the device"
        },
        a.engine.durability
    );
    if !a.quiet {
        eprintln!("nowa tpcc: pool {pool_mib} MiB: {}", r.pool_why);
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
fn consistent(c: &CheckOutcome) -> Result<()> {
    anyhow::ensure!(
        c.consistency.is_consistent(),
        "the consistency check failed"
    );
    Ok(())
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
    check_only(&a, &resolve(&a)?)
}

fn check_only(a: &TpccArgs, r: &Resolved) -> Result<CheckOutcome> {
    let hook = r.frozen.as_ref().map(|f| f.hook.clone());
    let c = lab::check_database(&r.spec, r.device.0.clone(), hook).map_err(lab_error)?;
    if let Some(x) = &c.recovery {
        eprintln!(
            "nowa tpcc: recovered in {:.3} s (analysis {} us, redo {} us): clean shutdown {}, {} records replayed, redo range {} bytes",
            c.open_secs,
            x.analysis_micros,
            x.redo_micros,
            x.clean_shutdown,
            x.records_replayed,
            x.end_lsn.saturating_sub(x.redo_lsn)
        );
    }
    if c.history_trimmed {
        eprintln!("nowa tpcc: HISTORY is trimmed (a steady run): clauses 3.3.2.8-9 skipped");
    }
    print!("{}", lab::consistency_text(&c.consistency));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c.consistency)?);
    }
    Ok(c)
}

fn output(
    a: &TpccArgs,
    o: &lab::Outcome,
    frozen: Option<&crate::frozen_cmd::engine::FrozenReport>,
) -> Result<()> {
    if let Some(p) = &a.csv {
        let f = nowa_lab::csv_file(p, &o.nowa).map_err(lab_error)?;
        nowa_tpcc::write_samples_csv(&o.result.run.samples, f)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    let json = serde_json::to_string_pretty(o)?;
    if let Some(p) = &a.out {
        std::fs::write(p, &json).with_context(|| format!("writing {}", p.display()))?;
    }
    if a.json {
        println!("{json}");
        return Ok(());
    }
    print!("{}", lab::summary(&o.result));
    if let Some(f) = frozen {
        crate::frozen_cmd::engine::print(f);
    }
    if let Some(c) = &o.result.consistency {
        print!("{}", lab::consistency_text(c));
    }
    Ok(())
}
