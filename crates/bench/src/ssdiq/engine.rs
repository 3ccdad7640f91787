//! The I/O engine for real targets (block devices and files): io_uring with `qd` I/Os in
//! flight per thread (one ring per thread), or plain pread/pwrite (one I/O at a time per
//! thread). Every I/O's latency (submission to completion) goes into an hdrhistogram; a rate
//! limiter spaces submissions on an absolute schedule (no drift); per-interval throughput is
//! sampled by the calling thread.
//!
//! Jobs given together run concurrently. A job with neither a byte nor a time limit (the
//! background writer of a latency-under-load measurement) stops when all the limited jobs
//! (the probes) are done.

use super::job::{fill_random, new_hist, AddrSource, IntervalPoint, JobResult, JobSpec};
use hdrhistogram::Histogram;
use io_uring::{opcode, types, IoUring};
use nowa_device::AlignedBuf;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Which submission path to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Engine {
    /// io_uring, `qd` I/Os in flight per thread.
    Uring,
    /// pread/pwrite, one I/O at a time per thread (queue depth = threads).
    Psync,
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Engine::Uring => "io_uring",
            Engine::Psync => "psync",
        })
    }
}

/// True if this kernel lets us create an io_uring (it can be disabled by sysctl or seccomp).
pub fn uring_available() -> Result<(), String> {
    IoUring::new(2).map(|_| ()).map_err(|e| e.to_string())
}

struct Shared {
    addr: AddrSource,
    claimed: AtomicU64,
    done_bytes: AtomicU64,
    done_ops: AtomicU64,
    running: AtomicU32,
    /// Nanoseconds from the start to the last thread's exit.
    end_ns: AtomicU64,
}

/// Per-thread context.
struct Ctx<'a> {
    fd: i32,
    file: &'a std::fs::File,
    spec: &'a JobSpec,
    sh: &'a Shared,
    tid: u32,
    /// Ctrl-C.
    stop: &'a AtomicBool,
    /// An I/O error in another thread.
    abort: &'a AtomicBool,
    /// Set when every limited job is done: unlimited (background) jobs stop.
    bg_stop: &'a AtomicBool,
    t0: Instant,
}

impl Ctx<'_> {
    /// May this thread issue another I/O? Claims it against the job's byte limit.
    fn claim(&self) -> bool {
        if self.stop.load(Relaxed) || self.abort.load(Relaxed) {
            return false;
        }
        let unlimited = self.spec.max_bytes.is_none() && self.spec.max_secs.is_none();
        if unlimited && self.bg_stop.load(Relaxed) {
            return false;
        }
        if let Some(s) = self.spec.max_secs {
            if self.t0.elapsed().as_secs_f64() >= s {
                return false;
            }
        }
        match self.spec.max_ops() {
            Some(m) => self.sh.claimed.fetch_add(1, Relaxed) < m,
            None => true,
        }
    }

    /// When the `n`-th I/O of this thread is due under the rate limit.
    fn due(&self, n: u64) -> Option<Instant> {
        let rate = self.spec.rate? / self.spec.threads as f64;
        Some(self.t0 + Duration::from_secs_f64(n as f64 * self.spec.bs as f64 / rate))
    }

    fn complete(&self, hist: &mut Histogram<u64>, started: Instant) {
        let ns = started.elapsed().as_nanos() as u64;
        let _ = hist.record(ns.max(1));
        self.sh.done_bytes.fetch_add(self.spec.bs as u64, Relaxed);
        self.sh.done_ops.fetch_add(1, Relaxed);
    }
}

struct Addrs {
    buf: Vec<u64>,
    pos: usize,
}

impl Addrs {
    fn next(&mut self, sh: &Shared) -> u64 {
        if self.pos == self.buf.len() {
            sh.addr.fill(&mut self.buf, 256);
            self.pos = 0;
        }
        self.pos += 1;
        self.buf[self.pos - 1]
    }
}

