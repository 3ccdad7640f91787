//! Create and open: one path for every variant (main device only, another write path, a
//! separate log device). Create lays out the regions, formats the store, writes the root and
//! the first two superblocks. Open reads and checks everything first (superblocks, write
//! path, store metadata, the WAL's end) and writes nothing until every check passed; then
//! the store repairs, the WAL is redone, and a checkpoint moves the database to a new epoch.

use super::{CkptState, Config, Engine, RecoveryReport, WalDamage, BS};
use crate::buffer::BufferPool;
use crate::error::{ConfigError, Corruption, EngineError, Pid, RecordDamage, Result};
use crate::format::superblock::{DiskLayout, SalvageRecord, Superblock, WritePath};
use crate::format::BLOCK;
use crate::page::{self, KIND_LEAF, PAGE_SIZE};
use crate::stats::EngineCounters;
use crate::store::{
    in_place_store, OpenMode, PageCache, PageStore, StoreBuilder, StoreContext, WriteKind,
};
use crate::treelock::{TreeLock, TreeMeta};
use crate::wal::{analyze, LogVerdict, Wal, WalStop};
use nowa_device::BlockDevice;
use parking_lot::Mutex;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Room past the hard WAL limit for records of operations already past the gate.
const WAL_SLACK: u64 = 1 << 20;

/// Bytes of WAL region `create` makes for `cfg` (device sizing).
#[must_use]
pub fn wal_region_bytes(cfg: &Config) -> u64 {
    let limit = cfg.wal_limit();
    cfg.wal_region_bytes
        .unwrap_or(limit + limit / 4 + WAL_SLACK)
        .div_ceil(BS)
        * BS
}

/// The WAL limit the engine enforces: the configured one, within what the region allows.
fn effective_limit(limit: u64, region: u64) -> u64 {
    limit.min(region.saturating_sub(WAL_SLACK)).max(8 * BS)
}

/// The main device and the device holding the superblocks and the WAL.
struct Devices {
    main: Arc<dyn BlockDevice>,
    wal: Arc<dyn BlockDevice>,
    separate: bool,
}

impl Devices {
    fn new(main: Arc<dyn BlockDevice>, wal: Option<Arc<dyn BlockDevice>>) -> Devices {
        let separate = wal.is_some();
        let wal = wal.unwrap_or_else(|| main.clone());
        Devices {
            main,
            wal,
            separate,
        }
    }

    fn blocks(d: &Arc<dyn BlockDevice>) -> u64 {
        d.geometry().capacity / BS
    }

    fn context(
        &self,
        layout: DiskLayout,
        cfg: &Config,
        counters: &Arc<EngineCounters>,
        mode: OpenMode,
        metadata: Vec<u8>,
        fallback_metadata: Option<Vec<u8>>,
    ) -> StoreContext {
        StoreContext {
            device: self.main.clone(),
            layout,
            doublewrite: cfg.doublewrite,
            counters: counters.clone(),
            mode,
            metadata,
            fallback_metadata,
            meta_device: self
                .separate
                .then(|| (self.wal.clone(), layout.wal_start + layout.wal_blocks)),
            write_timer: 0,
            create_id: cfg.random(super::RANDOM_STORE_ID),
        }
    }
}

/// Everything [`Engine::assemble`] needs besides the devices.
struct Parts {
    cfg: Config,
    layout: DiskLayout,
    store: Arc<dyn PageStore>,
    counters: Arc<EngineCounters>,
    salt: u32,
    /// First LSN of the log epoch.
    lsn: u64,
    tree: TreeMeta,
    seq: u64,
    salvage: SalvageRecord,
}

/// An engine whose open passed every check, before redo ([`Engine::open_checked`]).
pub(super) struct Checked {
    pub(super) eng: Engine,
    pub(super) sb: Superblock,
    /// Where redo ends.
    pub(super) end: u64,
    pub(super) stop: WalStop,
    pub(super) analysis: std::time::Duration,
    pub(super) repair: crate::store::StoreRecovery,
}

