//! The suites can fail: deliberately broken stores (lost writes, no read-your-own-writes,
//! aborts that commit, reads that are not serializable) must each be caught.

use nowa_tpcc::store::{Row, ScanOrder, StoreError, TableHint, TableId, Transaction, TxnStore};
use nowa_tpcc::suites::{
    bank_transfer_invariant, transaction_model, BankConfig, ModelConfig, SuiteError,
};
use nowa_tpcc::MemStore;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

const SEED: u64 = 0xb20c;

/// How a [`Broken`] store misbehaves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flaw {
    /// Every 97th put is silently dropped.
    DropsWrites,
    /// Reads do not see the transaction's own writes (writes are applied at commit).
    NoReadYourWrites,
    /// `abort` commits.
    AbortCommits,
}

struct Broken {
    inner: MemStore,
    flaw: Flaw,
    puts: AtomicU64,
}

struct BrokenTxn<'s> {
    store: &'s Broken,
    txn: <MemStore as TxnStore>::Txn<'s>,
    deferred: Vec<(TableId, Vec<u8>, Vec<u8>)>,
}

impl TxnStore for Broken {
    type Txn<'s> = BrokenTxn<'s>;
    fn open_table(&self, name: &str, hint: TableHint) -> Result<TableId, StoreError> {
        self.inner.open_table(name, hint)
    }
    fn begin(&self) -> Result<BrokenTxn<'_>, StoreError> {
        Ok(BrokenTxn {
            store: self,
            txn: self.inner.begin()?,
            deferred: Vec::new(),
        })
    }
}

impl Transaction for BrokenTxn<'_> {
    fn get(&mut self, t: TableId, k: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.txn.get(t, k)
    }
    fn put(&mut self, t: TableId, k: &[u8], v: &[u8]) -> Result<(), StoreError> {
        match self.store.flaw {
            Flaw::DropsWrites if self.store.puts.fetch_add(1, Relaxed) % 97 == 96 => Ok(()),
            Flaw::NoReadYourWrites => {
                self.deferred.push((t, k.to_vec(), v.to_vec()));
                Ok(())
            }
            _ => self.txn.put(t, k, v),
        }
    }
    fn delete(&mut self, t: TableId, k: &[u8]) -> Result<bool, StoreError> {
        self.txn.delete(t, k)
    }
    fn scan(
        &mut self,
        t: TableId,
        s: &[u8],
        e: Option<&[u8]>,
        o: ScanOrder,
        l: usize,
    ) -> Result<Vec<Row>, StoreError> {
        self.txn.scan(t, s, e, o, l)
    }
    fn commit(mut self) -> Result<(), StoreError> {
        for (t, k, v) in std::mem::take(&mut self.deferred) {
            self.txn.put(t, &k, &v)?;
        }
        self.txn.commit()
    }
    fn abort(self) {
        if self.store.flaw == Flaw::AbortCommits {
            let _ = self.commit();
        }
    }
}

fn broken(flaw: Flaw) -> Broken {
    Broken {
        inner: MemStore::new(),
        flaw,
        puts: AtomicU64::new(0),
    }
}

#[test]
fn model_suite_catches_each_flaw() {
    println!("seed {SEED}");
    let cfg = ModelConfig {
        seed: SEED,
        ..ModelConfig::default()
    };
    for flaw in [
        Flaw::DropsWrites,
        Flaw::NoReadYourWrites,
        Flaw::AbortCommits,
    ] {
        match transaction_model(&broken(flaw), &cfg) {
            Err(SuiteError::Mismatch { .. }) => {}
            other => panic!("a broken store passed the model test: {other:?}"),
        }
    }
}

/// Read committed, no validation: each operation locks the tables only for itself, writes are
/// buffered and applied at commit. Lost updates and read skew follow under concurrency.
#[derive(Default)]
struct ReadCommitted {
    tables: Mutex<Vec<BTreeMap<Vec<u8>, Vec<u8>>>>,
    names: Mutex<Vec<String>>,
}

struct RcTxn<'s> {
    store: &'s ReadCommitted,
    writes: Vec<(usize, Vec<u8>, Option<Vec<u8>>)>,
}

impl TxnStore for ReadCommitted {
    type Txn<'s> = RcTxn<'s>;
    fn open_table(&self, name: &str, _: TableHint) -> Result<TableId, StoreError> {
        let mut names = self.names.lock();
        let i = names.iter().position(|n| n == name).unwrap_or_else(|| {
            names.push(name.to_owned());
            self.tables.lock().push(BTreeMap::new());
            names.len() - 1
        });
        Ok(TableId(u32::try_from(i).expect("few tables")))
    }
    fn begin(&self) -> Result<RcTxn<'_>, StoreError> {
        Ok(RcTxn {
            store: self,
            writes: Vec::new(),
        })
    }
}

impl Transaction for RcTxn<'_> {
    fn get(&mut self, t: TableId, k: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        std::thread::yield_now();
        let own = self
            .writes
            .iter()
            .rev()
            .find(|w| w.0 == t.0 as usize && w.1 == k);
        if let Some(w) = own {
            return Ok(w.2.clone());
        }
        Ok(self.store.tables.lock()[t.0 as usize].get(k).cloned())
    }
    fn put(&mut self, t: TableId, k: &[u8], v: &[u8]) -> Result<(), StoreError> {
        self.writes
            .push((t.0 as usize, k.to_vec(), Some(v.to_vec())));
        Ok(())
    }
    fn delete(&mut self, t: TableId, k: &[u8]) -> Result<bool, StoreError> {
        let existed = self.get(t, k)?.is_some();
        self.writes.push((t.0 as usize, k.to_vec(), None));
        Ok(existed)
    }
    fn scan(
        &mut self,
        t: TableId,
        s: &[u8],
        e: Option<&[u8]>,
        o: ScanOrder,
        l: usize,
    ) -> Result<Vec<Row>, StoreError> {
        let tables = self.store.tables.lock();
        let rows = tables[t.0 as usize]
            .range(s.to_vec()..)
            .take_while(|(k, _)| e.is_none_or(|e| k.as_slice() < e))
            .map(|(k, v)| (k.clone(), v.clone()));
        Ok(match o {
            ScanOrder::Forward => rows.take(l).collect(),
            ScanOrder::Reverse => {
                let mut all: Vec<Row> = rows.collect();
                all.reverse();
                all.truncate(l);
                all
            }
        })
    }
    fn commit(self) -> Result<(), StoreError> {
        let mut tables = self.store.tables.lock();
        for (t, k, v) in self.writes {
            match v {
                Some(v) => tables[t].insert(k, v),
                None => tables[t].remove(&k),
            };
        }
        Ok(())
    }
    fn abort(self) {}
}

#[test]
fn bank_suite_catches_a_non_serializable_store() {
    println!("seed {SEED}");
    let cfg = BankConfig {
        seed: SEED,
        accounts: 4,
        ..BankConfig::default()
    };
    match bank_transfer_invariant(&ReadCommitted::default(), &cfg) {
        Err(SuiteError::Bank { .. }) => {}
        other => panic!("read committed passed the bank test: {other:?}"),
    }
}
