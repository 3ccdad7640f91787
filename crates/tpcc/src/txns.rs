//! The five TPC-C transactions (clause 2.4 to 2.8) and steady TPC-C's batch delete, each as one
//! store transaction over its generated input.
//!
//! Inputs are generated first ([`crate::driver`] draws them from the worker's random stream) and
//! executed by [`execute`], so a transaction that lost a conflict is retried with the same input.

use crate::codec::DecodeError;
use crate::error::{decoded, ensure, TpccError};
use crate::schema::{
    key, Customer, District, History, Item, Order, OrderLine, Stock, Table, Tables, Warehouse,
    DISTRICTS,
};
use crate::store::{prefix_end, Row, ScanOrder, StoreError, Transaction};

/// The transaction types (plus steady TPC-C's batch delete).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnKind {
    /// New-Order (clause 2.4).
    NewOrder,
    /// Payment (clause 2.5).
    Payment,
    /// Order-Status (clause 2.6), read-only.
    OrderStatus,
    /// Delivery (clause 2.7), all ten districts in one transaction.
    Delivery,
    /// Stock-Level (clause 2.8), read-only.
    StockLevel,
    /// Steady TPC-C: delete delivered orders (with their lines and index rows) and trim HISTORY.
    BatchDelete,
}

impl TxnKind {
    /// Every kind, in report order.
    pub const ALL: [TxnKind; 6] = [
        TxnKind::NewOrder,
        TxnKind::Payment,
        TxnKind::OrderStatus,
        TxnKind::Delivery,
        TxnKind::StockLevel,
        TxnKind::BatchDelete,
    ];

    /// Position in [`TxnKind::ALL`].
    #[must_use]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Lower-case name for reports and CSV columns.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TxnKind::NewOrder => "new_order",
            TxnKind::Payment => "payment",
            TxnKind::OrderStatus => "order_status",
            TxnKind::Delivery => "delivery",
            TxnKind::StockLevel => "stock_level",
            TxnKind::BatchDelete => "batch_delete",
        }
    }
}

/// The item id used for New-Order's 1% rollbacks: no such item exists.
pub const UNUSED_ITEM: i32 = crate::schema::ITEMS + 1;

/// How Payment and Order-Status name their customer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CustomerSel {
    /// By C_ID.
    Id(i32),
    /// By C_LAST: the middle one (rounded down) of the matches sorted by C_FIRST.
    Last(Vec<u8>),
}

/// One order line of a New-Order input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineInput {
    /// OL_SUPPLY_W_ID.
    pub supply_w: i32,
    /// OL_I_ID ([`UNUSED_ITEM`] for the rollback).
    pub i_id: i32,
    /// OL_QUANTITY (1..=10).
    pub quantity: i32,
}

/// A Payment input: `amount` cents paid at (w, d) by a customer of (c_w, c_d).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentInput {
    /// Home warehouse.
    pub w: i32,
    /// Home district.
    pub d: i32,
    /// Customer's warehouse (15% remote).
    pub c_w: i32,
    /// Customer's district.
    pub c_d: i32,
    /// The customer.
    pub customer: CustomerSel,
    /// H_AMOUNT in cents.
    pub amount: i64,
    /// The HISTORY key (worker thread id, row number).
    pub history: (i32, i32),
}

