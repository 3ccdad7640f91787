//! The suite as a list of [`Step`]s: [`suite`] is the one place that says which steps run in
//! which order; [`plan`] describes them before anything runs, [`run_suite`] executes them,
//! and every phase they record carries a [`PhaseKind`] that [`super::summarize`] matches on.

use super::job::{JobKind, JobSpec};
use super::target::{MediaCounters, Target};
use super::{fmt_bytes, summarize, Phase, SsdiqResult, SuiteConfig, Summary};
use nowa_workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// What a recorded phase measured (its JSON name is the kebab-case variant name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseKind {
    /// Discard / sanitize of the whole range.
    Reset,
    /// Sequential initialization (sequential write bandwidth).
    SeqWrite,
    /// Sequential reads.
    SeqRead,
    /// Random reads.
    RandRead,
    /// Random writes before the measured phase.
    WarmUp,
    /// Measured random writes.
    RandWrite,
    /// QD1 read probe under background writes.
    LatencyRead,
    /// QD1 write probe under background writes.
    LatencyWrite,
    /// Read probe at one sweep load.
    SweepRead,
    /// Write probe at one sweep load.
    SweepWrite,
}

impl PhaseKind {
    /// The name in logs, CSV and JSON.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            PhaseKind::Reset => "reset",
            PhaseKind::SeqWrite => "seq-write",
            PhaseKind::SeqRead => "seq-read",
            PhaseKind::RandRead => "rand-read",
            PhaseKind::WarmUp => "warm-up",
            PhaseKind::RandWrite => "rand-write",
            PhaseKind::LatencyRead => "latency-read",
            PhaseKind::LatencyWrite => "latency-write",
            PhaseKind::SweepRead => "sweep-read",
            PhaseKind::SweepWrite => "sweep-write",
        }
    }
}

impl std::fmt::Display for PhaseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One step of the suite.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Discard (or sanitize) the whole range; `before` names the workload it prepares.
    Reset {
        /// NVMe sanitize instead of a discard.
        sanitize: bool,
        /// The workload it prepares (None: the first).
        before: Option<WorkloadSpec>,
    },
    /// Sequential initialization of the range.
    SeqInit {
        /// The workload it prepares (None: the first).
        before: Option<WorkloadSpec>,
    },
    /// Sequential read bandwidth.
    SeqRead,
    /// Random read IOPS.
    RandRead,
    /// Warm-up and measured random writes of workload `index`.
    RandWrite {
        /// Position in the workload list (seeds derive from it).
        index: usize,
        /// The workload.
        workload: WorkloadSpec,
    },
    /// Latency probes under background writes at `load` of the random-write bandwidth.
    Latency {
        /// The background workload.
        workload: WorkloadSpec,
        /// Fraction of the measured random-write bandwidth.
        load: f64,
    },
    /// The latency sweep of Figure 8.
    Sweep {
        /// The background workload.
        workload: WorkloadSpec,
        /// Fractions of the measured random-write bandwidth.
        loads: Vec<f64>,
    },
}

/// The steps `cfg` asks for, in order.
#[must_use]
pub fn suite(cfg: &SuiteConfig) -> Vec<Step> {
    let mut s = vec![
        Step::Reset {
            sanitize: cfg.sanitize,
            before: None,
        },
        Step::SeqInit { before: None },
    ];
    if cfg.steps.seq_read {
        s.push(Step::SeqRead);
    }
    if cfg.steps.rand_read {
        s.push(Step::RandRead);
    }
    let writes = cfg.steps.rand_write || cfg.steps.latency || cfg.steps.sweep;
    for (index, w) in cfg.workloads.iter().enumerate() {
        if !writes || (index > 0 && !cfg.steps.rand_write) {
            break;
        }
        if index > 0 {
            let before = Some(w.clone());
            s.push(Step::Reset {
                sanitize: false,
                before: before.clone(),
            });
            s.push(Step::SeqInit { before });
        }
        s.push(Step::RandWrite {
            index,
            workload: w.clone(),
        });
        if index == 0 && cfg.steps.latency {
            s.push(Step::Latency {
                workload: w.clone(),
                load: cfg.bg_load,
            });
        }
        if index == 0 && cfg.steps.sweep {
            s.push(Step::Sweep {
                workload: w.clone(),
                loads: cfg.sweep.clone(),
            });
        }
    }
    s
}

