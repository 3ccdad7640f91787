//! One run: an aged chip-addressed FTL, a closed-loop workload, and the one timing model's
//! chips in virtual time. Every request's flash operations (GC copies and erases included) go
//! to their chips when it is issued; it completes when its last operation does. A GC copy's
//! program waits for its read. Background GC (FEMU's, after each request) goes to the chips
//! after the request's own operations, delaying later requests, not this one.

use super::workload::{Generator, Kind, Req, WorkloadKind};
use anyhow::Context as _;
use hdrhistogram::Histogram;
use nowa_device::timing::{ChipOp, ChipParams, Chips, Ps};
use nowa_flash::parallel::{
    ChipGeometry, OpKind, ParallelCounters, ParallelFtl, Scheme, StreamStats,
};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What to run.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec {
    /// The device.
    pub geometry: ChipGeometry,
    /// Chip timing (FEMU's by default).
    pub chips: ChipParams,
    /// The scheme.
    pub scheme: Scheme,
    /// The workload.
    pub workload: WorkloadKind,
    /// Host page writes to issue, as drive writes (x logical pages).
    pub drive_writes: f64,
    /// Seed of the workload.
    pub seed: u64,
    /// Predictor and SFR seconds per simulated second (the paper's device is 16x ours, so its
    /// lifetimes are 16x longer at the same write rate).
    pub time_scale: f64,
    /// Fraction of every chip's blocks GC keeps free (FEMU's foreground threshold: 0.05). A
    /// threshold on free blocks, as FEMU's is on free lines: the blocks the aged data leaves
    /// free count toward it; it is not added to the advertised spare.
    pub gc_reserve: f64,
    /// FEMU's background GC: after every request, one victim while a chip has at most this
    /// fraction of its blocks free (FEMU's 0.25; 0 = off), skipping victims under 1/8 invalid.
    pub background_gc: f64,
    /// Aged SSD: fraction of the logical space filled with valid data before the run
    /// (sequentially from page 0; the paper: "to certain levels", not given).
    pub fill: f64,
    /// Per-stream accounting (`RunResult::streams`; off: all zero, and a little faster).
    pub track_streams: bool,
}

/// What a run measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunResult {
    /// Scheme name.
    pub scheme: String,
    /// Workload name.
    pub workload: String,
    /// Counters over the run (after the fill).
    pub counters: ParallelCounters,
    /// WAF over the run.
    pub waf: f64,
    /// Requests completed.
    pub requests: u64,
    /// Virtual seconds of the run.
    pub sim_secs: f64,
    /// Requests per virtual second.
    pub iops: f64,
    /// Host pages (read + written) per virtual second.
    pub pages_per_sec: f64,
    /// Read latency percentiles, microseconds (p50, p99, p99.9).
    pub read_us: [f64; 3],
    /// Write latency percentiles, microseconds.
    pub write_us: [f64; 3],
    /// Victims by valid ratio in percent (index 0..=100).
    pub victim_hist: Vec<u64>,
    /// CPU seconds of the run (fill excluded).
    pub cpu_secs: f64,
    /// Per-stream accounting over the run (host and GC pages per stream, superblock mix).
    pub streams: StreamStats,
    /// Valid pages at the end of the run over the logical pages (the fill plus what the
    /// workload wrote outside it, less what it trimmed).
    pub valid_end: f64,
    /// Stopped early (Ctrl-C, [`run_cancellable`]): the counters are what ran until then.
    pub interrupted: bool,
}

impl RunResult {
    /// Mean valid ratio of the GC victims (0..1; 0 without GC).
    #[must_use]
    pub fn mean_victim_ratio(&self) -> f64 {
        let n: u64 = self.victim_hist.iter().sum();
        let pct: u64 = (0u64..).zip(&self.victim_hist).map(|(p, &c)| p * c).sum();
        #[expect(clippy::cast_precision_loss, reason = "counts below 2^53")]
        let r = pct as f64 / 100.0 / n.max(1) as f64;
        r
    }

