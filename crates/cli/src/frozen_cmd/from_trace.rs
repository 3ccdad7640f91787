//! `nowa frozen from-trace`: flags -> `nowa_lab::frozen::tools::FromTraceSpec` -> run -> one
//! line.

use crate::flags;
use anyhow::Result;
use clap::Args;
use nowa_lab::frozen::tools::{self, FromTraceSpec};
use nowa_lab::Cancel;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct FromTraceArgs {
    /// The block trace (any format `nowa sim --trace` reads).
    #[arg(long, value_name = "FILE")]
    trace: PathBuf,
    /// Output write log.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Overwrite --out if it exists.
    #[arg(long)]
    force: bool,
    /// Stop after this many page writes.
    #[arg(long, value_parser = flags::count::<u64>(1, 1 << 50))]
    max_writes: Option<u64>,
    /// Accept a trace however many of its lines are unreadable (default: refuse one with more
    /// than 1%; skipped lines are counted on stderr either way).
    #[arg(long)]
    skip_bad: bool,
}

pub fn run(a: &FromTraceArgs) -> Result<()> {
    crate::resources::check_new_output("--out", &a.out, a.force)?;
    let spec = FromTraceSpec {
        trace: a.trace.clone(),
        out: a.out.clone(),
        force: a.force,
        max_writes: a.max_writes,
        skip_bad: a.skip_bad,
    };
    let r = tools::from_trace(&spec, &Cancel)
        .map_err(crate::lab_error)?
        .result;
    println!(
        "nowa frozen from-trace: {} -> {}: {} records ({} page writes, {} frees), {} pages",
        a.trace.display(),
        a.out.display(),
        r.summary.records,
        r.summary.user,
        r.summary.free,
        r.pages
    );
    Ok(())
}
