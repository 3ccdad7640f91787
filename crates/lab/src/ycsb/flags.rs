//! The flags of `nowa ycsb` (and of `nowa.ycsb(...)` in Python: keyword arguments become
//! these flags) and their resolution into a [`Spec`]: the pool, the device's size (enlarged
//! when the zones need room), the zone size on the opened device, the stop, SepFrozen's model.

use super::{capacity_for, overhead_bytes, Oop, Path, Spec};
use crate::devices::{self, Opened, ZoneSize};
use crate::engine::EngineSpec;
use crate::engine_flags::{oop_config, EngineFlags, Env, OopFlags, PacingFlags, WriteBackFlags};
use crate::flags::{self, MAX_THREADS};
use crate::Error;
use clap::Args;
use nowa_bench::ycsb::{KeyOrder, Mix, Stop, ValueKind};
use nowa_device::SimMode;
use nowa_engine::{Config, OopConfig};
use std::path::PathBuf;

/// The largest value: the engine's largest record ([`nowa_engine::page::MAX_KV`]) minus the
/// 8-byte key.
const MAX_VALUE: u64 = (nowa_engine::page::MAX_KV - 8) as u64;
/// The largest device, pool or WAL a flag accepts (the memory check refuses far less).
const MAX_BYTES: u64 = 1 << 50;

/// Every flag of one YCSB run.
#[derive(Args, Debug, Clone)]
pub struct YcsbFlags {
    /// Records to load (u64 keys; 200000 or 200k).
    #[arg(long, default_value = "200k", value_parser = flags::count::<u64>(1, 1_000_000_000_000))]
    pub records: u64,
    /// Value size in bytes (at most the engine's record size minus the 8-byte key).
    #[arg(long, default_value = "120", value_parser = flags::count::<usize>(1, MAX_VALUE))]
    pub value_size: usize,
    /// Values: pattern (LZ4 leaves ~0.2 of a page), paper (~0.41, the paper's YCSB ratio) or
    /// random (incompressible).
    #[arg(long, default_value = "pattern", value_enum)]
    pub values: ValueKind,
    /// YCSB mix: A (50/50 read/update), B (95/5), C (read only), F (read-modify-write), W
    /// (100% updates, Zipf keys as A: SepFrozen's "100% writes" YCSB).
    #[arg(long, default_value = "A", value_enum, ignore_case = true)]
    pub workload: Mix,
    /// Zipf theta of key popularity (0 = uniform).
    #[arg(long, default_value = "0.8", value_parser = flags::number(0.0, false, 100.0))]
    pub theta: f64,
    /// Where the Zipf popularity ranks sit among the keys: scrambled (YCSB's scrambled
    /// Zipfian: a leaf's keys have unrelated popularities) or ranked (rank k = key k - 1:
    /// leaves range from hot to cold).
    #[arg(long, default_value = "scrambled", value_enum)]
    pub key_order: KeyOrder,
    /// Worker threads.
    #[arg(long, default_value = "2", value_parser = flags::count::<usize>(1, MAX_THREADS))]
    pub threads: usize,
    /// Stop after this many operations (300000 or 300k).
    #[arg(long, conflicts_with_all = ["seconds", "device_writes"],
          value_parser = flags::count::<u64>(1, 1 << 62))]
    pub ops: Option<u64>,
    /// Stop after this long (30, 30s, 2m, 1h). Default: 10 s in place; out of place, see
    /// --steady-writes.
    #[arg(long, conflicts_with = "device_writes", value_parser = flags::seconds(1e-3, 366.0 * 86400.0))]
    pub seconds: Option<f64>,
    /// Stop once the device received this many times its capacity in writes.
    #[arg(long, value_parser = flags::number(0.0, true, 1e6))]
    pub device_writes: Option<f64>,
    /// Device: sim (simulated SSD in memory), mem (plain memory), or a file / block device path.
    #[arg(long, default_value = "sim")]
    pub device: String,
    /// Allow overwriting a --device path that is in use, holds data or is not a nowa database;
    /// must repeat the path exactly.
    #[arg(long, value_name = "PATH")]
    pub force: Option<PathBuf>,
    /// Device capacity. Default: sized so the dataset fills --dataset-fill of it.
    #[arg(long, value_parser = flags::size_4k(1 << 20, MAX_BYTES))]
    pub capacity: Option<u64>,
    /// Dataset size as a fraction of the device (the paper uses 0.9 = 90%).
    #[arg(long, default_value = "0.9", value_parser = flags::fraction(0.0, true, 1.0, false))]
    pub dataset_fill: f64,
    /// Simulated SSD: over-provisioning (spare/logical, 0.07 or 7%); also the SSD OP estimate
    /// of --defer-compensation.
    #[arg(long, default_value = "7%", value_parser = flags::fraction(0.0, false, 1.0, false))]
    pub op: f64,
    /// Simulated SSD mode: cns, fdp:HANDLES, zns.
    #[arg(long, default_value = "cns", value_parser = super::parse_sim_mode)]
    pub sim_mode: SimMode,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub pacing: PacingFlags,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub engine: EngineFlags,
    /// With --durability async: a durability point (a sync commit, whose group commit
    /// flushes the WAL) every N updates, counted over all threads (1000 or 1k). Default: the
    /// engine's own async flushes only (every 1 MiB of WAL).
    #[arg(long, value_name = "N", value_parser = flags::count::<std::num::NonZeroU64>(1, 1 << 62))]
    pub durable_every: Option<std::num::NonZeroU64>,
    /// Seed of keys and values.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Reporting interval (1, 1s, 500ms).
    #[arg(long, default_value = "1", value_parser = flags::seconds(0.01, 86400.0))]
    pub interval: f64,
    /// Append "key-id version" after every acknowledged update (for crash verification); with
    /// --durable-every, once a durability point has made it durable. Needs --threads 1: the
    /// versions count one worker's updates, so only one worker's are ordered per key.
    #[arg(long, value_name = "FILE")]
    pub ack_log: Option<PathBuf>,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub oop: OopFlags,
    /// Out of place, when no --ops, --seconds or --device-writes is given: run until the store
    /// has written this many times its space (the space limit, else the device), so DB GC
    /// reaches steady state.
    #[arg(long, default_value = "3", value_parser = flags::number(0.0, true, 1e6))]
    pub steady_writes: f64,
    #[command(flatten)]
    #[expect(missing_docs, reason = "a doc comment would become clap help text")]
    pub write_back: WriteBackFlags,
    /// Keep the WAL on a separate in-memory device (the paper's setup): the device under
    /// test then holds only pages, and its SSD WAF excludes the WAL.
    #[arg(long)]
    pub separate_wal: bool,
    /// Record every request the engine makes to the device (not the separate WAL) in the
    /// nowa trace CSV; replay it with `nowa sim --trace FILE`. An existing FILE is refused.
    #[arg(long, value_name = "FILE")]
    pub record_trace: Option<PathBuf>,
    /// Out of place: record every DB page write, GC move and page free with its hotness
    /// records in FILE (SepFrozen's write log: `nowa frozen train|replay --writes FILE`).
    /// An existing FILE is refused.
    #[arg(long, value_name = "FILE")]
    pub record_writes: Option<PathBuf>,
}

