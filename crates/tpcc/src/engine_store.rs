//! [`EngineStore`]: the engine (`nowa_engine::Engine`, either write path) as a [`TxnStore`].
//!
//! Tables are the engine's named tables (the hint becomes `TreeOptions::append_biased`),
//! transactions its optimistic transactions (a failed validation is
//! [`ConflictKind::Validation`]), the bulk load its asynchronous load path followed by a sync and
//! a checkpoint in `finish_load`.

use crate::store::{ConflictKind, Row, ScanOrder, StoreError, TableHint, TableId, Transaction};
use crate::TxnStore;
use nowa_engine::{Durability, Engine, EngineError, ScanDir, TreeOptions, Txn};

/// The engine behind the TPC-C storage contract.
pub struct EngineStore {
    eng: Engine,
    durability: Durability,
}

impl EngineStore {
    /// Wrap `eng`; commits use `durability`.
    #[must_use]
    pub fn new(eng: Engine, durability: Durability) -> EngineStore {
        EngineStore { eng, durability }
    }

    /// The engine.
    #[must_use]
    pub fn engine(&self) -> &Engine {
        &self.eng
    }

    /// The engine back (e.g. to close it, or drop it as a crash).
    #[must_use]
    pub fn into_engine(self) -> Engine {
        self.eng
    }
}

/// An engine error as a store error: a conflict is retryable, the rest is not.
fn store_err(e: EngineError) -> StoreError {
    match e {
        EngineError::Conflict => StoreError::Conflict {
            kind: ConflictKind::Validation,
        },
        EngineError::UnknownTable { id } => StoreError::UnknownTable {
            table: TableId(u32::from(id)),
        },
        other => StoreError::Backend {
            source: Box::new(other),
        },
    }
}

fn table(t: TableId) -> Result<nowa_engine::TableId, StoreError> {
    u16::try_from(t.0)
        .map(nowa_engine::TableId::new)
        .map_err(|_| StoreError::UnknownTable { table: t })
}

impl TxnStore for EngineStore {
    type Txn<'s> = EngineTxn<'s>;

    fn open_table(&self, name: &str, hint: TableHint) -> Result<TableId, StoreError> {
        let opts = TreeOptions {
            append_biased: hint.append_biased,
        };
        let (id, _) = self.eng.open_table(name, opts).map_err(store_err)?;
        assert!(id.number() > 0, "table 0 is the engine's catalog");
        Ok(TableId(u32::from(id.number())))
    }

    fn begin(&self) -> Result<EngineTxn<'_>, StoreError> {
        Ok(EngineTxn {
            txn: self.eng.begin(),
            durability: self.durability,
        })
    }

    fn bulk_load(
        &self,
        t: TableId,
        rows: &mut dyn Iterator<Item = Row>,
    ) -> Result<u64, StoreError> {
        let id = table(t)?;
        let mut last: Option<Vec<u8>> = None;
        let mut n = 0u64;
        for (k, v) in rows {
            if last.as_ref().is_some_and(|l| k <= *l) {
                return Err(StoreError::UnsortedLoad { table: t, index: n });
            }
            self.eng.load_put(id, &k, &v).map_err(store_err)?;
            last = Some(k);
            n += 1;
        }
        assert_eq!(n == 0, last.is_none(), "rows counted as loaded");
        Ok(n)
    }

    fn finish_load(&self) -> Result<(), StoreError> {
        self.eng.sync().map_err(store_err)?;
        self.eng.checkpoint().map_err(store_err)
    }
}

/// One engine transaction.
pub struct EngineTxn<'s> {
    txn: Txn<'s>,
    durability: Durability,
}

impl Transaction for EngineTxn<'_> {
    fn get(&mut self, t: TableId, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.txn.get(table(t)?, key).map_err(store_err)
    }

    fn put(&mut self, t: TableId, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.txn.put(table(t)?, key, value).map_err(store_err)
    }

    fn delete(&mut self, t: TableId, key: &[u8]) -> Result<bool, StoreError> {
        self.txn.delete(table(t)?, key).map_err(store_err)
    }

    fn scan(
        &mut self,
        t: TableId,
        start: &[u8],
        end: Option<&[u8]>,
        order: ScanOrder,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        let dir = match order {
            ScanOrder::Forward => ScanDir::Forward,
            ScanOrder::Reverse => ScanDir::Reverse,
        };
        let rows = self
            .txn
            .scan(table(t)?, start, end, dir, limit)
            .map_err(store_err)?;
        assert!(rows.len() <= limit, "a scan returned more rows than asked");
        assert!(
            rows.windows(2).all(|w| match order {
                ScanOrder::Forward => w[0].0 < w[1].0,
                ScanOrder::Reverse => w[0].0 > w[1].0,
            }),
            "a scan returned rows out of order"
        );
        assert!(
            rows.iter()
                .all(|(k, _)| k.as_slice() >= start && end.is_none_or(|e| k.as_slice() < e)),
            "a scan returned a row outside its range"
        );
        Ok(rows)
    }

    fn validate(&mut self) -> Result<(), StoreError> {
        self.txn.validate().map_err(store_err)
    }

    fn commit(self) -> Result<(), StoreError> {
        self.txn.commit_with(self.durability).map_err(store_err)
    }

    fn abort(self) {
        self.txn.abort();
    }
}
