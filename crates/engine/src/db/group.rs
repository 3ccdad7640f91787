//! Tables and transaction commit groups (docs/design.md, "Tables and transactions").
//!
//! A commit is one WAL record holding the whole write set (`TxnCommit`, the commit point),
//! then the writes applied one by one through the ordinary tree operations, each logged as a
//! `TxnWrite` (the leaf and the op's index in the `TxnCommit`: the key and value are logged
//! once, in the `TxnCommit`; structure changes are logged as usual), then a `TxnDone`
//! record. The checkpoint lock is held from before the `TxnCommit` append to after the
//! `TxnDone` append, so no checkpoint pass begins inside a group, and a frame first dirtied
//! inside a group gets the `TxnCommit`'s LSN as its rec_lsn (`BufferPool::set_group_floor`):
//! a redo LSN is never strictly inside a group, so redo meets every `TxnWrite` after its
//! `TxnCommit` (which recovery keeps until the `TxnDone`). Recovery redoes the page records
//! as usual (a `TxnWrite` with its op's key and value) and re-applies the write set of a
//! `TxnCommit` without its `TxnDone` (at most one: groups are serialized), which is
//! idempotent (upserts and deletes of distinct keys); that re-application, in the new log
//! epoch, logs plain Put/Delete records. A `TxnCommit` that did not reach the device leaves
//! nothing behind: every page record of its group follows it in the log, and no page is
//! written before the log covering its LSN (WAL rule).

use super::tree::LogAs;
use super::Engine;
use crate::catalog::{self, TableId, TreeOptions};
use crate::error::{EngineError, Result};
use crate::format::wal::{RecordRef, TxnOp, HEADER, MAX_RECORD};

/// Largest encoded write set of one commit.
pub const MAX_WRITE_SET: usize = MAX_RECORD - HEADER;

/// A write-set entry: (full key, value or None for a delete).
pub(crate) type OpRef<'a> = (&'a [u8], Option<&'a [u8]>);

impl Engine {
    /// Log and apply one transaction's write set atomically (see the module documentation);
    /// returns the LSN of its `TxnCommit` record (durable once the WAL is flushed past it).
    /// The caller holds the commit lock exclusively.
    ///
    /// # Errors
    /// `TxnTooLarge`, `Closed`/`Poisoned`, device errors. A failure after the commit record
    /// was appended poisons the engine (recovery finishes the group).
    /// `leaves`: per op, the leaf a read of its key saw (a hint; empty: none).
    pub(crate) fn commit_group(
        &self,
        ops: &[OpRef<'_>],
        leaves: &[Option<super::LeafSeen>],
    ) -> Result<u64> {
        assert!(
            leaves.is_empty() || leaves.len() == ops.len(),
            "one leaf hint per op"
        );
        self.check_open()?;
        let rec = RecordRef::TxnCommit { ops };
        let bytes = rec.encoded_len();
        if bytes > MAX_WRITE_SET {
            return Err(EngineError::TxnTooLarge {
                bytes,
                max: MAX_WRITE_SET,
            });
        }
        for (k, v) in ops {
            super::tree::check_kv(k, v.unwrap_or_default())?;
        }
        self.wal_gate()?;
        let _ckpt = self.ckpt.lock();
        let lsn = self.wal.append(&rec)?;
        assert!(lsn > 0, "LSN 0 is no LSN");
        self.pool.set_group_floor(Some(lsn));
        let applied = self.apply_ops(ops.iter().copied(), Some((lsn, leaves)));
        self.pool.set_group_floor(None);
        if let Err(e) = applied {
            self.poison();
            return Err(e);
        }
        let done = self.wal.append(&RecordRef::TxnDone { commit_lsn: lsn })?;
        assert!(done > lsn, "TxnDone {done} not after its commit {lsn}");
        Ok(lsn)
    }

    /// Apply `ops`, logged as writes of the TxnCommit at `commit` with its leaf hints (None:
    /// as plain records).
    fn apply_ops<'a>(
        &self,
        ops: impl Iterator<Item = OpRef<'a>>,
        commit: Option<(u64, &[Option<super::LeafSeen>])>,
    ) -> Result<()> {
        for (i, (k, v)) in ops.enumerate() {
            let how = match commit {
                Some((commit_lsn, leaves)) => LogAs::Txn {
                    commit_lsn,
                    index: crate::num::u32_of(i),
                    leaf: leaves.get(i).copied().flatten(),
                },
                None => LogAs::Plain,
            };
            self.counters
                .logical_user_bytes
                .add(crate::num::u64_of(k.len() + v.map_or(0, <[u8]>::len)));
            match v {
                Some(v) => {
                    self.counters.puts.inc();
                    self.put_logged(k, v, how)?;
                }
                None => {
                    self.counters.deletes.inc();
                    self.delete_logged(k, how)?;
                }
            }
        }
        Ok(())
    }

