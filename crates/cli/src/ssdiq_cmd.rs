//! `nowa ssdiq` flags: the SSD-iq suite on a block device, a file or a simulated SSD, and
//! `nowa ssdiq report` to put several results side by side.
use crate::usage;
use anyhow::Context;
use clap::{Args, Subcommand};
use nowa_bench::plot::{render_bar, BarChart};
use nowa_bench::ssdiq::{
    self, report, Engine, OpenOpts, PerfModel, SimSpec, SsdiqResult, Steps, SuiteConfig, Target,
};
use nowa_workload::WorkloadSpec;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SsdiqArgs {
    #[command(subcommand)]
    sub: Option<SsdiqSub>,
    /// Target: a block device (/dev/nvme1n1), a regular file (created with --size if missing),
    /// or a simulated SSD: sim or sim:SIZE (e.g. sim:1GiB).
    target: Option<String>,
    /// Allow writing to this target although it is a block device or looks in use; must repeat
    /// the target path exactly.
    #[arg(long, value_name = "PATH")]
    force: Option<PathBuf>,
    /// Size of the file to create if the target does not exist (e.g. 4GiB).
    #[arg(long, value_name = "SIZE")]
    size: Option<String>,
    /// List the steps (destructive ones marked) and exit without touching the target.
    #[arg(long)]
    dry_run: bool,
    /// Block size of random I/O.
    #[arg(long, default_value = "4k", value_name = "SIZE")]
    bs: String,
    /// Block size of sequential I/O.
    #[arg(long, default_value = "128k", value_name = "SIZE")]
    seq_bs: String,
    /// I/Os in flight per thread (io_uring).
    #[arg(long, default_value_t = 32)]
    qd: u32,
    /// Threads, one io_uring each.
    #[arg(long, default_value_t = 1)]
    threads: u32,
    /// I/O engine: uring or psync (pread/pwrite, one I/O in flight per thread).
    #[arg(long, default_value = "uring")]
    engine: String,
    /// Use buffered I/O instead of O_DIRECT (numbers then measure the page cache).
    #[arg(long)]
    no_direct: bool,
    /// Cap the throughput of every write phase (MB/s, 10^6 bytes).
    #[arg(long, value_name = "MB/S")]
    rate: Option<f64>,
    /// Fraction of the capacity initialized and used by the workloads.
    #[arg(long, default_value_t = 1.0)]
    fill: f64,
    /// Random writes before each measured phase, in multiples of the capacity.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Measured random writes per workload, in multiples of the capacity.
    #[arg(long, default_value_t = 2.0)]
    volume: f64,
    /// Seconds of sequential / random read measurement.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    read_time: f64,
    /// Seconds of each QD1 latency probe (read, then write).
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    lat_time: f64,
    /// Background write load of the latency probes, fraction of the random-write bandwidth.
    #[arg(long, default_value_t = 0.25)]
    bg_load: f64,
    /// Loads of the latency-vs-write-rate sweep (fractions), or "none".
    #[arg(long, default_value = "0.1,0.25,0.5,0.75,0.9")]
    sweep: String,
    /// Seconds of each probe at each sweep point.
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    sweep_time: f64,
    /// Random-write workloads, comma-separated (same syntax as nowa sim).
    #[arg(long, default_value = "uniform,two-zone:80/20,zipf:0.8")]
    workloads: String,
    /// Steps: all, or a list of seq-read, rand-read, rand-write, latency, sweep (the reset and
    /// the sequential initialization always run).
    #[arg(long, default_value = "all")]
    steps: String,
    /// Per-interval sampling period in seconds, or auto (capacity / 100 GB/s, between 0.1 and
    /// 1 s; simulated SSD: 1/10 of a sequential capacity write).
    #[arg(long, default_value = "auto", value_name = "SECS")]
    interval: String,
    /// Upper bound on each write phase, seconds.
    #[arg(long, value_name = "SECS")]
    max_time: Option<f64>,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Reset with NVMe sanitize (block erase) instead of a discard. Slow; NVMe devices only.
    #[arg(long)]
    sanitize: bool,
    /// Simulated SSD: over-provisioning as spare/logical.
    #[arg(long, default_value_t = 0.07)]
    sim_op: f64,
    /// Simulated SSD: GC policy (greedy, 2r-greedy, 2r-fifo, cost-benefit, fifo, ...).
    #[arg(long, default_value = "greedy")]
    sim_policy: String,
    /// Simulated SSD: media write bandwidth, MB/s.
    #[arg(long, default_value_t = 2000.0)]
    sim_media_mbps: f64,
    /// Simulated SSD: media read bandwidth, MB/s.
    #[arg(long, default_value_t = 3200.0)]
    sim_read_mbps: f64,
    /// Simulated SSD: GC unit in pages (0 = automatic, 1 MiB).
    #[arg(long, default_value_t = 0)]
    sim_unit_pages: u32,
    /// Print the full result as JSON on stdout instead of the text report.
    #[arg(long)]
    json: bool,
    /// Directory for ssdiq.json, intervals.csv and the plots.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Plot formats: png, svg or png,svg.
    #[arg(long, default_value = "png,svg")]
    plot_format: String,
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

fn parse_list<T>(
    s: &str,
    what: &str,
    f: impl Fn(&str) -> Result<T, String>,
) -> anyhow::Result<Vec<T>> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| f(p).map_err(|e| usage(format!("--{what}: {e}"))))
        .collect()
}

