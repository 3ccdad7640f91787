//! The measured phase: worker threads issue the mix against the loaded engine while a monitor
//! takes a snapshot per interval, until the stop condition holds, an operation fails, or
//! Ctrl-C ([`crate::interrupt`]).

use super::measure::{new_hist, Snapshot, Tick, YcsbResult};
use super::values::{key_of, make_value, KeyGen};
use super::{Mix, Stop, WritePath, YcsbError, YcsbSpec};
use hdrhistogram::Histogram;
use nowa_device::BlockDevice;
use nowa_engine::{Durability, Engine};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Operations a worker claims from the shared counter at once (keeps the counter cold).
const BATCH: u64 = 64;

/// What the workers and the monitor share.
struct Shared<'a> {
    engine: &'a Engine,
    spec: &'a YcsbSpec,
    dev: &'a dyn BlockDevice,
    /// The counters at the start of the measured phase (what the stop condition counts from).
    start: &'a Snapshot,
    stop: AtomicBool,
    /// Operations claimed (may overshoot the operations done by up to a batch per worker).
    ops: AtomicU64,
    failure: Mutex<Option<YcsbError>>,
    /// (reads, updates) in nanoseconds, merged by each worker at its end.
    hists: Mutex<(Histogram<u64>, Histogram<u64>)>,
    ack_log: Option<Mutex<std::fs::File>>,
    /// Updates begun, over all workers (counts only with `durable_every`).
    updates: AtomicU64,
}

impl Shared<'_> {
    /// Records the first failure and stops every thread.
    fn fail(&self, e: YcsbError) {
        self.failure.lock().get_or_insert(e);
        self.stop.store(true, Relaxed);
    }
}

pub(crate) fn worker_seed(seed: u64, t: usize) -> u64 {
    seed.wrapping_add(1 + t as u64 * 0x9E37_79B9)
}

fn open_ack_log(spec: &YcsbSpec) -> Result<Option<Mutex<std::fs::File>>, YcsbError> {
    let Some(path) = &spec.ack_log else {
        return Ok(None);
    };
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| YcsbError::AckLog {
            path: path.clone(),
            source,
        })?;
    Ok(Some(Mutex::new(f)))
}

