//! `nowa sim`: a workload on the FTL model, with the ssd-iq protocol (sequential fill of the
//! in-use pages, warm-up, measured phase), per-interval WAF, FAR, per-class statistics, and
//! parameter sweeps.

use nowa_flash::{ClassRow, Counters, Far, Ftl, FtlConfig, Layout, PolicyKind, NEVER};
use nowa_units::cpu::thread_cpu_secs;
use nowa_workload::{Op, TwoZone, Workload, WorkloadParams, WorkloadSpec};
use serde::Serialize;
use std::time::Instant;

/// Why a simulation cannot run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The FTL model refused.
    #[error(transparent)]
    Flash(#[from] nowa_flash::FlashError),
    /// The workload refused.
    #[error(transparent)]
    Workload(#[from] nowa_workload::WorkloadError),
    /// A run parameter out of range.
    #[error("{what} must be {want}, got {got}")]
    Param {
        /// The parameter.
        what: &'static str,
        /// What it must be.
        want: &'static str,
        /// The value given.
        got: f64,
    },
    /// A combination the driver does not support.
    #[error("{0}")]
    Unsupported(&'static str),
    /// The future-knowledge stream would not fit in memory.
    #[error("future knowledge needs the whole write stream in memory: {writes} writes is more than {max}; lower --volume or --capacity")]
    StreamTooLong {
        /// Writes in the run.
        writes: u64,
        /// The limit.
        max: u64,
    },
}

/// How host writes are spread over the device's streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[non_exhaustive]
pub enum StreamAssign {
    /// Everything on stream 0 (a conventional SSD).
    Single,
    /// Two-zone only: hot-zone pages on stream 1, cold ones on stream 0 (an oracle placement,
    /// the best case of multi-stream / FDP).
    HotCold,
}

/// One simulation run.
#[derive(Debug, Clone, Serialize)]
pub struct SimSpec {
    /// The device.
    pub ftl: FtlConfig,
    /// The workload.
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
    /// How host writes map to streams.
    pub streams: StreamAssign,
    /// Seed of the workload and of randomized policies.
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
    /// Interval number.
    pub index: u32,
    /// Host writes so far in the measured phase, in multiples of the logical capacity.
    pub drive_writes: f64,
    /// Host pages in this interval.
    pub host_pages: u64,
    /// Media pages in this interval.
    pub media_pages: u64,
    /// GC copies in this interval.
    pub gc_pages: u64,
    /// Erases in this interval.
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
    /// Seed.
    pub seed: u64,
    /// Workload name.
    pub workload: String,
    /// Victim policy.
    pub policy: String,
    /// Placement scheme ("streams" without one).
    pub placement: String,
    /// The placement scheme's own state at the end.
    pub placement_report: String,
    /// Resolved geometry.
    pub layout: Layout,
    /// The garbage-proportion threshold of `--gc-trigger gp` (None: the free-unit trigger):
    /// then the physical space is the log's own size, not logical x (1 + --op).
    #[serde(default)]
    pub gc_gp: Option<f64>,
    /// Fill level.
    pub fill: f64,
    /// Pages in use.
    pub in_use_pages: u64,
    /// Effective alpha: physical pages not held by open/reserved units over in-use pages.
    pub alpha_eff: f64,
    /// Pages written to units not yet erased over live pages, at the end (the log's alpha).
    pub log_alpha: f64,
    /// Counters of the measured phase.
    pub measured: Counters,
    /// Counters since the device was created (preconditioning included).
    pub total: Counters,
    /// Measured-phase WAF (cumulative).
    pub waf: f64,
    /// WAF over the last quarter of the measured phase: the steady-state figure.
    pub waf_steady: f64,
    /// FAR of the measured phase: GC moves of data never overwritten again, over GC moves
    /// (all zero when `far_tracked` is false).
    pub far: Far,
    /// Whether the run kept FAR counts ([`nowa_flash::FtlConfig::track_far`]).
    pub far_tracked: bool,
    /// Mean valid ratio of GC victims in the measured phase (0 if none).
    pub victim_valid_ratio: f64,
    /// Victims of the measured phase by valid ratio, in 1% buckets (index 100 = fully valid).
    pub victim_histogram: Vec<u64>,
    /// Cumulative distribution of the same (`victim_cdf[i]` = share with ratio < (i+1)%).
    pub victim_cdf: Vec<f64>,
    /// Per-class statistics over the whole run.
    pub classes: Vec<ClassRow>,
    /// Least erased unit.
    pub erase_min: u32,
    /// Most erased unit.
    pub erase_max: u32,
    /// Mean erases per unit.
    pub erase_mean: f64,
    /// The WAF time series.
    pub intervals: Vec<Interval>,
    /// Wall seconds of the whole run.
    pub elapsed_secs: f64,
    /// Measured-phase host page writes simulated per second (wall time).
    pub sim_writes_per_sec: f64,
    /// Measured-phase host page writes per second of this thread's CPU time.
    pub sim_writes_per_cpu_sec: f64,
    /// Model memory.
    pub memory_bytes: u64,
    /// Resident memory the run added at its peak, as the kernel counts it, less the
    /// future-knowledge write stream (the check of `memory_bytes`; 0: not measured).
    pub rss_bytes: u64,
}

/// Progress callback: (pages done, pages total) over warm-up + measured phase.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

#[expect(clippy::cast_precision_loss, reason = "page counts below 2^53")]
fn f(x: u64) -> f64 {
    x as f64
}

#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a non-negative page count far below 2^64"
)]
fn pages_of(drive_writes: f64, logical: u64) -> u64 {
    (drive_writes * f(logical)).round() as u64
}

