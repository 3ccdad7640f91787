//! Write-ahead log: a circular region of the device holding an append-only record stream.
//! The LSN of a record is its byte position in the infinite stream; it lives at physical byte
//! `wal_start + lsn % region_size`. Records are encoded by `crate::format::wal`: entries of a
//! group, one header and one checksum per group. A group is begun by the first append after
//! a flush cut and sealed by the next cut (or before it would pass `GROUP_BYTES`), so a group
//! never spans two flushes: a flush torn anywhere inside a group fails the group's checksum,
//! and only that flush's (unacknowledged) entries are lost. The redo LSN of a checkpoint may
//! lie inside a group; [`Wal::scan_from`] names the group's start, where a scan begins.
//!
//! Group commit: appends go to an in-memory buffer under a short mutex; `flush(lsn)` is
//! serialized by a second mutex, so one flusher writes everything appended so far and the
//! threads waiting behind it usually find their LSN already durable. Each flush writes whole
//! blocks from the block containing the durable end up to the block containing the new end,
//! zero-filled past it. A group much larger than the rest of its last block first fills that
//! rest with a pad record, so the group ends on a block boundary and the next flush starts on
//! a fresh block (no block is written twice); a smaller group leaves a zero length after its
//! last record and the next flush rewrites that block. Past a block-aligned end lies whatever
//! an older lap or epoch left, which fails the units' position check: a clean end. A
//! failed flush poisons the log (its buffer is gone; writing later records past a hole
//! would make them unreachable).
//!
//! Flush marks (`crate::format::mark`): once a flush's data is durable (device flush), and
//! before the flush returns (acknowledges), a mark holding the new durable end is written
//! and flushed in a slot of the mark area at the end of the region, outside the circular
//! log. It vouches for the last flush, which no later record does (every record carries the
//! durable end when it was appended): media damage to the acknowledged tail then reads as
//! damage (refused), not as a torn tail. The mark never precedes its data, so a crash cannot
//! leave a mark vouching for bytes that are not durable (no false alarm). Marks of an epoch
//! alternate between the two slots of its pair, so a torn mark write leaves the previous
//! mark, which vouches for the last acknowledged flush; no data write touches the marks.
//! Cost: one block write and one device flush per marked flush. A flush forced only by the
//! WAL rule before a page write-back ([`Wal::flush_for_pages`]) acknowledges nothing: where
//! the store's open checks that no page lies past the log's end (out of place), it writes
//! no mark; a later acknowledging flush that finds the log durable writes just the mark.

mod scan;

pub use scan::{analyze, LogVerdict, WalScanner};

use crate::error::{EngineError, Exhausted, Result};
use crate::format::mark::{self, Mark};
use crate::format::wal::{self as wfmt, RecordRef};
use crate::format::BLOCK;
use crate::num::{u64_of, usize_of};
use crate::stats::EngineCounters;
use nowa_device::BlockDevice;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

const BS: u64 = BLOCK as u64;

/// Why a WAL scan stopped (in [`crate::RecoveryReport`]).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum WalStop {
    /// Zero length, a record of an older lap or epoch, or the end of the region: a clean end.
    Clean,
    /// A torn tail: the record at `lsn` is bad and nothing durable follows it (the last flush
    /// before the crash was interrupted; its records were never acknowledged as durable).
    TornTail {
        /// LSN of the bad record.
        lsn: u64,
        /// What is wrong with it.
        damage: crate::error::RecordDamage,
    },
    /// Damage in the middle of the live log, salvaged on request (`Config::wal_damage`):
    /// the records in `[from, to)` were lost.
    Salvaged {
        /// First lost LSN.
        from: u64,
        /// End of the last record found after the damage.
        to: u64,
        /// What is wrong at `from`.
        damage: crate::error::RecordDamage,
    },
}

struct WalBuf {
    next_lsn: u64,
    /// Block-aligned LSN of buf[0]; buf holds bytes [buf_start, next_lsn).
    buf_start: u64,
    buf: Vec<u8>,
    /// Buffer handed back by the last flush, reused to avoid an allocation per flush.
    spare: Vec<u8>,
    /// LSN of the open group (None: the next append begins one).
    group: Option<u64>,
    /// Key of the open group's last Put or Delete (the next one stores what it shares).
    key: Vec<u8>,
    /// Start LSNs of the groups from the one holding the redo LSN on.
    starts: VecDeque<u64>,
}

