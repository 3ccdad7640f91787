//! `sim`: one FTL simulation under a synthetic workload, or the replay of a block trace.
//! Flags (or keyword arguments, or a job file) -> [`Spec`] (every default resolved) ->
//! [`run`] -> [`Outcome`] (the result under its [`Identity`]).

pub mod flags;
pub mod sweep;

use crate::text::{as_text, fraction, size, Text as _};
use crate::{Cancel, Error, Identity, Progress, Report};
use flags::SimFlags;
use nowa_bench::replay::{self, ReplayError, ReplayResult, ReplaySpec, VolumeMode};
use nowa_bench::sim::{self as bench_sim, SimError, SimResult, StreamAssign};
use nowa_flash::{
    FlashError, FtlConfig, GcFrontier, GcTrigger, GcUnit, Mode, PlacementKind, PolicyKind,
};
use nowa_workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The most reporting intervals a run keeps.
const MAX_INTERVALS: f64 = 100_000.0;

/// One simulation, resolved: what ran, exactly (a result's `nowa.spec`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Spec {
    /// Logical capacity in bytes.
    #[serde(with = "size")]
    pub capacity: u64,
    /// Over-provisioning, spare/logical (`--op-physical` resolved into it).
    #[serde(with = "fraction")]
    pub op: f64,
    /// Flash pages (4 KiB) per erase block.
    pub pages_per_block: u32,
    /// Erase blocks per superblock (`--channels x --chips x --planes` resolved into it).
    pub blocks_per_superblock: u32,
    /// What GC erases at once.
    #[serde(with = "as_text")]
    pub gc_unit: GcUnit,
    /// Victim policy.
    #[serde(with = "as_text")]
    pub policy: PolicyKind,
    /// Where GC copies go (the policy's default resolved).
    #[serde(with = "as_text")]
    pub gc_frontier: GcFrontier,
    /// Host write streams.
    pub streams: u16,
    /// Device write buffer as a fraction of capacity.
    #[serde(with = "fraction")]
    pub write_buffer: f64,
    /// Free units GC keeps.
    pub min_free_units: u32,
    /// A zoned (ZNS) device.
    pub zns: bool,
    /// Most open zones of a zoned device.
    pub max_open_zones: u32,
    /// Placement scheme ("none": host streams only).
    #[serde(with = "as_text")]
    pub placement: Option<PlacementKind>,
    /// When GC runs.
    #[serde(with = "as_text")]
    pub gc_trigger: GcTrigger,
    /// Victims per GC round.
    pub victims_per_round: u32,
    /// The synthetic workload (unused by a trace replay).
    #[serde(with = "as_text")]
    pub workload: WorkloadSpec,
    /// Fraction of the logical space in use.
    #[serde(with = "fraction")]
    pub fill: f64,
    /// Warm-up writes, in multiples of the logical capacity.
    pub warmup: f64,
    /// Measured writes, in multiples of the logical capacity.
    pub volume: f64,
    /// Reporting interval, in multiples of the logical capacity.
    pub interval: f64,
    /// Sequentially fill the in-use pages first.
    pub precondition: bool,
    /// How host writes map to streams.
    #[serde(with = "as_text")]
    pub stream_assign: StreamAssign,
    /// Seed of the workload and of randomized policies.
    pub seed: u64,
    /// A trace to replay instead of the workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
}

/// The trace of a replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// The trace file.
    pub path: PathBuf,
    /// Its format; absent: recognized from the first line.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_format")]
    pub format: Option<nowa_trace::Format>,
    /// How volumes map to devices.
    #[serde(default = "per_volume", with = "as_text")]
    pub volumes: VolumeMode,
    /// Replay only this volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<u32>,
    /// Logical bytes of each replay device; absent: the trace's peak live data / fill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u64>,
    /// Accept the trace however many of its lines are unreadable (`--skip-bad`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skip_bad: bool,
}

fn per_volume() -> VolumeMode {
    VolumeMode::PerVolume
}

