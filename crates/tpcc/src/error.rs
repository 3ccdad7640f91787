//! Errors of the driver, the loader and the checks.

use crate::codec::DecodeError;
use crate::schema::Table;
use crate::store::StoreError;

/// Why loading, running or checking TPC-C failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TpccError {
    /// The store failed (a conflict here means retries were exhausted).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A row did not decode.
    #[error("{table:?} row under key {key:02x?}: {source}")]
    Corrupt {
        /// The table read.
        table: Table,
        /// The row's key.
        key: Vec<u8>,
        /// What was wrong.
        #[source]
        source: DecodeError,
    },
    /// A row TPC-C relies on is absent (the database is not a TPC-C database, or lost rows).
    #[error("{table:?} has no row under key {key:02x?}")]
    Missing {
        /// The table read.
        table: Table,
        /// The key looked up.
        key: Vec<u8>,
    },
    /// Rows that contradict each other (a TPC-C invariant between rows does not hold): a
    /// corrupt database, or, inside a transaction of an optimistic store, an inconsistent read
    /// that validation turns into a conflict.
    #[error("inconsistent rows: {what}")]
    Inconsistent {
        /// The invariant that failed.
        what: &'static str,
    },
    /// A parameter out of its range.
    #[error("invalid {field}: {value} (expected {expected})")]
    Config {
        /// The parameter.
        field: &'static str,
        /// Its value.
        value: u64,
        /// The accepted range, in words.
        expected: &'static str,
    },
    /// A worker thread panicked.
    #[error("TPC-C worker {worker} panicked")]
    WorkerPanicked {
        /// The worker's index.
        worker: usize,
    },
}

/// `Err(Inconsistent { what })` unless `cond`.
pub(crate) fn ensure(cond: bool, what: &'static str) -> Result<(), TpccError> {
    if cond {
        Ok(())
    } else {
        Err(TpccError::Inconsistent { what })
    }
}

/// Turns a decode result into a [`TpccError::Corrupt`] naming the row.
pub(crate) fn decoded<T>(
    table: Table,
    key: &[u8],
    r: Result<T, DecodeError>,
) -> Result<T, TpccError> {
    r.map_err(|source| TpccError::Corrupt {
        table,
        key: key.to_vec(),
        source,
    })
}
