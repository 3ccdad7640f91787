//! NoWA compensation timing (`OopConfig::defer_compensation`): compensation writes are issued
//! at the latest safe point before the SSD would need to garbage collect (estimated from the
//! device capacity and its OP), not immediately for the whole group. On a simulated
//! conventional SSD (7% OP, 1 MiB GC unit = one aligned group of 4 zones, WAL on a log
//! device): the SSD never copies a page in its own GC with either timing, while deferring
//! writes fewer compensation pages (the siblings' pages keep dying while they wait). Every
//! value survives, and a restart (the waiting list is in memory only) stays consistent.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_device::{BlockDevice, MemDevice, SimConfig, SimDevice, SimMode};
use nowa_engine::{Compression, Config, Durability, Engine, OopConfig, Stats};
use nowa_flash::FtlConfig;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

const ZONES_PER_GROUP: u64 = 4;

#[path = "common/oop_store.rs"]
mod oop_store;
use oop_store::{builder, Slot};

struct Outcome {
    stats: Stats,
    ssd_gc_pages: u64,
    max_pending: usize,
}

fn run(defer: bool, background_gc: bool) -> Outcome {
    let ftl = FtlConfig {
        logical_pages: 16384, // 64 MiB
        op: 0.07,
        pages_per_block: 256,
        blocks_per_superblock: 1, // GC unit 1 MiB
        ..FtlConfig::default()
    };
    let dev = Arc::new(SimDevice::new(SimConfig::new(SimMode::Conventional, ftl)).unwrap());
    let unit = u64::from(dev.layout().unit_pages) * 4096;
    let log: Arc<dyn BlockDevice> = Arc::new(MemDevice::new(8 << 20));
    let cfg = Config {
        pool_bytes: 128 * 4096,
        durability: Durability::Async,
        wal_limit_bytes: Some(512 << 10),
        ..Config::default()
    };
    let slot: Slot = Arc::new(Mutex::new(None));
    let b = builder(
        OopConfig {
            zone_bytes: Some(unit / ZONES_PER_GROUP),
            open_zones: u32::try_from(ZONES_PER_GROUP).unwrap(),
            nowa: true,
            defer_compensation: defer,
            ssd_op: 0.07,
            background_gc,
            compression: Compression::Off,
            ..OopConfig::default()
        },
        slot.clone(),
    );
    let e = Engine::create_with_wal(dev.clone(), Some(log.clone()), cfg.clone(), &b).unwrap();
    let keys = 120_000u64;
    let mut model = BTreeMap::new();
    for k in 0..keys {
        e.put(&k.to_be_bytes(), &[7u8; 100]).unwrap();
        model.insert(k, vec![7u8; 100]);
    }
    let cap = dev.geometry().capacity;
    let mut x = 1u64;
    let mut i = 0u64;
    let mut max_pending = 0;
    while dev.counters().host_bytes_written < 4 * cap {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Skewed: 80% of the updates to 20% of the keys.
        let k = if x % 10 < 8 { x % (keys / 5) } else { x % keys };
        i += 1;
        let v = i.to_le_bytes().repeat(12);
        e.put(&k.to_be_bytes(), &v).unwrap();
        model.insert(k, v);
        if i % 512 == 0 {
            let p = slot.lock().as_ref().unwrap().pending_compensation_groups();
            max_pending = max_pending.max(p);
        }
    }
    let stats = e.stats();
    let store = slot.lock().clone().unwrap();
    store.check_consistency().unwrap();
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(
            e.get(&k.to_be_bytes()).unwrap().as_ref(),
            Some(v),
            "key {k}"
        );
    }
    // Crash restart: the waiting groups become ordinary groups again.
    drop(e);
    drop(store);
    let e = Engine::open_with_wal(dev.clone(), Some(log), cfg, &b).unwrap();
    slot.lock().as_ref().unwrap().check_consistency().unwrap();
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(
            e.get(&k.to_be_bytes()).unwrap().as_ref(),
            Some(v),
            "key {k}"
        );
    }
    e.close().unwrap();
    Outcome {
        stats,
        ssd_gc_pages: dev.ftl_counters().gc_pages,
        max_pending,
    }
}

#[test]
fn deferred_compensation_writes_less_and_keeps_ssd_waf_one() {
    let now = run(false, false);
    let late = run(true, false);
    for (name, o) in [("immediate", &now), ("deferred", &late)] {
        eprintln!(
            "{name}: gc pages {} compensation pages {} db_waf {:.3} ssd gc pages {} max waiting groups {}",
            o.stats.gc_page_writes,
            o.stats.compensation_page_writes,
            o.stats.db_waf,
            o.ssd_gc_pages,
            o.max_pending
        );
    }
    assert!(now.stats.compensation_page_writes > 0);
    assert_eq!(now.max_pending, 0);
    assert!(late.max_pending > 1, "compensation must actually wait");
    assert_eq!(now.ssd_gc_pages, 0, "immediate: SSD GC copies");
    assert_eq!(late.ssd_gc_pages, 0, "deferred: SSD GC copies");
    assert!(
        late.stats.compensation_page_writes < now.stats.compensation_page_writes,
        "deferring must save compensation writes"
    );
}

/// The same with the background GC thread (it issues due compensation writes too).
#[test]
fn deferred_compensation_with_background_gc() {
    let o = run(true, true);
    eprintln!(
        "deferred + bg: compensation pages {} ssd gc pages {} rounds fg {} bg {}",
        o.stats.compensation_page_writes,
        o.ssd_gc_pages,
        o.stats.gc_rounds_foreground,
        o.stats.gc_rounds_background
    );
    assert_eq!(o.ssd_gc_pages, 0, "SSD GC copies");
}
