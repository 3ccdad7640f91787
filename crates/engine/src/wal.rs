//! Write-ahead log: a circular region of the device holding an append-only record stream.
//! The LSN of a record is its byte position in the infinite stream; it lives at physical byte
//! `wal_start + lsn % region_size`.
//!
//! ```text
//! record: offset size field
//!          0     4   total length (header + payload); 0 = end of log
//!          4     4   crc32c of bytes [8, len)
//!          8     8   lsn (must equal the record's stream position; else stale, previous lap)
//!         16     4   salt (epoch chosen at each open; other salt = stale, previous epoch)
//!         20     1   type: 1 Put, 2 Delete, 3 Smo
//!         21     ..  payload
//! Put   : pid u64 | klen u16 | vlen u16 | key | value
//! Delete: pid u64 | klen u16 | key
//! Smo   : root u64 | next_pid u64 | n u16 | n x (pid u64 | 4096-byte page image)
//! ```
//! Group commit: appends go to an in-memory buffer under a short mutex; `flush(lsn)` is
//! serialized by a second mutex, so one flusher writes everything appended so far and the
//! threads waiting behind it usually find their LSN already durable. Each flush writes whole
//! blocks from the block containing the durable end up to and including the block containing
//! the new end, zero-padded: the byte after the last record is always a zero length.

use crate::error::{EngineError, Pid, Result};
use crate::page::PAGE_SIZE;
use crate::stats::Counters;
use nowa_device::BlockDevice;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub const REC_HDR: usize = 21;
pub const MAX_REC: usize = 1 << 20;
const BS: u64 = PAGE_SIZE as u64;

pub const T_PUT: u8 = 1;
pub const T_DELETE: u8 = 2;
pub const T_SMO: u8 = 3;

/// A decoded record.
#[derive(Debug)]
pub enum Record {
    Put {
        pid: Pid,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    Delete {
        pid: Pid,
        key: Vec<u8>,
    },
    Smo {
        root: Pid,
        next_pid: Pid,
        pages: Vec<(Pid, Vec<u8>)>,
    },
}

struct WalBuf {
    next_lsn: u64,
    /// Block-aligned LSN of buf[0]; buf holds bytes [buf_start, next_lsn).
    buf_start: u64,
    buf: Vec<u8>,
    /// Buffer handed back by the last flush, reused to avoid an allocation per flush.
    spare: Vec<u8>,
}

pub struct Wal {
    dev: Arc<dyn BlockDevice>,
    start: u64,
    size: u64,
    salt: u32,
    inner: Mutex<WalBuf>,
    flush_lock: Mutex<()>,
    flushed: AtomicU64,
    next: AtomicU64,
    /// Oldest LSN still needed by recovery (redo LSN of the last checkpoint).
    redo: AtomicU64,
    counters: Arc<Counters>,
}

fn align_down(x: u64) -> u64 {
    x / BS * BS
}

impl Wal {
    /// `start_block`/`blocks`: the region; the log continues at `lsn` (all earlier is durable).
    pub fn new(
        dev: Arc<dyn BlockDevice>,
        start_block: u64,
        blocks: u64,
        salt: u32,
        lsn: u64,
        counters: Arc<Counters>,
    ) -> Self {
        let buf_start = align_down(lsn);
        Wal {
            dev,
            start: start_block * BS,
            size: blocks * BS,
            salt,
            // The partial block before `lsn` is zero here only if nothing precedes it in this
            // epoch; the engine always starts an epoch at a block boundary.
            inner: Mutex::new(WalBuf {
                next_lsn: lsn,
                buf_start,
                buf: vec![0; (lsn - buf_start) as usize],
                spare: Vec::new(),
            }),
            flush_lock: Mutex::new(()),
            flushed: AtomicU64::new(lsn),
            next: AtomicU64::new(lsn),
            redo: AtomicU64::new(lsn),
            counters,
        }
    }

    pub fn next_lsn(&self) -> u64 {
        self.next.load(Ordering::Acquire)
    }
    pub fn flushed_lsn(&self) -> u64 {
        self.flushed.load(Ordering::Acquire)
    }
    pub fn redo_lsn(&self) -> u64 {
        self.redo.load(Ordering::Acquire)
    }
    pub fn set_redo_lsn(&self, lsn: u64) {
        self.redo.store(lsn, Ordering::Release);
    }
    /// Live log bytes (what a checkpoint would release).
    pub fn used(&self) -> u64 {
        self.next_lsn().saturating_sub(self.redo_lsn())
    }
    /// Bytes appended but not yet durable.
    pub fn unflushed(&self) -> u64 {
        self.next_lsn().saturating_sub(self.flushed_lsn())
    }

