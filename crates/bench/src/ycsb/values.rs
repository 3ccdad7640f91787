//! Keys and values of the YCSB driver: record ids as big-endian keys, pattern (compressible)
//! or random values carrying their version, and the key-popularity generators.

use super::{ValueKind, YcsbError};
use nowa_workload::{Uniform, Zipfian};

/// Key of record `id`: 8 bytes, big-endian so the B+-tree order is the numeric order.
#[must_use]
pub fn key_of(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

/// The version a pattern value carries (see [`make_value`]); None if the value is too short.
#[must_use]
pub fn pattern_version(value: &[u8], id: u64) -> Option<u64> {
    let tag = u64::from_le_bytes(value.get(..8)?.try_into().ok()?);
    Some((tag ^ id).rotate_right(32))
}

/// Fill `buf` with a value for record `id`, version `ver`.
pub fn make_value(buf: &mut [u8], kind: ValueKind, id: u64, ver: u64, rng: &mut u64) {
    match kind {
        ValueKind::Random => {
            for chunk in buf.chunks_mut(8) {
                *rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = *rng;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                let b = (z ^ (z >> 31)).to_le_bytes();
                chunk.copy_from_slice(&b[..chunk.len()]);
            }
        }
        ValueKind::Pattern => {
            const PAT: &[u8] = b"nowa-ycsb-value-";
            for (i, b) in buf.iter_mut().enumerate() {
                *b = PAT[i % PAT.len()];
            }
            let tag = (id ^ ver.rotate_left(32)).to_le_bytes();
            let n = buf.len().min(8);
            buf[..n].copy_from_slice(&tag[..n]);
            debug_assert!(n < 8 || pattern_version(buf, id) == Some(ver));
        }
    }
}

/// Which record an operation touches.
pub(crate) enum KeyGen {
    Uniform(Uniform),
    Zipf(Zipfian),
}

impl KeyGen {
    pub(crate) fn new(records: u64, theta: f64, seed: u64) -> Result<KeyGen, YcsbError> {
        Ok(if theta == 0.0 {
            KeyGen::Uniform(Uniform::new(records, seed)?)
        } else {
            KeyGen::Zipf(Zipfian::new(records, theta, seed)?)
        })
    }

    pub(crate) fn next(&mut self) -> u64 {
        match self {
            KeyGen::Uniform(u) => u.next_write(),
            KeyGen::Zipf(z) => z.next_write(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_values_carry_their_version() {
        let mut buf = vec![0u8; 120];
        let mut rng = 1;
        for (id, ver) in [(0u64, 0u64), (7, 1), (u64::MAX, 12345)] {
            make_value(&mut buf, ValueKind::Pattern, id, ver, &mut rng);
            assert_eq!(pattern_version(&buf, id), Some(ver));
        }
        assert_eq!(pattern_version(&buf[..4], 0), None);
    }

    #[test]
    fn keys_stay_in_range() {
        for theta in [0.0, 0.8] {
            let mut g = KeyGen::new(1000, theta, 5).unwrap();
            assert!((0..10_000).all(|_| g.next() < 1000));
        }
    }
}