    /// Host page writes per CPU second.
    #[must_use]
    pub fn writes_per_cpu_sec(&self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "counts far below 2^53")]
        let w = self.counters.host_pages as f64;
        w / self.cpu_secs.max(1e-9)
    }
}

/// Puts the FTL's recorded operations on the chips at `t`; returns when the last is done.
fn serve_ops(ftl: &mut ParallelFtl, chips: &mut Chips, t: Ps) -> Ps {
    let mut done = t;
    let mut last_read: Option<Ps> = None;
    for op in ftl.ops() {
        let d = match op.kind {
            OpKind::Read => {
                let d = chips.ops(op.chip, t, ChipOp::Read, 1);
                last_read = Some(d);
                d
            }
            // A program right after a read is a GC copy: it waits for its data.
            OpKind::Program => {
                let at = last_read.take().unwrap_or(t);
                chips.ops(op.chip, at, ChipOp::Program, 1)
            }
            OpKind::Erase => chips.ops(op.chip, t, ChipOp::Erase, 1),
        };
        done = done.max(d);
    }
    ftl.clear_ops();
    done
}

fn pct(h: &Histogram<u64>) -> [f64; 3] {
    #[expect(clippy::cast_precision_loss, reason = "nanoseconds far below 2^53")]
    let us = |q: f64| h.value_at_quantile(q) as f64 / 1e3;
    if h.is_empty() {
        [0.0; 3]
    } else {
        [us(0.5), us(0.99), us(0.999)]
    }
}

/// Completed requests between two progress reports of a run ([`run_observed`]): a few
/// hundred reports in a run of a drive write, none costing anything measurable.
pub const TICK_REQUESTS: u64 = 1 << 13;

/// Runs `spec`: fills the device sequentially (aged, not timed), then the workload until it
/// has written `drive_writes` x logical pages.
///
/// # Errors
/// The geometry, scheme or chip parameters are invalid, or the device runs full.
pub fn run(spec: &RunSpec) -> anyhow::Result<RunResult> {
    run_observed(spec, &mut |_, _| {})
}

/// [`run`], telling `tick` (host pages written, host pages to write) every
/// [`TICK_REQUESTS`] completed requests and once at the end: progress inside a run that
/// takes seconds to minutes. The results are [`run`]'s (the ticks only read counters).
///
/// # Errors
/// As [`run`].
pub fn run_observed(spec: &RunSpec, tick: &mut dyn FnMut(u64, u64)) -> anyhow::Result<RunResult> {
    run_cancellable(spec, tick, &|| false)
}

