//! Tree-level structure lock, striped ("big reader" lock): each reader thread locks only its
//! own stripe (no shared cache line between reader threads); a structure modification locks
//! every stripe in order. Each stripe holds a copy of the tree metadata, so readers never
//! touch a shared line; the write guard publishes its changes to every copy on drop.

use crate::error::Pid;
use crate::stats::stripe;
use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

const STRIPES: usize = 8;

/// Tree metadata every stripe holds a copy of.
#[derive(Debug, Clone, Copy)]
pub struct TreeMeta {
    /// Root pid.
    pub root: Pid,
    /// Allocation high-water mark.
    pub next_pid: Pid,
    /// Levels (1: the root is a leaf).
    pub height: usize,
}

#[repr(align(128))]
struct Stripe(RwLock<TreeMeta>);

/// The striped structure lock.
pub struct TreeLock {
    stripes: Box<[Stripe]>,
}

/// Exclusive access (every stripe locked); publishes changes to every copy on drop.
pub struct TreeWriteGuard<'a> {
    guards: Vec<RwLockWriteGuard<'a, TreeMeta>>,
    meta: TreeMeta,
}

impl TreeLock {
    /// A lock holding `meta`.
    pub fn new(meta: TreeMeta) -> Self {
        TreeLock {
            stripes: (0..STRIPES).map(|_| Stripe(RwLock::new(meta))).collect(),
        }
    }

    /// Lock this thread's stripe shared.
    pub fn read(&self) -> RwLockReadGuard<'_, TreeMeta> {
        self.stripes[stripe() % STRIPES].0.read()
    }

    /// Lock every stripe exclusively, in order.
    pub fn write(&self) -> TreeWriteGuard<'_> {
        let guards: Vec<_> = self.stripes.iter().map(|s| s.0.write()).collect();
        let meta = *guards[0];
        debug_assert!(
            guards
                .iter()
                .all(|g| g.root == meta.root && g.next_pid == meta.next_pid),
            "tree lock stripes disagree"
        );
        TreeWriteGuard { guards, meta }
    }
}

impl std::ops::Deref for TreeWriteGuard<'_> {
    type Target = TreeMeta;
    fn deref(&self) -> &TreeMeta {
        &self.meta
    }
}

impl std::ops::DerefMut for TreeWriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut TreeMeta {
        &mut self.meta
    }
}

impl Drop for TreeWriteGuard<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            assert!(
                self.meta.root < self.meta.next_pid,
                "root {} not allocated",
                self.meta.root
            );
        }
        for g in &mut self.guards {
            **g = self.meta;
        }
    }
}
