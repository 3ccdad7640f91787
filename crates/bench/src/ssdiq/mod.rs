//! `nowa ssdiq`: the SSD-iq benchmark (Haas et al., ssd-iq.md sections 3 to 6) on a block
//! device, a regular file or a simulated SSD.
//!
//! The suite follows the methodology of section 3.1 as explicit steps:
//! 1. **reset**: TRIM/discard of the whole range (NVMe sanitize only on explicit request);
//! 2. **sequential initialization** up to the fill level, which is also the sequential-write
//!    bandwidth measurement;
//! 3. sequential read bandwidth and random read IOPS on the initialized range;
//! 4. for every write workload (uniform, two-zone 80/20, zipf 0.8 by default): reset and
//!    sequential init again (except for the first, which reuses step 2), a warm-up of
//!    `warmup` x capacity random writes, then the measured phase of `volume` x capacity;
//!    per-interval throughput shows whether steady state was reached;
//! 5. after the first write workload (at its steady state): latency under load, a queue-depth-1
//!    probe for reads then for writes while background random writes run at `bg_load` (25%)
//!    of the measured random-write bandwidth (section 6.1), and the latency-vs-write-rate
//!    sweep of Figure 8.
//!
//! Derived metrics (Table 3): WAF measured from device counters (OCP log, or the FTL model of a
//! simulated SSD) over the measured phase, implied WAF = sequential write bandwidth / random
//! write bandwidth (section 4.1), and estimated OP = 1 / (2 x WAF) (section 4.6) from the
//! uniform workload.

pub mod engine;
pub mod job;
pub mod report;
pub mod simssd;
pub mod target;

pub use engine::Engine;
pub use job::{IntervalPoint, JobKind, JobResult, JobSpec, LatStats};
pub use simssd::{PerfModel, SimSsd};
pub use target::{
    authorize, check_safety, MediaCounters, OpenOpts, Safety, SimSpec, Target, TargetInfo,
};

use nowa_workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Which parts of the suite to run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Steps {
    pub seq_read: bool,
    pub rand_read: bool,
    pub rand_write: bool,
    pub latency: bool,
    pub sweep: bool,
}

impl Steps {
    pub const ALL: Steps = Steps {
        seq_read: true,
        rand_read: true,
        rand_write: true,
        latency: true,
        sweep: true,
    };
    pub const VALID: &'static str =
        "all | comma-separated list of seq-read, rand-read, rand-write, latency, sweep";

    /// Parses "all" or a comma-separated list.
    pub fn parse(s: &str) -> Result<Steps, String> {
        if s == "all" {
            return Ok(Steps::ALL);
        }
        let mut st = Steps {
            seq_read: false,
            rand_read: false,
            rand_write: false,
            latency: false,
            sweep: false,
        };
        for p in s.split(',').map(str::trim) {
            match p {
                "seq-read" => st.seq_read = true,
                "rand-read" => st.rand_read = true,
                "rand-write" => st.rand_write = true,
                "latency" => st.latency = true,
                "sweep" => st.sweep = true,
                _ => return Err(format!("unknown step '{p}' (expected {})", Steps::VALID)),
            }
        }
        Ok(st)
    }
}

