//! `nowa ssdiq`: the SSD-iq benchmark (Haas et al., ssd-iq.md sections 3 to 6) on a block
//! device, a regular file or a simulated SSD.
//!
//! The suite follows the methodology of section 3.1 as explicit steps:
//! 1. **reset**: TRIM/discard of the whole range (NVMe sanitize only on explicit request);
//! 2. **sequential initialization** up to the fill level, which is also the sequential-write
//!    bandwidth measurement;
//! 3. sequential read bandwidth and random read IOPS on the initialized range;
//! 4. for every write workload (uniform, two-zone 80/20, zipf 0.8 by default): reset and
//!    sequential init again (except for the first, which reuses step 2), a warm-up of
//!    `warmup` x capacity random writes, then the measured phase of `volume` x capacity;
//!    per-interval throughput shows whether steady state was reached;
//! 5. after the first write workload (at its steady state): latency under load, a queue-depth-1
//!    probe for reads then for writes while background random writes run at `bg_load` (25%)
//!    of the measured random-write bandwidth (section 6.1), and the latency-vs-write-rate
//!    sweep of Figure 8.
//!
//! Derived metrics (Table 3): WAF measured from device counters (OCP log, or the FTL model of a
//! simulated SSD) over the measured phase, implied WAF = sequential write bandwidth / random
//! write bandwidth (section 4.1), and estimated OP = 1 / (2 x WAF) (section 4.6) from the
//! uniform workload.

pub mod config;
pub mod job;
mod nvme;
pub mod report;
mod runner;
pub mod steps;
mod summary;
pub mod target;

pub use config::{Steps, SuiteConfig};
pub use job::{IntervalPoint, JobKind, JobResult, JobSpec, LatStats};
pub use nowa_device::timing::TimingModel as PerfModel;
pub use runner::{PhaseTick, Tick};
pub use steps::{plan, run_suite, run_suite_ticked, suite, PhaseKind, PlanStep, Step};
pub use summary::summarize;
pub use target::{check, Engine, MediaCounters, OpenOpts, SimSpec, Target, TargetInfo};

use serde::{Deserialize, Serialize};

/// A step that ran.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Phase {
    /// What the phase measured.
    pub step: PhaseKind,
    /// The write workload it belongs to (None: before the first).
    pub workload: Option<String>,
    /// Background load (fraction of random-write bandwidth) for latency steps.
    pub load: Option<f64>,
    /// Jobs: the measured job first; for latency steps [background, probe].
    pub jobs: Vec<JobResult>,
    /// WAF from device counters over this phase.
    pub waf_measured: Option<f64>,
    /// What the target did differently (e.g. a discard it ignored).
    pub note: Option<String>,
}

/// Random-write result of one workload (Table 2 / 3 rows).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadRow {
    /// The workload.
    pub workload: String,
    /// Random-write thousands of I/Os per second of the measured phase.
    pub kiops: f64,
    /// The same in MB/s.
    pub mb_s: f64,
    /// Sequential write bandwidth / this bandwidth.
    pub waf_implied: Option<f64>,
    /// From device counters (OCP / FTL model), measured phase only.
    pub waf_measured: Option<f64>,
}

/// One point of the latency-vs-write-rate sweep.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepPoint {
    /// Background load as a fraction of the random-write bandwidth.
    pub load: f64,
    /// Background write rate asked for, MB/s.
    pub write_mb_s_target: f64,
    /// Background write rate achieved (mean of the two probes), MB/s.
    pub write_mb_s: f64,
    /// QD1 read latency.
    pub read: LatStats,
    /// QD1 write latency.
    pub write: LatStats,
}

/// OP estimate of section 4.6.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OpEstimate {
    /// "measured" or "implied".
    pub from: String,
    /// The WAF it is computed from.
    pub waf: f64,
    /// 1 / (2 x WAF), spare/logical.
    pub op: f64,
}

