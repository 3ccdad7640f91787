//! `nowa ckpt figures`: Park & Lee's hot-page-aware checkpointing experiments on TPC-C
//! (docs/checkpointing.md) with InnoDB's page cleaner (`--flushing innodb`): Figures 1-5,
//! Tables I and II, and the adaptive deferral under a redo bound. Every point is one `nowa
//! tpcc` child process (the same binary), so a run frees its memory and a crash is a real
//! `kill -9`; its results are read from its JSON (`--out`), kept under `--work` and reused
//! when the command is run again with the same parameters. A crashed database is recovered
//! and checked in-process (`tpcc_cmd::check_database`: typed results, no output parsed).

use crate::flags::{self, SimTiming};
use crate::usage;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use nowa_lab::ckpt::{self as figures, Point, Recovery};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Pages of one warehouse after the load (~150 MiB measured in place): the base of the
/// buffer fractions ("buffer = 50% of the database").
pub(crate) const WAREHOUSE_DB_BYTES: u64 = 150 << 20;

#[derive(Args, Debug)]
pub struct CkptArgs {
    #[command(subcommand)]
    cmd: CkptCmd,
}

#[derive(Subcommand, Debug)]
enum CkptCmd {
    /// Table I, Figures 3, 4, 5 and Table II of the paper (and the adaptive bound) on TPC-C,
    /// as CSV and PNG under --out; tables as Markdown on stdout.
    Figures(FigArgs),
}

#[derive(Args, Debug, Clone)]
pub(crate) struct FigArgs {
    /// Directory of the figures (CSV, PNG).
    #[arg(long, default_value = "docs/figures")]
    out: PathBuf,
    /// Directory of the per-run JSON (reused when present) and the crash images.
    #[arg(long, default_value = "ckpt-runs")]
    work: PathBuf,
    /// Smoke-test scale: 1 warehouse, 15 s runs (the page cleaner's batches are a second
    /// apart), buffers 20,50, counts 0,8, in place, recovery at counts 0,8 (overrides the
    /// grid flags).
    #[arg(long)]
    quick: bool,
    /// Warehouses.
    #[arg(long, default_value = "1", value_parser = flags::count::<u32>(1, 64))]
    warehouses: u32,
    /// Seconds of each run phase (after the load).
    #[arg(long, default_value = "30", value_parser = flags::seconds(1.0, 86400.0))]
    seconds: f64,
    /// Buffer pool sizes, percent of the database after the load (150 MiB per warehouse).
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
    /// end of the run, then recovery timed by phase).
    #[arg(long, default_value = "0,3,8", value_delimiter = ',',
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
    /// Seed of every run.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

impl FigArgs {
    /// The grid `--quick` stands for.
    fn scaled(mut self) -> FigArgs {
        if self.quick {
            self.warehouses = 1;
            self.seconds = 15.0;
            self.buffers = vec![20, 50];
            self.counts = vec![0, 8];
            self.paths = vec!["inplace".into()];
            self.recovery_counts = vec![0, 8];
        }
        self
    }

    fn pool_bytes(&self, pct: u32) -> u64 {
        assert!((1..=100).contains(&pct), "buffer {pct}% of the database");
        (u64::from(self.warehouses) * WAREHOUSE_DB_BYTES * u64::from(pct) / 100).max(1 << 20)
    }
}

/// The `nowa tpcc` flags of a point (device and duration left to the caller).
fn tpcc_args(a: &FigArgs, p: &Point) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "tpcc".into(),
        "-q".into(),
        format!("--warehouses={}", a.warehouses),
        format!("--threads={}", a.threads),
        format!("--seed={}", a.seed),
        format!("--pool={}", a.pool_bytes(p.buffer_pct)),
        format!("--wal-limit={}", a.wal_limit),
        format!("--max-checkpoint-count={}", p.mcc),
        format!("--write-path={}", p.path),
        "--flushing=innodb".into(),
        format!("--io-capacity={}", a.io_capacity),
        format!("--io-capacity-max={}", a.io_capacity_max),
    ];
    if let Some(b) = p.redo_bound {
        v.push(format!("--max-redo-bytes={b}"));
    }
    v
}

fn nowa_exe() -> Result<PathBuf> {
    std::env::current_exe().context("locating the nowa binary")
}

