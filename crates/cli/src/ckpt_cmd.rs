//! `nowa ckpt figures`: flags -> `nowa_lab::ckpt::Spec` -> `nowa_lab::ckpt::run` (progress
//! bar with ETA) -> the tables on stdout. The experiment (the `nowa tpcc` children, crashes,
//! figures) is in nowa-lab; the binary to run and the in-process recovery check are
//! `crate::engine_env::CliHost`.

use crate::engine_env::CliHost;
use crate::flags::{self, SimTiming};
use crate::progress::bar;
use crate::{lab_error, usage};
use anyhow::Result;
use clap::{Args, Subcommand};
use nowa_lab::ckpt::{self, Spec};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CkptArgs {
    #[command(subcommand)]
    cmd: CkptCmd,
}

#[derive(Subcommand, Debug)]
enum CkptCmd {
    /// Table I, Figures 1-5 and Table II of the paper (and the adaptive bound) on TPC-C,
    /// as CSV and PNG under --out; tables as Markdown on stdout.
    Figures(FigArgs),
}

#[derive(Args, Debug, Clone)]
pub(crate) struct FigArgs {
    /// Directory of the figures (CSV, PNG); created if missing (not its parents). Figures
    /// already there are refused unless --force.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Overwrite the ckpt-* files --out holds, and run again the points whose result in
    /// --work is of other parameters.
    #[arg(long)]
    force: bool,
    /// Paced points run at once (default: as many as 80% of the available memory holds, at
    /// most 4; the crash runs run one at a time).
    #[arg(long, value_name = "N", value_parser = flags::count::<usize>(1, 64))]
    jobs: Option<usize>,
    /// Crash images per crash run (Table II): copies while the run is stopped, spread over
    /// its second half, the last by kill -9 at its end (default 1; --quick and --full: 4).
    #[arg(long, value_name = "K", value_parser = flags::count::<u32>(1, 100))]
    crash_points: Option<u32>,
    /// Directory of the per-run JSON (a point whose result is there for the same parameters
    /// is reused: a grid cut short resumes) and the crash images.
    #[arg(long, default_value = "ckpt-runs", value_name = "DIR")]
    work: PathBuf,
    /// The quick scale (`nowa reproduce --quick`'s): 1 warehouse, 40 s runs, 3 seeds, WAL
    /// 32 MiB, buffers 20,50, counts 0,3,8, in place, crashes at 0,3 (overrides the grid
    /// flags; ~30 min on 2 shared cores).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The paper's setup, scaled: 20 warehouses (~1.7 GiB), 300 s runs, buffers 10,20,50,
    /// counts 0,3,4,6,8,10, in place, WAL 256 MiB, crashes at 0,3 (overrides the grid
    /// flags; about 2 h on 2 shared cores with 3 jobs, docs/checkpointing.md).
    #[arg(long)]
    full: bool,
    /// Warehouses.
    #[arg(long, default_value = "1", value_parser = flags::count::<u32>(1, 64))]
    warehouses: u32,
    /// Seconds of each run phase (after the load).
    #[arg(long, default_value = "30", value_parser = flags::seconds(1.0, 86400.0))]
    seconds: f64,
    /// Buffer pool sizes, percent of the database after the load (88 MiB per warehouse + 10
    /// MiB: 98 MiB at 1 warehouse).
    #[arg(long, default_value = "10,20,30,40,50", value_delimiter = ',',
          value_parser = flags::count::<u32>(1, 100))]
    buffers: Vec<u32>,
    /// max_checkpoint_count values.
    #[arg(long, default_value = "0,3,4,6,8,10", value_delimiter = ',',
          value_parser = flags::count::<u32>(0, 1000))]
    counts: Vec<u32>,
    /// Write paths: inplace, oop.
    #[arg(long, default_value = "inplace,oop", value_delimiter = ',',
          value_parser = ["inplace", "oop"])]
    paths: Vec<String>,
    /// max_checkpoint_count values of the recovery runs (Table II: a file, kill -9 at the
    /// end of the run, then recovery timed by phase); the flag without values: none.
    #[arg(long, default_value = "0,3,8", value_delimiter = ',', num_args = 0..,
          value_parser = flags::count::<u32>(0, 1000))]
    recovery_counts: Vec<u32>,
    /// Adaptive deferral: redo bounds (--max-redo-bytes) to run at the largest buffer, each
    /// also crashed and recovered (none by default).
    #[arg(long, value_delimiter = ',', value_parser = flags::size(1 << 16, 1 << 50))]
    redo_bounds: Vec<u64>,
    /// WAL limit of every run (the fixed WAL size of Table II).
    #[arg(long, default_value = "128MiB", value_parser = flags::size(1 << 20, 1 << 40))]
    wal_limit: u64,
    /// innodb_io_capacity of the page cleaner (pages per second; scaled to the simulated
    /// SSD's 10 MB/s, docs/checkpointing.md).
    #[arg(long, default_value = "1000", value_parser = flags::count::<u64>(1, 1 << 30))]
    io_capacity: u64,
    /// innodb_io_capacity_max.
    #[arg(long, default_value = "10000", value_parser = flags::count::<u64>(1, 1 << 30))]
    io_capacity_max: u64,
    /// Simulated SSD timing of the paced runs.
    #[arg(long, default_value = "bandwidth", value_enum)]
    sim_timing: SimTiming,
    /// Simulated SSD media write bandwidth (scaled to this machine's CPU so that vanilla
    /// TPC-C is device-bound, as the paper's: 26.5% CPU).
    #[arg(long, default_value = "10MB", value_parser = flags::size(1_000_000, 1 << 50))]
    media_bandwidth: u64,
    /// Simulated SSD read bandwidth.
    #[arg(long, default_value = "30MB", value_parser = flags::size(1_000_000, 1 << 50))]
    read_bandwidth: u64,
    /// Worker threads of each run.
    #[arg(long, default_value = "2", value_parser = flags::count::<usize>(1, 64))]
    threads: usize,
    /// Seed of the first repetition (printed; every run's JSON carries it).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Repetitions of every paced point, seeds --seed, --seed + 1, ... (the figures shade
    /// their min-max).
    #[arg(long, default_value = "1", value_parser = flags::count::<u32>(1, 100))]
    seeds: u32,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

