//! The driver: determinism, the mix, rollbacks, stop conditions, samples and caller hooks.

use nowa_tpcc::{
    load, run, write_samples_csv, LoadConfig, MemStore, Observer, Progress, Report, RunConfig,
    Sample, Stop, Table, Tables, TpccError, TxnKind,
};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

const SEED: u64 = 0xd21e;

fn loaded(warehouses: u32, threads: usize, seed: u64) -> (MemStore, Tables) {
    let store = MemStore::new();
    let tables = Tables::open(&store).expect("open tables");
    let cfg = LoadConfig {
        warehouses,
        threads,
        seed,
    };
    load(&store, &tables, &cfg, &|_| {}).expect("load");
    (store, tables)
}

fn run_n(
    store: &MemStore,
    tables: &Tables,
    warehouses: u32,
    n: u64,
    steady: u32,
    seed: u64,
) -> Report {
    let mut cfg = RunConfig::new(warehouses, 1);
    cfg.stop = Stop::Transactions(n);
    cfg.steady_window = steady;
    cfg.seed = seed;
    run(store, tables, &cfg, &nowa_tpcc::NoObserver).expect("run")
}

fn dump_all(store: &MemStore) -> Vec<std::collections::BTreeMap<Vec<u8>, Vec<u8>>> {
    Table::ALL
        .iter()
        .map(|t| store.dump(t.name()).expect("every table exists"))
        .collect()
}

#[test]
fn load_is_deterministic_per_warehouse_whatever_the_threads() {
    println!("seed {SEED}");
    let (a, _) = loaded(2, 1, SEED);
    let (b, _) = loaded(2, 3, SEED);
    assert!(
        dump_all(&a) == dump_all(&b),
        "same seed, different loader threads"
    );
    let (c, _) = loaded(1, 1, SEED + 1);
    assert!(a.dump("stock").unwrap() != c.dump("stock").unwrap());
}

#[test]
fn one_thread_with_a_seed_replays_exactly() {
    println!("seed {SEED}");
    let (a, ta) = loaded(1, 2, SEED);
    let (b, tb) = loaded(1, 2, SEED);
    run_n(&a, &ta, 1, 3000, 2100, SEED);
    run_n(&b, &tb, 1, 3000, 2100, SEED);
    assert!(dump_all(&a) == dump_all(&b), "same seed, same database");
    run_n(&a, &ta, 1, 100, 2100, SEED);
    run_n(&b, &tb, 1, 100, 2100, SEED + 1);
    assert!(dump_all(&a) != dump_all(&b), "another seed, another stream");
}

fn share(r: &Report, kind: TxnKind) -> f64 {
    let k = r.kind(kind);
    (k.committed + k.rolled_back) as f64 / (r.transactions + r.rollbacks) as f64
}

#[test]
fn standard_mix_and_rollbacks() {
    println!("seed {SEED}");
    let (store, tables) = loaded(2, 2, SEED);
    let r = run_n(&store, &tables, 2, 20_000, 0, SEED);
    assert_eq!(r.transactions + r.rollbacks, 20_000);
    for (kind, want) in [
        (TxnKind::NewOrder, 0.45),
        (TxnKind::Payment, 0.43),
        (TxnKind::OrderStatus, 0.04),
        (TxnKind::Delivery, 0.04),
        (TxnKind::StockLevel, 0.04),
        (TxnKind::BatchDelete, 0.0),
    ] {
        let got = share(&r, kind);
        assert!((got - want).abs() < 0.012, "{kind:?}: {got} vs {want}");
    }
    let no = r.kind(TxnKind::NewOrder);
    let rate = no.rolled_back as f64 / (no.committed + no.rolled_back) as f64;
    assert!(
        (0.005..0.015).contains(&rate),
        "New-Order rollback rate {rate}"
    );
    assert_eq!(r.noops, 0);
    assert_eq!(r.conflicts, 0);
    assert_eq!(r.skipped_deliveries, 0);
    assert!((r.tpmc - r.new_orders as f64 * 60.0 / r.seconds).abs() < 1e-6);
    assert!(no.latency.p50_us > 0.0 && no.latency.p999_us >= no.latency.p99_us);
}

#[test]
fn steady_mix_has_batch_deletes_and_noops() {
    println!("seed {SEED}");
    let (store, tables) = loaded(1, 2, SEED);
    let r = run_n(&store, &tables, 1, 20_000, 2100, SEED);
    // Draws: 40% New-Order, 1% batch delete, 4% no-op (not a transaction). A rolled-back
    // New-Order is replaced by another in the same draw: every counted draw commits once.
    assert_eq!(r.transactions, 20_000);
    let draws = (r.transactions + r.noops) as f64;
    let no = r.kind(TxnKind::NewOrder);
    assert!((no.committed as f64 / draws - 0.40).abs() < 0.012);
    let rate = no.rolled_back as f64 / (no.committed + no.rolled_back) as f64;
    assert!(
        (0.005..0.015).contains(&rate),
        "New-Order rollback rate {rate}"
    );
    let bd = r.kind(TxnKind::BatchDelete).committed as f64 / draws;
    assert!((bd - 0.01).abs() < 0.003, "batch deletes {bd}");
    assert!((r.noops as f64 / draws - 0.04).abs() < 0.006);
    // Batch deletes keep 2,100 delivered orders per district, plus the Deliveries since the last
    // batch delete (every Delivery moves all ten districts at once).
    let rows = nowa_tpcc::suites::row_counts(&store, &tables).expect("count rows");
    let delivered = rows[&Table::Order] - rows[&Table::NewOrder];
    assert!(
        (21_000..21_600).contains(&delivered),
        "{delivered} delivered orders kept"
    );
    assert!(r.deleted_orders > 5000, "{}", r.deleted_orders);
    assert_eq!(rows[&Table::Order], rows[&Table::OrderWdc]);
}

