//! One benchmark job (an fio-like job description) and its result, the same on every target
//! ([`super::runner`] drives them through the device crate's queues).

use hdrhistogram::Histogram;
use nowa_workload::{Workload, WorkloadSpec};
use serde::{Deserialize, Serialize};

/// What a job does.
#[derive(Debug, Clone, PartialEq)]
pub enum JobKind {
    /// Sequential reads over the range (wrapping around when time-limited).
    SeqRead,
    /// Sequential writes over the range, once (or wrapping when given a larger volume).
    SeqWrite,
    /// Uniform random reads of `bs` blocks in the range.
    RandRead,
    /// Random writes, addresses from a `nowa_workload` generator in units of `bs` blocks.
    RandWrite(WorkloadSpec),
}

impl JobKind {
    /// Writes (else reads).
    #[must_use]
    pub fn is_write(&self) -> bool {
        matches!(self, JobKind::SeqWrite | JobKind::RandWrite(_))
    }
    /// Its name in results ("seq-read", "rand-write uniform", ...).
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            JobKind::SeqRead => "seq-read".into(),
            JobKind::SeqWrite => "seq-write".into(),
            JobKind::RandRead => "rand-read".into(),
            JobKind::RandWrite(w) => format!("rand-write {w}"),
        }
    }
}

/// A job: access pattern, I/O shape and when to stop (whichever limit comes first).
#[derive(Debug, Clone)]
pub struct JobSpec {
    /// Name in results.
    pub name: String,
    /// Access pattern.
    pub kind: JobKind,
    /// Block size in bytes (multiple of 4096).
    pub bs: u32,
    /// I/Os in flight per thread.
    pub qd: u32,
    /// Threads (one io_uring each).
    pub threads: u32,
    /// Target throughput in bytes/s for the whole job (all threads); None = as fast as possible.
    pub rate: Option<f64>,
    /// Bytes `[0, range)` the job addresses.
    pub range: u64,
    /// Stop after this many bytes (None = no byte limit).
    pub max_bytes: Option<u64>,
    /// Stop after this many seconds (None = no time limit). A job with neither limit runs
    /// until the job it accompanies (a latency probe) finishes.
    pub max_secs: Option<f64>,
    /// Per-interval throughput sampling period in seconds.
    pub interval: f64,
    /// Seed of the address generator and of the payload.
    pub seed: u64,
}

impl JobSpec {
    /// Blocks of `bs` bytes in the range.
    #[must_use]
    pub fn blocks(&self) -> u64 {
        self.range / u64::from(self.bs)
    }
    /// Max ops from the byte limit.
    #[must_use]
    pub fn max_ops(&self) -> Option<u64> {
        self.max_bytes.map(|b| b.div_ceil(u64::from(self.bs)))
    }
}

/// Latency summary in microseconds: the one summary, [`nowa_units::latency`].
pub use nowa_units::latency::{new_histogram as new_hist, Latency as LatStats};

/// Throughput during one sampling interval.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct IntervalPoint {
    /// End of the interval, seconds since the job started.
    pub t: f64,
    /// MB/s (10^6 bytes) in the interval.
    pub mb_s: f64,
    /// I/O per second in the interval.
    pub iops: f64,
    /// Bytes completed since the job started.
    pub bytes: u64,
}

/// What a job did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct JobResult {
    /// The job's name.
    pub name: String,
    /// Its access pattern ([`JobKind::label`]).
    pub kind: String,
    /// Block size, bytes.
    pub bs: u32,
    /// I/Os in flight per thread.
    pub qd: u32,
    /// Threads.
    pub threads: u32,
    /// Target rate in MB/s (10^6 bytes), if rate limited.
    pub rate_mb_s: Option<f64>,
    /// Bytes transferred.
    pub bytes: u64,
    /// I/Os completed.
    pub ops: u64,
    /// Duration: from the start to the last completion.
    pub secs: f64,
    /// Throughput in MB/s (10^6 bytes/s) over the whole job.
    pub mb_s: f64,
    /// I/O per second over the whole job.
    pub iops: f64,
    /// Latency of every I/O, submission to completion.
    pub lat: LatStats,
    /// Throughput per sampling interval.
    pub intervals: Vec<IntervalPoint>,
    /// The job stopped early (Ctrl-C or an error).
    pub interrupted: bool,
}

