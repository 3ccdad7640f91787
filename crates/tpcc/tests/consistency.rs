//! The consistency check holds on a fresh load and names each broken condition.

use nowa_tpcc::schema::{key, District, OrderLine, Table};
use nowa_tpcc::store::{Transaction, TxnStore};
use nowa_tpcc::{check_consistency, load, LoadConfig, MemStore, Tables, Violation};

const SEED: u64 = 0xc0de;

fn loaded() -> (MemStore, Tables) {
    let store = MemStore::new();
    let tables = Tables::open(&store).expect("open tables");
    let cfg = LoadConfig {
        warehouses: 1,
        threads: 2,
        seed: SEED,
    };
    let r = load(&store, &tables, &cfg, &|_| {}).expect("load");
    assert_eq!(r.rows[&Table::Stock], 100_000);
    assert_eq!(r.rows[&Table::Customer], 30_000);
    assert_eq!(r.rows[&Table::NewOrder], 9_000);
    assert_eq!(r.rows[&Table::History], 30_000);
    (store, tables)
}

#[test]
fn a_fresh_load_is_consistent() {
    println!("seed {SEED}");
    let (store, tables) = loaded();
    let c = check_consistency(&store, &tables, 1, true).unwrap();
    assert!(c.is_consistent(), "{:?}", c.violations);
    assert_eq!(c.rows[&Table::Order], 30_000);
    assert_eq!(c.rows[&Table::OrderWdc], 30_000);
    assert_eq!(c.rows[&Table::CustomerWdc], 30_000);
    let lines = c.rows[&Table::OrderLine];
    assert!((280_000..320_000).contains(&lines), "{lines}");
}

#[test]
fn each_broken_condition_is_reported() {
    println!("seed {SEED}");
    let (store, tables) = loaded();
    let mut txn = store.begin().unwrap();
    // District 1: D_YTD off by one cent (3.3.2.1, 3.3.2.9).
    let dk = key::district(1, 1);
    let mut d =
        District::decode(&txn.get(tables.id(Table::District), &dk).unwrap().unwrap()).unwrap();
    d.place.ytd += 1;
    txn.put(tables.id(Table::District), &dk, &d.encode())
        .unwrap();
    // District 2: D_NEXT_O_ID ahead of max(O_ID) (3.3.2.2).
    let dk = key::district(1, 2);
    let mut d =
        District::decode(&txn.get(tables.id(Table::District), &dk).unwrap().unwrap()).unwrap();
    d.next_o_id += 1;
    txn.put(tables.id(Table::District), &dk, &d.encode())
        .unwrap();
    // District 3: a NEW_ORDER row missing in the middle (3.3.2.3, 3.3.2.5).
    assert!(txn
        .delete(tables.id(Table::NewOrder), &key::order(1, 3, 2500))
        .unwrap());
    // District 4: a lost ORDER_LINE row (3.3.2.4, 3.3.2.6).
    assert!(txn
        .delete(tables.id(Table::OrderLine), &key::order_line(1, 4, 10, 1))
        .unwrap());
    // District 5: an undelivered line with a delivery date (3.3.2.7).
    let lk = key::order_line(1, 5, 2900, 1);
    let mut l =
        OrderLine::decode(&txn.get(tables.id(Table::OrderLine), &lk).unwrap().unwrap()).unwrap();
    l.delivery_d = 99;
    txn.put(tables.id(Table::OrderLine), &lk, &l.encode())
        .unwrap();
    // District 6: an ORDER without its ORDER_WDC row.
    let wdc = tables.id(Table::OrderWdc);
    let row = txn
        .scan(
            wdc,
            &key::district(1, 6),
            None,
            nowa_tpcc::ScanOrder::Forward,
            1,
        )
        .unwrap();
    assert!(txn.delete(wdc, &row[0].0).unwrap());
    txn.commit().unwrap();

    let c = check_consistency(&store, &tables, 1, true).unwrap();
    let v = &c.violations;
    println!("{v:#?}");
    let has = |f: &dyn Fn(&Violation) -> bool| v.iter().any(f);
    assert!(has(&|x| matches!(x, Violation::WarehouseYtd { w: 1, .. })));
    assert!(has(&|x| matches!(
        x,
        Violation::HistoryYtd { w: 1, d: 1, .. }
    )));
    assert!(has(&|x| matches!(
        x,
        Violation::NextOrderId {
            d: 2,
            next_o_id: 3002,
            ..
        }
    )));
    assert!(has(&|x| matches!(
        x,
        Violation::NewOrderGap {
            d: 3,
            rows: 899,
            ..
        }
    )));
    assert!(has(&|x| matches!(
        x,
        Violation::CarrierVsNewOrder { d: 3, o: 2500, .. }
    )));
    assert!(has(&|x| matches!(
        x,
        Violation::OrderLineTotal { d: 4, .. }
    )));
    assert!(has(&|x| matches!(
        x,
        Violation::OrderLines { d: 4, o: 10, .. }
    )));
    assert!(has(&|x| matches!(
        x,
        Violation::DeliveryDate {
            d: 5,
            o: 2900,
            ol_number: 1,
            ..
        }
    )));
    assert!(has(&|x| matches!(
        x,
        Violation::Index {
            table: Table::OrderWdc,
            d: 6,
            ..
        }
    )));
    assert_eq!(v.len(), 9, "exactly the conditions broken above");
}
