//! The storage contract: a transactional, multi-table, ordered key-value store.
//!
//! The TPC-C driver, the consistency checks and the test suites of this crate are written against
//! [`TxnStore`] and [`Transaction`] only. The in-memory [`MemStore`](crate::MemStore) is the
//! reference implementation (the oracle); the engine implements the same traits.
//!
//! # The contract, in one place
//!
//! - **Tables** are opened by name ([`TxnStore::open_table`]); a name not seen before creates an
//!   empty table, durably. Every table is one ordered keyspace: keys and values are byte strings,
//!   keys compare lexicographically (`memcmp`, shorter-is-smaller on a common prefix). Values may
//!   be empty. The driver's keys are at most 64 bytes and its values at most 1,024 bytes.
//! - **Transactions** ([`TxnStore::begin`]) read and write any number of tables. Each one is
//!   *serializable*: the committed transactions have the effect of some serial order, and every
//!   read (get or scan) of a transaction that commits saw the state of that order. Reads see the
//!   transaction's own earlier writes (read-your-own-writes), in `get` and in `scan` alike.
//! - **Commit** ([`Transaction::commit`]) is atomic: all the writes or none, also after any
//!   crash. It returns once the transaction is durable as the store is configured (a store with
//!   asynchronous commits may lose a suffix of committed transactions in a crash, never a part of
//!   one, never one in the middle of the sequence).
//! - **Abort** ([`Transaction::abort`], or dropping the transaction) rolls back every write and
//!   releases whatever the transaction holds. It cannot fail.
//! - **Conflicts**: a store may refuse an operation or a commit with
//!   [`StoreError::Conflict`] (deadlock, lock timeout, failed validation...). The transaction is
//!   then dead: its only valid continuation is `abort` (a `commit` after a conflict returns the
//!   conflict again and applies nothing). The caller may retry the whole transaction; the driver
//!   does, and counts it. Every other error is not retryable.
//! - **Bulk load** ([`TxnStore::bulk_load`]) is a hint for the initial population: sorted rows
//!   for keys that do not exist yet, possibly from several threads at once (each call's keys are
//!   sorted and disjoint from every other call's). The default implementation inserts them with
//!   ordinary transactions. [`TxnStore::finish_load`] ends the load phase.
//!
//! Threads: one [`TxnStore`] is shared by every worker (`Sync`); each transaction is used by the
//! thread that began it. A thread has at most one open transaction at a time.

use std::fmt;

/// One row: (key, value).
pub type Row = (Vec<u8>, Vec<u8>);

/// Handle of an opened table, valid for the store instance that returned it. After a store is
/// reopened (e.g. after a crash), tables are opened again by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(pub u32);

impl fmt::Display for TableId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "table#{}", self.0)
    }
}

/// How a table is filled, as a hint for the store's page splits. Wrong hints cost space, never
/// correctness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableHint {
    /// New keys mostly arrive in ascending order (TPC-C ORDER, ORDER_LINE, HISTORY...): a B+-tree
    /// should split full leaves at the right edge (ZLeanStore's `ToggleAppendBiasMode(true)`), so
    /// sequentially filled tables end up full rather than half empty.
    pub append_biased: bool,
}

/// Direction of a range scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanOrder {
    /// Ascending keys, starting at the smallest key `>= start`.
    Forward,
    /// Descending keys, starting at the greatest key `< end` (or the last key without `end`).
    Reverse,
}

/// Why a transaction aborted by conflict (a store reports what it knows; the driver only counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ConflictKind {
    /// Lock-based: a deadlock was detected (or avoided by wait-die / no-wait).
    Deadlock,
    /// Lock-based: a lock was not granted in time.
    LockTimeout,
    /// Optimistic: validation at commit found a read that changed.
    Validation,
    /// Injected on purpose (tests of the retry path).
    Injected,
}