/// The flush marks written so far in this epoch (under the flush lock).
struct Marks {
    /// Marks written (the next mark's seq).
    seq: u64,
    /// End vouched for by the last one (the epoch's first LSN before the first).
    end: u64,
}

/// The log writer.
pub struct Wal {
    dev: Arc<dyn BlockDevice>,
    /// Byte offset of the circular log.
    start: u64,
    /// Bytes of the circular log.
    size: u64,
    /// Byte offset of the flush-mark area.
    marks: u64,
    salt: u32,
    inner: Mutex<WalBuf>,
    /// Serializes flushes; holds the marks written, which only a flush writes.
    flush_lock: Mutex<Marks>,
    flushed: AtomicU64,
    /// Everything below it is vouched for by a flush mark (the newest mark's end).
    vouched: AtomicU64,
    /// Write-back flushes (the WAL rule) write no flush mark ([`Wal::flush_for_pages`]).
    unmarked_rule: AtomicBool,
    next: AtomicU64,
    /// Oldest LSN still needed by recovery (redo LSN of the last checkpoint).
    redo: AtomicU64,
    /// Where recovery's scan starts: the start of the group holding the redo LSN (the log
    /// is never overwritten from here on).
    scan: AtomicU64,
    /// A flush failed: nothing more is written.
    failed: AtomicBool,
    counters: Arc<EngineCounters>,
    /// The engine's yield site (`crate::yields`): a flush yields holding the flush lock.
    pub(crate) yields: crate::yields::YieldTo,
}

fn align_down(x: u64) -> u64 {
    x / BS * BS
}

/// The start of the last group in `starts` at or before `lsn`, or `lsn` if there is none.
fn scan_start(starts: &VecDeque<u64>, lsn: u64) -> u64 {
    let i = starts.partition_point(|&s| s <= lsn);
    i.checked_sub(1).map_or(lsn, |i| starts[i])
}

impl Wal {
    /// `start_block`/`blocks`: the WAL region (the circular log, then the flush-mark area);
    /// the log continues at `lsn` (all earlier is durable), which must be block aligned
    /// (every epoch starts on a block).
    ///
    /// # Panics
    /// If `lsn` is not block aligned or the log has fewer than two blocks.
    #[must_use]
    pub fn new(
        dev: Arc<dyn BlockDevice>,
        start_block: u64,
        blocks: u64,
        salt: u32,
        lsn: u64,
        counters: Arc<EngineCounters>,
    ) -> Self {
        assert_eq!(lsn % BS, 0, "a log epoch starts on a block boundary");
        let log = mark::log_blocks(blocks);
        assert!(log >= 2, "WAL region of {blocks} blocks");
        Wal {
            dev,
            start: start_block * BS,
            size: log * BS,
            marks: (start_block + log) * BS,
            salt,
            inner: Mutex::new(WalBuf {
                next_lsn: lsn,
                buf_start: lsn,
                buf: Vec::new(),
                spare: Vec::new(),
                group: None,
                key: Vec::new(),
                starts: VecDeque::new(),
            }),
            flush_lock: Mutex::new(Marks { seq: 0, end: lsn }),
            flushed: AtomicU64::new(lsn),
            vouched: AtomicU64::new(lsn),
            unmarked_rule: AtomicBool::new(false),
            next: AtomicU64::new(lsn),
            redo: AtomicU64::new(lsn),
            scan: AtomicU64::new(lsn),
            failed: AtomicBool::new(false),
            counters,
            yields: crate::yields::YieldTo::default(),
        }
    }

    /// Write a zero block where the epoch starts, zero the epoch's pair of mark slots, and
    /// flush, so that a scan of this epoch ends cleanly there even if nothing is appended
    /// before the next crash (whatever an older lap left in that block would otherwise read
    /// as a bad record: a false alarm), and no mark of an earlier attempt at this epoch (a
    /// crash during recovery writes the same salt) vouches for bytes this one never wrote.
    ///
    /// # Errors
    /// Device errors.
    pub fn start_epoch(&self) -> Result<()> {
        let lsn = self.next_lsn();
        let marks = self.flush_lock.lock();
        assert_eq!(marks.seq, 0, "epoch start after a flush mark");
        assert_eq!(lsn, self.flushed_lsn(), "epoch start after appends");
        assert_eq!(lsn % BS, 0, "epoch start not block aligned");
        self.dev
            .write_at(self.start + lsn % self.size, &[0u8; BLOCK])?;
        let pair = self.marks + mark::pair(self.salt) * BS;
        self.dev.write_at(pair, &[0u8; 2 * BLOCK])?;
        self.dev.flush()?;
        EngineCounters::add(&self.counters.wal_device_bytes, 3 * BS);
        Ok(())
    }