fn worker_uring(cx: &Ctx) -> anyhow::Result<Histogram<u64>> {
    let spec = cx.spec;
    let qd = spec.qd.max(1) as usize;
    let bs = spec.bs as usize;
    let write = spec.kind.is_write();
    let mut bufs = AlignedBuf::zeroed(qd * bs, 4096);
    fill_random(&mut bufs, spec.seed ^ ((cx.tid as u64) << 32));
    // The ring is declared after `bufs`, so it is dropped (and the buffer unregistered)
    // before the memory is freed.
    let entries = (qd as u32).next_power_of_two();
    // COOP_TASKRUN (Linux 5.19+): completions do not interrupt this thread with an IPI, they
    // run when it next enters the kernel. Fall back to a plain ring on older kernels.
    let mut ring = IoUring::builder()
        .setup_single_issuer()
        .setup_coop_taskrun()
        .build(entries)
        .or_else(|_| IoUring::new(entries))?;
    // Registered buffer and file (fio's fixedbufs / registerfiles): the kernel then does not
    // pin the pages and look the file up for every I/O. Optional: fall back silently when
    // the kernel refuses (RLIMIT_MEMLOCK, old kernel).
    let iov = libc::iovec {
        iov_base: bufs.as_mut_ptr().cast(),
        iov_len: bufs.len(),
    };
    // SAFETY: the registered memory is `bufs`, which outlives the ring (the ring is declared
    // later, so it is dropped first) and is not moved or freed while registered.
    let fixed_buf =
        bufs.len() <= 1 << 30 && unsafe { ring.submitter().register_buffers(&[iov]) }.is_ok();
    let fixed_file = ring.submitter().register_files(&[cx.fd]).is_ok();
    let mut hist = new_hist();
    let mut free: Vec<usize> = (0..qd).rev().collect();
    let mut starts = vec![cx.t0; qd];
    let mut inflight = 0usize;
    let mut issued = 0u64;
    let mut issuing = true;
    let mut addrs = Addrs {
        buf: Vec::new(),
        pos: 0,
    };
    let mut err: Option<anyhow::Error> = None;
    // Slot pointers come from one base pointer: no Rust reference to the buffer is created
    // while the kernel may be writing into other slots.
    let base = bufs.as_mut_ptr();
    let mut wait_failures = 0u32;
    loop {
        let mut ahead_until = None;
        while issuing && !free.is_empty() {
            if let Some(due) = cx.due(issued) {
                if Instant::now() < due {
                    ahead_until = Some(due);
                    break;
                }
            }
            if !cx.claim() {
                issuing = false;
                break;
            }
            let off = addrs.next(cx.sh) * bs as u64;
            let slot = free.pop().expect("checked non-empty");
            // SAFETY: slot < qd, so [slot * bs, (slot + 1) * bs) lies inside the qd * bs
            // bytes of `bufs`.
            let ptr = unsafe { base.add(slot * bs) };
            macro_rules! op {
                ($fd:expr) => {
                    match (write, fixed_buf) {
                        (true, true) => opcode::WriteFixed::new($fd, ptr, bs as u32, 0)
                            .offset(off)
                            .build(),
                        (true, false) => {
                            opcode::Write::new($fd, ptr, bs as u32).offset(off).build()
                        }
                        (false, true) => opcode::ReadFixed::new($fd, ptr, bs as u32, 0)
                            .offset(off)
                            .build(),
                        (false, false) => {
                            opcode::Read::new($fd, ptr, bs as u32).offset(off).build()
                        }
                    }
                };
            }
            let sqe = if fixed_file {
                op!(types::Fixed(0))
            } else {
                op!(types::Fd(cx.fd))
            }
            .user_data(slot as u64);
            // SAFETY: the buffer slot stays alive and untouched until its completion is reaped
            // (we never return with I/O in flight), and the ring has >= qd entries so the
            // queue cannot be full with at most qd slots in use.
            unsafe {
                ring.submission()
                    .push(&sqe)
                    .expect("ring has room for qd entries")
            };
            starts[slot] = Instant::now();
            inflight += 1;
            issued += 1;
            // Submit each I/O at once (fio's default iodepth_batch_submit=1): batching
            // submissions delays requests, which costs ~20% IOPS on a virtio disk.
            if let Err(e) = ring.submit() {
                if e.raw_os_error() != Some(libc::EINTR) && e.raw_os_error() != Some(libc::EAGAIN) {
                    err.get_or_insert(e.into());
                    issuing = false;
                    break;
                }
            }
        }
        if inflight == 0 {
            if !issuing || err.is_some() {
                break;
            }
            if let Some(due) = ahead_until {
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
            }
            continue;
        }
        let r = if let (Some(due), true) = (ahead_until, issuing) {
            // Rate limited and ahead of schedule: do not block on a completion that may come
            // after the next I/O is due.
            let r = ring.submit();
            if ring.completion().is_empty() {
                let d = due
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_micros(50));
                std::thread::sleep(d);
            }
            r
        } else {
            ring.submit_and_wait(1)
        };
        if let Err(e) = r {
            if e.raw_os_error() != Some(libc::EINTR) {
                err.get_or_insert(e.into());
                issuing = false;
                wait_failures += 1;
                if wait_failures > 1000 {
                    // The ring is unusable with I/O in flight: never free memory the kernel
                    // may still write to.
                    std::mem::forget(bufs);
                    std::mem::forget(ring);
                    return Err(err.take().expect("set above"));
                }
            }
        } else {
            wait_failures = 0;
        }
        for cqe in ring.completion() {
            let slot = cqe.user_data() as usize;
            inflight -= 1;
            free.push(slot);
            let res = cqe.result();
            if res < 0 {
                err.get_or_insert(anyhow::anyhow!(
                    "{} at queue slot {slot}: {}",
                    if write { "write" } else { "read" },
                    std::io::Error::from_raw_os_error(-res)
                ));
                issuing = false;
            } else if res as usize != bs {
                err.get_or_insert(anyhow::anyhow!(
                    "short {} of {res} bytes (expected {bs})",
                    if write { "write" } else { "read" }
                ));
                issuing = false;
            } else {
                cx.complete(&mut hist, starts[slot]);
            }
        }
    }
    match err {
        Some(e) => Err(e),
        None => Ok(hist),
    }
}

