//! One seed, start to end: create the database, then epochs of operations, each ending in a
//! clean close, a power loss between two operations, or a crash at a write; recover (maybe
//! crashing again inside recovery) and check the recovered state against the model.

use crate::clock::{Clock, Timing};
use crate::model::{show, Bytes, Model};
use crate::rail::Power;
use crate::sched::Sched;
use crate::setup::{rng, DeviceKind, Rng, Setup};
use crate::workload::{self, Op};
use nowa_device::{BlockDevice, FaultyDevice};
use nowa_engine::BackgroundTask;
use nowa_engine::{
    in_place_store, store_builder, Durability, Engine, EngineError, OutOfPlaceStore, PageStore,
    StoreBuilder, StoreContext, WalStop, WritePathKind,
};
use parking_lot::Mutex;
use rand::RngExt;
use std::collections::BTreeMap;
use std::sync::Arc;

mod check;
mod classes;
mod damage;
mod inside;
mod liveness;

/// Where the out-of-place builder leaves the store it built (for the GC hook and checks).
type Slot = Arc<Mutex<Option<Arc<OutOfPlaceStore>>>>;

/// How a seed ended when nothing was wrong.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The seed.
    pub seed: u64,
    /// Hash of everything the run observed (results, counters): equal for equal seeds.
    pub trace: u64,
    /// Operations issued.
    pub ops: u64,
    /// Crashes (power losses and crashes at a write), recoveries that followed.
    pub crashes: u64,
    /// Crashes inside recovery.
    pub recovery_crashes: u64,
    /// Acknowledged, not yet durable changes a crash took back (allowed).
    pub lost_async: u64,
    /// Operations or opens that failed with an error the injected faults explain.
    pub explained_errors: u64,
    /// The database refused to open with an error the faults explain (the seed stops there).
    pub refused: Option<String>,
    /// What the run exercised (engine counters summed over the epochs).
    pub coverage: Coverage,
}

