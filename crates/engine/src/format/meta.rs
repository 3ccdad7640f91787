//! Out-of-place checkpoint metadata: the record kept in the superblock's store-metadata
//! field, and the mapping-snapshot entries it points to. Byte tables: docs/design.md 14.5.

use super::{Field, BLOCK};
use crate::error::MetaDamage;

/// "OOPM".
pub const MAGIC: u32 = 0x4D50_4F4F;
/// Record version.
pub const VERSION: u32 = 2;

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
/// Metadata region: blocks per copy.
pub const M_META_BLOCKS: Field = Field::new(40, 8, "blocks per copy");
/// Capacity in pids (= snapshot entries).
pub const M_CAPACITY: Field = Field::new(48, 8, "capacity");
/// Copy holding the snapshot.
pub const M_COPY: Field = Field::new(56, 1, "snapshot copy");
/// Snapshot present.
pub const M_PRESENT: Field = Field::new(57, 1, "snapshot present");
/// Metadata region on the log device.
pub const M_ON_LOG: Field = Field::new(58, 1, "on log device");
/// Reserved.
pub const M_RESERVED: Field = Field::new(59, 1, "reserved");
/// crc32c of the snapshot bytes.
pub const M_CRC: Field = Field::new(60, 4, "snapshot crc32c");
/// Snapshot entries.
pub const M_ENTRIES: Field = Field::new(64, 8, "entries");
/// Threshold: lowest seq of the zones open at the snapshot (next seq if none).
pub const M_THRESHOLD: Field = Field::new(72, 8, "threshold seq");
/// Next zone seq.
pub const M_NEXT_SEQ: Field = Field::new(80, 8, "next seq");
/// GDT write clock.
pub const M_CLOCK: Field = Field::new(88, 8, "gdt clock");

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
];

/// Record size.
pub const LEN: usize = super::fixed_size(FIELDS);

/// Snapshot entry: device block (u64::MAX: never written).
pub const N_BLOCK: Field = Field::new(0, 8, "block");
/// Snapshot entry: page LSN.
pub const N_LSN: Field = Field::new(8, 8, "lsn");
/// Snapshot entry: offset in a packed slot.
pub const N_OFF: Field = Field::new(16, 2, "offset");
/// Snapshot entry: compressed length (0: raw).
pub const N_LEN: Field = Field::new(18, 2, "length");
/// Snapshot entry: codec.
pub const N_CODEC: Field = Field::new(20, 1, "codec");
/// Snapshot entry: 24-bit store generation.
pub const N_GEN: Field = Field::new(21, 3, "generation");

/// Snapshot entry fields.
pub const SNAP_FIELDS: &[Field] = &[N_BLOCK, N_LSN, N_OFF, N_LEN, N_CODEC, N_GEN];
/// Snapshot entry size.
pub const SNAP_ENTRY: usize = super::fixed_size(SNAP_FIELDS);

const _: () = assert!(super::well_formed(FIELDS, BLOCK));
const _: () = assert!(super::well_formed(SNAP_FIELDS, BLOCK));
const _: () = assert!(LEN == 96 && SNAP_ENTRY == 24);
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
        })
    }
}

/// One mapping-snapshot entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapEntry {
    /// Device block (u64::MAX: never written).
    pub block: u64,
    /// Page LSN.
    pub lsn: u64,
    /// Offset in a packed slot.
    pub off: u16,
    /// Compressed length (0: raw).
    pub len: u16,
    /// Codec.
    pub codec: u8,
    /// Store generation (24 bits).
    pub gen: u32,
}

impl SnapEntry {
    /// Encode into [`SNAP_ENTRY`] bytes.
    pub fn encode(&self, e: &mut [u8]) {
        N_BLOCK.put_u64(e, self.block);
        N_LSN.put_u64(e, self.lsn);
        N_OFF.put_u16(e, self.off);
        N_LEN.put_u16(e, self.len);
        N_CODEC.put_u8(e, self.codec);
        let g = self.gen.to_le_bytes();
        N_GEN.bytes_mut(e).copy_from_slice(&g[..3]);
    }

    /// Decode [`SNAP_ENTRY`] bytes.
    #[must_use]
    pub fn decode(e: &[u8]) -> SnapEntry {
        let g = N_GEN.bytes(e);
        SnapEntry {
            block: N_BLOCK.u64(e),
            lsn: N_LSN.u64(e),
            off: N_OFF.u16(e),
            len: N_LEN.u16(e),
            codec: N_CODEC.u8(e),
            gen: u32::from_le_bytes([g[0], g[1], g[2], 0]),
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
        };
        assert_eq!(MetaRecord::decode(&r.encode()).unwrap(), r);
        assert!(MetaRecord::decode(&[0u8; LEN]).is_err());
        assert!(MetaRecord::decode(&[]).is_err());
        let e = SnapEntry {
            block: 300,
            lsn: 12,
            off: 48,
            len: 900,
            codec: 1,
            gen: 0xAB_CDEF,
        };
        let mut b = [0u8; SNAP_ENTRY];
        e.encode(&mut b);
        assert_eq!(SnapEntry::decode(&b), e);
    }
}
