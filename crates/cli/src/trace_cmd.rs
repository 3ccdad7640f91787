//! `nowa trace convert|stats|gen`: flags -> `nowa_lab::trace` specs -> run -> print (the
//! `--trace` flags of `nowa sim` are nowa-lab's).

use crate::{flags, lab_error, usage};
use anyhow::Result;
use clap::{Args, Subcommand};
pub use nowa_lab::trace::SkipBad;
use nowa_lab::trace::{self as lab, ConvertSpec, GenSpec, StatsSpec};
use nowa_lab::Cancel;
use nowa_workload::WorkloadSpec;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct TraceArgs {
    #[command(subcommand)]
    sub: TraceSub,
}

#[derive(Subcommand, Debug)]
enum TraceSub {
    /// Convert a trace (any readable format) to the compact binary form, or to the nowa CSV
    /// when OUT ends in .csv.
    Convert(ConvertArgs),
    /// Footprint, write volume, request sizes, discards and flushes, per volume.
    Stats(StatsArgs),
    /// Write a synthetic trace (nowa CSV or binary) from one of `nowa sim`'s workloads:
    /// 4 KiB writes (and the workload's trims), one record each.
    Gen(GenArgs),
}

#[derive(Args, Debug)]
struct ConvertArgs {
    /// Input trace (.gz/.xz/.zst are decompressed).
    input: PathBuf,
    /// Output: binary form, or the nowa CSV if it ends in .csv.
    output: PathBuf,
    /// Input format: csv, alibaba, tencent, msr, disksim, blkparse, fio, midas, binary
    /// (default: recognized from the first line).
    #[arg(long)]
    format: Option<String>,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    skip: SkipBad,
}

#[derive(Args, Debug)]
struct StatsArgs {
    /// Trace file.
    file: PathBuf,
    /// Input format (default: recognized from the first line).
    #[arg(long)]
    format: Option<String>,
    /// Print JSON instead of the report.
    #[arg(long)]
    json: bool,
    /// Volumes listed in the report (the ones that write most).
    #[arg(long, default_value_t = 20)]
    max_volumes: usize,
    #[command(flatten)]
    skip: SkipBad,
}

#[derive(Args, Debug)]
struct GenArgs {
    /// Output: binary form, or the nowa CSV if it ends in .csv.
    output: PathBuf,
    /// Workload, as `nowa sim --workload`: uniform, two-zone:X/Y, zipf:THETA, ...
    #[arg(long, default_value = "uniform")]
    workload: String,
    /// Logical capacity the workload addresses.
    #[arg(long, default_value = "1GiB", value_parser = flags::size(4096, u64::MAX))]
    capacity: u64,
    /// Fraction of the capacity in use.
    #[arg(long, default_value = "1", value_parser = flags::fraction(0.0, true, 1.0, false))]
    fill: f64,
    /// 4 KiB writes to generate (e.g. 5M).
    #[arg(long, default_value = "1M", value_parser = flags::count::<u64>(1, u64::MAX))]
    writes: u64,
    /// Seed of the workload generator (printed; the same seed writes the same trace).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    force: bool,
}

pub fn run(a: TraceArgs) -> Result<()> {
    match a.sub {
        TraceSub::Convert(c) => convert(c),
        TraceSub::Stats(s) => stats(s),
        TraceSub::Gen(g) => generate(g),
    }
}

fn convert(c: ConvertArgs) -> Result<()> {
    let spec = ConvertSpec {
        input: c.input,
        output: c.output,
        format: c.format,
        force: c.force,
        skip_bad: c.skip.skip_bad,
    };
    Cancel.on_sigint();
    let r = lab::convert(&spec, &Cancel).map_err(lab_error)?.result;
    #[expect(clippy::cast_precision_loss, reason = "file sizes for the eye")]
    let mib = |b: u64| b as f64 / 1_048_576.0;
    println!(
        "converted {} records ({}) from {} ({:.1} MiB) to {} ({:.1} MiB) in {:.2} s",
        r.records,
        r.format,
        spec.input.display(),
        mib(r.bytes.0),
        spec.output.display(),
        mib(r.bytes.1),
        r.secs
    );
    stopped(r.interrupted, &spec.output)
}

/// After Ctrl-C: the `interrupted` line on stdout, exit 130; the output keeps what was
/// written.
fn stopped(interrupted: bool, out: &std::path::Path) -> Result<()> {
    if !interrupted {
        return Ok(());
    }
    println!(
        "interrupted (Ctrl-C): {} holds the records written until then",
        out.display()
    );
    Err(crate::interrupted(format!("{} is partial", out.display())))
}

fn stats(s: StatsArgs) -> Result<()> {
    let spec = StatsSpec {
        file: s.file,
        format: s.format,
        skip_bad: s.skip.skip_bad,
    };
    Cancel.on_sigint();
    let out = lab::stats(&spec, &Cancel, &|| {
        eprintln!("nowa trace stats: reading {}", spec.file.display());
    })
    .map_err(lab_error)?;
    if s.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("{} ({})", spec.file.display(), out.result.format);
        print!("{}", out.result.stats.summary(s.max_volumes));
    }
    if out.result.interrupted {
        println!("interrupted (Ctrl-C): the statistics cover the records read until then");
        return Err(crate::interrupted(format!(
            "after {} records",
            out.result.stats.total.records
        )));
    }
    Ok(())
}

fn generate(g: GenArgs) -> Result<()> {
    let workload: WorkloadSpec = g
        .workload
        .parse()
        .map_err(|e: nowa_workload::WorkloadError| usage(format!("--workload: {e}")))?;
    let spec = GenSpec {
        output: g.output,
        workload,
        capacity: g.capacity,
        fill: g.fill,
        writes: g.writes,
        seed: g.seed,
        force: g.force,
    };
    spec.check().map_err(lab_error)?;
    Cancel.on_sigint();
    eprintln!(
        "nowa trace gen: seed {}, {} on {} pages: {} writes to {}",
        spec.seed,
        g.workload,
        spec.capacity / 4096,
        spec.writes,
        spec.output.display()
    );
    let r = lab::generate(&spec, &Cancel).map_err(lab_error)?.result;
    println!(
        "{} writes of {}, {} records",
        r.writes, r.workload, r.records
    );
    stopped(r.interrupted, &spec.output)
}
