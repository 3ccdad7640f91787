//! The run: worker threads draw transactions from the TPC-C mix (standard or steady) and run them
//! against a [`TxnStore`], retrying conflicts; the caller's thread samples counters, polls the
//! stop conditions and builds the [`Report`].
//!
//! Workers and warehouses: with `threads <= warehouses`, worker `t` owns the warehouses
//! `w` with `(w - 1) % threads == t` and draws its home warehouse uniformly among them for every
//! transaction (with `threads == warehouses` each worker has exactly one, as LeanStore's
//! `--tpcc_warehouse_affinity`); with more threads than warehouses, worker `t`'s home is
//! `t % warehouses + 1`. Remote items and payments reach any warehouse.
//!
//! Determinism: worker `t`'s inputs come from the stream `(seed, t)`; with one thread and a
//! transaction-count stop, a seed names one exact sequence of transactions (and, on a
//! deterministic store, one write stream).

use crate::error::TpccError;
use crate::load::LOAD_TIME;
use crate::report::{
    new_histogram, Extra, KindReport, Latency, Observer, Progress, Report, Sample,
};
use crate::rng::{last_name, Rng, C_LAST_RUN_C};
use crate::schema::{key, Table, Tables, CARRIERS, DISTRICTS};
use crate::store::{prefix_end, ScanOrder, Transaction, TxnStore};
use crate::txns::{
    execute, Ctx, CustomerSel, Done, Fail, Input, LineInput, PaymentInput, TxnKind, UNUSED_ITEM,
};
use hdrhistogram::Histogram;
use nowa_units::cpu::process_cpu_secs;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// When a run ends (besides [`Observer::should_stop`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// After this many seconds of wall time.
    Seconds(f64),
    /// After this many draws from the mix: committed plus rolled-back transactions, all types
    /// (in steady mode the New-Order that replaces a rolled-back one belongs to the same draw,
    /// and no-op draws do not count).
    Transactions(u64),
    /// Only when the observer says so.
    Observer,
}

/// What to run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunConfig {
    /// Warehouses loaded (1..=[`crate::load::MAX_WAREHOUSES`]).
    pub warehouses: u32,
    /// Worker threads (>= 1).
    pub threads: usize,
    /// 0 = standard TPC-C (45/43/4/4/4, the database grows); else steady TPC-C with ZLeanStore's
    /// `--tpcc_batch_delete_window` (2100 keeps the size flat; at least 525).
    pub steady_window: u32,
    /// The seed of the transaction inputs.
    pub seed: u64,
    /// When to stop.
    pub stop: Stop,
    /// Length of a sample interval (> 0).
    pub sample_interval: Duration,
    /// Conflicts one transaction may lose before the run fails.
    pub max_retries: u32,
}

impl RunConfig {
    /// Standard TPC-C on `warehouses` warehouses with `threads` workers, seed 1, 10 seconds,
    /// one-second samples, 1,000 retries.
    #[must_use]
    pub fn new(warehouses: u32, threads: usize) -> RunConfig {
        RunConfig {
            warehouses,
            threads,
            steady_window: 0,
            seed: 1,
            stop: Stop::Seconds(10.0),
            sample_interval: Duration::from_secs(1),
            max_retries: 1000,
        }
    }

    /// ZLeanStore's batch-delete window: `4 * steady_window / 2100` orders per district (4).
    /// ZLeanStore deletes exactly this many per district and batch delete; we delete the
    /// delivered orders beyond the newest `steady_window`, at most twice this many (see
    /// docs/tpcc.md: same mean rate, but the count reverts to its level instead of drifting).
    #[must_use]
    pub fn delete_window(&self) -> i32 {
        i32::try_from(4 * u64::from(self.steady_window) / 2100).unwrap_or(i32::MAX)
    }

