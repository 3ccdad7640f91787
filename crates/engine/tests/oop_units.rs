//! Out-of-place mechanisms one by one: best-fit page packing (no page crosses a slot, every
//! page reads back with one 4 KiB read), NoWA keeping a simulated conventional SSD free of GC
//! copies over a long run (8x its capacity), ZNS, GDT (Figure 5; initial writes grouped by
//! index id; never-rewritten pages first in GC order; EDT ranges reassigned after GC), the
//! separate log device.

use nowa_device::{BlockDevice, MemDevice, SimConfig, SimDevice, SimMode};
use nowa_engine::oop::{
    closest_zone, compress_page, decompress_page, edt, gc_order, gdt_groups, gdt_split, pack,
    SLOT_ENTRY, SLOT_HDR,
};
use nowa_engine::{
    out_of_place_store, Compression, Config, Durability, Engine, EngineError, OopConfig, PAGE_SIZE,
};
use nowa_flash::FtlConfig;
use std::sync::Arc;

const ZONES_PER_GROUP: u64 = 4;

#[test]
fn packing_never_crosses_a_slot_and_is_best_fit() {
    let mut x = 12345u64;
    for round in 0..300 {
        let n = 1 + round % 64;
        let sizes: Vec<(usize, bool)> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let raw = x % 17 == 0;
                let s = if raw {
                    PAGE_SIZE
                } else {
                    SLOT_ENTRY + 20 + (x % 2500) as usize
                };
                (s, raw)
            })
            .collect();
        let slots = pack(&sizes);
        let mut seen = vec![false; n];
        for (raw, members) in &slots {
            if *raw {
                assert_eq!(members.len(), 1);
            } else {
                let used: usize = members.iter().map(|&m| sizes[m].0).sum();
                assert!(SLOT_HDR + used <= PAGE_SIZE, "slot overflows: {used}");
            }
            for &m in members {
                assert!(!seen[m], "page packed twice");
                seen[m] = true;
            }
        }
        assert!(seen.iter().all(|&s| s), "a page was dropped");
        // Best fit uses no more slots than items / a trivial bound, and small pages share.
        let small = sizes.iter().filter(|s| !s.1 && s.0 < 900).count();
        let packed_slots = slots.iter().filter(|s| !s.0).count();
        if small >= 8 {
            assert!(packed_slots < sizes.iter().filter(|s| !s.1).count());
        }
        // No cap of two pages per slot.
        if sizes.iter().filter(|s| !s.1 && s.0 < 300).count() >= 6 {
            assert!(slots.iter().any(|s| s.1.len() > 2));
        }
    }
}

#[test]
fn compression_round_trip_and_incompressible_pages_stay_raw() {
    let mut page = vec![0u8; PAGE_SIZE];
    for (i, b) in page.iter_mut().enumerate() {
        *b = u8::try_from(i % 13).unwrap();
    }
    for c in [Compression::Lz4, Compression::Zstd] {
        let (codec, data) = compress_page(&page, c, 1);
        assert_ne!(codec, 0, "{c:?} should compress a patterned page");
        assert!(data.len() < PAGE_SIZE / 4);
        let mut out = vec![0u8; PAGE_SIZE];
        decompress_page(codec, &data, &mut out).unwrap();
        assert_eq!(out, page);
    }
    let mut x = 99u64;
    for b in page.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x.to_le_bytes()[0];
    }
    let (codec, data) = compress_page(&page, Compression::Lz4, 1);
    assert_eq!(codec, 0, "random page stored raw");
    assert_eq!(data, page);
}

