//! `infer-gc-unit`: an SSD's GC unit by the ZNS-like zone-size sweep (how-to-write-to-ssds
//! 5.3; nowa-bench's `gcunit`) on a simulated SSD built from the spec, or on a real device
//! that reports its media writes (opened through nowa-device's one opening path).

use crate::flags;
use crate::{Cancel, Error, Identity, Progress, Report};
use clap::Args;
use nowa_bench::gcunit::{self, InferError, InferSpec, Inference};
use nowa_device::{
    open_target, recognize_scratch, BlockDevice, Expect, FileDevice, FileOptions, SimConfig,
    SimDevice, SimMode,
};
use nowa_flash::FtlConfig;
use nowa_units::Bytes;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The flags of `nowa infer-gc-unit` that make its spec.
#[derive(Args, Debug, Clone)]
pub struct GcUnitFlags {
    /// Device: sim (a simulated SSD built from the flags below) or a block device / file path.
    /// A real device needs a media-write counter (OCP), which this build cannot read yet.
    #[arg(long, default_value = "sim")]
    pub device: String,
    /// Allow overwriting a --device path that is in use, holds data or is not a nowa scratch
    /// target; must repeat the path exactly.
    #[arg(long, value_name = "PATH")]
    pub force: Option<PathBuf>,
    /// Simulated SSD capacity.
    #[arg(long, default_value = "1GiB", value_parser = flags::size(1 << 20, 16 << 40))]
    pub capacity: u64,
    /// Simulated SSD over-provisioning (spare/logical: 0.07 or 7%).
    #[arg(long, default_value = "7%", value_parser = flags::fraction(0.0, false, 1.0, false))]
    pub op: f64,
    /// Simulated SSD: pages per erase block.
    #[arg(long, default_value = "256", value_parser = flags::count::<u32>(1, 1 << 16))]
    pub pages_per_block: u32,
    /// Simulated SSD: erase blocks per superblock (its GC unit, the answer to find).
    #[arg(long, default_value = "8", value_parser = flags::count::<u32>(1, 1 << 16))]
    pub blocks_per_superblock: u32,
    /// Smallest zone size tried (a power of two >= 4 KiB).
    #[arg(long, default_value = "64KiB", value_parser = flags::size(4096, 1 << 50))]
    pub min_zone: u64,
    /// Largest zone size tried.
    #[arg(long, default_value = "1GiB", value_parser = flags::size(4096, 1 << 50))]
    pub max_zone: u64,
    /// Pattern volume per zone size, in multiples of the capacity.
    #[arg(long, default_value = "2", value_parser = flags::number(0.0, true, 1000.0))]
    pub volume: f64,
    /// Seed of the zone order.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// The spec of a GC-unit inference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// `sim` or a device path.
    pub device: String,
    /// The path the user allowed to overwrite.
    pub force: Option<PathBuf>,
    /// Simulated SSD capacity, bytes.
    pub capacity: u64,
    /// Simulated SSD OP, spare/logical.
    pub op: f64,
    /// Simulated SSD pages per erase block.
    pub pages_per_block: u32,
    /// Simulated SSD erase blocks per superblock.
    pub blocks_per_superblock: u32,
    /// Smallest zone size tried, bytes.
    pub min_zone: u64,
    /// Largest zone size tried, bytes.
    pub max_zone: u64,
    /// Pattern volume per zone size, capacities.
    pub volume: f64,
    /// Seed of the zone order.
    pub seed: u64,
}

/// What the sweep found, and the superblock of the simulated SSD (the answer to find).
#[derive(Debug, Clone, Serialize)]
pub struct GcUnitResult {
    /// The sweep.
    #[serde(flatten)]
    pub inference: Inference,
    /// The simulated SSD's superblock in bytes (None on a real device).
    pub configured_bytes: Option<u64>,
}

/// A result under its identity.
pub type Outcome = Report<GcUnitResult>;

impl Spec {
    /// The spec of the flags.
    #[must_use]
    pub fn from_flags(f: &GcUnitFlags) -> Spec {
        Spec {
            device: f.device.clone(),
            force: f.force.clone(),
            capacity: f.capacity,
            op: f.op,
            pages_per_block: f.pages_per_block,
            blocks_per_superblock: f.blocks_per_superblock,
            min_zone: f.min_zone,
            max_zone: f.max_zone,
            volume: f.volume,
            seed: f.seed,
        }
    }

