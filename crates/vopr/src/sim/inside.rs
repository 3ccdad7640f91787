//! Background steps inside an operation: the engine calls the simulation's yield hook at its
//! `YieldPoint`s (in a write after the WAL gate, and after the change is applied and logged,
//! before its durability wait, where it holds no lock; inside a write-back batch, a DB GC
//! round and a WAL flush, where it holds a latch or a lock), and the seed's scheduler steps
//! its tasks there (`sched.rs`: at a drawn share of the points, the due tasks or one woken by
//! the operation, only those `YieldPoint::may_step` allows inside a section). The sections
//! are also reached by the harness's own background steps (a cleaner's eviction, a GC pass's
//! round, a log flush), which then yield to the other tasks. The hook only records what the
//! steps did; the harness takes it in once the operation or step returns, in program order,
//! so the trace and the model stay deterministic.

use super::{Sim, Std};
use crate::clock::Clock;
use crate::sched::Sched;
use nowa_engine::{BackgroundTask, Engine, EngineError, YieldPoint};
use parking_lot::Mutex;
use std::sync::Arc;

/// What the steps at the yield points of the write in progress did.
#[derive(Default)]
pub(super) struct Inside {
    /// Trace words, in order.
    trace: Vec<u64>,
    /// Steps that found work.
    worked: u64,
    /// Of those, the steps inside a write-back batch, a DB GC round, a WAL flush.
    sections: [u64; 3],
    /// A log flush ran after the write's record was appended: the write is durable.
    flushed_logged: bool,
    /// A log flush ran at a point other than `Logged` (before the record was appended, or
    /// inside a section where it may or may not be): only the writes before are known
    /// durable.
    flushed_gated: bool,
    /// The first step that failed (the write goes on, as beside a thread whose step failed;
    /// the harness then stops as on the write's own error).
    error: Option<EngineError>,
}

/// What the harness learns from a write's yield points.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Flushed {
    /// A log flush made every write before this one durable.
    pub before: bool,
    /// A log flush made this write durable too.
    pub with_op: bool,
}

/// The hook `e` calls at each yield point (none when the seed steps no task inside writes).
fn hook(
    sched: Arc<Mutex<Sched>>,
    inside: Arc<Mutex<Inside>>,
    clock: Arc<Clock>,
) -> nowa_engine::YieldHook {
    Arc::new(move |e: &Engine, at: YieldPoint| {
        let mut sc = sched.lock();
        let mut st = inside.lock();
        if st.error.is_some() || !sc.yield_point(&clock) {
            return;
        }
        while let Some(task) = sc.inside(&clock, at) {
            st.trace.push(0xC000 + 16 * at as u64 + task as u64);
            match e.run_background_step(task) {
                Ok(worked) => {
                    sc.stepped(task, worked, &clock);
                    st.trace.push(u64::from(worked));
                    st.worked += u64::from(worked);
                    if let Some(i) = section(at) {
                        st.sections[i] += u64::from(worked);
                    }
                    if task == BackgroundTask::LogFlush && worked {
                        match at {
                            YieldPoint::Logged => st.flushed_logged = true,
                            _ => st.flushed_gated = true,
                        }
                    }
                }
                Err(err) => {
                    st.error = Some(err);
                    return;
                }
            }
        }
    })
}

/// The coverage slot of a section's yield point (None: a write's own points).
fn section(at: YieldPoint) -> Option<usize> {
    match at {
        YieldPoint::Gated | YieldPoint::Logged => None,
        YieldPoint::WriteBack => Some(0),
        YieldPoint::GcRound => Some(1),
        YieldPoint::GroupCommit => Some(2),
    }
}

impl Sim {
    /// Install the yield hook on `e` when the seed steps tasks inside operations. What the
    /// hook recorded for an engine that crashed meanwhile goes with it.
    pub(super) fn install_hook(&self, e: &Arc<Engine>) {
        *self.inside.lock() = Inside::default();
        if self.s.time.inside_pct == 0 {
            return;
        }
        e.set_yield_hook(Some(hook(
            self.sched.clone(),
            self.inside.clone(),
            self.clock.clone(),
        )));
    }

    /// Take in what the steps at the yield points of the operation or step that just
    /// returned did: trace, coverage; a failed step stops the run as the operation's own
    /// error would.
    pub(super) fn take_inside(&mut self) -> Std<Flushed> {
        let st = std::mem::take(&mut *self.inside.lock());
        for w in &st.trace {
            self.trace(*w);
        }
        let c = &mut self.out.coverage;
        c.inside_steps += st.worked;
        c.inside_write_back += st.sections[0];
        c.inside_gc_round += st.sections[1];
        c.inside_group_commit += st.sections[2];
        if let Some(err) = st.error {
            return Err(self.failed(&err));
        }
        assert!(
            st.worked > 0 || !(st.flushed_gated || st.flushed_logged),
            "a flush that worked is a step that worked"
        );
        Ok(Flushed {
            before: st.flushed_gated,
            with_op: st.flushed_logged,
        })
    }
}

impl Sim {
    /// Step `task` from the harness (between operations, the liveness phase, a foreground
    /// GC pass): the yield points inside its step do not step it again.
    pub(super) fn step_task(&self, e: &Engine, task: BackgroundTask) -> nowa_engine::Result<bool> {
        self.sched.lock().set_running(Some(task));
        let r = e.run_background_step(task);
        self.sched.lock().set_running(None);
        r
    }

    /// Close `e` with no task stepped inside (the engine stops its own threads at close
    /// too); what the hook recorded before is taken in first.
    pub(super) fn close_quiet(&mut self, e: &Arc<Engine>) -> Std<nowa_engine::Result<()>> {
        self.take_inside()?;
        e.set_yield_hook(None);
        Ok(e.close())
    }
}
