//! Targeted media damage at open: one unreadable block in the mapping snapshot the current
//! superblock names. docs/design.md 14.5 promises a lossless fallback to the older snapshot
//! (plus a longer zone roll-forward), so the recovered state is checked strictly, and the
//! recovery report must name the fallback.

use super::Sim;
use nowa_device::BlockDevice;
use nowa_engine::format::{meta, superblock, BLOCK};
use rand::RngExt;

impl Sim {
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
