//! The initial population (TPC-C clause 4.3.3.1), seeded and deterministic per warehouse.
//!
//! Each warehouse's rows come from random streams derived from `(seed, warehouse, table)`, so a
//! warehouse's content does not depend on which thread loads it or in which order: loader
//! threads take warehouses from a shared counter and call [`TxnStore::bulk_load`] with sorted
//! rows (per table, per warehouse or per district). ITEM is one more job.

use crate::error::TpccError;
use crate::rng::{last_name, Rng, C_LAST_LOAD_C};
use crate::schema::{
    key, Customer, District, History, Item, Order, OrderLine, Stock, Table, Tables, Warehouse,
    CARRIERS, CUSTOMERS, DISTRICTS, FIRST_NEW_ORDER, ITEMS, ORDERS,
};
use crate::store::{Row, TxnStore};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The logical timestamp of loaded rows (C_SINCE, O_ENTRY_D, H_DATE...). Run-time timestamps
/// are larger.
pub const LOAD_TIME: i64 = 1;

/// Most warehouses the key layout supports (loaded HISTORY keys are `i32` row numbers).
pub const MAX_WAREHOUSES: u32 = 50_000;

/// What to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct LoadConfig {
    /// Warehouses, 1..=[`MAX_WAREHOUSES`].
    pub warehouses: u32,
    /// Loader threads (>= 1).
    pub threads: usize,
    /// The seed: the same seed loads the same database.
    pub seed: u64,
}

/// How far a load has come (passed to the progress callback after every warehouse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadProgress {
    /// Warehouses fully loaded.
    pub warehouses_done: u32,
    /// Warehouses to load.
    pub warehouses: u32,
    /// Rows loaded so far, all tables.
    pub rows: u64,
    /// Since the load started.
    pub elapsed: Duration,
}

/// What a load did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoadReport {
    /// The configuration.
    pub config: LoadConfig,
    /// Rows per table.
    pub rows: BTreeMap<Table, u64>,
    /// Wall seconds, including [`TxnStore::finish_load`].
    pub seconds: f64,
    /// Warehouses per minute of wall time.
    pub warehouses_per_minute: f64,
    /// Rows per second of wall time.
    pub rows_per_second: f64,
}

