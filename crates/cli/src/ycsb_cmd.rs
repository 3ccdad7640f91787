//! `nowa ycsb`: load, run a YCSB mix, report the write drill-down.

use crate::sim_cmd::parse_size;
use crate::usage;
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use nowa_bench::ycsb::{self, Mix, Stop, ValueKind, WritePath, YcsbSpec};
use nowa_device::{BlockDevice, FileDevice, FileOptions, MemDevice, SimConfig, SimDevice, SimMode};
use nowa_engine::{Compression, Config, Durability, OopConfig};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct YcsbArgs {
    /// Records to load (u64 keys).
    #[arg(long, default_value_t = 200_000)]
    records: u64,
    /// Value size in bytes.
    #[arg(long, default_value_t = 120)]
    value_size: usize,
    /// Values: pattern (compressible, like the paper's) or random (incompressible).
    #[arg(long, default_value = "pattern")]
    values: String,
    /// YCSB mix: A (50/50 read/update), B (95/5), C (read only), F (read-modify-write).
    #[arg(long, default_value = "A")]
    workload: String,
    /// Zipf theta of key popularity (0 = uniform).
    #[arg(long, default_value_t = 0.8)]
    theta: f64,
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Stop after this many operations.
    #[arg(long, conflicts_with_all = ["seconds", "device_writes"])]
    ops: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, conflicts_with = "device_writes")]
    seconds: Option<f64>,
    /// Stop once the device received this many times its capacity in writes.
    #[arg(long)]
    device_writes: Option<f64>,
    /// Device: sim (simulated SSD in memory), mem (plain memory), or a file / block device path.
    #[arg(long, default_value = "sim")]
    device: String,
    /// Device capacity. Default: sized so the dataset fills --dataset-fill of it.
    #[arg(long)]
    capacity: Option<String>,
    /// Dataset size as a fraction of the device (the paper uses 0.9).
    #[arg(long, default_value_t = 0.9)]
    dataset_fill: f64,
    /// Simulated SSD: over-provisioning (spare/logical); also the SSD OP estimate of
    /// --defer-compensation.
    #[arg(long, default_value_t = 0.07)]
    op: f64,
    /// Simulated SSD mode: cns, fdp:HANDLES, zns.
    #[arg(long, default_value = "cns")]
    sim_mode: String,
    /// Buffer pool size; default 10% of the estimated dataset (the paper's setting).
    #[arg(long)]
    pool: Option<String>,
    /// WAL size limit; default = pool size.
    #[arg(long)]
    wal_limit: Option<String>,
    /// Turn the doublewrite buffer off (unsafe: torn pages are detected, not repaired).
    #[arg(long)]
    no_doublewrite: bool,
    /// Durability of updates: async (group commit in the background) or sync (each waits).
    #[arg(long, default_value = "async")]
    durability: String,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Reporting interval in seconds.
    #[arg(long, default_value_t = 1.0)]
    interval: f64,
    /// Per-interval CSV (ops/s, hit ratio, MB/s per write category, WAFs).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// Append "key-id version" after every acknowledged update (for crash verification).
    #[arg(long, value_name = "FILE")]
    ack_log: Option<PathBuf>,
    /// Write path: inplace (fixed home per page, doublewrite) or oop (out of place: zones,
    /// DB GC, no doublewrite).
    #[arg(long, default_value = "inplace")]
    write_path: String,
    /// Out of place: per-page compression (off, lz4, zstd).
    #[arg(long, default_value = "off")]
    compression: String,
    /// Out of place: 4 KiB page packing of compressed pages (on, off). Off: every page,
    /// compressed or not, takes a 4 KiB slot of its own.
    #[arg(long, default_value = "on")]
    packing: String,
    /// Out of place: background DB GC thread (on, off). Off: GC runs only in the writer
    /// that needs space (foreground).
    #[arg(long, default_value = "on")]
    background_gc: String,
    /// Out of place: zone size (the DB GC unit): a size, `auto` (the device's FDP RU size /
    /// ZNS zone size) or `infer` (the GC unit found by the ZNS-like sweep of
    /// `nowa infer-gc-unit`, run on identical simulated devices).
    #[arg(long, default_value = "1MiB")]
    zone_size: String,
    /// Out of place: zones appended concurrently (the active group).
    #[arg(long, default_value_t = 4)]
    open_zones: u32,
    /// Out of place: NoWA (active groups, group GC with compensation writes).
    #[arg(long)]
    nowa: bool,
    /// Out of place: GDT (deathtime-grouped placement and GC, write history in page headers).
    #[arg(long)]
    gdt: bool,
    /// Out of place, NoWA: defer compensation writes until the estimated SSD free space runs
    /// short (estimate: device capacity x (1 + --op)), instead of compensating whole groups
    /// at once.
    #[arg(long, requires = "nowa")]
    defer_compensation: bool,
    /// Keep the WAL on a separate in-memory device (the paper's setup): the device under
    /// test then holds only pages, and its SSD WAF excludes the WAL.
    #[arg(long)]
    separate_wal: bool,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

