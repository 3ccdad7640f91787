//! `nowa reproduce`: flags -> `nowa_lab::reproduce::Spec` -> run (progress bar with ETA over
//! the whole run) -> the verdicts. The TPC-C runs are `nowa tpcc` children of this binary
//! ([`CliHost`]).

use crate::engine_env::CliHost;
use crate::lab_error;
use crate::progress::bar;
use anyhow::Result;
use clap::Args;
use nowa_lab::reproduce::{self, Paper, Scale, Spec};
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ReproduceArgs {
    #[command(subcommand)]
    cmd: Option<reproduce::Command>,
    /// A few CPU minutes in all (the default; what CI runs and docs/reproduction holds).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The docs' scales (tens of minutes).
    #[arg(long)]
    full: bool,
    /// Only this paper (repeatable): how-to-write-to-ssds, ssd-iq, sepfrozen,
    /// hot-page-aware-checkpointing, plan-ssd-parallelism.
    #[arg(long = "paper", value_name = "NAME", value_enum)]
    papers: Vec<Paper>,
    /// Output directory: reproduction.json, REPRODUCTION.md and one directory of figures per
    /// paper. Refused when it holds something, unless --force.
    #[arg(long, value_name = "DIR", required = true)]
    out: Option<PathBuf>,
    /// Overwrite what --out holds.
    #[arg(long)]
    force: bool,
    /// Seed of every run.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// how-to-write-to-ssds: only the TPC-C comparison, not Table 1 (its entries missing;
    /// `nowa table1` makes its table).
    #[arg(long)]
    tpcc_only: bool,
    /// hot-page-aware-checkpointing: paced runs at once (default: as many as 80% of the
    /// available memory holds, at most 4; `nowa ckpt figures --jobs`).
    #[arg(long, value_name = "N", value_parser = crate::flags::count::<usize>(1, 64))]
    jobs: Option<usize>,
    /// hot-page-aware-checkpointing: keep the per-point results in DIR and reuse those of the
    /// same parameters (a run cut short resumes; `nowa ckpt figures --work` of the same grid
    /// is reused too). Default: a scratch directory under --out, removed.
    #[arg(long, value_name = "DIR")]
    work: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// `nowa reproduce`.
pub fn run(a: ReproduceArgs) -> Result<()> {
    let (Some(out), None) = (&a.out, &a.cmd) else {
        // `merge` or `render` (clap requires --out without one).
        let line = a.cmd.as_ref().map(reproduce::Command::run).transpose();
        println!("{}", line.map_err(lab_error)?.unwrap_or_default());
        return Ok(());
    };
    let spec = Spec {
        scale: if a.full { Scale::Full } else { Scale::Quick },
        papers: a.papers.clone(),
        out: out.clone(),
        force: a.force,
        seed: a.seed,
        tpcc_only: a.tpcc_only,
        jobs: a.jobs,
        work: a.work.clone(),
    };
    // Refused before anything runs (the library checks again).
    spec.check().map_err(lab_error)?;
    reproduce::prepare_out(&spec.out, spec.force).map_err(lab_error)?;
    nowa_lab::Cancel.on_sigint();
    let papers: Vec<String> = spec.papers().iter().map(|p| p.to_string()).collect();
    eprintln!(
        "nowa reproduce: {:?} scale, seed {}, papers {}, into {}",
        spec.scale,
        spec.seed,
        papers.join(", "),
        spec.out.display()
    );
    let t = std::time::Instant::now();
    let pb = bar(1, a.quiet, "reproduce");
    let observe = |done: u64, total: u64, what: &str| {
        pb.set_length(total.max(1));
        pb.set_position(done);
        pb.set_message(what.to_owned());
    };
    let r = reproduce::run(&spec, &CliHost, &observe).map_err(lab_error)?;
    pb.finish_and_clear();
    let (line, missing) = reproduce::summary(&r, t.elapsed().as_secs_f64(), &spec.out);
    println!("{line}");
    for m in missing {
        eprintln!("nowa reproduce: missing: {m}");
    }
    crate::stop_if(r.interrupted)
}
