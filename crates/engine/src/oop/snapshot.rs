//! Mapping snapshots, incremental. Each of the two metadata copies holds a chain: a full
//! snapshot of the mapped pids in its full area, then deltas appended in its delta area.
//! Checkpoints alternate between the copies (so the current and the older superblock record
//! name different copies, as before: damage to one copy leaves the other); a checkpoint
//! writes into its copy only the entries changed since that copy's previous snapshot (a delta:
//! the mapping keeps a dirty bit per pid and copy), or, every
//! `OopConfig::snapshot_full_every`-th time (or when the delta would not fit or be larger), a
//! full snapshot. A delta goes past the prefix the older record names, so nothing a record
//! references is overwritten by a delta; a full snapshot overwrites its copy, as the previous
//! design did at every checkpoint. At open the record's full snapshot is loaded and its delta
//! prefix applied in order (both crc-checked); if either is damaged, the older record (the
//! other superblock copy, the other metadata copy) is used the same way, and the zone
//! roll-forward covers more zones (its threshold is older). After open the copy the record
//! does not name gets a full snapshot first.

use super::build::{Loaded, Snapshot};
use super::map::PageMap;
use super::{Geo, OopConfig, OutOfPlaceStore, BS};
use crate::error::{ConfigError, Corruption, MetaDamage, Pid, Result};
use crate::format::meta::{MetaRecord, SnapEntry, PAD_PID, SNAP_ENTRY};
use crate::num::{u64_of, usize_of};
use crate::page::PAGE_SIZE;
use crate::stats::EngineCounters;
use crate::store::StoreContext;
use nowa_device::{BlockDevice, DeviceError};

/// Where one copy's snapshot chain stands: its full snapshot and the deltas after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Chain {
    pub full_entries: u64,
    pub full_crc: u32,
    pub delta_blocks: u64,
    pub delta_crc: u32,
    pub deltas: u32,
    /// The next snapshot into this copy must be full (none written or loaded, or a snapshot
    /// write failed: the dirty bits it took are gone).
    pub force_full: bool,
}

impl Chain {
    /// A copy without a usable chain.
    pub(super) const NEW: Chain = Chain {
        full_entries: 0,
        full_crc: 0,
        delta_blocks: 0,
        delta_crc: 0,
        deltas: 0,
        force_full: true,
    };

    fn of(r: &MetaRecord) -> Chain {
        Chain {
            full_entries: r.entries,
            full_crc: r.crc,
            delta_blocks: r.delta_blocks,
            delta_crc: r.delta_crc,
            deltas: r.deltas,
            force_full: false,
        }
    }
}

/// Both copies' chains and the copy the last record named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Chains {
    pub copy: [Chain; 2],
    pub last: u8,
}

impl Chains {
    /// A new database: the first snapshot goes to copy 0.
    pub(super) const NEW: Chains = Chains {
        copy: [Chain::NEW; 2],
        last: 1,
    };

    /// At open, from the record used: its copy's chain; the other copy starts full.
    fn opened(r: &MetaRecord) -> Chains {
        let mut copy = [Chain::NEW; 2];
        copy[usize::from(r.copy)] = Chain::of(r);
        Chains { copy, last: r.copy }
    }
}

/// A snapshot taken under the locks, to be written.
struct Plan {
    /// The copy written.
    target: u8,
    full: bool,
    entries: Vec<(Pid, [u8; 12])>,
    chain: Chain,
    threshold: u64,
    next_seq: u64,
    clock: u64,
}

/// Entries as whole blocks (padded with [`SnapEntry::PAD`]).
fn encode_entries(entries: &[(Pid, [u8; 12])]) -> Vec<u8> {
    let mut buf = vec![0u8; (entries.len() * SNAP_ENTRY).div_ceil(PAGE_SIZE) * PAGE_SIZE];
    let mut chunks = buf.chunks_exact_mut(SNAP_ENTRY);
    for (&(pid, entry), e) in entries.iter().zip(chunks.by_ref()) {
        let pid = u32::try_from(pid).expect("capacity fits u32 pids (checked at create)");
        assert_ne!(pid, PAD_PID, "pid {pid} is the padding marker");
        SnapEntry { pid, entry }.encode(e);
    }
    for e in chunks {
        SnapEntry::PAD.encode(e);
    }
    buf
}

