//! Reading the log back: the sequential scanner redo uses, and the analysis that finds the
//! end of the log and tells a torn tail (a crash) from damage in the middle (media).
//!
//! The scan reads units (groups of entries, pads), each checked whole (length, position,
//! checksum, every entry), and returns their entries from the redo LSN on; it starts at the
//! group holding the redo LSN (the superblock's scan start).
//!
//! A crash can only damage the bytes of the flush in flight: every byte before the durable
//! end at the time of the crash was written by a completed flush. Every unit carries the
//! durable end of the log when it was begun (`durable_before`). So if the scan stops at
//! LSN `x` and some valid unit of this epoch further on says the log was durable beyond
//! `x` before it was begun, the bytes at `x` were durable and are now unreadable: media
//! damage, never a crash. Without such a unit the stop is a torn (or clean) tail; only
//! groups of the last flush before the crash are lost (a group never spans two flushes),
//! and none of their entries was acknowledged as durable. A block that fails to read (I/O
//! error) is never a torn write: it is damage. A stop inside the group holding the redo
//! LSN is damage too (that group was durable when the checkpoint named it). No later unit
//! vouches for the very last flush: its flush mark does (`format::mark`, outside the log):
//! a stop below the end the epoch's newest mark vouches for is damage.

use crate::error::{Corruption, FlushMarkDamage, RecordDamage, Result};
use crate::format::mark::{self, Mark};
use crate::format::wal::{self as rec, Header, Record};
use crate::format::BLOCK;
use crate::num::{u64_of, usize_of};
use nowa_device::{BlockDevice, DeviceError};
use std::collections::VecDeque;

const BS: u64 = BLOCK as u64;
const CHUNK: u64 = 256 << 10;

/// Why a sequential scan stopped (at [`WalScanner::lsn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Zero length, a stale unit (older lap or epoch), or the end of the live extent.
    Clean,
    /// A bad unit.
    Bad(RecordDamage),
}

/// Sequential reader over the circular region.
pub struct WalScanner<'a> {
    dev: &'a dyn BlockDevice,
    start: u64,
    size: u64,
    salt: u32,
    /// Highest LSN a unit of this epoch can reach (the append limit of `from`).
    limit: u64,
    /// LSN of the next record to return; once the queue is empty, where the next unit
    /// starts or the log ends (never below the redo LSN).
    pub lsn: u64,
    /// Where the next unit starts.
    pos: u64,
    /// Records below it are not returned (the redo LSN).
    redo: u64,
    /// Entries of the last unit read, not returned yet.
    queue: VecDeque<(u64, Record)>,
    chunk_lsn: u64,
    chunk: Vec<u8>,
    /// Stream LSNs of blocks that failed to read.
    unreadable: Vec<u64>,
}

impl<'a> WalScanner<'a> {
    /// A scanner of the WAL region `start_block`/`blocks` (the circular log, then the
    /// flush-mark area) for epoch `salt`: units from `from` (the start of the group holding
    /// `redo`, or `redo` itself), records from `redo` on.
    ///
    /// # Panics
    /// If `from` lies after `redo`.
    #[must_use]
    pub fn new(
        dev: &'a dyn BlockDevice,
        start_block: u64,
        blocks: u64,
        salt: u32,
        (from, redo): (u64, u64),
    ) -> Self {
        assert!(from <= redo, "scan from {from} past the redo LSN {redo}");
        let size = mark::log_blocks(blocks) * BS;
        WalScanner {
            dev,
            start: start_block * BS,
            size,
            salt,
            limit: from / BS * BS + size - BS,
            lsn: redo,
            pos: from,
            redo,
            queue: VecDeque::new(),
            chunk_lsn: u64::MAX,
            chunk: Vec::new(),
            unreadable: Vec::new(),
        }
    }

    /// Load the chunk holding `lsn`; blocks that fail to read are zero and remembered.
    fn load(&mut self, lsn: u64) -> Result<()> {
        let cl = lsn / BS * BS;
        let pos = cl % self.size;
        let len = CHUNK.min(self.size - pos);
        self.chunk.resize(usize_of(len), 0);
        match self.dev.read_at(self.start + pos, &mut self.chunk) {
            Ok(()) => {}
            Err(DeviceError::Io(_)) => {
                for b in 0..len / BS {
                    let at = usize_of(b * BS);
                    let blk = &mut self.chunk[at..at + BLOCK];
                    if let Err(e) = self.dev.read_at(self.start + pos + b * BS, blk) {
                        if !matches!(e, DeviceError::Io(_)) {
                            return Err(e.into());
                        }
                        blk.fill(0);
                        self.unreadable.push(cl + b * BS);
                    }
                }
            }
            Err(e) => return Err(e.into()),
        }
        self.chunk_lsn = cl;
        Ok(())
    }