/// An optional trace format as its name.
mod opt_format {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        v: &Option<nowa_trace::Format>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(f) => crate::text::as_text::serialize(f, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<nowa_trace::Format>, D::Error> {
        crate::text::as_text::deserialize(d).map(Some)
    }
}

impl Default for Spec {
    /// The CLI's defaults: the spec of `nowa sim` without flags.
    fn default() -> Self {
        let flags = parse_flags::<String>(&[]).expect("no flags parse");
        Spec::from_flags(&flags).expect("the defaults are a valid run")
    }
}

#[derive(clap::Parser)]
#[command(name = "sim", no_binary_name = true)]
struct Sim {
    #[command(flatten)]
    flags: SimFlags,
}

/// The flags of `nowa sim` as a clap command (their help: the Python module's docstrings).
#[must_use]
pub fn command() -> clap::Command {
    <Sim as clap::CommandFactory>::command()
}

/// The flags of `nowa sim` from `args` (without the command name), parsed as the CLI does.
///
/// # Errors
/// A bad flag or value: one line naming it.
pub fn parse_flags<S: AsRef<str>>(args: &[S]) -> Result<SimFlags, Error> {
    crate::parse_args::<Sim, S>(args).map(|s| s.flags)
}

impl Spec {
    /// Resolves the flags: OP as spare/logical, the superblock from channels x chips x planes,
    /// the GC frontier from the policy; checks what depends on several flags.
    ///
    /// # Errors
    /// Flags that do not make a run: [`Error::Usage`], naming them.
    pub fn from_flags(f: &SimFlags) -> Result<Spec, Error> {
        let (d, r) = (&f.dev, &f.run);
        let mut spec = Spec {
            capacity: d.capacity,
            op: d.op_physical.map_or(d.op, |p| p / (1.0 - p)),
            pages_per_block: d.pages_per_block,
            blocks_per_superblock: blocks_per_superblock(d)?,
            gc_unit: d.gc_unit,
            policy: d.policy.clone(),
            gc_frontier: GcFrontier::Shared,
            streams: d.streams,
            write_buffer: d.write_buffer,
            min_free_units: d.min_free_units,
            zns: d.zns,
            max_open_zones: d.max_open_zones,
            placement: d.scheme.placement,
            gc_trigger: d.scheme.gc_trigger,
            victims_per_round: d.scheme.victims_per_round,
            workload: r.workload.clone(),
            fill: r.fill,
            warmup: r.warmup,
            volume: r.volume,
            interval: r.interval,
            precondition: !r.no_precondition,
            stream_assign: r.stream_assign,
            seed: r.seed,
            trace: f.trace.trace.clone().map(|path| TraceSpec {
                path,
                format: f.trace.trace_format,
                volumes: f.trace.trace_volumes,
                volume: f.trace.trace_volume,
                capacity: f.trace.trace_capacity,
                skip_bad: f.trace.skip_bad,
            }),
        };
        let mut ftl = spec.ftl_config();
        ftl.gc_frontier = d.gc_frontier;
        spec.gc_frontier = ftl.frontier();
        spec.bench()?;
        Ok(spec)
    }

    /// The FTL configuration of the device flags alone (`nowa vssd serve`: a device, no
    /// workload), checked as [`Spec::from_flags`] checks it.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the flags of a device that cannot be built.
    pub fn device_ftl(dev: &flags::DeviceFlags, seed: u64) -> Result<FtlConfig, Error> {
        let mut f = parse_flags::<&str>(&[])?;
        f.dev = dev.clone();
        f.run.seed = seed;
        // One interval per device: a one-page device still makes a spec.
        f.run.interval = 1.0;
        Ok(Spec::from_flags(&f)?.bench()?.ftl)
    }

