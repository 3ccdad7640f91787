//! Transactions over named tables (docs/design.md, "Tables and transactions"): optimistic
//! concurrency control with backward validation.
//!
//! - Reads go to the tree (latest committed state) unless the transaction wrote the key: its
//!   own writes are kept in a private, ordered write set and merged into gets and scans.
//! - Every read from the tree is remembered: each get with the value it returned, each scan
//!   with its bounds, direction, how many rows it fetched and the rows themselves.
//! - `commit` takes the engine's commit lock (shared for a read-only transaction, exclusive
//!   otherwise), re-reads everything and compares: any difference (a changed value, a row that
//!   appeared in or vanished from a scanned range: phantoms included) fails the commit with
//!   [`EngineError::Conflict`] and nothing is applied. Otherwise the write set is logged as one
//!   group and applied while the lock is still held (`Engine::commit_group`). Every committed
//!   transaction therefore behaves as if it ran alone at its validation point: serializable.
//! - `abort` (or dropping the transaction) drops the write set: nothing was applied.
//!
//! The unprefixed `Engine::put`/`delete` bypass validation: a database used with transactions
//! writes its named tables through transactions only.

use crate::catalog::TableId;
use crate::db::{Durability, Engine, LeafSeen};
use crate::error::{EngineError, Result};
use crate::page::{Entry, MAX_KEY, MAX_KV};
use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hasher};
use std::time::Instant;

/// Direction of a transactional range scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanDir {
    /// Ascending keys from the smallest key `>= start`.
    Forward,
    /// Descending keys from the greatest key `< end`.
    Reverse,
}

/// One scan of the tree, remembered for validation: its bounds and what it saw (row count and
/// a 64-bit hash of the rows).
struct ScanRead {
    start: Vec<u8>,
    end: Vec<u8>,
    dir: ScanDir,
    fetch: usize,
    seen: (usize, u64),
    /// The leaves visited; None when one was empty (then only the rows can validate it).
    leaves: Option<Vec<LeafSeen>>,
}

/// One get from the tree, remembered for validation: the key, the hash of what it returned,
/// and the leaf it read (None: an empty leaf).
struct Read {
    key: Vec<u8>,
    hash: Option<u64>,
    leaf: Option<LeafSeen>,
}

/// Hash of a value read (None: absent).
fn value_hash(v: Option<&[u8]>) -> Option<u64> {
    v.map(|v| {
        let mut h = DefaultHasher::new();
        h.write(v);
        h.finish()
    })
}

/// An open transaction (see the module documentation). Dropping it aborts it.
pub struct Txn<'e> {
    eng: &'e Engine,
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    reads: Vec<Read>,
    scans: Vec<ScanRead>,
}

impl Engine {
    /// Start a transaction.
    #[must_use]
    pub fn begin(&self) -> Txn<'_> {
        Txn {
            eng: self,
            writes: BTreeMap::new(),
            reads: Vec::new(),
            scans: Vec::new(),
        }
    }
}

fn check_size(key: &[u8], value: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY || key.len() + value.len() > MAX_KV {
        return Err(EngineError::TooLarge {
            key_len: key.len(),
            value_len: value.len(),
        });
    }
    Ok(())
}

