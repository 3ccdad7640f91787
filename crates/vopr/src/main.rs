//! `nowa-vopr`: run the whole-engine simulation for a range of seeds (long mode), or replay
//! one seed. Progress on stderr; Ctrl-C stops after the seed in progress (exit code 130); a
//! failure prints its seed and the command that replays it, and exits with 1.

use anyhow::{anyhow, Result};
use clap::Parser;
use nowa_vopr::{run_seed, Failure};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Deterministic simulation of the nowa engine: workload, write path, device faults and
/// crash/recover cycles, all from one seed, checked against a model (docs/testing.md).
#[derive(Parser, Debug)]
#[command(name = "nowa-vopr")]
struct Args {
    /// Replay this one seed (prints the setup and every epoch with --verbose).
    #[arg(long, conflicts_with_all = ["seeds", "from"])]
    seed: Option<u64>,
    /// How many seeds to run (counts: 100000, 100k, 1M).
    #[arg(long, default_value = "1000", value_parser = parse_count)]
    seeds: u64,
    /// First seed of the range.
    #[arg(long, default_value_t = 0)]
    from: u64,
    /// Stop after this long (30s, 20m, 2h); the seeds started so far finish.
    #[arg(long, value_parser = parse_duration)]
    time: Option<Duration>,
    /// Go on after a failure (report every failing seed at the end).
    #[arg(long)]
    keep_going: bool,
    /// Print the setup and each epoch of a replayed seed.
    #[arg(long)]
    verbose: bool,
}

fn parse_count(s: &str) -> Result<u64, String> {
    nowa_units::parse_count(s).map_err(|e| e.to_string())
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let secs = nowa_units::parse_seconds(s).map_err(|e| e.to_string())?;
    Duration::try_from_secs_f64(secs).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("nowa-vopr: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run(a: &Args) -> Result<ExitCode> {
    if let Some(seed) = a.seed {
        return Ok(match run_seed(seed, a.verbose) {
            Ok(o) => {
                println!("seed {seed}: ok {o:?}");
                ExitCode::SUCCESS
            }
            Err(f) => {
                println!("{f}");
                ExitCode::from(1)
            }
        });
    }
    nowa_interrupt::install_sigint_handler();
    let end = a
        .from
        .checked_add(a.seeds)
        .ok_or_else(|| anyhow!("--from + --seeds overflows u64"))?;
    let t0 = Instant::now();
    let mut last = t0;
    let mut failures: Vec<Failure> = Vec::new();
    let mut interrupted = false;
    let mut totals = Totals::default();
    for seed in a.from..end {
        if nowa_interrupt::requested() || a.time.is_some_and(|t| t0.elapsed() >= t) {
            interrupted = nowa_interrupt::requested();
            eprintln!("nowa-vopr: stopped before seed {seed}");
            break;
        }
        match run_seed(seed, a.verbose) {
            Ok(o) => totals.add(&o),
            Err(f) => {
                eprintln!("{f}");
                failures.push(f);
                if !a.keep_going {
                    break;
                }
            }
        }
        totals.seeds += 1;
        if last.elapsed() >= Duration::from_secs(10) {
            last = Instant::now();
            eprintln!("{}", totals.line(seed, t0.elapsed(), failures.len()));
        }
    }
    let last_seed = a.from + totals.seeds.saturating_sub(1);
    println!("{}", totals.line(last_seed, t0.elapsed(), failures.len()));
    for f in &failures {
        println!("{f}");
    }
    Ok(if !failures.is_empty() {
        ExitCode::from(1)
    } else if interrupted {
        // Ctrl-C, as every nowa command: the totals so far were printed.
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(Default)]
struct Totals {
    seeds: u64,
    ops: u64,
    crashes: u64,
    recovery_crashes: u64,
    refused: u64,
    explained: u64,
    coverage: nowa_vopr::Coverage,
}

impl Totals {
    fn add(&mut self, o: &nowa_vopr::Outcome) {
        self.ops += o.ops;
        self.crashes += o.crashes;
        self.recovery_crashes += o.recovery_crashes;
        self.refused += u64::from(o.refused.is_some());
        self.explained += o.explained_errors;
        self.coverage = self.coverage.plus(o.coverage);
    }

    fn line(&self, seed: u64, t: Duration, failures: usize) -> String {
        format!(
            "nowa-vopr: {} seeds (up to {seed}) in {:.0} s: {} operations, {} crashes ({} inside \
             recovery), {} opens refused with an explained error, {} explained errors, {failures} \
             failures; exercised: {:?}",
            self.seeds,
            t.as_secs_f64(),
            self.ops,
            self.crashes,
            self.recovery_crashes,
            self.refused,
            self.explained,
            self.coverage
        )
    }
}
