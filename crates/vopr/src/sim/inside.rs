//! Background steps inside a write: the engine calls the simulation's yield hook at its
//! `YieldPoint`s (after the WAL gate; after the change is applied and logged, before its
//! durability wait), where it holds no lock, and the seed's scheduler steps its tasks there
//! (`sched.rs`: at a drawn share of the points, the due tasks or one woken by the write).
//! The hook only records what the steps did; the harness takes it in once the write
//! returns, in program order, so the trace and the model stay deterministic.

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
    /// A log flush ran after the write's record was appended: the write is durable.
    flushed_logged: bool,
    /// A log flush ran before the record was appended: only the writes before are durable.
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
        while let Some(task) = sc.inside(&clock) {
            st.trace.push(0xC000 + 16 * at as u64 + task as u64);
            match e.run_background_step(task) {
                Ok(worked) => {
                    sc.stepped(task, worked, &clock);
                    st.trace.push(u64::from(worked));
                    st.worked += u64::from(worked);
                    if task == BackgroundTask::LogFlush && worked {
                        match at {
                            YieldPoint::Gated => st.flushed_gated = true,
                            YieldPoint::Logged => st.flushed_logged = true,
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

impl Sim {
    /// Install the yield hook on `e` when the seed steps tasks inside writes.
    pub(super) fn install_hook(&self, e: &Engine) {
        if self.s.time.inside_pct == 0 {
            return;
        }
        e.set_yield_hook(Some(hook(
            self.sched.clone(),
            self.inside.clone(),
            self.clock.clone(),
        )));
    }

    /// Take in what the steps at the yield points of the write that just returned did:
    /// trace, coverage; a failed step stops the run as the write's own error would.
    pub(super) fn take_inside(&mut self) -> Std<Flushed> {
        let st = std::mem::take(&mut *self.inside.lock());
        for w in &st.trace {
            self.trace(*w);
        }
        self.out.coverage.inside_steps += st.worked;
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
