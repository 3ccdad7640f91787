//! `plan`: PLAN (flexible superblocks, lifetime predictor) on nowa-bench's chip-addressed FTL
//! with the chip-level timing model: one run ([`RunSpec`], the `plan-run` job), the paper's
//! figures ([`FiguresSpec`], `plan-figures`) and the speed benchmark ([`bench`]). Every
//! default is resolved into the spec: the OP as spare/physical, the predictor's time scale.

mod flags;

pub use flags::{ChipTiming, DeviceFlags, FigureFlags, RunFlags};

use crate::{Cancel, Error, Identity, Progress, Report};
use nowa_bench::plan::{self, FigureOpts, RunResult, WorkloadKind};
use nowa_device::timing::ChipParams;
use nowa_flash::parallel::ChipGeometry;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The paper's over-provisioning, spare/physical.
const PAPER_OP_PHYSICAL: f64 = 0.0625;

fn femu_background_gc() -> f64 {
    nowa_flash::parallel::FEMU_BACKGROUND_GC
}

/// The device and the run parameters every PLAN run shares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// Channels.
    pub channels: u32,
    /// Chips per channel.
    pub chips_per_channel: u32,
    /// Erase blocks per chip.
    pub blocks_per_chip: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Flash page size in bytes (4096 or 16384).
    pub page_bytes: u32,
    /// Over-provisioning, spare/physical.
    pub op_physical: f64,
    /// Chip latencies.
    pub timing: ChipTiming,
    /// Host writes per run, drive writes.
    pub drive_writes: f64,
    /// Workload seed.
    pub seed: u64,
    /// Fraction of every chip's blocks GC keeps free.
    pub gc_reserve: f64,
    /// FEMU's background GC threshold, a fraction of every chip's blocks (0: off; job files
    /// written before it existed get FEMU's 0.25).
    #[serde(default = "femu_background_gc")]
    pub background_gc: f64,
    /// Fraction of the logical space filled before each run.
    pub fill: f64,
    /// Predictor seconds per simulated second.
    pub time_scale: f64,
}

/// `nowa plan run`: one scheme on one workload (or a trace).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// The device.
    pub device: DeviceSpec,
    /// The scheme's name (`plan-pred-1/4`, `baseline@18`, ...).
    pub scheme: String,
    /// The workload (ignored with a trace).
    pub workload: WorkloadKind,
    /// A block trace replayed instead of the workload.
    pub trace: Option<PathBuf>,
    /// Records of the trace per pass.
    pub trace_limit: Option<u64>,
    /// Accept a trace however many of its lines are unreadable.
    pub skip_bad: bool,
}

/// A captured trace as an extra workload of Figures 3 to 6.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Captured {
    /// Its name in the figures.
    pub name: String,
    /// The trace file.
    pub file: PathBuf,
}

/// `nowa plan figures`: Figures 1, 3, 4, 5, 6 as CSV and PNG under `out`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FiguresSpec {
    /// The device.
    pub device: DeviceSpec,
    /// The directory of the files.
    pub out: PathBuf,
    /// Overwrite plan-* files in `out`.
    pub force: bool,
    /// Only Figure 1.
    pub fig1_only: bool,
    /// Captured traces.
    pub captured: Vec<Captured>,
    /// Pages per block of the device the captured traces run on.
    pub captured_pages_per_block: u32,
    /// Workloads of Figures 3 to 6.
    pub workloads: Vec<WorkloadKind>,
}

/// What `plan figures` ran.
#[derive(Debug, Clone, Serialize)]
pub struct FiguresResult {
    /// Every run, in order (Figure 1's, then Figures 3 to 6's).
    pub runs: Vec<RunResult>,
    /// Where the files are.
    pub out: PathBuf,
    /// Runs that finished (`runs` leaves out Figure 1's breakdown runs).
    pub finished: u64,
    /// Ctrl-C stopped the pipeline: the CSVs hold the runs that finished; the charts of an
    /// unfinished figure are not drawn.
    pub interrupted: bool,
}

/// A `plan-run` result under its identity.
pub type RunOutcome = Report<RunResult>;
/// A `plan-figures` result under its identity.
pub type FiguresOutcome = Report<FiguresResult>;

