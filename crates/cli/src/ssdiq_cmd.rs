//! `nowa ssdiq` flags: the SSD-iq suite on a block device, a file or a simulated SSD, and
//! `nowa ssdiq report` to put several results side by side. Every flag is parsed and checked
//! by clap with nowa-units' parsers (sizes, fractions, seconds): a bad value is a one-line
//! error naming the flag, exit code 2.
use crate::device_open::open_error;
use crate::usage;
use clap::{Args, Subcommand, ValueEnum};
use nowa_bench::plot::{render_bar, BarChart};
use nowa_bench::ssdiq::{
    self, report, Engine, OpenOpts, PerfModel, PlanStep, SimSpec, SsdiqResult, Steps, SuiteConfig,
    Target, TargetInfo,
};
use nowa_device::{OpenError, Verdict};
use nowa_workload::WorkloadSpec;
use std::path::{Path, PathBuf};

/// I/O engine of a real target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EngineArg {
    /// io_uring, --qd I/Os in flight per thread.
    #[value(alias = "io_uring")]
    Uring,
    /// pread/pwrite, one I/O in flight per thread.
    #[value(alias = "sync")]
    Psync,
}

/// Plot file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PlotFormat {
    Png,
    Svg,
}

fn unit<T>(r: Result<T, nowa_units::UnitError>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

/// A block size: a multiple of 4 KiB up to 64 MiB.
fn block_size(s: &str) -> Result<u32, String> {
    let v = unit(nowa_units::parse_size_in(s, 4096, 64 << 20))?;
    if v % 4096 != 0 {
        return Err(format!("'{s}' is not a multiple of 4096 bytes"));
    }
    u32::try_from(v).map_err(|_| format!("'{s}' is too large"))
}

fn fraction_open0(s: &str) -> Result<f64, String> {
    let v = unit(nowa_units::parse_fraction(s))?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(format!("'{s}' must be > 0"))
    }
}

fn seconds_pos(s: &str) -> Result<f64, String> {
    let v = unit(nowa_units::parse_seconds(s))?;
    if v > 0.0 && v <= 1e7 {
        Ok(v)
    } else {
        Err(format!("'{s}' must be > 0 and at most 10^7 seconds"))
    }
}

/// A multiple of the capacity (warm-up may be 0).
fn capacities(s: &str) -> Result<f64, String> {
    unit(nowa_units::parse_number_in(s, 0.0, 1000.0))
}

fn capacities_pos(s: &str) -> Result<f64, String> {
    let v = capacities(s)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(format!("'{s}' must be > 0"))
    }
}

fn mb_per_s(s: &str) -> Result<f64, String> {
    let v = unit(nowa_units::parse_number_in(s, 0.0, 1e7))?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(format!("'{s}' must be > 0"))
    }
}

fn file_size(s: &str) -> Result<u64, String> {
    unit(nowa_units::parse_size_in(s, 1 << 20, 1 << 50))
}

/// Background loads of the latency sweep.
#[derive(Debug, Clone)]
struct Loads(Vec<f64>);

/// "none" or a comma-separated list of fractions in (0, 1].
fn sweep_loads(s: &str) -> Result<Loads, String> {
    if s == "none" {
        return Ok(Loads(Vec::new()));
    }
    s.split(',')
        .map(str::trim)
        .map(fraction_open0)
        .collect::<Result<_, _>>()
        .map(Loads)
}

/// Random-write workloads.
#[derive(Debug, Clone)]
struct Workloads(Vec<WorkloadSpec>);

fn workload_list(s: &str) -> Result<Workloads, String> {
    let list = s
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let w: WorkloadSpec = p.parse().map_err(|e| format!("'{p}': {e}"))?;
            if matches!(w, WorkloadSpec::Zns { .. }) {
                return Err(format!(
                    "'{p}' issues trims; ssdiq runs write-only workloads"
                ));
            }
            w.validate().map(|()| w).map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    if list.is_empty() {
        return Err("no workload given".into());
    }
    Ok(Workloads(list))
}

/// The sampling period: auto (None) or seconds.
#[derive(Debug, Clone, Copy)]
struct Interval(Option<f64>);