/// Errors of a [`TxnStore`] or [`Transaction`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The transaction lost a conflict and is dead: abort it; it may be retried.
    #[error("transaction aborted by conflict ({kind:?}); retry it")]
    Conflict {
        /// What kind of conflict.
        kind: ConflictKind,
    },
    /// A table handle this store did not hand out.
    #[error("unknown {table}")]
    UnknownTable {
        /// The handle.
        table: TableId,
    },
    /// A bulk load's rows were not sorted ascending (or repeated a key).
    #[error("bulk load into {table}: row {index} is not above the previous key")]
    UnsortedLoad {
        /// The table loaded.
        table: TableId,
        /// Index of the offending row in the call.
        index: u64,
    },
    /// The storage below failed (device error, corruption, space exhausted...): not retryable.
    #[error("storage failure: {source}")]
    Backend {
        /// The store's own error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl StoreError {
    /// True for [`StoreError::Conflict`]: the transaction may be retried.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        matches!(self, StoreError::Conflict { .. })
    }
}

/// A transactional, multi-table, ordered key-value store (see the module documentation for the
/// full contract).
pub trait TxnStore: Sync {
    /// An open transaction; it may borrow the store.
    type Txn<'s>: Transaction
    where
        Self: 's;

    /// Opens the table called `name`, creating it (empty, durably) if it does not exist. Opening
    /// the same name twice returns the same handle. `hint` only matters at creation.
    ///
    /// # Errors
    /// [`StoreError::Backend`] when the catalog cannot be read or written.
    fn open_table(&self, name: &str, hint: TableHint) -> Result<TableId, StoreError>;

    /// Starts a transaction.
    ///
    /// # Errors
    /// [`StoreError::Backend`] (e.g. the store is closed), or a conflict if the store cannot
    /// admit a transaction now.
    fn begin(&self) -> Result<Self::Txn<'_>, StoreError>;

    /// Inserts `rows` (ascending keys, none of which exists yet) into `table`; returns the number
    /// of rows. Several calls may run at once on one table from different threads, for disjoint
    /// key ranges. After a crash in the middle of a load, the store holds some subset of the
    /// rows loaded so far; a load is restarted on an empty store. The default inserts the rows
    /// with transactions of [`LOAD_BATCH`] rows, retrying a batch on conflict.
    ///
    /// # Errors
    /// [`StoreError::UnsortedLoad`] when the keys are not strictly ascending, or any
    /// non-retryable error of the store.
    fn bulk_load(
        &self,
        table: TableId,
        rows: &mut dyn Iterator<Item = Row>,
    ) -> Result<u64, StoreError> {
        load_with_transactions(self, table, rows)
    }

