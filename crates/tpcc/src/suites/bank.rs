//! The bank-transfer invariant: a serializability check under concurrency.
//!
//! `accounts` accounts start with `initial` each (table `bank_accounts`). Worker threads move
//! random amounts between random accounts; each transfer also writes a ledger row
//! (`bank_ledger`, key (thread, sequence)) in the same transaction, and is retried on conflict
//! until it commits. Every fifth transaction of a worker is an audit instead: it reads every
//! balance (by scan or by gets, alternately) and must see the exact total. At the end:
//! - the total is unchanged;
//! - each worker's ledger holds exactly the transfers whose commit returned `Ok`, in order;
//! - every balance equals `initial` + the ledger's credits - its debits (no lost update, no
//!   transfer applied twice or half).

use super::{store_err, SuiteError};
use crate::keys::{fold_i32, unfold_i32};
use crate::rng::Rng;
use crate::store::{
    prefix_end, retry_on_conflict, scan_all, StoreError, TableHint, TableId, Transaction, TxnStore,
};
use parking_lot::Mutex;

/// Parameters of [`bank_transfer_invariant`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BankConfig {
    /// Accounts (few accounts = many conflicts).
    pub accounts: i32,
    /// Worker threads.
    pub threads: usize,
    /// Transfers each worker commits.
    pub transfers_per_thread: u64,
    /// Starting balance of each account.
    pub initial: i64,
    /// The seed.
    pub seed: u64,
}

impl Default for BankConfig {
    fn default() -> BankConfig {
        BankConfig {
            accounts: 16,
            threads: 4,
            transfers_per_thread: 2000,
            initial: 1000,
            seed: 1,
        }
    }
}

/// What the bank run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct BankReport {
    /// Transfers committed.
    pub transfers: u64,
    /// Audits committed.
    pub audits: u64,
    /// Attempts lost to conflicts (and retried).
    pub conflicts: u64,
}

/// What broke.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BankViolation {
    /// An audit (or the final check) saw a total other than `accounts * initial`.
    Total {
        /// What it saw.
        seen: i64,
        /// What it must be.
        expected: i64,
    },
    /// An account's balance disagrees with the ledger.
    Balance {
        /// The account.
        account: i32,
        /// Its balance.
        balance: i64,
        /// `initial` + credits - debits in the ledger.
        from_ledger: i64,
    },
    /// A worker's ledger differs from the transfers it committed.
    Ledger {
        /// The worker.
        thread: i32,
        /// Transfers it committed.
        committed: u64,
        /// Ledger rows found (or the first position that differs).
        found: u64,
    },
}

struct Bank {
    accounts: TableId,
    ledger: TableId,
}

fn account_key(a: i32) -> [u8; 4] {
    fold_i32(a)
}

fn ledger_key(thread: i32, seq: i32) -> Vec<u8> {
    let mut k = fold_i32(thread).to_vec();
    k.extend_from_slice(&fold_i32(seq));
    k
}

fn decode_i64(v: &[u8]) -> i64 {
    let raw: [u8; 8] = v.get(..8).and_then(|b| b.try_into().ok()).unwrap_or([0; 8]);
    i64::from_le_bytes(raw)
}

/// One transfer: (from, to, amount).
type Transfer = (i32, i32, i64);

fn encode_transfer((from, to, amount): Transfer) -> Vec<u8> {
    let mut v = from.to_le_bytes().to_vec();
    v.extend_from_slice(&to.to_le_bytes());
    v.extend_from_slice(&amount.to_le_bytes());
    v
}

fn decode_transfer(v: &[u8]) -> Option<Transfer> {
    let from = i32::from_le_bytes(v.get(0..4)?.try_into().ok()?);
    let to = i32::from_le_bytes(v.get(4..8)?.try_into().ok()?);
    let amount = i64::from_le_bytes(v.get(8..16)?.try_into().ok()?);
    Some((from, to, amount))
}