/// Run the measured phase on a loaded engine. `on_tick` sees every interval (CSV, progress).
///
/// # Errors
/// The first failed operation, a worker that could not start, or a failed ack-log write.
///
/// # Panics
/// If more operations were done than claimed or allowed (a bug).
pub fn run(
    engine: Arc<Engine>,
    spec: &YcsbSpec,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<YcsbResult, YcsbError> {
    if spec.threads == 0 {
        return Err(YcsbError::NoThreads);
    }
    let dev = engine.device().clone();
    let capacity = dev.geometry().capacity;
    let keys = (0..spec.threads)
        .map(|t| KeyGen::new(spec.records, spec.theta, spec.key_order, spec.seed, t))
        .collect::<Result<Vec<_>, _>>()?;
    let start = Snapshot::take(&engine, dev.as_ref(), 0);
    let shared = Shared {
        engine: &engine,
        spec,
        dev: dev.as_ref(),
        start: &start,
        stop: AtomicBool::new(false),
        ops: AtomicU64::new(0),
        failure: Mutex::new(None),
        hists: Mutex::new((new_hist(), new_hist())),
        ack_log: open_ack_log(spec)?,
        updates: AtomicU64::new(0),
    };
    let (ticks, interrupted) = std::thread::scope(|scope| {
        for (t, k) in keys.into_iter().enumerate() {
            let sh = &shared;
            let spawned = std::thread::Builder::new()
                .name(format!("ycsb-{t}"))
                .spawn_scoped(scope, move || worker(sh, t, k));
            if let Err(source) = spawned {
                sh.fail(YcsbError::Spawn { index: t, source });
                break;
            }
        }
        monitor(&shared, on_tick)
    });
    if let Some(e) = shared.failure.into_inner() {
        return Err(e);
    }
    let end = Snapshot::take(&engine, dev.as_ref(), 0);
    let (read, update) = shared.hists.into_inner();
    let done = read.len() + update.len();
    assert!(
        done <= shared.ops.load(Relaxed),
        "{done} operations done but fewer claimed"
    );
    if let Stop::Ops(limit) = spec.stop {
        assert!(done <= limit, "{done} operations done, limit {limit}");
    }
    assert!(
        spec.mix != Mix::C || update.is_empty(),
        "YCSB-C issued updates"
    );
    let mut r = YcsbResult::between(spec, capacity, (&start, &end), (&read, &update), ticks);
    r.interrupted = interrupted;
    r.placement = engine.class_report();
    Ok(r)
}

/// One tick per interval until the stop condition holds; returns the ticks and whether Ctrl-C
/// ended the run.
fn monitor(sh: &Shared<'_>, on_tick: &mut dyn FnMut(&Tick)) -> (Vec<Tick>, bool) {
    let (dev, start) = (sh.dev, sh.start);
    let capacity = dev.geometry().capacity;
    let interval = Duration::from_secs_f64(sh.spec.interval_secs.max(0.01));
    let mut ticks = Vec::new();
    let mut prev = Snapshot::take(sh.engine, dev, 0);
    let mut interrupted = false;
    loop {
        let mut slept = Duration::ZERO;
        let mut done = false;
        while slept < interval && !done {
            let step = Duration::from_millis(10).min(interval - slept);
            std::thread::sleep(step);
            slept += step;
            interrupted = crate::interrupt::requested();
            done = interrupted || sh.stop.load(Relaxed) || stop_reached(sh);
        }
        let now = Snapshot::take(sh.engine, dev, sh.ops.load(Relaxed));
        let tick = Tick::between(&prev, &now, start, capacity);
        on_tick(&tick);
        ticks.push(tick);
        prev = now;
        if done {
            sh.stop.store(true, Relaxed);
            return (ticks, interrupted);
        }
    }
}

/// Whether the stop condition holds. Checked by the monitor every 10 ms and (device writes,
/// seconds) by every worker before it claims a batch, so a run ends within a batch per worker
/// of its target, not wherever the wall clock's 10 ms fall (with one writer and no background
/// threads, a `--device-writes` run is then a function of its seed).
fn stop_reached(sh: &Shared<'_>) -> bool {
    let (dev, start) = (sh.dev, sh.start);
    match sh.spec.stop {
        Stop::Ops(limit) => sh.ops.load(Relaxed) >= limit,
        Stop::Seconds(s) => start.at.elapsed().as_secs_f64() >= s,
        Stop::DeviceWrites(k) => {
            let written = dev
                .counters()
                .host_bytes_written
                .saturating_sub(start.dev.host_bytes_written);
            written as f64 >= k * dev.geometry().capacity as f64
        }
        Stop::StoreWrites(k) => {
            let space = match &sh.spec.store {
                WritePath::OutOfPlace(o) => o.space_limit_bytes,
                WritePath::InPlace => None,
            }
            .unwrap_or(dev.geometry().capacity);
            let (now, then) = (sh.engine.stats(), &start.stats);
            let store = |s: &nowa_engine::Stats| {
                s.user_store_bytes + s.gc_store_bytes + s.compensation_store_bytes
            };
            store(&now).saturating_sub(store(then)) as f64 >= k * space as f64
        }
    }
}

/// One worker: claims operations in batches until the limit or a stop.
fn worker(sh: &Shared<'_>, t: usize, mut keys: KeyGen) {
    let spec = sh.spec;
    let mut rng = worker_seed(spec.seed, t);
    let (mut read_h, mut upd_h) = (new_hist(), new_hist());
    let mut value = vec![0u8; spec.value_size];
    let mut ver = 0u64;
    // Acknowledged updates not yet in the ack log (with `durable_every`: not yet durable).
    let mut pending = Vec::new();
    let limit = match spec.stop {
        Stop::Ops(n) => n,
        _ => u64::MAX,
    };
    'outer: while !sh.stop.load(Relaxed) {
        // Cheap targets only: the store-writes target reads `Engine::stats`, which walks the
        // pool's map (the monitor checks it every 10 ms).
        if matches!(spec.stop, Stop::DeviceWrites(_) | Stop::Seconds(_)) && stop_reached(sh) {
            sh.stop.store(true, Relaxed);
            break;
        }
        let base = sh.ops.fetch_add(BATCH, Relaxed);
        if base >= limit {
            break;
        }
        for _ in 0..(limit - base).min(BATCH) {
            let id = keys.next();
            rng = rng
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let is_read = (rng >> 33) % 100 < spec.mix.read_pct();
            let t0 = Instant::now();
            let res = if is_read {
                sh.engine.get(&key_of(id)).map(|_| ()).map_err(Into::into)
            } else {
                ver += 1;
                update(sh, (id, ver), &mut value, &mut rng, &mut pending)
            };
            let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
            if let Err(e) = res {
                sh.fail(e);
                break 'outer;
            }
            let h = if is_read { &mut read_h } else { &mut upd_h };
            h.saturating_record(ns.max(1));
        }
    }
    let mut h = sh.hists.lock();
    // Same bounds on both sides: merging cannot fail.
    h.0.add(&read_h).expect("histograms share their bounds");
    h.1.add(&upd_h).expect("histograms share their bounds");
}

