//! `nowa sim` and `nowa sim sweep`: flags -> spec (nowa-lab) -> run -> print.

use crate::flags::{self, MAX_THREADS};
use crate::resources::{check_output_file, create_output_dir};
use crate::{interrupted, lab_error};
use anyhow::{Context as _, Result};
use clap::{Args, Subcommand};
use nowa_bench::sim::{self, sweep, SimResult, SimSpec};
use nowa_flash::PolicyKind;
use nowa_lab::sim::flags::{DeviceFlags, RunFlags, SimFlags, TraceFlags};
use nowa_lab::sim::sweep::SweepSpec;
use nowa_lab::sim::{Outcome, Spec};
use nowa_lab::Cancel;
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

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SimArgs {
    #[command(subcommand)]
    sub: Option<SimSub>,
    #[command(flatten)]
    flags: Box<SimFlags>,
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
    /// One row of --bench-schemes as JSON (the table runs every row in a fresh process of
    /// this program, so that a row's resident memory is its own).
    #[arg(long, hide = true, value_name = "N", requires = "bench_schemes")]
    bench_schemes_row: Option<usize>,
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
    #[arg(long, value_name = "FIG", required_unless_present = "all", value_enum)]
    figure: Option<sweep::Figure>,
    /// Run all figures.
    #[arg(long)]
    all: bool,
    /// Output directory for sim-<figure>.csv, .png and .svg.
    #[arg(long, alias = "out-dir", value_name = "DIR", default_value = ".")]
    out: PathBuf,
    /// Overwrite sim-<figure>.* files already in --out.
    #[arg(long)]
    force: bool,
    /// Runs per point, seeds --seed, --seed + 1, ...: the plot shows their mean and min-max
    /// band, so differences within the noise show as overlapping bands.
    #[arg(long, default_value = "3", value_parser = flags::count::<u32>(1, u64::from(nowa_lab::sim::sweep::MAX_SEEDS)))]
    seeds: u32,
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = flags::count::<usize>(1, MAX_THREADS))]
    threads: Option<usize>,
    #[command(flatten)]
    dev: DeviceFlags,
    #[command(flatten)]
    run: RunFlags,
}

use crate::progress::bar;

/// A simulator error at the CLI, classified as the library does.
fn sim_error(e: nowa_bench::sim::SimError) -> anyhow::Error {
    lab_error(nowa_lab::sim::sim_error(e))
}

/// The spec of `f`, after the memory check (`parallel` runs at once each hold a model).
fn spec_of(f: &SimFlags, parallel: u64) -> Result<Spec> {
    let spec = Spec::from_flags(f).map_err(lab_error)?;
    spec.check_memory(parallel).map_err(lab_error)?;
    Ok(spec)
}

/// `nowa sim`: one simulation (or `sim sweep`).
pub fn run(a: SimArgs) -> Result<()> {
    if let Some(SimSub::Sweep(s)) = a.sub {
        return run_sweep(*s);
    }
    let mut f = (*a.flags).clone();
    if a.bench {
        // The flags in BENCH_FIXES: clap refused them, so these replace only defaults.
        f.dev.capacity = 64 << 30;
        f.dev.pages_per_block = 256;
        f.dev.blocks_per_superblock = 8;
        f.dev.policy = PolicyKind::Greedy;
        f.run.workload = WorkloadSpec::Uniform;
        f.run.fill = 0.9;
    }
    let spec = spec_of(&f, 1)?;
    if a.bench || a.bench_schemes {
        let mut bench = spec.bench().map_err(lab_error)?;
        // The speed benchmark measures the plain path: without FAR bookkeeping.
        bench.ftl.track_far = !a.bench;
        if let Some(i) = a.bench_schemes_row {
            return run_scheme_row(&bench, i);
        }
        if a.bench_schemes {
            return run_bench_schemes(&bench, f.run.quiet);
        }
        return run_bench(&a, &bench);
    }
    check_output_file("--csv", a.csv.as_deref())?;
    check_output_file("--victims-csv", a.victims_csv.as_deref())?;
    Cancel.on_sigint();
    if let Some(t) = &spec.trace {
        // A missing, unreadable or unrecognized file is refused before the run says it starts.
        nowa_trace::set_skip_bad(t.skip_bad);
        nowa_trace::open(&t.path, t.format)
            .map_err(|e| crate::lab_error(nowa_lab::trace::trace_error(e)))?;
    }
    eprintln!("nowa sim: {}", spec.announce());
    let what = if spec.trace.is_some() {
        "replaying"
    } else {
        "simulating"
    };
    let pb = bar(1000, f.run.quiet, what);
    let progress = |done: u64, total: u64| pb.set_position(done * 1000 / total.max(1));
    let out = nowa_lab::sim::run(&spec, Some(&progress), &Cancel).map_err(lab_error)?;
    pb.finish_and_clear();
    assert_eq!(out.identity().seed, spec.seed, "the result names its seed");
    assert!(
        out.intervals() as f64 <= (spec.volume / spec.interval).ceil() + 1.0,
        "no more intervals than the measured volume holds"
    );
    // Ctrl-C: the partial result says so itself (stdout, JSON), not only the exit status.
    let stop = Cancel.requested().then(|| {
        format!(
            "{} of {} measured intervals ran; the results above cover them",
            out.intervals(),
            (spec.volume / spec.interval).ceil()
        )
    });
    output(&a, &out, stop.as_deref())?;
    match stop {
        Some(what) => Err(interrupted(what)),
        None => Ok(()),
    }
}