/// Blocks holding `n` entries.
fn blocks_for(n: u64) -> u64 {
    (n * u64_of(SNAP_ENTRY)).div_ceil(BS)
}

fn geo_of(r: &MetaRecord) -> Geo {
    Geo {
        zone_first: r.zone_first,
        zone_pages: r.zone_pages,
        zones: r.zones,
        meta_start: r.meta_start,
        meta_blocks: r.meta_blocks,
        full_blocks: r.full_blocks,
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
        && geo.capacity * u64_of(SNAP_ENTRY) <= geo.full_blocks * BS
        && geo.full_blocks <= geo.meta_blocks
        && geo.capacity <= u64::from(u32::MAX)
        && geo.capacity <= u64::from(geo.zones) * geo.zone_pages;
    if !ok {
        return Err(MetaDamage::Geometry {
            zones: geo.zones,
            zone_pages: geo.zone_pages,
            first: geo.zone_first,
        });
    }
    if r.copy > 1
        || r.entries > geo.capacity
        || !r.present
        || r.delta_blocks > geo.meta_blocks - geo.full_blocks
    {
        return Err(MetaDamage::Snapshot {
            copy: r.copy,
            entries: r.entries,
            capacity: geo.capacity,
        });
    }
    Ok(())
}

/// Read `blocks` blocks of snapshot entries at block `at` of `mdev`, check their crc, and
/// apply them to `map` in order.
fn load_entries(
    mdev: &dyn BlockDevice,
    at: u64,
    blocks: u64,
    crc: u32,
    copy: u8,
    map: &mut PageMap,
) -> std::result::Result<(), Corruption> {
    let mut buf = vec![0u8; usize_of(blocks) * PAGE_SIZE];
    if !buf.is_empty() {
        if let Err(e) = mdev.read_at(at * BS, &mut buf) {
            let kind = match e {
                DeviceError::Io(_) => "I/O error",
                _ => "device error",
            };
            return Err(Corruption::MappingSnapshotUnreadable { copy, kind });
        }
    }
    let found = crc32c::crc32c(&buf);
    if found != crc {
        return Err(Corruption::MappingSnapshot {
            copy,
            expected: crc,
            found,
        });
    }
    for e in buf.chunks_exact(SNAP_ENTRY).map(SnapEntry::decode) {
        if e.pid == PAD_PID {
            continue;
        }
        let pid = u64::from(e.pid);
        if pid >= map.capacity() {
            return Err(Corruption::StoreMeta(MetaDamage::Snapshot {
                copy,
                entries: pid,
                capacity: map.capacity(),
            }));
        }
        map.apply(pid, &e.entry);
    }
    Ok(())
}

/// Read and verify the snapshot a record names: its full snapshot, then its delta prefix.
fn load_snapshot(
    r: &MetaRecord,
    mdev: &dyn BlockDevice,
) -> std::result::Result<PageMap, Corruption> {
    let geo = geo_of(r);
    let mut map = PageMap::new(geo.capacity, geo.zone_first);
    let base = geo.meta_start + u64::from(r.copy) * geo.meta_blocks;
    load_entries(mdev, base, blocks_for(r.entries), r.crc, r.copy, &mut map)?;
    let delta = base + geo.full_blocks;
    load_entries(mdev, delta, r.delta_blocks, r.delta_crc, r.copy, &mut map)?;
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
                chain: Chains::opened(&rec),
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
    ) -> Result<(MetaRecord, PageMap)> {
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
    /// update holds), write it into the copy the last record did not name (a delta or a full
    /// snapshot, see the module text), flush, and return the superblock metadata record
    /// pointing at it.
    pub(super) fn write_snapshot(&self) -> Result<Vec<u8>> {
        let _c = self.ckpt.lock();
        let plan = self.take_snapshot();
        let t = usize::from(plan.target);
        let chain = match self.persist(&plan) {
            Ok(c) => c,
            Err(e) => {
                self.st.write().snap.copy[t].force_full = true;
                return Err(e);
            }
        };
        let mut st = self.st.write();
        st.snap.copy[t] = chain;
        st.snap.last = plan.target;
        let (ram, mapped) = (st.map.ram_bytes(), st.map.mapped());
        drop(st);
        self.counters.set_mapping(ram, mapped);
        Ok(self.record(&plan, chain).encode())
    }

    /// Take the entries to write (and clear their dirty bits) under `io` and the state lock.
    fn take_snapshot(&self) -> Plan {
        // `io`: no write between placement and mapping update, so the open zones and the
        // mapping agree.
        let _io = self.io.lock();
        let mut st = self.st.write();
        let target = 1 - st.snap.last;
        let t = usize::from(target);
        let chain = st.snap.copy[t];
        let dirty = st.map.dirty_count(t);
        let room = self.geo.meta_blocks - self.geo.full_blocks - chain.delta_blocks;
        let full = chain.force_full
            || chain.deltas + 1 >= self.cfg.snapshot_full_every.max(1)
            || blocks_for(dirty) > room
            || dirty >= st.map.mapped();
        let entries = if full {
            st.map.full_entries(t)
        } else {
            st.map.take_dirty(t)
        };
        assert!(
            !full || u64_of(entries.len()) >= st.map.mapped(),
            "a full snapshot holds every mapped pid"
        );
        assert!(
            full || u64_of(entries.len()) == dirty,
            "a delta holds every dirty pid"
        );
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
        Plan {
            target,
            full,
            entries,
            chain,
            threshold,
            next_seq: st.next_seq,
            clock: st.clock,
        }
    }

    /// Write a planned snapshot and flush; the target copy's chain after it.
    fn persist(&self, plan: &Plan) -> Result<Chain> {
        let buf = encode_entries(&plan.entries);
        let c = plan.chain;
        let base = self.geo.meta_start + u64::from(plan.target) * self.geo.meta_blocks;
        let (next, at) = if plan.full {
            let next = Chain {
                full_entries: u64_of(plan.entries.len()),
                full_crc: crc32c::crc32c(&buf),
                delta_blocks: 0,
                delta_crc: 0,
                deltas: 0,
                force_full: false,
            };
            (next, base)
        } else if buf.is_empty() {
            return Ok(c);
        } else {
            let next = Chain {
                delta_blocks: c.delta_blocks + u64_of(buf.len()) / BS,
                delta_crc: crc32c::crc32c_append(c.delta_crc, &buf),
                deltas: c.deltas + 1,
                ..c
            };
            (next, base + self.geo.full_blocks + c.delta_blocks)
        };
        assert!(
            next.delta_blocks <= self.geo.meta_blocks - self.geo.full_blocks
                && blocks_for(next.full_entries) <= self.geo.full_blocks,
            "snapshot within its copy: {next:?}"
        );
        // Metadata goes to the log device, or to handle 0 with the WAL (FDP).
        self.meta_dev.write_at_hinted(at * BS, &buf, None)?;
        self.meta_dev.flush()?;
        EngineCounters::add(&self.counters.meta_store_bytes, u64_of(buf.len()));
        EngineCounters::add(&self.counters.full_snapshots, u64::from(plan.full));
        Ok(next)
    }

    fn record(&self, plan: &Plan, c: Chain) -> MetaRecord {
        MetaRecord {
            db_id: self.db_id,
            zones: self.geo.zones,
            zone_first: self.geo.zone_first,
            zone_pages: self.geo.zone_pages,
            meta_start: self.geo.meta_start,
            meta_blocks: self.geo.meta_blocks,
            capacity: self.geo.capacity,
            copy: plan.target,
            present: true,
            on_log: self.geo.meta_on_log,
            crc: c.full_crc,
            entries: c.full_entries,
            threshold: plan.threshold,
            next_seq: plan.next_seq,
            clock: plan.clock,
            full_blocks: self.geo.full_blocks,
            delta_blocks: c.delta_blocks,
            delta_crc: c.delta_crc,
            deltas: c.deltas,
        }
    }
}