/// What a run exercised, so a long run can show it reached the mechanisms it is meant to
/// test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    /// DB GC rounds run by writers / by the harness's background passes.
    pub gc_rounds_foreground: u64,
    /// See `gc_rounds_foreground`.
    pub gc_rounds_background: u64,
    /// NoWA compensation page writes.
    pub compensation_pages: u64,
    /// Pages restored from the doublewrite area at open.
    pub pages_repaired: u64,
    /// Opens that found a torn WAL tail.
    pub torn_tails: u64,
    /// Opens that fell back to the older mapping snapshot.
    pub snapshot_fallbacks: u64,
    /// Seeds that ran a placement scheme or SepFrozen (`placement.rs`).
    pub placement_seeds: u64,
    /// SepFrozen: victims the seeded oracle judged, and the pages it judged frozen.
    pub frozen_batches: u64,
    /// See `frozen_batches`.
    pub frozen_pages: u64,
    /// Flush-list batches of InnoDB's page cleaner (`Config::flushing`) and checkpoint
    /// deferrals (hot-page-aware checkpointing).
    pub flush_batches: u64,
    /// See `flush_batches`.
    pub checkpoint_deferrals: u64,
    /// Opens that salvaged a damaged WAL (`WalDamage::Salvage`), and the WAL blocks damaged
    /// in the middle of the live log before an open (`sim/damage.rs`).
    pub salvages: u64,
    /// See `salvages`.
    pub wal_damages: u64,
    /// Seeds with a placement scheme, by scheme (bit `i`: `SCHEMES[i]` of `placement.rs`,
    /// then SepFrozenBIT, SepFrozenDAC): the union over seeds.
    pub schemes: u32,
    /// Background steps the scheduler ran that found work: DB GC passes, page cleaner
    /// rounds, group-commit log flushes (`sched.rs`).
    pub bg_gc_steps: u64,
    /// See `bg_gc_steps`.
    pub cleaner_steps: u64,
    /// See `bg_gc_steps`.
    pub log_flushes: u64,
    /// Seeds whose unflushed blocks survive a power loss by their destage time on the
    /// simulated clock (out-of-order completion, `clock.rs`), and the blocks so kept.
    pub ordered_seeds: u64,
    /// See `ordered_seeds`.
    pub ordered_kept: u64,
    /// Liveness phase (`sim/liveness.rs`): seeds whose WAL reached 3/4 of its limit and came
    /// back; seeds where GC freed zones while the store was full; seeds where the cleaner
    /// went idle with its free frames refilled.
    pub live_wal: u64,
    /// See `live_wal`.
    pub live_gc: u64,
    /// See `live_wal`.
    pub live_cleaner: u64,
    /// Background steps that found work at a yield point inside an operation
    /// (`nowa_engine::YieldPoint`, `sim/inside.rs`).
    pub inside_steps: u64,
    /// Of those, the steps inside a write-back batch (its frames latched), a DB GC round
    /// (the store's `io` held) and a WAL flush (group commit's flush lock held).
    pub inside_write_back: u64,
    /// See `inside_write_back`.
    pub inside_gc_round: u64,
    /// See `inside_write_back`.
    pub inside_group_commit: u64,
    /// Sub-page deltas (`OopConfig::deltas`): user page writes stored as deltas, chains
    /// consolidated into a full page, deltas DB GC moved as deltas.
    pub delta_writes: u64,
    /// See `delta_writes`.
    pub delta_consolidations: u64,
    /// See `delta_writes`.
    pub delta_gc_moves: u64,
    /// Misses of chained pages the delta cache served (base read alone).
    pub delta_cache_hits: u64,
    /// Gets the record cache served (`Config::record_cache_bytes`).
    pub record_cache_hits: u64,
    /// Zones trimmed early because every copy in them died (`OopConfig::trim_dead_zones`).
    pub zones_trimmed_dead: u64,
    /// Blind updates (`Config::blind_update_bytes`): puts logged without reading their
    /// leaf, changes applied at a load, leaves loaded to apply them (memory, checkpoints).
    pub blind_updates: u64,
    /// See `blind_updates`.
    pub blind_applied: u64,
    /// See `blind_updates`.
    pub blind_drains: u64,
    /// WAL damage drawn past the last flush mark (a tail only write-back's unmarked flushes
    /// made durable, `sim/damage.rs`), and the opens refused because a page or delta on disk
    /// held an LSN past the log's end (`RecordDamage::PageAhead`).
    pub unmarked_damages: u64,
    /// See `unmarked_damages`.
    pub pages_ahead: u64,
}

impl Coverage {
    /// Sum of two.
    #[must_use]
    pub fn plus(self, o: Coverage) -> Coverage {
        Coverage {
            gc_rounds_foreground: self.gc_rounds_foreground + o.gc_rounds_foreground,
            gc_rounds_background: self.gc_rounds_background + o.gc_rounds_background,
            compensation_pages: self.compensation_pages + o.compensation_pages,
            pages_repaired: self.pages_repaired + o.pages_repaired,
            torn_tails: self.torn_tails + o.torn_tails,
            snapshot_fallbacks: self.snapshot_fallbacks + o.snapshot_fallbacks,
            placement_seeds: self.placement_seeds + o.placement_seeds,
            frozen_batches: self.frozen_batches + o.frozen_batches,
            frozen_pages: self.frozen_pages + o.frozen_pages,
            flush_batches: self.flush_batches + o.flush_batches,
            checkpoint_deferrals: self.checkpoint_deferrals + o.checkpoint_deferrals,
            salvages: self.salvages + o.salvages,
            wal_damages: self.wal_damages + o.wal_damages,
            schemes: self.schemes | o.schemes,
            bg_gc_steps: self.bg_gc_steps + o.bg_gc_steps,
            cleaner_steps: self.cleaner_steps + o.cleaner_steps,
            log_flushes: self.log_flushes + o.log_flushes,
            ordered_seeds: self.ordered_seeds + o.ordered_seeds,
            ordered_kept: self.ordered_kept + o.ordered_kept,
            live_wal: self.live_wal + o.live_wal,
            live_gc: self.live_gc + o.live_gc,
            live_cleaner: self.live_cleaner + o.live_cleaner,
            inside_steps: self.inside_steps + o.inside_steps,
            inside_write_back: self.inside_write_back + o.inside_write_back,
            inside_gc_round: self.inside_gc_round + o.inside_gc_round,
            inside_group_commit: self.inside_group_commit + o.inside_group_commit,
            delta_writes: self.delta_writes + o.delta_writes,
            delta_consolidations: self.delta_consolidations + o.delta_consolidations,
            delta_gc_moves: self.delta_gc_moves + o.delta_gc_moves,
            delta_cache_hits: self.delta_cache_hits + o.delta_cache_hits,
            record_cache_hits: self.record_cache_hits + o.record_cache_hits,
            zones_trimmed_dead: self.zones_trimmed_dead + o.zones_trimmed_dead,
            blind_updates: self.blind_updates + o.blind_updates,
            blind_applied: self.blind_applied + o.blind_applied,
            blind_drains: self.blind_drains + o.blind_drains,
            unmarked_damages: self.unmarked_damages + o.unmarked_damages,
            pages_ahead: self.pages_ahead + o.pages_ahead,
        }
    }
}

