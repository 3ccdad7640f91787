//! The flags of `nowa sim` (and of `nowa.sim(...)` in Python: keyword arguments become these
//! flags, so both faces parse alike): device, scheme, run and trace flags.

use crate::flags;
use crate::text;
use clap::Args;
use nowa_bench::sim::StreamAssign;
use nowa_flash::{GcFrontier, GcTrigger, GcUnit, PlacementKind, PolicyKind};
use nowa_workload::WorkloadSpec;
use std::path::PathBuf;

/// The largest simulated device: the FTL model maps at most 2^32 - 1 physical 4 KiB pages.
pub const MAX_CAPACITY: u64 = 16 << 40;
/// The largest warm-up, volume or interval, in multiples of the logical capacity.
pub const MAX_VOLUME: f64 = 10_000.0;

/// Every flag of one simulation.
#[derive(Args, Debug, Clone)]
pub struct SimFlags {
    // (clap takes the doc comments of flattened fields as help text: these stay `//`.)
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub dev: DeviceFlags,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub run: RunFlags,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub trace: TraceFlags,
}

/// The simulated device.
#[derive(Args, Debug, Clone)]
pub struct DeviceFlags {
    /// Logical capacity (8GiB, 512MiB, 2TiB; 1GB = 10^9 bytes).
    #[arg(long, default_value = "8GiB", value_parser = flags::size(4096, MAX_CAPACITY))]
    pub capacity: u64,
    /// Over-provisioning as spare/logical (0.07 or 7%): physical = logical x (1 + OP).
    #[arg(long, default_value = "7%", conflicts_with = "op_physical",
          value_parser = flags::fraction(0.0, false, 1.0, false))]
    pub op: f64,
    /// Over-provisioning as spare/physical (the ssd-iq simulator's 1 - ssdfill).
    #[arg(long, value_parser = flags::fraction(0.0, false, 1.0, true))]
    pub op_physical: Option<f64>,
    /// Flash pages (4 KiB) per erase block.
    #[arg(long, default_value = "256", value_parser = flags::count::<u32>(1, 1 << 16))]
    pub pages_per_block: u32,
    /// Erase blocks per superblock (channels x chips x planes).
    #[arg(long, default_value = "8", conflicts_with_all = ["channels", "chips", "planes"],
          value_parser = flags::count::<u32>(1, 1 << 16))]
    pub blocks_per_superblock: u32,
    /// Flash channels (with --chips and --planes: blocks per superblock = their product).
    #[arg(long, value_parser = flags::count::<u32>(1, 1 << 16))]
    pub channels: Option<u32>,
    /// Chips (dies) per channel.
    #[arg(long, value_parser = flags::count::<u32>(1, 1 << 16))]
    pub chips: Option<u32>,
    /// Planes per chip.
    #[arg(long, value_parser = flags::count::<u32>(1, 1 << 16))]
    pub planes: Option<u32>,
    /// GC unit: superblock, or block (partial GC).
    #[arg(long, default_value = "superblock", value_parser = text::parser::<GcUnit>())]
    pub gc_unit: GcUnit,
    /// GC policy: greedy (ssd-iq naive greedy), 2r-greedy, 2r-fifo (the SSD-iq reference's), sc-fifo, cost-benefit, cb-sepbit, fifo, random, k-greedy:K, window:W.
    #[arg(long, default_value = "greedy", value_parser = flags::parsed::<PolicyKind>())]
    pub policy: PolicyKind,
    /// Where GC copies go: shared (with host writes), separate, per-stream. Default: the policy's.
    #[arg(long, value_parser = flags::parsed::<GcFrontier>())]
    pub gc_frontier: Option<GcFrontier>,
    /// Host write streams (multi-stream / FDP handles).
    #[arg(long, default_value = "1", value_parser = flags::count::<u16>(1, 4096))]
    pub streams: u16,
    /// Device write buffer as a fraction of capacity (0.0002 or 0.02%); 0 = none.
    #[arg(long, default_value = "0", value_parser = flags::fraction(0.0, false, 1.0, true))]
    pub write_buffer: f64,
    /// GC keeps at least this many free units.
    #[arg(long, default_value = "1", value_parser = flags::count::<u32>(1, 1 << 20))]
    pub min_free_units: u32,
    /// Zoned (ZNS) device: zones = GC units, sequential writes per zone, no device GC; needs
    /// a zns:... workload.
    #[arg(long)]
    pub zns: bool,
    /// Zoned device: max open zones.
    #[arg(long, default_value = "14", value_parser = flags::count::<u32>(1, 1 << 16))]
    pub max_open_zones: u32,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub scheme: SchemeFlags,
}

