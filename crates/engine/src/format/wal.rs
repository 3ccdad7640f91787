//! WAL records, encoded and decoded here and nowhere else. Byte tables: docs/design.md
//! section 4. The log is a sequence of units, each a header (length, checksum, position
//! check, durable back-distance, tag) and a body: a group (tag 5) holds the entries one
//! group flush appended (at most [`GROUP_BYTES`] of them; one header and one checksum for
//! all), a pad (tag 4) fills the rest of a block. An entry is a varint length, a type tag
//! and a typed payload (`RecordRef` to append, `Record` decoded); its LSN is its position.
//! A Put or Delete stores its key as the bytes it shares with the previous Put or Delete
//! key of its group plus the rest. New record types get a new tag and a new variant.

use super::structop::StructOp;
use super::{rd_u32, rd_u64, rd_varint, varint_len, wr_u64, wr_varint, Field, BLOCK, VAR};

use crate::error::{Pid, RecordDamage};
use crate::num::{u16_of, u32_from_u64, u32_of, u32_saturating, u64_of};

/// Total length of the unit (header + body); 0 marks the end of the log.
pub const LEN: Field = Field::new(0, 4, "length");
/// crc32c of the log epoch's salt and the unit's LSN (8 bytes, neither stored), then of
/// bytes [8, length): a unit copied to another position or left by another epoch fails it.
pub const CRC: Field = Field::new(4, 4, "crc32c");
/// Low 32 bits of the unit's LSN xor the salt of the log epoch. The LSN is the unit's
/// position in the stream and is not stored: this word tells a unit of this epoch at
/// this position from the bytes another lap or epoch left there, before the checksum.
pub const CHECK: Field = Field::new(8, 4, "position check");
/// LSN minus the durable end of the log when the unit was begun (saturating): every byte
/// before `lsn - durable_back` was durable before this unit existed.
pub const DURABLE_BACK: Field = Field::new(12, 4, "durable back-distance");
/// Unit tag: [`TAG_GROUP`] or [`TAG_PAD`].
pub const TAG: Field = Field::new(16, 1, "type");
/// Body: a group's entries, or a pad's zeros.
pub const PAYLOAD: Field = Field::new(17, VAR, "body");

/// The record header's fields, in order.
pub const HEADER_FIELDS: &[Field] = &[LEN, CRC, CHECK, DURABLE_BACK, TAG, PAYLOAD];
/// Header size.
pub const HEADER: usize = PAYLOAD.offset;
/// Largest unit accepted by the scanner.
pub const MAX_RECORD: usize = 1 << 20;
/// A group is sealed before an entry would take it past this many bytes (header included):
/// one checksum per group flush up to this size. A larger entry is a group of its own.
pub const GROUP_BYTES: u64 = 64 << 10;
/// Bytes of an entry before its payload, at most: the varint length (at most 3 bytes for
/// a unit of at most [`MAX_RECORD`]) and the tag.
pub const ENTRY_HEAD_MAX: usize = 4;
/// Largest entry payload (a group of one entry stays within [`MAX_RECORD`]).
pub const MAX_PAYLOAD: usize = MAX_RECORD - HEADER - ENTRY_HEAD_MAX;

/// Group body: entries back to back, each `varint n | tag | payload (n - 1 bytes)`.
pub const GROUP_BODY: Field = Field::new(0, VAR, "entries: varint length, tag, payload");
/// Group body fields.
pub const GROUP_FIELDS: &[Field] = &[GROUP_BODY];

