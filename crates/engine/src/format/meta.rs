//! Out-of-place checkpoint metadata: the record kept in the superblock's store-metadata
//! field, and the mapping-snapshot entries it points to (a full snapshot of the mapped pids
//! in a copy's full area, then the deltas of later checkpoints appended in its delta area).
//! Byte tables: docs/design.md 14.5.

use super::{Field, BLOCK};
use crate::error::MetaDamage;

/// "OOPM".
pub const MAGIC: u32 = 0x4D50_4F4F;
/// Record version.
pub const VERSION: u32 = 3;

/// Magic.
pub const M_MAGIC: Field = Field::new(0, 4, "magic");
/// Version.
pub const M_VERSION: Field = Field::new(4, 4, "version");
/// Database id (in every zone header and packed slot).
pub const M_DB: Field = Field::new(8, 4, "db id");
/// Zones.
pub const M_ZONES: Field = Field::new(12, 4, "zones");
/// First zone block.
pub const M_ZONE_FIRST: Field = Field::new(16, 8, "first zone block");
/// Blocks per zone.
pub const M_ZONE_PAGES: Field = Field::new(24, 8, "zone pages");
/// Metadata region: first block (copy 0; copy 1 follows).
pub const M_META_START: Field = Field::new(32, 8, "metadata region start");
/// Metadata region: blocks per copy (full area, then delta area).
pub const M_META_BLOCKS: Field = Field::new(40, 8, "blocks per copy");
/// Capacity in pids.
pub const M_CAPACITY: Field = Field::new(48, 8, "capacity");
/// Copy holding the snapshot.
pub const M_COPY: Field = Field::new(56, 1, "snapshot copy");
/// Snapshot present.
pub const M_PRESENT: Field = Field::new(57, 1, "snapshot present");
/// Metadata region on the log device.
pub const M_ON_LOG: Field = Field::new(58, 1, "on log device");
/// Reserved.
pub const M_RESERVED: Field = Field::new(59, 1, "reserved");
/// crc32c of the full snapshot's entries.
pub const M_CRC: Field = Field::new(60, 4, "full snapshot crc32c");
/// Full snapshot entries.
pub const M_ENTRIES: Field = Field::new(64, 8, "full entries");
/// Threshold: lowest seq of the zones open at the snapshot (next seq if none).
pub const M_THRESHOLD: Field = Field::new(72, 8, "threshold seq");
/// Next zone seq.
pub const M_NEXT_SEQ: Field = Field::new(80, 8, "next seq");
/// GDT write clock.
pub const M_CLOCK: Field = Field::new(88, 8, "gdt clock");
/// Blocks of a copy's full area (the delta area follows).
pub const M_FULL_BLOCKS: Field = Field::new(96, 8, "full area blocks");
/// Delta blocks written since the full snapshot (the prefix of the delta area in use).
pub const M_DELTA_BLOCKS: Field = Field::new(104, 8, "delta blocks");
/// crc32c of the delta prefix.
pub const M_DELTA_CRC: Field = Field::new(112, 4, "delta crc32c");
/// Deltas written since the full snapshot.
pub const M_DELTAS: Field = Field::new(116, 4, "deltas");

/// Record fields.
pub const FIELDS: &[Field] = &[
    M_MAGIC,
    M_VERSION,
    M_DB,
    M_ZONES,
    M_ZONE_FIRST,
    M_ZONE_PAGES,
    M_META_START,
    M_META_BLOCKS,
    M_CAPACITY,
    M_COPY,
    M_PRESENT,
    M_ON_LOG,
    M_RESERVED,
    M_CRC,
    M_ENTRIES,
    M_THRESHOLD,
    M_NEXT_SEQ,
    M_CLOCK,
    M_FULL_BLOCKS,
    M_DELTA_BLOCKS,
    M_DELTA_CRC,
    M_DELTAS,
];

/// Record size.
pub const LEN: usize = super::fixed_size(FIELDS);

