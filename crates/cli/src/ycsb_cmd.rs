//! `nowa ycsb`: load, run a YCSB mix, report the write drill-down and what bounds the run.

use crate::ckpt_flags::WriteBackFlags;
use crate::device_open::open_database;
use crate::engine_flags::EngineFlags;
use crate::flags::{self, MAX_THREADS};
use crate::frozen_cmd::engine::{FrozenReport, FrozenRun};
use crate::oop_flags::{oop_config, zone_of, OopFlags};
use crate::resources::{check_memory, check_output_file, sim_device_bytes, Need};
use crate::{interrupted, usage};
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use nowa_bench::ycsb::{
    self, Device, KeyOrder, Mix, Pacing, Stop, ValueKind, WritePath, YcsbResult, YcsbSpec,
};
use nowa_device::{SimDevice, SimMode};
use nowa_engine::{Config, Engine, OopConfig};
use std::path::PathBuf;
use std::sync::Arc;

/// The largest value: the engine's largest record ([`nowa_engine::page::MAX_KV`]) minus the
/// 8-byte key.
const MAX_VALUE: u64 = (nowa_engine::page::MAX_KV - 8) as u64;
/// The largest device, pool or WAL a flag accepts (the memory check refuses far less).
const MAX_BYTES: u64 = 1 << 50;

#[derive(Args, Debug)]
pub struct YcsbArgs {
    /// Records to load (u64 keys; 200000 or 200k).
    #[arg(long, default_value = "200k", value_parser = flags::count::<u64>(1, 1_000_000_000_000))]
    records: u64,
    /// Value size in bytes (at most the engine's record size minus the 8-byte key).
    #[arg(long, default_value = "120", value_parser = flags::count::<usize>(1, MAX_VALUE))]
    value_size: usize,
    /// Values: pattern (LZ4 leaves ~0.2 of a page), paper (~0.41, the paper's YCSB ratio) or
    /// random (incompressible).
    #[arg(long, default_value = "pattern", value_parser = flags::parsed::<ValueKind>())]
    values: ValueKind,
    /// YCSB mix: A (50/50 read/update), B (95/5), C (read only), F (read-modify-write), W
    /// (100% updates, Zipf keys as A: SepFrozen's "100% writes" YCSB).
    #[arg(long, default_value = "A", value_parser = flags::parsed::<Mix>())]
    workload: Mix,
    /// Zipf theta of key popularity (0 = uniform).
    #[arg(long, default_value = "0.8", value_parser = flags::number(0.0, false, 100.0))]
    theta: f64,
    /// Where the Zipf popularity ranks sit among the keys: scrambled (YCSB's scrambled
    /// Zipfian: a leaf's keys have unrelated popularities) or ranked (rank k = key k - 1:
    /// leaves range from hot to cold).
    #[arg(long, default_value = "scrambled", value_parser = flags::parsed::<KeyOrder>())]
    key_order: KeyOrder,
    /// Worker threads.
    #[arg(long, default_value = "2", value_parser = flags::count::<usize>(1, MAX_THREADS))]
    threads: usize,
    /// Stop after this many operations (300000 or 300k).
    #[arg(long, conflicts_with_all = ["seconds", "device_writes"],
          value_parser = flags::count::<u64>(1, 1 << 62))]
    ops: Option<u64>,
    /// Stop after this long (30, 30s, 2m, 1h). Default: 10 s in place; out of place, see
    /// --steady-writes.
    #[arg(long, conflicts_with = "device_writes", value_parser = flags::seconds(1e-3, 366.0 * 86400.0))]
    seconds: Option<f64>,
    /// Stop once the device received this many times its capacity in writes.
    #[arg(long, value_parser = flags::number(0.0, true, 1e6))]
    device_writes: Option<f64>,
    /// Device: sim (simulated SSD in memory), mem (plain memory), or a file / block device path.
    #[arg(long, default_value = "sim")]
    device: String,
    /// Allow overwriting a --device path that is in use, holds data or is not a nowa database;
    /// must repeat the path exactly.
    #[arg(long, value_name = "PATH")]
    force: Option<PathBuf>,
    /// Device capacity. Default: sized so the dataset fills --dataset-fill of it.
    #[arg(long, value_parser = flags::size_4k(1 << 20, MAX_BYTES))]
    capacity: Option<u64>,
    /// Dataset size as a fraction of the device (the paper uses 0.9 = 90%).
    #[arg(long, default_value = "0.9", value_parser = flags::fraction(0.0, true, 1.0, false))]
    dataset_fill: f64,
    /// Simulated SSD: over-provisioning (spare/logical, 0.07 or 7%); also the SSD OP estimate
    /// of --defer-compensation.
    #[arg(long, default_value = "7%", value_parser = flags::fraction(0.0, false, 1.0, false))]
    op: f64,
    /// Simulated SSD mode: cns, fdp:HANDLES, zns.
    #[arg(long, default_value = "cns", value_parser = sim_mode)]
    sim_mode: SimMode,
    #[command(flatten)]
    pacing: crate::pacing_flags::PacingFlags,
    #[command(flatten)]
    engine: EngineFlags,
    /// With --durability async: a durability point (a sync commit, whose group commit
    /// flushes the WAL) every N updates, counted over all threads (1000 or 1k). Default: the
    /// engine's own async flushes only (every 1 MiB of WAL).
    #[arg(long, value_name = "N", value_parser = flags::count::<std::num::NonZeroU64>(1, 1 << 62))]
    durable_every: Option<std::num::NonZeroU64>,
    /// Seed of keys and values.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Reporting interval (1, 1s, 500ms).
    #[arg(long, default_value = "1", value_parser = flags::seconds(0.01, 86400.0))]
    interval: f64,
    /// Per-interval CSV (ops/s, hit ratio, MB/s per write category, WAFs).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// Append "key-id version" after every acknowledged update (for crash verification); with
    /// --durable-every, once a durability point has made it durable. Needs --threads 1: the
    /// versions count one worker's updates, so only one worker's are ordered per key.
    #[arg(long, value_name = "FILE")]
    ack_log: Option<PathBuf>,
    #[command(flatten)]
    oop: OopFlags,
    /// Out of place, when no --ops, --seconds or --device-writes is given: run until the store
    /// has written this many times its space (the space limit, else the device), so DB GC
    /// reaches steady state.
    #[arg(long, default_value = "3", value_parser = flags::number(0.0, true, 1e6))]
    steady_writes: f64,
    #[command(flatten)]
    write_back: WriteBackFlags,
    /// Keep the WAL on a separate in-memory device (the paper's setup): the device under
    /// test then holds only pages, and its SSD WAF excludes the WAL.
    #[arg(long)]
    separate_wal: bool,
    /// Record every request the engine makes to the device (not the separate WAL) in the
    /// nowa trace CSV; replay it with `nowa sim --trace FILE`. An existing FILE is refused.
    #[arg(long, value_name = "FILE")]
    record_trace: Option<PathBuf>,
    /// Out of place: record every DB page write, GC move and page free with its hotness
    /// records in FILE (SepFrozen's write log: `nowa frozen train|replay --writes FILE`).
    /// An existing FILE is refused.
    #[arg(long, value_name = "FILE")]
    record_writes: Option<PathBuf>,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

