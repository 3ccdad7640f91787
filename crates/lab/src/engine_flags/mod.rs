//! Engine flags shared by the engine benchmarks (`nowa ycsb`, `nowa tpcc`, and their Python
//! functions): the buffer pool, the WAL limit, the doublewrite buffer and commit durability
//! ([`EngineFlags`]), write-back ([`WriteBackFlags`]), the simulated SSD's timing
//! ([`PacingFlags`]) and the out-of-place write path ([`OopFlags`]). Flatten them into a
//! command's args; [`EngineFlags::config`] applies the one default pool rule of both commands.

mod oop;
mod pacing;
mod write_back;

pub use oop::{oop_config, OopFlags, PathKind};
pub use pacing::PacingFlags;
pub use write_back::WriteBackFlags;

use crate::{flags, Error};
use clap::Args;
use nowa_engine::{Config, Durability};
use std::sync::Arc;

/// What a face gives the resolution of an engine run beyond its flags: a file or block
/// device opened with the user's consent, the memory check, the memory the pool may take.
/// [`InMemory`] for runs on the simulated SSD or in memory only (`nowa run`, Python).
pub trait Env {
    /// Opens `path` as a new database of `capacity` bytes; `step` says what will happen to it.
    ///
    /// # Errors
    /// Refused or failed (the error names the flag).
    fn open_path(
        &self,
        path: &str,
        capacity: u64,
        step: String,
    ) -> Result<Arc<dyn nowa_device::BlockDevice>, Error>;
    /// Refuses a run whose needs `(flag, what, bytes)` do not fit the memory.
    ///
    /// # Errors
    /// The first need that does not fit, naming its flag.
    fn check_memory(&self, needs: &[(&str, &str, u64)]) -> Result<(), Error>;
    /// A pool size from the memory this run may use (at least `min`), and why.
    fn pool_from_memory(&self, min: u64) -> (u64, String);
    /// Memory of a simulated SSD of `capacity` bytes (its pages and its FTL).
    fn sim_device_bytes(&self, capacity: u64) -> u64 {
        capacity
    }
}

/// The [`Env`] of runs on the simulated SSD or in memory: no device path, no memory check
/// beyond the allocator's.
#[derive(Debug, Clone, Copy, Default)]
pub struct InMemory;

impl Env for InMemory {
    fn open_path(
        &self,
        path: &str,
        _: u64,
        _: String,
    ) -> Result<Arc<dyn nowa_device::BlockDevice>, Error> {
        Err(Error::Usage(format!(
            "device: {path}: a run on a file or block device runs from the CLI (`nowa ... --device {path}`), which asks before formatting it"
        )))
    }
    fn check_memory(&self, _: &[(&str, &str, u64)]) -> Result<(), Error> {
        Ok(())
    }
    fn pool_from_memory(&self, min: u64) -> (u64, String) {
        (min, "the smallest pool (no memory figure)".into())
    }
}

/// The largest pool or WAL a flag accepts (the memory check refuses far less).
const MAX_BYTES: u64 = 1 << 50;

/// The engine's memory and durability settings.
#[derive(Args, Debug, Clone)]
pub struct EngineFlags {
    /// Buffer pool size. Default: on a file or block device (O_DIRECT: the page cache does not
    /// help), from the memory this run may use (cgroup limit or MemAvailable, 80% after a
    /// 16 MiB reserve), at most the estimated data + 1/8; on the simulated SSD or in memory,
    /// 10% of the estimated data (the paper's setting).
    #[arg(long, value_parser = flags::size(1 << 20, MAX_BYTES))]
    pub pool: Option<u64>,
    /// WAL size limit; default = pool size + --blind-updates memory.
    #[arg(long, value_parser = flags::size(1 << 20, MAX_BYTES))]
    pub wal_limit: Option<u64>,
    /// Turn the doublewrite buffer off (in place; unsafe: torn pages are detected, not
    /// repaired).
    #[arg(long)]
    pub no_doublewrite: bool,
    /// Commit durability: async (group commit in the background) or sync (each commit waits).
    #[arg(long, default_value = "async", value_parser = durability)]
    pub durability: Durability,
    /// Memory for the record cache (hot records, key -> value), beside --pool: a read of a
    /// cached record touches no page; 0: off.
    #[arg(long, default_value = "0", value_parser = flags::size(0, MAX_BYTES))]
    pub record_cache: u64,
    /// Memory for blind updates: an update of a record whose leaf is not in the pool is
    /// logged without reading the leaf and applied when the leaf is next loaded (engine
    /// `blind.rs`), beside --pool; 0: off.
    #[arg(long, default_value = "0", value_parser = flags::size(0, MAX_BYTES))]
    pub blind_updates: u64,
}