/// Snapshot entry: pid (u32::MAX: padding to the end of a delta's last block).
pub const N_PID: Field = Field::new(0, 4, "pid");
/// Snapshot entry: block relative to the first zone (u32::MAX: unmapped, generation kept).
pub const N_BLOCK: Field = Field::new(4, 4, "zone-area block");
/// Snapshot entry: bits 0..12 compressed length (0: raw), 12 the copy fills its slot alone,
/// 13..15 codec, 15..39 store generation, 39..64 low 25 bits of the page LSN.
pub const N_PACKED: Field = Field::new(8, 8, "packed entry");

/// Snapshot entry fields.
pub const SNAP_FIELDS: &[Field] = &[N_PID, N_BLOCK, N_PACKED];
/// Snapshot entry size.
pub const SNAP_ENTRY: usize = super::fixed_size(SNAP_FIELDS);
/// The pid of a padding entry.
pub const PAD_PID: u32 = u32::MAX;

const _: () = assert!(super::well_formed(FIELDS, BLOCK));
const _: () = assert!(super::well_formed(SNAP_FIELDS, BLOCK));
const _: () = assert!(LEN == 120 && SNAP_ENTRY == 16);
const _: () = assert!(LEN <= super::superblock::MAX_META);

/// The out-of-place metadata record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaRecord {
    /// Database id.
    pub db_id: u32,
    /// Zones.
    pub zones: u32,
    /// First zone block.
    pub zone_first: u64,
    /// Blocks per zone.
    pub zone_pages: u64,
    /// Metadata region start.
    pub meta_start: u64,
    /// Blocks per snapshot copy.
    pub meta_blocks: u64,
    /// Capacity in pids.
    pub capacity: u64,
    /// Snapshot copy.
    pub copy: u8,
    /// Snapshot present.
    pub present: bool,
    /// Metadata region on the log device.
    pub on_log: bool,
    /// Snapshot checksum.
    pub crc: u32,
    /// Snapshot entries.
    pub entries: u64,
    /// Threshold seq.
    pub threshold: u64,
    /// Next seq.
    pub next_seq: u64,
    /// GDT clock.
    pub clock: u64,
    /// Full area blocks per copy.
    pub full_blocks: u64,
    /// Delta blocks in use.
    pub delta_blocks: u64,
    /// crc32c of the delta prefix.
    pub delta_crc: u32,
    /// Deltas since the full snapshot.
    pub deltas: u32,
}

