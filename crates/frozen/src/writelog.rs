//! The write log (`--record-writes FILE`): every DB page write, GC move and page free of a
//! run, in order, with both hotness records. Training data for the model and a replayable
//! stream for the placement simulator (FK oracles, FAR).
//!
//! ```text
//! file   = header block* trailer                      (all integers little endian)
//! header = 64 bytes
//!    0  magic "NOWAFWL\x01"
//!    8  version u16 (1), header_len u16 (64), record_len u16 (64), reserved u16 (0)
//!   16  block_records u32 (records in a full block), page_size u32 (bytes; 0 = unknown)
//!   24  reserved, zero, up to byte 60
//!   60  header_crc u32 = CRC32C of bytes 0..60
//! block  = "FBLK" count u32 (1..=block_records) index u64 (0, 1, 2, ...)
//!          count x record (64 bytes each)
//!          crc u32 = CRC32C of the block header and its records, reserved u32 (0)
//! record = 64 bytes
//!    0  timer u64       DB-written-page timer at this event (GC moves and frees do not
//!                       advance it); never decreases along the file
//!    8  page u64        page id
//!   16  zone u32        zone written (NO_ZONE for a free)
//!   20  from_zone u32   zone of the version this event invalidates or moves (NO_ZONE if none)
//!   24  kind u8         0 user (DB) write, 1 GC move, 2 free (page deallocated)
//!   25  class u8        placement class written (NO_CLASS for a free)
//!   26  reserved, zero, 6 bytes
//!   32  hr_current [16] (HotnessRecord encoding; the version's records, unchanged by GC)
//!   48  hr_last [16]
//! trailer = 56 bytes
//!    0  "FEND" reserved u32 (0)
//!    8  records u64, user u64, gc u64, free u64, blocks u64
//!   48  crc u32 = CRC32C of bytes 0..48, reserved u32 (0)
//! ```
//!
//! The reader checks each block's checksum before it returns any of the block's records, and
//! the trailer's counts at the end; a file without a trailer (the writer did not finish:
//! a crash, a full disk) is [`FrozenError::Truncated`], never a shorter log.

use crate::error::FrozenError;
use crate::hotness::{HotnessRecord, HR_BYTES};
use std::fs::File;
use std::io::{BufReader, BufWriter, ErrorKind, Read, Write};
use std::path::Path;

/// First bytes of a write log.
pub const MAGIC: &[u8; 8] = b"NOWAFWL\x01";
/// Format version.
pub const VERSION: u16 = 1;
/// Header bytes.
pub const HEADER_LEN: usize = 64;
/// Record bytes.
pub const RECORD_LEN: usize = 64;
/// Records in a full block (64 KiB of records).
pub const BLOCK_RECORDS: u32 = 1024;
/// `zone` / `from_zone` of "no zone".
pub const NO_ZONE: u32 = u32::MAX;
/// `class` of "no class".
pub const NO_CLASS: u8 = u8::MAX;

const BLOCK_MAGIC: &[u8; 4] = b"FBLK";
const END_MAGIC: &[u8; 4] = b"FEND";
const BLOCK_HEADER_LEN: usize = 16;
const BLOCK_TRAILER_LEN: usize = 8;
const TRAILER_LEN: usize = 56;
const HEADER_LEN_U16: u16 = 64;
const RECORD_LEN_U16: u16 = 64;
const _: () =
    assert!(HEADER_LEN_U16 as usize == HEADER_LEN && RECORD_LEN_U16 as usize == RECORD_LEN);
const _: () = assert!(32 + 2 * HR_BYTES == RECORD_LEN, "two HRs end the record");

/// What a log record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WriteKind {
    /// A DB (user) write: a new version of the page; invalidates the previous one.
    User,
    /// A GC move: the same version, relocated.
    Gc,
    /// The page was deallocated: its version is invalid from now on.
    Free,
}

impl WriteKind {
    fn code(self) -> u8 {
        match self {
            Self::User => 0,
            Self::Gc => 1,
            Self::Free => 2,
        }
    }

    fn from_code(c: u8) -> Option<Self> {
        match c {
            0 => Some(Self::User),
            1 => Some(Self::Gc),
            2 => Some(Self::Free),
            _ => None,
        }
    }

    /// True for events that end a version's life (a user write or a free).
    #[must_use]
    pub fn invalidates(self) -> bool {
        matches!(self, Self::User | Self::Free)
    }
}

