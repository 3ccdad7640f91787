//! Logical structure-change records (tag [`super::wal::TAG_STRUCT`]): a split, a page freed,
//! a root collapsed, as a list of small page operations instead of page images. Encoded and
//! decoded here; applied to a page by [`crate::page::apply_struct_op`] (the same function
//! runs in normal operation and in redo, so both produce the same logical page). Byte
//! tables: docs/design.md section 4.

use super::{rd_u16, rd_u64, wr_u16, wr_u64, Field, BLOCK, VAR};
use crate::error::Pid;
use crate::num::u16_of;

/// Struct: new root.
pub const ROOT: Field = Field::new(0, 8, "root");
/// Struct: allocation mark.
pub const NEXT_PID: Field = Field::new(8, 8, "next pid");
/// Struct: operation count n.
pub const N: Field = Field::new(16, 2, "op count");
/// Struct: n operations.
pub const OPS: Field = Field::new(18, VAR, "ops");
/// Struct payload fields.
pub const FIELDS: &[Field] = &[ROOT, NEXT_PID, N, OPS];

/// Operation: kind ([`OP_BUILD_LEAF`]..[`OP_FREE`]).
pub const OP_KIND: Field = Field::new(0, 1, "op kind");
/// Operation: the page.
pub const OP_PID: Field = Field::new(1, 8, "pid");
/// Operation: the page's LSN before the change (0: the operation creates the page).
pub const OP_PREV: Field = Field::new(9, 8, "prev lsn");
/// Operation: body (per kind).
pub const OP_BODY: Field = Field::new(17, VAR, "body");
/// Operation header fields.
pub const OP_FIELDS: &[Field] = &[OP_KIND, OP_PID, OP_PREV, OP_BODY];

const _: () = assert!(super::well_formed(FIELDS, BLOCK));
const _: () = assert!(super::well_formed(OP_FIELDS, BLOCK));

/// Build a leaf: link u64 | count u16 | count x (klen u16 | vlen u16 | key | value).
pub const OP_BUILD_LEAF: u8 = 1;
/// Build an inner node: leftmost u64 | count u16 | count x (klen u16 | child u64 | key).
pub const OP_BUILD_INNER: u8 = 2;
/// Leaf keeps its keys below the separator, link := new right sibling: link u64 | klen u16 | key.
pub const OP_TRUNCATE: u8 = 3;
/// Inner insert: child u64 | klen u16 | key.
pub const OP_INSERT: u8 = 4;
/// Inner remove of the entry pointing to child (the leftmost: the first entry's child
/// becomes leftmost): child u64.
pub const OP_REMOVE: u8 = 5;
/// Leaf link := link u64.
pub const OP_LINK: u8 = 6;
/// The page leaves the tree (it becomes an empty leaf on the free list): no body.
pub const OP_FREE: u8 = 7;

/// One page operation of a structure change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StructOp {
    /// Rebuild `pid` as a leaf with these entries and right sibling `link`.
    BuildLeaf {
        /// Page.
        pid: Pid,
        /// Page LSN before (0: created).
        prev: u64,
        /// Right sibling.
        link: u64,
        /// Sorted entries.
        entries: Vec<(Vec<u8>, Vec<u8>)>,
    },
    /// Rebuild `pid` as an inner node.
    BuildInner {
        /// Page.
        pid: Pid,
        /// Page LSN before (0: created).
        prev: u64,
        /// Leftmost child.
        leftmost: Pid,
        /// Sorted (separator, child).
        entries: Vec<(Vec<u8>, Pid)>,
    },
    /// Leaf `pid` keeps the keys below `sep`; its link becomes `link`.
    Truncate {
        /// Page.
        pid: Pid,
        /// Page LSN before.
        prev: u64,
        /// Separator (first key moved out).
        sep: Vec<u8>,
        /// New right sibling.
        link: u64,
    },
    /// Insert `key -> child` into inner `pid`.
    Insert {
        /// Page.
        pid: Pid,
        /// Page LSN before.
        prev: u64,
        /// Separator.
        key: Vec<u8>,
        /// Child.
        child: Pid,
    },
    /// Remove the pointer to `child` from inner `pid`.
    Remove {
        /// Page.
        pid: Pid,
        /// Page LSN before.
        prev: u64,
        /// Child removed.
        child: Pid,
    },
    /// Set the right-sibling link of leaf `pid`.
    Link {
        /// Page.
        pid: Pid,
        /// Page LSN before.
        prev: u64,
        /// New link.
        link: u64,
    },
    /// `pid` leaves the tree (empty leaf or childless inner node).
    Free {
        /// Page.
        pid: Pid,
        /// Page LSN before.
        prev: u64,
    },
}

