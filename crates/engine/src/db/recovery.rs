//! Recovery, after the analysis pass (`crate::wal::analyze`) found the end of the log: redo
//! every record in `[redo LSN, end)` on top of the store's pages, cross-checking each page's
//! LSN against the LSN the record says the page had before the change (a page older than
//! that is a lost write), then rebuild the tree height.

use super::Engine;
use crate::error::{
    tree_damage, Corruption, EngineError, Pid, RecordDamage, RedoDamage, Result, TreeDamage,
};
use crate::format::structop::StructOp;
use crate::format::superblock::Superblock;
use crate::format::wal::Record;
use crate::page::{self, KIND_INNER, KIND_LEAF};
use crate::wal::WalScanner;
use std::sync::atomic::Ordering;

const MAX_HEIGHT: usize = 48;

/// The page's LSN `found` must be the one the record says it had before the change.
fn check_prev(pid: Pid, lsn: u64, found: u64, prev: Option<u64>) -> Result<()> {
    match prev {
        Some(expected) if found < expected => Err(Corruption::LostWrite {
            pid,
            expected,
            found,
        }
        .into()),
        Some(expected) if found != expected => Err(Corruption::Redo {
            lsn,
            pid,
            damage: RedoDamage::PageLsn { expected, found },
        }
        .into()),
        _ => Ok(()),
    }
}

impl Engine {
    /// Redo `[sb.redo_lsn, end)`, then measure the tree and rebuild the free list. Returns
    /// (records applied, records skipped).
    pub(super) fn replay(&self, sb: &Superblock, end: u64) -> Result<(u64, u64)> {
        let counts = self.redo_log(sb, end)?;
        let mut t = self.tree.write();
        t.height = self.measure_height(t.root)?;
        self.rebuild_free_list(&[t.root], t.next_pid)?;
        Ok(counts)
    }

    /// Redo the records of `[sb.redo_lsn, end)` on the pages.
    pub(super) fn redo_log(&self, sb: &Superblock, end: u64) -> Result<(u64, u64)> {
        let l = sb.layout;
        self.pool.allow_unwritten.store(true, Ordering::Relaxed);
        let mut sc = WalScanner::new(
            &*self.wal_dev,
            l.wal_start,
            l.wal_blocks,
            sb.wal_salt,
            (sb.scan_lsn, sb.redo_lsn),
        );
        let (mut replayed, mut skipped, mut last) = (0, 0, 0);
        while sc.lsn < end {
            let at = sc.lsn;
            let (lsn, rec) = match sc.next_record()? {
                Ok(x) => x,
                // The analysis read this far: a second read that differs is damage too.
                Err(_) => {
                    return Err(EngineError::WalDamaged {
                        from: at,
                        to: end,
                        damage: RecordDamage::Unreadable,
                    })
                }
            };
            assert!(
                lsn >= last && lsn >= sb.redo_lsn,
                "WAL LSN order: {lsn} after {last}"
            );
            last = lsn;
            if self.redo(lsn, rec, sb.next_pid)? {
                replayed += 1;
            } else {
                skipped += 1;
            }
        }
        assert_eq!(sc.lsn, end, "redo stopped past the end of the log");
        self.pool.allow_unwritten.store(false, Ordering::Relaxed);
        Ok((replayed, skipped))
    }

    /// Apply one WAL record if the page has not seen it yet. Returns whether anything changed.
    /// `fresh_from`: pids at or above it were allocated after the checkpoint, so the log
    /// holds their whole life and whatever the device holds there is ignored until the SMO
    /// creating them.
    fn redo(&self, lsn: u64, rec: Record, fresh_from: Pid) -> Result<bool> {
        match rec {
            Record::Put {
                pid,
                prev_lsn,
                key,
                value,
            } => self.redo_leaf(pid, lsn, prev_lsn, |p| page::leaf_put(p, &key, &value)),
            Record::Delete { pid, prev_lsn, key } => self.redo_leaf(pid, lsn, prev_lsn, |p| {
                page::leaf_delete(p, &key);
                true
            }),
            Record::Smo {
                root,
                next_pid,
                pages,
            } => self.redo_smo(lsn, root, next_pid, &pages, fresh_from),
            // Commit groups (db/group.rs): nothing to apply on a page here; an interrupted
            // group is finished after redo.
            Record::TxnCommit { ops } => {
                self.txn_seen(lsn, ops);
                Ok(false)
            }
            Record::TxnDone { commit_lsn } => {
                assert!(commit_lsn < lsn, "TxnDone at {lsn} before its commit");
                self.txn_done_seen(commit_lsn);
                Ok(false)
            }
            Record::TxnWrite {
                pid,
                prev_lsn,
                commit_lsn,
                index,
            } => self.redo_txn_write(lsn, pid, prev_lsn, (commit_lsn, index)),
            // A group flush's padding to the end of its block (wal/mod.rs).
            Record::Pad => Ok(false),
            // Logged by a clean close (db/checkpoint.rs): the store checks reads against it.
            Record::PageVersions { entries } => {
                self.store.expect_versions(&entries);
                Ok(false)
            }
            Record::Struct {
                root,
                next_pid,
                ops,
            } => {
                let any = self.redo_struct(lsn, &ops, fresh_from)?;
                self.redo_root(root, next_pid)?;
                Ok(any)
            }
        }
    }

