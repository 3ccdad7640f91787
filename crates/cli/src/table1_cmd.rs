//! `nowa table1`: reproduce Table 1 of how-to-write-to-ssds.md row by row on identical
//! simulated conventional SSDs; prints the table and writes CSV, JSON and a bar plot.

use anyhow::{Context, Result};
use clap::Args;
use nowa_bench::table1::{self, Table1Spec};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct Table1Args {
    /// The ~1 minute preset (README headline); default is the full run.
    #[arg(long)]
    quick: bool,
    /// Override the number of records.
    #[arg(long)]
    records: Option<u64>,
    /// Override the run length in device capacities written (>= 4 for steady state).
    #[arg(long)]
    device_writes: Option<f64>,
    #[arg(long)]
    threads: Option<usize>,
    /// Zones appended concurrently in the out-of-place rows.
    #[arg(long)]
    open_zones: Option<u32>,
    /// Do not pace the simulated SSD: OPS then measure the simulator's CPU cost only.
    #[arg(long)]
    cpu_bound: bool,
    /// Media write bandwidth of the paced SSD (bytes/s, e.g. 1e9).
    #[arg(long)]
    media_bandwidth: Option<f64>,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Output directory for table1.csv, table1.json and table1.svg (none: print only).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Table1Args) -> Result<()> {
    let mut spec = if a.quick {
        Table1Spec::quick()
    } else {
        Table1Spec::full()
    };
    if let Some(r) = a.records {
        if r == 0 {
            return Err(crate::usage("--records must be > 0"));
        }
        spec.records = r;
    }
    if let Some(d) = a.device_writes {
        if d.is_nan() || d <= 0.0 {
            return Err(crate::usage("--device-writes must be > 0"));
        }
        spec.device_writes = d;
    }
    if let Some(t) = a.threads {
        spec.threads = t.max(1);
    }
    if let Some(z) = a.open_zones {
        spec.open_zones = z.max(1);
    }
    spec.seed = a.seed;
    spec.paced = !a.cpu_bound;
    if let Some(b) = a.media_bandwidth {
        if b.is_nan() || b < 1e6 {
            return Err(crate::usage("--media-bandwidth must be >= 1e6 bytes/s"));
        }
        spec.media_bytes_per_sec = b;
    }
    eprintln!(
        "nowa table1: {} records, {}x device writes per row, seed {}",
        spec.records, spec.device_writes, spec.seed
    );
    let t0 = std::time::Instant::now();
    let t = table1::run(&spec, &mut |r| {
        if r.implemented {
            eprintln!(
                "  {:<20} {:>9.0} ops/s  DB WAF {:.2}  SSD WAF {:.2}  ({:.1} s)",
                r.name, r.ops_per_sec, r.db_waf, r.ssd_waf, r.run_secs
            )
        } else {
            eprintln!("  {:<20} not implemented", r.name)
        }
    })
    .context("running the Table 1 rows")?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&t)?);
    } else {
        print!("{}", table1::format(&t));
        println!("(total {:.0} s)", t0.elapsed().as_secs_f64());
    }
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        table1::write_csv(&t, &dir.join("table1.csv")).context("writing table1.csv")?;
        std::fs::write(dir.join("table1.json"), serde_json::to_string_pretty(&t)?)
            .context("writing table1.json")?;
        std::fs::write(dir.join("table1.txt"), table1::format(&t)).context("writing table1.txt")?;
        table1::plot(&t, &dir.join("table1.svg")).context("plotting table1.svg")?;
        eprintln!("wrote {}/table1.{{csv,json,txt,svg}}", dir.display());
    }
    Ok(())
}
