//! The write path: zone opening, FDP handle / ZNS placement, GDT zone choice, slot packing
//! and writes, mapping updates, reads of a mapped location.

use super::{closest_zone, compress_page, decompress_page, gdt::mean_edt, gdt_groups, pack};
use super::{
    Item, Loc, OutOfPlaceStore, Slot, State, BS, CODEC_RAW, NO_BLOCK, SLOT_ENTRY, SLOT_HDR,
    SLOT_MAGIC, ZONE_MAGIC,
};
use crate::error::{EngineError, Pid, Result};
use crate::page::{self, PAGE_SIZE};
use crate::stats::Counters;
use crate::store::WriteKind;
use nowa_device::DeviceError;
use nowa_logspace::UnitState;

impl OutOfPlaceStore {
    pub(super) fn hint(&self, z: u32) -> Option<u16> {
        self.handles.map(|h| {
            if h >= 2 {
                1 + (z % (h as u32 - 1)) as u16
            } else {
                0
            }
        })
    }

    /// Open a zone: write and flush its header before any data goes in, so a zone whose
    /// header is invalid holds no data of its current incarnation.
    /// The free zone to open next, or `None` when opening one now would break placement.
    /// FDP: zone z writes with handle 1 + z mod (h - 1); only a free zone whose handle no open
    /// zone uses qualifies, because two open zones on one handle interleave their pages in the
    /// same reclaim unit and the SSD must then copy when either zone is reclaimed.
    pub(super) fn next_free_zone(&self, st: &mut State) -> Option<u32> {
        let space = st.space.get_mut();
        match self.handles {
            Some(h) if h >= 2 => {
                let used: Vec<Option<u16>> = st.open.iter().map(|&o| self.hint(o)).collect();
                (0..self.geo.zones)
                    .filter(|&c| space.state(c) == UnitState::Free)
                    .find(|&c| !used.contains(&self.hint(c)))
            }
            _ => space.peek_free(),
        }
    }

    /// Open free zone `z` (from [`Self::next_free_zone`]): write and flush its header before
    /// any data goes in, so a zone whose header is invalid holds no data of its current
    /// incarnation.
    pub(super) fn open_zone(
        &self,
        st: &mut State,
        kind: WriteKind,
        group: u64,
        z: u32,
    ) -> Result<u32> {
        let full = || EngineError::Full("out-of-place: no free zone left".into());
        debug_assert!(
            self.handles.is_none_or(|h| h < 2)
                || st.open.iter().all(|&o| self.hint(o) != self.hint(z)),
            "two open zones would share an FDP handle"
        );
        st.space.get_mut().open_specific(z, 0).map_err(|_| full())?;
        let seq = st.next_seq;
        st.next_seq += 1;
        st.zone_seq[z as usize] = seq;
        st.zone_group[z as usize] = group;
        st.zone_edt[z as usize] = (0.0, 0);
        st.zone_wp[z as usize] = 1;
        st.rev[z as usize].clear();
        let mut h = vec![0u8; PAGE_SIZE];
        h[4..6].copy_from_slice(&ZONE_MAGIC.to_le_bytes());
        h[6..8].copy_from_slice(&1u16.to_le_bytes());
        h[8..12].copy_from_slice(&self.db_id.to_le_bytes());
        h[12..16].copy_from_slice(&z.to_le_bytes());
        h[16..24].copy_from_slice(&seq.to_le_bytes());
        h[24..32].copy_from_slice(&group.to_le_bytes());
        h[32..36].copy_from_slice(&self.open_limit.to_le_bytes());
        let crc = crc32c::crc32c(&h[4..]);
        h[0..4].copy_from_slice(&crc.to_le_bytes());
        if self.zoned {
            // Zone reset (no-op for an empty zone), then zone append of the header.
            self.dev.zone_reset(self.zone_block(z) * BS)?;
            self.dev.zone_append(self.zone_block(z) * BS, &h)?;
        } else {
            self.dev
                .write_at_hinted(self.zone_block(z) * BS, &h, self.hint(z))?;
        }
        self.dev.flush()?;
        self.count_bytes(kind, BS);
        Counters::add(&self.counters.zone_header_bytes, BS);
        st.open.push(z);
        Ok(z)
    }

    pub(super) fn count_bytes(&self, kind: WriteKind, b: u64) {
        let c = match kind {
            WriteKind::Eviction | WriteKind::Checkpoint => &self.counters.user_store_bytes,
            WriteKind::Gc => &self.counters.gc_store_bytes,
            WriteKind::Compensation => &self.counters.compensation_store_bytes,
        };
        Counters::add(c, b);
    }