    /// Stream bytes [lsn, lsn + n) (n small relative to the region); None if one of their
    /// blocks failed to read.
    fn read(&mut self, lsn: u64, n: usize) -> Result<Option<Vec<u8>>> {
        let mut out = Vec::with_capacity(n);
        let mut cur = lsn;
        while out.len() < n {
            if self.chunk_lsn == u64::MAX
                || cur < self.chunk_lsn
                || cur >= self.chunk_lsn + u64_of(self.chunk.len())
            {
                self.load(cur)?;
            }
            let o = usize_of(cur - self.chunk_lsn);
            let take = (self.chunk.len() - o).min(n - out.len());
            out.extend_from_slice(&self.chunk[o..o + take]);
            cur += u64_of(take);
        }
        let (lo, hi) = (lsn / BS * BS, lsn + u64_of(n));
        if self.unreadable.iter().any(|&b| b >= lo && b < hi) {
            return Ok(None);
        }
        Ok(Some(out))
    }

    /// Next valid record (its LSN and the record), or why the log ends here.
    ///
    /// # Errors
    /// Device errors other than unreadable blocks.
    pub fn next_record(&mut self) -> Result<std::result::Result<(u64, Record), Stop>> {
        loop {
            if let Some(r) = self.queue.pop_front() {
                self.lsn = self.queue.front().map_or(self.pos, |n| n.0).max(self.redo);
                return Ok(Ok(r));
            }
            match self.next_unit()? {
                Ok(entries) => {
                    let redo = self.redo;
                    self.queue
                        .extend(entries.into_iter().filter(|e| e.0 >= redo));
                    self.lsn = self.queue.front().map_or(self.pos, |n| n.0).max(redo);
                }
                Err(stop) => return Ok(Err(stop)),
            }
        }
    }

    /// Did the scan stop inside the group holding the redo LSN (a group that was durable)?
    #[must_use]
    pub fn stopped_below_redo(&self) -> bool {
        self.pos < self.redo
    }

    /// The next valid unit's entries (the scan moves past it), or why the log ends here.
    fn next_unit(&mut self) -> Result<std::result::Result<Vec<(u64, Record)>, Stop>> {
        let lsn = self.pos;
        if lsn + u64_of(rec::HEADER) > self.limit {
            return Ok(Err(Stop::Clean));
        }
        let Some(h) = self.read(lsn, rec::HEADER)? else {
            return Ok(Err(Stop::Bad(RecordDamage::Unreadable)));
        };
        let len = rec::LEN.u32(&h);
        if len == 0 {
            return Ok(Err(Stop::Clean));
        }
        if !rec::position_ok(&h, 0, lsn, self.salt) {
            // On a block boundary: what another lap or epoch left after a group that ended
            // there (a pad), a clean end. Inside a block a clean end is a zero length (the
            // flush zero-fills its last block): these bytes are a torn (or damaged) unit.
            // The look-ahead and the flush marks tell damage from either.
            return Ok(Err(if lsn % BS == 0 {
                Stop::Clean
            } else {
                Stop::Bad(RecordDamage::Checksum)
            }));
        }
        if !rec::length_ok(len) || lsn + u64::from(len) > self.limit {
            return Ok(Err(Stop::Bad(RecordDamage::Length { len })));
        }
        let Some(r) = self.read(lsn, usize_of(u64::from(len)))? else {
            return Ok(Err(Stop::Bad(RecordDamage::Unreadable)));
        };
        match rec::decode_unit(&r, lsn, self.salt) {
            Ok((_, entries)) => {
                self.pos = lsn + u64::from(len);
                Ok(Ok(entries))
            }
            Err(d) => Ok(Err(Stop::Bad(d))),
        }
    }

    /// Look past a stop at `x` for valid units of this epoch: (the first one that proves
    /// `x` was durable, the end of the last valid unit found).
    fn look_ahead(&mut self, x: u64) -> Result<(Option<u64>, u64)> {
        let (mut evidence, mut last_end) = (None, x);
        let mut p = x + 1;
        while p + u64_of(rec::HEADER) <= self.limit {
            let base = p;
            let n = usize_of(CHUNK.min(self.limit - base));
            let Some(window) = self.read(base, n)? else {
                p = base + BS.min(u64_of(n));
                continue;
            };
            let mut i = 0usize;
            while i + rec::HEADER <= window.len() {
                let at = base + u64_of(i);
                if rec::position_ok(&window, i, at, self.salt) {
                    if let Some(end) = self.valid_at(at)? {
                        let h = Header::decode(&window[i..], at);
                        if evidence.is_none() && h.durable_before() > x {
                            evidence = Some(at);
                        }
                        last_end = last_end.max(end);
                        i = usize_of(end - base);
                        continue;
                    }
                }
                i += 1;
            }
            p = base + u64_of(i.max(1));
        }
        Ok((evidence, last_end))
    }