impl StructOp {
    /// (kind, pid, prev).
    #[must_use]
    pub fn head(&self) -> (u8, Pid, u64) {
        match self {
            StructOp::BuildLeaf { pid, prev, .. } => (OP_BUILD_LEAF, *pid, *prev),
            StructOp::BuildInner { pid, prev, .. } => (OP_BUILD_INNER, *pid, *prev),
            StructOp::Truncate { pid, prev, .. } => (OP_TRUNCATE, *pid, *prev),
            StructOp::Insert { pid, prev, .. } => (OP_INSERT, *pid, *prev),
            StructOp::Remove { pid, prev, .. } => (OP_REMOVE, *pid, *prev),
            StructOp::Link { pid, prev, .. } => (OP_LINK, *pid, *prev),
            StructOp::Free { pid, prev } => (OP_FREE, *pid, *prev),
        }
    }

    /// Encoded size.
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        OP_BODY.offset
            + match self {
                StructOp::BuildLeaf { entries, .. } => {
                    10 + entries
                        .iter()
                        .map(|(k, v)| 4 + k.len() + v.len())
                        .sum::<usize>()
                }
                StructOp::BuildInner { entries, .. } => {
                    10 + entries.iter().map(|(k, _)| 10 + k.len()).sum::<usize>()
                }
                StructOp::Truncate { sep: key, .. } | StructOp::Insert { key, .. } => {
                    10 + key.len()
                }
                StructOp::Remove { .. } | StructOp::Link { .. } => 8,
                StructOp::Free { .. } => 0,
            }
    }

    /// Encode into `out` (exactly [`Self::encoded_len`] bytes).
    ///
    /// # Panics
    /// If `out` has another size, or a key, value or entry count exceeds 16 bits.
    pub fn encode(&self, out: &mut [u8]) {
        assert_eq!(out.len(), self.encoded_len(), "struct op buffer size");
        let (kind, pid, prev) = self.head();
        OP_KIND.put_u8(out, kind);
        OP_PID.put_u64(out, pid);
        OP_PREV.put_u64(out, prev);
        let b = &mut out[OP_BODY.offset..];
        match self {
            StructOp::BuildLeaf { link, entries, .. } => {
                wr_u64(b, 0, *link);
                wr_u16(b, 8, u16_of(entries.len()));
                let mut o = 10;
                for (k, v) in entries {
                    wr_u16(b, o, u16_of(k.len()));
                    wr_u16(b, o + 2, u16_of(v.len()));
                    b[o + 4..o + 4 + k.len()].copy_from_slice(k);
                    b[o + 4 + k.len()..o + 4 + k.len() + v.len()].copy_from_slice(v);
                    o += 4 + k.len() + v.len();
                }
            }
            StructOp::BuildInner {
                leftmost, entries, ..
            } => {
                wr_u64(b, 0, *leftmost);
                wr_u16(b, 8, u16_of(entries.len()));
                let mut o = 10;
                for (k, c) in entries {
                    wr_u16(b, o, u16_of(k.len()));
                    wr_u64(b, o + 2, *c);
                    b[o + 10..o + 10 + k.len()].copy_from_slice(k);
                    o += 10 + k.len();
                }
            }
            StructOp::Truncate {
                sep: key, link: x, ..
            }
            | StructOp::Insert { key, child: x, .. } => {
                wr_u64(b, 0, *x);
                wr_u16(b, 8, u16_of(key.len()));
                b[10..].copy_from_slice(key);
            }
            StructOp::Remove { child: x, .. } | StructOp::Link { link: x, .. } => wr_u64(b, 0, *x),
            StructOp::Free { .. } => {}
        }
    }

    /// Decode one operation from the front of `b`: (op, bytes used). None if malformed.
    #[must_use]
    pub fn decode(b: &[u8]) -> Option<(StructOp, usize)> {
        if b.len() < OP_BODY.offset {
            return None;
        }
        let (kind, pid, prev) = (OP_KIND.u8(b), OP_PID.u64(b), OP_PREV.u64(b));
        let body = &b[OP_BODY.offset..];
        let (op, used) = match kind {
            OP_BUILD_LEAF | OP_BUILD_INNER => decode_build(kind, pid, prev, body)?,
            OP_TRUNCATE | OP_INSERT => {
                let x = get_u64(body, 0)?;
                let kl = usize::from(get_u16(body, 8)?);
                let key = body.get(10..10 + kl)?.to_vec();
                let op = if kind == OP_TRUNCATE {
                    StructOp::Truncate {
                        pid,
                        prev,
                        sep: key,
                        link: x,
                    }
                } else {
                    StructOp::Insert {
                        pid,
                        prev,
                        key,
                        child: x,
                    }
                };
                (op, 10 + kl)
            }
            OP_REMOVE => {
                let child = get_u64(body, 0)?;
                (StructOp::Remove { pid, prev, child }, 8)
            }
            OP_LINK => {
                let link = get_u64(body, 0)?;
                (StructOp::Link { pid, prev, link }, 8)
            }
            OP_FREE => (StructOp::Free { pid, prev }, 0),
            _ => return None,
        };
        Some((op, OP_BODY.offset + used))
    }
}