/// Suite parameters. Volumes are multiples of the target's capacity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SuiteConfig {
    /// Block size of random I/O (bytes).
    pub bs: u32,
    /// Block size of sequential I/O (bytes).
    pub seq_bs: u32,
    /// I/Os in flight per thread.
    pub qd: u32,
    pub threads: u32,
    /// Fraction of the capacity initialized and then used by the workloads.
    pub fill: f64,
    /// Random writes before the measured phase, x capacity.
    pub warmup: f64,
    /// Measured random writes, x capacity.
    pub volume: f64,
    /// Seconds for sequential and random read measurements.
    pub read_secs: f64,
    /// Seconds of each latency probe (read probe, then write probe).
    pub lat_secs: f64,
    /// Background write load for the latency probes, fraction of the measured random-write
    /// bandwidth (ssd-iq: 25%).
    pub bg_load: f64,
    /// Background loads of the latency sweep (Figure 8), fractions of the random-write bandwidth.
    pub sweep: Vec<f64>,
    /// Seconds of each probe at each sweep point.
    pub sweep_secs: f64,
    pub workloads: Vec<WorkloadSpec>,
    pub steps: Steps,
    /// Per-interval sampling period, seconds.
    pub interval: f64,
    /// Upper bound on the duration of each write phase (seconds), for big devices.
    pub max_phase_secs: Option<f64>,
    /// Cap on the throughput of every write phase, MB/s (the engine's rate limiter).
    pub rate_mb_s: Option<f64>,
    pub seed: u64,
    /// NVMe sanitize (block erase) instead of a discard for the first reset.
    pub sanitize: bool,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        SuiteConfig {
            bs: 4096,
            seq_bs: 128 * 1024,
            qd: 32,
            threads: 1,
            fill: 1.0,
            warmup: 1.0,
            volume: 2.0,
            read_secs: 10.0,
            lat_secs: 10.0,
            bg_load: 0.25,
            sweep: vec![0.1, 0.25, 0.5, 0.75, 0.9],
            sweep_secs: 5.0,
            workloads: vec![
                WorkloadSpec::Uniform,
                WorkloadSpec::TwoZone {
                    write_pct: 80.0,
                    space_pct: 20.0,
                },
                WorkloadSpec::Zipf { theta: 0.8 },
            ],
            steps: Steps::ALL,
            interval: 1.0,
            max_phase_secs: None,
            rate_mb_s: None,
            seed: 42,
            sanitize: false,
        }
    }
}

impl SuiteConfig {
    /// Checks the parameters; each error is one line.
    pub fn validate(&self) -> Result<(), String> {
        let pos = |v: f64| v.is_finite() && v > 0.0;
        if self.bs == 0 || self.bs % 4096 != 0 || self.seq_bs == 0 || self.seq_bs % 4096 != 0 {
            return Err(format!(
                "block sizes must be positive multiples of 4096 bytes, got --bs {} --seq-bs {}",
                self.bs, self.seq_bs
            ));
        }
        if self.bs > 64 << 20 || self.seq_bs > 64 << 20 {
            return Err("block sizes above 64 MiB are not supported".into());
        }
        if self.qd == 0 || self.qd > 4096 {
            return Err(format!("--qd must be in 1..=4096, got {}", self.qd));
        }
        if self.threads == 0 || self.threads > 256 {
            return Err(format!(
                "--threads must be in 1..=256, got {}",
                self.threads
            ));
        }
        if !(self.fill > 0.0 && self.fill <= 1.0) {
            return Err(format!("--fill must be in (0, 1], got {}", self.fill));
        }
        if !(self.warmup.is_finite() && self.warmup >= 0.0 && pos(self.volume)) {
            return Err(format!(
                "--warmup must be >= 0 and --volume > 0 (multiples of the capacity), got {} and {}",
                self.warmup, self.volume
            ));
        }
        if !pos(self.read_secs)
            || !pos(self.lat_secs)
            || !pos(self.sweep_secs)
            || !pos(self.interval)
        {
            return Err("durations and --interval must be > 0 seconds".into());
        }
        if !(self.bg_load > 0.0 && self.bg_load <= 1.0)
            || self.sweep.iter().any(|&f| !(f > 0.0 && f <= 1.0))
        {
            return Err("--bg-load and --sweep fractions must be in (0, 1]".into());
        }
        if self.max_phase_secs.is_some_and(|s| !pos(s)) || self.rate_mb_s.is_some_and(|r| !pos(r)) {
            return Err("--max-time and --rate must be > 0".into());
        }
        if self.workloads.is_empty()
            && (self.steps.rand_write || self.steps.latency || self.steps.sweep)
        {
            return Err("--workloads is empty but random-write steps are requested".into());
        }
        for w in &self.workloads {
            w.validate().map_err(|e| e.to_string())?;
            if matches!(w, WorkloadSpec::Zns { .. }) {
                return Err(format!(
                    "workload {w} issues trims; ssdiq supports write-only workloads"
                ));
            }
        }
        Ok(())
    }
}

/// One step of the plan, listed before anything runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PlanStep {
    pub name: String,
    /// Destroys data on the target.
    pub destructive: bool,
    pub what: String,
}

