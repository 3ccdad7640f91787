//! [`Timed`]: a [`TxnStore`] wrapper that adds up the wall time spent inside the wrapped store's
//! calls (begin, get, put, delete, scan, commit, abort) and counts them. With one worker thread
//! (no waiting on other transactions), run time minus store time is the driver's own cost.

use crate::store::{Row, ScanOrder, StoreError, TableHint, TableId, Transaction, TxnStore};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// A store whose calls are timed (see the module documentation).
#[derive(Debug, Default)]
pub struct Timed<S> {
    inner: S,
    nanos: AtomicU64,
    calls: AtomicU64,
}

impl<S> Timed<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Timed<S> {
        Timed {
            inner,
            nanos: AtomicU64::new(0),
            calls: AtomicU64::new(0),
        }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Seconds spent inside the store so far (summed over threads).
    #[must_use]
    pub fn store_seconds(&self) -> f64 {
        #[expect(
            clippy::cast_precision_loss,
            reason = "nanoseconds below 2^52 (52 days)"
        )]
        let s = self.nanos.load(Relaxed) as f64 / 1e9;
        s
    }

    /// Store calls so far.
    #[must_use]
    pub fn calls(&self) -> u64 {
        self.calls.load(Relaxed)
    }

    fn time<T>(&self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let r = f();
        let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(ns, Relaxed);
        self.calls.fetch_add(1, Relaxed);
        r
    }
}

impl<S: TxnStore> TxnStore for Timed<S> {
    type Txn<'s>
        = TimedTxn<'s, S>
    where
        S: 's;

    fn open_table(&self, name: &str, hint: TableHint) -> Result<TableId, StoreError> {
        self.inner.open_table(name, hint)
    }

    fn begin(&self) -> Result<TimedTxn<'_, S>, StoreError> {
        let txn = self.time(|| self.inner.begin())?;
        Ok(TimedTxn { owner: self, txn })
    }

    fn bulk_load(
        &self,
        table: TableId,
        rows: &mut dyn Iterator<Item = Row>,
    ) -> Result<u64, StoreError> {
        self.inner.bulk_load(table, rows)
    }

    fn finish_load(&self) -> Result<(), StoreError> {
        self.inner.finish_load()
    }
}

/// A transaction of a [`Timed`] store.
pub struct TimedTxn<'s, S: TxnStore + 's> {
    owner: &'s Timed<S>,
    txn: S::Txn<'s>,
}

impl<'s, S: TxnStore + 's> Transaction for TimedTxn<'s, S> {
    fn get(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = &mut self.txn;
        self.owner.time(|| txn.get(table, key))
    }

    fn put(&mut self, table: TableId, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        let txn = &mut self.txn;
        self.owner.time(|| txn.put(table, key, value))
    }

    fn delete(&mut self, table: TableId, key: &[u8]) -> Result<bool, StoreError> {
        let txn = &mut self.txn;
        self.owner.time(|| txn.delete(table, key))
    }

    fn scan(
        &mut self,
        table: TableId,
        start: &[u8],
        end: Option<&[u8]>,
        order: ScanOrder,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        let txn = &mut self.txn;
        self.owner
            .time(|| txn.scan(table, start, end, order, limit))
    }

    fn commit(self) -> Result<(), StoreError> {
        let TimedTxn { owner, txn } = self;
        owner.time(|| txn.commit())
    }

    fn abort(self) {
        let TimedTxn { owner, txn } = self;
        owner.time(|| txn.abort());
    }
}
