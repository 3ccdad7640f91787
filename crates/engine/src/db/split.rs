//! Structure modifications: a put that does not fit its leaf splits it (and inner nodes up
//! the path, and makes a new root when the root splits), under the exclusive tree lock. The
//! whole SMO is one WAL record with the images of every page it rewrote (each image carries
//! the page's LSN before the SMO, so redo can cross-check it), the new root and the
//! allocation mark: atomic in redo.

use super::Engine;
use crate::buffer::WriteGuard;
use crate::error::{tree_damage, Exhausted, Pid, Result, TreeDamage};
use crate::format::wal::RecordRef;
use crate::page::{self, Entry};
use crate::treelock::TreeWriteGuard;

/// Split point minimizing the larger half (sizes include the slot).
fn split_point(sizes: &[usize], skip_middle: bool) -> usize {
    let total: usize = sizes.iter().sum();
    let (mut best, mut best_max) = (1, usize::MAX);
    let mut left = 0;
    for s in 1..sizes.len() {
        left += sizes[s - 1];
        let right = total - left - if skip_middle { sizes[s] } else { 0 };
        let m = left.max(right);
        if m < best_max {
            best_max = m;
            best = s;
        }
    }
    best
}

/// A split in progress: the separator and new right child to insert into the parent.
struct Carry {
    sep: Vec<u8>,
    new_child: Pid,
    left_child: Pid,
}

impl Engine {
    /// Put with structure modification, under the exclusive tree lock.
    pub(super) fn put_smo(&self, key: &[u8], value: &[u8]) -> Result<u64> {
        let mut t = self.tree.write();
        // Path from the root to the leaf.
        let mut path = Vec::with_capacity(t.height);
        let mut pid = t.root;
        for _ in 0..t.height - 1 {
            path.push(pid);
            let g = self.pool.read(pid)?;
            pid = page::inner_find(&g.page, key);
        }
        let mut leaf = self.pool.write(pid)?;
        if page::leaf_fits(leaf.page(), key, value) {
            // Another thread made room meanwhile.
            leaf.mark_dirty();
            let prev_lsn = page::lsn(leaf.page());
            let lsn = self.wal.append(&RecordRef::Put {
                pid,
                prev_lsn,
                key,
                value,
            })?;
            let applied = page::leaf_put(leaf.page_mut(), key, value);
            assert!(applied, "page {pid}: a put checked to fit did not apply");
            leaf.set_lsn(lsn);
            return Ok(lsn);
        }
        // Worst case: every level splits plus a new root.
        let pages_needed = 2 * crate::num::u64_of(t.height) + 1;
        if t.next_pid + pages_needed > self.store.capacity_pages() {
            return Err(Exhausted::DataRegion {
                pages: self.store.capacity_pages(),
            }
            .into());
        }
        match self.split_and_log(&mut t, path, leaf, key, value) {
            Ok(lsn) => Ok(lsn),
            Err(e) => {
                // Pages may be modified in memory but not logged: refuse further work.
                self.poison();
                Err(e)
            }
        }
    }

    fn split_and_log(
        &self,
        t: &mut TreeWriteGuard<'_>,
        path: Vec<Pid>,
        leaf: WriteGuard<'_>,
        key: &[u8],
        value: &[u8],
    ) -> Result<u64> {
        let mut guards = Vec::with_capacity(2 * path.len() + 3);
        let carry = self.split_leaf(t, leaf, key, value, &mut guards)?;
        self.propagate(t, path, carry, &mut guards)?;
        let pages: Vec<(Pid, &[u8])> = guards.iter().map(|g| (g.pid(), g.page())).collect();
        let rec = RecordRef::Smo {
            root: t.root,
            next_pid: t.next_pid,
            pages: &pages,
        };
        for g in &guards {
            g.mark_dirty();
        }
        // Cannot fail while the gate keeps the WAL under its limit (the caller poisons the
        // engine if it does: the in-memory tree would be ahead of the log).
        let lsn = self.wal.append(&rec)?;
        drop(pages);
        for g in &mut guards {
            g.set_lsn(lsn);
        }
        Ok(lsn)
    }