/// Where the regions go for `cfg` on `devs`.
fn plan_layout(devs: &Devices, cfg: &Config) -> Result<DiskLayout> {
    let limit = cfg.wal_limit();
    if cfg.pool_bytes < 64 * BS || limit < 16 * BS || cfg.dw_pages == 0 {
        return Err(ConfigError::Sizes {
            pool_bytes: cfg.pool_bytes,
            wal_limit: limit,
            dw_pages: cfg.dw_pages,
        }
        .into());
    }
    let region = wal_region_bytes(cfg);
    let need = (crate::format::mark::BLOCKS + 2) * BS;
    if region < need {
        return Err(ConfigError::WalRegionTooSmall {
            bytes: region,
            need,
        }
        .into());
    }
    let blocks = Devices::blocks(&devs.main);
    let (wal_start, data_start) = if devs.separate {
        // Log device: superblock copies at blocks 0-1, then the WAL region.
        let bytes = devs.wal.geometry().capacity;
        if region + 2 * BS > bytes {
            return Err(ConfigError::LogDeviceTooSmall {
                bytes,
                need: region + 2 * BS,
            }
            .into());
        }
        (2, 2 + cfg.dw_pages)
    } else {
        (2 + cfg.dw_pages, 2 + cfg.dw_pages + region / BS)
    };
    if data_start + 16 > blocks {
        return Err(ConfigError::DeviceTooSmall {
            blocks,
            need: data_start + 16,
        }
        .into());
    }
    Ok(DiskLayout {
        dw_start: 2,
        dw_pages: cfg.dw_pages,
        wal_start,
        wal_blocks: region / BS,
        data_start,
        data_pages: blocks - data_start,
    })
}

/// Read both superblock copies: the valid one with the highest seq, and the other one if it
/// is valid too (the previous checkpoint). Checks the layout against the devices.
fn read_superblocks(devs: &Devices) -> Result<(Superblock, Option<Superblock>)> {
    let mut copies = Vec::with_capacity(2);
    for b in 0..2u64 {
        let mut buf = vec![0u8; BLOCK];
        devs.wal.read_at(b * BS, &mut buf)?;
        copies.push(Superblock::decode(&buf));
    }
    let mut valid: Vec<Superblock> = copies
        .iter()
        .filter_map(|c| c.as_ref().ok().cloned())
        .collect();
    valid.sort_by_key(|s| std::cmp::Reverse(s.seq));
    let mut valid = valid.into_iter();
    let Some(sb) = valid.next() else {
        let damage = |c: &std::result::Result<Superblock, _>| c.as_ref().err().copied();
        return Err(EngineError::NoSuperblock {
            a: damage(&copies[0]).unwrap_or(crate::error::SuperblockDamage::Short { len: 0 }),
            b: damage(&copies[1]).unwrap_or(crate::error::SuperblockDamage::Short { len: 0 }),
        });
    };
    match (sb.wal_separate, devs.separate) {
        (true, false) => return Err(ConfigError::LogDeviceMissing.into()),
        (false, true) => return Err(ConfigError::LogDeviceUnexpected.into()),
        _ => {}
    }
    let log_blocks = devs.separate.then(|| Devices::blocks(&devs.wal));
    sb.check(Devices::blocks(&devs.main), log_blocks)
        .map_err(Corruption::Superblock)?;
    let older = valid
        .next()
        .filter(|o| o.seq < sb.seq && o.check(Devices::blocks(&devs.main), log_blocks).is_ok());
    Ok((sb, older))
}