/// Put: varint leaf pid, varint previous-LSN back-distance (entry LSN minus the leaf's
/// LSN before the change; 0: unknown), varint shared (bytes the key shares with the
/// previous Put or Delete key of the group; 0 for the first), varint suffix length, the
/// key's remaining bytes, then the value (its length is the rest of the payload).
pub const PUT_BODY: Field = Field::new(
    0,
    VAR,
    "pid, prev back, shared, suffix length (varints); suffix; value",
);
/// Delete: varint leaf pid, varint previous-LSN back-distance (as Put), varint shared (as
/// Put), then the key's remaining bytes (the rest of the payload).
pub const DELETE_BODY: Field = Field::new(0, VAR, "pid, prev back, shared (varints); suffix");
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
const _: () = assert!(super::well_formed(GROUP_FIELDS, BLOCK));
const _: () = assert!(GROUP_BYTES <= MAX_RECORD as u64);
const _: () = assert!(varint_len(MAX_RECORD as u64) < ENTRY_HEAD_MAX);
const _: () = assert!(super::well_formed(PUT_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(DELETE_FIELDS, BLOCK));
const _: () = assert!(super::well_formed(SMO_FIELDS, BLOCK));
const _: () = assert!(HEADER == 17 && SMO_PAGES.offset + 8 + BLOCK < MAX_RECORD);

/// Entry type tags.
pub const TAG_PUT: u8 = 1;
/// Delete.
pub const TAG_DELETE: u8 = 2;
/// Structure modification (page images; read for old logs, no longer written).
pub const TAG_SMO: u8 = 3;
/// Unit tag: padding to the end of a block (zeros), appended by a group flush so the next
/// group starts on a fresh block instead of rewriting this one.
pub const TAG_PAD: u8 = 4;
/// Unit tag: a group of entries.
pub const TAG_GROUP: u8 = 5;
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
pub const PV_MAX: usize = (MAX_PAYLOAD - PV_ENTRIES.offset) / PV_ENTRY;
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
    /// A pad unit ([`encode_pad`]): nothing to redo.
    Pad,
}

/// One write of a logged transaction: `value` None is a delete.
pub type TxnOp = (Vec<u8>, Option<Vec<u8>>);

/// A unit header as read at its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Total length.
    pub len: u32,
    /// Stored checksum.
    pub crc: u32,
    /// LSN of the unit: the position the header was read at (not stored; see [`CHECK`]).
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

/// The checksum of the complete unit `r` at `lsn` of epoch `salt` ([`CRC`]).
#[must_use]
pub fn record_crc(r: &[u8], lsn: u64, salt: u32) -> u32 {
    let mut seed = [0u8; 12];
    seed[..4].copy_from_slice(&salt.to_le_bytes());
    seed[4..].copy_from_slice(&lsn.to_le_bytes());
    crc32c::crc32c_append(crc32c::crc32c(&seed), &r[CHECK.offset..])
}

impl Header {
    /// Parse the first [`HEADER`] bytes of the unit at `lsn`.
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

