//! Targeted media damage at open: one unreadable block in the mapping snapshot the current
//! superblock names. docs/design.md 14.5 promises a lossless fallback to the older snapshot
//! (plus a longer zone roll-forward), so the recovered state is checked strictly, and the
//! recovery report must name the fallback.
//!
//! And one damaged block in the middle of the live WAL (below the last durable LSN, so
//! records follow it): with `WalDamage::Salvage` the open must salvage (the report says
//! so), with `Refuse` refuse with an error naming the damage. Either is media damage: the
//! rest of the seed checks only that nothing invented comes back.

use super::Sim;
use nowa_device::BlockDevice;
use nowa_engine::format::{meta, superblock, BLOCK};
use rand::RngExt;

/// What [`Sim::damage_wal`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WalHit {
    /// Nothing.
    None,
    /// Damaged a byte a flush mark vouches for (records follow it, or the mark does).
    Vouched,
    /// Damaged a byte past the last flush mark.
    Unmarked,
}

impl Sim {
    /// The current superblock of the database (the valid copy with the higher sequence).
    fn current_superblock(&self) -> Option<superblock::Superblock> {
        let sb_dev = self.log.clone().unwrap_or_else(|| self.main.clone());
        let mut b = vec![0u8; BLOCK];
        let mut best: Option<superblock::Superblock> = None;
        for copy in 0..2u64 {
            sb_dev.read_at(copy * 4096, &mut b).ok()?;
            if let Ok(sb) = superblock::Superblock::decode(&b) {
                if best.as_ref().is_none_or(|x| sb.seq > x.seq) {
                    best = Some(sb);
                }
            }
        }
        best
    }

    /// Flip a bit of one byte of the live WAL below the last durable LSN of the epoch (with
    /// probability `pct`, if the epoch made anything durable). Returns whether it did, and
    /// whether a flush mark vouched for the byte.
    pub(super) fn damage_wal(&mut self, pct: u32) -> WalHit {
        if self.r.random_range(0..100) >= pct {
            return WalHit::None;
        }
        let Some(sb) = self.current_superblock() else {
            return WalHit::None;
        };
        let (redo, durable) = (sb.redo_lsn, self.durable_lsn);
        if durable <= redo {
            return WalHit::None;
        }
        // Every byte of [redo, durable) is a byte of a durable record (records are
        // contiguous; the flush marks vouch for the last acknowledged flush, write-back's
        // flushes after it are vouched for only by the pages they let reach the disk).
        let lsn = self.r.random_range(redo..durable);
        let vouched = lsn < self.vouched_lsn;
        let wal = &sb.layout;
        assert!(wal.log_blocks() > 0, "a WAL region");
        let at = (wal.wal_start + (lsn / 4096) % wal.log_blocks()) * 4096;
        let devs = self.power.devices();
        let dev = devs.last().expect("a device").inner().clone();
        assert!(
            at + 4096 <= dev.geometry().capacity,
            "the WAL lies on its device"
        );
        let mut b = vec![0u8; BLOCK];
        if dev.read_at(at, &mut b).is_err() {
            return WalHit::None;
        }
        let i = usize::try_from(lsn % 4096).expect("below a block");
        b[i] ^= 1 << self.r.random_range(0..8);
        if dev.write_at(at, &b).is_err() || dev.flush().is_err() {
            return WalHit::None;
        }
        self.out.coverage.wal_damages += 1;
        if self.verbose {
            eprintln!(
                "  WAL byte of LSN {lsn} (device byte {at} + {i}) damaged for the open \
                 (vouched for: {vouched})"
            );
        }
        if vouched {
            self.media = true;
            return WalHit::Vouched;
        }
        // Past the last mark: the open may lose the records from the damage on (none was
        // acknowledged durable) or refuse (a page holds one of them); whatever opens is
        // checked strictly against the model.
        self.unmarked_damage = true;
        self.out.coverage.unmarked_damages += 1;
        WalHit::Unmarked
    }

    /// Make one block of the current snapshot unreadable for the next open (out of place,
    /// with probability `pct`). Returns whether it did.
    pub(super) fn damage_snapshot(&mut self, pct: u32) -> bool {
        if self.s.oop.is_none() || self.r.random_range(0..100) >= pct {
            return false;
        }
        let sb_dev = self.log.clone().unwrap_or_else(|| self.main.clone());
        let mut b = vec![0u8; BLOCK];
        let mut best: Option<superblock::Superblock> = None;
        for copy in 0..2u64 {
            if sb_dev.read_at(copy * 4096, &mut b).is_err() {
                return false;
            }
            if let Ok(sb) = superblock::Superblock::decode(&b) {
                if best.as_ref().is_none_or(|x| sb.seq > x.seq) {
                    best = Some(sb);
                }
            }
        }
        let Some(rec) = best.and_then(|sb| meta::MetaRecord::decode(&sb.store_meta).ok()) else {
            return false;
        };
        let blocks = (rec.entries * meta::SNAP_ENTRY as u64).div_ceil(4096);
        if !rec.present || blocks == 0 {
            return false;
        }
        let first = rec.meta_start + u64::from(rec.copy) * rec.meta_blocks;
        let at = (first + self.r.random_range(0..blocks)) * 4096;
        let devs = self.power.devices();
        let dev = &devs[usize::from(rec.on_log && devs.len() > 1)];
        assert!(
            at + 4096 <= dev.geometry().capacity,
            "the snapshot lies on its device"
        );
        dev.fail_reads(at..at + 4096);
        if self.verbose {
            eprintln!(
                "  snapshot copy {} block at byte {at} unreadable for the open",
                rec.copy
            );
        }
        true
    }
}