    /// Pick the open zone for the next slots (opening zones as the policy allows).
    pub(super) fn target_zone(
        &self,
        st: &mut State,
        kind: WriteKind,
        want_edt: Option<f64>,
    ) -> Result<u32> {
        if self.cfg.nowa {
            // NoWA rule 1: a new active group only when the whole group is written.
            if st.open.is_empty() {
                let g = st.next_group;
                st.next_group += 1;
                for _ in 0..self.open_limit {
                    let Some(z) = self.next_free_zone(st) else {
                        break;
                    };
                    self.open_zone(st, kind, g, z)?;
                }
            }
        } else {
            while st.open.len() < self.open_limit as usize {
                let Some(z) = self.next_free_zone(st) else {
                    break;
                };
                let g = st.next_group;
                st.next_group += 1;
                self.open_zone(st, kind, g, z)?;
            }
        }
        if st.open.is_empty() {
            return Err(EngineError::Full("out-of-place: no free zone left".into()));
        }
        if let Some(e) = want_edt {
            // GDT: the open zone whose pages have the closest average EDT (an empty zone
            // matches anything).
            let cands: Vec<(f64, u64)> = st.open.iter().map(|&z| st.zone_edt[z as usize]).collect();
            let best = closest_zone(&cands, e)
                .ok_or_else(|| EngineError::Full("out-of-place: no open zone".into()))?;
            return Ok(st.open[best]);
        }
        let i = st.cursor % st.open.len();
        Ok(st.open[i])
    }

    /// Pack and write a batch, then update the mapping. Caller holds `io` (one writer at a
    /// time); the state lock is held only to place the slots and to update the mapping, not
    /// during the data I/O, so readers proceed meanwhile.
    pub(super) fn write_items(&self, items: Vec<Item>, kind: WriteKind) -> Result<()> {
        if !self.cfg.gdt {
            return self.write_group(items, kind, None);
        }
        let edts: Vec<u64> = items.iter().map(|i| i.edt).collect();
        let index: Vec<Option<u32>> = items.iter().map(|i| i.index).collect();
        let groups = gdt_groups(&edts, &index, self.open_limit as usize);
        let mut slots: Vec<Option<Item>> = items.into_iter().map(Some).collect();
        for g in groups {
            let part: Vec<Item> = g.iter().filter_map(|&i| slots[i].take()).collect();
            let want = mean_edt(&part);
            self.write_group(part, kind, Some(want))?;
        }
        Ok(())
    }