/// Resolve `--zone-size` (shared with `nowa table1`).
pub fn resolve_zone_size(arg: &str, dev: &dyn BlockDevice, sim: Option<&SimConfig>) -> Result<u64> {
    let g = dev.geometry();
    match arg {
        "auto" => g.reclaim_unit_size.or(g.zone_size).ok_or_else(|| {
            usage("--zone-size auto: the device reports no RU/zone size; use `infer` or a size")
        }),
        "infer" => {
            let sim = sim.ok_or_else(|| usage("--zone-size infer needs --device sim"))?;
            let spec = nowa_bench::gcunit::InferSpec {
                volume: 1.5,
                max_zone: (g.capacity / 8).next_power_of_two() / 2,
                ..Default::default()
            };
            let mut fresh =
                || -> std::result::Result<Box<dyn BlockDevice>, nowa_bench::gcunit::InferError> {
                    Ok(Box::new(SimDevice::new(sim.clone())?))
                };
            let r = nowa_bench::gcunit::infer(&mut fresh, &spec, &mut |_| {})?;
            r.gc_unit_bytes.ok_or_else(|| {
                anyhow::anyhow!(
                    "GC unit inference found no zone size with WAF <= {}",
                    r.threshold
                )
            })
        }
        s => parse_size(s),
    }
}

/// Parse an `on` / `off` switch.
fn on_off(flag: &str, v: &str) -> Result<bool> {
    match v {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        o => Err(usage(format!("{flag}: expected on or off, got '{o}'"))),
    }
}