#[derive(clap::Parser)]
#[command(name = "ycsb", no_binary_name = true)]
struct Ycsb {
    #[command(flatten)]
    flags: YcsbFlags,
}

/// The flags of `nowa ycsb` as a clap command (their help: the Python module's docstrings).
#[must_use]
pub fn command() -> clap::Command {
    <Ycsb as clap::CommandFactory>::command()
}

/// The flags of `nowa ycsb` from `args` (without the command name), parsed as the CLI does.
///
/// # Errors
/// A bad flag or value: one line naming it.
pub fn parse_flags<S: AsRef<str>>(args: &[S]) -> Result<YcsbFlags, Error> {
    crate::parse_args::<Ycsb, S>(args).map(|s| s.flags)
}

/// A run as its flags resolve: the spec, the opened device, and what the CLI says about them.
pub struct Resolved {
    /// The run, every default and auto-sized value resolved.
    pub spec: Spec,
    /// The device the spec's zone size was resolved on (the run uses it).
    pub device: Opened,
    /// The estimated dataset, bytes.
    pub dataset: u64,
    /// Why the pool has its size.
    pub pool_why: String,
    /// Warnings of the resolution (a device enlarged for the zones, NoWA's WAL stream).
    pub notes: Vec<String>,
}

/// The sizes a run is planned with.
struct Plan {
    dataset: u64,
    pool_why: String,
    engine: Config,
    /// Engine space on the device beyond the pages: superblocks, doublewrite area, WAL.
    overhead: u64,
    capacity: u64,
}

