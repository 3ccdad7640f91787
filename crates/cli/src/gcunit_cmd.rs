//! `nowa infer-gc-unit`: find the SSD's GC unit with the ZNS-like zone-size sweep.

use crate::flags;
use crate::resources::{check_memory, sim_device_bytes};
use crate::usage;
use anyhow::Result;
use clap::Args;
use nowa_bench::gcunit::{self, InferError, InferSpec};
use nowa_device::{BlockDevice, SimConfig, SimDevice, SimMode};
use nowa_flash::FtlConfig;
use nowa_units::Bytes;
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
    #[arg(long, default_value = "1GiB", value_parser = flags::size(1 << 20, 16 << 40))]
    capacity: u64,
    /// Simulated SSD over-provisioning (spare/logical: 0.07 or 7%).
    #[arg(long, default_value = "7%", value_parser = flags::fraction(0.0, false, 1.0, false))]
    op: f64,
    /// Simulated SSD: pages per erase block.
    #[arg(long, default_value = "256", value_parser = flags::count::<u32>(1, 1 << 16))]
    pages_per_block: u32,
    /// Simulated SSD: erase blocks per superblock (its GC unit, the answer to find).
    #[arg(long, default_value = "8", value_parser = flags::count::<u32>(1, 1 << 16))]
    blocks_per_superblock: u32,
    /// Smallest zone size tried (a power of two >= 4 KiB).
    #[arg(long, default_value = "64KiB", value_parser = flags::size(4096, 1 << 50))]
    min_zone: u64,
    /// Largest zone size tried.
    #[arg(long, default_value = "1GiB", value_parser = flags::size(4096, 1 << 50))]
    max_zone: u64,
    /// Pattern volume per zone size, in multiples of the capacity.
    #[arg(long, default_value = "2", value_parser = flags::number(0.0, true, 1000.0))]
    volume: f64,
    /// Seed of the zone order.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// No line per zone size tried (the seed line and the result stay).
    #[arg(long, short)]
    quiet: bool,
}

fn check(a: &GcUnitArgs, ftl: &FtlConfig) -> Result<()> {
    if !a.min_zone.is_power_of_two() {
        return Err(usage(format!(
            "--min-zone {}: not a power of two",
            Bytes(a.min_zone)
        )));
    }
    if a.max_zone < a.min_zone {
        return Err(usage("--max-zone is smaller than --min-zone"));
    }
    if a.device == "sim" {
        let l = ftl.layout().map_err(|e| {
            usage(format!(
                "device geometry (--capacity, --op, --pages-per-block, --blocks-per-superblock): {e}"
            ))
        })?;
        check_memory(&[(
            "--capacity",
            "simulated SSD",
            sim_device_bytes(l.logical_pages * 4096),
        )])?;
    }
    Ok(())
}

/// `nowa infer-gc-unit`.
pub fn run(a: GcUnitArgs) -> Result<()> {
    let spec = InferSpec {
        min_zone: a.min_zone,
        max_zone: a.max_zone,
        volume: a.volume,
        seed: a.seed,
        ..InferSpec::default()
    };
    let ftl = FtlConfig {
        logical_pages: a.capacity / 4096,
        op: a.op,
        pages_per_block: a.pages_per_block,
        blocks_per_superblock: a.blocks_per_superblock,
        ..FtlConfig::default()
    };
    check(&a, &ftl)?;
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
        if !a.json && !a.quiet {
            println!(
                "zone {:>10} KiB  WAF {}",
                s.zone_bytes >> 10,
                s.waf.map_or_else(|| "n/a".into(), |w| format!("{w:.3}"))
            );
        }
    };
    let r = gcunit::infer(&mut fresh, &spec, &mut on_step).map_err(|e| match e {
        InferError::ZoneRange { .. } => usage(format!("--min-zone / --max-zone: {e}")),
        e => anyhow::Error::new(e),
    })?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    match r.gc_unit_bytes {
        Some(b) => println!(
            "inferred GC unit: {} KiB (first zone size with WAF <= {})",
            b >> 10,
            r.threshold
        ),
        None => println!(
            "no zone size up to {} reached WAF <= {}",
            Bytes(a.max_zone),
            r.threshold
        ),
    }
    if a.device == "sim" {
        println!("configured superblock: {} KiB", ftl.unit_pages() * 4);
    }
    Ok(())
}