/// The steps the suite will perform on a target of `capacity` bytes.
pub fn plan(cfg: &SuiteConfig, capacity: u64) -> Vec<PlanStep> {
    let range = fmt_bytes(init_range(cfg, capacity));
    let cap = fmt_bytes(capacity);
    let mut p = Vec::new();
    let step = |name: &str, destructive: bool, what: String| PlanStep {
        name: name.into(),
        destructive,
        what,
    };
    p.push(step(
        "reset",
        true,
        if cfg.sanitize {
            format!("NVMe sanitize (block erase) of the whole device ({cap})")
        } else {
            format!("discard (TRIM) of the whole range, {cap}")
        },
    ));
    p.push(step(
        "seq-write",
        true,
        format!(
            "sequential initialization: write {range} with {} blocks (sequential write bandwidth)",
            fmt_bytes(cfg.seq_bs as u64)
        ),
    ));
    if cfg.steps.seq_read {
        p.push(step(
            "seq-read",
            false,
            format!("sequential reads of {range}, at most {} s", cfg.read_secs),
        ));
    }
    if cfg.steps.rand_read {
        p.push(step(
            "rand-read",
            false,
            format!(
                "{} random reads at QD {} x {} threads for {} s",
                fmt_bytes(cfg.bs as u64),
                cfg.qd,
                cfg.threads,
                cfg.read_secs
            ),
        ));
    }
    let writes = cfg.steps.rand_write || cfg.steps.latency || cfg.steps.sweep;
    for (i, w) in cfg.workloads.iter().enumerate() {
        if !writes || (i > 0 && !cfg.steps.rand_write) {
            break;
        }
        if i > 0 {
            p.push(step(
                "reset",
                true,
                format!("discard of the whole range before {w}"),
            ));
            p.push(step(
                "seq-write",
                true,
                format!("sequential initialization of {range} before {w}"),
            ));
        }
        p.push(step(
            "rand-write",
            true,
            format!(
                "{w}: {} random writes, {}x capacity warm-up then {}x capacity measured",
                fmt_bytes(cfg.bs as u64),
                cfg.warmup,
                cfg.volume
            ),
        ));
        if i == 0 && cfg.steps.latency {
            p.push(step("latency", true, format!("QD1 read and write probes, {} s each, under {w} writes at {:.0}% of the random-write bandwidth", cfg.lat_secs, cfg.bg_load * 100.0)));
        }
        if i == 0 && cfg.steps.sweep {
            let f: Vec<String> = cfg
                .sweep
                .iter()
                .map(|f| format!("{:.0}%", f * 100.0))
                .collect();
            p.push(step("sweep", true, format!("latency vs write rate: probes of {} s under writes at {} of the random-write bandwidth", cfg.sweep_secs, f.join(", "))));
        }
    }
    p
}

fn init_range(cfg: &SuiteConfig, capacity: u64) -> u64 {
    let bs = cfg.seq_bs.max(cfg.bs) as u64;
    let r = (capacity as f64 * cfg.fill) as u64 / bs * bs;
    r.max(bs.min(capacity / bs * bs))
}

/// A step that ran.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Phase {
    /// "reset", "seq-write", "seq-read", "rand-read", "warm-up", "rand-write", "latency-read",
    /// "latency-write", "sweep".
    pub step: String,
    pub workload: Option<String>,
    /// Background load (fraction of random-write bandwidth) for latency steps.
    pub load: Option<f64>,
    /// Jobs: the measured job first; for latency steps [background, probe].
    pub jobs: Vec<JobResult>,
    /// WAF from device counters over this phase.
    pub waf_measured: Option<f64>,
    pub note: Option<String>,
}

/// Random-write result of one workload (Table 2 / 3 rows).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadRow {
    pub workload: String,
    pub kiops: f64,
    pub mb_s: f64,
    /// Sequential write bandwidth / this bandwidth.
    pub waf_implied: Option<f64>,
    /// From device counters (OCP / FTL model), measured phase only.
    pub waf_measured: Option<f64>,
}

/// One point of the latency-vs-write-rate sweep.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepPoint {
    /// Background load as a fraction of the random-write bandwidth.
    pub load: f64,
    pub write_mb_s_target: f64,
    pub write_mb_s: f64,
    pub read: LatStats,
    pub write: LatStats,
}

