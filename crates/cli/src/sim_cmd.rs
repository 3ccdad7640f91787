//! `nowa sim` and `nowa sim sweep`: flags, validation, progress, output.

use crate::flags::{self, MAX_THREADS};
use crate::resources::{check_memory, check_output_file, create_output_dir, ftl_bytes};
use crate::{interrupted, usage};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use nowa_bench::sim::{self, sweep, SimError, SimResult, SimSpec, StreamAssign};
use nowa_flash::{
    FlashError, FtlConfig, GcFrontier, GcTrigger, GcUnit, Mode, PlacementKind, PolicyKind,
};
use nowa_units::Bytes;
use nowa_workload::WorkloadSpec;
use std::path::PathBuf;

/// The flags `--bench` fixes (clap refuses them beside it).
const BENCH_FIXES: [&str; 9] = [
    "capacity",
    "pages_per_block",
    "blocks_per_superblock",
    "channels",
    "chips",
    "planes",
    "policy",
    "workload",
    "fill",
];

/// The largest simulated device: the FTL model maps at most 2^32 - 1 physical 4 KiB pages.
const MAX_CAPACITY: u64 = 16 << 40;
/// The largest warm-up, volume or interval, in multiples of the logical capacity.
const MAX_VOLUME: f64 = 10_000.0;
/// The most reporting intervals a run keeps.
const MAX_INTERVALS: f64 = 100_000.0;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SimArgs {
    #[command(subcommand)]
    sub: Option<SimSub>,
    #[command(flatten)]
    dev: DeviceFlags,
    #[command(flatten)]
    run: RunFlags,
    #[command(flatten)]
    trace: Box<crate::trace_cmd::SimTraceFlags>,
    /// Print the result as JSON (stdout) instead of the summary.
    #[arg(long)]
    json: bool,
    /// Write the per-interval time series (WAF over time) to this CSV file.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Speed benchmark: fixes the device and workload (64 GiB logical = 2^24 pages, 256-page
    /// blocks, 8 per superblock = 8 MiB GC units, greedy, uniform, fill 0.9; those flags are
    /// refused with it), runs without FAR counts, and prints host page writes per CPU second
    /// of the measured phase. Every other flag (--op, --seed, --warmup, --volume...) applies.
    #[arg(long, conflicts_with_all = BENCH_FIXES)]
    bench: bool,
    /// The cost of every placement scheme and victim policy on the device and workload the
    /// flags give (each row sets its own --placement and --policy): host page writes per CPU
    /// second of the measured phase, with FAR counts, as a table.
    #[arg(long, conflicts_with_all = ["bench", "placement", "policy"])]
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
    #[arg(long, value_name = "FIG", required_unless_present = "all",
          value_parser = flags::parsed::<sweep::Figure>())]
    figure: Option<sweep::Figure>,
    /// Run all figures.
    #[arg(long)]
    all: bool,
    /// Output directory for sim-<figure>.csv, .png and .svg.
    #[arg(long, alias = "out-dir", value_name = "DIR", default_value = ".")]
    out: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = flags::count::<usize>(1, MAX_THREADS))]
    threads: Option<usize>,
    #[command(flatten)]
    dev: DeviceFlags,
    #[command(flatten)]
    run: RunFlags,
}

