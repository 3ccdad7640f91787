//! `nowa tpcc`: flags -> [`nowa_lab::tpcc::flags::resolve`] (pool, sizing, device, zone size,
//! SepFrozen's model) -> [`nowa_lab::tpcc::run_with`] -> print. `--check-only` opens
//! (recovers) an existing database and only checks it.

use crate::engine_env::CliEnv;
use crate::resources::check_output_file;
use crate::{interrupted, lab_error};
use anyhow::{Context, Result};
use clap::Args;
use nowa_lab::tpcc::flags::{resolve, Resolved, TpccFlags};
use nowa_lab::tpcc::{self as lab, CheckOutcome};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct TpccArgs {
    #[command(flatten)]
    flags: TpccFlags,
    /// Write this file (JSON: the load's report) once the load is done (`nowa ckpt figures`
    /// waits for it before it kills a crash run).
    #[arg(long, value_name = "FILE", hide = true)]
    ready_file: Option<PathBuf>,
    /// Per-interval CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Output directory: the JSON result goes to OUT/tpcc.json, the per-interval CSV to
    /// OUT/samples.csv (created; a directory that holds something needs --force OUT).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

/// The paths the run writes, checked before any work: one line naming the flag, exit 2.
fn check_paths(a: &TpccArgs) -> Result<()> {
    crate::resources::check_device_path(&a.flags.device)?;
    a.flags.device_force(a.out.as_deref()).map_err(lab_error)?;
    check_output_file("--csv", a.csv.as_deref())?;
    if let Some(out) = &a.out {
        // Each --force names one path it allows to be overwritten (the device's or this).
        let force = a
            .flags
            .force
            .iter()
            .any(|p| nowa_device::same_target(out, p));
        nowa_lab::resources::check_out_dir("--out", out, force).map_err(lab_error)?;
    }
    for (flag, file) in [
        ("--record-trace", &a.flags.record_trace),
        ("--record-writes", &a.flags.record_writes),
    ] {
        if let Some(p) = file {
            crate::resources::check_new_output(flag, p, false)?;
        }
    }
    Ok(())
}

fn env(a: &TpccArgs) -> Result<CliEnv> {
    Ok(CliEnv {
        command: "nowa tpcc",
        force: a.flags.device_force(a.out.as_deref()).map_err(lab_error)?,
    })
}

/// `nowa tpcc`.
pub fn run_cmd(a: TpccArgs) -> Result<()> {
    check_paths(&a)?;
    let r = resolve(&a.flags, &env(&a)?).map_err(lab_error)?;
    if a.flags.check_only {
        return check_only(&a, &r).and_then(|c| consistent(&c));
    }
    if let Some(out) = &a.out {
        crate::resources::create_output_dir("--out", out)?;
    }
    nowa_lab::Cancel.on_sigint();
    keep_heap();
    let [setup, pool] = r.banner(&a.flags);
    let notes = (!a.quiet).then_some(pool).into_iter();
    for line in [setup]
        .into_iter()
        .chain(notes)
        .chain(r.sizing_lines(&a.flags, !a.quiet))
    {
        eprintln!("nowa tpcc: {line}");
    }
    let out = run_engine(&a, &r)?;
    if out.result.interrupted {
        return Err(interrupted(format!(
            "after {:.1} s; the results above cover it",
            out.result.run.seconds
        )));
    }
    if out
        .result
        .consistency
        .as_ref()
        .is_some_and(|c| !c.is_consistent())
    {
        anyhow::bail!("the consistency check failed");
    }
    Ok(())
}

/// The run on the resolved spec with the CLI's hooks (progress lines, `--ready-file`,
/// `--record-trace`), its output written and printed.
fn run_engine(a: &TpccArgs, r: &Resolved) -> Result<lab::Outcome> {
    let failed = |e: anyhow::Error| nowa_lab::Error::Failed {
        what: "nowa tpcc",
        source: e.into(),
    };
    let quiet = a.quiet;
    let on_load = |p: &nowa_tpcc::LoadProgress| {
        if !quiet {
            eprintln!("nowa tpcc: {}", lab::load_line(p));
        }
    };
    let on_loaded = |lr: &nowa_tpcc::LoadReport| loaded(a, lr).map_err(failed);
    let on_sample = |s: &nowa_tpcc::Sample| {
        if !quiet {
            eprintln!("nowa tpcc: {}", lab::sample_line(s));
        }
    };
    let hooks = lab::Hooks {
        device: Some(r.device.clone()),
        record_trace: a.flags.record_trace.as_deref(),
        on_load: Some(&on_load),
        on_loaded: Some(&on_loaded),
        on_sample: Some(&on_sample),
    };
    let out = lab::run_with(&r.spec, hooks, &nowa_lab::Cancel).map_err(lab_error)?;
    // `nowa run` re-runs a result from its identity: it must name this job and its seed.
    assert_eq!(out.nowa.command, "tpcc", "the result names its job");
    assert_eq!(out.nowa.seed, r.spec.seed, "the result names its seed");
    if let (Some(w), Some(p)) = (&out.result.write_log, &a.flags.record_writes) {
        eprintln!(
            "nowa tpcc: {}",
            nowa_lab::frozen::record::summary_line(p, w)
        );
    }
    output(a, &out)?;
    Ok(out)
}

/// The load's line, and `--ready-file`.
fn loaded(a: &TpccArgs, lr: &nowa_tpcc::LoadReport) -> Result<()> {
    eprintln!("nowa tpcc: {}", lab::loaded_line(a.flags.warehouses, lr));
    if let Some(f) = &a.ready_file {
        std::fs::write(f, serde_json::to_string(lr)?)
            .with_context(|| format!("--ready-file {}", f.display()))?;
    }
    Ok(())
}

/// Keep freed heap memory in the process: by default glibc returns the top of the heap to the
/// kernel once 128 KiB are free there and serves large blocks by mmap, so short-lived buffers
/// fault in (and zero) fresh pages again and again. In one `perf record` of a 1-thread
/// in-memory run (load included) on a loaded machine, kernel page clearing under `malloc`
/// took 47% of the samples; its share of the run phase alone was not separated
/// (docs/tpcc.md section 9).
fn keep_heap() {
    // SAFETY: mallopt only sets allocator parameters; called before the worker threads start.
    let trim = unsafe { libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30) };
    // SAFETY: as above (32 MiB is glibc's largest mmap threshold on 64-bit).
    let mmap = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20) };
    assert!(trim == 1 && mmap == 1, "glibc accepts both settings");
}

