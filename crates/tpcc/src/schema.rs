//! The TPC-C schema: tables, their keys (folded as in [`crate::keys`]) and compact rows.
//!
//! Money is in cents (`i64`), tax and discount rates in basis points (1/10,000, `i32`), dates
//! are logical timestamps (`i64`, 0 = null), "null" carrier ids are 0. Every column TPC-C reads
//! or writes is stored; strings have the spec's lengths (so rows have the spec's sizes).

use crate::codec::{DecodeError, Reader, Writer};
use crate::keys::{int_at, KeyBuf};
use crate::store::{StoreError, TableHint, TableId, TxnStore};

/// Districts per warehouse.
pub const DISTRICTS: i32 = 10;
/// Customers per district.
pub const CUSTOMERS: i32 = 3000;
/// Items (and stock rows per warehouse).
pub const ITEMS: i32 = 100_000;
/// Orders per district at load time.
pub const ORDERS: i32 = 3000;
/// The first undelivered order id at load time (2101..=3000 are in NEW_ORDER).
pub const FIRST_NEW_ORDER: i32 = 2101;
/// Largest carrier id.
pub const CARRIERS: i32 = 10;

/// The eleven keyspaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Table {
    /// (w_id) -> [`Warehouse`].
    Warehouse,
    /// (w_id, d_id) -> [`District`].
    District,
    /// (w_id, d_id, c_id) -> [`Customer`].
    Customer,
    /// Secondary index (w_id, d_id, c_last, c_first, c_id) -> empty.
    CustomerWdc,
    /// (thread, h_pk) -> [`History`]; thread 0 holds the loaded rows.
    History,
    /// (w_id, d_id, o_id) -> empty.
    NewOrder,
    /// (w_id, d_id, o_id) -> [`Order`].
    Order,
    /// Secondary index (w_id, d_id, c_id, o_id) -> empty.
    OrderWdc,
    /// (w_id, d_id, o_id, ol_number) -> [`OrderLine`].
    OrderLine,
    /// (i_id) -> [`Item`].
    Item,
    /// (w_id, i_id) -> [`Stock`].
    Stock,
}

impl Table {
    /// Every table, in [`Tables`] order.
    pub const ALL: [Table; 11] = [
        Table::Warehouse,
        Table::District,
        Table::Customer,
        Table::CustomerWdc,
        Table::History,
        Table::NewOrder,
        Table::Order,
        Table::OrderWdc,
        Table::OrderLine,
        Table::Item,
        Table::Stock,
    ];

    /// The table's name in the store.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Table::Warehouse => "warehouse",
            Table::District => "district",
            Table::Customer => "customer",
            Table::CustomerWdc => "customer_wdc",
            Table::History => "history",
            Table::NewOrder => "new_order",
            Table::Order => "order",
            Table::OrderWdc => "order_wdc",
            Table::OrderLine => "order_line",
            Table::Item => "item",
            Table::Stock => "stock",
        }
    }

    /// The split hint: ZLeanStore appends-biases CUSTOMER, HISTORY, ORDER, ORDER_LINE, ITEM and
    /// STOCK.
    #[must_use]
    pub fn hint(self) -> TableHint {
        let append_biased = matches!(
            self,
            Table::Customer
                | Table::History
                | Table::Order
                | Table::OrderLine
                | Table::Item
                | Table::Stock
        );
        TableHint { append_biased }
    }

    fn index(self) -> usize {
        let i = Table::ALL.iter().position(|&t| t == self);
        i.expect("every table is in ALL")
    }
}

/// The store's handles of the eleven tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tables {
    ids: [TableId; 11],
}

impl Tables {
    /// Opens (creating if needed) every TPC-C table of `store`.
    ///
    /// # Errors
    /// Any error of [`TxnStore::open_table`].
    pub fn open<S: TxnStore + ?Sized>(store: &S) -> Result<Tables, StoreError> {
        let mut ids = [TableId(0); 11];
        for (slot, t) in ids.iter_mut().zip(Table::ALL) {
            *slot = store.open_table(t.name(), t.hint())?;
        }
        Ok(Tables { ids })
    }

