//! `ssdiq`: the SSD-iq suite (nowa-bench's steps and job runner) on a block device, a file or
//! a simulated SSD. The spec names the target and holds the complete suite configuration
//! (the sampling interval resolved for the target's capacity); [`run_with`] opens the target
//! through nowa-device's one opening path (the plan announced first), runs the suite and
//! returns its result under the run's identity.

mod flags;

pub use flags::{Interval, IoEngine, Loads, SsdiqFlags, Workloads};

use crate::{Cancel, Error, Identity, Progress, Report};
use nowa_bench::plot::BarChart;
use nowa_bench::ssdiq::{
    self, report, Engine, OpenOpts, PerfModel, PhaseTick, PlanStep, SimSpec, SsdiqResult, Step,
    SuiteConfig, Target, TargetInfo, Tick,
};
use nowa_device::{OpenError, Verdict};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The spec of an SSD-iq run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// The target: a block device or file path, or `sim` (the simulated SSD of `sim`).
    pub target: String,
    /// The simulated SSD (exactly when `target` is `sim`).
    pub sim: Option<SimSpec>,
    /// The I/O engine of a real target.
    pub engine: IoEngine,
    /// O_DIRECT on a real target.
    pub direct: bool,
    /// The size of the file created when the target path does not exist.
    pub create_size: Option<u64>,
    /// The target the user allowed to overwrite although it holds data (`--force`).
    pub force: Option<PathBuf>,
    /// The suite, every default resolved.
    pub suite: SuiteConfig,
}

/// A result under its run's identity.
pub type Outcome = Report<SsdiqResult>;

/// What a run reports while it runs.
pub struct Hooks<'a> {
    /// One line per step, notes, the files written.
    pub log: &'a mut dyn FnMut(&str),
    /// The plan, announced before anything is written.
    pub announce: &'a mut dyn FnMut(&str),
    /// Progress inside every phase (a phase starts with its line to `log`).
    pub tick: Option<Tick<'a>>,
}

impl Spec {
    /// Checks every field (a job file's as the flags are checked).
    ///
    /// # Errors
    /// [`Error::Usage`]: `field: why`.
    pub fn check(&self) -> Result<(), Error> {
        let s = &self.suite;
        crate::check_ranges(&[
            ("suite.qd", u64::from(s.qd), 1, 4096),
            ("suite.threads", u64::from(s.threads), 1, 256),
            ("suite.bs", u64::from(s.bs), 4096, 64 << 20),
            ("suite.seq_bs", u64::from(s.seq_bs), 4096, 64 << 20),
        ])?;
        s.validate()
            .map_err(|e| Error::Usage(format!("suite: {e}")))?;
        match (&self.sim, self.target.as_str()) {
            (Some(sim), "sim") => {
                crate::check_ranges(&[("sim.capacity", sim.capacity, 256 << 10, 1 << 44)])?;
                crate::check_blocks("sim.capacity", sim.capacity)?;
                sim.ftl_config()
                    .map_err(|e| Error::Usage(format!("sim: {e:#}")))?;
            }
            (None, t) if t != "sim" && !t.is_empty() => {}
            _ => {
                return Err(Error::Usage(
                    "sim: a simulated SSD exactly when target is \"sim\"".into(),
                ))
            }
        }
        Ok(())
    }

    /// The run's seed.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.suite.seed
    }
}

/// The simulated SSD of `sim` / `sim:SIZE` (`--size` or 1 GiB), or None for a path.
fn sim_spec(f: &SsdiqFlags, target: &str) -> Result<Option<SimSpec>, Error> {
    if target != "sim" && !target.starts_with("sim:") {
        return Ok(None);
    }
    let cap = match target.strip_prefix("sim:") {
        Some(s) => nowa_units::parse_size_in(s, 256 << 10, 1 << 44)
            .map_err(|e| Error::Usage(format!("target sim:SIZE: {e}")))?,
        None => f.size.unwrap_or(1 << 30),
    };
    let spec = SimSpec {
        capacity: cap / 4096 * 4096,
        op: f.sim_op,
        policy: f.sim_policy.clone(),
        unit_pages: f.sim_unit_pages,
        model: PerfModel {
            media_write_mb_s: f.sim_media_mbps,
            read_mb_s: f.sim_read_mbps,
            chips: f.sim_timing.chips(),
            ..PerfModel::default()
        },
    };
    assert!(
        spec.capacity % 4096 == 0 && spec.capacity >= 256 << 10,
        "whole blocks"
    );
    spec.ftl_config()
        .map_err(|e| Error::Usage(format!("--sim-op/--sim-policy/--sim-unit-pages: {e:#}")))?;
    Ok(Some(spec))
}