    /// Called once after every `bulk_load` of the initial population returned: make the load
    /// durable (e.g. checkpoint) and leave any load mode. The default does nothing.
    ///
    /// # Errors
    /// Any error of the store.
    fn finish_load(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// One open transaction of a [`TxnStore`]. Dropping it without `commit` aborts it.
pub trait Transaction {
    /// The value stored under `key`, or `None`.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] (then abort), or a non-retryable store error.
    fn get(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;

    /// Inserts or replaces the row `key -> value`.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] (then abort), or a non-retryable store error.
    fn put(&mut self, table: TableId, key: &[u8], value: &[u8]) -> Result<(), StoreError>;

    /// Removes the row under `key`; returns whether it existed.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] (then abort), or a non-retryable store error.
    fn delete(&mut self, table: TableId, key: &[u8]) -> Result<bool, StoreError>;

    /// Up to `limit` rows with `start <= key < end` (`end: None` = no upper bound), in `order`.
    /// Serializable like every read: a committed transaction never saw a row appear in or vanish
    /// from a range it scanned (no phantoms).
    ///
    /// # Errors
    /// [`StoreError::Conflict`] (then abort), or a non-retryable store error.
    fn scan(
        &mut self,
        table: TableId,
        start: &[u8],
        end: Option<&[u8]>,
        order: ScanOrder,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError>;

    /// Checks that everything read so far is still current: an optimistic store may let a
    /// transaction read an inconsistent state that validation at commit would reject. The
    /// driver asks this when a transaction finds something impossible (a missing row), and
    /// retries on a conflict. The default (a store whose reads are always consistent): `Ok`.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when a read changed (then abort), or a store error.
    fn validate(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Makes every write of the transaction visible and durable, atomically.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the transaction cannot be serialized (nothing is applied),
    /// or a non-retryable store error (then the outcome is decided by recovery: all or nothing).
    fn commit(self) -> Result<(), StoreError>;

    /// Rolls back every write of the transaction. Never fails.
    fn abort(self);
}

/// Rows per transaction of the default [`TxnStore::bulk_load`].
pub const LOAD_BATCH: usize = 512;

fn load_with_transactions<S: TxnStore + ?Sized>(
    store: &S,
    table: TableId,
    rows: &mut dyn Iterator<Item = Row>,
) -> Result<u64, StoreError> {
    let mut total = 0u64;
    let mut batch: Vec<Row> = Vec::with_capacity(LOAD_BATCH);
    let mut last: Option<Vec<u8>> = None;
    loop {
        batch.clear();
        for row in (&mut *rows).take(LOAD_BATCH) {
            if last.as_ref().is_some_and(|k| row.0 <= *k) {
                return Err(StoreError::UnsortedLoad {
                    table,
                    index: total,
                });
            }
            last = Some(row.0.clone());
            batch.push(row);
            total += 1;
        }
        if batch.is_empty() {
            return Ok(total);
        }
        retry_on_conflict(|| {
            let mut txn = store.begin()?;
            for (k, v) in &batch {
                txn.put(table, k, v)?;
            }
            txn.commit()
        })?;
    }
}

/// Runs `body` until it returns anything but a conflict (at most 10,000 attempts; a store that
/// conflicts forever is broken, and the last conflict is returned).
///
/// `body` must begin, run and commit one transaction; on a conflict it must drop (abort) it,
/// which the `?` operator does.
///
/// # Errors
/// The first non-retryable error, or the last conflict.
pub fn retry_on_conflict<T>(
    mut body: impl FnMut() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let mut attempts = 0u32;
    loop {
        match body() {
            Err(e) if e.is_retryable() && attempts < 10_000 => {
                attempts += 1;
                std::thread::yield_now();
            }
            other => return other,
        }
    }
}

/// The smallest key greater than every key starting with `prefix`, or `None` when there is none
/// (the prefix is all `0xFF`). Scanning `prefix .. prefix_end(prefix)` visits exactly the keys
/// that start with `prefix`.
#[must_use]
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            debug_assert!(end.as_slice() > prefix);
            return Some(end);
        }
    }
    None
}

/// Rows of one transaction's scan of `start..end`, page by page (`page` rows per
/// [`Transaction::scan`] call), in ascending order, handed to `visit` until it returns false.
/// Returns the number of rows visited. For whole-table passes (consistency checks, row counts)
/// without materializing the table.
///
/// # Errors
/// Any error of the scans.
///
/// # Panics
/// If `page` is 0, or the store returns a key below the scan's start.
pub fn scan_all<T: Transaction + ?Sized>(
    txn: &mut T,
    table: TableId,
    start: &[u8],
    end: Option<&[u8]>,
    page: usize,
    mut visit: impl FnMut(&[u8], &[u8]) -> bool,
) -> Result<u64, StoreError> {
    assert!(page > 0, "a scan page holds at least one row");
    let mut from = start.to_vec();
    let mut seen = 0u64;
    loop {
        let rows = txn.scan(table, &from, end, ScanOrder::Forward, page)?;
        let full = rows.len() == page;
        for (k, v) in &rows {
            assert!(*k >= from, "a forward scan returned a key below its start");
            seen += 1;
            if !visit(k, v) {
                return Ok(seen);
            }
        }
        match rows.last() {
            Some((k, _)) if full => {
                from.clone_from(k);
                from.push(0); // the next key after k
            }
            _ => return Ok(seen),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_bounds_the_prefix() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(&[1, 0xFF]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xFF, 0xFF]), None);
        assert_eq!(prefix_end(b""), None);
    }

    #[test]
    fn conflicts_are_retryable_and_nothing_else_is() {
        let c = StoreError::Conflict {
            kind: ConflictKind::Deadlock,
        };
        assert!(c.is_retryable());
        let u = StoreError::UnknownTable { table: TableId(3) };
        assert!(!u.is_retryable());
        assert_eq!(u.to_string(), "unknown table#3");
    }
}
