//! TPC-C for nowa: the driver (standard and steady), written against a storage trait.
//!
//! - [`store`]: the contract — [`TxnStore`] (tables by name, transactions, bulk load) and
//!   [`Transaction`] (get, put, delete, forward/reverse range scans with a limit, commit,
//!   abort), with [`StoreError::Conflict`] as the one retryable error.
//! - [`MemStore`]: the in-memory reference implementation (the oracle; `--device model`).
//! - [`Timed`]: a wrapper that measures the time spent inside the store, so the driver's own
//!   cost per transaction can be told apart from the store's.
//! - [`schema`], [`keys`]: the eleven keyspaces, ZLeanStore's key folding, compact rows.
//! - [`load()`]: the initial population, seeded and deterministic per warehouse, in parallel.
//! - [`run()`]: the five transactions (and steady TPC-C's batch delete) on worker threads, with
//!   retries, per-type latency, per-interval samples and caller hooks ([`Observer`]).
//! - [`check_consistency`]: clause 3.3.2's consistency conditions.
//! - [`suites`]: test suites over any [`TxnStore`] (model test, bank-transfer serializability,
//!   TPC-C consistency after a run, steady-mode flatness), for the engine's tests too.
//!
//! ```
//! use nowa_tpcc::{load, run, check_consistency, LoadConfig, MemStore, NoObserver, RunConfig,
//!                 Stop, Tables};
//! let store = MemStore::new();
//! let tables = Tables::open(&store).unwrap();
//! load(&store, &tables, &LoadConfig { warehouses: 1, threads: 2, seed: 7 }, &|_| {}).unwrap();
//! let mut cfg = RunConfig::new(1, 1);
//! cfg.stop = Stop::Transactions(200);
//! let report = run(&store, &tables, &cfg, &NoObserver).unwrap();
//! assert_eq!(report.transactions + report.rollbacks, 200);
//! assert!(check_consistency(&store, &tables, 1, true).unwrap().is_consistent());
//! ```
//!
//! `docs/tpcc.md` has the decisions (steady mode, history trimming, ORDER_WDC deletes) and the
//! measured figures.

pub mod check;
pub mod codec;
pub mod driver;
pub mod engine_store;
pub mod error;
pub mod keys;
pub mod load;
pub mod mem;
pub mod report;
pub mod rng;
pub mod schema;
pub mod store;
pub mod suites;
pub mod timed;
pub mod txns;

pub use check::{check_consistency, history_trimmed, Consistency, Violation};
pub use driver::{run, RunConfig, Stop};
pub use engine_store::{EngineStore, EngineTxn};
pub use error::TpccError;
pub use load::{load, LoadConfig, LoadProgress, LoadReport};
pub use mem::MemStore;
pub use report::{write_samples_csv, Extra, NoObserver, Observer, Progress, Report, Sample};
pub use schema::{Table, Tables};
pub use store::{
    ConflictKind, Row, ScanOrder, StoreError, TableHint, TableId, Transaction, TxnStore,
};
pub use timed::Timed;
pub use txns::TxnKind;
