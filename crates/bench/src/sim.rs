//! `nowa sim`: a workload on the FTL model, with the ssd-iq protocol (sequential fill of the
//! in-use pages, warm-up, measured phase), per-interval WAF, and parameter sweeps.

use nowa_flash::{Counters, Ftl, FtlConfig, Layout, PolicyKind};
use nowa_workload::{Op, TwoZone, Workload, WorkloadParams, WorkloadSpec};
use serde::Serialize;
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Flash(#[from] nowa_flash::FlashError),
    #[error(transparent)]
    Workload(#[from] nowa_workload::WorkloadError),
    #[error("{0}")]
    Config(String),
}

/// How host writes are spread over the device's streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum StreamAssign {
    /// Everything on stream 0 (a conventional SSD).
    Single,
    /// Two-zone only: hot-zone pages on stream 1, cold ones on stream 0 (an oracle placement,
    /// the best case of multi-stream / FDP).
    HotCold,
}

impl std::str::FromStr for StreamAssign {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "single" => Ok(StreamAssign::Single),
            "hot-cold" => Ok(StreamAssign::HotCold),
            _ => Err(format!(
                "unknown stream assignment '{s}' (expected single or hot-cold)"
            )),
        }
    }
}

/// One simulation run.
#[derive(Debug, Clone, Serialize)]
pub struct SimSpec {
    pub ftl: FtlConfig,
    pub workload: WorkloadSpec,
    /// Fraction of the logical space in use (written by preconditioning and the workload).
    pub fill: f64,
    /// Warm-up volume before measuring, in multiples of the logical capacity.
    pub warmup: f64,
    /// Measured volume, in multiples of the logical capacity.
    pub volume: f64,
    /// Length of one reporting interval, in multiples of the logical capacity.
    pub interval: f64,
    /// Sequentially write the in-use pages first (ssd-iq.md 3.1).
    pub precondition: bool,
    pub streams: StreamAssign,
    pub seed: u64,
}

impl Default for SimSpec {
    fn default() -> Self {
        SimSpec {
            ftl: FtlConfig::default(),
            workload: WorkloadSpec::Uniform,
            fill: 1.0,
            warmup: 2.0,
            volume: 2.0,
            interval: 0.1,
            precondition: true,
            streams: StreamAssign::Single,
            seed: 42,
        }
    }
}

/// One reporting interval of the measured phase.
#[derive(Debug, Clone, Serialize)]
pub struct Interval {
    pub index: u32,
    /// Host writes so far in the measured phase, in multiples of the logical capacity.
    pub drive_writes: f64,
    pub host_pages: u64,
    pub media_pages: u64,
    pub gc_pages: u64,
    pub erases: u64,
    /// WAF of this interval alone.
    pub waf: f64,
    /// WAF since the start of the measured phase.
    pub waf_cumulative: f64,
    /// Host page writes simulated per second of wall time in this interval.
    pub sim_writes_per_sec: f64,
}

/// The outcome of a run.
#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    pub seed: u64,
    pub workload: String,
    pub policy: String,
    pub layout: Layout,
    pub fill: f64,
    pub in_use_pages: u64,
    /// Effective alpha: physical pages not held by open/reserved units over in-use pages.
    pub alpha_eff: f64,
    /// Counters of the measured phase.
    pub measured: Counters,
    /// Counters since the device was created (preconditioning included).
    pub total: Counters,
    /// Measured-phase WAF (cumulative).
    pub waf: f64,
    /// WAF over the last quarter of the measured phase: the steady-state figure.
    pub waf_steady: f64,
    /// Mean valid ratio of GC victims in the measured phase (0 if none).
    pub victim_valid_ratio: f64,
    /// Victims of the measured phase by valid ratio, in 1% buckets (index 100 = fully valid).
    pub victim_histogram: Vec<u64>,
    pub erase_min: u32,
    pub erase_max: u32,
    pub erase_mean: f64,
    pub intervals: Vec<Interval>,
    pub elapsed_secs: f64,
    /// Measured-phase host page writes simulated per second.
    pub sim_writes_per_sec: f64,
    pub memory_bytes: u64,
}

/// Progress callback: (pages done, pages total) over warm-up + measured phase.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

fn drive(
    ftl: &mut Ftl,
    w: &mut dyn Workload,
    pages: u64,
    stream_of: &dyn Fn(u64) -> u16,
    single: bool,
    lbuf: &mut Vec<u64>,
    bbuf: &mut Vec<u32>,
) -> Result<(), SimError> {
    let mut done = 0u64;
    const BATCH: u64 = 4096;
    if w.is_write_only() && single {
        while done < pages {
            let n = (pages - done).min(BATCH) as usize;
            lbuf.resize(n, 0);
            w.fill_writes(lbuf);
            bbuf.clear();
            bbuf.extend(lbuf.iter().map(|&l| l as u32));
            ftl.write_batch(bbuf, 0)?;
            done += n as u64;
        }
        return Ok(());
    }
    while done < pages {
        match w.next_op() {
            Op::Write(l) => {
                ftl.write(l, stream_of(l))?;
                done += 1;
            }
            Op::Trim { start, len } => ftl.trim(start, len)?,
        }
    }
    Ok(())
}

