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

/// The LSN a fuzzed WAL unit image is decoded at ([`decode_wal`], [`fix_wal_crc`]).
pub const WAL_LSN: u64 = 1 << 20;
/// The epoch salt a fuzzed WAL unit image is decoded with.
pub const WAL_SALT: u32 = 7;

/// The WAL decoders on one unit image (`r.len()` = the header's length when whole), as
/// the unit at [`WAL_LSN`] of epoch [`WAL_SALT`].
///
/// # Panics
/// If a decoder breaks its promise (a bug): an accepted unit decodes the same header twice,
/// holds at least one record, and a group of updates encodes back to its bytes.
#[must_use]
pub fn decode_wal(r: &[u8]) -> bool {
    if r.len() < wal::HEADER {
        return false;
    }
    let h = wal::Header::decode(r, WAL_LSN);
    let _ = wal::decode_entries(&r[wal::HEADER..], WAL_LSN + crate::num::u64_of(wal::HEADER));
    let ok = wal::decode_unit(r, WAL_LSN, WAL_SALT);
    if let Ok((h2, recs)) = &ok {
        assert_eq!(*h2, h, "the header decodes the same twice");
        assert!(!recs.is_empty(), "a unit holds a record");
        reencode_updates(r, h2, recs);
    }
    ok.is_ok()
}

/// A decoded group of Puts and Deletes encodes back to the same bytes (one encoding per
/// group: varints are the shortest, keys share exactly their common prefix, lengths follow
/// from the records').
fn reencode_updates(r: &[u8], h: &wal::Header, recs: &[(u64, wal::Record)]) {
    if h.tag != wal::TAG_GROUP || u64::from(h.durable_back) > h.lsn {
        return; // a pad; or saturated: the durable end re-encodes as the distance to LSN 0
    }
    let refs: Option<Vec<wal::RecordRef<'_>>> = recs
        .iter()
        .map(|(_, rec)| match rec {
            wal::Record::Put {
                pid,
                prev_lsn,
                key,
                value,
            } => Some(wal::RecordRef::Put {
                pid: *pid,
                prev_lsn: prev_lsn.unwrap_or(0),
                key,
                value,
            }),
            wal::Record::Delete { pid, prev_lsn, key } => Some(wal::RecordRef::Delete {
                pid: *pid,
                prev_lsn: prev_lsn.unwrap_or(0),
                key,
            }),
            _ => None,
        })
        .collect();
    let Some(refs) = refs else { return };
    let out = wal::encode_group(&refs, h.lsn, WAL_SALT, h.durable_before());
    assert!(
        out == r,
        "a decoded group of updates encodes back to its bytes"
    );
}

/// Decoders of variable-length input: WAL payloads of every tag, the metadata record,
/// compressed payloads of every codec.
#[must_use]
pub fn decode_bytes(p: &[u8]) -> usize {
    let mut accepted = usize::from(decode_wal(p));
    accepted += usize::from(wal::decode_entries(p, 1 << 20).is_ok());
    let prev = &p[..p.len().min(12)];
    for tag in 0..5u8 {
        accepted += usize::from(wal::Record::decode(tag, 1 << 20, p, &[]).is_ok());
        accepted += usize::from(wal::Record::decode(tag, 1 << 20, p, prev).is_ok());
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

/// Recompute a unit image's length, position check and checksum (as the unit at
/// [`WAL_LSN`] of epoch [`WAL_SALT`]), so that arbitrary bytes reach the body decoders.
pub fn fix_wal_crc(r: &mut [u8]) {
    if r.len() >= wal::HEADER {
        wal::LEN.put_u32(r, crate::num::u32_of(r.len()));
        wal::CHECK.put_u32(r, wal::check_word(WAL_LSN, WAL_SALT));
        let c = wal::record_crc(r, WAL_LSN, WAL_SALT);
        wal::CRC.put_u32(r, c);
    }
}