fn size_flag(s: &str, flag: &str) -> anyhow::Result<u64> {
    ssdiq::parse_size(s).map_err(|e| usage(format!("--{flag}: {e}")))
}

fn config(a: &SsdiqArgs) -> anyhow::Result<SuiteConfig> {
    let bs = size_flag(&a.bs, "bs")?;
    let seq_bs = size_flag(&a.seq_bs, "seq-bs")?;
    let sweep = if a.sweep == "none" {
        Vec::new()
    } else {
        parse_list(&a.sweep, "sweep", |p| {
            p.parse::<f64>()
                .map_err(|_| format!("'{p}' is not a number"))
        })?
    };
    let workloads = parse_list(&a.workloads, "workloads", |p| {
        p.parse::<WorkloadSpec>().map_err(|e| e.to_string())
    })?;
    let mut steps = Steps::parse(&a.steps).map_err(|e| usage(format!("--steps: {e}")))?;
    if sweep.is_empty() {
        steps.sweep = false;
    }
    let interval = if a.interval == "auto" {
        1.0
    } else {
        a.interval.parse::<f64>().map_err(|_| {
            usage(format!(
                "--interval: '{}' is not a number of seconds or auto",
                a.interval
            ))
        })?
    };
    let cfg = SuiteConfig {
        bs: u32::try_from(bs).map_err(|_| usage("--bs too large"))?,
        seq_bs: u32::try_from(seq_bs).map_err(|_| usage("--seq-bs too large"))?,
        qd: a.qd,
        threads: a.threads,
        fill: a.fill,
        warmup: a.warmup,
        volume: a.volume,
        read_secs: a.read_time,
        lat_secs: a.lat_time,
        bg_load: a.bg_load,
        sweep,
        sweep_secs: a.sweep_time,
        workloads,
        steps,
        interval,
        max_phase_secs: a.max_time,
        rate_mb_s: a.rate,
        seed: a.seed,
        sanitize: a.sanitize,
    };
    cfg.validate().map_err(usage)?;
    Ok(cfg)
}

fn plot_exts(s: &str) -> anyhow::Result<Vec<String>> {
    parse_list(s, "plot-format", |p| match p {
        "png" | "svg" => Ok(p.to_string()),
        _ => Err(format!("'{p}' is not png or svg")),
    })
}

