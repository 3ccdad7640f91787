//! `nowa`: SSD simulation, SSD benchmarking and write-amplification-aware storage.

mod frozen_cmd;
mod gcunit_cmd;
mod sim_cmd;
mod ssdiq_cmd;
mod table1_cmd;
mod ycsb_cmd;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "nowa",
    version,
    about = "Measure and minimize write amplification, from the database to the flash"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate an SSD (FTL model) under a workload and report write amplification.
    Sim(sim_cmd::SimArgs),
    /// Run the SSD-iq benchmark suite on a device, a file or a simulated SSD.
    Ssdiq(ssdiq_cmd::SsdiqArgs),
    /// Run YCSB on the storage engine (on a simulated SSD by default) with the write drill-down.
    Ycsb(ycsb_cmd::YcsbArgs),
    /// Infer an SSD's GC unit with the ZNS-like zone-size sweep (how-to-write-to-ssds 5.3).
    InferGcUnit(gcunit_cmd::GcUnitArgs),
    /// Reproduce Table 1 of how-to-write-to-ssds.md (in-place vs out-of-place + optimizations).
    Table1(table1_cmd::Table1Args),
    /// SepFrozen's frozen-page model: train on a write log, synthetic logs, inference timing.
    Frozen(frozen_cmd::FrozenArgs),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            // Bad flags: one line (clap's first), exit 2. The usage text is a --help away.
            let text = e.render().to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("error: invalid arguments");
            eprintln!("nowa: {first} (see --help)");
            std::process::exit(2);
        }
        Err(e) => {
            // --help and --version.
            let _ = e.print();
            std::process::exit(0);
        }
    };
    let res = match cli.cmd {
        Cmd::Sim(a) => sim_cmd::run(a),
        Cmd::Ssdiq(a) => ssdiq_cmd::run(a),
        Cmd::Ycsb(a) => ycsb_cmd::run(a),
        Cmd::InferGcUnit(a) => gcunit_cmd::run(a),
        Cmd::Table1(a) => table1_cmd::run(a),
        Cmd::Frozen(a) => frozen_cmd::run(a),
    };
    if let Err(e) = res {
        eprintln!("nowa: error: {e:#}");
        // Bad input is exit 2; failures while running are exit 1.
        let code = if e.downcast_ref::<UsageError>().is_some() {
            2
        } else {
            1
        };
        std::process::exit(code);
    }
}

/// An error caused by the user's input (flags, config): exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);
impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

/// Shorthand: a usage error as anyhow::Error.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}