fn plan(a: &YcsbFlags, env: &dyn Env) -> Plan {
    let dataset = nowa_bench::ycsb::estimate_dataset_bytes(a.records, a.value_size);
    let (mut engine, pool_why) = a.engine.config(&a.device, dataset, env);
    // The WAL limit resolved (the engine's default: pool + blind-update memory): the spec
    // names it, and a separate WAL device is sized by it.
    engine.wal_limit_bytes = Some(engine.wal_limit());
    a.write_back.apply(&mut engine);
    // The engine also needs its superblocks and doublewrite area on the device, and its WAL
    // region unless the WAL is on a separate device (then the data fills the device as in
    // `nowa table1`).
    let overhead = overhead_bytes(&engine, a.separate_wal);
    let capacity = a
        .capacity
        .unwrap_or_else(|| capacity_for(dataset, overhead, a.dataset_fill));
    let plan = Plan {
        dataset,
        pool_why,
        engine,
        overhead,
        capacity: capacity / 4096 * 4096,
    };
    assert!(plan.engine.pool_bytes >= 1 << 20 && plan.capacity % 4096 == 0);
    plan
}

/// What the run holds in memory with a device of `capacity` bytes; `device_flag` is the flag
/// that sized the device.
fn check_run_memory(
    a: &YcsbFlags,
    p: &Plan,
    capacity: u64,
    device_flag: &str,
    env: &dyn Env,
) -> Result<(), Error> {
    let device = match a.device.as_str() {
        "sim" => env.sim_device_bytes(capacity),
        "mem" => capacity,
        _ => 0,
    };
    let infer = if a.oop.zone_size == ZoneSize::Infer {
        device
    } else {
        0
    };
    let pool = p.engine.pool_bytes;
    assert!(pool >= 1 << 20, "the pool rule's floor");
    let wal = p.engine.wal_limit();
    let wal_dev = if a.separate_wal {
        wal.saturating_add(wal / 4)
    } else {
        0
    };
    // A device sized from the dataset grows with the WAL region when the WAL shares it.
    let device_flag = if device_flag == "--records" && p.overhead > p.dataset {
        if a.engine.wal_limit.is_some() {
            "--wal-limit"
        } else {
            "--pool"
        }
    } else {
        device_flag
    };
    env.check_memory(&[
        (device_flag, "device", device),
        ("--zone-size", "GC-unit inference device", infer),
        ("--pool", "buffer pool", pool.saturating_add(pool / 16)),
        ("--wal-limit", "separate WAL device", wal_dev),
    ])
}

/// The device the flags ask for, with `capacity` bytes.
fn make_device(a: &YcsbFlags, capacity: u64, env: &dyn Env) -> Result<Opened, Error> {
    if let Some(d) = devices::in_memory(&a.device, capacity, a.op, a.sim_mode)? {
        return Ok(d);
    }
    let path = a.device.as_str();
    let step = format!(
        "format {path} as a new nowa database (its previous contents are lost) and load {} records",
        a.records
    );
    let dev = env.open_path(path, capacity, step)?;
    devices::check_opened_size(path, dev.as_ref())?;
    Ok((dev, None))
}

/// The device and the zone size, enlarging an in-memory device when `--dataset-fill` leaves
/// no room for the out-of-place zones.
fn open(
    a: &YcsbFlags,
    p: &Plan,
    oop: Option<&OopConfig>,
    env: &dyn Env,
    notes: &mut Vec<String>,
) -> Result<(Opened, Option<u64>), Error> {
    let mut capacity = p.capacity;
    let mut sized_by = if a.capacity.is_some() {
        "--capacity"
    } else {
        "--records"
    };
    loop {
        check_run_memory(a, p, capacity, sized_by, env)?;
        let (dev, sim) = make_device(a, capacity, env)?;
        let zone = match oop {
            Some(_) => Some(a.oop.zone_of(dev.as_ref(), sim.as_deref())?),
            None => None,
        };
        assert!(zone.is_none_or(|z| z % 4096 == 0), "zones of whole pages");
        // Out of place keeps open zones and a GC reserve beyond the pages (uncompressed): on a
        // small in-memory device with large zones `--dataset-fill` may not leave room for
        // them. Files and block devices keep their size.
        let in_memory = sim.is_some() || a.device == "mem";
        if let (Some(z), Some(o), true, None) = (zone, oop, in_memory, a.capacity) {
            let need = o
                .zone_area_for(p.dataset / 4096, z)
                .saturating_add(p.overhead);
            if need > capacity {
                check_run_memory(a, p, need, "--zone-size", env)?;
                #[expect(clippy::cast_precision_loss, reason = "sizes as a share")]
                let fill = p.dataset as f64 / need as f64;
                notes.push(format!(
                    "device enlarged to ~{} MiB (dataset fill {:.0}% instead of {:.0}%): out of place keeps {} zones of {} KiB free or open",
                    need >> 20,
                    100.0 * fill,
                    100.0 * a.dataset_fill,
                    o.spare_zones(),
                    z >> 10
                ));
                assert!(
                    need.div_ceil(4096) * 4096 > capacity,
                    "the device only grows"
                );
                capacity = need.div_ceil(4096) * 4096;
                sized_by = "--zone-size";
                continue;
            }
        }
        return Ok(((dev, sim), zone));
    }
}