/// A generated transaction input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// New-Order of customer `c` in district `d` of warehouse `w`.
    NewOrder {
        /// Home warehouse, district, customer.
        w: i32,
        /// District.
        d: i32,
        /// Customer.
        c: i32,
        /// Lines (sorted by supply warehouse and item, so stock rows are locked in one order).
        lines: Vec<LineInput>,
    },
    /// Payment.
    Payment(PaymentInput),
    /// Order-Status of a customer of (w, d).
    OrderStatus {
        /// Warehouse.
        w: i32,
        /// District.
        d: i32,
        /// The customer.
        customer: CustomerSel,
    },
    /// Delivery of the oldest undelivered order of each district of `w`.
    Delivery {
        /// Warehouse.
        w: i32,
        /// O_CARRIER_ID to set.
        carrier: i32,
    },
    /// Stock-Level of (w, d) under `threshold`.
    StockLevel {
        /// Warehouse.
        w: i32,
        /// District.
        d: i32,
        /// Quantity threshold (10..=20).
        threshold: i32,
    },
    /// Steady TPC-C's batch delete for warehouse `w`.
    BatchDelete {
        /// Warehouse.
        w: i32,
        /// Delivered orders a district keeps (the steady window, 2100).
        keep: i32,
        /// Most orders deleted per district (8 for a steady window of 2100).
        max: i32,
        /// HISTORY rows to delete: (thread, first..=last row number), if the trim is due.
        history: Option<(i32, i32, i32)>,
    },
}

impl Input {
    /// The input's transaction type.
    #[must_use]
    pub fn kind(&self) -> TxnKind {
        match self {
            Input::NewOrder { .. } => TxnKind::NewOrder,
            Input::Payment(_) => TxnKind::Payment,
            Input::OrderStatus { .. } => TxnKind::OrderStatus,
            Input::Delivery { .. } => TxnKind::Delivery,
            Input::StockLevel { .. } => TxnKind::StockLevel,
            Input::BatchDelete { .. } => TxnKind::BatchDelete,
        }
    }
}

/// What an executed transaction reports back (for counters and checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Done {
    /// New-Order: the order id created.
    pub o_id: i32,
    /// Delivery: districts delivered; batch delete: orders deleted.
    pub count: i32,
    /// Delivery: districts without an undelivered order; Order-Status: 1 if the customer had no
    /// order; Stock-Level: items below the threshold.
    pub other: i32,
}

/// Why an attempt did not commit.
#[derive(Debug)]
pub enum Fail {
    /// New-Order found its unused item: the transaction is rolled back on purpose (TPC-C's 1%).
    Rollback,
    /// The store refused (a conflict: retry) or failed.
    Store(StoreError),
    /// The database is not what TPC-C expects.
    Tpcc(TpccError),
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Fail {
        Fail::Store(e)
    }
}

impl From<TpccError> for Fail {
    fn from(e: TpccError) -> Fail {
        match e {
            TpccError::Store(s) => Fail::Store(s),
            other => Fail::Tpcc(other),
        }
    }
}

/// What every transaction needs besides its input.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The store's table handles.
    pub tables: &'a Tables,
    /// The logical timestamp of this transaction (O_ENTRY_D, H_DATE, OL_DELIVERY_D...).
    pub now: i64,
}

/// Executes `input` in the open transaction `txn` (does not commit).
///
/// # Errors
/// [`Fail::Rollback`] for New-Order's unused item, else store or data errors.
pub fn execute<T: Transaction>(txn: &mut T, ctx: Ctx<'_>, input: &Input) -> Result<Done, Fail> {
    let mut db = Db { txn, t: ctx.tables };
    match input {
        Input::NewOrder { w, d, c, lines } => new_order(&mut db, ctx.now, (*w, *d, *c), lines),
        Input::Payment(p) => payment(&mut db, ctx.now, p),
        Input::OrderStatus { w, d, customer } => order_status(&mut db, *w, *d, customer),
        Input::Delivery { w, carrier } => delivery(&mut db, ctx.now, *w, *carrier),
        Input::StockLevel { w, d, threshold } => stock_level(&mut db, *w, *d, *threshold),
        Input::BatchDelete {
            w,
            keep,
            max,
            history,
        } => batch_delete(&mut db, *w, (*keep, *max), *history),
    }
}

/// A transaction with typed row access.
struct Db<'x, T: Transaction> {
    txn: &'x mut T,
    t: &'x Tables,
}