/// A violated guarantee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// Epoch and operation number where it was seen.
    pub epoch: u32,
    /// See `epoch`.
    pub op: u64,
    /// What was wrong.
    pub what: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seed {} failed (epoch {}, operation {}): {}\n  replay: {}",
            self.seed,
            self.epoch,
            self.op,
            self.what,
            replay_command(self.seed)
        )
    }
}

/// The command that replays `seed`.
#[must_use]
pub fn replay_command(seed: u64) -> String {
    format!("cargo run -p nowa-vopr --profile sim -- --seed {seed} --verbose")
}

/// Why an epoch stopped early.
enum Stop {
    /// The power went off (armed crash or power loss).
    Crash,
    /// An error the injected faults explain.
    Explained(String),
    /// A violated guarantee.
    Fail(String),
}

impl Stop {
    /// What stopped it, in words.
    fn what(&self) -> String {
        match self {
            Stop::Crash => "the power went off".into(),
            Stop::Explained(w) => format!("explained error: {w}"),
            Stop::Fail(w) => format!("failure: {w}"),
        }
    }
}

type Step = std::result::Result<(), Stop>;
type Std<T> = std::result::Result<T, Stop>;
type Check<T> = std::result::Result<T, String>;

/// How an epoch ends.
#[derive(Debug, Clone, Copy)]
enum End {
    Clean,
    PowerLossAt(u64),
    CrashAtWrite(u64),
}

struct Sim {
    s: Setup,
    r: Rng,
    power: Arc<Power>,
    main: Arc<dyn BlockDevice>,
    log: Option<Arc<dyn BlockDevice>>,
    slot: Slot,
    model: Model,
    out: Outcome,
    epoch: u32,
    op: u64,
    /// Media faults were injected (in this seed, ever): data may be lost or aged as
    /// documented (a lost write no WAL record touches after a restart goes unnoticed, and
    /// may leave a stale inner page), errors naming the damage are expected; reads and
    /// recoveries are then checked for invented values only.
    media: bool,
    verbose: bool,
    /// A placement scheme drawn: the zones' classes at the last clean close, checked at the
    /// reopen (`classes.rs`).
    classes_at_close: Option<Vec<Option<u16>>>,
    /// See [`Options::async_is_durable`].
    async_is_durable: bool,
    /// (epoch, operation) for the report of a panic.
    at: Arc<Mutex<(u32, u64)>>,
    /// Simulated time (`clock.rs`).
    clock: Arc<Clock>,
    /// The background tasks (`sched.rs`), shared with the yield hook (`sim/inside.rs`).
    sched: Arc<Mutex<Sched>>,
    /// What the tasks did at the yield points of the write in progress.
    inside: Arc<Mutex<inside::Inside>>,
    /// The WAL end at the last durability point of this open (0: none yet): everything
    /// below is on the device (`sim/damage.rs` damages the WAL below it).
    durable_lsn: u64,
    /// The end the engine's flush marks vouch for at the same points (below `durable_lsn`
    /// when write-back's flushes, which write no mark, flushed the log last).
    vouched_lsn: u64,
    /// The WAL was damaged past `vouched_lsn` before this open: refusing it is explained.
    unmarked_damage: bool,
    /// Which crashes at a write go to a write of the log instead ([`LOG_CRASH_STREAM`]).
    log_crash: Rng,
}