/// One event of the write log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WriteRecord {
    /// DB-written-page timer at this event.
    pub timer: u64,
    /// Page id.
    pub page: u64,
    /// Zone written ([`NO_ZONE`] for a free).
    pub zone: u32,
    /// Zone of the version invalidated or moved ([`NO_ZONE`] if none).
    pub from_zone: u32,
    /// User write, GC move or free.
    pub kind: WriteKind,
    /// Placement class written ([`NO_CLASS`] for a free).
    pub class: u8,
    /// The version's record (its DB write's HR).
    pub hr_current: HotnessRecord,
    /// The record of the DB write before it.
    pub hr_last: HotnessRecord,
}

impl WriteRecord {
    /// A record with no placement (`zone`, `from_zone`, `class` = none): synthetic logs and
    /// logs converted from block traces.
    #[must_use]
    pub fn unplaced(
        timer: u64,
        page: u64,
        kind: WriteKind,
        hr_current: HotnessRecord,
        hr_last: HotnessRecord,
    ) -> Self {
        WriteRecord {
            timer,
            page,
            zone: NO_ZONE,
            from_zone: NO_ZONE,
            kind,
            class: NO_CLASS,
            hr_current,
            hr_last,
        }
    }

    /// The 64-byte encoding (module docs).
    ///
    /// # Panics
    /// If the record has an HR_last written after its HR_current.
    #[must_use]
    pub fn encode(&self) -> [u8; RECORD_LEN] {
        assert!(
            self.hr_last.is_none() || self.hr_last.wt() <= self.hr_current.wt(),
            "page {}: HR_last written after HR_current",
            self.page
        );
        let mut b = [0u8; RECORD_LEN];
        b[0..8].copy_from_slice(&self.timer.to_le_bytes());
        b[8..16].copy_from_slice(&self.page.to_le_bytes());
        b[16..20].copy_from_slice(&self.zone.to_le_bytes());
        b[20..24].copy_from_slice(&self.from_zone.to_le_bytes());
        b[24] = self.kind.code();
        b[25] = self.class;
        b[32..48].copy_from_slice(&self.hr_current.encode());
        b[48..64].copy_from_slice(&self.hr_last.encode());
        b
    }

    /// Decodes one record; `index` (the record's position in the file) goes into errors.
    ///
    /// # Panics
    /// Never (fixed offsets within 64 bytes).
    ///
    /// # Errors
    /// [`FrozenError::BadRecord`] for an unknown kind or non-zero reserved bytes.
    pub fn decode(b: &[u8; RECORD_LEN], index: u64) -> Result<Self, FrozenError> {
        let kind = WriteKind::from_code(b[24]).ok_or(FrozenError::BadRecord {
            index,
            field: "kind",
            value: u64::from(b[24]),
        })?;
        if let Some(&nz) = b[26..32].iter().find(|&&x| x != 0) {
            return Err(FrozenError::BadRecord {
                index,
                field: "reserved",
                value: u64::from(nz),
            });
        }
        let hr = |at: usize| {
            let s: &[u8; HR_BYTES] = b[at..at + HR_BYTES].try_into().expect("16 bytes");
            HotnessRecord::decode(s)
        };
        Ok(Self {
            timer: u64_at(b, 0),
            page: u64_at(b, 8),
            zone: u32_at(b, 16),
            from_zone: u32_at(b, 20),
            kind,
            class: b[25],
            hr_current: hr(32),
            hr_last: hr(48),
        })
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

/// Counts of a finished (or fully read) log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LogSummary {
    /// All records.
    pub records: u64,
    /// User (DB) writes.
    pub user: u64,
    /// GC moves.
    pub gc: u64,
    /// Frees.
    pub free: u64,
    /// Blocks.
    pub blocks: u64,
    /// Timer of the first record (0 for an empty log).
    pub first_timer: u64,
    /// Timer of the last record (0 for an empty log).
    pub last_timer: u64,
}

impl LogSummary {
    fn count(&mut self, r: &WriteRecord) {
        self.count_event(r.kind, r.timer);
    }

    /// Counts one event.
    pub(crate) fn count_event(&mut self, kind: WriteKind, timer: u64) {
        if self.records == 0 {
            self.first_timer = timer;
        }
        self.last_timer = timer;
        self.records += 1;
        match kind {
            WriteKind::User => self.user += 1,
            WriteKind::Gc => self.gc += 1,
            WriteKind::Free => self.free += 1,
        }
        assert_eq!(self.records, self.user + self.gc + self.free);
    }

