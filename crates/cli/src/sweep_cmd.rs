//! `nowa sweep JOB --grid FLAG=V1,V2 ...`: a grid of runs around a job, into a Parquet store,
//! on this machine or on a Ray cluster. The sweep lives in the Python module (`pip install
//! .`: pyarrow for the store, Ray for the cluster); this command hands its flags over.

use crate::usage;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::Command;

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The base job file (TOML or JSON, as `nowa run` takes).
    job: PathBuf,
    /// One axis of the grid: a flag (underscores or dashes) and its values, comma-separated
    /// (`op_physical=5%,7%,10%`); repeat for more axes (their product is swept).
    #[arg(long, value_name = "FLAG=V1,V2,...", required = true)]
    grid: Vec<String>,
    /// Where the tasks run: local (processes on this machine) or ray (a Ray cluster).
    #[arg(long, default_value = "local", value_parser = ["local", "ray"])]
    backend: String,
    /// The Parquet store: results are appended, points already in it are skipped.
    #[arg(long, value_name = "FILE")]
    store: PathBuf,
    /// Runs per point, each with its own seed derived from the base seed.
    #[arg(long, default_value = "1", value_parser = crate::flags::count::<u32>(1, 1_000_000))]
    repeats: u32,
    /// Ray cluster address (default: a running cluster if RAY_ADDRESS is set, else a local one).
    #[arg(long, value_name = "ADDR")]
    address: Option<String>,
    /// Parallel tasks of the local backend (default: all cores).
    #[arg(long, value_parser = crate::flags::count::<u32>(1, 1024))]
    workers: Option<u32>,
}

/// `nowa sweep`: runs `python3 -m nowa sweep` (or `$NOWA_PYTHON`) with the same flags.
pub fn run(a: SweepArgs) -> Result<()> {
    assert!(!a.grid.is_empty(), "clap requires --grid");
    let python = std::env::var("NOWA_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "nowa", "sweep"]).arg(&a.job);
    for g in &a.grid {
        cmd.arg("--grid").arg(g);
    }
    cmd.args(["--backend", &a.backend])
        .arg("--store")
        .arg(&a.store);
    cmd.args(["--repeats", &a.repeats.to_string()]);
    if let Some(addr) = &a.address {
        cmd.args(["--address", addr]);
    }
    if let Some(w) = a.workers {
        cmd.args(["--workers", &w.to_string()]);
    }
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) => {
            return Err(usage(format!(
                "nowa sweep runs in the Python module: cannot start {python} ({e}); install it with `pip install .` at the repository root, or name the interpreter in NOWA_PYTHON"
            )))
        }
    };
    let code = status
        .code()
        .context("the Python sweep was killed by a signal")?;
    std::process::exit(code);
}
