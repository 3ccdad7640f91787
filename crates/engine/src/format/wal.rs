//! WAL records: a header and a typed payload selected by a tag byte, encoded and decoded
//! here and nowhere else. New record types get a new tag and a new variant. Byte tables:
//! docs/design.md section 4.

use super::structop::StructOp;
use super::{rd_u32, rd_u64, rd_varint, varint_len, wr_u64, wr_varint, Field, BLOCK, VAR};

use crate::error::{Pid, RecordDamage};
use crate::num::{u16_of, u32_from_u64, u32_of, u32_saturating, u64_of};

/// Total length (header + payload); 0 marks the end of the log.
pub const LEN: Field = Field::new(0, 4, "length");
/// crc32c of the log epoch's salt and the record's LSN (8 bytes, neither stored), then of
/// bytes [8, length): a record copied to another position or left by another epoch fails it.
pub const CRC: Field = Field::new(4, 4, "crc32c");
/// Low 32 bits of the record's LSN xor the salt of the log epoch. The LSN is the record's
/// position in the stream and is not stored: this word tells a record of this epoch at
/// this position from the bytes another lap or epoch left there, before the checksum.
pub const CHECK: Field = Field::new(8, 4, "position check");
/// LSN minus the durable end of the log when the record was appended (saturating): every
/// byte before `lsn - durable_back` was durable before this record existed.
pub const DURABLE_BACK: Field = Field::new(12, 4, "durable back-distance");
/// Type tag.
pub const TAG: Field = Field::new(16, 1, "type");
/// Payload.
pub const PAYLOAD: Field = Field::new(17, VAR, "payload");

/// The record header's fields, in order.
pub const HEADER_FIELDS: &[Field] = &[LEN, CRC, CHECK, DURABLE_BACK, TAG, PAYLOAD];
/// Header size.
pub const HEADER: usize = PAYLOAD.offset;
/// Largest record accepted by the scanner.
pub const MAX_RECORD: usize = 1 << 20;

/// Put: varint leaf pid, varint previous-LSN back-distance (record LSN minus the leaf's
/// LSN before the change; 0: unknown), varint key length, the key, then the value (its
/// length is the rest of the payload).
pub const PUT_BODY: Field = Field::new(0, VAR, "pid, prev back, key length (varints); key; value");
/// Delete: varint leaf pid, varint previous-LSN back-distance (as Put), then the key (the
/// rest of the payload).
pub const DELETE_BODY: Field = Field::new(0, VAR, "pid, prev back (varints); key");
/// Smo: new root.
pub const SMO_ROOT: Field = Field::new(0, 8, "root");
/// Smo: allocation mark.
pub const SMO_NEXT_PID: Field = Field::new(8, 8, "next pid");
/// Smo: page count n.
pub const SMO_N: Field = Field::new(16, 2, "page count");
/// Smo: n x (pid u64 | 4096-byte page image).
pub const SMO_PAGES: Field = Field::new(18, VAR, "pages");

/// TxnCommit: op count n.
pub const TXN_N: Field = Field::new(0, 4, "op count");
/// TxnCommit: n x (kind u8 | key len u16 | value len u16 | key | value).
pub const TXN_OPS: Field = Field::new(4, VAR, "ops");
/// TxnDone: LSN of the TxnCommit record whose writes are all applied and logged.
pub const TXN_DONE_LSN: Field = Field::new(0, 8, "commit lsn");
/// TxnWrite: the leaf.
pub const TW_PID: Field = Field::new(0, 8, "pid");
/// TxnWrite: record LSN minus the page's LSN before the change (u32::MAX: unknown).
pub const TW_PREV: Field = Field::new(8, 4, "prev lsn back-distance");
/// TxnWrite: LSN of the TxnCommit record holding the write.
pub const TW_COMMIT: Field = Field::new(12, 8, "commit lsn");
/// TxnWrite: index of the write in the TxnCommit's ops.
pub const TW_INDEX: Field = Field::new(20, 4, "op index");

/// Put payload fields.
pub const PUT_FIELDS: &[Field] = &[PUT_BODY];
/// Delete payload fields.
pub const DELETE_FIELDS: &[Field] = &[DELETE_BODY];
/// Smo payload fields.
pub const SMO_FIELDS: &[Field] = &[SMO_ROOT, SMO_NEXT_PID, SMO_N, SMO_PAGES];

/// TxnCommit payload fields.
pub const TXN_COMMIT_FIELDS: &[Field] = &[TXN_N, TXN_OPS];
/// TxnDone payload fields.
pub const TXN_DONE_FIELDS: &[Field] = &[TXN_DONE_LSN];
/// TxnWrite payload fields.
pub const TXN_WRITE_FIELDS: &[Field] = &[TW_PID, TW_PREV, TW_COMMIT, TW_INDEX];
/// TxnWrite payload size.
const TXN_WRITE_LEN: usize = TW_INDEX.offset + TW_INDEX.size;