/// A log that ends (cleanly or torn) at `end` while the store holds a copy `newest` (pid,
/// LSN) of a change logged at or after it, but before the epoch the next open would start
/// (`end` rounded up to a block, one region on, where an interrupted recovery of this same
/// log writes): the records from `end` on were durable (the WAL rule) and are lost, media
/// damage to a tail no flush mark vouches for (write-back's flushes write none).
fn page_ahead(verdict: LogVerdict, newest: Option<(Pid, u64)>, region: u64) -> LogVerdict {
    let end = match verdict {
        LogVerdict::Clean { end } | LogVerdict::Torn { end, .. } => end,
        LogVerdict::Damaged { .. } => return verdict,
    };
    let next_epoch = end.div_ceil(BS) * BS + region;
    match newest {
        Some((pid, lsn)) if lsn >= end && lsn < next_epoch => LogVerdict::Damaged {
            from: end,
            to: lsn + 1,
            damage: RecordDamage::PageAhead { pid, lsn },
        },
        _ => verdict,
    }
}

/// Decide what to do with the end of the log: (end, stop, salvage record).
fn judge(
    verdict: LogVerdict,
    policy: WalDamage,
    mut salvage: SalvageRecord,
) -> Result<(u64, WalStop, SalvageRecord)> {
    match verdict {
        LogVerdict::Clean { end } => Ok((end, WalStop::Clean, salvage)),
        LogVerdict::Torn { end, damage } => {
            tracing::warn!(lsn = end, %damage, "torn WAL tail (a crash during a log flush): the unacknowledged records after it are discarded");
            Ok((end, WalStop::TornTail { lsn: end, damage }, salvage))
        }
        LogVerdict::Damaged { from, to, damage } => {
            if policy == WalDamage::Refuse {
                return Err(EngineError::WalDamaged { from, to, damage });
            }
            tracing::error!(from, to, %damage, "SALVAGE: the WAL is damaged in the middle; every record from LSN {from} on is LOST (recorded in the superblock)");
            salvage.count += 1;
            salvage.from = from;
            salvage.to = to;
            Ok((from, WalStop::Salvaged { from, to, damage }, salvage))
        }
    }
}