/// OP estimate of section 4.6.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OpEstimate {
    /// "measured" or "implied".
    pub from: String,
    pub waf: f64,
    /// 1 / (2 x WAF), spare/logical.
    pub op: f64,
}

/// The Table 2 / 3 numbers.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub capacity: u64,
    pub seq_write_mb_s: Option<f64>,
    pub seq_read_mb_s: Option<f64>,
    pub rand_read_kiops: Option<f64>,
    pub rand_write: Vec<WorkloadRow>,
    /// Background write rate of the latency probes, MB/s (target, achieved).
    pub bg_mb_s: Option<(f64, f64)>,
    pub read_lat: Option<LatStats>,
    pub write_lat: Option<LatStats>,
    pub est_op: Option<OpEstimate>,
    pub sweep: Vec<SweepPoint>,
}

/// Everything `nowa ssdiq` measured, as written by `--json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SsdiqResult {
    pub tool: String,
    pub target: TargetInfo,
    pub config: SuiteConfig,
    pub plan: Vec<PlanStep>,
    pub phases: Vec<Phase>,
    pub summary: Summary,
    /// Stopped by Ctrl-C (or an error) before the plan was complete.
    pub interrupted: bool,
    pub error: Option<String>,
}

/// Estimated OP = 1 / (2 x WAF) (ssd-iq.md 4.6, after Desnoyers): a lower bound of the real
/// OP; good at low OP, increasingly pessimistic above ~15%.
pub fn estimate_op(waf: f64) -> f64 {
    1.0 / (2.0 * waf)
}

/// Runs the suite. `log` receives one line per step. Returns the result even when interrupted
/// (`stop` set by Ctrl-C) or when a step fails (`error` set), so what was done is reported.
pub fn run_suite(
    target: &mut Target,
    info: TargetInfo,
    cfg: &SuiteConfig,
    stop: &AtomicBool,
    log: &mut dyn FnMut(&str),
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
    if let Err(e) = suite_steps(target, cfg, stop, log, &mut res) {
        log(&format!("error: {e:#}"));
        res.error = Some(format!("{e:#}"));
    }
    res.interrupted = stop.load(Relaxed)
        || res
            .phases
            .iter()
            .any(|p| p.jobs.iter().any(|j| j.interrupted));
    res.summary = summarize(&res);
    res
}