const _: () = assert!(super::well_formed(TXN_COMMIT_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(TXN_DONE_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(TXN_WRITE_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(HEADER_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(PUT_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(DELETE_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(SMO_FIELDS, BLOCK));
const _: () = assert!(HEADER == 17 && SMO_PAGES.offset + 8 + BLOCK < MAX_RECORD);

/// Type tags.
pub const TAG_PUT: u8 = 1;
/// Delete.
pub const TAG_DELETE: u8 = 2;
/// Structure modification (page images; read for old logs, no longer written).
pub const TAG_SMO: u8 = 3;
/// Padding to the end of a block (zeros), appended by a group flush so the next group
/// starts on a fresh block instead of rewriting this one.
pub const TAG_PAD: u8 = 4;
/// Logical structure change (`super::structop`).
pub const TAG_STRUCT: u8 = 16;

/// A transaction's whole write set (logical; the commit point).
pub const TAG_TXN_COMMIT: u8 = 32;
// Tag 48 was format 4's flush mark record, written in the log; format 5 keeps the marks
// outside the log (`super::mark`), so a record tagged 48 is undecodable.
/// Page versions logged by a clean close: n x (pid, low 32 bits of the page's LSN).
pub const TAG_PAGE_VERSIONS: u8 = 49;
/// PageVersions: entry count n.
pub const PV_N: Field = Field::new(0, 4, "entry count");
/// PageVersions: n x (pid u64 | low 32 bits of the LSN u32).
pub const PV_ENTRIES: Field = Field::new(4, VAR, "entries");
/// PageVersions payload fields.
pub const PAGE_VERSIONS_FIELDS: &[Field] = &[PV_N, PV_ENTRIES];
const PV_ENTRY: usize = 12;
/// Most entries one PageVersions record holds.
pub const PV_MAX: usize = (MAX_RECORD - HEADER - PV_ENTRIES.offset) / PV_ENTRY;
const _: () = assert!(super::well_formed(PAGE_VERSIONS_FIELDS, BLOCK));
/// Every write of a committed transaction is applied and logged physically.
pub const TAG_TXN_DONE: u8 = 33;
/// One write of a committed transaction applied to a leaf: the page and the op's index in
/// its TxnCommit (the key and value are not logged twice).
pub const TAG_TXN_WRITE: u8 = 34;
/// TxnCommit op kind: upsert.
const OP_PUT: u8 = 1;
/// TxnCommit op kind: delete.
const OP_DELETE: u8 = 2;
/// Bytes before the key of a TxnCommit op.
const OP_HDR: usize = 5;

const UNKNOWN_PREV: u32 = u32::MAX;
const SMO_PAGE: usize = 8 + BLOCK;

/// A record to append (borrowed).
#[derive(Debug, Clone, Copy)]
pub enum RecordRef<'a> {
    /// Upsert into leaf `pid`, whose LSN before the change was `prev_lsn`.
    Put {
        /// The leaf.
        pid: Pid,
        /// The leaf's LSN before this change.
        prev_lsn: u64,
        /// Key.
        key: &'a [u8],
        /// Value.
        value: &'a [u8],
    },
    /// Remove from leaf `pid`.
    Delete {
        /// The leaf.
        pid: Pid,
        /// The leaf's LSN before this change.
        prev_lsn: u64,
        /// Key.
        key: &'a [u8],
    },
    /// A structure modification: full images of every page it rewrote (each image carries
    /// the page's LSN before the SMO), the new root and allocation mark.
    Smo {
        /// New root.
        root: Pid,
        /// Allocation mark.
        next_pid: Pid,
        /// (pid, 4096-byte image).
        pages: &'a [(Pid, &'a [u8])],
    },
    /// A transaction's write set (full keys; `None` = delete), logged before any of it is
    /// applied: the commit point (docs/design.md, transactions).
    TxnCommit {
        /// (key, value or None for a delete), each key once.
        ops: &'a [(&'a [u8], Option<&'a [u8]>)],
    },
    /// The writes of the TxnCommit at `commit_lsn` are all applied (and logged physically).
    TxnDone {
        /// LSN of the TxnCommit record.
        commit_lsn: u64,
    },
    /// Op `index` of the TxnCommit at `commit_lsn` (an upsert, or a delete of a key the leaf
    /// holds) applied to leaf `pid`, whose LSN before the change was `prev_lsn`: a Put or
    /// Delete whose key and value are those of the op (single logging).
    TxnWrite {
        /// The leaf.
        pid: Pid,
        /// The leaf's LSN before this change.
        prev_lsn: u64,
        /// LSN of the TxnCommit record.
        commit_lsn: u64,
        /// Index of the op in the TxnCommit.
        index: u32,
    },
    /// A logical structure change: page operations (`super::structop`), the new root and
    /// allocation mark.
    Struct {
        /// New root.
        root: Pid,
        /// Allocation mark.
        next_pid: Pid,
        /// The operations, applied in order.
        ops: &'a [StructOp],
    },
    /// The version (low 32 bits of the LSN) each page was last written with, logged by a
    /// clean close after its checkpoint; the next open loads it into the store's check.
    PageVersions {
        /// (pid, low 32 bits of its LSN); at most [`PV_MAX`].
        entries: &'a [(Pid, u32)],
    },
    /// Zeros filling the rest of a block: `len` bytes in all (header included).
    Pad {
        /// Total length, at least [`HEADER`].
        len: usize,
    },
}

/// A decoded record (owned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// See [`RecordRef::Put`]; `prev_lsn` None when too far back to record.
    Put {
        /// The leaf.
        pid: Pid,
        /// The leaf's LSN before the change, if recorded.
        prev_lsn: Option<u64>,
        /// Key.
        key: Vec<u8>,
        /// Value.
        value: Vec<u8>,
    },
    /// See [`RecordRef::Delete`].
    Delete {
        /// The leaf.
        pid: Pid,
        /// The leaf's LSN before the change, if recorded.
        prev_lsn: Option<u64>,
        /// Key.
        key: Vec<u8>,
    },
    /// See [`RecordRef::Smo`].
    Smo {
        /// New root.
        root: Pid,
        /// Allocation mark.
        next_pid: Pid,
        /// (pid, image).
        pages: Vec<(Pid, Vec<u8>)>,
    },
    /// See [`RecordRef::TxnCommit`].
    TxnCommit {
        /// (key, value or None for a delete).
        ops: Vec<TxnOp>,
    },
    /// See [`RecordRef::TxnDone`].
    TxnDone {
        /// LSN of the TxnCommit record.
        commit_lsn: u64,
    },
    /// See [`RecordRef::TxnWrite`]; `prev_lsn` None when too far back to record.
    TxnWrite {
        /// The leaf.
        pid: Pid,
        /// The leaf's LSN before the change, if recorded.
        prev_lsn: Option<u64>,
        /// LSN of the TxnCommit record.
        commit_lsn: u64,
        /// Index of the op in the TxnCommit.
        index: u32,
    },
    /// See [`RecordRef::Struct`].
    Struct {
        /// New root.
        root: Pid,
        /// Allocation mark.
        next_pid: Pid,
        /// The operations.
        ops: Vec<StructOp>,
    },
    /// See [`RecordRef::PageVersions`].
    PageVersions {
        /// (pid, low 32 bits of its LSN).
        entries: Vec<(Pid, u32)>,
    },
    /// See [`RecordRef::Pad`]: nothing to redo.
    Pad,
}

/// One write of a logged transaction: `value` None is a delete.
pub type TxnOp = (Vec<u8>, Option<Vec<u8>>);

/// A record header as read at its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Total length.
    pub len: u32,
    /// Stored checksum.
    pub crc: u32,
    /// LSN: the position the header was read at (not stored; see [`CHECK`]).
    pub lsn: u64,
    /// Stored position check.
    pub check: u32,
    /// Durable back-distance.
    pub durable_back: u32,
    /// Tag.
    pub tag: u8,
}

/// The [`CHECK`] word of a record of epoch `salt` at `lsn`.
#[must_use]
pub fn check_word(lsn: u64, salt: u32) -> u32 {
    u32_from_u64(lsn & u64::from(u32::MAX)) ^ salt
}

/// Does the header starting at `b[at..]` name position `lsn` of epoch `salt`?
#[must_use]
pub fn position_ok(b: &[u8], at: usize, lsn: u64, salt: u32) -> bool {
    b.len() >= at + CHECK.end() && rd_u32(b, at + CHECK.offset) == check_word(lsn, salt)
}

/// The checksum of the complete record `r` at `lsn` of epoch `salt` ([`CRC`]).
#[must_use]
pub fn record_crc(r: &[u8], lsn: u64, salt: u32) -> u32 {
    let mut seed = [0u8; 12];
    seed[..4].copy_from_slice(&salt.to_le_bytes());
    seed[4..].copy_from_slice(&lsn.to_le_bytes());
    crc32c::crc32c_append(crc32c::crc32c(&seed), &r[CHECK.offset..])
}

impl Header {
    /// Parse the first [`HEADER`] bytes of the record at `lsn`.
    #[must_use]
    pub fn decode(b: &[u8], lsn: u64) -> Header {
        Header {
            len: LEN.u32(b),
            crc: CRC.u32(b),
            lsn,
            check: CHECK.u32(b),
            durable_back: DURABLE_BACK.u32(b),
            tag: TAG.u8(b),
        }
    }

    /// The durable end of the log when this record was appended (a lower bound).
    #[must_use]
    pub fn durable_before(&self) -> u64 {
        self.lsn.saturating_sub(u64::from(self.durable_back))
    }
}

fn prev_back(lsn: u64, prev: u64) -> u32 {
    // A page's LSN is always below the LSN of a new change to it (asserted by the caller).
    if prev == 0 {
        UNKNOWN_PREV
    } else {
        u32_saturating(lsn - prev)
    }
}

/// Put / Delete back-distance to the leaf's previous LSN (0: unknown, i.e. LSN 0).
fn kv_back(lsn: u64, prev: u64) -> u64 {
    if prev == 0 {
        0
    } else {
        lsn.saturating_sub(prev)
    }
}

impl RecordRef<'_> {
    /// Tag byte.
    #[must_use]
    pub fn tag(&self) -> u8 {
        match self {
            RecordRef::Put { .. } => TAG_PUT,
            RecordRef::Delete { .. } => TAG_DELETE,
            RecordRef::Smo { .. } => TAG_SMO,
            RecordRef::TxnCommit { .. } => TAG_TXN_COMMIT,
            RecordRef::TxnDone { .. } => TAG_TXN_DONE,
            RecordRef::TxnWrite { .. } => TAG_TXN_WRITE,
            RecordRef::Struct { .. } => TAG_STRUCT,
            RecordRef::PageVersions { .. } => TAG_PAGE_VERSIONS,
            RecordRef::Pad { .. } => TAG_PAD,
        }
    }

    /// Encoded size (header + payload) at any LSN: an upper bound of
    /// [`Self::encoded_len_at`] (a Put's or Delete's back-distance varint grows with the LSN).
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        self.encoded_len_at(u64::MAX)
    }

    /// Encoded size (header + payload) at `lsn`.
    ///
    /// # Panics
    /// If a pad is shorter than a header.
    #[must_use]
    pub fn encoded_len_at(&self, lsn: u64) -> usize {
        HEADER
            + match self {
                RecordRef::Put {
                    pid,
                    prev_lsn,
                    key,
                    value,
                } => {
                    kv_head_len(*pid, kv_back(lsn, *prev_lsn), Some(key.len()))
                        + key.len()
                        + value.len()
                }
                RecordRef::Delete { pid, prev_lsn, key } => {
                    kv_head_len(*pid, kv_back(lsn, *prev_lsn), None) + key.len()
                }
                RecordRef::Smo { pages, .. } => SMO_PAGES.offset + pages.len() * SMO_PAGE,
                RecordRef::TxnCommit { ops } => {
                    TXN_OPS.offset
                        + ops
                            .iter()
                            .map(|(k, v)| OP_HDR + k.len() + v.map_or(0, <[u8]>::len))
                            .sum::<usize>()
                }
                RecordRef::TxnDone { .. } => TXN_DONE_FIELDS[0].size,
                RecordRef::TxnWrite { .. } => TXN_WRITE_LEN,
                RecordRef::Struct { ops, .. } => super::structop::payload_len(ops),
                RecordRef::PageVersions { entries } => PV_ENTRIES.offset + entries.len() * PV_ENTRY,
                RecordRef::Pad { len } => {
                    assert!(*len >= HEADER, "a pad of {len} bytes");
                    len - HEADER
                }
            }
    }

    /// The header of [`Self::encode`] (the CRC comes last, over the whole record).
    fn encode_header(&self, out: &mut [u8], lsn: u64, salt: u32, durable_end: u64) {
        assert_eq!(
            out.len(),
            self.encoded_len_at(lsn),
            "WAL record buffer size"
        );
        assert!(
            durable_end <= lsn,
            "durable end {durable_end} beyond the new record {lsn}"
        );
        LEN.put_u32(out, u32_of(out.len()));
        CHECK.put_u32(out, check_word(lsn, salt));
        DURABLE_BACK.put_u32(out, u32_saturating(lsn - durable_end));
        TAG.put_u8(out, self.tag());
    }

    /// Encode into `out` (exactly [`Self::encoded_len_at`] `lsn` bytes) at `lsn`.
    ///
    /// # Panics
    /// If `out` has the wrong size, a page image is not one block, or a page's previous LSN
    /// is not below `lsn` (LSN order: checked when written, and again by redo when read).
    pub fn encode(&self, out: &mut [u8], lsn: u64, salt: u32, durable_end: u64) {
        self.encode_header(out, lsn, salt, durable_end);
        let p = &mut out[HEADER..];
        match *self {
            RecordRef::Put {
                pid,
                prev_lsn,
                key,
                value,
            } => {
                assert!(
                    prev_lsn < lsn,
                    "page {pid}: LSN {prev_lsn} not below the put at {lsn}"
                );
                let o = encode_kv(p, pid, kv_back(lsn, prev_lsn), Some(key.len()));
                p[o..o + key.len()].copy_from_slice(key);
                p[o + key.len()..].copy_from_slice(value);
            }
            RecordRef::Delete { pid, prev_lsn, key } => {
                assert!(
                    prev_lsn < lsn,
                    "page {pid}: LSN {prev_lsn} not below the delete at {lsn}"
                );
                let o = encode_kv(p, pid, kv_back(lsn, prev_lsn), None);
                p[o..].copy_from_slice(key);
            }
            RecordRef::Smo {
                root,
                next_pid,
                pages,
            } => encode_smo(p, root, next_pid, pages, lsn),
            RecordRef::TxnCommit { ops } => encode_txn(p, ops),
            RecordRef::TxnDone { commit_lsn } => {
                assert!(
                    commit_lsn < lsn,
                    "TxnDone at {lsn} for a commit at {commit_lsn}"
                );
                TXN_DONE_LSN.put_u64(p, commit_lsn);
            }
            RecordRef::TxnWrite {
                pid,
                prev_lsn,
                commit_lsn,
                index,
            } => encode_txn_write(p, pid, (prev_lsn, commit_lsn, lsn), index),
            RecordRef::Struct {
                root,
                next_pid,
                ops,
            } => super::structop::encode(p, root, next_pid, ops, lsn),
            RecordRef::PageVersions { entries } => encode_versions(p, entries),
            RecordRef::Pad { .. } => p.fill(0),
        }
        CRC.put_u32(out, record_crc(out, lsn, salt));
        debug_assert!(
            decode_record(out, lsn, salt).is_ok(),
            "record at {lsn} does not decode"
        );
    }
}