    fn trailer(&self) -> [u8; TRAILER_LEN] {
        let mut t = [0u8; TRAILER_LEN];
        t[0..4].copy_from_slice(END_MAGIC);
        for (i, v) in [self.records, self.user, self.gc, self.free, self.blocks]
            .into_iter()
            .enumerate()
        {
            t[8 + 8 * i..16 + 8 * i].copy_from_slice(&v.to_le_bytes());
        }
        let crc = crc32c::crc32c(&t[0..48]);
        t[48..52].copy_from_slice(&crc.to_le_bytes());
        t
    }
}

fn header_bytes(page_size: u32) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[10..12].copy_from_slice(&HEADER_LEN_U16.to_le_bytes());
    h[12..14].copy_from_slice(&RECORD_LEN_U16.to_le_bytes());
    h[16..20].copy_from_slice(&BLOCK_RECORDS.to_le_bytes());
    h[20..24].copy_from_slice(&page_size.to_le_bytes());
    let crc = crc32c::crc32c(&h[0..60]);
    h[60..64].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Writes a log: [`LogWriter::append`] each event in order, then [`LogWriter::finish`].
/// Dropping it without `finish` leaves a file the reader refuses as truncated.
#[derive(Debug)]
pub struct LogWriter<W: Write> {
    out: W,
    block: Vec<u8>,
    in_block: u32,
    summary: LogSummary,
}

impl LogWriter<BufWriter<File>> {
    /// Creates `path` (refusing an existing file unless `force`) and writes the header.
    ///
    /// # Errors
    /// [`FrozenError::Exists`] if `path` exists and not `force`; I/O errors.
    pub fn create(path: &Path, force: bool, page_size: u32) -> Result<Self, FrozenError> {
        let file = crate::open_new(path, force)?;
        Self::new(BufWriter::with_capacity(1 << 20, file), page_size)
    }
}

impl<W: Write> LogWriter<W> {
    /// A writer on `out`; writes the header now.
    ///
    /// # Errors
    /// I/O errors of `out`.
    pub fn new(mut out: W, page_size: u32) -> Result<Self, FrozenError> {
        out.write_all(&header_bytes(page_size))
            .map_err(FrozenError::Write)?;
        Ok(Self {
            out,
            block: Vec::with_capacity(block_bytes(BLOCK_RECORDS)),
            in_block: 0,
            summary: LogSummary::default(),
        })
    }

    /// Appends one event.
    ///
    /// # Errors
    /// [`FrozenError::OutOfOrder`] if `r.timer` is below the previous record's; I/O errors.
    ///
    /// # Panics
    /// If the record has an HR_last written after its HR_current ([`WriteRecord::encode`]),
    /// or on a writer bug (a full block left unsealed, an encoding that does not decode).
    pub fn append(&mut self, r: &WriteRecord) -> Result<(), FrozenError> {
        if self.summary.records > 0 && r.timer < self.summary.last_timer {
            return Err(FrozenError::OutOfOrder {
                index: self.summary.records,
                timer: r.timer,
                previous: self.summary.last_timer,
            });
        }
        if self.in_block == 0 {
            self.block.clear();
            self.block.extend_from_slice(BLOCK_MAGIC);
            self.block.extend_from_slice(&[0u8; 4]); // count, set when the block is sealed
            self.block
                .extend_from_slice(&self.summary.blocks.to_le_bytes());
        }
        assert!(
            self.in_block < BLOCK_RECORDS,
            "a full block is sealed at once"
        );
        let enc = r.encode();
        // Checked when written: the bytes decode to the record (the reader checks again).
        assert_eq!(
            WriteRecord::decode(&enc, self.summary.records).ok(),
            Some(*r),
            "record {} round-trips",
            self.summary.records
        );
        self.block.extend_from_slice(&enc);
        self.in_block += 1;
        self.summary.count(r);
        if self.in_block == BLOCK_RECORDS {
            self.seal_block()?;
        }
        Ok(())
    }

