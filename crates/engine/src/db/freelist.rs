//! The free list: pids that left the tree (a leaf emptied by deletes, a childless inner
//! node, a collapsed root) and may be reused by the next split or new root.
//!
//! Persistence: the free list is derived from the durable tree, never stored on its own. At
//! open, after redo, every pid below the allocation mark that no inner node (and no root)
//! references is free ([`Engine::rebuild_free_list`], which also checks that no page is
//! referenced twice). In between, frees and reuses are in the log: a page leaves the tree
//! by a `Free` operation of a Struct record, and comes back by a `Build` operation. So the
//! free list can neither leak a page nor hand one out twice across a crash.
//!
//! Releasing to the store ([`crate::store::PageStore::release`]; out of place the page's
//! slot becomes garbage for DB GC) waits until a checkpoint's redo LSN has passed the free:
//! before that, redo may still need the page's last image.

use super::Engine;
use crate::error::{tree_damage, Pid, Result, TreeDamage};
use crate::page::{self, KIND_INNER};
use std::collections::{BTreeMap, BTreeSet};

/// The free pids and which of them the store has not been told about yet.
#[derive(Debug, Default)]
pub(crate) struct FreeList {
    free: BTreeSet<Pid>,
    /// Free pids not yet released to the store -> LSN of the record that freed them.
    unreleased: BTreeMap<Pid, u64>,
}

impl FreeList {
    /// `pid` left the tree at `lsn`.
    ///
    /// # Panics
    /// If it is already free or beyond the allocation mark (a structure bug).
    pub(crate) fn push(&mut self, pid: Pid, lsn: u64, next_pid: Pid) {
        assert!(
            pid < next_pid,
            "freed page {pid} beyond the mark {next_pid}"
        );
        assert!(self.free.insert(pid), "page {pid} freed twice");
        self.unreleased.insert(pid, lsn);
    }

    /// Take the lowest free pid for reuse.
    ///
    /// # Panics
    /// If it is at or beyond the allocation mark.
    pub(crate) fn pop(&mut self, next_pid: Pid) -> Option<Pid> {
        let pid = self.free.pop_first()?;
        assert!(pid < next_pid, "free page {pid} beyond the mark {next_pid}");
        self.unreleased.remove(&pid);
        Some(pid)
    }

    /// Free pids.
    pub(crate) fn len(&self) -> u64 {
        crate::num::u64_of(self.free.len())
    }

    /// Is `pid` free?
    pub(crate) fn contains(&self, pid: Pid) -> bool {
        self.free.contains(&pid)
    }

    /// The pids freed before `redo_lsn` (no redo can need their images any more), removed
    /// from the unreleased set.
    pub(crate) fn take_releasable(&mut self, redo_lsn: u64) -> Vec<Pid> {
        let out: Vec<Pid> = self
            .unreleased
            .iter()
            .filter(|&(_, &lsn)| lsn < redo_lsn)
            .map(|(&p, _)| p)
            .collect();
        for p in &out {
            assert!(self.free.contains(p), "unreleased page {p} is not free");
            self.unreleased.remove(p);
        }
        out
    }
}

/// Where the tree's pages are: inner pages, and leaves by the table whose key prefix their
/// first record carries ([`Engine::space_usage`]). `leaves + inner` = allocation mark - free.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SpaceUsage {
    /// Inner pages (the root included when the tree has more than one level): the pages the
    /// tree uses (allocation mark - free) that are not in the leaf chain.
    pub inner: u64,
    /// Leaves per table number (`None`: keys outside any named table; an empty only leaf).
    pub leaves: BTreeMap<Option<u16>, LeafUsage>,
}

/// Leaves of one table: how many, and the live record bytes and records they hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LeafUsage {
    /// Leaf pages.
    pub pages: u64,
    /// Live record bytes in them (keys, values and record headers; slots excluded).
    pub bytes: u64,
    /// Records.
    pub records: u64,
}

impl SpaceUsage {
    /// All leaves.
    #[must_use]
    pub fn leaf_pages(&self) -> u64 {
        self.leaves.values().map(|l| l.pages).sum()
    }
}

impl Engine {
    /// The tree's pages by kind and table: walks down to the leftmost leaf and the leaf chain under
    /// the shared tree lock (writers that change the structure wait; a costly call, for
    /// measurements and tests).
    ///
    /// # Errors
    /// `Corrupt(Tree)` if a level is not what the height says; page and device errors.
    ///
    /// # Panics
    /// If the leaf chain is longer than the allocation mark (a cycle).
    pub fn space_usage(&self) -> Result<SpaceUsage> {
        let t = self.tree.read();
        let mut out = SpaceUsage::default();
        let mut pid = t.root;
        for _ in 1..t.height {
            let g = self.pool.read(pid)?;
            let kind = page::kind(&g.page);
            if kind != KIND_INNER {
                return Err(tree_damage(pid, TreeDamage::ExpectedInner { kind }));
            }
            pid = page::link(&g.page);
        }
        let mut walked = 0;
        while pid != page::NO_LINK {
            walked += 1;
            assert!(walked <= t.next_pid, "the leaf chain loops");
            let g = self.pool.read(pid)?;
            let table = match page::nkeys(&g.page) {
                0 => None,
                _ => match page::key(&g.page, 0) {
                    [crate::catalog::TABLE_BYTE, a, b, ..] => Some(u16::from_be_bytes([*a, *b])),
                    _ => None,
                },
            };
            let u = out.leaves.entry(table).or_default();
            u.pages += 1;
            u.bytes += page::valid_bytes(&g.page);
            u.records += crate::num::u64_of(page::nkeys(&g.page));
            pid = page::link(&g.page);
        }
        let used = t.next_pid - self.free.lock().len();
        out.inner = used
            .checked_sub(out.leaf_pages())
            .expect("the leaf chain holds no more pages than the tree uses");
        Ok(out)
    }
}