    /// End of the valid unit of this epoch at `at`, if there is one.
    fn valid_at(&mut self, at: u64) -> Result<Option<u64>> {
        let Some(h) = self.read(at, rec::HEADER)? else {
            return Ok(None);
        };
        let len = rec::LEN.u32(&h);
        if !rec::length_ok(len) || at + u64::from(len) > self.limit {
            return Ok(None);
        }
        let Some(r) = self.read(at, usize_of(u64::from(len)))? else {
            return Ok(None);
        };
        Ok(rec::decode_unit(&r, at, self.salt)
            .ok()
            .map(|_| at + u64::from(len)))
    }
}

/// Where the live log ends and whether anything durable was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogVerdict {
    /// The log ends cleanly at `end`.
    Clean {
        /// End of the last record.
        end: u64,
    },
    /// A torn tail: the record at `end` is bad; nothing durable follows.
    Torn {
        /// LSN of the bad record (everything before it is replayed).
        end: u64,
        /// What is wrong with it.
        damage: RecordDamage,
    },
    /// Damage in the middle: durable records in `[from, to)` are unreachable.
    Damaged {
        /// LSN of the first unreadable record.
        from: u64,
        /// End of the last valid record found after it.
        to: u64,
        /// What is wrong at `from`.
        damage: RecordDamage,
    },
}

/// The durable end the flush marks of epoch `salt` vouch for (None: no mark of the epoch),
/// checked against the format's invariants and the log's `limit`.
fn vouched_end(
    dev: &dyn BlockDevice,
    start_block: u64,
    blocks: u64,
    salt: u32,
    limit: u64,
) -> Result<Option<u64>> {
    let first = mark::pair(salt);
    let at = (start_block + mark::log_blocks(blocks) + first) * BS;
    let mut pair = [None, None];
    let mut b = vec![0u8; BLOCK];
    for (i, m) in (0u64..).zip(pair.iter_mut()) {
        match dev.read_at(at + i * BS, &mut b) {
            // An unreadable mark vouches for nothing; damage to the log itself is still
            // found by the scan and the look-ahead.
            Err(DeviceError::Io(_)) => continue,
            r => r?,
        }
        let slot = first + i;
        *m = Mark::decode(&b, slot).map_err(|damage| Corruption::FlushMark { slot, damage })?;
    }
    let end = mark::vouched(salt, pair).map_err(|damage| Corruption::FlushMark {
        slot: first,
        damage,
    })?;
    if let Some(end) = end.filter(|&e| e > limit) {
        return Err(Corruption::FlushMark {
            slot: first,
            damage: FlushMarkDamage::BeyondLog { end, limit },
        }
        .into());
    }
    Ok(end)
}

/// Scan the live log of epoch `salt` (units from `from`, the start of the group holding
/// the redo LSN `redo`) and classify its end. Reads only. `clean`: the superblock says the
/// last instance closed cleanly (only the close's page versions follow the redo point
/// then, so the look-ahead is skipped at a clean end).
///
/// # Errors
/// Device errors other than unreadable blocks.
pub fn analyze(
    dev: &dyn BlockDevice,
    start_block: u64,
    blocks: u64,
    salt: u32,
    (from, redo): (u64, u64),
    clean: bool,
) -> Result<LogVerdict> {
    let mut sc = WalScanner::new(dev, start_block, blocks, salt, (from, redo));
    let stop = loop {
        match sc.next_record()? {
            Ok(_) => {}
            Err(stop) => break stop,
        }
    };
    let x = sc.lsn;
    let below_redo = sc.stopped_below_redo();
    // After a clean close nothing but the close's page versions follows the redo point
    // (db/checkpoint.rs): no acknowledged write can be lost past a clean end.
    if clean && stop == Stop::Clean && !below_redo {
        return Ok(LogVerdict::Clean { end: x });
    }
    let (evidence, last_end) = sc.look_ahead(sc.pos)?;
    let vouched = vouched_end(dev, start_block, blocks, salt, sc.limit)?;
    let damage = match stop {
        Stop::Bad(d) => d,
        Stop::Clean => RecordDamage::Missing,
    };
    let marked = vouched.filter(|&v| v > x);
    if evidence.is_some() || marked.is_some() || damage == RecordDamage::Unreadable || below_redo {
        return Ok(LogVerdict::Damaged {
            from: x,
            to: last_end.max(x).max(marked.unwrap_or(x)),
            damage,
        });
    }
    Ok(match stop {
        Stop::Clean => LogVerdict::Clean { end: x },
        Stop::Bad(damage) => LogVerdict::Torn { end: x, damage },
    })
}
