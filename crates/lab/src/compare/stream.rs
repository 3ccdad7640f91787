//! The one operation stream every engine of a comparison runs: generated once from the seed,
//! before any engine starts, so each engine gets exactly the same keys, values and
//! transaction boundaries.

use super::Workload;
use nowa_bench::ycsb::{make_value, Mix, ValueKind};
use nowa_workload::{Uniform, WorkloadError, Zipfian};

/// Zipf exponent of YCSB's request distribution (its default `zipfian` constant).
pub const YCSB_THETA: f64 = 0.99;
/// District rows of tpcc-lite (one warehouse).
pub const DISTRICTS: u64 = 10;

/// What one operation does to the one table `t(k, v)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Read row `k` (it exists: every engine must find it).
    Read,
    /// Overwrite row `k`'s value.
    Update,
    /// Insert the new row `k`.
    Insert,
}

/// One operation: what, which key, which version of the key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// What it does.
    pub kind: Kind,
    /// The row's key.
    pub key: u64,
    /// The value's version (0: the loaded value).
    pub ver: u32,
}

/// The stream: the rows loaded first, then transactions (YCSB: one operation each).
#[derive(Debug, Clone)]
pub struct Stream {
    /// Rows loaded before the measured phase: keys 0..loaded.
    pub loaded: u64,
    /// Bytes per value.
    pub value_size: usize,
    /// Seed of the values.
    pub seed: u64,
    /// The measured phase, transaction by transaction.
    pub txns: Vec<Vec<Op>>,
}

impl Stream {
    /// Generates the stream of `workload` over `records` rows: `ops` operations (YCSB) or
    /// transactions (tpcc-lite).
    ///
    /// # Errors
    /// The key generators refuse the parameters (no records).
    ///
    /// # Panics
    /// If a generator made a different number of transactions than asked (a bug).
    pub fn generate(
        workload: Workload,
        records: u64,
        ops: u64,
        value_size: usize,
        seed: u64,
    ) -> Result<Stream, WorkloadError> {
        let txns = match workload {
            Workload::YcsbA => ycsb(Mix::A, records, ops, seed)?,
            Workload::YcsbW => ycsb(Mix::W, records, ops, seed)?,
            Workload::TpccLite => tpcc_lite(records, ops, seed)?,
        };
        let loaded = match workload {
            Workload::TpccLite => records + DISTRICTS,
            _ => records,
        };
        assert_eq!(txns.len() as u64, ops, "one transaction per requested op");
        assert!(loaded >= records, "every record is loaded");
        assert!(
            txns.iter().all(|t| !t.is_empty()),
            "a transaction does something"
        );
        Ok(Stream {
            loaded,
            value_size,
            seed,
            txns,
        })
    }

    /// Operations in the measured phase (over all transactions).
    #[must_use]
    pub fn op_count(&self) -> u64 {
        self.txns.iter().map(|t| t.len() as u64).sum()
    }

    /// Reads in the measured phase (each must find its row).
    #[must_use]
    pub fn read_count(&self) -> u64 {
        let reads = self.txns.iter().flatten();
        reads.filter(|o| o.kind == Kind::Read).count() as u64
    }

    /// The value of row `key` at version `ver`: random (incompressible) bytes from the seed,
    /// carrying nothing an engine could exploit, the same for every engine.
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    #[must_use]
    pub fn value(&self, key: u64, ver: u32) -> Vec<u8> {
        assert!(self.value_size > 0, "values have bytes");
        let mut v = vec![0u8; self.value_size];
        let mut rng = self.seed ^ key.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(ver) << 40;
        make_value(&mut v, ValueKind::Random, key, u64::from(ver), &mut rng);
        assert_eq!(v.len(), self.value_size, "a whole value");
        v
    }
}

/// The next version of `key`: versions count per key so every update writes a new value.
fn bump(vers: &mut std::collections::HashMap<u64, u32>, key: u64) -> u32 {
    let v = vers.entry(key).or_insert(0);
    *v += 1;
    assert!(
        *v > 0,
        "version 0 is the loaded value; updates count from 1"
    );
    *v
}