/// Run one simulation.
pub fn run(spec: &SimSpec, progress: Option<Progress<'_>>) -> Result<SimResult, SimError> {
    if !(spec.warmup >= 0.0 && spec.warmup.is_finite()) {
        return Err(SimError::Config(format!(
            "warm-up volume must be >= 0, got {}",
            spec.warmup
        )));
    }
    if !(spec.volume > 0.0 && spec.volume.is_finite()) {
        return Err(SimError::Config(format!(
            "write volume must be > 0, got {}",
            spec.volume
        )));
    }
    if !(spec.interval > 0.0 && spec.interval.is_finite()) {
        return Err(SimError::Config(format!(
            "interval must be > 0, got {}",
            spec.interval
        )));
    }
    let mut ftl = Ftl::new(FtlConfig {
        seed: spec.seed,
        ..spec.ftl.clone()
    })?;
    let logical = ftl.logical_pages();
    let params = WorkloadParams::new(logical, spec.fill, spec.seed)?;
    let in_use = params.in_use_pages()?;
    let mut w = spec.workload.build(&params)?;

    let classifier: Option<TwoZone> = match (spec.streams, &spec.workload) {
        (StreamAssign::Single, _) => None,
        (
            StreamAssign::HotCold,
            WorkloadSpec::TwoZone {
                write_pct,
                space_pct,
            },
        ) => {
            if spec.ftl.streams < 2 {
                return Err(SimError::Config(
                    "hot-cold stream assignment needs --streams >= 2".into(),
                ));
            }
            Some(TwoZone::new(in_use, *write_pct, *space_pct, spec.seed)?)
        }
        (StreamAssign::HotCold, _) => {
            return Err(SimError::Config(
                "hot-cold stream assignment needs a two-zone workload".into(),
            ))
        }
    };
    let stream_of = |l: u64| -> u16 { classifier.as_ref().map_or(0, |c| c.is_hot(l) as u16) };

    let t0 = Instant::now();
    if spec.precondition {
        ftl.precondition_sequential(in_use)?;
    }
    let warm = (spec.warmup * logical as f64).round() as u64;
    let measure = ((spec.volume * logical as f64).round() as u64).max(1);
    let step = ((spec.interval * logical as f64).round() as u64).clamp(1, measure);
    let total = warm + measure;
    let (mut lbuf, mut bbuf) = (Vec::new(), Vec::new());
    let single = classifier.is_none();

    let mut done = 0u64;
    while done < warm && !crate::interrupt::requested() {
        let n = step.min(warm - done);
        drive(
            &mut ftl, &mut *w, n, &stream_of, single, &mut lbuf, &mut bbuf,
        )?;
        done += n;
        if let Some(p) = progress {
            p(done, total);
        }
    }
    let start = ftl.counters();
    let hist0 = ftl.victim_histogram().clone();
    let tm = Instant::now();
    let mut intervals = Vec::new();
    let mut prev = start;
    let mut measured = 0u64;
    while measured < measure && (measured == 0 || !crate::interrupt::requested()) {
        let n = step.min(measure - measured);
        let ti = Instant::now();
        drive(
            &mut ftl, &mut *w, n, &stream_of, single, &mut lbuf, &mut bbuf,
        )?;
        let secs = ti.elapsed().as_secs_f64();
        measured += n;
        let now = ftl.counters();
        let d = now.since(&prev);
        let cum = now.since(&start);
        intervals.push(Interval {
            index: intervals.len() as u32,
            drive_writes: measured as f64 / logical as f64,
            host_pages: d.host_pages,
            media_pages: d.media_pages,
            gc_pages: d.gc_pages,
            erases: d.erases,
            waf: d.waf(),
            waf_cumulative: cum.waf(),
            sim_writes_per_sec: n as f64 / secs.max(1e-9),
        });
        prev = now;
        if let Some(p) = progress {
            p(warm + measured, total);
        }
    }
    let msecs = tm.elapsed().as_secs_f64();
    let end = ftl.counters();
    let m = end.since(&start);
    // Steady state: the last quarter of the measured phase (at least one interval).
    let tail = intervals.len().div_ceil(4).max(1);
    let (th, tmed) = intervals[intervals.len() - tail..]
        .iter()
        .fold((0u64, 0u64), |(h, md), i| {
            (h + i.host_pages, md + i.media_pages)
        });
    let hist = ftl.victim_histogram();
    let vh = nowa_flash::VictimHistogram {
        buckets: hist
            .buckets
            .iter()
            .zip(&hist0.buckets)
            .map(|(a, b)| a - b)
            .collect(),
    };
    let erases = ftl.erase_counts();
    let layout = ftl.layout().clone();
    Ok(SimResult {
        seed: spec.seed,
        workload: w.name(),
        policy: spec.ftl.policy.to_string(),
        alpha_eff: layout.alpha_eff(in_use, spec.ftl.min_free_units),
        layout,
        fill: spec.fill,
        in_use_pages: in_use,
        measured: m,
        total: end,
        waf: m.waf(),
        waf_steady: if th == 0 {
            1.0
        } else {
            tmed as f64 / th as f64
        },
        victim_valid_ratio: vh.mean_ratio(),
        victim_histogram: vh.buckets,
        erase_min: erases.iter().copied().min().unwrap_or(0),
        erase_max: erases.iter().copied().max().unwrap_or(0),
        erase_mean: erases.iter().map(|&e| e as f64).sum::<f64>() / erases.len().max(1) as f64,
        intervals,
        elapsed_secs: t0.elapsed().as_secs_f64(),
        sim_writes_per_sec: measured as f64 / msecs.max(1e-9),
        memory_bytes: ftl.memory_bytes(),
    })
}

