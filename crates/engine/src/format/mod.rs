//! On-disk formats. Each format has one module with its fields (offset, size) as constants,
//! checked at compile time (in order, contiguous, inside the block), and one typed encode and
//! decode. Every integer is little endian unless its field says otherwise. `FORMATS` lists
//! the field tables; a test compares them with the byte tables in docs/design.md.

pub mod delta;
#[doc(hidden)]
pub mod fuzzing;
pub mod mark;
pub mod meta;
pub mod page;
pub mod structop;
pub mod superblock;
pub mod wal;
pub mod zone;

/// Block = page = 4096 bytes.
pub const BLOCK: usize = 4096;
/// Size marker of a variable-length field (the last field of a format).
pub const VAR: usize = 0;

/// One field of an on-disk format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Byte offset.
    pub offset: usize,
    /// Size in bytes ([`VAR`]: variable, up to the end).
    pub size: usize,
    /// Name (as in docs/design.md, informally).
    pub name: &'static str,
}

impl Field {
    /// A field at `offset` of `size` bytes.
    #[must_use]
    pub const fn new(offset: usize, size: usize, name: &'static str) -> Field {
        Field { offset, size, name }
    }

    /// First byte after the field.
    #[must_use]
    pub const fn end(&self) -> usize {
        self.offset + self.size
    }

    /// The field's bytes.
    #[must_use]
    pub fn bytes<'a>(&self, b: &'a [u8]) -> &'a [u8] {
        &b[self.offset..self.end()]
    }

    /// The field's bytes, writable.
    pub fn bytes_mut<'a>(&self, b: &'a mut [u8]) -> &'a mut [u8] {
        &mut b[self.offset..self.end()]
    }

    /// Read a 1-byte field.
    #[must_use]
    pub fn u8(&self, b: &[u8]) -> u8 {
        debug_assert_eq!(self.size, 1, "{}", self.name);
        b[self.offset]
    }

    /// Read a 2-byte little-endian field.
    #[must_use]
    pub fn u16(&self, b: &[u8]) -> u16 {
        debug_assert_eq!(self.size, 2, "{}", self.name);
        rd_u16(b, self.offset)
    }

    /// Read a 4-byte little-endian field.
    #[must_use]
    pub fn u32(&self, b: &[u8]) -> u32 {
        debug_assert_eq!(self.size, 4, "{}", self.name);
        rd_u32(b, self.offset)
    }

    /// Read an 8-byte little-endian field.
    #[must_use]
    pub fn u64(&self, b: &[u8]) -> u64 {
        debug_assert_eq!(self.size, 8, "{}", self.name);
        rd_u64(b, self.offset)
    }

    /// Write a 1-byte field.
    pub fn put_u8(&self, b: &mut [u8], v: u8) {
        debug_assert_eq!(self.size, 1, "{}", self.name);
        b[self.offset] = v;
    }

    /// Write a 2-byte little-endian field.
    pub fn put_u16(&self, b: &mut [u8], v: u16) {
        debug_assert_eq!(self.size, 2, "{}", self.name);
        wr_u16(b, self.offset, v);
    }

    /// Write a 4-byte little-endian field.
    pub fn put_u32(&self, b: &mut [u8], v: u32) {
        debug_assert_eq!(self.size, 4, "{}", self.name);
        wr_u32(b, self.offset, v);
    }

    /// Write an 8-byte little-endian field.
    pub fn put_u64(&self, b: &mut [u8], v: u64) {
        debug_assert_eq!(self.size, 8, "{}", self.name);
        wr_u64(b, self.offset, v);
    }
}

/// True if `fields` start at 0, are contiguous and in order, only the last may be [`VAR`],
/// and the fixed ones end at or before `total`.
#[must_use]
pub const fn well_formed(fields: &[Field], total: usize) -> bool {
    let mut i = 0;
    let mut end = 0;
    while i < fields.len() {
        let f = fields[i];
        if f.offset != end || (f.size == VAR && i + 1 != fields.len()) {
            return false;
        }
        end = f.offset + f.size;
        i += 1;
    }
    end <= total
}

/// Fixed size of a format (end of its last fixed field).
#[must_use]
pub const fn fixed_size(fields: &[Field]) -> usize {
    match fields.last() {
        Some(f) => f.offset + f.size,
        None => 0,
    }
}

/// A named field table, for the design.md comparison.
#[derive(Debug, Clone, Copy)]
pub struct Format {
    /// Name used in the `<!-- format: NAME -->` marker in docs/design.md.
    pub name: &'static str,
    /// The fields.
    pub fields: &'static [Field],
}

