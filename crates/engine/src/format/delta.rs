//! Page delta (issue 31 item 1, docs/design.md section 14.10): the byte ranges of a page
//! that changed since its previous durable version, stored as the payload of a packed-slot
//! entry with codec [`CODEC_DELTA`](super::zone::CODEC_DELTA). A page is rebuilt from its
//! base copy (a whole page) and its deltas applied oldest first; every delta names the whole
//! chain before it (base first), so recovery rebuilds a chain from its newest delta alone.
//!
//! Version 2 stores byte ranges (the buffer pool finds them exactly in the page header and
//! the first slots, at [`GRAIN`]-byte granularity in the rest) instead of version 1's fixed
//! 64-byte chunks, whose two header chunks alone were 128 bytes of every delta; the ranges'
//! bytes may be LZ4-compressed. The page's crc (bytes 0..4) is in every delta: the rebuilt
//! page carries the sealed page's own crc, which the reader checks over the whole image.

use super::{Field, BLOCK, VAR};
use crate::error::DeltaError;
use std::ops::Range;

/// Payload checksum: crc32c of bytes [4, len).
pub const CRC: Field = Field::new(0, 4, "crc32c of bytes [4, len)");
/// Format version ([`VERSION`]).
pub const VER: Field = Field::new(4, 1, "version");
/// Chain elements named (base first, then the older deltas, oldest first).
pub const REFS: Field = Field::new(5, 1, "refs n");
/// Flags: [`F_LZ4`].
pub const FLAGS: Field = Field::new(6, 1, "flags (bit 0: bytes lz4)");
/// Zero.
pub const ZERO: Field = Field::new(7, 1, "zero");
/// Byte ranges.
pub const RANGES: Field = Field::new(8, 2, "ranges m");
/// Stored length of the ranges' bytes (compressed or not).
pub const STORED: Field = Field::new(10, 2, "stored bytes length");
/// n refs, m ranges, then the bytes.
pub const BODY: Field = Field::new(12, VAR, "refs, ranges, bytes");
/// The payload's fields.
pub const FIELDS: &[Field] = &[CRC, VER, REFS, FLAGS, ZERO, RANGES, STORED, BODY];

/// A ref: block relative to the zone area.
pub const R_REL: Field = Field::new(0, 4, "block - zone area start");
/// A ref: store generation (24 bits).
pub const R_GEN: Field = Field::new(4, 3, "store generation");
/// A ref: codec (bits 0-1) and `whole` (bit 2: alone in its slot).
pub const R_FLAGS: Field = Field::new(7, 1, "codec | whole << 2");
/// A ref: payload length (0: raw slot).
pub const R_LEN: Field = Field::new(8, 2, "payload length");
/// A ref's fields.
pub const REF_FIELDS: &[Field] = &[R_REL, R_GEN, R_FLAGS, R_LEN];

/// A range: first byte in the page.
pub const G_OFF: Field = Field::new(0, 2, "offset in the page");
/// A range: length (> 0).
pub const G_LEN: Field = Field::new(2, 2, "length");
/// A range's fields.
pub const RANGE_FIELDS: &[Field] = &[G_OFF, G_LEN];

const _: () = assert!(super::well_formed(FIELDS, BLOCK));
const _: () = assert!(super::well_formed(REF_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(RANGE_FIELDS, BLOCK));

/// Payload header bytes.
pub const HDR: usize = super::fixed_size(FIELDS);
/// Bytes per ref.
pub const REF: usize = super::fixed_size(REF_FIELDS);
/// Bytes per range.
pub const RANGE: usize = super::fixed_size(RANGE_FIELDS);
/// Format version.
pub const VERSION: u8 = 2;
/// Flag: the ranges' bytes are one LZ4 block.
pub const F_LZ4: u8 = 1;
/// Most chain elements a delta may name.
pub const MAX_REFS: usize = 64;
/// The page crc: in every delta.
pub const FORCED: Range<usize> = 0..4;
/// Bytes the buffer pool compares exactly (it keeps a copy): the page header (crc, LSN,
/// store generation, GDT write history, hotness records, link) and the first slot entries.
pub const EXACT: usize = 128;
/// Granularity of change detection beyond [`EXACT`] (one fingerprint per grain).
pub const GRAIN: usize = 16;
/// Fingerprinted grains per page.
pub const GRAINS: usize = (BLOCK - EXACT) / GRAIN;
const _: () = assert!(EXACT % GRAIN == 0 && EXACT % 8 == 0 && FORCED.end <= EXACT);

/// Byte ranges of a page: ascending, disjoint, non-empty, inside the page.
pub type Spans = Vec<Range<usize>>;

/// One earlier element of a page's chain, as a delta names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ref {
    /// Block relative to the zone area.
    pub rel: u32,
    /// Store generation (24 bits).
    pub gen: u32,
    /// Codec (2 bits).
    pub codec: u8,
    /// Alone in its slot.
    pub whole: bool,
    /// Payload length (0: raw slot).
    pub len: u16,
}