/// Bytes of a Put's (with `key_len`) or a Delete's varints before the key.
fn kv_head_len(pid: Pid, back: u64, key_len: Option<usize>) -> usize {
    varint_len(pid) + varint_len(back) + key_len.map_or(0, |k| varint_len(u64_of(k)))
}

/// Write a Put's (with `key_len`) or a Delete's varints; returns where the key goes.
fn encode_kv(p: &mut [u8], pid: Pid, back: u64, key_len: Option<usize>) -> usize {
    let o = wr_varint(p, 0, pid);
    let o = wr_varint(p, o, back);
    key_len.map_or(o, |k| wr_varint(p, o, u64_of(k)))
}

/// A Put's or Delete's pid, previous LSN and where the rest begins; None if a varint is bad
/// or the back-distance reaches before LSN 1 (LSN 0 is no page's: it encodes "unknown").
fn decode_kv_head(p: &[u8], lsn: u64) -> Option<(Pid, Option<u64>, usize)> {
    let (pid, o) = rd_varint(p, 0)?;
    let (back, o) = rd_varint(p, o)?;
    if back >= lsn {
        return None;
    }
    Some((pid, (back != 0).then(|| lsn - back), o))
}

fn encode_txn_write(
    p: &mut [u8],
    pid: Pid,
    (prev_lsn, commit_lsn, lsn): (u64, u64, u64),
    index: u32,
) {
    assert!(
        prev_lsn < lsn && commit_lsn < lsn,
        "page {pid}: LSN {prev_lsn} or commit {commit_lsn} not below the write at {lsn}"
    );
    TW_PID.put_u64(p, pid);
    TW_PREV.put_u32(p, prev_back(lsn, prev_lsn));
    TW_COMMIT.put_u64(p, commit_lsn);
    TW_INDEX.put_u32(p, index);
}

