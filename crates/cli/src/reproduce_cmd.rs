//! `nowa reproduce`: flags -> `nowa_lab::reproduce::Spec` -> run (progress bar with ETA over
//! the whole run) -> the verdicts. The TPC-C runs are `nowa tpcc` children of this binary
//! ([`CliHost`]).

use crate::engine_env::CliHost;
use crate::lab_error;
use crate::progress::bar;
use anyhow::Result;
use clap::{Args, Subcommand};
use nowa_lab::reproduce::{self, Paper, Scale, Spec, Verdict};
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ReproduceArgs {
    #[command(subcommand)]
    cmd: Option<ReproduceCmd>,
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
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum ReproduceCmd {
    /// Merge one run (`nowa reproduce --paper X --out RUN_DIR`) into a report: its papers'
    /// entries, tables, provenance and figures replace theirs; REPRODUCTION.md beside the
    /// report and the docs' generated blocks (the report's parent directory) are rendered again.
    Merge(MergeArgs),
    /// Render a report again: REPRODUCTION.md beside it and the docs' generated blocks (the
    /// report's parent directory), from its reproduction.json.
    Render(RenderArgs),
}

#[derive(Args, Debug)]
struct RenderArgs {
    /// The report (a reproduction.json).
    #[arg(value_name = "FILE")]
    report: PathBuf,
}

#[derive(Args, Debug)]
struct MergeArgs {
    /// The report to merge into (a reproduction.json, e.g. docs/reproduction/reproduction.json).
    #[arg(long, value_name = "FILE")]
    into: PathBuf,
    /// The run's output directory (its reproduction.json and one directory of figures per paper).
    #[arg(value_name = "RUN_DIR")]
    run: PathBuf,
}

/// `nowa reproduce merge`.
fn merge(a: &MergeArgs) -> Result<()> {
    let (r, papers) = reproduce::merge_into(&a.into, &a.run).map_err(lab_error)?;
    let names: Vec<&str> = papers.iter().map(|p| p.name()).collect();
    println!(
        "merged {} from {} into {} ({} entries); REPRODUCTION.md and the docs' blocks rendered again",
        names.join(", "),
        a.run.display(),
        a.into.display(),
        r.entries.len()
    );
    Ok(())
}

/// `nowa reproduce`.
pub fn run(a: ReproduceArgs) -> Result<()> {
    match &a.cmd {
        Some(ReproduceCmd::Merge(m)) => return merge(m),
        Some(ReproduceCmd::Render(r)) => {
            let rep = reproduce::render(&r.report).map_err(lab_error)?;
            println!(
                "rendered {} ({} entries): REPRODUCTION.md and the docs' blocks",
                r.report.display(),
                rep.entries.len()
            );
            return Ok(());
        }
        None => {}
    }
    let spec = Spec {
        scale: if a.full { Scale::Full } else { Scale::Quick },
        papers: a.papers.clone(),
        out: a
            .out
            .clone()
            .ok_or_else(|| crate::usage("--out: required"))?,
        force: a.force,
        seed: a.seed,
        tpcc_only: a.tpcc_only,
        jobs: a.jobs,
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
    let n = |v: Verdict| r.entries.iter().filter(|e| e.verdict == v).count();
    assert_eq!(
        n(Verdict::Reproduced) + n(Verdict::Shape) + n(Verdict::Off) + n(Verdict::Missing),
        r.entries.len(),
        "every entry has one of the four verdicts"
    );
    assert!(!r.entries.is_empty(), "every paper has entries");
    println!(
        "{} entries: {} reproduced, {} shape, {} off, {} missing ({:.0} s); wrote {}/REPRODUCTION.md and reproduction.json",
        r.entries.len(),
        n(Verdict::Reproduced),
        n(Verdict::Shape),
        n(Verdict::Off),
        n(Verdict::Missing),
        t.elapsed().as_secs_f64(),
        spec.out.display()
    );
    for e in r.entries.iter().filter(|e| e.verdict == Verdict::Missing) {
        eprintln!(
            "nowa reproduce: missing: {} / {}: {}",
            e.paper,
            e.item,
            e.note.as_deref().unwrap_or("")
        );
    }
    crate::stop_if(r.interrupted)
}