fn interval(s: &str) -> Result<Interval, String> {
    if s == "auto" {
        Ok(Interval(None))
    } else {
        seconds_pos(s).map(|v| Interval(Some(v)))
    }
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SsdiqArgs {
    #[command(subcommand)]
    sub: Option<SsdiqSub>,
    /// Target: a block device (/dev/nvme1n1), a regular file (created with --size if missing),
    /// or a simulated SSD: sim or sim:SIZE (e.g. sim:1GiB).
    target: Option<String>,
    /// Allow writing to this target although it is in use, holds data or is not a scratch
    /// target of an earlier run; must repeat the target path exactly.
    #[arg(long, value_name = "PATH")]
    force: Option<PathBuf>,
    /// Size of the file to create if the target does not exist (e.g. 4GiB; at least 1 MiB);
    /// for sim, the simulated capacity.
    #[arg(long, value_name = "SIZE", value_parser = file_size)]
    size: Option<u64>,
    /// List the steps (destructive ones marked) and exit without touching the target.
    #[arg(long)]
    dry_run: bool,
    /// Block size of random I/O (a multiple of 4 KiB up to 64 MiB).
    #[arg(long, default_value = "4k", value_name = "SIZE", value_parser = block_size)]
    bs: u32,
    /// Block size of sequential I/O.
    #[arg(long, default_value = "128k", value_name = "SIZE", value_parser = block_size)]
    seq_bs: u32,
    /// I/Os in flight per thread (io_uring), 1..=4096.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    qd: u32,
    /// Threads, one io_uring each, 1..=256.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: u32,
    /// I/O engine.
    #[arg(long, value_enum, default_value = "uring")]
    engine: EngineArg,
    /// Use buffered I/O instead of O_DIRECT (numbers then measure the page cache).
    #[arg(long)]
    no_direct: bool,
    /// Cap the throughput of every write phase (MB/s, 10^6 bytes).
    #[arg(long, value_name = "MB/S", value_parser = mb_per_s, allow_negative_numbers = true)]
    rate: Option<f64>,
    /// Fraction of the capacity initialized and used by the workloads, in (0, 1] (0.5 or 50%).
    #[arg(long, default_value = "1", value_parser = fraction_open0, allow_negative_numbers = true)]
    fill: f64,
    /// Random writes before each measured phase, in multiples of the capacity (0..=1000).
    #[arg(long, default_value = "1", value_parser = capacities, allow_negative_numbers = true)]
    warmup: f64,
    /// Measured random writes per workload, in multiples of the capacity (0..=1000, > 0).
    #[arg(long, default_value = "2", value_parser = capacities_pos, allow_negative_numbers = true)]
    volume: f64,
    /// Sequential / random read measurement (seconds, or 500ms, 2m).
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = seconds_pos, allow_negative_numbers = true)]
    read_time: f64,
    /// Each QD1 latency probe (read, then write).
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = seconds_pos, allow_negative_numbers = true)]
    lat_time: f64,
    /// Background write load of the latency probes, fraction of the random-write bandwidth.
    #[arg(long, default_value = "0.25", value_parser = fraction_open0, allow_negative_numbers = true)]
    bg_load: f64,
    /// Loads of the latency-vs-write-rate sweep (fractions), or "none".
    #[arg(long, default_value = "0.1,0.25,0.5,0.75,0.9", value_parser = sweep_loads)]
    sweep: Loads,
    /// Each probe at each sweep point.
    #[arg(long, default_value = "5", value_name = "SECS", value_parser = seconds_pos, allow_negative_numbers = true)]
    sweep_time: f64,
    /// Random-write workloads, comma-separated (same syntax as nowa sim).
    #[arg(long, default_value = "uniform,two-zone:80/20,zipf:0.8", value_parser = workload_list)]
    workloads: Workloads,
    /// Steps: all, or a list of seq-read, rand-read, rand-write, latency, sweep (the reset and
    /// the sequential initialization always run).
    #[arg(long, default_value = "all", value_parser = Steps::parse)]
    steps: Steps,
    /// Per-interval sampling period in seconds, or auto (capacity / 100 GB/s, between 0.1 and
    /// 1 s; simulated SSD: 1/10 of a sequential capacity write).
    #[arg(long, default_value = "auto", value_name = "SECS", value_parser = interval)]
    interval: Interval,
    /// Upper bound on each write phase, seconds.
    #[arg(long, value_name = "SECS", value_parser = seconds_pos, allow_negative_numbers = true)]
    max_time: Option<f64>,
    /// Seed of the random-write workloads' offsets (printed in the report; the same seed
    /// gives the same access sequence).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Reset with NVMe sanitize (block erase) instead of a discard. Slow; NVMe devices only.
    #[arg(long)]
    sanitize: bool,
    /// Simulated SSD: over-provisioning as spare/logical, in (0, 1] (0.07 or 7%).
    #[arg(long, default_value = "0.07", value_parser = fraction_open0, allow_negative_numbers = true)]
    sim_op: f64,
    /// Simulated SSD: GC policy (greedy, 2r-greedy, 2r-fifo, cost-benefit, fifo, ...).
    #[arg(long, default_value = "greedy")]
    sim_policy: String,
    /// Simulated SSD: media write bandwidth, MB/s.
    #[arg(long, default_value = "2000", value_parser = mb_per_s, allow_negative_numbers = true)]
    sim_media_mbps: f64,
    /// Simulated SSD: media read bandwidth, MB/s.
    #[arg(long, default_value = "3200", value_parser = mb_per_s, allow_negative_numbers = true)]
    sim_read_mbps: f64,
    /// Simulated SSD timing: bandwidth (one media server at --sim-media-mbps / --sim-read-mbps)
    /// or femu / mqsim (8 channels x 8 chips of 4 KiB pages with those simulators' latencies).
    #[arg(long, value_enum, default_value = "bandwidth")]
    sim_timing: crate::flags::SimTiming,
    /// Simulated SSD: GC unit in pages (0 = automatic, 1 MiB).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1 << 20))]
    sim_unit_pages: u32,
    /// Print the full result as JSON on stdout instead of the text report.
    #[arg(long)]
    json: bool,
    /// Directory for ssdiq.json, intervals.csv and the plots.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Plot formats, comma-separated: png, svg.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "png,svg")]
    plot_format: Vec<PlotFormat>,
    /// No progress lines on stderr.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum SsdiqSub {
    /// Put the results of several devices side by side (Table 2/3 style).
    Report(ReportArgs),
}