/// [`run_observed`] that polls `stop` every [`TICK_REQUESTS`] completed requests (Ctrl-C:
/// `nowa_interrupt::requested`) and, once it holds, issues no more requests and returns what
/// ran so far, marked `interrupted` (the outstanding requests are dropped: their operations
/// were served, their completions not counted).
///
/// # Errors
/// As [`run`].
///
/// # Panics
/// If a run that was not stopped wrote less than its target (a bug).
pub fn run_cancellable(
    spec: &RunSpec,
    tick: &mut dyn FnMut(u64, u64),
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<RunResult> {
    let mut ftl = new_ftl(spec)?;
    let mut chips = Chips::new(spec.chips)?;
    let mut gen = Generator::new(spec.workload, ftl.logical_pages(), spec.seed);
    let before = ftl.counters();
    let target = target_pages(spec, &ftl);
    let cpu0 = nowa_units::cpu::thread_cpu_secs();
    let mut loop_state = Loop::new()?;
    let (procs, depth) = gen.procs_and_depth();
    // Completions, earliest first (ties by issue order): one key per outstanding request.
    let mut heap = BinaryHeap::with_capacity(procs * depth);
    for p in 0..procs {
        for _ in 0..depth {
            heap.push(Reverse(loop_state.issue(
                &mut ftl,
                &mut chips,
                &mut gen,
                p,
                0,
                spec.time_scale,
            )?));
        }
    }
    let mut interrupted = false;
    while let Some(&Reverse(key)) = heap.peek() {
        let (t, p) = unkey(key);
        loop_state.end = loop_state.end.max(t);
        let written = ftl.counters().host_pages - before.host_pages;
        if loop_state.requests % TICK_REQUESTS == 0 {
            tick(written.min(target), target);
            if written < target && stop() {
                interrupted = true;
                break;
            }
        }
        if written < target {
            let r = gen.next(p);
            // The request after this one most likely comes from the next completion in the
            // heap (a new completion rarely overtakes it): ask for its mapping lines now, so
            // their cache misses overlap with this request's work. A hint: nothing changes.
            if let Some(n) = likely_next(&heap).and_then(|q| gen.peek(q)) {
                ftl.prefetch(n.start, n.len);
            }
            let k = loop_state.send(&mut ftl, &mut chips, r, p, t, spec.time_scale)?;
            // The next request of the same process replaces the completion (one sift).
            if let Some(mut top) = heap.peek_mut() {
                *top = Reverse(k);
            }
        } else {
            heap.pop();
        }
    }
    let cpu_secs = nowa_units::cpu::thread_cpu_secs() - cpu0;
    if !interrupted {
        tick(target, target);
    }
    let mut res = loop_state.result(spec, &ftl, &before, cpu_secs);
    res.interrupted = interrupted;
    assert!(
        interrupted || res.counters.host_pages >= target,
        "a run not stopped writes its target"
    );
    Ok(res)
}

/// Host page writes a run of `spec` issues: its drive writes x the logical pages.
pub(super) fn target_pages(spec: &RunSpec, ftl: &ParallelFtl) -> u64 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a non-negative page count far below 2^53"
    )]
    let target = (spec.drive_writes * ftl.logical_pages() as f64) as u64;
    target
}

/// The aged device of `spec`: its GC reserve set, filled sequentially, streams tracked from
/// then on if asked.
pub(super) fn new_ftl(spec: &RunSpec) -> anyhow::Result<ParallelFtl> {
    anyhow::ensure!(
        (0.0..=0.5).contains(&spec.gc_reserve),
        "GC reserve {} outside [0, 0.5]",
        spec.gc_reserve
    );
    let mut ftl = ParallelFtl::new(spec.geometry, spec.scheme)?;
    ftl.set_gc_reserve(spec.gc_reserve);
    anyhow::ensure!(
        (0.0..=0.5).contains(&spec.background_gc),
        "background GC threshold {} outside [0, 0.5]",
        spec.background_gc
    );
    ftl.set_background_gc(spec.background_gc);
    anyhow::ensure!(
        (0.0..=1.0).contains(&spec.fill),
        "fill {} outside [0, 1]",
        spec.fill
    );
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a fraction of a page count far below 2^53"
    )]
    let pages = (spec.fill * ftl.logical_pages() as f64).round() as u64;
    ftl.fill(32, pages.min(ftl.logical_pages()))
        .context("filling the device")?;
    if spec.track_streams {
        ftl.track_streams();
    }
    Ok(ftl)
}

/// The process of the second earliest completion in `heap` (a child of the root), which
/// usually issues the request after the root's.
fn likely_next(heap: &BinaryHeap<Reverse<u128>>) -> Option<usize> {
    let children = heap.as_slice().get(1..)?;
    children
        .iter()
        .take(2)
        .map(|&Reverse(k)| k)
        .min()
        .map(|k| unkey(k).1)
}

/// A completion's key: its time, then the issue order (for determinism), then the process.
fn key(t: Ps, seq: u64, proc: usize) -> u128 {
    let proc = u64::try_from(proc).expect("a few processes");
    assert!(
        proc < 1 << 16 && seq < 1 << 48,
        "process and sequence fit their bits"
    );
    (u128::from(t) << 64) | u128::from(seq << 16 | proc)
}

/// The time and process of a completion key.
fn unkey(k: u128) -> (Ps, usize) {
    let t = u64::try_from(k >> 64).expect("the high half");
    let low = u64::try_from(k & u128::from(u64::MAX)).expect("the low half");
    (t, usize::try_from(low & 0xffff).expect("16 bits"))
}

