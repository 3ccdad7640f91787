//! `nowa frozen from-trace`: a block trace (e.g. `nowa ycsb --record-trace`, in-place engine:
//! LBA = page) as a write log, with hotness records tracked per page from the trace itself.
//!
//! Per 4 KiB page: a read starts a pool window (`on_read_into_pool`); a write is one
//! modification then the page write (`snapshot_at_write`), the timer advancing by one per
//! page write; a discard frees the page. What a block trace cannot show: accesses served by
//! the buffer pool and the valid bytes in the page (VD = 0 for every record), so AC/MC are
//! 1 + nothing and the features carry less than an engine-recorded log's.

use super::training::file_error;
use crate::Error;
use nowa_frozen::{HotnessRecord, HotnessTracker, LogSummary, LogWriter, WriteKind, WriteRecord};
use nowa_trace::pages::page_range;
use nowa_trace::{open, Op};
use std::collections::HashMap;
use std::path::Path;

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

/// Converts the block trace at `trace` into the write log `out` (refused if it exists, unless
/// `force`; its directory is created, not its parents, once the trace opens), stopping after
/// `max_writes` page writes. Returns the log's counts and the pages it saw.
///
/// # Errors
/// [`Error::Usage`]: a missing or unreadable trace, an existing `out`; the files' errors.
///
/// # Panics
/// If the log holds more page writes than asked for (a bug).
pub fn convert(
    trace: &Path,
    out: &Path,
    force: bool,
    max_writes: Option<u64>,
) -> Result<(LogSummary, usize), Error> {
    if !trace.exists() {
        return Err(Error::Usage(format!(
            "--trace {}: no such file",
            trace.display()
        )));
    }
    let named = |e: nowa_trace::TraceError| match crate::trace::trace_error(e) {
        Error::Usage(m) => Error::Usage(format!("--trace {}: {m}", trace.display())),
        e => e,
    };
    let mut reader = open(trace, None).map_err(named)?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::resources::create_output_dir("--out", dir)?;
    }
    let mut w = LogWriter::create(out, force, 4096).map_err(|e| file_error("--out", out, e))?;
    let mut c = Converter {
        pages: HashMap::new(),
        timer: 0,
        max: max_writes.unwrap_or(u64::MAX),
    };
    while let Some(r) = reader.next_record().map_err(named)? {
        for p in page_range(r.offset, r.len) {
            if let Some(rec) = c.page(r.op, p) {
                w.append(&rec).map_err(|e| Error::io(out, e))?;
            }
        }
    }
    let s = w.finish().map_err(|e| Error::io(out, e))?;
    assert!(s.user <= c.max, "no more page writes than asked for");
    assert!(
        s.records >= s.user + s.free,
        "every page write and free is a record"
    );
    Ok((s, c.pages.len()))
}
