//! TPC-C key encodings: ZLeanStore's "typefold" (`share_libs/typefold/typefold.cc`).
//!
//! - a 32-bit integer is stored as the big-endian bytes of `x ^ 0x8000_0000` (the sign bit
//!   flipped, so negative numbers sort before positive ones);
//! - a 64-bit integer likewise with bit 63;
//! - a varchar is its bytes followed by one 0 byte (TPC-C's strings are alphanumeric: no 0 byte
//!   inside, which [`KeyBuf::varchar`] asserts), so a shorter string sorts before its extensions
//!   and a prefix scan on `(.., "NAME\0")` matches exactly that name.
//!
//! Byte order of encoded keys equals the order of the tuples, so composite keys such as
//! `(w_id, d_id, o_id)` sort correctly in any ordered store. This differs on purpose from the
//! engine's general `keys.rs` (which escapes 0 bytes inside strings): TPC-C keys never need it,
//! and the sizes match the reference driver's.

/// Length of a folded 32-bit integer.
pub const INT_LEN: usize = 4;

/// Builder of one composite key (at most 64 bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyBuf {
    buf: Vec<u8>,
}

impl KeyBuf {
    /// An empty key.
    #[must_use]
    pub fn new() -> KeyBuf {
        KeyBuf {
            buf: Vec::with_capacity(24),
        }
    }

    /// Appends a folded 32-bit integer.
    #[must_use]
    pub fn int(mut self, x: i32) -> KeyBuf {
        self.buf.extend_from_slice(&fold_i32(x));
        self
    }

    /// Appends a folded 64-bit integer.
    #[must_use]
    pub fn long(mut self, x: i64) -> KeyBuf {
        self.buf.extend_from_slice(&fold_i64(x));
        self
    }

    /// Appends a varchar and its 0 terminator.
    ///
    /// # Panics
    /// If `s` contains a 0 byte (it would break the order; TPC-C strings never do).
    #[must_use]
    pub fn varchar(mut self, s: &[u8]) -> KeyBuf {
        assert!(!s.contains(&0), "a folded varchar holds no 0 byte");
        self.buf.extend_from_slice(s);
        self.buf.push(0);
        self
    }

    /// The key's bytes.
    #[must_use]
    pub fn finish(self) -> Vec<u8> {
        debug_assert!(self.buf.len() <= 64, "TPC-C keys are short");
        self.buf
    }
}

/// `x` folded: big-endian of `x ^ 0x8000_0000`.
#[must_use]
pub fn fold_i32(x: i32) -> [u8; 4] {
    (u32::from_ne_bytes(x.to_ne_bytes()) ^ 0x8000_0000).to_be_bytes()
}

/// The inverse of [`fold_i32`] on the first 4 bytes of `b` (`None` if shorter).
#[must_use]
pub fn unfold_i32(b: &[u8]) -> Option<i32> {
    let raw: [u8; 4] = b.get(..4)?.try_into().ok()?;
    Some(i32::from_ne_bytes(
        (u32::from_be_bytes(raw) ^ 0x8000_0000).to_ne_bytes(),
    ))
}

/// `x` folded: big-endian of `x ^ (1 << 63)`.
#[must_use]
pub fn fold_i64(x: i64) -> [u8; 8] {
    (u64::from_ne_bytes(x.to_ne_bytes()) ^ (1 << 63)).to_be_bytes()
}

/// The inverse of [`fold_i64`] on the first 8 bytes of `b` (`None` if shorter).
#[must_use]
pub fn unfold_i64(b: &[u8]) -> Option<i64> {
    let raw: [u8; 8] = b.get(..8)?.try_into().ok()?;
    Some(i64::from_ne_bytes(
        (u64::from_be_bytes(raw) ^ (1 << 63)).to_ne_bytes(),
    ))
}

/// The folded integer at field `index` (0-based, each field [`INT_LEN`] bytes) of a key made of
/// integers only, or `None` if the key is too short.
#[must_use]
pub fn int_at(key: &[u8], index: usize) -> Option<i32> {
    unfold_i32(key.get(index * INT_LEN..)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn folding_preserves_order(a: i32, b: i32, x: i64, y: i64) {
            prop_assert_eq!(a.cmp(&b), fold_i32(a).cmp(&fold_i32(b)));
            prop_assert_eq!(x.cmp(&y), fold_i64(x).cmp(&fold_i64(y)));
            prop_assert_eq!(unfold_i32(&fold_i32(a)), Some(a));
            prop_assert_eq!(unfold_i64(&fold_i64(x)), Some(x));
        }

        #[test]
        fn composite_keys_sort_like_tuples(
            a in (0i32..4, "[A-Z]{0,4}", 0i32..4),
            b in (0i32..4, "[A-Z]{0,4}", 0i32..4),
        ) {
            let key = |t: &(i32, String, i32)| {
                KeyBuf::new().int(t.0).varchar(t.1.as_bytes()).int(t.2).finish()
            };
            prop_assert_eq!(a.cmp(&b), key(&a).cmp(&key(&b)));
        }
    }

    #[test]
    fn the_reference_bytes() {
        assert_eq!(fold_i32(1), [0x80, 0, 0, 1]);
        assert_eq!(fold_i32(-1), [0x7F, 0xFF, 0xFF, 0xFF]);
        let k = KeyBuf::new().int(2).varchar(b"AB").finish();
        assert_eq!(k, vec![0x80, 0, 0, 2, b'A', b'B', 0]);
        assert_eq!(int_at(&KeyBuf::new().int(5).int(9).finish(), 1), Some(9));
    }
}