/// The device spec of the flags: OP as spare/physical, the time scale resolved (`trace`: a
/// trace's clock is real time, its lifetimes need no scaling by default).
///
/// # Errors
/// [`Error::Usage`] naming the flags of a device the workloads cannot run on.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn device_from_flags(d: &DeviceFlags, trace: bool) -> Result<DeviceSpec, Error> {
    let op_physical = d
        .op_physical
        .or(d.op.map(|l| l / (1.0 + l)))
        .unwrap_or(PAPER_OP_PHYSICAL);
    let mut spec = DeviceSpec {
        channels: d.channels,
        chips_per_channel: d.chips_per_channel,
        blocks_per_chip: d.blocks_per_chip,
        pages_per_block: d.pages_per_block,
        page_bytes: u32::try_from(d.page_size).unwrap_or(0),
        op_physical,
        timing: d.timing,
        drive_writes: d.drive_writes,
        seed: d.seed,
        gc_reserve: d.gc_reserve,
        background_gc: d.background_gc,
        fill: d.fill,
        time_scale: 1.0,
    };
    let scale = paper_scale(&geometry(&spec)?);
    spec.time_scale = match (trace, d.time_scale) {
        (_, Some(t)) => t,
        (true, None) => 1.0,
        (false, None) => scale,
    };
    assert!(
        spec.op_physical > 0.0 && spec.op_physical < 1.0,
        "the flags bound the OP"
    );
    assert!(spec.time_scale > 0.0, "a time scale");
    assert_eq!(spec.seed, d.seed, "the spec names the flags' seed");
    Ok(spec)
}

/// The paper's device (256 GiB physical) over this one.
fn paper_scale(g: &ChipGeometry) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "byte counts below 2^53")]
    let scale = (256u64 << 30) as f64 / (g.physical_pages() * u64::from(g.page_bytes)) as f64;
    assert!(
        scale.is_finite() && scale > 0.0,
        "a validated device has pages"
    );
    scale
}

/// The checked geometry of a device spec.
fn geometry(d: &DeviceSpec) -> Result<ChipGeometry, Error> {
    if !matches!(d.page_bytes, 4096 | 16384) {
        return Err(Error::Usage("--page-size: 4KiB or 16KiB".into()));
    }
    if !(d.op_physical > 0.0 && d.op_physical < 1.0) {
        return Err(Error::Usage(format!(
            "op_physical: {} is not in (0, 1)",
            d.op_physical
        )));
    }
    let g = ChipGeometry {
        channels: d.channels,
        chips_per_channel: d.chips_per_channel,
        blocks_per_chip: d.blocks_per_chip,
        pages_per_block: d.pages_per_block,
        page_bytes: d.page_bytes,
        op_physical: d.op_physical,
    };
    g.validate().map_err(|e| {
        Error::Usage(format!(
            "--channels/--chips-per-channel/--blocks-per-chip: {e}"
        ))
    })?;
    // The workloads' regions need a minimum device; refused here, before any work.
    let min = plan::workload::MIN_LOGICAL_PAGES;
    if g.logical_pages() < min {
        return Err(Error::Usage(format!(
            "--channels/--chips-per-channel/--blocks-per-chip/--pages-per-block/--op: {} logical pages, the workloads need >= {min}",
            g.logical_pages()
        )));
    }
    assert!(g.physical_pages() > g.logical_pages(), "spare pages");
    Ok(g)
}

/// The bench crate's options of a device spec (every field checked).
///
/// # Errors
/// [`Error::Usage`] naming the field or flag.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn opts(d: &DeviceSpec) -> Result<FigureOpts, Error> {
    let g = geometry(d)?;
    let fractions = [
        ("drive_writes", d.drive_writes, 1000.0),
        ("gc_reserve", d.gc_reserve, 0.5),
        ("background_gc", d.background_gc, 0.5),
        ("fill", d.fill, 1.0),
        ("time_scale", d.time_scale, 1e6),
    ];
    for (field, v, hi) in fractions {
        if !(v.is_finite() && v >= 0.0 && v <= hi) {
            return Err(Error::Usage(format!("{field}: {v} is not in [0, {hi}]")));
        }
    }
    let chips = match d.timing {
        ChipTiming::Femu => ChipParams::femu(g.channels, g.chips_per_channel, d.page_bytes),
        ChipTiming::Mqsim => ChipParams::mqsim(g.channels, g.chips_per_channel, d.page_bytes),
    };
    assert_eq!(chips.channels, g.channels, "the chips of the geometry");
    Ok(FigureOpts {
        geometry: g,
        chips,
        drive_writes: d.drive_writes,
        seed: d.seed,
        time_scale: d.time_scale,
        workloads: WorkloadKind::ALL.to_vec(),
        gc_reserve: d.gc_reserve,
        background_gc: d.background_gc,
        fill: d.fill,
        captured: Vec::new(),
        captured_pages_per_block: 2,
    })
}

