//! Page delta (issue 31 item 1, docs/design.md section 14.10): the 64-byte chunks of a page
//! that changed since its previous durable version, stored as the payload of a packed-slot
//! entry with codec [`CODEC_DELTA`](super::zone::CODEC_DELTA). A page is rebuilt from its
//! base copy (a whole page) and its deltas applied oldest first; every delta names the whole
//! chain before it (base first), so recovery rebuilds a chain from its newest delta alone.
//!
//! Chunks 0 and 1 (the page header: crc, LSN, store generation, GDT write history, hotness
//! records, link) are in every delta: they change on every write. The rebuilt page therefore
//! carries the sealed page's own crc, which the reader checks over the whole rebuilt image.

use super::{Field, BLOCK, VAR};
use crate::error::DeltaError;
use crate::num::usize_of;

/// Payload checksum: crc32c of bytes [4, len).
pub const CRC: Field = Field::new(0, 4, "crc32c of bytes [4, len)");
/// Format version ([`VERSION`]).
pub const VER: Field = Field::new(4, 1, "version");
/// Chain elements named (base first, then the older deltas, oldest first).
pub const REFS: Field = Field::new(5, 1, "refs n");
/// Zero.
pub const ZERO: Field = Field::new(6, 2, "zero");
/// Changed chunks: bit i = bytes [64 i, 64 i + 64).
pub const MASK: Field = Field::new(8, 8, "chunk mask");
/// n refs, then the chunks in ascending order.
pub const BODY: Field = Field::new(16, VAR, "refs, then chunks");
/// The payload's fields.
pub const FIELDS: &[Field] = &[CRC, VER, REFS, ZERO, MASK, BODY];

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

const _: () = assert!(super::well_formed(FIELDS, BLOCK));
const _: () = assert!(super::well_formed(REF_FIELDS, BLOCK));

/// Bytes per chunk.
pub const CHUNK: usize = 64;
/// Chunks per page (one bit each in the mask).
pub const CHUNKS: usize = BLOCK / CHUNK;
const _: () = assert!(CHUNKS == 64, "the mask is a u64");
/// Chunks in every delta: the page header (bytes 0..104) and the first slot entries.
pub const HEADER_MASK: u64 = 0b11;
/// Payload header bytes.
pub const HDR: usize = 16;
/// Bytes per ref.
pub const REF: usize = 10;
/// Format version.
pub const VERSION: u8 = 1;
/// Most chain elements a delta may name.
pub const MAX_REFS: usize = 64;

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

/// A decoded delta, borrowing the payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta<'a> {
    /// Changed chunks.
    pub mask: u64,
    /// The chain before this delta: base first.
    pub refs: Vec<Ref>,
    /// The chunks, ascending, `CHUNK` bytes each.
    pub chunks: &'a [u8],
}

/// Payload bytes of a delta with `refs` refs and chunk mask `mask`.
#[must_use]
pub fn size(mask: u64, refs: usize) -> usize {
    HDR + refs * REF + usize_of(u64::from(mask.count_ones())) * CHUNK
}

/// Encode the delta of `page` (the new version) over the chain `refs` with the chunks of
/// `mask` (the header chunks are always added).
///
/// # Panics
/// If `refs` is empty or longer than [`MAX_REFS`], or `page` is not one block.
#[must_use]
pub fn encode(page: &[u8], mask: u64, refs: &[Ref]) -> Vec<u8> {
    assert_eq!(page.len(), BLOCK, "a delta of one page");
    assert!(
        !refs.is_empty() && refs.len() <= MAX_REFS,
        "a delta names 1..={MAX_REFS} chain elements, not {}",
        refs.len()
    );
    let mask = mask | HEADER_MASK;
    let mut out = vec![0u8; size(mask, refs.len())];
    VER.put_u8(&mut out, VERSION);
    REFS.put_u8(&mut out, u8::try_from(refs.len()).expect("refs <= 64"));
    MASK.put_u64(&mut out, mask);
    for (r, b) in refs
        .iter()
        .zip(out[HDR..HDR + refs.len() * REF].chunks_exact_mut(REF))
    {
        assert!(r.codec < 4 && r.gen <= super::zone::GEN_MASK, "ref {r:?}");
        R_REL.put_u32(b, r.rel);
        R_GEN
            .bytes_mut(b)
            .copy_from_slice(&r.gen.to_le_bytes()[..3]);
        R_FLAGS.put_u8(b, r.codec | (u8::from(r.whole) << 2));
        R_LEN.put_u16(b, r.len);
    }
    let mut at = HDR + refs.len() * REF;
    for c in (0..CHUNKS).filter(|c| mask & (1 << c) != 0) {
        out[at..at + CHUNK].copy_from_slice(&page[c * CHUNK..(c + 1) * CHUNK]);
        at += CHUNK;
    }
    assert_eq!(at, out.len(), "every chunk placed");
    let c = crc32c::crc32c(&out[4..]);
    CRC.put_u32(&mut out, c);
    out
}