pub(crate) use nowa_lab::ycsb::parse_sim_mode as sim_mode;

fn spinner(quiet: bool, msg: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
        pb.set_style(style);
    }
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

/// The simulated SSD's timing model, from `--pacing` and the bandwidth flags; None on other
/// devices (which refuse those flags).
fn pacing(a: &YcsbArgs) -> Result<Option<Pacing>> {
    a.pacing.pacing(&a.device)
}

/// The write path, after refusing out-of-place switches an in-place run would ignore (and
/// `--durable-every` with sync commits, which it would not change).
fn write_path(a: &YcsbArgs) -> Result<(Option<OopConfig>, Option<FrozenRun>)> {
    if a.durable_every.is_some() && a.engine.durability == nowa_engine::Durability::Sync {
        return Err(usage(
            "--durable-every needs --durability async (sync makes every update durable)",
        ));
    }
    oop_config(&a.oop, a.op, a.seed, a.engine.no_doublewrite)
}

/// The sizes a run is planned with.
struct Plan {
    dataset: u64,
    /// How the pool size was chosen.
    pool_why: String,
    engine: Config,
    /// Engine space on the device beyond the pages: superblocks, doublewrite area, WAL.
    overhead: u64,
    capacity: u64,
}

fn plan(a: &YcsbArgs) -> Plan {
    let dataset = ycsb::estimate_dataset_bytes(a.records, a.value_size);
    let (mut engine, pool_why) = a.engine.config(&a.device, dataset);
    let pool = engine.pool_bytes;
    a.write_back.apply(&mut engine);
    // The engine also needs its superblocks and doublewrite area on the device, and its WAL
    // region unless the WAL is on a separate device (then the data fills the device as in
    // `nowa table1`).
    let overhead =
        nowa_lab::ycsb::overhead_bytes(pool, a.engine.wal_limit, engine.dw_pages, a.separate_wal);
    let capacity = a
        .capacity
        .unwrap_or_else(|| nowa_lab::ycsb::capacity_for(dataset, overhead, a.dataset_fill));
    let plan = Plan {
        dataset,
        pool_why,
        engine,
        overhead,
        capacity: capacity / 4096 * 4096,
    };
    assert!(plan.engine.pool_bytes >= 1 << 20 && plan.capacity % 4096 == 0);
    plan
}