    /// Recovery found a `TxnCommit` at `lsn` (pending until its `TxnDone`).
    pub(super) fn txn_seen(&self, lsn: u64, ops: Vec<TxnOp>) {
        *self.pending_txn.lock() = Some((lsn, ops));
    }

    /// Recovery: `f` of op `index` of the pending TxnCommit at `commit_lsn` (None: no such
    /// op; redo met a TxnWrite without its TxnCommit, which is damage).
    pub(super) fn with_pending_op<R>(
        &self,
        commit_lsn: u64,
        index: u32,
        f: impl FnOnce(Option<&TxnOp>) -> R,
    ) -> R {
        let p = self.pending_txn.lock();
        let op = match p.as_ref() {
            Some((l, ops)) if *l == commit_lsn => {
                usize::try_from(index).ok().and_then(|i| ops.get(i))
            }
            _ => None,
        };
        f(op)
    }

    /// Recovery found the `TxnDone` of the commit at `commit_lsn`.
    pub(super) fn txn_done_seen(&self, commit_lsn: u64) {
        let mut p = self.pending_txn.lock();
        if p.as_ref().is_some_and(|(l, _)| *l == commit_lsn) {
            *p = None;
        }
    }

    /// After redo, in the new log epoch: re-apply the write set of a commit whose group the
    /// crash interrupted (logged again, physically, in the new epoch). Returns the writes
    /// re-applied.
    pub(super) fn finish_pending_txn(&self) -> Result<usize> {
        let Some((lsn, ops)) = self.pending_txn.lock().take() else {
            return Ok(0);
        };
        tracing::info!(
            lsn,
            writes = ops.len(),
            "recovery: finishing an interrupted commit group"
        );
        // Plain records: the new epoch's log does not hold this TxnCommit.
        self.apply_ops(ops.iter().map(|(k, v)| (k.as_slice(), v.as_deref())), None)?;
        Ok(ops.len())
    }

    /// Options of the tree holding `key` (a named table's, or the defaults for the default
    /// table), for structure modifications (append-biased splits). Call `tables()` or
    /// `open_table` first after an open: the catalog loads on first use.
    #[must_use]
    pub fn tree_options(&self, key: &[u8]) -> TreeOptions {
        self.catalog.options_for(key)
    }

    fn load_catalog(&self) -> Result<()> {
        if self.catalog.is_loaded() {
            return Ok(());
        }
        let _g = self.catalog.create.lock();
        if self.catalog.is_loaded() {
            return Ok(());
        }
        let (start, end) = (TableId::CATALOG.prefix(), TableId::CATALOG.end());
        let mut rows = Vec::new();
        let mut bad = None;
        self.scan_with(&start, Some(&end), |k, v| {
            let name = std::str::from_utf8(&k[catalog::PREFIX_LEN..]).ok();
            match (name, catalog::decode_row(v)) {
                (Some(n), Some((id, o))) => rows.push((n.to_string(), id, o)),
                _ => bad = Some(k.to_vec()),
            }
            bad.is_none()
        })?;
        if let Some(key) = bad {
            return Err(EngineError::CatalogDamaged { key });
        }
        self.catalog.install(rows);
        Ok(())
    }

