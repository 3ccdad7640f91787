//! The flags of `nowa tpcc` (and of `nowa.tpcc(...)` in Python: keyword arguments become
//! these flags) and their resolution into a [`Spec`]: the pool, the device and WAL sizes
//! ([`size`]), the zone size on the opened device, the stop, SepFrozen's model.

use super::{size, Spec, Stop};
use crate::devices::{self, Opened};
use crate::engine::EngineSpec;
use crate::engine_flags::{oop_config, EngineFlags, Env, OopFlags, PacingFlags, WriteBackFlags};
use crate::flags::{self, MAX_THREADS};
use crate::ycsb::Path;
use crate::Error;
use clap::Args;
use nowa_device::SimMode;
use nowa_engine::Config;
use std::path::PathBuf;

/// The largest device, pool or WAL a flag accepts (the memory check refuses far less).
const MAX_BYTES: u64 = 1 << 50;

/// Every flag of one TPC-C run.
#[derive(Args, Debug, Clone)]
pub struct TpccFlags {
    /// Warehouses to load.
    #[arg(long, default_value = "1", value_parser = flags::count::<u32>(1, 10_000))]
    pub warehouses: u32,
    /// Worker threads (and loader threads).
    #[arg(long, default_value = "2", value_parser = flags::count::<usize>(1, MAX_THREADS))]
    pub threads: usize,
    /// Stop after this long (30, 30s, 2m). Default: 10 s.
    #[arg(long, conflicts_with = "transactions", value_parser = flags::seconds(1e-3, 366.0 * 86400.0))]
    pub duration: Option<f64>,
    /// Stop after this many transactions (draws of the mix).
    #[arg(long, conflicts_with = "device_writes", value_parser = flags::count::<u64>(1, 1 << 62))]
    pub transactions: Option<u64>,
    /// Stop once the device received this many times its capacity in writes (WAL included).
    #[arg(long, value_name = "K", conflicts_with = "duration", value_parser = flags::number(0.0, true, 1e6))]
    pub device_writes: Option<f64>,
    /// Steady TPC-C (ZLeanStore's batch deletes, window 2100): the database does not grow.
    #[arg(long)]
    pub steady: bool,
    /// Seed of the load and of the transaction inputs.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Device: sim (simulated SSD in memory), mem (plain memory), or a file / block device path.
    #[arg(long, default_value = "sim")]
    pub device: String,
    /// Allow overwriting a --device path that holds something else, or writing into a
    /// non-empty --out directory; must repeat the path (give it twice to allow both).
    #[arg(long, value_name = "PATH")]
    pub force: Vec<PathBuf>,
    /// Device capacity. Default: sized so the data fills --dataset-fill of it. A given
    /// capacity shrinks the default WAL limit (the pool size) as far as the data needs.
    #[arg(long, value_parser = flags::size_4k(1 << 20, MAX_BYTES))]
    pub capacity: Option<u64>,
    /// The data's share of the device's page space (the device minus the WAL region and the
    /// engine's areas): with --steady throughout the run; standard TPC-C grows the database
    /// (~420 B of pages per transaction), so with --transactions N the share is reached at
    /// the end of the run (the loaded ~88 MiB per warehouse + 10 MiB, + N x 500 B), with --duration
    /// or --device-writes right after the load (the device fills up during a long run).
    #[arg(long, default_value = "0.5", value_parser = flags::fraction(0.0, true, 1.0, false))]
    pub dataset_fill: f64,
    /// Simulated SSD over-provisioning (spare/logical).
    #[arg(long, default_value = "7%", value_parser = flags::fraction(0.0, false, 1.0, false))]
    pub op: f64,
    /// Simulated SSD mode: cns, fdp:HANDLES, zns.
    #[arg(long, default_value = "cns", value_parser = crate::ycsb::parse_sim_mode)]
    pub sim_mode: SimMode,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub engine: EngineFlags,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub oop: OopFlags,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub write_back: WriteBackFlags,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub pacing: PacingFlags,
    /// Keep the WAL on a separate in-memory device (as `nowa ycsb --separate-wal`): the
    /// device under test then holds only pages, and its SSD WAF excludes the WAL.
    #[arg(long)]
    pub separate_wal: bool,
    /// Record every request the engine makes to the device (not the separate WAL) in the
    /// nowa trace CSV; replay it with `nowa sim --trace FILE`. An existing FILE is refused.
    #[arg(long, value_name = "FILE")]
    pub record_trace: Option<PathBuf>,
    /// Check the consistency conditions (clause 3.3.2) at the end.
    #[arg(long)]
    pub check: bool,
    /// Open an existing database on --device (recovering it), check it, and exit. A database
    /// from a steady run (its HISTORY trimmed) skips clauses 3.3.2.8-9.
    #[arg(long, conflicts_with_all = ["duration", "transactions", "device_writes", "steady", "separate_wal", "record_trace"])]
    pub check_only: bool,
    /// Sample interval (1, 1s, 500ms).
    #[arg(long, default_value = "1", value_parser = flags::seconds(0.01, 86400.0))]
    pub interval: f64,
    /// Out of place: record every DB page write, GC move and page free with its hotness
    /// records in FILE (SepFrozen's write log: `nowa frozen train|replay --writes FILE`).
    /// An existing FILE is refused.
    #[arg(long, value_name = "FILE")]
    pub record_writes: Option<PathBuf>,
}

