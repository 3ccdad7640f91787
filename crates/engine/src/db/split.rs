//! Structure modifications: a put that does not fit its leaf splits it (and inner nodes up
//! the path, and makes a new root when the root splits), under the exclusive tree lock.
//! The split is logged logically: one Struct record (`format::structop`) with small page
//! operations (the left leaf keeps the keys below the separator; the new right leaf is built
//! from the records that move; the parent gets separator -> new page; inner splits and a new
//! root are built from their entries), then the put itself as an ordinary Put record. Redo
//! applies each operation iff its page's LSN is below the record's (`recovery.rs`).
//!
//! Append-biased splits: when the new key goes to the end of the rightmost leaf (or of any
//! leaf of a tree flagged append-biased), the old leaf stays full and the new one starts with
//! the new record alone, so a sequentially filled tree has full pages. In an append-biased
//! tree, a key that continues the run before it (it shares a longer prefix with its
//! predecessor than with its successor: the successor is another table's, district's or
//! warehouse's key) splits at the insertion point instead, when the records up to and with it
//! fill at least half of the split: the left leaf ends with the new key and is filled further
//! by the next appends, the successors move right. Without that, such a run is appended in
//! the middle of a leaf and every split is even: a TPC-C load (each table's rows followed by
//! the next table's, loaded earlier) left ORDER_LINE, ORDER, CUSTOMER and HISTORY leaves half
//! full, and steady TPC-C shrank as the run replaced them with full ones (docs/tpcc.md).

use super::tree::LogAs;
use super::Engine;
use crate::buffer::WriteGuard;
use crate::error::{tree_damage, EngineError, Exhausted, Pid, Result, TreeDamage};
use crate::format::structop::StructOp;
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

/// How a leaf split may lean: `append` (rightmost leaf or append-biased tree) keeps the old
/// leaf full when the new key is its largest; `runs` (append-biased tree) also splits at the
/// insertion point of a key that continues the run before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bias {
    append: bool,
    runs: bool,
}

/// Leaf bytes for records (sizes include the slot).
const LEAF_ROOM: usize = page::PAGE_SIZE - page::HDR;

/// Common prefix length.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Split at the insertion point `i` of `key` (new, between `old[i - 1]` and `old[i]`; `all`
/// holds the sizes with it at `i`)? When the key continues its predecessor's run more than
/// its successor's, and the left part (up to and with the key) fits and holds at least half.
fn splits_at_insertion(old: &[Entry], key: &[u8], all: &[usize], i: usize) -> bool {
    if i == 0 || i >= old.len() {
        return false;
    }
    let continues = common_prefix(key, &old[i - 1].0) > common_prefix(key, &old[i].0);
    let left: usize = all[..=i].iter().sum();
    let total: usize = all.iter().sum();
    continues && left <= LEAF_ROOM && 2 * left >= total
}

/// The first key of the right half when `key -> value` goes into a leaf holding `old`:
/// the split minimizing the larger half, or as `bias` allows, the new key alone on the right
/// (the new key is the largest) or the new key last on the left (it continues a run).
/// None if there are fewer than two records.
fn separator(old: &[Entry], key: &[u8], value: &[u8], bias: Bias) -> Option<Vec<u8>> {
    let size = |k: &[u8], v: &[u8]| page::leaf_record_size(k, v) + page::SLOT;
    let mut all: Vec<usize> = old.iter().map(|(k, v)| size(k, v)).collect();
    let at = old.binary_search_by(|(k, _)| k.as_slice().cmp(key));
    let appended = match at {
        Ok(i) => {
            all[i] = size(key, value);
            false
        }
        Err(i) => {
            all.insert(i, size(key, value));
            i == old.len()
        }
    };
    if all.len() < 2 {
        return None;
    }
    let s = match at {
        _ if appended && bias.append => all.len() - 1,
        Err(i) if bias.runs && splits_at_insertion(old, key, &all, i) => i + 1,
        _ => split_point(&all, false),
    };
    // The s-th key of the list with the new key in it.
    Some(match at {
        Err(i) if s == i => key.to_vec(),
        Err(i) if s > i => old[s - 1].0.clone(),
        _ => old[s].0.clone(),
    })
}

/// A split in progress: the separator and new right child to insert into the parent.
struct Carry {
    sep: Vec<u8>,
    new_child: Pid,
    left_child: Pid,
}

/// A structure change being planned: its operations and the latched pages they touch.
pub(super) struct Plan<'a> {
    pub(super) ops: Vec<StructOp>,
    pub(super) guards: Vec<WriteGuard<'a>>,
}

