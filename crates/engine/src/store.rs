//! The write-path seam: [`PageStore`] decides where a page lives on the device and how it is
//! written. This issue implements [`InPlaceStore`] (fixed home per pid, optional doublewrite);
//! the out-of-place path (zones, DB GC, compression, packing) plugs in behind the same trait.

use crate::error::{Pid, Result};
use crate::page::{self, PAGE_SIZE};
use crate::stats::Counters;
use crate::superblock::Layout;
use nowa_device::BlockDevice;
use parking_lot::Mutex;
use std::sync::Arc;

/// Why a batch of pages is written (for per-category statistics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    Eviction,
    Checkpoint,
    /// DB garbage collection (out-of-place path only).
    Gc,
    /// NoWA compensation write (out-of-place path only).
    Compensation,
}

/// Write path for data pages.
pub trait PageStore: Send + Sync {
    /// Write a batch of sealed 4 KiB pages; every page is durable when this returns.
    /// The caller guarantees the WAL is durable up to each page's LSN (WAL rule) and that no
    /// two writes of the same pid are in flight at once.
    fn write_pages(&self, batch: &[(Pid, &[u8])], kind: WriteKind) -> Result<()>;
    /// Read the current durable image of `pid` (unvalidated; the caller checks it).
    fn read_page(&self, pid: Pid, buf: &mut [u8]) -> Result<()>;
    /// Number of pids the store can hold.
    fn capacity_pages(&self) -> u64;
    /// Crash repair before WAL redo (in-place: restore torn pages from the doublewrite area).
    fn recover(&self) -> Result<u64>;
    /// Opaque metadata stored in each checkpoint record (in-place: none).
    fn checkpoint_metadata(&self) -> Vec<u8> {
        Vec::new()
    }
    /// Called by a checkpoint right before the superblock write: persist whatever the store
    /// needs (out of place: the mapping-table snapshot) and return the metadata for the
    /// superblock. Default: [`checkpoint_metadata`](Self::checkpoint_metadata).
    fn checkpoint(&self) -> Result<Vec<u8>> {
        Ok(self.checkpoint_metadata())
    }
    /// Does this store use the doublewrite area? (If not, create leaves it untouched: the
    /// out-of-place path writes nothing but zones to the device under test.)
    fn uses_doublewrite_area(&self) -> bool {
        true
    }
    /// Give the store a way to look into the buffer pool (GC uses clean cached pages
    /// instead of reading them). Default: ignored.
    fn attach_cache(&self, _cache: std::sync::Weak<dyn PageCache>) {}
    /// Start the store's background work (out of place: the background DB GC thread).
    /// Called by the engine once it is created or opened (after recovery). Default: none.
    fn start_background(self: Arc<Self>) {}
    /// Stop the background work and wait for it (engine close and drop). Default: none.
    fn shutdown(&self) {}
}

/// Read-only view of the buffer pool for the store's GC ("sharing the buffer pool").
pub trait PageCache: Send + Sync {
    /// Copy the cached image of `pid` into `buf` if it is in the pool and clean (its image
    /// equals the durable one). Never loads or evicts.
    fn copy_if_clean(&self, pid: Pid, buf: &mut [u8]) -> bool;
}

/// In-place writes: pid p lives at block `data_start + p`. With doublewrite on, each batch is
/// first written to the doublewrite area and flushed, then written home and flushed, so a torn
/// home write can be repaired from the doublewrite copy.
pub struct InPlaceStore {
    dev: Arc<dyn BlockDevice>,
    layout: Layout,
    doublewrite: bool,
    /// Serializes doublewrite-area use: a slot may be reused only after the home writes of the
    /// previous batch are durable.
    dw_lock: Mutex<()>,
    counters: Arc<Counters>,
}

impl InPlaceStore {
    pub fn new(
        dev: Arc<dyn BlockDevice>,
        layout: Layout,
        doublewrite: bool,
        counters: Arc<Counters>,
    ) -> Self {
        InPlaceStore {
            dev,
            layout,
            doublewrite,
            dw_lock: Mutex::new(()),
            counters,
        }
    }

