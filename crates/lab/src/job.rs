//! Job files (`nowa run JOB.toml|JOB.json`) and results run again (`nowa run RESULT.json`):
//! a command and its spec.

use crate::{compare, sim, table1, tpcc, ycsb, Cancel, Error, Identity, Progress, Report};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A command and its spec: `command = "sim"` and a `[spec]` table in TOML,
/// `{"command": "sim", "spec": {...}}` in JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "command",
    content = "spec",
    rename_all = "lowercase",
    deny_unknown_fields
)]
pub enum Job {
    /// `nowa sim` (and its trace replay).
    Sim(sim::Spec),
    /// `nowa ycsb` on the simulated SSD or in memory.
    Ycsb(Box<ycsb::Spec>),
    /// `nowa compare`: engines on fresh virtual SSDs.
    Compare(Box<compare::Spec>),
    /// `nowa tpcc` on the simulated SSD or in memory.
    Tpcc(Box<tpcc::Spec>),
    /// `nowa table1`.
    Table1(Box<table1::Spec>),
    /// `nowa sim sweep`: the simulator's paper figures.
    #[serde(rename = "sim-sweep")]
    SimSweep(Box<sim::sweep::SweepSpec>),
    /// `nowa frozen figures`: SepFrozen's figures that need no engine.
    #[serde(rename = "frozen-figures")]
    FrozenFigures(Box<crate::frozen::figures::FiguresSpec>),
    // helper cli's arms: ssdiq, plan, trace, capture, gcunit.
    /// `nowa ssdiq`: the SSD-iq suite.
    Ssdiq(Box<crate::ssdiq::Spec>),
    /// `nowa plan run`: one PLAN run.
    #[serde(rename = "plan-run")]
    PlanRun(Box<crate::plan::RunSpec>),
    /// `nowa plan figures`: PLAN's figures.
    #[serde(rename = "plan-figures")]
    PlanFigures(Box<crate::plan::FiguresSpec>),
    /// `nowa trace stats`.
    #[serde(rename = "trace-stats")]
    TraceStats(Box<crate::trace::StatsSpec>),
    /// `nowa trace convert`.
    #[serde(rename = "trace-convert")]
    TraceConvert(Box<crate::trace::ConvertSpec>),
    /// `nowa trace gen`.
    #[serde(rename = "trace-gen")]
    TraceGen(Box<crate::trace::GenSpec>),
    /// `nowa infer-gc-unit`.
    #[serde(rename = "infer-gc-unit")]
    InferGcUnit(Box<crate::gcunit::Spec>),
    /// `nowa frozen figures --engine`: SepFrozen's figures of runs in the engine.
    #[serde(rename = "frozen-engine-figures")]
    FrozenEngineFigures(Box<crate::frozen::engine_figures::EngineFiguresSpec>),
    /// `nowa frozen train`: a frozen-page model from a write log.
    #[serde(rename = "frozen-train")]
    FrozenTrain(Box<crate::frozen::training::TrainSpec>),
    /// `nowa frozen synth`: a synthetic write log.
    #[serde(rename = "frozen-synth")]
    FrozenSynth(Box<crate::frozen::training::SynthSpec>),
    /// `nowa frozen replay`: a write log through the placement simulator.
    #[serde(rename = "frozen-replay")]
    FrozenReplay(Box<crate::frozen::replay::ReplaySpec>),
    // helper cli's arms (2): capture, frozen stats|bench|from-trace.
    /// `nowa capture`: a program's block requests on a fresh loop device (root).
    Capture(Box<crate::capture::Spec>),
    /// `nowa frozen stats`: HR fields against the frozen label.
    #[serde(rename = "frozen-stats")]
    FrozenStats(Box<crate::frozen::tools::StatsSpec>),
    /// `nowa frozen bench`: batched inference against the paper's budget.
    #[serde(rename = "frozen-bench")]
    FrozenBench(Box<crate::frozen::tools::BenchSpec>),
    /// `nowa frozen from-trace`: a block trace as a write log.
    #[serde(rename = "frozen-from-trace")]
    FrozenFromTrace(Box<crate::frozen::tools::FromTraceSpec>),
}

