//! `table1`: Table 1 of how-to-write-to-ssds (in place vs out of place and its
//! optimizations), row by row on identical simulated conventional SSDs. The spec is
//! [`nowa_bench::table1::Table1Spec`] (every preset and override resolved); the flags of
//! `nowa table1` (and of `nowa.table1(...)` in Python) are [`Table1Flags`].

use crate::flags::{self, SimTiming, MAX_THREADS};
use crate::{Cancel, Error, Identity, Progress, Report};
use clap::Args;
use nowa_bench::table1::{self as bench, Row, Table1};
use nowa_bench::ycsb::ValueKind;

/// The spec of a Table 1 run.
pub use nowa_bench::table1::Table1Spec as Spec;

/// A table under its run's identity.
pub type Outcome = Report<Table1>;

/// The flags that make the spec.
#[derive(Args, Debug, Clone)]
pub struct Table1Flags {
    /// The ~1 minute preset (README headline); default is the full run.
    #[arg(long)]
    pub quick: bool,
    /// Override the number of records (1500000 or 1.5M).
    #[arg(long, value_parser = flags::count::<u64>(1, 1_000_000_000_000))]
    pub records: Option<u64>,
    /// Override the run length in device capacities written (>= 4 for steady state).
    #[arg(long, value_parser = flags::number(0.0, true, 1e6))]
    pub device_writes: Option<f64>,
    /// Values: paper (the default: LZ4 leaves ~0.41 of a page, the paper's YCSB ratio),
    /// pattern (~0.2: far more compressible) or random (incompressible).
    #[arg(long, default_value = "paper", value_enum)]
    pub values: ValueKind,
    /// Worker threads per row.
    #[arg(long, value_parser = flags::count::<usize>(1, MAX_THREADS))]
    pub threads: Option<usize>,
    /// Zones appended concurrently in the out-of-place rows.
    #[arg(long, value_parser = flags::count::<u32>(1, 256))]
    pub open_zones: Option<u32>,
    /// Pace the simulated SSD by its timing model (on, the default: OPS reflect the device's
    /// work) or not (off: OPS measure the CPU; the device-bound column is still reported).
    #[arg(long, default_value = "on", value_parser = flags::on_off, action = clap::ArgAction::Set)]
    pub pacing: bool,
    /// Media write bandwidth of the simulated SSD per second (default 1GB = 10^9 bytes/s).
    #[arg(long, value_parser = flags::size(1_000_000, 1 << 50))]
    pub media_bandwidth: Option<u64>,
    /// Read bandwidth of the simulated SSD per second (default 3GB).
    #[arg(long, value_parser = flags::size(1_000_000, 1 << 50))]
    pub read_bandwidth: Option<u64>,
    /// Timing of the simulated SSD: bandwidth (one media server at the bandwidths above) or
    /// femu / mqsim (8 channels x 8 chips of 4 KiB pages with those simulators' latencies).
    #[arg(long, value_enum, default_value = "bandwidth")]
    pub sim_timing: SimTiming,
    /// Seed of every row.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

#[derive(clap::Parser)]
#[command(name = "table1")]
struct Table1Cmd {
    #[command(flatten)]
    flags: Table1Flags,
}

/// The flags as a clap command (their help, for Python's docstrings and stubs).
#[must_use]
pub fn command() -> clap::Command {
    <Table1Cmd as clap::CommandFactory>::command()
}

/// The flags of `nowa table1` from `args` (without the command name), parsed as the CLI does.
///
/// # Errors
/// A bad flag or value: one line naming it.
pub fn parse_flags<S: AsRef<str>>(args: &[S]) -> Result<Table1Flags, Error> {
    use clap::Parser as _;
    let args =
        std::iter::once("table1".to_owned()).chain(args.iter().map(|a| a.as_ref().to_owned()));
    Table1Cmd::try_parse_from(args)
        .map(|c| c.flags)
        .map_err(|e| Error::Usage(crate::clap_line(&e)))
}

/// The spec the flags resolve to: the preset (`--quick` or the full run) and the overrides.
///
/// # Panics
/// Never: the seed is copied.
#[must_use]
pub fn from_flags(a: &Table1Flags) -> Spec {
    let mut spec = if a.quick { Spec::quick() } else { Spec::full() };
    spec.records = a.records.unwrap_or(spec.records);
    spec.device_writes = a.device_writes.unwrap_or(spec.device_writes);
    spec.threads = a.threads.unwrap_or(spec.threads);
    spec.open_zones = a.open_zones.unwrap_or(spec.open_zones);
    spec.seed = a.seed;
    spec.values = a.values;
    spec.pacing.paced = a.pacing;
    spec.pacing.chips = a.sim_timing.chips();
    // Bandwidths below 2^50 bytes/s (the flags' bound): exact in an f64.
    if let Some(b) = a.media_bandwidth {
        spec.pacing.media_bytes_per_sec = b as f64;
    }
    if let Some(b) = a.read_bandwidth {
        spec.pacing.read_bytes_per_sec = b as f64;
    }
    assert_eq!(spec.seed, a.seed, "the spec names the flags' seed");
    spec
}

/// Checks every field against its flag's range and the device the rows run on.
///
/// # Errors
/// [`Error::Usage`]: `field: why`.
pub fn check(spec: &Spec) -> Result<(), Error> {
    let bad = |field: &str, v: &dyn std::fmt::Display| {
        Err(Error::Usage(format!("{field}: {v} is out of range")))
    };
    let max_value = (nowa_engine::page::MAX_KV - 8) as u64;
    if !(1..=1_000_000_000_000).contains(&spec.records) {
        return bad("records", &spec.records);
    }
    if !(1..=max_value).contains(&(spec.value_size as u64)) {
        return bad("value_size", &spec.value_size);
    }
    if !(1..=MAX_THREADS).contains(&(spec.threads as u64)) {
        return bad("threads", &spec.threads);
    }
    if !(1..=256).contains(&spec.open_zones) {
        return bad("open_zones", &spec.open_zones);
    }
    let fractions = [
        ("device_writes", spec.device_writes, 0.0, 1e6),
        ("dataset_fill", spec.dataset_fill, 0.0, 1.0),
        ("op", spec.op, 0.0, 1.0),
        ("pool_frac", spec.pool_frac, 0.0, 1.0),
        ("theta", spec.theta, -1e-300, 100.0),
    ];
    for (field, v, lo, hi) in fractions {
        if !(v.is_finite() && v > lo && v <= hi) {
            return bad(field, &v);
        }
    }
    bench::device_config(spec).map_err(|e| Error::Usage(format!("records: {e}")))?;
    Ok(())
}

/// Runs the seven rows (`progress`: units of work done of the total, a row's load and run
/// by [`nowa_bench::table1::ROW_UNITS`], so a bar has a rate and an ETA inside a row), the
/// table under its identity.
///
/// # Errors
/// [`Error::Usage`] for a bad field; [`Error::Failed`]: a row failed.
pub fn run(spec: &Spec, progress: Option<Progress<'_>>, cancel: &Cancel) -> Result<Outcome, Error> {
    run_with(spec, &mut |_| {}, progress, cancel)
}

/// Runs the rows, calling `on_row` after each and `progress` as [`run`] does.
///
/// # Errors
/// As [`run`].
///
/// # Panics
/// If the table is of another spec (a bug).
pub fn run_with(
    spec: &Spec,
    on_row: &mut dyn FnMut(&Row),
    progress: Option<Progress<'_>>,
    cancel: &Cancel,
) -> Result<Outcome, Error> {
    check(spec)?;
    let id = Identity::now("table1", spec, spec.seed);
    let observe = |d: u64, t: u64| {
        if let Some(p) = progress {
            p(d, t);
        }
    };
    let t = bench::run_observed(spec, on_row, &observe)
        .map_err(|e| Error::failed("running the Table 1 rows", e))?;
    assert_eq!(&t.spec, spec, "the table is of the spec run");
    assert!(t.rows.len() <= 7, "at most the seven rows");
    assert!(t.interrupted || !cancel.requested() || t.rows.len() == 7);
    Ok(Report {
        nowa: id,
        result: t,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_job, Job};

    #[test]
    fn a_spec_round_trips_and_bad_fields_are_named() {
        let flags = parse_flags(&["--quick", "--records", "20k", "--sim-timing", "femu"])
            .expect("valid flags");
        let spec = from_flags(&flags);
        assert_eq!((spec.records, spec.seed), (20_000, 42));
        assert!(spec.pacing.chips.is_some(), "femu's chips");
        let job = Job::Table1(Box::new(spec.clone()));
        let json = serde_json::to_string(&job).expect("serializes");
        assert_eq!(parse_job(&json, false).expect("json parses"), job);
        let toml = toml::to_string(&job).expect("toml serializes");
        assert_eq!(parse_job(&toml, true).expect("toml parses"), job, "{toml}");
        let mut v: serde_json::Value = serde_json::from_str(&json).expect("json");
        v["spec"]["op"] = 1.5.into();
        let e = parse_job(&v.to_string(), false).expect_err("op out of range");
        assert!(e.is_usage() && e.to_string().starts_with("op: "), "{e}");
        v["spec"]["opp"] = 0.1.into();
        let e = parse_job(&v.to_string(), false).expect_err("unknown key");
        assert!(e.to_string().contains("opp"), "{e}");
        let e = parse_flags(&["--records", "0"]).expect_err("no records");
        assert!(e.to_string().contains("--records"), "{e}");
    }

    /// The progress is in units of a row's work (its load, then its run by device writes:
    /// `nowa_bench::table1::row_units`), reaches the total and never goes back.
    #[test]
    fn progress_moves_inside_rows_up_to_the_total() {
        let flags =
            parse_flags(&["--quick", "--records", "20k", "--pacing", "off"]).expect("valid flags");
        let mut spec = from_flags(&flags);
        spec.device_writes = 1.0;
        let seen = std::sync::Mutex::new(Vec::new());
        let progress = |d: u64, t: u64| seen.lock().expect("not poisoned").push((d, t));
        let out = run(&spec, Some(&progress), &Cancel).expect("a small table runs");
        assert_eq!(out.result.rows.len(), 7);
        let seen = seen.into_inner().expect("not poisoned");
        let total = 7 * nowa_bench::table1::ROW_UNITS;
        assert!(seen.iter().all(|&(_, t)| t == total), "one total");
        assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "monotonic");
        assert_eq!(seen.last().map(|x| x.0), Some(total), "ends at the total");
        // Each row reports its load's start before its end: at least two updates per row.
        assert!(seen.len() >= 14, "{} updates: {seen:?}", seen.len());
    }
}