/// One step of the plan, listed before anything runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PlanStep {
    /// reset, seq-write, seq-read, rand-read, rand-write, latency or sweep.
    pub name: String,
    /// Destroys data on the target.
    pub destructive: bool,
    /// What it does.
    pub what: String,
}

impl Step {
    /// The step's name in the plan.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Step::Reset { .. } => "reset",
            Step::SeqInit { .. } => "seq-write",
            Step::SeqRead => "seq-read",
            Step::RandRead => "rand-read",
            Step::RandWrite { .. } => "rand-write",
            Step::Latency { .. } => "latency",
            Step::Sweep { .. } => "sweep",
        }
    }

    /// Does it write to the target?
    #[must_use]
    pub fn destructive(&self) -> bool {
        !matches!(self, Step::SeqRead | Step::RandRead)
    }

    /// What the step does, for the plan.
    #[must_use]
    pub fn describe(&self, cfg: &SuiteConfig, capacity: u64) -> String {
        let range = fmt_bytes(init_range(cfg, capacity));
        let pct = |f: f64| format!("{:.0}%", f * 100.0);
        match self {
            Step::Reset { sanitize: true, .. } => format!(
                "NVMe sanitize (block erase) of the whole device ({})",
                fmt_bytes(capacity)
            ),
            Step::Reset { before: None, .. } => {
                format!("discard (TRIM) of the whole range, {}", fmt_bytes(capacity))
            }
            Step::Reset { before: Some(w), .. } => format!("discard of the whole range before {w}"),
            Step::SeqInit { before: None } => format!(
                "sequential initialization: write {range} with {} blocks (sequential write bandwidth)",
                fmt_bytes(u64::from(cfg.seq_bs))
            ),
            Step::SeqInit { before: Some(w) } => {
                format!("sequential initialization of {range} before {w}")
            }
            Step::SeqRead => format!("sequential reads of {range}, at most {} s", cfg.read_secs),
            Step::RandRead => format!(
                "{} random reads at QD {} x {} threads for {} s",
                fmt_bytes(u64::from(cfg.bs)),
                cfg.qd,
                cfg.threads,
                cfg.read_secs
            ),
            Step::RandWrite { workload, .. } => format!(
                "{workload}: {} random writes, {}x capacity warm-up then {}x capacity measured",
                fmt_bytes(u64::from(cfg.bs)),
                cfg.warmup,
                cfg.volume
            ),
            Step::Latency { workload, load } => format!(
                "QD1 read and write probes, {} s each, under {workload} writes at {} of the random-write bandwidth",
                cfg.lat_secs,
                pct(*load)
            ),
            Step::Sweep { loads, .. } => format!(
                "latency vs write rate: probes of {} s under writes at {} of the random-write bandwidth",
                cfg.sweep_secs,
                loads.iter().map(|&f| pct(f)).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

/// The steps the suite will perform on a target of `capacity` bytes.
#[must_use]
pub fn plan(cfg: &SuiteConfig, capacity: u64) -> Vec<PlanStep> {
    suite(cfg)
        .iter()
        .map(|s| PlanStep {
            name: s.name().into(),
            destructive: s.destructive(),
            what: s.describe(cfg, capacity),
        })
        .collect()
}

/// Bytes initialized and used by the workloads: `fill` x capacity in whole blocks.
pub(crate) fn init_range(cfg: &SuiteConfig, capacity: u64) -> u64 {
    let bs = u64::from(cfg.seq_bs.max(cfg.bs));
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "fill is in (0, 1]: the product is a positive byte count below the capacity"
    )]
    let r = (capacity as f64 * cfg.fill) as u64 / bs * bs;
    r.max(bs.min(capacity / bs * bs))
}

/// A byte volume of `x` capacities.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    reason = "volumes are validated positive and finite"
)]
fn volume(x: f64, capacity: u64) -> u64 {
    (x * capacity as f64) as u64
}

