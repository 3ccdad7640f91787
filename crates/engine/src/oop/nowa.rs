//! NoWA's deferred compensation: when it is due. Its victims (whole active groups, the
//! siblings deferred) are chosen by the space's victim policy, `nowa_logspace::GroupGreedy`;
//! the waiting groups are in memory only (after a restart the siblings form an ordinary group
//! again and group GC picks them up).

use super::{OutOfPlaceStore, State};
use crate::error::Result;
use crate::num::{f64_of, u64_of, usize_of};
use crate::store::WriteKind;

impl OutOfPlaceStore {
    /// NoWA on a conventional or FDP device, at a clean close (after the final checkpoint):
    /// fill the active group's open zones to their ends with zero blocks (no slot: the
    /// roll-forward scan skips them, and the rebuild at open seals every zone) and seal them. A reopened store never appends to
    /// them again (it opens a new group), so without this the device's write stream would end inside a group, and every group
    /// written after the reopen (or after a reformat, or in the next pass of a looped trace
    /// replay) would straddle two SSD superblocks: the SSD would then copy at high fill
    /// (docs/realio.md, NoWA on a recorded trace). Costs at most one group of writes per
    /// close, counted as compensation bytes.
    pub(super) fn finish_active_group(&self) -> Result<()> {
        if !self.cfg.nowa || self.zoned || self.cfg.placement.is_some() {
            return Ok(());
        }
        let _io = self.io.lock();
        let mut guard = self.st.write();
        let st: &mut State = &mut guard;
        let mut padded = false;
        for z in std::mem::take(&mut st.open) {
            let zi = usize_of(u64::from(z));
            let wp = st.zone_wp[zi];
            assert!(wp <= self.geo.zone_pages, "zone {z} written past its end");
            let rest = self.geo.zone_pages - wp;
            if rest > 0 {
                let pad = vec![0u8; usize_of(rest * super::BS)];
                self.dev.write_at_hinted(
                    (self.zone_block(z) + wp) * super::BS,
                    &pad,
                    self.zone_hint(st, z),
                )?;
                WriteKind::Compensation.count_bytes(&self.counters, u64_of(pad.len()));
                st.zone_wp[zi] = self.geo.zone_pages;
                padded = true;
            }
            st.space.get_mut().seal(z);
            st.placer.get_mut().sealed(st.space.get_mut(), z);
        }
        if padded {
            self.dev.flush()?;
        }
        Ok(())
    }

    /// Deferred NoWA compensation: the sibling zones of the oldest waiting group, once the
    /// estimated SSD free space runs short (or `force`: GC found no other victim). Estimate:
    /// the SSD holds physical capacity x (1 + `ssd_op`); everything but the free (trimmed)
    /// zones is taken as mapped, and the trimmed zone of every waiting group stays pinned in
    /// SSD superblocks shared with its siblings. Compensation is due when mapped + pinned +
    /// a margin of two groups (writes until the next check, the SSD's own GC reserve) would
    /// exceed the physical space: the latest point before the SSD would have to copy.
    pub(super) fn due_compensation(&self, st: &mut State, force: bool) -> Vec<(u32, WriteKind)> {
        let space = st.space.get_mut();
        let waiting = space.deferred();
        if waiting == 0 {
            return Vec::new();
        }
        let zb = self.zone_bytes();
        let cap = self.dev.geometry().capacity;
        let free = u64::from(space.free_units());
        let mapped = cap.saturating_sub(free * zb);
        let pinned = crate::num::u64_of(waiting) * zb;
        let physical = f64_of(cap) * (1.0 + self.cfg.ssd_op.max(0.0));
        let margin = 2 * u64::from(self.open_limit) * zb;
        if !force && f64_of(mapped + pinned + margin) <= physical {
            return Vec::new();
        }
        let mut out = Vec::new();
        // None of the set still sealed: nothing to compensate (the set is dropped).
        let _ = space.pick_deferred(&mut out);
        assert_eq!(space.deferred(), waiting - 1, "one waiting group taken");
        out.into_iter()
            .map(|z| (z, WriteKind::Compensation))
            .collect()
    }

    /// Groups waiting for deferred compensation writes (tests, reports).
    #[must_use]
    pub fn pending_compensation_groups(&self) -> usize {
        self.st.read().space.lock().deferred()
    }
}