fn encode_smo(p: &mut [u8], root: Pid, next_pid: Pid, pages: &[(Pid, &[u8])], lsn: u64) {
    SMO_ROOT.put_u64(p, root);
    SMO_NEXT_PID.put_u64(p, next_pid);
    SMO_N.put_u16(p, u16_of(pages.len()));
    for (i, (pid, img)) in pages.iter().enumerate() {
        assert_eq!(img.len(), BLOCK, "SMO page image size");
        let o = SMO_PAGES.offset + i * SMO_PAGE;
        wr_u64(p, o, *pid);
        p[o + 8..o + SMO_PAGE].copy_from_slice(img);
        let img_lsn = rd_u64(p, o + 8 + super::page::LSN.offset);
        assert!(
            img_lsn < lsn,
            "page {pid}: image LSN {img_lsn} not below the SMO at {lsn}"
        );
    }
}

fn encode_versions(p: &mut [u8], entries: &[(Pid, u32)]) {
    assert!(
        entries.len() <= PV_MAX,
        "{} page versions in one record",
        entries.len()
    );
    PV_N.put_u32(p, u32_of(entries.len()));
    for (i, (pid, v)) in entries.iter().enumerate() {
        let o = PV_ENTRIES.offset + i * PV_ENTRY;
        wr_u64(p, o, *pid);
        p[o + 8..o + PV_ENTRY].copy_from_slice(&v.to_le_bytes());
    }
}