impl TpccFlags {
    /// The `--force` meant for the device: the one not naming `out` (each `--force` names the
    /// one path it allows to be overwritten; the device opening checks that it names the
    /// device).
    ///
    /// # Errors
    /// More than one `--force` left for the device.
    pub fn device_force(&self, out: Option<&std::path::Path>) -> Result<Option<PathBuf>, Error> {
        let names_out = |p: &PathBuf| out.is_some_and(|o| nowa_device::same_target(o, p));
        let mut left = self.force.iter().filter(|p| !names_out(p));
        let device = left.next().cloned();
        if let Some(extra) = left.next() {
            return Err(Error::Usage(format!(
                "--force {}: names neither --out nor the one --device (each --force names one path to overwrite)",
                extra.display()
            )));
        }
        Ok(device)
    }
}

#[derive(clap::Parser)]
#[command(name = "tpcc", no_binary_name = true)]
struct Tpcc {
    #[command(flatten)]
    flags: TpccFlags,
}

/// The flags of `nowa tpcc` as a clap command (their help: the Python module's docstrings).
#[must_use]
pub fn command() -> clap::Command {
    <Tpcc as clap::CommandFactory>::command()
}

/// The flags of `nowa tpcc` from `args` (without the command name), parsed as the CLI does.
///
/// # Errors
/// A bad flag or value: one line naming it.
pub fn parse_flags<S: AsRef<str>>(args: &[S]) -> Result<TpccFlags, Error> {
    crate::parse_args::<Tpcc, S>(args).map(|s| s.flags)
}

/// The engine configuration and why the pool has its size (the rule of [`EngineFlags`], on
/// the estimated loaded data: on `sim` and `mem` the pool is 10% of it).
fn engine_config(a: &TpccFlags, env: &dyn Env) -> (Config, String) {
    let data = size::loaded_bytes(a.warehouses);
    let (mut c, why) = a.engine.config(&a.device, data, env);
    a.write_back.apply(&mut c);
    assert!(c.pool_bytes >= 1 << 20, "the pool rule's floor");
    (c, why)
}