/// The stream of the log-write crash draws (apart from the main stream, whose draws keep
/// their values).
const LOG_CRASH_STREAM: u64 = 0x6c6f_675f_6372;

/// How to run a seed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Print the setup and each epoch on stderr.
    pub verbose: bool,
    /// Self-test of the checker (never for real runs): count every acknowledged async write
    /// as durable, a guarantee the engine does not give, so crashes must be reported.
    #[doc(hidden)]
    pub async_is_durable: bool,
    /// Mix every byte of every device at the end into the trace (the replay test: equal
    /// seeds must leave equal media, which needs every random source of the engine from the
    /// seed, the WAL salt and the out-of-place database id included).
    pub hash_media: bool,
}

/// Run `seed`. Panics inside the engine are failures too.
///
/// # Errors
/// The first violated guarantee, with the seed and the replay command.
pub fn run_seed(seed: u64, verbose: bool) -> Result<Outcome, Failure> {
    run_seed_with(
        seed,
        Options {
            verbose,
            ..Options::default()
        },
    )
}

/// [`run_seed`] with options.
///
/// # Errors
/// As [`run_seed`].
pub fn run_seed_with(seed: u64, opt: Options) -> Result<Outcome, Failure> {
    let verbose = opt.verbose;
    // Where the run is, for a panic's report: (epoch, operation).
    let at = Arc::new(Mutex::new((0u32, 0u64)));
    let at2 = at.clone();
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let mut sim = Sim::new(seed, verbose);
        sim.async_is_durable = opt.async_is_durable;
        sim.at = at2;
        let r = sim.run();
        if opt.hash_media {
            sim.hash_media();
        }
        if sim.s.time.latency.ordered {
            sim.out.coverage.ordered_kept = sim
                .power
                .devices()
                .iter()
                .map(|d| d.fault_stats().blocks_kept)
                .sum();
        }
        r.map(|()| sim.out.clone())
            .map_err(|what| (sim.epoch, sim.op, what))
    }));
    match res {
        Ok(Ok(o)) => Ok(o),
        Ok(Err((epoch, op, what))) => Err(Failure {
            seed,
            epoch,
            op,
            what,
        }),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_else(|| "panic".into());
            let (epoch, op) = *at.lock();
            Err(Failure {
                seed,
                epoch,
                op,
                what: format!("panic: {msg}"),
            })
        }
    }
}

/// Does this error explain itself by the faults injected (`media`) or by a torn page with
/// the doublewrite area off (documented: detected, reported as corruption)?
fn explained(e: &EngineError, media: bool, torn_pages: bool) -> bool {
    match e {
        EngineError::Corrupt(nowa_engine::Corruption::Page { .. }) if torn_pages => true,
        EngineError::Device(_)
        | EngineError::Corrupt(_)
        | EngineError::WalDamaged { .. }
        | EngineError::SalvageRefused { .. }
        | EngineError::NoSuperblock { .. }
        | EngineError::Poisoned => media,
        _ => false,
    }
}