    /// HISTORY rows a worker keeps after each of its batch deletes: ZLeanStore's
    /// `43 / threads + threads`. ZLeanStore deletes that many rows per batch delete; we delete
    /// every row of the worker but the newest this many (see docs/tpcc.md: ZLeanStore's fixed
    /// count trails the Payments' 43 inserts per batch delete for 2..=42 threads, so HISTORY
    /// grows; trimming to the window keeps it bounded at every thread count).
    #[must_use]
    pub fn history_window(&self) -> i32 {
        let t = i32::try_from(self.threads.max(1)).unwrap_or(i32::MAX);
        (43 / t).saturating_add(t)
    }

    fn check(&self) -> Result<(), TpccError> {
        let bad = |field, value, expected| {
            Err(TpccError::Config {
                field,
                value,
                expected,
            })
        };
        if !(1..=crate::load::MAX_WAREHOUSES).contains(&self.warehouses) {
            return bad("warehouses", u64::from(self.warehouses), "1..=50000");
        }
        if self.threads == 0 {
            return bad("threads", 0, "at least 1");
        }
        if self.steady_window != 0 && self.delete_window() == 0 {
            return bad(
                "steady_window",
                u64::from(self.steady_window),
                "0 or >= 525",
            );
        }
        if self.sample_interval.is_zero() {
            return bad("sample_interval", 0, "> 0");
        }
        if let Stop::Seconds(s) = self.stop {
            if !(s.is_finite() && s >= 0.0) {
                return bad(
                    "stop seconds",
                    0,
                    "a finite, non-negative number of seconds",
                );
            }
        }
        Ok(())
    }
}

/// Counters shared by the workers and the monitor.
#[derive(Default)]
struct Shared {
    committed: [AtomicU64; 6],
    conflicts: [AtomicU64; 6],
    rollbacks: AtomicU64,
    noops: AtomicU64,
    skipped: AtomicU64,
    deleted: AtomicU64,
    tickets: AtomicU64,
    stop: AtomicBool,
    running: AtomicUsize,
    error: Mutex<Option<TpccError>>,
}

impl Shared {
    fn total(&self) -> u64 {
        self.committed.iter().map(|c| c.load(Relaxed)).sum()
    }
    fn conflicts(&self) -> u64 {
        self.conflicts.iter().map(|c| c.load(Relaxed)).sum()
    }
    fn fail(&self, e: TpccError) {
        self.error.lock().get_or_insert(e);
        self.stop.store(true, Relaxed);
    }
}

/// Runs TPC-C on a loaded store until `cfg.stop` or the observer ends it.
///
/// # Errors
/// [`TpccError::Config`] for a bad configuration, else the first error of any worker (a store
/// failure, a transaction that lost more than `max_retries` conflicts, a database that is not
/// TPC-C's).
///
/// # Panics
/// Only on a broken invariant of the driver itself (counters not zero at the start).
pub fn run<S: TxnStore>(
    store: &S,
    tables: &Tables,
    cfg: &RunConfig,
    observer: &dyn Observer,
) -> Result<Report, TpccError> {
    cfg.check()?;
    let shared = Shared::default();
    shared.running.store(cfg.threads, Relaxed);
    let cpu0 = process_cpu_secs();
    let start = Instant::now();
    // Before any worker runs: a worker that commits before the monitor's first look would be
    // missing from the samples' sum.
    let first = Snapshot::take(&shared, 0.0);
    assert_eq!(first.total, 0, "a run starts from zeroed counters");
    let (hists, samples) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|t| {
                let shared = &shared;
                s.spawn(move || {
                    let hists = worker(store, tables, cfg, t, shared);
                    shared.running.fetch_sub(1, Relaxed);
                    hists
                })
            })
            .collect();
        let (mut samples, last) = monitor(cfg, &shared, observer, start, first);
        shared.stop.store(true, Relaxed);
        let mut hists = vec![new_histogram(); 6];
        for (t, h) in handles.into_iter().enumerate() {
            match h.join() {
                Ok(mine) => merge(&mut hists, &mine),
                Err(_) => shared.fail(TpccError::WorkerPanicked { worker: t }),
            }
        }
        // Transactions in flight at the stop finished after the last sample: one more sample.
        let end = Snapshot::take(&shared, start.elapsed().as_secs_f64());
        if end.total != last.total || end.rollbacks != last.rollbacks {
            let mut sample = end.sample_since(&last);
            observer.on_sample(&mut sample);
            samples.push(sample);
        }
        (hists, samples)
    });
    let elapsed = start.elapsed();
    if let Some(e) = shared.error.lock().take() {
        return Err(e);
    }
    let cpu = process_cpu_secs() - cpu0;
    let mut report = build_report(cfg, &shared, &hists, samples, elapsed, cpu);
    observer.on_finish(&mut report);
    Ok(report)
}

