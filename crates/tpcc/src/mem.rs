//! [`MemStore`]: the reference implementation of [`TxnStore`] (the oracle).
//!
//! One `BTreeMap` per table behind one global lock: a transaction holds the lock from `begin`
//! to `commit`/`abort`, so transactions run one at a time and are trivially serializable. Writes
//! go to a per-transaction write set that reads consult first (read-your-own-writes); commit
//! applies the write set, abort discards it. Nothing is durable: the store lives in memory.
//!
//! For tests of the retry path, [`MemStore::with_injected_conflicts`] makes a seeded fraction
//! of operations fail with [`StoreError::Conflict`].

use crate::store::{ConflictKind, Row, ScanOrder, StoreError, TableHint, TableId, Transaction};
use crate::TxnStore;
use parking_lot::{Mutex, MutexGuard};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Size of one table of a [`MemStore`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TableStats {
    /// The table's name.
    pub name: String,
    /// Rows.
    pub rows: u64,
    /// Sum of key lengths.
    pub key_bytes: u64,
    /// Sum of value lengths.
    pub value_bytes: u64,
}

#[derive(Default)]
struct Inner {
    names: Vec<String>,
    tables: Vec<BTreeMap<Vec<u8>, Vec<u8>>>,
}

impl Inner {
    fn table(&self, t: TableId) -> Result<&BTreeMap<Vec<u8>, Vec<u8>>, StoreError> {
        let i = usize::try_from(t.0).map_err(|_| StoreError::UnknownTable { table: t })?;
        self.tables
            .get(i)
            .ok_or(StoreError::UnknownTable { table: t })
    }
}

/// The in-memory reference store (see the module documentation).
#[derive(Default)]
pub struct MemStore {
    inner: Mutex<Inner>,
    /// `Some((one_in, seed))`: an operation fails with a conflict with probability 1/one_in.
    inject: Option<(u64, u64)>,
    ops: AtomicU64,
}

impl MemStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> MemStore {
        MemStore::default()
    }

    /// An empty store in which each operation (get, put, delete, scan, commit) fails with
    /// [`ConflictKind::Injected`] with probability `1 / one_in`, decided by a seeded hash of
    /// the operation's sequence number (deterministic when one thread uses the store).
    ///
    /// # Panics
    /// If `one_in` is 0.
    #[must_use]
    pub fn with_injected_conflicts(one_in: u64, seed: u64) -> MemStore {
        assert!(one_in > 0, "one_in is a positive period");
        MemStore {
            inject: Some((one_in, seed)),
            ..MemStore::default()
        }
    }

    /// Rows and bytes of every table, in creation order.
    #[must_use]
    pub fn stats(&self) -> Vec<TableStats> {
        let inner = self.inner.lock();
        let mut out = Vec::with_capacity(inner.names.len());
        for (name, t) in inner.names.iter().zip(&inner.tables) {
            let key_bytes = t.keys().map(|k| k.len() as u64).sum();
            let value_bytes = t.values().map(|v| v.len() as u64).sum();
            out.push(TableStats {
                name: name.clone(),
                rows: t.len() as u64,
                key_bytes,
                value_bytes,
            });
        }
        out
    }

    /// A copy of the committed rows of the table called `name` (`None`: no such table).
    #[must_use]
    pub fn dump(&self, name: &str) -> Option<BTreeMap<Vec<u8>, Vec<u8>>> {
        let inner = self.inner.lock();
        let i = inner.names.iter().position(|n| n == name)?;
        Some(inner.tables[i].clone())
    }

    fn injected(&self) -> bool {
        let Some((one_in, seed)) = self.inject else {
            return false;
        };
        let n = self.ops.fetch_add(1, Relaxed);
        nowa_units::mix64(seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15)) % one_in == 0
    }
}

impl TxnStore for MemStore {
    type Txn<'s> = MemTxn<'s>;