/// The results on stdout (summary or JSON) and in the CSV files; `stopped`: the run was
/// interrupted, and how far it got (an "interrupted" line, or `"interrupted"` in the JSON).
fn output(a: &SimArgs, out: &Outcome, stopped: Option<&str>) -> Result<()> {
    if let Some(path) = &a.csv {
        out.write_intervals_csv(path).map_err(lab_error)?;
    }
    if let Some(path) = &a.victims_csv {
        out.write_victims_csv(path).map_err(lab_error)?;
    }
    if a.json {
        let mut v = serde_json::to_value(out)?;
        if let (Some(what), Some(m)) = (stopped, v.as_object_mut()) {
            m.insert("interrupted".into(), serde_json::Value::String(what.into()));
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    if let Some(what) = stopped {
        println!("interrupted (Ctrl-C): {what}");
    }
    print!("{}", out.summary());
    if let Some(path) = &a.csv {
        println!("intervals written to {}", path.display());
    }
    if let Some(path) = &a.victims_csv {
        println!("victim valid ratios written to {}", path.display());
    }
    Ok(())
}

/// `nowa sim --bench`: the speed benchmark's run and its figure.
fn run_bench(a: &SimArgs, spec: &SimSpec) -> Result<()> {
    let r: SimResult = sim::run(spec, None).map_err(sim_error)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    print!("{}", sim::summary(&r));
    println!(
        "bench     {:.2} M host page writes per CPU second of the measured phase (uniform, greedy, 64 GiB, fill 0.9, 8 MiB units, FAR off, one thread)",
        r.sim_writes_per_cpu_sec / 1e6
    );
    Ok(())
}

fn run_sweep(s: SweepArgs) -> Result<()> {
    let threads = s.threads.unwrap_or_else(rayon::current_num_threads);
    let flags = SimFlags {
        dev: s.dev.clone(),
        run: s.run.clone(),
        trace: TraceFlags::none(),
    };
    let base = spec_of(&flags, threads as u64)?;
    let spec = SweepSpec {
        figures: if s.all {
            sweep::Figure::ALL.to_vec()
        } else {
            s.figure.into_iter().collect()
        },
        base,
        seeds: s.seeds,
        threads,
        out: s.out.clone(),
        force: s.force,
    };
    create_output_dir("--out", &s.out)?;
    spec.check().map_err(lab_error)?;
    eprintln!("nowa sim sweep: {}", spec.announce());
    Cancel.on_sigint();
    let pb = bar(0, s.run.quiet, "simulations");
    let progress = |done: u64, total: u64| {
        pb.set_length(total);
        pb.set_position(done);
    };
    let out = nowa_lab::sim::sweep::run(&spec, Some(&progress), &Cancel).map_err(lab_error)?;
    pb.finish_and_clear();
    // `nowa run` re-runs a result from its identity: it must name this job.
    assert_eq!(out.nowa.command, "sim-sweep", "the result names its job");
    assert_eq!(
        out.result.figures.len(),
        spec.figures.len(),
        "one figure per figure asked for"
    );
    for f in &out.result.figures {
        print!("{}", nowa_lab::sim::sweep::table(f));
        let names: Vec<String> = f.files.iter().map(|p| p.display().to_string()).collect();
        println!("wrote {}\n", names.join(", "));
    }
    if out.result.not_run.is_empty() {
        return Ok(());
    }
    let left: Vec<&str> = out.result.not_run.iter().map(|f| f.name()).collect();
    println!("interrupted (Ctrl-C): not run: {}", left.join(", "));
    Err(interrupted(format!("not run: {}", left.join(", "))))
}

/// `nowa sim --bench-schemes`: the cost of every scheme, one after the other, each row in a
/// fresh process of this program (`--bench-schemes-row N`, the same flags): an earlier row's
/// freed heap would otherwise be reused or counted in a later row's resident memory.
fn run_bench_schemes(spec: &SimSpec, quiet: bool) -> Result<()> {
    eprintln!(
        "nowa sim --bench-schemes: seed {}, {} logical pages, fill {}, {} per run, policy and placement per row, FAR on, each row in a fresh process",
        spec.seed, spec.ftl.logical_pages, spec.fill, spec.workload
    );
    let names: Vec<String> = sim::schemes::scheme_specs(spec)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let exe = std::env::current_exe().context("locating this program to run each row")?;
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let mut rows = Vec::with_capacity(names.len());
    // Ctrl-C reaches the row's process too (it dies of it): the rows done are printed.
    Cancel.on_sigint();
    for (i, name) in names.iter().enumerate() {
        if !quiet {
            eprintln!("[{}/{}] {name}", i + 1, names.len());
        }
        let out = std::process::Command::new(&exe)
            .args(&args)
            .arg("--bench-schemes-row")
            .arg(i.to_string())
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running row {i} ({name}) in a process of its own"))?;
        if Cancel.requested() {
            sim::schemes::relative_to_first(&mut rows);
            print!("{}", sim::schemes::table(&rows));
            return crate::stop_if(Some(format!("{i} of {} rows ran", names.len())));
        }
        anyhow::ensure!(out.status.success(), "row {i} ({name}): {}", out.status);
        let row: sim::schemes::SchemeRow = serde_json::from_slice(&out.stdout)
            .with_context(|| format!("row {i} ({name}): its JSON"))?;
        anyhow::ensure!(
            row.scheme == *name,
            "row {i}: ran {} instead of {name}",
            row.scheme
        );
        rows.push(row);
    }
    sim::schemes::relative_to_first(&mut rows);
    print!("{}", sim::schemes::table(&rows));
    Ok(())
}

/// `--bench-schemes-row N`: row N of the table, measured in this process, as JSON.
fn run_scheme_row(spec: &SimSpec, i: usize) -> Result<()> {
    let row = sim::schemes::run_row(spec, i)
        .ok_or_else(|| crate::usage(format!("--bench-schemes-row {i}: no such row")))?
        .map_err(sim_error)?;
    println!("{}", serde_json::to_string(&row)?);
    Ok(())
}