    /// Zone sizes the sweep tries at most (powers of two from `min_zone` to `max_zone`).
    #[must_use]
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions name it.
    pub fn sizes(&self) -> u64 {
        assert!(self.min_zone > 0, "a checked spec");
        u64::from((self.max_zone / self.min_zone).max(1).ilog2()) + 1
    }

    /// The simulated SSD's FTL.
    #[must_use]
    pub fn ftl(&self) -> FtlConfig {
        FtlConfig {
            logical_pages: self.capacity / 4096,
            op: self.op,
            pages_per_block: self.pages_per_block,
            blocks_per_superblock: self.blocks_per_superblock,
            ..FtlConfig::default()
        }
    }

    /// Checks every field and, for `sim`, the device's geometry and memory.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field or flag.
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions name it.
    pub fn check(&self) -> Result<(), Error> {
        crate::check_ranges(&[
            ("capacity", self.capacity, 1 << 20, 16 << 40),
            (
                "pages_per_block",
                u64::from(self.pages_per_block),
                1,
                1 << 16,
            ),
            (
                "blocks_per_superblock",
                u64::from(self.blocks_per_superblock),
                1,
                1 << 16,
            ),
            ("min_zone", self.min_zone, 4096, 1 << 50),
            ("max_zone", self.max_zone, 4096, 1 << 50),
        ])?;
        // The OP is checked by the geometry below (its message names --op).
        if !(self.volume > 0.0 && self.volume <= 1000.0 && self.op.is_finite()) {
            return Err(Error::Usage(format!(
                "volume / op: {} / {} out of range",
                self.volume, self.op
            )));
        }
        if !self.min_zone.is_power_of_two() {
            return Err(Error::Usage(format!(
                "--min-zone {}: not a power of two",
                Bytes(self.min_zone)
            )));
        }
        if self.max_zone < self.min_zone {
            return Err(Error::Usage("--max-zone is smaller than --min-zone".into()));
        }
        assert!(self.min_zone <= self.max_zone && self.min_zone.is_power_of_two());
        if self.device == "sim" {
            let l = self.ftl().layout().map_err(|e| {
                Error::Usage(format!(
                    "device geometry (--capacity, --op, --pages-per-block, --blocks-per-superblock): {e}"
                ))
            })?;
            let bytes = crate::resources::sim_device_bytes(l.logical_pages * 4096);
            crate::resources::check_memory(&[("--capacity", "simulated SSD", bytes)])?;
        }
        Ok(())
    }
}

/// What the benchmarks that overwrite the whole target expect on an existing one.
pub const SCRATCH: Expect<'static> = Expect {
    what: "a nowa scratch target (written by an earlier nowa benchmark run)",
    recognize: &recognize_scratch,
};

/// A refusal of the opening path is bad input; busy or I/O errors are failures.
fn open_error(e: nowa_device::OpenError) -> Error {
    if e.is_refusal() {
        Error::Usage(e.to_string())
    } else {
        Error::failed("opening the device", e)
    }
}

/// The real `--device` (None for `sim`): opened through the opening path, then refused
/// before anything is written unless it reports media writes (the sweep measures WAF from
/// them); the trims and fills are announced to `announce` before they run.
///
/// # Errors
/// The refusal or no media write counter ([`Error::Usage`]), busy, or an I/O error.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn target(
    spec: &Spec,
    announce: &mut dyn FnMut(&str),
) -> Result<Option<Arc<FileDevice>>, Error> {
    if spec.device == "sim" {
        return Ok(None);
    }
    let path = &spec.device;
    let opened = open_target(
        Path::new(path),
        spec.force.as_deref(),
        SCRATCH,
        None,
        &FileOptions::default(),
        &[],
        announce,
    )
    .map_err(open_error)?;
    let d = opened.device;
    assert!(d.geometry().capacity > 0, "an opened device has blocks");
    if d.counters().media_bytes_written.is_none() {
        return Err(Error::Usage(format!(
            "--device {path}: it reports no media (physical) write counter, so its WAF cannot be measured \
             (OCP counters are not read for infer-gc-unit yet; use --device sim); nothing was written"
        )));
    }
    announce(&format!(
        "nowa infer-gc-unit: for every zone size tried: trim the whole of {path}, fill it sequentially, \
         then rewrite zones of it (its previous contents are lost)"
    ));
    Ok(Some(Arc::new(d)))
}

