//! `nowa frozen figures`: flags -> [`FiguresSpec`] -> `nowa_lab::frozen::figures::run` ->
//! the summary. With `--engine`, the figures of runs in the engine instead
//! (`nowa_lab::frozen::engine_figures`).

use crate::{flags, interrupted, lab_error};
use anyhow::Result;
use clap::Args;
use nowa_lab::frozen::engine_figures::{self, EngineFiguresSpec};
use nowa_lab::frozen::figures::FiguresSpec;
use nowa_lab::Cancel;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct FiguresArgs {
    /// Output directory (CSV + PNG, files named sepfrozen-*), created if missing (not its
    /// parents). Default: a new sepfrozen-figures/, with --engine sepfrozen-engine/ (never
    /// docs/ unless named: the shipped figures are regenerated on purpose).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Overwrite sepfrozen-* files already in --out.
    #[arg(long)]
    force: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Run the engine instead of replaying logs: every scheme in the engine's DB GC on the
    /// simulated ZNS SSD for TPC-C (standard, steady) and YCSB (50% and 100% writes), a
    /// model trained on a run of the next seed, FK replayed on the SepBIT run's writes.
    #[arg(long, conflicts_with_all = ["writes", "train_writes", "no_synth", "synth_writes", "zone_size", "max_samples"])]
    engine: bool,
    #[command(flatten)]
    engine_args: EngineFigArgs,
    /// More write logs to evaluate (repeatable), after the synthetic one; the sweeps and
    /// model figures use the first log.
    #[arg(long, value_name = "FILE")]
    writes: Vec<PathBuf>,
    /// The log the model deployed on the i-th --writes log is trained on (repeatable, in
    /// the order of --writes; e.g. an engine-recorded TPC-C run of another seed: "trained on
    /// one run, deployed in the next"). Without it the model is trained on the log itself
    /// (in-sample).
    #[arg(long, value_name = "FILE")]
    train_writes: Vec<PathBuf>,
    /// Leave the synthetic log out (then --writes is needed).
    #[arg(long)]
    no_synth: bool,
    /// User writes of the synthetic log.
    #[arg(long, default_value = "1M", value_parser = flags::count::<u64>(10_000, 1 << 32))]
    synth_writes: u64,
    /// Zone size of the default configuration (the paper's 256 MiB, scaled).
    #[arg(long, default_value = "1MiB", value_parser = flags::size_4k(64 << 10, 1 << 40))]
    zone_size: u64,
    /// Samples for the classifier comparison (linfa's trainers are slow on millions).
    #[arg(long, default_value = "200k", value_parser = flags::count::<u64>(1000, 1 << 32))]
    max_samples: u64,
    /// Seed of the synthetic log, the train/test splits and the replays (the synthetic log's
    /// model is trained on the log of seed + 1).
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

/// Flags of `nowa frozen figures --engine` (each needs `--engine`).
#[derive(Args, Debug, Clone)]
pub struct EngineFigArgs {
    /// With --engine: workloads, comma-separated (default all four: tpcc-standard,
    /// tpcc-steady, ycsb-50w, ycsb-100w).
    #[arg(long, requires = "engine", value_delimiter = ',', value_parser = workload)]
    workloads: Vec<String>,
    /// With --engine: schemes run in the engine, comma-separated (default all: nosep, 2r,
    /// warcip, dac, dac-paper, sepfrozen-dac, sepbit, sepfrozen-bit, the two retrained
    /// online during the run: sepfrozen-dac-online, sepfrozen-bit-online, and the two with the
    /// depth-8 tree model: sepfrozen-dac-tree, sepfrozen-bit-tree). The FK oracles are
    /// replayed on the sepbit run's log, so they need sepbit.
    #[arg(long, requires = "engine", value_delimiter = ',', value_parser = scheme)]
    schemes: Vec<String>,
    /// With --engine: TPC-C warehouses (default 2).
    #[arg(long, requires = "engine", value_parser = flags::count::<u32>(1, 10_000))]
    warehouses: Option<u32>,
    /// With --engine: TPC-C transactions per run (default 60k).
    #[arg(long, requires = "engine", value_parser = flags::count::<u64>(100, 1 << 40))]
    transactions: Option<u64>,
    /// With --engine: YCSB records (default 3M; the device holds them at 50% fill).
    #[arg(long, requires = "engine", value_parser = flags::count::<u64>(1000, 1 << 40))]
    records: Option<u64>,
    /// With --engine: YCSB operations per run (default 480k).
    #[arg(long, requires = "engine", value_parser = flags::count::<u64>(100, 1 << 40))]
    ops: Option<u64>,
    /// With --engine: where the runs' write logs and models go (default: a new directory in
    /// the system's temporary directory, removed at the end). Logs are deleted once read.
    #[arg(long, requires = "engine", value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// With --engine: keep the write logs and models in the work directory.
    #[arg(long, requires = "engine")]
    keep_logs: bool,
}

fn workload(s: &str) -> Result<String, String> {
    engine_figures::workload(s).map(|w| w.name().to_owned())
}

fn scheme(s: &str) -> Result<String, String> {
    engine_figures::scheme(s).map(|e| e.name.to_owned())
}

/// `nowa frozen figures --engine`: flags -> [`EngineFiguresSpec`] -> run (nowa-lab) ->
/// progress lines and the summary.
fn run_engine(a: &FiguresArgs) -> Result<()> {
    let e = &a.engine_args;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("sepfrozen-engine"));
    let d = EngineFiguresSpec::new(out);
    let spec = EngineFiguresSpec {
        force: a.force,
        workloads: if e.workloads.is_empty() {
            d.workloads.clone()
        } else {
            e.workloads.clone()
        },
        schemes: if e.schemes.is_empty() {
            d.schemes.clone()
        } else {
            e.schemes.clone()
        },
        warehouses: e.warehouses.unwrap_or(d.warehouses),
        transactions: e.transactions.unwrap_or(d.transactions),
        records: e.records.unwrap_or(d.records),
        ops: e.ops.unwrap_or(d.ops),
        seed: a.seed,
        work_dir: e.work_dir.clone(),
        keep_logs: e.keep_logs,
        ..d
    };
    spec.check().map_err(lab_error)?;
    crate::resources::create_output_dir("--out", &spec.out)?;
    eprintln!(
        "nowa frozen figures --engine: seed {} (training runs seed {}), {} workloads x {} schemes",
        spec.seed,
        spec.seed + 1,
        spec.workloads.len(),
        spec.schemes.len(),
    );
    Cancel.on_sigint();
    let observe = |done: u64, total: u64, line: &str| eprintln!("[{done}/{total}] {line}");
    let out = engine_figures::run_with(&spec, &observe, &Cancel).map_err(lab_error)?;
    print!("{}", out.result.summary);
    if Cancel.requested() {
        println!("interrupted (Ctrl-C): the workloads above ran; the others did not");
        return Err(interrupted("the workloads above ran; the others did not"));
    }
    Ok(())
}

