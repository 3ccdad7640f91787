//! A block trace (`crates/trace`, any format it reads) replayed open-loop through the
//! chip-addressed FTL and the chips: each request is issued at its own timestamp (relative to
//! the first), its pages are the flash pages its byte range covers (wrapped modulo the logical
//! capacity when the trace addresses more), its stream is its volume (Multi-stream keeps it),
//! and the predictor's clock is the trace's clock x `time_scale`.

use super::run::{Loop, RunResult, RunSpec};
use nowa_device::timing::Chips;
use nowa_trace::Op;
use std::path::Path;

/// Replays `path` on the device of `spec` (its workload and drive writes are ignored; the
/// device is aged by a sequential fill first). `limit`: stop after this many records.
///
/// # Errors
/// The trace cannot be read, or the device runs full.
///
/// # Panics
/// Never: a record with a length covers at least one page.
pub fn replay(spec: &RunSpec, path: &Path, limit: Option<u64>) -> anyhow::Result<RunResult> {
    let mut reader = nowa_trace::open(path, None)?;
    let mut ftl = super::run::new_ftl(spec)?;
    let mut chips = Chips::new(spec.chips)?;
    let before = ftl.counters();
    let n = ftl.logical_pages();
    let pb = u64::from(spec.geometry.page_bytes);
    let mut lp = Loop::new()?;
    let cpu0 = nowa_units::cpu::thread_cpu_secs();
    let mut first: Option<u64> = None;
    let mut records = 0u64;
    while let Some(r) = reader.next_record()? {
        if limit.is_some_and(|l| records >= l) {
            break;
        }
        records += 1;
        if r.len == 0 || r.op == Op::Flush {
            continue;
        }
        let t0 = *first.get_or_insert(r.ts_ns);
        let t = r.ts_ns.saturating_sub(t0).saturating_mul(1000);
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
        let _ = lp.complete(&mut ftl, &mut chips, kind, t, 0);
    }
    let cpu = nowa_units::cpu::thread_cpu_secs() - cpu0;
    Ok(lp.result(spec, &ftl, &before, cpu))
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
        };
        let r = replay(&spec, &path, None).unwrap();
        assert_eq!(r.requests, 4000);
        // 1000 x 16 pages + 1000 x 1 page.
        assert_eq!(r.counters.host_pages, 17_000);
        assert!(r.counters.read_pages > 0 && r.counters.trimmed_pages > 0);
        assert!(r.sim_secs >= 3.999, "{}", r.sim_secs);
        let short = replay(&spec, &path, Some(100)).unwrap();
        assert_eq!(short.requests, 100);
    }
}