impl<'a> Plan<'a> {
    pub(super) fn new() -> Self {
        Plan {
            ops: Vec::new(),
            guards: Vec::new(),
        }
    }

    /// The latched page `pid`.
    pub(super) fn guard(&mut self, pid: Pid) -> &mut WriteGuard<'a> {
        let Some(g) = self.guards.iter_mut().find(|g| g.pid() == pid) else {
            panic!("structure change: page {pid} not latched")
        };
        g
    }

    /// Log the operations as one Struct record and apply them (the same function redo
    /// uses). The caller poisons the engine if this fails (pages may be ahead of the log).
    ///
    /// # Panics
    /// If an operation does not apply (planned from the latched pages: an engine bug).
    pub(super) fn commit(&mut self, eng: &Engine, root: Pid, next_pid: Pid) -> Result<u64> {
        for g in &self.guards {
            g.mark_dirty();
        }
        let lsn = eng.wal.append(&RecordRef::Struct {
            root,
            next_pid,
            ops: &self.ops,
        })?;
        let ops = std::mem::take(&mut self.ops);
        for op in &ops {
            let (kind, pid, _) = op.head();
            let g = self.guard(pid);
            let applied = page::apply_struct_op(g.page_mut(), op);
            assert!(
                applied,
                "page {pid}: planned structure op {kind} did not apply"
            );
        }
        for g in &mut self.guards {
            g.set_lsn(lsn);
        }
        self.ops = ops;
        Ok(lsn)
    }
}