/// The Table 2 / 3 numbers.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Target capacity in bytes.
    pub capacity: u64,
    /// Sequential write bandwidth (the first initialization), MB/s.
    pub seq_write_mb_s: Option<f64>,
    /// Sequential read bandwidth, MB/s.
    pub seq_read_mb_s: Option<f64>,
    /// Random read thousands of IOPS.
    pub rand_read_kiops: Option<f64>,
    /// One row per write workload.
    pub rand_write: Vec<WorkloadRow>,
    /// Background write rate of the latency probes, MB/s (target, achieved).
    pub bg_mb_s: Option<(f64, f64)>,
    /// QD1 read latency under load.
    pub read_lat: Option<LatStats>,
    /// QD1 write latency under load.
    pub write_lat: Option<LatStats>,
    /// OP estimate from the uniform workload.
    pub est_op: Option<OpEstimate>,
    /// Latency vs write rate (Figure 8).
    pub sweep: Vec<SweepPoint>,
}

/// Everything `nowa ssdiq` measured, as written by `--json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SsdiqResult {
    /// "nowa ssdiq VERSION".
    pub tool: String,
    /// What was measured.
    pub target: TargetInfo,
    /// With which parameters.
    pub config: SuiteConfig,
    /// The steps planned.
    pub plan: Vec<PlanStep>,
    /// The phases that ran, in order.
    pub phases: Vec<Phase>,
    /// The Table 2 / 3 numbers.
    pub summary: Summary,
    /// Stopped by Ctrl-C (or an error) before the plan was complete.
    pub interrupted: bool,
    /// The error that stopped the run, if one did.
    pub error: Option<String>,
}

/// Estimated OP = 1 / (2 x WAF) (ssd-iq.md 4.6, after Desnoyers): a lower bound of the real
/// OP; good at low OP, increasingly pessimistic above ~15%.
#[must_use]
pub fn estimate_op(waf: f64) -> f64 {
    1.0 / (2.0 * waf)
}

/// Ctrl-C: the stop flag and handler every driver shares (see [`crate::interrupt`]).
pub use crate::interrupt::{install_sigint_handler, STOP};

/// "64 MiB", "1.50 GiB", "512 KiB", "4096 B" (nowa-units' one byte formatter).
#[must_use]
pub fn fmt_bytes(b: u64) -> String {
    nowa_units::Bytes(b).to_string()
}

pub(crate) use nowa_units::num::usize_of;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print() {
        assert_eq!(fmt_bytes(64 << 20), "64 MiB");
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(1536), "1.50 KiB");
    }

    #[test]
    fn steps_and_validation() {
        assert_eq!(Steps::parse("all"), Ok(Steps::ALL));
        let s = Steps::parse("seq-read,latency").unwrap();
        assert!(s.seq_read && s.latency && !s.rand_read);
        assert!(Steps::parse("bogus").is_err());
        let mut c = SuiteConfig::default();
        assert!(c.validate().is_ok());
        c.bs = 1000;
        assert!(c.validate().is_err());
        let c = SuiteConfig {
            fill: 0.0,
            ..SuiteConfig::default()
        };
        assert!(c.validate().is_err());
        let c = SuiteConfig {
            sweep: vec![1.5],
            ..SuiteConfig::default()
        };
        assert!(c.validate().is_err());
    }

    #[test]
    fn plan_lists_the_suite_destructive_steps_first() {
        let cfg = SuiteConfig::default();
        let p = plan(&cfg, 1 << 30);
        assert_eq!(p.len(), suite(&cfg).len());
        assert_eq!(p[0].name, "reset");
        assert!(p[0].destructive && p[1].destructive);
        assert!(p.iter().any(|s| s.name == "sweep"));
        assert_eq!(p.iter().filter(|s| s.name == "rand-write").count(), 3);
        assert!(!p.iter().find(|s| s.name == "seq-read").unwrap().destructive);
        assert!((estimate_op(5.0) - 0.1).abs() < 1e-12);
        // Only the first workload when random writes are not asked for.
        let cfg = SuiteConfig {
            steps: Steps {
                rand_write: false,
                ..Steps::ALL
            },
            ..SuiteConfig::default()
        };
        let s = suite(&cfg);
        assert_eq!(s.iter().filter(|s| s.name() == "rand-write").count(), 1);
        assert!(matches!(s.last(), Some(Step::Sweep { .. })));
    }

    #[test]
    fn phase_kinds_keep_their_json_names() {
        for k in [PhaseKind::Reset, PhaseKind::WarmUp, PhaseKind::SweepWrite] {
            let j = serde_json::to_string(&k).unwrap();
            assert_eq!(j, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<PhaseKind>(&j).unwrap(), k);
        }
    }
}
