//! The job runner: drives jobs ([`JobSpec`]) through the device crate's queues
//! ([`nowa_device::IoQueue`]), the same code on every target. A job's threads are *streams*:
//! each keeps up to `qd` requests in flight, takes addresses from its job's shared generator,
//! follows its share of the job's rate on an absolute schedule (no drift; late submissions
//! catch up), and stops at the job's byte or time limit. Every completion's latency (submission
//! to reap) goes into an hdrhistogram and its bytes into the interval bucket of its completion
//! time.
//!
//! - A real target runs one thread per stream, each with its own queue (one io_uring each).
//! - A simulated SSD runs every stream on one virtual-time queue in this thread, so they share
//!   one timeline and the run is deterministic.
//!
//! A job with neither a byte nor a time limit (the background writer of a latency probe) stops
//! once every limited job has stopped issuing. Ctrl-C (`stop`) makes every stream stop
//! issuing; requests in flight complete and the results are marked interrupted. An I/O error
//! stops every stream and is returned.

use super::job::{fill_random, new_hist, AddrSource, IntervalPoint, JobResult, JobSpec};
use hdrhistogram::Histogram;
use nowa_device::{Completion, IoQueue, Nanos, Request};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

/// State one job's streams share.
pub(crate) struct JobState {
    addr: AddrSource,
    /// Requests claimed against the byte limit.
    claimed: AtomicU64,
    /// Streams still issuing.
    issuing: AtomicU32,
    limited: bool,
}

impl JobState {
    fn new(spec: &JobSpec) -> anyhow::Result<JobState> {
        Ok(JobState {
            addr: AddrSource::new(spec)?,
            claimed: AtomicU64::new(0),
            issuing: AtomicU32::new(spec.threads.max(1)),
            limited: spec.max_bytes.is_some() || spec.max_secs.is_some(),
        })
    }
}

/// Where a phase stands, reported while it runs (the measured job: the first one with a byte
/// or time limit): what a progress bar shows inside a phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseTick {
    /// Share of the phase done, in [0, 1]: the larger of its byte and time shares.
    pub done: f64,
    /// Bytes the measured job has issued so far.
    pub bytes: u64,
    /// Seconds since the phase started, on the target's clock (virtual on a simulated SSD).
    pub secs: f64,
}

/// The hook [`PhaseTick`]s go to (called from every I/O thread).
pub type Tick<'a> = &'a (dyn Fn(PhaseTick) + Sync);

/// Requests a stream issues between two ticks.
const TICK_EVERY: u64 = 256;

/// What every stream of a run checks before issuing.
pub(crate) struct Ctl<'a> {
    /// Ctrl-C.
    pub(crate) stop: &'a AtomicBool,
    /// An I/O error in some stream.
    pub(crate) abort: AtomicBool,
    pub(crate) jobs: Vec<JobState>,
    /// Progress inside the run, and the job it follows.
    tick: Option<(Tick<'a>, usize)>,
}

impl<'a> Ctl<'a> {
    /// The shared state of `jobs`, or an error for a job without addresses or a run without
    /// any limited job.
    pub(crate) fn new(
        jobs: &[JobSpec],
        stop: &'a AtomicBool,
        tick: Option<Tick<'a>>,
    ) -> anyhow::Result<Ctl<'a>> {
        let states = jobs
            .iter()
            .map(JobState::new)
            .collect::<anyhow::Result<Vec<_>>>()?;
        let measured = states.iter().position(|j| j.limited);
        let Some(measured) = measured else {
            anyhow::bail!("at least one job needs a byte or time limit");
        };
        Ok(Ctl {
            stop,
            abort: AtomicBool::new(false),
            jobs: states,
            tick: tick.map(|t| (t, measured)),
        })
    }

    fn limited_done(&self) -> bool {
        self.jobs
            .iter()
            .all(|j| !j.limited || j.issuing.load(Relaxed) == 0)
    }
}

/// One thread of a job.
pub(crate) struct Stream<'a> {
    job: usize,
    spec: &'a JobSpec,
    tid: u32,
    /// Free queue slots.
    free: Vec<usize>,
    inflight: usize,
    issued: u64,
    issuing: bool,
    addrs: Vec<u64>,
    pos: usize,
    hist: Histogram<u64>,
    /// (bytes, ops) per interval, by completion time.
    buckets: Vec<(u64, u64)>,
    bytes: u64,
    ops: u64,
    /// Latest completion.
    end: Nanos,
    error: Option<anyhow::Error>,
}

/// Nanoseconds in `secs` seconds.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "durations of a benchmark: positive and far below 2^64 ns"
)]
fn secs_ns(secs: f64) -> Nanos {
    (secs * 1e9) as Nanos
}