/// The run phase's stop the flags ask for.
fn stop(a: &YcsbFlags, oop: bool) -> Stop {
    match (a.ops, a.seconds, a.device_writes) {
        (Some(n), _, _) => Stop::Ops(n),
        (_, Some(s), _) => Stop::Seconds(s),
        (_, _, Some(k)) => Stop::DeviceWrites(k),
        // Out of place: until DB GC has run through the space K times (steady state).
        _ if oop => Stop::StoreWrites(a.steady_writes),
        _ => Stop::Seconds(10.0),
    }
}

/// Flags that make no run together (before any device is opened).
fn refuse(a: &YcsbFlags, oop: bool) -> Result<(), Error> {
    if a.durable_every.is_some() && a.engine.durability == nowa_engine::Durability::Sync {
        return Err(Error::Usage(
            "--durable-every needs --durability async (sync makes every update durable)".into(),
        ));
    }
    if a.ack_log.is_some() && a.threads > 1 {
        return Err(Error::Usage(format!(
            "--ack-log needs --threads 1 (got {}): versions are counted per worker, so two workers' acknowledged versions of a key are not ordered",
            a.threads
        )));
    }
    if a.record_writes.is_some() && !oop {
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
    Ok(())
}

/// Resolves every default and auto-sized value of the flags into a spec, opening the device
/// the zone size is resolved on (through `env` for a file or block device).
///
/// # Errors
/// [`Error::Usage`] naming the flag at fault; the device's or the GC-unit inference's errors.
///
/// # Panics
/// If the spec names another seed or device size than the run's (a bug).
pub fn resolve(a: &YcsbFlags, env: &dyn Env) -> Result<Resolved, Error> {
    let oop = oop_config(&a.oop, a.op, a.seed, a.engine.no_doublewrite)?;
    refuse(a, oop.is_some())?;
    let p = plan(a, env);
    let mut notes = Vec::new();
    let (device, zone) = open(a, &p, oop.as_ref(), env, &mut notes)?;
    let zoned_or_fdp = a.device == "sim" && !matches!(a.sim_mode, SimMode::Conventional);
    if oop.is_some() && a.oop.nowa && !a.separate_wal && !zoned_or_fdp {
        // Measured (docs/design.md 14.4b): WAL blocks interleave with the zone appends in the
        // SSD's write stream, so groups straddle GC units and the SSD copies at high fill.
        notes.push("--nowa without --separate-wal: the WAL shares the SSD's write stream with the zones, so SSD WAF 1 is not guaranteed (docs/design.md 14.4b)".into());
    }
    let write_path = match (&oop, zone) {
        (Some(o), Some(z)) => {
            let mut spec: Oop = a.oop.spec(o, z);
            spec.record_writes.clone_from(&a.record_writes);
            Path::Oop(spec)
        }
        _ => Path::InPlace,
    };
    let capacity = device.0.geometry().capacity;
    let spec = Spec {
        device: a.device.clone(),
        capacity,
        op: a.op,
        sim_mode: super::sim_mode_text(a.sim_mode),
        records: a.records,
        value_size: a.value_size,
        values: a.values,
        workload: a.workload,
        theta: a.theta,
        key_order: a.key_order,
        threads: a.threads,
        stop: stop(a, oop.is_some()),
        durable_every: a.durable_every,
        seed: a.seed,
        interval: a.interval,
        engine: EngineSpec::from_config(
            &p.engine,
            a.separate_wal,
            a.pacing.pacing(&a.device)?,
            write_path,
        ),
    };
    assert_eq!(spec.seed, a.seed, "the spec names the run's seed");
    assert!(spec.capacity % 4096 == 0, "a device of whole 4 KiB blocks");
    Ok(Resolved {
        spec,
        device,
        dataset: p.dataset,
        pool_why: p.pool_why,
        notes,
    })
}
