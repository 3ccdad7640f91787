//! TPC-C consistency conditions (clause 3.3.2) over any [`TxnStore`], e.g. after a run, after
//! `kill -9` and recovery, after a power loss.
//!
//! | condition | what | standard | steady |
//! |---|---|---|---|
//! | 3.3.2.1 | W_YTD = sum(D_YTD) | yes | yes |
//! | 3.3.2.2 | D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) | yes | yes |
//! | 3.3.2.3 | NEW_ORDER rows = max(NO_O_ID) - min(NO_O_ID) + 1 | yes | yes |
//! | 3.3.2.4 | sum(O_OL_CNT) = ORDER_LINE rows | yes | yes |
//! | 3.3.2.5 | O_CARRIER_ID null iff the order is in NEW_ORDER | yes | yes |
//! | 3.3.2.6 | O_OL_CNT = the order's ORDER_LINE rows | yes | yes |
//! | 3.3.2.7 | OL_DELIVERY_D null iff O_CARRIER_ID null | yes | yes |
//! | 3.3.2.8 | W_YTD = sum(H_AMOUNT) of the warehouse | yes | no: HISTORY is trimmed |
//! | 3.3.2.9 | D_YTD = sum(H_AMOUNT) of the district | yes | no: HISTORY is trimmed |
//! | indexes | ORDER_WDC = ORDER, CUSTOMER_WDC = CUSTOMER, row by row | yes | yes |
//!
//! 3.3.2.2's max(NO_O_ID) part is checked when the district has NEW_ORDER rows (a district
//! whose every order was delivered has no max(NO_O_ID)). Each warehouse is checked in one
//! read-only transaction (retried on conflict); HISTORY in one more.

use crate::error::{decoded, TpccError};
use crate::schema::{
    key, Customer, District, History, Order, OrderLine, Table, Tables, Warehouse, DISTRICTS,
};
use crate::store::{prefix_end, retry_on_conflict, scan_all, Transaction, TxnStore};
use std::collections::BTreeMap;

/// One broken condition.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Violation {
    /// 3.3.2.1.
    WarehouseYtd {
        /// Warehouse.
        w: i32,
        /// W_YTD.
        w_ytd: i64,
        /// Sum of its D_YTD.
        sum_d_ytd: i64,
    },
    /// 3.3.2.2.
    NextOrderId {
        /// Warehouse.
        w: i32,
        /// District.
        d: i32,
        /// D_NEXT_O_ID.
        next_o_id: i32,
        /// max(O_ID), if any order.
        max_o_id: Option<i32>,
        /// max(NO_O_ID), if any NEW_ORDER row.
        max_no_o_id: Option<i32>,
    },
    /// 3.3.2.3.
    NewOrderGap {
        /// Warehouse.
        w: i32,
        /// District.
        d: i32,
        /// NEW_ORDER rows.
        rows: u64,
        /// min(NO_O_ID).
        min: i32,
        /// max(NO_O_ID).
        max: i32,
    },
    /// 3.3.2.4.
    OrderLineTotal {
        /// Warehouse.
        w: i32,
        /// District.
        d: i32,
        /// sum(O_OL_CNT).
        sum_ol_cnt: u64,
        /// ORDER_LINE rows.
        lines: u64,
    },
    /// 3.3.2.5: an order with a null carrier not in NEW_ORDER, or the reverse.
    CarrierVsNewOrder {
        /// Warehouse.
        w: i32,
        /// District.
        d: i32,
        /// The order.
        o: i32,
    },
    /// 3.3.2.6: an order's line count differs from O_OL_CNT (0 = no such order).
    OrderLines {
        /// Warehouse.
        w: i32,
        /// District.
        d: i32,
        /// The order.
        o: i32,
        /// O_OL_CNT.
        ol_cnt: i32,
        /// Its ORDER_LINE rows.
        lines: i32,
    },
    /// 3.3.2.7: a line's delivery date disagrees with its order's carrier.
    DeliveryDate {
        /// Warehouse.
        w: i32,
        /// District.
        d: i32,
        /// The order.
        o: i32,
        /// The line number.
        ol_number: i32,
    },
    /// 3.3.2.8 (`d == 0`) or 3.3.2.9: YTD against the sum of HISTORY amounts.
    HistoryYtd {
        /// Warehouse.
        w: i32,
        /// District (0 for the warehouse).
        d: i32,
        /// W_YTD or D_YTD.
        ytd: i64,
        /// sum(H_AMOUNT).
        sum_h_amount: i64,
    },
    /// A secondary-index row without its base row, or a base row without its index row.
    Index {
        /// The index table.
        table: Table,
        /// Warehouse.
        w: i32,
        /// District.
        d: i32,
        /// Base rows.
        base_rows: u64,
        /// Index rows that match a base row.
        matching: u64,
        /// Index rows.
        index_rows: u64,
    },
}