    /// The flags that give this spec (the check of a spec read from a file or a dict: the
    /// flag parsers' bounds and messages, one implementation).
    #[must_use]
    pub fn to_args(&self) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        let mut kv = |k: &str, v: String| {
            a.push(format!("--{k}"));
            a.push(v);
        };
        kv("capacity", self.capacity.to_string());
        // --op takes [0, 1); a larger spare/logical ratio is given as spare/physical.
        if self.op < 1.0 {
            kv("op", self.op.to_string());
        } else {
            kv("op-physical", (self.op / (1.0 + self.op)).to_string());
        }
        kv("pages-per-block", self.pages_per_block.to_string());
        kv(
            "blocks-per-superblock",
            self.blocks_per_superblock.to_string(),
        );
        kv("gc-unit", self.gc_unit.to_text());
        kv("policy", self.policy.to_text());
        kv("gc-frontier", self.gc_frontier.to_text());
        kv("streams", self.streams.to_string());
        kv("write-buffer", self.write_buffer.to_string());
        kv("min-free-units", self.min_free_units.to_string());
        kv("max-open-zones", self.max_open_zones.to_string());
        if let Some(p) = self.placement {
            kv("placement", p.to_text());
        }
        kv("gc-trigger", self.gc_trigger.to_text());
        kv("victims-per-round", self.victims_per_round.to_string());
        kv("workload", self.workload.to_text());
        kv("fill", self.fill.to_string());
        kv("warmup", self.warmup.to_string());
        kv("volume", self.volume.to_string());
        kv("interval", self.interval.to_string());
        kv("stream-assign", self.stream_assign.to_text());
        kv("seed", self.seed.to_string());
        if let Some(t) = &self.trace {
            kv("trace", t.path.display().to_string());
            if let Some(f) = t.format {
                kv("trace-format", f.to_text());
            }
            kv("trace-volumes", t.volumes.to_text());
            if let Some(v) = t.volume {
                kv("trace-volume", v.to_string());
            }
            if let Some(c) = t.capacity {
                kv("trace-capacity", c.to_string());
            }
            if t.skip_bad {
                a.push("--skip-bad".to_owned());
            }
        }
        if self.zns {
            a.push("--zns".to_owned());
        }
        if !self.precondition {
            a.push("--no-precondition".to_owned());
        }
        a
    }

    /// Checks a spec that did not come from flags (a job file, a result, a dict) with the
    /// flags' parsers and [`Spec::from_flags`].
    ///
    /// # Errors
    /// The first bad value, naming its flag.
    pub fn check(&self) -> Result<(), Error> {
        Spec::from_flags(&parse_flags(&self.to_args())?).map(|_| ())
    }

    fn ftl_config(&self) -> FtlConfig {
        let logical_pages = self.capacity / 4096;
        FtlConfig {
            logical_pages,
            op: self.op,
            pages_per_block: self.pages_per_block,
            blocks_per_superblock: self.blocks_per_superblock,
            gc_unit: self.gc_unit,
            policy: self.policy.clone(),
            gc_frontier: Some(self.gc_frontier),
            streams: self.streams,
            write_buffer_pages: nowa_bench::round_u64(logical_pages as f64 * self.write_buffer),
            min_free_units: self.min_free_units,
            mode: if self.zns {
                Mode::Zoned {
                    max_open_zones: self.max_open_zones,
                }
            } else {
                Mode::Conventional
            },
            placement: self.placement,
            gc_trigger: self.gc_trigger,
            victims_per_round: self.victims_per_round,
            seed: self.seed,
            ..FtlConfig::default()
        }
    }

    /// Refuses a run whose page maps and write buffer, `parallel` models at once, do not fit
    /// the memory available (one line naming the flag).
    ///
    /// # Errors
    /// [`Error::Usage`] naming `--capacity` or `--write-buffer`; as [`Spec::bench`].
    ///
    /// # Panics
    /// If a checked geometry has no page or unit (a bug).
    pub fn check_memory(&self, parallel: u64) -> Result<(), Error> {
        let bench = self.bench()?;
        let l = bench
            .ftl
            .layout()
            .map_err(|e| Error::Usage(e.to_string()))?;
        assert!(
            l.logical_pages >= 1 && l.units >= 1,
            "a checked spec has pages and units"
        );
        let maps =
            crate::resources::ftl_bytes(l.logical_pages, l.physical_pages, u64::from(l.units));
        let buffer = bench.ftl.write_buffer_pages.saturating_mul(48);
        crate::resources::check_memory(&[
            ("--capacity", "page maps", maps.saturating_mul(parallel)),
            (
                "--write-buffer",
                "write buffer",
                buffer.saturating_mul(parallel),
            ),
        ])
    }