    /// The handle of `t`.
    #[must_use]
    pub fn id(&self, t: Table) -> TableId {
        self.ids[t.index()]
    }
}

/// Keys of every table.
pub mod key {
    use super::{int_at, KeyBuf};

    /// WAREHOUSE key.
    #[must_use]
    pub fn warehouse(w: i32) -> Vec<u8> {
        KeyBuf::new().int(w).finish()
    }
    /// DISTRICT key; also the prefix of a district's rows in CUSTOMER, ORDER, NEW_ORDER...
    #[must_use]
    pub fn district(w: i32, d: i32) -> Vec<u8> {
        KeyBuf::new().int(w).int(d).finish()
    }
    /// CUSTOMER key.
    #[must_use]
    pub fn customer(w: i32, d: i32, c: i32) -> Vec<u8> {
        KeyBuf::new().int(w).int(d).int(c).finish()
    }
    /// CUSTOMER_WDC prefix of one last name in one district.
    #[must_use]
    pub fn customer_wdc_prefix(w: i32, d: i32, last: &[u8]) -> Vec<u8> {
        KeyBuf::new().int(w).int(d).varchar(last).finish()
    }
    /// CUSTOMER_WDC key.
    #[must_use]
    pub fn customer_wdc(w: i32, d: i32, last: &[u8], first: &[u8], c: i32) -> Vec<u8> {
        KeyBuf::new()
            .int(w)
            .int(d)
            .varchar(last)
            .varchar(first)
            .int(c)
            .finish()
    }
    /// The c_id at the end of a CUSTOMER_WDC key.
    #[must_use]
    pub fn customer_wdc_c_id(key: &[u8]) -> Option<i32> {
        let at = key.len().checked_sub(4)?;
        crate::keys::unfold_i32(&key[at..])
    }
    /// HISTORY key.
    #[must_use]
    pub fn history(thread: i32, pk: i32) -> Vec<u8> {
        KeyBuf::new().int(thread).int(pk).finish()
    }
    /// NEW_ORDER and ORDER key.
    #[must_use]
    pub fn order(w: i32, d: i32, o: i32) -> Vec<u8> {
        KeyBuf::new().int(w).int(d).int(o).finish()
    }
    /// ORDER_WDC prefix of one customer's orders.
    #[must_use]
    pub fn order_wdc_prefix(w: i32, d: i32, c: i32) -> Vec<u8> {
        KeyBuf::new().int(w).int(d).int(c).finish()
    }
    /// ORDER_WDC key.
    #[must_use]
    pub fn order_wdc(w: i32, d: i32, c: i32, o: i32) -> Vec<u8> {
        KeyBuf::new().int(w).int(d).int(c).int(o).finish()
    }
    /// ORDER_LINE key.
    #[must_use]
    pub fn order_line(w: i32, d: i32, o: i32, n: i32) -> Vec<u8> {
        KeyBuf::new().int(w).int(d).int(o).int(n).finish()
    }
    /// ITEM key.
    #[must_use]
    pub fn item(i: i32) -> Vec<u8> {
        KeyBuf::new().int(i).finish()
    }
    /// STOCK key.
    #[must_use]
    pub fn stock(w: i32, i: i32) -> Vec<u8> {
        KeyBuf::new().int(w).int(i).finish()
    }
    /// Integer field `index` of an all-integer key (e.g. o_id = field 2 of an ORDER key).
    #[must_use]
    pub fn field(key: &[u8], index: usize) -> Option<i32> {
        int_at(key, index)
    }
}

/// A WAREHOUSE row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Warehouse {
    /// W_NAME (6..10).
    pub name: Vec<u8>,
    /// W_STREET_1, W_STREET_2, W_CITY (10..20 each).
    pub address: [Vec<u8>; 3],
    /// W_STATE (2).
    pub state: [u8; 2],
    /// W_ZIP (9).
    pub zip: [u8; 9],
    /// W_TAX in basis points (0..=2000).
    pub tax_bp: i32,
    /// W_YTD in cents.
    pub ytd: i64,
}

