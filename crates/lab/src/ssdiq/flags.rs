//! The flags of `nowa ssdiq` that make its spec (the target's and the suite's), parsed and
//! checked by clap with nowa-units' parsers: a bad value is one line naming the flag.

use crate::flags::SimTiming;
use clap::{Args, ValueEnum};
use nowa_bench::ssdiq::Steps;
use nowa_workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// I/O engine of a real target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoEngine {
    /// io_uring, --qd I/Os in flight per thread.
    #[value(alias = "io_uring")]
    Uring,
    /// pread/pwrite, one I/O in flight per thread.
    #[value(alias = "sync")]
    Psync,
}

fn unit<T>(r: Result<T, nowa_units::UnitError>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

/// A block size: a multiple of 4 KiB up to 64 MiB.
fn block_size(s: &str) -> Result<u32, String> {
    let v = unit(nowa_units::parse_size_in(s, 4096, 64 << 20))?;
    if v % 4096 != 0 {
        return Err(format!("'{s}' is not a multiple of 4096 bytes"));
    }
    let v = u32::try_from(v).map_err(|_| format!("'{s}' is too large"))?;
    assert!(v >= 4096 && v % 4096 == 0, "a whole number of 4 KiB blocks");
    Ok(v)
}

fn positive(s: &str, v: f64) -> Result<f64, String> {
    if v > 0.0 {
        assert!(v.is_finite() || v.is_infinite(), "not NaN: NaN is not > 0");
        Ok(v)
    } else {
        Err(format!("'{s}' must be > 0"))
    }
}

fn fraction_open0(s: &str) -> Result<f64, String> {
    positive(s, unit(nowa_units::parse_fraction(s))?)
}

fn seconds_pos(s: &str) -> Result<f64, String> {
    let v = unit(nowa_units::parse_seconds(s))?;
    if v > 0.0 && v <= 1e7 {
        assert!(v.is_finite(), "bounded");
        Ok(v)
    } else {
        Err(format!("'{s}' must be > 0 and at most 10^7 seconds"))
    }
}

/// A multiple of the capacity (warm-up may be 0).
fn capacities(s: &str) -> Result<f64, String> {
    unit(nowa_units::parse_number_in(s, 0.0, 1000.0))
}

fn capacities_pos(s: &str) -> Result<f64, String> {
    positive(s, capacities(s)?)
}

fn mb_per_s(s: &str) -> Result<f64, String> {
    positive(s, unit(nowa_units::parse_number_in(s, 0.0, 1e7))?)
}

fn file_size(s: &str) -> Result<u64, String> {
    unit(nowa_units::parse_size_in(s, 1 << 20, 1 << 50))
}

/// Background loads of the latency sweep.
#[derive(Debug, Clone)]
pub struct Loads(pub Vec<f64>);

/// "none" or a comma-separated list of fractions in (0, 1].
fn sweep_loads(s: &str) -> Result<Loads, String> {
    if s == "none" {
        return Ok(Loads(Vec::new()));
    }
    s.split(',')
        .map(str::trim)
        .map(fraction_open0)
        .collect::<Result<Vec<f64>, _>>()
        .map(|v| {
            assert!(
                v.iter().all(|&f| f > 0.0 && f <= 1.0),
                "fractions in (0, 1]"
            );
            Loads(v)
        })
}

/// Random-write workloads.
#[derive(Debug, Clone)]
pub struct Workloads(pub Vec<WorkloadSpec>);

fn workload_list(s: &str) -> Result<Workloads, String> {
    let list = s
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let w: WorkloadSpec = p.parse().map_err(|e| format!("'{p}': {e}"))?;
            if matches!(w, WorkloadSpec::Zns { .. }) {
                return Err(format!(
                    "'{p}' issues trims; ssdiq runs write-only workloads"
                ));
            }
            w.validate().map(|()| w).map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    if list.is_empty() {
        return Err("no workload given".into());
    }
    assert!(
        list.iter().all(|w| !matches!(w, WorkloadSpec::Zns { .. })),
        "write-only workloads"
    );
    Ok(Workloads(list))
}

/// The sampling period: auto (None) or seconds.
#[derive(Debug, Clone, Copy)]
pub struct Interval(pub Option<f64>);

fn interval(s: &str) -> Result<Interval, String> {
    if s == "auto" {
        Ok(Interval(None))
    } else {
        seconds_pos(s).map(|v| Interval(Some(v)))
    }
}

/// The flags of `nowa ssdiq` that make the spec (the target path and the printing flags are
/// the CLI's).
#[derive(Args, Debug, Clone)]
pub struct SsdiqFlags {
    /// Allow writing to this target although it is in use, holds data or is not a scratch
    /// target of an earlier run; must repeat the target path exactly.
    #[arg(long, value_name = "PATH")]
    pub force: Option<PathBuf>,
    /// Size of the file to create if the target does not exist (e.g. 4GiB; at least 1 MiB);
    /// for sim, the simulated capacity.
    #[arg(long, value_name = "SIZE", value_parser = file_size)]
    pub size: Option<u64>,
    /// Block size of random I/O (a multiple of 4 KiB up to 64 MiB).
    #[arg(long, default_value = "4k", value_name = "SIZE", value_parser = block_size)]
    pub bs: u32,
    /// Block size of sequential I/O.
    #[arg(long, default_value = "128k", value_name = "SIZE", value_parser = block_size)]
    pub seq_bs: u32,
    /// I/Os in flight per thread (io_uring), 1..=4096.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub qd: u32,
    /// Threads, one io_uring each, 1..=256.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: u32,
    /// I/O engine.
    #[arg(long, value_enum, default_value = "uring")]
    pub engine: IoEngine,
    /// Use buffered I/O instead of O_DIRECT (numbers then measure the page cache).
    #[arg(long)]
    pub no_direct: bool,
    /// Cap the throughput of every write phase (MB/s, 10^6 bytes).
    #[arg(long, value_name = "MB/S", value_parser = mb_per_s, allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// Fraction of the capacity initialized and used by the workloads, in (0, 1] (0.5 or 50%).
    #[arg(long, default_value = "1", value_parser = fraction_open0, allow_negative_numbers = true)]
    pub fill: f64,
    /// Random writes before each measured phase, in multiples of the capacity (0..=1000).
    #[arg(long, default_value = "1", value_parser = capacities, allow_negative_numbers = true)]
    pub warmup: f64,
    /// Measured random writes per workload, in multiples of the capacity (0..=1000, > 0).
    #[arg(long, default_value = "2", value_parser = capacities_pos, allow_negative_numbers = true)]
    pub volume: f64,
    /// Sequential / random read measurement (seconds, or 500ms, 2m).
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = seconds_pos, allow_negative_numbers = true)]
    pub read_time: f64,
    /// Each QD1 latency probe (read, then write).
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = seconds_pos, allow_negative_numbers = true)]
    pub lat_time: f64,
    /// Background write load of the latency probes, fraction of the random-write bandwidth.
    #[arg(long, default_value = "0.25", value_parser = fraction_open0, allow_negative_numbers = true)]
    pub bg_load: f64,
    /// Loads of the latency-vs-write-rate sweep (fractions), or "none".
    #[arg(long, default_value = "0.1,0.25,0.5,0.75,0.9", value_parser = sweep_loads)]
    pub sweep: Loads,
    /// Each probe at each sweep point.
    #[arg(long, default_value = "5", value_name = "SECS", value_parser = seconds_pos, allow_negative_numbers = true)]
    pub sweep_time: f64,
    /// Random-write workloads, comma-separated (same syntax as nowa sim).
    #[arg(long, default_value = "uniform,two-zone:80/20,zipf:0.8", value_parser = workload_list)]
    pub workloads: Workloads,
    /// Steps: all, or a list of seq-read, rand-read, rand-write, latency, sweep (the reset and
    /// the sequential initialization always run).
    #[arg(long, default_value = "all", value_parser = Steps::parse)]
    pub steps: Steps,
    /// Per-interval sampling period in seconds, or auto (capacity / 100 GB/s, between 0.1 and
    /// 1 s; simulated SSD: 1/10 of a sequential capacity write).
    #[arg(long, default_value = "auto", value_name = "SECS", value_parser = interval)]
    pub interval: Interval,
    /// Upper bound on each write phase, seconds.
    #[arg(long, value_name = "SECS", value_parser = seconds_pos, allow_negative_numbers = true)]
    pub max_time: Option<f64>,
    /// Seed of the random-write workloads' offsets (printed in the report; the same seed
    /// gives the same access sequence).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Reset with NVMe sanitize (block erase) instead of a discard. Slow; NVMe devices only.
    #[arg(long)]
    pub sanitize: bool,
    /// Simulated SSD: over-provisioning as spare/logical, in (0, 1] (0.07 or 7%).
    #[arg(long, default_value = "0.07", value_parser = fraction_open0, allow_negative_numbers = true)]
    pub sim_op: f64,
    /// Simulated SSD: GC policy (greedy, 2r-greedy, 2r-fifo, cost-benefit, fifo, ...).
    #[arg(long, default_value = "greedy")]
    pub sim_policy: String,
    /// Simulated SSD: media write bandwidth, MB/s.
    #[arg(long, default_value = "2000", value_parser = mb_per_s, allow_negative_numbers = true)]
    pub sim_media_mbps: f64,
    /// Simulated SSD: media read bandwidth, MB/s.
    #[arg(long, default_value = "3200", value_parser = mb_per_s, allow_negative_numbers = true)]
    pub sim_read_mbps: f64,
    /// Simulated SSD timing: bandwidth (one media server at --sim-media-mbps / --sim-read-mbps)
    /// or femu / mqsim (8 channels x 8 chips of 4 KiB pages with those simulators' latencies).
    #[arg(long, value_enum, default_value = "bandwidth")]
    pub sim_timing: SimTiming,
    /// Simulated SSD: GC unit in pages (0 = automatic, 1 MiB).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1 << 20))]
    pub sim_unit_pages: u32,
}
