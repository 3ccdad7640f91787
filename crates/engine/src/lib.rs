//! Embedded key-value engine: B+-tree, buffer pool, WAL, checkpoints, recovery, in-place and
//! out-of-place write paths. See `docs/design.md` for the on-disk formats and crash arguments.
//!
//! ```
//! use nowa_device::MemDevice;
//! use nowa_engine::{Config, Durability, Engine};
//! // Default pool 64 MiB, WAL limit = pool: the device needs room for the WAL region too.
//! let e = Engine::create(MemDevice::new(256 << 20), Config::default()).unwrap();
//! e.put(b"k", b"v").unwrap();                          // Config::durability (Sync)
//! e.put_with(b"k2", b"v2", Durability::Async).unwrap();
//! assert_eq!(e.get(b"k").unwrap(), Some(b"v".to_vec()));
//! assert_eq!(e.scan(b"k", None, 10).unwrap().len(), 2);
//! println!("DB WAF {}", e.stats().db_waf);
//! e.close().unwrap();                                  // checkpoint; drop without close = crash
//! ```

mod blind;
mod buffer;
pub mod catalog;
mod cleaner;
mod db;
mod error;
pub mod format;
pub mod keys;
mod num;
pub mod oop;
pub mod page;
mod rcache;
mod stats;
mod store;
mod treelock;
pub mod txn;
mod wal;
mod yields;

pub use buffer::flushing::{FlushClock, Flushing};
pub use buffer::hotness::{PageWrite, PageWriteKind, WriteObserver};
pub use catalog::{TableId, TreeOptions};
pub use db::{
    wal_region_bytes, BackgroundMode, BackgroundTask, Config, Durability, Engine, LeafUsage,
    RecoveryReport, SpaceUsage, WalDamage, YieldHook, YieldPoint, MAX_WRITE_SET,
};
pub use error::{
    CodecError, ConfigError, Corruption, DeltaError, EngineError, Exhausted, FlushMarkDamage,
    MappingDamage, MetaDamage, PageDamage, Pid, PlacementRefusal, RecordDamage, RedoDamage, Result,
    SalvageRefusal, SlotDamage, SuperblockDamage, TreeDamage, WritePathKind,
};
pub use format::superblock::{identify, DbIdentity, DiskLayout, SalvageRecord, WritePath};
pub use oop::{
    out_of_place_store, Compression, FrozenBase, FrozenHook, OopConfig, OracleFactory,
    OutOfPlaceStore, PageOracle, SHARED_WAL_FREE,
};
pub use page::{leaf_records_per_page, PAGE_SIZE};
pub use stats::{EngineCounters, Stats, Striped, RESIDENCY_BUCKETS};
pub use store::{
    in_place_store, store_builder, FnStoreBuilder, InPlaceStore, OpenMode, PageCache, PageStore,
    StoreBuilder, StoreContext, StoreRecovery, WriteKind,
};
pub use txn::{ScanDir, Txn};
pub use wal::WalStop;
pub use yields::YieldFn;