fn suite_steps(
    target: &mut Target,
    cfg: &SuiteConfig,
    stop: &AtomicBool,
    log: &mut dyn FnMut(&str),
    res: &mut SsdiqResult,
) -> anyhow::Result<()> {
    let capacity = target.capacity();
    let range = init_range(cfg, capacity);
    let rand_range = range / cfg.bs as u64 * cfg.bs as u64;
    let job = |name: &str, kind: JobKind, bs: u32, seed: u64| JobSpec {
        name: name.into(),
        kind,
        bs,
        qd: cfg.qd,
        threads: cfg.threads,
        rate: None,
        range: if bs == cfg.bs { rand_range } else { range },
        max_bytes: None,
        max_secs: None,
        interval: cfg.interval,
        seed,
    };
    let write_cap = |mut j: JobSpec| {
        j.rate = cfg.rate_mb_s.map(|r| r * 1e6);
        j.max_secs = cfg.max_phase_secs;
        j
    };
    let done = |stop: &AtomicBool| stop.load(Relaxed);

    // 1. Reset.
    let reset = |target: &mut Target,
                 sanitize: bool,
                 log: &mut dyn FnMut(&str),
                 res: &mut SsdiqResult,
                 wl: Option<String>|
     -> anyhow::Result<()> {
        log(&format!(
            "reset: {} the whole range",
            if sanitize { "sanitize" } else { "discard" }
        ));
        let note = if sanitize {
            let p = std::path::PathBuf::from(&res.target.path);
            target.sanitize(&p)?;
            None
        } else {
            target.discard_all()?
        };
        if let Some(n) = &note {
            log(&format!("  note: {n}"));
        }
        res.phases.push(Phase {
            step: "reset".into(),
            workload: wl,
            load: None,
            jobs: vec![],
            waf_measured: None,
            note,
        });
        Ok(())
    };
    let seq_init = |target: &mut Target,
                    log: &mut dyn FnMut(&str),
                    res: &mut SsdiqResult,
                    wl: Option<String>|
     -> anyhow::Result<()> {
        log(&format!(
            "seq-write: sequential initialization of {}",
            fmt_bytes(range)
        ));
        // The initialization must cover the whole range: --max-time does not apply here.
        let mut j = job("seq-write", JobKind::SeqWrite, cfg.seq_bs, cfg.seed);
        j.rate = cfg.rate_mb_s.map(|r| r * 1e6);
        j.max_bytes = Some(range);
        let before = target.counters();
        let r = target.run(&[j], stop)?;
        let waf = waf_between(before, target.counters());
        log(&format!("  {:.1} MB/s", r[0].mb_s));
        res.phases.push(Phase {
            step: "seq-write".into(),
            workload: wl,
            load: None,
            jobs: r,
            waf_measured: waf,
            note: None,
        });
        Ok(())
    };
    reset(target, cfg.sanitize, log, res, None)?;
    if done(stop) {
        return Ok(());
    }
    seq_init(target, log, res, None)?;
    if done(stop) {
        return Ok(());
    }

    // 2. Reads on the initialized range.
    if cfg.steps.seq_read {
        log(&format!("seq-read: up to {} s", cfg.read_secs));
        let mut j = job("seq-read", JobKind::SeqRead, cfg.seq_bs, cfg.seed);
        j.max_bytes = Some(range);
        j.max_secs = Some(cfg.read_secs);
        let r = target.run(&[j], stop)?;
        log(&format!("  {:.1} MB/s", r[0].mb_s));
        res.phases.push(Phase {
            step: "seq-read".into(),
            workload: None,
            load: None,
            jobs: r,
            waf_measured: None,
            note: None,
        });
        if done(stop) {
            return Ok(());
        }
    }
    if cfg.steps.rand_read {
        log(&format!("rand-read: {} s", cfg.read_secs));
        let mut j = job("rand-read", JobKind::RandRead, cfg.bs, cfg.seed);
        j.max_secs = Some(cfg.read_secs);
        let r = target.run(&[j], stop)?;
        log(&format!("  {:.1} k IOPS", r[0].iops / 1e3));
        res.phases.push(Phase {
            step: "rand-read".into(),
            workload: None,
            load: None,
            jobs: r,
            waf_measured: None,
            note: None,
        });
        if done(stop) {
            return Ok(());
        }
    }

    // 3. Random-write workloads, each from a reset + sequential init.
    let writes = cfg.steps.rand_write || cfg.steps.latency || cfg.steps.sweep;
    for (i, w) in cfg.workloads.iter().enumerate() {
        if !writes || (i > 0 && !cfg.steps.rand_write) {
            break;
        }
        let wname = w.to_string();
        if i > 0 {
            reset(target, false, log, res, Some(wname.clone()))?;
            if done(stop) {
                return Ok(());
            }
            seq_init(target, log, res, Some(wname.clone()))?;
            if done(stop) {
                return Ok(());
            }
        }
        let seed = cfg.seed.wrapping_add(i as u64 + 1);
        if cfg.warmup > 0.0 {
            log(&format!("warm-up {wname}: {}x capacity", cfg.warmup));
            let mut j = write_cap(job("warm-up", JobKind::RandWrite(w.clone()), cfg.bs, seed));
            j.max_bytes = Some((cfg.warmup * capacity as f64) as u64);
            let before = target.counters();
            let r = target.run(&[j], stop)?;
            let waf = waf_between(before, target.counters());
            log(&format!(
                "  {:.1} k IOPS{}",
                r[0].iops / 1e3,
                waf.map(|w| format!(", WAF {w:.2}")).unwrap_or_default()
            ));
            res.phases.push(Phase {
                step: "warm-up".into(),
                workload: Some(wname.clone()),
                load: None,
                jobs: r,
                waf_measured: waf,
                note: None,
            });
            if done(stop) {
                return Ok(());
            }
        }
        log(&format!(
            "rand-write {wname}: {}x capacity measured",
            cfg.volume
        ));
        let mut j = write_cap(job(
            "rand-write",
            JobKind::RandWrite(w.clone()),
            cfg.bs,
            seed.wrapping_add(1000),
        ));
        j.max_bytes = Some((cfg.volume * capacity as f64) as u64);
        let before = target.counters();
        let r = target.run(&[j], stop)?;
        let waf = waf_between(before, target.counters());
        let steady = r[0].mb_s;
        log(&format!(
            "  {:.1} k IOPS ({:.1} MB/s){}",
            r[0].iops / 1e3,
            steady,
            waf.map(|w| format!(", measured WAF {w:.2}"))
                .unwrap_or_default()
        ));
        res.phases.push(Phase {
            step: "rand-write".into(),
            workload: Some(wname.clone()),
            load: None,
            jobs: r,
            waf_measured: waf,
            note: None,
        });
        if done(stop) {
            return Ok(());
        }

        // 4. Latency under load, at this workload's steady state.
        if i == 0 && (cfg.steps.latency || cfg.steps.sweep) {
            let mut loads: Vec<(f64, f64, &str)> = Vec::new();
            if cfg.steps.latency {
                loads.push((cfg.bg_load, cfg.lat_secs, "latency"));
            }
            if cfg.steps.sweep {
                loads.extend(cfg.sweep.iter().map(|&f| (f, cfg.sweep_secs, "sweep")));
            }
            for (load, secs, step) in loads {
                let rate = load * steady * 1e6;
                for (probe_kind, pname) in [
                    (JobKind::RandRead, "read"),
                    (JobKind::RandWrite(WorkloadSpec::Uniform), "write"),
                ] {
                    log(&format!("{step}: QD1 {pname} probe for {secs} s under {wname} writes at {:.1} MB/s ({:.0}%)", rate / 1e6, load * 100.0));
                    let mut bg = job(
                        "background",
                        JobKind::RandWrite(w.clone()),
                        cfg.bs,
                        seed.wrapping_add(2000),
                    );
                    bg.rate = Some(rate);
                    let mut probe = job(
                        &format!("probe-{pname}"),
                        probe_kind,
                        cfg.bs,
                        seed.wrapping_add(3000),
                    );
                    probe.qd = 1;
                    probe.threads = 1;
                    probe.max_secs = Some(secs);
                    let r = target.run(&[bg, probe], stop)?;
                    log(&format!(
                        "  {pname} latency avg {:.1} us, p99.9 {:.1} us; background {:.1} MB/s",
                        r[1].lat.avg_us, r[1].lat.p999_us, r[0].mb_s
                    ));
                    res.phases.push(Phase {
                        step: format!("{step}-{pname}"),
                        workload: Some(wname.clone()),
                        load: Some(load),
                        jobs: r,
                        waf_measured: None,
                        note: None,
                    });
                    if done(stop) {
                        return Ok(());
                    }
                }
            }
        }
    }
    Ok(())
}

