//! The compact binary form of a trace (`nowa trace convert`).
//!
//! ```text
//! header, 64 bytes, little endian
//!   0  magic "NOWATRC\x01"           8 bytes
//!   8  version u16 (1), header_len u16 (64), reserved u32
//!  16  records u64                   (u64::MAX while the writer has not finished)
//!  24  body_bytes u64
//!  32  write_bytes u64               (sum of write lengths)
//!  40  writes u64                    (write records)
//!  48  volumes u32                   (largest volume id + 1)
//!  52  body_crc u32                  (CRC32C of the body)
//!  56  header_crc u32                (CRC32C of bytes 0..56), reserved u32
//! body: one record after the other
//!   tag u8: bits 0-1 op (0 R, 1 W, 2 D, 3 F); bit 2 volume follows; bit 3 offset follows
//!           (else offset = previous record's offset + length); bit 4 timestamp delta follows
//!           (else equal to the previous); bit 5 length follows (else equal to the previous)
//!   [ts delta: zigzag LEB128 of the wrapping difference] [volume: LEB128]
//!   [offset: zigzag LEB128 of offset - previous end, wrapping] [length: LEB128]
//! ```
//! Wrapping differences make every u64 round-trip exactly. The reader checks the header
//! checksum when it opens the file and the record count, body length and body checksum when
//! it reaches the end; a truncated or damaged file is an error, never a shorter trace.

use crate::{Op, Record, TraceError};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// First bytes of a binary trace.
pub const MAGIC: &[u8; 8] = b"NOWATRC\x01";
/// Format version.
pub const VERSION: u16 = 1;
/// Header bytes.
pub const HEADER_LEN: usize = 64;
const HEADER_LEN_U16: u16 = 64;
const _: () = assert!(HEADER_LEN_U16 as usize == HEADER_LEN);
/// Longest encoded record: tag + four 10-byte varints.
const MAX_RECORD: usize = 41;

const F_VOLUME: u8 = 1 << 2;
const F_OFFSET: u8 = 1 << 3;
const F_TS: u8 = 1 << 4;
const F_LEN: u8 = 1 << 5;

/// Counts kept in the header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Header {
    /// Records in the body.
    pub records: u64,
    /// Bytes of the body.
    pub body_bytes: u64,
    /// Sum of write lengths in bytes.
    pub write_bytes: u64,
    /// Write records.
    pub writes: u64,
    /// Largest volume id + 1 (0 for an empty trace).
    pub volumes: u32,
    /// CRC32C of the body.
    pub body_crc: u32,
}

impl Header {
    fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10..12].copy_from_slice(&HEADER_LEN_U16.to_le_bytes());
        h[16..24].copy_from_slice(&self.records.to_le_bytes());
        h[24..32].copy_from_slice(&self.body_bytes.to_le_bytes());
        h[32..40].copy_from_slice(&self.write_bytes.to_le_bytes());
        h[40..48].copy_from_slice(&self.writes.to_le_bytes());
        h[48..52].copy_from_slice(&self.volumes.to_le_bytes());
        h[52..56].copy_from_slice(&self.body_crc.to_le_bytes());
        let crc = crc32c::crc32c(&h[0..56]);
        h[56..60].copy_from_slice(&crc.to_le_bytes());
        h
    }

    fn decode(path: &Path, h: &[u8; HEADER_LEN]) -> Result<Header, TraceError> {
        let corrupt = |what, expected, found| TraceError::Corrupt {
            path: path.to_path_buf(),
            what,
            expected,
            found,
        };
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
        if &h[0..8] != MAGIC {
            return Err(corrupt("magic", u64_at_bytes(MAGIC), u64_at(0)));
        }
        let version = u16::from_le_bytes([h[8], h[9]]);
        if version != VERSION {
            return Err(corrupt("version", u64::from(VERSION), u64::from(version)));
        }
        let crc = crc32c::crc32c(&h[0..56]);
        if crc != u32_at(56) {
            return Err(corrupt(
                "header checksum",
                u64::from(crc),
                u64::from(u32_at(56)),
            ));
        }
        let hlen = u16::from_le_bytes([h[10], h[11]]);
        if usize::from(hlen) != HEADER_LEN {
            return Err(corrupt("header length", HEADER_LEN as u64, u64::from(hlen)));
        }
        let header = Header {
            records: u64_at(16),
            body_bytes: u64_at(24),
            write_bytes: u64_at(32),
            writes: u64_at(40),
            volumes: u32_at(48),
            body_crc: u32_at(52),
        };
        if header.records == u64::MAX {
            return Err(corrupt(
                "record count (the writer did not finish)",
                0,
                u64::MAX,
            ));
        }
        Ok(header)
    }
}

