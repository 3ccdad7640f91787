//! Mapping snapshots: written at every checkpoint into the copy the current superblock does
//! not reference; loaded at open from the copy the superblock names, or, if that copy is
//! damaged, from the older copy the other superblock names (the zone roll-forward then
//! covers more zones: its threshold is older).

use super::build::{Loaded, Snapshot};
use super::{Geo, Loc, OopConfig, OutOfPlaceStore, BS};
use crate::error::{ConfigError, Corruption, MetaDamage, Result};
use crate::format::meta::{MetaRecord, SnapEntry, SNAP_ENTRY};
use crate::num::{u64_of, usize_of};
use crate::page::PAGE_SIZE;
use crate::stats::EngineCounters;
use crate::store::StoreContext;
use nowa_device::{BlockDevice, DeviceError};

fn geo_of(r: &MetaRecord) -> Geo {
    Geo {
        zone_first: r.zone_first,
        zone_pages: r.zone_pages,
        zones: r.zones,
        meta_start: r.meta_start,
        meta_blocks: r.meta_blocks,
        capacity: r.capacity,
        meta_on_log: r.on_log,
    }
}

/// Range checks of a metadata record against the devices.
fn check_record(
    r: &MetaRecord,
    blocks: u64,
    meta_blocks: u64,
) -> std::result::Result<(), MetaDamage> {
    let geo = geo_of(r);
    let zone_end = geo
        .zone_first
        .checked_add(u64::from(geo.zones) * geo.zone_pages);
    let ok = geo.zone_pages >= 8
        && geo.zone_pages <= u64::from(u32::MAX) / BS
        && geo.zones > 0
        && zone_end.is_some_and(|e| e <= blocks && (geo.meta_on_log || e <= geo.meta_start))
        && geo
            .meta_start
            .checked_add(2 * geo.meta_blocks)
            .is_some_and(|e| e <= meta_blocks)
        && geo.capacity * u64_of(SNAP_ENTRY) <= geo.meta_blocks * BS
        && geo.capacity <= u64::from(geo.zones) * geo.zone_pages;
    if !ok {
        return Err(MetaDamage::Geometry {
            zones: geo.zones,
            zone_pages: geo.zone_pages,
            first: geo.zone_first,
        });
    }
    if r.copy > 1 || r.entries > geo.capacity || !r.present {
        return Err(MetaDamage::Snapshot {
            copy: r.copy,
            entries: r.entries,
            capacity: geo.capacity,
        });
    }
    Ok(())
}

/// Read and verify the snapshot a record names.
fn load_snapshot(
    r: &MetaRecord,
    mdev: &dyn BlockDevice,
) -> std::result::Result<Vec<Loc>, Corruption> {
    let geo = geo_of(r);
    let len = usize_of(r.entries) * SNAP_ENTRY;
    let mut buf = vec![0u8; len.div_ceil(PAGE_SIZE) * PAGE_SIZE];
    if !buf.is_empty() {
        let at = (geo.meta_start + u64::from(r.copy) * geo.meta_blocks) * BS;
        if let Err(e) = mdev.read_at(at, &mut buf) {
            let kind = match e {
                DeviceError::Io(_) => "I/O error",
                _ => "device error",
            };
            return Err(Corruption::MappingSnapshotUnreadable { copy: r.copy, kind });
        }
    }
    let found = crc32c::crc32c(&buf[..len]);
    if found != r.crc {
        return Err(Corruption::MappingSnapshot {
            copy: r.copy,
            expected: r.crc,
            found,
        });
    }
    let mut map = vec![Loc::NONE; usize_of(geo.capacity)];
    for (i, e) in buf[..len].chunks_exact(SNAP_ENTRY).enumerate() {
        let s = SnapEntry::decode(e);
        map[i] = Loc {
            block: s.block,
            lsn: s.lsn,
            off: s.off,
            len: s.len,
            codec: s.codec,
            gen: super::Gen::new(s.gen),
        };
    }
    Ok(map)
}

impl OutOfPlaceStore {
    /// Open: the checkpoint state from the superblock's metadata record, falling back to the
    /// previous checkpoint's snapshot if the current one is damaged.
    pub(super) fn load_checkpoint(ctx: &StoreContext, cfg: &OopConfig) -> Result<Loaded> {
        let cur = MetaRecord::decode(&ctx.metadata).map_err(Corruption::StoreMeta)?;
        let blocks = ctx.device.geometry().capacity / BS;
        let mdev = Self::snapshot_device(ctx, cur.on_log)?;
        check_record(&cur, blocks, mdev.geometry().capacity / BS).map_err(Corruption::StoreMeta)?;
        if let Some(want) = cfg.zone_bytes {
            if want != cur.zone_pages * BS {
                return Err(ConfigError::ZoneSizeMismatch {
                    required: cur.zone_pages * BS,
                    requested: want,
                    why: "the database's zone size",
                }
                .into());
            }
        }
        let (rec, map, fallback) = match load_snapshot(&cur, mdev) {
            Ok(map) => (cur, map, None),
            Err(damage) => {
                let (older, map) = Self::load_older(ctx, &cur, damage.clone())?;
                (older, map, Some(damage))
            }
        };
        Ok(Loaded {
            geo: geo_of(&rec),
            db_id: rec.db_id,
            snapshot: Some(Snapshot {
                map,
                copy: rec.copy,
                threshold: rec.threshold,
                next_seq: rec.next_seq,
                clock: rec.clock,
            }),
            fallback,
        })
    }