fn decode_versions(p: &[u8]) -> Option<Record> {
    let n = usize::try_from(PV_N.u32(p)).ok()?;
    if n > PV_MAX || p.len() != PV_ENTRIES.offset + n * PV_ENTRY {
        return None;
    }
    let entries = (0..n)
        .map(|i| {
            let o = PV_ENTRIES.offset + i * PV_ENTRY;
            let v = u32::from_le_bytes([p[o + 8], p[o + 9], p[o + 10], p[o + 11]]);
            (rd_u64(p, o), v)
        })
        .collect();
    Some(Record::PageVersions { entries })
}

fn encode_txn(p: &mut [u8], ops: &[(&[u8], Option<&[u8]>)]) {
    TXN_N.put_u32(p, u32_of(ops.len()));
    let mut o = TXN_OPS.offset;
    for (k, v) in ops {
        p[o] = if v.is_some() { OP_PUT } else { OP_DELETE };
        let vl = v.map_or(0, <[u8]>::len);
        p[o + 1..o + 3].copy_from_slice(&u16_of(k.len()).to_le_bytes());
        p[o + 3..o + 5].copy_from_slice(&u16_of(vl).to_le_bytes());
        o += OP_HDR;
        p[o..o + k.len()].copy_from_slice(k);
        o += k.len();
        if let Some(v) = v {
            p[o..o + vl].copy_from_slice(v);
            o += vl;
        }
    }
    assert_eq!(o, p.len(), "TxnCommit payload size");
}