/// Runs the bank workload on `store` (its bank tables must be empty or absent) and checks it.
///
/// # Errors
/// [`SuiteError::Bank`] when the invariant breaks; store errors other than conflicts.
///
/// # Panics
/// If a worker thread panics.
pub fn bank_transfer_invariant<S: TxnStore>(
    store: &S,
    cfg: &BankConfig,
) -> Result<BankReport, SuiteError> {
    assert!(
        cfg.accounts >= 2 && cfg.threads > 0,
        "two accounts and one thread at least"
    );
    let seed = cfg.seed;
    let bank = Bank {
        accounts: store
            .open_table("bank_accounts", TableHint::default())
            .map_err(store_err(seed))?,
        ledger: store
            .open_table("bank_ledger", TableHint::default())
            .map_err(store_err(seed))?,
    };
    retry_on_conflict(|| {
        let mut txn = store.begin()?;
        for a in 0..cfg.accounts {
            txn.put(bank.accounts, &account_key(a), &cfg.initial.to_le_bytes())?;
        }
        txn.commit()
    })
    .map_err(store_err(seed))?;
    let total = Mutex::new(BankReport::default());
    let committed: Vec<Vec<Transfer>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|t| {
                let (bank, total) = (&bank, &total);
                s.spawn(move || bank_worker(store, bank, cfg, t, total))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("bank worker panicked"))
            .collect::<Result<_, _>>()
    })?;
    final_check(store, &bank, cfg, &committed)?;
    Ok(total.into_inner())
}

/// One worker: returns the transfers it committed, in order.
fn bank_worker<S: TxnStore>(
    store: &S,
    bank: &Bank,
    cfg: &BankConfig,
    t: usize,
    total: &Mutex<BankReport>,
) -> Result<Vec<Transfer>, SuiteError> {
    let seed = cfg.seed;
    let thread = i32::try_from(t).expect("fewer than 2^31 threads");
    let mut rng = Rng::derive(seed, &[0x6261_6e6b, t as u64]);
    let mut done: Vec<Transfer> = Vec::new();
    let mut mine = BankReport::default();
    let expected = i64::from(cfg.accounts) * cfg.initial;
    let mut n = 0u64;
    while (done.len() as u64) < cfg.transfers_per_thread {
        n += 1;
        let outcome = if n % 5 == 0 {
            audit(store, bank, cfg.accounts, n % 10 == 0).map(|seen| {
                mine.audits += 1;
                (seen != expected).then_some(seen)
            })
        } else {
            let from = rng.int(0, cfg.accounts - 1);
            let to = rng.int_except(0, cfg.accounts - 1, from);
            let tr = (from, to, i64::from(rng.int(1, 100)));
            let seq = i32::try_from(done.len()).expect("fewer than 2^31 transfers");
            transfer(store, bank, tr, thread, seq).map(|()| {
                done.push(tr);
                None
            })
        };
        match outcome {
            Ok(None) => {}
            Ok(Some(seen)) => {
                let violation = BankViolation::Total { seen, expected };
                return Err(SuiteError::Bank { seed, violation });
            }
            Err(e) if e.is_retryable() => mine.conflicts += 1,
            Err(e) => return Err(store_err(seed)(e)),
        }
    }
    mine.transfers = done.len() as u64;
    let mut total = total.lock();
    total.transfers += mine.transfers;
    total.audits += mine.audits;
    total.conflicts += mine.conflicts;
    Ok(done)
}

fn transfer<S: TxnStore>(
    store: &S,
    bank: &Bank,
    (from, to, amount): Transfer,
    thread: i32,
    seq: i32,
) -> Result<(), StoreError> {
    let mut txn = store.begin()?;
    let a = txn
        .get(bank.accounts, &account_key(from))?
        .unwrap_or_default();
    let b = txn
        .get(bank.accounts, &account_key(to))?
        .unwrap_or_default();
    txn.put(
        bank.accounts,
        &account_key(from),
        &(decode_i64(&a) - amount).to_le_bytes(),
    )?;
    txn.put(
        bank.accounts,
        &account_key(to),
        &(decode_i64(&b) + amount).to_le_bytes(),
    )?;
    let row = encode_transfer((from, to, amount));
    txn.put(bank.ledger, &ledger_key(thread, seq), &row)?;
    txn.commit()
}