impl<T: Transaction> Db<'_, T> {
    fn get<R>(
        &mut self,
        table: Table,
        key: &[u8],
        decode: fn(&[u8]) -> Result<R, DecodeError>,
    ) -> Result<R, TpccError> {
        match self.txn.get(self.t.id(table), key)? {
            Some(v) => decoded(table, key, decode(&v)),
            None => Err(TpccError::Missing {
                table,
                key: key.to_vec(),
            }),
        }
    }

    fn put(&mut self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.txn.put(self.t.id(table), key, value)
    }

    /// Deletes a row that must exist.
    fn delete(&mut self, table: Table, key: &[u8]) -> Result<(), TpccError> {
        if self.txn.delete(self.t.id(table), key)? {
            Ok(())
        } else {
            Err(TpccError::Missing {
                table,
                key: key.to_vec(),
            })
        }
    }

    /// The rows whose keys start with `prefix`, in `order`, at most `limit`.
    fn prefix(
        &mut self,
        table: Table,
        prefix: &[u8],
        order: ScanOrder,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        let end = prefix_end(prefix);
        self.txn
            .scan(self.t.id(table), prefix, end.as_deref(), order, limit)
    }

    /// The first integer field `field` of the smallest key under `prefix`, if any.
    fn first_id(&mut self, table: Table, prefix: &[u8], field: usize) -> Result<Option<i32>, Fail> {
        let rows = self.prefix(table, prefix, ScanOrder::Forward, 1)?;
        match rows.first() {
            None => Ok(None),
            Some((k, _)) => Ok(Some(int_field(table, k, field)?)),
        }
    }

    /// Resolves a customer selection in (w, d) to a C_ID (by last name: the middle match).
    fn customer_id(&mut self, w: i32, d: i32, sel: &CustomerSel) -> Result<i32, Fail> {
        let last = match sel {
            CustomerSel::Id(c) => return Ok(*c),
            CustomerSel::Last(last) => last,
        };
        let prefix = key::customer_wdc_prefix(w, d, last);
        let rows = self.prefix(Table::CustomerWdc, &prefix, ScanOrder::Forward, 3000)?;
        let Some((k, _)) = rows.get(rows.len().saturating_sub(1) / 2) else {
            return Err(TpccError::Missing {
                table: Table::CustomerWdc,
                key: prefix,
            }
            .into());
        };
        let c = key::customer_wdc_c_id(k);
        Ok(c.ok_or_else(|| short_key(Table::CustomerWdc, k))?)
    }
}

fn short_key(table: Table, k: &[u8]) -> TpccError {
    TpccError::Corrupt {
        table,
        key: k.to_vec(),
        source: DecodeError { offset: k.len() },
    }
}

fn int_field(table: Table, k: &[u8], field: usize) -> Result<i32, TpccError> {
    key::field(k, field).ok_or_else(|| short_key(table, k))
}

fn new_order<T: Transaction>(
    db: &mut Db<'_, T>,
    now: i64,
    (w, d, c): (i32, i32, i32),
    lines: &[LineInput],
) -> Result<Done, Fail> {
    assert!(
        (1..=15).contains(&lines.len()),
        "a New-Order has 5..=15 lines"
    );
    let w_tax = db
        .get(Table::Warehouse, &key::warehouse(w), Warehouse::decode)?
        .tax_bp;
    let dkey = key::district(w, d);
    let mut district = db.get(Table::District, &dkey, District::decode)?;
    let o_id = district.next_o_id;
    assert!(o_id > 0, "order ids start at 1");
    district.next_o_id += 1;
    db.put(Table::District, &dkey, &district.encode())?;
    let discount = db.get(Table::Customer, &key::customer(w, d, c), Customer::decode)?;
    let all_local = lines.iter().all(|l| l.supply_w == w);
    let order = Order {
        c_id: c,
        entry_d: now,
        carrier_id: 0,
        ol_cnt: i32::try_from(lines.len()).expect("5..=15 lines"),
        all_local: i32::from(all_local),
    };
    db.put(Table::Order, &key::order(w, d, o_id), &order.encode())?;
    db.put(Table::NewOrder, &key::order(w, d, o_id), &[])?;
    db.put(Table::OrderWdc, &key::order_wdc(w, d, c, o_id), &[])?;
    // Amount = qty x price x (1 + w_tax + d_tax) x (1 - discount), rates in basis points.
    let rates = (
        i128::from(10_000 + w_tax + district.place.tax_bp),
        i128::from(10_000 - discount.discount_bp),
    );
    for (n, line) in (1..).zip(lines) {
        order_line(db, (w, d, o_id, n), line, rates)?;
    }
    Ok(Done {
        o_id,
        ..Done::default()
    })
}