    fn home(&self, pid: Pid) -> u64 {
        (self.layout.data_start + pid) * PAGE_SIZE as u64
    }

    fn count(&self, kind: WriteKind, n: u64) {
        let c = match kind {
            WriteKind::Eviction => &self.counters.eviction_page_writes,
            WriteKind::Checkpoint => &self.counters.checkpoint_page_writes,
            WriteKind::Gc => &self.counters.gc_page_writes,
            WriteKind::Compensation => &self.counters.compensation_page_writes,
        };
        Counters::add(c, n);
        let b = match kind {
            WriteKind::Eviction | WriteKind::Checkpoint => &self.counters.user_store_bytes,
            WriteKind::Gc => &self.counters.gc_store_bytes,
            WriteKind::Compensation => &self.counters.compensation_store_bytes,
        };
        Counters::add(b, n * PAGE_SIZE as u64);
    }
}

impl PageStore for InPlaceStore {
    fn write_pages(&self, batch: &[(Pid, &[u8])], kind: WriteKind) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let _g = self.dw_lock.lock();
        let slots = self.layout.dw_pages.max(1) as usize;
        for chunk in batch.chunks(slots) {
            if self.doublewrite {
                let dw: Vec<(u64, &[u8])> = chunk
                    .iter()
                    .enumerate()
                    .map(|(i, (_, d))| ((self.layout.dw_start + i as u64) * PAGE_SIZE as u64, *d))
                    .collect();
                self.dev.write_batch(&dw, None)?;
                self.dev.flush()?;
                Counters::add(&self.counters.doublewrite_page_writes, chunk.len() as u64);
            }
            let home: Vec<(u64, &[u8])> = chunk.iter().map(|(p, d)| (self.home(*p), *d)).collect();
            self.dev.write_batch(&home, None)?;
            self.dev.flush()?;
            self.count(kind, chunk.len() as u64);
        }
        Ok(())
    }

    fn read_page(&self, pid: Pid, buf: &mut [u8]) -> Result<()> {
        self.dev.read_at(self.home(pid), buf)?;
        Counters::add(&self.counters.page_reads, 1);
        Ok(())
    }

    fn capacity_pages(&self) -> u64 {
        self.layout.data_pages
    }

    /// Restore every home page that is torn (bad checksum / layout) or older than a valid
    /// doublewrite copy. Stale slots (older than home) are ignored. Runs even with doublewrite
    /// off (the area is then simply never written by this instance).
    fn recover(&self) -> Result<u64> {
        let mut repaired = 0;
        let mut slot = vec![0u8; PAGE_SIZE];
        let mut home = vec![0u8; PAGE_SIZE];
        for i in 0..self.layout.dw_pages {
            self.dev
                .read_at((self.layout.dw_start + i) * PAGE_SIZE as u64, &mut slot)?;
            if !page::checksum_ok(&slot) || page::is_zero(&slot) {
                continue; // torn or never-written slot: its home write never started
            }
            let pid = page::pid(&slot);
            if pid >= self.layout.data_pages || page::validate_layout(&slot, pid).is_err() {
                continue;
            }
            self.dev.read_at(self.home(pid), &mut home)?;
            let mut home_ok = page::validate(&home, pid).is_ok();
            if !home_ok {
                // Re-read once: a transient read error must not make us overwrite a valid,
                // newer home page with an older slot.
                self.dev.read_at(self.home(pid), &mut home)?;
                home_ok = page::validate(&home, pid).is_ok();
            }
            if !home_ok || page::lsn(&home) < page::lsn(&slot) {
                tracing::info!(pid, home_ok, "restoring page from doublewrite area");
                self.dev.write_at(self.home(pid), &slot)?;
                repaired += 1;
            }
        }
        if repaired > 0 {
            self.dev.flush()?;
        }
        Ok(repaired)
    }
}
