//! Order-preserving key encodings: the byte order of encoded keys equals the order of the
//! values, so composite keys (e.g. TPC-C `(w_id, d_id, o_id)`) sort correctly in the B+-tree.

/// Builder for composite keys: `KeyBuilder::new().u32(w).u32(d).u64(o).finish()`.
#[derive(Default, Debug, Clone)]
pub struct KeyBuilder {
    buf: Vec<u8>,
}

impl KeyBuilder {
    /// An empty key.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
    /// Append a byte.
    #[must_use]
    pub fn u8(mut self, v: u8) -> Self {
        self.buf.push(v);
        self
    }
    /// Append a u16 (big endian).
    #[must_use]
    pub fn u16(mut self, v: u16) -> Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Append a u32 (big endian).
    #[must_use]
    pub fn u32(mut self, v: u32) -> Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Append a u64 (big endian).
    #[must_use]
    pub fn u64(mut self, v: u64) -> Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Append an i32 (sign bit flipped, big endian: negative before positive).
    #[must_use]
    pub fn i32(self, v: i32) -> Self {
        self.u32(u32::from_be_bytes(v.to_be_bytes()) ^ 0x8000_0000)
    }
    /// Append an i64 (sign bit flipped, big endian).
    #[must_use]
    pub fn i64(self, v: i64) -> Self {
        self.u64(u64::from_be_bytes(v.to_be_bytes()) ^ 0x8000_0000_0000_0000)
    }
    /// Variable-length byte string inside a composite key: 0x00 is escaped as 0x00 0xFF and
    /// the string ends with 0x00 0x00, so a shorter string sorts before its extensions.
    #[must_use]
    pub fn bytes(mut self, v: &[u8]) -> Self {
        encode_bytes(&mut self.buf, v);
        self
    }
    /// Raw suffix (last component only; no terminator).
    #[must_use]
    pub fn raw(mut self, v: &[u8]) -> Self {
        self.buf.extend_from_slice(v);
        self
    }
    /// The encoded key.
    #[must_use]
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// Order-preserving u64.
#[must_use]
pub fn encode_u64(v: u64) -> [u8; 8] {
    v.to_be_bytes()
}
/// Inverse of [`encode_u64`] (None if shorter than 8 bytes).
#[must_use]
pub fn decode_u64(b: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(..8)?.try_into().ok()?))
}
/// Order-preserving u32.
#[must_use]
pub fn encode_u32(v: u32) -> [u8; 4] {
    v.to_be_bytes()
}
/// Inverse of [`encode_u32`].
#[must_use]
pub fn decode_u32(b: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(..4)?.try_into().ok()?))
}
/// Order-preserving i64 (sign bit flipped).
#[must_use]
pub fn encode_i64(v: i64) -> [u8; 8] {
    (u64::from_be_bytes(v.to_be_bytes()) ^ (1 << 63)).to_be_bytes()
}
/// Inverse of [`encode_i64`].
#[must_use]
pub fn decode_i64(b: &[u8]) -> Option<i64> {
    decode_u64(b).map(|u| i64::from_be_bytes((u ^ (1 << 63)).to_be_bytes()))
}

/// Append an escaped, terminated byte string (see [`KeyBuilder::bytes`]).
pub fn encode_bytes(out: &mut Vec<u8>, v: &[u8]) {
    for &b in v {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// Decode one `encode_bytes` component; returns (value, bytes consumed).
#[must_use]
pub fn decode_bytes(b: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let c = *b.get(i)?;
        if c == 0 {
            match *b.get(i + 1)? {
                0 => return Some((out, i + 2)),
                0xFF => {
                    out.push(0);
                    i += 2;
                }
                _ => return None,
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_preserved() {
        let vals = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in vals.windows(2) {
            assert!(encode_i64(w[0]) < encode_i64(w[1]));
            assert_eq!(decode_i64(&encode_i64(w[0])), Some(w[0]));
        }
        let a = KeyBuilder::new().u32(1).bytes(b"ab").u64(9).finish();
        let b = KeyBuilder::new().u32(1).bytes(b"ab\0").u64(0).finish();
        let c = KeyBuilder::new().u32(1).bytes(b"b").u64(0).finish();
        assert!(a < b && b < c);
        let mut e = Vec::new();
        encode_bytes(&mut e, b"x\0y");
        assert_eq!(decode_bytes(&e), Some((b"x\0y".to_vec(), e.len())));
    }
}