/// Decode and check a delta payload.
///
/// # Errors
/// A typed [`DeltaError`] for every malformed input; never panics.
pub fn decode(b: &[u8]) -> Result<Delta<'_>, DeltaError> {
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
    let n = usize::from(REFS.u8(b));
    let mask = MASK.u64(b);
    if n == 0 || n > MAX_REFS || mask & HEADER_MASK != HEADER_MASK || ZERO.u16(b) != 0 {
        return Err(DeltaError::Header {
            refs: REFS.u8(b),
            mask,
        });
    }
    if size(mask, n) != b.len() {
        return Err(DeltaError::Length {
            expected: size(mask, n),
            found: b.len(),
        });
    }
    let refs = b[HDR..HDR + n * REF]
        .chunks_exact(REF)
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
        .collect();
    Ok(Delta {
        mask,
        refs,
        chunks: &b[HDR + n * REF..],
    })
}

impl Delta<'_> {
    /// Overwrite the changed chunks of `page` (the previous version) with this delta's.
    ///
    /// # Panics
    /// If `page` is not one block (the chunk count was checked by [`decode`]).
    pub fn apply(&self, page: &mut [u8]) {
        assert_eq!(page.len(), BLOCK, "a delta applies to one page");
        let mut at = 0;
        for c in (0..CHUNKS).filter(|c| self.mask & (1 << c) != 0) {
            page[c * CHUNK..(c + 1) * CHUNK].copy_from_slice(&self.chunks[at..at + CHUNK]);
            at += CHUNK;
        }
        assert_eq!(at, self.chunks.len(), "every chunk applied");
    }
}

/// Fingerprint of one chunk (the buffer pool keeps one per chunk of the last durable image,
/// `crate::buffer`): SipHash-1-3 with fixed keys, 64 bits. A collision would hide a change
/// from the delta; the rebuilt page then fails its crc on the next read (never silently).
#[must_use]
pub fn chunk_hash(c: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = std::hash::DefaultHasher::new();
    h.write(c);
    h.finish()
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

    #[test]
    fn round_trip_rebuilds_the_new_page() {
        let old = page(0);
        let mut new = old.clone();
        new[500..620].fill(7);
        new[16] = 9;
        let mask = (1 << 7) | (1 << 8) | (1 << 9);
        let d = encode(&new, mask, &[r(10, 3), r(11, 4)]);
        assert_eq!(d.len(), HDR + 2 * REF + 5 * CHUNK);
        let got = decode(&d).expect("decodes");
        assert_eq!(got.refs, vec![r(10, 3), r(11, 4)]);
        let mut rebuilt = old.clone();
        got.apply(&mut rebuilt);
        assert_eq!(rebuilt, new);
    }

    #[test]
    fn damage_is_a_typed_error() {
        let d = encode(&page(1), 1 << 40, &[r(1, 1)]);
        let mut bad = d.clone();
        bad[HDR + 3] ^= 1;
        assert!(matches!(decode(&bad), Err(DeltaError::Crc { .. })));
        assert!(matches!(
            decode(&d[..10]),
            Err(DeltaError::Short { len: 10 })
        ));
        let mut v = d.clone();
        VER.put_u8(&mut v, 2);
        let c = crc32c::crc32c(&v[4..]);
        CRC.put_u32(&mut v, c);
        assert_eq!(decode(&v), Err(DeltaError::Version { found: 2 }));
        let mut short = d[..d.len() - CHUNK].to_vec();
        let c = crc32c::crc32c(&short[4..]);
        CRC.put_u32(&mut short, c);
        assert!(matches!(decode(&short), Err(DeltaError::Length { .. })));
    }

    proptest! {
        /// Any set of changed chunks over any chain round-trips, and applying the delta to
        /// the old page gives the new page whenever the mask covers every changed chunk.
        #[test]
        fn encode_decode_apply(
            seed in any::<u8>(),
            edits in proptest::collection::vec((0usize..BLOCK, any::<u8>()), 0..40),
            refs in proptest::collection::vec((any::<u32>(), 0u32..(1 << 24)), 1..12),
        ) {
            let old = page(seed);
            let mut new = old.clone();
            let mut mask = 0u64;
            for (at, v) in edits {
                new[at] = v;
                mask |= 1 << (at / CHUNK);
            }
            let refs: Vec<Ref> = refs.into_iter().map(|(a, g)| r(a, g)).collect();
            let d = encode(&new, mask, &refs);
            prop_assert_eq!(d.len(), size(mask | HEADER_MASK, refs.len()));
            let got = decode(&d).expect("own encoding decodes");
            prop_assert_eq!(&got.refs, &refs);
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
        ) {
            let _ = decode(&bytes);
            let mut d = encode(&page(3), 1 << 20, &[r(5, 6), r(7, 8)]);
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