    /// LSN the next record gets.
    #[must_use]
    pub fn next_lsn(&self) -> u64 {
        self.next.load(Ordering::Acquire)
    }
    /// Everything below this LSN is durable.
    #[must_use]
    pub fn flushed_lsn(&self) -> u64 {
        self.flushed.load(Ordering::Acquire)
    }
    /// Redo LSN of the last checkpoint.
    #[must_use]
    pub fn redo_lsn(&self) -> u64 {
        self.redo.load(Ordering::Acquire)
    }
    /// A checkpoint moved the redo LSN to `lsn`, with recovery's scan starting at `scan`
    /// ([`Self::scan_from`] of `lsn`, as its superblock says): the space before `scan` is
    /// reusable.
    ///
    /// # Panics
    /// If the redo LSN would move backwards or past the durable end (checkpoint LSN order),
    /// or `scan` is not a group start at or before `lsn` (or `lsn` itself) at or after the
    /// last one.
    pub fn set_redo_lsn(&self, lsn: u64, scan: u64) {
        let old = self.redo_lsn();
        assert!(
            old <= lsn && lsn <= self.flushed_lsn(),
            "redo LSN {old} -> {lsn} (durable end {})",
            self.flushed_lsn()
        );
        let mut b = self.inner.lock();
        assert!(
            scan >= self.scan.load(Ordering::Acquire)
                && scan <= lsn
                && (scan == lsn || b.starts.binary_search(&scan).is_ok()),
            "scan start {scan} for the redo LSN {lsn}"
        );
        while b.starts.get(1).is_some_and(|&s| s <= scan) {
            b.starts.pop_front();
        }
        self.scan.store(scan, Ordering::Release);
        self.redo.store(lsn, Ordering::Release);
    }

    /// Where a scan that must return every record from `lsn` on starts: the start of the
    /// group holding `lsn` (`lsn` itself between groups). Only for `lsn` at or after the
    /// redo LSN.
    ///
    /// # Panics
    /// If `lsn` is below the redo LSN.
    #[must_use]
    pub fn scan_from(&self, lsn: u64) -> u64 {
        assert!(lsn >= self.redo_lsn(), "scan from {lsn} below the redo LSN");
        scan_start(&self.inner.lock().starts, lsn)
    }

    /// The append limit: the block holding the end must never overlap the block where
    /// recovery's scan starts.
    fn limit(&self) -> u64 {
        align_down(self.scan.load(Ordering::Acquire)) + self.size - BS
    }
    /// Live log bytes (what a checkpoint would release).
    #[must_use]
    pub fn used(&self) -> u64 {
        self.next_lsn().saturating_sub(self.redo_lsn())
    }
    /// Bytes appended but not yet durable.
    #[must_use]
    pub fn unflushed(&self) -> u64 {
        self.next_lsn().saturating_sub(self.flushed_lsn())
    }

    /// Append a record; returns its LSN. Fails with Full only if the region is exhausted,
    /// which the engine prevents by checkpointing before the limit (the region has slack).
    ///
    /// # Errors
    /// `Full(WalRegion)`, or `Poisoned` after a failed flush.
    pub fn append(&self, rec: &RecordRef<'_>) -> Result<u64> {
        if self.failed.load(Ordering::Acquire) {
            return Err(EngineError::Poisoned);
        }
        let mut b = self.inner.lock();
        if let Some(g) = b.group {
            let len = rec.entry_len_at(b.next_lsn, &b.key);
            if b.next_lsn + u64_of(len) - g > wfmt::GROUP_BYTES {
                self.seal_group(&mut b);
            }
        }
        let at = b.next_lsn;
        let head = if b.group.is_none() { wfmt::HEADER } else { 0 };
        let lsn = at + u64_of(head);
        let prev: &[u8] = if head > 0 { &[] } else { &b.key };
        let len = rec.entry_len_at(lsn, prev);
        let total = head + len;
        if at + u64_of(total) >= self.limit() {
            return Err(Exhausted::WalRegion {
                live: at - self.redo_lsn(),
            }
            .into());
        }
        let o = b.buf.len();
        debug_assert_eq!(b.buf_start + u64_of(o), at, "WAL buffer out of step");
        b.buf.resize(o + total, 0);
        let w = &mut *b;
        if head > 0 {
            wfmt::begin_group(&mut w.buf[o..], at, self.salt, self.flushed_lsn());
            w.starts.push_back(at);
            w.group = Some(at);
            w.key.clear();
        }
        rec.encode_entry(&mut w.buf[o + head..], lsn, &w.key);
        if let Some(k) = rec.key() {
            w.key.clear();
            w.key.extend_from_slice(k);
        }
        w.next_lsn = at + u64_of(total);
        self.next.store(w.next_lsn, Ordering::Release);
        drop(b);
        EngineCounters::add(&self.counters.wal_record_bytes, u64_of(total));
        Ok(lsn)
    }