/// What the run holds in memory with a device of `capacity` bytes; `device_flag` is the flag
/// that sized the device.
fn check_run_memory(a: &YcsbArgs, p: &Plan, capacity: u64, device_flag: &str) -> Result<()> {
    let device = match a.device.as_str() {
        "sim" => sim_device_bytes(capacity),
        "mem" => capacity,
        _ => 0,
    };
    let infer = if a.oop.zone_size == nowa_lab::devices::ZoneSize::Infer {
        device
    } else {
        0
    };
    let pool = p.engine.pool_bytes;
    let wal = a.engine.wal_limit_or(pool);
    let wal_dev = if a.separate_wal {
        wal.saturating_add(wal / 4)
    } else {
        0
    };
    // A device sized from the dataset grows with the WAL region when the WAL shares it.
    let device_flag = if device_flag == "--records" && p.overhead > p.dataset {
        if a.engine.wal_limit.is_some() {
            "--wal-limit"
        } else {
            "--pool"
        }
    } else {
        device_flag
    };
    let needs: [Need<'_>; 4] = [
        (device_flag, "device", device),
        ("--zone-size", "GC-unit inference device", infer),
        ("--pool", "buffer pool", pool.saturating_add(pool / 16)),
        ("--wal-limit", "separate WAL device", wal_dev),
    ];
    check_memory(&needs)
}

/// The device the flags ask for, with `capacity` bytes when it is created here (the one place
/// `nowa ycsb` opens a device).
fn make_device(a: &YcsbArgs, capacity: u64) -> Result<(Device, Option<Arc<SimDevice>>)> {
    if let Some(d) = nowa_lab::devices::in_memory(&a.device, capacity, a.op, a.sim_mode)
        .map_err(crate::lab_error)?
    {
        return Ok(d);
    }
    let path = a.device.as_str();
    Ok((
        open_database(
            "nowa ycsb",
                path,
                a.force.as_deref(),
                capacity,
                format!(
                    "format {path} as a new nowa database (its previous contents are lost) and load {} records",
                    a.records
                ),
        )?,
        None,
    ))
}

/// The device under test and the zone size, enlarging a simulated SSD when `--dataset-fill`
/// leaves no room for the out-of-place zones.
struct Opened {
    dev: Device,
    sim: Option<Arc<SimDevice>>,
    zone: Option<u64>,
}

fn open(a: &YcsbArgs, p: &Plan, oop: Option<&OopConfig>) -> Result<Opened> {
    let mut capacity = p.capacity;
    let mut sized_by = if a.capacity.is_some() {
        "--capacity"
    } else {
        "--records"
    };
    loop {
        check_run_memory(a, p, capacity, sized_by)?;
        let (dev, sim) = make_device(a, capacity)?;
        let zone = match oop {
            Some(_) => Some(zone_of(&a.oop, dev.as_ref(), sim.as_deref())?),
            None => None,
        };
        // Out of place keeps open zones and a GC reserve beyond the pages (uncompressed): on a
        // small in-memory device (simulated SSD or plain memory) with large zones
        // `--dataset-fill` may not leave room for them. Files and block devices keep their size.
        let in_memory = sim.is_some() || a.device == "mem";
        if let (Some(z), Some(o), true, None) = (zone, oop, in_memory, a.capacity) {
            let need = o
                .zone_area_for(p.dataset / 4096, z)
                .saturating_add(p.overhead);
            if need > capacity {
                check_run_memory(a, p, need, "--zone-size")?;
                eprintln!(
                    "nowa ycsb: device enlarged to ~{} MiB (dataset fill {:.0}% instead of {:.0}%): out of place keeps {} zones of {} KiB free or open",
                    need >> 20,
                    100.0 * p.dataset as f64 / need as f64,
                    100.0 * a.dataset_fill,
                    o.spare_zones(),
                    z >> 10
                );
                assert!(
                    need.div_ceil(4096) * 4096 > capacity,
                    "the device only grows"
                );
                capacity = need.div_ceil(4096) * 4096;
                sized_by = "--zone-size";
                continue;
            }
        }
        let dev = nowa_lab::devices::record_trace(dev, a.record_trace.as_deref())
            .map_err(crate::lab_error)?;
        return Ok(Opened { dev, sim, zone });
    }
}

