//! `nowa table1`: reproduce Table 1 of how-to-write-to-ssds.md row by row on identical
//! simulated conventional SSDs; prints the table and writes CSV, JSON and a bar plot.

use crate::interrupted;
use crate::resources::{check_memory, create_output_dir, sim_device_bytes};
use anyhow::{Context, Result};
use clap::Args;
use nowa_bench::table1;
use nowa_bench::ycsb::report::fmt_waf;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct Table1Args {
    #[command(flatten)]
    flags: nowa_lab::table1::Table1Flags,
    /// Output directory for table1.csv, table1.json, table1.txt and table1.svg (none: print
    /// only); created if missing (not its parents).
    #[arg(long, alias = "out-dir", value_name = "DIR")]
    out: Option<PathBuf>,
    /// Overwrite the table1.* files already in --out (refused without it).
    #[arg(long, requires = "out")]
    force: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// No progress bar and no per-row lines (the seed line and the result stay).
    #[arg(long, short)]
    quiet: bool,
}

/// The files `--out` receives.
const OUTPUTS: [&str; 4] = ["table1.csv", "table1.json", "table1.txt", "table1.svg"];

/// `--out`: created, and a table already there (docs/table1 is one) kept unless --force:
/// refused before the minutes of the run, not found after them.
fn check_out(a: &Table1Args) -> Result<()> {
    if let Some(dir) = &a.out {
        create_output_dir("--out", dir)?;
        for f in OUTPUTS {
            crate::resources::check_new_output("--out", &dir.join(f), a.force)?;
        }
    }
    Ok(())
}

/// `nowa table1`.
pub fn run(a: Table1Args) -> Result<()> {
    let spec = nowa_lab::table1::from_flags(&a.flags);
    let (_, pool, capacity) =
        table1::device_config(&spec).map_err(|e| crate::usage(format!("--records: {e}")))?;
    // One row at a time: its simulated SSD, the GC-unit probe, the pool, the WAL device.
    check_memory(&[
        ("--records", "simulated SSD", sim_device_bytes(capacity)),
        ("--records", "buffer pool and WAL", pool.saturating_mul(3)),
    ])?;
    check_out(&a)?;
    nowa_bench::interrupt::install_sigint_handler();
    eprintln!(
        "nowa table1: {} records, {}x device writes per row, seed {}, {}",
        spec.records,
        spec.device_writes,
        spec.seed,
        if spec.pacing.paced {
            "paced by the simulated SSD's timing model"
        } else {
            "UNPACED (--pacing off)"
        }
    );
    let t0 = std::time::Instant::now();
    let quiet = a.quiet;
    // Units of work: each row's load and run (rate and ETA inside a row, not only per row).
    let units = table1::ROW_UNITS;
    let pb = crate::progress::bar_of(7 * units, units, a.quiet, "table1", "rows");
    let progress = |done: u64, total: u64| {
        pb.set_length(total.max(1));
        pb.set_position(done);
    };
    let mut on_row = |r: &table1::Row| {
        if quiet {
            return;
        }
        pb.set_message(format!("table1: after {}", r.name));
        let line = row_line(r);
        // Above the bar on a terminal; plain lines when stderr is not one (the bar is hidden).
        if pb.is_hidden() {
            eprintln!("{line}");
        } else {
            pb.println(line);
        }
    };
    let out = nowa_lab::table1::run_with(&spec, &mut on_row, Some(&progress), &nowa_lab::Cancel)
        .map_err(crate::lab_error)?;
    pb.finish_and_clear();
    // `nowa run` re-runs a result from its identity: it must name this job.
    assert_eq!(out.nowa.command, "table1", "the result names its job");
    let t = &out.result;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", table1::format(t));
        println!("(total {:.0} s)", t0.elapsed().as_secs_f64());
    }
    if let Some(dir) = &a.out {
        write_outputs(&out, dir)?;
    }
    if t.interrupted {
        return Err(interrupted(format!(
            "{} of 7 rows ran; the table above (and --out) holds them",
            t.rows.len()
        )));
    }
    Ok(())
}

/// One finished row, as printed above the progress bar.
fn row_line(r: &table1::Row) -> String {
    format!(
        "  {:<20} {:>9.0} ops/s  DB WAF {}  SSD WAF {}  {}-bound  ({:.1} s)",
        r.name,
        r.ops_per_sec,
        fmt_waf(r.db_waf),
        fmt_waf(r.ssd_waf),
        r.bound,
        r.run_secs
    )
}

fn write_outputs(out: &nowa_lab::table1::Outcome, dir: &Path) -> Result<()> {
    let t = &out.result;
    table1::write_csv(t, &dir.join("table1.csv")).context("writing table1.csv")?;
    std::fs::write(dir.join("table1.json"), serde_json::to_string_pretty(out)?)
        .context("writing table1.json")?;
    std::fs::write(dir.join("table1.txt"), table1::format(t)).context("writing table1.txt")?;
    if !t.rows.is_empty() {
        table1::plot(t, &dir.join("table1.svg")).context("plotting table1.svg")?;
    }
    eprintln!("wrote {}/table1.{{csv,json,txt,svg}}", dir.display());
    Ok(())
}
