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
}

impl WriteBackFlags {
    /// Set the engine configuration's page cleaner and `max_checkpoint_count`.
    pub fn apply(&self, cfg: &mut Config) {
        cfg.page_cleaner = self.page_cleaner;
        cfg.max_checkpoint_count = self.max_checkpoint_count;
    }
}
