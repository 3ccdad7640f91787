//! A simulated SSD for `nowa ssdiq`: the FTL model of `nowa_flash` (which decides how many
//! pages every host write really programs, GC copies included) plus a deliberately simple
//! **performance model**, so that throughput and latency numbers exist and the suite's
//! implied-WAF arithmetic can be checked against the model's true WAF.
//!
//! The performance model (virtual time, no sleeping; a discrete-event simulation):
//! - One media "server" processes operations in arrival order (FIFO).
//! - A host write of `bs` bytes occupies the media for `programmed_pages x 4096 / media_bw`,
//!   where `programmed_pages` is the FTL's media-page counter delta for that write (host
//!   program + every GC copy the write triggered). So the steady host write bandwidth is
//!   `media_bw / WAF`, and sequential writes (WAF 1) run at `media_bw`.
//! - A read of `bs` bytes occupies the media for `bs / read_bw`.
//! - Latency = queueing wait + service + a fixed controller latency (`read_base_us`,
//!   `write_base_us`); the fixed part does not occupy the media.
//! - Not modelled: erase time, program/erase suspension, write cache, channel parallelism,
//!   read disturb. Tail latency in this model comes only from writes that trigger GC and
//!   from queueing behind them.

use super::job::{new_hist, AddrSource, IntervalPoint, JobKind, JobResult, JobSpec};
use nowa_flash::{Counters, Ftl, FtlConfig, PAGE_SIZE};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Parameters of the simulated SSD's performance model (see the module docs).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct PerfModel {
    /// Media program bandwidth in MB/s (10^6 bytes/s).
    pub media_write_mb_s: f64,
    /// Media read bandwidth in MB/s.
    pub read_mb_s: f64,
    /// Fixed controller latency of a read, microseconds.
    pub read_base_us: f64,
    /// Fixed controller latency of a write, microseconds.
    pub write_base_us: f64,
}

impl Default for PerfModel {
    fn default() -> Self {
        PerfModel {
            media_write_mb_s: 2000.0,
            read_mb_s: 3200.0,
            read_base_us: 70.0,
            write_base_us: 12.0,
        }
    }
}

/// Picoseconds: integer virtual time (u64 holds 213 days).
type Ps = u64;

/// The simulated SSD: FTL + performance model + virtual clock.
pub struct SimSsd {
    ftl: Ftl,
    model: PerfModel,
    /// Virtual time at which the media is free again.
    busy_until: Ps,
    /// Virtual time now (end of the last job).
    clock: Ps,
}

impl SimSsd {
    pub fn new(cfg: FtlConfig, model: PerfModel) -> anyhow::Result<SimSsd> {
        anyhow::ensure!(
            model.media_write_mb_s > 0.0 && model.read_mb_s > 0.0,
            "simulated bandwidths must be > 0"
        );
        anyhow::ensure!(
            model.read_base_us >= 0.0 && model.write_base_us >= 0.0,
            "simulated latencies must be >= 0"
        );
        Ok(SimSsd {
            ftl: Ftl::new(cfg)?,
            model,
            busy_until: 0,
            clock: 0,
        })
    }
    pub fn ftl(&self) -> &Ftl {
        &self.ftl
    }
    pub fn model(&self) -> &PerfModel {
        &self.model
    }
    pub fn capacity(&self) -> u64 {
        self.ftl.logical_pages() * PAGE_SIZE
    }
    /// The FTL's counters: what an OCP log page would report (host and media pages).
    pub fn counters(&self) -> Counters {
        self.ftl.counters()
    }
    /// Virtual seconds elapsed since the device was created.
    pub fn now_secs(&self) -> f64 {
        self.clock as f64 / 1e12
    }

    /// TRIM of the whole logical range (the reset step).
    pub fn trim_all(&mut self) -> anyhow::Result<()> {
        self.ftl.trim(0, self.ftl.logical_pages())?;
        Ok(())
    }

