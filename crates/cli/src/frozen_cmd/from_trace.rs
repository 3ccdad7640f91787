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
    /// Output directory: the log goes to OUT/writes.log (created; a directory that holds
    /// something needs --force).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Write into a non-empty --out (its writes.log is overwritten).
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
    let spec = FromTraceSpec {
        trace: a.trace.clone(),
        out: a.out.clone(),
        force: a.force,
        max_writes: a.max_writes,
        skip_bad: a.skip_bad,
    };
    let log = spec.log();
    let r = tools::from_trace(&spec, &Cancel)
        .map_err(crate::lab_error)?
        .result;
    println!(
        "nowa frozen from-trace: {} -> {}: {} records ({} page writes, {} frees), {} pages",
        a.trace.display(),
        log.display(),
        r.summary.records,
        r.summary.user,
        r.summary.free,
        r.pages
    );
    Ok(())
}
