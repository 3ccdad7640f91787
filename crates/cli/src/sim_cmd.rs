//! `nowa sim` and `nowa sim sweep`: flags, validation, progress, output.

use crate::usage;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use nowa_bench::sim::{self, sweep, SimError, SimSpec, StreamAssign};
use nowa_flash::{
    FlashError, FtlConfig, GcFrontier, GcTrigger, GcUnit, Mode, PlacementKind, PolicyKind,
};
use nowa_workload::WorkloadSpec;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SimArgs {
    #[command(subcommand)]
    sub: Option<SimSub>,
    #[command(flatten)]
    dev: DeviceFlags,
    #[command(flatten)]
    run: RunFlags,
    /// Print the result as JSON (stdout) instead of the summary.
    #[arg(long)]
    json: bool,
    /// Write the per-interval time series (WAF over time) to this CSV file.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Speed benchmark: 64 GiB device (2^24 pages), fill 0.9, 8 MiB GC units, greedy, uniform
    /// random writes, measured after preconditioning; prints simulated host writes per second.
    #[arg(long)]
    bench: bool,
    /// The cost of every placement scheme and victim policy: the --bench device and workload
    /// (or the flags given) once per scheme, page writes per CPU second, as a table.
    #[arg(long, conflicts_with = "bench")]
    bench_schemes: bool,
    /// Write the victim valid-ratio distribution (histogram and CDF) to this CSV file.
    #[arg(long, value_name = "FILE")]
    victims_csv: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum SimSub {
    /// Run a grid of simulations in parallel: one CSV and a plot (PNG + SVG).
    Sweep(Box<SweepArgs>),
}

#[derive(Args, Debug)]
struct SweepArgs {
    /// Paper figure to reproduce: fig3b (two-zone skew), fig4b (zipf +- write buffer), fig7a (WAF vs OP).
    #[arg(long, value_name = "FIG", required_unless_present = "all")]
    figure: Option<String>,
    /// Run all figures.
    #[arg(long)]
    all: bool,
    /// Directory for sim-<figure>.csv, .png and .svg.
    #[arg(long, default_value = ".")]
    out_dir: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    dev: DeviceFlags,
    #[command(flatten)]
    run: RunFlags,
}

#[derive(Args, Debug, Clone)]
struct DeviceFlags {
    /// Logical capacity (e.g. 8GiB, 512MiB, 2TiB; plain numbers are bytes).
    #[arg(long, default_value = "8GiB")]
    capacity: String,
    /// Over-provisioning as spare/logical (0.07 or 7%): physical = logical x (1 + OP).
    #[arg(long, default_value = "7%", conflicts_with = "op_physical")]
    op: String,
    /// Over-provisioning as spare/physical (the ssd-iq simulator's 1 - ssdfill).
    #[arg(long)]
    op_physical: Option<String>,
    /// Flash pages (4 KiB) per erase block.
    #[arg(long, default_value_t = 256)]
    pages_per_block: u32,
    /// Erase blocks per superblock (channels x chips x planes).
    #[arg(long, default_value_t = 8, conflicts_with_all = ["channels", "chips", "planes"])]
    blocks_per_superblock: u32,
    /// Flash channels (with --chips and --planes: blocks per superblock = their product).
    #[arg(long)]
    channels: Option<u32>,
    /// Chips (dies) per channel.
    #[arg(long)]
    chips: Option<u32>,
    /// Planes per chip.
    #[arg(long)]
    planes: Option<u32>,
    /// GC unit: superblock, or block (partial GC).
    #[arg(long, default_value = "superblock")]
    gc_unit: String,
    /// GC policy: greedy (ssd-iq naive greedy), 2r-greedy, 2r-fifo (the SSD-iq reference's), sc-fifo, cost-benefit, cb-sepbit, fifo, random, k-greedy:K, window:W.
    #[arg(long, default_value = "greedy")]
    policy: String,
    /// Where GC copies go: shared (with host writes), separate, per-stream. Default: the policy's.
    #[arg(long)]
    gc_frontier: Option<String>,
    /// Host write streams (multi-stream / FDP handles).
    #[arg(long, default_value_t = 1)]
    streams: u16,
    /// Device write buffer as a fraction of capacity (e.g. 0.0002 = 0.02%); 0 = none.
    #[arg(long, default_value_t = 0.0)]
    write_buffer: f64,
    /// GC keeps at least this many free units.
    #[arg(long, default_value_t = 1)]
    min_free_units: u32,
    /// Zoned (ZNS) device: zones = GC units, sequential writes per zone, no device GC.
    #[arg(long)]
    zns: bool,
    /// Zoned device: max open zones.
    #[arg(long, default_value_t = 14)]
    max_open_zones: u32,
    #[command(flatten)]
    scheme: SchemeFlags,
}

/// Placement scheme, GC trigger and victims per round (issue 10).
#[derive(Args, Debug, Clone)]
struct SchemeFlags {
    /// Placement scheme: nosep, sepgc, dac[:N], sfr[:N], multiqueue[:N], warcip[:N],
    /// sepbit[:N], fk[:N], fk-kmeans[:N], midas (N = classes, default 6). Default: streams.
    #[arg(long, value_name = "SCHEME", value_parser = parse_placement)]
    placement: Option<PlacementKind>,
    /// When GC runs: free (free-unit watermark, a fixed-capacity SSD) or gp[:THETA] (SepBIT's
    /// log grows until its garbage proportion exceeds THETA, default 0.15).
    #[arg(long, value_name = "TRIGGER", default_value = "free", value_parser = parse_trigger)]
    gc_trigger: GcTrigger,
    /// Victims collected per GC round.
    #[arg(long, value_name = "K", default_value = "1", value_parser = parse_victims)]
    victims_per_round: u32,
}

fn parse_placement(s: &str) -> Result<PlacementKind, String> {
    s.parse()
        .map_err(|e: nowa_flash::PlacementError| e.to_string())
}

fn parse_trigger(s: &str) -> Result<GcTrigger, String> {
    match s.trim().split_once(':') {
        _ if s.trim() == "free" => Ok(GcTrigger::FreeUnits),
        _ if s.trim() == "gp" => Ok(GcTrigger::GarbageProportion(0.15)),
        Some(("gp", t)) => nowa_units::parse_fraction_in(t, 0.0, 1.0, true)
            .map_err(|e| e.to_string())
            .and_then(|t| {
                (t > 0.0)
                    .then_some(GcTrigger::GarbageProportion(t))
                    .ok_or_else(|| format!("'{s}': the threshold must be > 0"))
            }),
        _ => Err(format!(
            "'{s}' is not a GC trigger (expected free, gp or gp:THETA)"
        )),
    }
}

fn parse_victims(s: &str) -> Result<u32, String> {
    nowa_units::parse_count_in(s, 1, 1024)
        .map(|k| u32::try_from(k).unwrap_or(1024))
        .map_err(|e| e.to_string())
}

/// Put the scheme flags into the device configuration.
fn apply_scheme(dev: &DeviceFlags, ftl: &mut FtlConfig) -> Result<()> {
    ftl.placement = dev.scheme.placement;
    ftl.gc_trigger = dev.scheme.gc_trigger;
    ftl.victims_per_round = dev.scheme.victims_per_round;
    ftl.layout().map_err(|e| usage(e.to_string()))?;
    Ok(())
}

#[derive(Args, Debug, Clone)]
struct RunFlags {
    /// Workload: uniform | two-zone:X/Y | zipf:THETA | zipf-shift:THETA[:PERIOD] | read-only:F | sequential | zns:ZONE_PAGES:FRONTS[:CHUNK]
    #[arg(long, default_value = "uniform")]
    workload: String,
    /// Fraction of the logical space in use (0 < fill <= 1).
    #[arg(long, default_value_t = 1.0)]
    fill: f64,
    /// Warm-up writes before measuring, in multiples of the logical capacity.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Measured writes, in multiples of the logical capacity.
    #[arg(long, default_value_t = 2.0)]
    volume: f64,
    /// Reporting interval, in multiples of the logical capacity.
    #[arg(long, default_value_t = 0.1)]
    interval: f64,
    /// Skip the sequential fill of the in-use pages.
    #[arg(long)]
    no_precondition: bool,
    /// Stream assignment: single, or hot-cold (two-zone only, needs --streams >= 2).
    #[arg(long, default_value = "single")]
    stream_assign: String,
    /// Seed of the workload and of randomized policies.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// Parse "8GiB", "64G", "512MiB", "4096" into bytes.
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| usage(format!("invalid size '{s}' (examples: 8GiB, 512MiB, 4096)")))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(usage(format!(
                "invalid size unit in '{s}' (use KiB, MiB, GiB, TiB)"
            )))
        }
    };
    let bytes = v * mult as f64;
    if bytes.is_nan() || bytes < 1.0 || !bytes.is_finite() {
        return Err(usage(format!("size must be > 0, got '{s}'")));
    }
    Ok(bytes as u64)
}

