//! GDT garbage collection (how-to-write-to-ssds section 4.2): "GC greedily selects victim
//! zones until their cumulative invalid pages free the space of one zone. All valid pages in
//! these victims are loaded, sorted in descending EDT, grouped and packed". With GDT a GC
//! round takes several victims (bounded by the free zones) and relocates them together;
//! without GDT it takes one. Either way every value survives, the zone metadata equals the
//! mapping, and the database reopens cleanly.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{SimDevice, SimMode};
use nowa_engine::{Config, Engine, OopConfig, Stats};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

#[path = "common/oop_store.rs"]
mod oop_store;
use oop_store::{assert_model, builder, small_engine_cfg, Slot};

fn cfg() -> Config {
    small_engine_cfg()
}

/// Load, then skewed updates (80% to a fifth of the keys, so deathtimes differ and the
/// write histories mean something); foreground GC only, so the write sequence is seeded.
fn run(gdt: bool) -> Stats {
    let dev = Arc::new(SimDevice::with_capacity(10 << 20, 0.1, SimMode::Conventional).unwrap());
    let slot: Slot = Arc::new(Mutex::new(None));
    let ocfg = OopConfig {
        zone_bytes: Some(128 << 10),
        open_zones: 2,
        gdt,
        background_gc: false,
        gc_reserve_zones: 6,
        ..OopConfig::default()
    };
    let b = builder(ocfg, slot.clone());
    let e = Engine::create_with_store(dev.clone(), cfg(), &b).unwrap();
    let keys = 20_000u64;
    let mut model = BTreeMap::new();
    for k in 0..keys {
        e.put(&k.to_be_bytes(), &[1u8; 100]).unwrap();
        model.insert(k, vec![1u8; 100]);
    }
    let mut x = 99u64;
    for i in 0..60_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = if x % 10 < 8 { x % (keys / 5) } else { x % keys };
        let v = i.to_le_bytes().repeat(12);
        e.put(&k.to_be_bytes(), &v).unwrap();
        model.insert(k, v);
    }
    let s = e.stats();
    let store = slot.lock().clone().unwrap();
    store.check_consistency().unwrap();
    assert_model(&e, &model);
    e.close().unwrap();
    let e = Engine::open_with_store(dev, cfg(), &b).unwrap();
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    assert_model(&e, &model);
    e.close().unwrap();
    s
}

#[test]
fn gdt_gc_rounds_take_several_victims_and_keep_every_page() {
    let plain = run(false);
    let gdt = run(true);
    eprintln!(
        "plain: rounds {} zones {} db_waf {:.3}; gdt: rounds {} zones {} db_waf {:.3}",
        plain.gc_rounds_foreground,
        plain.zones_reclaimed,
        plain.db_waf,
        gdt.gc_rounds_foreground,
        gdt.zones_reclaimed,
        gdt.db_waf
    );
    assert!(plain.gc_rounds_foreground > 20, "{plain:?}");
    // Without GDT: one victim per round.
    assert_eq!(plain.zones_reclaimed, plain.gc_rounds_foreground);
    // With GDT: rounds relocate several victims together.
    assert!(gdt.gc_rounds_foreground > 20, "{gdt:?}");
    assert!(
        gdt.zones_reclaimed as f64 >= 1.5 * gdt.gc_rounds_foreground as f64,
        "GDT GC should take several victims per round: {gdt:?}"
    );
}