    /// Append a record; returns its LSN. Fails with Full only if the region is exhausted,
    /// which the engine prevents by checkpointing before the limit (the region has slack).
    pub fn append(&self, ty: u8, payload: &[&[u8]]) -> Result<u64> {
        let plen: usize = payload.iter().map(|p| p.len()).sum();
        let len = REC_HDR + plen;
        let mut b = self.inner.lock();
        let lsn = b.next_lsn;
        // The block holding the end must never overlap the block holding the redo point.
        let limit = align_down(self.redo_lsn()) + self.size - BS;
        if lsn + len as u64 >= limit {
            return Err(EngineError::Full(format!(
                "WAL region full ({} bytes live)",
                lsn - self.redo_lsn()
            )));
        }
        let at = b.buf.len();
        b.buf.resize(at + len, 0);
        let r = &mut b.buf[at..at + len];
        r[0..4].copy_from_slice(&(len as u32).to_le_bytes());
        r[8..16].copy_from_slice(&lsn.to_le_bytes());
        r[16..20].copy_from_slice(&self.salt.to_le_bytes());
        r[20] = ty;
        let mut o = REC_HDR;
        for p in payload {
            r[o..o + p.len()].copy_from_slice(p);
            o += p.len();
        }
        let crc = crc32c::crc32c(&r[8..]);
        r[4..8].copy_from_slice(&crc.to_le_bytes());
        b.next_lsn = lsn + len as u64;
        self.next.store(b.next_lsn, Ordering::Release);
        drop(b);
        Counters::add(&self.counters.wal_record_bytes, len as u64);
        Ok(lsn)
    }

    /// Make every record with LSN < `upto` durable (group commit).
    pub fn flush(&self, upto: u64) -> Result<()> {
        if self.flushed_lsn() >= upto {
            return Ok(());
        }
        let _f = self.flush_lock.lock();
        if self.flushed_lsn() >= upto {
            return Ok(());
        }
        let (start, mut data, end) = {
            let mut b = self.inner.lock();
            let end = b.next_lsn;
            let start = b.buf_start;
            // Keep the partial last block: the next flush rewrites it with more records.
            let keep_from = align_down(end);
            let k = (keep_from - start) as usize;
            let mut fresh = std::mem::take(&mut b.spare);
            fresh.clear();
            fresh.extend_from_slice(&b.buf[k..]);
            let data = std::mem::replace(&mut b.buf, fresh);
            b.buf_start = keep_from;
            (start, data, end)
        };
        // Pad to include the block containing `end`, so a zero length follows the last record.
        let padded = ((data.len() as u64 / BS) + 1) * BS;
        data.resize(padded as usize, 0);
        let mut off = 0usize;
        while off < data.len() {
            let pos = (start + off as u64) % self.size;
            let n = ((self.size - pos) as usize).min(data.len() - off);
            self.dev.write_at(self.start + pos, &data[off..off + n])?;
            off += n;
        }
        self.dev.flush()?;
        Counters::add(&self.counters.wal_device_bytes, padded);
        Counters::add(&self.counters.wal_flushes, 1);
        self.flushed.store(end, Ordering::Release);
        let mut b = self.inner.lock();
        if b.spare.capacity() < data.capacity() {
            b.spare = data;
        }
        Ok(())
    }

    pub fn flush_all(&self) -> Result<()> {
        self.flush(self.next_lsn())
    }
}

/// Why a WAL scan stopped.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum WalStop {
    /// Zero length, stale record (older lap / epoch) or end of region: a clean end.
    Clean,
    /// A record failed validation (torn tail or corruption); everything before it was kept.
    BadRecord { lsn: u64, detail: String },
}

/// Sequential reader over the circular region, for recovery.
pub struct WalScanner<'a> {
    dev: &'a dyn BlockDevice,
    start: u64,
    size: u64,
    salt: u32,
    from: u64,
    pub lsn: u64,
    chunk_lsn: u64,
    chunk: Vec<u8>,
}

const CHUNK: u64 = 256 << 10;

