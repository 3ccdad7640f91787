//! `trace`: block I/O traces (nowa-trace's readers and writers): statistics (`trace-stats`),
//! conversion to the binary form or the nowa CSV (`trace-convert`), synthetic traces from
//! `nowa sim`'s workloads (`trace-gen`); and how trace errors become usage errors for every
//! command that reads a trace.

use crate::{Cancel, Error, Identity, Report};
use clap::Args;
use nowa_trace::{binary, open, CsvWriter, Format, Op, Record, TraceError, TraceStats};
use nowa_workload::{WorkloadParams, WorkloadSpec};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Trace errors a user causes (a wrong, damaged or empty file, an output that exists) are
/// bad input.
#[must_use]
pub fn trace_error(e: TraceError) -> Error {
    match &e {
        TraceError::TooManyBad { .. } => Error::Usage(format!("{e}; --skip-bad accepts them")),
        _ if e.is_bad_input() => Error::Usage(e.to_string()),
        _ => Error::failed("reading the trace", e),
    }
}

/// `--skip-bad`, on every command that reads a trace.
#[derive(Args, Debug, Clone, Copy)]
pub struct SkipBad {
    /// Accept a trace however many of its lines are unreadable (default: refuse one with more
    /// than 1%; skipped lines are counted on stderr either way).
    #[arg(long)]
    pub skip_bad: bool,
}

impl SkipBad {
    /// Sets the policy of every trace reader this process opens.
    pub fn apply(self) {
        nowa_trace::set_skip_bad(self.skip_bad);
    }
}

/// An input format's name (`None`: recognized from the first line).
fn format(field: &str, f: Option<&str>) -> Result<Option<Format>, Error> {
    f.map(|s| {
        s.parse::<Format>()
            .map_err(|e| Error::Usage(format!("{field}: {e}")))
    })
    .transpose()
}

/// `nowa trace stats`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatsSpec {
    /// The trace.
    pub file: PathBuf,
    /// Its format (None: recognized from the first line).
    pub format: Option<String>,
    /// Accept it however many of its lines are unreadable.
    pub skip_bad: bool,
}

/// A trace's statistics.
#[derive(Debug, Clone, Serialize)]
pub struct StatsResult {
    /// The format read.
    pub format: String,
    /// The statistics.
    #[serde(flatten)]
    pub stats: TraceStats,
    /// Ctrl-C stopped the reading: the statistics cover the records read until then.
    pub interrupted: bool,
}

impl StatsSpec {
    /// Checks the format's name.
    ///
    /// # Errors
    /// [`Error::Usage`] naming `format`.
    pub fn check(&self) -> Result<(), Error> {
        format("--format", self.format.as_deref()).map(|_| ())
    }
}

/// Reads the whole trace; `cancel` stops it between records, the statistics then cover the
/// records read. `opened` runs once the trace is open (the CLI's "reading" line).
///
/// # Errors
/// [`Error::Usage`]: a bad format name, a missing, damaged or empty trace.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn stats(
    spec: &StatsSpec,
    cancel: &Cancel,
    opened: &dyn Fn(),
) -> Result<Report<StatsResult>, Error> {
    nowa_trace::set_skip_bad(spec.skip_bad);
    let f = format("--format", spec.format.as_deref())?;
    let id = Identity::now("trace-stats", spec, 0);
    let mut reader = open(&spec.file, f).map_err(trace_error)?;
    // Told only once the trace opened: bad input stays one line (the error).
    opened();
    let mut interrupted = false;
    let mut go_on = |_| {
        interrupted = cancel.requested();
        !interrupted
    };
    let stats = TraceStats::collect(&mut reader, &mut go_on).map_err(trace_error)?;
    let t = &stats.total;
    assert!(
        t.reads + t.writes + t.discards + t.flushes <= t.records,
        "requests are records"
    );
    // A partial page counts whole (as the replay writes it).
    assert!(
        stats.total.write_pages.saturating_mul(4096) >= stats.total.write_bytes,
        "pages cover the bytes"
    );
    Ok(Report {
        nowa: id,
        result: StatsResult {
            format: reader.format().to_string(),
            stats,
            interrupted,
        },
    })
}

/// A trace output: binary, or the nowa CSV (by extension).
enum Sink {
    Binary(binary::Writer),
    Csv(CsvWriter),
}