fn worker_psync(cx: &Ctx) -> anyhow::Result<Histogram<u64>> {
    let spec = cx.spec;
    let bs = spec.bs as usize;
    let mut buf = AlignedBuf::zeroed(bs, 4096);
    fill_random(&mut buf, spec.seed ^ ((cx.tid as u64) << 32));
    let mut hist = new_hist();
    let mut addrs = Addrs {
        buf: Vec::new(),
        pos: 0,
    };
    let mut issued = 0u64;
    loop {
        if let Some(due) = cx.due(issued) {
            let now = Instant::now();
            if now < due {
                std::thread::sleep(due - now);
            }
        }
        if !cx.claim() {
            break;
        }
        let off = addrs.next(cx.sh) * bs as u64;
        let start = Instant::now();
        if spec.kind.is_write() {
            cx.file.write_all_at(&buf, off)?;
        } else {
            cx.file.read_exact_at(&mut buf, off)?;
        }
        cx.complete(&mut hist, start);
        issued += 1;
    }
    Ok(hist)
}

/// Runs `jobs` concurrently on `file` and returns their results in order. `stop` (Ctrl-C)
/// makes every thread stop issuing; in-flight I/O completes and the results are marked
/// interrupted. An I/O error in one thread stops all of them and is returned.
pub fn run_jobs(
    file: &std::fs::File,
    engine: Engine,
    jobs: &[JobSpec],
    stop: &AtomicBool,
) -> anyhow::Result<Vec<JobResult>> {
    let shared: Vec<Shared> = jobs
        .iter()
        .map(|j| {
            Ok(Shared {
                addr: AddrSource::new(j)?,
                claimed: 0.into(),
                done_bytes: 0.into(),
                done_ops: 0.into(),
                running: j.threads.max(1).into(),
                end_ns: 0.into(),
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let limited: Vec<bool> = jobs
        .iter()
        .map(|j| j.max_bytes.is_some() || j.max_secs.is_some())
        .collect();
    anyhow::ensure!(
        limited.iter().any(|&l| l),
        "at least one job needs a byte or time limit"
    );
    let bg_stop = AtomicBool::new(false);
    let abort = AtomicBool::new(false);
    let fd = file.as_raw_fd();
    let t0 = Instant::now();
    let mut hists: Vec<Histogram<u64>> = jobs.iter().map(|_| new_hist()).collect();
    let mut intervals: Vec<Vec<IntervalPoint>> = vec![Vec::new(); jobs.len()];
    let mut first_err: Option<anyhow::Error> = None;
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (ji, spec) in jobs.iter().enumerate() {
            for tid in 0..spec.threads.max(1) {
                let cx = Ctx {
                    fd,
                    file,
                    spec,
                    sh: &shared[ji],
                    tid,
                    stop,
                    abort: &abort,
                    bg_stop: &bg_stop,
                    t0,
                };
                handles.push((
                    ji,
                    s.spawn(move || {
                        let r = match engine {
                            Engine::Uring => worker_uring(&cx),
                            Engine::Psync => worker_psync(&cx),
                        };
                        if r.is_err() {
                            cx.abort.store(true, Relaxed);
                        }
                        cx.sh
                            .end_ns
                            .fetch_max(cx.t0.elapsed().as_nanos() as u64, Relaxed);
                        cx.sh.running.fetch_sub(1, Relaxed);
                        r
                    }),
                ));
            }
        }
        // Sampler: per-interval throughput of every job, and the background stop.
        let mut last: Vec<(u64, u64)> = vec![(0, 0); jobs.len()];
        let mut last_t = vec![0f64; jobs.len()];
        let mut open = vec![true; jobs.len()];
        // Wake up often enough for the interval sampling, rarely enough not to steal CPU from
        // the I/O threads on small machines.
        let tick = Duration::from_secs_f64(
            (jobs
                .iter()
                .map(|j| j.interval)
                .fold(f64::INFINITY, f64::min)
                / 20.0)
                .clamp(0.001, 0.05),
        );
        loop {
            if shared
                .iter()
                .zip(&limited)
                .all(|(sh, &l)| !l || sh.running.load(Relaxed) == 0)
            {
                bg_stop.store(true, Relaxed);
            }
            let now = t0.elapsed().as_secs_f64();
            for (ji, sh) in shared.iter().enumerate() {
                if !open[ji] {
                    continue;
                }
                let running = sh.running.load(Relaxed) > 0;
                if !running {
                    open[ji] = false;
                }
                if now - last_t[ji] >= jobs[ji].interval || !running {
                    let (b, o) = (sh.done_bytes.load(Relaxed), sh.done_ops.load(Relaxed));
                    // The last interval ends when the job's last thread ended, not when the
                    // sampler noticed.
                    let t = if running {
                        now
                    } else {
                        (sh.end_ns.load(Relaxed) as f64 / 1e9).clamp(last_t[ji], now)
                    };
                    let dt = t - last_t[ji];
                    if dt > 1e-6 {
                        intervals[ji].push(IntervalPoint {
                            t,
                            mb_s: (b - last[ji].0) as f64 / dt / 1e6,
                            iops: (o - last[ji].1) as f64 / dt,
                            bytes: b,
                        });
                    }
                    last[ji] = (b, o);
                    last_t[ji] = t;
                }
            }
            if !open.iter().any(|&o| o) {
                break;
            }
            std::thread::sleep(tick);
        }
        for (ji, h) in handles {
            match h.join() {
                Ok(Ok(hh)) => {
                    let _ = hists[ji].add(&hh);
                }
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err.get_or_insert(anyhow::anyhow!("an I/O thread panicked"));
                }
            }
        }
    });
    if let Some(e) = first_err {
        return Err(e);
    }
    let interrupted = stop.load(Relaxed);
    Ok(jobs
        .iter()
        .enumerate()
        .map(|(ji, spec)| {
            let sh = &shared[ji];
            JobResult::new(
                spec,
                sh.done_bytes.load(Relaxed),
                sh.done_ops.load(Relaxed),
                sh.end_ns.load(Relaxed) as f64 / 1e9,
                &hists[ji],
                std::mem::take(&mut intervals[ji]),
                interrupted,
            )
        })
        .collect())
}