fn decode_txn(p: &[u8]) -> Option<Record> {
    let n = usize::try_from(TXN_N.u32(p)).ok()?;
    let mut ops = Vec::with_capacity(n.min(p.len() / OP_HDR));
    let mut o = TXN_OPS.offset;
    for _ in 0..n {
        let h = p.get(o..o + OP_HDR)?;
        let kl = usize::from(u16::from_le_bytes([h[1], h[2]]));
        let vl = usize::from(u16::from_le_bytes([h[3], h[4]]));
        let key = p.get(o + OP_HDR..o + OP_HDR + kl)?.to_vec();
        o += OP_HDR + kl;
        let value = match h[0] {
            OP_PUT => Some(p.get(o..o + vl)?.to_vec()),
            OP_DELETE if vl == 0 => None,
            _ => return None,
        };
        o += vl;
        ops.push((key, value));
    }
    (o == p.len()).then_some(Record::TxnCommit { ops })
}

impl Record {
    /// Decode the payload of a record with tag `tag` at `lsn`.
    ///
    /// # Errors
    /// `Payload { tag }` for an unknown tag or a payload of the wrong shape.
    pub fn decode(tag: u8, lsn: u64, p: &[u8]) -> Result<Record, RecordDamage> {
        let bad = RecordDamage::Payload { tag };
        match tag {
            TAG_PUT => {
                let (pid, prev_lsn, o) = decode_kv_head(p, lsn).ok_or(bad)?;
                let (kl, o) = rd_varint(p, o).ok_or(bad)?;
                let key = usize::try_from(kl)
                    .ok()
                    .and_then(|kl| p.get(o..o.checked_add(kl)?))
                    .ok_or(bad)?;
                Ok(Record::Put {
                    pid,
                    prev_lsn,
                    key: key.to_vec(),
                    value: p[o + key.len()..].to_vec(),
                })
            }
            TAG_DELETE => {
                let (pid, prev_lsn, o) = decode_kv_head(p, lsn).ok_or(bad)?;
                Ok(Record::Delete {
                    pid,
                    prev_lsn,
                    key: p[o..].to_vec(),
                })
            }
            TAG_SMO if p.len() >= SMO_PAGES.offset => decode_smo(p).ok_or(bad),
            TAG_TXN_COMMIT if p.len() >= TXN_OPS.offset => decode_txn(p).ok_or(bad),
            TAG_TXN_DONE if p.len() == TXN_DONE_LSN.size => Ok(Record::TxnDone {
                commit_lsn: TXN_DONE_LSN.u64(p),
            }),
            TAG_TXN_WRITE if p.len() == TXN_WRITE_LEN && TW_COMMIT.u64(p) < lsn => {
                Ok(Record::TxnWrite {
                    pid: TW_PID.u64(p),
                    prev_lsn: (TW_PREV.u32(p) != UNKNOWN_PREV)
                        .then(|| lsn.saturating_sub(u64::from(TW_PREV.u32(p)))),
                    commit_lsn: TW_COMMIT.u64(p),
                    index: TW_INDEX.u32(p),
                })
            }
            TAG_PAGE_VERSIONS if p.len() >= PV_ENTRIES.offset => decode_versions(p).ok_or(bad),
            TAG_PAD if p.len() < BLOCK && p.iter().all(|&b| b == 0) => Ok(Record::Pad),
            TAG_STRUCT => super::structop::decode(p)
                .map(|(root, next_pid, ops)| Record::Struct {
                    root,
                    next_pid,
                    ops,
                })
                .ok_or(bad),
            _ => Err(bad),
        }
    }
}

