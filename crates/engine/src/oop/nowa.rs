//! NoWA: active groups as GC victims and deferred compensation writes.

use super::{OutOfPlaceStore, State};
use crate::error::{Exhausted, Result};
use crate::num::{f64_of, u64_of, usize_of};
use crate::store::WriteKind;
use nowa_logspace::UnitState;

/// A NoWA group waiting for its compensation writes (in memory only: after a restart the
/// siblings form an ordinary group again and greedy group GC picks them up).
pub(super) struct Pending {
    group: u64,
    zones: Vec<u32>,
    pinned: u64,
}

impl OutOfPlaceStore {
    /// NoWA on a conventional or FDP device, at a clean close (after the final checkpoint):
    /// fill the active group's open zones to their ends with zero blocks (no slot: the
    /// roll-forward scan skips them, and the rebuild at open seals every zone) and seal them. A reopened store never appends to them again (it opens a new group), so
    /// without this the device's write stream would end inside a group, and every group
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
                    self.hint(z),
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
    /// zones is taken as mapped, and the trimmed zones of waiting groups stay pinned in SSD
    /// superblocks shared with their siblings. Compensation is due when mapped + pinned +
    /// a margin of two groups (writes until the next check, the SSD's own GC reserve) would
    /// exceed the physical space: the latest point before the SSD would have to copy.
    pub(super) fn due_compensation(&self, st: &mut State, force: bool) -> Vec<(u32, WriteKind)> {
        if st.pending.is_empty() {
            return Vec::new();
        }
        let zb = self.zone_bytes();
        let cap = self.dev.geometry().capacity;
        let free = u64::from(st.space.get_mut().free_units());
        let mapped = cap.saturating_sub(free * zb);
        let physical = f64_of(cap) * (1.0 + self.cfg.ssd_op.max(0.0));
        let margin = 2 * u64::from(self.open_limit) * zb;
        if !force && f64_of(mapped + st.pinned + margin) <= physical {
            return Vec::new();
        }
        let Some(p) = st.pending.pop_front() else {
            return Vec::new();
        };
        assert!(
            st.pinned >= p.pinned,
            "pinned bytes {} < a waiting group's {}",
            st.pinned,
            p.pinned
        );
        st.pinned -= p.pinned;
        let space = st.space.get_mut();
        let mut out = Vec::with_capacity(p.zones.len());
        for z in p.zones {
            // Still a sealed zone of that group (always, unless the invariant broke).
            if st.zone_group[usize_of(u64::from(z))] == p.group
                && space.state(z) == UnitState::Sealed
                && space.take_victim(z).is_ok()
            {
                out.push((z, WriteKind::Compensation));
            }
        }
        out
    }

    /// Groups waiting for deferred compensation writes (tests, reports).
    #[must_use]
    pub fn pending_compensation_groups(&self) -> usize {
        self.st.read().pending.len()
    }

    /// NoWA victim choice: whole active groups, so that every zone written together (and
    /// multiplexed into the same SSD superblocks) is invalidated together. The group with
    /// the least valid data wins (greedy over groups); its least valid zone is the GC
    /// victim proper, its siblings are compensation writes. Groups with an open zone are
    /// skipped (not fully written yet).
    pub(super) fn pick_group(&self, st: &mut State) -> Result<Vec<(u32, WriteKind)>> {
        use std::collections::HashMap;
        let waiting: Vec<u64> = st.pending.iter().map(|p| p.group).collect();
        let space = st.space.get_mut();
        let mut groups: HashMap<u64, (u64, Vec<u32>, bool)> = HashMap::new();
        for z in 0..self.geo.zones {
            let g = st.zone_group[usize_of(u64::from(z))];
            if waiting.contains(&g) {
                // Its siblings wait for their (deferred) compensation writes.
                continue;
            }
            match space.state(z) {
                UnitState::Sealed => {
                    let e = groups.entry(g).or_default();
                    e.0 += u64::from(space.valid(z));
                    e.1.push(z);
                }
                UnitState::Open => groups.entry(g).or_default().2 = true,
                _ => {}
            }
        }
        let cap = u64::from(space.unit_capacity());
        let best = groups
            .into_iter()
            .filter(|(_, (v, zs, open))| !open && !zs.is_empty() && *v < cap * u64_of(zs.len()))
            .min_by_key(|(g, (v, zs, _))| (*v * 1024 / u64_of(zs.len()), *g));
        let Some((_, (_, mut zs, _))) = best else {
            return Err(Exhausted::NoGcVictim.into());
        };
        zs.sort_by_key(|&z| space.valid(z));
        if self.cfg.defer_compensation && zs.len() > 1 {
            // Reclaim only the least valid zone now; the siblings wait.
            let v = zs.remove(0);
            let taken = space.take_victim(v);
            assert!(taken.is_ok(), "sealed zone {v} refused as a victim");
            let g = st.zone_group[usize_of(u64::from(v))];
            let pinned = self.zone_bytes();
            st.pinned += pinned;
            st.pending.push_back(Pending {
                group: g,
                zones: zs,
                pinned,
            });
            return Ok(vec![(v, WriteKind::Gc)]);
        }
        let mut out = Vec::with_capacity(zs.len());
        for (i, z) in zs.into_iter().enumerate() {
            let taken = space.take_victim(z);
            assert!(taken.is_ok(), "sealed zone {z} refused as a victim");
            out.push((
                z,
                if i == 0 {
                    WriteKind::Gc
                } else {
                    WriteKind::Compensation
                },
            ));
        }
        Ok(out)
    }
}
