//! Keys, values and operations, all drawn from the seed's stream.

use crate::setup::{Rng, Workload};
use rand::RngExt;

/// One operation of the workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Upsert; `sync`: acknowledged once durable.
    Put {
        /// Key.
        key: Vec<u8>,
        /// Value.
        value: Vec<u8>,
        /// `Durability::Sync`.
        sync: bool,
    },
    /// Delete; `sync` as for `Put`.
    Delete {
        /// Key.
        key: Vec<u8>,
        /// `Durability::Sync`.
        sync: bool,
    },
    /// Point read.
    Get {
        /// Key.
        key: Vec<u8>,
    },
    /// Range read: `start <= key < end`, at most `limit` pairs.
    Scan {
        /// First key.
        start: Vec<u8>,
        /// Bound (exclusive), None = unbounded.
        end: Option<Vec<u8>>,
        /// Most pairs.
        limit: usize,
    },
    /// `Engine::sync` (durability point).
    Sync,
    /// `Engine::checkpoint` (durability point).
    Checkpoint,
    /// One background DB GC pass on the harness's thread (out of place).
    BackgroundGc,
}

impl Op {
    /// A small code for the trace hash.
    #[must_use]
    pub fn code(&self) -> u64 {
        match self {
            Op::Put { sync, .. } => 1 + u64::from(*sync),
            Op::Delete { sync, .. } => 3 + u64::from(*sync),
            Op::Get { .. } => 5,
            Op::Scan { .. } => 6,
            Op::Sync => 7,
            Op::Checkpoint => 8,
            Op::BackgroundGc => 9,
        }
    }
}

/// The key of id `id`: its 4 bytes big endian, then a filler whose length depends on the id.
///
/// # Panics
/// If `id` does not fit 32 bits.
#[must_use]
pub fn key(w: &Workload, id: u64) -> Vec<u8> {
    let id32 = u32::try_from(id).expect("key ids fit 32 bits");
    let h = nowa_units::mix64(id);
    let extra = usize::try_from(h % u64::try_from(w.max_key - 3).expect("small")).expect("small");
    let mut k = id32.to_be_bytes().to_vec();
    k.extend((0..extra).map(|i| b'a' + u8::try_from((h >> (i % 60)) % 26).expect("< 26")));
    assert!(k.len() <= w.max_key && k.len() >= 4, "key length in bounds");
    k
}

/// A fresh value: its length drawn up to the largest, text or random bytes, and (when long
/// enough) the serial number `n` in its first 8 bytes, so no two writes look alike.
pub fn value(w: &Workload, r: &mut Rng, n: u64) -> Vec<u8> {
    let len = r.random_range(0..=w.max_value);
    let text = r.random_range(0..100) < w.text_pct;
    let mut v: Vec<u8> = if text {
        (0..len)
            .map(|i| b"nowa vopr "[i % 10] ^ u8::from(i % 97 == 0))
            .collect()
    } else {
        (0..len).map(|_| r.random()).collect()
    };
    if len >= 8 {
        v[..8].copy_from_slice(&n.to_le_bytes());
    }
    v
}

/// Draw the next operation. `bg_pct`: percent of background GC passes (0 in place).
pub fn draw(w: &Workload, r: &mut Rng, bg_pct: u32, n: u64) -> Op {
    if bg_pct > 0 && r.random_range(0..100) < bg_pct {
        return Op::BackgroundGc;
    }
    let id = r.random_range(0..w.keys);
    let sync = r.random_range(0..100) < w.sync_pct;
    let roll = r.random_range(0..100);
    let [put, del, get, scan] = w.mix;
    if roll < put {
        let value = value(w, r, n);
        Op::Put {
            key: key(w, id),
            value,
            sync,
        }
    } else if roll < put + del {
        Op::Delete {
            key: key(w, id),
            sync,
        }
    } else if roll < put + del + get {
        Op::Get { key: key(w, id) }
    } else if roll < put + del + get + scan {
        let end = r
            .random_bool(0.7)
            .then(|| key(w, (id + r.random_range(1..=64)).min(w.keys)));
        Op::Scan {
            start: key(w, id),
            end,
            limit: r.random_range(1..=100),
        }
    } else if r.random_range(0..3) == 0 {
        Op::Checkpoint
    } else {
        Op::Sync
    }
}