    /// The durable end of the log when this unit was begun (a lower bound).
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
    /// Type tag of the entry.
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
        }
    }

    /// The key a Put or Delete stores (the next entry of its group shares its prefix).
    #[must_use]
    pub fn key(&self) -> Option<&[u8]> {
        match self {
            RecordRef::Put { key, .. } | RecordRef::Delete { key, .. } => Some(key),
            _ => None,
        }
    }

    /// Log bytes the record takes at most, wherever it is appended: an entry at any LSN
    /// after any key, in a group of its own (header included).
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        HEADER + self.entry_len_at(u64::MAX, &[])
    }

    /// Encoded size of the entry (length, tag, payload) at `lsn`, after a Put or Delete of
    /// key `prev_key` in its group (empty: none).
    #[must_use]
    pub fn entry_len_at(&self, lsn: u64, prev_key: &[u8]) -> usize {
        let n = 1 + self.payload_len_at(lsn, prev_key);
        varint_len(u64_of(n)) + n
    }

    fn payload_len_at(&self, lsn: u64, prev_key: &[u8]) -> usize {
        match self {
            RecordRef::Put {
                pid,
                prev_lsn,
                key,
                value,
            } => {
                let shared = shared_len(prev_key, key);
                let suffix = key.len() - shared;
                kv_head_len(*pid, kv_back(lsn, *prev_lsn), shared)
                    + varint_len(u64_of(suffix))
                    + suffix
                    + value.len()
            }
            RecordRef::Delete { pid, prev_lsn, key } => {
                let shared = shared_len(prev_key, key);
                kv_head_len(*pid, kv_back(lsn, *prev_lsn), shared) + key.len() - shared
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
        }
    }

    /// Encode the entry into `out` (exactly [`Self::entry_len_at`] bytes) at `lsn`, after a
    /// Put or Delete of `prev_key` in its group.
    ///
    /// # Panics
    /// If `out` has the wrong size, the payload is larger than [`MAX_PAYLOAD`], a page
    /// image is not one block, or a page's previous LSN is not below `lsn` (LSN order:
    /// checked when written, and again by redo when read).
    pub fn encode_entry(&self, out: &mut [u8], lsn: u64, prev_key: &[u8]) {
        let n = 1 + self.payload_len_at(lsn, prev_key);
        assert!(n <= MAX_PAYLOAD + 1, "WAL entry payload of {n} bytes");
        assert_eq!(
            out.len(),
            varint_len(u64_of(n)) + n,
            "WAL entry buffer size"
        );
        let o = wr_varint(out, 0, u64_of(n));
        out[o] = self.tag();
        self.encode_payload(&mut out[o + 1..], lsn, prev_key);
        debug_assert_eq!(
            Record::decode(self.tag(), lsn, &out[o + 1..], prev_key).map(|_| ()),
            Ok(()),
            "entry at {lsn} does not decode"
        );
    }

    fn encode_payload(&self, p: &mut [u8], lsn: u64, prev_key: &[u8]) {
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
                let shared = shared_len(prev_key, key);
                let o = encode_kv(p, pid, kv_back(lsn, prev_lsn), shared);
                let o = wr_varint(p, o, u64_of(key.len() - shared));
                let v = o + key.len() - shared;
                p[o..v].copy_from_slice(&key[shared..]);
                p[v..].copy_from_slice(value);
            }
            RecordRef::Delete { pid, prev_lsn, key } => {
                assert!(
                    prev_lsn < lsn,
                    "page {pid}: LSN {prev_lsn} not below the delete at {lsn}"
                );
                let shared = shared_len(prev_key, key);
                let o = encode_kv(p, pid, kv_back(lsn, prev_lsn), shared);
                p[o..].copy_from_slice(&key[shared..]);
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
        }
    }
}

/// Write a unit header's position check, durable back-distance and tag for a unit at `lsn`
/// of epoch `salt` (the length and checksum are written by [`seal_unit`]).
fn begin_unit(out: &mut [u8], tag: u8, lsn: u64, salt: u32, durable_end: u64) {
    assert!(
        durable_end <= lsn,
        "durable end {durable_end} beyond the new unit {lsn}"
    );
    LEN.put_u32(out, 0);
    CRC.put_u32(out, 0);
    CHECK.put_u32(out, check_word(lsn, salt));
    DURABLE_BACK.put_u32(out, u32_saturating(lsn - durable_end));
    TAG.put_u8(out, tag);
}

/// Begin a group at `lsn` of epoch `salt` in `out` ([`HEADER`] bytes, the entries follow):
/// the log was durable below `durable_end`. [`seal_unit`] finishes it.
///
/// # Panics
/// If `durable_end` lies past `lsn`.
pub fn begin_group(out: &mut [u8], lsn: u64, salt: u32, durable_end: u64) {
    begin_unit(&mut out[..HEADER], TAG_GROUP, lsn, salt, durable_end);
}

/// Write the length and checksum of the complete unit `u` at `lsn` of epoch `salt`.
///
/// # Panics
/// If the unit is shorter than a header or longer than [`MAX_RECORD`], or its position
/// check names another LSN.
pub fn seal_unit(u: &mut [u8], lsn: u64, salt: u32) {
    assert!(
        (HEADER..=MAX_RECORD).contains(&u.len()),
        "WAL unit of {} bytes at {lsn}",
        u.len()
    );
    assert_eq!(CHECK.u32(u), check_word(lsn, salt), "unit sealed at {lsn}");
    LEN.put_u32(u, u32_of(u.len()));
    CRC.put_u32(u, record_crc(u, lsn, salt));
    debug_assert!(
        decode_unit(u, lsn, salt).is_ok(),
        "unit at {lsn} does not decode"
    );
}