/// The whole write stream of a run with each write's next-overwrite distance, for placement
/// schemes that need the future (FK).
struct Future {
    lbas: Vec<u32>,
    hints: Vec<u64>,
    pos: usize,
}

/// Above this many writes the future-knowledge stream is refused (12 bytes per write).
const MAX_FUTURE_WRITES: u64 = 1 << 28;

impl Future {
    fn build(
        w: &mut dyn Workload,
        precondition: u64,
        writes: u64,
        logical: u64,
    ) -> Result<Future, SimError> {
        let total = precondition + writes;
        if total > MAX_FUTURE_WRITES {
            return Err(SimError::StreamTooLong {
                writes: total,
                max: MAX_FUTURE_WRITES,
            });
        }
        if !w.is_write_only() {
            return Err(SimError::Unsupported(
                "future-knowledge placement needs a write-only workload",
            ));
        }
        let n = usize::try_from(total).expect("below 2^28");
        let mut lbas: Vec<u32> = (0..precondition)
            .map(|l| u32::try_from(l).expect("LBA"))
            .collect();
        lbas.reserve(n - lbas.len());
        let mut buf = vec![0u64; 4096];
        while lbas.len() < n {
            let k = (n - lbas.len()).min(buf.len());
            w.fill_writes(&mut buf[..k]);
            lbas.extend(
                buf[..k]
                    .iter()
                    .map(|&l| u32::try_from(l).expect("LBA below 2^32")),
            );
        }
        // Backward pass: the distance to each LBA's next write.
        let mut next = vec![NEVER; usize::try_from(logical).expect("logical pages")];
        let mut hints = vec![NEVER; n];
        for (i, &l) in lbas.iter().enumerate().rev() {
            let i64v = i as u64;
            let slot = &mut next[l as usize];
            if *slot != NEVER {
                hints[i] = *slot - i64v;
            }
            *slot = i64v;
        }
        Ok(Future {
            lbas,
            hints,
            pos: 0,
        })
    }

    /// Bytes the stream holds (resident: every entry was written).
    fn bytes(&self) -> u64 {
        let b = self.lbas.capacity() * std::mem::size_of::<u32>()
            + self.hints.capacity() * std::mem::size_of::<u64>();
        u64::try_from(b).expect("fits 64 bits")
    }

    fn feed(&mut self, ftl: &mut Ftl, pages: u64) -> Result<(), SimError> {
        let end = (self.pos + usize::try_from(pages).expect("pages")).min(self.lbas.len());
        for s in (self.pos..end).step_by(4096) {
            let e = (s + 4096).min(end);
            ftl.write_batch_hinted(&self.lbas[s..e], &self.hints[s..e], 0)?;
        }
        self.pos = end;
        Ok(())
    }
}