pub fn run(a: SsdiqArgs) -> anyhow::Result<()> {
    if let Some(SsdiqSub::Report(r)) = &a.sub {
        return run_report(r);
    }
    let mut cfg = config(&a)?;
    let exts = plot_exts(&a.plot_format)?;
    let engine = match a.engine.as_str() {
        "uring" | "io_uring" => Engine::Uring,
        "psync" | "sync" => Engine::Psync,
        e => return Err(usage(format!("--engine: '{e}' is not uring or psync"))),
    };
    let Some(target_s) = a.target.clone() else {
        return Err(usage(
            "missing target: a block device, a file, or sim[:SIZE] (see nowa ssdiq --help)",
        ));
    };
    let mut log = |m: &str| {
        if !a.quiet {
            eprintln!("ssdiq: {m}");
        }
    };

    // Open (or, for --dry-run, only inspect) the target.
    let sim_spec = if target_s == "sim" || target_s.starts_with("sim:") {
        let cap = match target_s.strip_prefix("sim:") {
            Some(s) => size_flag(s, "target sim:SIZE")?,
            None => match &a.size {
                Some(s) => size_flag(s, "size")?,
                None => 1 << 30,
            },
        };
        if !(a.sim_op.is_finite() && a.sim_op > 0.0) {
            return Err(usage(format!("--sim-op must be > 0, got {}", a.sim_op)));
        }
        let spec = SimSpec {
            capacity: cap / 4096 * 4096,
            op: a.sim_op,
            policy: a.sim_policy.clone(),
            unit_pages: a.sim_unit_pages,
            model: PerfModel {
                media_write_mb_s: a.sim_media_mbps,
                read_mb_s: a.sim_read_mbps,
                ..PerfModel::default()
            },
        };
        spec.ftl_config().map_err(|e| usage(format!("{e:#}")))?;
        Some(spec)
    } else {
        None
    };

    let path = PathBuf::from(&target_s);
    let capacity_hint;
    if let Some(spec) = &sim_spec {
        capacity_hint = spec.capacity;
        if a.interval == "auto" {
            cfg.interval =
                (spec.capacity as f64 / (spec.model.media_write_mb_s * 1e6) / 10.0).max(1e-4);
        }
    } else {
        if path.exists() {
            let s = ssdiq::authorize(&path, a.force.as_deref()).map_err(usage)?;
            for i in &s.issues {
                log(&format!(
                    "WARNING (overridden by --force): {} {i}",
                    s.canonical.display()
                ));
            }
            capacity_hint = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            if let (Some(sz), true) = (&a.size, s.kind == nowa_device::TargetKind::RegularFile) {
                if size_flag(sz, "size")? / 4096 * 4096 != capacity_hint / 4096 * 4096 {
                    log(&format!(
                        "note: {} exists ({} bytes); --size {sz} is ignored",
                        path.display(),
                        capacity_hint
                    ));
                }
            }
        } else {
            let size = a.size.as_deref().ok_or_else(|| {
                usage(format!(
                    "{} does not exist; give --size to create a file",
                    path.display()
                ))
            })?;
            capacity_hint = size_flag(size, "size")?;
            if capacity_hint < 1 << 20 {
                return Err(usage("--size must be at least 1 MiB"));
            }
        }
        if a.interval == "auto" {
            // About 100 samples per sequential capacity write at 1 GB/s, between 0.1 and 1 s.
            cfg.interval = (capacity_hint as f64 / 1e9 / 100.0).clamp(0.1, 1.0);
        }
        if a.sanitize && !path.to_string_lossy().contains("nvme") {
            return Err(usage("--sanitize is only for NVMe block devices"));
        }
    }

    // List the steps before anything runs.
    let plan = ssdiq::plan(&cfg, capacity_hint);
    eprintln!(
        "ssdiq: plan for {target_s}{}:",
        if a.dry_run {
            " (dry run: nothing will be done)"
        } else {
            ""
        }
    );
    for s in &plan {
        eprintln!(
            "  {} {:<11} {}",
            if s.destructive {
                "[DESTRUCTIVE]"
            } else {
                "             "
            },
            s.name,
            s.what
        );
    }
    if a.dry_run {
        return Ok(());
    }

    let (mut target, info) = match &sim_spec {
        Some(spec) => Target::open_sim(spec)?,
        None => {
            let opts = OpenOpts {
                engine,
                direct: !a.no_direct,
                max_qd: cfg.qd,
                create_size: match &a.size {
                    Some(s) => Some(size_flag(s, "size")? / 4096 * 4096),
                    None => None,
                },
            };
            Target::open_real(&path, &opts)
                .with_context(|| format!("opening {}", path.display()))?
        }
    };
    for n in &info.notes {
        eprintln!("ssdiq: NOTE: {n}");
    }

    ssdiq::install_sigint_handler();
    let res = ssdiq::run_suite(&mut target, info, &cfg, &ssdiq::STOP, &mut log);

    if a.json {
        println!("{}", serde_json::to_string_pretty(&res)?);
    } else {
        print!("{}", report::text_report(&res));
    }
    if let Some(dir) = &a.out {
        for (i, ext) in exts.iter().enumerate() {
            let files = report::write_all(&res, dir, ext)?;
            if i == 0 || !a.quiet {
                for f in files
                    .iter()
                    .filter(|f| i == 0 || f.extension().is_some_and(|e| e == ext.as_str()))
                {
                    log(&format!("wrote {}", f.display()));
                }
            }
        }
    }
    if res.interrupted {
        anyhow::bail!(
            "interrupted: {} of {} planned steps ran; partial results above",
            res.phases.len(),
            res.plan.len()
        );
    }
    if let Some(e) = &res.error {
        anyhow::bail!("{e}");
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
        let mut categories: Vec<String> = Vec::new();
        for res in &results {
            for row in &res.summary.rand_write {
                if !categories.contains(&row.workload) {
                    categories.push(row.workload.clone());
                }
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
        let chart = BarChart {
            title: "Random-write IOPS at steady state".into(),
            y_label: "k IOPS".into(),
            categories,
            groups,
        };
        render_bar(&chart, p).map_err(|e| usage(e.to_string()))?;
        eprintln!("ssdiq: wrote {}", p.display());
    }
    Ok(())
}