/// One line of a New-Order: read the item (missing: rollback), update the stock, insert the
/// ORDER_LINE row `(w, d, o, n)`. `rates` = (1 + taxes, 1 - discount) in basis points.
fn order_line<T: Transaction>(
    db: &mut Db<'_, T>,
    (w, d, o, n): (i32, i32, i32, i32),
    line: &LineInput,
    (tax, keep): (i128, i128),
) -> Result<(), Fail> {
    let ikey = key::item(line.i_id);
    let Some(item) = db.txn.get(db.t.id(Table::Item), &ikey)? else {
        return Err(Fail::Rollback);
    };
    let price = decoded(Table::Item, &ikey, Item::decode(&item))?.price;
    let skey = key::stock(line.supply_w, line.i_id);
    let mut stock = db.get(Table::Stock, &skey, Stock::decode)?;
    let q = line.quantity;
    assert!((1..=10).contains(&q), "OL_QUANTITY is 1..=10");
    assert!(
        (10..=100).contains(&stock.quantity),
        "S_QUANTITY stays in 10..=100"
    );
    stock.quantity = if stock.quantity >= q + 10 {
        stock.quantity - q
    } else {
        stock.quantity - q + 91
    };
    debug_assert!((10..=100).contains(&stock.quantity));
    stock.ytd += q;
    stock.order_cnt += 1;
    stock.remote_cnt += i32::from(line.supply_w != w);
    db.put(Table::Stock, &skey, &stock.encode())?;
    let amount = i128::from(q) * i128::from(price) * tax * keep / 100_000_000;
    let ol = OrderLine {
        i_id: line.i_id,
        supply_w_id: line.supply_w,
        delivery_d: 0,
        quantity: q,
        amount: i64::try_from(amount).expect("an order line is far below 2^63 cents"),
        dist_info: stock.dist[usize::try_from(d - 1).expect("districts are 1..=10")],
    };
    db.put(Table::OrderLine, &key::order_line(w, d, o, n), &ol.encode())?;
    Ok(())
}

fn payment<T: Transaction>(db: &mut Db<'_, T>, now: i64, p: &PaymentInput) -> Result<Done, Fail> {
    let (w, d, c_w, c_d, amount) = (p.w, p.d, p.c_w, p.c_d, p.amount);
    assert!(
        (100..=500_000).contains(&amount),
        "H_AMOUNT is 1.00..=5000.00"
    );
    let wkey = key::warehouse(w);
    let mut wh = db.get(Table::Warehouse, &wkey, Warehouse::decode)?;
    wh.ytd += amount;
    db.put(Table::Warehouse, &wkey, &wh.encode())?;
    let dkey = key::district(w, d);
    let mut district = db.get(Table::District, &dkey, District::decode)?;
    district.place.ytd += amount;
    db.put(Table::District, &dkey, &district.encode())?;
    let c = db.customer_id(c_w, c_d, &p.customer)?;
    let ckey = key::customer(c_w, c_d, c);
    let mut cust = db.get(Table::Customer, &ckey, Customer::decode)?;
    cust.balance -= amount;
    cust.ytd_payment += amount;
    cust.payment_cnt += 1;
    if cust.credit == *b"BC" {
        let mut data = format!("{c} {c_d} {c_w} {d} {w} {amount}|").into_bytes();
        data.extend_from_slice(&cust.data);
        data.truncate(500);
        cust.data = data;
    }
    db.put(Table::Customer, &ckey, &cust.encode())?;
    let mut data = wh.name.clone();
    data.extend_from_slice(b"    ");
    data.extend_from_slice(&district.place.name);
    let h = History {
        customer: [c, c_d, c_w],
        district: [d, w],
        date: now,
        amount,
        data,
    };
    db.put(
        Table::History,
        &key::history(p.history.0, p.history.1),
        &h.encode(),
    )?;
    Ok(Done::default())
}