impl MetaRecord {
    /// Encode.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut m = vec![0u8; LEN];
        M_MAGIC.put_u32(&mut m, MAGIC);
        M_VERSION.put_u32(&mut m, VERSION);
        M_DB.put_u32(&mut m, self.db_id);
        M_ZONES.put_u32(&mut m, self.zones);
        M_ZONE_FIRST.put_u64(&mut m, self.zone_first);
        M_ZONE_PAGES.put_u64(&mut m, self.zone_pages);
        M_META_START.put_u64(&mut m, self.meta_start);
        M_META_BLOCKS.put_u64(&mut m, self.meta_blocks);
        M_CAPACITY.put_u64(&mut m, self.capacity);
        M_COPY.put_u8(&mut m, self.copy);
        M_PRESENT.put_u8(&mut m, u8::from(self.present));
        M_ON_LOG.put_u8(&mut m, u8::from(self.on_log));
        M_CRC.put_u32(&mut m, self.crc);
        M_ENTRIES.put_u64(&mut m, self.entries);
        M_THRESHOLD.put_u64(&mut m, self.threshold);
        M_NEXT_SEQ.put_u64(&mut m, self.next_seq);
        M_CLOCK.put_u64(&mut m, self.clock);
        M_FULL_BLOCKS.put_u64(&mut m, self.full_blocks);
        M_DELTA_BLOCKS.put_u64(&mut m, self.delta_blocks);
        M_DELTA_CRC.put_u32(&mut m, self.delta_crc);
        M_DELTAS.put_u32(&mut m, self.deltas);
        m
    }

    /// Decode (field ranges are checked by the store against the devices).
    ///
    /// # Errors
    /// Wrong length, magic or version.
    pub fn decode(m: &[u8]) -> Result<MetaRecord, MetaDamage> {
        if m.len() != LEN {
            return Err(MetaDamage::Length {
                len: m.len(),
                expected: LEN,
            });
        }
        if M_MAGIC.u32(m) != MAGIC || M_VERSION.u32(m) != VERSION {
            return Err(MetaDamage::Magic {
                magic: M_MAGIC.u32(m),
                version: M_VERSION.u32(m),
            });
        }
        Ok(MetaRecord {
            db_id: M_DB.u32(m),
            zones: M_ZONES.u32(m),
            zone_first: M_ZONE_FIRST.u64(m),
            zone_pages: M_ZONE_PAGES.u64(m),
            meta_start: M_META_START.u64(m),
            meta_blocks: M_META_BLOCKS.u64(m),
            capacity: M_CAPACITY.u64(m),
            copy: M_COPY.u8(m),
            present: M_PRESENT.u8(m) != 0,
            on_log: M_ON_LOG.u8(m) != 0,
            crc: M_CRC.u32(m),
            entries: M_ENTRIES.u64(m),
            threshold: M_THRESHOLD.u64(m),
            next_seq: M_NEXT_SEQ.u64(m),
            clock: M_CLOCK.u64(m),
            full_blocks: M_FULL_BLOCKS.u64(m),
            delta_blocks: M_DELTA_BLOCKS.u64(m),
            delta_crc: M_DELTA_CRC.u32(m),
            deltas: M_DELTAS.u32(m),
        })
    }
}

/// One mapping-snapshot entry: a pid and its 12-byte mapping entry (block, then the packed
/// word, little endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapEntry {
    /// Pid ([`PAD_PID`]: padding).
    pub pid: u32,
    /// The mapping entry's bytes.
    pub entry: [u8; 12],
}

impl SnapEntry {
    /// Padding to the end of a block.
    pub const PAD: SnapEntry = SnapEntry {
        pid: PAD_PID,
        entry: [0; 12],
    };

    /// Encode into [`SNAP_ENTRY`] bytes.
    pub fn encode(&self, e: &mut [u8]) {
        N_PID.put_u32(e, self.pid);
        e[N_BLOCK.offset..N_PACKED.offset + N_PACKED.size].copy_from_slice(&self.entry);
    }

    /// Decode [`SNAP_ENTRY`] bytes.
    ///
    /// # Panics
    /// If `e` is shorter than [`SNAP_ENTRY`].
    #[must_use]
    pub fn decode(e: &[u8]) -> SnapEntry {
        let mut entry = [0u8; 12];
        entry.copy_from_slice(&e[N_BLOCK.offset..N_PACKED.offset + N_PACKED.size]);
        SnapEntry {
            pid: N_PID.u32(e),
            entry,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_and_entry_round_trip() {
        let r = MetaRecord {
            db_id: 3,
            zones: 40,
            zone_first: 256,
            zone_pages: 256,
            meta_start: 10_496,
            meta_blocks: 30,
            capacity: 5000,
            copy: 1,
            present: true,
            on_log: false,
            crc: 0xABCD,
            entries: 5000,
            threshold: 17,
            next_seq: 21,
            clock: 999,
            full_blocks: 15,
            delta_blocks: 3,
            delta_crc: 0x1234,
            deltas: 2,
        };
        assert_eq!(MetaRecord::decode(&r.encode()).unwrap(), r);
        assert!(MetaRecord::decode(&[0u8; LEN]).is_err());
        assert!(MetaRecord::decode(&[]).is_err());
        let e = SnapEntry {
            pid: 300,
            entry: [7, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8],
        };
        let mut b = [0u8; SNAP_ENTRY];
        e.encode(&mut b);
        assert_eq!(SnapEntry::decode(&b), e);
    }
}