/// One `nowa tpcc ARGS --out=FILE` child process: its JSON report.
pub(crate) fn tpcc_json(args: &[String], file: &std::path::Path) -> Result<Value> {
    let out = Command::new(nowa_exe()?)
        .arg("tpcc")
        .args(args)
        .arg(format!("--out={}", file.display()))
        .stdout(Stdio::null())
        .output()
        .context("running nowa tpcc")?;
    if !out.status.success() {
        bail!(
            "nowa tpcc {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
    assert!(
        v["engine"].is_object() && v["run"]["samples"].is_array(),
        "nowa tpcc's JSON has the engine counters and the samples"
    );
    Ok(v)
}

/// One paced run on the simulated SSD: its `nowa tpcc --json` output (reused from `--work`).
fn paced_run(a: &FigArgs, p: &Point) -> Result<Value> {
    let file = a.work.join(format!("run-{}-{}s.json", p.name(), a.seconds));
    if let Ok(text) = std::fs::read_to_string(&file) {
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            eprintln!("nowa ckpt: {} (reused {})", p.name(), file.display());
            return Ok(v);
        }
    }
    let timing = match a.sim_timing {
        SimTiming::Bandwidth => "bandwidth",
        SimTiming::Femu => "femu",
        SimTiming::Mqsim => "mqsim",
    };
    let mut args = tpcc_args(a, p);
    assert!(args[0] == "tpcc", "a nowa tpcc command line");
    args.remove(0);
    args.push(format!("--duration={}", a.seconds));
    args.push(format!("--sim-timing={timing}"));
    args.push(format!("--media-bandwidth={}", a.media_bandwidth));
    args.push(format!("--read-bandwidth={}", a.read_bandwidth));
    eprintln!("nowa ckpt: {} ...", p.name());
    let t = Instant::now();
    let v = tpcc_json(&args, &file)?;
    eprintln!(
        "nowa ckpt: {} done in {:.0} s: {:.0} txn/s",
        p.name(),
        t.elapsed().as_secs_f64(),
        v["run"]["txn_per_s"].as_f64().unwrap_or(f64::NAN)
    );
    Ok(v)
}

/// Polls for the child's `--ready-file` (written once its load is done); fails if the child
/// exits first.
fn wait_loaded(child: &mut std::process::Child, ready: &std::path::Path) -> Result<()> {
    let t = Instant::now();
    while !ready.exists() {
        if let Some(st) = child.try_wait()? {
            bail!("the crash run exited during its load ({st})");
        }
        if t.elapsed() > Duration::from_secs(1800) {
            bail!("the crash run did not finish its load in 30 min");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// Table II's row of a recovery: its typed report (`nowa tpcc --check-only` called as a
/// library).
fn recovery_of(c: &crate::tpcc_cmd::CheckOutcome) -> Result<Recovery> {
    let r = c
        .recovery
        .as_ref()
        .context("the database opened without recovery")?;
    anyhow::ensure!(!r.clean_shutdown, "the crash image was shut down cleanly");
    Ok(Recovery {
        open_secs: c.open_secs,
        analysis_us: r.analysis_micros,
        redo_us: r.redo_micros,
        records: r.records_replayed,
        redo_bytes: r.end_lsn.saturating_sub(r.redo_lsn),
    })
}

/// A run on a file killed with SIGKILL `--seconds` into its run phase, then recovered and
/// checked by `nowa tpcc --check-only` (reused from `--work`).
fn crash_run(a: &FigArgs, p: &Point) -> Result<Recovery> {
    let file = a
        .work
        .join(format!("crash-{}-{}s.json", p.name(), a.seconds));
    if let Some(r) = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str::<Recovery>(&t).ok())
    {
        return Ok(r);
    }
    let img = a.work.join(format!("crash-{}.img", p.name()));
    let img_s = img.display().to_string();
    let mut args = tpcc_args(a, p);
    args.extend([
        format!("--device={img_s}"),
        format!("--force={img_s}"),
        format!("--duration={}", a.seconds * 10.0 + 60.0),
    ]);
    eprintln!("nowa ckpt: crash {} ...", p.name());
    let ready = a.work.join(format!("crash-{}.ready", p.name()));
    let _ = std::fs::remove_file(&ready);
    args.push(format!("--ready-file={}", ready.display()));
    let mut child = Command::new(nowa_exe()?)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("running nowa tpcc")?;
    wait_loaded(&mut child, &ready)?;
    std::thread::sleep(Duration::from_secs_f64(a.seconds));
    child.kill().context("kill -9")?;
    let _ = child.wait();
    let _ = std::fs::remove_file(&ready);
    let mut check = tpcc_args(a, p);
    check.retain(|s| !s.starts_with("--seed") && s != "tpcc");
    check.extend([format!("--device={img_s}"), "--check-only".into()]);
    let outcome = crate::tpcc_cmd::check_database(&check);
    let _ = std::fs::remove_file(&img);
    let outcome = outcome.with_context(|| format!("recovery of {}", p.name()))?;
    if !outcome.consistency.is_consistent() {
        bail!("{}: the consistency check failed after recovery", p.name());
    }
    let r = recovery_of(&outcome)?;
    assert!(
        r.open_secs * 1e6 >= (r.analysis_us + r.redo_us) as f64 * 0.99,
        "recovery phases within the open time"
    );
    std::fs::write(&file, serde_json::to_string(&r)?)?;
    eprintln!(
        "nowa ckpt: crash {}: recovery {:.3} s, redo {} us, {} bytes",
        p.name(),
        r.open_secs,
        r.redo_us,
        r.redo_bytes
    );
    Ok(r)
}

/// Every paced point: the grid, then the adaptive bounds at the largest buffer.
fn points(a: &FigArgs) -> Vec<Point> {
    let mut v = Vec::new();
    for path in &a.paths {
        for &b in &a.buffers {
            for &m in &a.counts {
                v.push(Point {
                    path: path.clone(),
                    buffer_pct: b,
                    mcc: m,
                    redo_bound: None,
                });
            }
        }
    }
    let big = a.buffers.iter().copied().max().unwrap_or(50);
    for &r in &a.redo_bounds {
        v.push(Point {
            path: "inplace".into(),
            buffer_pct: big,
            mcc: 0,
            redo_bound: Some(r),
        });
    }
    assert!(
        v.len() == a.paths.len() * a.buffers.len() * a.counts.len() + a.redo_bounds.len(),
        "one point per grid cell and bound"
    );
    v
}

/// `nowa ckpt`.
pub fn run_cmd(a: CkptArgs) -> Result<()> {
    let CkptCmd::Figures(f) = a.cmd;
    figures(f.scaled()).map(|_| ())
}

/// `nowa ckpt figures FLAGS` (flags without the command words) as a library call: the
/// figures written to its `--out`, the runs as typed results (`nowa reproduce`).
pub(crate) fn figures_of_flags(flags: &[String]) -> Result<nowa_lab::reproduce::CkptResult> {
    use clap::Parser;
    #[derive(Parser)]
    #[command(no_binary_name = true)]
    struct W {
        #[command(flatten)]
        a: FigArgs,
    }
    let w = W::try_parse_from(flags).map_err(|e| usage(format!("nowa ckpt figures: {e}")))?;
    figures(w.a.scaled())
}

/// Every run of the grid, then the figures; the runs as typed results.
fn figures(f: FigArgs) -> Result<nowa_lab::reproduce::CkptResult> {
    if f.buffers.is_empty() || f.counts.is_empty() || f.paths.is_empty() {
        return Err(usage(
            "--buffers, --counts, --paths: at least one value each",
        ));
    }
    for (flag, d) in [("--out", &f.out), ("--work", &f.work)] {
        crate::resources::create_output_dir(flag, d)?;
    }
    eprintln!(
        "nowa ckpt: seed {}, {} warehouses, {} s per run, WAL limit {} MiB, {} paced points",
        f.seed,
        f.warehouses,
        f.seconds,
        f.wal_limit >> 20,
        points(&f).len()
    );
    let mut runs = Vec::new();
    for p in points(&f) {
        let v = paced_run(&f, &p)?;
        runs.push((p, v));
    }
    let big = f.buffers.iter().copied().max().unwrap_or(50);
    let mut crashes = Vec::new();
    let crash_points = f.recovery_counts.iter().map(|&m| (m, None));
    let bounds = f.redo_bounds.iter().map(|&b| (0, Some(b)));
    for (mcc, redo_bound) in crash_points.chain(bounds) {
        let p = Point {
            path: "inplace".into(),
            buffer_pct: big,
            mcc,
            redo_bound,
        };
        let r = crash_run(&f, &p)?;
        crashes.push((p, r));
    }
    let setup = format!(
        "TPC-C {} wh, {} s runs, WAL {} MiB, SSD {} MB/s, io_capacity {}/{}",
        f.warehouses,
        f.seconds,
        f.wal_limit >> 20,
        f.media_bandwidth / 1_000_000,
        f.io_capacity,
        f.io_capacity_max
    );
    figures::write_all(&f.out, &runs, &crashes, big, &setup).map_err(crate::lab_error)?;
    Ok(figures::typed(&runs, &crashes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run uses InnoDB's page cleaner (the cadence the paper's numbers come from).
    #[test]
    fn every_run_uses_the_innodb_page_cleaner() {
        use clap::Parser;
        #[derive(Parser)]
        struct W {
            #[command(flatten)]
            a: FigArgs,
        }
        let a = W::parse_from(["x", "--quick"]).a.scaled();
        assert!(a.seconds >= 10.0, "runs span several cleaner seconds");
        let p = &points(&a)[0];
        let args = tpcc_args(&a, p);
        assert!(args.iter().any(|s| s == "--flushing=innodb"), "{args:?}");
        assert!(args.iter().any(|s| s == "--io-capacity=1000"), "{args:?}");
    }
}