fn spinner(quiet: bool, msg: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {msg}").unwrap());
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

pub fn run(a: YcsbArgs) -> Result<()> {
    if a.records == 0 {
        return Err(usage("--records must be > 0"));
    }
    if a.value_size == 0 || a.value_size > 2000 {
        return Err(usage(format!(
            "--value-size must be in 1..=2000, got {}",
            a.value_size
        )));
    }
    if a.threads == 0 {
        return Err(usage("--threads must be >= 1"));
    }
    if !(a.theta >= 0.0 && a.theta.is_finite()) {
        return Err(usage(format!("--theta must be >= 0, got {}", a.theta)));
    }
    if !(a.dataset_fill > 0.0 && a.dataset_fill <= 1.0) {
        return Err(usage(format!(
            "--dataset-fill must be in (0, 1], got {}",
            a.dataset_fill
        )));
    }
    if a.interval.is_nan() || a.interval <= 0.0 {
        return Err(usage("--interval must be > 0"));
    }
    let mix: Mix = a.workload.parse().map_err(usage)?;
    let value_kind: ValueKind = a.values.parse().map_err(usage)?;
    let durability = match a.durability.as_str() {
        "async" => Durability::Async,
        "sync" => Durability::Sync,
        o => {
            return Err(usage(format!(
                "unknown durability '{o}' (expected async or sync)"
            )))
        }
    };
    let stop = match (a.ops, a.seconds, a.device_writes) {
        (Some(n), _, _) => Stop::Ops(n),
        (_, Some(s), _) => Stop::Seconds(s),
        (_, _, Some(k)) => Stop::DeviceWrites(k),
        _ => Stop::Seconds(10.0),
    };
    let dataset = ycsb::estimate_dataset_bytes(a.records, a.value_size);
    let pool = match &a.pool {
        Some(p) => parse_size(p)?,
        None => (dataset / 10).max(1 << 20),
    };
    let wal_limit = a.wal_limit.as_deref().map(parse_size).transpose()?;
    let engine_cfg = Config {
        pool_bytes: pool,
        wal_limit_bytes: wal_limit,
        durability,
        doublewrite: !a.no_doublewrite,
        ..Config::default()
    };
    // The engine also needs its superblocks and doublewrite area on the device, and its WAL
    // region unless the WAL is on a separate device (then the data fills the device as in
    // `nowa table1`).
    let wal = wal_limit.unwrap_or(pool);
    let wal_region = if a.separate_wal {
        0
    } else {
        wal + wal / 4 + (1 << 20)
    };
    let overhead = wal_region + (1 << 20) + engine_cfg.dw_pages * 4096;
    let capacity = match &a.capacity {
        Some(c) => parse_size(c)?,
        None => ((dataset + overhead) as f64 / a.dataset_fill) as u64,
    };
    let mut capacity = capacity / 4096 * 4096;

    // Validate every write-path flag whatever the path, and refuse out-of-place switches that
    // an in-place run would silently ignore.
    let compression = a.compression.parse::<Compression>().map_err(usage)?;
    let packing = on_off("--packing", &a.packing)?;
    let background_gc = on_off("--background-gc", &a.background_gc)?;
    if matches!(a.write_path.as_str(), "inplace" | "in-place") {
        let oop_only = [
            ("--compression", a.compression != "off"),
            ("--nowa", a.nowa),
            ("--gdt", a.gdt),
            ("--defer-compensation", a.defer_compensation),
        ];
        if let Some((flag, _)) = oop_only.iter().find(|(_, set)| *set) {
            return Err(usage(format!("{flag} needs --write-path oop")));
        }
    }
    let oop = matches!(a.write_path.as_str(), "oop" | "out-of-place");
    if !oop && !matches!(a.write_path.as_str(), "inplace" | "in-place") {
        return Err(usage(format!(
            "unknown --write-path '{}' (expected inplace or oop)",
            a.write_path
        )));
    }
    let mut oop_cfg = OopConfig {
        open_zones: a.open_zones,
        compression,
        nowa: a.nowa,
        gdt: a.gdt,
        packing,
        background_gc,
        defer_compensation: a.defer_compensation,
        // The SSD's OP for the deferral estimate: the simulated SSD's, else the default.
        ssd_op: a.op,
        seed: a.seed,
        ..OopConfig::default()
    };
    let (dev, sim, zone) = loop {
        let mut sim: Option<Arc<SimDevice>> = None;
        let dev: Arc<dyn BlockDevice> = match a.device.as_str() {
            "sim" => {
                let mode = match a.sim_mode.as_str() {
                    "cns" => SimMode::Conventional,
                    "zns" => SimMode::Zoned { max_open_zones: 14 },
                    m => match m.strip_prefix("fdp:").and_then(|h| h.parse::<u16>().ok()) {
                        Some(h) if h > 0 => SimMode::Fdp { handles: h },
                        _ => {
                            return Err(usage(format!(
                                "unknown --sim-mode '{m}' (expected cns, fdp:HANDLES or zns)"
                            )))
                        }
                    },
                };
                let cfg = SimConfig::for_capacity(capacity, a.op, mode)
                    .map_err(|e| usage(e.to_string()))?;
                let d = Arc::new(SimDevice::new(cfg).map_err(|e| usage(e.to_string()))?);
                sim = Some(d.clone());
                d
            }
            "mem" => Arc::new(MemDevice::new(capacity)),
            path => {
                let p = std::path::Path::new(path);
                let opts = FileOptions::default();
                let d = if p.exists() {
                    FileDevice::open(p, &opts)
                } else {
                    FileDevice::create(p, capacity, &opts)
                }
                .with_context(|| format!("opening {path}"))?;
                Arc::new(d)
            }
        };
        let zone = if oop {
            Some(resolve_zone_size(
                &a.zone_size,
                dev.as_ref(),
                sim.as_ref().map(|s| s.config()),
            )?)
        } else {
            None
        };
        // Out of place keeps open zones and a GC reserve beyond the pages (uncompressed): on a
        // small simulated SSD with large zones `--dataset-fill` may not leave room for them.
        if let (Some(z), Some(_), None) = (zone, &sim, &a.capacity) {
            let need = oop_cfg.zone_area_for(dataset / 4096, z) + overhead;
            if need > capacity {
                eprintln!(
                    "nowa ycsb: device enlarged to ~{} MiB (dataset fill {:.0}% instead of {:.0}%): out of place keeps {} zones of {} KiB free or open",
                    need >> 20,
                    100.0 * dataset as f64 / need as f64,
                    100.0 * a.dataset_fill,
                    oop_cfg.spare_zones(),
                    z >> 10
                );
                capacity = need;
                continue;
            }
        }
        break (dev, sim, zone);
    };
    let store = match zone {
        None => WritePath::InPlace,
        Some(z) => {
            oop_cfg.zone_bytes = Some(z);
            WritePath::OutOfPlace(oop_cfg)
        }
    };
    let spec = YcsbSpec {
        store,
        separate_wal: a.separate_wal,
        records: a.records,
        value_size: a.value_size,
        value_kind,
        mix,
        theta: a.theta,
        threads: a.threads,
        stop,
        durability,
        seed: a.seed,
        interval_secs: a.interval,
        engine: engine_cfg.clone(),
        ack_log: a.ack_log.clone(),
    };
    eprintln!(
        "nowa ycsb: seed {}, {} records (~{} MiB), pool {} MiB, device {} ({} MiB)",
        a.seed,
        a.records,
        dataset >> 20,
        pool >> 20,
        a.device,
        dev.geometry().capacity >> 20
    );
    let engine = Arc::new(
        ycsb::create_engine(dev.clone(), &spec).map_err(|e| match e {
            // A configuration the device cannot hold is bad input, not a failure.
            ycsb::YcsbError::Engine(nowa_engine::EngineError::Config(m)) => usage(m),
            ycsb::YcsbError::Config(m) => usage(format!("creating the engine: {m}")),
            e => anyhow::Error::new(e).context("creating the engine"),
        })?,
    );
    let pb = spinner(a.quiet, "loading");
    let t = std::time::Instant::now();
    let records = a.records;
    ycsb::load(&engine, &spec, &|n| {
        pb.set_message(format!("loading {}%", n * 100 / records))
    })
    .context("loading records")?;
    let load_secs = t.elapsed().as_secs_f64();
    pb.set_message("running");
    let mut on_tick = |tk: &ycsb::Tick| {
        pb.set_message(format!(
            "{:.0}s {:.0} ops/s hit {:.3} DB WAF {:.2} SSD WAF {:.2} device writes {:.2}x",
            tk.t_secs, tk.ops_per_sec, tk.hit_ratio, tk.db_waf, tk.ssd_waf, tk.device_writes
        ))
    };
    let mut r = ycsb::run(engine.clone(), &spec, &mut on_tick).context("running the workload")?;
    pb.finish_and_clear();
    r.load_secs = load_secs;
    engine.close().context("closing the engine")?;
    if let Some(p) = &a.csv {
        ycsb::write_ticks_csv(&r.ticks, p).with_context(|| format!("writing {}", p.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", ycsb::summary(&r));
        if let Some(s) = &sim {
            let l = s.layout();
            println!(
                "ssd       simulated {:?}: {} units of {} MiB, OP {:.1}% spare/logical",
                s.mode(),
                l.units,
                (l.unit_pages as u64 * 4096) >> 20,
                l.op_spare_over_logical * 100.0
            );
        }
    }
    Ok(())
}