fn merge(into: &mut [Histogram<u64>], from: &[Histogram<u64>]) {
    for (a, b) in into.iter_mut().zip(from) {
        a.add(b).expect("histograms with the same bounds");
    }
}

/// The caller's thread: samples every interval (from the counters at `first`), stops on time,
/// count or the observer's word. Returns the samples and the counters at the last one.
fn monitor(
    cfg: &RunConfig,
    shared: &Shared,
    obs: &dyn Observer,
    start: Instant,
    first: Snapshot,
) -> (Vec<Sample>, Snapshot) {
    let mut samples = Vec::new();
    let mut last = first;
    let interval = cfg.sample_interval.as_secs_f64();
    loop {
        let until_sample = interval - (start.elapsed().as_secs_f64() - last.at);
        std::thread::sleep(Duration::from_secs_f64(until_sample.clamp(0.0, 0.01)));
        let now = Snapshot::take(shared, start.elapsed().as_secs_f64());
        let finished = shared.running.load(Relaxed) == 0 || shared.stop.load(Relaxed);
        let progress = Progress {
            elapsed_s: now.at,
            transactions: now.total,
            new_orders: now.new_orders,
        };
        let timeout = matches!(cfg.stop, Stop::Seconds(s) if now.at >= s);
        let done = finished || timeout || obs.should_stop(&progress);
        if done || now.at - last.at >= interval {
            let mut sample = now.sample_since(&last);
            obs.on_sample(&mut sample);
            samples.push(sample);
            last = now;
        }
        if done {
            shared.stop.store(true, Relaxed);
            return (samples, last);
        }
    }
}

/// Cumulative counters at one instant.
struct Snapshot {
    at: f64,
    total: u64,
    new_orders: u64,
    rollbacks: u64,
    conflicts: u64,
}

impl Snapshot {
    fn take(s: &Shared, at: f64) -> Snapshot {
        Snapshot {
            at,
            total: s.total(),
            new_orders: s.committed[TxnKind::NewOrder.index()].load(Relaxed),
            rollbacks: s.rollbacks.load(Relaxed),
            conflicts: s.conflicts(),
        }
    }

    fn sample_since(&self, before: &Snapshot) -> Sample {
        let dt = (self.at - before.at).max(1e-9);
        let transactions = self.total - before.total;
        let new_orders = self.new_orders - before.new_orders;
        #[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
        let rate = |n: u64| n as f64 / dt;
        Sample {
            elapsed_s: self.at,
            interval_s: dt,
            transactions,
            txn_per_s: rate(transactions),
            new_orders,
            tpmc: rate(new_orders) * 60.0,
            rollbacks: self.rollbacks - before.rollbacks,
            conflicts: self.conflicts - before.conflicts,
            total_transactions: self.total,
            extra: Extra::new(),
        }
    }
}