/// The run's request counts and latency histograms.
pub(super) struct Loop {
    seq: u64,
    rh: Histogram<u64>,
    wh: Histogram<u64>,
    requests: u64,
    end: Ps,
}

impl Loop {
    fn issue(
        &mut self,
        ftl: &mut ParallelFtl,
        chips: &mut Chips,
        gen: &mut Generator,
        proc: usize,
        t: Ps,
        scale: f64,
    ) -> anyhow::Result<u128> {
        let r = gen.next(proc);
        self.send(ftl, chips, r, proc, t, scale)
    }

    /// Sends request `r` of `proc` at `t`; returns its completion's key.
    fn send(
        &mut self,
        ftl: &mut ParallelFtl,
        chips: &mut Chips,
        r: Req,
        proc: usize,
        t: Ps,
        scale: f64,
    ) -> anyhow::Result<u128> {
        #[expect(clippy::cast_precision_loss, reason = "picoseconds to seconds")]
        let now = t as f64 / 1e12 * scale;
        match r.kind {
            Kind::Read => ftl.read(r.start, r.len)?,
            Kind::Write => ftl.write(r.start, r.len, r.stream, now)?,
            Kind::Trim => ftl.trim(r.start, r.len, now)?,
        }
        self.complete(ftl, chips, r.kind, t, proc)
    }

    /// Serves the FTL's recorded operations of a request issued at `t` by `proc`, then one
    /// step of background GC (FEMU's FTL thread runs it after each request: its operations
    /// queue on the chips behind this request's and delay the next ones); returns the
    /// request's completion key.
    ///
    /// # Errors
    /// The device runs full during background GC.
    pub(super) fn complete(
        &mut self,
        ftl: &mut ParallelFtl,
        chips: &mut Chips,
        kind: Kind,
        t: Ps,
        proc: usize,
    ) -> anyhow::Result<u128> {
        let done = serve_ops(ftl, chips, t);
        if ftl.background_gc()? {
            let _ = serve_ops(ftl, chips, t);
        }
        assert!(done >= t, "a request completes after it is issued");
        let lat_ns = (done - t) / 1000;
        match kind {
            Kind::Read => self.rh.saturating_record(lat_ns),
            Kind::Write => self.wh.saturating_record(lat_ns),
            Kind::Trim => {}
        }
        self.requests += 1;
        self.seq += 1;
        self.end = self.end.max(done);
        Ok(key(done, self.seq, proc))
    }

    pub(super) fn new() -> anyhow::Result<Loop> {
        Ok(Loop {
            seq: 0,
            // 1 ns to 1000 s.
            rh: Histogram::new_with_bounds(1, 1_000_000_000_000, 3)?,
            wh: Histogram::new_with_bounds(1, 1_000_000_000_000, 3)?,
            requests: 0,
            end: 0,
        })
    }