/// A whole group of `recs` at `lsn` of epoch `salt` (durable below `durable_end`), as the
/// WAL appends it entry by entry (`crate::wal::Wal::append`): for tests and tools.
///
/// # Panics
/// As [`begin_group`], [`RecordRef::encode_entry`] and [`seal_unit`].
#[must_use]
pub fn encode_group(recs: &[RecordRef<'_>], lsn: u64, salt: u32, durable_end: u64) -> Vec<u8> {
    let mut out = vec![0u8; HEADER];
    begin_group(&mut out, lsn, salt, durable_end);
    let mut prev: &[u8] = &[];
    for r in recs {
        let (o, at) = (out.len(), lsn + u64_of(out.len()));
        out.resize(o + r.entry_len_at(at, prev), 0);
        r.encode_entry(&mut out[o..], at, prev);
        prev = r.key().unwrap_or(prev);
    }
    seal_unit(&mut out, lsn, salt);
    out
}

/// A pad unit of `out.len()` bytes (at least [`HEADER`], less than a block: the rest of
/// one) at `lsn`.
///
/// # Panics
/// If the pad is shorter than a header or not shorter than a block.
pub fn encode_pad(out: &mut [u8], lsn: u64, salt: u32, durable_end: u64) {
    assert!(
        (HEADER..BLOCK).contains(&out.len()),
        "a pad of {} bytes",
        out.len()
    );
    begin_unit(out, TAG_PAD, lsn, salt, durable_end);
    out[HEADER..].fill(0);
    seal_unit(out, lsn, salt);
}

/// Bytes `key` shares with the front of `prev`.
fn shared_len(prev: &[u8], key: &[u8]) -> usize {
    prev.iter().zip(key).take_while(|(a, b)| a == b).count()
}

/// Bytes of the varints a Put or Delete starts with (pid, back-distance, shared).
fn kv_head_len(pid: Pid, back: u64, shared: usize) -> usize {
    varint_len(pid) + varint_len(back) + varint_len(u64_of(shared))
}

/// Write a Put's or Delete's leading varints; returns where the next field goes.
fn encode_kv(p: &mut [u8], pid: Pid, back: u64, shared: usize) -> usize {
    let o = wr_varint(p, 0, pid);
    let o = wr_varint(p, o, back);
    wr_varint(p, o, u64_of(shared))
}

/// A Put's or Delete's pid, previous LSN, the key bytes shared with `prev_key` and where
/// the rest begins; None if a varint is bad, the back-distance reaches before LSN 1 (LSN 0
/// is no page's: it encodes "unknown") or more bytes are shared than `prev_key` has.
fn decode_kv_head<'k>(
    p: &[u8],
    lsn: u64,
    prev_key: &'k [u8],
) -> Option<(Pid, Option<u64>, &'k [u8], usize)> {
    let (pid, o) = rd_varint(p, 0)?;
    let (back, o) = rd_varint(p, o)?;
    let (shared, o) = rd_varint(p, o)?;
    if back >= lsn {
        return None;
    }
    let shared = prev_key.get(..usize::try_from(shared).ok()?)?;
    Some((pid, (back != 0).then(|| lsn - back), shared, o))
}