fn decode_smo(p: &[u8]) -> Option<Record> {
    let n = usize::from(SMO_N.u16(p));
    if p.len() != SMO_PAGES.offset + n * SMO_PAGE {
        return None;
    }
    let pages = (0..n)
        .map(|i| {
            let o = SMO_PAGES.offset + i * SMO_PAGE;
            (rd_u64(p, o), p[o + 8..o + SMO_PAGE].to_vec())
        })
        .collect();
    Some(Record::Smo {
        root: SMO_ROOT.u64(p),
        next_pid: SMO_NEXT_PID.u64(p),
        pages,
    })
}

/// Does the checksum of the complete record `r` match its header, at `lsn` of epoch `salt`?
#[must_use]
pub fn checksum_ok(r: &[u8], h: &Header, salt: u32) -> bool {
    record_crc(r, h.lsn, salt) == h.crc
}

/// Validate one complete record `r` as the record at `lsn` of epoch `salt`: its length
/// field (must be `r.len()`), position check and checksum, then the payload.
///
/// # Errors
/// `Length`, `Checksum` (a record of another position or epoch fails it too) or `Payload`.
pub fn decode_record(r: &[u8], lsn: u64, salt: u32) -> Result<(Header, Record), RecordDamage> {
    if r.len() < HEADER {
        return Err(RecordDamage::Length {
            len: u32_saturating(u64_of(r.len())),
        });
    }
    let h = Header::decode(r, lsn);
    if u64::from(h.len) != u64_of(r.len()) {
        return Err(RecordDamage::Length { len: h.len });
    }
    if h.check != check_word(lsn, salt) || !checksum_ok(r, &h, salt) {
        return Err(RecordDamage::Checksum);
    }
    let rec = Record::decode(h.tag, lsn, &r[HEADER..])?;
    Ok((h, rec))
}