    fn seal_block(&mut self) -> Result<(), FrozenError> {
        assert!(self.in_block > 0 && self.in_block <= BLOCK_RECORDS);
        self.block[4..8].copy_from_slice(&self.in_block.to_le_bytes());
        let crc = crc32c::crc32c(&self.block);
        self.block.extend_from_slice(&crc.to_le_bytes());
        self.block.extend_from_slice(&[0u8; 4]);
        assert_eq!(self.block.len(), block_bytes(self.in_block));
        self.out
            .write_all(&self.block)
            .map_err(FrozenError::Write)?;
        self.summary.blocks += 1;
        self.in_block = 0;
        Ok(())
    }

    /// Counts so far.
    #[must_use]
    pub fn summary(&self) -> LogSummary {
        self.summary
    }

    /// Seals the last block, writes the trailer and flushes; returns the counts.
    ///
    /// # Errors
    /// I/O errors.
    pub fn finish(mut self) -> Result<LogSummary, FrozenError> {
        if self.in_block > 0 {
            self.seal_block()?;
        }
        self.out
            .write_all(&self.summary.trailer())
            .map_err(FrozenError::Write)?;
        self.out.flush().map_err(FrozenError::Write)?;
        Ok(self.summary)
    }
}

fn block_bytes(records: u32) -> usize {
    let n = usize::try_from(records).expect("a block count fits usize");
    BLOCK_HEADER_LEN + n * RECORD_LEN + BLOCK_TRAILER_LEN
}

/// Streams a log's records, checking every block's checksum before its records are returned
/// and the trailer at the end.
#[derive(Debug)]
pub struct LogReader<R: Read> {
    input: R,
    page_size: u32,
    block: Vec<u8>,
    in_block: u32,
    next_in_block: u32,
    seen: LogSummary,
    done: bool,
}

impl LogReader<BufReader<File>> {
    /// Opens `path` and checks its header.
    ///
    /// # Errors
    /// I/O errors; [`FrozenError::Corrupt`] for a bad header.
    pub fn open(path: &Path) -> Result<Self, FrozenError> {
        let f = File::open(path).map_err(|e| FrozenError::io(path, e))?;
        Self::new(BufReader::with_capacity(1 << 20, f))
    }
}

impl<R: Read> LogReader<R> {
    /// A reader on `input`; reads and checks the header now.
    ///
    /// # Errors
    /// [`FrozenError::Corrupt`] for a bad magic, version, length or checksum;
    /// [`FrozenError::Truncated`] for a short header; I/O errors.
    pub fn new(mut input: R) -> Result<Self, FrozenError> {
        let mut h = [0u8; HEADER_LEN];
        read_full(&mut input, &mut h, 0)?;
        if &h[0..8] != MAGIC {
            return Err(corrupt("magic", 0, 0));
        }
        let crc = crc32c::crc32c(&h[0..60]);
        if crc != u32_at(&h, 60) {
            return Err(corrupt("header checksum", 0, 0));
        }
        let version = u16_at(&h, 8);
        if version != VERSION {
            return Err(FrozenError::Version {
                found: version,
                supported: VERSION,
            });
        }
        if u16_at(&h, 10) != HEADER_LEN_U16
            || u16_at(&h, 12) != RECORD_LEN_U16
            || u32_at(&h, 16) != BLOCK_RECORDS
        {
            return Err(corrupt("header lengths", 0, 0));
        }
        Ok(Self {
            input,
            page_size: u32_at(&h, 20),
            block: Vec::with_capacity(block_bytes(BLOCK_RECORDS)),
            in_block: 0,
            next_in_block: 0,
            seen: LogSummary::default(),
            done: false,
        })
    }

    /// The page size the writer declared (0 = unknown).
    #[must_use]
    pub fn page_size(&self) -> u32 {
        self.page_size
    }

    /// Counts of the records returned so far (all of them once [`LogReader::next_record`]
    /// returned `None`).
    #[must_use]
    pub fn summary(&self) -> LogSummary {
        self.seen
    }