/// Every key reads back through the packed slots (each page: one 4 KiB device read).
#[test]
fn packed_pages_read_back_with_one_read_each() {
    let dev = Arc::new(SimDevice::with_capacity(16 << 20, 0.1, SimMode::Conventional).unwrap());
    let cfg = Config {
        pool_bytes: 64 * 4096,
        durability: Durability::Async,
        wal_limit_bytes: Some(256 << 10),
        ..Config::default()
    };
    let b = out_of_place_store(OopConfig {
        zone_bytes: Some(256 << 10),
        compression: Compression::Lz4,
        ..OopConfig::default()
    });
    let e = Engine::create_with_store(dev.clone(), cfg.clone(), &b).unwrap();
    for k in 0..20_000u64 {
        e.put(
            &k.to_be_bytes(),
            format!("value-{k:08}-aaaaaaaaaaaaaaaa").as_bytes(),
        )
        .unwrap();
    }
    e.close().unwrap();
    let e = Engine::open_with_store(dev.clone(), cfg, &b).unwrap();
    let reads0 = dev.counters().host_bytes_read;
    let pr0 = e.stats().page_reads;
    for k in 0..20_000u64 {
        assert_eq!(
            e.get(&k.to_be_bytes()).unwrap().unwrap(),
            format!("value-{k:08}-aaaaaaaaaaaaaaaa").as_bytes()
        );
    }
    let s = e.stats();
    let bytes = dev.counters().host_bytes_read - reads0;
    assert!(s.page_reads > pr0);
    assert_eq!(
        bytes,
        (s.page_reads - pr0) * 4096,
        "one 4 KiB read per page miss"
    );
    assert!(s.compression_ratio <= 1.0);
}