impl<'a> Stream<'a> {
    /// Stream `tid` of job `job`, on queue slots `slots`.
    pub(crate) fn new(
        job: usize,
        spec: &'a JobSpec,
        tid: u32,
        slots: std::ops::Range<usize>,
    ) -> Self {
        Stream {
            job,
            spec,
            tid,
            free: slots.rev().collect(),
            inflight: 0,
            issued: 0,
            issuing: true,
            addrs: Vec::new(),
            pos: 0,
            hist: new_hist(),
            buckets: Vec::new(),
            bytes: 0,
            ops: 0,
            end: 0,
            error: None,
        }
    }

    /// Fill this stream's buffers with incompressible data.
    fn fill_payload(&self, q: &mut dyn IoQueue) {
        let seed = self.spec.seed ^ (u64::from(self.tid) << 32);
        for &s in &self.free {
            fill_random(q.buffer_mut(s), seed);
        }
    }

    /// When the `n`-th request of this stream is due under the job's rate, if rate limited.
    fn due(&self, n: u64) -> Option<Nanos> {
        let rate = self.spec.rate? / f64::from(self.spec.threads.max(1));
        #[expect(
            clippy::cast_precision_loss,
            reason = "request counts are far below 2^53"
        )]
        let at = n as f64 * f64::from(self.spec.bs) / rate;
        Some(secs_ns(at))
    }

    /// May this stream issue another request at `now`? Claims it against the byte limit.
    fn claim(&self, ctl: &Ctl, now: Nanos) -> bool {
        if ctl.stop.load(Relaxed) || ctl.abort.load(Relaxed) {
            return false;
        }
        let state = &ctl.jobs[self.job];
        if !state.limited && ctl.limited_done() {
            return false;
        }
        if self.spec.max_secs.is_some_and(|s| now >= secs_ns(s)) {
            return false;
        }
        match self.spec.max_ops() {
            Some(m) => state.claimed.fetch_add(1, Relaxed) < m,
            None => true,
        }
    }

    fn stop_issuing(&mut self, ctl: &Ctl) {
        if self.issuing {
            self.issuing = false;
            ctl.jobs[self.job].issuing.fetch_sub(1, Relaxed);
        }
    }

    fn next_block(&mut self, ctl: &Ctl) -> u64 {
        if self.pos == self.addrs.len() {
            ctl.jobs[self.job].addr.fill(&mut self.addrs, 256);
            self.pos = 0;
        }
        self.pos += 1;
        self.addrs[self.pos - 1]
    }

    /// Submit while slots are free and the schedule allows; lowers `deadline` to the next due
    /// time when ahead of it.
    fn issue(
        &mut self,
        q: &mut dyn IoQueue,
        ctl: &Ctl,
        id: u64,
        deadline: &mut Option<Nanos>,
    ) -> anyhow::Result<()> {
        while self.issuing && !self.free.is_empty() {
            let now = q.now();
            if let Some(due) = self.due(self.issued) {
                if now < due {
                    *deadline = Some(deadline.map_or(due, |d| d.min(due)));
                    return Ok(());
                }
            }
            if !self.claim(ctl, now) {
                self.stop_issuing(ctl);
                break;
            }
            let bs = u64::from(self.spec.bs);
            let offset = self.next_block(ctl) * bs;
            let slot = self.free.pop().expect("checked non-empty");
            let req = Request {
                user_data: id,
                slot,
                offset,
                len: self.spec.bs,
                write: self.spec.kind.is_write(),
            };
            if let Err(e) = q.submit(req) {
                self.free.push(slot);
                self.error.get_or_insert(e.into());
                ctl.abort.store(true, Relaxed);
                self.stop_issuing(ctl);
                break;
            }
            self.inflight += 1;
            self.issued += 1;
            if self.issued % TICK_EVERY == 0 {
                self.tick(ctl, now);
            }
        }
        Ok(())
    }

    /// Reports where the measured job stands (from its streams only).
    fn tick(&self, ctl: &Ctl, now: Nanos) {
        let Some((tick, measured)) = ctl.tick else {
            return;
        };
        if self.job != measured {
            return;
        }
        let claimed = ctl.jobs[self.job].claimed.load(Relaxed);
        let bytes = claimed.saturating_mul(u64::from(self.spec.bs));
        #[expect(clippy::cast_precision_loss, reason = "a share for a progress bar")]
        let by_bytes = self
            .spec
            .max_bytes
            .map_or(0.0, |m| bytes as f64 / m.max(1) as f64);
        #[expect(clippy::cast_precision_loss, reason = "nanoseconds of a benchmark")]
        let secs = now as f64 / 1e9;
        let by_time = self.spec.max_secs.map_or(0.0, |m| secs / m);
        let done = by_bytes.max(by_time).clamp(0.0, 1.0);
        assert!((0.0..=1.0).contains(&done), "a share");
        tick(PhaseTick { done, bytes, secs });
    }

    /// Account one completion.
    fn complete(&mut self, c: &Completion, ctl: &Ctl) {
        assert!(
            self.inflight > 0,
            "completion of a stream with nothing in flight"
        );
        self.inflight -= 1;
        self.free.push(c.slot);
        if let Some(errno) = c.error {
            let what = if self.spec.kind.is_write() {
                "write"
            } else {
                "read"
            };
            self.error.get_or_insert(anyhow::anyhow!(
                "{what} at queue slot {}: {}",
                c.slot,
                std::io::Error::from_raw_os_error(errno)
            ));
            ctl.abort.store(true, Relaxed);
            self.stop_issuing(ctl);
            return;
        }
        let _ = self
            .hist
            .record(c.completed.saturating_sub(c.submitted).max(1));
        self.bytes += u64::from(c.bytes);
        self.ops += 1;
        self.end = self.end.max(c.completed);
        let iv = secs_ns(self.spec.interval.max(1e-6)).max(1);
        let b = crate::ssdiq::usize_of(c.completed / iv);
        if self.buckets.len() <= b {
            self.buckets.resize(b + 1, (0, 0));
        }
        self.buckets[b].0 += u64::from(c.bytes);
        self.buckets[b].1 += 1;
    }
}

