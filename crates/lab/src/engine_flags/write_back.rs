//! Write-back and checkpoint flags shared by the engine benchmarks (`nowa ycsb`, `nowa
//! tpcc`): flatten [`WriteBackFlags`] into a command's args and call [`WriteBackFlags::apply`]
//! on its engine configuration.

use crate::flags;
use clap::Args;
use nowa_engine::Config;

/// The page cleaner and hot-page-aware checkpointing.
#[derive(Args, Debug, Clone)]
pub struct WriteBackFlags {
    /// Background page cleaner (on, off): keeps free frames, writes dirty pages back in
    /// large batches and runs checkpoint sweeps. Off: misses evict and writers checkpoint.
    #[arg(long, default_value = "on", value_parser = flags::on_off, action = clap::ArgAction::Set)]
    pub page_cleaner: bool,
    /// Hot-page-aware checkpointing: checkpoint passes in a row that may skip a page that
    /// stays dirty before one writes it (0: every pass writes every dirty page; the paper
    /// recommends 8). At the WAL limit a forced pass ignores it.
    #[arg(long, default_value = "0", value_parser = flags::count::<u32>(0, 1_000_000))]
    pub max_checkpoint_count: u32,
    /// Adaptive deferral: defer a page only while the redo range after a crash stays within
    /// SIZE of log (plus one checkpoint pass of log), and only a page whose observed redirty
    /// interval fits in what is left; passes start by a quarter of it. With it,
    /// --max-checkpoint-count 0 means no count limit.
    #[arg(long, value_name = "SIZE", conflicts_with = "max_recovery_secs",
          value_parser = flags::size(1 << 16, 1 << 50))]
    pub max_redo_bytes: Option<u64>,
    /// Adaptive deferral bounded by redo time: --max-redo-bytes = S x --redo-rate.
    #[arg(long, value_name = "S", value_parser = flags::seconds(1e-3, 86400.0))]
    pub max_recovery_secs: Option<f64>,
    /// Redo rate converting --max-recovery-secs to bytes (bytes of log replayed per second;
    /// the default is the in-place rate `nowa ckpt figures` measured, docs/checkpointing.md).
    #[arg(long, value_name = "SIZE", default_value = "12MiB",
          value_parser = flags::size(1 << 10, 1 << 50))]
    pub redo_rate: u64,
    /// Checkpoint cadence: `passes` (a pass over every dirty page from half the WAL limit)
    /// or `innodb` (the page cleaner's once-a-second flush-list batch at InnoDB's
    /// adaptive-flushing rate, docs/checkpointing.md; the flush clock is the simulated SSD's
    /// timing model when paced, else the wall clock).
    #[arg(long, default_value = "passes", value_parser = ["passes", "innodb"])]
    pub flushing: String,
    /// innodb_io_capacity (pages per second) of --flushing innodb.
    #[arg(long, default_value = "200", value_parser = flags::count::<u64>(1, 1 << 30))]
    pub io_capacity: u64,
    /// innodb_io_capacity_max (pages per second) of --flushing innodb.
    #[arg(long, default_value = "2000", value_parser = flags::count::<u64>(1, 1 << 30))]
    pub io_capacity_max: u64,
}

impl WriteBackFlags {
    /// Set the engine configuration's page cleaner and `max_checkpoint_count`.
    ///
    /// # Panics
    /// Never: `io_capacity_max` is raised to `io_capacity`.
    pub fn apply(&self, cfg: &mut Config) {
        cfg.page_cleaner = self.page_cleaner;
        cfg.max_checkpoint_count = self.max_checkpoint_count;
        cfg.max_redo_bytes = self.redo_bound();
        cfg.flushing = (self.flushing == "innodb").then(|| nowa_engine::Flushing {
            io_capacity: self.io_capacity,
            io_capacity_max: self.io_capacity_max.max(self.io_capacity),
            ..nowa_engine::Flushing::default()
        });
        assert!(
            cfg.flushing
                .is_none_or(|f| f.io_capacity_max >= f.io_capacity),
            "io_capacity_max at least io_capacity"
        );
    }

    /// The adaptive deferral's redo bound in log bytes, if one was asked for.
    #[must_use]
    pub fn redo_bound(&self) -> Option<u64> {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "positive seconds x a rate below 2^50: far below 2^63"
        )]
        let of_secs = |s: f64| ((s * self.redo_rate as f64) as u64).max(1 << 16);
        self.max_redo_bytes.or(self.max_recovery_secs.map(of_secs))
    }
}