/// What a job produced.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum JobOutcome {
    /// A `sim` job's.
    Sim(sim::Outcome),
    /// A `ycsb` job's.
    Ycsb(Box<ycsb::Outcome>),
    /// A `compare` job's.
    Compare(Box<Report<compare::CompareResult>>),
    /// A `tpcc` job's.
    Tpcc(Box<tpcc::Outcome>),
    /// A `table1` job's.
    Table1(Box<table1::Outcome>),
    /// A `sim-sweep` job's.
    SimSweep(Box<sim::sweep::SweepOutcome>),
    /// A `frozen-figures` job's.
    FrozenFigures(Box<crate::Report<crate::frozen::figures::FiguresResult>>),
    // helper cli's arms.
    /// An `ssdiq` job's.
    Ssdiq(Box<crate::ssdiq::Outcome>),
    /// A `plan-run` job's.
    PlanRun(Box<crate::plan::RunOutcome>),
    /// A `plan-figures` job's.
    PlanFigures(Box<crate::plan::FiguresOutcome>),
    /// A `trace-stats` job's.
    TraceStats(Box<Report<crate::trace::StatsResult>>),
    /// A `trace-convert` job's.
    TraceConvert(Box<Report<crate::trace::ConvertResult>>),
    /// A `trace-gen` job's.
    TraceGen(Box<Report<crate::trace::GenResult>>),
    /// An `infer-gc-unit` job's.
    InferGcUnit(Box<crate::gcunit::Outcome>),
    /// A `frozen-engine-figures` job's.
    FrozenEngineFigures(Box<crate::frozen::engine_figures::Outcome>),
    /// A `frozen-train` job's.
    FrozenTrain(Box<crate::frozen::training::TrainOutcome>),
    /// A `frozen-synth` job's.
    FrozenSynth(Box<Report<crate::frozen::training::SynthResult>>),
    /// A `frozen-replay` job's.
    FrozenReplay(Box<Report<crate::frozen::replay::ReplayResult>>),
    // helper cli's arms (2).
    /// A `capture` job's.
    Capture(Box<crate::capture::Outcome>),
    /// A `frozen-stats` job's.
    FrozenStats(Box<Report<crate::frozen::tools::StatsResult>>),
    /// A `frozen-bench` job's.
    FrozenBench(Box<Report<crate::frozen::tools::BenchResult>>),
    /// A `frozen-from-trace` job's.
    FrozenFromTrace(Box<Report<crate::frozen::tools::FromTraceResult>>),
}

impl JobOutcome {
    /// The run's identity.
    #[must_use]
    pub fn identity(&self) -> &Identity {
        match self {
            JobOutcome::Sim(o) => o.identity(),
            JobOutcome::Ycsb(o) => &o.nowa,
            JobOutcome::Tpcc(o) => &o.nowa,
            JobOutcome::Table1(o) => &o.nowa,
            JobOutcome::Compare(o) => &o.nowa,
            JobOutcome::SimSweep(o) => &o.nowa,
            JobOutcome::FrozenFigures(o) => &o.nowa,
            JobOutcome::Ssdiq(o) => &o.nowa,
            JobOutcome::PlanRun(o) => &o.nowa,
            JobOutcome::PlanFigures(o) => &o.nowa,
            JobOutcome::TraceStats(o) => &o.nowa,
            JobOutcome::TraceConvert(o) => &o.nowa,
            JobOutcome::TraceGen(o) => &o.nowa,
            JobOutcome::InferGcUnit(o) => &o.nowa,
            JobOutcome::FrozenEngineFigures(o) => &o.nowa,
            JobOutcome::FrozenTrain(o) => &o.nowa,
            JobOutcome::FrozenSynth(o) => &o.nowa,
            JobOutcome::FrozenReplay(o) => &o.nowa,
            JobOutcome::Capture(o) => &o.nowa,
            JobOutcome::FrozenStats(o) => &o.nowa,
            JobOutcome::FrozenBench(o) => &o.nowa,
            JobOutcome::FrozenFromTrace(o) => &o.nowa,
        }
    }
}