fn order_status<T: Transaction>(
    db: &mut Db<'_, T>,
    w: i32,
    d: i32,
    sel: &CustomerSel,
) -> Result<Done, Fail> {
    let c = db.customer_id(w, d, sel)?;
    let cust = db.get(Table::Customer, &key::customer(w, d, c), Customer::decode)?;
    debug_assert!(
        matches!(sel, CustomerSel::Id(_)) || matches!(sel, CustomerSel::Last(l) if *l == cust.last)
    );
    let prefix = key::order_wdc_prefix(w, d, c);
    let newest = db.prefix(Table::OrderWdc, &prefix, ScanOrder::Reverse, 1)?;
    let Some((k, _)) = newest.first() else {
        // Steady mode may have deleted this customer's only orders.
        return Ok(Done {
            other: 1,
            ..Done::default()
        });
    };
    let o = int_field(Table::OrderWdc, k, 3)?;
    let order = db.get(Table::Order, &key::order(w, d, o), Order::decode)?;
    ensure(order.c_id == c, "ORDER_WDC points to the customer's order")?;
    assert!((1..=15).contains(&order.ol_cnt), "O_OL_CNT is 5..=15");
    let lines = db.prefix(
        Table::OrderLine,
        &key::order(w, d, o),
        ScanOrder::Forward,
        15,
    )?;
    for (k, v) in &lines {
        decoded(Table::OrderLine, k, OrderLine::decode(v))?;
    }
    if lines.len() != usize::try_from(order.ol_cnt).unwrap_or(0) {
        return Err(TpccError::Missing {
            table: Table::OrderLine,
            key: key::order(w, d, o),
        }
        .into());
    }
    Ok(Done::default())
}

fn delivery<T: Transaction>(
    db: &mut Db<'_, T>,
    now: i64,
    w: i32,
    carrier: i32,
) -> Result<Done, Fail> {
    assert!((1..=crate::schema::CARRIERS).contains(&carrier));
    let mut done = Done::default();
    for d in 1..=DISTRICTS {
        let Some(o) = db.first_id(Table::NewOrder, &key::district(w, d), 2)? else {
            done.other += 1; // nothing to deliver in this district
            continue;
        };
        let okey = key::order(w, d, o);
        db.delete(Table::NewOrder, &okey)?;
        let mut order = db.get(Table::Order, &okey, Order::decode)?;
        ensure(
            order.carrier_id == 0,
            "an order in NEW_ORDER is undelivered",
        )?;
        order.carrier_id = carrier;
        db.put(Table::Order, &okey, &order.encode())?;
        let mut total = 0i64;
        for n in 1..=order.ol_cnt {
            let lkey = key::order_line(w, d, o, n);
            let mut line = db.get(Table::OrderLine, &lkey, OrderLine::decode)?;
            ensure(
                line.delivery_d == 0,
                "an undelivered order's lines are undelivered",
            )?;
            assert!(line.amount >= 0, "OL_AMOUNT is never negative");
            line.delivery_d = now;
            total += line.amount;
            db.put(Table::OrderLine, &lkey, &line.encode())?;
        }
        let ckey = key::customer(w, d, order.c_id);
        let mut cust = db.get(Table::Customer, &ckey, Customer::decode)?;
        cust.balance += total;
        cust.delivery_cnt += 1;
        db.put(Table::Customer, &ckey, &cust.encode())?;
        done.count += 1;
    }
    Ok(done)
}

