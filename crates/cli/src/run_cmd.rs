//! `nowa run JOB.toml|JOB.json|RESULT.json`: runs a job file, or runs again the run a JSON
//! result names (its `nowa` object: command and complete spec).

use crate::{interrupted, lab_error};
use anyhow::{Context as _, Result};
use clap::Args;
use nowa_lab::{Cancel, JobOutcome};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// A job file (`command = "sim"` and a `[spec]` table; or the same in JSON), or a JSON
    /// result of nowa (`--json`): its run runs again, the same spec and seed.
    job: PathBuf,
    /// Print the result as JSON (stdout) instead of the summary.
    #[arg(long)]
    json: bool,
    /// Write the per-interval time series to this CSV file (first line: the run's identity).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// `nowa run`.
pub fn run(a: RunArgs) -> Result<()> {
    let job = nowa_lab::load_job(&a.job).map_err(lab_error)?;
    check_csv(&job, a.csv.as_deref())?;
    eprintln!("nowa run: {} job from {}", job.command(), a.job.display());
    Cancel.on_sigint();
    let pb = crate::progress::bar(1000, a.quiet, "running");
    let progress = |done: u64, total: u64| pb.set_position(done * 1000 / total.max(1));
    let varies = match &job {
        nowa_lab::Job::Ycsb(spec) => spec.nondeterminism(),
        nowa_lab::Job::Tpcc(spec) => spec.nondeterminism(),
        _ => None,
    };
    if let Some(why) = varies {
        eprintln!("nowa run: this run may write other bytes than the one it repeats: {why}");
    }
    let out = job.run(Some(&progress), &Cancel).map_err(lab_error)?;
    pb.finish_and_clear();
    let id = out.identity();
    assert_eq!(
        id.command,
        job.command(),
        "the result names the job's command"
    );
    if let Some(path) = &a.csv {
        write_csv(&out, path)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_summary(&out);
    }
    if Cancel.requested() {
        println!("interrupted (Ctrl-C): the results above cover the part that ran");
        return Err(interrupted("the results above cover the part that ran"));
    }
    Ok(())
}

/// `--csv` names a new file, and only for a job with a time series (the figure jobs write
/// their CSVs under their spec's out directory).
fn check_csv(job: &nowa_lab::Job, csv: Option<&std::path::Path>) -> Result<()> {
    crate::resources::check_output_file("--csv", csv)?;
    if csv.is_some()
        && matches!(
            job,
            nowa_lab::Job::SimSweep(_)
                | nowa_lab::Job::FrozenFigures(_)
                | nowa_lab::Job::FrozenEngineFigures(_)
                | nowa_lab::Job::FrozenTrain(_)
                | nowa_lab::Job::FrozenSynth(_)
                | nowa_lab::Job::FrozenReplay(_)
        )
    {
        return Err(crate::usage(format!(
            "--csv: a {} job writes its CSVs under its spec's out directory",
            job.command()
        )));
    }
    if csv.is_some()
        && ["plan-", "trace-", "infer-", "capture", "frozen-"]
            .iter()
            .any(|p| job.command().starts_with(p))
    {
        return Err(crate::usage(format!(
            "--csv: a {} job has no time series",
            job.command()
        )));
    }
    Ok(())
}

/// A result's CSV at `path` (the figure jobs write theirs under their spec's out directory and
/// are refused `--csv` before they run).
fn write_csv(out: &JobOutcome, path: &std::path::Path) -> Result<()> {
    match out {
        JobOutcome::Sim(sim) => sim.write_intervals_csv(path).map_err(lab_error)?,
        JobOutcome::Ycsb(y) => {
            let file = nowa_lab::csv_file(path, &y.nowa).map_err(lab_error)?;
            nowa_bench::ycsb::write_ticks_csv(&y.result.result.ticks, file)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        JobOutcome::Compare(c) => nowa_lab::compare::write_csv(c, path).map_err(lab_error)?,
        JobOutcome::Table1(t) => {
            nowa_bench::table1::write_csv(&t.result, path)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        JobOutcome::Tpcc(t) => {
            let file = nowa_lab::csv_file(path, &t.nowa).map_err(lab_error)?;
            nowa_tpcc::write_samples_csv(&t.result.run.samples, file)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        JobOutcome::Ssdiq(s) => {
            let file = nowa_lab::csv_file(path, &s.nowa).map_err(lab_error)?;
            nowa_bench::ssdiq::report::write_intervals(&s.result, file)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        _ => unreachable!("--csv is refused for a job without a time series before it runs"),
    }
    Ok(())
}

/// A result's summary on stdout.
fn print_summary(out: &JobOutcome) {
    match out {
        JobOutcome::Sim(sim) => print!("{}", sim.summary()),
        JobOutcome::Ycsb(y) => print!("{}", nowa_bench::ycsb::summary(&y.result.result)),
        JobOutcome::Compare(c) => print!("{}", nowa_lab::compare::table(&c.result)),
        JobOutcome::Tpcc(t) => print!("{}", nowa_lab::tpcc::summary(&t.result)),
        JobOutcome::Table1(t) => print!("{}", nowa_bench::table1::format(&t.result)),
        JobOutcome::SimSweep(s) => {
            for f in &s.result.figures {
                println!("{}", nowa_lab::sim::sweep::table(f));
            }
        }
        JobOutcome::FrozenFigures(f) => print!("{}", f.result.summary),
        JobOutcome::Ssdiq(s) => print!("{}", nowa_bench::ssdiq::report::text_report(&s.result)),
        JobOutcome::PlanRun(p) => println!("{}", nowa_lab::plan::line(&p.result)),
        JobOutcome::PlanFigures(f) => {
            for r in &f.result.runs {
                println!("{}", nowa_lab::plan::line(r));
            }
        }
        JobOutcome::TraceStats(s) => print!("{}", s.result.stats.summary(20)),
        JobOutcome::TraceConvert(c) => println!("converted {} records", c.result.records),
        JobOutcome::TraceGen(g) => println!("{} writes of {}", g.result.writes, g.result.workload),
        JobOutcome::InferGcUnit(g) => {
            let unit = g.result.inference.gc_unit_bytes;
            println!(
                "inferred GC unit: {}",
                unit.map_or("none".into(), |b| format!("{} KiB", b >> 10))
            );
        }
        JobOutcome::FrozenEngineFigures(f) => print!("{}", f.result.summary),
        JobOutcome::FrozenTrain(t) => print!("{}", t.result.text),
        JobOutcome::FrozenSynth(s) => println!("{:?}", s.result.summary),
        JobOutcome::FrozenReplay(r) => print!("{}", nowa_lab::frozen::table(&r.result.runs, false)),
        // helper cli's arms (2).
        JobOutcome::Capture(c) => print!("{}", nowa_lab::capture::summary(c)),
        JobOutcome::FrozenStats(s) => print!("{}", nowa_lab::frozen::tools::stats_table(&s.result)),
        JobOutcome::FrozenBench(b) => print!("{}", nowa_lab::frozen::tools::bench_text(b)),
        JobOutcome::FrozenFromTrace(f) => println!("{} records", f.result.summary.records),
    }
}