/// The sum of all balances, read by one scan or by one get per account.
fn audit<S: TxnStore>(
    store: &S,
    bank: &Bank,
    accounts: i32,
    by_scan: bool,
) -> Result<i64, StoreError> {
    let mut txn = store.begin()?;
    let mut sum = 0i64;
    if by_scan {
        scan_all(&mut txn, bank.accounts, &[], None, 5, |_, v| {
            sum += decode_i64(v);
            true
        })?;
    } else {
        for a in (0..accounts).rev() {
            sum += decode_i64(&txn.get(bank.accounts, &account_key(a))?.unwrap_or_default());
        }
    }
    txn.commit()?;
    Ok(sum)
}

fn final_check<S: TxnStore>(
    store: &S,
    bank: &Bank,
    cfg: &BankConfig,
    committed: &[Vec<Transfer>],
) -> Result<(), SuiteError> {
    let seed = cfg.seed;
    let fail = |violation| Err(SuiteError::Bank { seed, violation });
    let (balances, ledgers) = retry_on_conflict(|| {
        let mut txn = store.begin()?;
        let mut balances = Vec::new();
        scan_all(&mut txn, bank.accounts, &[], None, 64, |k, v| {
            balances.push((unfold_i32(k).unwrap_or(-1), decode_i64(v)));
            true
        })?;
        let mut ledgers = Vec::new();
        for t in 0..committed.len() {
            ledgers.push(read_ledger(
                &mut txn,
                bank,
                i32::try_from(t).unwrap_or(i32::MAX),
            )?);
        }
        txn.commit()?;
        Ok((balances, ledgers))
    })
    .map_err(store_err(seed))?;
    let expected = i64::from(cfg.accounts) * cfg.initial;
    let seen: i64 = balances.iter().map(|b| b.1).sum();
    if seen != expected {
        return fail(BankViolation::Total { seen, expected });
    }
    let mut from_ledger = vec![cfg.initial; usize::try_from(cfg.accounts).unwrap_or(0)];
    for (t, (mine, found)) in committed.iter().zip(&ledgers).enumerate() {
        if mine != found {
            let same = mine.iter().zip(found).take_while(|(a, b)| a == b).count();
            let thread = i32::try_from(t).unwrap_or(i32::MAX);
            let (committed, found) = (mine.len() as u64, same.min(found.len()) as u64);
            return fail(BankViolation::Ledger {
                thread,
                committed,
                found,
            });
        }
        for &(from, to, amount) in found {
            from_ledger[usize::try_from(from).unwrap_or(0)] -= amount;
            from_ledger[usize::try_from(to).unwrap_or(0)] += amount;
        }
    }
    for (account, balance) in balances {
        let want = usize::try_from(account)
            .ok()
            .and_then(|a| from_ledger.get(a).copied());
        if want != Some(balance) {
            let from_ledger = want.unwrap_or(i64::MIN);
            return fail(BankViolation::Balance {
                account,
                balance,
                from_ledger,
            });
        }
    }
    Ok(())
}

fn read_ledger<T: Transaction>(
    txn: &mut T,
    bank: &Bank,
    thread: i32,
) -> Result<Vec<Transfer>, StoreError> {
    let prefix = fold_i32(thread);
    let end = prefix_end(&prefix);
    let mut out = Vec::new();
    scan_all(txn, bank.ledger, &prefix, end.as_deref(), 256, |_, v| {
        out.push(decode_transfer(v).unwrap_or((-1, -1, 0)));
        true
    })?;
    Ok(out)
}