impl Warehouse {
    /// The encoded value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(96);
        w.i32(self.tax_bp).i64(self.ytd).str(&self.name);
        for a in &self.address {
            w.str(a);
        }
        w.fixed(&self.state).fixed(&self.zip).finish()
    }
    /// Decodes a value written by [`Warehouse::encode`].
    ///
    /// # Errors
    /// The value is malformed.
    pub fn decode(v: &[u8]) -> Result<Warehouse, DecodeError> {
        let mut r = Reader::new(v);
        let (tax_bp, ytd, name) = (r.i32()?, r.i64()?, r.str()?);
        let address = [r.str()?, r.str()?, r.str()?];
        let row = Warehouse {
            name,
            address,
            state: r.fixed()?,
            zip: r.fixed()?,
            tax_bp,
            ytd,
        };
        r.end()?;
        Ok(row)
    }
}

/// A DISTRICT row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct District {
    /// D_NAME, address, state and zip as in [`Warehouse`].
    pub place: Warehouse,
    /// D_NEXT_O_ID.
    pub next_o_id: i32,
}

impl District {
    /// The encoded value: D_NEXT_O_ID then the warehouse-like fields (D_TAX, D_YTD, ...).
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut v = self.next_o_id.to_le_bytes().to_vec();
        v.extend_from_slice(&self.place.encode());
        v
    }
    /// Decodes a value written by [`District::encode`].
    ///
    /// # Errors
    /// The value is malformed.
    pub fn decode(v: &[u8]) -> Result<District, DecodeError> {
        let next_o_id = Reader::new(v).i32()?;
        let place = Warehouse::decode(&v[4..]).map_err(|e| DecodeError {
            offset: e.offset + 4,
        })?;
        Ok(District { place, next_o_id })
    }
}

/// A CUSTOMER row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Customer {
    /// C_FIRST (8..16).
    pub first: Vec<u8>,
    /// C_MIDDLE ("OE").
    pub middle: [u8; 2],
    /// C_LAST (syllables, up to 15).
    pub last: Vec<u8>,
    /// C_STREET_1, C_STREET_2, C_CITY.
    pub address: [Vec<u8>; 3],
    /// C_STATE.
    pub state: [u8; 2],
    /// C_ZIP.
    pub zip: [u8; 9],
    /// C_PHONE (16 digits).
    pub phone: [u8; 16],
    /// C_SINCE.
    pub since: i64,
    /// C_CREDIT ("GC" or "BC").
    pub credit: [u8; 2],
    /// C_CREDIT_LIM in cents.
    pub credit_lim: i64,
    /// C_DISCOUNT in basis points (0..=5000).
    pub discount_bp: i32,
    /// C_BALANCE in cents.
    pub balance: i64,
    /// C_YTD_PAYMENT in cents.
    pub ytd_payment: i64,
    /// C_PAYMENT_CNT.
    pub payment_cnt: i32,
    /// C_DELIVERY_CNT.
    pub delivery_cnt: i32,
    /// C_DATA (300..500).
    pub data: Vec<u8>,
}

impl Customer {
    /// The encoded value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(700);
        w.i64(self.since).i64(self.credit_lim).i32(self.discount_bp);
        w.i64(self.balance).i64(self.ytd_payment);
        w.i32(self.payment_cnt).i32(self.delivery_cnt);
        w.fixed(&self.credit).fixed(&self.middle).fixed(&self.state);
        w.fixed(&self.zip).fixed(&self.phone);
        w.str(&self.first).str(&self.last);
        for a in &self.address {
            w.str(a);
        }
        w.str(&self.data).finish()
    }
    /// Decodes a value written by [`Customer::encode`].
    ///
    /// # Errors
    /// The value is malformed.
    pub fn decode(v: &[u8]) -> Result<Customer, DecodeError> {
        let mut r = Reader::new(v);
        let (since, credit_lim, discount_bp) = (r.i64()?, r.i64()?, r.i32()?);
        let (balance, ytd_payment) = (r.i64()?, r.i64()?);
        let (payment_cnt, delivery_cnt) = (r.i32()?, r.i32()?);
        let (credit, middle, state) = (r.fixed()?, r.fixed()?, r.fixed()?);
        let (zip, phone) = (r.fixed()?, r.fixed()?);
        let (first, last) = (r.str()?, r.str()?);
        let address = [r.str()?, r.str()?, r.str()?];
        let data = r.str()?;
        r.end()?;
        Ok(Customer {
            first,
            middle,
            last,
            address,
            state,
            zip,
            phone,
            since,
            credit,
            credit_lim,
            discount_bp,
            balance,
            ytd_payment,
            payment_cnt,
            delivery_cnt,
            data,
        })
    }
}