impl Sim {
    fn new(seed: u64, verbose: bool) -> Sim {
        let mut r = rng(seed);
        let s = Setup::draw(seed, &mut r);
        if verbose {
            eprintln!("seed {seed}: {s:#?}");
            eprintln!("seed {seed}: {}", s.placement_summary());
        }
        let placed = u64::from(s.placement.is_some());
        let power = Arc::new(Power::default());
        let clock = Arc::new(Clock::default());
        let (main, log) = s.devices();
        let attach = |d: Arc<dyn BlockDevice>, i: u64| -> Arc<dyn BlockDevice> {
            let f = Arc::new(FaultyDevice::new(d, s.fault_config(i)));
            f.set_keep_prob(s.faults.keep);
            f.set_trim_mode(s.faults.trim);
            let t = Arc::new(Timing::new(clock.clone(), s.time.latency, seed, i));
            Arc::new(power.attach(f, Some(t))) as Arc<dyn BlockDevice>
        };
        let main = attach(main, 0);
        let log = log.map(|l| attach(l, 1));
        assert_eq!(
            power.devices().len(),
            1 + usize::from(s.separate_log),
            "every device on the rail"
        );
        let sched = Sched::new(
            &s.time,
            rand::SeedableRng::seed_from_u64(nowa_units::mix64(seed ^ 0x0073_6368_6564)),
            clock.now(),
        );
        let schemes = s.placement.as_ref().map_or(0, |p| scheme_bit(&p.scheme));
        let ordered = u64::from(s.time.latency.ordered);
        Sim {
            s,
            r,
            power,
            main,
            log,
            slot: Arc::new(Mutex::new(None)),
            model: Model::default(),
            out: Outcome {
                seed,
                trace: nowa_units::mix64(seed),
                coverage: Coverage {
                    placement_seeds: placed,
                    schemes,
                    ordered_seeds: ordered,
                    ..Coverage::default()
                },
                ..Outcome::default()
            },
            epoch: 0,
            op: 0,
            media: false,
            verbose,
            classes_at_close: None,
            async_is_durable: false,
            at: Arc::default(),
            clock,
            sched: Arc::new(Mutex::new(sched)),
            inside: Arc::default(),
            durable_lsn: 0,
            vouched_lsn: 0,
            unmarked_damage: false,
            log_crash: crate::setup::rng(nowa_units::mix64(seed ^ LOG_CRASH_STREAM)),
        }
    }

    /// Add an engine's counters to the coverage.
    fn absorb(&mut self, e: &Engine) {
        let st = e.stats();
        let c = &mut self.out.coverage;
        c.gc_rounds_foreground += st.gc_rounds_foreground;
        c.gc_rounds_background += st.gc_rounds_background;
        c.compensation_pages += st.compensation_page_writes;
        c.flush_batches += st.flush_batches;
        c.checkpoint_deferrals += st.checkpoint_deferrals;
        c.delta_writes += st.delta_writes;
        c.delta_consolidations += st.delta_consolidations;
        c.delta_gc_moves += st.delta_gc_moves;
        c.delta_cache_hits += st.delta_cache_hits;
        c.record_cache_hits += st.record_cache_hits;
        c.zones_trimmed_dead += st.zones_trimmed_dead;
        c.blind_updates += st.blind_updates;
        c.blind_applied += st.blind_applied;
        c.blind_drains += st.blind_drains;
        if let Some(r) = e.recovery_report() {
            c.pages_repaired += r.pages_repaired;
            c.torn_tails += u64::from(matches!(r.wal_stop, WalStop::TornTail { .. }));
            if self.verbose && r.wal_stop != WalStop::Clean {
                eprintln!("  the open's WAL stop: {:?}", r.wal_stop);
            }
            c.salvages += u64::from(matches!(r.wal_stop, WalStop::Salvaged { .. }));
            c.pages_ahead += u64::from(matches!(
                r.wal_stop,
                WalStop::Salvaged {
                    damage: nowa_engine::RecordDamage::PageAhead { .. },
                    ..
                }
            ));
            c.snapshot_fallbacks += u64::from(r.snapshot_fallback.is_some());
        }
        self.trace(st.gc_page_writes ^ (st.zones_reclaimed << 32));
    }

    /// Mix every byte of every device (what reached the media) into the trace.
    fn hash_media(&mut self) {
        for d in self.power.devices() {
            let inner = d.inner().clone();
            let cap = inner.geometry().capacity;
            let mut buf = vec![0u8; 1 << 16];
            let mut at = 0;
            while at < cap {
                let n = usize::try_from((cap - at).min(1 << 16)).expect("a chunk");
                assert!(n > 0 && n <= buf.len(), "a chunk of the device");
                if inner.read_at(at, &mut buf[..n]).is_err() {
                    self.trace(at ^ 0xE44);
                } else {
                    let h = buf[..n].chunks(8).fold(at, |h, c| {
                        let mut w = [0u8; 8];
                        w[..c.len()].copy_from_slice(c);
                        nowa_units::mix64(h ^ u64::from_le_bytes(w))
                    });
                    self.trace(h);
                }
                at += n as u64;
            }
        }
    }

