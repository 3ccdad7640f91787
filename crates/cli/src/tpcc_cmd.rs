//! `nowa tpcc`: flags -> [`nowa_lab::tpcc::flags::resolve`] (pool, sizing, device, zone size,
//! SepFrozen's model) -> [`nowa_lab::tpcc::run_with`] -> print. `--check-only` opens
//! (recovers) an existing database and only checks it.

use crate::engine_env::CliEnv;
use crate::resources::check_output_file;
use crate::{interrupted, lab_error};
use anyhow::{Context, Result};
use clap::Args;
use nowa_lab::tpcc::flags::{resolve, Resolved, TpccFlags};
use nowa_lab::tpcc::{self as lab, size, CheckOutcome};
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
    /// Write the JSON result to FILE.
    #[arg(long, value_name = "FILE")]
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
    check_output_file("--csv", a.csv.as_deref())?;
    check_output_file("--out", a.out.as_deref())?;
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

fn env(a: &TpccFlags) -> CliEnv {
    CliEnv {
        command: "nowa tpcc",
        force: a.force.clone(),
    }
}

/// `nowa tpcc`.
pub fn run_cmd(a: TpccArgs) -> Result<()> {
    check_paths(&a)?;
    let r = resolve(&a.flags, &env(&a.flags)).map_err(lab_error)?;
    if a.flags.check_only {
        return check_only(&a, &r).and_then(|c| consistent(&c));
    }
    nowa_lab::Cancel.on_sigint();
    keep_heap();
    print_banner(&a, &r);
    print_sizing(&a, &r.sizing);
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
            eprintln!(
                "nowa tpcc: loading: {} of {} warehouses, {} rows, {:.1}s",
                p.warehouses_done,
                p.warehouses,
                p.rows,
                p.elapsed.as_secs_f64()
            );
        }
    };
    let on_loaded = |lr: &nowa_tpcc::LoadReport| loaded(a, lr).map_err(failed);
    let on_sample = |s: &nowa_tpcc::Sample| {
        if !quiet {
            print_sample(s);
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
    eprintln!(
        "nowa tpcc: loaded {} warehouses in {:.1}s ({:.1} warehouses/min, {:.0} rows/s)",
        a.flags.warehouses, lr.seconds, lr.warehouses_per_minute, lr.rows_per_second
    );
    if let Some(f) = &a.ready_file {
        std::fs::write(f, serde_json::to_string(lr)?)
            .with_context(|| format!("--ready-file {}", f.display()))?;
    }
    Ok(())
}

fn print_sample(s: &nowa_tpcc::Sample) {
    let x = |k: &str| {
        s.extra
            .get(k)
            .map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
    };
    let mib = s.extra.get("db_bytes").copied().unwrap_or(0.0) / f64::from(1 << 20);
    eprintln!(
        "nowa tpcc: {:.0}s {:.0} txn/s tpmC {:.0} conflicts {} DB WAF {} SSD WAF {} DB {mib:.0} MiB",
        s.elapsed_s,
        s.txn_per_s,
        s.tpmc,
        s.conflicts,
        x("db_waf"),
        x("ssd_waf"),
    );
}

/// The run's one-line summary of its setup (always), and why the pool has its size.
fn print_banner(args: &TpccArgs, r: &Resolved) {
    let a = &args.flags;
    let pool_mib = r.spec.engine.pool >> 20;
    eprintln!(
        "nowa tpcc: seed {}, {} warehouses, {} threads, {}, pool {} MiB, device {} ({} MiB), WAL {}, {:?} commits",
        a.seed,
        a.warehouses,
        a.threads,
        if a.steady { "steady" } else { "standard" },
        pool_mib,
        a.device,
        r.spec.capacity >> 20,
        if a.separate_wal {
            "on a separate in-memory device"
        } else {
            "on the device"
        },
        a.engine.durability
    );
    if !args.quiet {
        eprintln!("nowa tpcc: pool {pool_mib} MiB: {}", r.pool_why);
    }
}

/// The page space and the data's share of it (always), and a warning when it does not fit.
fn print_sizing(a: &TpccArgs, sz: &size::Sizing) {
    for line in sz.describe() {
        eprintln!("nowa tpcc: {line}");
    }
    if !a.flags.steady && a.flags.transactions.is_none() && !a.quiet {
        eprintln!("nowa tpcc: standard TPC-C grows the database (up to {} B of pages per transaction) until the device is full; --steady keeps it flat", size::GROWTH_PER_TXN);
    }
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
    if let Some(x) = &c.recovery {
        eprintln!(
            "nowa tpcc: recovered in {:.3} s (analysis {} us, redo {} us): clean shutdown {}, {} records replayed, redo range {} bytes",
            c.open_secs,
            x.analysis_micros,
            x.redo_micros,
            x.clean_shutdown,
            x.records_replayed,
            x.end_lsn.saturating_sub(x.redo_lsn)
        );
    }
    if c.history_trimmed {
        eprintln!("nowa tpcc: HISTORY is trimmed (a steady run): clauses 3.3.2.8-9 skipped");
    }
    print!("{}", lab::consistency_text(&c.consistency));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c.consistency)?);
    }
    Ok(c)
}

fn output(a: &TpccArgs, o: &lab::Outcome) -> Result<()> {
    if let Some(p) = &a.csv {
        let f = nowa_lab::csv_file(p, &o.nowa).map_err(lab_error)?;
        nowa_tpcc::write_samples_csv(&o.result.run.samples, f)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    let json = serde_json::to_string_pretty(o)?;
    if let Some(p) = &a.out {
        std::fs::write(p, &json).with_context(|| format!("writing {}", p.display()))?;
    }
    if a.json {
        println!("{json}");
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