    /// The older snapshot (the other superblock copy's record), if it is one of the same
    /// database and geometry and reads back intact.
    fn load_older(
        ctx: &StoreContext,
        cur: &MetaRecord,
        damage: Corruption,
    ) -> Result<(MetaRecord, Vec<Loc>)> {
        let none = |why: MetaDamage| Corruption::MappingSnapshots {
            current: Box::new(damage.clone()),
            older: Box::new(Corruption::StoreMeta(why)),
        };
        let Some(meta) = &ctx.fallback_metadata else {
            return Err(none(MetaDamage::Length {
                len: 0,
                expected: crate::format::meta::LEN,
            })
            .into());
        };
        let older = MetaRecord::decode(meta).map_err(none)?;
        if older.db_id != cur.db_id || geo_of(&older) != geo_of(cur) || older.copy == cur.copy {
            return Err(none(MetaDamage::Snapshot {
                copy: older.copy,
                entries: older.entries,
                capacity: older.capacity,
            })
            .into());
        }
        let mdev = Self::snapshot_device(ctx, older.on_log)?;
        match load_snapshot(&older, mdev) {
            Ok(map) => Ok((older, map)),
            Err(e) => Err(Corruption::MappingSnapshots {
                current: Box::new(damage),
                older: Box::new(e),
            }
            .into()),
        }
    }

    /// Checkpoint: snapshot the mapping (consistent: taken under the lock that every mapping
    /// update holds) into the metadata copy not referenced by the current superblock, flush,
    /// and return the superblock metadata record pointing at it.
    pub(super) fn write_snapshot(&self) -> Result<Vec<u8>> {
        let _c = self.ckpt.lock();
        let (buf, copy, threshold, next_seq, clock) = {
            // `io`: no write between placement and mapping update, so the open zones and the
            // mapping agree.
            let _io = self.io.lock();
            let st = self.st.read();
            let mut buf = vec![0u8; (st.map.len() * SNAP_ENTRY).div_ceil(PAGE_SIZE) * PAGE_SIZE];
            for (i, l) in st.map.iter().enumerate() {
                assert!(
                    l.block == super::NO_BLOCK || self.zone_of(l.block).is_some(),
                    "page {i} mapped outside the zones: {l:?}"
                );
                let e = SnapEntry {
                    block: l.block,
                    lsn: l.lsn,
                    off: l.off,
                    len: l.len,
                    codec: l.codec,
                    gen: l.gen.get(),
                };
                e.encode(&mut buf[i * SNAP_ENTRY..(i + 1) * SNAP_ENTRY]);
            }
            let threshold = st
                .open
                .iter()
                .map(|&z| st.zone_seq[usize_of(u64::from(z))])
                .min()
                .unwrap_or(st.next_seq);
            assert!(
                threshold <= st.next_seq,
                "snapshot threshold {threshold} beyond next seq"
            );
            (buf, 1 - st.meta_copy, threshold, st.next_seq, st.clock)
        };
        let n = self.geo.capacity;
        let len = usize_of(n) * SNAP_ENTRY;
        let crc = crc32c::crc32c(&buf[..len]);
        let start = self.geo.meta_start + u64::from(copy) * self.geo.meta_blocks;
        // Metadata goes to the log device, or to handle 0 with the WAL (FDP).
        self.meta_dev.write_at_hinted(start * BS, &buf, None)?;
        self.meta_dev.flush()?;
        EngineCounters::add(&self.counters.meta_store_bytes, u64_of(buf.len()));
        self.st.write().meta_copy = copy;
        let rec = MetaRecord {
            db_id: self.db_id,
            zones: self.geo.zones,
            zone_first: self.geo.zone_first,
            zone_pages: self.geo.zone_pages,
            meta_start: self.geo.meta_start,
            meta_blocks: self.geo.meta_blocks,
            capacity: self.geo.capacity,
            copy,
            present: true,
            on_log: self.geo.meta_on_log,
            crc,
            entries: n,
            threshold,
            next_seq,
            clock,
        };
        Ok(rec.encode())
    }
}
