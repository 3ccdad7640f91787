//! Adaptive deferral under a redo bound (`Config::max_redo_bytes`, issue 13 beyond the
//! paper): on a scripted hot/cold update workload the live log (the redo range a crash would
//! leave) stays within the bound plus one pass of log, while a fixed count at the same pass
//! frequency lets it grow to the WAL limit; after a power loss the measured redo range obeys
//! the same bound and every acknowledged write is there. Deterministic: one thread, no
//! cleaner, seeded keys.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::{value_for, CrashDevice};
use nowa_engine::{Config, Durability, Engine};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;

const BOUND: u64 = 256 << 10;
const OPS: u64 = 30_000;
const SEED: u64 = 11;

fn cfg(mcc: u32, bound: Option<u64>, wal_limit: u64) -> Config {
    Config {
        pool_bytes: 512 * 4096,
        wal_limit_bytes: Some(wal_limit),
        durability: Durability::Async,
        dw_pages: 16,
        max_checkpoint_count: mcc,
        max_redo_bytes: bound,
        ..Config::default()
    }
}

/// What a run observed.
struct Run {
    max_used: u64,
    max_pass_log: u64,
    deferrals: u64,
    model: BTreeMap<u64, Vec<u8>>,
}

/// 90% of the updates go to 300 hot keys, 10% to 30,000 others; returns the largest live
/// log and pass log seen after any update.
fn run(e: &Engine) -> Run {
    let mut rng = SmallRng::seed_from_u64(SEED);
    let mut r = Run {
        max_used: 0,
        max_pass_log: 0,
        deferrals: 0,
        model: BTreeMap::new(),
    };
    for n in 0..OPS {
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
    r.deferrals = e.stats().checkpoint_deferrals;
    r
}

#[test]
fn the_redo_bound_holds_where_a_fixed_count_exceeds_it() {
    eprintln!("seed {SEED}");
    // Deferral with no practical count limit: only the WAL limit (2 x the bound) stops it.
    let dev = Arc::new(CrashDevice::new(32 << 20, 1));
    let e = Engine::create(dev, cfg(0, Some(BOUND), 4 << 20)).unwrap();
    let a = run(&e);
    eprintln!(
        "adaptive: max live log {} (bound {BOUND} + pass {}), {} deferrals",
        a.max_used, a.max_pass_log, a.deferrals
    );
    assert!(
        a.deferrals > 1000,
        "the bound leaves room to defer: {}",
        a.deferrals
    );
    assert!(
        a.max_used <= BOUND + a.max_pass_log,
        "live log {} past the bound {BOUND} + one pass {}",
        a.max_used,
        a.max_pass_log
    );
    let dev = Arc::new(CrashDevice::new(32 << 20, 2));
    let e = Engine::create(dev, cfg(1000, None, 2 * BOUND)).unwrap();
    let f = run(&e);
    eprintln!(
        "mcc 1000: max live log {} (pass {}), {} deferrals",
        f.max_used, f.max_pass_log, f.deferrals
    );
    assert!(
        f.max_used > BOUND + a.max_pass_log,
        "a fixed count keeps more log than the bound allows: {}",
        f.max_used
    );
}

#[test]
fn after_a_power_loss_the_redo_range_obeys_the_bound_and_nothing_is_lost() {
    eprintln!("seed {SEED}");
    let c = cfg(0, Some(BOUND), 4 << 20);
    let dev = Arc::new(CrashDevice::new(32 << 20, 3));
    let e = Engine::create(dev.clone(), c.clone()).unwrap();
    let r = run(&e);
    e.sync().unwrap();
    dev.power_loss();
    drop(e);
    dev.restart();
    let e = Engine::open(dev, c).unwrap();
    let rep = e.recovery_report().unwrap();
    let range = rep.end_lsn - rep.redo_lsn;
    eprintln!(
        "redo range {range} bytes, {} records, pass log {}",
        rep.records_replayed, r.max_pass_log
    );
    assert!(!rep.clean_shutdown && rep.records_replayed > 0, "{rep:?}");
    assert!(
        range <= BOUND + r.max_pass_log,
        "redo range {range} past the bound {BOUND} + one pass {}",
        r.max_pass_log
    );
    for (k, v) in &r.model {
        assert_eq!(
            e.get(&k.to_be_bytes()).unwrap().as_ref(),
            Some(v),
            "key {k}: acknowledged (synced) write lost"
        );
    }
}
