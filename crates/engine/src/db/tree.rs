//! B+-tree operations: get, put, delete, scan. Write protocol per page change (put fast
//! path): latch leaf X -> check fit -> mark dirty -> append WAL record (LSN) -> apply ->
//! page LSN = LSN -> unlatch -> (Sync) flush WAL to LSN. A put that does not fit goes to
//! `split.rs`.

use super::{Durability, Engine, YieldPoint};
use crate::buffer::WriteGuard;
use crate::error::{tree_damage, EngineError, Pid, Result, TreeDamage};
use crate::format::wal::RecordRef;
use crate::num::u64_of;
use crate::page::{self, Entry, KIND_INNER, KIND_LEAF, MAX_KEY, MAX_KV};
use crate::treelock::TreeMeta;

/// A non-empty leaf a read saw: its page id and LSN. Every change of a leaf gives it a new,
/// greater LSN, and only empty leaves leave the tree, so while the page at `pid` still has
/// `lsn` it holds the same rows and still covers every key it covered then (a leaf's range
/// only shrinks by a split, which changes it). Transactions validate reads with it
/// (`crate::txn`). An empty leaf gives no `LeafSeen`: it may leave the tree unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LeafSeen {
    pub(crate) pid: Pid,
    pub(crate) lsn: u64,
}

impl LeafSeen {
    fn of(pid: Pid, leaf: &[u8]) -> Option<LeafSeen> {
        (page::nkeys(leaf) > 0).then(|| LeafSeen {
            pid,
            lsn: page::lsn(leaf),
        })
    }
}

/// How a leaf change is logged: a Put or Delete carrying its key (and value), or, for a
/// write of a commit group (`group.rs`), a TxnWrite naming the op of the group's TxnCommit
/// record that already holds them (single logging).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LogAs {
    /// A Put or Delete record.
    Plain,
    /// A TxnWrite record: op `index` of the TxnCommit at `commit_lsn`. `leaf`: the leaf a
    /// read of the key by the transaction saw, if any (a hint: used only while unchanged,
    /// it saves the descent).
    Txn {
        commit_lsn: u64,
        index: u32,
        leaf: Option<LeafSeen>,
    },
}

impl LogAs {
    /// The record of an upsert of `key -> value` into leaf `pid` (LSN `prev_lsn`).
    pub(super) fn put<'a>(
        self,
        pid: Pid,
        prev_lsn: u64,
        key: &'a [u8],
        value: &'a [u8],
    ) -> RecordRef<'a> {
        match self {
            LogAs::Plain => RecordRef::Put {
                pid,
                prev_lsn,
                key,
                value,
            },
            LogAs::Txn {
                commit_lsn, index, ..
            } => RecordRef::TxnWrite {
                pid,
                prev_lsn,
                commit_lsn,
                index,
            },
        }
    }

    /// The record of a delete of `key` from leaf `pid` (LSN `prev_lsn`).
    fn delete(self, pid: Pid, prev_lsn: u64, key: &[u8]) -> RecordRef<'_> {
        match self {
            LogAs::Plain => RecordRef::Delete { pid, prev_lsn, key },
            LogAs::Txn {
                commit_lsn, index, ..
            } => RecordRef::TxnWrite {
                pid,
                prev_lsn,
                commit_lsn,
                index,
            },
        }
    }
}

/// `Err(ExpectedLeaf)` unless `p` (page `pid`) is a leaf.
fn expect_leaf(pid: Pid, p: &[u8]) -> Result<()> {
    match page::kind(p) {
        KIND_LEAF => Ok(()),
        kind => Err(tree_damage(pid, TreeDamage::ExpectedLeaf { kind })),
    }
}

pub(super) fn check_kv(k: &[u8], v: &[u8]) -> Result<()> {
    if k.len() > MAX_KEY || k.len() + v.len() > MAX_KV {
        return Err(EngineError::TooLarge {
            key_len: k.len(),
            value_len: v.len(),
        });
    }
    Ok(())
}

