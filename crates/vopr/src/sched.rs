//! The deterministic scheduler of the engine's background work. The engine runs with
//! `BackgroundMode::Caller` (no thread); its tasks (the page cleaner, the background DB GC,
//! group commit's log flusher) are simulated threads with timers on the simulated clock
//! (`clock.rs`), as their real threads have: the cleaner keeps stepping while it finds work
//! and sleeps its idle period otherwise, the DB GC wakes at its period, the log flusher at
//! its own. In each gap between two foreground operations the due tasks run in an order the
//! seed draws, up to a drawn burst, and now and then a task runs early (a thread woken by a
//! writer's kick or spuriously). So the interleavings of the background work with the
//! foreground come from the seed and replay exactly. They interleave at operation
//! boundaries and, in the seeds that draw it, inside an operation too: the engine calls the
//! simulation's yield hook at its `YieldPoint`s (in a write after the WAL gate, and after
//! the change is applied and logged, before its durability wait, where it holds no lock;
//! inside a write-back batch with its frames latched, a DB GC round holding the store's
//! `io`, a WAL flush holding the flush lock), and at a drawn share of those points the due
//! tasks step (or one task woken early by the operation), so a race between a writer's
//! commit and the log flusher, the cleaner or the DB GC replays from the seed. Inside a
//! section only the tasks that need none of its locks step (`YieldPoint::may_step`: a
//! thread running another would block until the section ends, i.e. step later), and never
//! the task whose own step is in the section (each task is one thread).

use crate::clock::Clock;
use crate::setup::{Rng, TimeDraw};
use nowa_engine::{BackgroundTask, YieldPoint};
use rand::RngExt;

struct Task {
    kind: BackgroundTask,
    /// Simulated time the task wakes.
    due: u64,
    /// Its sleep when it found nothing to do (the cleaner) or between passes.
    period: u64,
}

/// The simulated threads of one seed.
pub struct Sched {
    tasks: Vec<Task>,
    r: Rng,
    op_ns: u64,
    wake_pct: u32,
    burst: u32,
    /// Steps run in the current gap.
    steps: u32,
    /// An early wake-up was drawn in the current gap.
    woke: bool,
    /// Percent of the yield points inside a write at which tasks step (0: never).
    inside_pct: u32,
    /// Steps run at the current yield point, and whether one task was woken there.
    inside_steps: u32,
    /// See `inside_steps`.
    inside_woke: bool,
    /// The task whose step the harness is running (its sections may yield to the others).
    running: Option<BackgroundTask>,
}

impl Sched {
    /// The tasks `t` turns on, their first wake-ups one period from `now`; `r` draws the
    /// order (the seed's time stream).
    ///
    /// # Panics
    /// If a task's period is zero (a harness bug).
    #[must_use]
    pub fn new(t: &TimeDraw, r: Rng, now: u64) -> Sched {
        let mut tasks = Vec::new();
        let mut add = |kind, period: u64| {
            assert!(period > 0, "{kind:?} sleeps between its rounds");
            tasks.push(Task {
                kind,
                due: now + period,
                period,
            });
        };
        if t.page_cleaner {
            add(BackgroundTask::PageCleaner, t.cleaner_idle_ns);
        }
        if let Some(p) = t.gc_period_ns {
            add(BackgroundTask::DbGc, p);
        }
        if let Some(p) = t.log_flush_ns {
            add(BackgroundTask::LogFlush, p);
        }
        Sched {
            tasks,
            r,
            op_ns: t.op_ns,
            wake_pct: t.wake_pct,
            burst: t.burst,
            steps: 0,
            woke: false,
            inside_pct: t.inside_pct,
            inside_steps: 0,
            inside_woke: false,
            running: None,
        }
    }

    /// A write reached a yield point: whether tasks step here (the seed's share). When they
    /// do, part of the write's CPU time passes first. Draws nothing when the seed steps no
    /// task inside writes, so such seeds replay as before the yield points existed.
    pub fn yield_point(&mut self, clock: &Clock) -> bool {
        if self.tasks.is_empty() || self.inside_pct == 0 {
            return false;
        }
        if self.r.random_range(0..100) >= self.inside_pct {
            return false;
        }
        clock.advance(1 + self.r.random_range(0..=self.op_ns / 4));
        self.inside_steps = 0;
        self.inside_woke = false;
        true
    }