impl Engine {
    /// Format `dev` and create an empty database (in place, WAL on `dev`).
    ///
    /// # Errors
    /// `Config` if the device is too small, device errors.
    pub fn create<D: BlockDevice + 'static>(dev: D, cfg: Config) -> Result<Engine> {
        Self::create_with_wal(Arc::new(dev), None, cfg, &in_place_store())
    }

    /// `create` with another write path behind the [`PageStore`] seam.
    ///
    /// # Errors
    /// As [`Self::create`], and what the store builder refuses.
    pub fn create_with_store<D: BlockDevice + 'static>(
        dev: D,
        cfg: Config,
        build: &dyn StoreBuilder,
    ) -> Result<Engine> {
        Self::create_with_wal(Arc::new(dev), None, cfg, build)
    }

    /// `create_with_store` with the superblocks and the WAL on a separate device (`wal_dev`,
    /// from block 0), as in how-to-write-to-ssds.md (Figure 1: the device under test holds
    /// only pages).
    ///
    /// # Errors
    /// As [`Self::create_with_store`].
    ///
    /// # Panics
    /// If the builder makes another write path than its `kind` says (a bug in the builder).
    pub fn create_with_wal(
        dev: Arc<dyn BlockDevice>,
        wal_dev: Option<Arc<dyn BlockDevice>>,
        cfg: Config,
        build: &dyn StoreBuilder,
    ) -> Result<Engine> {
        let devs = Devices::new(dev, wal_dev);
        let layout = plan_layout(&devs, &cfg)?;
        let counters = Arc::new(EngineCounters::default());
        let ctx = devs.context(layout, &cfg, &counters, OpenMode::Create, Vec::new(), None);
        let store = build.build(ctx)?;
        assert_eq!(
            store.write_path().kind(),
            build.kind(),
            "builder made another write path"
        );
        store.format()?;
        // Empty root leaf at pid 0 (no log needed: it is in the first checkpoint).
        let mut root = vec![0u8; PAGE_SIZE];
        page::init(&mut root, KIND_LEAF, 0);
        page::seal(&mut root);
        store.write_pages(&[(0, &root)], WriteKind::Checkpoint)?;
        let salt = u32::try_from(cfg.random(super::RANDOM_WAL_SALT) >> 32).expect("32 bits");
        let parts = Parts {
            cfg,
            layout,
            store,
            counters,
            salt,
            lsn: BS,
            tree: TreeMeta {
                root: 0,
                next_pid: 1,
                height: 1,
            },
            seq: 0,
            salvage: SalvageRecord::default(),
        };
        let eng = Self::assemble(devs, parts);
        eng.wal.start_epoch()?;
        {
            // Both superblock copies, each with its own store checkpoint: from the start,
            // a damaged current checkpoint has an intact older one to fall back to. Not
            // clean: the database is open, and a crash before its first checkpoint must not
            // be reported as a clean shutdown (only `close` writes a clean superblock).
            let mut c = eng.ckpt.lock();
            eng.full_checkpoint(&mut c, false)?;
            eng.full_checkpoint(&mut c, false)?;
            assert_eq!(c.seq, 2, "create writes superblocks 1 and 2");
        }
        eng.mark_main_device()?;
        eng.start_background();
        Ok(eng)
    }

    /// Open an existing database: check it, repair torn pages, redo the WAL from the last
    /// checkpoint, then checkpoint so the old log is no longer needed.
    ///
    /// # Errors
    /// `NoSuperblock`, `WrongWritePath`, `WalDamaged`, `Corrupt`, `Config`, device errors.
    /// Nothing is written when one of the checks fails.
    pub fn open<D: BlockDevice + 'static>(dev: D, cfg: Config) -> Result<Engine> {
        Self::open_with_wal(Arc::new(dev), None, cfg, &in_place_store())
    }

    /// `open` with another write path (must be the one the database was created with).
    ///
    /// # Errors
    /// As [`Self::open`].
    pub fn open_with_store<D: BlockDevice + 'static>(
        dev: D,
        cfg: Config,
        build: &dyn StoreBuilder,
    ) -> Result<Engine> {
        Self::open_with_wal(Arc::new(dev), None, cfg, build)
    }

    /// `open_with_store` for a database created by [`Self::create_with_wal`].
    ///
    /// # Errors
    /// As [`Self::open`].
    pub fn open_with_wal(
        dev: Arc<dyn BlockDevice>,
        wal_dev: Option<Arc<dyn BlockDevice>>,
        cfg: Config,
        build: &dyn StoreBuilder,
    ) -> Result<Engine> {
        let o = Self::open_checked(dev, wal_dev, cfg, build)?;
        Self::finish_open(o.eng, &o.sb, (o.end, o.stop, o.analysis), o.repair)
    }

    /// The checks of an open, the store's repair and the engine around it, before redo.
    pub(super) fn open_checked(
        dev: Arc<dyn BlockDevice>,
        wal_dev: Option<Arc<dyn BlockDevice>>,
        cfg: Config,
        build: &dyn StoreBuilder,
    ) -> Result<Checked> {
        let devs = Devices::new(dev, wal_dev);
        let (sb, older) = read_superblocks(&devs)?;
        if sb.write_path.kind() != build.kind() {
            return Err(EngineError::WrongWritePath {
                created: sb.write_path,
                requested: build.kind(),
            });
        }
        let counters = Arc::new(EngineCounters::default());
        let mut ctx = devs.context(
            sb.layout,
            &cfg,
            &counters,
            OpenMode::Open,
            sb.store_meta.clone(),
            older.map(|o| o.store_meta),
        );
        ctx.write_timer = sb.hr_timer;
        let store = build.build(ctx)?;
        let l = sb.layout;
        let t = std::time::Instant::now();
        let verdict = analyze(
            &*devs.wal,
            l.wal_start,
            l.wal_blocks,
            sb.wal_salt,
            (sb.scan_lsn, sb.redo_lsn),
            sb.clean,
        )?;
        let verdict = page_ahead(verdict, store.newest_written(), l.log_blocks() * BS);
        let (end, stop, salvage) = judge(verdict, cfg.wal_damage, sb.salvage)?;
        let analysis = t.elapsed();
        // Every check passed: the store's repair is the first write of this open.
        let repair = store.recover()?;
        let eng = Self::assemble(
            devs,
            Self::reopen_parts(&sb, end, cfg, store, counters, salvage),
        );
        Ok(Checked {
            eng,
            sb,
            end,
            stop,
            analysis,
            repair,
        })
    }

    /// The parts of a reopened engine: a new log epoch. Salt + 1; first LSN = the block after
    /// the old end, one lap on: above every LSN of the old epoch (its records never pass
    /// redo + region, even past a torn or salvaged end), and physically outside the old live
    /// log, so the zero block that starts the epoch (written before the superblock moves to
    /// it) cannot destroy records a repeated recovery still needs.
    fn reopen_parts(
        sb: &Superblock,
        end: u64,
        cfg: Config,
        store: Arc<dyn PageStore>,
        counters: Arc<EngineCounters>,
        salvage: SalvageRecord,
    ) -> Parts {
        let region = sb.layout.log_blocks() * BS;
        let lsn = end.div_ceil(BS) * BS + region;
        assert!(
            lsn >= sb.redo_lsn + region,
            "new epoch at {lsn} overlaps the old one"
        );
        Parts {
            cfg,
            layout: sb.layout,
            store,
            counters,
            salt: sb.wal_salt.wrapping_add(1),
            lsn,
            tree: TreeMeta {
                root: sb.root,
                next_pid: sb.next_pid,
                height: 1,
            },
            seq: sb.seq,
            salvage,
        }
    }

    /// Redo, start the new epoch, checkpoint, report, start background work.
    fn finish_open(
        mut eng: Engine,
        sb: &Superblock,
        (end, stop, analysis): (u64, WalStop, std::time::Duration),
        repair: crate::store::StoreRecovery,
    ) -> Result<Engine> {
        let t = std::time::Instant::now();
        // Before redo dirties pages: their next writes continue the stored timer.
        eng.pool.resume_write_timer(sb.hr_timer);
        let (replayed, skipped) = eng.replay_checked(sb, end, stop)?;
        let redo = t.elapsed();
        eng.wal.start_epoch()?;
        // A commit group the crash interrupted: finish it in the new epoch (db/group.rs).
        eng.finish_pending_txn()?;
        if repair.snapshot_fallback.is_some() {
            // The current superblock names a damaged snapshot; the other copy names the one
            // the store loaded. Skip a seq so this checkpoint overwrites the current copy and
            // the intact pair survives a torn superblock write.
            eng.ckpt.lock().seq += 1;
        }
        eng.checkpoint()?;
        let salvage = eng.ckpt.lock().salvage;
        if let Some(c) = &repair.snapshot_fallback {
            tracing::warn!(damage = %c, "out-of-place: opened from the older mapping snapshot");
        }
        eng.report = Some(RecoveryReport {
            clean_shutdown: sb.clean,
            redo_lsn: sb.redo_lsn,
            end_lsn: end,
            records_replayed: replayed,
            records_skipped: skipped,
            pages_repaired: repair.pages_repaired,
            bad_wal_records: u64::from(stop != WalStop::Clean),
            wal_stop: stop,
            snapshot_fallback: repair.snapshot_fallback,
            salvage,
            analysis_micros: u64::try_from(analysis.as_micros()).unwrap_or(u64::MAX),
            redo_micros: u64::try_from(redo.as_micros()).unwrap_or(u64::MAX),
        });
        // Background work (out of place: DB GC) starts only after recovery.
        eng.start_background();
        Ok(eng)
    }

    /// Build the engine around its store: WAL, buffer pool, tree lock.
    fn assemble(devs: Devices, p: Parts) -> Engine {
        let rcache = crate::rcache::RecordCache::new(p.cfg.record_cache_bytes);
        let region = p.layout.log_blocks() * BS;
        let wal = Arc::new(Wal::new(
            devs.wal.clone(),
            p.layout.wal_start,
            p.layout.wal_blocks,
            p.salt,
            p.lsn,
            p.counters.clone(),
        ));
        let pool = Arc::new(BufferPool::new(
            p.cfg.frames(),
            p.layout.data_pages,
            p.store.clone(),
            wal.clone(),
            p.counters.clone(),
        ));
        let blind = crate::blind::Blind::new(p.cfg.blind_update_bytes).map(Arc::new);
        if let Some(b) = &blind {
            pool.attach_blind(b.clone());
        }
        pool.set_max_checkpoint_count(p.cfg.max_checkpoint_count);
        pool.set_max_redo_bytes(p.cfg.max_redo_bytes);
        // Write-back's WAL flushes go unmarked where the open checks pages against the log.
        wal.set_unmarked_rule_flushes(p.store.checks_log_end());
        let cache: Arc<dyn PageCache> = pool.clone();
        p.store.attach_cache(Arc::downgrade(&cache));
        let yields = Arc::new(crate::yields::YieldSite::default());
        pool.yields.attach(yields.clone());
        wal.yields.attach(yields.clone());
        let site = yields.clone();
        p.store
            .attach_yields(Arc::new(move |at: super::YieldPoint| site.at(at)));
        Engine {
            wal_limit: effective_limit(p.cfg.wal_limit(), region),
            dev: devs.main,
            wal_dev: devs.wal,
            wal_separate: devs.separate,
            cfg: p.cfg,
            layout: p.layout,
            salt: p.salt,
            store: p.store,
            wal,
            pool,
            tree: TreeLock::new(p.tree),
            free: Mutex::new(super::freelist::FreeList::default()),
            ckpt: Mutex::new(CkptState {
                seq: p.seq,
                pass: None,
                salvage: p.salvage,
                last_redo: 0,
            }),
            counters: p.counters,
            closed: AtomicBool::new(false),
            poisoned: AtomicBool::new(false),
            ckpt_active: AtomicBool::new(false),
            cleaner: Mutex::new(None),
            report: None,
            catalog: crate::catalog::Catalog::default(),
            commit_lock: parking_lot::RwLock::new(()),
            pending_txn: Mutex::new(None),
            yields,
            rcache,
            blind,
        }
    }

    /// With a separate log device: copy the current superblock (it says `wal_separate`) to
    /// block 0 of the main device and zero block 1, which the layout leaves unused there.
    /// An open of the main device alone then finds it and refuses with `LogDeviceMissing`,
    /// instead of "no superblock", or worse, the superblocks of an older database that used
    /// this device. Only in place: out of place the main device holds nothing but zones
    /// (on a zoned device block 0 is in a sequential zone; on an SSD the two blocks would
    /// share an erase block with nothing and cost GC copies forever).
    fn mark_main_device(&self) -> Result<()> {
        if !self.wal_separate || self.store.write_path() != WritePath::InPlace {
            return Ok(());
        }
        assert!(
            self.layout.dw_start >= 2 && self.layout.data_start >= 2,
            "blocks 0-1 of the main device are outside every region"
        );
        let mut marker = vec![0u8; 2 * BLOCK];
        let seq = self.ckpt.lock().seq;
        self.wal_dev.read_at((seq % 2) * BS, &mut marker[..BLOCK])?;
        let sb = Superblock::decode(&marker[..BLOCK]).map_err(Corruption::Superblock)?;
        assert!(sb.wal_separate, "the marker names the separate log device");
        self.dev.write_at(0, &marker)?;
        self.dev.flush()?;
        Ok(())
    }

    /// The write path recorded in the superblock (the store's).
    #[must_use]
    pub fn write_path(&self) -> WritePath {
        self.store.write_path()
    }
}