impl Engine {
    /// The value of `key`, if any.
    ///
    /// # Errors
    /// `Closed`, `Corrupt` (a page failed validation), device errors.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_with(key, |v| v.map(<[u8]>::to_vec))
    }

    /// `f` of the value of `key` (None: absent), without copying it. `f` runs under a page
    /// latch: it must not call back into the engine.
    ///
    /// # Errors
    /// As [`Self::get`].
    pub fn get_with<R>(&self, key: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
        let Some(rc) = &self.rcache else {
            return self.get_seen(key, |v, _| f(v));
        };
        self.check_open()?;
        if let Some(v) = rc.get(key) {
            self.counters.gets.inc();
            self.counters.record_cache_hits.inc();
            return Ok(f(Some(&v)));
        }
        self.counters.record_cache_misses.inc();
        // Filled under the leaf's shared latch (get_seen runs its closure there): see rcache.rs.
        self.get_seen(key, |v, _| {
            rc.fill(key, v);
            f(v)
        })
    }

    /// Keys whose record-cache entry differs from the tree (empty: coherent; always empty with
    /// the cache off). For tests and the simulation, on a quiescent engine: a write running
    /// beside it may be seen half-way.
    ///
    /// # Errors
    /// As [`Self::get`].
    pub fn record_cache_stale(&self) -> Result<Vec<Vec<u8>>> {
        let Some(rc) = &self.rcache else {
            return Ok(Vec::new());
        };
        let mut stale = Vec::new();
        for (k, v) in rc.entries() {
            if !self.get_seen(&k, |t, _| t == Some(v.as_slice()))? {
                stale.push(k);
            }
        }
        Ok(stale)
    }

    /// [`Self::get_with`], also telling `f` the leaf it read (see [`LeafSeen`]).
    pub(crate) fn get_seen<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(Option<&[u8]>, Option<LeafSeen>) -> R,
    ) -> Result<R> {
        self.check_open()?;
        self.counters.gets.inc();
        let t = self.tree.read();
        let pid = self.find_leaf(&t, key)?;
        let g = self.pool.read(pid)?;
        expect_leaf(pid, &g.page)?;
        let v = page::search(&g.page, key)
            .ok()
            .map(|i| page::leaf_value(&g.page, i));
        Ok(f(v, LeafSeen::of(pid, &g.page)))
    }

    /// Pairs with `start <= key < end` (end None = unbounded), at most `limit`, in key order.
    ///
    /// # Errors
    /// As [`Self::get`].
    pub fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        self.scan_with(start, end, |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            out.len() < limit
        })?;
        Ok(out)
    }

    /// Visit pairs with `start <= key < end` in order until `f` returns false. `f` runs under
    /// the shared tree lock and a page latch: it must not call back into the engine.
    ///
    /// # Errors
    /// As [`Self::get`]; `Corrupt(Tree { LeafChainLoops })` for a looping leaf chain.
    pub fn scan_with(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.scan_seen(start, end, |_| {}, f)
    }

    /// [`Self::scan_with`], telling `leaf` every leaf visited (before its pairs).
    pub(crate) fn scan_seen(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        mut leaf: impl FnMut(Option<LeafSeen>),
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.check_open()?;
        let t = self.tree.read();
        let mut pid = self.find_leaf(&t, start)?;
        let mut from = None;
        let mut hops = 0u64;
        loop {
            let g = self.pool.read(pid)?;
            expect_leaf(pid, &g.page)?;
            leaf(LeafSeen::of(pid, &g.page));
            let first = *from.get_or_insert_with(|| match page::search(&g.page, start) {
                Ok(i) | Err(i) => i,
            });
            for i in first..page::nkeys(&g.page) {
                let k = page::key(&g.page, i);
                if end.is_some_and(|e| k >= e) || !f(k, page::leaf_value(&g.page, i)) {
                    return Ok(());
                }
            }
            from = Some(0);
            let next = page::link(&g.page);
            if next == page::NO_LINK {
                return Ok(());
            }
            hops += 1;
            if hops > t.next_pid {
                return Err(tree_damage(pid, TreeDamage::LeafChainLoops));
            }
            pid = next;
        }
    }

    /// Upsert with the configured durability.
    ///
    /// # Errors
    /// `TooLarge`, `Full`, `Closed`/`Poisoned`, `Corrupt`, device errors.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_with(key, value, self.cfg.durability)
    }

    /// Upsert with durability `d`.
    ///
    /// # Errors
    /// As [`Self::put`].
    ///
    /// # Panics
    /// If a change checked to fit its page does not apply (an engine bug, never input).
    pub fn put_with(&self, key: &[u8], value: &[u8], d: Durability) -> Result<()> {
        self.check_open()?;
        check_kv(key, value)?;
        self.counters.puts.inc();
        self.counters
            .logical_user_bytes
            .add(u64_of(key.len() + value.len()));
        self.wal_gate()?;
        self.yield_at(YieldPoint::Gated);
        let lsn = match self.put_blind(key, value)? {
            Some(l) => l,
            None => self.put_logged(key, value, LogAs::Plain)?,
        };
        self.yield_at(YieldPoint::Logged);
        self.after_write(lsn, d)
    }

    /// Apply and log one upsert (no WAL gate: the caller ran it); returns the record's LSN.
    ///
    /// # Panics
    /// If a change checked to fit its page does not apply (an engine bug, never input).
    pub(super) fn put_logged(&self, key: &[u8], value: &[u8], how: LogAs) -> Result<u64> {
        let lsn = {
            let t = self.tree.read();
            let mut g = self.leaf_for_write(&t, key, how)?;
            if page::leaf_fits(g.page(), key, value) {
                Some(self.put_in(&mut g, key, value, how)?)
            } else {
                None
            }
        };
        match lsn {
            Some(l) => Ok(l),
            None => self.put_smo(key, value, self.tree_options(key).append_biased, how),
        }
    }

    /// Delete `key` with the configured durability; returns whether it existed.
    ///
    /// # Errors
    /// As [`Self::put`].
    pub fn delete(&self, key: &[u8]) -> Result<bool> {
        self.delete_with(key, self.cfg.durability)
    }

    /// Delete `key` with durability `d`; returns whether it existed.
    ///
    /// # Errors
    /// As [`Self::put`].
    ///
    /// # Panics
    /// If a key found under the page latch vanishes (an engine bug, never input).
    pub fn delete_with(&self, key: &[u8], d: Durability) -> Result<bool> {
        self.check_open()?;
        if key.len() > MAX_KEY {
            return Ok(false);
        }
        self.counters.deletes.inc();
        self.wal_gate()?;
        self.yield_at(YieldPoint::Gated);
        let Some(lsn) = self.delete_logged(key, LogAs::Plain)? else {
            // A sync no-op still orders after earlier async writes: make them durable.
            if d == Durability::Sync {
                self.wal.flush(self.wal.next_lsn())?;
            }
            return Ok(false);
        };
        self.yield_at(YieldPoint::Logged);
        self.after_write(lsn, d)?;
        Ok(true)
    }

    /// Apply and log one delete (no WAL gate); the record's LSN, or None if `key` is absent.
    ///
    /// # Panics
    /// If a key found under the page latch vanishes (an engine bug, never input).
    pub(super) fn delete_logged(&self, key: &[u8], how: LogAs) -> Result<Option<u64>> {
        let (lsn, emptied) = {
            let t = self.tree.read();
            let mut g = self.leaf_for_write(&t, key, how)?;
            let leaf = g.pid();
            if page::search(g.page(), key).is_err() {
                return Ok(None);
            }
            g.mark_dirty();
            let prev_lsn = page::lsn(g.page());
            let lsn = self.wal.append(&how.delete(leaf, prev_lsn, key))?;
            let removed = page::leaf_delete(g.page_mut(), key);
            assert!(removed, "page {leaf}: a key found under the latch vanished");
            if let Some(rc) = &self.rcache {
                rc.remove(key);
            }
            g.set_lsn(lsn);
            (lsn, page::nkeys(g.page()) == 0 && t.height > 1)
        };
        if emptied {
            // Space reclaimed: the empty leaf leaves the tree (`merge.rs`), with the latch and
            // the shared tree lock released.
            self.free_empty_leaf(key)?;
        }
        Ok(Some(lsn))
    }

    /// Visit pairs with `start <= key < end` in descending order until `f` returns false.
    /// Leaves have no left links: each step descends again to the leaf holding the keys just
    /// below the lowest key boundary reached so far (the structure is stable under the
    /// shared tree lock held throughout). `f` must not call back into the engine.
    ///
    /// # Errors
    /// As [`Self::scan_with`].
    pub fn scan_rev_with(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.scan_rev_seen(start, end, |_| {}, f)
    }

    /// [`Self::scan_rev_with`], telling `leaf` every leaf visited (before its pairs).
    pub(crate) fn scan_rev_seen(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        mut leaf: impl FnMut(Option<LeafSeen>),
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.check_open()?;
        let t = self.tree.read();
        let mut below: Option<Vec<u8>> = end.map(<[u8]>::to_vec);
        for _ in 0..=t.next_pid {
            let (pid, fence) = self.find_leaf_below(&t, below.as_deref())?;
            let g = self.pool.read(pid)?;
            expect_leaf(pid, &g.page)?;
            leaf(LeafSeen::of(pid, &g.page));
            let top = match below.as_deref() {
                Some(b) => match page::search(&g.page, b) {
                    Ok(i) | Err(i) => i,
                },
                None => page::nkeys(&g.page),
            };
            for i in (0..top).rev() {
                let k = page::key(&g.page, i);
                if k < start || !f(k, page::leaf_value(&g.page, i)) {
                    return Ok(());
                }
            }
            match fence {
                Some(fk) if fk.as_slice() > start => below = Some(fk),
                _ => return Ok(()),
            }
        }
        Err(tree_damage(t.root, TreeDamage::LeafChainLoops))
    }

    /// The leaf holding the greatest keys below `below` (None: the last leaf), and that
    /// leaf's lower fence (None: the leftmost leaf).
    fn find_leaf_below(
        &self,
        t: &TreeMeta,
        below: Option<&[u8]>,
    ) -> Result<(Pid, Option<Vec<u8>>)> {
        let mut pid = t.root;
        let mut fence: Option<Vec<u8>> = None;
        for _ in 0..t.height - 1 {
            let g = self.pool.read(pid)?;
            if page::kind(&g.page) != KIND_INNER {
                return Err(tree_damage(
                    pid,
                    TreeDamage::ExpectedInner {
                        kind: page::kind(&g.page),
                    },
                ));
            }
            // Separators >= `below` lead to keys >= below: take the child left of the first.
            let j = match below {
                Some(b) => match page::search(&g.page, b) {
                    Ok(i) | Err(i) => i,
                },
                None => page::nkeys(&g.page),
            };
            if j == 0 {
                pid = page::link(&g.page);
            } else {
                fence = Some(page::key(&g.page, j - 1).to_vec());
                pid = page::inner_child(&g.page, j - 1);
            }
        }
        Ok((pid, fence))
    }

    /// The leaf responsible for `key`, latched exclusively: the hint of a group write if it
    /// is still a leaf in the tree with the LSN its read saw (then it holds the same rows and
    /// still covers the key, see [`LeafSeen`]), else found by descending. `t`: the shared
    /// tree lock, held (no leaf leaves the tree meanwhile).
    fn leaf_for_write(&self, t: &TreeMeta, key: &[u8], how: LogAs) -> Result<WriteGuard<'_>> {
        if let LogAs::Txn { leaf: Some(l), .. } = how {
            // A freed page is not read: the store may have released it.
            if !self.free.lock().contains(l.pid) {
                let g = self.pool.write(l.pid)?;
                if page::kind(g.page()) == KIND_LEAF && page::lsn(g.page()) == l.lsn {
                    return Ok(g);
                }
            }
        }
        let pid = self.find_leaf(t, key)?;
        self.pool.write(pid)
    }

    /// Descend to the leaf responsible for `key` (one shared latch at a time).
    pub(super) fn find_leaf(&self, t: &TreeMeta, key: &[u8]) -> Result<Pid> {
        let mut pid = t.root;
        for _ in 0..t.height - 1 {
            let g = self.pool.read(pid)?;
            if page::kind(&g.page) != KIND_INNER {
                return Err(tree_damage(
                    pid,
                    TreeDamage::ExpectedInner {
                        kind: page::kind(&g.page),
                    },
                ));
            }
            pid = page::inner_find(&g.page, key);
        }
        Ok(pid)
    }

    pub(super) fn after_write(&self, lsn: u64, d: Durability) -> Result<()> {
        match d {
            Durability::Sync => self.wal.flush(lsn + 1),
            Durability::Async => {
                if self.wal.unflushed() > self.cfg.async_flush_bytes {
                    self.wal.flush_all()?;
                }
                Ok(())
            }
        }
    }
}