fn spec(a: &YcsbArgs, p: &Plan, oop: Option<OopConfig>, zone: Option<u64>) -> Result<YcsbSpec> {
    let stop = match (a.ops, a.seconds, a.device_writes) {
        (Some(n), _, _) => Stop::Ops(n),
        (_, Some(s), _) => Stop::Seconds(s),
        (_, _, Some(k)) => Stop::DeviceWrites(k),
        // Out of place: until DB GC has run through the space K times (steady state).
        _ if oop.is_some() => Stop::StoreWrites(a.steady_writes),
        _ => Stop::Seconds(10.0),
    };
    let zoned_or_fdp = a.device == "sim" && !matches!(a.sim_mode, SimMode::Conventional);
    if oop.is_some() && a.oop.nowa && !a.separate_wal && !zoned_or_fdp {
        // Measured (docs/design.md 14.4b): WAL blocks interleave with the zone appends in the
        // SSD's write stream, so groups straddle GC units and the SSD copies at high fill.
        eprintln!(
            "nowa ycsb: --nowa without --separate-wal: the WAL shares the SSD's write stream with the zones, so SSD WAF 1 is not guaranteed (docs/design.md 14.4b)"
        );
    }
    let store = match (oop, zone) {
        (Some(mut o), Some(z)) => {
            o.zone_bytes = Some(z);
            WritePath::OutOfPlace(o)
        }
        _ => WritePath::InPlace,
    };
    Ok(YcsbSpec {
        store,
        separate_wal: a.separate_wal,
        records: a.records,
        value_size: a.value_size,
        value_kind: a.values,
        mix: a.workload,
        theta: a.theta,
        key_order: a.key_order,
        threads: a.threads,
        stop,
        durability: a.engine.durability,
        durable_every: a.durable_every,
        seed: a.seed,
        interval_secs: a.interval,
        engine: p.engine.clone(),
        ack_log: a.ack_log.clone(),
        pacing: pacing(a)?,
    })
}

/// `nowa ycsb`.
pub fn run(a: YcsbArgs) -> Result<()> {
    crate::resources::check_device_path(&a.device)?;
    check_output_file("--csv", a.csv.as_deref())?;
    for (flag, file) in [
        ("--record-trace", &a.record_trace),
        ("--record-writes", &a.record_writes),
    ] {
        if let Some(f) = file {
            crate::resources::check_new_output(flag, f, false)?;
        }
    }
    let (oop, frozen) = write_path(&a)?;
    check_output_file("--ack-log", a.ack_log.as_deref())?;
    if a.ack_log.is_some() && a.threads > 1 {
        return Err(crate::usage(format!(
            "--ack-log needs --threads 1 (got {}): versions are counted per worker, so two workers' acknowledged versions of a key are not ordered",
            a.threads
        )));
    }
    let wlog = crate::frozen_cmd::record::open_flag(a.record_writes.as_deref(), oop.is_some())?;
    let p = plan(&a);
    let opened = open(&a, &p, oop.as_ref())?;
    let spec = spec(&a, &p, oop, opened.zone)?;
    let id = identity(&a, &spec, opened.dev.geometry().capacity);
    nowa_bench::interrupt::install_sigint_handler();
    if !a.quiet {
        eprintln!(
            "nowa ycsb: pool {} MiB: {}",
            p.engine.pool_bytes >> 20,
            p.pool_why
        );
    }
    eprintln!(
        "nowa ycsb: seed {}, {} records (~{} MiB), pool {} MiB, device {} ({} MiB), {}",
        a.seed,
        a.records,
        p.dataset >> 20,
        p.engine.pool_bytes >> 20,
        a.device,
        opened.dev.geometry().capacity >> 20,
        match spec.pacing {
            Some(c) if c.paced => format!("paced by the timing model ({})", c.model().describe()),
            Some(c) => format!(
                "UNPACED (--pacing off; timing model {})",
                c.model().describe()
            ),
            None => "real I/O".to_owned(),
        }
    );
    let (dev, paced) = ycsb::pace(opened.dev.clone(), spec.pacing.as_ref());
    let engine = Arc::new(nowa_lab::ycsb::create_engine(dev, &spec).map_err(crate::lab_error)?);
    crate::frozen_cmd::engine::attach(&engine, frozen.as_ref(), wlog.as_ref())?;
    let Some(r) = load_and_run(&a, &engine, &spec, paced.as_deref())? else {
        engine.close().context("closing the engine")?;
        return Err(interrupted("during the load; nothing was measured"));
    };
    let placed = crate::frozen_cmd::engine::report(frozen.as_ref());
    engine.close().context("closing the engine")?;
    crate::frozen_cmd::record::finish_flag(wlog.as_ref(), &engine, "nowa ycsb")?;
    output(&a, &id, &r, placed.as_ref(), opened.sim.as_deref())?;
    if r.interrupted {
        return Err(interrupted(format!(
            "after {:.1} s of the run phase; the results above cover it",
            r.run_secs
        )));
    }
    Ok(())
}

