//! Superblock: two checksummed copies in blocks 0 and 1, written alternately (copy = seq % 2),
//! so a torn superblock write always leaves the previous one intact.
//!
//! ```text
//! offset size field
//!   0    4   crc32c of bytes [4, 4096)
//!   4    4   magic "NOWA" (0x41574F4E)
//!   8    4   format version (1)
//!  12    4   page size (4096)
//!  16    8   seq (monotonic; the valid copy with the highest seq wins)
//!  24    8   doublewrite area: first block
//!  32    8   doublewrite area: slots (pages)
//!  40    8   WAL region: first block
//!  48    8   WAL region: blocks
//!  56    8   data region: first block (pid p lives at block data_start + p)
//!  64    8   data region: pages
//!  72    1   doublewrite enabled when the checkpoint was written (informational)
//!  73    1   clean shutdown (1 = closed by close())
//!  74    6   reserved
//!  -- checkpoint record --
//!  80    8   redo LSN: recovery replays the WAL from here
//!  88    8   root pid
//!  96    8   next pid (allocation high-water mark)
//! 104    4   WAL salt: records of other epochs (other salt) are stale
//! 108    4   page-store metadata length m (0 for in-place)
//! 112    m   page-store metadata (out-of-place mapping snapshot, next issue)
//! ```

use crate::error::{EngineError, Result};
use crate::page::PAGE_SIZE;
use nowa_device::BlockDevice;

