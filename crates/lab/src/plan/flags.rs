//! The flags of `nowa plan run|figures|bench` that make their specs.

use crate::flags;
use clap::{Args, ValueEnum};
use nowa_bench::plan::WorkloadKind;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Chip latencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChipTiming {
    /// FEMU's: 40/200/2000 us read/program/erase.
    Femu,
    /// MQSim's: 75/750/3800 us + channel transfer.
    Mqsim,
}

/// The device and run flags every `nowa plan` subcommand shares.
#[derive(Args, Debug, Clone)]
pub struct DeviceFlags {
    /// Channels.
    #[arg(long, default_value = "8", value_parser = flags::count::<u32>(1, 64))]
    pub channels: u32,
    /// Chips (LUNs) per channel (a power of two).
    #[arg(long, default_value = "8", value_parser = flags::count::<u32>(1, 64))]
    pub chips_per_channel: u32,
    /// Erase blocks per chip.
    #[arg(long, default_value = "1024", value_parser = flags::count::<u32>(8, 1 << 20))]
    pub blocks_per_chip: u32,
    /// Pages per erase block (the paper has 256; 16 keeps its 1024 superblocks at 1/16 size).
    #[arg(long, default_value = "16", value_parser = flags::count::<u32>(1, 1 << 16))]
    pub pages_per_block: u32,
    /// Flash page size: 4KiB or 16KiB.
    #[arg(long, default_value = "16KiB", value_parser = flags::size(4096, 16384))]
    pub page_size: u64,
    /// Over-provisioning as spare/logical, as every other --op (0.0667 or 6.67%; default:
    /// the paper's 6.25% spare/physical = 6.67% spare/logical). Both forms are printed.
    #[arg(long, conflicts_with = "op_physical",
          value_parser = flags::fraction(0.01, true, 1.0, false))]
    pub op: Option<f64>,
    /// Over-provisioning as spare/physical (the paper's 0.0625), as `nowa sim --op-physical`.
    #[arg(long, value_parser = flags::fraction(0.01, true, 0.5, true))]
    pub op_physical: Option<f64>,
    /// Chip latencies: femu (40/200/2000 us) or mqsim (75/750/3800 us + channel transfer).
    #[arg(long, value_enum, default_value = "femu")]
    pub timing: ChipTiming,
    /// Host writes per run, in drive writes.
    #[arg(long, default_value = "2", value_parser = flags::number(0.0, false, 1000.0))]
    pub drive_writes: f64,
    /// Workload seed (printed with the device; the same seed gives the same run).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Fraction of every chip's blocks GC keeps free (FEMU's foreground GC threshold, 0.05;
    /// 0 = the 2-block minimum).
    #[arg(long, default_value = "0.05", value_parser = flags::fraction(0.0, false, 0.5, false))]
    pub gc_reserve: f64,
    /// FEMU's background GC: after every request, one victim (with >= 1/8 of its pages
    /// invalid) while a chip has at most this fraction of its blocks free (FEMU's 0.25; 0 =
    /// off).
    #[arg(long, default_value = "0.25", value_parser = flags::fraction(0.0, false, 0.5, false))]
    pub background_gc: f64,
    /// Aged SSD: fraction of the logical space filled with valid data before each run
    /// (sequentially; the paper does not give its level; docs/plan.md "Aged SSD").
    #[arg(long, default_value = "0.7", value_parser = flags::fraction(0.0, true, 1.0, false))]
    pub fill: f64,
    /// Predictor seconds per simulated second (default: the paper's capacity over ours).
    #[arg(long, value_parser = flags::number(0.0, false, 1e6))]
    pub time_scale: Option<f64>,
}

/// `nowa plan run`'s own flags.
#[derive(Args, Debug, Clone)]
pub struct RunFlags {
    /// Scheme: baseline[-1/2|1/4|1/8][@OPEN] (default one open host superblock, FEMU's;
    /// @18 = the paper's "same number" of open superblocks), partial-gc, multi-stream, autostream,
    /// plan-nopred-1/4|1/8, plan-pred-1/4|1/8.
    #[arg(long, default_value = "plan-pred-1/4")]
    pub scheme: String,
    /// Workload: fio, tpcc, ycsb, fileserver, gcc.
    #[arg(long, value_enum, default_value = "fio")]
    pub workload: WorkloadKind,
    /// Replay this block trace (any format `nowa trace` reads) open-loop instead of
    /// --workload, pass after pass until --drive-writes (0: one pass): pages = the flash
    /// pages each request covers, stream = its volume.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// With --trace: stop after this many records.
    #[arg(long, value_parser = flags::count::<u64>(1, u64::MAX))]
    pub trace_limit: Option<u64>,
    /// With --trace: accept it however many of its lines are unreadable (default: refuse
    /// one with more than 1%).
    #[arg(long, requires = "trace")]
    pub skip_bad: bool,
}

/// `nowa plan figures`' own flags.
#[derive(Args, Debug, Clone)]
pub struct FigureFlags {
    /// Directory of the CSV and PNG files (created if missing; its parent must exist).
    #[arg(long, default_value = "plan-figures")]
    pub out: PathBuf,
    /// Overwrite the plan-* files already in --out (refused without it).
    #[arg(long)]
    pub force: bool,
    /// Only Figure 1 (the parallelism sweep).
    #[arg(long)]
    pub fig1_only: bool,
    /// A captured block trace as an extra workload of Figures 3 to 6: NAME=FILE (repeatable;
    /// docs/plan.md has the capture commands).
    #[arg(long, value_parser = captured)]
    pub captured: Vec<(String, PathBuf)>,
    /// Pages per block of the device the captured traces run on (1024 superblocks, smaller).
    #[arg(long, default_value = "2", value_parser = flags::count::<u32>(1, 1 << 16))]
    pub captured_pages_per_block: u32,
    /// Workloads of Figures 3 to 6 (comma-separated).
    #[arg(
        long,
        value_enum,
        default_value = "fio,tpcc,ycsb,fileserver,gcc",
        value_delimiter = ','
    )]
    pub workloads: Vec<WorkloadKind>,
}

fn captured(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => {
            Ok((name.to_owned(), PathBuf::from(file)))
        }
        _ => Err(format!("'{s}': expected NAME=FILE")),
    }
}