/// A refusal of the opening path is bad input; busy or I/O errors are failures.
fn open_error(e: OpenError) -> Error {
    if e.is_refusal() {
        Error::Usage(e.to_string())
    } else {
        Error::failed("opening the target", e)
    }
}

/// The capacity of a real target for the plan (nothing is written): the refusals of the
/// opening path, a file's missing directory, `create_size` for a file to create.
fn real_capacity(
    path: &Path,
    force: Option<&Path>,
    create_size: Option<u64>,
    log: &mut dyn FnMut(&str),
) -> Result<u64, Error> {
    match ssdiq::check(path, force, create_size).map_err(open_error)? {
        Verdict::Create { size, .. } => {
            // The file is created after the plan is printed: a missing directory is bad
            // input, refused now with its path (it was "No such file or directory", exit 1).
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            if let Some(dir) = parent.filter(|d| !d.is_dir()) {
                return Err(Error::Usage(format!(
                    "{}: directory {} does not exist",
                    path.display(),
                    dir.display()
                )));
            }
            assert!(
                parent.is_none_or(Path::is_dir),
                "the file's directory exists"
            );
            Ok(size / 4096 * 4096)
        }
        Verdict::Existing { ref path, .. } => {
            let cap = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            if let Some(sz) = create_size.filter(|&s| s / 4096 != cap / 4096) {
                log(&format!(
                    "note: {} exists ({cap} bytes); --size {sz} is ignored",
                    path.display()
                ));
            }
            Ok(cap)
        }
        _ => Ok(0),
    }
}

/// The target's capacity in bytes (the simulated SSD's, or a real target's checked as in
/// [`real_capacity`]).
///
/// # Errors
/// The opening path's refusal, a missing directory.
pub fn capacity(spec: &Spec, log: &mut dyn FnMut(&str)) -> Result<u64, Error> {
    match &spec.sim {
        Some(s) => Ok(s.capacity),
        None => real_capacity(
            Path::new(&spec.target),
            spec.force.as_deref(),
            spec.create_size,
            log,
        ),
    }
}

/// The spec of `flags` on `target` (`sim`, `sim:SIZE` or a path): the simulated SSD built,
/// a real target checked (nothing written), `--interval auto` resolved for the capacity.
///
/// # Errors
/// [`Error::Usage`] naming the flag or the target.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn from_flags(f: &SsdiqFlags, target: &str, log: &mut dyn FnMut(&str)) -> Result<Spec, Error> {
    if f.sanitize && !target.contains("nvme") {
        return Err(Error::Usage(
            "--sanitize: only for NVMe block devices".into(),
        ));
    }
    let sim = sim_spec(f, target)?;
    let mut steps = f.steps;
    if f.sweep.0.is_empty() {
        steps.sweep = false;
    }
    let mut spec = Spec {
        target: if sim.is_some() {
            "sim".into()
        } else {
            target.into()
        },
        engine: f.engine,
        direct: !f.no_direct,
        create_size: f.size.filter(|_| sim.is_none()).map(|s| s / 4096 * 4096),
        force: f.force.clone(),
        sim,
        suite: SuiteConfig {
            bs: f.bs,
            seq_bs: f.seq_bs,
            qd: f.qd,
            threads: f.threads,
            fill: f.fill,
            warmup: f.warmup,
            volume: f.volume,
            read_secs: f.read_time,
            lat_secs: f.lat_time,
            bg_load: f.bg_load,
            sweep: f.sweep.0.clone(),
            sweep_secs: f.sweep_time,
            workloads: f.workloads.0.clone(),
            steps,
            interval: 1.0,
            max_phase_secs: f.max_time,
            rate_mb_s: f.rate,
            seed: f.seed,
            sanitize: f.sanitize,
        },
    };
    let cap = capacity(&spec, log)?;
    spec.suite.interval = f
        .interval
        .0
        .unwrap_or_else(|| auto_interval(spec.sim.as_ref(), cap));
    spec.check()?;
    assert_eq!(
        spec.sim.is_some(),
        spec.target == "sim",
        "sim exactly for `sim`"
    );
    assert_eq!(spec.suite.seed, f.seed, "the spec names the flags' seed");
    assert!(spec.suite.interval > 0.0, "the interval is resolved");
    Ok(spec)
}

