//! The reusable suites (crate::suites) run on the reference model, MemStore. The engine runs the
//! same functions on the engine.

use nowa_tpcc::suites::{
    bank_transfer_invariant, steady_flatness, tpcc_consistency_after_run, transaction_model,
    transaction_model_with_reopen, BankConfig, FlatnessConfig, ModelConfig, SuiteError,
    TpccSuiteConfig,
};
use nowa_tpcc::{MemStore, Table};

const SEED: u64 = 0x7e57;

#[test]
fn model_suite_on_memstore() {
    println!("seed {SEED}");
    let cfg = ModelConfig {
        seed: SEED,
        ..ModelConfig::default()
    };
    let r = transaction_model(&MemStore::new(), &cfg).unwrap();
    println!("{r:?}");
    assert!(r.committed > 1000 && r.aborted > 200 && r.verifications >= 20);
    assert_eq!(r.conflicts, 0);
}

#[test]
fn model_suite_counts_injected_conflicts_as_lost() {
    println!("seed {SEED}");
    let cfg = ModelConfig {
        seed: SEED,
        ..ModelConfig::default()
    };
    let r = transaction_model(&MemStore::with_injected_conflicts(40, SEED), &cfg).unwrap();
    println!("{r:?}");
    assert!(r.conflicts > 50, "{r:?}");
}

#[test]
fn model_suite_with_reopen_keeps_the_store() {
    println!("seed {SEED}");
    let cfg = ModelConfig {
        seed: SEED,
        transactions: 500,
        ..ModelConfig::default()
    };
    let (_, r) = transaction_model_with_reopen(MemStore::new(), &cfg, 50, Ok).unwrap();
    assert_eq!(r.reopens, 10);
}

#[test]
fn bank_invariant_on_memstore() {
    println!("seed {SEED}");
    let cfg = BankConfig {
        seed: SEED,
        ..BankConfig::default()
    };
    let r = bank_transfer_invariant(&MemStore::new(), &cfg).unwrap();
    println!("{r:?}");
    assert_eq!(r.transfers, 4 * 2000);
    assert!(r.audits >= 4 * 400);
}

#[test]
fn bank_invariant_with_injected_conflicts() {
    println!("seed {SEED}");
    let cfg = BankConfig {
        seed: SEED,
        transfers_per_thread: 500,
        ..BankConfig::default()
    };
    let r = bank_transfer_invariant(&MemStore::with_injected_conflicts(25, SEED), &cfg).unwrap();
    println!("{r:?}");
    assert!(r.conflicts > 100, "{r:?}");
    assert_eq!(r.transfers, 4 * 500);
}

#[test]
fn tpcc_consistent_after_standard_run() {
    println!("seed {SEED}");
    let cfg = TpccSuiteConfig {
        warehouses: 2,
        threads: 2,
        transactions: 6000,
        steady_window: 0,
        seed: SEED,
    };
    let (report, c) = tpcc_consistency_after_run(&MemStore::new(), &cfg).unwrap();
    assert_eq!(report.transactions + report.rollbacks, 6000);
    assert!(c.history_checked);
    assert_eq!(c.rows[&Table::Warehouse], 2);
    // New-Orders add orders: 60,000 loaded plus the committed New-Orders.
    assert_eq!(c.rows[&Table::Order], 60_000 + report.new_orders);
}

#[test]
fn tpcc_consistent_after_steady_run_with_conflicts() {
    println!("seed {SEED}");
    let cfg = TpccSuiteConfig {
        warehouses: 1,
        threads: 2,
        transactions: 6000,
        steady_window: 2100,
        seed: SEED,
    };
    let store = MemStore::with_injected_conflicts(500, SEED);
    let (report, c) = tpcc_consistency_after_run(&store, &cfg).unwrap();
    assert!(!c.history_checked);
    assert!(report.conflicts > 100, "{report:?}");
    assert!(report.deleted_orders > 0);
}

#[test]
fn steady_tpcc_stays_flat() {
    println!("seed {SEED}");
    let cfg = FlatnessConfig {
        warehouses: 1,
        threads: 1,
        n: 10_000,
        steady_window: 2100,
        seed: SEED,
    };
    let store = MemStore::new();
    let bytes = || {
        store
            .stats()
            .iter()
            .map(|t| t.key_bytes + t.value_bytes)
            .sum()
    };
    let flat = steady_flatness(&store, &cfg, &bytes).unwrap();
    println!("{flat:?}");
    for t in [
        Table::Order,
        Table::OrderLine,
        Table::OrderWdc,
        Table::History,
    ] {
        let (a, b) = (flat.rows_n[&t], flat.rows_4n[&t]);
        println!("{t:?}: {a} -> {b}");
    }
}

#[test]
fn standard_tpcc_is_not_flat() {
    println!("seed {SEED}");
    let cfg = FlatnessConfig {
        warehouses: 1,
        threads: 1,
        n: 10_000,
        steady_window: 0,
        seed: SEED,
    };
    let store = MemStore::new();
    match steady_flatness(&store, &cfg, &|| 0) {
        Err(SuiteError::NotFlat {
            metric: "rows",
            at_n,
            at_4n,
            ..
        }) => {
            assert!(at_4n > at_n + at_n / 20, "{at_n} -> {at_4n}");
        }
        other => panic!("standard TPC-C grows: expected NotFlat, got {other:?}"),
    }
}

/// The figure in docs/tpcc.md: `cargo test --release -p nowa-tpcc --test suites --
/// --ignored steady_flatness_long --nocapture`.
#[test]
#[ignore = "long: 400,000 transactions (~1 minute)"]
fn steady_flatness_long() {
    println!("seed {SEED}");
    for steady_window in [2100, 0] {
        let cfg = FlatnessConfig {
            warehouses: 2,
            threads: 2,
            n: 100_000,
            steady_window,
            seed: SEED,
        };
        let store = MemStore::new();
        let bytes = || {
            store
                .stats()
                .iter()
                .map(|t| t.key_bytes + t.value_bytes)
                .sum()
        };
        let flat = match steady_flatness(&store, &cfg, &bytes) {
            Ok(flat) => flat,
            Err(e) if steady_window == 0 => {
                println!("standard TPC-C: {e}");
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        println!("steady window {steady_window}: table, rows after N = 100,000, after 4N, change");
        for t in Table::ALL {
            let (a, b) = (flat.rows_n[&t], flat.rows_4n[&t]);
            let change = 100.0 * (b as f64 - a as f64) / a as f64;
            println!("  {:<13} {a:>9} {b:>9} {change:>+6.2}%", t.name());
        }
        let (a, b) = flat.size;
        let change = 100.0 * (b as f64 - a as f64) / a as f64;
        println!("  key+value bytes {a} -> {b} ({change:+.2}%)");
    }
}