fn u64_at_bytes(b: &[u8; 8]) -> u64 {
    u64::from_le_bytes(*b)
}

fn zigzag(v: u64) -> u64 {
    // The wrapping difference read as i64, zigzag-coded so small negatives stay small.
    (v << 1) ^ (0u64.wrapping_sub(v >> 63))
}

fn unzigzag(v: u64) -> u64 {
    (v >> 1) ^ 0u64.wrapping_sub(v & 1)
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "LEB128: the low 7 bits of v, masked by the 0x80 flag or below 0x80"
)]
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The state both sides keep to code deltas.
#[derive(Debug, Clone, Copy, Default)]
struct Prev {
    ts: u64,
    volume: u32,
    end: u64,
    len: u64,
}

/// Encode `r` after `prev` into `out`.
fn encode(out: &mut Vec<u8>, prev: &mut Prev, r: &Record) {
    let start = out.len();
    out.push(0);
    let mut tag = r.op as u8;
    if r.ts_ns != prev.ts {
        tag |= F_TS;
        put_varint(out, zigzag(r.ts_ns.wrapping_sub(prev.ts)));
    }
    if r.volume != prev.volume {
        tag |= F_VOLUME;
        put_varint(out, u64::from(r.volume));
    }
    if r.offset != prev.end {
        tag |= F_OFFSET;
        put_varint(out, zigzag(r.offset.wrapping_sub(prev.end)));
    }
    if r.len != prev.len {
        tag |= F_LEN;
        put_varint(out, r.len);
    }
    out[start] = tag;
    debug_assert!(out.len() - start <= MAX_RECORD);
    *prev = Prev {
        ts: r.ts_ns,
        volume: r.volume,
        end: r.offset.wrapping_add(r.len),
        len: r.len,
    };
}

/// Writes a binary trace; [`Writer::finish`] fills in the header.
pub struct Writer {
    path: PathBuf,
    out: BufWriter<File>,
    buf: Vec<u8>,
    prev: Prev,
    header: Header,
    crc: u32,
}

impl Writer {
    /// Create `path` and reserve the header. An existing file is an error unless `overwrite`.
    ///
    /// # Errors
    /// [`TraceError::Exists`] or [`TraceError::Io`] naming the file.
    pub fn create(path: &Path, overwrite: bool) -> Result<Writer, TraceError> {
        let file = crate::csv_out::create_output(path, overwrite)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let unfinished = Header {
            records: u64::MAX,
            ..Header::default()
        };
        out.write_all(&unfinished.encode())
            .map_err(|e| TraceError::io(path, e))?;
        Ok(Writer {
            path: path.to_path_buf(),
            out,
            buf: Vec::with_capacity(1 << 16),
            prev: Prev::default(),
            header: Header::default(),
            crc: 0,
        })
    }

    /// Append one record.
    ///
    /// # Errors
    /// [`TraceError::Io`] naming the file.
    pub fn push(&mut self, r: &Record) -> Result<(), TraceError> {
        let (start, before) = (self.buf.len(), self.prev);
        encode(&mut self.buf, &mut self.prev, r);
        // Checked when written: the bytes decode to the record.
        let mut check = before;
        debug_assert_eq!(
            decode(&self.buf[start..], &mut check),
            Some((*r, self.buf.len() - start))
        );
        let h = &mut self.header;
        h.records += 1;
        if r.op == Op::Write {
            h.writes += 1;
            h.write_bytes = h.write_bytes.wrapping_add(r.len);
        }
        h.volumes = h.volumes.max(r.volume.saturating_add(1));
        if self.buf.len() >= (1 << 16) - MAX_RECORD {
            self.drain()?;
        }
        Ok(())
    }