/// Where the writes of a run come from.
struct Feed {
    w: Box<dyn Workload>,
    classifier: Option<TwoZone>,
    future: Option<Future>,
    lbuf: Vec<u64>,
    bbuf: Vec<u32>,
}

impl Feed {
    fn drive(&mut self, ftl: &mut Ftl, pages: u64) -> Result<(), SimError> {
        if let Some(fut) = self.future.as_mut() {
            return fut.feed(ftl, pages);
        }
        let mut done = 0u64;
        const BATCH: u64 = 4096;
        if self.w.is_write_only() && self.classifier.is_none() {
            while done < pages {
                let n = usize::try_from((pages - done).min(BATCH)).expect("<= 4096");
                self.lbuf.resize(n, 0);
                self.w.fill_writes(&mut self.lbuf);
                self.bbuf.clear();
                self.bbuf.extend(
                    self.lbuf
                        .iter()
                        .map(|&l| u32::try_from(l).expect("LBA below 2^32")),
                );
                ftl.write_batch(&self.bbuf, 0)?;
                done += n as u64;
            }
            return Ok(());
        }
        while done < pages {
            match self.w.next_op() {
                Op::Write(l) => {
                    let s = self
                        .classifier
                        .as_ref()
                        .map_or(0, |c| u16::from(c.is_hot(l)));
                    ftl.write(l, s)?;
                    done += 1;
                }
                Op::Trim { start, len } => ftl.trim(start, len)?,
            }
        }
        Ok(())
    }
}

fn check_spec(spec: &SimSpec) -> Result<(), SimError> {
    let bad = |what, want, got| Err(SimError::Param { what, want, got });
    if !(spec.warmup >= 0.0 && spec.warmup.is_finite()) {
        return bad("warm-up volume", ">= 0", spec.warmup);
    }
    if !(spec.volume > 0.0 && spec.volume.is_finite()) {
        return bad("write volume", "> 0", spec.volume);
    }
    if !(spec.interval > 0.0 && spec.interval.is_finite()) {
        return bad("interval", "> 0", spec.interval);
    }
    Ok(())
}

fn classifier(spec: &SimSpec, in_use: u64) -> Result<Option<TwoZone>, SimError> {
    match (spec.streams, &spec.workload) {
        (
            StreamAssign::HotCold,
            WorkloadSpec::TwoZone {
                write_pct,
                space_pct,
            },
        ) => {
            if spec.ftl.streams < 2 {
                return Err(SimError::Unsupported(
                    "hot-cold stream assignment needs --streams >= 2",
                ));
            }
            Ok(Some(TwoZone::new(
                in_use, *write_pct, *space_pct, spec.seed,
            )?))
        }
        (StreamAssign::HotCold, _) => Err(SimError::Unsupported(
            "hot-cold stream assignment needs a two-zone workload",
        )),
        _ => Ok(None),
    }
}

/// Phase lengths in pages.
struct Phases {
    warm: u64,
    measure: u64,
    step: u64,
}

/// The measured phase: intervals of `step` pages.
fn measure(
    ftl: &mut Ftl,
    feed: &mut Feed,
    ph: &Phases,
    progress: Option<Progress<'_>>,
) -> Result<Vec<Interval>, SimError> {
    let logical = ftl.logical_pages();
    let start = ftl.counters();
    let (mut prev, mut measured, mut intervals) = (start, 0u64, Vec::new());
    // Ctrl-C ends the phase after the current interval (at least one is measured).
    while measured < ph.measure && (measured == 0 || !crate::interrupt::requested()) {
        let n = ph.step.min(ph.measure - measured);
        let ti = Instant::now();
        feed.drive(ftl, n)?;
        let secs = ti.elapsed().as_secs_f64();
        measured += n;
        let now = ftl.counters();
        let (d, cum) = (now.since(&prev), now.since(&start));
        intervals.push(Interval {
            index: u32::try_from(intervals.len()).unwrap_or(u32::MAX),
            drive_writes: f(measured) / f(logical),
            host_pages: d.host_pages,
            media_pages: d.media_pages,
            gc_pages: d.gc_pages,
            erases: d.erases,
            waf: d.waf(),
            waf_cumulative: cum.waf(),
            sim_writes_per_sec: f(n) / secs.max(1e-9),
        });
        prev = now;
        if let Some(p) = progress {
            p(ph.warm + measured, ph.warm + ph.measure);
        }
    }
    Ok(intervals)
}

