//! Concurrency: threads doing puts/gets/deletes on disjoint and overlapping keys (with splits
//! and evictions happening), then verification.

use nowa_device::MemDevice;
use nowa_engine::{Config, Durability, Engine};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

fn val(t: u64, i: u64, round: u64) -> Vec<u8> {
    format!("t{t}-i{i}-r{round}-{}", "p".repeat((i % 50) as usize)).into_bytes()
}

#[test]
fn disjoint_and_overlapping_keys() {
    let threads = 4u64;
    let per = 5000u64;
    // Small pool: evictions and checkpoints run concurrently with the writers.
    let cfg = Config {
        pool_bytes: 128 * 4096,
        wal_limit_bytes: Some(512 << 10),
        durability: Durability::Async,
        ..Config::default()
    };
    let e = Arc::new(Engine::create(MemDevice::new(64 << 20), cfg.clone()).unwrap());
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let e = e.clone();
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(t);
                for round in 0..2 {
                    for i in 0..per {
                        // Disjoint: own prefix. Interleaved key order forces splits everywhere.
                        let k = format!("d{:08}-{t}", i * 7919 % per);
                        e.put(k.as_bytes(), &val(t, i, round)).unwrap();
                        // Overlapping: shared keys, last writer wins; values must stay whole.
                        let s = format!("s{:05}", rng.random_range(0..500u32));
                        e.put(s.as_bytes(), &val(t, i, round)).unwrap();
                        if let Some(v) = e.get(s.as_bytes()).unwrap() {
                            assert!(v.starts_with(b"t"), "torn value");
                        }
                        let own = format!("d{:08}-{t}", rng.random_range(0..per));
                        let _ = e.get(own.as_bytes()).unwrap();
                    }
                }
                // Delete a third of own keys.
                for i in (0..per).step_by(3) {
                    assert!(e.delete(format!("d{i:08}-{t}").as_bytes()).unwrap());
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let check = |e: &Engine| {
        for t in 0..threads {
            for i in 0..per {
                let got = e.get(format!("d{i:08}-{t}").as_bytes()).unwrap();
                if i % 3 == 0 {
                    assert_eq!(got, None);
                } else {
                    // The last round wrote value (t, j, 1) where j * 7919 % per == i.
                    let v = got.expect("own key present");
                    assert!(
                        v.starts_with(format!("t{t}-").as_bytes())
                            && v.windows(3).any(|w| w == b"-r1")
                    );
                }
            }
        }
        let shared = e.scan(b"s", Some(b"t"), usize::MAX).unwrap();
        assert_eq!(shared.len(), 500);
        let all = e.scan(b"", None, usize::MAX).unwrap();
        assert!(all.windows(2).all(|w| w[0].0 < w[1].0), "scan out of order");
    };
    check(&e);
    assert!(e.stats().evictions > 0);
    e.close().unwrap();
}

fn big(t: u64, i: u64) -> Vec<u8> {
    let mut v = val(t, i, 0);
    v.resize(160, b'z');
    v
}

/// Several threads doing sync puts (group commit, splits, evictions and checkpoints running
/// concurrently) when the power fails: every acknowledged write survives.
#[test]
fn concurrent_sync_writers_survive_power_loss() {
    use nowa_device::{FaultConfig, FaultyDevice};
    use std::sync::atomic::{AtomicU64, Ordering};
    let threads = 3u64;
    let cfg = Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        dw_pages: 8,
        ..Config::default()
    };
    for seed in 0..12u64 {
        let fc = FaultConfig {
            seed,
            torn_write_prob: 0.3,
            bit_flip_read_prob: 0.0,
        };
        let dev = Arc::new(FaultyDevice::new(MemDevice::new(32 << 20), fc));
        let e = Arc::new(Engine::create(dev.clone(), cfg.clone()).unwrap());
        let progress = Arc::new(AtomicU64::new(0));
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (e, progress) = (e.clone(), progress.clone());
                std::thread::spawn(move || {
                    let mut acked = 0u64;
                    loop {
                        let k = format!("t{t}-{:06}", acked * 7919 % 100_000);
                        if e.put(k.as_bytes(), &big(t, acked)).is_err() {
                            return acked;
                        }
                        acked += 1;
                        progress.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        while progress.load(Ordering::Relaxed) < 1500 + seed * 150 {
            std::thread::yield_now();
        }
        let s = e.stats();
        dev.power_loss();
        assert!(s.evictions > 0 && s.checkpoints > 0, "seed {seed}: {s:?}");
        let acked: Vec<u64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        drop(e);
        dev.restart();
        let e = Engine::open(dev.clone(), cfg.clone()).unwrap();
        for t in 0..threads {
            for i in 0..acked[usize::try_from(t).unwrap()] {
                let k = format!("t{t}-{:06}", i * 7919 % 100_000);
                assert_eq!(
                    e.get(k.as_bytes()).unwrap(),
                    Some(big(t, i)),
                    "seed {seed}: thread {t} write {i} lost"
                );
            }
            // At most the one write in flight beyond the acknowledged ones.
            let n = e
                .scan(
                    format!("t{t}-").as_bytes(),
                    Some(format!("t{t}.").as_bytes()),
                    usize::MAX,
                )
                .unwrap()
                .len() as u64;
            assert!(
                n == acked[usize::try_from(t).unwrap()]
                    || n == acked[usize::try_from(t).unwrap()] + 1,
                "seed {seed}: thread {t}: {n} keys, {} acked",
                acked[usize::try_from(t).unwrap()]
            );
        }
        e.close().unwrap();
    }
}

/// Mixed sync/async writers and a power failure: per thread, the surviving writes are a prefix
/// of its writes (the log is one ordered stream) that includes every acknowledged sync write.
#[test]
fn concurrent_mixed_durability_loses_only_a_suffix() {
    use nowa_device::{FaultConfig, FaultyDevice};
    use nowa_engine::Durability;
    use std::sync::atomic::{AtomicU64, Ordering};
    let threads = 3u64;
    let cfg = Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        dw_pages: 8,
        async_flush_bytes: 16 << 10,
        ..Config::default()
    };
    for seed in 0..12u64 {
        let fc = FaultConfig {
            seed,
            torn_write_prob: 0.3,
            bit_flip_read_prob: 0.0,
        };
        let dev = Arc::new(FaultyDevice::new(MemDevice::new(32 << 20), fc));
        let e = Arc::new(Engine::create(dev.clone(), cfg.clone()).unwrap());
        let progress = Arc::new(AtomicU64::new(0));
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (e, progress, dev) = (e.clone(), progress.clone(), dev.clone());
                std::thread::spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(seed * 10 + t);
                    let (mut acked, mut last_sync) = (0u64, 0u64);
                    loop {
                        let k = format!("t{t}-{:06}", acked * 7919 % 100_000);
                        let d = if rng.random_range(0..4u32) == 0 {
                            Durability::Sync
                        } else {
                            Durability::Async
                        };
                        if let Err(err) = e.put_with(k.as_bytes(), &big(t, acked), d) {
                            // Only the power loss may stop a writer: anything earlier would
                            // leave the main thread waiting for progress that never comes.
                            assert!(
                                dev.is_powered_off(),
                                "seed {seed}: thread {t}: put failed before the power loss: {err}"
                            );
                            return (acked, last_sync);
                        }
                        acked += 1;
                        if d == Durability::Sync {
                            last_sync = acked;
                        }
                        progress.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        while progress.load(Ordering::Relaxed) < 2000 + seed * 150 {
            // A writer that panicked (see above) ends the wait instead of hanging the test.
            if hs.iter().any(std::thread::JoinHandle::is_finished) {
                break;
            }
            std::thread::yield_now();
        }
        dev.power_loss();
        let res: Vec<(u64, u64)> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        drop(e);
        dev.restart();
        let e = Engine::open(dev.clone(), cfg.clone()).unwrap();
        for t in 0..threads {
            let (acked, last_sync) = res[usize::try_from(t).unwrap()];
            let present: Vec<bool> = (0..=acked)
                .map(|i| {
                    let k = format!("t{t}-{:06}", i * 7919 % 100_000);
                    match e.get(k.as_bytes()).unwrap() {
                        Some(v) => {
                            assert_eq!(v, big(t, i), "seed {seed}: wrong value");
                            true
                        }
                        None => false,
                    }
                })
                .collect();
            let survived = present.iter().take_while(|p| **p).count() as u64;
            assert!(
                present[usize::try_from(survived).unwrap()..]
                    .iter()
                    .all(|p| !p),
                "seed {seed}: thread {t}: hole in the history"
            );
            assert!(
                survived >= last_sync,
                "seed {seed}: thread {t}: sync write lost ({survived} < {last_sync})"
            );
        }
        e.close().unwrap();
    }
}