    /// The run's first line (without the command): seed, workload or trace, device, policy.
    #[must_use]
    pub fn announce(&self) -> String {
        let what = self.trace.as_ref().map_or_else(
            || format!("{} on {}", self.workload, nowa_units::Bytes(self.capacity)),
            |t| format!("trace {} (fill {})", t.path.display(), self.fill),
        );
        // With the garbage-proportion trigger the log sizes itself: --op does not apply.
        let op = match self.gc_trigger {
            nowa_flash::GcTrigger::GarbageProportion(t) => {
                format!("OP sized by --gc-trigger gp:{t}, not --op")
            }
            _ => format!("OP spare/logical {:.2}%", self.op * 100.0),
        };
        format!(
            "seed {}, {what} ({}{op}), policy {}",
            self.seed,
            if self.zns { "zoned, " } else { "" },
            self.policy
        )
    }

    /// The simulator's spec, after the checks that span several flags: the device
    /// geometry, ZNS vs the workload, the interval vs the device and the volume.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the flags.
    pub fn bench(&self) -> Result<bench_sim::SimSpec, Error> {
        let ftl = self.ftl_config();
        let l = ftl.layout().map_err(|e| {
            Error::Usage(format!(
                "device geometry (--capacity, --op, --pages-per-block, --blocks-per-superblock): {e}"
            ))
        })?;
        self.check_modes()?;
        let pages = l.logical_pages as f64;
        if (self.interval * pages).round() < 1.0 {
            return Err(Error::Usage(format!(
                "--interval {}: less than one 4 KiB page of this device",
                self.interval
            )));
        }
        if self.volume / self.interval > MAX_INTERVALS {
            return Err(Error::Usage(format!(
                "--interval {}: --volume / --interval = {:.0} intervals, at most {MAX_INTERVALS}",
                self.interval,
                self.volume / self.interval
            )));
        }
        Ok(bench_sim::SimSpec {
            ftl,
            workload: self.workload.clone(),
            fill: self.fill,
            warmup: self.warmup,
            volume: self.volume,
            interval: self.interval,
            precondition: self.precondition,
            streams: self.stream_assign,
            seed: self.seed,
        })
    }

    /// Flags that only work together: a zoned device with a zoned workload, the hot-cold
    /// stream assignment with a two-zone workload on two streams or more.
    fn check_modes(&self) -> Result<(), Error> {
        let usage = |m: String| Err(Error::Usage(m));
        if self.zns && !matches!(self.workload, WorkloadSpec::Zns { .. }) && self.trace.is_none() {
            return usage(format!(
                "--zns needs a zoned workload (--workload zns:ZONE_PAGES:FRONTS), not '{}': a zoned device refuses writes that are not sequential per zone",
                self.workload
            ));
        }
        if self.stream_assign == StreamAssign::HotCold {
            if !matches!(self.workload, WorkloadSpec::TwoZone { .. }) {
                return usage(format!(
                    "--stream-assign hot-cold needs a two-zone workload (--workload two-zone:X/Y), not '{}'",
                    self.workload
                ));
            }
            if self.streams < 2 {
                return usage("--stream-assign hot-cold needs --streams >= 2".to_owned());
            }
        }
        Ok(())
    }

    fn replay(&self, t: &TraceSpec) -> Result<ReplaySpec, Error> {
        let b = self.bench()?;
        Ok(ReplaySpec {
            trace: t.path.clone(),
            format: t.format,
            capacity_pages: t.capacity.map(|c| c / 4096),
            fill: b.fill,
            warmup: b.warmup,
            volume: b.volume,
            interval: b.interval,
            precondition: b.precondition,
            volumes: t.volumes,
            only_volume: t.volume,
            seed: b.seed,
            ftl: b.ftl,
        })
    }
}

/// Blocks per superblock from `--blocks-per-superblock` or channels x chips x planes.
fn blocks_per_superblock(dev: &flags::DeviceFlags) -> Result<u32, Error> {
    match (dev.channels, dev.chips, dev.planes) {
        (None, None, None) => Ok(dev.blocks_per_superblock),
        (c, d, p) => c
            .unwrap_or(1)
            .checked_mul(d.unwrap_or(1))
            .and_then(|x| x.checked_mul(p.unwrap_or(1)))
            .ok_or_else(|| {
                Error::Usage("--channels x --chips x --planes does not fit 32 bits".into())
            })
            .inspect(|&b| assert!(b >= 1, "each factor parses to at least 1")),
    }
}

