//! A block trace (`crates/trace`, any format it reads) replayed open-loop through the
//! chip-addressed FTL and the chips: each request is issued at its own timestamp (relative to
//! the first), its pages are the flash pages its byte range covers (wrapped modulo the logical
//! capacity when the trace addresses more), its stream is its volume (Multi-stream keeps it),
//! and the predictor's clock is the trace's clock x `time_scale`.

use super::run::{Loop, RunResult, RunSpec};
use nowa_device::timing::Chips;
use nowa_flash::parallel::ParallelFtl;
use nowa_trace::Op;
use std::path::Path;

/// Replays `path` on the device of `spec` (its workload is ignored; the device is aged by a
/// sequential fill first), pass after pass (each starting where the previous one ended in
/// time) until the host has written `spec.drive_writes` x the logical pages, or after one pass
/// when `drive_writes` is 0. `limit`: records per pass.
///
/// # Errors
/// The trace cannot be read, has no writes, or the device runs full.
pub fn replay(spec: &RunSpec, path: &Path, limit: Option<u64>) -> anyhow::Result<RunResult> {
    replay_observed(spec, path, limit, &mut |_, _| {})
}

/// [`replay`], telling `tick` (host pages written, host pages to write) every
/// [`TICK_REQUESTS`](super::run::TICK_REQUESTS) records and once at the end; with
/// `drive_writes` 0 (one pass, length unknown beforehand) only at the end.
///
/// # Errors
/// As [`replay`].
pub fn replay_observed(
    spec: &RunSpec,
    path: &Path,
    limit: Option<u64>,
    tick: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<RunResult> {
    replay_cancellable(spec, path, limit, tick, &|| false)
}

/// [`replay_observed`] that polls `stop` every [`TICK_REQUESTS`](super::run::TICK_REQUESTS)
/// records and, once it holds, replays no more and returns what ran so far, marked
/// `interrupted`.
///
/// # Errors
/// As [`replay`].
pub fn replay_cancellable(
    spec: &RunSpec,
    path: &Path,
    limit: Option<u64>,
    tick: &mut dyn FnMut(u64, u64),
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<RunResult> {
    let mut ftl = super::run::new_ftl(spec)?;
    let mut chips = Chips::new(spec.chips)?;
    let before = ftl.counters();
    let target = super::run::target_pages(spec, &ftl);
    let mut lp = Loop::new()?;
    let cpu0 = nowa_units::cpu::thread_cpu_secs();
    let mut offset_ps = 0u64;
    let mut interrupted = false;
    loop {
        let written = ftl.counters().host_pages;
        let end = pass(
            spec,
            path,
            limit,
            &mut ftl,
            &mut chips,
            &mut lp,
            offset_ps,
            &mut |f: &ParallelFtl, records: u64| {
                let done = f.counters().host_pages - before.host_pages;
                if records % super::run::TICK_REQUESTS == 0 {
                    if target > 0 {
                        tick(done.min(target), target);
                    }
                    interrupted = interrupted || (records > 0 && stop());
                }
                interrupted || (done >= target && target > 0)
            },
        )?;
        let wrote = ftl.counters().host_pages - written;
        let done = ftl.counters().host_pages - before.host_pages;
        if interrupted || target == 0 || done >= target {
            break;
        }
        anyhow::ensure!(wrote > 0, "{}: no writes to replay", path.display());
        // The next pass starts 1 ms after this one's last request.
        offset_ps = end + 1_000_000_000;
    }
    let cpu = nowa_units::cpu::thread_cpu_secs() - cpu0;
    let done = ftl.counters().host_pages - before.host_pages;
    if !interrupted {
        tick(done.max(target), done.max(target));
    }
    let mut res = lp.result(spec, &ftl, &before, cpu);
    res.interrupted = interrupted;
    Ok(res)
}

/// One pass over the trace from `offset_ps`, stopping early when `stop` (given the records
/// read so far) holds; returns the time of its last request.
#[expect(
    clippy::too_many_arguments,
    reason = "one pass of the replay loop's state"
)]
fn pass(
    spec: &RunSpec,
    path: &Path,
    limit: Option<u64>,
    ftl: &mut ParallelFtl,
    chips: &mut Chips,
    lp: &mut Loop,
    offset_ps: u64,
    stop: &mut dyn FnMut(&ParallelFtl, u64) -> bool,
) -> anyhow::Result<u64> {
    let mut reader = nowa_trace::open(path, None)?;
    let n = ftl.logical_pages();
    let pb = u64::from(spec.geometry.page_bytes);
    let (mut first, mut records, mut last) = (None, 0u64, offset_ps);
    while let Some(r) = reader.next_record()? {
        if limit.is_some_and(|l| records >= l) || stop(ftl, records) {
            break;
        }
        records += 1;
        if r.len == 0 || r.op == Op::Flush {
            continue;
        }
        let t0 = *first.get_or_insert(r.ts_ns);
        let t = offset_ps + r.ts_ns.saturating_sub(t0).saturating_mul(1000);
        last = t;
        let start = r.offset / pb;
        let len = (r.offset + r.len).div_ceil(pb) - start;
        assert!(len >= 1, "a request covers a page");
        let start = start % n;
        let len = len.min(n - start);
        #[expect(clippy::cast_precision_loss, reason = "picoseconds to seconds")]
        let now = t as f64 / 1e12 * spec.time_scale;
        let stream = u16::try_from(r.volume % 65536).expect("below 2^16");
        let kind = match r.op {
            Op::Read => {
                ftl.read(start, len)?;
                super::Kind::Read
            }
            Op::Write => {
                ftl.write(start, len, stream, now)?;
                super::Kind::Write
            }
            _ => {
                ftl.trim(start, len, now)?;
                super::Kind::Trim
            }
        };
        // Open loop: the trace's times, not completions, drive the requests.
        lp.complete(ftl, chips, kind, t, 0)?;
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nowa_device::timing::ChipParams;
    use nowa_flash::parallel::{ChipGeometry, Scheme};
    use std::fmt::Write as _;

    #[test]
    fn a_trace_replays_through_plan() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let mut text = String::new();
        // 1 ms apart: 256 KiB sequential writes, 4 KiB random rewrites, reads, a discard.
        for i in 0..4000u64 {
            let ts = i as f64 * 1e-3;
            let (op, off, len) = match i % 4 {
                0 => ('W', (i * 262_144) % (1 << 30), 262_144),
                1 => ('W', (i * 7919 % 4096) * 4096, 4096),
                2 => ('R', (i * 104_729 % 4096) * 4096, 4096),
                _ => ('D', (i * 31 % 64) * 262_144, 65536),
            };
            writeln!(text, "{ts:.9},{op},{off},{len}").unwrap();
        }
        std::fs::write(&path, text).unwrap();
        let spec = RunSpec {
            geometry: ChipGeometry {
                blocks_per_chip: 64,
                pages_per_block: 4,
                ..ChipGeometry::paper_scaled()
            },
            chips: ChipParams::femu(8, 8, 16384),
            scheme: Scheme::Plan {
                small_chips: 2,
                predict: true,
            },
            workload: super::super::WorkloadKind::Fio,
            drive_writes: 0.0,
            seed: 0,
            time_scale: 1.0,
            gc_reserve: 0.05,
            background_gc: 0.0,
            fill: 1.0,
            track_streams: false,
        };
        let r = replay(&spec, &path, None).unwrap();
        assert_eq!(r.requests, 4000);
        // 1000 x 16 pages + 1000 x 1 page.
        assert_eq!(r.counters.host_pages, 17_000);
        assert!(r.counters.read_pages > 0 && r.counters.trimmed_pages > 0);
        assert!(r.sim_secs >= 3.999, "{}", r.sim_secs);
        let short = replay(&spec, &path, Some(100)).unwrap();
        assert_eq!(short.requests, 100);
        // Passes until 2 drive writes = 30,720 pages (the trace writes 17,000 a pass).
        let looped = replay(
            &RunSpec {
                drive_writes: 2.0,
                ..spec
            },
            &path,
            None,
        )
        .unwrap();
        let h = looped.counters.host_pages;
        assert!((30_720..30_720 + 16).contains(&h), "{h}");
        // Progress inside the replay (at each pass's start here: 4000 records a pass), the
        // same result.
        let mut ticks = Vec::new();
        let seen = replay_observed(
            &RunSpec {
                drive_writes: 2.0,
                ..spec
            },
            &path,
            None,
            &mut |d, t| ticks.push((d, t)),
        )
        .unwrap();
        assert_eq!(seen.counters, looped.counters);
        assert!(ticks.windows(2).all(|w| w[0].0 <= w[1].0), "{ticks:?}");
        assert!(
            ticks.iter().filter(|&&(d, t)| d > 0 && d < t).count() >= 1,
            "{ticks:?}"
        );
        assert_eq!(ticks.last(), Some(&(h, h)), "done at the end");
        assert!(
            looped.requests > 4000 && looped.sim_secs > 4.0,
            "{}",
            looped.sim_secs
        );
    }
}