/// The key of `shared` (a prefix of the previous key) and `suffix`, if `shared` is exactly
/// the prefix the two keys have in common (one encoding per key).
fn join_key(prev_key: &[u8], shared: &[u8], suffix: &[u8]) -> Option<Vec<u8>> {
    let key = [shared, suffix].concat();
    (shared_len(prev_key, &key) == shared.len()).then_some(key)
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
    /// Decode the payload of an entry with tag `tag` at `lsn`, after a Put or Delete of
    /// `prev_key` in its group (empty: none).
    ///
    /// # Errors
    /// `Payload { tag }` for an unknown tag or a payload of the wrong shape.
    pub fn decode(tag: u8, lsn: u64, p: &[u8], prev_key: &[u8]) -> Result<Record, RecordDamage> {
        let bad = RecordDamage::Payload { tag };
        match tag {
            TAG_PUT => {
                let (pid, prev_lsn, shared, o) = decode_kv_head(p, lsn, prev_key).ok_or(bad)?;
                let (sl, o) = rd_varint(p, o).ok_or(bad)?;
                let suffix = usize::try_from(sl)
                    .ok()
                    .and_then(|sl| p.get(o..o.checked_add(sl)?))
                    .ok_or(bad)?;
                Ok(Record::Put {
                    pid,
                    prev_lsn,
                    key: join_key(prev_key, shared, suffix).ok_or(bad)?,
                    value: p[o + suffix.len()..].to_vec(),
                })
            }
            TAG_DELETE => {
                let (pid, prev_lsn, shared, o) = decode_kv_head(p, lsn, prev_key).ok_or(bad)?;
                Ok(Record::Delete {
                    pid,
                    prev_lsn,
                    key: join_key(prev_key, shared, &p[o..]).ok_or(bad)?,
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

/// Does the checksum of the complete unit `r` match its header, at `lsn` of epoch `salt`?
#[must_use]
pub fn checksum_ok(r: &[u8], h: &Header, salt: u32) -> bool {
    record_crc(r, h.lsn, salt) == h.crc
}

/// Validate one complete unit `r` as the unit at `lsn` of epoch `salt`: its length field
/// (must be `r.len()`), position check and checksum, then its body: a pad's zeros (one
/// `Record::Pad` at `lsn`) or a group's entries, each with its LSN.
///
/// # Errors
/// `Length`, `Checksum` (a unit of another position or epoch fails it too), `Payload` (an
/// unknown unit tag, a pad that is not zeros, a group without entries) or `Entry`.
pub fn decode_unit(
    r: &[u8],
    lsn: u64,
    salt: u32,
) -> Result<(Header, Vec<(u64, Record)>), RecordDamage> {
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
    let body = &r[HEADER..];
    match h.tag {
        TAG_GROUP => Ok((h, decode_entries(body, lsn + u64_of(HEADER))?)),
        TAG_PAD if body.len() < BLOCK && body.iter().all(|&b| b == 0) => {
            Ok((h, vec![(lsn, Record::Pad)]))
        }
        tag => Err(RecordDamage::Payload { tag }),
    }
}

/// The entries of a group body `p` whose first byte is at `lsn`: each with its LSN.
///
/// # Errors
/// `Entry { offset, tag }` for the first entry whose length runs past the body or is 0
/// (tag 0 then) or whose payload does not decode; `Payload` for an empty body.
pub fn decode_entries(p: &[u8], lsn: u64) -> Result<Vec<(u64, Record)>, RecordDamage> {
    let mut out = Vec::new();
    let mut key: Vec<u8> = Vec::new();
    let mut o = 0usize;
    while o < p.len() {
        let bad = |tag| RecordDamage::Entry {
            offset: u32_saturating(u64_of(o)),
            tag,
        };
        let (n, b) = rd_varint(p, o).ok_or(bad(0))?;
        let end = usize::try_from(n)
            .ok()
            .filter(|&n| n >= 1)
            .and_then(|n| b.checked_add(n))
            .filter(|&e| e <= p.len())
            .ok_or(bad(0))?;
        let (tag, at) = (p[b], lsn + u64_of(o));
        let rec = Record::decode(tag, at, &p[b + 1..end], &key).map_err(|_| bad(tag))?;
        if let Record::Put { key: k, .. } | Record::Delete { key: k, .. } = &rec {
            key.clone_from(k);
        }
        out.push((at, rec));
        o = end;
    }
    if out.is_empty() {
        return Err(RecordDamage::Payload { tag: TAG_GROUP });
    }
    Ok(out)
}

/// Is `len` a plausible unit length?
#[must_use]
pub fn length_ok(len: u32) -> bool {
    (u64_of(HEADER)..=u64_of(MAX_RECORD)).contains(&u64::from(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SALT: u32 = 7;

    /// A group at `lsn` holding `recs` (durable end `lsn - 100`), checking that
    /// [`RecordRef::encoded_len`] bounds every entry.
    fn group(recs: &[RecordRef<'_>], lsn: u64) -> Vec<u8> {
        let mut prev: &[u8] = &[];
        for r in recs {
            assert!(HEADER + r.entry_len_at(lsn + 17, prev) <= r.encoded_len());
            prev = r.key().unwrap_or(prev);
        }
        encode_group(recs, lsn, SALT, lsn - 100)
    }

    fn round_trip(recs: &[RecordRef<'_>], lsn: u64) -> Vec<Record> {
        let mut out = group(recs, lsn);
        let (h, got) = decode_unit(&out, lsn, SALT).unwrap();
        assert_eq!(
            (h.lsn, h.tag, h.durable_before()),
            (lsn, TAG_GROUP, lsn - 100)
        );
        assert!(position_ok(&out, 0, lsn, SALT));
        assert_eq!(got.len(), recs.len());
        assert_eq!(
            got[0].0,
            lsn + u64_of(HEADER),
            "the first entry follows the header"
        );
        // Bytes cut short of the length field are no unit.
        assert!(matches!(
            decode_unit(&out[..out.len() - 1], lsn, SALT),
            Err(RecordDamage::Length { .. })
        ));
        // The same bytes are no unit of another position or epoch.
        for (at, salt) in [(lsn + 4096, SALT), (lsn, 8), (lsn + (1 << 32), SALT)] {
            assert_eq!(
                decode_unit(&out, at, salt).unwrap_err(),
                RecordDamage::Checksum,
                "{at} {salt}"
            );
        }
        let last = out.len() - 1;
        out[last] ^= 1;
        assert_eq!(
            decode_unit(&out, lsn, SALT).unwrap_err(),
            RecordDamage::Checksum
        );
        got.into_iter().map(|(_, r)| r).collect()
    }

    fn update(pid: Pid, key: &[u8]) -> RecordRef<'_> {
        RecordRef::Put {
            pid,
            prev_lsn: (1 << 30) - 1_000_000,
            key,
            value: &[9; 116],
        }
    }

    #[test]
    fn an_update_entry_is_its_value_and_the_key_bytes_it_does_not_share_plus_9() {
        // Entry length 2, tag 1, pid < 2^21 and previous LSN < 2^21 back 3 + 3, shared 1,
        // suffix length 1: an 8-byte key sharing 5 bytes with the previous one (YCSB keys
        // of records below 2^24) takes 3. Format 6: 148 bytes (a 17-byte header per record).
        let (a, b) = (7u64.to_be_bytes(), 70_000u64.to_be_bytes());
        let put = update(70_000, &b);
        assert_eq!(
            put.entry_len_at(1 << 30, &a),
            2 + 1 + 3 + 3 + 1 + 1 + 3 + 116
        );
        assert_eq!(
            put.entry_len_at(1 << 30, &a),
            130,
            "format 6 wrote 148 bytes"
        );
        assert_eq!(
            put.entry_len_at(1 << 30, &[]),
            135,
            "the first of a group: all 8"
        );
        assert_eq!(put.encoded_len(), HEADER + 2 + 1 + 3 + 10 + 1 + 1 + 8 + 116);
        let del = RecordRef::Delete {
            pid: 1,
            prev_lsn: 0,
            key: b"k",
        };
        assert_eq!(del.entry_len_at(1 << 30, &[]), 1 + 1 + 3 + 1);
    }

    #[test]
    fn keys_share_prefixes_with_the_previous_update_of_their_group() {
        let keys: [&[u8]; 5] = [b"user0001", b"user0002", b"user", b"", b"user0002x"];
        let recs: Vec<RecordRef<'_>> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| {
                if i == 3 {
                    RecordRef::Delete {
                        pid: 4,
                        prev_lsn: 0,
                        key: k,
                    }
                } else {
                    update(3, k)
                }
            })
            .collect();
        let got = round_trip(&recs, 1 << 30);
        let back: Vec<&[u8]> = got
            .iter()
            .map(|r| match r {
                Record::Put { key, .. } | Record::Delete { key, .. } => &key[..],
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(back, keys);
        // A shared count that is not the common prefix (one encoding per key), or longer
        // than the previous key, is damage.
        let mut p = vec![1, 0, 3, 1, b'r'];
        assert!(Record::decode(TAG_PUT, 100, &p, b"user").is_err());
        assert!(Record::decode(TAG_PUT, 100, &p, b"use").is_ok());
        p[2] = 4;
        assert!(Record::decode(TAG_PUT, 100, &p, b"use").is_err());
    }

    #[test]
    fn a_pad_is_zeros_to_its_length() {
        for len in [HEADER, 100, BLOCK - 1] {
            let mut out = vec![1u8; len];
            encode_pad(&mut out, 10_000, SALT, 9_000);
            let (h, recs) = decode_unit(&out, 10_000, SALT).unwrap();
            assert_eq!((h.tag, recs), (TAG_PAD, vec![(10_000, Record::Pad)]));
        }
        // Tag 4 is no entry.
        assert!(Record::decode(TAG_PAD, 1, &[0, 0], &[]).is_err());
    }

    #[test]
    fn bad_groups_are_typed_errors() {
        let mut empty = vec![0u8; HEADER];
        begin_group(&mut empty, 10_000, SALT, 0);
        seal_unit_unchecked(&mut empty, 10_000);
        assert_eq!(
            decode_unit(&empty, 10_000, SALT).unwrap_err(),
            RecordDamage::Payload { tag: TAG_GROUP }
        );
        // Entry lengths of 0 or past the body, an unknown entry tag.
        for (body, offset, tag) in [
            (&[0u8][..], 0, 0),
            (&[3, TAG_TXN_DONE, 0][..], 0, 0),
            (&[1, 99][..], 0, 99),
            (
                &[9, TAG_TXN_DONE, 1, 0, 0, 0, 0, 0, 0, 0, 1, 99][..],
                10,
                99,
            ),
        ] {
            assert_eq!(
                decode_entries(body, 10_000),
                Err(RecordDamage::Entry { offset, tag }),
                "{body:?}"
            );
        }
        // Unknown unit tags.
        let mut u = group(&[RecordRef::TxnDone { commit_lsn: 1 }], 10_000);
        TAG.put_u8(&mut u, TAG_PUT);
        seal_unit_unchecked(&mut u, 10_000);
        assert_eq!(
            decode_unit(&u, 10_000, SALT).unwrap_err(),
            RecordDamage::Payload { tag: TAG_PUT }
        );
    }

    /// Length and checksum of `u` without the decode check of [`seal_unit`].
    fn seal_unit_unchecked(u: &mut [u8], lsn: u64) {
        LEN.put_u32(u, u32_of(u.len()));
        CRC.put_u32(u, record_crc(u, lsn, SALT));
    }

    #[test]
    fn bad_update_payloads_are_errors() {
        // Key length past the end, back-distance reaching LSN 0 or before, bad varints.
        assert!(Record::decode(TAG_PUT, 100, &[1, 1, 0, 5, b'k'], &[]).is_err());
        assert!(Record::decode(TAG_PUT, 100, &[1, 100, 0, 0], &[]).is_err());
        assert!(Record::decode(TAG_DELETE, 100, &[1, 101, 0], &[]).is_err());
        assert!(Record::decode(TAG_DELETE, 100, &[0x80], &[]).is_err());
        assert!(Record::decode(TAG_PUT, 100, &[1, 0x80, 0, 0, 0], &[]).is_err());
        assert_eq!(
            Record::decode(TAG_PUT, 100, &[1, 99, 0, 1, b'k', b'v'], &[]),
            Ok(Record::Put {
                pid: 1,
                prev_lsn: Some(1),
                key: b"k".to_vec(),
                value: b"v".to_vec()
            })
        );
    }

    #[test]
    fn every_record_kind_round_trips_in_one_group() {
        let img = vec![0u8; BLOCK];
        let pages = [(3, &img[..]), (4, &img[..])];
        let ops: [(&[u8], Option<&[u8]>); 3] =
            [(b"a", Some(b"1")), (b"bb", None), (b"c", Some(b""))];
        let versions = [(5u64, 77u32)];
        let recs = [
            RecordRef::Put {
                pid: 5,
                prev_lsn: 9000,
                key: b"key",
                value: b"value",
            },
            RecordRef::Delete {
                pid: 6,
                prev_lsn: 0,
                key: b"k",
            },
            RecordRef::Smo {
                root: 4,
                next_pid: 5,
                pages: &pages,
            },
            RecordRef::TxnCommit { ops: &ops },
            RecordRef::TxnDone { commit_lsn: 9_000 },
            RecordRef::TxnWrite {
                pid: 12,
                prev_lsn: 9_500,
                commit_lsn: 9_000,
                index: 2,
            },
            RecordRef::PageVersions { entries: &versions },
        ];
        let got = round_trip(&recs, 10_000);
        let txn: Vec<TxnOp> = ops
            .iter()
            .map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec)))
            .collect();
        assert_eq!(
            got[0],
            Record::Put {
                pid: 5,
                prev_lsn: Some(9000),
                key: b"key".to_vec(),
                value: b"value".to_vec()
            }
        );
        assert_eq!(
            got[1],
            Record::Delete {
                pid: 6,
                prev_lsn: None,
                key: b"k".to_vec()
            }
        );
        assert!(matches!(&got[2], Record::Smo { root: 4, next_pid: 5, pages } if pages.len() == 2));
        assert_eq!(got[3], Record::TxnCommit { ops: txn });
        assert_eq!(got[4], Record::TxnDone { commit_lsn: 9_000 });
        assert!(matches!(
            got[5],
            Record::TxnWrite {
                pid: 12,
                prev_lsn: Some(9_500),
                commit_lsn: 9_000,
                index: 2
            }
        ));
        assert_eq!(
            got[6],
            Record::PageVersions {
                entries: versions.to_vec()
            }
        );
        let w = RecordRef::TxnWrite {
            pid: 12,
            prev_lsn: 9_500,
            commit_lsn: 9_000,
            index: 2,
        };
        assert_eq!(
            w.entry_len_at(10_000, &[]),
            2 + 24,
            "a write logs no key or value"
        );
    }

    #[test]
    fn bad_txn_payloads_are_errors() {
        // A write naming a commit at or after itself is damage.
        let mut p = [0u8; 24];
        TW_COMMIT.put_u64(&mut p, 10_000);
        assert!(Record::decode(TAG_TXN_WRITE, 10_000, &p, &[]).is_err());
        assert!(Record::decode(TAG_TXN_WRITE, 10_000, &p[..20], &[]).is_err());
        // A delete carrying a value, or ops past the end, are damage.
        let put_del = [1, 0, 0, 0, 2, 1, 0, 1, 0, b'k', b'v'];
        assert!(Record::decode(TAG_TXN_COMMIT, 1, &put_del, &[]).is_err());
        let past = [2, 0, 0, 0, 1, 1, 0, 0, 0, b'k'];
        assert!(Record::decode(TAG_TXN_COMMIT, 1, &past, &[]).is_err());
    }

    #[test]
    fn unknown_tag_and_bad_shapes_are_errors() {
        assert!(Record::decode(99, 1, &[0; 40], &[]).is_err());
        assert!(Record::decode(TAG_PUT, 1, &[0x80; 3], &[]).is_err());
        assert!(Record::decode(TAG_SMO, 1, &[0; 20], &[]).is_err());
    }
}