/// Placement scheme, GC trigger and victims per round (issue 10).
#[derive(Args, Debug, Clone)]
pub struct SchemeFlags {
    /// Placement scheme: nosep, sepgc, dac[:N], sfr[:N], multiqueue[:N], warcip[:N],
    /// sepbit[:N], fk[:N], fk-kmeans[:N], midas, sepfrozen-bit[:N] (SepBIT with a perfect
    /// frozen-page model from the workload's hints) (N = classes, default 6). Default: streams.
    #[arg(long, value_name = "SCHEME", value_parser = flags::parsed::<PlacementKind>())]
    pub placement: Option<PlacementKind>,
    /// When GC runs: free (free-unit watermark, a fixed-capacity SSD) or gp[:THETA] (SepBIT's
    /// log grows until its garbage proportion exceeds THETA, default 0.15).
    #[arg(long, value_name = "TRIGGER", default_value = "free", value_parser = text::parser::<GcTrigger>())]
    pub gc_trigger: GcTrigger,
    /// Victims collected per GC round.
    #[arg(long, value_name = "K", default_value = "1", value_parser = flags::count::<u32>(1, 1024))]
    pub victims_per_round: u32,
}

/// The workload and the run.
#[derive(Args, Debug, Clone)]
pub struct RunFlags {
    /// Workload: uniform | two-zone:X/Y | zipf:THETA | zipf-shift:THETA[:PERIOD] | read-only:F | sequential | zns:ZONE_PAGES:FRONTS[:CHUNK]
    #[arg(long, default_value = "uniform", value_parser = flags::parsed::<WorkloadSpec>())]
    pub workload: WorkloadSpec,
    /// Fraction of the logical space in use (0 < fill <= 1; 0.9 or 90%).
    #[arg(long, default_value = "1", value_parser = flags::fraction(0.0, true, 1.0, false))]
    pub fill: f64,
    /// Warm-up writes before measuring, in multiples of the logical capacity.
    #[arg(long, default_value = "2", value_parser = flags::number(0.0, false, MAX_VOLUME))]
    pub warmup: f64,
    /// Measured writes, in multiples of the logical capacity.
    #[arg(long, default_value = "2", value_parser = flags::number(0.0, true, MAX_VOLUME))]
    pub volume: f64,
    /// Reporting interval, in multiples of the logical capacity.
    #[arg(long, default_value = "0.1", value_parser = flags::number(0.0, true, MAX_VOLUME))]
    pub interval: f64,
    /// Skip the sequential fill of the in-use pages.
    #[arg(long)]
    pub no_precondition: bool,
    /// Stream assignment: single, or hot-cold (two-zone only, needs --streams >= 2).
    #[arg(long, default_value = "single", value_enum)]
    pub stream_assign: StreamAssign,
    /// Seed of the workload and of randomized policies.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--trace FILE`: replay a block trace instead of a synthetic workload.
#[derive(Args, Debug, Clone)]
pub struct TraceFlags {
    /// Replay this block trace through the FTL instead of a synthetic workload (formats as
    /// `nowa trace`); --fill is then the trace's peak live pages / capacity, --warmup/--volume/--interval count
    /// drive writes of the replay devices.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Trace format (default: recognized from the first line).
    #[arg(long, requires = "trace", value_parser = text::parser::<nowa_trace::Format>())]
    pub trace_format: Option<nowa_trace::Format>,
    /// Multi-volume traces: per-volume (one device per volume, SepBIT's model) or shared
    /// (all volumes on one device).
    #[arg(long, default_value = "per-volume", value_enum)]
    pub trace_volumes: nowa_bench::replay::VolumeMode,
    /// Replay only this volume of the trace.
    #[arg(long, requires = "trace")]
    pub trace_volume: Option<u32>,
    /// Logical capacity of each replay device (default: the trace's peak live data / --fill).
    #[arg(long, requires = "trace", value_parser = flags::size(4096, u64::MAX))]
    pub trace_capacity: Option<u64>,
    /// Accept the trace however many of its lines are unreadable (default: refuse one with
    /// more than 1%; skipped lines are counted on stderr either way).
    #[arg(long, requires = "trace")]
    pub skip_bad: bool,
}

impl TraceFlags {
    /// No trace: a synthetic workload.
    #[must_use]
    pub fn none() -> TraceFlags {
        TraceFlags {
            trace: None,
            trace_format: None,
            trace_volumes: nowa_bench::replay::VolumeMode::PerVolume,
            trace_volume: None,
            trace_capacity: None,
            skip_bad: false,
        }
    }
}