    /// Mix `x` into the trace hash.
    fn trace(&mut self, x: u64) {
        self.out.trace = nowa_units::mix64(self.out.trace ^ x).wrapping_add(x);
    }

    fn torn_pages(&self) -> bool {
        self.s.oop.is_none() && !self.s.cfg.doublewrite && self.s.faults.torn > 0.0
    }

    fn builder(&self) -> Box<dyn StoreBuilder> {
        match &self.s.oop {
            None => Box::new(in_place_store()),
            Some(o) => {
                let (o, slot) = (o.clone(), self.slot.clone());
                Box::new(store_builder(
                    WritePathKind::OutOfPlace,
                    move |ctx: StoreContext| {
                        let st = Arc::new(OutOfPlaceStore::new(ctx, o.clone())?);
                        *slot.lock() = Some(st.clone());
                        Ok(st as Arc<dyn PageStore>)
                    },
                ))
            }
        }
    }

    /// Open the database; the buffer pool size is drawn again (a runtime setting).
    fn open(&mut self) -> nowa_engine::Result<Arc<Engine>> {
        let b = self.builder();
        let mut cfg = self.s.cfg.clone();
        cfg.pool_bytes = self.r.random_range(64..=192u64) * 4096;
        self.durable_lsn = 0;
        self.vouched_lsn = 0;
        let e = Arc::new(Engine::open_with_wal(
            self.main.clone(),
            self.log.clone(),
            cfg,
            b.as_ref(),
        )?);
        self.flush_clock(&e);
        self.install_hook(&e);
        Ok(e)
    }

    /// The page cleaner's flush clock in the simulation: the simulated clock.
    fn flush_clock(&self, e: &Engine) {
        let clock = self.clock.clone();
        e.set_flush_clock(Some(Arc::new(move || clock.secs())));
    }

    /// The gap after a foreground operation: its CPU time passes, then the background tasks
    /// that are due (or woken early) step, in the order the seed draws.
    fn background(&mut self, e: &Engine) -> Step {
        // The liveness phase's writes: their flushes count for nothing (conservative).
        self.take_inside()?;
        self.sched.lock().operation(&self.clock);
        loop {
            let next = self.sched.lock().next(&self.clock);
            let Some(task) = next else { break };
            let worked = self.background_step(e, task)?;
            // Steps inside the task's own sections (`sim/inside.rs`).
            self.take_inside()?;
            self.sched.lock().stepped(task, worked, &self.clock);
        }
        Ok(())
    }

    /// One step of `task`; what it did goes into the coverage, the trace and the model.
    fn background_step(&mut self, e: &Engine, task: BackgroundTask) -> Std<bool> {
        self.trace(0xB000 + task as u64);
        let worked = self.step_task(e, task).map_err(|err| self.failed(&err))?;
        self.trace(u64::from(worked));
        let c = &mut self.out.coverage;
        match task {
            BackgroundTask::DbGc => c.bg_gc_steps += u64::from(worked),
            BackgroundTask::PageCleaner => c.cleaner_steps += u64::from(worked),
            BackgroundTask::LogFlush => {
                c.log_flushes += u64::from(worked);
                // Every acknowledged write is durable now (group commit's promise).
                self.model.durable();
                self.durable_lsn = e.wal_durable_lsn();
                self.vouched_lsn = e.wal_vouched_lsn();
                assert!(
                    self.durable_lsn >= e.wal_end_lsn(),
                    "a log flush leaves the log durable to its end"
                );
            }
        }
        Ok(worked)
    }