/// One update (read-modify-write for mix F) of `id` to version `ver`, then its line in the
/// ack log.
fn update(
    sh: &Shared<'_>,
    (id, ver): (u64, u64),
    value: &mut [u8],
    rng: &mut u64,
    pending: &mut Vec<(u64, u64)>,
) -> Result<(), YcsbError> {
    if sh.spec.mix == Mix::F {
        sh.engine.get(&key_of(id))?;
    }
    make_value(value, sh.spec.value_kind, id, ver, rng);
    let d = next_durability(sh);
    sh.engine.put_with(&key_of(id), value, d)?;
    record_ack(sh, (id, ver), d == Durability::Sync, pending)
}

/// The durability of the next update: with `durable_every` N, every N-th update (over all
/// workers) is `Sync`; its group commit flushes the WAL up to it, so it is the durability
/// point of every update acknowledged before it.
fn next_durability(sh: &Shared<'_>) -> Durability {
    match sh.spec.durable_every {
        Some(n) if (sh.updates.fetch_add(1, Relaxed) + 1) % n.get() == 0 => Durability::Sync,
        _ => sh.spec.durability,
    }
}

/// Lists an acknowledged update in the ack log: at once, or with `durable_every` once
/// `durable` (this worker's durability point) covers it and the worker's earlier updates.
fn record_ack(
    sh: &Shared<'_>,
    (id, ver): (u64, u64),
    durable: bool,
    pending: &mut Vec<(u64, u64)>,
) -> Result<(), YcsbError> {
    use std::fmt::Write as _;
    use std::io::Write as _;
    let Some(log) = &sh.ack_log else {
        return Ok(());
    };
    pending.push((id, ver));
    if sh.spec.durable_every.is_some() && !durable {
        return Ok(());
    }
    let mut text = String::new();
    for (i, v) in pending.drain(..) {
        let _ = writeln!(text, "{i} {v}");
    }
    // The updates are acknowledged: record them before the next one. A failed record stops
    // the run (a crash test must not miss an acknowledged write).
    log.lock()
        .write_all(text.as_bytes())
        .map_err(|source| YcsbError::AckLog {
            path: sh.spec.ack_log.clone().unwrap_or_default(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::ycsb::{
        create_engine, load, Device, KeyOrder, Mix, Stop, ValueKind, WritePath, YcsbSpec,
    };
    use nowa_engine::{Config, Durability};
    use std::sync::Arc;

    fn spec(mix: Mix) -> YcsbSpec {
        YcsbSpec {
            records: 2000,
            value_size: 120,
            value_kind: ValueKind::Pattern,
            mix,
            theta: 0.8,
            key_order: KeyOrder::Scrambled,
            threads: 1,
            stop: Stop::Ops(3000),
            durability: Durability::Async,
            durable_every: None,
            seed: 7,
            interval_secs: 1.0,
            engine: Config {
                pool_bytes: 4 << 20,
                ..Config::default()
            },
            store: WritePath::InPlace,
            separate_wal: true,
            ack_log: None,
            pacing: None,
        }
    }

    /// (reads, updates) of a 3,000-operation run of `mix`.
    fn ops_of(mix: Mix) -> (u64, u64) {
        let s = spec(mix);
        let dev: Device = Arc::new(nowa_device::MemDevice::new(64 << 20));
        let engine = Arc::new(create_engine(dev, &s).expect("engine"));
        assert_eq!(load(&engine, &s, &|_| {}).expect("load"), s.records);
        let r = run(engine, &s, &mut |_| {}).expect("run");
        (r.read.count, r.update.count)
    }

    #[test]
    fn mix_w_only_updates_while_a_also_reads() {
        assert_eq!(ops_of(Mix::W), (0, 3000));
        let (reads, updates) = ops_of(Mix::A);
        assert_eq!(reads + updates, 3000);
        assert!(
            reads > 1000 && updates > 1000,
            "A: {reads} reads, {updates} updates"
        );
    }

    /// Operations of a one-writer run that ends after `k` device capacities of writes.
    fn ops_until_device_writes(k: f64) -> u64 {
        let mut s = spec(Mix::W);
        s.records = 20_000;
        s.stop = Stop::DeviceWrites(k);
        s.engine.pool_bytes = 256 << 10;
        s.engine.page_cleaner = false;
        let dev: Device = Arc::new(nowa_device::MemDevice::new(16 << 20));
        let engine = Arc::new(create_engine(dev, &s).expect("engine"));
        assert_eq!(load(&engine, &s, &|_| {}).expect("load"), s.records);
        let r = run(engine, &s, &mut |_| {}).expect("run");
        r.update.count
    }

    /// The workers check the stop target before each batch: with one writer and no
    /// background thread a `--device-writes` run ends at the same operation every time
    /// (before, a monitor polling every 10 ms of the wall clock decided).
    #[test]
    fn a_device_writes_run_ends_at_the_same_operation_every_time() {
        let first = ops_until_device_writes(2.0);
        assert!(first > 0);
        for _ in 0..4 {
            assert_eq!(ops_until_device_writes(2.0), first);
        }
    }

    /// Blind changes still pending when a run stops are reported with the write-back they
    /// still owe (the bytes per update would flatter otherwise), and printed.
    #[test]
    fn blind_changes_pending_at_the_end_are_reported_and_printed() {
        let mut s = spec(Mix::W);
        s.records = 20_000;
        s.engine.pool_bytes = 256 << 10;
        s.engine.blind_update_bytes = 1 << 20;
        let dev: Device = Arc::new(nowa_device::MemDevice::new(64 << 20));
        let engine = Arc::new(create_engine(dev, &s).expect("engine"));
        assert_eq!(load(&engine, &s, &|_| {}).expect("load"), s.records);
        let r = run(engine, &s, &mut |_| {}).expect("run");
        assert!(r.stats.blind_updates > 0, "{:?}", r.stats);
        let p = r.pending_blind_changes.expect("blind updates on");
        assert!(p.leaves > 0 && p.changes >= p.leaves, "{p:?}");
        assert!(p.est_write_back_bytes >= p.leaves * 64, "{p:?}");
        let text = crate::ycsb::report::summary(&r);
        assert!(text.contains("blind changes pending"), "{text}");
        let mut off = spec(Mix::W);
        off.engine.pool_bytes = 256 << 10;
        let dev: Device = Arc::new(nowa_device::MemDevice::new(64 << 20));
        let engine = Arc::new(create_engine(dev, &off).expect("engine"));
        load(&engine, &off, &|_| {}).expect("load");
        let r = run(engine, &off, &mut |_| {}).expect("run");
        assert_eq!(r.pending_blind_changes, None);
    }
}