    /// Redo a logical structure change. Each page's first operation in the record decides
    /// for all of its operations there: applied iff the page's LSN is below the record's.
    /// A page the record creates (a Build with no previous LSN) is rebuilt from the record
    /// whatever the device holds (never-written, freed and released, or an older life):
    /// if its image cannot be read it is rebuilt, and every later change to it is in the
    /// log after this record.
    fn redo_struct(&self, lsn: u64, ops: &[StructOp], fresh_from: Pid) -> Result<bool> {
        let mut decided: Vec<(Pid, bool)> = Vec::with_capacity(ops.len());
        let mut any = false;
        for op in ops {
            let (kind, pid, prev) = op.head();
            let creates =
                prev == 0 && matches!(op, StructOp::BuildLeaf { .. } | StructOp::BuildInner { .. });
            let mut g = if creates && pid >= fresh_from {
                self.pool.write_untrusted(pid)?
            } else if creates {
                match self.pool.write(pid) {
                    Err(EngineError::Corrupt(_)) => self.pool.write_untrusted(pid)?,
                    r => r?,
                }
            } else {
                self.pool.write(pid)?
            };
            let apply = match decided.iter().find(|(p, _)| *p == pid) {
                Some(&(_, a)) => a,
                None => {
                    let found = page::lsn(g.page());
                    let a = found < lsn;
                    if a && prev != 0 {
                        check_prev(pid, lsn, found, Some(prev))?;
                    }
                    decided.push((pid, a));
                    a
                }
            };
            if !apply {
                continue;
            }
            if !page::apply_struct_op(g.page_mut(), op) {
                return Err(Corruption::Redo {
                    lsn,
                    pid,
                    damage: RedoDamage::StructOp { op: kind },
                }
                .into());
            }
            g.set_lsn(lsn);
            any = true;
        }
        Ok(any)
    }

    /// Redo a TxnWrite: its op (key, value) is in the pending TxnCommit, which redo met
    /// before it (a redo LSN is never strictly inside a commit group, `group.rs`).
    fn redo_txn_write(
        &self,
        lsn: u64,
        pid: Pid,
        prev: Option<u64>,
        (commit_lsn, index): (u64, u32),
    ) -> Result<bool> {
        self.with_pending_op(commit_lsn, index, |op| {
            let Some((key, value)) = op else {
                return Err(Corruption::Redo {
                    lsn,
                    pid,
                    damage: RedoDamage::NoTxnOp { commit_lsn, index },
                }
                .into());
            };
            self.redo_leaf(pid, lsn, prev, |p| match value {
                Some(v) => page::leaf_put(p, key, v),
                None => {
                    page::leaf_delete(p, key);
                    true
                }
            })
        })
    }

    fn redo_leaf(
        &self,
        pid: Pid,
        lsn: u64,
        prev: Option<u64>,
        apply: impl FnOnce(&mut [u8]) -> bool,
    ) -> Result<bool> {
        let mut g = self.pool.write(pid)?;
        let found = page::lsn(g.page());
        if found >= lsn {
            return Ok(false);
        }
        check_prev(pid, lsn, found, prev)?;
        let kind = page::kind(g.page());
        if kind != KIND_LEAF {
            return Err(Corruption::Redo {
                lsn,
                pid,
                damage: RedoDamage::NotLeaf { kind },
            }
            .into());
        }
        if !apply(g.page_mut()) {
            return Err(Corruption::Redo {
                lsn,
                pid,
                damage: RedoDamage::DoesNotFit,
            }
            .into());
        }
        g.set_lsn(lsn);
        Ok(true)
    }

    fn redo_smo(
        &self,
        lsn: u64,
        root: Pid,
        next_pid: Pid,
        pages: &[(Pid, Vec<u8>)],
        fresh_from: Pid,
    ) -> Result<bool> {
        let mut any = false;
        for (pid, img) in pages {
            page::validate_layout(img, *pid)?;
            let prev = page::lsn(img);
            let fresh = prev == 0 && *pid >= fresh_from;
            let mut g = if fresh {
                self.pool.write_untrusted(*pid)?
            } else {
                self.pool.write(*pid)?
            };
            if !fresh {
                let found = page::lsn(g.page());
                if found >= lsn {
                    continue;
                }
                check_prev(*pid, lsn, found, Some(prev))?;
            }
            g.page_mut().copy_from_slice(img);
            g.set_lsn(lsn);
            any = true;
        }
        self.redo_root(root, next_pid)?;
        Ok(any)
    }

    /// A structure record's root and allocation mark (the mark only moves up).
    fn redo_root(&self, root: Pid, next_pid: Pid) -> Result<()> {
        let mut t = self.tree.write();
        let next = t.next_pid.max(next_pid);
        if root >= next || next > self.layout.data_pages {
            return Err(tree_damage(
                root,
                TreeDamage::RootOutOfRange {
                    root,
                    next_pid: next,
                    pages: self.layout.data_pages,
                },
            ));
        }
        t.root = root;
        t.next_pid = next;
        Ok(())
    }

    pub(super) fn measure_height(&self, root: Pid) -> Result<usize> {
        let mut pid = root;
        for h in 1..=MAX_HEIGHT {
            let g = self.pool.read(pid)?;
            match page::kind(&g.page) {
                KIND_LEAF => return Ok(h),
                KIND_INNER => pid = page::link(&g.page),
                kind => return Err(tree_damage(pid, TreeDamage::ExpectedInner { kind })),
            }
        }
        Err(tree_damage(root, TreeDamage::TooDeep { max: MAX_HEIGHT }))
    }
}