/// Runs the sweep, each zone size tried reported to `on_step`.
///
/// # Errors
/// [`Error::Usage`]: a bad field, a refused device, a bad zone range; [`Error::Failed`]: I/O.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn run_with(
    spec: &Spec,
    announce: &mut dyn FnMut(&str),
    on_step: &mut dyn FnMut(&gcunit::Step),
) -> Result<Outcome, Error> {
    spec.check()?;
    let id = Identity::now("infer-gc-unit", spec, spec.seed);
    let real = target(spec, announce)?;
    let ftl = spec.ftl();
    let mut fresh = || -> Result<Box<dyn BlockDevice>, InferError> {
        match &real {
            None => Ok(Box::new(SimDevice::new(SimConfig::new(
                SimMode::Conventional,
                ftl.clone(),
            ))?)),
            Some(d) => {
                d.trim(0, d.geometry().capacity)?;
                Ok(Box::new(d.clone()))
            }
        }
    };
    let bench = InferSpec {
        min_zone: spec.min_zone,
        max_zone: spec.max_zone,
        volume: spec.volume,
        seed: spec.seed,
        ..InferSpec::default()
    };
    let inference = gcunit::infer(&mut fresh, &bench, on_step).map_err(|e| match e {
        InferError::ZoneRange { .. } => Error::Usage(format!("--min-zone / --max-zone: {e}")),
        e => Error::failed("the zone-size sweep", e),
    })?;
    let configured_bytes = real.is_none().then(|| ftl.unit_pages() * 4096);
    assert!(
        inference.steps.len() as u64 <= spec.sizes(),
        "one step per zone size"
    );
    Ok(Report {
        nowa: id,
        result: GcUnitResult {
            inference,
            configured_bytes,
        },
    })
}

/// [`run_with`] without announcements; `progress`: zone sizes tried of those in the range.
///
/// # Errors
/// As [`run_with`].
pub fn run(spec: &Spec, progress: Option<Progress<'_>>, cancel: &Cancel) -> Result<Outcome, Error> {
    let _ = cancel;
    spec.check()?;
    let sizes = spec.sizes();
    let mut done = 0;
    // A real device's trims and fills are announced before they run, by every face.
    run_with(spec, &mut |l| eprintln!("{l}"), &mut |_| {
        done += 1;
        if let Some(p) = progress {
            p(done.min(sizes), sizes);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_job, Job, JobOutcome};

    #[test]
    fn a_spec_round_trips_and_the_sweep_repeats() {
        let spec = Spec {
            device: "sim".into(),
            force: None,
            capacity: 64 << 20,
            op: 0.07,
            pages_per_block: 64,
            blocks_per_superblock: 4,
            min_zone: 64 << 10,
            max_zone: 4 << 20,
            volume: 0.5,
            seed: 3,
        };
        let job = Job::InferGcUnit(Box::new(spec.clone()));
        let toml = toml::to_string(&job).expect("toml");
        assert_eq!(parse_job(&toml, true).expect("toml parses"), job, "{toml}");
        let first = run(&spec, None, &Cancel).expect("runs");
        assert_eq!(first.result.configured_bytes, Some(1 << 20));
        let json = serde_json::to_string(&first).expect("json");
        let Ok(JobOutcome::InferGcUnit(again)) =
            parse_job(&json, false).expect("a job").run(None, &Cancel)
        else {
            panic!("an infer-gc-unit outcome")
        };
        assert_eq!(
            serde_json::to_value(&again.result).expect("json"),
            serde_json::to_value(&first.result).expect("json")
        );
        let mut v: serde_json::Value = serde_json::from_str(&json).expect("json");
        v["nowa"]["spec"]["min_zone"] = 3000.into();
        let e = parse_job(&v.to_string(), false).expect_err("below 4 KiB");
        assert!(e.to_string().starts_with("min_zone: "), "{e}");
    }
}