/// NoWA + aligned zones + WAL on a log device: the simulated SSD never copies a page in its
/// own GC, even though the device is written many times over.
#[test]
fn nowa_keeps_the_ssd_free_of_gc_copies() {
    let ftl = FtlConfig {
        logical_pages: 16384, // 64 MiB
        op: 0.07,
        pages_per_block: 256,
        blocks_per_superblock: 1, // GC unit 1 MiB
        ..FtlConfig::default()
    };
    let sim = SimConfig::new(SimMode::Conventional, ftl);
    let dev = Arc::new(SimDevice::new(sim).unwrap());
    let unit = u64::from(dev.layout().unit_pages) * 4096;
    assert_eq!(unit, 1 << 20);
    let log: Arc<dyn BlockDevice> = Arc::new(MemDevice::new(8 << 20));
    let cfg = Config {
        pool_bytes: 128 * 4096,
        durability: Durability::Async,
        wal_limit_bytes: Some(512 << 10),
        ..Config::default()
    };
    let b = out_of_place_store(OopConfig {
        zone_bytes: Some(unit / ZONES_PER_GROUP),
        open_zones: u32::try_from(ZONES_PER_GROUP).unwrap(),
        nowa: true,
        compression: Compression::Off,
        ..OopConfig::default()
    });
    let e = Engine::create_with_wal(dev.clone(), Some(log.clone()), cfg.clone(), &b).unwrap();
    let keys = 120_000u64;
    for k in 0..keys {
        e.put(&k.to_be_bytes(), &[7u8; 100]).unwrap();
    }
    let cap = dev.geometry().capacity;
    let mut x = 1u64;
    let mut i = 0u64;
    let mut mid: Option<(u64, u64)> = None;
    while dev.counters().host_bytes_written < 8 * cap {
        if mid.is_none() && dev.counters().host_bytes_written >= 4 * cap {
            let c = dev.ftl_counters();
            mid = Some((c.host_pages, c.gc_pages));
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Skewed: 80% of the updates to 20% of the keys.
        let k = if x % 10 < 8 { x % (keys / 5) } else { x % keys };
        i += 1;
        e.put(&k.to_be_bytes(), &i.to_le_bytes().repeat(12))
            .unwrap();
    }
    let s = e.stats();
    let c = dev.ftl_counters();
    assert!(
        s.gc_page_writes + s.compensation_page_writes > 0,
        "DB GC ran"
    );
    let waf = dev.counters().waf().unwrap();
    eprintln!(
        "host {} MB, SSD WAF {waf:.4}, ftl {c:?}, db_waf {:.2}",
        dev.counters().host_bytes_written >> 20,
        s.db_waf
    );
    assert!(waf <= 1.0001, "SSD WAF {waf}");
    // Steady state (the second half of the run): no GC copies at all, and every superblock
    // the SSD reclaimed was completely invalid.
    let (h0, g0) = mid.unwrap();
    eprintln!(
        "second half: {} host pages, {} SSD GC copies",
        c.host_pages - h0,
        c.gc_pages - g0
    );
    assert_eq!(c.gc_pages, 0, "SSD GC copied pages");
    let hist = dev.with_ftl(|f| f.victim_histogram().buckets.clone());
    assert!(
        hist[0] > 0 && hist[1..].iter().all(|&n| n == 0),
        "victims: {hist:?}"
    );
    e.close().unwrap();
    let e = Engine::open_with_wal(dev.clone(), Some(log), cfg.clone(), &b).unwrap();
    for k in [0u64, keys / 2, keys - 1] {
        assert!(
            e.get(&k.to_be_bytes()).unwrap().is_some(),
            "key {k} after reopen"
        );
    }
    drop(e);
    // Opening without the log device is a configuration error, not a panic.
    match Engine::open_with_store(dev, cfg, &b) {
        Err(EngineError::Config(_) | EngineError::NoSuperblock { .. }) => {}
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("opened without its log device"),
    }
}

/// ZNS backend: zone size = device zone size, zone append, zone reset after GC, the device's
/// open-zone limit; superblock/WAL/snapshots on a conventional log device. SSD WAF exactly 1,
/// and a crash (drop without close) with partially written zones recovers and keeps going.
#[test]
fn zns_backend_has_ssd_waf_exactly_one_and_recovers() {
    let dev = Arc::new(
        SimDevice::with_capacity(48 << 20, 0.0, SimMode::Zoned { max_open_zones: 3 }).unwrap(),
    );
    let zone = dev.geometry().zone_size.unwrap();
    let log: Arc<dyn BlockDevice> = Arc::new(MemDevice::new(8 << 20));
    let cfg = Config {
        pool_bytes: 128 * 4096,
        durability: Durability::Async,
        wal_limit_bytes: Some(512 << 10),
        ..Config::default()
    };
    let b = out_of_place_store(OopConfig {
        zone_bytes: Some(zone),
        open_zones: 8, // clamped to the device's 3
        compression: Compression::Lz4,
        ..OopConfig::default()
    });
    // Without a log device: a clear configuration error.
    assert!(matches!(
        Engine::create_with_store(dev.clone(), cfg.clone(), &b),
        Err(EngineError::Config(_))
    ));
    let e = Engine::create_with_wal(dev.clone(), Some(log.clone()), cfg.clone(), &b).unwrap();
    let keys = 100_000u64;
    let val = |k: u64, v: u64| format!("{k:012}-{v:012}-nowa-nowa-nowa-nowa").into_bytes();
    for k in 0..keys {
        e.put(&k.to_be_bytes(), &val(k, 0)).unwrap();
    }
    let mut model: Vec<u64> = vec![0; usize::try_from(keys).unwrap()];
    let cap = dev.geometry().capacity;
    let mut x = 5u64;
    let mut i = 0u64;
    while dev.counters().host_bytes_written < 4 * cap {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = if x % 10 < 8 { x % (keys / 5) } else { x % keys };
        i += 1;
        e.put(&k.to_be_bytes(), &val(k, i)).unwrap();
        model[usize::try_from(k).unwrap()] = i;
    }
    e.sync().unwrap();
    let s = e.stats();
    assert!(s.zones_reclaimed > 0, "DB GC reset zones");
    let c = dev.counters();
    assert_eq!(
        c.media_bytes_written,
        Some(c.host_bytes_written),
        "ZNS: SSD WAF exactly 1"
    );
    drop(e); // crash: open zones stay partially written
    let e = Engine::open_with_wal(dev.clone(), Some(log.clone()), cfg.clone(), &b).unwrap();
    for k in (0..keys).step_by(97) {
        assert_eq!(
            e.get(&k.to_be_bytes()).unwrap().unwrap(),
            val(k, model[usize::try_from(k).unwrap()]),
            "key {k}"
        );
    }
    // Keeps working within the open-zone limit after recovery.
    for j in 0..50_000u64 {
        let k = j % keys;
        e.put(&k.to_be_bytes(), &val(k, i + j + 1)).unwrap();
    }
    e.close().unwrap();
    let c = dev.counters();
    assert_eq!(c.media_bytes_written, Some(c.host_bytes_written));
}

/// Figure 5 of how-to-write-to-ssds.md: eight pages with deathtimes 1, 2, 4, 6, 35, 50, 60, 74
/// written at once into two zones of four pages. GDT groups equal deathtimes together, so at
/// LSN 10 zone 0 holds no valid page (no copy needed) while random placement leaves both
/// zones half valid.
#[test]
fn gdt_groups_equal_deathtimes_together_figure_5() {
    let deathtimes = [60u64, 2, 35, 74, 1, 50, 6, 4]; // arrival order is arbitrary
    let groups = gdt_split(&deathtimes, 2);
    assert_eq!(groups.len(), 2);
    let zone = |g: &Vec<usize>| {
        let mut v: Vec<u64> = g.iter().map(|&i| deathtimes[i]).collect();
        v.sort();
        v
    };
    assert_eq!(zone(&groups[0]), vec![1, 2, 4, 6]);
    assert_eq!(zone(&groups[1]), vec![35, 50, 60, 74]);
    // At LSN 10 the first zone is entirely invalid: GC frees it without copying.
    let valid_at_10 = |g: &Vec<usize>| g.iter().filter(|&&i| deathtimes[i] > 10).count();
    assert_eq!(valid_at_10(&groups[0]), 0);
    assert_eq!(valid_at_10(&groups[1]), 4);
    // Random placement of the same pages (arrival order, 4 per zone): 50% valid in each.
    assert_eq!(deathtimes[..4].iter().filter(|&&d| d > 10).count(), 3);
    // EDT from the write history: now + mean interval; fewer than two writes = coldest.
    assert_eq!(edt(&[0, 0, 0, 7], 7), u64::MAX);
    assert_eq!(edt(&[10, 20, 30, 40], 40), 50);
    assert_eq!(edt(&[0, 0, 100, 400], 400), 700);
}

/// Section 4.2: "For initial writes, pages are grouped by B-tree index ID". Pages written for
/// the first time have no EDT: they form one group per index id and never share a group
/// with rewritten pages; the rewritten pages are cut by EDT into the remaining groups, hottest
/// first, initial-write groups last.
#[test]
fn gdt_initial_writes_grouped_by_index_id() {
    const M: u64 = u64::MAX;
    // 8 rewritten pages (finite EDT) and 4 initial writes of index 0 (EDT MAX).
    let edts = [60u64, M, 2, 35, M, 74, 1, M, 50, 6, M, 4];
    let index = [
        None,
        Some(0),
        None,
        None,
        Some(0),
        None,
        None,
        Some(0),
        None,
        None,
        Some(0),
        None,
    ];
    let groups = gdt_groups(&edts, &index, 3);
    assert_eq!(groups.len(), 3);
    let vals = |g: &Vec<usize>| {
        let mut v: Vec<u64> = g.iter().map(|&i| edts[i]).collect();
        v.sort();
        v
    };
    assert_eq!(vals(&groups[0]), vec![1, 2, 4, 6]);
    assert_eq!(vals(&groups[1]), vec![35, 50, 60, 74]);
    assert_eq!(
        groups[2],
        vec![1, 4, 7, 10],
        "initial writes: one group, last"
    );
    // A rewritten page that happens to have EDT MAX (one write in its history) is not an
    // initial write: it stays with the EDT-sorted pages.
    let g = gdt_groups(&[M, 5, M], &[None, None, Some(0)], 2);
    assert_eq!(g, vec![vec![1, 0], vec![2]]);
    // Two index ids: two initial groups, never mixed, whatever k is.
    let g = gdt_groups(&[M, M, M, M], &[Some(1), Some(0), Some(1), Some(0)], 1);
    assert_eq!(g, vec![vec![1, 3], vec![0, 2]]);
    // Without initial writes it is the plain EDT split.
    let plain = [60u64, 2, 35, 74, 1, 50, 6, 4];
    assert_eq!(gdt_groups(&plain, &[None; 8], 2), gdt_split(&plain, 2));
    // Too few pages for k groups: one group.
    assert_eq!(gdt_groups(&[3, 1, 2], &[None; 3], 2), vec![vec![0, 1, 2]]);
}

/// Section 4.2: "Pages that are never rewritten are assigned the maximum EDT to be treated as
/// the coldest data", and GC relocates valid pages in descending EDT order.
#[test]
fn gdt_gc_order_never_rewritten_first() {
    const M: u64 = u64::MAX;
    // Write histories (oldest first, 0 = empty) of five valid pages of a victim zone.
    let histories = [
        [0, 0, 10, 20],     // rewritten every 10: EDT 30
        [0, 0, 0, 15],      // written once, never rewritten: coldest
        [1, 2, 3, 4],       // hot: EDT 5
        [0, 0, 0, 3],       // written once
        [0, 100, 200, 300], // EDT 400
    ];
    let edts: Vec<u64> = histories
        .iter()
        .map(|wh| edt(wh, wh.iter().copied().max().unwrap()))
        .collect();
    assert_eq!(edts, vec![30, M, 5, M, 400]);
    // Never-rewritten pages first (stable among themselves), then descending EDT.
    assert_eq!(gc_order(&edts), vec![1, 3, 4, 0, 2]);
    // Without GDT every EDT is MAX: the order is unchanged.
    assert_eq!(gc_order(&[M; 4]), vec![0, 1, 2, 3]);
}

/// Section 4.2 "Reassigning EDT ranges after GC": a zone GC just emptied (reopened, no pages
/// yet) takes the minimum EDT range: the hottest group of the next batch (groups are written
/// hottest first) goes there, while colder groups keep following the zones whose average EDT
/// is closest.
#[test]
fn gdt_edt_ranges_reassigned_after_gc() {
    // Open zones: a warm zone (avg 100) and a cold one (avg 1000).
    let mut zones = vec![(100.0 * 10.0, 10u64), (1000.0 * 10.0, 10u64)];
    assert_eq!(closest_zone(&zones, 120.0), Some(0));
    assert_eq!(closest_zone(&zones, 900.0), Some(1));
    // GC reclaims the cold zone and it is opened again: empty.
    zones[1] = (0.0, 0);
    // The next batch, cut by EDT, is written hottest first.
    let batch = [1000u64, 12, 950, 15, 11, 990, 14, 13];
    let groups = gdt_groups(&batch, &[None; 8], 2);
    let mean = |g: &Vec<usize>| g.iter().map(|&i| batch[i] as f64).sum::<f64>() / g.len() as f64;
    assert!(mean(&groups[0]) < mean(&groups[1]));
    let mut placed = Vec::new();
    for g in &groups {
        let z = closest_zone(&zones, mean(g)).unwrap();
        zones[z].0 += mean(g) * g.len() as f64;
        zones[z].1 += g.len() as u64;
        placed.push(z);
    }
    // The hottest group (EDT ~12) took the emptied zone: it now holds the minimum range...
    assert_eq!(placed[0], 1);
    assert!(zones[1].0 / (zones[1].1 as f64) < 20.0);
    // ...and the cold group went to the closest remaining average (the warm zone), not into
    // the hot one.
    assert_eq!(placed[1], 0);
    // No open zone at all: no choice.
    assert_eq!(closest_zone(&[], 1.0), None);
}