impl Sink {
    fn create(path: &Path, force: bool, with_volume: bool) -> Result<Sink, Error> {
        let csv = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        Ok(if csv {
            Sink::Csv(CsvWriter::create(path, force, with_volume).map_err(trace_error)?)
        } else {
            Sink::Binary(binary::Writer::create(path, force).map_err(trace_error)?)
        })
    }
    fn push(&mut self, r: &Record) -> Result<(), Error> {
        match self {
            Sink::Binary(w) => w.push(r),
            Sink::Csv(w) => w.push(r),
        }
        .map_err(trace_error)
    }
    fn finish(self) -> Result<(), Error> {
        match self {
            Sink::Binary(w) => w.finish().map(|_| ()),
            Sink::Csv(w) => w.finish().map(|_| ()),
        }
        .map_err(trace_error)
    }
}

/// `nowa trace convert`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConvertSpec {
    /// The input trace.
    pub input: PathBuf,
    /// The output: binary form, or the nowa CSV if it ends in .csv.
    pub output: PathBuf,
    /// The input's format (None: recognized).
    pub format: Option<String>,
    /// Overwrite the output.
    pub force: bool,
    /// Accept an input however many of its lines are unreadable.
    pub skip_bad: bool,
}

/// What a conversion did.
#[derive(Debug, Clone, Serialize)]
pub struct ConvertResult {
    /// Records converted.
    pub records: u64,
    /// The input's format.
    pub format: String,
    /// Bytes of the input and of the output files.
    pub bytes: (u64, u64),
    /// Wall-clock seconds.
    pub secs: f64,
    /// Ctrl-C stopped it: the output holds the first `records` records.
    pub interrupted: bool,
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// Records between two looks at the stop flag (Ctrl-C).
const CANCEL_EVERY: u64 = 1 << 16;

/// Converts the trace; `cancel` stops it between records, the output then holds those
/// converted so far.
///
/// # Errors
/// [`Error::Usage`]: a bad format, input or output (exists without `force`).
pub fn convert(spec: &ConvertSpec, cancel: &Cancel) -> Result<Report<ConvertResult>, Error> {
    nowa_trace::set_skip_bad(spec.skip_bad);
    let f = format("--format", spec.format.as_deref())?;
    let id = Identity::now("trace-convert", spec, 0);
    let mut reader = open(&spec.input, f).map_err(trace_error)?;
    let multi = !matches!(reader.format(), Format::NowaCsv | Format::Midas);
    let mut out = Sink::create(&spec.output, spec.force, multi)?;
    let t = std::time::Instant::now();
    let (mut n, mut interrupted) = (0u64, false);
    while let Some(r) = reader.next_record().map_err(trace_error)? {
        out.push(&r)?;
        n += 1;
        if n % CANCEL_EVERY == 0 && cancel.requested() {
            interrupted = true;
            break;
        }
    }
    out.finish()?;
    let result = ConvertResult {
        records: n,
        format: reader.format().to_string(),
        bytes: (file_len(&spec.input), file_len(&spec.output)),
        secs: t.elapsed().as_secs_f64(),
        interrupted,
    };
    Ok(Report { nowa: id, result })
}

/// `nowa trace gen`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenSpec {
    /// The output: binary form, or the nowa CSV if it ends in .csv.
    pub output: PathBuf,
    /// The workload, as `nowa sim --workload`.
    pub workload: WorkloadSpec,
    /// Logical capacity the workload addresses, bytes.
    pub capacity: u64,
    /// Fraction of the capacity in use.
    pub fill: f64,
    /// 4 KiB writes to generate.
    pub writes: u64,
    /// The generator's seed.
    pub seed: u64,
    /// Overwrite the output.
    pub force: bool,
}

/// What a generation wrote.
#[derive(Debug, Clone, Serialize)]
pub struct GenResult {
    /// The workload's name.
    pub workload: String,
    /// 4 KiB writes written.
    pub writes: u64,
    /// Records written (writes and trims).
    pub records: u64,
    /// Ctrl-C stopped it: the output holds the first `writes` writes.
    pub interrupted: bool,
}

