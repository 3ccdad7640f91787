//! TPC-C suites: consistency after a run, and steady mode's flat size.

use super::{store_err, tpcc_err, SuiteError};
use crate::check::{check_consistency, Consistency};
use crate::driver::{run, RunConfig, Stop};
use crate::load::{load, LoadConfig};
use crate::report::{NoObserver, Report};
use crate::schema::{Table, Tables};
use crate::store::{retry_on_conflict, scan_all, Transaction, TxnStore};
use std::collections::BTreeMap;

/// Parameters of [`tpcc_consistency_after_run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TpccSuiteConfig {
    /// Warehouses.
    pub warehouses: u32,
    /// Worker (and loader) threads.
    pub threads: usize,
    /// Transactions to run.
    pub transactions: u64,
    /// 0 = standard TPC-C, 2100 = steady.
    pub steady_window: u32,
    /// The seed (load and run).
    pub seed: u64,
}

/// Loads TPC-C into the empty `store`, runs `transactions` transactions, and checks clause
/// 3.3.2 (HISTORY sums too in standard mode).
///
/// # Errors
/// [`SuiteError::Inconsistent`] with every violation; load, run and store errors.
pub fn tpcc_consistency_after_run<S: TxnStore>(
    store: &S,
    cfg: &TpccSuiteConfig,
) -> Result<(Report, Consistency), SuiteError> {
    let seed = cfg.seed;
    let shape = (cfg.warehouses, cfg.threads, cfg.steady_window);
    let (tables, rc) = load_for_run(store, shape, seed, cfg.transactions)?;
    let report = run(store, &tables, &rc, &NoObserver).map_err(tpcc_err(seed))?;
    let c = checked(store, &tables, cfg.warehouses, cfg.steady_window, seed)?;
    Ok((report, c))
}

/// Loads TPC-C with `(warehouses, threads, steady_window)` and `seed`, and returns the tables
/// and a run configuration stopping after `transactions`.
fn load_for_run<S: TxnStore>(
    store: &S,
    (warehouses, threads, steady_window): (u32, usize, u32),
    seed: u64,
    transactions: u64,
) -> Result<(Tables, RunConfig), SuiteError> {
    let tables = Tables::open(store).map_err(store_err(seed))?;
    let lc = LoadConfig {
        warehouses,
        threads,
        seed,
    };
    load(store, &tables, &lc, &|_| {}).map_err(tpcc_err(seed))?;
    let mut rc = RunConfig::new(warehouses, threads);
    rc.steady_window = steady_window;
    rc.seed = seed;
    rc.stop = Stop::Transactions(transactions);
    Ok((tables, rc))
}

/// Clause 3.3.2 (HISTORY sums in standard mode only); violations are an error.
fn checked<S: TxnStore>(
    store: &S,
    tables: &Tables,
    warehouses: u32,
    steady_window: u32,
    seed: u64,
) -> Result<Consistency, SuiteError> {
    let c =
        check_consistency(store, tables, warehouses, steady_window == 0).map_err(tpcc_err(seed))?;
    if !c.is_consistent() {
        let violations = c.violations;
        return Err(SuiteError::Inconsistent { seed, violations });
    }
    Ok(c)
}

/// Rows of every TPC-C table (one read-only scan per table).
///
/// # Errors
/// Store errors.
pub fn row_counts<S: TxnStore>(
    store: &S,
    tables: &Tables,
) -> Result<BTreeMap<Table, u64>, crate::StoreError> {
    let mut out = BTreeMap::new();
    for t in Table::ALL {
        let n = retry_on_conflict(|| {
            let mut txn = store.begin()?;
            let n = scan_all(&mut txn, tables.id(t), &[], None, 4096, |_, _| true)?;
            txn.commit()?;
            Ok(n)
        })?;
        out.insert(t, n);
    }
    Ok(out)
}

/// Parameters of [`steady_flatness`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlatnessConfig {
    /// Warehouses.
    pub warehouses: u32,
    /// Worker threads (1 = deterministic).
    pub threads: usize,
    /// N: the first measurement after N transactions, the second after 4N.
    pub n: u64,
    /// ZLeanStore's window: 2100 (0 = standard TPC-C, which must fail the test).
    pub steady_window: u32,
    /// The seed.
    pub seed: u64,
}

/// Sizes after N and after 4N transactions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Flatness {
    /// Rows per table after N transactions.
    pub rows_n: BTreeMap<Table, u64>,
    /// Rows per table after 4N transactions.
    pub rows_4n: BTreeMap<Table, u64>,
    /// The caller's size (e.g. database bytes) after N and after 4N.
    pub size: (u64, u64),
}

/// The relative change from `a` to `b`.
fn change(a: u64, b: u64) -> f64 {
    #[expect(
        clippy::cast_precision_loss,
        reason = "row counts and sizes far below 2^52"
    )]
    let r = (b as f64 - a as f64).abs() / (a as f64).max(1.0);
    r
}

/// Loads TPC-C into the empty `store`, runs N then 3N more steady transactions, and requires the
/// total row count and `size()` (the caller's database size; return 0 to skip) after 4N to be
/// within 5% of those after N. Also checks clause 3.3.2 at the end.
///
/// # Errors
/// [`SuiteError::NotFlat`] naming the metric that moved; consistency, load, run and store errors.
pub fn steady_flatness<S: TxnStore>(
    store: &S,
    cfg: &FlatnessConfig,
    size: &dyn Fn() -> u64,
) -> Result<Flatness, SuiteError> {
    let seed = cfg.seed;
    let shape = (cfg.warehouses, cfg.threads, cfg.steady_window);
    let (tables, mut rc) = load_for_run(store, shape, seed, cfg.n)?;
    run(store, &tables, &rc, &NoObserver).map_err(tpcc_err(seed))?;
    let rows_n = row_counts(store, &tables).map_err(store_err(seed))?;
    let size_n = size();
    rc.seed = seed.wrapping_add(1); // a fresh input stream for the second part
    rc.stop = Stop::Transactions(3 * cfg.n);
    run(store, &tables, &rc, &NoObserver).map_err(tpcc_err(seed))?;
    let rows_4n = row_counts(store, &tables).map_err(store_err(seed))?;
    let flat = Flatness {
        rows_n,
        rows_4n,
        size: (size_n, size()),
    };
    checked(store, &tables, cfg.warehouses, cfg.steady_window, seed)?;
    let (at_n, at_4n) = (flat.rows_n.values().sum(), flat.rows_4n.values().sum());
    if change(at_n, at_4n) > 0.05 {
        return Err(SuiteError::NotFlat {
            seed,
            metric: "rows",
            at_n,
            at_4n,
        });
    }
    let (at_n, at_4n) = flat.size;
    if at_n > 0 && change(at_n, at_4n) > 0.05 {
        return Err(SuiteError::NotFlat {
            seed,
            metric: "size",
            at_n,
            at_4n,
        });
    }
    Ok(flat)
}