    fn run(&mut self) -> Check<()> {
        let b = self.builder();
        let e = Arc::new(
            Engine::create_with_wal(
                self.main.clone(),
                self.log.clone(),
                self.s.cfg.clone(),
                b.as_ref(),
            )
            .map_err(|e| format!("create failed: {e}"))?,
        );
        self.flush_clock(&e);
        self.install_hook(&e);
        let mut eng = Some(e);
        for epoch in 0..self.s.work.epochs {
            self.epoch = epoch;
            let e = eng.take().expect("an open engine at each epoch");
            match self.epoch_run(e)? {
                Some(e) => eng = Some(e),
                None => return Ok(()),
            }
        }
        let e = eng.take().expect("an open engine at the end");
        self.final_check(e)
    }

    /// One epoch; returns the engine to go on with, or None when the database (legitimately)
    /// refused to open.
    fn epoch_run(&mut self, e: Arc<Engine>) -> Check<Option<Arc<Engine>>> {
        let end = self.draw_end();
        let media =
            self.s.faults.media_pct > 0 && self.r.random_range(0..100) < self.s.faults.media_pct;
        if media {
            self.inject_media();
        }
        if let End::CrashAtWrite(n) = end {
            // One in four: the crash hits one of the next few data writes of the log (a
            // crash among all writes rarely lands in a log flush, and a torn tail needs
            // one; docs/engine-writes.md, session 7a).
            if self.log_crash.random_range(0..4) == 0 {
                let l = e.layout();
                let log = l.wal_start * 4096..(l.wal_start + l.log_blocks()) * 4096;
                let n = self.log_crash.random_range(1..=6);
                let device = usize::from(self.s.separate_log);
                self.power.crash_at_range_write(device, log, n);
            } else {
                self.power.crash_after_writes(n);
            }
        }
        let ops = self.r.random_range(1..=self.s.work.ops);
        let stop = self.ops(&e, ops, end);
        self.power.disarm();
        self.absorb(&e);
        // Media faults last one epoch (what they did to the media stays).
        for d in self.power.devices() {
            d.clear_write_faults();
            d.clear_read_faults();
        }
        if self.verbose {
            eprintln!(
                "epoch {}: {end:?}, media faults {media}, {} ops -> {}",
                self.epoch,
                self.op,
                match &stop {
                    Ok(()) => "completed".to_string(),
                    Err(Stop::Crash) => "crash".to_string(),
                    Err(Stop::Explained(w)) => format!("explained error: {w}"),
                    Err(Stop::Fail(w)) => format!("failure: {w}"),
                }
            );
        }
        if let Err(Stop::Fail(w)) = stop {
            return Err(w);
        }
        if stop.is_ok() && matches!(end, End::Clean) {
            return self.clean_restart(e);
        }
        drop(e);
        self.crash_restart()
    }

    fn draw_end(&mut self) -> End {
        assert!(self.s.work.ops >= 1, "epochs have operations");
        match self.r.random_range(0..10) {
            0..=1 => End::Clean,
            2..=4 => End::PowerLossAt(self.r.random_range(0..=self.s.work.ops)),
            _ => End::CrashAtWrite(self.r.random_range(1..=self.s.work.ops * 2)),
        }
    }

    /// Lost and misdirected writes and read errors for this epoch.
    fn inject_media(&mut self) {
        self.media = true;
        for d in self.power.devices() {
            let cap = d.geometry().capacity;
            if self.r.random_bool(0.5) {
                d.set_lost_write_prob(self.r.random_range(1..=20u32).into_f64() / 1000.0);
            }
            if self.r.random_bool(0.5) {
                d.set_read_error_prob(self.r.random_range(1..=10u32).into_f64() / 1000.0);
            }
            if self.r.random_bool(0.3) {
                let blocks = cap / 4096;
                let at = self.r.random_range(0..blocks) * 4096;
                let to = self.r.random_range(0..blocks) * 4096;
                d.misdirect_writes(at..at + 64 * 4096, self.r.random_range(1..=3), to);
            }
        }
    }