impl GenSpec {
    /// Checks every field.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field.
    pub fn check(&self) -> Result<(), Error> {
        crate::check_ranges(&[
            ("capacity", self.capacity, 4096, u64::MAX),
            ("writes", self.writes, 1, u64::MAX),
        ])?;
        if !(self.fill > 0.0 && self.fill <= 1.0) {
            return Err(Error::Usage(format!(
                "fill: {} is not in (0, 1]",
                self.fill
            )));
        }
        self.workload
            .validate()
            .map_err(|e| Error::Usage(format!("workload: {e}")))?;
        // The output's directory before any work (and before the CLI's first line).
        crate::resources::check_new_output("output", &self.output, self.force)
    }
}

/// Writes the synthetic trace: 4 KiB writes (and the workload's trims), one record each, one
/// request per microsecond of its clock; `cancel` stops it between writes.
///
/// # Errors
/// [`Error::Usage`]: a bad field, an output that exists without `force`.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn generate(spec: &GenSpec, cancel: &Cancel) -> Result<Report<GenResult>, Error> {
    spec.check()?;
    let id = Identity::now("trace-gen", spec, spec.seed);
    let params = WorkloadParams::new(spec.capacity / 4096, spec.fill, spec.seed)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let mut w = spec
        .workload
        .build(&params)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let mut out = Sink::create(&spec.output, spec.force, false)?;
    let (mut writes, mut records, mut ts) = (0u64, 0u64, 0u64);
    let mut interrupted = false;
    while writes < spec.writes {
        if writes % CANCEL_EVERY == 0 && writes > 0 && cancel.requested() {
            interrupted = true;
            break;
        }
        let (op, offset, len) = match w.next_op() {
            nowa_workload::Op::Write(l) => {
                writes += 1;
                (Op::Write, l * 4096, 4096)
            }
            nowa_workload::Op::Trim { start, len } => (Op::Discard, start * 4096, len * 4096),
        };
        out.push(&Record {
            ts_ns: ts,
            volume: 0,
            op,
            offset,
            len,
        })?;
        records += 1;
        ts += 1000;
        assert!(records >= writes, "every write is a record");
    }
    out.finish()?;
    assert!(
        interrupted || writes == spec.writes,
        "every write asked for"
    );
    let result = GenResult {
        workload: w.name(),
        writes,
        records,
        interrupted,
    };
    Ok(Report { nowa: id, result })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_job, Job, JobOutcome};

    #[test]
    fn trace_specs_round_trip_and_a_generated_trace_repeats() {
        let dir = tempfile::tempdir().expect("tmp");
        let gen = GenSpec {
            output: dir.path().join("t.csv"),
            workload: "zipf:0.9".parse().expect("a workload"),
            capacity: 64 << 20,
            fill: 1.0,
            writes: 5000,
            seed: 7,
            force: true,
        };
        let stats = StatsSpec {
            file: gen.output.clone(),
            format: None,
            skip_bad: false,
        };
        let jobs = [
            Job::TraceGen(Box::new(gen.clone())),
            Job::TraceStats(Box::new(stats)),
        ];
        for job in &jobs {
            let json = serde_json::to_string(job).expect("serializes");
            assert_eq!(&parse_job(&json, false).expect("json parses"), job);
            let toml = toml::to_string(job).expect("toml");
            assert_eq!(&parse_job(&toml, true).expect("toml parses"), job, "{toml}");
        }
        let first = generate(&gen, &crate::Cancel).expect("writes");
        let bytes = std::fs::read(&gen.output).expect("written");
        let json = serde_json::to_string(&first).expect("serializes");
        let again = parse_job(&json, false).expect("a result is a job");
        again.run(None, &crate::Cancel).expect("runs again");
        assert_eq!(
            std::fs::read(&gen.output).expect("written"),
            bytes,
            "the same trace"
        );
        let Ok(JobOutcome::TraceStats(s)) = jobs[1].run(None, &crate::Cancel) else {
            panic!("stats")
        };
        assert_eq!(s.result.stats.total.writes, 5000);
        let mut v: serde_json::Value = serde_json::from_str(&json).expect("json");
        v["nowa"]["spec"]["fill"] = 0.into();
        let e = parse_job(&v.to_string(), false).expect_err("fill 0");
        assert!(e.to_string().starts_with("fill: "), "{e}");
    }
}
