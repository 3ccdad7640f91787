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
    #[command(flatten)]
    skip: crate::trace_cmd::SkipBad,
}

/// Per page: its frame's tracker and its header's current record.
struct PageState {
    tracker: HotnessTracker,
    current: HotnessRecord,
}

/// The conversion's state: per-page frames and the page-write timer.
struct Converter {
    pages: HashMap<u64, PageState>,
    timer: u64,
    max: u64,
}

impl Converter {
    fn state(&mut self, p: u64) -> &mut PageState {
        let now = self.timer;
        self.pages.entry(p).or_insert_with(|| PageState {
            tracker: HotnessTracker::new(now),
            current: HotnessRecord::NONE,
        })
    }

    /// The record `op` on page `p` makes, if any.
    fn page(&mut self, op: Op, p: u64) -> Option<WriteRecord> {
        match op {
            Op::Read => {
                let now = self.timer;
                self.state(p).tracker.on_read_into_pool(now);
                None
            }
            Op::Write if self.timer < self.max => {
                self.timer += 1;
                let now = self.timer;
                let st = self.state(p);
                st.tracker.on_modify(now);
                let hr = st.tracker.snapshot_at_write(now, 0);
                assert_eq!(hr.wt(), now, "WT is the page-write timer");
                assert!(
                    st.current.is_none() || st.current.wt() < now,
                    "records in timer order"
                );
                let last = std::mem::replace(&mut st.current, hr);
                Some(WriteRecord::unplaced(now, p, WriteKind::User, hr, last))
            }
            Op::Discard => self.pages.remove(&p).map(|st| {
                WriteRecord::unplaced(
                    self.timer,
                    p,
                    WriteKind::Free,
                    st.current,
                    HotnessRecord::NONE,
                )
            }),
            _ => None,
        }
    }
}

pub fn run(a: &FromTraceArgs) -> Result<()> {
    if !a.trace.exists() {
        return Err(usage(format!(
            "--trace {}: no such file",
            a.trace.display()
        )));
    }
    crate::resources::check_new_output("--out", &a.out, a.force)?;
    a.skip.apply();
    let mut reader =
        open(&a.trace, None).with_context(|| format!("--trace {}", a.trace.display()))?;
    let mut w = LogWriter::create(&a.out, a.force, 4096)
        .with_context(|| format!("--out {}", a.out.display()))?;
    let mut c = Converter {
        pages: HashMap::new(),
        timer: 0,
        max: a.max_writes.unwrap_or(u64::MAX),
    };
    while let Some(r) = reader.next_record()? {
        for p in page_range(r.offset, r.len) {
            if let Some(rec) = c.page(r.op, p) {
                w.append(&rec)?;
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
        c.pages.len()
    );
    Ok(())
}
