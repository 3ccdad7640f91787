//! Checkpoint metadata (superblock bytes, mapping snapshot) and recovery (snapshot load,
//! zone scan, ZNS partial-zone close).

use super::{bad_meta, decompress_page, rd16, rd32, rd64, Geo, Loc, OutOfPlaceStore};
use super::{
    BS, CODEC_RAW, META_LEN, META_MAGIC, META_VERSION, NO_BLOCK, SLOT_ENTRY, SLOT_HDR, SLOT_MAGIC,
    SNAP_ENTRY, ZONE_MAGIC,
};
use crate::error::{Pid, Result};
use crate::page::{self, PAGE_SIZE};
use nowa_device::BlockDevice;
use nowa_logspace::UnitState;

impl OutOfPlaceStore {
    /// Parse the superblock metadata and load the mapping snapshot it points to.
    #[allow(clippy::type_complexity)]
    pub(super) fn parse_meta(
        m: &[u8],
        dev: &dyn BlockDevice,
        log: Option<&dyn BlockDevice>,
    ) -> Result<(Geo, u32, Option<(Vec<Loc>, u8, u64, u64)>)> {
        if m.len() < META_LEN || rd32(m, 0) != META_MAGIC || rd32(m, 4) != META_VERSION {
            return Err(bad_meta(
                "bad magic/version (not an out-of-place database?)",
            ));
        }
        let geo = Geo {
            zones: rd32(m, 12),
            zone_first: rd64(m, 16),
            zone_pages: rd64(m, 24),
            meta_start: rd64(m, 32),
            meta_blocks: rd64(m, 40),
            capacity: rd64(m, 48),
            meta_on_log: m[58] == 1,
        };
        let blocks = dev.geometry().capacity / BS;
        let mdev: &dyn BlockDevice = match (geo.meta_on_log, log) {
            (true, Some(l)) => l,
            (false, _) => dev,
            (true, None) => return Err(bad_meta("mapping snapshots are on a log device")),
        };
        let mblocks = mdev.geometry().capacity / BS;
        let ok = geo.zone_pages >= 8
            && geo.zone_pages <= u32::MAX as u64 / BS
            && geo.zones > 0
            && geo
                .zone_first
                .checked_add(geo.zones as u64 * geo.zone_pages)
                .is_some_and(|e| e <= blocks && (geo.meta_on_log || e <= geo.meta_start))
            && geo
                .meta_start
                .checked_add(2 * geo.meta_blocks)
                .is_some_and(|e| e <= mblocks)
            && geo.capacity * SNAP_ENTRY as u64 <= geo.meta_blocks * BS
            && geo.capacity <= geo.zones as u64 * geo.zone_pages;
        if !ok {
            return Err(bad_meta("geometry out of range"));
        }
        let db_id = rd32(m, 8);
        let copy = m[56];
        let has = m[57];
        let crc = rd32(m, 60);
        let n = rd64(m, 64);
        let threshold = rd64(m, 72);
        let next_seq = rd64(m, 80);
        if copy > 1 || n > geo.capacity {
            return Err(bad_meta("snapshot copy/length out of range"));
        }
        let mut map = vec![Loc::NONE; geo.capacity as usize];
        if has == 1 {
            let len = (n as usize) * SNAP_ENTRY;
            let mut buf = vec![0u8; len.div_ceil(PAGE_SIZE) * PAGE_SIZE];
            if !buf.is_empty() {
                mdev.read_at(
                    (geo.meta_start + copy as u64 * geo.meta_blocks) * BS,
                    &mut buf,
                )?;
            }
            if crc32c::crc32c(&buf[..len]) != crc {
                return Err(bad_meta("mapping snapshot checksum mismatch"));
            }
            for (i, e) in buf[..len].chunks_exact(SNAP_ENTRY).enumerate() {
                map[i] = Loc {
                    block: rd64(e, 0),
                    lsn: rd64(e, 8),
                    off: rd16(e, 16),
                    len: rd16(e, 18),
                    codec: e[20],
                };
            }
        }
        Ok((geo, db_id, Some((map, copy, threshold, next_seq))))
    }