    fn open_table(&self, name: &str, _hint: TableHint) -> Result<TableId, StoreError> {
        let mut inner = self.inner.lock();
        let i = match inner.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                inner.names.push(name.to_owned());
                inner.tables.push(BTreeMap::new());
                inner.names.len() - 1
            }
        };
        assert_eq!(inner.names.len(), inner.tables.len());
        let id = u32::try_from(i).expect("fewer than 2^32 tables");
        Ok(TableId(id))
    }

    fn begin(&self) -> Result<MemTxn<'_>, StoreError> {
        Ok(MemTxn {
            store: self,
            guard: self.inner.lock(),
            writes: Vec::new(),
            dead: false,
        })
    }

    fn bulk_load(
        &self,
        table: TableId,
        rows: &mut dyn Iterator<Item = Row>,
    ) -> Result<u64, StoreError> {
        let mut inner = self.inner.lock();
        inner.table(table)?;
        let map = &mut inner.tables[table.0 as usize];
        let mut last: Option<Vec<u8>> = None;
        let mut n = 0u64;
        for (k, v) in rows {
            if last.as_ref().is_some_and(|l| k <= *l) {
                return Err(StoreError::UnsortedLoad { table, index: n });
            }
            last = Some(k.clone());
            let previous = map.insert(k, v);
            assert!(
                previous.is_none(),
                "bulk_load: a loaded key already existed"
            );
            n += 1;
        }
        Ok(n)
    }
}

/// Pending writes of one table: `Some(value)` = put, `None` = delete.
type WriteSet = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// A transaction of a [`MemStore`]: holds the store's lock and a write set.
pub struct MemTxn<'s> {
    store: &'s MemStore,
    guard: MutexGuard<'s, Inner>,
    writes: Vec<WriteSet>,
    dead: bool,
}

impl MemTxn<'_> {
    /// Checks the table, fails injected conflicts, and returns the table's index.
    fn enter(&mut self, t: TableId) -> Result<usize, StoreError> {
        self.guard.table(t)?;
        if self.dead || self.store.injected() {
            self.dead = true;
            return Err(StoreError::Conflict {
                kind: ConflictKind::Injected,
            });
        }
        let i = t.0 as usize;
        if self.writes.len() <= i {
            self.writes.resize_with(i + 1, WriteSet::new);
        }
        Ok(i)
    }
}

impl Transaction for MemTxn<'_> {
    fn get(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let i = self.enter(table)?;
        if let Some(w) = self.writes[i].get(key) {
            return Ok(w.clone());
        }
        Ok(self.guard.tables[i].get(key).cloned())
    }

    fn put(&mut self, table: TableId, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        let i = self.enter(table)?;
        self.writes[i].insert(key.to_vec(), Some(value.to_vec()));
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: &[u8]) -> Result<bool, StoreError> {
        let i = self.enter(table)?;
        let existed = match self.writes[i].get(key) {
            Some(w) => w.is_some(),
            None => self.guard.tables[i].contains_key(key),
        };
        self.writes[i].insert(key.to_vec(), None);
        Ok(existed)
    }

    fn scan(
        &mut self,
        table: TableId,
        start: &[u8],
        end: Option<&[u8]>,
        order: ScanOrder,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        let i = self.enter(table)?;
        let range = (
            Bound::Included(start),
            end.map_or(Bound::Unbounded, Bound::Excluded),
        );
        if end.is_some_and(|e| e <= start) || limit == 0 {
            return Ok(Vec::new());
        }
        let base = self.guard.tables[i].range::<[u8], _>(range);
        let writes = self.writes[i].range::<[u8], _>(range);
        let rows = match order {
            ScanOrder::Forward => merge(base, writes, limit, false),
            ScanOrder::Reverse => merge(base.rev(), writes.rev(), limit, true),
        };
        assert!(rows.len() <= limit, "a scan returns at most `limit` rows");
        debug_assert!(rows.iter().all(|(k, _)| k.as_slice() >= start));
        Ok(rows)
    }

    fn commit(mut self) -> Result<(), StoreError> {
        if self.dead || self.store.injected() {
            return Err(StoreError::Conflict {
                kind: ConflictKind::Injected,
            });
        }
        let writes = std::mem::take(&mut self.writes);
        assert!(
            writes.len() <= self.guard.tables.len(),
            "writes only to known tables"
        );
        for (i, ws) in writes.into_iter().enumerate() {
            let table = &mut self.guard.tables[i];
            for (k, w) in ws {
                match w {
                    Some(v) => {
                        table.insert(k, v);
                    }
                    None => {
                        table.remove(&k);
                    }
                }
            }
        }
        Ok(())
    }

    fn abort(self) {}
}