    /// The next record, or `None` after the trailer (checked).
    ///
    /// # Panics
    /// Never (block offsets are checked when the block is read).
    ///
    /// # Errors
    /// [`FrozenError::Corrupt`] (checksum, counts, order), [`FrozenError::BadRecord`],
    /// [`FrozenError::Truncated`], I/O errors.
    pub fn next_record(&mut self) -> Result<Option<WriteRecord>, FrozenError> {
        if self.next_in_block == self.in_block && (self.done || !self.load_block()?) {
            return Ok(None);
        }
        let at = BLOCK_HEADER_LEN
            + RECORD_LEN * usize::try_from(self.next_in_block).expect("u32 fits usize");
        let bytes: &[u8; RECORD_LEN] = self.block[at..at + RECORD_LEN]
            .try_into()
            .expect("RECORD_LEN bytes");
        let r = WriteRecord::decode(bytes, self.seen.records)?;
        if self.seen.records > 0 && r.timer < self.seen.last_timer {
            return Err(corrupt("timer order", self.seen.records, self.seen.blocks));
        }
        self.next_in_block += 1;
        self.seen.count(&r);
        Ok(Some(r))
    }

    /// Reads the next block (true) or the trailer (false).
    fn load_block(&mut self) -> Result<bool, FrozenError> {
        let at = self.seen.records;
        let mut tag = [0u8; 4];
        read_full(&mut self.input, &mut tag, at)?;
        if &tag == END_MAGIC {
            self.read_trailer()?;
            return Ok(false);
        }
        if &tag != BLOCK_MAGIC {
            return Err(corrupt("block magic", at, self.seen.blocks));
        }
        let mut rest = [0u8; BLOCK_HEADER_LEN - 4];
        read_full(&mut self.input, &mut rest, at)?;
        let count = u32_at(&rest, 0);
        if count == 0 || count > BLOCK_RECORDS || u64_at(&rest, 4) != self.seen.blocks {
            return Err(corrupt("block header", at, self.seen.blocks));
        }
        self.block.clear();
        self.block.extend_from_slice(&tag);
        self.block.extend_from_slice(&rest);
        self.block.resize(block_bytes(count), 0);
        read_full(&mut self.input, &mut self.block[BLOCK_HEADER_LEN..], at)?;
        let body = self.block.len() - BLOCK_TRAILER_LEN;
        let crc = crc32c::crc32c(&self.block[..body]);
        if crc != u32_at(&self.block, body) || u32_at(&self.block, body + 4) != 0 {
            return Err(corrupt("block checksum", at, self.seen.blocks));
        }
        self.seen.blocks += 1;
        self.in_block = count;
        self.next_in_block = 0;
        Ok(true)
    }

    fn read_trailer(&mut self) -> Result<(), FrozenError> {
        let at = self.seen.records;
        let mut t = [0u8; TRAILER_LEN];
        t[0..4].copy_from_slice(END_MAGIC);
        read_full(&mut self.input, &mut t[4..], at)?;
        if crc32c::crc32c(&t[0..48]) != u32_at(&t, 48) {
            return Err(corrupt("trailer checksum", at, self.seen.blocks));
        }
        if t[4..8] != [0; 4] || t[52..56] != [0; 4] || t[..] != self.seen.trailer()[..] {
            return Err(corrupt("trailer counts", at, self.seen.blocks));
        }
        let mut extra = [0u8; 1];
        match self.input.read(&mut extra) {
            Ok(0) => {}
            Ok(_) => return Err(corrupt("bytes after the trailer", at, self.seen.blocks)),
            Err(e) => return Err(FrozenError::Read(e)),
        }
        self.done = true;
        Ok(())
    }
}

impl<R: Read> Iterator for LogReader<R> {
    type Item = Result<WriteRecord, FrozenError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_record() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                // One error ends the stream.
                self.done = true;
                self.in_block = self.next_in_block;
                Some(Err(e))
            }
        }
    }
}

fn corrupt(what: &'static str, record: u64, block: u64) -> FrozenError {
    FrozenError::Corrupt {
        what,
        record,
        block,
    }
}