/// Refuses a run whose device, pool and separate WAL would not fit the memory.
fn check_run_memory(
    a: &TpccFlags,
    cfg: &Config,
    capacity: u64,
    env: &dyn Env,
) -> Result<(), Error> {
    let mem = match a.device.as_str() {
        "sim" => env.sim_device_bytes(capacity),
        "mem" => capacity,
        _ => 0,
    };
    let flag = if a.capacity.is_some() {
        "--capacity"
    } else {
        "--warehouses"
    };
    let wal = if a.separate_wal {
        nowa_engine::wal_region_bytes(cfg)
    } else {
        0
    };
    env.check_memory(&[
        (flag, "device", mem),
        (
            "--pool",
            "buffer pool",
            cfg.pool_bytes + cfg.pool_bytes / 16,
        ),
        ("--wal-limit", "separate WAL device", wal),
    ])
}

/// The device and WAL sizes of the flags (docs/tpcc.md section 10: what `--dataset-fill`
/// means for a growing database).
fn sizing(a: &TpccFlags, cfg: &Config) -> Result<size::Sizing, Error> {
    let want = size::Want {
        warehouses: a.warehouses,
        growing_txns: a.transactions.filter(|_| !a.steady && !a.check_only),
        capacity: a.capacity,
        fill: a.dataset_fill,
        wal_limit: a.engine.wal_limit,
        separate_wal: a.separate_wal,
    };
    size::size(&want, cfg)
}

/// The device the flags ask for, of `capacity` bytes.
fn device(a: &TpccFlags, cfg: &Config, capacity: u64, env: &dyn Env) -> Result<Opened, Error> {
    assert!(capacity % 4096 == 0, "the sizing gives whole 4 KiB blocks");
    check_run_memory(a, cfg, capacity, env)?;
    if let Some(d) = devices::in_memory(&a.device, capacity, a.op, a.sim_mode)? {
        return Ok(d);
    }
    let path = a.device.as_str();
    let step = if a.check_only {
        format!("open the nowa database in {path}, recover and check it (nothing is formatted)")
    } else {
        format!(
            "format {path} as a new nowa database (its previous contents are lost) and load {} warehouses",
            a.warehouses
        )
    };
    let dev = env.open_path(path, capacity, step)?;
    devices::check_opened_size(path, dev.as_ref())?;
    Ok((dev, None))
}

impl Resolved {
    /// The run's setup in one line (`nowa tpcc` prints it always), and why the pool has its
    /// size.
    #[must_use]
    pub fn banner(&self, a: &TpccFlags) -> [String; 2] {
        let pool_mib = self.spec.engine.pool >> 20;
        let setup = format!(
            "seed {}, {} warehouses, {} threads, {}, pool {pool_mib} MiB, device {} ({} MiB), WAL {}, {:?} commits",
            a.seed,
            a.warehouses,
            a.threads,
            if a.steady { "steady" } else { "standard" },
            a.device,
            self.spec.capacity >> 20,
            if a.separate_wal {
                "on a separate in-memory device"
            } else {
                "on the device"
            },
            a.engine.durability
        );
        [setup, format!("pool {pool_mib} MiB: {}", self.pool_why)]
    }

    /// The page space and the data's share of it; with `notes`, the growth of standard TPC-C
    /// when it runs to no transaction count.
    #[must_use]
    pub fn sizing_lines(&self, a: &TpccFlags, notes: bool) -> Vec<String> {
        let mut lines = self.sizing.describe();
        if notes && !a.steady && a.transactions.is_none() {
            lines.push(format!("standard TPC-C grows the database (up to {} B of pages per transaction) until the device is full; --steady keeps it flat", size::GROWTH_PER_TXN));
        }
        lines
    }
}

/// A run as its flags resolve: the spec, its sizes, the opened device.
pub struct Resolved {
    /// The run, every default and auto-sized value resolved.
    pub spec: Spec,
    /// The device and WAL sizes.
    pub sizing: size::Sizing,
    /// Why the pool has its size.
    pub pool_why: String,
    /// The device the spec's zone size was resolved on (the run uses it).
    pub device: Opened,
}