/// Merges committed rows with a write set (both in scan order; `reverse` = descending): pending
/// puts replace or add rows, pending deletes hide them. At most `limit` rows.
fn merge<'a>(
    base: impl Iterator<Item = (&'a Vec<u8>, &'a Vec<u8>)>,
    writes: impl Iterator<Item = (&'a Vec<u8>, &'a Option<Vec<u8>>)>,
    limit: usize,
    reverse: bool,
) -> Vec<Row> {
    let mut base = base.peekable();
    let mut writes = writes.peekable();
    let mut out: Vec<Row> = Vec::new();
    // `a` comes before `b` in scan order.
    let before = |a: &[u8], b: &[u8]| if reverse { a > b } else { a < b };
    while out.len() < limit {
        let next = match (base.peek(), writes.peek()) {
            (None, None) => break,
            (Some(&(bk, bv)), None) => {
                base.next();
                Some((bk, bv.clone()))
            }
            (Some(&(bk, bv)), Some(&(wk, _))) if before(bk, wk) => {
                base.next();
                Some((bk, bv.clone()))
            }
            (b, Some(&(wk, w))) => {
                if b.is_some_and(|&(bk, _)| bk == wk) {
                    base.next(); // the write replaces the committed row
                }
                writes.next();
                w.as_ref().map(|v| (wk, v.clone()))
            }
        };
        if let Some((k, v)) = next {
            debug_assert!(out.last().is_none_or(|(p, _)| before(p, k)));
            out.push((k.clone(), v));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_set_merges_into_scans_both_ways() {
        let s = MemStore::new();
        let t = s.open_table("t", TableHint::default()).unwrap();
        let mut x = s.begin().unwrap();
        for k in [b"a", b"c", b"e"] {
            x.put(t, k, b"0").unwrap();
        }
        x.commit().unwrap();
        let mut x = s.begin().unwrap();
        x.put(t, b"b", b"1").unwrap();
        x.put(t, b"c", b"1").unwrap();
        assert!(x.delete(t, b"e").unwrap());
        assert!(!x.delete(t, b"z").unwrap());
        let fwd = x.scan(t, b"", None, ScanOrder::Forward, 10).unwrap();
        let keys: Vec<_> = fwd.iter().map(|(k, v)| (k[0], v[0])).collect();
        assert_eq!(keys, vec![(b'a', b'0'), (b'b', b'1'), (b'c', b'1')]);
        let rev = x.scan(t, b"b", Some(b"d"), ScanOrder::Reverse, 10).unwrap();
        assert_eq!(rev.len(), 2);
        assert_eq!(rev[0].0, b"c");
        assert_eq!(
            x.scan(t, b"", None, ScanOrder::Reverse, 1).unwrap()[0].0,
            b"c"
        );
        x.abort();
        let mut x = s.begin().unwrap();
        assert_eq!(x.get(t, b"e").unwrap(), Some(b"0".to_vec()));
        assert_eq!(x.get(t, b"b").unwrap(), None);
    }

    #[test]
    fn injected_conflicts_kill_the_transaction() {
        let s = MemStore::with_injected_conflicts(1, 7);
        let t = s.open_table("t", TableHint::default()).unwrap();
        let mut x = s.begin().unwrap();
        let e = x.put(t, b"k", b"v").unwrap_err();
        assert!(e.is_retryable());
        assert!(x.commit().unwrap_err().is_retryable());
        assert_eq!(s.stats()[0].rows, 0);
    }
}