/// Is `len` a plausible record length?
#[must_use]
pub fn length_ok(len: u32) -> bool {
    (u64_of(HEADER)..=u64_of(MAX_RECORD)).contains(&u64::from(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(r: RecordRef<'_>, lsn: u64) -> Record {
        let mut out = vec![0u8; r.encoded_len_at(lsn)];
        assert!(
            out.len() <= r.encoded_len(),
            "encoded_len bounds every LSN's size"
        );
        r.encode(&mut out, lsn, 7, lsn - 100);
        let (h, rec) = decode_record(&out, lsn, 7).unwrap();
        assert_eq!(
            (h.lsn, h.tag, h.durable_before()),
            (lsn, r.tag(), lsn - 100)
        );
        assert!(position_ok(&out, 0, lsn, 7));
        // Bytes cut short of the length field are no record.
        assert!(matches!(
            decode_record(&out[..out.len() - 1], lsn, 7),
            Err(RecordDamage::Length { .. })
        ));
        // The same bytes are no record of another position or epoch.
        for (at, salt) in [(lsn + 4096, 7), (lsn, 8), (lsn + (1 << 32), 7)] {
            assert_eq!(
                decode_record(&out, at, salt).unwrap_err(),
                RecordDamage::Checksum,
                "{at} {salt}"
            );
        }
        let last = out.len() - 1;
        out[last] ^= 1;
        assert_eq!(
            decode_record(&out, lsn, 7).unwrap_err(),
            RecordDamage::Checksum
        );
        rec
    }

    #[test]
    fn an_update_record_is_its_key_and_value_plus_24_bytes() {
        // pid < 2^21, previous LSN < 2^21 back, key < 128 bytes: 3 + 3 + 1 varint bytes.
        let put = RecordRef::Put {
            pid: 70_000,
            prev_lsn: (1 << 30) - 1_000_000,
            key: &[7; 8],
            value: &[9; 116],
        };
        assert_eq!(put.encoded_len_at(1 << 30), HEADER + 7 + 8 + 116);
        assert_eq!(put.encoded_len_at(1 << 30), 148, "format 5 wrote 165 bytes");
        let del = RecordRef::Delete {
            pid: 1,
            prev_lsn: 0,
            key: b"k",
        };
        assert_eq!(del.encoded_len_at(1 << 30), HEADER + 3);
    }

    #[test]
    fn a_pad_is_zeros_to_its_length() {
        assert_eq!(round_trip(RecordRef::Pad { len: 100 }, 10_000), Record::Pad);
        assert_eq!(
            round_trip(RecordRef::Pad { len: HEADER }, 10_000),
            Record::Pad
        );
        assert!(Record::decode(TAG_PAD, 1, &[0, 1]).is_err());
        assert!(Record::decode(TAG_PAD, 1, &[0; BLOCK]).is_err());
    }

    #[test]
    fn bad_update_payloads_are_errors() {
        // Key length past the end, back-distance reaching LSN 0 or before, bad varints.
        assert!(Record::decode(TAG_PUT, 100, &[1, 1, 5, b'k']).is_err());
        assert!(Record::decode(TAG_PUT, 100, &[1, 100, 0]).is_err());
        assert!(Record::decode(TAG_DELETE, 100, &[1, 101]).is_err());
        assert!(Record::decode(TAG_DELETE, 100, &[0x80]).is_err());
        assert!(Record::decode(TAG_PUT, 100, &[1, 0x80, 0, 0]).is_err());
        assert_eq!(
            Record::decode(TAG_PUT, 100, &[1, 99, 1, b'k', b'v']),
            Ok(Record::Put {
                pid: 1,
                prev_lsn: Some(1),
                key: b"k".to_vec(),
                value: b"v".to_vec()
            })
        );
    }

    #[test]
    fn put_delete_smo_round_trip() {
        let put = RecordRef::Put {
            pid: 5,
            prev_lsn: 9000,
            key: b"key",
            value: b"value",
        };
        assert_eq!(
            round_trip(put, 10_000),
            Record::Put {
                pid: 5,
                prev_lsn: Some(9000),
                key: b"key".to_vec(),
                value: b"value".to_vec()
            }
        );
        let del = RecordRef::Delete {
            pid: 6,
            prev_lsn: 0,
            key: b"k",
        };
        assert_eq!(
            round_trip(del, 10_000),
            Record::Delete {
                pid: 6,
                prev_lsn: None,
                key: b"k".to_vec()
            }
        );
        let img = vec![0u8; BLOCK];
        let pages = [(3, &img[..]), (4, &img[..])];
        let smo = RecordRef::Smo {
            root: 4,
            next_pid: 5,
            pages: &pages,
        };
        match round_trip(smo, 10_000) {
            Record::Smo {
                root,
                next_pid,
                pages,
            } => {
                assert_eq!((root, next_pid, pages.len()), (4, 5, 2));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn txn_commit_and_done_round_trip() {
        let ops: [(&[u8], Option<&[u8]>); 3] =
            [(b"a", Some(b"1")), (b"bb", None), (b"c", Some(b""))];
        let rec = round_trip(RecordRef::TxnCommit { ops: &ops }, 10_000);
        let want: Vec<TxnOp> = ops
            .iter()
            .map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec)))
            .collect();
        assert_eq!(rec, Record::TxnCommit { ops: want });
        let done = round_trip(RecordRef::TxnDone { commit_lsn: 9_000 }, 10_000);
        assert_eq!(done, Record::TxnDone { commit_lsn: 9_000 });
        let w = RecordRef::TxnWrite {
            pid: 12,
            prev_lsn: 9_500,
            commit_lsn: 9_000,
            index: 2,
        };
        assert_eq!(w.encoded_len(), HEADER + 24, "a write logs no key or value");
        assert_eq!(
            round_trip(w, 10_000),
            Record::TxnWrite {
                pid: 12,
                prev_lsn: Some(9_500),
                commit_lsn: 9_000,
                index: 2
            }
        );
        // A write naming a commit at or after itself is damage.
        let mut p = [0u8; 24];
        TW_COMMIT.put_u64(&mut p, 10_000);
        assert!(Record::decode(TAG_TXN_WRITE, 10_000, &p).is_err());
        assert!(Record::decode(TAG_TXN_WRITE, 10_000, &p[..20]).is_err());
        // A delete carrying a value, or ops past the end, are damage.
        assert!(
            Record::decode(TAG_TXN_COMMIT, 1, &[1, 0, 0, 0, 2, 1, 0, 1, 0, b'k', b'v']).is_err()
        );
        assert!(Record::decode(TAG_TXN_COMMIT, 1, &[2, 0, 0, 0, 1, 1, 0, 0, 0, b'k']).is_err());
    }

    #[test]
    fn unknown_tag_and_bad_shapes_are_errors() {
        assert!(Record::decode(99, 1, &[0; 40]).is_err());
        assert!(Record::decode(TAG_PUT, 1, &[0x80; 3]).is_err());
        assert!(Record::decode(TAG_SMO, 1, &[0; 20]).is_err());
    }
}