/// A device GC cannot keep writable (too few spare blocks for the scheme's open units) is
/// the geometry's fault: bad input naming the flags. Where exactly a geometry turns
/// unworkable depends on the scheme and the workload, so it is found by running (the fill
/// comes first, before any measured work). A damaged or missing trace is bad input too.
fn run_error(e: anyhow::Error) -> Error {
    let full = e
        .chain()
        .any(|c| matches!(c.downcast_ref(), Some(nowa_flash::FlashError::DeviceFull)));
    assert!(e.chain().count() >= 1, "an error has itself");
    if full {
        return Error::Usage(format!(
            "--op/--blocks-per-chip/--gc-reserve/--scheme: {e}: this geometry leaves GC too few spare blocks; raise --op or --blocks-per-chip"
        ));
    }
    match e.downcast::<nowa_trace::TraceError>() {
        Ok(t) => crate::trace::trace_error(t),
        Err(e) => Error::Failed {
            what: "the PLAN run",
            source: e.into(),
        },
    }
}

/// The device line printed before a run.
#[must_use]
pub fn describe(o: &FigureOpts) -> String {
    let g = &o.geometry;
    format!(
        "device: {} ch x {} chips x {} blocks x {} pages x {} KiB = {} GiB physical, {} GiB logical; OP {:.4} spare/physical = {:.4} spare/logical; aged: {:.0}% of the logical space filled; GC keeps {:.1}% of each chip's blocks free (a threshold on free blocks, as FEMU's on free lines: not added to the spare){}; timing read {} / program {} / erase {} us, xfer {:.1} us; {} drive writes, seed {}, predictor time x{:.1}",
        g.channels,
        g.chips_per_channel,
        g.blocks_per_chip,
        g.pages_per_block,
        g.page_bytes / 1024,
        (g.physical_pages() * u64::from(g.page_bytes)) >> 30,
        (g.logical_pages() * u64::from(g.page_bytes)) >> 30,
        g.op_physical,
        g.op_logical(),
        o.fill * 100.0,
        o.gc_reserve * 100.0,
        plan::background_label(o.background_gc),
        o.chips.read_us,
        o.chips.program_us,
        o.chips.erase_us,
        o.chips.xfer_us,
        o.drive_writes,
        o.seed,
        o.time_scale
    )
}

/// One run's line.
#[must_use]
pub fn line(r: &RunResult) -> String {
    format!(
        "{:<11} {:<16} WAF {:>6.3}  erased {:>8}  victims {:>7}  {:>8.0} IOPS  read p50/p99 {:>7.0}/{:>7.0} us  write p50/p99 {:>7.0}/{:>7.0} us  cpu {:.2} s",
        r.workload,
        r.scheme,
        r.waf,
        r.counters.erased_blocks,
        r.counters.victims,
        r.iops,
        r.read_us[0],
        r.read_us[1],
        r.write_us[0],
        r.write_us[1],
        r.cpu_secs
    )
}

impl RunSpec {
    /// Checks every field.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field or the flag.
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions name it.
    pub fn check(&self) -> Result<(), Error> {
        let o = opts(&self.device)?;
        plan::parse_scheme(&self.scheme, &o.geometry)
            .map_err(|e| Error::Usage(format!("--scheme: {e}")))?;
        assert!(o.geometry.logical_pages() > 0, "a checked device has pages");
        if self.trace_limit == Some(0) {
            return Err(Error::Usage("trace_limit: 0 records".into()));
        }
        Ok(())
    }
}

