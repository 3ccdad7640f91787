//! The adaptive redo bound (`Config::max_redo_bytes`) under InnoDB's page cleaner
//! (`Config::flushing`): the flush-list batches select pages by rate against the WAL limit,
//! so without the bound's own selection the flush list's age (and the redo range a crash
//! leaves) grew far past the bound (docs/checkpointing.md section 5 measured 12.96 MiB
//! replayed under a 2 MiB bound). Here the live log stays within the bound plus one pass of
//! log, deferral still happens, and after a power loss the redo range obeys the same bound
//! with every synced write present. Deterministic: one thread, no cleaner thread, a flush
//! clock the test advances, seeded keys.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::{value_for, CrashDevice};
use nowa_engine::{Config, Durability, Engine, Flushing};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const BOUND: u64 = 256 << 10;
const WAL_LIMIT: u64 = 8 << 20;
const OPS: u64 = 30_000;
const SEED: u64 = 17;

fn cfg(bound: Option<u64>) -> Config {
    Config {
        pool_bytes: 512 * 4096,
        wal_limit_bytes: Some(WAL_LIMIT),
        durability: Durability::Async,
        dw_pages: 16,
        max_redo_bytes: bound,
        // InnoDB's defaults: a slow cleaner against an 8 MiB log lets the list age reach
        // megabytes, as the TPC-C runs did.
        flushing: Some(Flushing::default()),
        ..Config::default()
    }
}

/// What a run observed.
struct Run {
    max_used: u64,
    max_pass_log: u64,
    deferrals: u64,
    batches: u64,
    model: BTreeMap<u64, Vec<u8>>,
}

/// 90% of the updates to 300 hot keys, 10% to 30,000 others; a flush-clock second every
/// 100 updates (~15 KiB of log: many seconds fit in the bound, so the ticks alone run).
/// Stops after `ops` updates.
fn run(e: &Engine, ops: u64) -> Run {
    let t = Arc::new(AtomicU64::new(0));
    let c = t.clone();
    #[expect(clippy::cast_precision_loss, reason = "small tick counts")]
    e.set_flush_clock(Some(Arc::new(move || c.load(Ordering::Relaxed) as f64)));
    let mut rng = SmallRng::seed_from_u64(SEED);
    let mut r = Run {
        max_used: 0,
        max_pass_log: 0,
        deferrals: 0,
        batches: 0,
        model: BTreeMap::new(),
    };
    for n in 0..ops {
        if n % 100 == 0 {
            t.fetch_add(1, Ordering::Relaxed);
        }
        let k = if rng.random_range(0..10) < 9 {
            rng.random_range(0..300u64)
        } else {
            rng.random_range(300..30_300u64)
        };
        let v = value_for(k, n, 120);
        e.put(&k.to_be_bytes(), &v).unwrap();
        r.model.insert(k, v);
        r.max_used = r.max_used.max(e.wal_used());
        r.max_pass_log = r.max_pass_log.max(e.checkpoint_pass_log_bytes());
    }
    let s = e.stats();
    r.deferrals = s.checkpoint_deferrals;
    r.batches = s.flush_batches;
    r
}

#[test]
fn the_cleaner_keeps_the_live_log_within_the_bound() {
    eprintln!("seed {SEED}");
    let e = Engine::create(Arc::new(CrashDevice::new(32 << 20, 1)), cfg(None)).unwrap();
    let free = run(&e, OPS);
    eprintln!(
        "no bound: max live log {}, {} batches",
        free.max_used, free.batches
    );
    assert!(
        free.max_used > 2 * BOUND,
        "the cleaner alone lets the log age past the bound: {}",
        free.max_used
    );
    let e = Engine::create(Arc::new(CrashDevice::new(32 << 20, 2)), cfg(Some(BOUND))).unwrap();
    let a = run(&e, OPS);
    eprintln!(
        "bound {BOUND}: max live log {} (pass {}), {} batches, {} deferrals",
        a.max_used, a.max_pass_log, a.batches, a.deferrals
    );
    assert!(a.batches > 0, "the cleaner ran its batches");
    assert!(a.deferrals > 1000, "the bound leaves room to defer");
    assert!(
        a.max_pass_log <= BOUND / 2,
        "bound batches B/8 apart keep a pass short: {}",
        a.max_pass_log
    );
    assert!(
        a.max_used <= BOUND + a.max_pass_log,
        "live log {} past the bound {BOUND} + one pass {}",
        a.max_used,
        a.max_pass_log
    );
}

/// Power loss after `ops` updates, then recovery: the redo range and the pass log.
fn crash_at(ops: u64) -> (u64, u64) {
    let dev = Arc::new(CrashDevice::new(32 << 20, 3));
    let e = Engine::create(dev.clone(), cfg(Some(BOUND))).unwrap();
    let r = run(&e, ops);
    e.sync().unwrap();
    dev.power_loss();
    drop(e);
    dev.restart();
    let e = Engine::open(dev, cfg(Some(BOUND))).unwrap();
    let rep = e.recovery_report().unwrap();
    let range = rep.end_lsn - rep.redo_lsn;
    eprintln!(
        "after {ops} updates: redo range {range} bytes, {} records, pass log {}",
        rep.records_replayed, r.max_pass_log
    );
    assert!(!rep.clean_shutdown && rep.records_replayed > 0, "{rep:?}");
    for (k, v) in &r.model {
        assert_eq!(
            e.get(&k.to_be_bytes()).unwrap().as_ref(),
            Some(v),
            "key {k}: acknowledged (synced) write lost"
        );
    }
    (range, r.max_pass_log)
}

#[test]
fn after_a_power_loss_the_cleaners_redo_range_obeys_the_bound() {
    eprintln!("seed {SEED}");
    // Ten points through the run: where in the flush cycle the power goes decides the range.
    for i in 1..=10 {
        let (range, pass) = crash_at(OPS / 10 * i - 37 * i);
        assert!(
            range <= BOUND + pass,
            "redo range {range} past the bound {BOUND} + one pass {pass}"
        );
    }
}
