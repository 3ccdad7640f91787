//! WAL salvage (`Config::wal_damage = Salvage`, docs/design.md section 9): the log is cut at
//! the first damaged LSN `from` and redone up to it. That gives a consistent tree only if no
//! page on disk already holds a change logged at or after `from`: such a page (evicted or
//! checkpointed after the damaged records were appended) is in a later state than the log
//! can rebuild, possibly half of a structure change whose other pages never reached disk.
//! So after redo the whole tree is walked: every page must be of the right kind and have an
//! LSN below `from`; then each page is exactly its state at `from` and the tree is the
//! (consistent) tree at `from`. Otherwise the salvage is refused before anything of the log
//! or the superblocks is written, and [`Engine::export_readable`] returns what the pages hold.

use super::{Config, Engine, WalDamage};
use crate::error::{tree_damage, EngineError, Pid, Result, SalvageRefusal, TreeDamage};
use crate::page::{self, Entry, KIND_INNER, KIND_LEAF};
use crate::store::StoreBuilder;
use crate::wal::WalStop;
use nowa_device::BlockDevice;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Engine {
    /// Redo after the analysis; a salvaged end is checked as the module says.
    pub(super) fn replay_checked(
        &self,
        sb: &crate::format::superblock::Superblock,
        end: u64,
        stop: WalStop,
    ) -> Result<(u64, u64)> {
        let WalStop::Salvaged { from, to, .. } = stop else {
            return self.replay(sb, end);
        };
        assert_eq!(from, end, "a salvage redoes up to the damage");
        let refuse = |reason| EngineError::SalvageRefused { from, to, reason };
        let counts = match self.replay(sb, end) {
            Err(EngineError::Corrupt(c)) => return Err(refuse(SalvageRefusal::Tree(Box::new(c)))),
            r => r?,
        };
        match self.tree_past(from) {
            Ok(None) => Ok(counts),
            Ok(Some((pid, lsn))) => Err(refuse(SalvageRefusal::PageAfterDamage { pid, lsn })),
            Err(EngineError::Corrupt(c)) => Err(refuse(SalvageRefusal::Tree(Box::new(c)))),
            Err(e) => Err(e),
        }
    }

    /// Walk the tree level by level: the first page with an LSN at or past `from`, if any.
    fn tree_past(&self, from: u64) -> Result<Option<(Pid, u64)>> {
        let (root, height) = {
            let t = self.tree.read();
            (t.root, t.height)
        };
        let mut level = vec![root];
        for depth in 1..=height {
            let mut below = Vec::new();
            for pid in level {
                let g = self.pool.read(pid)?;
                let lsn = page::lsn(&g.page);
                if lsn >= from {
                    return Ok(Some((pid, lsn)));
                }
                let kind = page::kind(&g.page);
                if depth == height {
                    if kind != KIND_LEAF {
                        return Err(tree_damage(pid, TreeDamage::ExpectedLeaf { kind }));
                    }
                    continue;
                }
                if kind != KIND_INNER {
                    return Err(tree_damage(pid, TreeDamage::ExpectedInner { kind }));
                }
                below.push(page::link(&g.page));
                below.extend((0..page::nkeys(&g.page)).map(|i| page::inner_child(&g.page, i)));
            }
            level = below;
        }
        Ok(None)
    }

    /// Export what is readable of a database whose salvage was refused
    /// ([`EngineError::SalvageRefused`]): the log is redone up to its first damaged LSN, then
    /// every page below the allocation mark that reads as a valid leaf contributes its
    /// pairs; a key found in several leaves keeps the pair of the leaf with the highest LSN.
    /// Sorted by key. Writes only what redo writes (pages brought to their state at the
    /// damage, as any later recovery would); never the log or the superblocks.
    ///
    /// # Errors
    /// What the checks of an open refuse before redo (no superblock, wrong write path,
    /// configuration), redo errors, device errors.
    pub fn export_readable(
        dev: Arc<dyn BlockDevice>,
        wal_dev: Option<Arc<dyn BlockDevice>>,
        cfg: Config,
        build: &dyn StoreBuilder,
    ) -> Result<Vec<Entry>> {
        let cfg = Config {
            wal_damage: WalDamage::Salvage,
            ..cfg
        };
        let o = Self::open_checked(dev, wal_dev, cfg, build)?;
        o.eng.redo_log(&o.sb, o.end)?;
        let next = o.eng.tree.read().next_pid;
        let mut best: BTreeMap<Vec<u8>, (u64, Vec<u8>)> = BTreeMap::new();
        let mut unreadable = 0u64;
        for pid in 0..next {
            let Ok(g) = o.eng.pool.read(pid) else {
                unreadable += 1;
                continue;
            };
            if page::kind(&g.page) != KIND_LEAF {
                continue;
            }
            let lsn = page::lsn(&g.page);
            for (k, v) in page::leaf_entries(&g.page) {
                match best.get(&k) {
                    Some((l, _)) if *l >= lsn => {}
                    _ => {
                        best.insert(k, (lsn, v));
                    }
                }
            }
        }
        tracing::warn!(
            pages = next,
            unreadable,
            pairs = best.len(),
            "exported the readable leaves of a database whose WAL salvage was refused"
        );
        Ok(best.into_iter().map(|(k, (_, v))| (k, v)).collect())
    }
}