/// Uniform-traffic WAF model (Desnoyers 2014 / Van Houdt 2013): A = 1/(1-x), x = e^(-alpha(1-x)).
pub fn waf_model_lambert(alpha: f64) -> f64 {
    if alpha <= 1.0 {
        return f64::INFINITY;
    }
    let mut x: f64 = 0.5;
    for _ in 0..100_000 {
        let nx = (-alpha * (1.0 - x)).exp();
        if (nx - x).abs() < 1e-15 {
            break;
        }
        x = nx;
    }
    1.0 / (1.0 - x)
}

/// Greedy with `np` pages per unit (Desnoyers 2014 Eq. 12): A(k alpha)/k, k = 1 + 1/(2 np).
pub fn waf_model_greedy(alpha: f64, np: u32) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * np as f64);
    waf_model_lambert(k * alpha) / k
}

/// Human-readable summary of one run.
pub fn summary(r: &SimResult) -> String {
    use std::fmt::Write;
    let l = &r.layout;
    let mut s = String::new();
    let gib = |p: u64| p as f64 * 4096.0 / (1u64 << 30) as f64;
    let _ = writeln!(s, "nowa sim — seed {}", r.seed);
    let _ = writeln!(
        s,
        "device    {:.2} GiB logical ({} pages), {:.2} GiB physical, {} units of {} pages ({} MiB)",
        gib(l.logical_pages),
        l.logical_pages,
        gib(l.physical_pages),
        l.units,
        l.unit_pages,
        (l.unit_pages as u64 * 4096) >> 20
    );
    let _ = writeln!(
        s,
        "OP        alpha = physical/logical = {:.4}; OP = spare/logical {:.2}%, spare/physical {:.2}%",
        l.alpha,
        100.0 * l.op_spare_over_logical,
        100.0 * l.op_spare_over_physical
    );
    let _ = writeln!(
        s,
        "in use    fill {:.3} = {} pages; effective alpha (minus open/reserved units) {:.4}",
        r.fill, r.in_use_pages, r.alpha_eff
    );
    let _ = writeln!(
        s,
        "workload  {}   policy {} (GC frontier: {:?})",
        r.workload, r.policy, l.gc_frontier
    );
    let _ = writeln!(s);
    let m = &r.measured;
    let _ = writeln!(
        s,
        "WAF       {:.3} (measured phase)   {:.3} (steady state, last quarter)",
        r.waf, r.waf_steady
    );
    if r.workload.starts_with("uniform") && r.policy == "greedy" {
        let _ = writeln!(
            s,
            "model     {:.3} (Desnoyers greedy, uniform, effective alpha)",
            waf_model_greedy(r.alpha_eff, l.unit_pages)
        );
    }
    let _ = writeln!(
        s,
        "pages     host {}   media {}   GC copies {}   absorbed by buffer {}",
        m.host_pages, m.media_pages, m.gc_pages, m.buffer_absorbed
    );
    let _ = writeln!(
        s,
        "GC        {} rounds, mean victim valid ratio {:.3}; erases per unit min {} / mean {:.1} / max {}",
        m.gc_rounds, r.victim_valid_ratio, r.erase_min, r.erase_mean, r.erase_max
    );
    let _ = writeln!(
        s,
        "speed     {:.2} M host writes/s simulated; {:.1} s total; model memory {:.1} MiB",
        r.sim_writes_per_sec / 1e6,
        r.elapsed_secs,
        r.memory_bytes as f64 / (1u64 << 20) as f64
    );
    s
}

/// Write the per-interval series as CSV.
pub fn write_intervals_csv(r: &SimResult, path: &std::path::Path) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    for i in &r.intervals {
        w.serialize(i)?;
    }
    w.flush()?;
    Ok(())
}

/// A policy list as written on the command line: "greedy,2r-fifo".
pub fn parse_policies(s: &str) -> Result<Vec<PolicyKind>, String> {
    s.split(',')
        .map(|p| p.trim().parse::<PolicyKind>().map_err(|e| e.to_string()))
        .collect()
}

pub mod sweep;