impl Job {
    /// The command's name.
    #[must_use]
    pub fn command(&self) -> &'static str {
        match self {
            Job::Sim(_) => "sim",
            Job::Ycsb(_) => "ycsb",
            Job::Compare(_) => "compare",
            Job::Tpcc(_) => "tpcc",
            Job::Table1(_) => "table1",
            Job::SimSweep(_) => "sim-sweep",
            Job::FrozenFigures(_) => "frozen-figures",
            Job::Ssdiq(_) => "ssdiq",
            Job::PlanRun(_) => "plan-run",
            Job::PlanFigures(_) => "plan-figures",
            Job::TraceStats(_) => "trace-stats",
            Job::TraceConvert(_) => "trace-convert",
            Job::TraceGen(_) => "trace-gen",
            Job::InferGcUnit(_) => "infer-gc-unit",
            Job::FrozenEngineFigures(_) => "frozen-engine-figures",
            Job::FrozenTrain(_) => "frozen-train",
            Job::FrozenSynth(_) => "frozen-synth",
            Job::FrozenReplay(_) => "frozen-replay",
            Job::Capture(_) => "capture",
            Job::FrozenStats(_) => "frozen-stats",
            Job::FrozenBench(_) => "frozen-bench",
            Job::FrozenFromTrace(_) => "frozen-from-trace",
        }
    }

    /// Checks the spec with the command's flag parsers (a job file is checked as the same
    /// flags would be).
    ///
    /// # Errors
    /// The first bad value.
    pub fn check(&self) -> Result<(), Error> {
        match self {
            Job::Sim(s) => s.check(),
            Job::Ycsb(s) => s.check(),
            Job::Compare(s) => s.check(),
            Job::Tpcc(s) => s.check(),
            Job::Table1(s) => table1::check(s),
            Job::SimSweep(s) => s.check(),
            Job::FrozenFigures(s) => s.check(),
            Job::Ssdiq(s) => s.check(),
            Job::PlanRun(s) => s.check(),
            Job::PlanFigures(s) => s.check(),
            Job::TraceStats(s) => s.check(),
            // A conversion's input and output are checked when it opens them.
            Job::TraceConvert(_) => Ok(()),
            Job::TraceGen(s) => s.check(),
            Job::InferGcUnit(s) => s.check(),
            Job::FrozenEngineFigures(s) => s.check(),
            Job::FrozenTrain(s) => s.check(),
            Job::FrozenSynth(_) => Ok(()), // its ranges are checked by the run, before any write
            Job::FrozenReplay(s) => s.check(),
            Job::Capture(s) => s.check(),
            Job::FrozenBench(s) => s.check(),
            // The log and the trace are checked when the run opens them.
            Job::FrozenStats(_) | Job::FrozenFromTrace(_) => Ok(()),
        }
    }

    /// Runs the job.
    ///
    /// # Errors
    /// As the command's `run`.
    ///
    /// # Panics
    /// If the result names another command (a bug).
    pub fn run(
        &self,
        progress: Option<Progress<'_>>,
        cancel: &Cancel,
    ) -> Result<JobOutcome, Error> {
        let out = match self {
            Job::Sim(s) => sim::run(s, progress, cancel).map(JobOutcome::Sim)?,
            Job::Ycsb(s) => {
                ycsb::run(s, progress, cancel).map(|o| JobOutcome::Ycsb(Box::new(o)))?
            }
            Job::Tpcc(s) => {
                tpcc::run(s, progress, cancel).map(|o| JobOutcome::Tpcc(Box::new(o)))?
            }
            Job::Table1(s) => {
                table1::run(s, progress, cancel).map(|o| JobOutcome::Table1(Box::new(o)))?
            }
            Job::Compare(s) => {
                // Progress over all engines: engine i's n-th operation of `ops` each.
                let total = s.ops * s.engines.len() as u64;
                assert!(total > 0, "a checked spec has engines and ops");
                let each = |i: usize, n: u64| {
                    if let Some(p) = progress {
                        p(i as u64 * s.ops + n, total);
                    }
                };
                JobOutcome::Compare(Box::new(compare::run(s, &each)?))
            }
            Job::SimSweep(s) => {
                sim::sweep::run(s, progress, cancel).map(|o| JobOutcome::SimSweep(Box::new(o)))?
            }
            Job::FrozenFigures(s) => crate::frozen::figures::run(s, progress, cancel)
                .map(|o| JobOutcome::FrozenFigures(Box::new(o)))?,
            Job::Ssdiq(_)
            | Job::PlanRun(_)
            | Job::PlanFigures(_)
            | Job::TraceStats(_)
            | Job::TraceConvert(_)
            | Job::TraceGen(_)
            | Job::InferGcUnit(_)
            | Job::Capture(_)
            | Job::FrozenStats(_)
            | Job::FrozenBench(_)
            | Job::FrozenFromTrace(_) => self.run_devices(progress, cancel)?,
            Job::FrozenEngineFigures(s) => crate::frozen::engine_figures::run(s, progress, cancel)
                .map(|o| JobOutcome::FrozenEngineFigures(Box::new(o)))?,
            Job::FrozenTrain(s) => crate::frozen::training::train(s, cancel)
                .map(|o| JobOutcome::FrozenTrain(Box::new(o)))?,
            Job::FrozenSynth(s) => crate::frozen::training::synth(s, cancel)
                .map(|o| JobOutcome::FrozenSynth(Box::new(o)))?,
            Job::FrozenReplay(s) => crate::frozen::replay::run_with(s, &|_| {}, cancel)
                .map(|o| JobOutcome::FrozenReplay(Box::new(o)))?,
        };
        assert_eq!(
            out.identity().command,
            self.command(),
            "the result names the job's command"
        );
        Ok(out)
    }

    // helper cli's arms: the device, PLAN and trace jobs.
    /// Runs a device, PLAN or trace job (`ssdiq`, `plan-*`, `trace-*`).
    fn run_devices(
        &self,
        progress: Option<Progress<'_>>,
        cancel: &Cancel,
    ) -> Result<JobOutcome, Error> {
        use crate::{frozen::tools, plan, ssdiq, trace};
        Ok(match self {
            Job::Ssdiq(s) => JobOutcome::Ssdiq(Box::new(ssdiq::run(s, progress, cancel)?)),
            Job::PlanRun(s) => JobOutcome::PlanRun(Box::new(plan::run(s, progress, cancel)?)),
            Job::PlanFigures(s) => {
                JobOutcome::PlanFigures(Box::new(plan::figures(s, progress, cancel)?))
            }
            Job::TraceStats(s) => {
                JobOutcome::TraceStats(Box::new(trace::stats(s, cancel, &|| {})?))
            }
            Job::TraceConvert(s) => JobOutcome::TraceConvert(Box::new(trace::convert(s, cancel)?)),
            Job::TraceGen(s) => JobOutcome::TraceGen(Box::new(trace::generate(s, cancel)?)),
            Job::InferGcUnit(s) => {
                JobOutcome::InferGcUnit(Box::new(crate::gcunit::run(s, progress, cancel)?))
            }
            Job::Capture(s) => {
                JobOutcome::Capture(Box::new(crate::capture::run(s, progress, cancel)?))
            }
            Job::FrozenStats(s) => JobOutcome::FrozenStats(Box::new(tools::stats(s, cancel)?)),
            Job::FrozenBench(s) => JobOutcome::FrozenBench(Box::new(tools::bench(s, cancel)?)),
            Job::FrozenFromTrace(s) => {
                JobOutcome::FrozenFromTrace(Box::new(tools::from_trace(s, cancel)?))
            }
            _ => unreachable!("run_devices runs the device, PLAN and trace jobs"),
        })
    }
}

