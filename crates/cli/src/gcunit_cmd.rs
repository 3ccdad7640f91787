//! `nowa infer-gc-unit`: find the SSD's GC unit with the ZNS-like zone-size sweep.

use crate::sim_cmd::parse_size;
use crate::usage;
use anyhow::Result;
use clap::Args;
use nowa_bench::gcunit::{self, InferError, InferSpec};
use nowa_device::{BlockDevice, SimConfig, SimDevice, SimMode};
use nowa_flash::FtlConfig;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct GcUnitArgs {
    /// Device: sim (a simulated SSD built from the flags below) or a block device / file path.
    /// A real device needs a media-write counter (OCP), which this build cannot read yet.
    #[arg(long, default_value = "sim")]
    device: String,
    /// Allow overwriting a --device path that is in use, holds data or is not a nowa scratch
    /// target; must repeat the path exactly.
    #[arg(long, value_name = "PATH")]
    force: Option<PathBuf>,
    /// Simulated SSD capacity.
    #[arg(long, default_value = "1GiB")]
    capacity: String,
    /// Simulated SSD over-provisioning (spare/logical).
    #[arg(long, default_value_t = 0.07)]
    op: f64,
    /// Simulated SSD: pages per erase block.
    #[arg(long, default_value_t = 256)]
    pages_per_block: u32,
    /// Simulated SSD: erase blocks per superblock (its GC unit, the answer to find).
    #[arg(long, default_value_t = 8)]
    blocks_per_superblock: u32,
    /// Smallest zone size tried.
    #[arg(long, default_value = "64KiB")]
    min_zone: String,
    /// Largest zone size tried.
    #[arg(long, default_value = "1GiB")]
    max_zone: String,
    /// Pattern volume per zone size, in multiples of the capacity.
    #[arg(long, default_value_t = 2.0)]
    volume: f64,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(a: GcUnitArgs) -> Result<()> {
    let spec = InferSpec {
        min_zone: parse_size(&a.min_zone)?,
        max_zone: parse_size(&a.max_zone)?,
        volume: a.volume,
        seed: a.seed,
        ..InferSpec::default()
    };
    if !(a.volume > 0.0 && a.volume.is_finite()) {
        return Err(usage("--volume must be > 0"));
    }
    let capacity = parse_size(&a.capacity)?;
    let ftl = FtlConfig {
        logical_pages: capacity / 4096,
        op: a.op,
        pages_per_block: a.pages_per_block,
        blocks_per_superblock: a.blocks_per_superblock,
        ..FtlConfig::default()
    };
    if a.device == "sim" {
        ftl.layout().map_err(|e| usage(e.to_string()))?;
    }
    eprintln!("nowa infer-gc-unit: seed {}, device {}", a.seed, a.device);
    let real = crate::device_open::gc_target(&a.device, a.force.as_deref())?;
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
    let mut on_step = |s: &gcunit::Step| {
        if !a.json {
            println!("zone {:>10} KiB  WAF {:.3}", s.zone_bytes >> 10, s.waf);
        }
    };
    let r = gcunit::infer(&mut fresh, &spec, &mut on_step).map_err(|e| match e {
        InferError::Config(m) => usage(m),
        e => anyhow::Error::new(e),
    })?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        match r.gc_unit_bytes {
            Some(b) => println!(
                "inferred GC unit: {} KiB (first zone size with WAF <= {})",
                b >> 10,
                r.threshold
            ),
            None => println!(
                "no zone size up to {} reached WAF <= {}",
                a.max_zone, r.threshold
            ),
        }
        if a.device == "sim" {
            println!("configured superblock: {} KiB", ftl.unit_pages() * 4);
        }
    }
    Ok(())
}