    /// Recovery: start from the checkpoint snapshot, then scan every zone incarnation that
    /// may have been written after it (header seq >= threshold) and keep, per pid, the
    /// version with the highest LSN (a scanned copy wins a tie against the snapshot: the
    /// snapshot's location may have been garbage collected since). Rebuilds the zone
    /// metadata (valid bytes, reverse map, states) from the final mapping.
    pub(super) fn rebuild(
        &self,
        snap: &[Loc],
        copy: u8,
        threshold: u64,
        next_seq: u64,
    ) -> Result<()> {
        let mut st = self.st.write();
        st.map.copy_from_slice(snap);
        st.meta_copy = copy;
        let mut max_seq = next_seq.saturating_sub(1);
        let zp = self.geo.zone_pages as usize;
        let mut zbuf = vec![0u8; zp * PAGE_SIZE];
        let mut out = vec![0u8; PAGE_SIZE];
        for z in 0..self.geo.zones {
            let zb = self.zone_block(z);
            self.dev.read_at(zb * BS, &mut zbuf[..PAGE_SIZE])?;
            let Some((seq, group)) = self.parse_zone_header(&zbuf[..PAGE_SIZE], z) else {
                continue;
            };
            st.zone_seq[z as usize] = seq;
            st.zone_group[z as usize] = group;
            st.next_group = st.next_group.max(group + 1);
            max_seq = max_seq.max(seq);
            if seq < threshold {
                continue;
            }
            self.dev.read_at((zb + 1) * BS, &mut zbuf[PAGE_SIZE..])?;
            for b in 1..zp {
                let slot = &zbuf[b * PAGE_SIZE..(b + 1) * PAGE_SIZE];
                let block = zb + b as u64;
                let mut found: Vec<(Pid, Loc)> = Vec::new();
                if rd16(slot, 4) == SLOT_MAGIC {
                    if crc32c::crc32c(&slot[4..]) != rd32(slot, 0) || rd32(slot, 8) != self.db_id {
                        continue;
                    }
                    let n = rd16(slot, 6) as usize;
                    if SLOT_HDR + n * SLOT_ENTRY > PAGE_SIZE {
                        continue;
                    }
                    for i in 0..n {
                        let e = &slot[SLOT_HDR + i * SLOT_ENTRY..SLOT_HDR + (i + 1) * SLOT_ENTRY];
                        let (off, len, codec) = (rd16(e, 16), rd16(e, 18), e[20]);
                        if off as usize + len as usize > PAGE_SIZE || len == 0 {
                            continue;
                        }
                        // Check the payload really decodes to a valid page of that pid.
                        let pid = rd64(e, 0);
                        if decompress_page(
                            codec,
                            &slot[off as usize..(off + len) as usize],
                            &mut out,
                        )
                        .is_err()
                            || page::validate_layout(&out, pid).is_err()
                            || !page::checksum_ok(&out)
                        {
                            continue;
                        }
                        found.push((
                            pid,
                            Loc {
                                block,
                                lsn: rd64(e, 8),
                                off,
                                len,
                                codec,
                            },
                        ));
                    }
                } else if page::checksum_ok(slot) && !page::is_zero(slot) {
                    let pid = page::pid(slot);
                    if page::validate_layout(slot, pid).is_ok() {
                        found.push((
                            pid,
                            Loc {
                                block,
                                lsn: page::lsn(slot),
                                off: 0,
                                len: 0,
                                codec: CODEC_RAW,
                            },
                        ));
                    }
                }
                for (pid, loc) in found {
                    if pid >= self.geo.capacity {
                        continue;
                    }
                    let cur = st.map[pid as usize];
                    if cur.block == NO_BLOCK || loc.lsn >= cur.lsn {
                        st.map[pid as usize] = loc;
                    }
                }
            }
        }
        st.next_seq = max_seq + 1;
        // Rebuild the zone metadata from the final mapping.
        let mut valid = vec![0u64; self.geo.zones as usize];
        for pid in 0..st.map.len() {
            let loc = st.map[pid];
            if loc.block == NO_BLOCK {
                continue;
            }
            let Some(z) = self.zone_of(loc.block) else {
                return Err(bad_meta(format!("pid {pid} maps outside the zone area")));
            };
            if loc.len != 0 && loc.off as usize + loc.len as usize > PAGE_SIZE {
                return Err(bad_meta(format!("pid {pid}: bad slot offset")));
            }
            valid[z as usize] += loc.bytes() as u64;
            st.rev[z as usize].push(pid as Pid);
        }
        let cap = st.space.get_mut().unit_capacity() as u64;
        for z in 0..self.geo.zones {
            let v = valid[z as usize];
            if v == 0 {
                continue;
            }
            if v > cap {
                return Err(bad_meta(format!("zone {z}: {v} valid bytes > capacity")));
            }
            st.space
                .get_mut()
                .open_specific(z, 0)
                .map_err(|e| bad_meta(e.to_string()))?;
            st.space.get_mut().add_valid(z, v as u32);
            // Zones holding data are treated as full: their write pointer is not trusted.
            st.space.get_mut().seal(z);
        }
        Ok(())
    }

