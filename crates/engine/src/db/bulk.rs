//! Fast bulk load: a sorted bottom-up build into an empty tree.
//!
//! Leaves are filled completely in key order, then each inner level over the one below,
//! written straight to the store in large batches (`WriteKind::Bulk`: in place without the
//! doublewrite area and with one device flush at the end) with no WAL record per put and no
//! buffer-pool traffic. The new pages get
//! pids at and above the allocation mark, which no durable state references; only when they
//! are all durable does one Struct record install the new root and mark (and free the old
//! empty root leaf), and the WAL is flushed.
//!
//! Crash guarantee: the load is durable when [`Engine::bulk_load`] returns. A crash (or an
//! error, e.g. unsorted input) before that leaves the database as it was: an empty tree
//! (the pages already written sit above the allocation mark and are rebuilt from the log when
//! their pids are allocated again; out of place their copies stay mapped until then).

use super::split::Plan;
use super::Engine;
use crate::error::{EngineError, Exhausted, Pid, Result};
use crate::format::structop::StructOp;
use crate::page::{self, KIND_INNER, KIND_LEAF, PAGE_SIZE};
use crate::store::WriteKind;

/// A page of a level being built: its first key and pid.
type Child = (Vec<u8>, Pid);

/// Pages per store write (1 MiB).
const BATCH: usize = 256;

/// Streams finished pages to the store.
struct Writer<'a> {
    eng: &'a Engine,
    next: Pid,
    cap: Pid,
    lsn: u64,
    batch: Vec<(Pid, Vec<u8>)>,
}

impl Writer<'_> {
    fn alloc(&mut self) -> Result<Pid> {
        if self.next >= self.cap {
            return Err(Exhausted::DataRegion { pages: self.cap }.into());
        }
        self.next += 1;
        Ok(self.next - 1)
    }

    /// Seal and queue one finished page.
    fn emit(&mut self, pid: Pid, mut p: Vec<u8>) -> Result<()> {
        page::set_lsn(&mut p, self.lsn);
        self.eng.pool.stamp_unpooled(&mut p);
        page::seal(&mut p);
        // Checked when written, like every page the engine writes.
        page::validate(&p, pid)?;
        self.batch.push((pid, p));
        if self.batch.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let refs: Vec<(Pid, &[u8])> = self.batch.iter().map(|(p, d)| (*p, &d[..])).collect();
        self.eng.store.write_pages(&refs, WriteKind::Bulk)?;
        self.batch.clear();
        Ok(())
    }
}

fn fresh(kind: u8, pid: Pid) -> Vec<u8> {
    let mut p = vec![0u8; PAGE_SIZE];
    page::init(&mut p, kind, pid);
    p
}

