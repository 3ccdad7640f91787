//! Out-of-place zone formats: the zone header (block 0 of every zone incarnation), packed
//! slots (several compressed pages in one block) and raw slots (one uncompressed page whose
//! checksum is bound to the zone incarnation). Byte tables: docs/design.md section 14.
//!
//! Every slot names its zone incarnation (packed: the seq field; raw: the checksum is
//! XOR-ed with a value derived from db id, zone and seq), so a slot left over from an older
//! incarnation of the zone is never taken for a current one, whatever TRIM left behind.

use super::{block_crc, page, Field, BLOCK, VAR};
use crate::error::{CodecError, ConfigError, Pid};
use crate::num::u16_of;

/// Zone header magic "ZH".
pub const ZONE_MAGIC: u16 = 0x485A;
/// Packed slot magic "ZP" (a raw page has 0x574E here).
pub const SLOT_MAGIC: u16 = 0x505A;
/// Zone header version.
pub const ZONE_VERSION: u16 = 2;

/// Zone header: crc32c of bytes [4, 4096).
pub const Z_CRC: Field = Field::new(0, 4, "crc32c");
/// Zone header: magic.
pub const Z_MAGIC: Field = Field::new(4, 2, "magic");
/// Zone header: version.
pub const Z_VERSION: Field = Field::new(6, 2, "version");
/// Zone header: database id.
pub const Z_DB: Field = Field::new(8, 4, "db id");
/// Zone header: zone index.
pub const Z_ZONE: Field = Field::new(12, 4, "zone");
/// Zone header: incarnation sequence number.
pub const Z_SEQ: Field = Field::new(16, 8, "seq");
/// Zone header: NoWA active group.
pub const Z_GROUP: Field = Field::new(24, 8, "group");
/// Zone header: open zones at the time.
pub const Z_OPEN: Field = Field::new(32, 4, "open zones");
/// Zone header: placement class of the zone (0 in headers written before it was stored).
pub const Z_CLASS: Field = Field::new(36, 2, "class");
/// Zone header: zero.
pub const Z_REST: Field = Field::new(38, VAR, "zero");

/// Zone header fields.
pub const HEADER_FIELDS: &[Field] = &[
    Z_CRC, Z_MAGIC, Z_VERSION, Z_DB, Z_ZONE, Z_SEQ, Z_GROUP, Z_OPEN, Z_CLASS, Z_REST,
];

/// Packed slot: crc32c of bytes [4, 4096).
pub const S_CRC: Field = Field::new(0, 4, "crc32c");
/// Packed slot: magic.
pub const S_MAGIC: Field = Field::new(4, 2, "magic");
/// Packed slot: entries n.
pub const S_N: Field = Field::new(6, 2, "entries");
/// Packed slot: database id.
pub const S_DB: Field = Field::new(8, 4, "db id");
/// Packed slot: zone.
pub const S_ZONE: Field = Field::new(12, 4, "zone");
/// Packed slot: zone incarnation seq.
pub const S_SEQ: Field = Field::new(16, 8, "zone seq");
/// Packed slot: n entries, then the compressed pages.
pub const S_BODY: Field = Field::new(24, VAR, "entries, payloads");

/// Packed slot header fields.
pub const SLOT_FIELDS: &[Field] = &[S_CRC, S_MAGIC, S_N, S_DB, S_ZONE, S_SEQ, S_BODY];

/// Entry: pid.
pub const E_PID: Field = Field::new(0, 8, "pid");
/// Entry: page LSN.
pub const E_LSN: Field = Field::new(8, 8, "lsn");
/// Entry: payload offset in the slot.
pub const E_OFF: Field = Field::new(16, 2, "offset");
/// Entry: payload length.
pub const E_LEN: Field = Field::new(18, 2, "length");
/// Entry: codec.
pub const E_CODEC: Field = Field::new(20, 1, "codec");
/// Entry: 24-bit store generation.
pub const E_GEN: Field = Field::new(21, 3, "generation");

/// Packed slot entry fields.
pub const ENTRY_FIELDS: &[Field] = &[E_PID, E_LSN, E_OFF, E_LEN, E_CODEC, E_GEN];