/// The sampling period when `--interval` is auto.
fn auto_interval(sim: Option<&SimSpec>, capacity: u64) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "a capacity as a rough duration")]
    let cap = capacity as f64;
    assert!(cap >= 0.0, "a capacity");
    match sim {
        // A tenth of a sequential capacity write, in virtual time.
        Some(spec) => (cap / (spec.model.media_write_mb_s * 1e6) / 10.0).max(1e-4),
        // About 100 samples per sequential capacity write at 1 GB/s, between 0.1 and 1 s.
        None => (cap / 1e9 / 100.0).clamp(0.1, 1.0),
    }
}

/// The plan's lines, destructive steps marked.
#[must_use]
pub fn plan_lines(plan: &[PlanStep]) -> Vec<String> {
    plan.iter()
        .map(|s| {
            let mark = if s.destructive {
                "[DESTRUCTIVE]"
            } else {
                "             "
            };
            format!("  {mark} {:<11} {}", s.name, s.what)
        })
        .collect()
}

/// The job runs (phases with I/O) the suite plans: what whole-run progress counts.
#[must_use]
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn planned_runs(cfg: &SuiteConfig) -> u64 {
    let steps = ssdiq::suite(cfg);
    assert!(
        !steps.is_empty(),
        "the reset and the initialization always run"
    );
    steps
        .iter()
        .map(|s| match s {
            Step::Reset { .. } => 0,
            Step::SeqInit { .. } | Step::SeqRead | Step::RandRead => 1,
            Step::RandWrite { .. } => 1 + u64::from(cfg.warmup > 0.0),
            Step::Latency { .. } => 2,
            Step::Sweep { loads, .. } => 2 * loads.len() as u64,
        })
        .sum()
}

/// Opens the target after announcing the plan.
fn open(
    spec: &Spec,
    plan: &[String],
    hooks: &mut Hooks<'_>,
) -> Result<(Target, TargetInfo), Error> {
    if let Some(sim) = &spec.sim {
        plan.iter().for_each(|l| (hooks.announce)(l));
        return Target::open_sim(sim).map_err(|e| Error::Failed {
            what: "building the simulated SSD",
            source: e.into(),
        });
    }
    let opts = OpenOpts {
        engine: match spec.engine {
            IoEngine::Uring => Engine::Uring,
            IoEngine::Psync => Engine::Psync,
        },
        direct: spec.direct,
        max_qd: spec.suite.qd,
        create_size: spec.create_size,
        force: spec.force.clone(),
    };
    let path = Path::new(&spec.target);
    Target::open_real(path, &opts, plan, hooks.announce).map_err(|e| {
        match e.downcast::<OpenError>() {
            Ok(oe) => open_error(oe),
            Err(e) => Error::Failed {
                what: "opening the target",
                source: e.context(format!("opening {}", path.display())).into(),
            },
        }
    })
}

/// Runs the suite: the plan announced, the target opened, one line per step to `hooks.log`.
/// A run stopped by Ctrl-C or by a failing step returns what it measured (`interrupted`,
/// `error` in the result).
///
/// # Errors
/// [`Error::Usage`]: a bad field, a refused target; [`Error::Failed`]: the target cannot be
/// opened.
///
/// # Panics
/// If the result is of another configuration (a bug).
pub fn run_with(spec: &Spec, hooks: &mut Hooks<'_>, cancel: &Cancel) -> Result<Outcome, Error> {
    spec.check()?;
    let cap = capacity(spec, hooks.log)?;
    let plan = plan_lines(&ssdiq::plan(&spec.suite, cap));
    assert!(!plan.is_empty(), "a suite has steps");
    let (mut target, info) = open(spec, &plan, hooks)?;
    assert_eq!(
        info.sim.is_some(),
        spec.sim.is_some(),
        "the target is the spec's"
    );
    for n in &info.notes {
        (hooks.log)(&format!("NOTE: {n}"));
    }
    let id = Identity::now("ssdiq", spec, spec.seed());
    // The runner polls nowa-bench's one stop flag, the one `cancel` sets.
    assert!(std::ptr::eq(&ssdiq::STOP, &nowa_bench::interrupt::STOP));
    let asked_before = cancel.requested();
    let res = ssdiq::run_suite_ticked(
        &mut target,
        info,
        &spec.suite,
        &ssdiq::STOP,
        hooks.log,
        hooks.tick,
    );
    assert_eq!(res.config, spec.suite, "the result is of the spec's suite");
    assert!(
        !asked_before || res.interrupted,
        "a stop asked before the run stops it"
    );
    Ok(Report {
        nowa: id,
        result: res,
    })
}