impl Engine {
    /// Load `records` (strictly ascending keys) into the empty tree by a bottom-up build;
    /// returns the number loaded. Leaves and inner nodes are filled completely. The load is
    /// durable when this returns; a crash or an error before leaves the tree empty. Holds the
    /// exclusive tree lock throughout (other operations wait).
    ///
    /// # Errors
    /// `BulkNotEmpty`, `BulkUnsorted { index }`, `TooLarge`, `Full`, `Closed`/`Poisoned`,
    /// device errors.
    ///
    /// # Panics
    /// If the record cache holds an entry while the tree is empty (an engine bug).
    pub fn bulk_load<K, V>(&self, records: impl IntoIterator<Item = (K, V)>) -> Result<u64>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.check_open()?;
        self.wal_gate()?;
        let mut t = self.tree.write();
        let root_keys = page::nkeys(&self.pool.read(t.root)?.page);
        if t.height != 1 || root_keys != 0 {
            return Err(EngineError::BulkNotEmpty {
                height: t.height,
                root_keys,
            });
        }
        // Leaves are written below the per-key paths the record cache follows; the tree is
        // empty, so the cache holds nothing (it caches only values found in the tree).
        assert!(
            self.rcache.as_ref().is_none_or(|rc| rc.used() == 0),
            "an empty tree leaves the record cache empty"
        );
        // Every record appended later has a higher LSN than the pages (the tree lock keeps
        // writers out until the install record, which is the next one).
        let lsn = self.wal.next_lsn();
        self.wal.flush(lsn)?;
        let mut w = Writer {
            eng: self,
            next: t.next_pid,
            cap: self.store.capacity_pages(),
            lsn,
            batch: Vec::with_capacity(BATCH),
        };
        let (n, mut level) = self.bulk_leaves(&mut w, records)?;
        if n == 0 {
            return Ok(0);
        }
        let mut height = 1;
        while level.len() > 1 {
            level = bulk_inner_level(&mut w, &level)?;
            height += 1;
        }
        w.flush()?;
        // In place, bulk batches are not flushed one by one: every page is durable before
        // the install record exists.
        self.dev.flush()?;
        let (root, next_pid) = (level[0].1, w.next);
        let r = self.install(&mut t, root, next_pid, height);
        if r.is_err() {
            self.poison();
        }
        r.map(|()| n)
    }

    /// Build and write the leaves: (records, (first key, pid) of every leaf).
    fn bulk_leaves<K, V>(
        &self,
        w: &mut Writer<'_>,
        records: impl IntoIterator<Item = (K, V)>,
    ) -> Result<(u64, Vec<Child>)>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let mut out: Vec<Child> = Vec::new();
        let mut cur: Option<(Pid, Vec<u8>)> = None;
        let mut last: Option<Vec<u8>> = None;
        let mut n = 0u64;
        for (k, v) in records {
            let (k, v) = (k.as_ref(), v.as_ref());
            super::tree::check_kv(k, v)?;
            if last.as_deref().is_some_and(|l| l >= k) {
                return Err(EngineError::BulkUnsorted { index: n });
            }
            let fits = cur
                .as_mut()
                .is_some_and(|(_, p)| page::leaf_append(p, k, v));
            if !fits {
                let pid = w.alloc()?;
                if let Some((prev, mut p)) = cur.take() {
                    page::set_link(&mut p, pid);
                    w.emit(prev, p)?;
                }
                let mut p = fresh(KIND_LEAF, pid);
                let ok = page::leaf_append(&mut p, k, v);
                assert!(ok, "a record of at most MAX_KV bytes fits an empty leaf");
                out.push((k.to_vec(), pid));
                cur = Some((pid, p));
            }
            match &mut last {
                Some(l) => {
                    l.clear();
                    l.extend_from_slice(k);
                }
                None => last = Some(k.to_vec()),
            }
            n += 1;
        }
        if let Some((pid, p)) = cur {
            w.emit(pid, p)?;
        }
        Ok((n, out))
    }

    /// One Struct record: the new root and mark, the old (empty) root leaf freed; then the
    /// WAL flush that makes the load durable.
    fn install(
        &self,
        t: &mut crate::treelock::TreeWriteGuard<'_>,
        root: Pid,
        next_pid: Pid,
        height: usize,
    ) -> Result<()> {
        let old = t.root;
        let g = self.pool.write(old)?;
        let mut plan = Plan::new();
        plan.ops.push(StructOp::Free {
            pid: old,
            prev: page::lsn(g.page()),
        });
        plan.guards.push(g);
        let lsn = plan.commit(self, root, next_pid)?;
        t.root = root;
        t.next_pid = next_pid;
        t.height = height;
        self.free.lock().push(old, lsn, next_pid);
        drop(plan);
        self.wal.flush(lsn + 1)
    }
}

/// Build one inner level over `below` ((first key, pid) per page): its (first key, pid)s.
fn bulk_inner_level(w: &mut Writer<'_>, below: &[Child]) -> Result<Vec<Child>> {
    let mut out: Vec<Child> = Vec::new();
    let mut cur: Option<(Pid, Vec<u8>)> = None;
    for (k, child) in below {
        let fits = cur
            .as_mut()
            .is_some_and(|(_, p)| page::inner_append(p, k, *child));
        if !fits {
            if let Some((pid, p)) = cur.take() {
                w.emit(pid, p)?;
            }
            let pid = w.alloc()?;
            let mut p = fresh(KIND_INNER, pid);
            page::set_link(&mut p, *child);
            out.push((k.clone(), pid));
            cur = Some((pid, p));
        }
    }
    if let Some((pid, p)) = cur {
        w.emit(pid, p)?;
    }
    Ok(out)
}