/// Every on-disk format with a byte table in docs/design.md.
pub const FORMATS: &[Format] = &[
    Format {
        name: "superblock",
        fields: superblock::FIELDS,
    },
    Format {
        name: "page",
        fields: page::FIELDS,
    },
    Format {
        name: "wal-record",
        fields: wal::HEADER_FIELDS,
    },
    Format {
        name: "flush-mark",
        fields: mark::FIELDS,
    },
    Format {
        name: "wal-group",
        fields: wal::GROUP_FIELDS,
    },
    Format {
        name: "wal-put",
        fields: wal::PUT_FIELDS,
    },
    Format {
        name: "wal-delete",
        fields: wal::DELETE_FIELDS,
    },
    Format {
        name: "wal-smo",
        fields: wal::SMO_FIELDS,
    },
    Format {
        name: "wal-txn-commit",
        fields: wal::TXN_COMMIT_FIELDS,
    },
    Format {
        name: "wal-txn-done",
        fields: wal::TXN_DONE_FIELDS,
    },
    Format {
        name: "wal-txn-write",
        fields: wal::TXN_WRITE_FIELDS,
    },
    Format {
        name: "wal-page-versions",
        fields: wal::PAGE_VERSIONS_FIELDS,
    },
    Format {
        name: "wal-struct",
        fields: structop::FIELDS,
    },
    Format {
        name: "wal-struct-op",
        fields: structop::OP_FIELDS,
    },
    Format {
        name: "zone-header",
        fields: zone::HEADER_FIELDS,
    },
    Format {
        name: "packed-slot",
        fields: zone::SLOT_FIELDS,
    },
    Format {
        name: "slot-entry",
        fields: zone::ENTRY_FIELDS,
    },
    Format {
        name: "page-delta",
        fields: delta::FIELDS,
    },
    Format {
        name: "delta-ref",
        fields: delta::REF_FIELDS,
    },
    Format {
        name: "delta-range",
        fields: delta::RANGE_FIELDS,
    },
    Format {
        name: "oop-meta",
        fields: meta::FIELDS,
    },
    Format {
        name: "snapshot-entry",
        fields: meta::SNAP_FIELDS,
    },
];

/// Little-endian u16 at `at`.
#[inline]
#[must_use]
pub fn rd_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// Little-endian u32 at `at`.
#[inline]
#[must_use]
pub fn rd_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

/// Little-endian u64 at `at`.
#[inline]
#[must_use]
pub fn rd_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Store a little-endian u16 at `at`.
#[inline]
pub fn wr_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

/// Store a little-endian u32 at `at`.
#[inline]
pub fn wr_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Store a little-endian u64 at `at`.
#[inline]
pub fn wr_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Bytes of `v` as an unsigned LEB128 varint (7 bits per byte, low groups first).
#[must_use]
pub const fn varint_len(v: u64) -> usize {
    let bits = 64 - v.leading_zeros() as usize;
    if bits == 0 {
        1
    } else {
        bits.div_ceil(7)
    }
}

/// Store `v` as a varint at `at`; returns the offset after it.
pub fn wr_varint(b: &mut [u8], at: usize, v: u64) -> usize {
    let n = varint_len(v);
    let mut x = v;
    for (i, byte) in b[at..at + n].iter_mut().enumerate() {
        let low = (x & 0x7f).to_le_bytes()[0];
        x >>= 7;
        *byte = if i + 1 < n { low | 0x80 } else { low };
    }
    debug_assert_eq!(x, 0, "varint of {v} cut short");
    at + n
}

/// The varint at `at` and the offset after it; None if it runs past `b`, overflows a u64 or
/// is not the shortest encoding (one value has one encoding, so a decoded record encodes
/// back to the same bytes).
#[must_use]
pub fn rd_varint(b: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &byte) in b.get(at..)?.iter().take(10).enumerate() {
        let group = u64::from(byte & 0x7f);
        let shift = 7 * u32::try_from(i).ok()?;
        if i == 9 && group > 1 {
            return None;
        }
        v |= group << shift;
        if byte & 0x80 == 0 {
            return (i == 0 || byte != 0).then_some((v, at + i + 1));
        }
    }
    None
}

/// crc32c of `b[4..]` (every checksummed block format keeps its crc in bytes 0..4).
#[inline]
#[must_use]
pub fn block_crc(b: &[u8]) -> u32 {
    crc32c::crc32c(&b[4..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_refuse_bad_encodings() {
        let mut b = [0u8; 12];
        for v in [0, 1, 127, 128, 300, 1 << 35, u64::MAX] {
            let end = wr_varint(&mut b, 1, v);
            assert_eq!(end, 1 + varint_len(v), "{v}");
            assert_eq!(rd_varint(&b, 1), Some((v, end)), "{v}");
            assert_eq!(rd_varint(&b[..end - 1], 1), None, "{v} cut short");
        }
        assert_eq!(varint_len(u64::MAX), 10);
        // Not the shortest encoding, past 64 bits, runs off the end.
        assert_eq!(rd_varint(&[0x80, 0x00], 0), None);
        assert_eq!(
            rd_varint(&[0xff; 9].iter().copied().chain([2]).collect::<Vec<_>>(), 0),
            None
        );
        assert_eq!(rd_varint(&[0x80; 11], 0), None);
        assert_eq!(rd_varint(&[], 0), None);
    }

    #[test]
    fn every_format_is_well_formed() {
        for f in FORMATS {
            assert!(well_formed(f.fields, BLOCK), "{}", f.name);
        }
        let gap = [Field::new(0, 4, "a"), Field::new(5, 1, "b")];
        assert!(!well_formed(&gap, BLOCK));
        let var_first = [Field::new(0, VAR, "a"), Field::new(0, 1, "b")];
        assert!(!well_formed(&var_first, BLOCK));
    }

    #[test]
    fn little_endian_round_trip() {
        let mut b = [0u8; 16];
        wr_u64(&mut b, 0, 0x0102_0304_0506_0708);
        assert_eq!(b[0], 0x08);
        assert_eq!(rd_u64(&b, 0), 0x0102_0304_0506_0708);
        wr_u32(&mut b, 8, 0xA1B2_C3D4);
        assert_eq!((b[8], rd_u32(&b, 8)), (0xD4, 0xA1B2_C3D4));
        wr_u16(&mut b, 12, 0xBEEF);
        assert_eq!((b[12], rd_u16(&b, 12)), (0xEF, 0xBEEF));
    }
}