impl Engine {
    /// Put with structure modification, under the exclusive tree lock. `append_biased`: the
    /// tree is filled in key order (a per-tree hint), so any leaf receiving its largest key
    /// splits with the old leaf kept full (without it, only the rightmost leaf does).
    pub(super) fn put_smo(
        &self,
        key: &[u8],
        value: &[u8],
        append_biased: bool,
        how: LogAs,
    ) -> Result<u64> {
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
            return self.put_in(&mut leaf, key, value, how);
        }
        // Worst case: every level splits plus a new root.
        let pages_needed = 2 * crate::num::u64_of(t.height) + 1;
        let reusable = self.free.lock().len();
        if t.next_pid + pages_needed.saturating_sub(reusable) > self.store.capacity_pages() {
            return Err(Exhausted::DataRegion {
                pages: self.store.capacity_pages(),
            }
            .into());
        }
        match self.split_and_log(&mut t, path, leaf, (key, value), append_biased, how) {
            Ok(lsn) => Ok(lsn),
            Err(e) => {
                // Pages may be modified in memory but not logged: refuse further work.
                self.poison();
                Err(e)
            }
        }
    }

    /// The put fast path's body on a latched leaf it fits: log, apply, page LSN.
    ///
    /// # Panics
    /// If the put does not apply (checked to fit by the caller).
    pub(super) fn put_in(
        &self,
        g: &mut WriteGuard<'_>,
        key: &[u8],
        value: &[u8],
        how: LogAs,
    ) -> Result<u64> {
        let pid = g.pid();
        g.mark_dirty();
        let prev_lsn = page::lsn(g.page());
        let lsn = self.wal.append(&how.put(pid, prev_lsn, key, value))?;
        let applied = page::leaf_put(g.page_mut(), key, value);
        assert!(applied, "page {pid}: a put checked to fit did not apply");
        if let Some(rc) = &self.rcache {
            rc.update(key, value);
        }
        g.set_lsn(lsn);
        Ok(lsn)
    }

    fn split_and_log(
        &self,
        t: &mut TreeWriteGuard<'_>,
        path: Vec<Pid>,
        leaf: WriteGuard<'_>,
        (key, value): (&[u8], &[u8]),
        append_biased: bool,
        how: LogAs,
    ) -> Result<u64> {
        let mut plan = Plan::new();
        let carry = self.plan_leaf_split(t, leaf, key, value, append_biased, &mut plan)?;
        let goes_right = key >= carry.sep.as_slice();
        let (left, right) = (carry.left_child, carry.new_child);
        self.plan_propagate(t, path, carry, &mut plan)?;
        plan.commit(self, t.root, t.next_pid)?;
        let g = plan.guard(if goes_right { right } else { left });
        assert!(
            page::leaf_fits(g.page(), key, value),
            "page {}: the put does not fit the half chosen for it",
            g.pid()
        );
        self.put_in(g, key, value, how)
    }

    /// A page for a structure change: a free one if any, else the next never-used pid.
    /// Returns it latched, as an empty leaf.
    pub(super) fn alloc_page(&self, t: &mut TreeWriteGuard<'_>) -> Result<WriteGuard<'_>> {
        let reused = self.free.lock().pop(t.next_pid);
        let g = if let Some(pid) = reused {
            // A freed page is an empty leaf if still cached (its Free op made it one);
            // otherwise its device image is not needed. Anything else is damage: a lost
            // write left an inner node that no longer names the page while its image is in
            // the pool (nowa-vopr seed 1,003,551 panicked here).
            let g = self.pool.write_untrusted(pid)?;
            let (kind, records) = (page::kind(g.page()), page::nkeys(g.page()));
            if kind != page::KIND_LEAF || records != 0 {
                return Err(tree_damage(
                    pid,
                    TreeDamage::FreePageInUse { kind, records },
                ));
            }
            g
        } else {
            let pid = t.next_pid;
            if pid >= self.store.capacity_pages() {
                return Err(EngineError::from(Exhausted::DataRegion {
                    pages: self.store.capacity_pages(),
                }));
            }
            t.next_pid += 1;
            self.pool.create(pid)?
        };
        Ok(g)
    }

    /// Plan the split of `leaf` for the put of `key`: the leaf keeps the keys below the
    /// separator, a new leaf gets the rest (the put itself is applied after the split).
    fn plan_leaf_split<'a>(
        &'a self,
        t: &mut TreeWriteGuard<'_>,
        leaf: WriteGuard<'a>,
        key: &[u8],
        value: &[u8],
        append_biased: bool,
        plan: &mut Plan<'a>,
    ) -> Result<Carry> {
        let leaf_pid = leaf.pid();
        let old: Vec<Entry> = page::leaf_entries(leaf.page());
        // Sequential inserts at the end of the rightmost leaf (or of any leaf of an
        // append-biased tree): keep the old leaf full, start a new one with the new record.
        let bias = Bias {
            append: append_biased || page::link(leaf.page()) == page::NO_LINK,
            runs: append_biased,
        };
        let Some(sep) = separator(&old, key, value, bias) else {
            // A single record always fits a page (MAX_KV): the page must be damaged.
            return Err(tree_damage(
                leaf_pid,
                TreeDamage::SplitTooSmall { records: old.len() },
            ));
        };
        let moved = old.partition_point(|(k, _)| k.as_slice() < sep.as_slice());
        let right = self.alloc_page(t)?;
        let right_pid = right.pid();
        plan.ops.push(StructOp::Truncate {
            pid: leaf_pid,
            prev: page::lsn(leaf.page()),
            sep: sep.clone(),
            link: right_pid,
        });
        plan.ops.push(StructOp::BuildLeaf {
            pid: right_pid,
            prev: 0,
            link: page::link(leaf.page()),
            entries: old[moved..].to_vec(),
        });
        plan.guards.push(leaf);
        plan.guards.push(right);
        Ok(Carry {
            sep,
            new_child: right_pid,
            left_child: leaf_pid,
        })
    }

    /// Insert the separator into the parents, splitting them as needed, up to a new root.
    fn plan_propagate<'a>(
        &'a self,
        t: &mut TreeWriteGuard<'_>,
        mut path: Vec<Pid>,
        mut c: Carry,
        plan: &mut Plan<'a>,
    ) -> Result<()> {
        loop {
            let Some(parent_pid) = path.pop() else {
                // Root split: new root.
                let r = self.alloc_page(t)?;
                let root_pid = r.pid();
                plan.ops.push(StructOp::BuildInner {
                    pid: root_pid,
                    prev: 0,
                    leftmost: c.left_child,
                    entries: vec![(c.sep, c.new_child)],
                });
                plan.guards.push(r);
                t.root = root_pid;
                t.height += 1;
                return Ok(());
            };
            let p = self.pool.write(parent_pid)?;
            let prev = page::lsn(p.page());
            if page::inner_fits(p.page(), &c.sep) {
                plan.ops.push(StructOp::Insert {
                    pid: parent_pid,
                    prev,
                    key: c.sep,
                    child: c.new_child,
                });
                plan.guards.push(p);
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
            let r = self.alloc_page(t)?;
            let rp = r.pid();
            plan.ops.push(StructOp::BuildInner {
                pid: parent_pid,
                prev,
                leftmost: page::link(p.page()),
                entries: es[..m].to_vec(),
            });
            plan.ops.push(StructOp::BuildInner {
                pid: rp,
                prev: 0,
                leftmost: es[m].1,
                entries: es[m + 1..].to_vec(),
            });
            c = Carry {
                sep: es[m].0.clone(),
                new_child: rp,
                left_child: parent_pid,
            };
            plan.guards.push(p);
            plan.guards.push(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{separator, split_point, Bias};
    use crate::error::{Corruption, EngineError, TreeDamage};
    use crate::{page, Config, Engine};

    /// A page on the free list that is not an empty leaf in the pool (damage: a lost write
    /// left an inner node that no longer names it) is reported as tree damage when a split
    /// would reuse it, not a panic (nowa-vopr seed 1,003,551).
    #[test]
    fn a_free_page_in_use_is_tree_damage() {
        let cfg = Config {
            pool_bytes: 256 * 4096,
            ..Config::default()
        };
        let e = Engine::create(nowa_device::MemDevice::new(32 << 20), cfg).expect("create");
        for k in 0..50u32 {
            e.put(&k.to_be_bytes(), &[7; 100]).expect("put");
        }
        let (mark, _) = e.page_usage();
        let live = (0..mark)
            .find(|&pid| {
                let g = e.pool.read(pid).expect("a page");
                page::kind(&g.page) == page::KIND_LEAF && page::nkeys(&g.page) > 0
            })
            .expect("a leaf holding records");
        // The damage: a live leaf on the free list.
        e.free.lock().push(live, 0, mark);
        let err = (50..5000u32)
            .find_map(|k| e.put(&k.to_be_bytes(), &[7; 100]).err())
            .expect("a split reuses the page");
        assert!(
            matches!(
                err,
                EngineError::Corrupt(Corruption::Tree {
                    damage: TreeDamage::FreePageInUse { .. },
                    ..
                })
            ),
            "{err}"
        );
    }

    const BIASED: Bias = Bias {
        append: true,
        runs: true,
    };
    const EVEN: Bias = Bias {
        append: false,
        runs: false,
    };

    #[test]
    fn separator_is_even_or_append_biased() {
        let old: Vec<(Vec<u8>, Vec<u8>)> = (0..10u8).map(|i| (vec![2 * i], vec![0; 50])).collect();
        // New largest key: alone on the right when biased, an even split otherwise.
        assert_eq!(separator(&old, &[99], &[0; 50], BIASED), Some(vec![99]));
        assert_eq!(separator(&old, &[99], &[0; 50], EVEN), Some(vec![10]));
        // A key in the middle that continues no run: the bias does not apply.
        assert_eq!(separator(&old, &[9], &[0; 50], BIASED), Some(vec![9]));
        assert_eq!(separator(&old, &[7], &[0; 50], BIASED), Some(vec![8]));
        // An update that grows a value.
        assert_eq!(separator(&old, &[18], &[0; 500], BIASED), Some(vec![16]));
        assert_eq!(separator(&old[..1], &[0], &[0; 50], BIASED), None);
    }

    #[test]
    fn a_run_followed_by_other_keys_splits_at_the_insertion_point() {
        // Run 1 (keys [1, x]) then run 2 ([2, y]); the next key of run 1 goes in between.
        let leaf = |a: u8, b: u8| -> Vec<(Vec<u8>, Vec<u8>)> {
            let run = |r: u8, n: u8| (0..n).map(move |x| (vec![r, x], vec![0; 50]));
            run(1, a).chain(run(2, b)).collect()
        };
        let old = leaf(7, 3);
        // Biased: the left leaf ends with the new key, run 2 moves right.
        assert_eq!(separator(&old, &[1, 7], &[0; 50], BIASED), Some(vec![2, 0]));
        // Not append-biased: an even split.
        let rightmost_only = Bias {
            append: true,
            runs: false,
        };
        assert_eq!(
            separator(&old, &[1, 7], &[0; 50], rightmost_only),
            Some(vec![1, 5])
        );
        // Run 1 holds less than half: an even split (each half at least half full).
        let old = leaf(3, 7);
        assert_eq!(separator(&old, &[1, 3], &[0; 50], BIASED), Some(vec![2, 1]));
        // A key between two of the same run (as close to each): even.
        let old: Vec<(Vec<u8>, Vec<u8>)> =
            (0..10u8).map(|x| (vec![1, 2 * x], vec![0; 50])).collect();
        assert_eq!(
            separator(&old, &[1, 13], &[0; 50], BIASED),
            Some(vec![1, 10])
        );
    }

    #[test]
    fn split_point_minimizes_the_larger_half() {
        assert_eq!(split_point(&[10, 10, 10, 10], false), 2);
        assert_eq!(split_point(&[30, 10, 10, 10], false), 1);
        // Inner splits move the middle key up: it counts on neither side.
        assert_eq!(split_point(&[10, 10, 10], true), 1);
    }
}
