//! In-place writes with doublewrite: DB WAF = 2.0 on a YCSB-A-like update-heavy run with the
//! dataset ~10x the buffer pool (Table 1, first row of how-to-write-to-ssds).

use nowa_device::MemDevice;
use nowa_engine::{Config, Durability, Engine};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

#[test]
fn ycsb_a_in_place_db_waf_is_two() {
    let pool = 1u64 << 20; // 256 frames
    let cfg = Config {
        pool_bytes: pool,
        durability: Durability::Async,
        ..Config::default()
    };
    let e = Engine::create(MemDevice::new(128 << 20), cfg).unwrap();
    let records = 80_000u64; // ~10.5 MiB of 8-byte keys + 120-byte values
    let mut rng = SmallRng::seed_from_u64(42);
    let mut val = [0u8; 120];
    for i in 0..records {
        rng.fill(&mut val[..]);
        e.put(&i.to_be_bytes(), &val).unwrap();
    }
    let before = e.stats();
    let ops = 200_000;
    for _ in 0..ops {
        let k = rng.random_range(0..records).to_be_bytes();
        if rng.random_range(0..2u32) == 0 {
            assert!(e.get(&k).unwrap().is_some());
        } else {
            rng.fill(&mut val[..]);
            e.put(&k, &val).unwrap();
        }
    }
    let s = e.stats();
    let user = (s.eviction_page_writes + s.checkpoint_page_writes)
        - (before.eviction_page_writes + before.checkpoint_page_writes);
    let dw = s.doublewrite_page_writes - before.doublewrite_page_writes;
    let gc = s.gc_page_writes - before.gc_page_writes;
    let waf = (user + dw + gc) as f64 / user as f64;
    let evict = s.eviction_page_writes - before.eviction_page_writes;
    eprintln!(
        "run: {ops} ops, user page writes {user} (eviction {evict}, checkpoint {}), doublewrite {dw}, DB WAF {waf:.3}, \
         logical W {:.0} B/op, WAL {:.0} B/op, hit ratio {:.3}",
        user - evict,
        (user + dw) as f64 * 4096.0 / f64::from(ops),
        (s.wal_device_bytes - before.wal_device_bytes) as f64 / f64::from(ops),
        s.hit_ratio
    );
    assert!((waf - 2.0).abs() <= 0.05, "DB WAF {waf}");
    assert!(
        evict > user / 2,
        "evictions should dominate: {evict} of {user}"
    );
    assert_eq!(gc, 0);
    assert!((s.db_waf - 2.0).abs() <= 0.05);
}
