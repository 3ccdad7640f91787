//! Embedded key-value engine: B+-tree, buffer pool, WAL, checkpoints, recovery, in-place and
//! out-of-place write paths. See `DESIGN.md` for the on-disk formats and crash arguments.

mod buffer;
mod engine;
mod error;
pub mod keys;
pub mod page;
mod stats;
mod store;
mod superblock;
mod treelock;
mod wal;

pub use engine::{Config, Durability, Engine, RecoveryReport};
pub use error::{EngineError, Pid, Result};
pub use page::PAGE_SIZE;
pub use stats::Stats;
pub use store::{InPlaceStore, PageStore, WriteKind};
pub use superblock::Layout;
pub use wal::WalStop;