impl Engine {
    /// The buffer pool (unit tests of the pool through a real engine).
    #[cfg(test)]
    pub(crate) fn pool_for_tests(&self) -> &crate::buffer::BufferPool {
        &self.pool
    }
}

impl Engine {
    /// Data pages: (allocation mark, free pages among them). The tree holds the difference.
    #[must_use]
    pub fn page_usage(&self) -> (u64, u64) {
        let mark = self.tree.read().next_pid;
        (mark, self.free.lock().len())
    }

    /// Derive the free list from the tree under `roots` (open, after redo): every pid below
    /// the allocation mark that is neither a root nor a child of an inner node. Reads inner
    /// nodes only. They will be released to the store after the next checkpoint.
    ///
    /// # Errors
    /// `Corrupt(Tree { BadChild })` for a page referenced twice or beyond the mark; page and
    /// device errors.
    pub(super) fn rebuild_free_list(&self, roots: &[Pid], next_pid: Pid) -> Result<()> {
        let n = crate::num::usize_of(next_pid);
        let mut used = vec![false; n];
        for &r in roots {
            mark(&mut used, r, next_pid)?;
            // Inner levels only: the children of the lowest inner level are leaves.
            let mut level = vec![r];
            for _ in 1..self.measure_height(r)? {
                let mut below = Vec::new();
                for pid in level {
                    let g = self.pool.read(pid)?;
                    let kind = page::kind(&g.page);
                    if kind != KIND_INNER {
                        return Err(tree_damage(pid, TreeDamage::ExpectedInner { kind }));
                    }
                    let children = std::iter::once(page::link(&g.page))
                        .chain((0..page::nkeys(&g.page)).map(|i| page::inner_child(&g.page, i)));
                    for c in children {
                        mark(&mut used, c, next_pid)?;
                        below.push(c);
                    }
                }
                level = below;
            }
        }
        let mut fl = self.free.lock();
        *fl = FreeList::default();
        for (pid, _) in used.iter().enumerate().filter(|(_, u)| !**u) {
            fl.push(crate::num::u64_of(pid), 0, next_pid);
        }
        Ok(())
    }

    /// After a checkpoint with redo LSN `redo_lsn` is durable: release the pages freed
    /// before it to the store (their images are needed by no redo any more).
    ///
    /// # Errors
    /// Store errors.
    pub(super) fn release_freed(&self, redo_lsn: u64) -> Result<()> {
        // Under the free-list lock: a split cannot take one of these pages for reuse (and
        // write it) between the choice and the release. (Lock order: free list, then the
        // store's; nothing holding the store's lock takes the free list.)
        let mut fl = self.free.lock();
        for pid in fl.take_releasable(redo_lsn) {
            self.store.release(pid)?;
        }
        Ok(())
    }
}

fn mark(used: &mut [bool], pid: Pid, next_pid: Pid) -> Result<()> {
    let bad = || {
        tree_damage(
            pid,
            TreeDamage::BadChild {
                child: pid,
                next_pid,
            },
        )
    };
    let slot = usize::try_from(pid)
        .ok()
        .and_then(|i| used.get_mut(i))
        .ok_or_else(bad)?;
    if *slot {
        return Err(bad());
    }
    *slot = true;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::FreeList;

    #[test]
    fn reuse_takes_the_lowest_and_cancels_the_release() {
        let mut f = FreeList::default();
        f.push(7, 100, 10);
        f.push(3, 200, 10);
        assert_eq!(f.len(), 2);
        assert_eq!(f.pop(10), Some(3));
        assert!(!f.contains(3) && f.contains(7));
        // 3 was reused: only 7 is released, and only once the redo LSN passed its free.
        assert!(f.take_releasable(100).is_empty());
        assert_eq!(f.take_releasable(101), vec![7]);
        assert!(f.take_releasable(1000).is_empty());
        assert_eq!(f.pop(10), Some(7));
        assert_eq!(f.pop(10), None);
    }

    #[test]
    #[should_panic(expected = "freed twice")]
    fn a_double_free_is_caught() {
        let mut f = FreeList::default();
        f.push(1, 5, 10);
        f.push(1, 6, 10);
    }
}