    /// Seal the open group, if any: its length and checksum (it ends at the buffer's end).
    fn seal_group(&self, b: &mut WalBuf) {
        if let Some(g) = b.group.take() {
            assert!(g >= b.buf_start, "open group {g} before the buffer");
            let o = usize_of(g - b.buf_start);
            wfmt::seal_unit(&mut b.buf[o..], g, self.salt);
        }
    }

    /// Make every record with LSN < `upto` durable and vouched for by a flush mark (group
    /// commit): what a flush that acknowledges writes needs.
    ///
    /// # Errors
    /// Device errors (the log is poisoned afterwards), or `Poisoned`.
    pub fn flush(&self, upto: u64) -> Result<()> {
        self.flush_as(upto, true)
    }

    /// The WAL rule before a page write-back: every record with LSN < `upto` durable. It
    /// acknowledges no write, so with [`Self::set_unmarked_rule_flushes`] it writes no flush
    /// mark (media damage to its tail is then found at open by the store's check that no
    /// page lies past the log's end, `PageStore::newest_written`).
    ///
    /// # Errors
    /// As [`Self::flush`].
    pub fn flush_for_pages(&self, upto: u64) -> Result<()> {
        self.flush_as(upto, !self.unmarked_rule.load(Ordering::Relaxed))
    }

    /// Write-back flushes go without a flush mark from now on (only for a store whose open
    /// checks that no page or delta lies past the recovered end of the log).
    pub fn set_unmarked_rule_flushes(&self, on: bool) {
        self.unmarked_rule.store(on, Ordering::Relaxed);
    }

    /// A flush mark for the whole durable end, if one is missing (a checkpoint, after its
    /// store snapshot: every page the snapshot names then lies below a vouched end, since
    /// the open's check sees only pages written after the snapshot).
    ///
    /// # Errors
    /// As [`Self::flush`].
    pub fn vouch_durable(&self) -> Result<()> {
        self.flush(self.flushed_lsn())
    }

    /// Everything below this LSN is durable and vouched for by a flush mark.
    #[must_use]
    pub fn vouched_lsn(&self) -> u64 {
        self.vouched.load(Ordering::Acquire)
    }

    fn flush_as(&self, upto: u64, marked: bool) -> Result<()> {
        let done = |w: &Self| {
            if marked {
                w.vouched_lsn() >= upto
            } else {
                w.flushed_lsn() >= upto
            }
        };
        if done(self) {
            return Ok(());
        }
        let mut marks = self.flush_lock.lock();
        if done(self) {
            return Ok(());
        }
        if self.failed.load(Ordering::Acquire) {
            return Err(EngineError::Poisoned);
        }
        let r = self.flush_locked(&mut marks, upto, marked);
        if r.is_err() {
            self.failed.store(true, Ordering::Release);
        }
        r
    }

    /// Under the flush lock: the group if `upto` is not durable yet, then (`marked`) a flush
    /// mark for the durable end if `upto` is not vouched for yet.
    fn flush_locked(&self, marks: &mut Marks, upto: u64, marked: bool) -> Result<()> {
        if self.flushed_lsn() < upto {
            self.write_group()?;
        }
        let end = self.flushed_lsn();
        assert!(end >= upto, "flush to {upto} left the durable end at {end}");
        if marked && marks.end < upto {
            self.write_mark(marks, end)?;
            let prev = self.vouched.swap(end, Ordering::AcqRel);
            assert!(prev < end, "vouched end moved backwards: {prev} -> {end}");
        }
        Ok(())
    }