#[derive(Args, Debug)]
struct ReportArgs {
    /// Result files written by `nowa ssdiq --json` or --out (ssdiq.json).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Also write a grouped bar chart of random-write IOPS per workload (.png or .svg).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

/// The suite configuration of the flags (`interval` still to be resolved for the target).
fn config(a: &SsdiqArgs) -> SuiteConfig {
    let mut steps = a.steps;
    if a.sweep.0.is_empty() {
        steps.sweep = false;
    }
    SuiteConfig {
        bs: a.bs,
        seq_bs: a.seq_bs,
        qd: a.qd,
        threads: a.threads,
        fill: a.fill,
        warmup: a.warmup,
        volume: a.volume,
        read_secs: a.read_time,
        lat_secs: a.lat_time,
        bg_load: a.bg_load,
        sweep: a.sweep.0.clone(),
        sweep_secs: a.sweep_time,
        workloads: a.workloads.0.clone(),
        steps,
        interval: a.interval.0.unwrap_or(1.0),
        max_phase_secs: a.max_time,
        rate_mb_s: a.rate,
        seed: a.seed,
        sanitize: a.sanitize,
    }
}

/// The simulated SSD of `sim` / `sim:SIZE`, or None for a path.
fn sim_spec(a: &SsdiqArgs, target: &str) -> anyhow::Result<Option<SimSpec>> {
    if target != "sim" && !target.starts_with("sim:") {
        return Ok(None);
    }
    let cap = match target.strip_prefix("sim:") {
        Some(s) => nowa_units::parse_size_in(s, 256 << 10, 1 << 44)
            .map_err(|e| usage(format!("target sim:SIZE: {e}")))?,
        None => a.size.unwrap_or(1 << 30),
    };
    let spec = SimSpec {
        capacity: cap / 4096 * 4096,
        op: a.sim_op,
        policy: a.sim_policy.clone(),
        unit_pages: a.sim_unit_pages,
        model: PerfModel {
            media_write_mb_s: a.sim_media_mbps,
            read_mb_s: a.sim_read_mbps,
            chips: a.sim_timing.chips(),
            ..PerfModel::default()
        },
    };
    spec.ftl_config()
        .map_err(|e| usage(format!("--sim-op/--sim-policy/--sim-unit-pages: {e:#}")))?;
    Ok(Some(spec))
}

/// Checks a real target (nothing is written) and returns its capacity for the plan.
fn check_real(a: &SsdiqArgs, path: &Path, log: &mut dyn FnMut(&str)) -> anyhow::Result<u64> {
    if a.sanitize && !path.to_string_lossy().contains("nvme") {
        return Err(usage("--sanitize: only for NVMe block devices"));
    }
    let verdict = ssdiq::check(path, a.force.as_deref(), a.size).map_err(open_error)?;
    match verdict {
        Verdict::Create { size, .. } => {
            // The file is created after the plan is printed: a missing directory is bad
            // input, refused now with its path (it was "No such file or directory", exit 1).
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            if let Some(dir) = parent.filter(|d| !d.is_dir()) {
                return Err(usage(format!(
                    "{}: directory {} does not exist",
                    path.display(),
                    dir.display()
                )));
            }
            Ok(size / 4096 * 4096)
        }
        Verdict::Existing { ref path, .. } => {
            let cap = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            if let Some(sz) = a.size.filter(|&s| s / 4096 != cap / 4096) {
                log(&format!(
                    "note: {} exists ({cap} bytes); --size {sz} is ignored",
                    path.display()
                ));
            }
            Ok(cap)
        }
        _ => Ok(0),
    }
}

/// The plan's lines, destructive steps marked.
fn plan_lines(plan: &[PlanStep]) -> Vec<String> {
    plan.iter()
        .map(|s| {
            let mark = if s.destructive {
                "[DESTRUCTIVE]"
            } else {
                "             "
            };
            format!("  {mark} {:<11} {}", s.name, s.what)
        })
        .collect()
}

/// Opens (creates) the target after announcing the plan.
fn open(
    a: &SsdiqArgs,
    path: &Path,
    sim: Option<&SimSpec>,
    plan: &[String],
) -> anyhow::Result<(Target, TargetInfo)> {
    if let Some(spec) = sim {
        plan.iter().for_each(|l| eprintln!("{l}"));
        return Target::open_sim(spec);
    }
    let opts = OpenOpts {
        engine: match a.engine {
            EngineArg::Uring => Engine::Uring,
            EngineArg::Psync => Engine::Psync,
        },
        direct: !a.no_direct,
        max_qd: a.qd,
        create_size: a.size.map(|s| s / 4096 * 4096),
        force: a.force.clone(),
    };
    let mut announce = |l: &str| eprintln!("{l}");
    Target::open_real(path, &opts, plan, &mut announce).map_err(|e| {
        match e.downcast::<OpenError>() {
            Ok(oe) => open_error(oe),
            Err(e) => e.context(format!("opening {}", path.display())),
        }
    })
}

pub fn run(a: SsdiqArgs) -> anyhow::Result<()> {
    if let Some(SsdiqSub::Report(r)) = &a.sub {
        return run_report(r);
    }
    let mut cfg = config(&a);
    let Some(target_s) = a.target.clone() else {
        return Err(usage(
            "missing target: a block device, a file, or sim[:SIZE] (see nowa ssdiq --help)",
        ));
    };
    let quiet = a.quiet;
    let mut log = |m: &str| {
        if !quiet {
            eprintln!("ssdiq: {m}");
        }
    };
    let sim = sim_spec(&a, &target_s)?;
    let path = PathBuf::from(&target_s);
    let capacity = match &sim {
        Some(spec) => spec.capacity,
        None => check_real(&a, &path, &mut log)?,
    };
    cfg.interval = a
        .interval
        .0
        .unwrap_or_else(|| auto_interval(sim.as_ref(), capacity));
    let dry = if a.dry_run {
        " (dry run: nothing will be done)"
    } else {
        ""
    };
    eprintln!("ssdiq: plan for {target_s}{dry}:");
    let plan = plan_lines(&ssdiq::plan(&cfg, capacity));
    if a.dry_run {
        plan.iter().for_each(|l| eprintln!("{l}"));
        return Ok(());
    }
    let (mut target, info) = open(&a, &path, sim.as_ref(), &plan)?;
    for n in &info.notes {
        eprintln!("ssdiq: NOTE: {n}");
    }
    ssdiq::install_sigint_handler();
    let res = ssdiq::run_suite(&mut target, info, &cfg, &ssdiq::STOP, &mut log);
    output(&a, &res, &mut log)
}

/// The sampling period when --interval is auto.
fn auto_interval(sim: Option<&SimSpec>, capacity: u64) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "a capacity as a rough duration")]
    let cap = capacity as f64;
    match sim {
        // A tenth of a sequential capacity write, in virtual time.
        Some(spec) => (cap / (spec.model.media_write_mb_s * 1e6) / 10.0).max(1e-4),
        // About 100 samples per sequential capacity write at 1 GB/s, between 0.1 and 1 s.
        None => (cap / 1e9 / 100.0).clamp(0.1, 1.0),
    }
}