fn build_report(
    cfg: &RunConfig,
    s: &Shared,
    hists: &[Histogram<u64>],
    samples: Vec<Sample>,
    elapsed: Duration,
    cpu_s: f64,
) -> Report {
    let seconds = elapsed.as_secs_f64().max(1e-9);
    let transactions = s.total();
    let new_orders = s.committed[TxnKind::NewOrder.index()].load(Relaxed);
    let (rollbacks, conflicts) = (s.rollbacks.load(Relaxed), s.conflicts());
    let kinds = TxnKind::ALL
        .iter()
        .map(|&kind| KindReport {
            kind,
            committed: s.committed[kind.index()].load(Relaxed),
            rolled_back: if kind == TxnKind::NewOrder {
                rollbacks
            } else {
                0
            },
            conflicts: s.conflicts[kind.index()].load(Relaxed),
            latency: Latency::of(&hists[kind.index()]),
        })
        .collect();
    #[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
    let f = |n: u64| n as f64;
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { f(a) / f(b) };
    Report {
        config: cfg.clone(),
        seconds,
        transactions,
        txn_per_s: f(transactions) / seconds,
        new_orders,
        tpmc: f(new_orders) * 60.0 / seconds,
        kinds,
        rollbacks,
        conflicts,
        rollback_rate: ratio(rollbacks, transactions + rollbacks),
        conflict_rate: ratio(conflicts, transactions + rollbacks + conflicts),
        noops: s.noops.load(Relaxed),
        skipped_deliveries: s.skipped.load(Relaxed),
        deleted_orders: s.deleted.load(Relaxed),
        cpu_s,
        cpu_us_per_txn: 1e6 * cpu_s / f(transactions.max(1)),
        samples,
        extra: Extra::new(),
    }
}

/// One worker: returns its latency histograms (by [`TxnKind::index`]).
fn worker<S: TxnStore>(
    store: &S,
    tables: &Tables,
    cfg: &RunConfig,
    t: usize,
    shared: &Shared,
) -> Vec<Histogram<u64>> {
    let mut hists = vec![new_histogram(); 6];
    let mut w = match Worker::new(store, tables, cfg, t) {
        Ok(w) => w,
        Err(e) => {
            shared.fail(e);
            return hists;
        }
    };
    while !shared.stop.load(Relaxed) {
        let input = w.draw(shared);
        if let Stop::Transactions(n) = cfg.stop {
            if shared.tickets.fetch_add(1, Relaxed) >= n {
                break;
            }
        }
        if let Err(e) = w.run_draw(input, shared, &mut hists) {
            shared.fail(e);
            break;
        }
    }
    hists
}

/// One worker's state: its input stream, warehouses, clock and HISTORY rows.
struct Worker<'a, S: TxnStore> {
    store: &'a S,
    tables: &'a Tables,
    cfg: &'a RunConfig,
    rng: Rng,
    homes: Vec<i32>,
    warehouses: i32,
    /// HISTORY thread id of this worker (1-based; 0 holds the loaded rows).
    thread: i32,
    /// Next HISTORY row number to insert.
    next_pk: i32,
    /// Every row number up to this one has been trimmed.
    trimmed: i32,
    clock: i64,
}

impl<'a, S: TxnStore> Worker<'a, S> {
    fn new(
        store: &'a S,
        tables: &'a Tables,
        cfg: &'a RunConfig,
        t: usize,
    ) -> Result<Self, TpccError> {
        let warehouses = i32::try_from(cfg.warehouses).expect("checked <= MAX_WAREHOUSES");
        let threads = i32::try_from(cfg.threads).unwrap_or(i32::MAX);
        let ti = i32::try_from(t).expect("fewer than 2^31 threads");
        let homes: Vec<i32> = if threads <= warehouses {
            (1..=warehouses)
                .filter(|w| (w - 1) % threads == ti)
                .collect()
        } else {
            vec![ti % warehouses + 1]
        };
        assert!(!homes.is_empty(), "every worker has a home warehouse");
        let thread = ti + 1;
        let (next_pk, trimmed) = history_state(store, tables, thread)?;
        Ok(Worker {
            store,
            tables,
            cfg,
            rng: Rng::derive(cfg.seed, &[u64::try_from(thread).expect("positive")]),
            homes,
            warehouses,
            thread,
            next_pk,
            trimmed,
            clock: LOAD_TIME,
        })
    }

    /// The next input of the mix (steady mode's no-op draws are counted and skipped).
    fn draw(&mut self, shared: &Shared) -> Input {
        loop {
            let w = self.homes
                [usize::try_from(self.rng.below(self.homes.len() as u64)).expect("an index")];
            let r = self.rng.int(1, 100);
            match r {
                1..=43 => return self.payment(w),
                44..=47 => return self.order_status(w),
                48..=51 => {
                    let carrier = self.rng.int(1, CARRIERS);
                    return Input::Delivery { w, carrier };
                }
                52..=55 => {
                    let d = self.rng.int(1, DISTRICTS);
                    let threshold = self.rng.int(10, 20);
                    return Input::StockLevel { w, d, threshold };
                }
                _ if self.cfg.steady_window == 0 || r <= 95 => return self.new_order(w),
                _ if self.rng.int(1, 5) == 1 => return self.batch_delete(w),
                _ => {
                    shared.noops.fetch_add(1, Relaxed);
                }
            }
        }
    }