/// The spec of `nowa plan run`'s flags.
///
/// # Errors
/// [`Error::Usage`] naming the flag.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn run_from_flags(d: &DeviceFlags, r: &RunFlags) -> Result<RunSpec, Error> {
    let spec = RunSpec {
        device: device_from_flags(d, r.trace.is_some())?,
        scheme: r.scheme.clone(),
        workload: r.workload,
        trace: r.trace.clone(),
        trace_limit: r.trace_limit,
        skip_bad: r.skip_bad,
    };
    spec.check()?;
    assert_eq!(spec.scheme, r.scheme, "the scheme as named");
    if let Some(t) = &spec.trace {
        // Missing or unrecognized: refused before the run says it starts.
        nowa_trace::open(t, None).map_err(crate::trace::trace_error)?;
    }
    Ok(spec)
}

/// One PLAN run (a workload, or a trace replayed), deterministic but for `cpu_secs`. On
/// `cancel` (Ctrl-C) it stops within a few thousand requests and returns what it measured,
/// `interrupted` set.
///
/// # Errors
/// [`Error::Usage`]: a bad field, a geometry GC cannot keep writable, a bad trace;
/// [`Error::Failed`]: the run failed.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn run(
    spec: &RunSpec,
    progress: Option<Progress<'_>>,
    cancel: &Cancel,
) -> Result<RunOutcome, Error> {
    spec.check()?;
    let o = opts(&spec.device)?;
    let id = Identity::now("plan-run", spec, spec.device.seed);
    let stop = || cancel.requested();
    let rs = plan::RunSpec {
        geometry: o.geometry,
        chips: o.chips,
        scheme: plan::parse_scheme(&spec.scheme, &o.geometry)
            .map_err(|e| Error::Usage(format!("--scheme: {e}")))?,
        workload: spec.workload,
        drive_writes: o.drive_writes,
        seed: o.seed,
        time_scale: o.time_scale,
        gc_reserve: o.gc_reserve,
        background_gc: o.background_gc,
        fill: o.fill,
        track_streams: true,
    };
    // Progress in host page writes, inside the run.
    let mut tick = |done: u64, target: u64| {
        if let Some(p) = progress {
            p(done, target);
        }
    };
    let res = match &spec.trace {
        Some(path) => {
            nowa_trace::set_skip_bad(spec.skip_bad);
            let mut res = plan::replay_cancellable(&rs, path, spec.trace_limit, &mut tick, &stop)
                .map_err(run_error)?;
            res.workload = "trace".to_owned();
            res
        }
        None => plan::run_cancellable(&rs, &mut tick, &stop).map_err(run_error)?,
    };
    assert!(
        res.counters.gc_pages == 0 || res.counters.erased_blocks > 0 || res.counters.victims > 0,
        "GC copies come from victims"
    );
    Ok(Report {
        nowa: id,
        result: res,
    })
}

/// The plan-* files already in `out` (what a figures run would overwrite).
fn existing_outputs(out: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("plan-") && (name.ends_with(".csv") || name.ends_with(".png"))
        })
        .collect();
    v.sort();
    assert!(v.iter().all(|p| p.starts_with(out)), "files of `out`");
    v
}

impl FiguresSpec {
    /// Checks every field and the files: captures exist, nothing in `out` is overwritten
    /// without `force`.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field or the flag.
    pub fn check(&self) -> Result<(), Error> {
        opts(&self.device)?;
        crate::check_ranges(&[(
            "captured_pages_per_block",
            u64::from(self.captured_pages_per_block),
            1,
            1 << 16,
        )])?;
        if let Some(c) = self.captured.iter().find(|c| !c.file.is_file()) {
            return Err(Error::Usage(format!(
                "--captured {}={}: no such file",
                c.name,
                c.file.display()
            )));
        }
        // Shipped figures (docs/figures) are never overwritten by accident.
        if let (false, Some(first)) = (self.force, existing_outputs(&self.out).first()) {
            return Err(Error::Usage(format!(
                "--out {}: {} exists (pass --force to overwrite the plan-* files there)",
                self.out.display(),
                first.display()
            )));
        }
        Ok(())
    }

    /// The bench crate's options.
    ///
    /// # Errors
    /// As [`opts`].
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions name it.
    pub fn opts(&self) -> Result<FigureOpts, Error> {
        let mut o = opts(&self.device)?;
        o.workloads.clone_from(&self.workloads);
        o.captured = self
            .captured
            .iter()
            .map(|c| (c.name.clone(), c.file.clone()))
            .collect();
        o.captured_pages_per_block = self.captured_pages_per_block;
        assert_eq!(o.captured.len(), self.captured.len(), "every capture");
        Ok(o)
    }
}