fn get_u64(b: &[u8], at: usize) -> Option<u64> {
    (b.len() >= at + 8).then(|| rd_u64(b, at))
}

fn get_u16(b: &[u8], at: usize) -> Option<u16> {
    (b.len() >= at + 2).then(|| rd_u16(b, at))
}

fn decode_build(kind: u8, pid: Pid, prev: u64, b: &[u8]) -> Option<(StructOp, usize)> {
    let link = get_u64(b, 0)?;
    let n = usize::from(get_u16(b, 8)?);
    let mut o = 10;
    if kind == OP_BUILD_LEAF {
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            let kl = usize::from(get_u16(b, o)?);
            let vl = usize::from(get_u16(b, o + 2)?);
            let k = b.get(o + 4..o + 4 + kl)?.to_vec();
            let v = b.get(o + 4 + kl..o + 4 + kl + vl)?.to_vec();
            entries.push((k, v));
            o += 4 + kl + vl;
        }
        let op = StructOp::BuildLeaf {
            pid,
            prev,
            link,
            entries,
        };
        return Some((op, o));
    }
    let mut entries = Vec::with_capacity(n);
    for _ in 0..n {
        let kl = usize::from(get_u16(b, o)?);
        let c = get_u64(b, o + 2)?;
        entries.push((b.get(o + 10..o + 10 + kl)?.to_vec(), c));
        o += 10 + kl;
    }
    let op = StructOp::BuildInner {
        pid,
        prev,
        leftmost: link,
        entries,
    };
    Some((op, o))
}

/// Encoded payload size of a Struct record with `ops`.
#[must_use]
pub fn payload_len(ops: &[StructOp]) -> usize {
    OPS.offset + ops.iter().map(StructOp::encoded_len).sum::<usize>()
}

/// Encode a Struct payload into `p` (exactly [`payload_len`] bytes). Every operation's
/// previous page LSN must be below `lsn` (asserted: checked again by redo when read).
///
/// # Panics
/// If `p` has another size or the LSN order does not hold.
pub fn encode(p: &mut [u8], root: Pid, next_pid: Pid, ops: &[StructOp], lsn: u64) {
    assert_eq!(p.len(), payload_len(ops), "struct payload size");
    ROOT.put_u64(p, root);
    NEXT_PID.put_u64(p, next_pid);
    N.put_u16(p, u16_of(ops.len()));
    let mut o = OPS.offset;
    for op in ops {
        let (_, pid, prev) = op.head();
        assert!(
            prev < lsn,
            "page {pid}: LSN {prev} not below the structure change at {lsn}"
        );
        let n = op.encoded_len();
        op.encode(&mut p[o..o + n]);
        o += n;
    }
}

/// Decode a Struct payload: (root, next pid, ops). None if malformed.
#[must_use]
pub fn decode(p: &[u8]) -> Option<(Pid, Pid, Vec<StructOp>)> {
    if p.len() < OPS.offset {
        return None;
    }
    let n = usize::from(N.u16(p));
    let mut ops = Vec::with_capacity(n);
    let mut o = OPS.offset;
    for _ in 0..n {
        let (op, used) = StructOp::decode(&p[o..])?;
        ops.push(op);
        o += used;
    }
    (o == p.len()).then(|| (ROOT.u64(p), NEXT_PID.u64(p), ops))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_round_trips_and_truncations_are_refused() {
        let ops = vec![
            StructOp::BuildLeaf {
                pid: 3,
                prev: 0,
                link: 9,
                entries: vec![(b"a".to_vec(), b"xyz".to_vec()), (b"b".to_vec(), vec![])],
            },
            StructOp::BuildInner {
                pid: 4,
                prev: 77,
                leftmost: 1,
                entries: vec![(b"m".to_vec(), 2)],
            },
            StructOp::Truncate {
                pid: 5,
                prev: 10,
                sep: b"k".to_vec(),
                link: 3,
            },
            StructOp::Insert {
                pid: 6,
                prev: 11,
                key: b"q".to_vec(),
                child: 8,
            },
            StructOp::Remove {
                pid: 6,
                prev: 12,
                child: 8,
            },
            StructOp::Link {
                pid: 7,
                prev: 13,
                link: u64::MAX,
            },
            StructOp::Free { pid: 8, prev: 14 },
        ];
        let mut p = vec![0u8; payload_len(&ops)];
        encode(&mut p, 4, 10, &ops, 100);
        assert_eq!(decode(&p), Some((4, 10, ops)));
        for cut in 0..p.len() {
            assert_eq!(decode(&p[..cut]), None, "cut at {cut}");
        }
    }
}