/// Packed slot header size.
pub const SLOT_HDR: usize = S_BODY.offset;
/// Packed slot entry size.
pub const SLOT_ENTRY: usize = E_GEN.offset + E_GEN.size;

const _: () = assert!(super::well_formed(HEADER_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(SLOT_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(ENTRY_FIELDS, BLOCK));
const _: () = assert!(SLOT_HDR == 24 && SLOT_ENTRY == 24);

/// Codec ids (slot entries, mapping snapshot).
pub const CODEC_RAW: u8 = 0;
/// LZ4 block.
pub const CODEC_LZ4: u8 = 1;
/// ZSTD.
pub const CODEC_ZSTD: u8 = 2;
/// A page delta (`crate::format::delta`), not a page: rebuilt over its chain's base.
pub const CODEC_DELTA: u8 = 3;

/// Generations are 24-bit counters compared with wrap-around.
pub const GEN_MASK: u32 = 0x00FF_FFFF;

/// Per-page compression before packing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compression {
    /// Store pages raw.
    Off,
    /// LZ4 block format.
    Lz4,
    /// ZSTD.
    Zstd,
}

impl std::str::FromStr for Compression {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s {
            "off" | "none" => Ok(Compression::Off),
            "lz4" => Ok(Compression::Lz4),
            "zstd" => Ok(Compression::Zstd),
            _ => Err(ConfigError::Compression(s.to_string())),
        }
    }
}

/// Is generation `a` newer than `b` (24-bit wrap-around: `a` is at most 2^23 - 1 ahead)?
#[must_use]
pub fn gen_newer(a: u32, b: u32) -> bool {
    let d = a.wrapping_sub(b) & GEN_MASK;
    d != 0 && d < 1 << 23
}

/// A zone header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneHeader {
    /// Database id.
    pub db_id: u32,
    /// Zone index.
    pub zone: u32,
    /// Incarnation.
    pub seq: u64,
    /// NoWA active group.
    pub group: u64,
    /// Open zones.
    pub open_zones: u32,
    /// Placement class the zone was opened for (restored at open).
    pub class: u16,
}

impl ZoneHeader {
    /// Encode into a block.
    ///
    /// # Panics
    /// If the incarnation is 0 (sequence numbers start at 1; 0 marks a never-opened zone).
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        assert!(self.seq > 0, "zone {}: incarnation 0", self.zone);
        let mut h = vec![0u8; BLOCK];
        Z_MAGIC.put_u16(&mut h, ZONE_MAGIC);
        Z_VERSION.put_u16(&mut h, ZONE_VERSION);
        Z_DB.put_u32(&mut h, self.db_id);
        Z_ZONE.put_u32(&mut h, self.zone);
        Z_SEQ.put_u64(&mut h, self.seq);
        Z_GROUP.put_u64(&mut h, self.group);
        Z_OPEN.put_u32(&mut h, self.open_zones);
        Z_CLASS.put_u16(&mut h, self.class);
        let c = block_crc(&h);
        Z_CRC.put_u32(&mut h, c);
        h
    }

    /// Decode a block that should be the header of zone `zone` of database `db_id`: None if
    /// it is not (torn, another database, another zone, never written).
    #[must_use]
    pub fn decode(b: &[u8], db_id: u32, zone: u32) -> Option<ZoneHeader> {
        let ok = b.len() == BLOCK
            && Z_MAGIC.u16(b) == ZONE_MAGIC
            && Z_VERSION.u16(b) == ZONE_VERSION
            && Z_CRC.u32(b) == block_crc(b)
            && Z_DB.u32(b) == db_id
            && Z_ZONE.u32(b) == zone;
        ok.then(|| ZoneHeader {
            db_id,
            zone,
            seq: Z_SEQ.u64(b),
            group: Z_GROUP.u64(b),
            open_zones: Z_OPEN.u32(b),
            class: Z_CLASS.u16(b),
        })
    }
}

/// Which zone incarnation a slot belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Incarnation {
    /// Database id.
    pub db_id: u32,
    /// Zone index.
    pub zone: u32,
    /// Zone sequence number.
    pub seq: u64,
}

