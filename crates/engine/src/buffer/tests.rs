//! Buffer pool races against the page cleaner.

use super::BufferPool;
use crate::error::{Pid, Result};
use crate::page;
use crate::stats::EngineCounters;
use crate::store::{PageStore, WriteKind};
use crate::wal::Wal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A store that has released every page: writes are dropped, every read is zeros (as the
/// out-of-place store reads a pid released after its free).
struct Released;

impl PageStore for Released {
    fn write_path(&self) -> crate::format::superblock::WritePath {
        crate::format::superblock::WritePath::InPlace
    }
    fn write_pages(&self, _batch: &[(Pid, &[u8])], _kind: WriteKind) -> Result<()> {
        // A device write's time: the evicting cleaner holds the latch meanwhile.
        std::thread::sleep(std::time::Duration::from_micros(50));
        Ok(())
    }
    fn read_page(&self, _pid: Pid, buf: &mut [u8]) -> Result<()> {
        buf.fill(0);
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

/// A split reusing a freed page takes it with `write_untrusted` while the page cleaner
/// evicts it: the cached frame or a new one, never the device image (zeros here: a load
/// fails its checksum, "stored 0x00000000", the TPC-C failure this reproduces).
#[test]
fn write_untrusted_never_loads_a_page_evicted_meanwhile() {
    let counters = Arc::new(EngineCounters::default());
    let dev = Arc::new(nowa_device::MemDevice::new(64 * 4096));
    let wal = Arc::new(Wal::new(dev, 0, 32, 1, 4096, counters.clone()));
    let pool = BufferPool::new(4, 16, Arc::new(Released), wal, counters);
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
