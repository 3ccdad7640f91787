//! The engine: configuration, create/open/close, B+-tree operations, checkpoints, recovery.
//!
//! Concurrency scheme (first version, documented in docs/design.md): a tree-level RwLock guards the
//! *structure*. Ordinary get/put/delete/scan hold it shared; inner nodes only change under the
//! exclusive lock, so a shared holder descends with one page latch at a time (no coupling
//! needed) and latches only the leaf exclusively. A put that needs a split releases everything
//! and retries under the exclusive tree lock (structure modification, SMO). Splits are rare in
//! update-heavy workloads, so the hot path is: shared tree lock + per-frame latches.

use crate::buffer::BufferPool;
use crate::error::{corrupt, EngineError, Pid, Result};
use crate::page::{self, Entry, KIND_INNER, KIND_LEAF, MAX_KEY, MAX_KV, PAGE_SIZE};
use crate::stats::{Counters, Stats};
use crate::store::{InPlaceStore, PageStore, WriteKind};
use crate::superblock::{Layout, Superblock};
use crate::treelock::{TreeLock, TreeMeta};
use crate::wal::{Record, Wal, WalScanner, WalStop, T_DELETE, T_PUT, T_SMO};
use nowa_device::BlockDevice;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const BS: u64 = PAGE_SIZE as u64;
const MAX_HEIGHT: usize = 48;
/// Room past the hard WAL limit for records of operations already past the gate.
const WAL_SLACK: u64 = 1 << 20;

/// Everything a write path needs to build its [`PageStore`] (the seam the out-of-place path
/// plugs into).
pub struct StoreContext {
    pub device: Arc<dyn BlockDevice>,
    pub layout: Layout,
    pub doublewrite: bool,
    /// Where the store counts its page writes per category.
    pub counters: Arc<Counters>,
    /// What the store's `checkpoint_metadata` returned at the last checkpoint (empty at create).
    pub metadata: Vec<u8>,
    /// With a separate log device: that device and its first block free for the store's
    /// own metadata (after the superblocks and the WAL region), so the main device holds
    /// nothing but pages.
    pub meta_device: Option<(Arc<dyn BlockDevice>, u64)>,
}

/// Builds the page store of an engine.
pub type StoreBuilder = dyn Fn(StoreContext) -> Result<Arc<dyn PageStore>> + Send + Sync;

/// The default write path: [`InPlaceStore`].
pub fn in_place_store(ctx: StoreContext) -> Result<Arc<dyn PageStore>> {
    Ok(Arc::new(InPlaceStore::new(
        ctx.device,
        ctx.layout,
        ctx.doublewrite,
        ctx.counters,
    )))
}

/// Durability of one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Durability {
    /// Acknowledged only after its WAL record is flushed (group commit).
    Sync,
    /// Acknowledged at once; may be lost in a crash, but only as a suffix of the history.
    Async,
}

/// Engine configuration. `Default` gives sensible values for tests and examples.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Config {
    /// Buffer pool capacity in bytes (frames = pool_bytes / 4096, at least 64).
    pub pool_bytes: u64,
    /// WAL size limit; a checkpoint starts at half of it and writers wait at the limit.
    /// None = pool_bytes (as in the paper).
    pub wal_limit_bytes: Option<u64>,
    /// Default durability for `put`/`delete`.
    pub durability: Durability,
    /// Write every page through the doublewrite area first. Off = "unsafe": a torn page is
    /// detected by its checksum and reported as corruption.
    pub doublewrite: bool,
    /// Doublewrite area size in pages (create only; the largest batch written at once).
    pub dw_pages: u64,
    /// WAL region size on the device (create only). None = limit + limit/4 + 1 MiB.
    pub wal_region_bytes: Option<u64>,
    /// Async mode: an appender flushes the WAL once this many bytes are unflushed.
    pub async_flush_bytes: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            pool_bytes: 64 << 20,
            wal_limit_bytes: None,
            durability: Durability::Sync,
            doublewrite: true,
            dw_pages: 64,
            wal_region_bytes: None,
            async_flush_bytes: 1 << 20,
        }
    }
}

impl Config {
    fn wal_limit(&self) -> u64 {
        self.wal_limit_bytes.unwrap_or(self.pool_bytes)
    }
}

/// What `open` found and did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RecoveryReport {
    /// The previous instance was closed with `close()`.
    pub clean_shutdown: bool,
    pub redo_lsn: u64,
    /// LSN after the last valid record.
    pub end_lsn: u64,
    pub records_replayed: u64,
    /// Records whose pages were already newer on disk.
    pub records_skipped: u64,
    /// Torn pages restored from the doublewrite area.
    pub pages_repaired: u64,
    /// Why the WAL scan stopped; `BadRecord` = torn or corrupt tail (everything before kept).
    pub wal_stop: WalStop,
    /// 1 if the scan stopped at a bad record (a counter for dashboards).
    pub bad_wal_records: u64,
}

