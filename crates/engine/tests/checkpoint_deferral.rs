//! Hot-page-aware checkpointing (issue 13): the redo-LSN rule (a deferred page's changes are
//! redone after a crash), the forced pass at the WAL limit, and the counters per cause
//! against a scripted page history. Deterministic: no page cleaner, one thread.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

mod common;
use common::CrashDevice;
use nowa_engine::{Config, Durability, Engine};
use std::sync::Arc;

fn cfg(mcc: u32) -> Config {
    Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        durability: Durability::Sync,
        dw_pages: 8,
        max_checkpoint_count: mcc,
        ..Config::default()
    }
}

/// Put `k1`, run one checkpoint pass, pull the power, reopen: returns the records redone.
fn put_pass_crash(mcc: u32) -> u64 {
    let dev = Arc::new(CrashDevice::new(4 << 20, 1));
    let e = Engine::create(dev.clone(), cfg(mcc)).unwrap();
    e.put(b"k1", b"v1").unwrap();
    e.checkpoint_pass().unwrap();
    let s = e.stats();
    assert_eq!(
        s.checkpoint_deferrals,
        u64::from(mcc > 0),
        "mcc {mcc}: {s:?}"
    );
    dev.power_loss();
    drop(e);
    dev.restart();
    let e = Engine::open(dev, cfg(mcc)).unwrap();
    assert_eq!(e.get(b"k1").unwrap().as_deref(), Some(&b"v1"[..]));
    e.recovery_report().unwrap().records_replayed
}

#[test]
fn a_deferred_page_is_redone_after_a_crash() {
    // Written by the pass: the redo LSN moved past the put, nothing to redo.
    assert_eq!(put_pass_crash(0), 0);
    // Deferred: the redo LSN stayed at the page's rec_lsn, so the put is redone.
    assert_eq!(put_pass_crash(3), 1);
}

#[test]
fn counters_follow_a_scripted_history() {
    let dev = Arc::new(CrashDevice::new(4 << 20, 2));
    let e = Engine::create(dev, cfg(2)).unwrap();
    let base = e.stats();
    let delta = |f: fn(&nowa_engine::Stats) -> u64| f(&e.stats()) - f(&base);
    // One page (the root leaf), dirtied before each of passes 1, 2 and 3.
    for (round, (deferrals, ckpt_writes)) in [(1, 0), (2, 0), (2, 1)].into_iter().enumerate() {
        e.put(b"hot", format!("v{round}").as_bytes()).unwrap();
        e.checkpoint_pass().unwrap();
        assert_eq!(delta(|s| s.checkpoint_deferrals), deferrals, "pass {round}");
        assert_eq!(
            delta(|s| s.checkpoint_page_writes),
            ckpt_writes,
            "pass {round}"
        );
    }
    // Clean now: a pass finds nothing.
    e.checkpoint_pass().unwrap();
    assert_eq!(delta(|s| s.checkpoint_page_writes), 1);
    // Dirty again: deferred once (count restarted at the write), then an explicit checkpoint
    // ignores deferral and counts as forced.
    e.put(b"hot", b"v9").unwrap();
    e.checkpoint_pass().unwrap();
    assert_eq!(delta(|s| s.checkpoint_deferrals), 3);
    e.checkpoint().unwrap();
    assert_eq!(delta(|s| s.checkpoint_page_writes), 2);
    assert_eq!(delta(|s| s.forced_checkpoint_page_writes), 1);
    assert_eq!(delta(|s| s.eviction_page_writes), 0);
    e.close().unwrap();
}

#[test]
fn the_wal_limit_forces_a_pass_that_ignores_deferral() {
    let dev = Arc::new(CrashDevice::new(8 << 20, 3));
    // Deferral without practical bound: only forced passes write the hot pages. (A pass
    // runs about once per put from half the limit on; with 1,000 as the count cap and WAL
    // format 6's 125-byte records, 1,000 passes took less log than the half to the limit, so
    // the cap wrote the pages first.)
    let cfg = Config {
        pool_bytes: 256 * 4096,
        ..cfg(100_000)
    };
    let limit = cfg.wal_limit_bytes.unwrap();
    let e = Engine::create(dev.clone(), cfg.clone()).unwrap();
    let mut max_used = 0;
    for i in 0..20_000u32 {
        let key = format!("k{:03}", i % 200);
        e.put_with(key.as_bytes(), &[7u8; 100], Durability::Async)
            .unwrap();
        max_used = max_used.max(e.wal_used());
    }
    let s = e.stats();
    assert!(s.checkpoint_deferrals > 0, "{s:?}");
    assert!(s.forced_checkpoint_page_writes > 0, "{s:?}");
    assert!(
        max_used <= limit + (1 << 20),
        "WAL used {max_used} past the limit {limit}"
    );
    e.sync().unwrap();
    dev.power_loss();
    drop(e);
    dev.restart();
    let e = Engine::open(dev, cfg).unwrap();
    for i in 0..200u32 {
        assert!(e.get(format!("k{i:03}").as_bytes()).unwrap().is_some());
    }
}

#[test]
fn resident_pages_count_by_their_checkpoint_exposures() {
    let dev = Arc::new(CrashDevice::new(4 << 20, 3));
    let e = Engine::create(dev, cfg(0)).unwrap();
    // One page (the root leaf), dirtied before each of 5 passes: selected and written 5
    // times, never evicted (Figure 1 of the paper counts it once it leaves the pool; a short
    // run never evicts its hot pages, so the snapshot counts the resident ones too).
    for round in 0..5u32 {
        e.put(b"hot", format!("v{round}").as_bytes()).unwrap();
        e.checkpoint_pass().unwrap();
    }
    let s = e.stats();
    assert_eq!(s.residency_pages.iter().sum::<u64>(), 0, "nothing evicted");
    assert_eq!(s.resident_pages[5], 1, "{:?}", s.resident_pages);
    assert_eq!(s.resident_checkpoint_writes[5], 5);
    let (frames, _) = e.pool_frames();
    let resident: u64 = s.resident_pages.iter().sum();
    assert!(
        resident >= 1 && resident <= frames as u64,
        "{resident} resident pages in {frames} frames"
    );
}