/// The run phase's stop the flags ask for.
fn stop(a: &TpccFlags) -> Stop {
    match (a.transactions, a.duration, a.device_writes) {
        (Some(n), _, _) => Stop::Transactions(n),
        (_, Some(s), _) => Stop::Seconds(s),
        (_, _, Some(k)) => Stop::DeviceWrites(k),
        _ => Stop::Seconds(10.0),
    }
}

/// Resolves every default and auto-sized value of the flags into a spec, opening the device
/// the zone size is resolved on (through `env` for a file or block device).
///
/// # Errors
/// [`Error::Usage`] naming the flag at fault; the device's or the GC-unit inference's errors.
///
/// # Panics
/// If the spec names another seed than the flags (a bug).
pub fn resolve(a: &TpccFlags, env: &dyn Env) -> Result<Resolved, Error> {
    if a.check_only && matches!(a.device.as_str(), "sim" | "mem") {
        return Err(Error::Usage(
            "--check-only needs a --device path holding a database".into(),
        ));
    }
    let (mut cfg, pool_why) = engine_config(a, env);
    let sz = sizing(a, &cfg)?;
    if a.engine.wal_limit.is_none() && !a.check_only {
        cfg.wal_limit_bytes = Some(sz.wal_limit);
    }
    let oop = oop_config(&a.oop, a.op, a.seed, a.engine.no_doublewrite)?;
    if a.record_writes.is_some() && oop.is_none() {
        return Err(Error::Usage(
            "--record-writes: only the out-of-place write path records a write log (add --write-path oop)".into(),
        ));
    }
    for (flag, file) in [
        ("--record-trace", &a.record_trace),
        ("--record-writes", &a.record_writes),
    ] {
        if let Some(f) = file.as_ref().filter(|f| f.exists()) {
            return Err(Error::Usage(format!(
                "{flag} {}: exists (remove it or name another file)",
                f.display()
            )));
        }
    }
    let (dev, sim) = device(a, &cfg, sz.capacity, env)?;
    let pacing = a.pacing.pacing(&a.device)?;
    let write_path = match oop {
        None => Path::InPlace,
        Some(o) => {
            let mut p = a.oop.spec(&o, a.oop.zone_of(dev.as_ref(), sim.as_deref())?);
            p.record_writes.clone_from(&a.record_writes);
            Path::Oop(p)
        }
    };
    let spec = Spec {
        device: a.device.clone(),
        capacity: dev.geometry().capacity,
        op: a.op,
        sim_mode: crate::ycsb::sim_mode_text(a.sim_mode),
        warehouses: a.warehouses,
        threads: a.threads,
        stop: stop(a),
        steady: a.steady,
        seed: a.seed,
        interval: a.interval,
        check: a.check,
        engine: EngineSpec::from_config(&cfg, a.separate_wal, pacing, write_path),
    };
    assert_eq!(spec.seed, a.seed, "the spec names the run's seed");
    assert!(spec.capacity % 4096 == 0, "a device of whole 4 KiB blocks");
    assert!(
        a.check_only || spec.engine.wal_limit.is_some(),
        "a run's WAL limit is resolved"
    );
    Ok(Resolved {
        spec,
        sizing: sz,
        pool_why,
        device: (dev, sim),
    })
}

/// `nowa tpcc --check-only ARGS` as a library (`nowa ckpt figures`' recovery runs): the
/// database on the `--device` path opened (recovered) and checked, a typed outcome.
///
/// # Errors
/// Flags that are not a `--check-only` run ([`Error::Usage`]); the check's errors.
pub fn check_database<S: AsRef<str>>(
    args: &[S],
    env: &dyn Env,
) -> Result<super::CheckOutcome, Error> {
    let a = parse_flags(args)?;
    if !a.check_only {
        return Err(Error::Usage("check_database needs --check-only".into()));
    }
    let r = resolve(&a, env)?;
    super::check_database(&r.spec, r.device.0)
}