struct CkptState {
    seq: u64,
    /// Incremental checkpoint pass in progress.
    pass: Option<Pass>,
}

/// A fuzzy checkpoint pass: begin LSN and tree metadata taken at its start, and how far the
/// sweep over the frames has come.
struct Pass {
    begin: u64,
    root: Pid,
    next_pid: Pid,
    cursor: usize,
}

/// The key-value engine. Share it between threads with `Arc<Engine>`.
/// Dropping it without `close()` is like a crash (nothing is flushed).
pub struct Engine {
    dev: Arc<dyn BlockDevice>,
    /// Where the WAL lives: `dev` itself, or a separate device.
    wal_dev: Arc<dyn BlockDevice>,
    wal_separate: bool,
    cfg: Config,
    layout: Layout,
    wal_limit: u64,
    salt: u32,
    store: Arc<dyn PageStore>,
    wal: Arc<Wal>,
    pool: Arc<BufferPool>,
    tree: TreeLock,
    ckpt: Mutex<CkptState>,
    /// A checkpoint pass is in progress (lets the write fast path skip the lock otherwise).
    ckpt_active: AtomicBool,
    counters: Arc<Counters>,
    closed: AtomicBool,
    report: Option<RecoveryReport>,
}

impl Drop for Engine {
    /// Like a crash for the data (nothing is flushed), but the store's background work
    /// (DB GC thread) is stopped and joined: nothing touches the device after the drop.
    fn drop(&mut self) {
        self.store.shutdown();
    }
}

fn check_kv(k: &[u8], v: &[u8]) -> Result<()> {
    if k.len() > MAX_KEY || k.len() + v.len() > MAX_KV {
        return Err(EngineError::TooLarge {
            key_len: k.len(),
            value_len: v.len(),
        });
    }
    Ok(())
}

/// Split point minimizing the larger half (sizes include the slot).
fn split_point(sizes: &[usize], skip_middle: bool) -> usize {
    let total: usize = sizes.iter().sum();
    let (mut best, mut best_max) = (1, usize::MAX);
    let mut left = 0;
    for s in 1..sizes.len() {
        left += sizes[s - 1];
        let right = total - left - if skip_middle { sizes[s] } else { 0 };
        let m = left.max(right);
        if m < best_max {
            best_max = m;
            best = s;
        }
    }
    best
}