/// YCSB `mix` with Zipf(0.99) keys scattered over the records (YCSB's scrambled zipfian).
fn ycsb(mix: Mix, records: u64, ops: u64, seed: u64) -> Result<Vec<Vec<Op>>, WorkloadError> {
    let mut keys = Zipfian::new(records, YCSB_THETA, seed)?;
    let mut coin = seed ^ 0xC0FF_EE00;
    let mut vers = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(usize::try_from(ops).unwrap_or(0));
    for _ in 0..ops {
        let key = keys.next_write();
        assert!(key < records, "a key of a loaded record");
        let read = nowa_units::splitmix64(&mut coin) % 100 < mix.read_pct();
        let op = if read {
            Op {
                kind: Kind::Read,
                key,
                ver: 0,
            }
        } else {
            Op {
                kind: Kind::Update,
                key,
                ver: bump(&mut vers, key),
            }
        };
        assert!(
            op.kind == Kind::Read || op.ver > 0,
            "an update writes a new version"
        );
        out.push(vec![op]);
    }
    assert_eq!(out.len() as u64, ops, "one operation per transaction");
    Ok(out)
}

/// tpcc-lite: TPC-C's new-order transaction on one key-value table. Rows 0..records are the
/// stock, rows records..records+10 the district counters, new orders are appended above them.
/// Each transaction reads and updates one district row, inserts one order row, and reads and
/// updates 5 to 15 stock rows (uniform, as TPC-C's order lines without NURand).
fn tpcc_lite(records: u64, txns: u64, seed: u64) -> Result<Vec<Vec<Op>>, WorkloadError> {
    let mut stock = Uniform::new(records, seed)?;
    let mut district = Uniform::new(DISTRICTS, seed ^ 0xD15)?;
    let mut lines = Uniform::new(11, seed ^ 0x11E5)?;
    let mut vers = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(usize::try_from(txns).unwrap_or(0));
    for next_order in (records + DISTRICTS..).take(usize::try_from(txns).unwrap_or(usize::MAX)) {
        let d = records + district.next_write();
        assert!(d < records + DISTRICTS, "a district row");
        let mut t = vec![
            Op {
                kind: Kind::Read,
                key: d,
                ver: 0,
            },
            Op {
                kind: Kind::Update,
                key: d,
                ver: bump(&mut vers, d),
            },
            Op {
                kind: Kind::Insert,
                key: next_order,
                ver: 0,
            },
        ];
        for _ in 0..5 + lines.next_write() {
            let s = stock.next_write();
            assert!(s < records, "a stock row");
            t.push(Op {
                kind: Kind::Read,
                key: s,
                ver: 0,
            });
            t.push(Op {
                kind: Kind::Update,
                key: s,
                ver: bump(&mut vers, s),
            });
        }
        assert!(
            (13..=33).contains(&t.len()),
            "3 ops + 5..15 order lines x 2"
        );
        out.push(t);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_stream_and_another_seed_another() {
        let a = Stream::generate(Workload::YcsbA, 1000, 500, 32, 7).expect("stream");
        let b = Stream::generate(Workload::YcsbA, 1000, 500, 32, 7).expect("stream");
        let c = Stream::generate(Workload::YcsbA, 1000, 500, 32, 8).expect("stream");
        assert_eq!(a.txns, b.txns);
        assert_ne!(a.txns, c.txns);
        assert_eq!(a.value(3, 1), b.value(3, 1));
        assert_ne!(a.value(3, 1), a.value(3, 2), "a new version is a new value");
        // YCSB-A: about half reads.
        let reads = a.read_count();
        assert!((200..300).contains(&reads), "{reads} reads of 500");
    }

    #[test]
    fn ycsb_w_only_updates_and_tpcc_lite_inserts_new_orders() {
        let w = Stream::generate(Workload::YcsbW, 100, 300, 16, 1).expect("stream");
        assert_eq!(w.read_count(), 0);
        assert_eq!(w.op_count(), 300);
        let t = Stream::generate(Workload::TpccLite, 100, 50, 16, 1).expect("stream");
        assert_eq!(t.loaded, 110);
        let inserts: Vec<u64> = t
            .txns
            .iter()
            .flatten()
            .filter(|o| o.kind == Kind::Insert)
            .map(|o| o.key)
            .collect();
        assert_eq!(inserts, (110..160).collect::<Vec<_>>());
        for txn in &t.txns {
            assert!((13..=33).contains(&txn.len()), "{} ops", txn.len());
        }
    }
}