/// A running suite: the target, its configuration and what has been recorded so far.
struct Run<'a> {
    target: &'a mut Target,
    cfg: &'a SuiteConfig,
    stop: &'a AtomicBool,
    log: &'a mut dyn FnMut(&str),
    /// Progress inside each phase.
    tick: Option<super::Tick<'a>>,
    res: &'a mut SsdiqResult,
    capacity: u64,
    range: u64,
    /// Random-write bandwidth (MB/s) of the first workload: the latency probes' reference.
    steady: f64,
}

impl Run<'_> {
    fn job(&self, name: &str, kind: JobKind, bs: u32, seed: u64) -> JobSpec {
        let cfg = self.cfg;
        let rand_range = self.range / u64::from(cfg.bs) * u64::from(cfg.bs);
        JobSpec {
            name: name.into(),
            kind,
            bs,
            qd: cfg.qd,
            threads: cfg.threads,
            rate: None,
            range: if bs == cfg.bs { rand_range } else { self.range },
            max_bytes: None,
            max_secs: None,
            interval: cfg.interval,
            seed,
        }
    }

    /// Rate cap and time limit of a write phase.
    fn write_cap(&self, mut j: JobSpec) -> JobSpec {
        j.rate = self.cfg.rate_mb_s.map(|r| r * 1e6);
        j.max_secs = self.cfg.max_phase_secs;
        j
    }

    fn record(
        &mut self,
        step: PhaseKind,
        workload: Option<String>,
        jobs: Vec<super::JobResult>,
        waf_measured: Option<f64>,
        load: Option<f64>,
    ) {
        self.res.phases.push(Phase {
            step,
            workload,
            load,
            jobs,
            waf_measured,
            note: None,
        });
    }

    /// Runs `jobs`; returns their results and the WAF over the run if the target has counters.
    fn measure(
        &mut self,
        jobs: &[JobSpec],
    ) -> anyhow::Result<(Vec<super::JobResult>, Option<f64>)> {
        let before = self.target.counters();
        let r = self.target.run_ticked(jobs, self.stop, self.tick)?;
        Ok((r, waf_between(before, self.target.counters())))
    }

    fn step(&mut self, step: &Step) -> anyhow::Result<()> {
        match step {
            Step::Reset { sanitize, before } => self.reset(*sanitize, before.as_ref()),
            Step::SeqInit { before } => self.seq_init(before.as_ref()),
            Step::SeqRead => self.seq_read(),
            Step::RandRead => self.rand_read(),
            Step::RandWrite { index, workload } => self.rand_write(*index, workload),
            Step::Latency { workload, load } => {
                self.probes(workload, *load, self.cfg.lat_secs, false)
            }
            Step::Sweep { workload, loads } => {
                for &load in loads {
                    self.probes(workload, load, self.cfg.sweep_secs, true)?;
                    if self.stop.load(Relaxed) {
                        break;
                    }
                }
                Ok(())
            }
        }
    }

    fn reset(&mut self, sanitize: bool, before: Option<&WorkloadSpec>) -> anyhow::Result<()> {
        let how = if sanitize { "sanitize" } else { "discard" };
        (self.log)(&format!("reset: {how} the whole range"));
        let note = if sanitize {
            self.target.sanitize()?;
            None
        } else {
            self.target.discard_all()?
        };
        if let Some(n) = &note {
            (self.log)(&format!("  note: {n}"));
        }
        self.res.phases.push(Phase {
            step: PhaseKind::Reset,
            workload: before.map(ToString::to_string),
            load: None,
            jobs: vec![],
            waf_measured: None,
            note,
        });
        Ok(())
    }

    fn seq_init(&mut self, before: Option<&WorkloadSpec>) -> anyhow::Result<()> {
        (self.log)(&format!(
            "seq-write: sequential initialization of {}",
            fmt_bytes(self.range)
        ));
        // The initialization must cover the whole range: --max-time does not apply here.
        let mut j = self.job(
            "seq-write",
            JobKind::SeqWrite,
            self.cfg.seq_bs,
            self.cfg.seed,
        );
        j.rate = self.cfg.rate_mb_s.map(|r| r * 1e6);
        j.max_bytes = Some(self.range);
        let (r, waf) = self.measure(&[j])?;
        (self.log)(&format!("  {:.1} MB/s", r[0].mb_s));
        self.record(
            PhaseKind::SeqWrite,
            before.map(ToString::to_string),
            r,
            waf,
            None,
        );
        Ok(())
    }

    fn seq_read(&mut self) -> anyhow::Result<()> {
        (self.log)(&format!("seq-read: up to {} s", self.cfg.read_secs));
        let mut j = self.job("seq-read", JobKind::SeqRead, self.cfg.seq_bs, self.cfg.seed);
        j.max_bytes = Some(self.range);
        j.max_secs = Some(self.cfg.read_secs);
        let r = self.target.run_ticked(&[j], self.stop, self.tick)?;
        (self.log)(&format!("  {:.1} MB/s", r[0].mb_s));
        self.record(PhaseKind::SeqRead, None, r, None, None);
        Ok(())
    }

    fn rand_read(&mut self) -> anyhow::Result<()> {
        (self.log)(&format!("rand-read: {} s", self.cfg.read_secs));
        let mut j = self.job("rand-read", JobKind::RandRead, self.cfg.bs, self.cfg.seed);
        j.max_secs = Some(self.cfg.read_secs);
        let r = self.target.run_ticked(&[j], self.stop, self.tick)?;
        (self.log)(&format!("  {:.1} k IOPS", r[0].iops / 1e3));
        self.record(PhaseKind::RandRead, None, r, None, None);
        Ok(())
    }

    fn rand_write(&mut self, index: usize, w: &WorkloadSpec) -> anyhow::Result<()> {
        let wname = w.to_string();
        let seed = self.cfg.seed.wrapping_add(index as u64 + 1);
        let kind = JobKind::RandWrite(w.clone());
        if self.cfg.warmup > 0.0 {
            (self.log)(&format!("warm-up {wname}: {}x capacity", self.cfg.warmup));
            let mut j = self.write_cap(self.job("warm-up", kind.clone(), self.cfg.bs, seed));
            j.max_bytes = Some(volume(self.cfg.warmup, self.capacity));
            let (r, waf) = self.measure(&[j])?;
            (self.log)(&format!(
                "  {:.1} k IOPS{}",
                r[0].iops / 1e3,
                waf.map(|w| format!(", WAF {w:.2}")).unwrap_or_default()
            ));
            self.record(PhaseKind::WarmUp, Some(wname.clone()), r, waf, None);
            if self.stop.load(Relaxed) {
                return Ok(());
            }
        }
        (self.log)(&format!(
            "rand-write {wname}: {}x capacity measured",
            self.cfg.volume
        ));
        let j = self.job("rand-write", kind, self.cfg.bs, seed.wrapping_add(1000));
        let mut j = self.write_cap(j);
        j.max_bytes = Some(volume(self.cfg.volume, self.capacity));
        let (r, waf) = self.measure(&[j])?;
        (self.log)(&format!(
            "  {:.1} k IOPS ({:.1} MB/s){}",
            r[0].iops / 1e3,
            r[0].mb_s,
            waf.map(|w| format!(", measured WAF {w:.2}"))
                .unwrap_or_default()
        ));
        if index == 0 {
            self.steady = r[0].mb_s;
        }
        self.record(PhaseKind::RandWrite, Some(wname), r, waf, None);
        Ok(())
    }

    /// A read probe then a write probe (QD1) under background writes of `w` at `load`.
    fn probes(
        &mut self,
        w: &WorkloadSpec,
        load: f64,
        secs: f64,
        sweep: bool,
    ) -> anyhow::Result<()> {
        let rate = load * self.steady * 1e6;
        let step = if sweep { "sweep" } else { "latency" };
        let seed = self.cfg.seed.wrapping_add(1);
        for (probe_kind, pname) in [
            (JobKind::RandRead, "read"),
            (JobKind::RandWrite(WorkloadSpec::Uniform), "write"),
        ] {
            (self.log)(&format!(
                "{step}: QD1 {pname} probe for {secs} s under {w} writes at {:.1} MB/s ({:.0}%)",
                rate / 1e6,
                load * 100.0
            ));
            let mut bg = self.job(
                "background",
                JobKind::RandWrite(w.clone()),
                self.cfg.bs,
                seed.wrapping_add(2000),
            );
            bg.rate = Some(rate);
            let mut probe = self.job(
                &format!("probe-{pname}"),
                probe_kind,
                self.cfg.bs,
                seed.wrapping_add(3000),
            );
            probe.qd = 1;
            probe.threads = 1;
            probe.max_secs = Some(secs);
            let r = self.target.run_ticked(&[bg, probe], self.stop, self.tick)?;
            (self.log)(&format!(
                "  {pname} latency avg {:.1} us, p99.9 {:.1} us; background {:.1} MB/s",
                r[1].lat.mean_us, r[1].lat.p999_us, r[0].mb_s
            ));
            let kind = match (sweep, pname) {
                (false, "read") => PhaseKind::LatencyRead,
                (false, _) => PhaseKind::LatencyWrite,
                (true, "read") => PhaseKind::SweepRead,
                (true, _) => PhaseKind::SweepWrite,
            };
            self.record(kind, Some(w.to_string()), r, None, Some(load));
            if self.stop.load(Relaxed) {
                break;
            }
        }
        Ok(())
    }
}