impl<'a> WalScanner<'a> {
    pub fn new(
        dev: &'a dyn BlockDevice,
        start_block: u64,
        blocks: u64,
        salt: u32,
        from: u64,
    ) -> Self {
        WalScanner {
            dev,
            start: start_block * BS,
            size: blocks * BS,
            salt,
            from,
            lsn: from,
            chunk_lsn: u64::MAX,
            chunk: Vec::new(),
        }
    }

    /// Read stream bytes [lsn, lsn+n) (n small relative to the region).
    fn read(&mut self, lsn: u64, n: usize) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(n);
        let mut cur = lsn;
        while out.len() < n {
            if self.chunk_lsn == u64::MAX
                || cur < self.chunk_lsn
                || cur >= self.chunk_lsn + self.chunk.len() as u64
            {
                let cl = align_down(cur);
                let pos = cl % self.size;
                let len = CHUNK.min(self.size - pos);
                self.chunk.resize(len as usize, 0);
                self.dev.read_at(self.start + pos, &mut self.chunk)?;
                self.chunk_lsn = cl;
            }
            let o = (cur - self.chunk_lsn) as usize;
            let take = (self.chunk.len() - o).min(n - out.len());
            out.extend_from_slice(&self.chunk[o..o + take]);
            cur += take as u64;
        }
        Ok(out)
    }

    /// Next valid record, or the reason the log ends here.
    pub fn next_record(&mut self) -> Result<std::result::Result<(u64, Record), WalStop>> {
        let lsn = self.lsn;
        if lsn - self.from + REC_HDR as u64 > self.size - BS {
            return Ok(Err(WalStop::Clean));
        }
        let h = self.read(lsn, REC_HDR)?;
        let len = u32::from_le_bytes(h[0..4].try_into().unwrap()) as usize;
        if len == 0 {
            return Ok(Err(WalStop::Clean));
        }
        let bad = |d: &str| {
            Ok(Err(WalStop::BadRecord {
                lsn,
                detail: d.to_string(),
            }))
        };
        if !(REC_HDR..=MAX_REC).contains(&len) || lsn - self.from + len as u64 > self.size - BS {
            // Could be stale bytes of an older lap whose record boundaries differ.
            return bad(&format!("bad record length {len}"));
        }
        let r = self.read(lsn, len)?;
        let crc = u32::from_le_bytes(r[4..8].try_into().unwrap());
        if crc != crc32c::crc32c(&r[8..]) {
            return bad("checksum mismatch");
        }
        let rl = u64::from_le_bytes(r[8..16].try_into().unwrap());
        let salt = u32::from_le_bytes(r[16..20].try_into().unwrap());
        if salt != self.salt || rl != lsn {
            return Ok(Err(WalStop::Clean));
        }
        match decode(r[20], &r[REC_HDR..]) {
            Some(rec) => {
                self.lsn = lsn + len as u64;
                Ok(Ok((lsn, rec)))
            }
            None => bad("undecodable payload"),
        }
    }
}

fn decode(ty: u8, p: &[u8]) -> Option<Record> {
    let u64_at =
        |o: usize| -> Option<u64> { Some(u64::from_le_bytes(p.get(o..o + 8)?.try_into().ok()?)) };
    let u16_at = |o: usize| -> Option<usize> {
        Some(u16::from_le_bytes(p.get(o..o + 2)?.try_into().ok()?) as usize)
    };
    match ty {
        T_PUT => {
            let pid = u64_at(0)?;
            let kl = u16_at(8)?;
            let vl = u16_at(10)?;
            let key = p.get(12..12 + kl)?.to_vec();
            let value = p.get(12 + kl..12 + kl + vl)?.to_vec();
            (p.len() == 12 + kl + vl).then_some(Record::Put { pid, key, value })
        }
        T_DELETE => {
            let pid = u64_at(0)?;
            let kl = u16_at(8)?;
            let key = p.get(10..10 + kl)?.to_vec();
            (p.len() == 10 + kl).then_some(Record::Delete { pid, key })
        }
        T_SMO => {
            let root = u64_at(0)?;
            let next_pid = u64_at(8)?;
            let n = u16_at(16)?;
            if p.len() != 18 + n * (8 + PAGE_SIZE) {
                return None;
            }
            let mut pages = Vec::with_capacity(n);
            for i in 0..n {
                let o = 18 + i * (8 + PAGE_SIZE);
                pages.push((u64_at(o)?, p[o + 8..o + 8 + PAGE_SIZE].to_vec()));
            }
            Some(Record::Smo {
                root,
                next_pid,
                pages,
            })
        }
        _ => None,
    }
}