impl Txn<'_> {
    /// The value under `key` in `table`: the transaction's own write if any, else the tree's.
    ///
    /// # Errors
    /// `UnknownTable`, read errors.
    pub fn get(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.eng.check_table(table)?;
        let k = table.key(key);
        if let Some(v) = self.writes.get(&k) {
            return Ok(v.clone());
        }
        let (v, hash, leaf) = self
            .eng
            .get_seen(&k, |v, l| (v.map(<[u8]>::to_vec), value_hash(v), l))?;
        self.reads.push(Read { key: k, hash, leaf });
        Ok(v)
    }

    /// Upsert `key -> value` in `table` (applied at commit).
    ///
    /// # Errors
    /// `UnknownTable`, `TooLarge` (the table prefix counts towards the key limit).
    pub fn put(&mut self, table: TableId, key: &[u8], value: &[u8]) -> Result<()> {
        self.eng.check_table(table)?;
        let k = table.key(key);
        check_size(&k, value)?;
        self.writes.insert(k, Some(value.to_vec()));
        Ok(())
    }

    /// Delete `key` from `table` (applied at commit); returns whether it existed.
    ///
    /// # Errors
    /// `UnknownTable`, read errors.
    pub fn delete(&mut self, table: TableId, key: &[u8]) -> Result<bool> {
        self.eng.check_table(table)?;
        let k = table.key(key);
        let existed = match self.writes.get(&k) {
            Some(w) => w.is_some(),
            None => {
                let (hash, leaf) = self.eng.get_seen(&k, |v, l| (value_hash(v), l))?;
                self.reads.push(Read {
                    key: k.clone(),
                    hash,
                    leaf,
                });
                hash.is_some()
            }
        };
        self.writes.insert(k, None);
        Ok(existed)
    }

    /// Up to `limit` rows of `table` with `start <= key < end` (`end` None: to the end of the
    /// table), in `dir` order, the transaction's own writes included.
    ///
    /// # Errors
    /// `UnknownTable`, read errors.
    ///
    /// # Panics
    /// If the merge returns more than `limit` rows (a bug).
    pub fn scan(
        &mut self,
        table: TableId,
        start: &[u8],
        end: Option<&[u8]>,
        dir: ScanDir,
        limit: usize,
    ) -> Result<Vec<Entry>> {
        self.eng.check_table(table)?;
        let s = table.key(start);
        let e = end.map_or_else(|| table.end(), |e| table.key(e));
        if limit == 0 || s >= e {
            return Ok(Vec::new());
        }
        // Each own write displaces at most one tree row: `limit + writes` tree rows decide
        // the first `limit` merged rows.
        let own = self.writes.range(s.clone()..e.clone()).count();
        let fetch = limit.saturating_add(own);
        let mut rows: Vec<Entry> = Vec::new();
        let strip = |k: &[u8]| k[crate::catalog::PREFIX_LEN..].to_vec();
        let mut leaves = Some(Vec::new());
        let seen = fetch_rows(self.eng, (&s, &e, dir), fetch, &mut leaves, |k, v| {
            rows.push((if own == 0 { strip(k) } else { k.to_vec() }, v.to_vec()));
        })?;
        let out = if own == 0 {
            rows
        } else {
            let mut merged: BTreeMap<Vec<u8>, Option<Vec<u8>>> =
                rows.into_iter().map(|(k, v)| (k, Some(v))).collect();
            for (k, v) in self.writes.range(s.clone()..e.clone()) {
                merged.insert(k.clone(), v.clone());
            }
            let live = |(k, v): (Vec<u8>, Option<Vec<u8>>)| v.map(|v| (strip(&k), v));
            match dir {
                ScanDir::Forward => merged.into_iter().filter_map(live).take(limit).collect(),
                ScanDir::Reverse => merged
                    .into_iter()
                    .rev()
                    .filter_map(live)
                    .take(limit)
                    .collect(),
            }
        };
        assert!(out.len() <= limit, "a scan returned more than its limit");
        self.scans.push(ScanRead {
            start: s,
            end: e,
            dir,
            fetch,
            seen,
            leaves,
        });
        Ok(out)
    }

    /// Does every read still see what it saw? (Under the commit lock.) A read whose leaves
    /// are all unchanged (same LSN) is valid without walking the tree again; otherwise it
    /// is read again and compared.
    fn valid(&self) -> Result<bool> {
        for r in &self.reads {
            if let Some(l) = r.leaf {
                if self.eng.leaf_unchanged(l)? {
                    continue;
                }
            }
            if self.eng.get_with(&r.key, value_hash)? != r.hash {
                return Ok(false);
            }
        }
        for s in &self.scans {
            if let Some(ls) = &s.leaves {
                if self.all_unchanged(ls)? {
                    continue;
                }
            }
            let again = fetch_rows(
                self.eng,
                (&s.start, &s.end, s.dir),
                s.fetch,
                &mut None,
                |_, _| {},
            )?;
            if again != s.seen {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn all_unchanged(&self, leaves: &[LeafSeen]) -> Result<bool> {
        assert!(!leaves.is_empty(), "a scan visits at least one leaf");
        for &l in leaves {
            if !self.eng.leaf_unchanged(l)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Check the reads so far without committing (an optimistic transaction may have read an
    /// inconsistent state; a caller that finds something impossible asks this).
    ///
    /// # Errors
    /// `Conflict` if a read changed; read errors.
    pub fn validate(&self) -> Result<()> {
        let _g = self.eng.commit_lock().read();
        if self.valid()? {
            Ok(())
        } else {
            Err(EngineError::Conflict)
        }
    }

    /// Commit with the engine's configured durability.
    ///
    /// # Errors
    /// As [`Self::commit_with`].
    pub fn commit(self) -> Result<()> {
        let d = self.eng.config().durability;
        self.commit_with(d)
    }

    /// Validate, then log and apply the write set atomically; returns once durable as `d`
    /// asks. `Conflict`: nothing was applied, the transaction may be retried.
    ///
    /// # Errors
    /// `Conflict`, `TxnTooLarge`, `Closed`/`Poisoned`, device errors.
    pub fn commit_with(self, d: Durability) -> Result<()> {
        if self.writes.is_empty() {
            return if self.reads.is_empty() && self.scans.is_empty() {
                Ok(())
            } else {
                self.validate()
            };
        }
        let ops: Vec<_> = self
            .writes
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_deref()))
            .collect();
        let leaves = self.write_leaves();
        let asked = Instant::now();
        let g = self.eng.commit_lock().write();
        let got = Instant::now();
        let r = match self.valid() {
            Ok(true) => self.eng.commit_group(&ops, &leaves),
            Ok(false) => Err(EngineError::Conflict),
            Err(e) => Err(e),
        };
        drop(g);
        self.eng.count_commit(got - asked, got.elapsed());
        self.eng.commit_durable(r?, d)
    }

    /// Per write (in key order), the leaf the last read of its key saw, if any: the apply
    /// starts there instead of descending while that leaf is unchanged (a read-modify-write
    /// is then one descent, not two). Empty when nothing was read with a leaf.
    fn write_leaves(&self) -> Vec<Option<LeafSeen>> {
        // Sorted by key (stable: for a key read twice the last read wins), then merged with
        // the write set, which is in key order: no hashing of keys.
        let mut seen: Vec<(&[u8], LeafSeen)> = self
            .reads
            .iter()
            .filter_map(|r| r.leaf.map(|l| (r.key.as_slice(), l)))
            .collect();
        if seen.is_empty() {
            return Vec::new();
        }
        seen.sort_by(|a, b| a.0.cmp(b.0));
        let mut i = 0;
        self.writes
            .keys()
            .map(|k| {
                while i < seen.len() && seen[i].0 < k.as_slice() {
                    i += 1;
                }
                let mut hit = None;
                while i < seen.len() && seen[i].0 == k.as_slice() {
                    hit = Some(seen[i].1);
                    i += 1;
                }
                hit
            })
            .collect()
    }

    /// Drop every write (nothing was applied).
    pub fn abort(self) {}

    /// Writes buffered so far.
    #[must_use]
    pub fn write_count(&self) -> usize {
        self.writes.len()
    }
}

/// Visit up to `n` tree rows of `[s, e)` in `dir` order; returns their count and hash. With
/// `leaves` Some, the leaves visited are pushed to it (it becomes None if one was empty).
fn fetch_rows(
    eng: &Engine,
    (s, e, dir): (&[u8], &[u8], ScanDir),
    n: usize,
    leaves: &mut Option<Vec<LeafSeen>>,
    mut visit: impl FnMut(&[u8], &[u8]),
) -> Result<(usize, u64)> {
    assert!(n > 0, "a scan fetches at least one row");
    let mut h = DefaultHasher::new();
    let mut count = 0usize;
    let f = |k: &[u8], v: &[u8]| {
        h.write_usize(k.len());
        h.write(k);
        h.write_usize(v.len());
        h.write(v);
        visit(k, v);
        count += 1;
        count < n
    };
    let leaf = |l: Option<LeafSeen>| match (l, leaves.as_mut()) {
        (Some(l), Some(v)) => v.push(l),
        (None, _) => *leaves = None,
        (Some(_), None) => {}
    };
    match dir {
        ScanDir::Forward => eng.scan_seen(s, Some(e), leaf, f)?,
        ScanDir::Reverse => eng.scan_rev_seen(s, Some(e), leaf, f)?,
    }
    Ok((count, h.finish()))
}