fn waf_between(before: Option<MediaCounters>, after: Option<MediaCounters>) -> Option<f64> {
    after?.waf_since(&before?)
}

/// Computes the Table 2 / 3 numbers from the phases.
pub fn summarize(res: &SsdiqResult) -> Summary {
    let mut s = Summary {
        capacity: res.target.capacity,
        ..Summary::default()
    };
    let first = |step: &str| {
        res.phases
            .iter()
            .find(|p| p.step == step && !p.jobs.is_empty())
    };
    s.seq_write_mb_s = first("seq-write").map(|p| p.jobs[0].mb_s);
    s.seq_read_mb_s = first("seq-read").map(|p| p.jobs[0].mb_s);
    s.rand_read_kiops = first("rand-read").map(|p| p.jobs[0].iops / 1e3);
    for p in res
        .phases
        .iter()
        .filter(|p| p.step == "rand-write" && !p.jobs.is_empty())
    {
        let j = &p.jobs[0];
        s.rand_write.push(WorkloadRow {
            workload: p.workload.clone().unwrap_or_default(),
            kiops: j.iops / 1e3,
            mb_s: j.mb_s,
            waf_implied: s
                .seq_write_mb_s
                .filter(|_| j.mb_s > 0.0)
                .map(|sw| sw / j.mb_s),
            waf_measured: p.waf_measured,
        });
    }
    let lat = |step: &str| {
        res.phases
            .iter()
            .find(|p| p.step == step && p.jobs.len() == 2)
    };
    if let Some(p) = lat("latency-read") {
        s.read_lat = Some(p.jobs[1].lat);
        s.bg_mb_s = Some((p.jobs[0].rate_mb_s.unwrap_or(0.0), p.jobs[0].mb_s));
    }
    if let Some(p) = lat("latency-write") {
        s.write_lat = Some(p.jobs[1].lat);
    }
    // Sweep points: pair read and write probes by load.
    let mut loads: Vec<f64> = res
        .phases
        .iter()
        .filter(|p| p.step.starts_with("sweep-"))
        .filter_map(|p| p.load)
        .collect();
    loads.dedup();
    for load in loads {
        let get = |step: &str| {
            res.phases
                .iter()
                .find(|p| p.step == step && p.load == Some(load) && p.jobs.len() == 2)
        };
        if let (Some(r), Some(w)) = (get("sweep-read"), get("sweep-write")) {
            s.sweep.push(SweepPoint {
                load,
                write_mb_s_target: r.jobs[0].rate_mb_s.unwrap_or(0.0),
                write_mb_s: (r.jobs[0].mb_s + w.jobs[0].mb_s) / 2.0,
                read: r.jobs[1].lat,
                write: w.jobs[1].lat,
            });
        }
    }
    // OP from the uniform workload (or the first one if uniform was not run).
    if let Some(row) = s.rand_write.iter().find(|r| r.workload == "uniform") {
        s.est_op = match (row.waf_measured, row.waf_implied) {
            (Some(w), _) => Some(OpEstimate {
                from: "measured".into(),
                waf: w,
                op: estimate_op(w),
            }),
            (None, Some(w)) => Some(OpEstimate {
                from: "implied".into(),
                waf: w,
                op: estimate_op(w),
            }),
            _ => None,
        };
    }
    s
}