impl Incarnation {
    /// Value XOR-ed into a raw slot's checksum: never 0, different for every incarnation
    /// with overwhelming probability.
    #[must_use]
    pub fn crc_tweak(&self) -> u32 {
        let mut x = self.seq ^ u64::from(self.zone) << 40 ^ u64::from(self.db_id) << 8;
        x = (x ^ x >> 30).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ x >> 27).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        let [a, b, c, d, e, f, g, h] = x.to_le_bytes();
        (u32::from_le_bytes([a, b, c, d]) ^ u32::from_le_bytes([e, f, g, h])) | 1
    }
}

/// One page in a packed slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotEntry {
    /// The page.
    pub pid: Pid,
    /// Its LSN.
    pub lsn: u64,
    /// Payload offset in the slot.
    pub off: u16,
    /// Payload length.
    pub len: u16,
    /// Codec.
    pub codec: u8,
    /// Store generation (24 bits).
    pub gen: u32,
}

impl SlotEntry {
    /// Encode into 24 bytes.
    pub fn encode(&self, e: &mut [u8]) {
        E_PID.put_u64(e, self.pid);
        E_LSN.put_u64(e, self.lsn);
        E_OFF.put_u16(e, self.off);
        E_LEN.put_u16(e, self.len);
        E_CODEC.put_u8(e, self.codec);
        let g = (self.gen & GEN_MASK).to_le_bytes();
        E_GEN.bytes_mut(e).copy_from_slice(&g[..3]);
    }

    /// Decode 24 bytes.
    #[must_use]
    pub fn decode(e: &[u8]) -> SlotEntry {
        let g = E_GEN.bytes(e);
        SlotEntry {
            pid: E_PID.u64(e),
            lsn: E_LSN.u64(e),
            off: E_OFF.u16(e),
            len: E_LEN.u16(e),
            codec: E_CODEC.u8(e),
            gen: u32::from_le_bytes([g[0], g[1], g[2], 0]),
        }
    }

    /// Does the payload lie inside the slot, after the entry table?
    #[must_use]
    pub fn in_bounds(&self, n: usize) -> bool {
        let off = usize::from(self.off);
        self.len != 0 && off >= SLOT_HDR + n * SLOT_ENTRY && off + usize::from(self.len) <= BLOCK
    }
}

/// Build a packed slot in `buf` (one block): entries and payloads, header, checksum.
///
/// # Panics
/// If the payloads overflow the slot (the packer guarantees they fit; checked again when a
/// slot is parsed).
pub fn build_packed(buf: &mut [u8], inc: Incarnation, pages: &[(SlotEntry, &[u8])]) {
    let n = pages.len();
    S_MAGIC.put_u16(buf, SLOT_MAGIC);
    S_N.put_u16(buf, u16_of(n));
    S_DB.put_u32(buf, inc.db_id);
    S_ZONE.put_u32(buf, inc.zone);
    S_SEQ.put_u64(buf, inc.seq);
    for (k, (e, data)) in pages.iter().enumerate() {
        assert!(e.in_bounds(n), "packed slot overflow at entry {k}: {e:?}");
        assert_eq!(usize::from(e.len), data.len(), "entry length");
        let at = SLOT_HDR + k * SLOT_ENTRY;
        e.encode(&mut buf[at..at + SLOT_ENTRY]);
        let o = usize::from(e.off);
        buf[o..o + data.len()].copy_from_slice(data);
    }
    let c = block_crc(buf);
    S_CRC.put_u32(buf, c);
}

/// Parse a packed slot of incarnation `inc`: its entries (bounds checked), or None if the
/// block is no packed slot of that incarnation.
#[must_use]
pub fn parse_packed(b: &[u8], inc: Incarnation) -> Option<Vec<SlotEntry>> {
    let ok = S_MAGIC.u16(b) == SLOT_MAGIC
        && S_CRC.u32(b) == block_crc(b)
        && S_DB.u32(b) == inc.db_id
        && S_ZONE.u32(b) == inc.zone
        && S_SEQ.u64(b) == inc.seq;
    let n = usize::from(S_N.u16(b));
    if !ok || SLOT_HDR + n * SLOT_ENTRY > BLOCK {
        return None;
    }
    let entries: Vec<SlotEntry> = (0..n)
        .map(|i| SlotEntry::decode(&b[SLOT_HDR + i * SLOT_ENTRY..SLOT_HDR + (i + 1) * SLOT_ENTRY]))
        .collect();
    entries.iter().all(|e| e.in_bounds(n)).then_some(entries)
}

