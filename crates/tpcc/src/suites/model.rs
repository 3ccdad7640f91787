//! The transaction model test: random multi-table transactions (gets, puts, deletes, forward and
//! reverse scans with limits, commits and aborts) on a store and on a model, every result
//! compared. The model is a plain `BTreeMap` per table, copied at `begin` and swapped in at
//! commit: independent of [`MemStore`](crate::MemStore)'s write-set merging, so it checks that
//! too.

use super::{store_err, SuiteError};
use crate::rng::Rng;
use crate::store::{
    scan_all, Row, ScanOrder, StoreError, TableHint, TableId, Transaction, TxnStore,
};
use std::collections::BTreeMap;
use std::ops::Bound;

/// Parameters of [`transaction_model`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelConfig {
    /// Tables (named `model_0`, `model_1`, ...).
    pub tables: usize,
    /// Size of the key domain (keys are octal numbers as text, so many are prefixes of others).
    pub keys: u32,
    /// Transactions to run.
    pub transactions: u64,
    /// Operations per transaction, 1..=this.
    pub max_ops: u32,
    /// Percent of transactions that end in `abort`.
    pub abort_percent: i32,
    /// Compare the whole store with the model every this many transactions (0 = only at the end).
    pub verify_every: u64,
    /// The seed.
    pub seed: u64,
}

impl Default for ModelConfig {
    fn default() -> ModelConfig {
        ModelConfig {
            tables: 3,
            keys: 200,
            transactions: 2000,
            max_ops: 12,
            abort_percent: 20,
            verify_every: 100,
            seed: 1,
        }
    }
}

/// What the model test did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct ModelReport {
    /// Transactions committed.
    pub committed: u64,
    /// Transactions aborted on purpose.
    pub aborted: u64,
    /// Transactions lost to a conflict (the model discards them too).
    pub conflicts: u64,
    /// Operations compared.
    pub operations: u64,
    /// Full-state comparisons.
    pub verifications: u64,
    /// Reopens (with [`transaction_model_with_reopen`]).
    pub reopens: u64,
}

/// A result compared by the model test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// A `get`.
    Value(Option<Vec<u8>>),
    /// A `delete`'s "existed".
    Existed(bool),
    /// A scan, or a whole table.
    Rows(Vec<Row>),
}

type Tables = Vec<BTreeMap<Vec<u8>, Vec<u8>>>;

/// Runs the model test on `store` (whose model tables must be empty or absent).
///
/// # Errors
/// [`SuiteError::Mismatch`] at the first difference; store errors other than conflicts.
pub fn transaction_model<S: TxnStore>(
    store: &S,
    cfg: &ModelConfig,
) -> Result<ModelReport, SuiteError> {
    let mut run = ModelRun::new(store, cfg)?;
    for n in 0..cfg.transactions {
        run.transaction(store, n)?;
        if cfg.verify_every > 0 && (n + 1) % cfg.verify_every == 0 {
            run.verify(store, n)?;
        }
    }
    run.verify(store, cfg.transactions)?;
    Ok(run.report)
}

/// The model test with a reopen (e.g. crash and recovery) every `reopen_every` transactions:
/// `reopen` takes the store and returns it reopened; the whole store must then equal the model
/// (every committed transaction survived, nothing else did: run it with synchronous commits).
/// Returns the store.
///
/// # Errors
/// As [`transaction_model`], plus `reopen`'s errors.
///
/// # Panics
/// If `reopen_every` is 0.
pub fn transaction_model_with_reopen<S: TxnStore>(
    mut store: S,
    cfg: &ModelConfig,
    reopen_every: u64,
    mut reopen: impl FnMut(S) -> Result<S, StoreError>,
) -> Result<(S, ModelReport), SuiteError> {
    assert!(
        reopen_every > 0,
        "reopen at least every so many transactions"
    );
    let mut run = ModelRun::new(&store, cfg)?;
    for n in 0..cfg.transactions {
        run.transaction(&store, n)?;
        if (n + 1) % reopen_every == 0 {
            store = reopen(store).map_err(store_err(cfg.seed))?;
            run.ids = open_tables(&store, cfg.tables).map_err(store_err(cfg.seed))?;
            run.report.reopens += 1;
            run.verify(&store, n)?;
        }
    }
    run.verify(&store, cfg.transactions)?;
    Ok((store, run.report))
}

fn open_tables<S: TxnStore>(store: &S, n: usize) -> Result<Vec<TableId>, StoreError> {
    (0..n)
        .map(|i| store.open_table(&format!("model_{i}"), TableHint::default()))
        .collect()
}

struct ModelRun {
    cfg: ModelConfig,
    ids: Vec<TableId>,
    committed: Tables,
    rng: Rng,
    report: ModelReport,
}

/// How one transaction ended.
enum End {
    Commit,
    Abort,
    Conflict,
}

impl ModelRun {
    fn new<S: TxnStore>(store: &S, cfg: &ModelConfig) -> Result<ModelRun, SuiteError> {
        assert!(
            cfg.tables > 0 && cfg.keys > 0 && cfg.max_ops > 0,
            "a non-empty model"
        );
        let ids = open_tables(store, cfg.tables).map_err(store_err(cfg.seed))?;
        Ok(ModelRun {
            cfg: *cfg,
            ids,
            committed: vec![BTreeMap::new(); cfg.tables],
            rng: Rng::derive(cfg.seed, &[0x6d6f_6465]),
            report: ModelReport::default(),
        })
    }

