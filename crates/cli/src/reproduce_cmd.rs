//! `nowa reproduce`: flags -> `nowa_lab::reproduce::Spec` -> run (progress bar with ETA over
//! the whole run) -> the verdicts. The TPC-C runs go through [`Engines`] (`nowa ckpt
//! figures`' pipeline and `nowa tpcc` children) until the TPC-C driver is in nowa-lab.

use crate::lab_error;
use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use nowa_lab::reproduce::{self, CkptResult, EngineRuns, Paper, Scale, Spec, TpccOutcome, Verdict};
use nowa_lab::Error;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ReproduceArgs {
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
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Overwrite what --out holds.
    #[arg(long)]
    force: bool,
    /// Seed of every run.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// The TPC-C runs, in this process (checkpointing) and in `nowa tpcc` children.
struct Engines;

fn failed(what: &'static str, e: anyhow::Error) -> Error {
    if e.is::<crate::UsageError>() {
        return Error::Usage(e.to_string());
    }
    Error::Failed {
        what,
        source: e.into(),
    }
}

impl EngineRuns for Engines {
    fn ckpt(&self, flags: &[String]) -> Result<CkptResult, Error> {
        crate::ckpt_cmd::figures_of_flags(flags).map_err(|e| failed("nowa ckpt figures", e))
    }

    fn tpcc(&self, flags: &[String], work: &Path, name: &str) -> Result<TpccOutcome, Error> {
        let file = work.join(format!("tpcc-{name}.json"));
        let v = crate::ckpt_cmd::tpcc_json(flags, &file).map_err(|e| failed("nowa tpcc", e))?;
        let num = |path: &[&str]| {
            path.iter()
                .fold(&v, |v, k| &v[*k])
                .as_f64()
                .unwrap_or(f64::NAN)
        };
        assert!(
            v["run"].is_object(),
            "nowa tpcc's report has its run ({})",
            file.display()
        );
        Ok(TpccOutcome {
            transactions: num(&["run", "transactions"]),
            device_busy_secs: num(&["device_busy_secs"]),
            flash_bytes_per_txn: num(&["flash_bytes_per_txn"]),
            txn_per_s: num(&["run", "txn_per_s"]),
        })
    }
}

fn bar(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(1);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} {elapsed_precise} [{bar:30}] {percent}% eta {eta} {wide_msg}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}

/// `nowa reproduce`.
pub fn run(a: ReproduceArgs) -> Result<()> {
    let spec = Spec {
        scale: if a.full { Scale::Full } else { Scale::Quick },
        papers: a.papers.clone(),
        out: a.out.clone(),
        force: a.force,
        seed: a.seed,
    };
    // Refused before anything runs (the library checks again).
    reproduce::prepare_out(&spec.out, spec.force).map_err(lab_error)?;
    let papers: Vec<String> = spec.papers().iter().map(|p| p.to_string()).collect();
    eprintln!(
        "nowa reproduce: {:?} scale, seed {}, papers {}, into {}",
        spec.scale,
        spec.seed,
        papers.join(", "),
        spec.out.display()
    );
    let t = std::time::Instant::now();
    let pb = bar(a.quiet);
    let observe = |done: u64, total: u64, what: &str| {
        pb.set_length(total.max(1));
        pb.set_position(done);
        pb.set_message(what.to_owned());
    };
    let r = reproduce::run(&spec, &Engines, &observe).map_err(lab_error)?;
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
    Ok(())
}