/// `nowa frozen figures`: flags -> spec -> run (nowa-lab) -> summary.
pub fn run_figures(a: &FiguresArgs) -> Result<()> {
    if a.engine {
        return run_engine(a);
    }
    let spec = FiguresSpec {
        out: a
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("sepfrozen-figures")),
        force: a.force,
        synth_writes: (!a.no_synth).then_some(a.synth_writes),
        writes: a.writes.clone(),
        train_writes: a.train_writes.clone(),
        zone_size: a.zone_size,
        max_samples: a.max_samples,
        seed: a.seed,
    };
    spec.check().map_err(lab_error)?;
    crate::resources::create_output_dir("--out", &spec.out)?;
    eprintln!(
        "nowa frozen figures: seed {}, {} logs, zones of {} KiB, out {}",
        spec.seed,
        usize::from(spec.synth_writes.is_some()) + spec.writes.len(),
        spec.zone_size >> 10,
        spec.out.display()
    );
    Cancel.on_sigint();
    let pb = crate::progress::bar(1, a.quiet, "frozen figures");
    pb.set_message("replays and fits");
    let progress = |done: u64, total: u64| {
        pb.set_length(total);
        pb.set_position(done);
    };
    let out = nowa_lab::frozen::figures::run(&spec, Some(&progress), &Cancel).map_err(lab_error)?;
    pb.finish_and_clear();
    print!("{}", out.result.summary);
    println!(
        "wrote {} files under {}",
        out.result.files.len(),
        spec.out.display()
    );
    if Cancel.requested() {
        println!("interrupted (Ctrl-C): the figures above ran; the others did not");
        return Err(interrupted("the figures above ran; the others did not"));
    }
    Ok(())
}
