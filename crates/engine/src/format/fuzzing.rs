//! Fuzzing entry points (not an API): every on-disk decoder run on untrusted bytes, shared
//! by the bounded proptests (`tests/decoder_fuzz.rs`) and the cargo-fuzz targets (`fuzz/`).
//! Each returns how many decoders accepted the input; none may panic on any input, and each
//! checks what a decoder that accepted promises.

use super::{mark, meta, superblock, wal, zone, BLOCK};
use crate::page;

/// A little-endian integer at `at` (the input is long enough: callers pass whole blocks).
fn le(b: &[u8], at: usize, n: usize) -> u64 {
    b[at..at + n]
        .iter()
        .rev()
        .fold(0u64, |x, &y| (x << 8) | u64::from(y))
}

/// Every block decoder on one 4096-byte block: superblock and `identify`, zone header,
/// packed slot (of the incarnation the block claims) and its payloads, raw slot, page,
/// the out-of-place metadata record at the superblock's offset, snapshot entries, a flush
/// mark read from each slot.
///
/// # Panics
/// If `b` is not one block, or a decoder breaks its promise (a bug).
#[must_use]
pub fn decode_block(b: &[u8]) -> usize {
    assert_eq!(b.len(), BLOCK, "one block");
    let mut accepted = usize::from(superblock::Superblock::decode(b).is_ok());
    accepted += usize::from(superblock::identify(b).is_some());
    let db = u32::try_from(le(b, 8, 4)).unwrap_or(0);
    let z = u32::try_from(le(b, 12, 4)).unwrap_or(0);
    let inc = zone::Incarnation {
        db_id: db,
        zone: z,
        seq: le(b, 16, 8),
    };
    accepted += usize::from(zone::ZoneHeader::decode(b, db, z).is_some());
    if let Some(entries) = zone::parse_packed(b, inc) {
        accepted += 1;
        for e in entries {
            assert!(e.in_bounds(1), "parse_packed checks the bounds");
            let (o, l) = (usize::from(e.off), usize::from(e.len));
            let mut dst = vec![0u8; BLOCK];
            if zone::decompress(e.codec, &b[o..o + l], &mut dst).is_ok() {
                accepted += decode_page(&dst);
            }
        }
    }
    let mut raw = b.to_vec();
    if zone::open_raw(&mut raw, inc) {
        accepted += 1 + decode_page(&raw);
    }
    accepted += decode_page(b);
    let m = &b[superblock::META.offset..superblock::META.offset + meta::LEN];
    accepted += usize::from(meta::MetaRecord::decode(m).is_ok());
    for e in b.chunks_exact(meta::SNAP_ENTRY).take(8) {
        let _ = meta::SnapEntry::decode(e);
    }
    for slot in 0..mark::BLOCKS {
        if let Ok(Some(m)) = mark::Mark::decode(b, slot) {
            assert_eq!(m.slot(), slot, "a mark is accepted only from its own slot");
            assert_eq!(m.encode(), b, "an accepted mark is exactly its encoding");
            accepted += 1;
        }
    }
    accepted
}

/// A page: validation, then everything the engine reads from a valid page.
///
/// # Panics
/// If `b` is not one block, or a page that validated breaks the layout promise.
#[must_use]
pub fn decode_page(b: &[u8]) -> usize {
    assert_eq!(b.len(), BLOCK, "one block");
    let pid = le(b, 8, 8);
    if page::validate(b, pid).is_err() {
        return 0;
    }
    let _ = (page::lsn(b), page::link(b), page::history(b));
    let n = page::nkeys(b);
    if page::kind(b) == page::KIND_LEAF {
        let e = page::leaf_entries(b);
        assert_eq!(e.len(), n, "a valid leaf has nkeys entries");
        for (i, (k, v)) in e.iter().enumerate().take(4) {
            // Validation does not check key order (only a bug could break it, never
            // damage that passes the checksum): search must merely not panic.
            let _ = page::search(b, k);
            assert_eq!(page::leaf_value(b, i), &v[..], "entries and values agree");
        }
    } else {
        let e = page::inner_entries(b);
        assert!(e.len() <= n + 1, "inner entries bounded by nkeys");
        let _ = page::inner_find(b, b"nowa");
    }
    1
}

/// The LSN a fuzzed WAL record image is decoded at ([`decode_wal`], [`fix_wal_crc`]).
pub const WAL_LSN: u64 = 1 << 20;
/// The epoch salt a fuzzed WAL record image is decoded with.
pub const WAL_SALT: u32 = 7;

/// The WAL decoders on one record image (`r.len()` = the header's length when whole), as
/// the record at [`WAL_LSN`] of epoch [`WAL_SALT`].
#[must_use]
pub fn decode_wal(r: &[u8]) -> bool {
    if r.len() < wal::HEADER {
        return false;
    }
    let h = wal::Header::decode(r, WAL_LSN);
    let _ = wal::Record::decode(h.tag, h.lsn, &r[wal::HEADER..]);
    let ok = wal::decode_record(r, WAL_LSN, WAL_SALT);
    if let Ok((h2, rec)) = &ok {
        assert_eq!(*h2, h, "the header decodes the same twice");
        reencode_update(r, h2, rec);
    }
    ok.is_ok()
}

/// A decoded Put or Delete encodes back to the same bytes (one encoding per record: varints
/// are the shortest, lengths follow from the record's).
fn reencode_update(r: &[u8], h: &wal::Header, rec: &wal::Record) {
    let re = match rec {
        wal::Record::Put {
            pid,
            prev_lsn,
            key,
            value,
        } => wal::RecordRef::Put {
            pid: *pid,
            prev_lsn: prev_lsn.unwrap_or(0),
            key,
            value,
        },
        wal::Record::Delete { pid, prev_lsn, key } => wal::RecordRef::Delete {
            pid: *pid,
            prev_lsn: prev_lsn.unwrap_or(0),
            key,
        },
        _ => return,
    };
    if u64::from(h.durable_back) > h.lsn {
        return; // saturated: the durable end re-encodes as the distance to LSN 0
    }
    let mut out = vec![0u8; re.encoded_len_at(h.lsn)];
    re.encode(&mut out, h.lsn, WAL_SALT, h.durable_before());
    assert!(
        out == r,
        "a decoded update record encodes back to its bytes"
    );
}

/// Decoders of variable-length input: WAL payloads of every tag, the metadata record,
/// compressed payloads of every codec.
#[must_use]
pub fn decode_bytes(p: &[u8]) -> usize {
    let mut accepted = usize::from(decode_wal(p));
    for tag in 0..5u8 {
        accepted += usize::from(wal::Record::decode(tag, 1 << 20, p).is_ok());
    }
    accepted += usize::from(meta::MetaRecord::decode(p).is_ok());
    let mut dst = vec![0u8; BLOCK];
    for codec in 0..4u8 {
        if zone::decompress(codec, p, &mut dst).is_ok() {
            accepted += 1 + decode_page(&dst);
        }
    }
    accepted
}

/// Recompute a record image's length, position check and checksum (as the record at
/// [`WAL_LSN`] of epoch [`WAL_SALT`]), so that arbitrary bytes reach the payload decoder.
pub fn fix_wal_crc(r: &mut [u8]) {
    if r.len() >= wal::HEADER {
        wal::LEN.put_u32(r, crate::num::u32_of(r.len()));
        wal::CHECK.put_u32(r, wal::check_word(WAL_LSN, WAL_SALT));
        let c = wal::record_crc(r, WAL_LSN, WAL_SALT);
        wal::CRC.put_u32(r, c);
    }
}
