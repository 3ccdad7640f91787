//! `nowa frozen from-trace`: a block trace (e.g. `nowa ycsb --record-trace`, in-place engine:
//! LBA = page) as a write log, with hotness records tracked per page from the trace itself.
//!
//! Per 4 KiB page: a read starts a pool window (`on_read_into_pool`); a write is one
//! modification then the page write (`snapshot_at_write`), the timer advancing by one per
//! page write; a discard frees the page. What a block trace cannot show: accesses served by
//! the buffer pool and the valid bytes in the page (VD = 0 for every record), so AC/MC are
//! 1 + nothing and the features carry less than an engine-recorded log's.

use crate::flags;
use crate::usage;
use anyhow::{Context, Result};
use clap::Args;
use nowa_frozen::{HotnessRecord, HotnessTracker, LogWriter, WriteKind, WriteRecord};
use nowa_trace::pages::page_range;
use nowa_trace::{open, Op};
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct FromTraceArgs {
    /// The block trace (any format `nowa sim --trace` reads).
    #[arg(long, value_name = "FILE")]
    trace: PathBuf,
    /// Output write log.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Overwrite --out if it exists.
    #[arg(long)]
    force: bool,
    /// Stop after this many page writes.
    #[arg(long, value_parser = flags::count::<u64>(1, 1 << 50))]
    max_writes: Option<u64>,
}

/// Per page: its frame's tracker and its header's current record.
struct PageState {
    tracker: HotnessTracker,
    current: HotnessRecord,
}

pub fn run(a: &FromTraceArgs) -> Result<()> {
    if !a.trace.exists() {
        return Err(usage(format!(
            "--trace {}: no such file",
            a.trace.display()
        )));
    }
    if a.out.exists() && !a.force {
        return Err(usage(format!(
            "--out {}: exists (pass --force to overwrite)",
            a.out.display()
        )));
    }
    let mut reader =
        open(&a.trace, None).with_context(|| format!("--trace {}", a.trace.display()))?;
    let mut w = LogWriter::create(&a.out, a.force, 4096)
        .with_context(|| format!("--out {}", a.out.display()))?;
    let mut pages: HashMap<u64, PageState> = HashMap::new();
    let (mut timer, max) = (0u64, a.max_writes.unwrap_or(u64::MAX));
    while let Some(r) = reader.next_record()? {
        for p in page_range(r.offset, r.len) {
            match r.op {
                Op::Read => pages
                    .entry(p)
                    .or_insert_with(|| PageState {
                        tracker: HotnessTracker::new(timer),
                        current: HotnessRecord::NONE,
                    })
                    .tracker
                    .on_read_into_pool(timer),
                Op::Write if timer < max => {
                    timer += 1;
                    let st = pages.entry(p).or_insert_with(|| PageState {
                        tracker: HotnessTracker::new(timer),
                        current: HotnessRecord::NONE,
                    });
                    st.tracker.on_modify(timer);
                    let hr = st.tracker.snapshot_at_write(timer, 0);
                    w.append(&WriteRecord::unplaced(
                        timer,
                        p,
                        WriteKind::User,
                        hr,
                        st.current,
                    ))?;
                    st.current = hr;
                }
                Op::Discard => {
                    if let Some(st) = pages.remove(&p) {
                        w.append(&WriteRecord::unplaced(
                            timer,
                            p,
                            WriteKind::Free,
                            st.current,
                            HotnessRecord::NONE,
                        ))?;
                    }
                }
                _ => {}
            }
        }
    }
    let s = w
        .finish()
        .with_context(|| format!("--out {}", a.out.display()))?;
    println!(
        "nowa frozen from-trace: {} -> {}: {} records ({} page writes, {} frees), {} pages",
        a.trace.display(),
        a.out.display(),
        s.records,
        s.user,
        s.free,
        pages.len()
    );
    Ok(())
}