/// The outcome of [`check_consistency`].
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Consistency {
    /// Warehouses checked.
    pub warehouses: u32,
    /// Whether 3.3.2.8 and 3.3.2.9 (HISTORY sums) were checked.
    pub history_checked: bool,
    /// Rows seen per table (ITEM and STOCK are not scanned).
    pub rows: BTreeMap<Table, u64>,
    /// Every broken condition (empty: consistent).
    pub violations: Vec<Violation>,
}

impl Consistency {
    /// True when no condition is broken.
    #[must_use]
    pub fn is_consistent(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Rows per scan call in whole-range passes.
const PAGE: usize = 1024;

/// Checks the consistency conditions on warehouses `1..=warehouses`; `history` adds 3.3.2.8 and
/// 3.3.2.9 (valid for standard runs only: steady TPC-C trims HISTORY).
///
/// # Errors
/// A store error, or a row that does not decode (a violation is not an error: it is reported).
pub fn check_consistency<S: TxnStore>(
    store: &S,
    tables: &Tables,
    warehouses: u32,
    history: bool,
) -> Result<Consistency, TpccError> {
    let mut out = Consistency {
        warehouses,
        history_checked: history,
        ..Consistency::default()
    };
    let ws = i32::try_from(warehouses).map_err(|_| TpccError::Config {
        field: "warehouses",
        value: u64::from(warehouses),
        expected: "1..=50000",
    })?;
    let mut ytds = Vec::new();
    for w in 1..=ws {
        let (mut one, ytd) = retry_tpcc(|| {
            let mut txn = store.begin()?;
            let mut c = Consistency::default();
            let ytd = check_warehouse(&mut txn, tables, w, &mut c)?;
            txn.commit()?;
            Ok((c, ytd))
        })?;
        out.violations.append(&mut one.violations);
        add_rows(&mut out.rows, &one.rows);
        ytds.push(ytd);
    }
    if history {
        let mut found = retry_tpcc(|| {
            let mut txn = store.begin()?;
            let v = check_history(&mut txn, tables, &ytds)?;
            txn.commit()?;
            Ok(v)
        })?;
        out.violations.append(&mut found);
    }
    Ok(out)
}

/// True when a worker's HISTORY rows no longer start at row 1: steady TPC-C trimmed them, so
/// 3.3.2.8 and 3.3.2.9 (sums over HISTORY) do not apply. This is how `nowa tpcc --check-only`
/// knows a database came from a steady run: the database itself says so, and a standard run
/// (which never deletes HISTORY) is still checked in full. One forward scan of limit 1 per
/// worker thread (the loader's rows, thread 0, are never trimmed).
///
/// # Errors
/// A store error, or a HISTORY key that does not decode.
///
/// # Panics
/// If the scan returns a row of thread 0 (it starts at thread 1: a store bug).
pub fn history_trimmed<S: TxnStore>(store: &S, tables: &Tables) -> Result<bool, TpccError> {
    let id = tables.id(Table::History);
    retry_tpcc(|| {
        let mut txn = store.begin()?;
        // Worker threads are numbered from 1: start after thread 0's rows.
        let mut from = crate::keys::fold_i32(1).to_vec();
        let trimmed = loop {
            let Some((k, _)) = txn
                .scan(id, &from, None, crate::store::ScanOrder::Forward, 1)?
                .into_iter()
                .next()
            else {
                break false;
            };
            let (Some(thread), Some(pk)) = (key::field(&k, 0), key::field(&k, 1)) else {
                return Err(TpccError::Missing {
                    table: Table::History,
                    key: k,
                });
            };
            assert!(thread >= 1, "the scan starts at worker thread 1");
            if pk > 1 {
                break true;
            }
            match prefix_end(&crate::keys::fold_i32(thread)) {
                Some(next) => from = next,
                None => break false,
            }
        };
        txn.commit()?;
        Ok(trimmed)
    })
}

fn add_rows(into: &mut BTreeMap<Table, u64>, from: &BTreeMap<Table, u64>) {
    for (t, n) in from {
        *into.entry(*t).or_default() += n;
    }
}

/// Like [`retry_on_conflict`] for bodies that return [`TpccError`].
fn retry_tpcc<T>(mut body: impl FnMut() -> Result<T, TpccError>) -> Result<T, TpccError> {
    let mut other = None;
    let r = retry_on_conflict(|| match body() {
        Ok(v) => Ok(Some(v)),
        Err(TpccError::Store(e)) => Err(e),
        Err(e) => {
            other = Some(e);
            Ok(None)
        }
    })?;
    match (r, other) {
        (Some(v), _) => Ok(v),
        (None, Some(e)) => Err(e),
        (None, None) => unreachable!("body returned neither a value nor an error"),
    }
}

/// YTDs of a warehouse: W_YTD and D_YTD of districts 1..=10 (index 0 = the warehouse).
type Ytds = [i64; 11];

fn get<T: Transaction, R>(
    txn: &mut T,
    tables: &Tables,
    table: Table,
    k: &[u8],
    decode: fn(&[u8]) -> Result<R, crate::codec::DecodeError>,
) -> Result<R, TpccError> {
    let v = txn.get(tables.id(table), k)?;
    let v = v.ok_or_else(|| TpccError::Missing {
        table,
        key: k.to_vec(),
    })?;
    decoded(table, k, decode(&v))
}

fn check_warehouse<T: Transaction>(
    txn: &mut T,
    tables: &Tables,
    w: i32,
    out: &mut Consistency,
) -> Result<Ytds, TpccError> {
    let mut ytd = [0i64; 11];
    ytd[0] = get(
        txn,
        tables,
        Table::Warehouse,
        &key::warehouse(w),
        Warehouse::decode,
    )?
    .ytd;
    *out.rows.entry(Table::Warehouse).or_default() += 1;
    for d in 1..=DISTRICTS {
        let district = get(
            txn,
            tables,
            Table::District,
            &key::district(w, d),
            District::decode,
        )?;
        *out.rows.entry(Table::District).or_default() += 1;
        ytd[usize::try_from(d).expect("1..=10")] = district.place.ytd;
        check_district(txn, tables, (w, d), district.next_o_id, out)?;
        check_customer_index(txn, tables, w, d, out)?;
    }
    let sum_d_ytd: i64 = ytd[1..].iter().sum();
    if sum_d_ytd != ytd[0] {
        out.violations.push(Violation::WarehouseYtd {
            w,
            w_ytd: ytd[0],
            sum_d_ytd,
        });
    }
    Ok(ytd)
}

/// All rows of one district of `table` (key prefix (w, d)), decoded by `f`.
fn district_rows<T: Transaction>(
    txn: &mut T,
    tables: &Tables,
    table: Table,
    (w, d): (i32, i32),
    mut f: impl FnMut(&[u8], &[u8]) -> Result<(), TpccError>,
) -> Result<u64, TpccError> {
    let prefix = key::district(w, d);
    let end = prefix_end(&prefix);
    let mut err = None;
    let n = scan_all(
        txn,
        tables.id(table),
        &prefix,
        end.as_deref(),
        PAGE,
        |k, v| match f(k, v) {
            Ok(()) => true,
            Err(e) => {
                err = Some(e);
                false
            }
        },
    )?;
    err.map_or(Ok(n), Err)
}

fn field(table: Table, k: &[u8], i: usize) -> Result<i32, TpccError> {
    key::field(k, i).ok_or_else(|| TpccError::Corrupt {
        table,
        key: k.to_vec(),
        source: crate::codec::DecodeError { offset: k.len() },
    })
}

fn check_district<T: Transaction>(
    txn: &mut T,
    tables: &Tables,
    (w, d): (i32, i32),
    next_o_id: i32,
    out: &mut Consistency,
) -> Result<(), TpccError> {
    let mut orders: BTreeMap<i32, Order> = BTreeMap::new();
    let n_orders = district_rows(txn, tables, Table::Order, (w, d), |k, v| {
        let o = field(Table::Order, k, 2)?;
        orders.insert(o, decoded(Table::Order, k, Order::decode(v))?);
        Ok(())
    })?;
    let mut new_orders = Vec::new();
    let n_new = district_rows(txn, tables, Table::NewOrder, (w, d), |k, _| {
        new_orders.push(field(Table::NewOrder, k, 2)?);
        Ok(())
    })?;
    for (t, n) in [(Table::Order, n_orders), (Table::NewOrder, n_new)] {
        *out.rows.entry(t).or_default() += n;
    }
    let max_o_id = orders.keys().next_back().copied();
    let (min_no, max_no) = (new_orders.first().copied(), new_orders.last().copied());
    if max_o_id != Some(next_o_id - 1) || max_no.is_some_and(|m| m != next_o_id - 1) {
        out.violations.push(Violation::NextOrderId {
            w,
            d,
            next_o_id,
            max_o_id,
            max_no_o_id: max_no,
        });
    }
    if let (Some(min), Some(max)) = (min_no, max_no) {
        if u64::try_from(max - min + 1).ok() != Some(n_new) {
            out.violations.push(Violation::NewOrderGap {
                w,
                d,
                rows: n_new,
                min,
                max,
            });
        }
    }
    check_carriers(&orders, &new_orders, (w, d), out);
    check_lines(txn, tables, &orders, (w, d), out)?;
    check_order_index(txn, tables, &orders, (w, d), out)
}

/// 3.3.2.5: null carrier iff in NEW_ORDER.
fn check_carriers(
    orders: &BTreeMap<i32, Order>,
    new_orders: &[i32],
    (w, d): (i32, i32),
    out: &mut Consistency,
) {
    let pending: std::collections::BTreeSet<i32> = new_orders.iter().copied().collect();
    for (&o, order) in orders {
        if (order.carrier_id == 0) != pending.contains(&o) {
            out.violations
                .push(Violation::CarrierVsNewOrder { w, d, o });
        }
    }
    for &o in new_orders {
        if !orders.contains_key(&o) {
            out.violations
                .push(Violation::CarrierVsNewOrder { w, d, o });
        }
    }
}

/// 3.3.2.4, 3.3.2.6 and 3.3.2.7.
fn check_lines<T: Transaction>(
    txn: &mut T,
    tables: &Tables,
    orders: &BTreeMap<i32, Order>,
    (w, d): (i32, i32),
    out: &mut Consistency,
) -> Result<(), TpccError> {
    let mut per_order: BTreeMap<i32, i32> = BTreeMap::new();
    let mut bad_dates = Vec::new();
    let lines = district_rows(txn, tables, Table::OrderLine, (w, d), |k, v| {
        let (o, n) = (
            field(Table::OrderLine, k, 2)?,
            field(Table::OrderLine, k, 3)?,
        );
        let line = decoded(Table::OrderLine, k, OrderLine::decode(v))?;
        *per_order.entry(o).or_default() += 1;
        let undelivered = orders.get(&o).is_some_and(|x| x.carrier_id == 0);
        if (line.delivery_d == 0) != undelivered {
            bad_dates.push((o, n));
        }
        Ok(())
    })?;
    *out.rows.entry(Table::OrderLine).or_default() += lines;
    for (o, ol_number) in bad_dates {
        out.violations
            .push(Violation::DeliveryDate { w, d, o, ol_number });
    }
    let sum_ol_cnt: u64 = orders
        .values()
        .map(|o| u64::try_from(o.ol_cnt).unwrap_or(0))
        .sum();
    if sum_ol_cnt != lines {
        out.violations.push(Violation::OrderLineTotal {
            w,
            d,
            sum_ol_cnt,
            lines,
        });
    }
    let ids: std::collections::BTreeSet<i32> =
        orders.keys().chain(per_order.keys()).copied().collect();
    for o in ids {
        let ol_cnt = orders.get(&o).map_or(0, |x| x.ol_cnt);
        let lines = per_order.get(&o).copied().unwrap_or(0);
        if ol_cnt != lines {
            out.violations.push(Violation::OrderLines {
                w,
                d,
                o,
                ol_cnt,
                lines,
            });
        }
    }
    Ok(())
}

/// ORDER_WDC holds exactly one row (w, d, O_C_ID, O_ID) per order.
fn check_order_index<T: Transaction>(
    txn: &mut T,
    tables: &Tables,
    orders: &BTreeMap<i32, Order>,
    (w, d): (i32, i32),
    out: &mut Consistency,
) -> Result<(), TpccError> {
    let mut matching = 0u64;
    let index_rows = district_rows(txn, tables, Table::OrderWdc, (w, d), |k, _| {
        let (c, o) = (field(Table::OrderWdc, k, 2)?, field(Table::OrderWdc, k, 3)?);
        matching += u64::from(orders.get(&o).is_some_and(|x| x.c_id == c));
        Ok(())
    })?;
    *out.rows.entry(Table::OrderWdc).or_default() += index_rows;
    let base_rows = orders.len() as u64;
    index_check(
        Table::OrderWdc,
        (w, d),
        (base_rows, matching, index_rows),
        out,
    );
    Ok(())
}

/// Reports an index whose rows do not match its base rows one to one.
fn index_check(
    table: Table,
    (w, d): (i32, i32),
    (base_rows, matching, index_rows): (u64, u64, u64),
    out: &mut Consistency,
) {
    if matching != base_rows || index_rows != base_rows {
        out.violations.push(Violation::Index {
            table,
            w,
            d,
            base_rows,
            matching,
            index_rows,
        });
    }
}

/// CUSTOMER_WDC holds exactly one row (w, d, C_LAST, C_FIRST, C_ID) per customer.
fn check_customer_index<T: Transaction>(
    txn: &mut T,
    tables: &Tables,
    w: i32,
    d: i32,
    out: &mut Consistency,
) -> Result<(), TpccError> {
    let mut expected = std::collections::BTreeSet::new();
    let base_rows = district_rows(txn, tables, Table::Customer, (w, d), |k, v| {
        let c = field(Table::Customer, k, 2)?;
        let row = decoded(Table::Customer, k, Customer::decode(v))?;
        expected.insert(key::customer_wdc(w, d, &row.last, &row.first, c));
        Ok(())
    })?;
    let mut matching = 0u64;
    let index_rows = district_rows(txn, tables, Table::CustomerWdc, (w, d), |k, _| {
        matching += u64::from(expected.contains(k));
        Ok(())
    })?;
    *out.rows.entry(Table::Customer).or_default() += base_rows;
    *out.rows.entry(Table::CustomerWdc).or_default() += index_rows;
    index_check(
        Table::CustomerWdc,
        (w, d),
        (base_rows, matching, index_rows),
        out,
    );
    Ok(())
}

/// 3.3.2.8 and 3.3.2.9: one pass over HISTORY (every thread's rows); `ytds[w - 1]` holds
/// warehouse `w`'s YTDs.
fn check_history<T: Transaction>(
    txn: &mut T,
    tables: &Tables,
    ytds: &[Ytds],
) -> Result<Vec<Violation>, TpccError> {
    let mut sums = vec![[0i64; 11]; ytds.len()];
    let mut err: Option<TpccError> = None;
    scan_all(txn, tables.id(Table::History), &[], None, PAGE, |k, v| {
        let h = match History::decode(v) {
            Ok(h) => h,
            Err(source) => {
                err = Some(TpccError::Corrupt {
                    table: Table::History,
                    key: k.to_vec(),
                    source,
                });
                return false;
            }
        };
        let [d, w] = h.district;
        let at = usize::try_from(w - 1).ok().filter(|&i| i < sums.len());
        let d = usize::try_from(d).ok().filter(|d| (1..=10).contains(d));
        if let (Some(i), Some(d)) = (at, d) {
            sums[i][0] += h.amount;
            sums[i][d] += h.amount;
        }
        true
    })?;
    if let Some(e) = err {
        return Err(e);
    }
    let mut out = Vec::new();
    for (w, (ytd, sum)) in (1..).zip(ytds.iter().zip(&sums)) {
        for (d, (&y, &s)) in (0..).zip(ytd.iter().zip(sum)) {
            if y != s {
                out.push(Violation::HistoryYtd {
                    w,
                    d,
                    ytd: y,
                    sum_h_amount: s,
                });
            }
        }
    }
    Ok(out)
}
