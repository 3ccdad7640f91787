//! `nowa infer-gc-unit`: flags -> `nowa_lab::gcunit::Spec` -> the zone-size sweep -> print.

use crate::{interrupted, lab_error};
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
    /// No progress bar and no line per zone size tried (the seed line and the result stay).
    #[arg(long, short)]
    quiet: bool,
}

/// `nowa infer-gc-unit`. Ctrl-C ends the sweep after the zone size being measured: the sizes
/// measured so far are printed, an "interrupted" line on stdout (`"interrupted": true` in the
/// JSON), exit 130.
pub fn run(a: GcUnitArgs) -> Result<()> {
    let spec = Spec::from_flags(&a.flags);
    spec.check().map_err(lab_error)?;
    eprintln!(
        "nowa infer-gc-unit: seed {}, device {}",
        spec.seed, spec.device
    );
    // At most this many zone sizes: the sweep stops at the first aligned one.
    let pb = crate::progress::bar(spec.sizes(), a.quiet || a.json, "zone sizes");
    let mut on_step = |s: &gcunit::Step| {
        pb.inc(1);
        if !a.json && !a.quiet {
            pb.suspend(|| {
                println!(
                    "zone {:>10} KiB  WAF {}",
                    s.zone_bytes >> 10,
                    s.waf.map_or_else(|| "n/a".into(), |w| format!("{w:.3}"))
                );
            });
        }
    };
    nowa_lab::Cancel.on_sigint();
    let out = nowa_lab::gcunit::run_with(
        &spec,
        &mut |l| pb.suspend(|| eprintln!("{l}")),
        &mut on_step,
    )
    .map_err(lab_error)?;
    pb.finish_and_clear();
    let r = &out.result.inference;
    let stop = r.interrupted.then(|| {
        format!(
            "{} zone sizes measured, none at WAF <= {}; larger ones not tried",
            r.steps.len(),
            r.threshold
        )
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_result(&out.result, &spec, stop.as_deref());
    }
    match stop {
        Some(what) => Err(interrupted(what)),
        None => Ok(()),
    }
}

/// The inferred unit (or why there is none) and the configured superblock; after Ctrl-C the
/// "interrupted" line instead of a verdict on sizes that were never tried.
fn print_result(res: &nowa_lab::gcunit::GcUnitResult, spec: &Spec, stop: Option<&str>) {
    let r = &res.inference;
    match (r.gc_unit_bytes, stop) {
        (Some(b), _) => println!(
            "inferred GC unit: {} KiB (first zone size with WAF <= {})",
            b >> 10,
            r.threshold
        ),
        (None, Some(what)) => println!("interrupted (Ctrl-C): {what}"),
        (None, None) => println!(
            "no zone size up to {} reached WAF <= {}",
            Bytes(spec.max_zone),
            r.threshold
        ),
    }
    if let Some(b) = res.configured_bytes {
        println!("configured superblock: {} KiB", b >> 10);
    }
}