    fn drain(&mut self) -> Result<(), TraceError> {
        self.crc = crc32c::crc32c_append(self.crc, &self.buf);
        self.header.body_bytes += self.buf.len() as u64;
        self.out
            .write_all(&self.buf)
            .map_err(|e| TraceError::io(&self.path, e))?;
        self.buf.clear();
        Ok(())
    }

    /// Write the remaining records and the final header, and sync the file.
    ///
    /// # Errors
    /// [`TraceError::Io`] naming the file.
    ///
    /// # Panics
    /// If the file's length disagrees with the bytes counted (a bug of this writer).
    pub fn finish(mut self) -> Result<Header, TraceError> {
        self.drain()?;
        self.header.body_crc = self.crc;
        let path = self.path.clone();
        let io = |e| TraceError::io(&path, e);
        let mut file = self.out.into_inner().map_err(|e| io(e.into_error()))?;
        let end = file.stream_position().map_err(io)?;
        assert_eq!(
            end,
            HEADER_LEN as u64 + self.header.body_bytes,
            "the body is what was counted"
        );
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(&self.header.encode()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(self.header)
    }
}

/// Reads a binary trace record by record.
pub struct Reader {
    path: PathBuf,
    src: Box<dyn Read + Send>,
    header: Header,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    prev: Prev,
    read: u64,
    body_seen: u64,
    crc: u32,
    failed: bool,
}

impl Reader {
    /// Open a binary trace from an already opened (possibly decompressed) stream.
    ///
    /// # Errors
    /// [`TraceError::Io`] or [`TraceError::Corrupt`] naming the file.
    pub fn new(path: &Path, mut src: Box<dyn Read + Send>) -> Result<Reader, TraceError> {
        let mut h = [0u8; HEADER_LEN];
        src.read_exact(&mut h)
            .map_err(|e| TraceError::io(path, e))?;
        let header = Header::decode(path, &h)?;
        Ok(Reader {
            path: path.to_path_buf(),
            src,
            header,
            buf: Vec::with_capacity(1 << 20),
            pos: 0,
            eof: false,
            prev: Prev::default(),
            read: 0,
            body_seen: 0,
            crc: 0,
            failed: false,
        })
    }

    /// The header's counts.
    #[must_use]
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Read the whole body without decoding it and check its length and checksum against the
    /// header: what the end of a full read checks, at the speed of reading and CRC32C. A body
    /// that passes is the one the writer wrote, so no record read from it afterwards is wild
    /// (a damaged body is refused before any record is used), and decoding it once more to
    /// check it would find nothing new.
    ///
    /// # Errors
    /// [`TraceError::Io`], or [`TraceError::Corrupt`] for a body of the wrong length or checksum.
    ///
    /// # Panics
    /// If records were read already (the check covers the whole body).
    pub fn verify(mut self) -> Result<Header, TraceError> {
        assert!(
            self.read == 0 && self.body_seen == 0,
            "verify reads the body from its start"
        );
        let mut chunk = vec![0u8; 1 << 20];
        loop {
            let n = self
                .src
                .read(&mut chunk)
                .map_err(|e| TraceError::io(&self.path, e))?;
            if n == 0 {
                break;
            }
            self.crc = crc32c::crc32c_append(self.crc, &chunk[..n]);
            self.body_seen += n as u64;
        }
        let h = self.header;
        if self.body_seen != h.body_bytes {
            return Err(self.corrupt("body length", h.body_bytes, self.body_seen));
        }
        if self.crc != h.body_crc {
            return Err(self.corrupt("body checksum", u64::from(h.body_crc), u64::from(self.crc)));
        }
        Ok(h)
    }