/// Loads the initial TPC-C population into the (empty) tables of `store`.
///
/// # Errors
/// [`TpccError::Config`] for a bad configuration; the first store error of any loader thread.
pub fn load<S: TxnStore>(
    store: &S,
    tables: &Tables,
    cfg: &LoadConfig,
    progress: &(dyn Fn(&LoadProgress) + Sync),
) -> Result<LoadReport, TpccError> {
    check_config(cfg)?;
    let start = Instant::now();
    let counts = Mutex::new(BTreeMap::new());
    let next_job = AtomicU32::new(0);
    let (done, rows, failed) = (AtomicU32::new(0), AtomicU64::new(0), AtomicBool::new(false));
    let first_error: Mutex<Option<TpccError>> = Mutex::new(None);
    let jobs = cfg.warehouses + 1; // job 0: ITEM; job w: warehouse w
    let threads = cfg.threads.min(jobs as usize);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut local = Loader::new(store, tables, cfg.seed);
                while !failed.load(Relaxed) {
                    let job = next_job.fetch_add(1, Relaxed);
                    if job >= jobs {
                        break;
                    }
                    if let Err(e) = local.job(job) {
                        failed.store(true, Relaxed);
                        first_error.lock().get_or_insert(e);
                        break;
                    }
                    rows.fetch_add(local.take_rows(&counts), Relaxed);
                    if job > 0 {
                        progress(&LoadProgress {
                            warehouses_done: done.fetch_add(1, Relaxed) + 1,
                            warehouses: cfg.warehouses,
                            rows: rows.load(Relaxed),
                            elapsed: start.elapsed(),
                        });
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner() {
        return Err(e);
    }
    store.finish_load()?;
    Ok(report(cfg, counts.into_inner(), start.elapsed()))
}

fn check_config(cfg: &LoadConfig) -> Result<(), TpccError> {
    if !(1..=MAX_WAREHOUSES).contains(&cfg.warehouses) {
        return Err(TpccError::Config {
            field: "warehouses",
            value: u64::from(cfg.warehouses),
            expected: "1..=50000",
        });
    }
    if cfg.threads == 0 {
        return Err(TpccError::Config {
            field: "threads",
            value: 0,
            expected: "at least 1",
        });
    }
    Ok(())
}

fn report(cfg: &LoadConfig, rows: BTreeMap<Table, u64>, elapsed: Duration) -> LoadReport {
    let seconds = elapsed.as_secs_f64().max(1e-9);
    let total: u64 = rows.values().sum();
    #[expect(clippy::cast_precision_loss, reason = "row counts far below 2^52")]
    let rows_per_second = total as f64 / seconds;
    LoadReport {
        config: *cfg,
        rows,
        seconds,
        warehouses_per_minute: f64::from(cfg.warehouses) * 60.0 / seconds,
        rows_per_second,
    }
}

/// One loader thread's state.
struct Loader<'a, S: TxnStore> {
    store: &'a S,
    tables: &'a Tables,
    seed: u64,
    rows: BTreeMap<Table, u64>,
}

/// Stream identifiers (the second element of [`Rng::derive`]'s stream).
const STREAM_ITEM: u64 = 1;
const STREAM_WAREHOUSE: u64 = 2;
const STREAM_STOCK: u64 = 3;
const STREAM_DISTRICT: u64 = 4;
const STREAM_CUSTOMER: u64 = 5;
const STREAM_ORDER: u64 = 6;

impl<'a, S: TxnStore> Loader<'a, S> {
    fn new(store: &'a S, tables: &'a Tables, seed: u64) -> Self {
        Loader {
            store,
            tables,
            seed,
            rows: BTreeMap::new(),
        }
    }

    fn rng(&self, w: i32, stream: u64, sub: i32) -> Rng {
        let w = u64::try_from(w).expect("ids are positive");
        let sub = u64::try_from(sub).expect("ids are positive");
        Rng::derive(self.seed, &[w, stream, sub])
    }

    fn put(&mut self, table: Table, rows: &mut dyn Iterator<Item = Row>) -> Result<(), TpccError> {
        let n = self.store.bulk_load(self.tables.id(table), rows)?;
        *self.rows.entry(table).or_default() += n;
        Ok(())
    }

    fn take_rows(&mut self, into: &Mutex<BTreeMap<Table, u64>>) -> u64 {
        let mut total = 0;
        let mut into = into.lock();
        for (t, n) in std::mem::take(&mut self.rows) {
            *into.entry(t).or_default() += n;
            total += n;
        }
        total
    }

    fn job(&mut self, job: u32) -> Result<(), TpccError> {
        if job == 0 {
            let mut rng = self.rng(0, STREAM_ITEM, 0);
            return self.put(Table::Item, &mut (1..=ITEMS).map(|i| gen_item(&mut rng, i)));
        }
        let w = i32::try_from(job).expect("warehouses <= MAX_WAREHOUSES");
        let mut rng = self.rng(w, STREAM_WAREHOUSE, 0);
        let row = (
            key::warehouse(w),
            gen_place(&mut rng, 3_000_000 * 10).encode(),
        );
        self.put(Table::Warehouse, &mut std::iter::once(row))?;
        let mut rng = self.rng(w, STREAM_STOCK, 0);
        self.put(
            Table::Stock,
            &mut (1..=ITEMS).map(|i| gen_stock(&mut rng, w, i)),
        )?;
        let mut rng = self.rng(w, STREAM_DISTRICT, 0);
        self.put(
            Table::District,
            &mut (1..=DISTRICTS).map(|d| gen_district(&mut rng, w, d)),
        )?;
        for d in 1..=DISTRICTS {
            self.customers(w, d)?;
            self.orders(w, d)?;
        }
        Ok(())
    }

    /// CUSTOMER, CUSTOMER_WDC and HISTORY rows of one district.
    fn customers(&mut self, w: i32, d: i32) -> Result<(), TpccError> {
        let mut rng = self.rng(w, STREAM_CUSTOMER, d);
        let customers: Vec<Customer> = (1..=CUSTOMERS).map(|c| gen_customer(&mut rng, c)).collect();
        let mut index: Vec<Row> = (1..=CUSTOMERS)
            .zip(&customers)
            .map(|(c, r)| (key::customer_wdc(w, d, &r.last, &r.first, c), Vec::new()))
            .collect();
        index.sort_unstable();
        assert!(
            index.windows(2).all(|p| p[0].0 < p[1].0),
            "CUSTOMER_WDC keys are unique"
        );
        let rows = (1..=CUSTOMERS).zip(&customers);
        self.put(
            Table::Customer,
            &mut rows.map(|(c, r)| (key::customer(w, d, c), r.encode())),
        )?;
        self.put(Table::CustomerWdc, &mut index.into_iter())?;
        let first_pk = loaded_history_pk(w, d, 1);
        let history = (1..=CUSTOMERS).map(|c| {
            let h = History {
                customer: [c, d, w],
                district: [d, w],
                date: LOAD_TIME,
                amount: 1000,
                data: alnum(&mut rng, 12, 24),
            };
            (key::history(0, first_pk + c - 1), h.encode())
        });
        self.put(Table::History, &mut history.collect::<Vec<_>>().into_iter())
    }

    /// ORDER, ORDER_WDC, ORDER_LINE and NEW_ORDER rows of one district.
    fn orders(&mut self, w: i32, d: i32) -> Result<(), TpccError> {
        let mut rng = self.rng(w, STREAM_ORDER, d);
        let mut c_ids: Vec<i32> = (1..=CUSTOMERS).collect();
        for i in (1..c_ids.len()).rev() {
            let j = usize::try_from(rng.below(i as u64 + 1)).expect("below a usize");
            c_ids.swap(i, j);
        }
        let mut orders = Vec::with_capacity(ORDERS as usize);
        let mut lines = Vec::with_capacity(ORDERS as usize * 10);
        let mut index = Vec::with_capacity(ORDERS as usize);
        for (o, &c) in (1..=ORDERS).zip(&c_ids) {
            let delivered = o < FIRST_NEW_ORDER;
            let order = Order {
                c_id: c,
                entry_d: LOAD_TIME,
                carrier_id: if delivered { rng.int(1, CARRIERS) } else { 0 },
                ol_cnt: rng.int(5, 15),
                all_local: 1,
            };
            assert!((5..=15).contains(&order.ol_cnt));
            for n in 1..=order.ol_cnt {
                let line = gen_line(&mut rng, w, delivered);
                lines.push((key::order_line(w, d, o, n), line.encode()));
            }
            orders.push((key::order(w, d, o), order.encode()));
            index.push((key::order_wdc(w, d, c, o), Vec::new()));
        }
        index.sort_unstable();
        assert_eq!(orders.len(), 3000, "3,000 orders per district");
        debug_assert!(
            index.windows(2).all(|p| p[0].0 < p[1].0),
            "one index row per order"
        );
        self.put(Table::Order, &mut orders.into_iter())?;
        self.put(Table::OrderWdc, &mut index.into_iter())?;
        self.put(Table::OrderLine, &mut lines.into_iter())?;
        let new_orders = (FIRST_NEW_ORDER..=ORDERS).map(|o| (key::order(w, d, o), Vec::new()));
        self.put(Table::NewOrder, &mut new_orders.into_iter())
    }
}

/// The HISTORY key number (thread 0) of the row loaded for customer `c` of district `d` of
/// warehouse `w`: rows are numbered 1.. in (w, d, c) order.
#[must_use]
pub fn loaded_history_pk(w: i32, d: i32, c: i32) -> i32 {
    ((w - 1) * DISTRICTS + (d - 1)) * CUSTOMERS + c
}

fn alnum(rng: &mut Rng, lo: usize, hi: usize) -> Vec<u8> {
    let mut s = Vec::with_capacity(hi);
    rng.alnum(&mut s, lo, hi);
    s
}

fn fixed_alnum<const N: usize>(rng: &mut Rng) -> [u8; N] {
    let mut s = Vec::with_capacity(N);
    rng.alnum(&mut s, N, N);
    s.try_into().expect("exactly N characters")
}

fn fixed_digits<const N: usize>(rng: &mut Rng) -> [u8; N] {
    let mut s = Vec::with_capacity(N);
    rng.digits(&mut s, N, N);
    s.try_into().expect("exactly N digits")
}

fn zip(rng: &mut Rng) -> [u8; 9] {
    let mut s = Vec::with_capacity(9);
    rng.zip(&mut s);
    s.try_into().expect("a zip has 9 characters")
}

fn gen_item(rng: &mut Rng, i: i32) -> Row {
    let item = Item {
        im_id: rng.int(1, 10_000),
        name: alnum(rng, 14, 24),
        price: i64::from(rng.int(100, 10_000)),
        data: rng.data_with_original(26, 50),
    };
    (key::item(i), item.encode())
}

/// A warehouse (or a district's place fields) with `ytd` cents.
fn gen_place(rng: &mut Rng, ytd: i64) -> Warehouse {
    Warehouse {
        name: alnum(rng, 6, 10),
        address: [alnum(rng, 10, 20), alnum(rng, 10, 20), alnum(rng, 10, 20)],
        state: fixed_alnum(rng),
        zip: zip(rng),
        tax_bp: rng.int(0, 2000),
        ytd,
    }
}

fn gen_district(rng: &mut Rng, w: i32, d: i32) -> Row {
    let district = District {
        place: gen_place(rng, 3_000_000),
        next_o_id: ORDERS + 1,
    };
    (key::district(w, d), district.encode())
}

fn gen_stock(rng: &mut Rng, w: i32, i: i32) -> Row {
    let mut dist = [[0u8; 24]; 10];
    for d in &mut dist {
        *d = fixed_alnum(rng);
    }
    let stock = Stock {
        quantity: rng.int(10, 100),
        ytd: 0,
        order_cnt: 0,
        remote_cnt: 0,
        dist,
        data: rng.data_with_original(26, 50),
    };
    (key::stock(w, i), stock.encode())
}

fn gen_customer(rng: &mut Rng, c: i32) -> Customer {
    let last_num = if c <= 1000 {
        c - 1
    } else {
        rng.nurand(255, 0, 999, C_LAST_LOAD_C)
    };
    Customer {
        first: alnum(rng, 8, 16),
        middle: *b"OE",
        last: last_name(last_num),
        address: [alnum(rng, 10, 20), alnum(rng, 10, 20), alnum(rng, 10, 20)],
        state: fixed_alnum(rng),
        zip: zip(rng),
        phone: fixed_digits(rng),
        since: LOAD_TIME,
        credit: if rng.below(10) == 0 { *b"BC" } else { *b"GC" },
        credit_lim: 5_000_000,
        discount_bp: rng.int(0, 5000),
        balance: -1000,
        ytd_payment: 1000,
        payment_cnt: 1,
        delivery_cnt: 0,
        data: alnum(rng, 300, 500),
    }
}

fn gen_line(rng: &mut Rng, w: i32, delivered: bool) -> OrderLine {
    OrderLine {
        i_id: rng.int(1, ITEMS),
        supply_w_id: w,
        delivery_d: if delivered { LOAD_TIME } else { 0 },
        quantity: 5,
        amount: if delivered {
            0
        } else {
            i64::from(rng.int(1, 999_999))
        },
        dist_info: fixed_alnum(rng),
    }
}

/// Bytes of pages one warehouse adds to the load, in place (uncompressed), rounded up:
/// `db_bytes` after loading 1 and 4 warehouses was 97.5 and 361.4 MiB (`nowa tpcc
/// --warehouses W --transactions 1 --device mem --pool 2GiB --out f.json`; append-biased
/// leaves split at the insertion point, docs/design.md section 7), 88.0 MiB per warehouse and
/// 9.5 MiB for the rest (ITEM, the catalog).
pub const LOADED_WAREHOUSE_BYTES: u64 = 88 << 20;
/// Bytes of pages the load adds once (ITEM, the catalog), rounded up.
pub const LOADED_SHARED_BYTES: u64 = 10 << 20;
/// Estimated bytes of pages after loading `warehouses` (in place, uncompressed).
#[must_use]
pub fn loaded_bytes(warehouses: u32) -> u64 {
    u64::from(warehouses) * LOADED_WAREHOUSE_BYTES + LOADED_SHARED_BYTES
}
