//! Page header (data pages, doublewrite slots, page images in the WAL). The node layouts
//! (slot array, records) are in `crate::page`. Byte table: docs/design.md section 3.

use super::{Field, BLOCK, VAR};

/// crc32c of bytes [4, 4096).
pub const CRC: Field = Field::new(0, 4, "crc32c");
/// Magic 0x574E ("NW").
pub const MAGIC: Field = Field::new(4, 2, "magic");
/// Kind: 1 leaf, 2 inner (0: unwritten, in memory during recovery only).
pub const KIND: Field = Field::new(6, 1, "kind");
/// Out of place: bits 16..24 of the store generation (in place: 0).
pub const GEN_HI: Field = Field::new(7, 1, "store generation (high byte)");
/// The page's pid (self identification).
pub const PID: Field = Field::new(8, 8, "pid");
/// LSN of the last WAL record applied.
pub const LSN: Field = Field::new(16, 8, "page lsn");
/// Write history: 4 x u64 write timestamps (GDT).
pub const HISTORY: Field = Field::new(24, 32, "write history");
/// Number of slots.
pub const NKEYS: Field = Field::new(56, 2, "nkeys");
/// Heap start: records occupy [heap_start, 4096).
pub const HEAP_START: Field = Field::new(58, 2, "heap start");
/// Live record bytes.
pub const LIVE: Field = Field::new(60, 2, "live bytes");
/// Out of place: bits 0..16 of the store generation (in place: 0).
pub const GEN_LO: Field = Field::new(62, 2, "store generation (low bytes)");
/// Leaf: right sibling (u64::MAX none); inner: leftmost child.
pub const LINK: Field = Field::new(64, 8, "link");
/// SepFrozen hotness records: HR_current (16 bytes) then HR_last (16 bytes), in
/// `nowa_logspace::hotness` encoding; stamped by the buffer pool on every user write of the
/// page (all zero: never written through the pool). docs/design.md section 3.
pub const HOTNESS: Field = Field::new(72, 32, "hotness records (HR_current, HR_last)");
/// Slot array, then free space, then the record heap.
pub const BODY: Field = Field::new(104, VAR, "slots, free space, records");

/// The page header's fields, in order.
pub const FIELDS: &[Field] = &[
    CRC, MAGIC, KIND, GEN_HI, PID, LSN, HISTORY, NKEYS, HEAP_START, LIVE, GEN_LO, LINK, HOTNESS,
    BODY,
];

/// Header size: the slot array starts here.
pub const HEADER: usize = BODY.offset;

const _: () = assert!(super::well_formed(FIELDS, BLOCK));
const _: () = assert!(HEADER == 104);
const _: () = assert!(HOTNESS.size == nowa_logspace::hotness::PAGE_HR_BYTES);

/// The 24-bit store generation of a page copy (out of place: breaks ties between copies of
/// one version, see `oop::recovery`).
#[must_use]
pub fn generation(p: &[u8]) -> u32 {
    u32::from(GEN_HI.u8(p)) << 16 | u32::from(GEN_LO.u16(p))
}

/// Store the 24-bit generation (the page must be resealed afterwards).
pub fn set_generation(p: &mut [u8], gen: u32) {
    let [lo0, lo1, hi, _] = gen.to_le_bytes();
    GEN_HI.put_u8(p, hi);
    GEN_LO.put_u16(p, u16::from_le_bytes([lo0, lo1]));
}
