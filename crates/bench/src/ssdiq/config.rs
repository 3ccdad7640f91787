//! [`SuiteConfig`]: the suite's parameters, and [`Steps`]: which parts of it run.

use nowa_workload::WorkloadSpec;
use serde::{Deserialize, Serialize};

/// Which parts of the suite to run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Steps {
    /// Sequential read bandwidth.
    pub seq_read: bool,
    /// Random read IOPS.
    pub rand_read: bool,
    /// Random writes for every workload (else only the first, if latency or sweep ask).
    pub rand_write: bool,
    /// Latency under load.
    pub latency: bool,
    /// Latency vs write rate.
    pub sweep: bool,
}

impl Steps {
    /// Every step.
    pub const ALL: Steps = Steps {
        seq_read: true,
        rand_read: true,
        rand_write: true,
        latency: true,
        sweep: true,
    };
    /// What [`Steps::parse`] accepts.
    pub const VALID: &'static str =
        "all | comma-separated list of seq-read, rand-read, rand-write, latency, sweep";

    /// Parses "all" or a comma-separated list.
    ///
    /// # Errors
    /// An unknown step name, in one line.
    pub fn parse(s: &str) -> Result<Steps, String> {
        if s == "all" {
            return Ok(Steps::ALL);
        }
        let mut st = Steps {
            seq_read: false,
            rand_read: false,
            rand_write: false,
            latency: false,
            sweep: false,
        };
        for p in s.split(',').map(str::trim) {
            match p {
                "seq-read" => st.seq_read = true,
                "rand-read" => st.rand_read = true,
                "rand-write" => st.rand_write = true,
                "latency" => st.latency = true,
                "sweep" => st.sweep = true,
                _ => return Err(format!("unknown step '{p}' (expected {})", Steps::VALID)),
            }
        }
        Ok(st)
    }
}

/// Suite parameters. Volumes are multiples of the target's capacity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SuiteConfig {
    /// Block size of random I/O (bytes).
    pub bs: u32,
    /// Block size of sequential I/O (bytes).
    pub seq_bs: u32,
    /// I/Os in flight per thread.
    pub qd: u32,
    /// Threads (one queue each).
    pub threads: u32,
    /// Fraction of the capacity initialized and then used by the workloads.
    pub fill: f64,
    /// Random writes before the measured phase, x capacity.
    pub warmup: f64,
    /// Measured random writes, x capacity.
    pub volume: f64,
    /// Seconds for sequential and random read measurements.
    pub read_secs: f64,
    /// Seconds of each latency probe (read probe, then write probe).
    pub lat_secs: f64,
    /// Background write load for the latency probes, fraction of the measured random-write
    /// bandwidth (ssd-iq: 25%).
    pub bg_load: f64,
    /// Background loads of the latency sweep (Figure 8), fractions of the random-write bandwidth.
    pub sweep: Vec<f64>,
    /// Seconds of each probe at each sweep point.
    pub sweep_secs: f64,
    /// Random-write workloads, in order.
    pub workloads: Vec<WorkloadSpec>,
    /// Which steps run.
    pub steps: Steps,
    /// Per-interval sampling period, seconds.
    pub interval: f64,
    /// Upper bound on the duration of each write phase (seconds), for big devices.
    pub max_phase_secs: Option<f64>,
    /// Cap on the throughput of every write phase, MB/s (the engine's rate limiter).
    pub rate_mb_s: Option<f64>,
    /// Seed of every address generator and payload.
    pub seed: u64,
    /// NVMe sanitize (block erase) instead of a discard for the first reset.
    pub sanitize: bool,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        SuiteConfig {
            bs: 4096,
            seq_bs: 128 * 1024,
            qd: 32,
            threads: 1,
            fill: 1.0,
            warmup: 1.0,
            volume: 2.0,
            read_secs: 10.0,
            lat_secs: 10.0,
            bg_load: 0.25,
            sweep: vec![0.1, 0.25, 0.5, 0.75, 0.9],
            sweep_secs: 5.0,
            workloads: vec![
                WorkloadSpec::Uniform,
                WorkloadSpec::TwoZone {
                    write_pct: 80.0,
                    space_pct: 20.0,
                },
                WorkloadSpec::Zipf { theta: 0.8 },
            ],
            steps: Steps::ALL,
            interval: 1.0,
            max_phase_secs: None,
            rate_mb_s: None,
            seed: 42,
            sanitize: false,
        }
    }
}

impl SuiteConfig {
    /// Checks the parameters.
    ///
    /// # Errors
    /// The first parameter out of range, in one line naming its flag.
    pub fn validate(&self) -> Result<(), String> {
        let pos = |v: f64| v.is_finite() && v > 0.0;
        if self.bs == 0 || self.bs % 4096 != 0 || self.seq_bs == 0 || self.seq_bs % 4096 != 0 {
            return Err(format!(
                "block sizes must be positive multiples of 4096 bytes, got --bs {} --seq-bs {}",
                self.bs, self.seq_bs
            ));
        }
        if self.bs > 64 << 20 || self.seq_bs > 64 << 20 {
            return Err("block sizes above 64 MiB are not supported".into());
        }
        if self.qd == 0 || self.qd > 4096 {
            return Err(format!("--qd must be in 1..=4096, got {}", self.qd));
        }
        if self.threads == 0 || self.threads > 256 {
            return Err(format!(
                "--threads must be in 1..=256, got {}",
                self.threads
            ));
        }
        if !(self.fill > 0.0 && self.fill <= 1.0) {
            return Err(format!("--fill must be in (0, 1], got {}", self.fill));
        }
        if !(self.warmup.is_finite() && self.warmup >= 0.0 && pos(self.volume)) {
            return Err(format!(
                "--warmup must be >= 0 and --volume > 0 (multiples of the capacity), got {} and {}",
                self.warmup, self.volume
            ));
        }
        if !pos(self.read_secs)
            || !pos(self.lat_secs)
            || !pos(self.sweep_secs)
            || !pos(self.interval)
        {
            return Err("durations and --interval must be > 0 seconds".into());
        }
        if !(self.bg_load > 0.0 && self.bg_load <= 1.0)
            || self.sweep.iter().any(|&f| !(f > 0.0 && f <= 1.0))
        {
            return Err("--bg-load and --sweep fractions must be in (0, 1]".into());
        }
        if self.max_phase_secs.is_some_and(|s| !pos(s)) || self.rate_mb_s.is_some_and(|r| !pos(r)) {
            return Err("--max-time and --rate must be > 0".into());
        }
        if self.workloads.is_empty()
            && (self.steps.rand_write || self.steps.latency || self.steps.sweep)
        {
            return Err("--workloads is empty but random-write steps are requested".into());
        }
        for w in &self.workloads {
            w.validate().map_err(|e| e.to_string())?;
            if matches!(w, WorkloadSpec::Zns { .. }) {
                return Err(format!(
                    "workload {w} issues trims; ssdiq supports write-only workloads"
                ));
            }
        }
        Ok(())
    }
}
