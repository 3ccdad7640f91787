//! `nowa trace convert|stats|gen` (the `--trace` flags of `nowa sim` are nowa-lab's).

use crate::usage;
use anyhow::Result;
use clap::{Args, Subcommand};
use nowa_trace::{binary, open, CsvWriter, Format, Op, Record, TraceError, TraceStats};
use nowa_workload::{WorkloadParams, WorkloadSpec};
use std::path::{Path, PathBuf};

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

/// `--skip-bad`, on every command that reads a trace.
#[derive(Args, Debug, Clone, Copy)]
pub struct SkipBad {
    /// Accept a trace however many of its lines are unreadable (default: refuse one with more
    /// than 1%; skipped lines are counted on stderr either way).
    #[arg(long)]
    skip_bad: bool,
}

impl SkipBad {
    /// Sets the policy of every trace reader this process opens.
    pub fn apply(self) {
        nowa_trace::set_skip_bad(self.skip_bad);
    }
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
    #[arg(long, default_value = "1GiB", value_parser = size_arg)]
    capacity: u64,
    /// Fraction of the capacity in use.
    #[arg(long, default_value = "1", value_parser = fraction_arg)]
    fill: f64,
    /// 4 KiB writes to generate (e.g. 5M).
    #[arg(long, default_value = "1M", value_parser = count_arg)]
    writes: u64,
    /// Seed of the workload generator (printed; the same seed writes the same trace).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    force: bool,
}

fn size_arg(s: &str) -> Result<u64, String> {
    nowa_units::parse_size_min(s, 4096).map_err(|e| e.to_string())
}
fn fraction_arg(s: &str) -> Result<f64, String> {
    nowa_units::parse_fraction_in(s, 0.0, 1.0, false)
        .map_err(|e| e.to_string())
        .and_then(|v| {
            if v > 0.0 {
                Ok(v)
            } else {
                Err(format!("'{s}' must be > 0"))
            }
        })
}
fn count_arg(s: &str) -> Result<u64, String> {
    nowa_units::parse_count_in(s, 1, u64::MAX).map_err(|e| e.to_string())
}

fn parse_format(flag: &str, f: Option<&str>) -> Result<Option<Format>> {
    f.map(|s| {
        s.parse::<Format>()
            .map_err(|e| usage(format!("{flag}: {e}")))
    })
    .transpose()
}

/// Trace errors a user causes (a wrong, damaged or empty file, an output that exists) are
/// usage errors (exit 2).
pub fn trace_err(e: TraceError) -> anyhow::Error {
    match &e {
        TraceError::TooManyBad { .. } => usage(format!("{e}; --skip-bad accepts them")),
        _ if e.is_bad_input() => usage(e.to_string()),
        _ => anyhow::Error::new(e),
    }
}

pub fn run(a: TraceArgs) -> Result<()> {
    match a.sub {
        TraceSub::Convert(c) => convert(c),
        TraceSub::Stats(s) => stats(s),
        TraceSub::Gen(g) => generate(g),
    }
}

/// A trace output: binary, or the nowa CSV (by extension).
enum Sink {
    Binary(binary::Writer),
    Csv(CsvWriter),
}

impl Sink {
    fn create(path: &Path, force: bool, with_volume: bool) -> Result<Sink> {
        let csv = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        Ok(if csv {
            Sink::Csv(CsvWriter::create(path, force, with_volume).map_err(trace_err)?)
        } else {
            Sink::Binary(binary::Writer::create(path, force).map_err(trace_err)?)
        })
    }
    fn push(&mut self, r: &Record) -> Result<(), TraceError> {
        match self {
            Sink::Binary(w) => w.push(r),
            Sink::Csv(w) => w.push(r),
        }
    }
    fn finish(self) -> Result<(), TraceError> {
        match self {
            Sink::Binary(w) => w.finish().map(|_| ()),
            Sink::Csv(w) => w.finish().map(|_| ()),
        }
    }
}

fn convert(c: ConvertArgs) -> Result<()> {
    c.skip.apply();
    let format = parse_format("--format", c.format.as_deref())?;
    let mut reader = open(&c.input, format).map_err(trace_err)?;
    let multi = !matches!(reader.format(), Format::NowaCsv | Format::Midas);
    let mut out = Sink::create(&c.output, c.force, multi)?;
    let t = std::time::Instant::now();
    let mut n = 0u64;
    while let Some(r) = reader.next_record().map_err(trace_err)? {
        out.push(&r)?;
        n += 1;
    }
    out.finish()?;
    let secs = t.elapsed().as_secs_f64();
    let (inb, outb) = (file_len(&c.input), file_len(&c.output));
    println!(
        "converted {n} records ({}) from {} ({:.1} MiB) to {} ({:.1} MiB) in {secs:.2} s",
        reader.format(),
        c.input.display(),
        inb as f64 / 1048576.0,
        c.output.display(),
        outb as f64 / 1048576.0
    );
    Ok(())
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

fn stats(s: StatsArgs) -> Result<()> {
    s.skip.apply();
    let format = parse_format("--format", s.format.as_deref())?;
    let mut reader = open(&s.file, format).map_err(trace_err)?;
    let st = TraceStats::collect(&mut reader, &mut |_| {}).map_err(trace_err)?;
    if s.json {
        println!("{}", serde_json::to_string_pretty(&st)?);
    } else {
        println!("{} ({})", s.file.display(), reader.format());
        print!("{}", st.summary(s.max_volumes));
    }
    Ok(())
}

fn generate(g: GenArgs) -> Result<()> {
    let spec: WorkloadSpec = g
        .workload
        .parse()
        .map_err(|e: nowa_workload::WorkloadError| usage(format!("--workload: {e}")))?;
    let params =
        WorkloadParams::new(g.capacity / 4096, g.fill, g.seed).map_err(|e| usage(e.to_string()))?;
    let mut w = spec.build(&params).map_err(|e| usage(e.to_string()))?;
    let mut out = Sink::create(&g.output, g.force, false)?;
    let mut writes = 0u64;
    let mut ts = 0u64;
    while writes < g.writes {
        let r = match w.next_op() {
            nowa_workload::Op::Write(l) => {
                writes += 1;
                Record {
                    ts_ns: ts,
                    volume: 0,
                    op: Op::Write,
                    offset: l * 4096,
                    len: 4096,
                }
            }
            nowa_workload::Op::Trim { start, len } => Record {
                ts_ns: ts,
                volume: 0,
                op: Op::Discard,
                offset: start * 4096,
                len: len * 4096,
            },
        };
        out.push(&r)?;
        // One request per microsecond: a clock for the timestamps, nothing more.
        ts += 1000;
    }
    out.finish()?;
    eprintln!(
        "nowa trace gen: seed {}, {} on {} pages: {} writes to {}",
        g.seed,
        w.name(),
        g.capacity / 4096,
        writes,
        g.output.display()
    );
    Ok(())
}