impl FigArgs {
    /// The experiment the flags name.
    fn spec(&self) -> Spec {
        let timing = match self.sim_timing {
            SimTiming::Bandwidth => "bandwidth",
            SimTiming::Femu => "femu",
            SimTiming::Mqsim => "mqsim",
        };
        let s = Spec {
            warehouses: self.warehouses,
            seconds: self.seconds,
            buffers: self.buffers.clone(),
            counts: self.counts.clone(),
            paths: self.paths.clone(),
            recovery_counts: self.recovery_counts.clone(),
            redo_bounds: self.redo_bounds.clone(),
            wal_limit: self.wal_limit,
            io_capacity: self.io_capacity,
            io_capacity_max: self.io_capacity_max,
            sim_timing: timing.into(),
            media_bandwidth: self.media_bandwidth,
            read_bandwidth: self.read_bandwidth,
            threads: self.threads,
            seed: self.seed,
            seeds: self.seeds,
            ..Spec::new(self.out.clone(), self.work.clone())
        };
        let s = match (self.quick, self.full) {
            (true, _) => Spec {
                seed: self.seed,
                ..s.quick()
            },
            (_, true) => Spec {
                seed: self.seed,
                ..s.full()
            },
            _ => s,
        };
        s.with_crash_points(self.crash_points)
    }
}

/// `nowa ckpt`.
pub fn run_cmd(a: CkptArgs) -> Result<()> {
    let CkptCmd::Figures(f) = a.cmd;
    let spec = f.spec();
    if f.out.join("ckpt-runs.csv").exists() && !f.force {
        return Err(usage(format!(
            "--out {}: holds ckpt figures (pass --force to overwrite)",
            f.out.display()
        )));
    }
    let (exec, why) = ckpt::Exec::new(&spec, f.jobs, f.force);
    // Bad flags and paths are refused before the banner (one line, exit 2).
    ckpt::prepare(&spec, exec).map_err(lab_error)?;
    nowa_lab::Cancel.on_sigint();
    eprintln!(
        "nowa ckpt: seed {} ({} seeds), {}, {} paced runs",
        spec.seed,
        spec.seeds,
        spec.setup(),
        spec.points().len()
    );
    for line in ckpt::plan_lines(&spec, exec, &why) {
        eprintln!("nowa ckpt: {line}");
    }
    let pb = bar(1, f.quiet, "ckpt figures");
    let observe = |done: u64, total: u64, what: &str| {
        pb.set_length(total.max(1));
        pb.set_position(done);
        pb.set_message(what.to_owned());
    };
    let o = ckpt::run(&spec, exec, &CliHost, &observe).map_err(lab_error)?;
    pb.finish_and_clear();
    print!("{}", o.markdown(spec.big()));
    for p in &o.files {
        eprintln!("nowa ckpt: wrote {}", p.display());
    }
    crate::stop_if(o.interrupted)
}