    /// Pack and write one group of pages (GDT: into the zone chosen for `want_edt`).
    pub(super) fn write_group(
        &self,
        items: Vec<Item>,
        kind: WriteKind,
        want_edt: Option<f64>,
    ) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        let mut runs: Vec<(u64, Vec<u8>, u32)> = Vec::new();
        let mut guard = self.st.write();
        let st: &mut State = &mut guard;
        let sizes: Vec<(usize, bool)> = items
            .iter()
            .map(|it| (it.size(), it.codec == CODEC_RAW))
            .collect();
        let packed = if self.cfg.packing {
            pack(&sizes)
        } else {
            // No packing: every page (compressed or not) in a slot of its own.
            sizes
                .iter()
                .enumerate()
                .map(|(i, &(_, raw))| (raw, vec![i]))
                .collect()
        };
        let slots: Vec<Slot> = packed
            .into_iter()
            .map(|(raw, members)| Slot { raw, members })
            .collect();
        // Random placement among the open zones, one zone per batch (as long as it has room).
        st.rng ^= st.rng << 13;
        st.rng ^= st.rng >> 7;
        st.rng ^= st.rng << 17;
        st.cursor = (st.rng >> 16) as usize;
        let mut locs: Vec<(usize, Loc)> = Vec::with_capacity(items.len());
        let zp = self.geo.zone_pages;
        let mut i = 0;
        while i < slots.len() {
            let z = self.target_zone(st, kind, want_edt)?;
            let base = self.zone_block(z);
            let seq = st.zone_seq[z as usize];
            let first = base + st.zone_wp[z as usize];
            let room = (zp - st.zone_wp[z as usize]) as usize;
            let mut run: Vec<u8> = vec![0u8; room.min(slots.len() - i) * PAGE_SIZE];
            let mut k = 0;
            while i < slots.len() && st.zone_wp[z as usize] < zp {
                let block = base + st.zone_wp[z as usize];
                let s = &slots[i];
                let buf = &mut run[k * PAGE_SIZE..(k + 1) * PAGE_SIZE];
                k += 1;
                if s.raw {
                    let it = &items[s.members[0]];
                    buf.copy_from_slice(&it.data);
                    locs.push((
                        s.members[0],
                        Loc {
                            block,
                            lsn: it.lsn,
                            off: 0,
                            len: 0,
                            codec: CODEC_RAW,
                        },
                    ));
                } else {
                    let n = s.members.len();
                    buf[4..6].copy_from_slice(&SLOT_MAGIC.to_le_bytes());
                    buf[6..8].copy_from_slice(&(n as u16).to_le_bytes());
                    buf[8..12].copy_from_slice(&self.db_id.to_le_bytes());
                    buf[12..16].copy_from_slice(&z.to_le_bytes());
                    buf[16..24].copy_from_slice(&seq.to_le_bytes());
                    let mut off = SLOT_HDR + n * SLOT_ENTRY;
                    for (k, &m) in s.members.iter().enumerate() {
                        let it = &items[m];
                        let e = SLOT_HDR + k * SLOT_ENTRY;
                        buf[e..e + 8].copy_from_slice(&it.pid.to_le_bytes());
                        buf[e + 8..e + 16].copy_from_slice(&it.lsn.to_le_bytes());
                        buf[e + 16..e + 18].copy_from_slice(&(off as u16).to_le_bytes());
                        buf[e + 18..e + 20].copy_from_slice(&(it.data.len() as u16).to_le_bytes());
                        buf[e + 20] = it.codec;
                        buf[off..off + it.data.len()].copy_from_slice(&it.data);
                        locs.push((
                            m,
                            Loc {
                                block,
                                lsn: it.lsn,
                                off: off as u16,
                                len: it.data.len() as u16,
                                codec: it.codec,
                            },
                        ));
                        off += it.data.len();
                    }
                    debug_assert!(off <= PAGE_SIZE, "packing overflowed a slot");
                    let crc = crc32c::crc32c(&buf[4..]);
                    buf[0..4].copy_from_slice(&crc.to_le_bytes());
                }
                st.zone_wp[z as usize] += 1;
                i += 1;
            }
            if !run.is_empty() {
                runs.push((first, run, z));
            }
            if st.zone_wp[z as usize] >= zp {
                // Sealed before its data lands: safe, GC only runs under `io` (this thread).
                st.open.retain(|&o| o != z);
                st.space.get_mut().seal(z);
                if i < slots.len() {
                    // The full zone's data must reach the device before the next zone's
                    // header: ZNS would see one open zone too many, and on a conventional SSD
                    // the header would land inside the previous group's stream and shift every
                    // later active group against the SSD superblocks (NoWA alignment).
                    for (first, run, z) in runs.drain(..) {
                        self.write_run(first, &run, z, kind)?;
                    }
                }
            }
        }
        drop(guard);
        for (first, run, z) in &runs {
            self.write_run(*first, run, *z, kind)?;
        }
        // The new versions are durable before the mapping points at them.
        self.dev.flush()?;
        let mut guard = self.st.write();
        let st: &mut State = &mut guard;
        for (m, loc) in locs {
            let pid = items[m].pid;
            let z = self
                .zone_of(loc.block)
                .expect("placed inside the zone area");
            let old = st.map[pid as usize];
            if old.block != NO_BLOCK {
                let oz = self
                    .zone_of(old.block)
                    .expect("mapped inside the zone area");
                st.space.get_mut().sub_valid(oz, old.bytes());
            }
            st.space.get_mut().add_valid(z, loc.bytes());
            st.map[pid as usize] = loc;
            if self.cfg.gdt {
                let e = &mut st.zone_edt[z as usize];
                e.0 += items[m].edt.min(1 << 52) as f64;
                e.1 += 1;
            }
            st.rev[z as usize].push(pid);
        }
        let c = match kind {
            WriteKind::Eviction => &self.counters.eviction_page_writes,
            WriteKind::Checkpoint => &self.counters.checkpoint_page_writes,
            WriteKind::Gc => &self.counters.gc_page_writes,
            WriteKind::Compensation => &self.counters.compensation_page_writes,
        };
        Counters::add(c, items.len() as u64);
        Ok(())
    }

    /// Write one placed run of slots into zone `z` (ZNS: zone append; writers are serialized
    /// by `io`, so the append lands where the run was placed).
    pub(super) fn write_run(&self, first: u64, run: &[u8], z: u32, kind: WriteKind) -> Result<()> {
        if self.zoned {
            let at = self.dev.zone_append(self.zone_block(z) * BS, run)?;
            if at != first * BS {
                return Err(EngineError::Device(DeviceError::Zone(format!(
                    "zone append landed at {at}, expected {}",
                    first * BS
                ))));
            }
        } else {
            self.dev.write_at_hinted(first * BS, run, self.hint(z))?;
        }
        self.count_bytes(kind, run.len() as u64);
        Ok(())
    }

    pub(super) fn prepare(&self, pid: Pid, pg: &[u8], edt: u64) -> Item {
        let (codec, data) = compress_page(pg, self.cfg.compression, self.cfg.zstd_level);
        Item {
            pid,
            lsn: page::lsn(pg),
            codec,
            data,
            edt,
            index: None,
        }
    }

    /// Read the durable image of `pid` at `loc` into `buf` (decompressing).
    pub(super) fn read_loc(
        &self,
        pid: Pid,
        loc: Loc,
        buf: &mut [u8],
        tmp: &mut [u8],
    ) -> Result<()> {
        if loc.len == 0 {
            self.dev.read_at(loc.block * BS, buf)?;
            return Ok(());
        }
        self.dev.read_at(loc.block * BS, tmp)?;
        let (o, n) = (loc.off as usize, loc.len as usize);
        if o + n > PAGE_SIZE {
            return Err(crate::error::corrupt(pid, "slot entry outside its slot"));
        }
        decompress_page(loc.codec, &tmp[o..o + n], buf)
            .map_err(|e| crate::error::corrupt(pid, format!("decompression failed: {e}")))
    }
}