/// The load and the measured phase; None when Ctrl-C came during the load.
fn load_and_run(
    a: &YcsbArgs,
    engine: &Arc<Engine>,
    spec: &YcsbSpec,
    paced: Option<&nowa_bench::paced::Paced>,
) -> Result<Option<YcsbResult>> {
    let pb = spinner(a.quiet, "loading");
    let records = a.records;
    let on_load = |n: u64| pb.set_message(format!("loading {}%", n * 100 / records));
    let mut on_tick = |tk: &ycsb::Tick| {
        pb.set_message(format!(
            "{:.0}s {:.0} ops/s hit {:.3} DB WAF {} SSD WAF {} device writes {:.2}x",
            tk.t_secs,
            tk.ops_per_sec,
            tk.hit_ratio,
            ycsb::report::fmt_waf(tk.db_waf),
            ycsb::report::fmt_waf(tk.ssd_waf),
            tk.device_writes
        ));
    };
    // A file or block device: the kernel's counters of the device under it, over the run.
    let blk = match a.device.as_str() {
        "sim" | "mem" => None,
        path => ycsb::BlockDevReading::of(std::path::Path::new(path)),
    };
    let r = nowa_lab::ycsb::load_and_run(engine, spec, paced, &on_load, &mut on_tick)
        .map_err(crate::lab_error)?;
    pb.finish_and_clear();
    let Some(mut r) = r else {
        eprintln!("nowa ycsb: interrupted during the load: fewer than {records} records loaded");
        return Ok(None);
    };
    r.block_device = blk.as_ref().and_then(|b| Some(b.since(&b.again()?, r.ops)));
    Ok(Some(r))
}

/// The run's identity: the spec as resolved (pool, stop, zone size, write path, the
/// device), which `nowa run` runs again on the simulated SSD or in memory.
fn identity(a: &YcsbArgs, spec: &YcsbSpec, capacity: u64) -> nowa_lab::Identity {
    assert!(capacity >= 4096, "an opened device holds pages");
    let mut resolved =
        nowa_lab::ycsb::Spec::from_bench(spec, &a.device, capacity, a.op, a.sim_mode);
    if let nowa_lab::ycsb::Path::Oop(o) = &mut resolved.write_path {
        o.frozen_model.clone_from(&a.oop.frozen_model);
    }
    assert_eq!(resolved.seed, a.seed, "the spec names the run's seed");
    assert_eq!(
        resolved.capacity, capacity,
        "the spec names the opened device's size"
    );
    nowa_lab::Identity::now("ycsb", &resolved, a.seed)
}

/// Writes the CSV and prints the summary or the JSON.
fn output(
    a: &YcsbArgs,
    id: &nowa_lab::Identity,
    r: &YcsbResult,
    placed: Option<&FrozenReport>,
    sim: Option<&SimDevice>,
) -> Result<()> {
    // `nowa run` re-runs a result from its identity: it must name this job.
    assert_eq!(id.command, "ycsb", "the result names its job");
    if let Some(p) = &a.csv {
        let file = nowa_lab::csv_file(p, id).map_err(crate::lab_error)?;
        ycsb::write_ticks_csv(&r.ticks, file)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    if a.json {
        let out = nowa_lab::Report {
            nowa: id.clone(),
            result: nowa_lab::ycsb::YcsbOut {
                result: r.clone(),
                frozen: placed.map(serde_json::to_value).transpose()?,
            },
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    print!("{}", ycsb::summary(r));
    if let Some(p) = placed {
        crate::frozen_cmd::engine::print(p);
    }
    if let Some(s) = sim {
        let l = s.layout();
        println!(
            "ssd       simulated {:?}: {} units of {}, OP {:.1}% spare/logical",
            s.mode(),
            l.units,
            nowa_units::Bytes(u64::from(l.unit_pages) * 4096),
            l.op_spare_over_logical * 100.0
        );
    }
    Ok(())
}
