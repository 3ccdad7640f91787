//! Engine flags shared by the engine benchmarks (`nowa ycsb`, `nowa tpcc`): the buffer pool,
//! the WAL limit, the doublewrite buffer and commit durability. Flatten [`EngineFlags`] into a
//! command's args and build the engine configuration with [`EngineFlags::config`], which
//! applies the one default pool rule of both commands.

use crate::flags;
use crate::resources::pool_from_memory;
use clap::Args;
use nowa_engine::{Config, Durability};

/// The largest pool or WAL a flag accepts (the memory check refuses far less).
const MAX_BYTES: u64 = 1 << 50;

/// The engine's memory and durability settings.
#[derive(Args, Debug, Clone)]
pub(crate) struct EngineFlags {
    /// Buffer pool size. Default: on a file or block device (O_DIRECT: the page cache does not
    /// help), from the memory this run may use (cgroup limit or MemAvailable, 80% after a
    /// 16 MiB reserve), at most the estimated data + 1/8; on the simulated SSD or in memory,
    /// 10% of the estimated data (the paper's setting).
    #[arg(long, value_parser = flags::size(1 << 20, MAX_BYTES))]
    pub pool: Option<u64>,
    /// WAL size limit; default = pool size.
    #[arg(long, value_parser = flags::size(1 << 20, MAX_BYTES))]
    pub wal_limit: Option<u64>,
    /// Turn the doublewrite buffer off (in place; unsafe: torn pages are detected, not
    /// repaired).
    #[arg(long)]
    pub no_doublewrite: bool,
    /// Commit durability: async (group commit in the background) or sync (each commit waits).
    #[arg(long, default_value = "async", value_parser = durability)]
    pub durability: Durability,
}

impl EngineFlags {
    /// The engine configuration for a run on `device` (`sim`, `mem` or a path) whose data is
    /// estimated at `data` bytes, and why the pool has its size.
    pub(crate) fn config(&self, device: &str, data: u64) -> (Config, String) {
        let (pool, why) = self.pool(device, data);
        assert!(
            pool >= 1 << 20,
            "a pool of at least 1 MiB (the flag's floor)"
        );
        let c = Config {
            pool_bytes: pool,
            wal_limit_bytes: self.wal_limit,
            durability: self.durability,
            doublewrite: !self.no_doublewrite,
            ..Config::default()
        };
        (c, why)
    }

    /// The WAL limit the engine will use (the flag, else the pool size).
    pub(crate) fn wal_limit_or(&self, pool: u64) -> u64 {
        self.wal_limit.unwrap_or(pool)
    }

    /// The pool size and why: `--pool`; on a file or block device the memory this run may
    /// use, at most the data + 1/8; else 10% of the data.
    fn pool(&self, device: &str, data: u64) -> (u64, String) {
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
        let (mem, why) = pool_from_memory(1 << 20);
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

/// `--durability`.
pub(crate) fn durability(s: &str) -> Result<Durability, String> {
    match s {
        "async" => Ok(Durability::Async),
        "sync" => Ok(Durability::Sync),
        o => Err(format!("unknown durability '{o}' (expected async or sync)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(pool: Option<u64>) -> EngineFlags {
        EngineFlags {
            pool,
            wal_limit: None,
            no_doublewrite: false,
            durability: Durability::Async,
        }
    }

    #[test]
    fn in_memory_devices_take_a_tenth_of_the_data() {
        let (c, why) = flags(None).config("sim", 1000 << 20);
        assert_eq!(c.pool_bytes, 100 << 20);
        assert!(why.contains("10%"), "{why}");
        let (c, _) = flags(None).config("mem", 1 << 20);
        assert_eq!(c.pool_bytes, 1 << 20, "at least 1 MiB");
    }

    #[test]
    fn the_flag_wins_and_files_are_bounded_by_the_data() {
        let (c, why) = flags(Some(64 << 20)).config("x.db", 1 << 40);
        assert_eq!((c.pool_bytes, why.as_str()), (64 << 20, "--pool"));
        let (c, _) = flags(None).config("x.db", 8 << 20);
        assert!(c.pool_bytes <= 9 << 20, "at most the data + 1/8");
        assert!(c.doublewrite && c.wal_limit_bytes.is_none());
    }
}