    /// Split the leaf with `key` inserted; pushes the leaf and its new right sibling.
    fn split_leaf<'a>(
        &'a self,
        t: &mut TreeWriteGuard<'_>,
        mut leaf: WriteGuard<'a>,
        key: &[u8],
        value: &[u8],
        guards: &mut Vec<WriteGuard<'a>>,
    ) -> Result<Carry> {
        let leaf_pid = leaf.pid();
        let mut entries: Vec<Entry> = page::leaf_entries(leaf.page());
        let appended = match entries.binary_search_by(|(k, _)| k.as_slice().cmp(key)) {
            Ok(i) => {
                entries[i].1 = value.to_vec();
                false
            }
            Err(i) => {
                entries.insert(i, (key.to_vec(), value.to_vec()));
                i == entries.len() - 1
            }
        };
        if entries.len() < 2 {
            // A single record always fits a page (MAX_KV): the page must be damaged.
            return Err(tree_damage(
                leaf_pid,
                TreeDamage::SplitTooSmall {
                    records: entries.len(),
                },
            ));
        }
        let s = if appended {
            // Sequential inserts: keep the old leaf full, start a new one.
            entries.len() - 1
        } else {
            let sizes: Vec<usize> = entries
                .iter()
                .map(|(k, v)| page::leaf_record_size(k, v) + page::SLOT)
                .collect();
            split_point(&sizes, false)
        };
        let right_pid = t.next_pid;
        t.next_pid += 1;
        let mut right = self.pool.create(right_pid)?;
        let prev = page::lsn(leaf.page());
        let old_link = page::link(leaf.page());
        page::leaf_build(right.page_mut(), right_pid, &entries[s..], old_link);
        page::leaf_build(leaf.page_mut(), leaf_pid, &entries[..s], right_pid);
        // The image in the log carries the page's LSN before the SMO (redo cross-checks it).
        page::set_lsn(leaf.page_mut(), prev);
        let sep = entries[s].0.clone();
        guards.push(leaf);
        guards.push(right);
        Ok(Carry {
            sep,
            new_child: right_pid,
            left_child: leaf_pid,
        })
    }

    /// Insert the separator into the parents, splitting them as needed, up to a new root.
    fn propagate<'a>(
        &'a self,
        t: &mut TreeWriteGuard<'_>,
        mut path: Vec<Pid>,
        mut c: Carry,
        guards: &mut Vec<WriteGuard<'a>>,
    ) -> Result<()> {
        loop {
            let Some(parent_pid) = path.pop() else {
                // Root split: new root.
                let root_pid = t.next_pid;
                t.next_pid += 1;
                let mut r = self.pool.create(root_pid)?;
                page::inner_build(
                    r.page_mut(),
                    root_pid,
                    c.left_child,
                    &[(c.sep, c.new_child)],
                );
                guards.push(r);
                t.root = root_pid;
                t.height += 1;
                return Ok(());
            };
            let mut p = self.pool.write(parent_pid)?;
            if page::inner_insert(p.page_mut(), &c.sep, c.new_child) {
                guards.push(p);
                return Ok(());
            }
            let mut es = page::inner_entries(p.page());
            let i = match es.binary_search_by(|(k, _)| k.as_slice().cmp(&c.sep)) {
                Ok(i) | Err(i) => i,
            };
            es.insert(i, (c.sep, c.new_child));
            let sizes: Vec<usize> = es
                .iter()
                .map(|(k, _)| page::inner_record_size(k) + page::SLOT)
                .collect();
            let m = split_point(&sizes, true);
            let rp = t.next_pid;
            t.next_pid += 1;
            let mut r = self.pool.create(rp)?;
            let prev = page::lsn(p.page());
            let leftmost = page::link(p.page());
            page::inner_build(r.page_mut(), rp, es[m].1, &es[m + 1..]);
            page::inner_build(p.page_mut(), parent_pid, leftmost, &es[..m]);
            page::set_lsn(p.page_mut(), prev);
            c = Carry {
                sep: es[m].0.clone(),
                new_child: rp,
                left_child: parent_pid,
            };
            guards.push(p);
            guards.push(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split_point;

    #[test]
    fn split_point_minimizes_the_larger_half() {
        assert_eq!(split_point(&[10, 10, 10, 10], false), 2);
        assert_eq!(split_point(&[30, 10, 10, 10], false), 1);
        // Inner splits move the middle key up: it counts on neither side.
        assert_eq!(split_point(&[10, 10, 10], true), 1);
    }
}