fn stock_level<T: Transaction>(
    db: &mut Db<'_, T>,
    w: i32,
    d: i32,
    threshold: i32,
) -> Result<Done, Fail> {
    assert!(
        (10..=20).contains(&threshold),
        "the Stock-Level threshold is 10..=20"
    );
    let next = db
        .get(Table::District, &key::district(w, d), District::decode)?
        .next_o_id;
    let from = key::order(w, d, next - 20);
    let to = key::order(w, d, next);
    let lines = db.txn.scan(
        db.t.id(Table::OrderLine),
        &from,
        Some(&to),
        ScanOrder::Forward,
        20 * 15,
    )?;
    assert!(lines.len() <= 20 * 15, "at most 20 orders of 15 lines");
    let mut items = Vec::with_capacity(lines.len());
    for (k, v) in &lines {
        items.push(decoded(Table::OrderLine, k, OrderLine::decode(v))?.i_id);
    }
    items.sort_unstable();
    items.dedup();
    let mut low = 0;
    for i in items {
        let stock = db.get(Table::Stock, &key::stock(w, i), Stock::decode)?;
        low += i32::from(stock.quantity < threshold);
    }
    Ok(Done {
        other: low,
        ..Done::default()
    })
}

/// Steady TPC-C (after ZLeanStore's `DoBatchDelete`): in each district, delete the oldest
/// delivered orders beyond the newest `keep` delivered ones, at most `max`, with their
/// ORDER_LINE and ORDER_WDC rows; then delete the due HISTORY rows of the worker. Delivered =
/// below the oldest NEW_ORDER row (Delivery always takes the oldest); a district without
/// NEW_ORDER rows is left alone, so its newest order always stays.
fn batch_delete<T: Transaction>(
    db: &mut Db<'_, T>,
    w: i32,
    (keep, max): (i32, i32),
    history: Option<(i32, i32, i32)>,
) -> Result<Done, Fail> {
    assert!(keep >= 0 && max > 0, "a batch delete may delete orders");
    let mut done = Done::default();
    for d in 1..=DISTRICTS {
        let Some(first) = db.first_id(Table::Order, &key::district(w, d), 2)? else {
            continue;
        };
        let Some(oldest_new) = db.first_id(Table::NewOrder, &key::district(w, d), 2)? else {
            continue;
        };
        let delivered = oldest_new - first;
        for o in first..first + (delivered - keep).clamp(0, max) {
            delete_order(db, w, d, o)?;
            done.count += 1;
        }
    }
    if let Some((thread, first, last)) = history {
        assert!(
            thread > 0 && first <= last,
            "a worker trims its own, non-empty range"
        );
        for pk in first..=last {
            db.txn
                .delete(db.t.id(Table::History), &key::history(thread, pk))?;
        }
    }
    Ok(done)
}

/// Deletes a delivered order with its ORDER_WDC and ORDER_LINE rows.
fn delete_order<T: Transaction>(db: &mut Db<'_, T>, w: i32, d: i32, o: i32) -> Result<(), Fail> {
    let okey = key::order(w, d, o);
    let order = db.get(Table::Order, &okey, Order::decode)?;
    ensure(order.carrier_id != 0, "only delivered orders are deleted")?;
    assert!((1..=15).contains(&order.ol_cnt), "O_OL_CNT is 5..=15");
    db.delete(Table::Order, &okey)?;
    db.delete(Table::OrderWdc, &key::order_wdc(w, d, order.c_id, o))?;
    for n in 1..=order.ol_cnt {
        db.delete(Table::OrderLine, &key::order_line(w, d, o, n))?;
    }
    Ok(())
}
