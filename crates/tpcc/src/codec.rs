//! Compact row encoding: integers little-endian at their natural width, strings as a 2-byte
//! little-endian length then the bytes, fixed-width strings (S_DIST_xx, OL_DIST_INFO) as their
//! bytes. Decoding checks every length and that the whole value was consumed.

/// Why a row could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("row value malformed at byte {offset}")]
pub struct DecodeError {
    /// Where decoding stopped.
    pub offset: usize,
}

/// Appends fields to a value.
#[derive(Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// A writer with room for `capacity` bytes.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Writer {
        Writer {
            buf: Vec::with_capacity(capacity),
        }
    }
    /// Appends an `i32`.
    pub fn i32(&mut self, v: i32) -> &mut Writer {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends an `i64`.
    pub fn i64(&mut self, v: i64) -> &mut Writer {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends a string of at most 65,535 bytes with its length.
    ///
    /// # Panics
    /// If `s` is longer (TPC-C's longest string is 500 bytes).
    pub fn str(&mut self, s: &[u8]) -> &mut Writer {
        let n = u16::try_from(s.len()).expect("strings are shorter than 64 KiB");
        self.buf.extend_from_slice(&n.to_le_bytes());
        self.buf.extend_from_slice(s);
        self
    }
    /// Appends fixed-width bytes (no length).
    pub fn fixed(&mut self, s: &[u8]) -> &mut Writer {
        self.buf.extend_from_slice(s);
        self
    }
    /// The encoded value.
    #[must_use]
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}

/// Reads fields from a value, in the order they were written.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    #[must_use]
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, at: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or(DecodeError { offset: self.at })?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let at = self.at;
        self.take(N)?
            .try_into()
            .map_err(|_| DecodeError { offset: at })
    }

    /// Reads an `i32`.
    ///
    /// # Errors
    /// The value is too short.
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_le_bytes(self.array()?))
    }
    /// Reads an `i64`.
    ///
    /// # Errors
    /// The value is too short.
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    /// Reads a string written by [`Writer::str`].
    ///
    /// # Errors
    /// The value is too short.
    pub fn str(&mut self) -> Result<Vec<u8>, DecodeError> {
        let n = u16::from_le_bytes(self.array()?);
        Ok(self.take(usize::from(n))?.to_vec())
    }
    /// Reads `N` fixed-width bytes.
    ///
    /// # Errors
    /// The value is too short.
    pub fn fixed<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        self.array()
    }
    /// Checks that the whole value was read.
    ///
    /// # Errors
    /// Bytes are left over.
    pub fn end(&self) -> Result<(), DecodeError> {
        if self.at == self.buf.len() {
            Ok(())
        } else {
            Err(DecodeError { offset: self.at })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let v = Writer::default()
            .i32(-7)
            .i64(1 << 40)
            .str(b"abc")
            .fixed(b"xy")
            .finish();
        let mut r = Reader::new(&v);
        assert_eq!(r.i32().unwrap(), -7);
        assert_eq!(r.i64().unwrap(), 1 << 40);
        assert_eq!(r.str().unwrap(), b"abc");
        assert_eq!(r.fixed::<2>().unwrap(), *b"xy");
        r.end().unwrap();
        let mut short = Reader::new(&v[..v.len() - 3]);
        short.i32().unwrap();
        short.i64().unwrap();
        assert_eq!(short.str(), Err(DecodeError { offset: 14 }));
    }
}