impl EngineFlags {
    /// The engine configuration for a run on `device` (`sim`, `mem` or a path) whose data is
    /// estimated at `data` bytes, and why the pool has its size.
    ///
    /// # Panics
    /// If the pool is below the flag's 1 MiB floor (a bug of the pool rule).
    pub fn config(&self, device: &str, data: u64, env: &dyn Env) -> (Config, String) {
        let (pool, why) = self.pool(device, data, env);
        assert!(
            pool >= 1 << 20,
            "a pool of at least 1 MiB (the flag's floor)"
        );
        let c = Config {
            pool_bytes: pool,
            wal_limit_bytes: self.wal_limit,
            durability: self.durability,
            doublewrite: !self.no_doublewrite,
            record_cache_bytes: self.record_cache,
            blind_update_bytes: self.blind_updates,
            ..Config::default()
        };
        assert_eq!(c.pool_bytes, pool, "the pool as chosen");
        assert_eq!(
            c.blind_update_bytes, self.blind_updates,
            "the blind-update memory as chosen"
        );
        (c, why)
    }

    /// The pool size and why: `--pool`; on a file or block device the memory this run may
    /// use, at most the data + 1/8; else 10% of the data.
    fn pool(&self, device: &str, data: u64, env: &dyn Env) -> (u64, String) {
        if let Some(p) = self.pool {
            return (p, "--pool".into());
        }
        let tenth = (data / 10).max(1 << 20) / 4096 * 4096;
        if matches!(device, "sim" | "mem") {
            return (
                tenth,
                "10% of the estimated data (the paper's setting; the device is in memory too)"
                    .into(),
            );
        }
        let (mem, why) = env.pool_from_memory(1 << 20);
        let whole = data.saturating_add(data / 8).div_ceil(4096) * 4096;
        if whole < mem {
            return (
                whole.max(1 << 20),
                format!("the whole estimated data + 1/8 (less than the memory allows: {why})"),
            );
        }
        (mem, why)
    }
}

use crate::engine::durability;

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(pool: Option<u64>) -> EngineFlags {
        EngineFlags {
            pool,
            wal_limit: None,
            no_doublewrite: false,
            durability: Durability::Async,
            record_cache: 0,
            blind_updates: 0,
        }
    }

    #[test]
    fn in_memory_devices_take_a_tenth_of_the_data() {
        let (c, why) = flags(None).config("sim", 1000 << 20, &InMemory);
        assert_eq!(c.pool_bytes, 100 << 20);
        assert!(why.contains("10%"), "{why}");
        let (c, _) = flags(None).config("mem", 1 << 20, &InMemory);
        assert_eq!(c.pool_bytes, 1 << 20, "at least 1 MiB");
    }

    /// A machine with 1 GiB for the pool.
    struct Big;
    impl Env for Big {
        fn open_path(
            &self,
            p: &str,
            c: u64,
            s: String,
        ) -> Result<Arc<dyn nowa_device::BlockDevice>, Error> {
            InMemory.open_path(p, c, s)
        }
        fn check_memory(&self, _: &[(&str, &str, u64)]) -> Result<(), Error> {
            Ok(())
        }
        fn pool_from_memory(&self, _: u64) -> (u64, String) {
            (1 << 30, "1 GiB".into())
        }
    }

    #[test]
    fn the_flag_wins_and_files_are_bounded_by_the_data() {
        let (c, why) = flags(Some(64 << 20)).config("x.db", 1 << 40, &InMemory);
        assert_eq!((c.pool_bytes, why.as_str()), (64 << 20, "--pool"));
        let (c, _) = flags(None).config("x.db", 8 << 20, &Big);
        assert!(c.pool_bytes <= 9 << 20, "at most the data + 1/8");
        assert!(c.doublewrite && c.wal_limit_bytes.is_none());
    }
}