    /// Keep at least `MAX_RECORD` bytes buffered unless the file ends first.
    fn refill(&mut self) -> Result<(), TraceError> {
        self.buf.drain(..self.pos);
        self.pos = 0;
        let have = self.buf.len();
        self.buf.resize(1 << 20, 0);
        let mut filled = have;
        while filled < MAX_RECORD * 2 || filled < self.buf.len() / 2 {
            let n = self
                .src
                .read(&mut self.buf[filled..])
                .map_err(|e| TraceError::io(&self.path, e))?;
            if n == 0 {
                self.eof = true;
                break;
            }
            self.crc = crc32c::crc32c_append(self.crc, &self.buf[filled..filled + n]);
            self.body_seen += n as u64;
            filled += n;
        }
        self.buf.truncate(filled);
        Ok(())
    }

    fn corrupt(&mut self, what: &'static str, expected: u64, found: u64) -> TraceError {
        self.failed = true;
        TraceError::Corrupt {
            path: self.path.clone(),
            what,
            expected,
            found,
        }
    }

    /// Checks at the end of the body: counts, length and checksum as the header says.
    fn check_end(&mut self) -> Result<(), TraceError> {
        let h = self.header;
        if self.read != h.records {
            return Err(self.corrupt("record count", h.records, self.read));
        }
        if self.body_seen != h.body_bytes {
            return Err(self.corrupt("body length", h.body_bytes, self.body_seen));
        }
        if self.crc != h.body_crc {
            return Err(self.corrupt("body checksum", u64::from(h.body_crc), u64::from(self.crc)));
        }
        Ok(())
    }

    /// The next record, `None` at the (verified) end.
    ///
    /// # Errors
    /// [`TraceError::Io`] or [`TraceError::Corrupt`].
    ///
    /// # Panics
    /// If a decoded record overruns the buffer (a bug of the decoder).
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if self.failed {
            return Ok(None);
        }
        if self.buf.len() - self.pos < MAX_RECORD && !self.eof {
            self.refill()?;
        }
        if self.read == self.header.records {
            while !self.eof {
                self.refill()?;
            }
            if self.pos != self.buf.len() {
                let extra = (self.buf.len() - self.pos) as u64;
                return Err(self.corrupt("bytes after the last record", 0, extra));
            }
            self.check_end()?;
            return Ok(None);
        }
        match decode(&self.buf[self.pos..], &mut self.prev) {
            Some((r, used)) => {
                assert!(used <= MAX_RECORD && self.pos + used <= self.buf.len());
                self.pos += used;
                self.read += 1;
                Ok(Some(r))
            }
            None => {
                let (want, got) = (self.header.records, self.read);
                Err(self.corrupt("record count (file truncated)", want, got))
            }
        }
    }
}

impl Reader {
    /// Decode up to `max` records that are whole in the buffer into `out`, without reading
    /// the file or checking its end; returns how many. Stops early (possibly at 0) where
    /// [`Reader::next_record`] has work to do: a refill, the end, a record that does not
    /// decode (which `next_record` then reports). The records are those `next_record` would
    /// return, in one tight loop.
    ///
    /// # Panics
    /// If more records were read than the header counts (a bug of this reader).
    pub fn decode_buffered(&mut self, out: &mut Vec<Record>, max: usize) -> usize {
        if self.failed {
            return 0;
        }
        let left = self.header.records - self.read;
        let want = usize::try_from(left).map_or(max, |l| l.min(max));
        let start = out.len();
        while out.len() - start < want && self.buf.len() - self.pos >= MAX_RECORD {
            let Some((r, used)) = decode(&self.buf[self.pos..], &mut self.prev) else {
                break;
            };
            debug_assert!(used <= MAX_RECORD);
            self.pos += used;
            out.push(r);
        }
        let n = out.len() - start;
        self.read += n as u64;
        assert!(self.read <= self.header.records, "no record past the count");
        n
    }
}