    /// Cut the group appended so far, write it and flush the device: the durable end moves
    /// to the group's end.
    fn write_group(&self) -> Result<()> {
        let (start, mut data, end) = {
            let mut b = self.inner.lock();
            self.seal_group(&mut b);
            self.pad_block(&mut b);
            let end = b.next_lsn;
            let start = b.buf_start;
            // Keep the partial last block: the next flush rewrites it with more records.
            let keep_from = align_down(end);
            let k = usize_of(keep_from - start);
            let mut fresh = std::mem::take(&mut b.spare);
            fresh.clear();
            fresh.extend_from_slice(&b.buf[k..]);
            let data = std::mem::replace(&mut b.buf, fresh);
            b.buf_start = keep_from;
            (start, data, end)
        };
        assert_eq!(
            start,
            align_down(self.flushed_lsn()),
            "flush does not start at the durable end's block"
        );
        // Group commit's leader between cutting its group and writing it: appends go on into
        // the next group, and a task may run beside it (only one that needs no flush lock).
        self.yields.at(crate::YieldPoint::GroupCommit);
        // Zero-fill the block containing `end`, so a zero length follows the last record; an
        // `end` on a block boundary (after a pad) needs no block beyond it: whatever an
        // older lap or epoch left there fails the position check (a clean end).
        let padded = u64_of(data.len()).div_ceil(BS) * BS;
        data.resize(usize_of(padded), 0);
        let mut off = 0usize;
        while off < data.len() {
            let pos = (start + u64_of(off)) % self.size;
            let n = usize_of(self.size - pos).min(data.len() - off);
            self.dev.write_at(self.start + pos, &data[off..off + n])?;
            off += n;
        }
        self.dev.flush()?;
        EngineCounters::add(&self.counters.wal_device_bytes, padded);
        EngineCounters::add(&self.counters.wal_flushes, 1);
        let prev = self.flushed.swap(end, Ordering::AcqRel);
        assert!(prev <= end, "durable end moved backwards: {prev} -> {end}");
        let mut b = self.inner.lock();
        if b.spare.capacity() < data.capacity() {
            b.spare = data;
        }
        Ok(())
    }

    /// Before a group is cut: fill the rest of its last block with a pad record, so the next
    /// group starts on a fresh block instead of rewriting this one (the device bytes of a
    /// flush are then its records and the pad, not also the head of a block written before).
    /// Only where the pad is small against the group (a quarter at most: one-record groups
    /// of `Sync` puts would otherwise spend the log on pads) and fits a header and the
    /// region's limit.
    fn pad_block(&self, b: &mut WalBuf) {
        let end = b.next_lsn;
        let room = end.next_multiple_of(BS) - end;
        let group = end - self.flushed_lsn();
        if room < u64_of(wfmt::HEADER) || room * 4 > group || end + room >= self.limit() {
            return;
        }
        let at = b.buf.len();
        b.buf.resize(at + usize_of(room), 0);
        wfmt::encode_pad(&mut b.buf[at..], end, self.salt, self.flushed_lsn());
        b.next_lsn = end + room;
        assert_eq!(b.next_lsn % BS, 0, "a pad ends its block");
        self.next.store(b.next_lsn, Ordering::Release);
        EngineCounters::add(&self.counters.wal_pad_bytes, room);
    }

    /// The flush mark for a durable end `end` (module doc), in the slot of its pair that
    /// does not hold the newest mark. Checked as written: ends strictly grow within the
    /// epoch and stay inside the live log, and the block reads back as the mark.
    fn write_mark(&self, marks: &mut Marks, end: u64) -> Result<()> {
        let m = Mark {
            salt: self.salt,
            seq: marks.seq,
            end,
        };
        assert!(
            end > marks.end,
            "flush mark {} vouches for {end}, not beyond the previous one's {}",
            m.seq,
            marks.end
        );
        let limit = self.limit();
        assert!(
            end < limit,
            "flush mark for {end} beyond the log's limit {limit}"
        );
        let block = m.encode();
        assert_eq!(
            Mark::decode(&block, m.slot()),
            Ok(Some(m)),
            "flush mark does not read back"
        );
        self.dev.write_at(self.marks + m.slot() * BS, &block)?;
        self.dev.flush()?;
        EngineCounters::add(&self.counters.wal_device_bytes, BS);
        EngineCounters::add(&self.counters.wal_marks, 1);
        *marks = Marks {
            seq: m.seq + 1,
            end,
        };
        Ok(())
    }

    /// Flush everything appended so far.
    ///
    /// # Errors
    /// As [`Self::flush`].
    pub fn flush_all(&self) -> Result<()> {
        self.flush(self.next_lsn())
    }
}

#[cfg(test)]
mod tests;