/// Report, files, and the exit status of a run.
fn output(a: &SsdiqArgs, res: &SsdiqResult, log: &mut dyn FnMut(&str)) -> anyhow::Result<()> {
    if a.json {
        println!("{}", serde_json::to_string_pretty(res)?);
    } else {
        print!("{}", report::text_report(res));
    }
    if let Some(dir) = &a.out {
        for (i, fmt) in a.plot_format.iter().enumerate() {
            let ext = match fmt {
                PlotFormat::Png => "png",
                PlotFormat::Svg => "svg",
            };
            let files = report::write_all(res, dir, ext)?;
            for f in files
                .iter()
                .filter(|f| i == 0 || f.extension().is_some_and(|e| e == ext))
            {
                log(&format!("wrote {}", f.display()));
            }
        }
    }
    if let Some(e) = &res.error {
        anyhow::bail!("{e}");
    }
    if res.interrupted {
        // Ctrl-C (an error stops the run too, but sets `error`): 130, as every command.
        return Err(crate::interrupted(report::interrupted_line(res)));
    }
    Ok(())
}

fn load(p: &Path) -> anyhow::Result<SsdiqResult> {
    let text = std::fs::read_to_string(p).map_err(|e| usage(format!("{}: {e}", p.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| usage(format!("{}: not an ssdiq result ({e})", p.display())))
}

fn run_report(r: &ReportArgs) -> anyhow::Result<()> {
    let results: Vec<SsdiqResult> = r
        .files
        .iter()
        .map(|p| load(p))
        .collect::<anyhow::Result<_>>()?;
    let refs: Vec<&SsdiqResult> = results.iter().collect();
    for res in &results {
        for n in &res.target.notes {
            println!("NOTE {}: {n}", res.target.path);
        }
    }
    print!("{}", report::summary_table(&refs));
    if let Some(p) = &r.plot {
        render_bar(&bar_chart(&results), p).map_err(|e| usage(format!("--plot: {e}")))?;
        eprintln!("ssdiq: wrote {}", p.display());
    }
    Ok(())
}

/// Random-write IOPS per workload, one group per result.
fn bar_chart(results: &[SsdiqResult]) -> BarChart {
    let mut categories: Vec<String> = Vec::new();
    for row in results.iter().flat_map(|r| &r.summary.rand_write) {
        if !categories.contains(&row.workload) {
            categories.push(row.workload.clone());
        }
    }
    let groups = results
        .iter()
        .map(|res| {
            let vals = categories
                .iter()
                .map(|c| {
                    res.summary
                        .rand_write
                        .iter()
                        .find(|x| &x.workload == c)
                        .map_or(f64::NAN, |x| x.kiops)
                })
                .collect();
            (res.target.path.clone(), vals)
        })
        .collect();
    BarChart {
        title: "Random-write IOPS at steady state".into(),
        y_label: "k IOPS".into(),
        categories,
        groups,
    }
}
