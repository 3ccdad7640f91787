//! `nowa ycsb`: YCSB on the engine, with the write drill-down of how-to-write-to-ssds.md 7.1.
//!
//! Definitions (how-to-write-to-ssds.md 7.1): user writes = eviction + checkpoint page writes;
//! DB-issued writes = user + doublewrite + DB GC page writes; DB WAF = DB-issued / user;
//! SSD WAF = media bytes / bytes the device received (everything the DB issued, WAL included);
//! total WAF = DB WAF x SSD WAF. Logical bytes/op = DB-issued page bytes per op, physical
//! bytes/op = media bytes per op (device host bytes when the device cannot tell). Every WAF
//! goes through [`nowa_units::waf`]: the WAF of nothing is `None`.
//!
//! The module's parts: the spec (this file), [`values`] (keys and values), [`setup`] (engine
//! creation, load, sizing, pacing), [`driver`] (the measured phase: workers and monitor),
//! [`measure`] (snapshots, ticks, the drill-down, latency, what bounds the run) and [`report`]
//! (text summary, CSV).

pub mod blockdev;
pub mod driver;
pub mod measure;
pub mod report;
pub mod setup;
pub mod values;

pub use blockdev::BlockDevReading;
pub use driver::run;
pub use measure::{
    BlockDevStat, Bound, BoundBy, Drilldown, Latency, PendingBlind, Snapshot, Tick, YcsbResult,
};
pub use report::{summary, write_ticks_csv};
pub use setup::{create_engine, estimate_dataset_bytes, load, pace, separate_wal_device, Pacing};
pub use values::{key_of, make_value, pattern_version};

use nowa_device::BlockDevice;
use nowa_engine::{Config, Durability, OopConfig};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Where the Zipf popularity ranks sit among the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum KeyOrder {
    /// Ranks scattered over the keys by a seeded bijection (YCSB's
    /// `ScrambledZipfianGenerator`, LeanStore's `ScrambledZipfGenerator`): a leaf's keys have
    /// unrelated popularities, so the leaves' update rates differ little.
    #[default]
    Scrambled,
    /// Rank k is key k - 1 (YCSB's plain `ZipfianGenerator`): neighbouring keys, and so the
    /// keys of one leaf, have similar popularity; leaves range from hot to cold.
    Ranked,
}

/// The YCSB core mixes (`--workload`: the letter, in either case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Mix {
    /// 50% read, 50% update.
    #[value(name = "A")]
    A,
    /// 95% read, 5% update.
    #[value(name = "B")]
    B,
    /// 100% read.
    #[value(name = "C")]
    C,
    /// 50% read, 50% read-modify-write.
    #[value(name = "F")]
    F,
    /// 100% updates (blind writes, no reads), keys Zipf-chosen as in A: the "100% writes"
    /// YCSB of SepFrozen (its "YCSB-100W"; YCSB-A is its "50W"). Not a YCSB core workload.
    #[value(name = "W")]
    W,
}

impl Mix {
    /// Percent of operations that read only.
    #[must_use]
    pub fn read_pct(self) -> u64 {
        match self {
            Mix::A | Mix::F => 50,
            Mix::B => 95,
            Mix::C => 100,
            Mix::W => 0,
        }
    }
}

/// What values look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ValueKind {
    /// Random bytes: incompressible.
    Random,
    /// An 8-byte counter then a repeated text pattern: LZ4 leaves ~0.2 of a full leaf (far
    /// more compressible than the paper's YCSB data).
    #[value(alias = "compressible")]
    Pattern,
    /// The counter, [`values::PAPER_RANDOM`] random bytes, then the pattern: LZ4 leaves ~0.41
    /// of a full leaf, the ratio the paper measured on its YCSB data (section 3.1: 41.2%).
    #[value(
        help = "The counter, random bytes, then the pattern: LZ4 leaves ~0.41 of a full \
                    leaf, the paper's YCSB ratio (41.2%)"
    )]
    Paper,
}

/// When the run phase ends (or earlier, on Ctrl-C: [`crate::interrupt`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Stop {
    /// After this many operations (at least 1).
    Ops(u64),
    /// After this many seconds (finite, > 0).
    Seconds(f64),
    /// The device has received this many times its capacity in writes (run phase only).
    DeviceWrites(f64),
    /// Out of place, steady state: the store has written (user, DB GC and compensation
    /// slots) this many times its space (the space limit, else the device capacity) in the
    /// run phase, so DB GC runs through the whole space.
    StoreWrites(f64),
}