/// Parse "7%", "0.07" into a fraction.
fn parse_frac(s: &str, what: &str) -> Result<f64> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| usage(format!("invalid {what} '{s}' (examples: 7%, 0.07)")))?;
    if !v.is_finite() || v < 0.0 {
        return Err(usage(format!("{what} must be >= 0, got '{s}'")));
    }
    Ok(v)
}

fn build_spec(dev: &DeviceFlags, run: &RunFlags) -> Result<SimSpec> {
    let bytes = parse_size(&dev.capacity)?;
    let logical_pages = bytes / 4096;
    if logical_pages == 0 {
        return Err(usage(format!(
            "capacity {} is smaller than one 4 KiB page",
            dev.capacity
        )));
    }
    let op = match &dev.op_physical {
        Some(p) => {
            let p = parse_frac(p, "--op-physical")?;
            if p >= 1.0 {
                return Err(usage("--op-physical must be < 1"));
            }
            p / (1.0 - p)
        }
        None => parse_frac(&dev.op, "--op")?,
    };
    let policy: PolicyKind = dev
        .policy
        .parse()
        .map_err(|e: nowa_flash::PolicyParseError| usage(e.to_string()))?;
    let gc_frontier = dev
        .gc_frontier
        .as_deref()
        .map(str::parse::<GcFrontier>)
        .transpose()
        .map_err(|e| usage(e.to_string()))?;
    let gc_unit = match dev.gc_unit.as_str() {
        "superblock" => GcUnit::Superblock,
        "block" => GcUnit::Block,
        o => {
            return Err(usage(format!(
                "unknown GC unit '{o}' (expected superblock or block)"
            )))
        }
    };
    if !(run.fill > 0.0 && run.fill <= 1.0) {
        return Err(usage(format!("--fill must be in (0, 1], got {}", run.fill)));
    }
    if !(0.0..1.0).contains(&dev.write_buffer) {
        return Err(usage(format!(
            "--write-buffer must be a fraction in [0, 1), got {}",
            dev.write_buffer
        )));
    }
    let workload: WorkloadSpec = run
        .workload
        .parse()
        .map_err(|e: nowa_workload::WorkloadError| usage(e.to_string()))?;
    let streams: StreamAssign = run.stream_assign.parse().map_err(usage)?;
    let ftl = FtlConfig {
        logical_pages,
        op,
        pages_per_block: dev.pages_per_block,
        blocks_per_superblock: match (dev.channels, dev.chips, dev.planes) {
            (None, None, None) => dev.blocks_per_superblock,
            (c, d, p) => c.unwrap_or(1) * d.unwrap_or(1) * p.unwrap_or(1),
        },
        gc_unit,
        policy,
        gc_frontier,
        streams: dev.streams,
        write_buffer_pages: (logical_pages as f64 * dev.write_buffer).round() as u64,
        min_free_units: dev.min_free_units,
        mode: if dev.zns {
            Mode::Zoned {
                max_open_zones: dev.max_open_zones,
            }
        } else {
            Mode::Conventional
        },
        ..FtlConfig::default()
    };
    // Validate the geometry now so bad input fails before any work.
    ftl.layout().map_err(|e| usage(e.to_string()))?;
    Ok(SimSpec {
        ftl,
        workload,
        fill: run.fill,
        warmup: run.warmup,
        volume: run.volume,
        interval: run.interval,
        precondition: !run.no_precondition,
        streams,
        seed: run.seed,
    })
}