/// The simulated SSD's flags, shared with `nowa vssd serve` (one parser for both).
#[derive(Args, Debug, Clone)]
pub(crate) struct DeviceFlags {
    /// Logical capacity (8GiB, 512MiB, 2TiB; 1GB = 10^9 bytes).
    #[arg(long, default_value = "8GiB", value_parser = flags::size(4096, MAX_CAPACITY))]
    pub(crate) capacity: u64,
    /// Over-provisioning as spare/logical (0.07 or 7%): physical = logical x (1 + OP).
    #[arg(long, default_value = "7%", conflicts_with = "op_physical",
          value_parser = flags::fraction(0.0, false, 1.0, false))]
    op: f64,
    /// Over-provisioning as spare/physical (the ssd-iq simulator's 1 - ssdfill).
    #[arg(long, value_parser = flags::fraction(0.0, false, 1.0, true))]
    op_physical: Option<f64>,
    /// Flash pages (4 KiB) per erase block.
    #[arg(long, default_value = "256", value_parser = flags::count::<u32>(1, 1 << 16))]
    pages_per_block: u32,
    /// Erase blocks per superblock (channels x chips x planes).
    #[arg(long, default_value = "8", conflicts_with_all = ["channels", "chips", "planes"],
          value_parser = flags::count::<u32>(1, 1 << 16))]
    blocks_per_superblock: u32,
    /// Flash channels (with --chips and --planes: blocks per superblock = their product).
    #[arg(long, value_parser = flags::count::<u32>(1, 1 << 16))]
    channels: Option<u32>,
    /// Chips (dies) per channel.
    #[arg(long, value_parser = flags::count::<u32>(1, 1 << 16))]
    chips: Option<u32>,
    /// Planes per chip.
    #[arg(long, value_parser = flags::count::<u32>(1, 1 << 16))]
    planes: Option<u32>,
    /// GC unit: superblock, or block (partial GC).
    #[arg(long, default_value = "superblock", value_parser = gc_unit)]
    gc_unit: GcUnit,
    /// GC policy: greedy (ssd-iq naive greedy), 2r-greedy, 2r-fifo (the SSD-iq reference's), sc-fifo, cost-benefit, cb-sepbit, fifo, random, k-greedy:K, window:W.
    #[arg(long, default_value = "greedy", value_parser = flags::parsed::<PolicyKind>())]
    policy: PolicyKind,
    /// Where GC copies go: shared (with host writes), separate, per-stream. Default: the policy's.
    #[arg(long, value_parser = flags::parsed::<GcFrontier>())]
    pub(crate) gc_frontier: Option<GcFrontier>,
    /// Host write streams (multi-stream / FDP handles).
    #[arg(long, default_value = "1", value_parser = flags::count::<u16>(1, 4096))]
    streams: u16,
    /// Device write buffer as a fraction of capacity (0.0002 or 0.02%); 0 = none.
    #[arg(long, default_value = "0", value_parser = flags::fraction(0.0, false, 1.0, true))]
    write_buffer: f64,
    /// GC keeps at least this many free units.
    #[arg(long, default_value = "1", value_parser = flags::count::<u32>(1, 1 << 20))]
    min_free_units: u32,
    /// Zoned (ZNS) device: zones = GC units, sequential writes per zone, no device GC; needs
    /// a zns:... workload.
    #[arg(long)]
    pub(crate) zns: bool,
    /// Zoned device: max open zones.
    #[arg(long, default_value = "14", value_parser = flags::count::<u32>(1, 1 << 16))]
    max_open_zones: u32,
    #[command(flatten)]
    scheme: SchemeFlags,
}