/// WAF over the last quarter of the intervals (at least one).
fn steady_waf(intervals: &[Interval]) -> f64 {
    let tail = intervals.len().div_ceil(4).max(1);
    let (h, m) = intervals[intervals.len().saturating_sub(tail)..]
        .iter()
        .fold((0u64, 0u64), |(h, m), i| {
            (h + i.host_pages, m + i.media_pages)
        });
    Counters {
        host_pages: h,
        media_pages: m,
        ..Counters::default()
    }
    .waf()
}

/// A run ready to go: the device, the feed, the phase lengths.
struct Setup {
    ftl: Ftl,
    feed: Feed,
    ph: Phases,
    in_use: u64,
    pre: u64,
}

fn setup(spec: &SimSpec) -> Result<Setup, SimError> {
    check_spec(spec)?;
    let ftl = Ftl::new(FtlConfig {
        seed: spec.seed,
        ..spec.ftl.clone()
    })?;
    let logical = ftl.logical_pages();
    let params = WorkloadParams::new(logical, spec.fill, spec.seed)?;
    let in_use = params.in_use_pages()?;
    let measure = pages_of(spec.volume, logical).max(1);
    let ph = Phases {
        warm: pages_of(spec.warmup, logical),
        measure,
        step: pages_of(spec.interval, logical).clamp(1, measure),
    };
    let mut w = spec.workload.build(&params)?;
    let pre = if spec.precondition { in_use } else { 0 };
    let future = if spec.ftl.placement.is_some_and(|p| p.needs_future()) {
        Some(Future::build(&mut *w, pre, ph.warm + ph.measure, logical)?)
    } else {
        None
    };
    let feed = Feed {
        classifier: classifier(spec, in_use)?,
        w,
        future,
        lbuf: Vec::new(),
        bbuf: Vec::new(),
    };
    Ok(Setup {
        ftl,
        feed,
        ph,
        in_use,
        pre,
    })
}

/// Sequential fill (from the stream when the placement needs the future) and warm-up.
fn precondition_and_warm(
    s: &mut Setup,
    spec: &SimSpec,
    progress: Option<Progress<'_>>,
) -> Result<(), SimError> {
    if s.feed.future.is_some() {
        s.feed.drive(&mut s.ftl, s.pre)?;
    } else if spec.precondition {
        s.ftl.precondition_sequential(s.in_use)?;
    }
    let mut done = 0u64;
    while done < s.ph.warm && !crate::interrupt::requested() {
        let n = s.ph.step.min(s.ph.warm - done);
        s.feed.drive(&mut s.ftl, n)?;
        done += n;
        if let Some(p) = progress {
            p(done, s.ph.warm + s.ph.measure);
        }
    }
    Ok(())
}

/// Run one simulation.
///
/// # Errors
/// Bad parameters, a configuration the model refuses, a device that fills up.
pub fn run(spec: &SimSpec, progress: Option<Progress<'_>>) -> Result<SimResult, SimError> {
    let rss0 = rss::resident_now();
    let mut s = setup(spec)?;
    let stream = s.feed.future.as_ref().map_or(0, Future::bytes);
    let reset = rss::reset_peak();
    let t0 = Instant::now();
    precondition_and_warm(&mut s, spec, progress)?;
    let (start, hist0) = (s.ftl.counters(), s.ftl.victim_histogram().clone());
    s.ftl.reset_far();
    let (tm, cpu0) = (Instant::now(), thread_cpu_secs());
    let intervals = measure(&mut s.ftl, &mut s.feed, &s.ph, progress)?;
    let (msecs, cpu) = (tm.elapsed().as_secs_f64(), thread_cpu_secs() - cpu0);
    let rss_bytes = rss::added(rss0, stream, reset);
    let workload = s.feed.w.name();
    Ok(SimResult::assemble(MeasuredRun {
        seed: spec.seed,
        workload,
        ftl: &s.ftl,
        start,
        hist0: &hist0,
        in_use_pages: s.in_use,
        fill: spec.fill,
        intervals,
        elapsed_secs: t0.elapsed().as_secs_f64(),
        measure_secs: msecs,
        measure_cpu_secs: cpu,
        rss_bytes,
    }))
}

