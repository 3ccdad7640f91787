//! `nowa vssd serve|stats|stop|attach`: a virtual SSD on FUSE (crates/vssd). This module turns
//! flags into a [`DiskSpec`], checks them, and prints; the I/O path lives in the library.

use crate::flags;
use crate::resources::check_new_output;
use crate::usage;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use nowa_device::{SimConfig, SimMode};
use nowa_flash::{FlashError, GcFrontier};
use nowa_lab::flags::VssdTiming;
use nowa_lab::sim::flags::DeviceFlags;
use nowa_lab::sim::Spec;
use nowa_vssd::{control, Backing, DiskSpec, ServeSpec, Served, VssdError};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct VssdArgs {
    #[command(subcommand)]
    sub: VssdSub,
}

#[derive(Subcommand, Debug)]
enum VssdSub {
    /// Mount a virtual SSD at DIR (DIR/disk, or DIR/disk0..N-1) and serve it until Ctrl-C or
    /// `nowa vssd stop DIR`.
    Serve(Box<ServeArgs>),
    /// Print the live counters of the vssd at DIR.
    Stats(StatsArgs),
    /// Unmount the vssd at DIR (also one whose daemon was killed) and print its summary.
    Stop(DirArg),
    /// Attach a loop device (direct I/O, 4 KiB sectors) over DIR/disk and print it.
    Attach(AttachArgs),
}

#[derive(Args, Debug)]
struct ServeArgs {
    /// Mount point: an empty directory (created if missing; non-empty needs --force).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    #[command(flatten)]
    dev: DeviceFlags,
    /// Host interface: cns (one stream) or fdp:N (N placement handles; disk i writes with
    /// handle i mod N).
    #[arg(long, default_value = "cns", value_parser = nowa_lab::ycsb::parse_sim_mode)]
    sim_mode: SimMode,
    /// Delay replies by the timing model: none, femu, mqsim.
    #[arg(long, value_enum, default_value = "none")]
    timing: VssdTiming,
    /// Split the capacity into N files disk0..disk{N-1} sharing one flash.
    #[arg(long, default_value = "1", value_parser = flags::count::<u16>(1, 4096))]
    files: u16,
    /// Where the data is kept: mem, or a sparse FILE (outside DIR; an existing one needs
    /// --force and its data is kept: a remount).
    #[arg(long, default_value = "mem", value_name = "FILE|mem")]
    backing: String,
    /// Seed of randomized GC policies and placement schemes.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Append the counters to this CSV file every second.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Record every request the simulated SSD receives (whole pages) in this trace CSV, for
    /// `nowa sim --trace`.
    #[arg(long, value_name = "FILE")]
    record_trace: Option<PathBuf>,
    /// Mount over a non-empty DIR, reuse an existing --backing file, overwrite --csv.
    #[arg(long)]
    force: bool,
    /// Measure the CPU cost of a 4 KiB write through the mount (O_DIRECT, uniform random),
    /// print it and unmount.
    #[arg(long)]
    bench: bool,
    /// Writes the benchmark times.
    #[arg(long, default_value = "200000", value_parser = flags::count::<u64>(1, 1 << 32))]
    bench_writes: u64,
}

