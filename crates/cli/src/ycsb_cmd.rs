//! `nowa ycsb`: flags -> [`nowa_lab::ycsb::flags::resolve`] (pool, device size, zone size,
//! SepFrozen's model) -> [`nowa_lab::ycsb::run_with`] -> the summary or the JSON.

use crate::engine_env::CliEnv;
use crate::resources::{check_device_path, check_new_output, check_output_file};
use crate::{interrupted, lab_error};
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use nowa_bench::ycsb;
use nowa_lab::ycsb::flags::{resolve, Resolved, YcsbFlags};
use nowa_lab::ycsb::{Hooks, Outcome};
use nowa_lab::Cancel;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct YcsbArgs {
    #[command(flatten)]
    flags: YcsbFlags,
    /// Per-interval CSV (ops/s, hit ratio, MB/s per write category, WAFs).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

fn spinner(quiet: bool, msg: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
        pb.set_style(style);
    }
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

/// The output paths, checked before any work: one line naming the flag, exit 2.
fn check_paths(a: &YcsbArgs) -> Result<()> {
    let f = &a.flags;
    check_device_path(&f.device)?;
    check_output_file("--csv", a.csv.as_deref())?;
    check_output_file("--ack-log", f.ack_log.as_deref())?;
    for (flag, file) in [
        ("--record-trace", &f.record_trace),
        ("--record-writes", &f.record_writes),
    ] {
        if let Some(p) = file {
            check_new_output(flag, p, false)?;
        }
    }
    Ok(())
}

/// The run's setup on stderr.
fn banner(a: &YcsbArgs, r: &Resolved) {
    let (s, e) = (&r.spec, &r.spec.engine);
    for n in &r.notes {
        eprintln!("nowa ycsb: {n}");
    }
    if !a.quiet {
        eprintln!("nowa ycsb: pool {} MiB: {}", e.pool >> 20, r.pool_why);
    }
    eprintln!(
        "nowa ycsb: seed {}, {} records (~{} MiB), pool {} MiB, device {} ({} MiB), {}",
        s.seed,
        s.records,
        r.dataset >> 20,
        e.pool >> 20,
        s.device,
        s.capacity >> 20,
        match e.pacing {
            Some(c) if c.paced => format!("paced by the timing model ({})", c.model().describe()),
            Some(c) => format!(
                "UNPACED (--pacing off; timing model {})",
                c.model().describe()
            ),
            None => "real I/O".to_owned(),
        }
    );
}

/// `nowa ycsb`.
pub fn run(a: YcsbArgs) -> Result<()> {
    check_paths(&a)?;
    let env = CliEnv {
        command: "nowa ycsb",
        force: a.flags.force.clone(),
    };
    let r = resolve(&a.flags, &env).map_err(lab_error)?;
    Cancel.on_sigint();
    banner(&a, &r);
    let pb = spinner(a.quiet, "loading");
    let records = r.spec.records;
    let on_load = |n: u64| pb.set_message(format!("loading {}%", n * 100 / records));
    let mut on_tick = |tk: &ycsb::Tick| {
        pb.set_message(format!(
            "{:.0}s {:.0} ops/s hit {:.3} DB WAF {} SSD WAF {} device writes {:.2}x",
            tk.t_secs,
            tk.ops_per_sec,
            tk.hit_ratio,
            ycsb::report::fmt_waf(tk.db_waf),
            ycsb::report::fmt_waf(tk.ssd_waf),
            tk.device_writes
        ));
    };
    let hooks = Hooks {
        device: Some(r.device.clone()),
        record_trace: a.flags.record_trace.as_deref(),
        ack_log: a.flags.ack_log.clone(),
        on_load: Some(&on_load),
        on_tick: Some(&mut on_tick),
    };
    let out = nowa_lab::ycsb::run_with(&r.spec, hooks, &Cancel);
    pb.finish_and_clear();
    let out = match out {
        Err(_) if Cancel.requested() => {
            eprintln!(
                "nowa ycsb: interrupted during the load: fewer than {records} records loaded"
            );
            return Err(interrupted("during the load; nothing was measured"));
        }
        o => o.map_err(lab_error)?,
    };
    if let (Some(w), Some(p)) = (&out.result.write_log, &a.flags.record_writes) {
        eprintln!(
            "nowa ycsb: {}",
            nowa_lab::frozen::record::summary_line(p, w)
        );
    }
    output(&a, &out, &r)?;
    if out.result.result.interrupted {
        return Err(interrupted(format!(
            "after {:.1} s of the run phase; the results above cover it",
            out.result.result.run_secs
        )));
    }
    Ok(())
}

/// Writes the CSV and prints the summary or the JSON.
fn output(a: &YcsbArgs, out: &Outcome, r: &Resolved) -> Result<()> {
    // `nowa run` re-runs a result from its identity: it must name this job.
    assert_eq!(out.nowa.command, "ycsb", "the result names its job");
    assert_eq!(out.nowa.seed, r.spec.seed, "the result names its seed");
    let res = &out.result.result;
    if let Some(p) = &a.csv {
        let file = nowa_lab::csv_file(p, &out.nowa).map_err(lab_error)?;
        ycsb::write_ticks_csv(&res.ticks, file)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(out)?);
        return Ok(());
    }
    print!("{}", ycsb::summary(res));
    if let Some(p) = &out.result.frozen {
        print!("{}", nowa_lab::frozen::engine::text(p));
    }
    if let Some(s) = r.device.1.as_deref() {
        let l = s.layout();
        println!(
            "ssd       simulated {:?}: {} units of {}, OP {:.1}% spare/logical",
            s.mode(),
            l.units,
            nowa_units::Bytes(u64::from(l.unit_pages) * 4096),
            l.op_spare_over_logical * 100.0
        );
    }
    Ok(())
}
