//! `nowa table1`: reproduce Table 1 of how-to-write-to-ssds.md row by row on identical
//! simulated conventional SSDs; prints the table and writes CSV, JSON and a bar plot.

use crate::flags::{self, MAX_THREADS};
use crate::interrupted;
use crate::resources::{check_memory, create_output_dir, sim_device_bytes};
use anyhow::{Context, Result};
use clap::Args;
use nowa_bench::table1::{self, Table1, Table1Spec};
use nowa_bench::ycsb::report::fmt_waf;
use nowa_bench::ycsb::ValueKind;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct Table1Args {
    /// The ~1 minute preset (README headline); default is the full run.
    #[arg(long)]
    quick: bool,
    /// Override the number of records (1500000 or 1.5M).
    #[arg(long, value_parser = flags::count::<u64>(1, 1_000_000_000_000))]
    records: Option<u64>,
    /// Override the run length in device capacities written (>= 4 for steady state).
    #[arg(long, value_parser = flags::number(0.0, true, 1e6))]
    device_writes: Option<f64>,
    /// Values: paper (the default: LZ4 leaves ~0.41 of a page, the paper's YCSB ratio),
    /// pattern (~0.2: far more compressible) or random (incompressible).
    #[arg(long, default_value = "paper", value_parser = flags::parsed::<ValueKind>())]
    values: ValueKind,
    /// Worker threads per row.
    #[arg(long, value_parser = flags::count::<usize>(1, MAX_THREADS))]
    threads: Option<usize>,
    /// Zones appended concurrently in the out-of-place rows.
    #[arg(long, value_parser = flags::count::<u32>(1, 256))]
    open_zones: Option<u32>,
    /// Pace the simulated SSD by its timing model (on, the default: OPS reflect the device's
    /// work) or not (off: OPS measure the CPU; the device-bound column is still reported).
    #[arg(long, default_value = "on", value_parser = flags::on_off, action = clap::ArgAction::Set)]
    pacing: bool,
    /// Media write bandwidth of the simulated SSD per second (default 1GB = 10^9 bytes/s).
    #[arg(long, value_parser = flags::size(1_000_000, 1 << 50))]
    media_bandwidth: Option<u64>,
    /// Read bandwidth of the simulated SSD per second (default 3GB).
    #[arg(long, value_parser = flags::size(1_000_000, 1 << 50))]
    read_bandwidth: Option<u64>,
    /// Timing of the simulated SSD: bandwidth (one media server at the bandwidths above) or
    /// femu / mqsim (8 channels x 8 chips of 4 KiB pages with those simulators' latencies).
    #[arg(long, value_enum, default_value = "bandwidth")]
    sim_timing: flags::SimTiming,
    /// Seed of every row.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Output directory for table1.csv, table1.json, table1.txt and table1.svg (none: print only).
    #[arg(long, alias = "out-dir", value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// No per-row progress lines (the seed line and the result stay).
    #[arg(long, short)]
    quiet: bool,
}

fn spec(a: &Table1Args) -> Table1Spec {
    let mut spec = if a.quick {
        Table1Spec::quick()
    } else {
        Table1Spec::full()
    };
    spec.records = a.records.unwrap_or(spec.records);
    spec.device_writes = a.device_writes.unwrap_or(spec.device_writes);
    spec.threads = a.threads.unwrap_or(spec.threads);
    spec.open_zones = a.open_zones.unwrap_or(spec.open_zones);
    spec.seed = a.seed;
    spec.values = a.values;
    spec.pacing.paced = a.pacing;
    spec.pacing.chips = a.sim_timing.chips();
    if let Some(b) = a.media_bandwidth {
        spec.pacing.media_bytes_per_sec = b as f64;
    }
    if let Some(b) = a.read_bandwidth {
        spec.pacing.read_bytes_per_sec = b as f64;
    }
    spec
}

/// `nowa table1`.
pub fn run(a: Table1Args) -> Result<()> {
    let spec = spec(&a);
    let (_, pool, capacity) =
        table1::device_config(&spec).map_err(|e| crate::usage(format!("--records: {e}")))?;
    // One row at a time: its simulated SSD, the GC-unit probe, the pool, the WAL device.
    check_memory(&[
        ("--records", "simulated SSD", sim_device_bytes(capacity)),
        ("--records", "buffer pool and WAL", pool.saturating_mul(3)),
    ])?;
    if let Some(dir) = &a.out {
        create_output_dir("--out", dir)?;
    }
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
    let t = table1::run(&spec, &mut |r| {
        if quiet {
            return;
        }
        eprintln!(
            "  {:<20} {:>9.0} ops/s  DB WAF {}  SSD WAF {}  {}-bound  ({:.1} s)",
            r.name,
            r.ops_per_sec,
            fmt_waf(r.db_waf),
            fmt_waf(r.ssd_waf),
            r.bound,
            r.run_secs
        );
    })
    .context("running the Table 1 rows")?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&t)?);
    } else {
        print!("{}", table1::format(&t));
        println!("(total {:.0} s)", t0.elapsed().as_secs_f64());
    }
    if let Some(dir) = &a.out {
        write_outputs(&t, dir)?;
    }
    if t.interrupted {
        return Err(interrupted(format!(
            "{} of 7 rows ran; the table above (and --out) holds them",
            t.rows.len()
        )));
    }
    Ok(())
}

fn write_outputs(t: &Table1, dir: &Path) -> Result<()> {
    table1::write_csv(t, &dir.join("table1.csv")).context("writing table1.csv")?;
    std::fs::write(dir.join("table1.json"), serde_json::to_string_pretty(t)?)
        .context("writing table1.json")?;
    std::fs::write(dir.join("table1.txt"), table1::format(t)).context("writing table1.txt")?;
    if !t.rows.is_empty() {
        table1::plot(t, &dir.join("table1.svg")).context("plotting table1.svg")?;
    }
    eprintln!("wrote {}/table1.{{csv,json,txt,svg}}", dir.display());
    Ok(())
}