/// What a measured phase left behind: the input of [`SimResult::assemble`], shared by
/// `nowa sim` and trace replay (`crate::replay`), so both report the same way.
pub struct MeasuredRun<'a> {
    /// Seed of the run.
    pub seed: u64,
    /// Workload name as printed.
    pub workload: String,
    /// The device after the measured phase.
    pub ftl: &'a Ftl,
    /// Counters at the start of the measured phase.
    pub start: Counters,
    /// Victim histogram at the start of the measured phase.
    pub hist0: &'a nowa_flash::VictimHistogram,
    /// Logical pages in use.
    pub in_use_pages: u64,
    /// In-use pages over logical pages.
    pub fill: f64,
    /// The measured phase's intervals.
    pub intervals: Vec<Interval>,
    /// Wall seconds of the whole run.
    pub elapsed_secs: f64,
    /// Wall seconds of the measured phase.
    pub measure_secs: f64,
    /// CPU seconds of the measured phase (this thread).
    pub measure_cpu_secs: f64,
    /// Resident memory the run added (`SimResult::rss_bytes`; 0: not measured).
    pub rss_bytes: u64,
}

impl SimResult {
    /// The result of a measured phase, as every simulation reports it.
    ///
    /// # Panics
    /// If the interval series is out of order or more pages are in use than the device has
    /// (a bug in the run loop).
    #[must_use]
    pub fn assemble(r: MeasuredRun<'_>) -> SimResult {
        let ftl = r.ftl;
        let vh = ftl.victim_histogram().since(r.hist0);
        let m = ftl.counters().since(&r.start);
        let erases = ftl.erase_counts();
        let layout = ftl.layout().clone();
        let cfg = ftl.config();
        // The per-interval series is in order and only grows (checked when read, as the FTL
        // checked each counter when written).
        for w in r.intervals.windows(2) {
            assert!(
                w[0].index < w[1].index && w[0].drive_writes <= w[1].drive_writes,
                "intervals out of order: {} then {}",
                w[0].index,
                w[1].index
            );
        }
        assert!(
            r.in_use_pages <= layout.logical_pages,
            "{} pages in use of {}",
            r.in_use_pages,
            layout.logical_pages
        );
        SimResult {
            seed: r.seed,
            workload: r.workload,
            policy: cfg.policy.to_string(),
            placement: ftl.placement_name(),
            placement_report: ftl.placement_report(),
            alpha_eff: layout.alpha_eff(r.in_use_pages),
            log_alpha: ftl.log_alpha(),
            layout,
            gc_gp: match cfg.gc_trigger {
                nowa_flash::GcTrigger::GarbageProportion(t) => Some(t),
                _ => None,
            },
            fill: r.fill,
            in_use_pages: r.in_use_pages,
            measured: m,
            total: ftl.counters(),
            waf: m.waf(),
            waf_steady: steady_waf(&r.intervals),
            far: ftl.far(),
            far_tracked: cfg.track_far,
            victim_valid_ratio: vh.mean_ratio(),
            victim_cdf: vh.cdf(),
            victim_histogram: vh.buckets,
            classes: ftl.class_stats(),
            erase_min: erases.iter().copied().min().unwrap_or(0),
            erase_max: erases.iter().copied().max().unwrap_or(0),
            erase_mean: erases.iter().map(|&e| f64::from(e)).sum::<f64>()
                / f(erases.len() as u64).max(1.0),
            intervals: r.intervals,
            elapsed_secs: r.elapsed_secs,
            sim_writes_per_sec: f(m.host_pages) / r.measure_secs.max(1e-9),
            sim_writes_per_cpu_sec: f(m.host_pages) / r.measure_cpu_secs.max(1e-9),
            memory_bytes: ftl.memory_bytes(),
            rss_bytes: r.rss_bytes,
        }
    }
}

/// Uniform-traffic WAF model (Desnoyers 2014 / Van Houdt 2013): A = 1/(1-x), x = e^(-alpha(1-x))
/// ([`nowa_flash::lambert_waf`]).
#[must_use]
pub fn waf_model_lambert(alpha: f64) -> f64 {
    nowa_flash::lambert_waf(alpha)
}

