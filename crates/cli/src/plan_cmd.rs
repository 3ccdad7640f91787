//! `nowa plan`: flags -> `nowa_lab::plan` specs -> run -> print: one run, the paper's
//! figures, and the speed benchmark.

use crate::lab_error;
use anyhow::Result;
use clap::{Args, Subcommand};
use nowa_bench::plan::RunResult;
use nowa_lab::plan::{self, DeviceFlags, FigureFlags, RunFlags};
use nowa_lab::Cancel;

#[derive(Args, Debug)]
pub struct PlanArgs {
    #[command(subcommand)]
    cmd: PlanCmd,
}

#[derive(Subcommand, Debug)]
enum PlanCmd {
    /// One scheme on one workload: WAF, erases, throughput, latency percentiles.
    Run(RunArgs),
    /// The paper's Figures 1, 3, 4, 5, 6 as CSV and PNG under --out (docs/plan.md).
    Figures(FigArgs),
    /// Speed: host page writes per CPU second with timing on (FIO, baseline and PLAN).
    Bench(DeviceFlags),
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    dev: DeviceFlags,
    #[command(flatten)]
    run: RunFlags,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct FigArgs {
    #[command(flatten)]
    dev: DeviceFlags,
    #[command(flatten)]
    figs: FigureFlags,
}

pub fn run(a: PlanArgs) -> Result<()> {
    match a.cmd {
        PlanCmd::Run(r) => {
            let spec = plan::run_from_flags(&r.dev, &r.run).map_err(lab_error)?;
            eprintln!(
                "{}",
                plan::describe(&plan::opts(&spec.device).map_err(lab_error)?)
            );
            // Inside the run: host page writes, with the rate and the ETA.
            let pb = crate::progress::bar(1, r.dev.quiet, "plan run: host page writes");
            let progress = |done: u64, total: u64| {
                pb.set_length(total.max(1));
                pb.set_position(done);
            };
            Cancel.on_sigint();
            let out = plan::run(&spec, Some(&progress), &Cancel).map_err(lab_error)?;
            pb.finish_and_clear();
            if r.json {
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                println!("{}", plan::line(&out.result));
            }
            let stopped = out.result.interrupted;
            crate::stop_if(stopped.then(|| "the figures cover the requests until then".into()))
        }
        PlanCmd::Figures(f) => figures(&f),
        PlanCmd::Bench(d) => bench(&d),
    }
}

fn figures(f: &FigArgs) -> Result<()> {
    let spec = plan::figures_from_flags(&f.dev, &f.figs).map_err(lab_error)?;
    crate::resources::create_output_dir("--out", &spec.out)?;
    eprintln!("{}", plan::describe(&spec.opts().map_err(lab_error)?));
    let total = plan::figure_runs(&spec).map_err(lab_error)?;
    // In thousandths of runs ([`plan::RUN_UNITS`] per run), shown as runs: it moves inside
    // every run.
    let units = total * plan::RUN_UNITS;
    let pb = crate::progress::bar_of(units, plan::RUN_UNITS, f.dev.quiet, "plan figures", "runs");
    // Moves inside every run (its host page writes), not only between runs.
    let mut report = |done: u64, _: u64, r: Option<&RunResult>| {
        pb.set_position(done);
        if let Some(r) = r {
            pb.suspend(|| println!("{}", plan::line(r)));
        }
    };
    let mut obs = plan::RunProgress::new(total, &mut report);
    Cancel.on_sigint();
    let out = plan::figures_with(&spec, &mut obs, &Cancel).map_err(lab_error)?;
    pb.finish_and_clear();
    let r = &out.result;
    if r.interrupted {
        eprintln!(
            "wrote {}/plan-*.csv with the {} runs that finished",
            spec.out.display(),
            r.finished
        );
    } else {
        eprintln!("wrote {}/plan-*.csv and plan-*.png", spec.out.display());
    }
    crate::stop_if(r.interrupted.then(|| {
        format!(
            "{} of {total} runs finished; their CSVs are in {} (the charts of unfinished figures are not drawn)",
            r.finished,
            spec.out.display()
        )
    }))
}

fn bench(d: &DeviceFlags) -> Result<()> {
    let spec = plan::device_from_flags(d, false).map_err(lab_error)?;
    // The handler before the header: a Ctrl-C once the header is out stops the run.
    Cancel.on_sigint();
    eprintln!("{}", plan::describe(&plan::opts(&spec).map_err(lab_error)?));
    let runs = plan::bench(&spec, &Cancel).map_err(lab_error)?;
    for (name, r) in &runs {
        println!("{}", plan::bench_line(name, r));
    }
    let stopped = runs.last().is_some_and(|(_, r)| r.interrupted);
    crate::stop_if(
        stopped.then(|| format!("{} of 2 schemes ran, the last one partially", runs.len())),
    )
}