    pub(super) fn result(
        &self,
        spec: &RunSpec,
        ftl: &ParallelFtl,
        before: &ParallelCounters,
        cpu_secs: f64,
    ) -> RunResult {
        let counters = ftl.counters().since(before);
        #[expect(
            clippy::cast_precision_loss,
            reason = "picoseconds and counts below 2^53"
        )]
        let (secs, reqs, pages) = (
            self.end as f64 / 1e12,
            self.requests as f64,
            (counters.host_pages + counters.read_pages) as f64,
        );
        RunResult {
            scheme: super::scheme_name(spec.scheme, &spec.geometry),
            workload: spec.workload.name().to_owned(),
            waf: counters.waf(),
            counters,
            requests: self.requests,
            sim_secs: secs,
            iops: reqs / secs.max(1e-12),
            pages_per_sec: pages / secs.max(1e-12),
            read_us: pct(&self.rh),
            write_us: pct(&self.wh),
            victim_hist: ftl.victim_histogram().to_vec(),
            cpu_secs,
            streams: ftl.stream_stats().cloned().unwrap_or_default(),
            #[expect(clippy::cast_precision_loss, reason = "page counts below 2^53")]
            valid_end: ftl.valid_pages() as f64 / ftl.logical_pages() as f64,
            interrupted: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(scheme: Scheme, workload: WorkloadKind) -> RunSpec {
        RunSpec {
            geometry: ChipGeometry {
                blocks_per_chip: 512,
                pages_per_block: 4,
                ..ChipGeometry::paper_scaled()
            },
            chips: ChipParams::femu(8, 8, 16384),
            scheme,
            workload,
            drive_writes: 0.5,
            seed: 1,
            time_scale: 16.0,
            gc_reserve: 0.0,
            background_gc: 0.0,
            fill: 1.0,
            track_streams: true,
        }
    }

    /// Golden outputs of seed-fixed runs (counters, requests, virtual time, latency
    /// percentiles), recorded with the run loop's prefetching (whose `nowa plan bench` output
    /// was identical to the loop's before it): a speed change that moved a single operation
    /// fails here.
    #[test]
    fn seed_fixed_runs_match_their_golden_outputs() {
        let got: Vec<String> = [
            Scheme::Baseline {
                chips_per_channel: 8,
                open: nowa_flash::parallel::HOST_OPEN,
            },
            Scheme::Plan {
                small_chips: 2,
                predict: true,
            },
        ]
        .into_iter()
        .map(|s| {
            let r = run(&spec(s, WorkloadKind::Fio)).unwrap();
            let c = r.counters;
            format!(
                "{} {} {} {} {} {} {:.6} {:?} {:?}",
                c.host_pages,
                c.read_pages,
                c.gc_pages,
                c.erased_blocks,
                c.victims,
                r.requests,
                r.sim_secs,
                r.read_us,
                r.write_us
            )
        })
        .collect();
        assert_eq!(got, GOLDEN, "a seed-fixed result changed");
    }

    const GOLDEN: [&str; 2] = [
        "61440 61734 313588 92224 1441 123174 5.249920 [40.031, 196083.711, 287309.823] [960.511, 254148.607, 288096.255]",
        "61440 61734 200151 63632 1595 123174 3.905400 [720.383, 20365.311, 24920.063] [800.255, 20692.991, 25001.983]",
    ];

    #[test]
    fn gc_interferes_with_reads() {
        let base = Scheme::Baseline {
            chips_per_channel: 8,
            open: nowa_flash::parallel::HOST_OPEN,
        };
        let aged = run(&spec(base, WorkloadKind::Fio)).unwrap();
        assert!(aged.counters.gc_pages > 0, "GC ran");
        // The same workload stopped before GC starts.
        let mut roomy = spec(base, WorkloadKind::Fio);
        roomy.drive_writes = 0.01;
        let quiet = run(&roomy).unwrap();
        assert_eq!(quiet.counters.gc_pages, 0, "no GC yet");
        println!("aged {:?} quiet {:?}", aged.read_us, quiet.read_us);
        assert!(aged.read_us[1] > quiet.read_us[1], "GC delays reads");
        assert!(aged.waf > 1.0 && quiet.waf >= 1.0);
    }

    #[test]
    fn the_aged_fill_level_sets_the_valid_data_and_the_room_for_garbage() {
        let base = Scheme::Baseline {
            chips_per_channel: 8,
            open: 1,
        };
        let at = |fill: f64| {
            run(&RunSpec {
                fill,
                gc_reserve: 0.05,
                ..spec(base, WorkloadKind::Fio)
            })
            .unwrap()
        };
        let (full, aged) = (at(1.0), at(0.9));
        println!("fill 1.0 WAF {} fill 0.9 WAF {}", full.waf, aged.waf);
        // FIO rewrites only its files in the first half: the valid data stays the fill.
        assert!((full.valid_end - 1.0).abs() < 1e-9, "{}", full.valid_end);
        assert!((aged.valid_end - 0.9).abs() < 1e-3, "{}", aged.valid_end);
        assert!(aged.counters.gc_pages > 0, "GC ran at 90%");
        assert!(
            aged.waf * 1.5 < full.waf,
            "10% more room cuts the GC copies"
        );
        assert!(run(&RunSpec {
            fill: 1.5,
            ..spec(base, WorkloadKind::Fio)
        })
        .is_err());
    }

    #[test]
    fn runs_are_deterministic_and_plan_beats_baseline_on_fio() {
        let plan = Scheme::Plan {
            small_chips: 2,
            predict: true,
        };
        let a = run(&spec(plan, WorkloadKind::Fio)).unwrap();
        let b = run(&spec(plan, WorkloadKind::Fio)).unwrap();
        assert_eq!((a.counters, a.requests), (b.counters, b.requests));
        // Every host page is attributed to one of FIO's four streams, every GC copy to a stream
        // or to the fill.
        assert_eq!(a.streams, b.streams);
        assert_eq!(
            a.streams.host_pages[..4].iter().sum::<u64>(),
            a.counters.host_pages
        );
        assert_eq!(a.streams.gc_pages.iter().sum::<u64>(), a.counters.gc_pages);
        let base = run(&spec(
            Scheme::Baseline {
                chips_per_channel: 8,
                open: nowa_flash::parallel::HOST_OPEN,
            },
            WorkloadKind::Fio,
        ))
        .unwrap();
        println!("plan waf {} baseline waf {}", a.waf, base.waf);
        assert!(a.waf < base.waf, "PLAN lowers WAF on FIO");
    }

    /// A run whose stop flag is raised (Ctrl-C) stops at its next poll, every
    /// [`TICK_REQUESTS`] requests, and returns what it measured until then, marked
    /// interrupted; a run never stopped is not marked.
    #[test]
    fn a_cancelled_run_returns_early_with_what_it_measured() {
        let s = spec(
            Scheme::Baseline {
                chips_per_channel: 8,
                open: 1,
            },
            WorkloadKind::Fio,
        );
        let whole = run(&s).unwrap();
        let polls = std::cell::Cell::new(0u64);
        let mut ticks = 0u64;
        let cut = run_cancellable(&s, &mut |_, _| ticks += 1, &|| {
            polls.set(polls.get() + 1);
            polls.get() >= 3
        })
        .unwrap();
        assert!(cut.interrupted && !whole.interrupted);
        assert_eq!(polls.get(), 3, "no poll after the stop");
        assert_eq!(ticks, 3, "no final tick for a stopped run");
        assert_eq!(cut.requests, 3 * TICK_REQUESTS, "stopped at the third poll");
        let (c, w) = (cut.counters, whole.counters);
        println!("cut {c:?} whole {w:?}");
        assert!(
            c.host_pages > 0 && c.read_pages > 0,
            "it measured something"
        );
        assert!(c.host_pages * 3 < w.host_pages, "and stopped early");
        assert!(cut.sim_secs > 0.0 && cut.sim_secs < whole.sim_secs);
        assert!(cut.iops > 0.0 && cut.waf >= 1.0);
    }

    /// A run tells its progress while it runs (host page writes of its target, rising, many
    /// times), not only when it ends, and telling it changes nothing it measures.
    #[test]
    fn a_run_reports_its_progress_inside_the_run() {
        let s = spec(
            Scheme::Baseline {
                chips_per_channel: 8,
                open: 1,
            },
            WorkloadKind::Fio,
        );
        let mut ticks: Vec<(u64, u64)> = Vec::new();
        let seen = run_observed(&s, &mut |d, t| ticks.push((d, t))).unwrap();
        let plain = run(&s).unwrap();
        assert_eq!(
            (seen.counters, seen.requests),
            (plain.counters, plain.requests)
        );
        let target = ticks.last().unwrap().1;
        assert!(target > 0 && ticks.iter().all(|&(d, t)| t == target && d <= t));
        assert!(ticks.windows(2).all(|w| w[0].0 <= w[1].0), "rising");
        assert_eq!(ticks.last().unwrap().0, target, "done at the end");
        let inside = ticks.iter().filter(|&&(d, _)| d > 0 && d < target).count();
        assert!(inside >= 5, "{inside} reports inside the run: {ticks:?}");
    }
}