/// A HISTORY row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct History {
    /// H_C_ID, H_C_D_ID, H_C_W_ID.
    pub customer: [i32; 3],
    /// H_D_ID, H_W_ID.
    pub district: [i32; 2],
    /// H_DATE.
    pub date: i64,
    /// H_AMOUNT in cents.
    pub amount: i64,
    /// H_DATA (12..24).
    pub data: Vec<u8>,
}

impl History {
    /// The encoded value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(60);
        for x in self.customer.iter().chain(&self.district) {
            w.i32(*x);
        }
        w.i64(self.date).i64(self.amount).str(&self.data).finish()
    }
    /// Decodes a value written by [`History::encode`].
    ///
    /// # Errors
    /// The value is malformed.
    pub fn decode(v: &[u8]) -> Result<History, DecodeError> {
        let mut r = Reader::new(v);
        let customer = [r.i32()?, r.i32()?, r.i32()?];
        let district = [r.i32()?, r.i32()?];
        let row = History {
            customer,
            district,
            date: r.i64()?,
            amount: r.i64()?,
            data: r.str()?,
        };
        r.end()?;
        Ok(row)
    }
}

/// An ORDER row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Order {
    /// O_C_ID.
    pub c_id: i32,
    /// O_ENTRY_D.
    pub entry_d: i64,
    /// O_CARRIER_ID (0 = null: not delivered).
    pub carrier_id: i32,
    /// O_OL_CNT (5..=15).
    pub ol_cnt: i32,
    /// O_ALL_LOCAL (0 or 1).
    pub all_local: i32,
}

impl Order {
    /// The encoded value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(24);
        w.i32(self.c_id).i64(self.entry_d).i32(self.carrier_id);
        w.i32(self.ol_cnt).i32(self.all_local).finish()
    }
    /// Decodes a value written by [`Order::encode`].
    ///
    /// # Errors
    /// The value is malformed.
    pub fn decode(v: &[u8]) -> Result<Order, DecodeError> {
        let mut r = Reader::new(v);
        let row = Order {
            c_id: r.i32()?,
            entry_d: r.i64()?,
            carrier_id: r.i32()?,
            ol_cnt: r.i32()?,
            all_local: r.i32()?,
        };
        r.end()?;
        Ok(row)
    }
}

/// An ORDER_LINE row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OrderLine {
    /// OL_I_ID.
    pub i_id: i32,
    /// OL_SUPPLY_W_ID.
    pub supply_w_id: i32,
    /// OL_DELIVERY_D (0 = null).
    pub delivery_d: i64,
    /// OL_QUANTITY.
    pub quantity: i32,
    /// OL_AMOUNT in cents.
    pub amount: i64,
    /// OL_DIST_INFO.
    pub dist_info: [u8; 24],
}

impl OrderLine {
    /// The encoded value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(56);
        w.i32(self.i_id).i32(self.supply_w_id).i64(self.delivery_d);
        w.i32(self.quantity).i64(self.amount).fixed(&self.dist_info);
        w.finish()
    }
    /// Decodes a value written by [`OrderLine::encode`].
    ///
    /// # Errors
    /// The value is malformed.
    pub fn decode(v: &[u8]) -> Result<OrderLine, DecodeError> {
        let mut r = Reader::new(v);
        let row = OrderLine {
            i_id: r.i32()?,
            supply_w_id: r.i32()?,
            delivery_d: r.i64()?,
            quantity: r.i32()?,
            amount: r.i64()?,
            dist_info: r.fixed()?,
        };
        r.end()?;
        Ok(row)
    }
}