impl Engine {
    /// Format `dev` and create an empty database.
    pub fn create<D: BlockDevice + 'static>(dev: D, cfg: Config) -> Result<Engine> {
        Self::create_with_store(dev, cfg, &in_place_store)
    }

    /// `create` with another write path behind the [`PageStore`] seam.
    pub fn create_with_store<D: BlockDevice + 'static>(
        dev: D,
        cfg: Config,
        build: &StoreBuilder,
    ) -> Result<Engine> {
        Self::create_with_wal(Arc::new(dev), None, cfg, build)
    }

    /// `create_with_store` with the WAL on a separate device (`wal_dev`, from block 0), as in
    /// how-to-write-to-ssds.md (Figure 1: the device under test holds only pages).
    pub fn create_with_wal(
        dev: Arc<dyn BlockDevice>,
        wal_dev: Option<Arc<dyn BlockDevice>>,
        cfg: Config,
        build: &StoreBuilder,
    ) -> Result<Engine> {
        let wal_separate = wal_dev.is_some();
        let wal_dev = wal_dev.unwrap_or_else(|| dev.clone());
        let limit = cfg.wal_limit();
        if cfg.pool_bytes < 64 * BS || limit < 16 * BS || cfg.dw_pages == 0 {
            return Err(EngineError::Config(
                "pool must be >= 64 pages, WAL limit >= 16 pages, dw_pages >= 1".into(),
            ));
        }
        let region = cfg
            .wal_region_bytes
            .unwrap_or(limit + limit / 4 + WAL_SLACK)
            .div_ceil(BS)
            * BS;
        let blocks = dev.geometry().capacity / BS;
        let (wal_start, data_start) = if wal_separate {
            if region > wal_dev.geometry().capacity {
                return Err(EngineError::Config(format!(
                    "WAL device too small: {} bytes, need {region}",
                    wal_dev.geometry().capacity
                )));
            }
            if region + 2 * BS > wal_dev.geometry().capacity {
                return Err(EngineError::Config(format!(
                    "WAL device too small: {} bytes, need {}",
                    wal_dev.geometry().capacity,
                    region + 2 * BS
                )));
            }
            // Log device: superblock copies at blocks 0-1, then the WAL region.
            (2, 2 + cfg.dw_pages)
        } else {
            (2 + cfg.dw_pages, 2 + cfg.dw_pages + region / BS)
        };
        if data_start + 16 > blocks {
            return Err(EngineError::Config(format!(
                "device too small: {blocks} blocks, need > {}",
                data_start + 16
            )));
        }
        let layout = Layout {
            dw_start: 2,
            dw_pages: cfg.dw_pages,
            wal_start,
            wal_blocks: region / BS,
            data_start,
            data_pages: blocks - data_start,
        };
        let counters = Arc::new(Counters::default());
        let store = build(StoreContext {
            device: dev.clone(),
            layout,
            doublewrite: cfg.doublewrite,
            counters: counters.clone(),
            metadata: Vec::new(),
            meta_device: wal_separate
                .then(|| (wal_dev.clone(), layout.wal_start + layout.wal_blocks)),
        })?;
        // Empty root leaf at pid 0 (no log needed: it is in the first checkpoint).
        let mut root = vec![0u8; PAGE_SIZE];
        page::init(&mut root, KIND_LEAF, 0);
        page::seal(&mut root);
        store.write_pages(&[(0, &root)], WriteKind::Checkpoint)?;
        // Clear the doublewrite area so slots of an older database on this device are ignored.
        if store.uses_doublewrite_area() {
            let zero = vec![0u8; (layout.dw_pages * BS) as usize];
            dev.write_at(layout.dw_start * BS, &zero)?;
        }
        let salt: u32 = rand::random();
        let start_lsn = BS;
        let mut sb = Superblock {
            seq: 1,
            layout,
            doublewrite: cfg.doublewrite,
            clean: true,
            wal_separate,
            redo_lsn: start_lsn,
            root: 0,
            next_pid: 1,
            wal_salt: salt,
            store_meta: store.checkpoint()?,
        };
        dev.flush()?;
        wal_dev.flush()?;
        sb.write(&*wal_dev)?;
        sb.seq = 2;
        sb.write(&*wal_dev)?;
        let wal = Arc::new(Wal::new(
            wal_dev.clone(),
            layout.wal_start,
            layout.wal_blocks,
            salt,
            start_lsn,
            counters.clone(),
        ));
        let pool = Arc::new(BufferPool::new(
            Self::frames(&cfg),
            layout.data_pages,
            store.clone(),
            wal.clone(),
            counters.clone(),
        ));
        let cache: Arc<dyn crate::store::PageCache> = pool.clone();
        store.attach_cache(Arc::downgrade(&cache));
        let eng = Engine {
            wal_limit: Self::effective_limit(limit, region),
            dev,
            wal_dev,
            wal_separate,
            cfg,
            layout,
            salt,
            store,
            wal,
            pool,
            tree: TreeLock::new(TreeMeta {
                root: 0,
                next_pid: 1,
                height: 1,
            }),
            ckpt: Mutex::new(CkptState { seq: 2, pass: None }),
            counters,
            closed: AtomicBool::new(false),
            ckpt_active: AtomicBool::new(false),
            report: None,
        };
        eng.store.clone().start_background();
        Ok(eng)
    }

    fn frames(cfg: &Config) -> usize {
        ((cfg.pool_bytes / BS) as usize).max(64)
    }

    fn effective_limit(limit: u64, region: u64) -> u64 {
        limit.min(region.saturating_sub(WAL_SLACK)).max(8 * BS)
    }

    /// Open an existing database: repair torn pages from the doublewrite area, redo the WAL
    /// from the last checkpoint, then checkpoint so the old log is no longer needed.
    pub fn open<D: BlockDevice + 'static>(dev: D, cfg: Config) -> Result<Engine> {
        Self::open_with_store(dev, cfg, &in_place_store)
    }

    /// `open` with another write path behind the [`PageStore`] seam (must match `create`).
    pub fn open_with_store<D: BlockDevice + 'static>(
        dev: D,
        cfg: Config,
        build: &StoreBuilder,
    ) -> Result<Engine> {
        Self::open_with_wal(Arc::new(dev), None, cfg, build)
    }

    /// `open_with_store` for a database created by [`create_with_wal`](Self::create_with_wal).
    pub fn open_with_wal(
        dev: Arc<dyn BlockDevice>,
        wal_dev: Option<Arc<dyn BlockDevice>>,
        cfg: Config,
        build: &StoreBuilder,
    ) -> Result<Engine> {
        let sb = Superblock::read(
            &**wal_dev.as_ref().unwrap_or(&dev),
            dev.geometry().capacity,
            wal_dev.as_ref().map(|w| w.geometry().capacity),
        )?;
        let wal_separate = sb.wal_separate;
        let wal_dev = wal_dev.unwrap_or_else(|| dev.clone());
        let layout = sb.layout;
        let counters = Arc::new(Counters::default());
        let store = build(StoreContext {
            device: dev.clone(),
            layout,
            doublewrite: cfg.doublewrite,
            counters: counters.clone(),
            metadata: sb.store_meta.clone(),
            meta_device: wal_separate
                .then(|| (wal_dev.clone(), layout.wal_start + layout.wal_blocks)),
        })?;
        let pages_repaired = store.recover()?;

        // Pass 1: find the end of the log.
        let mut sc = WalScanner::new(
            &*wal_dev,
            layout.wal_start,
            layout.wal_blocks,
            sb.wal_salt,
            sb.redo_lsn,
        );
        let stop = loop {
            match sc.next_record()? {
                Ok(_) => {}
                Err(stop) => break stop,
            }
        };
        let end_lsn = sc.lsn;
        if let WalStop::BadRecord { lsn, detail } = &stop {
            tracing::warn!(
                lsn,
                detail,
                "WAL scan stopped at a bad record; later records are discarded"
            );
        }
        // New epoch: new salt, and LSNs above anything this epoch could have written to a page
        // (the live log never exceeds the region), so page LSN comparisons stay valid even if
        // the scan stopped early at a corrupt record.
        let region = layout.wal_blocks * BS;
        let new_lsn = (sb.redo_lsn + region) / BS * BS + BS;
        let salt = sb.wal_salt.wrapping_add(1);
        let wal = Arc::new(Wal::new(
            wal_dev.clone(),
            layout.wal_start,
            layout.wal_blocks,
            salt,
            new_lsn,
            counters.clone(),
        ));
        let pool = Arc::new(BufferPool::new(
            Self::frames(&cfg),
            layout.data_pages,
            store.clone(),
            wal.clone(),
            counters.clone(),
        ));
        let cache: Arc<dyn crate::store::PageCache> = pool.clone();
        store.attach_cache(Arc::downgrade(&cache));
        let limit = cfg.wal_limit();
        let mut eng = Engine {
            wal_limit: Self::effective_limit(limit, region),
            dev: dev.clone(),
            wal_dev: wal_dev.clone(),
            wal_separate,
            cfg,
            layout,
            salt,
            store,
            wal,
            pool,
            tree: TreeLock::new(TreeMeta {
                root: sb.root,
                next_pid: sb.next_pid,
                height: 1,
            }),
            ckpt: Mutex::new(CkptState {
                seq: sb.seq,
                pass: None,
            }),
            counters,
            closed: AtomicBool::new(false),
            ckpt_active: AtomicBool::new(false),
            report: None,
        };

        // Pass 2: redo.
        eng.pool.allow_unwritten.store(true, Ordering::Relaxed);
        let mut replayed = 0;
        let mut skipped = 0;
        let mut sc = WalScanner::new(
            &*wal_dev,
            layout.wal_start,
            layout.wal_blocks,
            sb.wal_salt,
            sb.redo_lsn,
        );
        while sc.lsn < end_lsn {
            let (lsn, rec) = match sc.next_record()? {
                Ok(x) => x,
                Err(_) => break,
            };
            if eng.redo(lsn, rec)? {
                replayed += 1;
            } else {
                skipped += 1;
            }
        }
        eng.pool.allow_unwritten.store(false, Ordering::Relaxed);
        {
            let mut t = eng.tree.write();
            if t.root >= t.next_pid || t.next_pid > layout.data_pages {
                return Err(corrupt(t.root, "root/next_pid out of range after redo"));
            }
            t.height = eng.measure_height(t.root)?;
        }
        eng.checkpoint()?;
        let bad = matches!(stop, WalStop::BadRecord { .. }) as u64;
        eng.report = Some(RecoveryReport {
            clean_shutdown: sb.clean,
            redo_lsn: sb.redo_lsn,
            end_lsn,
            records_replayed: replayed,
            records_skipped: skipped,
            pages_repaired,
            wal_stop: stop,
            bad_wal_records: bad,
        });
        // Background work (out of place: DB GC) starts only after recovery.
        eng.store.clone().start_background();
        Ok(eng)
    }

    /// Apply one WAL record if the page has not seen it yet. Returns whether anything changed.
    fn redo(&self, lsn: u64, rec: Record) -> Result<bool> {
        match rec {
            Record::Put { pid, key, value } => {
                let mut g = self.pool.write(pid)?;
                if page::lsn(g.page()) >= lsn {
                    return Ok(false);
                }
                if page::kind(g.page()) != KIND_LEAF || !page::leaf_put(g.page_mut(), &key, &value)
                {
                    return Err(corrupt(
                        pid,
                        format!("redo of put at lsn {lsn} does not apply"),
                    ));
                }
                g.set_lsn(lsn);
                Ok(true)
            }
            Record::Delete { pid, key } => {
                let mut g = self.pool.write(pid)?;
                if page::lsn(g.page()) >= lsn {
                    return Ok(false);
                }
                if page::kind(g.page()) != KIND_LEAF {
                    return Err(corrupt(
                        pid,
                        format!("redo of delete at lsn {lsn} hits a non-leaf"),
                    ));
                }
                page::leaf_delete(g.page_mut(), &key);
                g.set_lsn(lsn);
                Ok(true)
            }
            Record::Smo {
                root,
                next_pid,
                pages,
            } => {
                let mut any = false;
                for (pid, img) in pages {
                    page::validate_layout(&img, pid)?;
                    let mut g = self.pool.write(pid)?;
                    if page::lsn(g.page()) >= lsn {
                        continue;
                    }
                    g.page_mut().copy_from_slice(&img);
                    g.set_lsn(lsn);
                    any = true;
                }
                let mut t = self.tree.write();
                t.root = root;
                t.next_pid = t.next_pid.max(next_pid);
                Ok(any)
            }
        }
    }

    fn measure_height(&self, root: Pid) -> Result<usize> {
        let mut pid = root;
        for h in 1..=MAX_HEIGHT {
            let g = self.pool.read(pid)?;
            match page::kind(&g.page) {
                KIND_LEAF => return Ok(h),
                KIND_INNER => pid = page::link(&g.page),
                k => return Err(corrupt(pid, format!("unexpected page kind {k} in tree"))),
            }
        }
        Err(corrupt(root, "tree deeper than the height limit"))
    }

    /// The report of the recovery `open` performed (None for `create`).
    pub fn recovery_report(&self) -> Option<&RecoveryReport> {
        self.report.as_ref()
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }
    pub fn layout(&self) -> Layout {
        self.layout
    }
    pub fn device(&self) -> &Arc<dyn BlockDevice> {
        &self.dev
    }
    /// The device holding the WAL (the main device unless created with a separate one).
    pub fn wal_device(&self) -> &Arc<dyn BlockDevice> {
        &self.wal_dev
    }

    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Relaxed) {
            return Err(EngineError::Closed("engine closed".into()));
        }
        Ok(())
    }

    // ------------------------------------------------------------------ reads

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.check_open()?;
        self.counters.gets.inc();
        let t = self.tree.read();
        let mut pid = t.root;
        for _ in 0..t.height - 1 {
            let g = self.pool.read(pid)?;
            if page::kind(&g.page) != KIND_INNER {
                return Err(corrupt(pid, "expected inner node"));
            }
            pid = page::inner_find(&g.page, key);
        }
        let g = self.pool.read(pid)?;
        if page::kind(&g.page) != KIND_LEAF {
            return Err(corrupt(pid, "expected leaf"));
        }
        Ok(page::search(&g.page, key)
            .ok()
            .map(|i| page::leaf_value(&g.page, i).to_vec()))
    }

    /// Pairs with `start <= key < end` (end None = unbounded), at most `limit`, in key order.
    pub fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        self.scan_with(start, end, |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            out.len() < limit
        })?;
        Ok(out)
    }

    /// Visit pairs with `start <= key < end` in order until `f` returns false. `f` runs under
    /// the shared tree lock and a page latch: it must not call back into the engine.
    pub fn scan_with(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.check_open()?;
        let t = self.tree.read();
        let mut pid = t.root;
        for _ in 0..t.height - 1 {
            let g = self.pool.read(pid)?;
            if page::kind(&g.page) != KIND_INNER {
                return Err(corrupt(pid, "expected inner node"));
            }
            pid = page::inner_find(&g.page, start);
        }
        let mut first = true;
        let mut hops = 0u64;
        loop {
            let g = self.pool.read(pid)?;
            if page::kind(&g.page) != KIND_LEAF {
                return Err(corrupt(pid, "expected leaf in scan"));
            }
            let from = if first {
                match page::search(&g.page, start) {
                    Ok(i) | Err(i) => i,
                }
            } else {
                0
            };
            first = false;
            for i in from..page::nkeys(&g.page) {
                let k = page::key(&g.page, i);
                if end.is_some_and(|e| k >= e) {
                    return Ok(());
                }
                if !f(k, page::leaf_value(&g.page, i)) {
                    return Ok(());
                }
            }
            let next = page::link(&g.page);
            if next == page::NO_LINK {
                return Ok(());
            }
            hops += 1;
            if hops > t.next_pid {
                return Err(corrupt(pid, "leaf chain loops"));
            }
            pid = next;
        }
    }

    // ------------------------------------------------------------------ writes

    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_with(key, value, self.cfg.durability)
    }

    pub fn put_with(&self, key: &[u8], value: &[u8], d: Durability) -> Result<()> {
        self.check_open()?;
        check_kv(key, value)?;
        self.counters.puts.inc();
        self.counters
            .logical_user_bytes
            .add((key.len() + value.len()) as u64);
        self.wal_gate()?;
        let lsn = {
            let t = self.tree.read();
            let leaf = self.find_leaf(&t, key)?;
            let mut g = self.pool.write(leaf)?;
            if page::leaf_fits(g.page(), key, value) {
                let hdr = Self::kv_header(leaf, key, value.len());
                g.mark_dirty();
                let lsn = self.wal.append(T_PUT, &[&hdr, key, value])?;
                page::leaf_put(g.page_mut(), key, value);
                g.set_lsn(lsn);
                Some(lsn)
            } else {
                None
            }
        };
        let lsn = match lsn {
            Some(l) => l,
            None => self.put_smo(key, value)?,
        };
        self.after_write(lsn, d)
    }

    /// Delete `key`; returns whether it existed.
    pub fn delete(&self, key: &[u8]) -> Result<bool> {
        self.delete_with(key, self.cfg.durability)
    }

    pub fn delete_with(&self, key: &[u8], d: Durability) -> Result<bool> {
        self.check_open()?;
        if key.len() > MAX_KEY {
            return Ok(false);
        }
        self.counters.deletes.inc();
        self.wal_gate()?;
        let lsn = {
            let t = self.tree.read();
            let leaf = self.find_leaf(&t, key)?;
            let mut g = self.pool.write(leaf)?;
            if page::search(g.page(), key).is_err() {
                drop(g);
                drop(t);
                // A sync no-op still orders after earlier async writes: make them durable.
                if d == Durability::Sync {
                    self.wal.flush(self.wal.next_lsn())?;
                }
                return Ok(false);
            }
            let mut hdr = [0u8; 10];
            hdr[..8].copy_from_slice(&leaf.to_le_bytes());
            hdr[8..].copy_from_slice(&(key.len() as u16).to_le_bytes());
            g.mark_dirty();
            let lsn = self.wal.append(T_DELETE, &[&hdr, key])?;
            page::leaf_delete(g.page_mut(), key);
            g.set_lsn(lsn);
            lsn
        };
        self.after_write(lsn, d)?;
        Ok(true)
    }

    fn kv_header(pid: Pid, key: &[u8], vlen: usize) -> [u8; 12] {
        let mut h = [0u8; 12];
        h[..8].copy_from_slice(&pid.to_le_bytes());
        h[8..10].copy_from_slice(&(key.len() as u16).to_le_bytes());
        h[10..12].copy_from_slice(&(vlen as u16).to_le_bytes());
        h
    }

    fn find_leaf(&self, t: &TreeMeta, key: &[u8]) -> Result<Pid> {
        let mut pid = t.root;
        for _ in 0..t.height - 1 {
            let g = self.pool.read(pid)?;
            if page::kind(&g.page) != KIND_INNER {
                return Err(corrupt(pid, "expected inner node"));
            }
            pid = page::inner_find(&g.page, key);
        }
        Ok(pid)
    }

    fn after_write(&self, lsn: u64, d: Durability) -> Result<()> {
        match d {
            Durability::Sync => self.wal.flush(lsn + 1),
            Durability::Async => {
                if self.wal.unflushed() > self.cfg.async_flush_bytes {
                    self.wal.flush_all()?;
                }
                Ok(())
            }
        }
    }

    /// Put with structure modification, under the exclusive tree lock. The whole SMO (all
    /// rewritten pages, the new root and allocation mark) is one WAL record: atomic in redo.
    fn put_smo(&self, key: &[u8], value: &[u8]) -> Result<u64> {
        let mut t = self.tree.write();
        // Path from the root to the leaf.
        let mut path = Vec::with_capacity(t.height);
        let mut pid = t.root;
        for _ in 0..t.height - 1 {
            path.push(pid);
            let g = self.pool.read(pid)?;
            pid = page::inner_find(&g.page, key);
        }
        let leaf_pid = pid;
        let mut leaf = self.pool.write(leaf_pid)?;
        if page::leaf_fits(leaf.page(), key, value) {
            // Another thread made room meanwhile.
            let hdr = Self::kv_header(leaf_pid, key, value.len());
            leaf.mark_dirty();
            let lsn = self.wal.append(T_PUT, &[&hdr, key, value])?;
            page::leaf_put(leaf.page_mut(), key, value);
            leaf.set_lsn(lsn);
            return Ok(lsn);
        }
        // Worst case: every level splits plus a new root.
        let pages_needed = 2 * t.height as u64 + 1;
        if t.next_pid + pages_needed > self.store.capacity_pages() {
            return Err(EngineError::Full(format!(
                "data region full ({} pages)",
                self.layout.data_pages
            )));
        }
        let res = self.split_and_log(&mut t, path, leaf, key, value);
        if res.is_err() {
            // Pages may be modified in memory but not logged: refuse further work.
            self.closed.store(true, Ordering::Relaxed);
        }
        res
    }

    fn split_and_log(
        &self,
        t: &mut TreeMeta,
        mut path: Vec<Pid>,
        mut leaf: crate::buffer::WriteGuard<'_>,
        key: &[u8],
        value: &[u8],
    ) -> Result<u64> {
        let leaf_pid = leaf.pid();
        // Leaf split.
        let mut entries = page::leaf_entries(leaf.page());
        let appended = match entries.binary_search_by(|(k, _)| k.as_slice().cmp(key)) {
            Ok(i) => {
                entries[i].1 = value.to_vec();
                false
            }
            Err(i) => {
                entries.insert(i, (key.to_vec(), value.to_vec()));
                i == entries.len() - 1
            }
        };
        if entries.len() < 2 {
            // A single record always fits a page (MAX_KV): the page must be damaged.
            return Err(corrupt(leaf_pid, "leaf split with fewer than two records"));
        }
        let s = if appended && entries.len() > 1 {
            // Sequential inserts: keep the old leaf full, start a new one.
            entries.len() - 1
        } else {
            let sizes: Vec<usize> = entries
                .iter()
                .map(|(k, v)| page::leaf_record_size(k, v) + page::SLOT)
                .collect();
            split_point(&sizes, false)
        };
        let right_pid = t.next_pid;
        t.next_pid += 1;
        let mut right = self.pool.create(right_pid)?;
        let old_link = page::link(leaf.page());
        page::leaf_build(right.page_mut(), right_pid, &entries[s..], old_link);
        page::leaf_build(leaf.page_mut(), leaf_pid, &entries[..s], right_pid);
        let mut sep = entries[s].0.clone();
        let mut new_child = right_pid;
        let mut left_child = leaf_pid;
        let mut guards = vec![leaf, right];
        // Propagate upwards.
        loop {
            let Some(parent_pid) = path.pop() else {
                // Root split: new root.
                let root_pid = t.next_pid;
                t.next_pid += 1;
                let mut r = self.pool.create(root_pid)?;
                page::inner_build(r.page_mut(), root_pid, left_child, &[(sep, new_child)]);
                guards.push(r);
                t.root = root_pid;
                t.height += 1;
                break;
            };
            let mut p = self.pool.write(parent_pid)?;
            if page::inner_insert(p.page_mut(), &sep, new_child) {
                guards.push(p);
                break;
            }
            let mut es = page::inner_entries(p.page());
            let i = match es.binary_search_by(|(k, _)| k.as_slice().cmp(&sep)) {
                Ok(i) | Err(i) => i,
            };
            es.insert(i, (sep, new_child));
            let sizes: Vec<usize> = es
                .iter()
                .map(|(k, _)| page::inner_record_size(k) + page::SLOT)
                .collect();
            let m = split_point(&sizes, true);
            let rp = t.next_pid;
            t.next_pid += 1;
            let mut r = self.pool.create(rp)?;
            let leftmost = page::link(p.page());
            page::inner_build(r.page_mut(), rp, es[m].1, &es[m + 1..]);
            page::inner_build(p.page_mut(), parent_pid, leftmost, &es[..m]);
            sep = es[m].0.clone();
            new_child = rp;
            left_child = parent_pid;
            guards.push(p);
            guards.push(r);
        }
        // Log the SMO.
        let mut payload: Vec<u8> = Vec::with_capacity(18 + guards.len() * (8 + PAGE_SIZE));
        payload.extend_from_slice(&t.root.to_le_bytes());
        payload.extend_from_slice(&t.next_pid.to_le_bytes());
        payload.extend_from_slice(&(guards.len() as u16).to_le_bytes());
        for g in &guards {
            payload.extend_from_slice(&g.pid().to_le_bytes());
            payload.extend_from_slice(g.page());
        }
        for g in &guards {
            g.mark_dirty();
        }
        // Cannot fail while the gate keeps the WAL under its limit (the caller poisons the
        // engine if it does: the in-memory tree would be ahead of the log).
        let lsn = self.wal.append(T_SMO, &[&payload])?;
        for g in &mut guards {
            g.set_lsn(lsn);
        }
        Ok(lsn)
    }

    // ------------------------------------------------------------------ checkpoints

    /// Called before each write, holding nothing: keeps the WAL under its limit.
    /// Continuous fuzzy checkpointing: from half the limit on, every write that finds the
    /// checkpoint lock free does one step of the current pass (a slice of the frames), so the
    /// cost is spread over many operations; at the limit, writers wait for (or run) whole
    /// passes.
    fn wal_gate(&self) -> Result<()> {
        let used = self.wal.used();
        if used < self.wal_limit / 2 && !self.ckpt_active.load(Ordering::Relaxed) {
            return Ok(());
        }
        if used < self.wal_limit {
            if let Some(mut c) = self.ckpt.try_lock() {
                let step = (self.pool.frames() / 256).max(64);
                self.checkpoint_step(&mut c, step, false)?;
            }
            return Ok(());
        }
        let mut c = self.ckpt.lock();
        if self.wal.used() >= self.wal_limit {
            // Finish the pass in progress (its begin is the oldest), then a fresh one if needed.
            self.checkpoint_step(&mut c, usize::MAX, false)?;
            if self.wal.used() >= self.wal_limit {
                self.checkpoint_step(&mut c, usize::MAX, false)?;
            }
            if self.wal.used() >= self.wal_limit {
                return Err(EngineError::Full(
                    "WAL limit reached even after a checkpoint".into(),
                ));
            }
        }
        Ok(())
    }

    /// Full fuzzy checkpoint: every change made before the call is on disk and the redo LSN
    /// moves to the start of this call.
    pub fn checkpoint(&self) -> Result<()> {
        let mut c = self.ckpt.lock();
        self.full_checkpoint(&mut c, false)
    }

    fn full_checkpoint(&self, c: &mut CkptState, clean: bool) -> Result<()> {
        // A pass already in progress started earlier: finish it, then run a complete one.
        if c.pass.is_some() {
            self.checkpoint_step(c, usize::MAX, false)?;
        }
        self.checkpoint_step(c, usize::MAX, clean)
    }

    /// Start a pass if none is running, sweep up to `budget` frames, and finish the pass
    /// (superblock) when the sweep reaches the end.
    fn checkpoint_step(&self, c: &mut CkptState, budget: usize, clean: bool) -> Result<()> {
        if c.pass.is_none() {
            // Under the shared tree lock no SMO is in flight, so root/next_pid match `begin`.
            // A change with LSN < begin was applied to its page before `begin` was read, and
            // its writer marked the frame dirty before appending (see flush_dirty_range).
            let t = self.tree.read();
            c.pass = Some(Pass {
                begin: self.wal.next_lsn(),
                root: t.root,
                next_pid: t.next_pid,
                cursor: 0,
            });
            self.ckpt_active.store(true, Ordering::Relaxed);
        }
        let p = c.pass.as_mut().expect("pass started above");
        let end = p.cursor.saturating_add(budget).min(self.pool.frames());
        // A page dirty at `begin` is either still in a frame the sweep has not passed yet, or
        // was written by eviction meanwhile: either way it is on disk when the sweep ends.
        self.pool
            .flush_dirty_range(p.cursor..end, WriteKind::Checkpoint)?;
        p.cursor = end;
        if end < self.pool.frames() {
            return Ok(());
        }
        let (begin, root, next_pid) = (p.begin, p.root, p.next_pid);
        self.wal.flush(begin)?;
        let sb = Superblock {
            seq: c.seq + 1,
            layout: self.layout,
            doublewrite: self.cfg.doublewrite,
            clean,
            wal_separate: self.wal_separate,
            redo_lsn: begin,
            root,
            next_pid,
            wal_salt: self.salt,
            store_meta: self.store.checkpoint()?,
        };
        // The superblock lives on the log device when there is one.
        sb.write(&*self.wal_dev)?;
        c.seq += 1;
        c.pass = None;
        self.ckpt_active.store(false, Ordering::Relaxed);
        self.wal.set_redo_lsn(begin);
        Counters::add(&self.counters.checkpoints, 1);
        Ok(())
    }

    /// Clean shutdown: flush the WAL, checkpoint, mark the superblock clean. Later calls fail.
    pub fn close(&self) -> Result<()> {
        self.check_open()?;
        // No background GC after (or during) the final checkpoint.
        self.store.shutdown();
        let mut c = self.ckpt.lock();
        self.wal.flush_all()?;
        self.full_checkpoint(&mut c, true)?;
        self.closed.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Force the WAL (makes all async writes so far durable).
    pub fn sync(&self) -> Result<()> {
        self.wal.flush_all()
    }

    // ------------------------------------------------------------------ statistics

    /// Snapshot of the counters (since this instance was created or opened).
    pub fn stats(&self) -> Stats {
        self.counters.snapshot(BS)
    }

    /// WAL bytes currently live (between the last checkpoint's redo LSN and the end).
    pub fn wal_used(&self) -> u64 {
        self.wal.used()
    }

    /// Frames in the buffer pool, and how many hold dirty pages.
    pub fn pool_frames(&self) -> (usize, usize) {
        (self.pool.frames(), self.pool.dirty_count())
    }
}