/// Errors caused by the configuration are usage errors (exit 2); the rest are failures.
fn classify(e: SimError) -> anyhow::Error {
    match e {
        SimError::Flash(FlashError::Config(m)) => usage(m.to_string()),
        SimError::Flash(f) => anyhow::Error::new(f).context("simulation failed"),
        other => usage(other.to_string()),
    }
}

fn bar(total: u64, quiet: bool, what: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:40}] {percent}% eta {eta}")
            .unwrap()
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

pub fn run(a: SimArgs) -> Result<()> {
    if let Some(SimSub::Sweep(s)) = a.sub {
        return run_sweep(*s);
    }
    let mut dev = a.dev.clone();
    let mut runf = a.run.clone();
    if a.bench || a.bench_schemes {
        dev.capacity = "64GiB".into();
        dev.pages_per_block = 256;
        dev.blocks_per_superblock = 8;
        dev.policy = "greedy".into();
        runf.workload = "uniform".into();
        runf.fill = 0.9;
        runf.warmup = runf.warmup.min(1.0);
        runf.volume = runf.volume.min(2.0);
    }
    let mut spec = build_spec(&dev, &runf)?;
    apply_scheme(&dev, &mut spec.ftl)?;
    // The speed benchmark measures the FTL as it always did: without FAR bookkeeping.
    spec.ftl.track_far = !a.bench;
    if a.bench_schemes {
        return run_bench_schemes(&spec, runf.quiet);
    }
    eprintln!(
        "nowa sim: seed {}, {} on {} ({} OP spare/logical {:.2}%), policy {}",
        spec.seed,
        spec.workload,
        dev.capacity,
        if dev.zns { "zoned," } else { "" },
        spec.ftl.op * 100.0,
        spec.ftl.policy
    );
    let pb = bar(1000, runf.quiet, "simulating");
    let progress = |done: u64, total: u64| pb.set_position(done * 1000 / total.max(1));
    let r = sim::run(&spec, Some(&progress)).map_err(classify)?;
    pb.finish_and_clear();
    if let Some(path) = &a.csv {
        sim::write_intervals_csv(&r, path)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &a.victims_csv {
        sim::write_victims_csv(&r, path).with_context(|| format!("writing {}", path.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", sim::summary(&r));
        if a.bench {
            println!(
                "bench     {:.2} M host page writes/s (uniform, greedy, 64 GiB, fill 0.9, 8 MiB units, one core)",
                r.sim_writes_per_sec / 1e6
            );
        }
        if let Some(path) = &a.csv {
            println!("intervals written to {}", path.display());
        }
        if let Some(path) = &a.victims_csv {
            println!("victim valid ratios written to {}", path.display());
        }
    }
    Ok(())
}

fn run_sweep(s: SweepArgs) -> Result<()> {
    let figures: Vec<sweep::Figure> = if s.all {
        vec![
            sweep::Figure::Fig3b,
            sweep::Figure::Fig4b,
            sweep::Figure::Fig7a,
        ]
    } else {
        vec![s
            .figure
            .as_deref()
            .unwrap_or_default()
            .parse()
            .map_err(usage)?]
    };
    let mut base = build_spec(&s.dev, &s.run)?;
    apply_scheme(&s.dev, &mut base.ftl)?;
    if let Some(t) = s.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t.max(1))
            .build_global()
            .ok();
    }
    std::fs::create_dir_all(&s.out_dir)
        .with_context(|| format!("creating {}", s.out_dir.display()))?;
    eprintln!(
        "nowa sim sweep: seed {}, device {} , OP {:.2}% spare/logical",
        base.seed,
        s.dev.capacity,
        base.ftl.op * 100.0
    );
    for fig in figures {
        let points = sweep::figure_points(fig, &base);
        for p in &points {
            p.spec.ftl.layout().map_err(|e| usage(e.to_string()))?;
        }
        let pb = bar(points.len() as u64, s.run.quiet, &format!("{fig:?}"));
        let results =
            sweep::run_points(&points, &|d, _| pb.set_position(d as u64)).map_err(classify)?;
        pb.finish_and_clear();
        let sw = sweep::figure_sweep(fig, &points, &results);
        let stem = format!("sim-{}", format!("{fig:?}").to_ascii_lowercase());
        let csv = s.out_dir.join(format!("{stem}.csv"));
        sweep::write_csv(&sw.rows, &csv).with_context(|| format!("writing {}", csv.display()))?;
        for ext in ["png", "svg"] {
            let p = s.out_dir.join(format!("{stem}.{ext}"));
            sweep::write_plot(&sw, &p)
                .map_err(|e| anyhow::anyhow!("plotting {}: {e}", p.display()))?;
        }
        println!("{}", sw.chart.title);
        println!("{:<28} {:>8} {:>8} {:>8}", "series", "x", "WAF", "y");
        for r in &sw.rows {
            println!("{:<28} {:>8.3} {:>8.3} {:>8.3}", r.series, r.x, r.waf, r.y);
        }
        println!("wrote {}, {stem}.png, {stem}.svg\n", csv.display());
    }
    Ok(())
}

/// `nowa sim --bench-schemes`: the cost of every scheme, one after the other on this thread.
fn run_bench_schemes(spec: &SimSpec, quiet: bool) -> Result<()> {
    eprintln!(
        "nowa sim --bench-schemes: seed {}, {} logical pages, {} per run",
        spec.seed, spec.ftl.logical_pages, spec.workload
    );
    let progress = |i: usize, n: usize, name: &str| {
        if !quiet {
            eprintln!("[{}/{n}] {name}", i + 1);
        }
    };
    let rows = sim::schemes::bench_schemes(spec, &progress).map_err(classify)?;
    print!("{}", sim::schemes::table(&rows));
    Ok(())
}