/// One YCSB run.
#[derive(Debug, Clone, Serialize)]
pub struct YcsbSpec {
    /// Records loaded (keys 0..records).
    pub records: u64,
    /// Bytes per value.
    pub value_size: usize,
    /// What values look like.
    pub value_kind: ValueKind,
    /// The operation mix.
    pub mix: Mix,
    /// Zipf theta of key popularity; 0 = uniform.
    pub theta: f64,
    /// Where the popularity ranks sit among the keys (Zipf only).
    pub key_order: KeyOrder,
    /// Worker threads.
    pub threads: usize,
    /// When the run phase ends.
    pub stop: Stop,
    /// Durability of updates.
    pub durability: Durability,
    /// With async durability: a durability point after every N updates (counted over all
    /// workers): the N-th update is committed `Sync`, whose group commit flushes the WAL up
    /// to it, so every update acknowledged before it becomes durable. None: only the
    /// engine's own async flushes (every `Config::async_flush_bytes` of WAL).
    pub durable_every: Option<std::num::NonZeroU64>,
    /// Seed of keys and values.
    pub seed: u64,
    /// Reporting interval.
    pub interval_secs: f64,
    /// Engine configuration.
    pub engine: Config,
    /// Write path: in place (optional doublewrite) or out of place (zones, DB GC, ...).
    pub store: WritePath,
    /// Keep the WAL on a separate (in-memory) device, so the device under test holds only
    /// pages (how-to-write-to-ssds.md, Figure 1 and 7.1).
    pub separate_wal: bool,
    /// Append "key-id version" to this file after every acknowledged update (crash tests use it
    /// to check that acknowledged durable writes survive). Slow: one write(2) per update.
    /// With `durable_every`, a worker appends its updates only once its own durability point
    /// has made them durable (updates a later point of another worker covers stay unlisted:
    /// the log holds durable updates only).
    pub ack_log: Option<std::path::PathBuf>,
    /// The simulated device's timing model (and whether it paces the run); `None` on devices
    /// without one (memory, files, block devices).
    pub pacing: Option<Pacing>,
}

/// Which write path the engine uses.
#[derive(Debug, Clone, Default, Serialize)]
pub enum WritePath {
    /// Fixed page homes (with the doublewrite buffer unless turned off).
    #[default]
    #[serde(rename = "inplace")]
    InPlace,
    /// Zones, DB GC, optional compression, packing, GDT, NoWA.
    #[serde(rename = "oop")]
    OutOfPlace(OopConfig),
}

/// Why a YCSB run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum YcsbError {
    /// The engine failed (I/O, corruption, configuration).
    #[error(transparent)]
    Engine(#[from] nowa_engine::EngineError),
    /// The key generator refused the parameters (records, theta).
    #[error("key generator: {0}")]
    Keys(#[from] nowa_workload::WorkloadError),
    /// No worker thread asked for.
    #[error("threads must be >= 1")]
    NoThreads,
    /// A worker thread could not be started.
    #[error("starting worker thread {index}: {source}")]
    Spawn {
        /// Which worker.
        index: usize,
        /// The OS error.
        source: std::io::Error,
    },
    /// The acknowledgement log could not be opened or written: acknowledged updates would go
    /// unrecorded, so the run stops.
    #[error("ack log {}: {source}", path.display())]
    AckLog {
        /// The log file.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The device trait object type the driver works on.
pub type Device = Arc<dyn BlockDevice>;

#[cfg(test)]
mod tests {
    use super::Mix;

    #[test]
    fn every_mix_parses_in_either_case_and_w_reads_nothing() {
        for (name, mix, reads) in [
            ("A", Mix::A, 50),
            ("b", Mix::B, 95),
            ("C", Mix::C, 100),
            ("f", Mix::F, 50),
            ("W", Mix::W, 0),
            ("w", Mix::W, 0),
        ] {
            assert_eq!(<Mix as clap::ValueEnum>::from_str(name, true), Ok(mix));
            assert_eq!(mix.read_pct(), reads, "{name}");
        }
        for bad in ["", "D", "AW", "100W"] {
            assert!(
                <Mix as clap::ValueEnum>::from_str(bad, true).is_err(),
                "{bad}"
            );
        }
    }
}