/// Ctrl-C: the stop flag and handler every driver shares (see [`crate::interrupt`]).
pub use crate::interrupt::{install_sigint_handler, STOP};

/// "64 MiB", "1.5 GiB", "512 KiB", "4096 B".
pub fn fmt_bytes(b: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < U.len() {
        v /= 1024.0;
        i += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", U[i])
    } else {
        format!("{v:.2} {}", U[i]).replace(".00 ", " ")
    }
}

/// Parses a size: a number with an optional suffix k/K/KiB, M/MiB, G/GiB, T/TiB (binary) or
/// KB/MB/GB/TB (decimal), or B. "4k" = 4096, "1GB" = 10^9.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("bad size '{s}' (e.g. 4k, 64MiB, 1G)"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024f64.powi(2),
        "g" | "gib" => 1024f64.powi(3),
        "t" | "tib" => 1024f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => {
            return Err(format!(
                "bad size unit in '{s}' (use k, M, G, T, KiB.., KB..)"
            ))
        }
    };
    let v = n * mult;
    if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 {
        return Err(format!("size out of range: '{s}'"));
    }
    Ok(v.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("512"), Ok(512));
        assert!(parse_size("12x").is_err());
        assert!(parse_size("").is_err());
        assert_eq!(fmt_bytes(64 << 20), "64 MiB");
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(1536), "1.50 KiB");
    }

    #[test]
    fn steps_and_validation() {
        assert_eq!(Steps::parse("all"), Ok(Steps::ALL));
        let s = Steps::parse("seq-read,latency").unwrap();
        assert!(s.seq_read && s.latency && !s.rand_read);
        assert!(Steps::parse("bogus").is_err());
        let mut c = SuiteConfig::default();
        assert!(c.validate().is_ok());
        c.bs = 1000;
        assert!(c.validate().is_err());
        let c = SuiteConfig {
            fill: 0.0,
            ..SuiteConfig::default()
        };
        assert!(c.validate().is_err());
        let c = SuiteConfig {
            sweep: vec![1.5],
            ..SuiteConfig::default()
        };
        assert!(c.validate().is_err());
    }

    #[test]
    fn plan_lists_destructive_steps_first() {
        let p = plan(&SuiteConfig::default(), 1 << 30);
        assert_eq!(p[0].name, "reset");
        assert!(p[0].destructive && p[1].destructive);
        assert!(p.iter().any(|s| s.name == "sweep"));
        assert_eq!(p.iter().filter(|s| s.name == "rand-write").count(), 3);
        assert!((estimate_op(5.0) - 0.1).abs() < 1e-12);
    }
}