/// An ITEM row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Item {
    /// I_IM_ID (1..=10,000).
    pub im_id: i32,
    /// I_PRICE in cents (100..=10,000).
    pub price: i64,
    /// I_NAME (14..24).
    pub name: Vec<u8>,
    /// I_DATA (26..50; 10% hold "ORIGINAL").
    pub data: Vec<u8>,
}

impl Item {
    /// The encoded value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(90);
        w.i32(self.im_id)
            .i64(self.price)
            .str(&self.name)
            .str(&self.data);
        w.finish()
    }
    /// Decodes a value written by [`Item::encode`].
    ///
    /// # Errors
    /// The value is malformed.
    pub fn decode(v: &[u8]) -> Result<Item, DecodeError> {
        let mut r = Reader::new(v);
        let row = Item {
            im_id: r.i32()?,
            price: r.i64()?,
            name: r.str()?,
            data: r.str()?,
        };
        r.end()?;
        Ok(row)
    }
}

/// A STOCK row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Stock {
    /// S_QUANTITY (10..=100 at load).
    pub quantity: i32,
    /// S_YTD.
    pub ytd: i32,
    /// S_ORDER_CNT.
    pub order_cnt: i32,
    /// S_REMOTE_CNT.
    pub remote_cnt: i32,
    /// S_DIST_01 .. S_DIST_10.
    pub dist: [[u8; 24]; 10],
    /// S_DATA (26..50; 10% hold "ORIGINAL").
    pub data: Vec<u8>,
}

impl Stock {
    /// The encoded value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(320);
        w.i32(self.quantity).i32(self.ytd).i32(self.order_cnt);
        w.i32(self.remote_cnt);
        for d in &self.dist {
            w.fixed(d);
        }
        w.str(&self.data).finish()
    }
    /// Decodes a value written by [`Stock::encode`].
    ///
    /// # Errors
    /// The value is malformed.
    pub fn decode(v: &[u8]) -> Result<Stock, DecodeError> {
        let mut r = Reader::new(v);
        let (quantity, ytd, order_cnt, remote_cnt) = (r.i32()?, r.i32()?, r.i32()?, r.i32()?);
        let mut dist = [[0u8; 24]; 10];
        for d in &mut dist {
            *d = r.fixed()?;
        }
        let data = r.str()?;
        r.end()?;
        Ok(Stock {
            quantity,
            ytd,
            order_cnt,
            remote_cnt,
            dist,
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip() {
        let c = Customer {
            first: b"abcdefgh".to_vec(),
            last: b"BARBARBAR".to_vec(),
            data: vec![b'x'; 400],
            balance: -1000,
            ..Customer::default()
        };
        assert_eq!(Customer::decode(&c.encode()).unwrap(), c);
        let d = District {
            next_o_id: 3001,
            place: Warehouse {
                ytd: 3_000_000,
                ..Warehouse::default()
            },
        };
        assert_eq!(District::decode(&d.encode()).unwrap(), d);
        let s = Stock {
            quantity: 50,
            data: b"ORIGINAL".to_vec(),
            ..Stock::default()
        };
        assert_eq!(Stock::decode(&s.encode()).unwrap(), s);
        let mut bad = s.encode();
        bad.push(0);
        assert!(Stock::decode(&bad).is_err());
    }

    #[test]
    fn keys_nest_by_prefix() {
        let o = key::order(3, 4, 2101);
        assert!(o.starts_with(&key::district(3, 4)));
        assert_eq!(key::field(&o, 2), Some(2101));
        let c = key::customer_wdc(1, 2, b"ABLE", b"joe", 77);
        assert!(c.starts_with(&key::customer_wdc_prefix(1, 2, b"ABLE")));
        assert_eq!(key::customer_wdc_c_id(&c), Some(77));
        let names: std::collections::HashSet<_> = Table::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names.len(), Table::ALL.len());
    }
}