/// Runs `streams` on `q` until every one has stopped issuing and nothing is in flight.
pub(crate) fn drive(q: &mut dyn IoQueue, streams: &mut [Stream], ctl: &Ctl) -> anyhow::Result<()> {
    for s in streams.iter() {
        s.fill_payload(q);
    }
    let mut done: Vec<Completion> = Vec::new();
    loop {
        let mut deadline = None;
        for (i, s) in streams.iter_mut().enumerate() {
            s.issue(q, ctl, i as u64, &mut deadline)?;
        }
        if q.in_flight() == 0 && streams.iter().all(|s| !s.issuing) {
            break;
        }
        q.reap(deadline, &mut done)?;
        for c in done.drain(..) {
            let s = crate::ssdiq::usize_of(c.user_data);
            streams[s].complete(&c, ctl);
        }
    }
    for s in streams.iter_mut() {
        s.stop_issuing(ctl);
        if let Some(e) = s.error.take() {
            return Err(e);
        }
    }
    Ok(())
}

/// The intervals of a job from its streams' buckets. A final bucket shorter than half an
/// interval holds a few completions of I/O that mostly ran in the previous one: it is folded
/// in, or it would show a bogus spike. The last bucket ends at the job's end.
fn intervals(spec: &JobSpec, streams: &[&Stream], secs: f64) -> Vec<IntervalPoint> {
    let n = streams.iter().map(|s| s.buckets.len()).max().unwrap_or(0);
    let mut bk = vec![(0u64, 0u64); n];
    for s in streams {
        for (i, &(b, o)) in s.buckets.iter().enumerate() {
            bk[i].0 += b;
            bk[i].1 += o;
        }
    }
    let iv = spec.interval.max(1e-6);
    #[expect(clippy::cast_precision_loss, reason = "bucket counts are small")]
    let start = |i: usize| i as f64 * iv;
    if bk.len() >= 2 && secs - start(bk.len() - 1) < iv / 2.0 {
        let (b, o) = bk.pop().expect("len >= 2");
        let l = bk.last_mut().expect("len >= 1");
        l.0 += b;
        l.1 += o;
    }
    let last = bk.len();
    let mut cum = 0u64;
    bk.iter()
        .enumerate()
        .map(|(i, &(b, o))| {
            cum += b;
            let len = if i + 1 == last {
                (secs - start(i)).max(1e-9)
            } else {
                iv
            };
            #[expect(
                clippy::cast_precision_loss,
                reason = "byte and op counts of one interval"
            )]
            let (bf, of) = (b as f64, o as f64);
            IntervalPoint {
                t: start(i) + len,
                mb_s: bf / len / 1e6,
                iops: of / len,
                bytes: cum,
            }
        })
        .collect()
}

/// The results of `jobs` from their streams (every stream of job j has `job == j`).
pub(crate) fn results(jobs: &[JobSpec], streams: &[Stream], interrupted: bool) -> Vec<JobResult> {
    jobs.iter()
        .enumerate()
        .map(|(j, spec)| {
            let mine: Vec<&Stream> = streams.iter().filter(|s| s.job == j).collect();
            let mut hist = new_hist();
            for s in &mine {
                hist.add(&s.hist)
                    .expect("histograms of one configuration add");
            }
            let end = mine.iter().map(|s| s.end).max().unwrap_or(0);
            #[expect(clippy::cast_precision_loss, reason = "nanoseconds of a benchmark")]
            let secs = end as f64 / 1e9;
            JobResult::new(
                spec,
                mine.iter().map(|s| s.bytes).sum(),
                mine.iter().map(|s| s.ops).sum(),
                secs,
                &hist,
                intervals(spec, &mine, secs),
                interrupted,
            )
        })
        .collect()
}