/// `--check-only`'s verdict.
fn consistent(c: &CheckOutcome) -> Result<()> {
    anyhow::ensure!(
        c.consistency.is_consistent(),
        "the consistency check failed"
    );
    Ok(())
}

fn check_only(a: &TpccArgs, r: &Resolved) -> Result<CheckOutcome> {
    let c = lab::check_database(&r.spec, r.device.0.clone()).map_err(lab_error)?;
    assert!(c.open_secs >= 0.0, "a duration");
    for line in lab::check_lines(&c) {
        eprintln!("nowa tpcc: {line}");
    }
    print!("{}", lab::consistency_text(&c.consistency));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c.consistency)?);
    }
    Ok(c)
}

fn output(a: &TpccArgs, o: &lab::Outcome) -> Result<()> {
    if let Some(p) = &a.csv {
        lab::write_samples(p, o).map_err(lab_error)?;
    }
    if let Some(d) = &a.out {
        lab::write_out(d, o).map_err(lab_error)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(o)?);
        return Ok(());
    }
    print!("{}", lab::summary(&o.result));
    if let Some(f) = &o.result.frozen {
        print!("{}", nowa_lab::frozen::engine::text(f));
    }
    if let Some(c) = &o.result.consistency {
        print!("{}", lab::consistency_text(c));
    }
    Ok(())
}