/// Placement scheme, GC trigger and victims per round (issue 10).
#[derive(Args, Debug, Clone)]
struct SchemeFlags {
    /// Placement scheme: nosep, sepgc, dac[:N], sfr[:N], multiqueue[:N], warcip[:N],
    /// sepbit[:N], fk[:N], fk-kmeans[:N], midas (N = classes, default 6). Default: streams.
    #[arg(long, value_name = "SCHEME", value_parser = flags::parsed::<PlacementKind>())]
    placement: Option<PlacementKind>,
    /// When GC runs: free (free-unit watermark, a fixed-capacity SSD) or gp[:THETA] (SepBIT's
    /// log grows until its garbage proportion exceeds THETA, default 0.15).
    #[arg(long, value_name = "TRIGGER", default_value = "free", value_parser = parse_trigger)]
    gc_trigger: GcTrigger,
    /// Victims collected per GC round.
    #[arg(long, value_name = "K", default_value = "1", value_parser = flags::count::<u32>(1, 1024))]
    victims_per_round: u32,
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

/// Put the scheme flags into the device configuration.
pub(crate) fn apply_scheme(dev: &DeviceFlags, ftl: &mut FtlConfig) -> Result<()> {
    ftl.placement = dev.scheme.placement;
    ftl.gc_trigger = dev.scheme.gc_trigger;
    ftl.victims_per_round = dev.scheme.victims_per_round;
    ftl.layout().map_err(|e| usage(e.to_string()))?;
    Ok(())
}

fn gc_unit(s: &str) -> Result<GcUnit, String> {
    match s {
        "superblock" => Ok(GcUnit::Superblock),
        "block" => Ok(GcUnit::Block),
        o => Err(format!(
            "unknown GC unit '{o}' (expected superblock or block)"
        )),
    }
}

#[derive(Args, Debug, Clone)]
struct RunFlags {
    /// Workload: uniform | two-zone:X/Y | zipf:THETA | zipf-shift:THETA[:PERIOD] | read-only:F | sequential | zns:ZONE_PAGES:FRONTS[:CHUNK]
    #[arg(long, default_value = "uniform", value_parser = flags::parsed::<WorkloadSpec>())]
    workload: WorkloadSpec,
    /// Fraction of the logical space in use (0 < fill <= 1; 0.9 or 90%).
    #[arg(long, default_value = "1", value_parser = flags::fraction(0.0, true, 1.0, false))]
    fill: f64,
    /// Warm-up writes before measuring, in multiples of the logical capacity.
    #[arg(long, default_value = "2", value_parser = flags::number(0.0, false, MAX_VOLUME))]
    warmup: f64,
    /// Measured writes, in multiples of the logical capacity.
    #[arg(long, default_value = "2", value_parser = flags::number(0.0, true, MAX_VOLUME))]
    volume: f64,
    /// Reporting interval, in multiples of the logical capacity.
    #[arg(long, default_value = "0.1", value_parser = flags::number(0.0, true, MAX_VOLUME))]
    interval: f64,
    /// Skip the sequential fill of the in-use pages.
    #[arg(long)]
    no_precondition: bool,
    /// Stream assignment: single, or hot-cold (two-zone only, needs --streams >= 2).
    #[arg(long, default_value = "single", value_parser = flags::parsed::<StreamAssign>())]
    stream_assign: StreamAssign,
    /// Seed of the workload and of randomized policies.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// Blocks per superblock from `--blocks-per-superblock` or channels x chips x planes.
fn blocks_per_superblock(dev: &DeviceFlags) -> Result<u32> {
    match (dev.channels, dev.chips, dev.planes) {
        (None, None, None) => Ok(dev.blocks_per_superblock),
        (c, d, p) => c
            .unwrap_or(1)
            .checked_mul(d.unwrap_or(1))
            .and_then(|x| x.checked_mul(p.unwrap_or(1)))
            .ok_or_else(|| usage("--channels x --chips x --planes does not fit 32 bits"))
            .inspect(|&b| assert!(b >= 1, "each factor parses to at least 1")),
    }
}

pub(crate) fn ftl_config(dev: &DeviceFlags, seed: u64) -> Result<FtlConfig> {
    let logical_pages = dev.capacity / 4096;
    assert!(logical_pages >= 1, "--capacity parses to at least one page");
    let op = dev.op_physical.map_or(dev.op, |p| p / (1.0 - p));
    let ftl = FtlConfig {
        logical_pages,
        op,
        pages_per_block: dev.pages_per_block,
        blocks_per_superblock: blocks_per_superblock(dev)?,
        gc_unit: dev.gc_unit,
        policy: dev.policy.clone(),
        gc_frontier: dev.gc_frontier,
        streams: dev.streams,
        write_buffer_pages: nowa_bench::round_u64(logical_pages as f64 * dev.write_buffer),
        min_free_units: dev.min_free_units,
        mode: if dev.zns {
            Mode::Zoned {
                max_open_zones: dev.max_open_zones,
            }
        } else {
            Mode::Conventional
        },
        seed,
        ..FtlConfig::default()
    };
    Ok(ftl)
}

/// Flags that only work together: a zoned device with a zoned workload, the hot-cold stream
/// assignment with a two-zone workload on two streams or more.
fn check_modes(ftl: &FtlConfig, run: &RunFlags) -> Result<()> {
    if matches!(ftl.mode, Mode::Zoned { .. }) && !matches!(run.workload, WorkloadSpec::Zns { .. }) {
        return Err(usage(format!(
            "--zns needs a zoned workload (--workload zns:ZONE_PAGES:FRONTS), not '{}': a zoned device refuses writes that are not sequential per zone",
            run.workload
        )));
    }
    if run.stream_assign == StreamAssign::HotCold {
        if !matches!(run.workload, WorkloadSpec::TwoZone { .. }) {
            return Err(usage(format!(
                "--stream-assign hot-cold needs a two-zone workload (--workload two-zone:X/Y), not '{}'",
                run.workload
            )));
        }
        if ftl.streams < 2 {
            return Err(usage("--stream-assign hot-cold needs --streams >= 2"));
        }
    }
    Ok(())
}

/// Checks what depends on several flags at once: the device geometry, ZNS vs the workload,
/// the interval vs the device and the volume, and the memory the FTL model needs.
/// `parallel` runs at once (a sweep) each hold their own model.
fn check_run(ftl: &FtlConfig, run: &RunFlags, parallel: u64) -> Result<()> {
    // Validate the geometry now so bad input fails before any work (layout() allocates
    // nothing).
    let l = ftl.layout().map_err(|e| {
        usage(format!(
            "device geometry (--capacity, --op, --pages-per-block, --blocks-per-superblock): {e}"
        ))
    })?;
    check_modes(ftl, run)?;
    let pages = l.logical_pages as f64;
    if (run.interval * pages).round() < 1.0 {
        return Err(usage(format!(
            "--interval {}: less than one 4 KiB page of this device",
            run.interval
        )));
    }
    if run.volume / run.interval > MAX_INTERVALS {
        return Err(usage(format!(
            "--interval {}: --volume / --interval = {:.0} intervals, at most {MAX_INTERVALS}",
            run.interval,
            run.volume / run.interval
        )));
    }
    let units = u64::from(l.units);
    let maps = ftl_bytes(l.logical_pages, l.physical_pages, units);
    let buffer = ftl.write_buffer_pages.saturating_mul(48);
    check_memory(&[
        ("--capacity", "page maps", maps.saturating_mul(parallel)),
        (
            "--write-buffer",
            "write buffer",
            buffer.saturating_mul(parallel),
        ),
    ])
}

fn build_spec(dev: &DeviceFlags, run: &RunFlags, parallel: u64) -> Result<SimSpec> {
    let ftl = ftl_config(dev, run.seed)?;
    check_run(&ftl, run, parallel)?;
    Ok(SimSpec {
        ftl,
        workload: run.workload.clone(),
        fill: run.fill,
        warmup: run.warmup,
        volume: run.volume,
        interval: run.interval,
        precondition: !run.no_precondition,
        streams: run.stream_assign,
        seed: run.seed,
    })
}

/// Errors caused by the configuration are usage errors (exit 2); the rest are failures.
fn classify(e: SimError) -> anyhow::Error {
    match e {
        SimError::Workload(w) => usage(format!("--workload: {w}")),
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
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {msg} [{bar:40}] {percent}% eta {eta}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}

/// `nowa sim`: one simulation (or `sim sweep`).
pub fn run(a: SimArgs) -> Result<()> {
    if let Some(SimSub::Sweep(s)) = a.sub {
        return run_sweep(*s);
    }
    let mut dev = a.dev.clone();
    let mut runf = a.run.clone();
    if a.bench {
        // The flags in BENCH_FIXES: clap refused them, so these replace only defaults.
        dev.capacity = 64 << 30;
        dev.pages_per_block = 256;
        dev.blocks_per_superblock = 8;
        dev.policy = PolicyKind::Greedy;
        runf.workload = WorkloadSpec::Uniform;
        runf.fill = 0.9;
    }
    let mut spec = build_spec(&dev, &runf, 1)?;
    apply_scheme(&dev, &mut spec.ftl)?;
    // The speed benchmark measures the plain path: without FAR bookkeeping.
    spec.ftl.track_far = !a.bench;
    if a.bench_schemes {
        return run_bench_schemes(&spec, runf.quiet);
    }
    check_output_file("--csv", a.csv.as_deref())?;
    check_output_file("--victims-csv", a.victims_csv.as_deref())?;
    nowa_bench::interrupt::install_sigint_handler();
    if a.trace.is_set() {
        return crate::trace_cmd::run_sim_trace(
            &a.trace,
            spec,
            a.json,
            a.csv.as_deref(),
            runf.quiet,
        );
    }
    eprintln!(
        "nowa sim: seed {}, {} on {} ({}OP spare/logical {:.2}%), policy {}",
        spec.seed,
        spec.workload,
        Bytes(dev.capacity),
        if dev.zns { "zoned, " } else { "" },
        spec.ftl.op * 100.0,
        spec.ftl.policy
    );
    let pb = bar(1000, runf.quiet, "simulating");
    let progress = |done: u64, total: u64| pb.set_position(done * 1000 / total.max(1));
    let r = sim::run(&spec, Some(&progress)).map_err(classify)?;
    pb.finish_and_clear();
    output(&a, &r)?;
    if nowa_bench::interrupt::requested() {
        return Err(interrupted(format!(
            "{} of {} measured intervals ran; the results above cover them",
            r.intervals.len(),
            (spec.volume / spec.interval).ceil()
        )));
    }
    Ok(())
}

/// Writes the CSV and prints the summary or the JSON.
fn output(a: &SimArgs, r: &SimResult) -> Result<()> {
    if let Some(path) = &a.csv {
        sim::write_intervals_csv(r, path).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &a.victims_csv {
        sim::write_victims_csv(r, path).with_context(|| format!("writing {}", path.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(r)?);
        return Ok(());
    }
    print!("{}", sim::summary(r));
    if a.bench {
        println!(
            "bench     {:.2} M host page writes per CPU second of the measured phase (uniform, greedy, 64 GiB, fill 0.9, 8 MiB units, FAR off, one thread)",
            r.sim_writes_per_cpu_sec / 1e6
        );
    }
    if let Some(path) = &a.csv {
        println!("intervals written to {}", path.display());
    }
    if let Some(path) = &a.victims_csv {
        println!("victim valid ratios written to {}", path.display());
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
        s.figure.into_iter().collect()
    };
    let parallel = s.threads.unwrap_or_else(rayon::current_num_threads) as u64;
    let mut base = build_spec(&s.dev, &s.run, parallel)?;
    apply_scheme(&s.dev, &mut base.ftl)?;
    if let Some(t) = s.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .context("starting the worker threads")?;
    }
    create_output_dir("--out", &s.out)?;
    eprintln!(
        "nowa sim sweep: seed {}, device {}, OP {:.2}% spare/logical",
        base.seed,
        Bytes(s.dev.capacity),
        base.ftl.op * 100.0
    );
    for fig in figures {
        sweep_figure(fig, &base, &s)?;
    }
    Ok(())
}

fn sweep_figure(fig: sweep::Figure, base: &SimSpec, s: &SweepArgs) -> Result<()> {
    let points = sweep::figure_points(fig, base);
    for p in &points {
        p.spec.ftl.layout().map_err(|e| {
            usage(format!(
                "device geometry of a {fig:?} point (--capacity, --pages-per-block, --blocks-per-superblock): {e}"
            ))
        })?;
    }
    let pb = bar(points.len() as u64, s.run.quiet, &format!("{fig:?}"));
    let results =
        sweep::run_points(&points, &|d, _| pb.set_position(d as u64)).map_err(classify)?;
    pb.finish_and_clear();
    let sw = sweep::figure_sweep(fig, &points, &results);
    let stem = format!("sim-{}", format!("{fig:?}").to_ascii_lowercase());
    let csv = s.out.join(format!("{stem}.csv"));
    sweep::write_csv(&sw.rows, &csv).with_context(|| format!("writing {}", csv.display()))?;
    for ext in ["png", "svg"] {
        let p = s.out.join(format!("{stem}.{ext}"));
        sweep::write_plot(&sw, &p).map_err(|e| anyhow::anyhow!("plotting {}: {e}", p.display()))?;
    }
    println!("{}", sw.chart.title);
    println!("{:<28} {:>8} {:>8} {:>8}", "series", "x", "WAF", "y");
    for r in &sw.rows {
        println!("{:<28} {:>8.3} {:>8.3} {:>8.3}", r.series, r.x, r.waf, r.y);
    }
    println!("wrote {}, {stem}.png, {stem}.svg\n", csv.display());
    Ok(())
}

/// `nowa sim --bench-schemes`: the cost of every scheme, one after the other on this thread.
fn run_bench_schemes(spec: &SimSpec, quiet: bool) -> Result<()> {
    eprintln!(
        "nowa sim --bench-schemes: seed {}, {} logical pages, fill {}, {} per run, policy and placement per row, FAR on",
        spec.seed, spec.ftl.logical_pages, spec.fill, spec.workload
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