struct Hooks {
    stop_after: u64,
    samples: AtomicU64,
}

impl Observer for Hooks {
    fn on_sample(&self, sample: &mut Sample) {
        let n = self.samples.fetch_add(1, Relaxed);
        sample.extra.insert("sample_number", n as f64);
    }
    fn should_stop(&self, p: &Progress) -> bool {
        // Also wait for two periodic samples, so the test does not depend on how fast the
        // machine runs 3,000 transactions.
        p.transactions >= self.stop_after && self.samples.load(Relaxed) >= 2
    }
    fn on_finish(&self, report: &mut Report) {
        report.extra.insert("db_waf", 1.25);
    }
}

#[test]
fn observer_stops_samples_and_finishes() {
    println!("seed {SEED}");
    let (store, tables) = loaded(2, 2, SEED);
    let mut cfg = RunConfig::new(2, 2);
    cfg.seed = SEED;
    cfg.stop = Stop::Observer;
    cfg.sample_interval = Duration::from_millis(20);
    let hooks = Hooks {
        stop_after: 3000,
        samples: AtomicU64::new(0),
    };
    let r = run(&store, &tables, &cfg, &hooks).unwrap();
    assert!(
        r.transactions >= 3000,
        "stopped by the predicate, not before"
    );
    assert_eq!(r.extra["db_waf"], 1.25);
    let n = hooks.samples.load(Relaxed);
    assert_eq!(r.samples.len() as u64, n);
    assert!(n >= 2, "{n} samples");
    let last = r.samples.last().unwrap();
    assert_eq!(last.total_transactions, r.transactions);
    let summed: u64 = r.samples.iter().map(|s| s.transactions).sum();
    assert_eq!(summed, r.transactions);
    let mut csv = Vec::new();
    write_samples_csv(&r.samples, &mut csv).unwrap();
    assert_eq!(
        String::from_utf8(csv).unwrap().lines().count() as u64,
        n + 1
    );
    let json = serde_json::to_value(&r).unwrap();
    assert!(json["kinds"][0]["latency"]["p99_us"].is_number());
}

#[test]
fn stop_by_seconds() {
    println!("seed {SEED}");
    let (store, tables) = loaded(1, 1, SEED);
    let mut cfg = RunConfig::new(1, 2);
    cfg.seed = SEED;
    cfg.stop = Stop::Seconds(0.3);
    let r = run(&store, &tables, &cfg, &nowa_tpcc::NoObserver).unwrap();
    // The upper bound only catches a run that ignores the stop (a loaded machine is slow).
    assert!(r.seconds >= 0.3 && r.seconds < 60.0, "{}", r.seconds);
    assert!(r.transactions > 0);
}

#[test]
fn bad_configurations_are_refused() {
    let (store, tables) = loaded(1, 1, SEED);
    let obs = nowa_tpcc::NoObserver;
    let mut cfg = RunConfig::new(0, 1);
    assert!(matches!(
        run(&store, &tables, &cfg, &obs),
        Err(TpccError::Config {
            field: "warehouses",
            ..
        })
    ));
    cfg = RunConfig::new(1, 0);
    assert!(matches!(
        run(&store, &tables, &cfg, &obs),
        Err(TpccError::Config {
            field: "threads",
            ..
        })
    ));
    cfg = RunConfig::new(1, 1);
    cfg.steady_window = 100;
    assert!(matches!(
        run(&store, &tables, &cfg, &obs),
        Err(TpccError::Config {
            field: "steady_window",
            ..
        })
    ));
    let lc = LoadConfig {
        warehouses: 0,
        threads: 1,
        seed: 1,
    };
    assert!(matches!(
        load(&store, &tables, &lc, &|_| {}),
        Err(TpccError::Config { .. })
    ));
}

#[test]
fn more_threads_than_warehouses_share_homes() {
    println!("seed {SEED}");
    let (store, tables) = loaded(1, 1, SEED);
    let mut cfg = RunConfig::new(1, 3);
    cfg.seed = SEED;
    cfg.steady_window = 2100;
    cfg.stop = Stop::Transactions(3000);
    let r = run(&store, &tables, &cfg, &nowa_tpcc::NoObserver).unwrap();
    assert_eq!(
        r.transactions, 3000,
        "steady draws commit exactly once each"
    );
    let c = nowa_tpcc::check_consistency(&store, &tables, 1, false).unwrap();
    assert!(c.is_consistent(), "{:?}", c.violations);
}