/// What a simulation produced.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// A synthetic workload's run.
    Sim(Box<Report<SimResult>>),
    /// A trace replay.
    Replay(Box<Report<ReplayResult>>),
}

impl Outcome {
    /// The run's identity.
    #[must_use]
    pub fn identity(&self) -> &Identity {
        match self {
            Outcome::Sim(r) => &r.nowa,
            Outcome::Replay(r) => &r.nowa,
        }
    }

    /// The summary the CLI prints.
    #[must_use]
    pub fn summary(&self) -> String {
        match self {
            Outcome::Sim(r) => bench_sim::summary(&r.result),
            Outcome::Replay(r) => replay::summary(&r.result),
        }
    }

    /// Writes the per-interval time series (WAF over time) as CSV, under the identity line.
    ///
    /// # Errors
    /// I/O.
    pub fn write_intervals_csv(&self, path: &Path) -> Result<(), Error> {
        let mut f = crate::csv_file(path, self.identity())?;
        match self {
            Outcome::Sim(r) => bench_sim::write_intervals(&r.result, &mut f),
            Outcome::Replay(r) => replay::write_intervals(&r.result, &mut f),
        }
        .map_err(|e| Error::io(path, e))
    }

    /// Writes the victim valid-ratio distribution as CSV, under the identity line (a replay
    /// has none: nothing is written).
    ///
    /// # Errors
    /// I/O.
    pub fn write_victims_csv(&self, path: &Path) -> Result<(), Error> {
        if let Outcome::Sim(r) = self {
            let mut f = crate::csv_file(path, self.identity())?;
            bench_sim::write_victims(&r.result, &mut f).map_err(|e| Error::io(path, e))?;
        }
        Ok(())
    }

    /// Measured intervals that ran (fewer than planned after Ctrl-C).
    #[must_use]
    pub fn intervals(&self) -> usize {
        match self {
            Outcome::Sim(r) => r.result.intervals.len(),
            Outcome::Replay(r) => r.result.intervals.len(),
        }
    }
}

/// Runs the simulation (or the replay) of `spec`; Ctrl-C ([`Cancel`]) stops it early with the
/// intervals measured so far.
///
/// # Errors
/// [`Error::Usage`] for a spec that cannot run, [`Error::Failed`] for a failure while running.
/// The drivers poll the process-wide stop flag [`Cancel`] stands for, between batches.
pub fn run(
    spec: &Spec,
    progress: Option<Progress<'_>>,
    _cancel: &Cancel,
) -> Result<Outcome, Error> {
    let nowa = Identity::now("sim", spec, spec.seed);
    if let Some(t) = &spec.trace {
        let rs = spec.replay(t)?;
        nowa_trace::set_skip_bad(t.skip_bad);
        let result = replay::run(&rs, progress).map_err(replay_error)?;
        return Ok(Outcome::Replay(Box::new(Report { nowa, result })));
    }
    let bs = spec.bench()?;
    let result = bench_sim::run(&bs, progress).map_err(sim_error)?;
    Ok(Outcome::Sim(Box::new(Report { nowa, result })))
}

/// Errors caused by the configuration are usage errors; the rest are failures.
#[must_use]
pub fn sim_error(e: SimError) -> Error {
    match e {
        SimError::Workload(w) => Error::Usage(format!("--workload: {w}")),
        SimError::Flash(FlashError::Config(m)) => Error::Usage(m.to_string()),
        SimError::Flash(f) => Error::failed("simulation failed", f),
        other => Error::Usage(other.to_string()),
    }
}

/// A missing or unreadable trace is the user's input; a failure while replaying is not.
fn replay_error(e: ReplayError) -> Error {
    match e {
        ReplayError::Trace(t) => crate::trace::trace_error(t),
        ReplayError::Flash {
            source: FlashError::Config(_),
            ..
        }
        | ReplayError::Parameter { .. }
        | ReplayError::TooSmall { .. }
        | ReplayError::NoWrites { .. } => Error::Usage(e.to_string()),
        e => Error::failed("trace replay failed", e),
    }
}

#[cfg(test)]
mod tests;