const MAGIC: u32 = 0x4157_4F4E;
const VERSION: u32 = 1;
pub const MAX_META: usize = PAGE_SIZE - 112;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Layout {
    pub dw_start: u64,
    pub dw_pages: u64,
    pub wal_start: u64,
    pub wal_blocks: u64,
    pub data_start: u64,
    pub data_pages: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superblock {
    pub seq: u64,
    pub layout: Layout,
    pub doublewrite: bool,
    pub clean: bool,
    /// The WAL region lives on a separate device (wal_start/wal_blocks refer to it).
    pub wal_separate: bool,
    pub redo_lsn: u64,
    pub root: u64,
    pub next_pid: u64,
    pub wal_salt: u32,
    pub store_meta: Vec<u8>,
}

fn r64(p: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(p[o..o + 8].try_into().unwrap())
}
fn r32(p: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(p[o..o + 4].try_into().unwrap())
}

impl Superblock {
    pub fn encode(&self) -> Vec<u8> {
        let mut p = vec![0u8; PAGE_SIZE];
        p[4..8].copy_from_slice(&MAGIC.to_le_bytes());
        p[8..12].copy_from_slice(&VERSION.to_le_bytes());
        p[12..16].copy_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
        let l = &self.layout;
        for (o, v) in [
            (16, self.seq),
            (24, l.dw_start),
            (32, l.dw_pages),
            (40, l.wal_start),
            (48, l.wal_blocks),
            (56, l.data_start),
            (64, l.data_pages),
            (80, self.redo_lsn),
            (88, self.root),
            (96, self.next_pid),
        ] {
            p[o..o + 8].copy_from_slice(&v.to_le_bytes());
        }
        p[72] = self.doublewrite as u8;
        p[73] = self.clean as u8;
        p[74] = self.wal_separate as u8;
        p[104..108].copy_from_slice(&self.wal_salt.to_le_bytes());
        let m = self.store_meta.len().min(MAX_META);
        p[108..112].copy_from_slice(&(m as u32).to_le_bytes());
        p[112..112 + m].copy_from_slice(&self.store_meta[..m]);
        let c = crc32c::crc32c(&p[4..]);
        p[0..4].copy_from_slice(&c.to_le_bytes());
        p
    }

    pub fn decode(p: &[u8]) -> std::result::Result<Superblock, String> {
        if p.len() != PAGE_SIZE {
            return Err("short superblock".into());
        }
        if r32(p, 0) != crc32c::crc32c(&p[4..]) {
            return Err("checksum mismatch".into());
        }
        if r32(p, 4) != MAGIC {
            return Err("bad magic".into());
        }
        if r32(p, 8) != VERSION || r32(p, 12) != PAGE_SIZE as u32 {
            return Err("unsupported version or page size".into());
        }
        let m = r32(p, 108) as usize;
        if m > MAX_META {
            return Err("metadata length out of range".into());
        }
        Ok(Superblock {
            seq: r64(p, 16),
            layout: Layout {
                dw_start: r64(p, 24),
                dw_pages: r64(p, 32),
                wal_start: r64(p, 40),
                wal_blocks: r64(p, 48),
                data_start: r64(p, 56),
                data_pages: r64(p, 64),
            },
            doublewrite: p[72] != 0,
            clean: p[73] != 0,
            wal_separate: p[74] != 0,
            redo_lsn: r64(p, 80),
            root: r64(p, 88),
            next_pid: r64(p, 96),
            wal_salt: r32(p, 104),
            store_meta: p[112..112 + m].to_vec(),
        })
    }

    /// Write copy `seq % 2` and flush.
    pub fn write(&self, dev: &dyn BlockDevice) -> Result<()> {
        if self.store_meta.len() > MAX_META {
            // Never truncate silently: a store with more metadata needs its own region.
            return Err(EngineError::Config(format!(
                "page-store metadata of {} bytes exceeds the superblock's {MAX_META}",
                self.store_meta.len()
            )));
        }
        let block = self.seq % 2;
        dev.write_at(block * PAGE_SIZE as u64, &self.encode())?;
        dev.flush()?;
        Ok(())
    }

    /// Read both copies; the valid one with the highest seq wins.
    /// Read from `dev` (the log device when the WAL is separate, else the main device).
    /// `main_capacity`: the main device; `wal_capacity`: the separate WAL device, if given.
    pub fn read(
        dev: &dyn BlockDevice,
        main_capacity: u64,
        wal_capacity: Option<u64>,
    ) -> Result<Superblock> {
        let mut best: Option<Superblock> = None;
        let mut errs = Vec::new();
        for b in 0..2u64 {
            let mut buf = vec![0u8; PAGE_SIZE];
            dev.read_at(b * PAGE_SIZE as u64, &mut buf)?;
            match Superblock::decode(&buf) {
                Ok(s) => {
                    if best.as_ref().is_none_or(|x| s.seq > x.seq) {
                        best = Some(s);
                    }
                }
                Err(e) => errs.push(format!("copy {b}: {e}")),
            }
        }
        let sb = best.ok_or_else(|| EngineError::Superblock(errs.join("; ")))?;
        match (sb.wal_separate, wal_capacity) {
            (true, None) => {
                return Err(EngineError::Config(
                    "this database keeps its WAL on a separate device: open it with that device"
                        .into(),
                ))
            }
            (false, Some(_)) => {
                return Err(EngineError::Config(
                    "this database keeps its WAL on the main device, but a WAL device was given"
                        .into(),
                ))
            }
            _ => {}
        }
        sb.check(main_capacity, wal_capacity)?;
        Ok(sb)
    }

    /// Layout sanity against the device, so later arithmetic cannot go out of range.
    fn check(&self, capacity: u64, wal_capacity: Option<u64>) -> Result<()> {
        let l = &self.layout;
        let blocks = capacity / PAGE_SIZE as u64;
        let wal_ok = match wal_capacity {
            None => {
                l.dw_start
                    .checked_add(l.dw_pages)
                    .is_some_and(|e| e <= l.wal_start)
                    && l.wal_start
                        .checked_add(l.wal_blocks)
                        .is_some_and(|e| e <= l.data_start)
            }
            Some(c) => {
                l.dw_start
                    .checked_add(l.dw_pages)
                    .is_some_and(|e| e <= l.data_start)
                    && l.wal_start
                        .checked_add(l.wal_blocks)
                        .is_some_and(|e| e <= c / PAGE_SIZE as u64)
            }
        };
        let ok = l.dw_start >= 2
            && wal_ok
            && l.wal_blocks >= 2
            && l.data_start
                .checked_add(l.data_pages)
                .is_some_and(|e| e <= blocks)
            && self.next_pid <= l.data_pages
            && self.root < self.next_pid;
        if !ok {
            return Err(EngineError::Superblock(format!(
                "layout out of range: {l:?} next_pid {} root {}",
                self.next_pid, self.root
            )));
        }
        Ok(())
    }
}