    fn key(&mut self) -> Vec<u8> {
        let i = self.rng.below(u64::from(self.cfg.keys));
        format!("{i:o}").into_bytes()
    }

    fn value(&mut self, n: u64) -> Vec<u8> {
        let len = usize::try_from(self.rng.below(24)).expect("below 24");
        let mut v = n.to_le_bytes().to_vec();
        v.truncate(len.min(8));
        v.resize(len, b'v');
        v
    }

    fn transaction<S: TxnStore>(&mut self, store: &S, n: u64) -> Result<(), SuiteError> {
        let seed = self.cfg.seed;
        let mut pending = self.committed.clone();
        let mut txn = store.begin().map_err(store_err(seed))?;
        let ops = self
            .rng
            .int(1, i32::try_from(self.cfg.max_ops).unwrap_or(i32::MAX));
        let mut end = End::Commit;
        for op in 0..u64::try_from(ops).expect("positive") {
            match self.operation(&mut txn, &mut pending, n, op) {
                Ok(()) => self.report.operations += 1,
                Err(SuiteError::Store { source, .. }) if source.is_retryable() => {
                    end = End::Conflict;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        if matches!(end, End::Commit) && self.rng.percent(self.cfg.abort_percent) {
            end = End::Abort;
        }
        match end {
            End::Commit => match txn.commit() {
                Ok(()) => {
                    self.committed = pending;
                    self.report.committed += 1;
                }
                Err(e) if e.is_retryable() => self.report.conflicts += 1,
                Err(e) => return Err(store_err(seed)(e)),
            },
            End::Abort => {
                txn.abort();
                self.report.aborted += 1;
            }
            End::Conflict => {
                txn.abort();
                self.report.conflicts += 1;
            }
        }
        Ok(())
    }

    /// One random operation on the store and on `pending`, compared.
    fn operation<T: Transaction>(
        &mut self,
        txn: &mut T,
        pending: &mut Tables,
        n: u64,
        op: u64,
    ) -> Result<(), SuiteError> {
        let seed = self.cfg.seed;
        let t = usize::try_from(self.rng.below(self.ids.len() as u64)).expect("an index");
        let (id, k) = (self.ids[t], self.key());
        let (expected, got) = match self.rng.int(0, 9) {
            0..=2 => {
                let got = txn.get(id, &k).map_err(store_err(seed))?;
                (
                    Observed::Value(pending[t].get(&k).cloned()),
                    Observed::Value(got),
                )
            }
            3..=5 => {
                let v = self.value(n);
                txn.put(id, &k, &v).map_err(store_err(seed))?;
                pending[t].insert(k, v);
                return Ok(());
            }
            6 | 7 => {
                let got = txn.delete(id, &k).map_err(store_err(seed))?;
                (
                    Observed::Existed(pending[t].remove(&k).is_some()),
                    Observed::Existed(got),
                )
            }
            _ => {
                let (end, order, limit) = self.scan_args();
                let got = txn
                    .scan(id, &k, end.as_deref(), order, limit)
                    .map_err(store_err(seed))?;
                let want = model_scan(&pending[t], &k, end.as_deref(), order, limit);
                (Observed::Rows(want), Observed::Rows(got))
            }
        };
        if expected == got {
            return Ok(());
        }
        Err(SuiteError::Mismatch {
            seed,
            txn: n,
            op,
            expected,
            got,
        })
    }

    fn scan_args(&mut self) -> (Option<Vec<u8>>, ScanOrder, usize) {
        let end = if self.rng.percent(25) {
            None
        } else {
            Some(self.key())
        };
        let order = if self.rng.percent(50) {
            ScanOrder::Forward
        } else {
            ScanOrder::Reverse
        };
        let limit = usize::try_from(self.rng.below(12)).expect("below 12");
        (end, order, limit)
    }

    /// The whole store against the committed model, one read-only transaction per table.
    fn verify<S: TxnStore>(&mut self, store: &S, n: u64) -> Result<(), SuiteError> {
        let seed = self.cfg.seed;
        for (t, &id) in self.ids.iter().enumerate() {
            let rows = crate::store::retry_on_conflict(|| {
                let mut txn = store.begin()?;
                let mut rows = Vec::new();
                scan_all(&mut txn, id, &[], None, 7, |k, v| {
                    rows.push((k.to_vec(), v.to_vec()));
                    true
                })?;
                txn.commit()?;
                Ok(rows)
            })
            .map_err(store_err(seed))?;
            let want: Vec<Row> = self.committed[t]
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if rows != want {
                let (expected, got) = (Observed::Rows(want), Observed::Rows(rows));
                return Err(SuiteError::Mismatch {
                    seed,
                    txn: n,
                    op: u64::MAX,
                    expected,
                    got,
                });
            }
        }
        self.report.verifications += 1;
        Ok(())
    }
}

/// The model's answer to a scan.
fn model_scan(
    t: &BTreeMap<Vec<u8>, Vec<u8>>,
    start: &[u8],
    end: Option<&[u8]>,
    order: ScanOrder,
    limit: usize,
) -> Vec<Row> {
    if end.is_some_and(|e| e <= start) {
        return Vec::new();
    }
    let range = (
        Bound::Included(start),
        end.map_or(Bound::Unbounded, Bound::Excluded),
    );
    let rows = t
        .range::<[u8], _>(range)
        .map(|(k, v)| (k.clone(), v.clone()));
    match order {
        ScanOrder::Forward => rows.take(limit).collect(),
        ScanOrder::Reverse => rows.rev().take(limit).collect(),
    }
}