/// The spec of `nowa plan figures`' flags.
///
/// # Errors
/// [`Error::Usage`] naming the flag.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn figures_from_flags(d: &DeviceFlags, f: &FigureFlags) -> Result<FiguresSpec, Error> {
    let spec = FiguresSpec {
        device: device_from_flags(d, false)?,
        out: f.out.clone(),
        force: f.force,
        fig1_only: f.fig1_only,
        captured: f
            .captured
            .iter()
            .map(|(name, file)| Captured {
                name: name.clone(),
                file: file.clone(),
            })
            .collect(),
        captured_pages_per_block: f.captured_pages_per_block,
        workloads: f.workloads.clone(),
    };
    spec.check()?;
    assert_eq!(spec.captured.len(), f.captured.len(), "every capture");
    Ok(spec)
}

/// Runs of a figures spec (a progress bar's length).
///
/// # Errors
/// As [`opts`].
pub fn figure_runs(spec: &FiguresSpec) -> Result<u64, Error> {
    Ok(plan::figure_run_count(&spec.opts()?, spec.fig1_only))
}

/// The figures: every run, and the progress inside it, reported to `on_run`, the files
/// written under `out` (created, its parent must exist). On `cancel` (Ctrl-C) the current
/// run stops within a few thousand requests, no other starts, and the CSVs keep the runs
/// that finished (`interrupted` set).
///
/// # Errors
/// [`Error::Usage`]: a bad field, a file that would be overwritten; [`Error::Failed`]: a run.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn figures_with(
    spec: &FiguresSpec,
    on_run: &mut dyn plan::Observer,
    cancel: &Cancel,
) -> Result<FiguresOutcome, Error> {
    spec.check()?;
    let o = spec.opts()?;
    crate::resources::create_output_dir("--out", &spec.out)?;
    let id = Identity::now("plan-figures", spec, spec.device.seed);
    // Figure 1's rows leave out its breakdown runs (no GC reserve): count the runs as they
    // end, not the rows.
    let mut counted = Counted {
        inner: on_run,
        ran: 0,
    };
    let stop = || cancel.requested();
    let mut runs = plan::figure1(&o, &spec.out, &mut counted, &stop).map_err(run_error)?;
    if !spec.fig1_only && !stop() {
        runs.extend(plan::figures3to6(&o, &spec.out, &mut counted, &stop).map_err(run_error)?);
    }
    let interrupted = stop();
    assert!(
        interrupted || counted.ran == figure_runs(spec)?,
        "every planned run ran"
    );
    assert!(runs.len() as u64 <= counted.ran, "a row per run at most");
    Ok(Report {
        nowa: id,
        result: FiguresResult {
            runs,
            out: spec.out.clone(),
            finished: counted.ran,
            interrupted,
        },
    })
}

/// An observer that counts the runs it passes on.
struct Counted<'a> {
    inner: &'a mut dyn plan::Observer,
    ran: u64,
}

impl plan::Observer for Counted<'_> {
    fn tick(&mut self, written: u64, target: u64) {
        self.inner.tick(written, target);
    }
    fn ran(&mut self, r: &RunResult) {
        self.ran += 1;
        self.inner.ran(r);
    }
}

/// Units of progress per figure run ([`RunProgress`]).
pub const RUN_UNITS: u64 = 1000;

/// Progress over a figures pipeline in [`RUN_UNITS`] per run: the runs done, plus the share
/// of the current run's host page writes done (so the rate and the ETA move inside a run
/// that takes a minute, not only between runs).
pub struct RunProgress<'a> {
    runs: u64,
    done: u64,
    report: &'a mut dyn FnMut(u64, u64, Option<&RunResult>),
}

impl<'a> RunProgress<'a> {
    /// Progress over `runs` runs, told to `report` as (units done, units in all, the run
    /// that just finished).
    ///
    /// # Panics
    /// If `runs` is 0.
    pub fn new(runs: u64, report: &'a mut dyn FnMut(u64, u64, Option<&RunResult>)) -> Self {
        assert!(runs > 0, "a pipeline runs something");
        RunProgress {
            runs,
            done: 0,
            report,
        }
    }
}

