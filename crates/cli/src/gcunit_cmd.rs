//! `nowa infer-gc-unit`: flags -> `nowa_lab::gcunit::Spec` -> the zone-size sweep -> print.

use crate::lab_error;
use anyhow::Result;
use clap::Args;
use nowa_bench::gcunit;
use nowa_lab::gcunit::{GcUnitFlags, Spec};
use nowa_units::Bytes;

#[derive(Args, Debug)]
pub struct GcUnitArgs {
    #[command(flatten)]
    flags: GcUnitFlags,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// No line per zone size tried (the seed line and the result stay).
    #[arg(long, short)]
    quiet: bool,
}

/// `nowa infer-gc-unit`.
pub fn run(a: GcUnitArgs) -> Result<()> {
    let spec = Spec::from_flags(&a.flags);
    spec.check().map_err(lab_error)?;
    eprintln!(
        "nowa infer-gc-unit: seed {}, device {}",
        spec.seed, spec.device
    );
    let mut on_step = |s: &gcunit::Step| {
        if !a.json && !a.quiet {
            println!(
                "zone {:>10} KiB  WAF {}",
                s.zone_bytes >> 10,
                s.waf.map_or_else(|| "n/a".into(), |w| format!("{w:.3}"))
            );
        }
    };
    let out = nowa_lab::gcunit::run_with(&spec, &mut |l| eprintln!("{l}"), &mut on_step)
        .map_err(lab_error)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let r = &out.result.inference;
    match r.gc_unit_bytes {
        Some(b) => println!(
            "inferred GC unit: {} KiB (first zone size with WAF <= {})",
            b >> 10,
            r.threshold
        ),
        None => println!(
            "no zone size up to {} reached WAF <= {}",
            Bytes(spec.max_zone),
            r.threshold
        ),
    }
    if let Some(b) = out.result.configured_bytes {
        println!("configured superblock: {} KiB", b >> 10);
    }
    Ok(())
}