impl JobResult {
    /// The result of `spec` from its totals, latency histogram and intervals.
    #[must_use]
    pub fn new(
        spec: &JobSpec,
        bytes: u64,
        ops: u64,
        secs: f64,
        hist: &Histogram<u64>,
        mut intervals: Vec<IntervalPoint>,
        interrupted: bool,
    ) -> Self {
        let secs = secs.max(1e-9);
        // A final interval much shorter than the sampling period is noise (a handful of
        // completions over a few microseconds): merge it into the one before.
        let n = intervals.len();
        if n >= 2 {
            let (a, b) = (intervals[n - 2], intervals[n - 1]);
            let t_prev = if n >= 3 { intervals[n - 3].t } else { 0.0 };
            if b.t - a.t < spec.interval / 2.0 {
                let dt = (b.t - t_prev).max(1e-12);
                let prev_bytes = if n >= 3 { intervals[n - 3].bytes } else { 0 };
                let ops_ab = a.iops * (a.t - t_prev) + b.iops * (b.t - a.t);
                intervals.truncate(n - 2);
                intervals.push(IntervalPoint {
                    t: b.t,
                    mb_s: to_f64(b.bytes - prev_bytes) / dt / 1e6,
                    iops: ops_ab / dt,
                    bytes: b.bytes,
                });
            }
        }
        JobResult {
            name: spec.name.clone(),
            kind: spec.kind.label(),
            bs: spec.bs,
            qd: spec.qd,
            threads: spec.threads,
            rate_mb_s: spec.rate.map(|r| r / 1e6),
            bytes,
            ops,
            secs,
            mb_s: to_f64(bytes) / secs / 1e6,
            iops: to_f64(ops) / secs,
            lat: LatStats::of(hist),
            intervals,
            interrupted,
        }
    }
}

/// Address source for one job, shared by its threads (a generator behind a lock; threads take
/// batches, so the access distribution is the workload's, not a mix of per-thread layouts).
pub enum AddrSource {
    /// Next block index (wraps at `blocks`).
    Seq {
        /// The next block (before wrapping).
        next: std::sync::atomic::AtomicU64,
        /// Blocks in the range.
        blocks: u64,
    },
    /// Random blocks from a workload generator.
    Gen(parking_lot::Mutex<Box<dyn Workload>>),
}

impl AddrSource {
    /// The address source of `spec`.
    ///
    /// # Errors
    /// A range holding no block, a workload that cannot be built, or one that trims.
    pub fn new(spec: &JobSpec) -> anyhow::Result<AddrSource> {
        let blocks = spec.blocks();
        anyhow::ensure!(
            blocks > 0,
            "job {}: range of {} bytes holds no {}-byte block",
            spec.name,
            spec.range,
            spec.bs
        );
        Ok(match &spec.kind {
            JobKind::SeqRead | JobKind::SeqWrite => AddrSource::Seq {
                next: 0.into(),
                blocks,
            },
            JobKind::RandRead => AddrSource::Gen(parking_lot::Mutex::new(
                WorkloadSpec::Uniform.build_in_use(blocks, spec.seed)?,
            )),
            JobKind::RandWrite(w) => {
                let g = w.build_in_use(blocks, spec.seed)?;
                anyhow::ensure!(
                    g.is_write_only(),
                    "workload {w} issues trims; ssdiq supports write-only workloads"
                );
                AddrSource::Gen(parking_lot::Mutex::new(g))
            }
        })
    }

    /// Fills `out` with the next block indexes.
    pub fn fill(&self, out: &mut Vec<u64>, n: usize) {
        out.clear();
        match self {
            AddrSource::Seq { next, blocks } => {
                let n = n as u64;
                let start = next.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                out.extend((start..start + n).map(|b| b % blocks));
            }
            AddrSource::Gen(g) => {
                out.resize(n, 0);
                g.lock().fill_writes(out);
            }
        }
    }
}

use nowa_units::num::f64_of as to_f64;

/// Pseudo-random, incompressible payload (SSDs that compress or deduplicate would otherwise
/// report flattering numbers for zero-filled writes).
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut s = seed ^ 0x9E37_79B9_7F4A_7C15;
    for chunk in buf.chunks_mut(8) {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let b = z.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
}