    /// The harness steps `task` itself (None: it is done): the yield points inside that
    /// step do not step it again.
    ///
    /// # Panics
    /// If a step starts while another runs (a harness bug).
    pub fn set_running(&mut self, task: Option<BackgroundTask>) {
        assert!(
            task.is_none() || self.running.is_none(),
            "one harness step at a time"
        );
        self.running = task;
    }

    /// The next task to step at the current yield point `at`: a due one, else once one task
    /// picked at random (the thread the operation woke, as a writer's kick does), up to the
    /// burst; only tasks that may run inside `at`'s section and are not the one stepping.
    ///
    /// # Panics
    /// If it runs more steps than the burst (a harness bug).
    pub fn inside(&mut self, clock: &Clock, at: YieldPoint) -> Option<BackgroundTask> {
        if self.inside_steps >= self.burst {
            return None;
        }
        let now = clock.now();
        let may: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| {
                let kind = self.tasks[i].kind;
                at.may_step(kind) && self.running != Some(kind)
            })
            .collect();
        if may.is_empty() {
            return None;
        }
        let due: Vec<usize> = may
            .iter()
            .copied()
            .filter(|&i| self.tasks[i].due <= now)
            .collect();
        let pick = if due.is_empty() {
            if self.inside_woke {
                return None;
            }
            self.inside_woke = true;
            may[self.r.random_range(0..may.len())]
        } else {
            due[self.r.random_range(0..due.len())]
        };
        self.inside_steps += 1;
        assert!(self.inside_steps <= self.burst, "a burst inside a write");
        Some(self.tasks[pick].kind)
    }

    /// A foreground operation ran: its CPU time passes, a new gap begins.
    ///
    /// # Panics
    /// If no time passed (a harness bug).
    pub fn operation(&mut self, clock: &Clock) {
        let ns = self.op_ns / 2 + self.r.random_range(0..=self.op_ns);
        let before = clock.now();
        clock.advance(ns);
        assert!(clock.now() > before, "an operation takes time");
        self.steps = 0;
        self.woke = false;
    }

    /// The next task to step in this gap, if any: a due one (picked at random among the due),
    /// or, once per gap with the seed's wake-up share, any one early.
    ///
    /// # Panics
    /// If it picks a task neither due nor woken (a harness bug).
    pub fn next(&mut self, clock: &Clock) -> Option<BackgroundTask> {
        if self.tasks.is_empty() || self.steps >= self.burst {
            return None;
        }
        let now = clock.now();
        let due: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| self.tasks[i].due <= now)
            .collect();
        let pick = if due.is_empty() {
            if self.woke || self.r.random_range(0..100) >= self.wake_pct {
                return None;
            }
            self.woke = true;
            self.r.random_range(0..self.tasks.len())
        } else {
            due[self.r.random_range(0..due.len())]
        };
        self.steps += 1;
        assert!(
            self.tasks[pick].due <= now || self.woke,
            "a task runs when due or woken"
        );
        Some(self.tasks[pick].kind)
    }

    /// Task `kind` stepped (`worked`: it found something to do). A cleaner that worked stays
    /// due (its thread loops at once); every other task sleeps its period.
    ///
    /// # Panics
    /// If `kind` is not a task of the schedule.
    pub fn stepped(&mut self, kind: BackgroundTask, worked: bool, clock: &Clock) {
        let now = clock.now();
        let t = self
            .tasks
            .iter_mut()
            .find(|t| t.kind == kind)
            .expect("a task of the schedule stepped");
        t.due = if worked && kind == BackgroundTask::PageCleaner {
            now
        } else {
            now + t.period
        };
        assert!(t.due >= now, "a task wakes in the future");
    }

    /// Every task of the schedule.
    #[must_use]
    pub fn kinds(&self) -> Vec<BackgroundTask> {
        self.tasks.iter().map(|t| t.kind).collect()
    }
}