    /// Open the table called `name`, creating it (durably, with `opts`) if it does not exist.
    /// `opts` only matter at creation; the stored ones are returned.
    ///
    /// # Errors
    /// `TooManyTables`, `CatalogDamaged`, the errors of a commit.
    pub fn open_table(&self, name: &str, opts: TreeOptions) -> Result<(TableId, TreeOptions)> {
        self.load_catalog()?;
        if let Some(t) = self.catalog.lookup(name) {
            return Ok(t);
        }
        let _g = self.catalog.create.lock();
        if let Some(t) = self.catalog.lookup(name) {
            return Ok(t);
        }
        let id = self.catalog.next_id()?;
        let key = TableId::CATALOG.key(name.as_bytes());
        let row = catalog::encode_row(id, opts);
        let lsn = {
            let _c = self.commit_lock.write();
            self.commit_group(&[(&key, Some(&row))], &[])?
        };
        self.wal.flush(lsn + 1)?;
        self.catalog.add(name, id, opts);
        Ok((id, opts))
    }

    /// Every named table: (name, id, options), by id.
    ///
    /// # Errors
    /// `CatalogDamaged`, read errors.
    pub fn tables(&self) -> Result<Vec<(String, TableId, TreeOptions)>> {
        self.load_catalog()?;
        Ok(self.catalog.list())
    }

    /// Bulk-load path: upsert `key -> value` into `table` outside any transaction, with
    /// asynchronous durability (a crash keeps some prefix of the load; `sync` or `checkpoint`
    /// at the end makes it durable). Not validated against transactions: for initial loads.
    ///
    /// # Errors
    /// `UnknownTable`, the errors of [`Self::put_with`].
    pub fn load_put(&self, table: TableId, key: &[u8], value: &[u8]) -> Result<()> {
        self.check_table(table)?;
        self.put_with(&table.key(key), value, super::Durability::Async)
    }

    /// Fails with `UnknownTable` unless `id` names a table of this engine.
    pub(crate) fn check_table(&self, id: TableId) -> Result<()> {
        self.load_catalog()?;
        self.catalog.check(id)
    }
}

impl Engine {
    /// The transaction commit lock (shared: read-only validation; exclusive: validate and
    /// apply).
    pub(crate) fn commit_lock(&self) -> &parking_lot::RwLock<()> {
        &self.commit_lock
    }

    /// Is leaf `l` unchanged since a read saw it (same page, same LSN, still in the tree)?
    /// Then every read that went through it would see the same (see [`super::LeafSeen`]). A
    /// freed page counts as changed (it is not read: the store may have released it).
    ///
    /// # Errors
    /// Page and device errors.
    pub(crate) fn leaf_unchanged(&self, l: super::LeafSeen) -> Result<bool> {
        // The shared tree lock: no leaf leaves the tree between the free-list check and the read.
        let _t = self.tree.read();
        if self.free.lock().contains(l.pid) {
            return Ok(false);
        }
        let g = self.pool.read(l.pid)?;
        Ok(crate::page::kind(&g.page) == crate::page::KIND_LEAF
            && crate::page::lsn(&g.page) == l.lsn)
    }

    /// A commit waited `wait` for the commit lock and held it `hold` (validation, logging,
    /// applying): the lock figures of [`crate::Stats`].
    pub(crate) fn count_commit(&self, wait: std::time::Duration, hold: std::time::Duration) {
        let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let c = &self.counters;
        crate::stats::EngineCounters::add(&c.txn_commits, 1);
        crate::stats::EngineCounters::add(&c.commit_lock_wait_ns, ns(wait));
        crate::stats::EngineCounters::add(&c.commit_lock_hold_ns, ns(hold));
    }

    /// After a commit at `lsn`: make it durable as `d` asks (Sync: flush past it; Async: flush
    /// when enough is unflushed).
    pub(crate) fn commit_durable(&self, lsn: u64, d: super::Durability) -> Result<()> {
        self.after_write(lsn, d)
    }
}

impl Engine {
    /// Pages allocated so far (the allocation mark): the database size in pages.
    #[must_use]
    pub fn allocated_pages(&self) -> u64 {
        self.tree.read().next_pid
    }
}