fn waf_between(before: Option<MediaCounters>, after: Option<MediaCounters>) -> Option<f64> {
    after?.waf_since(&before?)
}

/// Runs the suite. `log` receives one line per step. Returns the result even when interrupted
/// (`stop` set by Ctrl-C) or when a step fails (`error` set), so what was done is reported.
/// A real target gets the nowa scratch label back at the end ([`Target::finish`]).
pub fn run_suite(
    target: &mut Target,
    info: super::TargetInfo,
    cfg: &SuiteConfig,
    stop: &AtomicBool,
    log: &mut dyn FnMut(&str),
) -> SsdiqResult {
    run_suite_ticked(target, info, cfg, stop, log, None)
}

/// [`run_suite`], reporting progress inside every phase to `tick` (a phase starts with its
/// line to `log`).
pub fn run_suite_ticked(
    target: &mut Target,
    info: super::TargetInfo,
    cfg: &SuiteConfig,
    stop: &AtomicBool,
    log: &mut dyn FnMut(&str),
    tick: Option<super::Tick<'_>>,
) -> SsdiqResult {
    let capacity = target.capacity();
    let mut res = SsdiqResult {
        tool: format!("nowa ssdiq {}", env!("CARGO_PKG_VERSION")),
        target: info,
        config: cfg.clone(),
        plan: plan(cfg, capacity),
        phases: Vec::new(),
        summary: Summary {
            capacity,
            ..Summary::default()
        },
        interrupted: false,
        error: None,
    };
    let mut run = Run {
        target,
        cfg,
        stop,
        log,
        tick,
        res: &mut res,
        capacity,
        range: init_range(cfg, capacity),
        steady: 0.0,
    };
    for step in suite(cfg) {
        if stop.load(Relaxed) {
            break;
        }
        if let Err(e) = run.step(&step) {
            (run.log)(&format!("error: {e:#}"));
            run.res.error = Some(format!("{e:#}"));
            break;
        }
    }
    if let Err(e) = run.target.finish() {
        (run.log)(&format!(
            "warning: could not write the scratch label: {e:#}"
        ));
    }
    res.interrupted = stop.load(Relaxed)
        || res
            .phases
            .iter()
            .any(|p| p.jobs.iter().any(|j| j.interrupted));
    res.summary = summarize(&res);
    res
}