    /// Runs `jobs` concurrently in virtual time. Same semantics as the real engine: a job
    /// with no limit stops once all limited jobs are done.
    pub fn run_jobs(
        &mut self,
        jobs: &[JobSpec],
        stop: &AtomicBool,
    ) -> anyhow::Result<Vec<JobResult>> {
        for j in jobs {
            anyhow::ensure!(
                j.bs as u64 % PAGE_SIZE == 0 && j.bs > 0,
                "simulated SSD: block size must be a multiple of 4096"
            );
            anyhow::ensure!(
                j.range <= self.capacity(),
                "job range beyond the simulated capacity"
            );
        }
        let limited: Vec<bool> = jobs
            .iter()
            .map(|j| j.max_bytes.is_some() || j.max_secs.is_some())
            .collect();
        anyhow::ensure!(
            limited.iter().any(|&l| l),
            "at least one job needs a byte or time limit"
        );
        let addrs: Vec<AddrSource> = jobs
            .iter()
            .map(AddrSource::new)
            .collect::<anyhow::Result<_>>()?;
        let n = jobs.len();
        let t0 = self.clock.max(self.busy_until);
        let ps_per_byte_w = 1e6 / self.model.media_write_mb_s; // ps per byte at MB/s: 1e12 / (mb*1e6)
        let ps_per_byte_r = 1e6 / self.model.read_mb_s;
        let read_base = (self.model.read_base_us * 1e6) as Ps;
        let write_base = (self.model.write_base_us * 1e6) as Ps;

        let mut heap: BinaryHeap<Reverse<(Ps, usize, u32)>> = BinaryHeap::new();
        for (ji, j) in jobs.iter().enumerate() {
            for slot in 0..(j.qd.max(1) * j.threads.max(1)) {
                heap.push(Reverse((t0, ji, slot)));
            }
        }
        let mut issued = vec![0u64; n];
        let mut next_due: Vec<Ps> = vec![t0; n];
        let mut done_issuing = vec![false; n];
        let mut done = vec![(0u64, 0u64); n]; // bytes, ops
        let mut end: Vec<Ps> = vec![t0; n];
        let mut hists: Vec<_> = (0..n).map(|_| new_hist()).collect();
        // Per-interval buckets: (bytes, ops) by completion time.
        let mut buckets: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
        let ipl: Vec<Ps> = jobs
            .iter()
            .map(|j| ((j.interval.max(1e-6)) * 1e12) as Ps)
            .collect();
        let mut batch: Vec<Vec<u64>> = vec![Vec::new(); n];
        let mut pos = vec![0usize; n];
        let mut events = 0u64;
        let mut interrupted = false;

        while let Some(Reverse((t, ji, slot))) = heap.pop() {
            events += 1;
            if events % 4096 == 0 && stop.load(Relaxed) {
                interrupted = true;
                break;
            }
            let j = &jobs[ji];
            if done_issuing[ji] {
                continue;
            }
            // Stop conditions.
            let all_limited_done = (0..n).all(|k| !limited[k] || done_issuing[k]);
            let over_ops = j.max_ops().is_some_and(|m| issued[ji] >= m);
            let over_time = j.max_secs.is_some_and(|s| (t - t0) as f64 / 1e12 >= s);
            if over_ops || over_time || (!limited[ji] && all_limited_done) {
                done_issuing[ji] = true;
                continue;
            }
            // Rate limit: wait for the schedule (re-queue at the due time).
            if j.rate.is_some() && next_due[ji] > t {
                heap.push(Reverse((next_due[ji], ji, slot)));
                continue;
            }
            if let Some(r) = j.rate {
                next_due[ji] += (j.bs as f64 / r * 1e12) as Ps;
            }
            if pos[ji] == batch[ji].len() {
                addrs[ji].fill(&mut batch[ji], 1024);
                pos[ji] = 0;
            }
            let blk = batch[ji][pos[ji]];
            pos[ji] += 1;
            issued[ji] += 1;
            let (service, base) = match j.kind {
                JobKind::SeqWrite | JobKind::RandWrite(_) => {
                    let pages = j.bs as u64 / PAGE_SIZE;
                    let before = self.ftl.counters().media_pages;
                    for p in 0..pages {
                        self.ftl.write(blk * pages + p, 0)?;
                    }
                    let programmed = self.ftl.counters().media_pages - before;
                    (
                        (programmed as f64 * PAGE_SIZE as f64 * ps_per_byte_w) as Ps,
                        write_base,
                    )
                }
                JobKind::SeqRead | JobKind::RandRead => {
                    ((j.bs as f64 * ps_per_byte_r) as Ps, read_base)
                }
            };
            let start = t.max(self.busy_until);
            self.busy_until = start + service;
            let complete = self.busy_until + base;
            let _ = hists[ji].record(((complete - t) / 1000).max(1));
            done[ji].0 += j.bs as u64;
            done[ji].1 += 1;
            end[ji] = end[ji].max(complete);
            let b = ((complete - t0) / ipl[ji]) as usize;
            if buckets[ji].len() <= b {
                buckets[ji].resize(b + 1, (0, 0));
            }
            buckets[ji][b].0 += j.bs as u64;
            buckets[ji][b].1 += 1;
            heap.push(Reverse((complete, ji, slot)));
        }
        self.clock = end.iter().copied().max().unwrap_or(t0).max(self.clock);
        Ok(jobs
            .iter()
            .enumerate()
            .map(|(ji, j)| {
                let secs = (end[ji] - t0) as f64 / 1e12;
                let iv = j.interval.max(1e-6);
                let mut cum = 0u64;
                // A final bucket shorter than half an interval holds a few completions of I/O
                // that mostly ran in the previous one: fold it in, or it shows a bogus spike.
                let mut bk = std::mem::take(&mut buckets[ji]);
                if bk.len() >= 2 && secs - (bk.len() - 1) as f64 * iv < iv / 2.0 {
                    let (b, o) = bk.pop().expect("len >= 2");
                    let l = bk.last_mut().expect("len >= 1");
                    l.0 += b;
                    l.1 += o;
                }
                let last = bk.len();
                let intervals = bk
                    .iter()
                    .enumerate()
                    .map(|(i, &(b, o))| {
                        cum += b;
                        // The last bucket is partial: its length ends at the job's end.
                        let len = if i + 1 == last {
                            (secs - i as f64 * iv).max(1e-9)
                        } else {
                            iv
                        };
                        IntervalPoint {
                            t: i as f64 * iv + len,
                            mb_s: b as f64 / len / 1e6,
                            iops: o as f64 / len,
                            bytes: cum,
                        }
                    })
                    .collect();
                JobResult::new(
                    j,
                    done[ji].0,
                    done[ji].1,
                    secs,
                    &hists[ji],
                    intervals,
                    interrupted,
                )
            })
            .collect())
    }
}