    /// Run up to `n` operations; `end` may cut them short with a power loss.
    fn ops(&mut self, e: &Engine, n: u64, end: End) -> Step {
        for i in 0..n {
            if matches!(end, End::PowerLossAt(at) if at == i) {
                self.power.power_loss();
                return Err(Stop::Crash);
            }
            assert!(!self.power.is_off(), "operations run with power on");
            let op = workload::draw(&self.s.work, &mut self.r, self.s.bg_pct, self.op);
            self.op += 1;
            self.out.ops += 1;
            *self.at.lock() = (self.epoch, self.op);
            self.trace(op.code());
            self.apply(e, &op)?;
            self.durable_lsn = e.wal_durable_lsn();
            self.vouched_lsn = e.wal_vouched_lsn();
            self.background(e)?;
        }
        if matches!(end, End::Clean) {
            return Ok(());
        }
        // The armed crash did not come, or the power loss point lies beyond: lose power now.
        self.power.power_loss();
        Err(Stop::Crash)
    }

    /// An operation failed: a crash, an explained error, or a failure of the engine.
    fn failed(&mut self, e: &EngineError) -> Stop {
        self.trace(0xE000);
        if self.power.is_off() {
            return Stop::Crash;
        }
        if explained(e, self.media, self.torn_pages()) {
            self.out.explained_errors += 1;
            return Stop::Explained(e.to_string());
        }
        Stop::Fail(format!(
            "operation failed with an error no injected fault explains: {e}"
        ))
    }

    fn apply(&mut self, e: &Engine, op: &Op) -> Step {
        let r = match op {
            Op::Put { key, value, sync } => {
                self.model.issue(key, Some(value));
                e.put_with(key, value, durability(*sync))
            }
            Op::Delete { key, sync } => {
                self.model.issue(key, None);
                e.delete_with(key, durability(*sync)).map(|_| ())
            }
            Op::Get { key } => return self.check_get(e, key),
            Op::Scan { start, end, limit } => {
                return self.check_scan(e, start, end.as_deref(), *limit)
            }
            Op::Sync => e.sync(),
            Op::Checkpoint => e.checkpoint(),
            Op::BackgroundGc => {
                assert!(
                    self.s.oop.is_some(),
                    "background GC passes only out of place"
                );
                self.step_task(e, BackgroundTask::DbGc).map(|_| ())
            }
        };
        // Steps at the write's yield points (`sim/inside.rs`) ran before it returned.
        let flushed = self.take_inside()?;
        match r {
            Ok(()) => {
                match op {
                    Op::Put { sync, .. } | Op::Delete { sync, .. } => {
                        if flushed.before {
                            self.model.durable();
                        }
                        self.model
                            .ack(*sync || self.async_is_durable || flushed.with_op);
                    }
                    Op::Sync | Op::Checkpoint => self.model.durable(),
                    _ => {}
                }
                Ok(())
            }
            Err(err) => Err(self.failed(&err)),
        }
    }
}

fn durability(sync: bool) -> Durability {
    if sync {
        Durability::Sync
    } else {
        Durability::Async
    }
}

/// The coverage bit of a placement scheme as `PlacementDraw::scheme` spells it.
fn scheme_bit(scheme: &str) -> u32 {
    let name = scheme.split(':').next().unwrap_or_default();
    let i = crate::placement::scheme_index(name)
        .unwrap_or_else(|| panic!("a scheme the placement draw knows: {scheme}"));
    1 << i
}

/// `u32` to `f64` without a cast.
trait IntoF64 {
    fn into_f64(self) -> f64;
}
impl IntoF64 for u32 {
    fn into_f64(self) -> f64 {
        f64::from(self)
    }
}

/// Every pair of the database, by a full scan.
fn read_all(e: &Engine) -> nowa_engine::Result<BTreeMap<Bytes, Bytes>> {
    Ok(e.scan(&[], None, usize::MAX)?.into_iter().collect())
}

/// Is the device simulated as zoned?
#[must_use]
pub fn zoned(s: &Setup) -> bool {
    matches!(s.device, DeviceKind::SimZns { .. })
}

/// For messages: a key.
#[must_use]
pub fn key_name(k: &[u8]) -> String {
    show(k)
}