/// Runs the suite quietly (`nowa run`, Python); `progress`: thousandths of the planned job
/// runs.
///
/// # Errors
/// As [`run_with`].
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn run(spec: &Spec, progress: Option<Progress<'_>>, cancel: &Cancel) -> Result<Outcome, Error> {
    let total = planned_runs(&spec.suite).max(1) * 1000;
    assert!(total >= 1000, "at least one run");
    let started = std::sync::atomic::AtomicU64::new(0);
    let mut log = |l: &str| {
        // Every job run opens with one unindented line; the reset runs none.
        if !l.starts_with(' ') && !l.starts_with("reset") && !l.starts_with("NOTE") {
            started.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let tick = |t: PhaseTick| {
        if let Some(p) = progress {
            let runs = started.load(std::sync::atomic::Ordering::Relaxed).max(1) - 1;
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a share in [0, 1]"
            )]
            let part = (t.done * 1000.0) as u64;
            p((runs * 1000 + part).min(total), total);
        }
    };
    let real = spec.sim.is_none();
    let mut hooks = Hooks {
        log: &mut log,
        // A real target's destructive steps are announced before anything is written, by
        // every face (`nowa run` and Python too).
        announce: &mut |l| {
            if real {
                eprintln!("ssdiq: {l}");
            }
        },
        tick: Some(&tick),
    };
    run_with(spec, &mut hooks, cancel)
}

/// Writes `ssdiq.json` (the result under its identity), `intervals.csv` (its first line the
/// identity) and the plots in each of `exts` (`png`, `svg`) into `dir`. Returns the files.
///
/// # Errors
/// A file cannot be written or a chart cannot be rendered.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn write_outputs(out: &Outcome, dir: &Path, exts: &[&str]) -> Result<Vec<PathBuf>, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut files = Vec::new();
    let j = dir.join("ssdiq.json");
    let text = serde_json::to_string_pretty(out).map_err(|e| Error::io(&j, e))?;
    std::fs::write(&j, text).map_err(|e| Error::io(&j, e))?;
    files.push(j);
    let c = dir.join("intervals.csv");
    let file = crate::csv_file(&c, &out.nowa)?;
    report::write_intervals(&out.result, file).map_err(|e| Error::io(&c, e))?;
    files.push(c);
    assert!(
        exts.iter().all(|e| matches!(*e, "png" | "svg")),
        "plot formats"
    );
    for ext in exts {
        let plots = report::write_plots(&out.result, dir, ext).map_err(|e| Error::Failed {
            what: "plotting",
            source: e.into(),
        })?;
        files.extend(plots);
    }
    Ok(files)
}

/// A result file of `nowa ssdiq --json` or `--out` (`ssdiq.json`).
///
/// # Errors
/// [`Error::Usage`] naming the file: unreadable, not an ssdiq result.
pub fn load_result(p: &Path) -> Result<SsdiqResult, Error> {
    let text =
        std::fs::read_to_string(p).map_err(|e| Error::Usage(format!("{}: {e}", p.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| Error::Usage(format!("{}: not an ssdiq result ({e})", p.display())))
}

/// Random-write IOPS per workload, one group per result (`nowa ssdiq report --plot`).
#[must_use]
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn iops_chart(results: &[SsdiqResult]) -> BarChart {
    let mut categories: Vec<String> = Vec::new();
    for row in results.iter().flat_map(|r| &r.summary.rand_write) {
        if !categories.contains(&row.workload) {
            categories.push(row.workload.clone());
        }
    }
    let groups: Vec<(String, Vec<f64>)> = results
        .iter()
        .map(|res| {
            let vals = categories
                .iter()
                .map(|c| {
                    res.summary
                        .rand_write
                        .iter()
                        .find(|x| &x.workload == c)
                        .map_or(f64::NAN, |x| x.kiops)
                })
                .collect();
            (res.target.path.clone(), vals)
        })
        .collect();
    assert_eq!(groups.len(), results.len(), "one group per result");
    BarChart {
        title: "Random-write IOPS at steady state".into(),
        y_label: "k IOPS".into(),
        categories,
        groups,
    }
}

#[cfg(test)]
mod tests;