/// Greedy with `np` pages per unit (Desnoyers 2014 Eq. 12): A(k alpha)/k, k = 1 + 1/(2 np).
#[must_use]
pub fn waf_model_greedy(alpha: f64, np: u32) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * f64::from(np));
    waf_model_lambert(k * alpha) / k
}

/// A victim-ratio quantile from the CDF (the ratio below which `q` of victims lie).
fn cdf_quantile(cdf: &[f64], q: f64) -> f64 {
    let i = cdf.iter().position(|&c| c >= q).unwrap_or(cdf.len());
    f(i as u64) / 100.0
}

fn summary_head(s: &mut String, r: &SimResult) {
    use std::fmt::Write;
    let l = &r.layout;
    let gib = |p: u64| f(p) * 4096.0 / f(1 << 30);
    let _ = writeln!(s, "nowa sim — seed {}", r.seed);
    let _ = writeln!(
        s,
        "device    {:.2} GiB logical ({} pages), {:.2} GiB physical, {} units of {} pages ({} MiB)",
        gib(l.logical_pages),
        l.logical_pages,
        gib(l.physical_pages),
        l.units,
        l.unit_pages,
        (u64::from(l.unit_pages) * 4096) >> 20
    );
    let _ = writeln!(
        s,
        "OP        alpha = physical/logical = {:.4}; OP = spare/logical {:.2}%, spare/physical {:.2}%{}",
        l.alpha,
        100.0 * l.op_spare_over_logical,
        100.0 * l.op_spare_over_physical,
        r.gc_gp.map_or_else(String::new, |t| format!(
            " (sized by --gc-trigger gp:{t}: the log grows to about 1/(1 - {t}) of the data; --op does not apply)"
        ))
    );
    let _ = writeln!(
        s,
        "in use    fill {:.3} = {} pages; effective alpha (minus open/reserved units) {:.4}; log alpha at the end {:.4}",
        r.fill, r.in_use_pages, r.alpha_eff, r.log_alpha
    );
    let _ = writeln!(
        s,
        "workload  {}   policy {}   placement {} (GC frontier without placement: {:?})",
        r.workload, r.policy, r.placement, l.gc_frontier
    );
}

/// Human-readable summary of one run.
#[must_use]
pub fn summary(r: &SimResult) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    summary_head(&mut s, r);
    let _ = writeln!(s);
    let m = &r.measured;
    let _ = writeln!(
        s,
        "WAF       {:.3} (measured phase)   {:.3} (steady state, last quarter)",
        r.waf, r.waf_steady
    );
    if r.workload.starts_with("uniform") && r.policy == "greedy" && r.placement == "streams" {
        let _ = writeln!(
            s,
            "model     {:.3} (Desnoyers greedy, uniform, effective alpha)",
            waf_model_greedy(r.alpha_eff, r.layout.unit_pages)
        );
    }
    let _ = writeln!(
        s,
        "pages     host {}   media {}   GC copies {}   absorbed by buffer {}",
        m.host_pages, m.media_pages, m.gc_pages, m.buffer_absorbed
    );
    gc_line(&mut s, r);
    if r.far_tracked {
        let _ = writeln!(
            s,
            "FAR       {:.3} ({} of {} GC moves in the measured phase were of data never overwritten again)",
            r.far.far, r.far.frozen_moves, r.far.moves
        );
    }
    class_table(&mut s, r);
    let _ = writeln!(
        s,
        "speed     {:.2} M host writes per CPU second of the measured phase ({:.2} M per wall second); {:.1} s total; model memory {:.1} MiB ({:.2} B per physical page, placement state included)",
        r.sim_writes_per_cpu_sec / 1e6,
        r.sim_writes_per_sec / 1e6,
        r.elapsed_secs,
        f(r.memory_bytes) / f(1 << 20),
        f(r.memory_bytes) / f(r.layout.physical_pages.max(1))
    );
    if r.rss_bytes > 0 {
        let _ = writeln!(
            s,
            "memory    resident memory the run added at its peak (kernel's count, future-knowledge stream excluded): {:.1} MiB ({:.2} B per physical page)",
            f(r.rss_bytes) / f(1 << 20),
            f(r.rss_bytes) / f(r.layout.physical_pages.max(1))
        );
    }
    s
}

