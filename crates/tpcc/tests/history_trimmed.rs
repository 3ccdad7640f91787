//! `history_trimmed` tells a steady database (HISTORY trimmed by batch deletes) from a
//! standard one, so a later check (`nowa tpcc --check-only`) skips exactly clauses 3.3.2.8-9
//! for steady databases and checks standard ones in full.

use nowa_tpcc::{
    check_consistency, history_trimmed, load, run, LoadConfig, MemStore, NoObserver, RunConfig,
    Stop, Tables,
};

const SEED: u64 = 4242;

/// Loads one warehouse into a fresh store and runs `n` draws (steady when `steady`).
fn after_run(steady: bool, n: u64) -> (MemStore, Tables) {
    let store = MemStore::new();
    let tables = Tables::open(&store).expect("open the tables");
    let lc = LoadConfig {
        warehouses: 1,
        threads: 1,
        seed: SEED,
    };
    load(&store, &tables, &lc, &|_| {}).expect("load");
    let mut rc = RunConfig::new(1, 1);
    rc.seed = SEED;
    rc.steady_window = if steady { 2100 } else { 0 };
    rc.stop = Stop::Transactions(n);
    run(&store, &tables, &rc, &NoObserver).expect("run");
    (store, tables)
}

#[test]
fn a_standard_database_keeps_its_history_and_is_checked_in_full() {
    println!("seed {SEED}");
    let (store, tables) = after_run(false, 2000);
    assert!(!history_trimmed(&store, &tables).unwrap());
    let c = check_consistency(&store, &tables, 1, true).unwrap();
    assert!(c.is_consistent(), "{:?}", c.violations);
}

#[test]
fn a_steady_database_says_its_history_is_trimmed() {
    println!("seed {SEED}");
    let (store, tables) = after_run(true, 2000);
    assert!(history_trimmed(&store, &tables).unwrap());
    // The history clauses would fail on it: that is why they are skipped.
    let full = check_consistency(&store, &tables, 1, true).unwrap();
    assert!(!full.is_consistent(), "trimming must break 3.3.2.8-9");
    let c = check_consistency(&store, &tables, 1, false).unwrap();
    assert!(c.is_consistent(), "{:?}", c.violations);
}

#[test]
fn a_fresh_load_is_not_trimmed() {
    let (store, tables) = after_run(false, 1);
    assert!(!history_trimmed(&store, &tables).unwrap());
}