fn read_full(input: &mut impl Read, buf: &mut [u8], records: u64) -> Result<(), FrozenError> {
    input.read_exact(buf).map_err(|e| {
        if e.kind() == ErrorKind::UnexpectedEof {
            FrozenError::Truncated { records }
        } else {
            FrozenError::Read(e)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(timer: u64, page: u64, kind: WriteKind) -> WriteRecord {
        WriteRecord {
            timer,
            page,
            zone: u32::try_from(timer % 7).unwrap(),
            from_zone: NO_ZONE,
            kind,
            class: 3,
            hr_current: HotnessRecord::new(timer, 4000, 1.5, 2.5, 9, 4),
            hr_last: HotnessRecord::new(timer / 2, 3000, 0.5, 7.0, 3, 1),
        }
    }

    fn records(n: u64) -> Vec<WriteRecord> {
        let kinds = [WriteKind::User, WriteKind::Gc, WriteKind::Free];
        (0..n)
            .map(|i| rec(i / 2, i % 13, kinds[usize::try_from(i % 3).unwrap()]))
            .collect()
    }

    fn write_all(recs: &[WriteRecord]) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = LogWriter::new(&mut buf, 4096).unwrap();
        for r in recs {
            w.append(r).unwrap();
        }
        let s = w.finish().unwrap();
        assert_eq!(s.records, recs.len() as u64);
        assert_eq!(s.blocks, s.records.div_ceil(u64::from(BLOCK_RECORDS)));
        buf
    }

    fn read_all(bytes: &[u8]) -> Result<Vec<WriteRecord>, FrozenError> {
        LogReader::new(bytes)?.collect()
    }

    #[test]
    fn round_trips_empty_one_and_many_blocks() {
        for n in [0u64, 1, 1023, 1024, 1025, 5000] {
            let recs = records(n);
            let bytes = write_all(&recs);
            let back = read_all(&bytes).unwrap();
            assert_eq!(back, recs, "{n} records");
            let mut r = LogReader::new(&bytes[..]).unwrap();
            while r.next_record().unwrap().is_some() {}
            assert_eq!(r.summary().records, n);
            assert_eq!(r.page_size(), 4096);
        }
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let recs = records(1500);
        let bytes = write_all(&recs);
        // Flip one bit at a spread of positions: header, block headers, records, CRCs, trailer.
        let mut positions: Vec<usize> = (0..bytes.len()).step_by(997).collect();
        positions.extend([0, 9, 61, 64, 70, 80, bytes.len() - 1, bytes.len() - 30]);
        for at in positions {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            assert!(
                read_all(&bad).is_err(),
                "a flip at byte {at} went unnoticed"
            );
        }
    }

    #[test]
    fn truncation_and_trailing_bytes_are_errors() {
        let recs = records(2100);
        let bytes = write_all(&recs);
        for cut in [10, 64, 100, 70_000, bytes.len() - 56, bytes.len() - 1] {
            let err = read_all(&bytes[..cut]).unwrap_err();
            assert!(
                matches!(err, FrozenError::Truncated { .. }),
                "cut {cut}: {err}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            read_all(&longer),
            Err(FrozenError::Corrupt {
                what: "bytes after the trailer",
                ..
            })
        ));
        // An unfinished writer: header and sealed blocks only.
        let mut buf = Vec::new();
        let mut w = LogWriter::new(&mut buf, 0).unwrap();
        for r in &recs {
            w.append(r).unwrap();
        }
        drop(w);
        assert!(matches!(read_all(&buf), Err(FrozenError::Truncated { .. })));
    }

    #[test]
    fn order_kind_and_reserved_are_checked() {
        let mut w = LogWriter::new(Vec::new(), 0).unwrap();
        w.append(&rec(10, 1, WriteKind::User)).unwrap();
        assert!(matches!(
            w.append(&rec(9, 1, WriteKind::User)),
            Err(FrozenError::OutOfOrder {
                timer: 9,
                previous: 10,
                ..
            })
        ));
        let mut b = rec(1, 1, WriteKind::Gc).encode();
        assert_eq!(
            WriteRecord::decode(&b, 0).unwrap(),
            rec(1, 1, WriteKind::Gc)
        );
        b[24] = 3;
        assert!(matches!(
            WriteRecord::decode(&b, 5),
            Err(FrozenError::BadRecord {
                index: 5,
                field: "kind",
                value: 3
            })
        ));
        b[24] = 0;
        b[27] = 1;
        assert!(WriteRecord::decode(&b, 0).is_err());
    }

    #[test]
    fn create_refuses_an_existing_file_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.log");
        let mut w = LogWriter::create(&p, false, 4096).unwrap();
        w.append(&rec(1, 2, WriteKind::User)).unwrap();
        w.finish().unwrap();
        assert!(matches!(
            LogWriter::create(&p, false, 4096),
            Err(FrozenError::Exists { .. })
        ));
        let back: Vec<_> = LogReader::open(&p)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, vec![rec(1, 2, WriteKind::User)]);
        LogWriter::create(&p, true, 4096).unwrap().finish().unwrap();
        assert_eq!(LogReader::open(&p).unwrap().count(), 0);
    }
}