/// Decode one record from `b`; None if `b` ends inside it.
#[inline]
fn decode(b: &[u8], prev: &mut Prev) -> Option<(Record, usize)> {
    let tag = *b.first()?;
    let mut i = 1;
    let varint = |i: &mut usize| -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            let byte = *b.get(*i)?;
            *i += 1;
            v |= u64::from(byte & 0x7f).checked_shl(shift)?;
            if byte < 0x80 {
                return Some(v);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    };
    let ts = if tag & F_TS != 0 {
        prev.ts.wrapping_add(unzigzag(varint(&mut i)?))
    } else {
        prev.ts
    };
    let volume = if tag & F_VOLUME != 0 {
        u32::try_from(varint(&mut i)?).ok()?
    } else {
        prev.volume
    };
    let offset = if tag & F_OFFSET != 0 {
        prev.end.wrapping_add(unzigzag(varint(&mut i)?))
    } else {
        prev.end
    };
    let len = if tag & F_LEN != 0 {
        varint(&mut i)?
    } else {
        prev.len
    };
    debug_assert!(i <= MAX_RECORD, "a record is at most {MAX_RECORD} bytes");
    let r = Record {
        ts_ns: ts,
        volume,
        op: Op::from_code(tag),
        offset,
        len,
    };
    *prev = Prev {
        ts,
        volume,
        end: offset.wrapping_add(len),
        len,
    };
    Some((r, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_roundtrips_extremes() {
        for v in [0u64, 1, 2, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(0u64.wrapping_sub(1)), 1);
        assert_eq!(zigzag(1), 2);
    }

    /// Records decoded in blocks of any size are the records read one by one, across the
    /// reader's refills and up to the verified end.
    #[test]
    fn blocks_hold_the_records_read_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.nwt");
        let mut w = Writer::create(&path, false).unwrap();
        let mut x = 7u64;
        for i in 0..60_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            w.push(&Record {
                ts_ns: i * 1000 + (x >> 60),
                volume: u32::try_from(x >> 62).unwrap(),
                op: Op::from_code(u8::try_from((x >> 40) & 3).unwrap()),
                offset: (x >> 20) << 12,
                len: if x & 1 == 0 { 4096 } else { (x >> 50) << 9 },
            })
            .unwrap();
        }
        w.finish().unwrap();
        let one: Vec<Record> = crate::open(&path, None)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(one.len(), 60_000);
        for block in [1, 7, 1024, 100_000] {
            let mut r = crate::open(&path, None).unwrap();
            let (mut all, mut calls) = (Vec::new(), 0);
            while r.next_records(&mut all, block).unwrap() > 0 {
                calls += 1;
            }
            assert_eq!(all, one, "blocks of {block}");
            assert_eq!(
                calls,
                60_000usize.div_ceil(block),
                "full blocks but the last"
            );
            assert_eq!(r.next_records(&mut all, block).unwrap(), 0, "the end stays");
        }
    }

    #[test]
    fn truncated_and_damaged_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.nwt");
        let mut w = Writer::create(&path, false).unwrap();
        for i in 0..1000u64 {
            w.push(&Record {
                ts_ns: i * 10,
                volume: 0,
                op: Op::Write,
                offset: i * 4096,
                len: 4096,
            })
            .unwrap();
        }
        w.finish().unwrap();
        let full = std::fs::read(&path).unwrap();
        let read_all = |bytes: &[u8]| -> Result<u64, TraceError> {
            let mut r = Reader::new(&path, Box::new(std::io::Cursor::new(bytes.to_vec())))?;
            let mut n = 0;
            while r.next_record()?.is_some() {
                n += 1;
            }
            Ok(n)
        };
        assert_eq!(read_all(&full).unwrap(), 1000);
        assert!(read_all(&full[..full.len() - 3]).is_err(), "truncated");
        let mut bad = full.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x01;
        assert!(read_all(&bad).is_err(), "flipped body bit");
        let mut bad = full;
        bad[20] ^= 0x01;
        let e = read_all(&bad).unwrap_err().to_string();
        assert!(e.contains("header checksum"), "{e}");
    }
}
