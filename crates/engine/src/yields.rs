//! The engine's yield site (`BackgroundMode::Caller` only): where the engine calls the
//! caller's [`YieldHook`](crate::YieldHook) inside an operation, so a deterministic
//! scheduler can step background tasks there. The write path yields where it holds no lock
//! (`YieldPoint::Gated`, `Logged`); the buffer pool, the out-of-place store and the WAL
//! yield inside the sections where they hold a latch or a lock (`WriteBack`, `GcRound`,
//! `GroupCommit`). One site is shared by the engine and those parts, so a hook call is never
//! nested: a task the hook steps may enter such a section itself, and then it does not yield
//! (with threads another task could run there too; the simulation leaves that one level
//! out). The site also remembers which point the caller's one thread is stopped at, so a
//! step that would wait for a lock that point holds (a deadlock on one thread) is refused
//! with a panic naming both instead of hanging.

use crate::db::{BackgroundTask, YieldPoint};
use parking_lot::{Mutex, RwLock};
use std::sync::Arc;

/// What a part of the engine calls at its yield points (set by `Engine::set_yield_hook`).
pub type YieldFn = Arc<dyn Fn(YieldPoint) + Send + Sync>;

/// The shared site: the hook (None: no caller scheduler) and the point being served.
#[derive(Default)]
pub(crate) struct YieldSite {
    hook: RwLock<Option<YieldFn>>,
    /// The point whose hook call is in progress.
    current: Mutex<Option<YieldPoint>>,
}

impl YieldSite {
    /// Install (or remove) the hook.
    pub(crate) fn set(&self, hook: Option<YieldFn>) {
        *self.hook.write() = hook;
    }

    /// Call the hook at `at`, unless none is set or a call is already in progress (a step
    /// the hook runs reached a section of its own).
    pub(crate) fn at(&self, at: YieldPoint) {
        let Some(h) = self.hook.read().clone() else {
            return;
        };
        {
            let mut c = self.current.lock();
            if c.is_some() {
                return;
            }
            *c = Some(at);
        }
        // Cleared even if the hook panics (the simulation reports the panic as a failure
        // and drops the engine; nothing may stay "inside" a point meanwhile).
        struct Leave<'a>(&'a Mutex<Option<YieldPoint>>);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                *self.0.lock() = None;
            }
        }
        let _leave = Leave(&self.current);
        h(at);
    }

    /// The point whose hook call is in progress, if any.
    pub(crate) fn current(&self) -> Option<YieldPoint> {
        *self.current.lock()
    }

    /// Panics if `task` may not step at the point in progress (it would wait for a lock the
    /// interrupted section holds, on the one thread that holds it).
    pub(crate) fn check_step(&self, task: BackgroundTask) {
        if let Some(at) = self.current() {
            assert!(
                at.may_step(task),
                "{task:?} stepped at {at:?} would wait for a lock that section holds"
            );
        }
    }
}

/// A part's handle on the site (the buffer pool, the WAL): attached once by the engine when
/// it builds its parts.
#[derive(Default)]
pub(crate) struct YieldTo(std::sync::OnceLock<Arc<YieldSite>>);

impl YieldTo {
    /// Attach the site (once: one engine owns a part).
    pub(crate) fn attach(&self, site: Arc<YieldSite>) {
        let attached = self.0.set(site).is_ok();
        assert!(attached, "a part attached to two yield sites");
    }

    /// Yield at `at` (nothing when no site is attached or no hook set).
    pub(crate) fn at(&self, at: YieldPoint) {
        if let Some(s) = self.0.get() {
            s.at(at);
        }
    }

    /// A hook call is in progress: the caller's one thread is stopped inside an operation,
    /// so a latch another part cannot take now is held by that thread and would never come
    /// free while the step waits for it.
    pub(crate) fn inside(&self) -> bool {
        self.0.get().is_some_and(|s| s.current().is_some())
    }
}