    /// ZNS after recovery: zones the device still has open (partially written before the
    /// crash) count against its open-zone limit. Zones holding live pages are padded with zero
    /// blocks to their end (a zero block is no slot: the scanner skips it); zones without
    /// live pages are reset.
    pub(super) fn close_partial_zones(&self) -> Result<()> {
        let report = self.dev.zone_report()?;
        let st = self.st.read();
        let space = st.space.lock();
        let zb = self.geo.zone_pages * BS;
        for z in 0..self.geo.zones {
            let start = self.zone_block(z) * BS;
            let Some(info) = report.iter().find(|i| i.start == start) else {
                continue;
            };
            if info.write_pointer == start || info.write_pointer >= start + zb {
                continue;
            }
            if space.state(z) == UnitState::Free {
                self.dev.zone_reset(start)?;
            } else {
                let pad = vec![0u8; (start + zb - info.write_pointer) as usize];
                self.dev.zone_append(start, &pad)?;
            }
        }
        self.dev.flush()?;
        Ok(())
    }

    pub(super) fn parse_zone_header(&self, b: &[u8], z: u32) -> Option<(u64, u64)> {
        (rd16(b, 4) == ZONE_MAGIC
            && crc32c::crc32c(&b[4..]) == rd32(b, 0)
            && rd32(b, 8) == self.db_id
            && rd32(b, 12) == z)
            .then(|| (rd64(b, 16), rd64(b, 24)))
    }

    /// Serialize the superblock metadata.
    pub(super) fn meta_bytes(
        &self,
        copy: u8,
        has: bool,
        crc: u32,
        n: u64,
        threshold: u64,
        next_seq: u64,
    ) -> Vec<u8> {
        let mut m = vec![0u8; META_LEN];
        m[0..4].copy_from_slice(&META_MAGIC.to_le_bytes());
        m[4..8].copy_from_slice(&META_VERSION.to_le_bytes());
        m[8..12].copy_from_slice(&self.db_id.to_le_bytes());
        m[12..16].copy_from_slice(&self.geo.zones.to_le_bytes());
        m[16..24].copy_from_slice(&self.geo.zone_first.to_le_bytes());
        m[24..32].copy_from_slice(&self.geo.zone_pages.to_le_bytes());
        m[32..40].copy_from_slice(&self.geo.meta_start.to_le_bytes());
        m[40..48].copy_from_slice(&self.geo.meta_blocks.to_le_bytes());
        m[48..56].copy_from_slice(&self.geo.capacity.to_le_bytes());
        m[56] = copy;
        m[57] = has as u8;
        m[58] = self.geo.meta_on_log as u8;
        m[60..64].copy_from_slice(&crc.to_le_bytes());
        m[64..72].copy_from_slice(&n.to_le_bytes());
        m[72..80].copy_from_slice(&threshold.to_le_bytes());
        m[80..88].copy_from_slice(&next_seq.to_le_bytes());
        m[88..96].copy_from_slice(&self.st.read().clock.to_le_bytes());
        m
    }
}