/// A decoded delta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta {
    /// The chain before this delta: base first.
    pub refs: Vec<Ref>,
    /// The changed ranges.
    pub spans: Spans,
    /// Their bytes, in order (decompressed).
    pub bytes: Vec<u8>,
}

/// Normalize a change set: add [`FORCED`], sort, and join ranges that overlap or lie closer
/// than one range descriptor (a gap of fewer than [`RANGE`] bytes costs less to copy than to
/// describe).
///
/// # Panics
/// If a range is empty-reversed or ends beyond the page.
#[must_use]
pub fn normalize(mut spans: Spans) -> Spans {
    spans.push(FORCED);
    spans.retain(|r| !r.is_empty());
    assert!(
        spans.iter().all(|r| r.end <= BLOCK),
        "a range beyond the page: {spans:?}"
    );
    spans.sort_unstable_by_key(|r| r.start);
    let mut out: Spans = Vec::with_capacity(spans.len());
    for r in spans {
        match out.last_mut() {
            Some(l) if r.start <= l.end + RANGE => l.end = l.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The union of two normalized change sets, normalized.
#[must_use]
pub fn union(a: &[Range<usize>], b: &[Range<usize>]) -> Spans {
    normalize(a.iter().chain(b).cloned().collect())
}

/// Bytes the ranges cover.
#[must_use]
pub fn covered(spans: &[Range<usize>]) -> usize {
    spans.iter().map(ExactSizeIterator::len).sum()
}

/// The bytes of `page` at `spans`, in order.
#[must_use]
pub fn gather(page: &[u8], spans: &[Range<usize>]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(covered(spans));
    for r in spans {
        raw.extend_from_slice(&page[r.clone()]);
    }
    raw
}

/// Payload bytes of an uncompressed delta with `refs` refs over `spans`.
#[must_use]
pub fn size(spans: &[Range<usize>], refs: usize) -> usize {
    HDR + refs * REF + spans.len() * RANGE + covered(spans)
}

/// Is `spans` normalized and does it carry the page crc?
fn well_formed_spans(spans: &[Range<usize>]) -> bool {
    spans
        .first()
        .is_some_and(|f| f.start == 0 && f.end >= FORCED.end)
        && spans.iter().all(|r| !r.is_empty() && r.end <= BLOCK)
        && spans.windows(2).all(|w| w[0].end < w[1].start)
}

/// Encode the delta of `page` (the new version) over the chain `refs` with the bytes of
/// `spans` (normalized, [`normalize`]); `lz4`: compress the bytes when that is smaller.
///
/// # Panics
/// If `refs` is empty or longer than [`MAX_REFS`], `page` is not one block, or `spans` is
/// not normalized.
#[must_use]
pub fn encode(page: &[u8], spans: &[Range<usize>], refs: &[Ref], lz4: bool) -> Vec<u8> {
    assert_eq!(page.len(), BLOCK, "a delta of one page");
    assert!(
        !refs.is_empty() && refs.len() <= MAX_REFS,
        "a delta names 1..={MAX_REFS} chain elements, not {}",
        refs.len()
    );
    assert!(well_formed_spans(spans), "spans not normalized: {spans:?}");
    let raw = gather(page, spans);
    let packed = lz4
        .then(|| lz4_flex::block::compress(&raw))
        .filter(|c| c.len() < raw.len());
    let (flags, bytes) = match &packed {
        Some(c) => (F_LZ4, &c[..]),
        None => (0, &raw[..]),
    };
    let head = HDR + refs.len() * REF + spans.len() * RANGE;
    let mut out = vec![0u8; head + bytes.len()];
    VER.put_u8(&mut out, VERSION);
    REFS.put_u8(&mut out, u8::try_from(refs.len()).expect("refs <= 64"));
    FLAGS.put_u8(&mut out, flags);
    RANGES.put_u16(&mut out, u16::try_from(spans.len()).expect("ranges < 4096"));
    STORED.put_u16(&mut out, u16::try_from(bytes.len()).expect("bytes <= 4096"));
    let (rb, rest) = out[HDR..].split_at_mut(refs.len() * REF);
    for (r, b) in refs.iter().zip(rb.chunks_exact_mut(REF)) {
        assert!(r.codec < 4 && r.gen <= super::zone::GEN_MASK, "ref {r:?}");
        R_REL.put_u32(b, r.rel);
        R_GEN
            .bytes_mut(b)
            .copy_from_slice(&r.gen.to_le_bytes()[..3]);
        R_FLAGS.put_u8(b, r.codec | (u8::from(r.whole) << 2));
        R_LEN.put_u16(b, r.len);
    }
    for (r, b) in spans.iter().zip(rest.chunks_exact_mut(RANGE)) {
        G_OFF.put_u16(b, u16::try_from(r.start).expect("inside the page"));
        G_LEN.put_u16(b, u16::try_from(r.len()).expect("inside the page"));
    }
    out[head..].copy_from_slice(bytes);
    let c = crc32c::crc32c(&out[4..]);
    CRC.put_u32(&mut out, c);
    out
}

/// The refs of a checked payload.
fn decode_refs(b: &[u8]) -> Vec<Ref> {
    b.chunks_exact(REF)
        .map(|r| {
            let g = R_GEN.bytes(r);
            let flags = R_FLAGS.u8(r);
            Ref {
                rel: R_REL.u32(r),
                gen: u32::from_le_bytes([g[0], g[1], g[2], 0]),
                codec: flags & 3,
                whole: flags & 4 != 0,
                len: R_LEN.u16(r),
            }
        })
        .collect()
}

/// The ranges of a payload, checked: normalized and carrying the page crc.
fn decode_spans(b: &[u8]) -> Result<Spans, DeltaError> {
    let spans: Spans = b
        .chunks_exact(RANGE)
        .map(|g| {
            let off = usize::from(G_OFF.u16(g));
            off..off + usize::from(G_LEN.u16(g))
        })
        .collect();
    if !well_formed_spans(&spans) {
        let bad = spans
            .iter()
            .enumerate()
            .find(|(i, r)| {
                r.is_empty()
                    || r.end > BLOCK
                    || (*i == 0 && (r.start != 0 || r.end < FORCED.end))
                    || (*i > 0 && spans[i - 1].end >= r.start)
            })
            .map_or(0..0, |(_, r)| r.clone());
        return Err(DeltaError::Range {
            off: bad.start,
            len: bad.len(),
        });
    }
    Ok(spans)
}

/// Decode and check a delta payload.
///
/// # Errors
/// A typed [`DeltaError`] for every malformed input; never panics.
pub fn decode(b: &[u8]) -> Result<Delta, DeltaError> {
    if b.len() < HDR {
        return Err(DeltaError::Short { len: b.len() });
    }
    let (stored, computed) = (CRC.u32(b), crc32c::crc32c(&b[4..]));
    if stored != computed {
        return Err(DeltaError::Crc { stored, computed });
    }
    if VER.u8(b) != VERSION {
        return Err(DeltaError::Version { found: VER.u8(b) });
    }
    let (n, m, flags) = (
        usize::from(REFS.u8(b)),
        usize::from(RANGES.u16(b)),
        FLAGS.u8(b),
    );
    if n == 0 || n > MAX_REFS || m == 0 || flags & !F_LZ4 != 0 || ZERO.u8(b) != 0 {
        return Err(DeltaError::Header {
            refs: REFS.u8(b),
            ranges: RANGES.u16(b),
            flags,
        });
    }
    let head = HDR + n * REF + m * RANGE;
    let expected = head + usize::from(STORED.u16(b));
    if expected != b.len() {
        return Err(DeltaError::Length {
            expected,
            found: b.len(),
        });
    }
    let spans = decode_spans(&b[HDR + n * REF..head])?;
    let want = covered(&spans);
    let bytes = if flags & F_LZ4 != 0 {
        let mut out = vec![0u8; want];
        match lz4_flex::block::decompress_into(&b[head..], &mut out) {
            Ok(got) if got == want => out,
            _ => return Err(DeltaError::Lz4 { covered: want }),
        }
    } else if b.len() - head == want {
        b[head..].to_vec()
    } else {
        return Err(DeltaError::Length {
            expected: head + want,
            found: b.len(),
        });
    };
    Ok(Delta {
        refs: decode_refs(&b[HDR..HDR + n * REF]),
        spans,
        bytes,
    })
}

impl Delta {
    /// Overwrite the changed ranges of `page` (the previous version) with this delta's.
    ///
    /// # Panics
    /// If `page` is not one block (the ranges were checked by [`decode`]).
    pub fn apply(&self, page: &mut [u8]) {
        assert_eq!(page.len(), BLOCK, "a delta applies to one page");
        let mut at = 0;
        for r in &self.spans {
            page[r.clone()].copy_from_slice(&self.bytes[at..at + r.len()]);
            at += r.len();
        }
        assert_eq!(at, self.bytes.len(), "every byte applied");
    }
}

/// Fingerprint of one grain (the buffer pool keeps one per grain beyond [`EXACT`] of the
/// last durable image, `crate::buffer`): SipHash-1-3 with fixed keys, 64 bits. A collision
/// would hide a change from the delta; the rebuilt page then fails its crc on the next read
/// (never silently).
#[must_use]
pub fn grain_hash(c: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = std::hash::DefaultHasher::new();
    h.write(c);
    h.finish()
}

/// The change set of `page` against a previous image known by its first [`EXACT`] bytes
/// (`exact`) and one fingerprint per grain after them (`fp`, [`grain_hash`]): exact byte
/// ranges in the header, whole grains elsewhere; normalized.
///
/// # Panics
/// If the sizes are not one page, [`EXACT`] bytes and [`GRAINS`] fingerprints.
#[must_use]
pub fn changes(page: &[u8], exact: &[u8], fp: impl Iterator<Item = u64>) -> Spans {
    assert_eq!(page.len(), BLOCK, "a page");
    assert_eq!(exact.len(), EXACT, "the exact prefix");
    let mut spans: Spans = Vec::new();
    let mut i = 0;
    while i < EXACT {
        if page[i] == exact[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < EXACT && page[i] != exact[i] {
            i += 1;
        }
        spans.push(start..i);
    }
    let mut n = 0;
    for (g, h) in page[EXACT..].chunks_exact(GRAIN).zip(fp) {
        if grain_hash(g) != h {
            let at = EXACT + n * GRAIN;
            spans.push(at..at + GRAIN);
        }
        n += 1;
    }
    assert_eq!(n, GRAINS, "one fingerprint per grain");
    normalize(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn page(seed: u8) -> Vec<u8> {
        (0..BLOCK)
            .map(|i| u8::try_from(i % 251).expect("< 251") ^ seed)
            .collect()
    }

    fn r(rel: u32, gen: u32) -> Ref {
        Ref {
            rel,
            gen,
            codec: 1,
            whole: rel % 2 == 0,
            len: u16::try_from(rel % 4000).expect("< 4000"),
        }
    }

    /// The change set of `new` against `old` as the buffer pool computes it.
    fn diff(old: &[u8], new: &[u8]) -> Spans {
        changes(
            new,
            &old[..EXACT],
            old[EXACT..].chunks_exact(GRAIN).map(grain_hash),
        )
    }

    /// A 116-byte value overwritten in place and a new LSN: the delta carries the header
    /// fields that changed and the value's grains, not 64-byte chunks (version 1: 16 + 10 +
    /// 5 x 64 = 346 bytes for the same change).
    #[test]
    fn a_record_update_costs_its_bytes_not_chunks() {
        let old = page(0);
        let mut new = old.clone();
        new[500..616].fill(7);
        new[16..24].copy_from_slice(&9u64.to_le_bytes());
        new[0..4].copy_from_slice(&[1, 2, 3, 4]);
        let spans = diff(&old, &new);
        assert_eq!(spans[0], 0..4, "the crc");
        assert!(spans.contains(&(16..24)), "the LSN exactly: {spans:?}");
        assert!(covered(&spans) <= 4 + 8 + 116 + 2 * GRAIN, "{spans:?}");
        let d = encode(&new, &spans, &[r(10, 3)], false);
        assert!(d.len() < 200, "{} bytes", d.len());
        let got = decode(&d).expect("decodes");
        assert_eq!(got.refs, vec![r(10, 3)]);
        let mut rebuilt = old.clone();
        got.apply(&mut rebuilt);
        assert_eq!(rebuilt, new);
    }

    /// Compressible bytes are stored LZ4-compressed when that is smaller.
    #[test]
    fn compressible_bytes_are_compressed() {
        let old = page(0);
        let mut new = old.clone();
        new[1000..2000].fill(0x55);
        let spans = diff(&old, &new);
        let plain = encode(&new, &spans, &[r(1, 1)], false);
        let packed = encode(&new, &spans, &[r(1, 1)], true);
        assert_eq!(FLAGS.u8(&packed), F_LZ4);
        assert!(
            packed.len() * 4 < plain.len(),
            "{} vs {}",
            packed.len(),
            plain.len()
        );
        let mut a = old.clone();
        decode(&packed).expect("decodes").apply(&mut a);
        assert_eq!(a, new);
    }

    #[test]
    fn normalize_joins_close_ranges_and_adds_the_crc() {
        assert_eq!(
            normalize(vec![10..12, 14..20, 30..31]),
            vec![0..4, 10..20, 30..31]
        );
        assert_eq!(normalize(vec![2..8, 5..6]), vec![0..8]);
        assert_eq!(
            union(&[0..4, 100..120], &[0..4, 110..140]),
            vec![0..4, 100..140]
        );
    }

    #[test]
    fn damage_is_a_typed_error() {
        let mut p = page(1);
        p[2000..2040].fill(3);
        let d = encode(&p, &[0..4, 2000..2040], &[r(1, 1)], false);
        let mut bad = d.clone();
        bad[HDR + 3] ^= 1;
        assert!(matches!(decode(&bad), Err(DeltaError::Crc { .. })));
        assert!(matches!(
            decode(&d[..10]),
            Err(DeltaError::Short { len: 10 })
        ));
        let refix = |mut v: Vec<u8>| {
            let c = crc32c::crc32c(&v[4..]);
            CRC.put_u32(&mut v, c);
            v
        };
        let mut v = d.clone();
        VER.put_u8(&mut v, 1);
        assert_eq!(decode(&refix(v)), Err(DeltaError::Version { found: 1 }));
        let short = refix(d[..d.len() - 1].to_vec());
        assert!(matches!(decode(&short), Err(DeltaError::Length { .. })));
        // Ranges out of order.
        let mut v = d.clone();
        G_OFF.put_u16(&mut v[HDR + REF + RANGE..], 2);
        assert!(matches!(decode(&refix(v)), Err(DeltaError::Range { .. })));
        // A flagged-compressed body that is not LZ4.
        let mut v = d;
        FLAGS.put_u8(&mut v, F_LZ4);
        assert!(matches!(decode(&refix(v)), Err(DeltaError::Lz4 { .. })));
    }

    proptest! {
        /// Any edit of a page over any chain round-trips, and applying the delta of the
        /// buffer pool's change set to the old page gives the new page.
        #[test]
        fn encode_decode_apply(
            seed in any::<u8>(),
            edits in proptest::collection::vec((0usize..BLOCK, any::<u8>()), 0..40),
            refs in proptest::collection::vec((any::<u32>(), 0u32..(1 << 24)), 1..12),
            lz4 in any::<bool>(),
        ) {
            let old = page(seed);
            let mut new = old.clone();
            for (at, v) in edits {
                new[at] = v;
            }
            let refs: Vec<Ref> = refs.into_iter().map(|(a, g)| r(a, g)).collect();
            let spans = diff(&old, &new);
            let d = encode(&new, &spans, &refs, lz4);
            prop_assert!(d.len() <= size(&spans, refs.len()));
            let got = decode(&d).expect("own encoding decodes");
            prop_assert_eq!(&got.refs, &refs);
            prop_assert_eq!(&got.spans, &spans);
            let mut rebuilt = old.clone();
            got.apply(&mut rebuilt);
            prop_assert_eq!(rebuilt, new);
        }

        /// The decoder never panics: random bytes and corrupted deltas give typed errors
        /// (or, for an intact delta, the delta).
        #[test]
        fn decoder_fuzz(
            bytes in proptest::collection::vec(any::<u8>(), 0..600),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
            cut in any::<usize>(),
            fix_crc in any::<bool>(),
            lz4 in any::<bool>(),
        ) {
            let _ = decode(&bytes);
            let mut p = page(3);
            p[300..400].fill(9);
            let mut d = encode(&p, &[0..4, 300..400, 700..720], &[r(5, 6), r(7, 8)], lz4);
            for (at, x) in flips {
                let i = at % d.len();
                d[i] ^= x;
            }
            d.truncate(cut % (d.len() + 1));
            if fix_crc && d.len() >= 4 {
                let c = crc32c::crc32c(&d[4..]);
                CRC.put_u32(&mut d, c);
            }
            if let Ok(got) = decode(&d) {
                let mut p = page(0);
                got.apply(&mut p);
            }
        }
    }
}