/// Is this block a packed slot (of any incarnation)?
#[must_use]
pub fn is_packed(b: &[u8]) -> bool {
    S_MAGIC.u16(b) == SLOT_MAGIC
}

/// Turn a sealed page into a raw slot of `inc` with generation `gen` (in place).
///
/// # Panics
/// If `p` is not a sealed page (checked again by [`open_raw`] when read).
pub fn seal_raw(p: &mut [u8], inc: Incarnation, gen: u32) {
    assert_eq!(
        page::CRC.u32(p),
        block_crc(p),
        "raw slot from an unsealed page"
    );
    page::set_generation(p, gen & GEN_MASK);
    let c = block_crc(p) ^ inc.crc_tweak();
    page::CRC.put_u32(p, c);
}

/// Check a raw slot of `inc` and turn it back into a sealed page (in place). False if the
/// block is not a raw slot of that incarnation (the block is then left as it was).
#[must_use]
pub fn open_raw(p: &mut [u8], inc: Incarnation) -> bool {
    let c = block_crc(p);
    if page::CRC.u32(p) ^ inc.crc_tweak() != c {
        return false;
    }
    page::CRC.put_u32(p, c);
    true
}

/// Decompress a packed page into `dst` (one page).
///
/// # Errors
/// Unknown codec, undecodable input, or a result that is not one page.
pub fn decompress(codec: u8, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let n = match codec {
        CODEC_LZ4 => {
            lz4_flex::block::decompress_into(src, dst).map_err(|_| CodecError::Undecodable)?
        }
        CODEC_ZSTD => {
            zstd::bulk::decompress_to_buffer(src, dst).map_err(|_| CodecError::Undecodable)?
        }
        _ => return Err(CodecError::Unknown),
    };
    if n != BLOCK {
        return Err(CodecError::Size { len: n });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_identity() {
        let h = ZoneHeader {
            db_id: 9,
            zone: 3,
            seq: 77,
            group: 5,
            open_zones: 4,
            class: 3,
        };
        let b = h.encode();
        assert_eq!(ZoneHeader::decode(&b, 9, 3), Some(h));
        assert_eq!(ZoneHeader::decode(&b, 8, 3), None, "other database");
        assert_eq!(ZoneHeader::decode(&b, 9, 4), None, "other zone");
    }

    #[test]
    fn packed_slot_names_its_incarnation() {
        let inc = Incarnation {
            db_id: 1,
            zone: 2,
            seq: 10,
        };
        let data = [7u8; 100];
        let e = SlotEntry {
            pid: 4,
            lsn: 99,
            off: u16_of(SLOT_HDR + SLOT_ENTRY),
            len: 100,
            codec: CODEC_LZ4,
            gen: 0x12_3456,
        };
        let mut b = vec![0u8; BLOCK];
        build_packed(&mut b, inc, &[(e, &data)]);
        assert_eq!(parse_packed(&b, inc), Some(vec![e]));
        assert_eq!(parse_packed(&b, Incarnation { seq: 9, ..inc }), None);
    }

    #[test]
    fn raw_slot_bound_to_incarnation() {
        let mut p = vec![0u8; BLOCK];
        page::MAGIC.put_u16(&mut p, 0x574E);
        let c = block_crc(&p);
        page::CRC.put_u32(&mut p, c);
        let inc = Incarnation {
            db_id: 1,
            zone: 2,
            seq: 10,
        };
        let mut r = p.clone();
        seal_raw(&mut r, inc, 5);
        assert_ne!(
            page::CRC.u32(&r),
            block_crc(&r),
            "a raw slot is no sealed page"
        );
        let mut old = r.clone();
        assert!(!open_raw(&mut old, Incarnation { seq: 11, ..inc }));
        assert!(open_raw(&mut r, inc));
        assert_eq!(page::CRC.u32(&r), block_crc(&r));
        assert_eq!(page::generation(&r), 5);
    }

    #[test]
    fn generations_wrap() {
        assert!(gen_newer(1, 0));
        assert!(!gen_newer(0, 1));
        assert!(gen_newer(0, GEN_MASK), "0 follows 2^24 - 1");
        assert!(!gen_newer(5, 5));
    }
}