/// The GC line: rounds, victims' valid ratio and its percentiles (none without victims: a
/// zoned device or a run that never filled up has no GC to describe), erases per unit.
fn gc_line(s: &mut String, r: &SimResult) {
    use std::fmt::Write;
    let m = &r.measured;
    assert!(
        m.gc_rounds > 0 || m.gc_pages == 0,
        "GC copies happen in GC rounds"
    );
    let victims = if m.gc_rounds == 0 {
        "no victims in the measured phase".to_owned()
    } else {
        format!(
            "victim valid ratio mean {:.3}, p10/p50/p90 {:.2}/{:.2}/{:.2}",
            r.victim_valid_ratio,
            cdf_quantile(&r.victim_cdf, 0.1),
            cdf_quantile(&r.victim_cdf, 0.5),
            cdf_quantile(&r.victim_cdf, 0.9)
        )
    };
    let _ = writeln!(
        s,
        "GC        {} rounds, {victims}; erases per unit min {} / mean {:.1} / max {}",
        m.gc_rounds, r.erase_min, r.erase_mean, r.erase_max
    );
}

/// The per-class table, as SepBIT's simulator prints it at the end of a run.
fn class_table(s: &mut String, r: &SimResult) {
    use std::fmt::Write;
    if r.classes.len() < 2 && r.placement == "streams" {
        return;
    }
    if !r.placement_report.is_empty() {
        let _ = writeln!(s, "placement {}", r.placement_report);
    }
    let counted = r
        .classes
        .iter()
        .any(|c| c.stats.user_writes + c.stats.gc_writes > 0);
    if !counted && r.measured.host_pages > 0 {
        // The native stream path (no --placement) does not count writes per class: say so
        // rather than print "user writes 0" after millions of host writes.
        let _ = writeln!(
            s,
            "classes   per-class user/GC writes are counted with --placement only (0 below = not counted; --placement nosep counts them)"
        );
    }
    s.push_str(&nowa_logspace::class_table(&r.classes, "pages"));
}

/// Write the per-interval series (WAF over time) as CSV.
///
/// # Errors
/// I/O and serialization errors.
pub fn write_intervals(r: &SimResult, out: impl std::io::Write) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    for i in &r.intervals {
        w.serialize(i)?;
    }
    w.flush()?;
    Ok(())
}

/// Write the victim valid-ratio distribution as CSV (`valid_pct,victims,cdf`).
///
/// # Errors
/// I/O and serialization errors.
pub fn write_victims(r: &SimResult, out: impl std::io::Write) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["valid_pct", "victims", "cdf"])?;
    for (i, (n, c)) in r.victim_histogram.iter().zip(&r.victim_cdf).enumerate() {
        w.write_record([i.to_string(), n.to_string(), format!("{c:.6}")])?;
    }
    w.flush()?;
    Ok(())
}

/// A policy list as written on the command line: "greedy,2r-fifo".
///
/// # Errors
/// The first unknown name.
pub fn parse_policies(s: &str) -> Result<Vec<PolicyKind>, String> {
    s.split(',')
        .map(|p| p.trim().parse::<PolicyKind>().map_err(|e| e.to_string()))
        .collect()
}

pub(crate) mod rss;
pub mod schemes;
pub mod sweep;

#[cfg(test)]
mod tests {
    use super::*;

    fn small(track_far: bool) -> SimSpec {
        SimSpec {
            ftl: FtlConfig {
                logical_pages: 1 << 14,
                pages_per_block: 64,
                blocks_per_superblock: 2,
                track_far,
                ..FtlConfig::default()
            },
            warmup: 1.0,
            volume: 1.0,
            ..SimSpec::default()
        }
    }

    /// A metric that is off is not printed: no FAR line (all zeros) without FAR counts.
    #[test]
    fn summary_prints_far_only_when_counted() {
        let off = run(&small(false), None).expect("runs");
        assert!(!off.far_tracked);
        assert!(!summary(&off).contains("FAR"), "{}", summary(&off));
        let on = run(&small(true), None).expect("runs");
        assert!(on.far_tracked && on.far.moves > 0);
        assert!(summary(&on).contains("FAR"), "{}", summary(&on));
        assert_eq!(
            on.waf.to_bits(),
            off.waf.to_bits(),
            "FAR counts change no result"
        );
    }
}