    fn remote(&mut self, w: i32) -> i32 {
        if self.warehouses == 1 {
            w
        } else {
            self.rng.int_except(1, self.warehouses, w)
        }
    }

    fn customer_sel(&mut self) -> CustomerSel {
        if self.rng.percent(60) {
            CustomerSel::Last(last_name(self.rng.nurand(255, 0, 999, C_LAST_RUN_C)))
        } else {
            CustomerSel::Id(self.rng.customer_id())
        }
    }

    fn new_order(&mut self, w: i32) -> Input {
        let d = self.rng.int(1, DISTRICTS);
        let c = self.rng.customer_id();
        let count = self.rng.int(5, 15);
        let rollback = self.rng.percent(1);
        let mut lines: Vec<LineInput> = Vec::with_capacity(15);
        for n in 1..=count {
            let supply_w = if self.rng.percent(1) {
                self.remote(w)
            } else {
                w
            };
            let mut i_id = self.rng.item_id();
            while lines.iter().any(|l| l.i_id == i_id) {
                i_id = self.rng.item_id(); // one item at most once per order (as go-tpc)
            }
            if rollback && n == count {
                i_id = UNUSED_ITEM;
            }
            let quantity = self.rng.int(1, 10);
            lines.push(LineInput {
                supply_w,
                i_id,
                quantity,
            });
        }
        lines.sort_unstable();
        Input::NewOrder { w, d, c, lines }
    }

    fn payment(&mut self, w: i32) -> Input {
        let d = self.rng.int(1, DISTRICTS);
        let (c_w, c_d) = if self.warehouses > 1 && self.rng.int(1, 100) > 85 {
            let c_w = self.remote(w);
            (c_w, self.rng.int(1, DISTRICTS))
        } else {
            (w, d)
        };
        let amount = i64::from(self.rng.int(100, 500_000));
        let customer = self.customer_sel();
        let history = (self.thread, self.next_pk);
        Input::Payment(PaymentInput {
            w,
            d,
            c_w,
            c_d,
            customer,
            amount,
            history,
        })
    }

    fn order_status(&mut self, w: i32) -> Input {
        let d = self.rng.int(1, DISTRICTS);
        let customer = self.customer_sel();
        Input::OrderStatus { w, d, customer }
    }

    fn batch_delete(&mut self, w: i32) -> Input {
        let keep_from = self.next_pk - self.cfg.history_window();
        let due = keep_from > self.trimmed + 1;
        let history = due.then(|| (self.thread, self.trimmed + 1, keep_from - 1));
        Input::BatchDelete {
            w,
            keep: i32::try_from(self.cfg.steady_window).unwrap_or(i32::MAX),
            max: 2 * self.cfg.delete_window(),
            history,
        }
    }

    /// Runs one draw of the mix: `input`, and in steady mode, after a rolled-back New-Order,
    /// another New-Order (so committed New-Orders stay 40% of the draws and balance Delivery and
    /// the batch deletes exactly, as in ZLeanStore, which has no rollbacks).
    fn run_draw(
        &mut self,
        mut input: Input,
        shared: &Shared,
        hists: &mut [Histogram<u64>],
    ) -> Result<(), TpccError> {
        loop {
            let started = Instant::now();
            let committed = self.run_one(&input, shared)?;
            let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
            hists[input.kind().index()].saturating_record(ns.max(1));
            match input {
                Input::NewOrder { w, .. } if !committed && self.cfg.steady_window > 0 => {
                    input = self.new_order(w);
                }
                _ => return Ok(()),
            }
        }
    }