impl plan::Observer for RunProgress<'_> {
    fn tick(&mut self, written: u64, target: u64) {
        let part =
            (u128::from(written.min(target)) * u128::from(RUN_UNITS)) / u128::from(target.max(1));
        let part = u64::try_from(part).expect("at most RUN_UNITS");
        let at = (self.done * RUN_UNITS + part.min(RUN_UNITS - 1)).min(self.runs * RUN_UNITS);
        (self.report)(at, self.runs * RUN_UNITS, None);
    }
    fn ran(&mut self, r: &RunResult) {
        self.done += 1;
        assert!(self.done <= self.runs, "no more runs than planned");
        (self.report)(self.done * RUN_UNITS, self.runs * RUN_UNITS, Some(r));
    }
}

/// [`figures_with`], `progress` in [`RUN_UNITS`] per run.
///
/// # Errors
/// As [`figures_with`].
pub fn figures(
    spec: &FiguresSpec,
    progress: Option<Progress<'_>>,
    cancel: &Cancel,
) -> Result<FiguresOutcome, Error> {
    let mut report = |done: u64, total: u64, _: Option<&RunResult>| {
        if let Some(p) = progress {
            p(done, total);
        }
    };
    let mut obs = RunProgress::new(figure_runs(spec)?, &mut report);
    figures_with(spec, &mut obs, cancel)
}

/// The speed benchmark: the baseline and PLAN on FIO, timing on, without per-stream
/// accounting. One result per scheme; Ctrl-C ([`Cancel`]) ends it with the run being measured
/// (marked `interrupted`, the last one).
///
/// # Errors
/// As [`run`].
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn bench(d: &DeviceSpec, cancel: &Cancel) -> Result<Vec<(&'static str, RunResult)>, Error> {
    let o = opts(d)?;
    let mut out = Vec::new();
    for name in ["baseline", "plan-pred-1/4"] {
        let scheme =
            plan::parse_scheme(name, &o.geometry).map_err(|e| Error::Usage(e.to_string()))?;
        let stop = || cancel.requested();
        let spec = plan::RunSpec {
            geometry: o.geometry,
            chips: o.chips,
            scheme,
            workload: WorkloadKind::Fio,
            drive_writes: o.drive_writes,
            seed: o.seed,
            time_scale: o.time_scale,
            gc_reserve: o.gc_reserve,
            background_gc: o.background_gc,
            fill: o.fill,
            track_streams: false,
        };
        let r = plan::run_cancellable(&spec, &mut |_, _| {}, &stop).map_err(run_error)?;
        assert!(
            r.interrupted || (r.counters.host_pages > 0 && r.cpu_secs > 0.0),
            "a run writes and takes CPU time"
        );
        let stop = r.interrupted;
        out.push((name, r));
        if stop {
            // Ctrl-C: the run so far is the last one (marked `interrupted`).
            break;
        }
    }
    Ok(out)
}

/// A [`bench`] result as the line `nowa plan bench` prints: counts, WAF, CPU time, host page
/// writes per CPU-second and CPU nanoseconds per flash page operation (the number that does not
/// depend on the WAF: GC copies outnumber host writes several times with a tight GC reserve).
///
/// # Panics
/// If the CPU time is not a duration (a bug).
#[must_use]
pub fn bench_line(name: &str, r: &RunResult) -> String {
    let c = &r.counters;
    assert!(
        r.cpu_secs.is_finite() && r.cpu_secs >= 0.0,
        "CPU time is a duration: {}",
        r.cpu_secs
    );
    #[expect(clippy::cast_precision_loss, reason = "counts far below 2^53")]
    let ns_per_op = r.cpu_secs * 1e9 / (c.host_pages + c.read_pages + c.gc_pages).max(1) as f64;
    format!(
        "{name:<14} {} host page writes + {} reads + {} GC copies (WAF {:.2}) in {:.3} CPU s: {:.2} M host page writes/s per core (timing on), {:.1} ns per page operation{}",
        c.host_pages,
        c.read_pages,
        c.gc_pages,
        r.waf,
        r.cpu_secs,
        r.writes_per_cpu_sec() / 1e6,
        ns_per_op,
        if r.interrupted { " (partial: interrupted)" } else { "" }
    )
}

#[cfg(test)]
mod tests;
