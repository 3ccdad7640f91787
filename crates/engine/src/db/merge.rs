//! Space reclaimed on the delete path: a leaf emptied by deletes leaves the tree, under the
//! exclusive tree lock, in one Struct record: its left neighbour leaf skips it in the leaf
//! chain, its parent drops the pointer to it (an ancestor left without children goes too),
//! every page that left is freed (`freelist.rs`), and a root left with a single child is
//! replaced by that child. The only leaf of the tree always stays.

use super::split::Plan;
use super::Engine;
use crate::error::{tree_damage, Pid, Result, TreeDamage};
use crate::format::structop::StructOp;
use crate::page::{self, KIND_INNER, KIND_LEAF};

/// An inner node on the path and the child taken (None: the leftmost).
type Step = (Pid, Option<usize>);

impl Engine {
    /// After a delete left the leaf holding `key` empty: take it out of the tree. Does
    /// nothing if the leaf was refilled meanwhile or is the tree's only leaf.
    ///
    /// # Errors
    /// Page and device errors (the engine is poisoned if the change was half made).
    pub(super) fn free_empty_leaf(&self, key: &[u8]) -> Result<()> {
        let mut t = self.tree.write();
        if t.height < 2 {
            return Ok(());
        }
        let mut path: Vec<Step> = Vec::with_capacity(t.height);
        let mut pid = t.root;
        for _ in 0..t.height - 1 {
            let g = self.pool.read(pid)?;
            let kind = page::kind(&g.page);
            if kind != KIND_INNER {
                return Err(tree_damage(pid, TreeDamage::ExpectedInner { kind }));
            }
            let pos = match page::search(&g.page, key) {
                Ok(i) => Some(i),
                Err(0) => None,
                Err(i) => Some(i - 1),
            };
            path.push((pid, pos));
            pid = pos.map_or(page::link(&g.page), |i| page::inner_child(&g.page, i));
        }
        {
            let g = self.pool.read(pid)?;
            if page::kind(&g.page) != KIND_LEAF || page::nkeys(&g.page) != 0 {
                return Ok(());
            }
        }
        // Ancestors (from the bottom) whose only child is on the path go with the leaf.
        let mut gone = 0;
        for (p, _) in path.iter().rev() {
            if page::nkeys(&self.pool.read(*p)?.page) != 0 {
                break;
            }
            gone += 1;
        }
        if gone == path.len() {
            return Ok(());
        }
        let r = self.unlink_leaf(&mut t, &path, pid, gone);
        if r.is_err() {
            self.poison();
        }
        r
    }

    /// Plan, log and apply the removal of leaf `leaf` and the `gone` ancestors above it.
    fn unlink_leaf(
        &self,
        t: &mut crate::treelock::TreeWriteGuard<'_>,
        path: &[Step],
        leaf: Pid,
        gone: usize,
    ) -> Result<()> {
        let keep = path.len() - 1 - gone;
        let (parent, parent_pos) = path[keep];
        let mut freed: Vec<Pid> = vec![leaf];
        freed.extend(path[keep + 1..].iter().rev().map(|(p, _)| *p));
        let mut plan = Plan::new();
        if let Some(left) = self.left_neighbour(path)? {
            let q = self.pool.read(leaf)?;
            let link = page::link(&q.page);
            drop(q);
            let g = self.pool.write(left)?;
            plan.ops.push(StructOp::Link {
                pid: left,
                prev: page::lsn(g.page()),
                link,
            });
            plan.guards.push(g);
        }
        let removed = *freed.last().expect("the leaf is freed");
        let pg = self.pool.write(parent)?;
        plan.ops.push(StructOp::Remove {
            pid: parent,
            prev: page::lsn(pg.page()),
            child: removed,
        });
        // A root left with one child: the child becomes the root.
        let mut root = t.root;
        if parent == t.root && page::nkeys(pg.page()) == 1 {
            root = match parent_pos {
                None => page::inner_child(pg.page(), 0),
                Some(_) => page::link(pg.page()),
            };
            freed.push(parent);
        }
        plan.guards.push(pg);
        for &p in &freed {
            let g = if p == parent {
                plan.guard(p).page().to_vec()
            } else {
                let g = self.pool.write(p)?;
                let img = g.page().to_vec();
                plan.guards.push(g);
                img
            };
            plan.ops.push(StructOp::Free {
                pid: p,
                prev: page::lsn(&g),
            });
        }
        let lsn = plan.commit(self, root, t.next_pid)?;
        if root != t.root {
            t.root = root;
            t.height -= 1;
        }
        let mut fl = self.free.lock();
        for p in freed {
            fl.push(p, lsn, t.next_pid);
        }
        Ok(())
    }

    /// The leaf left of the one `path` leads to (None: it is the leftmost leaf): the
    /// rightmost leaf under the child left of the path at the deepest level where the path
    /// did not take the leftmost child.
    fn left_neighbour(&self, path: &[Step]) -> Result<Option<Pid>> {
        let Some(j) = path.iter().rposition(|(_, pos)| pos.is_some()) else {
            return Ok(None);
        };
        let (p, pos) = path[j];
        let mut pid = {
            let g = self.pool.read(p)?;
            match pos {
                Some(0) => page::link(&g.page),
                Some(i) => page::inner_child(&g.page, i - 1),
                None => unreachable!("position checked above"),
            }
        };
        for _ in j + 1..path.len() {
            let g = self.pool.read(pid)?;
            let kind = page::kind(&g.page);
            if kind != KIND_INNER {
                return Err(tree_damage(pid, TreeDamage::ExpectedInner { kind }));
            }
            let n = page::nkeys(&g.page);
            pid = if n == 0 {
                page::link(&g.page)
            } else {
                page::inner_child(&g.page, n - 1)
            };
        }
        Ok(Some(pid))
    }
}
