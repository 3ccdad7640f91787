//! Test suites over any [`TxnStore`](crate::TxnStore): run here on [`MemStore`](crate::MemStore)
//! (tests/suites.rs) and by the engine's tests on the engine.
//!
//! - [`transaction_model`] (and [`transaction_model_with_reopen`] for crash/reopen cycles):
//!   random multi-table transactions with aborts, every result compared with a model;
//! - [`bank_transfer_invariant`]: serializability under concurrency (the total never changes,
//!   audits never see a partial transfer, every committed transfer is visible exactly once);
//! - [`tpcc_consistency_after_run`]: load, run, check clause 3.3.2;
//! - [`steady_flatness`]: steady TPC-C's row counts (and the caller's size) after N and after
//!   4N transactions within 5%.
//!
//! Every suite takes a seed and fails with a [`SuiteError`] that names the seed and the step.

mod bank;
mod model;
mod tpcc;

pub use bank::{bank_transfer_invariant, BankConfig, BankReport, BankViolation};
pub use model::{
    transaction_model, transaction_model_with_reopen, ModelConfig, ModelReport, Observed,
};
pub use tpcc::{
    row_counts, steady_flatness, tpcc_consistency_after_run, Flatness, FlatnessConfig,
    TpccSuiteConfig,
};

use crate::store::StoreError;
use crate::TpccError;

/// Why a suite failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuiteError {
    /// The store failed (not a conflict: suites retry or count those).
    #[error("seed {seed}: store error: {source}")]
    Store {
        /// The suite's seed.
        seed: u64,
        /// The error.
        #[source]
        source: StoreError,
    },
    /// The TPC-C driver or check failed.
    #[error("seed {seed}: TPC-C error: {source}")]
    Tpcc {
        /// The suite's seed.
        seed: u64,
        /// The error.
        #[source]
        source: TpccError,
    },
    /// The store returned something the model did not.
    #[error("seed {seed}: transaction {txn}, operation {op}: expected {expected:?}, store returned {got:?}")]
    Mismatch {
        /// The suite's seed.
        seed: u64,
        /// Transaction number (0-based).
        txn: u64,
        /// Operation number inside it (`u64::MAX`: a full-state comparison).
        op: u64,
        /// What the model says.
        expected: Observed,
        /// What the store said.
        got: Observed,
    },
    /// The bank invariant broke.
    #[error("seed {seed}: {violation:?}")]
    Bank {
        /// The suite's seed.
        seed: u64,
        /// What broke.
        violation: BankViolation,
    },
    /// TPC-C consistency conditions broke.
    #[error("seed {seed}: {} consistency violations, first {:?}", violations.len(), violations.first())]
    Inconsistent {
        /// The suite's seed.
        seed: u64,
        /// Every violation.
        violations: Vec<crate::Violation>,
    },
    /// Steady TPC-C's size was not flat.
    #[error("seed {seed}: {metric} went from {at_n} to {at_4n} (more than 5%)")]
    NotFlat {
        /// The suite's seed.
        seed: u64,
        /// What was measured ("rows", or the caller's size metric).
        metric: &'static str,
        /// After N transactions.
        at_n: u64,
        /// After 4N transactions.
        at_4n: u64,
    },
}

/// Attaches the seed to store errors.
fn store_err(seed: u64) -> impl Fn(StoreError) -> SuiteError {
    move |source| SuiteError::Store { seed, source }
}

/// Attaches the seed to TPC-C errors.
fn tpcc_err(seed: u64) -> impl Fn(TpccError) -> SuiteError {
    move |source| SuiteError::Tpcc { seed, source }
}
