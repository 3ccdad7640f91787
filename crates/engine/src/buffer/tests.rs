//! Buffer pool races against the page cleaner.

use super::BufferPool;
use crate::error::{Pid, Result};
use crate::page;
use crate::stats::EngineCounters;
use crate::store::{PageStore, WriteKind};
use crate::wal::Wal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A store for pool tests: `read` makes every page image; writes are dropped after `delay`.
struct TestStore {
    read: fn(Pid, &mut [u8]),
    delay: std::time::Duration,
}

impl PageStore for TestStore {
    fn write_path(&self) -> crate::format::superblock::WritePath {
        crate::format::superblock::WritePath::InPlace
    }
    fn write_pages(&self, _batch: &[(Pid, &[u8])], _kind: WriteKind) -> Result<()> {
        std::thread::sleep(self.delay);
        Ok(())
    }
    fn read_page(&self, pid: Pid, buf: &mut [u8]) -> Result<()> {
        (self.read)(pid, buf);
        Ok(())
    }
    fn capacity_pages(&self) -> u64 {
        16
    }
    fn recover(&self) -> Result<crate::store::StoreRecovery> {
        Ok(crate::store::StoreRecovery {
            pages_repaired: 0,
            snapshot_fallback: None,
        })
    }
}

/// A store that has released every page: every read is zeros (as the out-of-place store
/// reads a pid released after its free); a write takes a device write's time (the evicting
/// cleaner holds the latch meanwhile).
fn released() -> Arc<TestStore> {
    Arc::new(TestStore {
        read: |_, buf| buf.fill(0),
        delay: std::time::Duration::from_micros(50),
    })
}

/// A split reusing a freed page takes it with `write_untrusted` while the page cleaner
/// evicts it: the cached frame or a new one, never the device image (zeros here: a load
/// fails its checksum, "stored 0x00000000", the TPC-C failure this reproduces).
#[test]
fn write_untrusted_never_loads_a_page_evicted_meanwhile() {
    let counters = Arc::new(EngineCounters::default());
    let dev = Arc::new(nowa_device::MemDevice::new(64 * 4096));
    let wal = Arc::new(Wal::new(dev, 0, 32, 1, 4096, counters.clone()));
    let pool = BufferPool::new(4, 16, released(), wal, counters);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let got = pool.evict_batch(4, true).expect("eviction");
                pool.release_free(got);
            }
        });
        let mut result = Ok(());
        let start = std::time::Instant::now();
        // Until page 3 was evicted under the split's feet often enough (bounded in time).
        while pool.counters.evictions.load(Ordering::Relaxed) < 500
            && start.elapsed() < std::time::Duration::from_secs(2)
        {
            match pool.write_untrusted(3) {
                Ok(g) => {
                    assert_eq!(page::pid(g.page()), 3, "a frame of page 3");
                    // Dirty: the cleaner writes it back (holding its latch) before it unmaps.
                    g.mark_dirty();
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        if let Err(e) = result {
            panic!("write_untrusted read the released page: {e}");
        }
    });
}

/// An empty leaf last written at timer 5,000 (a page written after the last checkpoint of a
/// run that crashed: above the timer the pool resumed at).
fn written_later(pid: Pid, buf: &mut [u8]) {
    page::init(buf, page::KIND_LEAF, pid);
    let current = nowa_logspace::hotness::HotnessRecord::new(5_000, 0, 0.0, 0.0, 0, 0);
    page::set_hotness(
        buf,
        &nowa_logspace::hotness::PageHotness {
            current,
            last: Default::default(),
        },
    );
    page::seal(buf);
}

/// Reading a page whose write time is at or above the timer moves the timer past it, so
/// the page's next write time is later than its HR_current (the records stay ordered
/// without dropping the page's history); a timer already past stays where it is.
#[test]
fn a_page_read_with_a_later_write_time_moves_the_timer_past_it() {
    let counters = Arc::new(EngineCounters::default());
    let dev = Arc::new(nowa_device::MemDevice::new(64 * 4096));
    let wal = Arc::new(Wal::new(dev, 0, 32, 1, 4096, counters.clone()));
    let pool = BufferPool::new(
        4,
        16,
        Arc::new(TestStore {
            read: written_later,
            delay: std::time::Duration::ZERO,
        }),
        wal,
        counters,
    );
    pool.resume_write_timer(100);
    assert_eq!(pool.write_timer(), 100);
    drop(pool.read(3).expect("page 3 reads"));
    assert_eq!(pool.write_timer(), 5_001, "one past the page's write time");
    pool.resume_write_timer(9_000);
    drop(pool.read(4).expect("page 4 reads"));
    assert_eq!(pool.write_timer(), 9_000, "the timer never goes back");
    pool.resume_write_timer(10);
    assert_eq!(pool.write_timer(), 9_000, "resume never goes back either");
}

/// The residency snapshot reads the map unlatched: a frame reused meanwhile is reached from
/// two slots (the evicted page's, read before its eviction, and the new page's). It counts
/// each frame once (before, the sum passed the frame count and its assertion stopped a
/// `nowa table1` run: "more resident pages than frames").
#[test]
fn the_residency_snapshot_counts_a_frame_reached_from_two_slots_once() {
    let counters = Arc::new(EngineCounters::default());
    let dev = Arc::new(nowa_device::MemDevice::new(64 * 4096));
    let wal = Arc::new(Wal::new(dev, 0, 32, 1, 4096, counters.clone()));
    let pool = BufferPool::new(4, 16, released(), wal, counters);
    for pid in 0..4 {
        drop(pool.write_untrusted(pid).expect("a free frame"));
    }
    let (pages, _) = pool.resident_residency();
    assert_eq!(pages.iter().sum::<u64>(), 4, "every frame holds a page");
    // What an unlatched reader can see: page 0's slot still pointing at the frame that page
    // 9 took meanwhile.
    let reused = pool.map[0].load(Ordering::Acquire);
    pool.map[9].store(reused, Ordering::Release);
    let (pages, _) = pool.resident_residency();
    assert_eq!(pages.iter().sum::<u64>(), 4, "each frame once");
}