/// A job from text: a job file (TOML or JSON), or a result whose `nowa` object names the
/// command and the spec that ran. Errors name the field (`spec.capacity: ...`).
///
/// # Errors
/// [`Error::Usage`]: not TOML/JSON, an unknown command or key, a value of the wrong type or
/// out of its flag's range.
pub fn parse_job(text: &str, toml: bool) -> Result<Job, Error> {
    let job: Job = if toml {
        let value: toml::Value =
            toml::from_str(text).map_err(|e| Error::Usage(one_line(&e.to_string())))?;
        serde_path_to_error::deserialize(value).map_err(path_error)?
    } else {
        let mut value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Error::Usage(e.to_string()))?;
        if let Some(nowa) = value.get_mut("nowa").map(serde_json::Value::take) {
            value = serde_json::json!({
                "command": nowa.get("command").cloned().unwrap_or_default(),
                "spec": nowa.get("spec").cloned().unwrap_or_default(),
            });
        }
        serde_path_to_error::deserialize(value).map_err(path_error)?
    };
    job.check().map_err(|e| flags_as_fields(&job, e))?;
    Ok(job)
}

/// A spec checked as flags names flags (`--pages-per-block`); in a job file each flag that
/// is a field of the spec becomes the field's path (`spec.pages_per_block`,
/// `spec.device.pages_per_block`), so the message names what the file holds.
fn flags_as_fields(job: &Job, e: Error) -> Error {
    let Error::Usage(msg) = e else {
        return e;
    };
    let spec = serde_json::to_value(job).map_or(serde_json::Value::Null, |mut v| v["spec"].take());
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg.as_str();
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let flag = &rest[at + 2..];
        let end = flag
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(flag.len());
        let key = flag[..end].replace('-', "_");
        rest = &flag[end..];
        match field_path(&spec, &key) {
            Some(path) if end > 0 => {
                out.push_str(&format!("spec.{path}"));
                // clap's value name (`'--fill <FILL>'`) is no part of a file.
                if let Some(close) = rest.strip_prefix(" <").and_then(|r| r.find('>')) {
                    rest = &rest[close + 3..];
                }
            }
            _ => {
                out.push_str("--");
                out.push_str(&flag[..end]);
            }
        }
    }
    out.push_str(rest);
    Error::Usage(out)
}

/// The path of the first field named `key` in `v` (depth first): `op`, `device.op`.
fn field_path(v: &serde_json::Value, key: &str) -> Option<String> {
    let obj = v.as_object()?;
    if obj.contains_key(key) {
        return Some(key.to_owned());
    }
    obj.iter()
        .find_map(|(k, child)| field_path(child, key).map(|p| format!("{k}.{p}")))
}

/// A job from a file: `.toml` is TOML, anything else JSON.
///
/// # Errors
/// The file cannot be read, or [`parse_job`]'s errors, prefixed with the file.
pub fn load_job(path: &Path) -> Result<Job, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
    let toml = path.extension().is_some_and(|e| e == "toml");
    parse_job(&text, toml).map_err(|e| Error::Usage(format!("{}: {e}", path.display())))
}

fn path_error<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> Error {
    let path = e.path().to_string();
    let inner = one_line(&e.into_inner().to_string());
    if path == "." {
        Error::Usage(inner)
    } else {
        Error::Usage(format!("{path}: {inner}"))
    }
}

fn one_line(s: &str) -> String {
    s.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