    /// Runs `input` to commit (true) or rollback (false), retrying conflicts, and updates the
    /// counters.
    fn run_one(&mut self, input: &Input, shared: &Shared) -> Result<bool, TpccError> {
        self.clock += 1;
        let ctx = Ctx {
            tables: self.tables,
            now: self.clock,
        };
        let kind = input.kind().index();
        let mut conflicts = 0u32;
        loop {
            match attempt(self.store, ctx, input) {
                Ok(done) => {
                    self.committed(input, done, shared);
                    return Ok(true);
                }
                Err(Fail::Rollback) => {
                    shared.rollbacks.fetch_add(1, Relaxed);
                    return Ok(false);
                }
                Err(Fail::Store(e)) if e.is_retryable() && conflicts < self.cfg.max_retries => {
                    conflicts += 1;
                    shared.conflicts[kind].fetch_add(1, Relaxed);
                    std::thread::yield_now();
                }
                Err(Fail::Store(e)) => return Err(e.into()),
                Err(Fail::Tpcc(e)) => return Err(e),
            }
        }
    }

    fn committed(&mut self, input: &Input, done: Done, shared: &Shared) {
        assert!(
            self.trimmed < self.next_pk,
            "trimmed rows were inserted before"
        );
        shared.committed[input.kind().index()].fetch_add(1, Relaxed);
        match input {
            Input::Payment(p) => {
                assert_eq!(
                    p.history.1, self.next_pk,
                    "HISTORY rows are numbered in order"
                );
                self.next_pk += 1;
            }
            Input::Delivery { .. } => {
                let skipped = u64::try_from(done.other).expect("0..=10 districts");
                shared.skipped.fetch_add(skipped, Relaxed);
            }
            Input::BatchDelete { history, .. } => {
                let deleted = u64::try_from(done.count).expect("a non-negative count");
                shared.deleted.fetch_add(deleted, Relaxed);
                if let Some((_, first, last)) = history {
                    assert_eq!(*first, self.trimmed + 1, "trims are consecutive");
                    self.trimmed = *last;
                }
            }
            _ => {}
        }
    }
}

/// One attempt: committed, or aborted (rolled back on purpose, or failed).
fn attempt<S: TxnStore>(store: &S, ctx: Ctx<'_>, input: &Input) -> Result<Done, Fail> {
    let mut txn = store.begin()?;
    match execute(&mut txn, ctx, input) {
        Ok(done) => {
            txn.commit()?;
            Ok(done)
        }
        Err(Fail::Tpcc(e)) => {
            // An optimistic store may have shown an inconsistent state: a conflict, not a
            // failure, if the reads no longer hold.
            let valid = txn.validate();
            txn.abort();
            valid?;
            Err(Fail::Tpcc(e))
        }
        Err(e) => {
            txn.abort();
            Err(e)
        }
    }
}

/// A worker's HISTORY position from the database: (next row number, last trimmed row number).
fn history_state<S: TxnStore>(
    store: &S,
    tables: &Tables,
    thread: i32,
) -> Result<(i32, i32), TpccError> {
    let prefix = crate::keys::fold_i32(thread);
    let end = prefix_end(&prefix);
    let id = tables.id(Table::History);
    let pk = |rows: Vec<(Vec<u8>, Vec<u8>)>| -> Result<Option<i32>, TpccError> {
        rows.first()
            .map(|(k, _)| {
                key::field(k, 1).ok_or(TpccError::Missing {
                    table: Table::History,
                    key: k.clone(),
                })
            })
            .transpose()
    };
    let (max, min) = crate::store::retry_on_conflict(|| {
        let mut txn = store.begin()?;
        let last = txn.scan(id, &prefix, end.as_deref(), ScanOrder::Reverse, 1)?;
        let first = txn.scan(id, &prefix, end.as_deref(), ScanOrder::Forward, 1)?;
        txn.commit()?;
        Ok((last, first))
    })?;
    let (max, min) = (pk(max)?, pk(min)?);
    Ok(match (max, min) {
        (Some(max), Some(min)) => (max + 1, min - 1),
        _ => (1, 0),
    })
}