#[derive(Args, Debug)]
struct DirArg {
    /// The vssd's mount point.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

#[derive(Args, Debug)]
struct StatsArgs {
    /// The vssd's mount point.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Print the counters as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct AttachArgs {
    /// The vssd's mount point.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The disk file (with --files N: disk0 .. disk{N-1}).
    #[arg(long, default_value = "disk")]
    file: String,
}

/// `nowa vssd`.
pub fn run(a: VssdArgs) -> Result<()> {
    match a.sub {
        VssdSub::Serve(s) => serve(&s),
        VssdSub::Stats(s) => stats(&s),
        VssdSub::Stop(d) => stop(&d.dir),
        VssdSub::Attach(t) => attach(&t),
    }
}

/// Configuration errors are usage errors naming the flag (exit 2); the rest are failures.
fn classify(e: VssdError) -> anyhow::Error {
    use nowa_device::DeviceError;
    match e {
        VssdError::Device(DeviceError::Flash(FlashError::Config(c))) => usage(format!(
            "device geometry (--capacity, --op, --pages-per-block, --blocks-per-superblock): {c}"
        )),
        VssdError::Device(DeviceError::SimConfig { what }) => usage(format!("--sim-mode: {what}")),
        e @ VssdError::BackingTooLarge { .. } => usage(format!("--backing: {e}")),
        e @ VssdError::Split { .. } => usage(format!("--files: {e}")),
        e @ (VssdError::NotMounted { .. } | VssdError::LoopInUse { .. }) => usage(e.to_string()),
        e => anyhow::Error::new(e),
    }
}

/// DIR: an existing empty directory (or created now), not already a vssd.
fn check_dir(dir: &Path, force: bool) -> Result<()> {
    control::prepare_mount_point(dir, force).map_err(|e| match e {
        e @ (VssdError::AlreadyMounted { .. } | VssdError::NotEmpty { .. }) => {
            usage(format!("--dir {e}"))
        }
        e => usage(format!("--dir {}: cannot create it: {e}", dir.display())),
    })
}

/// `--backing`: mem, or a file outside DIR that does not exist yet (or --force).
fn backing(a: &ServeArgs) -> Result<Backing> {
    if a.backing == "mem" {
        return Ok(Backing::Mem);
    }
    let p = PathBuf::from(&a.backing);
    if control::absolute(&p).starts_with(control::absolute(&a.dir)) {
        return Err(usage(format!(
            "--backing {}: inside --dir, which the mount hides",
            p.display()
        )));
    }
    check_new_output("--backing", &p, a.force).map_err(|_| {
        usage(format!(
            "--backing {}: exists (pass --force to reuse it and keep its data) or its directory does not",
            p.display()
        ))
    })?;
    Ok(Backing::File(p))
}

/// The simulated SSD from the `nowa sim` device flags and `--sim-mode`.
fn sim_config(a: &ServeArgs) -> Result<SimConfig> {
    if a.dev.zns || matches!(a.sim_mode, SimMode::Zoned { .. }) {
        return Err(usage(
            "--sim-mode zns / --zns: a zoned SSD takes only sequential writes per zone, which a file system or a database does not make; use cns or fdp:N",
        ));
    }
    let mut ftl = Spec::device_ftl(&a.dev, a.seed).map_err(crate::lab_error)?;
    if matches!(a.sim_mode, SimMode::Fdp { .. }) && a.dev.gc_frontier.is_none() {
        // As SimConfig::for_capacity: FDP handles stay isolated through GC.
        ftl.gc_frontier = Some(GcFrontier::PerStream);
    }
    let cfg = SimConfig::new(a.sim_mode, ftl);
    cfg.resolved_ftl()
        .layout()
        .map_err(|e| usage(format!("--sim-mode / device geometry: {e}")))?;
    Ok(cfg)
}

/// The serve spec from the flags, every check done before anything is mounted.
fn serve_spec(a: &ServeArgs) -> Result<ServeSpec> {
    let sim = sim_config(a)?;
    let back = backing(a)?;
    nowa_lab::resources::check_vssd(&sim, &back).map_err(crate::lab_error)?;
    check_dir(&a.dir, a.force)?;
    if let Some(csv) = &a.csv {
        check_new_output("--csv", csv, a.force)?;
    }
    if let Some(t) = &a.record_trace {
        // The recorder refuses an existing file itself; without --force say so here, naming
        // the flag, before anything is mounted. With --force the old trace is removed.
        check_new_output("--record-trace", t, a.force)?;
        if a.force && t.exists() {
            std::fs::remove_file(t)
                .map_err(|e| usage(format!("--record-trace {}: {e}", t.display())))?;
        }
    }
    let timing = a.timing.model();
    let describe = nowa_vssd::describe(&sim, a.files, &back, &format!("{:?}", a.timing), a.seed);
    Ok(ServeSpec {
        disk: DiskSpec {
            sim,
            files: a.files,
            backing: back,
            timing,
            describe,
            record: a.record_trace.clone(),
        },
        dir: a.dir.clone(),
        csv: a.csv.clone(),
        bench_writes: a.bench.then_some(a.bench_writes),
        seed: a.seed,
    })
}

fn serve(a: &ServeArgs) -> Result<()> {
    let spec = serve_spec(a)?;
    eprintln!("nowa vssd: seed {}, {}", a.seed, spec.disk.describe);
    let served = nowa_vssd::serve(spec, |mut stop, s| {
        // Unmounting ends the session loop, and serve returns the summary.
        let handler = ctrlc::set_handler(move || {
            if let Err(e) = stop.stop() {
                eprintln!("nowa vssd: unmount on Ctrl-C failed: {e}");
            }
        });
        if let Err(e) = handler {
            eprintln!("nowa vssd: no Ctrl-C handler ({e}): stop it with nowa vssd stop {}", s.dir.display());
        }
        eprintln!(
            "nowa vssd: serving {} in {} (pid {}); stats: nowa vssd stats {1}; block device: nowa vssd attach {1}; stop: Ctrl-C or nowa vssd stop {1}",
            s.files,
            s.dir.display(),
            s.pid
        );
    })
    .map_err(classify)?;
    match served {
        Served::Bench(r) => println!(
            "bench     {:.2} us CPU per 4 KiB write through the mount (process user + system time: program, kernel FUSE, daemon; {:.2} us wall); the daemon's I/O path alone {:.2} us; {} O_DIRECT uniform random writes each; SSD WAF {:.3} through the mount (GC copies included)",
            r.cpu_us_per_write, r.wall_us_per_write, r.path_cpu_us_per_write, r.writes, r.waf
        ),
        Served::Unmounted { last, csv, session } => {
            if let Some(p) = csv {
                println!("per-second counters written to {}", p.display());
            }
            print!("{}", last.summary());
            session.with_context(|| format!("serving {}", a.dir.display()))?;
        }
    }
    Ok(())
}

fn stats(a: &StatsArgs) -> Result<()> {
    let s = control::read_stats(&a.dir)
        .map_err(|e| usage(format!("{}: no vssd answers there ({e})", a.dir.display())))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        print!("{}", s.summary());
    }
    Ok(())
}

fn stop(dir: &Path) -> Result<()> {
    match control::stop(dir).map_err(classify)? {
        control::Stopped::DaemonGone => println!(
            "nowa vssd: {}: the daemon was gone; its mount is removed (its counters died with it)",
            dir.display()
        ),
        control::Stopped::Unmounted {
            last,
            detached,
            exited,
        } => {
            for dev in detached {
                eprintln!("nowa vssd: detached {}", dev.display());
            }
            if !exited {
                eprintln!(
                    "nowa vssd: unmounted; daemon {} has not exited after 10 s",
                    last.pid
                );
            }
            print!("{}", last.summary());
        }
    }
    Ok(())
}

fn attach(a: &AttachArgs) -> Result<()> {
    let dev = control::attach_disk(&a.dir, &a.file).map_err(|e| match e {
        e @ VssdError::NotADisk { .. } => usage(format!("--file {e}")),
        e => classify(e),
    })?;
    println!("{}", dev.display());
    Ok(())
}
