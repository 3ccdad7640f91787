//! `nowa compare`: real database engines and nowa's own, each on a fresh virtual SSD
//! (crates/vssd) with the same file system, fed one identical operation stream generated once
//! from the seed; one row of device and flash bytes per operation, SSD WAF, throughput, p99
//! latency and memory per engine (docs/compare.md).
//!
//! Each engine gets its own fresh vssd (same geometry), so its load and its measured phase
//! start from an empty SSD, as a new drive would. The measured phase is the stream's
//! operations after the load; the vssd's counters are read before and after it.

pub mod bed;
pub mod client;
pub mod engines;
pub mod kv;
pub mod rust_kv;
pub mod servers;
pub mod stream;

use crate::{Error, Identity, Report};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;
pub use stream::Stream;

/// The workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// YCSB A: 50% reads, 50% updates, Zipf 0.99 keys.
    YcsbA,
    /// 100% updates, Zipf 0.99 keys (SepFrozen's YCSB-100W).
    YcsbW,
    /// TPC-C's new-order transaction on one key-value table (one transaction per op).
    TpccLite,
}

/// The file system the engines run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Fs {
    /// ext4 (mkfs defaults, inode tables zeroed at mkfs).
    Ext4,
    /// XFS (needs mkfs.xfs: xfsprogs).
    Xfs,
    /// No file system: nowa's engines on the vssd's disk file (others need a file system).
    Raw,
}

/// The engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum EngineName {
    /// nowa's engine, in-place write path (doublewrite on).
    NowaInplace,
    /// nowa's engine, out-of-place write path.
    NowaOop,
    /// sqlite3 (the command-line shell).
    Sqlite3,
    /// PostgreSQL (initdb, pg_ctl, psql).
    Postgresql,
    /// MariaDB with InnoDB (mariadb-install-db, mariadbd, mariadb).
    Mariadb,
    /// RocksDB (the rocksdict wheel from PyPI, fed by kv_driver.py).
    Rocksdb,
    /// LMDB (the lmdb wheel from PyPI, fed by kv_driver.py).
    Lmdb,
    /// sled 0.34, in this process (cargo feature `sled`).
    Sled,
    /// redb, in this process (cargo feature `redb`).
    Redb,
    /// fjall, in this process (cargo feature `fjall`).
    Fjall,
}

impl EngineName {
    /// The name as the flag spells it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            EngineName::NowaInplace => "nowa-inplace",
            EngineName::NowaOop => "nowa-oop",
            EngineName::Sqlite3 => "sqlite3",
            EngineName::Postgresql => "postgresql",
            EngineName::Mariadb => "mariadb",
            EngineName::Rocksdb => "rocksdb",
            EngineName::Lmdb => "lmdb",
            EngineName::Sled => "sled",
            EngineName::Redb => "redb",
            EngineName::Fjall => "fjall",
        }
    }

    /// Whether it needs a file system (all but nowa's engines, which also run on the raw disk).
    #[must_use]
    pub fn needs_fs(self) -> bool {
        !matches!(self, EngineName::NowaInplace | EngineName::NowaOop)
    }

    /// The argument of scripts/install-peers.sh that installs it ("" for the engines built
    /// into nowa: its own, and the Rust engines of cargo features).
    #[must_use]
    pub fn install_name(self) -> &'static str {
        match self {
            EngineName::NowaInplace
            | EngineName::NowaOop
            | EngineName::Sled
            | EngineName::Redb
            | EngineName::Fjall => "",
            EngineName::Sqlite3 => "sqlite3",
            EngineName::Postgresql => "postgresql",
            EngineName::Mariadb => "mariadb",
            EngineName::Rocksdb => "rocksdb",
            EngineName::Lmdb => "lmdb",
        }
    }
}

/// One comparison, every value resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// The engines, in the order they run.
    pub engines: Vec<EngineName>,
    /// The workload.
    pub workload: Workload,
    /// Rows loaded first (tpcc-lite: stock rows; 10 district rows are added).
    pub records: u64,
    /// Operations of the measured phase (tpcc-lite: transactions).
    pub ops: u64,
    /// Bytes per value.
    pub value_size: usize,
    /// Each engine's own cache (buffer pool, shared_buffers, cache_size).
    pub memory: u64,
    /// The file system.
    pub fs: Fs,
    /// The vssd's logical capacity.
    pub capacity: u64,
    /// The vssd's over-provisioning (spare / logical).
    pub op: f64,
    /// Seed of the stream.
    pub seed: u64,
    /// Where the vssds are mounted (a temporary directory each).
    pub work: PathBuf,
    /// The vssds' timing model: none, or replies paced by FEMU's or MQSim's chips (GC stalls
    /// reach the engines).
    #[serde(default)]
    pub timing: crate::flags::VssdTiming,
}

impl Spec {
    /// Each engine once, in the order first named (`--engines a,b,a` runs a and b).
    ///
    /// # Panics
    /// Never: the assertion states the result is no longer than the list.
    #[must_use]
    pub fn engines_once(names: &[EngineName]) -> Vec<EngineName> {
        let mut engines = Vec::with_capacity(names.len());
        for e in names {
            if !engines.contains(e) {
                engines.push(*e);
            }
        }
        assert!(engines.len() <= names.len(), "only drops repeats");
        engines
    }

    /// The vssd capacity for `records` rows of `value_size` bytes and `ops` operations: four
    /// times the rows' bytes with 64 bytes of overhead each, at least 512 MiB (PostgreSQL's
    /// initdb and WAL segments alone take about 100 MiB), in whole MiB.
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    #[must_use]
    pub fn auto_capacity(workload: Workload, records: u64, ops: u64, value_size: usize) -> u64 {
        let rows = records
            + if workload == Workload::TpccLite {
                ops
            } else {
                0
            };
        let bytes = rows
            .saturating_mul(value_size as u64 + 64)
            .saturating_mul(4);
        let cap = bytes
            .div_ceil(1 << 20)
            .saturating_mul(1 << 20)
            .max(512 << 20);
        assert!(
            cap % (1 << 20) == 0 && cap >= 512 << 20,
            "whole MiB, at least 512"
        );
        cap
    }
}

/// What one engine measured in the measured phase.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    /// Seconds the load took (not part of the figures below).
    pub load_secs: f64,
    /// Operations (tpcc-lite: transactions) run.
    pub ops: u64,
    /// Seconds of the measured phase.
    pub secs: f64,
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Median latency of an operation, microseconds.
    pub p50_us: u64,
    /// 99th-percentile latency of an operation, microseconds.
    pub p99_us: u64,
    /// 99.9th-percentile latency, microseconds.
    pub p999_us: u64,
    /// The longest operation, microseconds.
    pub max_us: u64,
    /// Operations that took 1 ms or more: the stall tail (a journal commit through the loop
    /// device, a GC or write-back wait), which decides ops/s when the median is tens of us.
    pub stalls: u64,
    /// Share of the measured phase's operation time spent in those operations.
    pub stall_time_share: f64,
    /// With `--timing`: the device time the timing model accrued during the measured phase,
    /// seconds, on the model's own clock (what the phase lasts on a host that is never the
    /// bottleneck, whatever the machine's load).
    pub model_secs: Option<f64>,
    /// With `--timing`: 99th percentile of the model time accrued during each operation, us.
    pub model_p99_us: Option<u64>,
    /// With `--timing`: operations during which the model accrued 1 ms or more (its GC stalls
    /// as the engine meets them, counted on the model's clock, not the wall clock).
    pub model_stalls: Option<u64>,
    /// With `--timing`: the vssd's write requests that added 1 ms or more of model time in
    /// the measured phase (a write that triggered GC).
    pub model_write_stalls: Option<u64>,
    /// Bytes the vssd received from the host.
    pub host_write_bytes: u64,
    /// Bytes the vssd's flash programmed (host pages and GC copies).
    pub media_write_bytes: u64,
    /// Bytes the host read.
    pub host_read_bytes: u64,
    /// Bytes the host trimmed (discards, hole punches, write-zeroes): what reached the vssd
    /// of an engine's (or file system's) frees.
    pub trim_bytes: u64,
    /// Bytes the vssd's GC copied (part of `media_write_bytes`).
    pub gc_copy_bytes: u64,
    /// Device (host) write bytes per operation.
    pub device_bytes_per_op: f64,
    /// Flash bytes per operation.
    pub flash_bytes_per_op: f64,
    /// SSD write amplification of the measured phase (None: nothing written).
    pub ssd_waf: Option<f64>,
    /// Bytes the vssd received from the host from the end of the load until the engine had
    /// stopped and the file system was unmounted: the measured phase and the writes it left
    /// behind (dirty pages an engine or the page cache had not written yet).
    pub host_write_bytes_to_close: u64,
    /// `host_write_bytes_to_close` per operation.
    pub device_bytes_per_op_to_close: f64,
    /// Flash bytes per operation until the engine stopped and the file system was unmounted.
    pub flash_bytes_per_op_to_close: f64,
    /// ext4 journal (jbd2) commits in the measured phase (None: not ext4).
    pub journal_commits: Option<u64>,
    /// From the loop device's attach (before mkfs) to the unmount after the engine stopped:
    /// the bytes written as the block layer counts them (/sys/block/loopN/stat) and as the
    /// vssd received them (`host_write_bytes`). They are equal when every request reached the
    /// vssd as it was made. None on `--fs raw`.
    pub block_layer_write_bytes: Option<(u64, u64)>,
    /// Memory of the engine's processes at the end (PSS; in-process nowa: the growth of
    /// this process's PSS since before the engine was created).
    pub memory_bytes: u64,
}

/// One engine's row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The engine.
    pub engine: EngineName,
    /// Its configuration and durability settings.
    pub setup: String,
    /// "ok", "not installed (...)" or "failed: ...".
    pub status: String,
    /// The figures, when it ran.
    pub measured: Option<Measured>,
}

/// The comparison's result.
#[derive(Debug, Clone, Serialize)]
pub struct CompareResult {
    /// Rows loaded before the measured phase.
    pub loaded: u64,
    /// Operations in the measured phase (tpcc-lite: transactions).
    pub ops: u64,
    /// Single operations in the measured phase (reads, updates, inserts).
    pub statements: u64,
    /// One row per engine, in the order of `--engines`.
    pub rows: Vec<Row>,
}

impl CompareResult {
    /// Whether some engine failed while running (not: was not installed).
    #[must_use]
    pub fn any_failed(&self) -> bool {
        self.rows.iter().any(|r| r.status.starts_with("failed"))
    }
}

impl Spec {
    /// Checks every value as the flags' parsers would (a job file or a result run again by
    /// `nowa run` is checked as `nowa compare`'s flags are): one line naming the field.
    ///
    /// # Errors
    /// [`Error::Usage`].
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |field: &str, why: String| Err(Error::Usage(format!("{field}: {why}")));
        if self.engines.is_empty() {
            return bad("engines", "no engine".into());
        }
        let mut seen = self.engines.clone();
        seen.sort_by_key(|e| e.name());
        seen.dedup();
        if seen.len() != self.engines.len() {
            return bad("engines", "an engine is named twice".into());
        }
        let ranges: [(&str, u64, u64, u64); 5] = [
            ("records", self.records, 1, 1 << 32),
            ("ops", self.ops, 1, 1 << 32),
            ("value_size", self.value_size as u64, 1, 2000),
            ("memory", self.memory, 1 << 20, 1 << 40),
            ("capacity", self.capacity, 64 << 20, 1 << 40),
        ];
        crate::check_ranges(&ranges)?;
        crate::check_blocks("capacity", self.capacity)?;
        if !(self.op > 0.0 && self.op <= 10.0) {
            return bad("op", format!("{} is not in (0, 10]", self.op));
        }
        if !self.work.is_dir() {
            return bad("work", format!("{}: not a directory", self.work.display()));
        }
        assert!(
            self.capacity >= 64 << 20 && self.capacity % 4096 == 0,
            "checked above"
        );
        Ok(())
    }
}

/// Refuses a spec that cannot run here: one line naming the flag.
///
/// # Errors
/// [`Error::Usage`].
pub fn check(spec: &Spec) -> Result<(), Error> {
    spec.check()?;
    if spec.fs == Fs::Raw {
        if let Some(e) = spec.engines.iter().find(|e| e.needs_fs()) {
            return Err(Error::Usage(format!(
                "--fs raw: {} needs a file system (--fs ext4 or xfs)",
                e.name()
            )));
        }
        return Ok(());
    }
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Error::Usage(format!(
            "--fs {:?}: needs root (losetup, mkfs, mount); --fs raw runs nowa's engines without",
            spec.fs
        )));
    }
    let mkfs = if spec.fs == Fs::Xfs {
        "mkfs.xfs"
    } else {
        "mkfs.ext4"
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    if !std::env::split_paths(&path).any(|d| d.join(mkfs).is_file()) {
        return Err(Error::Usage(format!(
            "--fs: {mkfs} is not installed (apt-get install {})",
            if spec.fs == Fs::Xfs {
                "xfsprogs"
            } else {
                "e2fsprogs"
            }
        )));
    }
    Ok(())
}

/// A progress callback for [`run`] that prints each engine's progress on stderr, about five
/// times per engine (at least every 1,000 operations apart); nothing when `quiet`.
pub fn stderr_progress(spec: &Spec, quiet: bool) -> impl Fn(usize, u64) + '_ {
    let step = (spec.ops / 5).max(1000);
    move |i: usize, n: u64| {
        if !quiet && n % step == 0 {
            let name = spec.engines.get(i).map_or("?", |e| e.name());
            eprintln!("nowa compare: {name}: {n} of {} ops", spec.ops);
        }
    }
}

/// Runs the comparison: the stream once, then each engine on its own fresh vssd.
/// `progress(engine index, operations done)`.
///
/// # Errors
/// A bad spec ([`Error::Usage`]), or the stream cannot be generated. An engine that fails is
/// reported in its row, and the others still run.
///
/// # Panics
/// On a broken invariant (a bug): the assertions state them.
pub fn run(spec: &Spec, progress: &dyn Fn(usize, u64)) -> Result<Report<CompareResult>, Error> {
    check(spec)?;
    let nowa = Identity::now("compare", spec, spec.seed);
    let stream = Stream::generate(
        spec.workload,
        spec.records,
        spec.ops,
        spec.value_size,
        spec.seed,
    )
    .map_err(|e| Error::Usage(format!("--records: {e}")))?;
    assert!(
        stream.op_count() >= stream.txns.len() as u64,
        "a transaction has at least one operation"
    );
    let mut rows = Vec::new();
    for (i, &engine) in spec.engines.iter().enumerate() {
        let setup = engines::setup(engine, spec);
        let (status, measured) = match engines::available(engine) {
            Err(why) => (why, None),
            Ok(()) => match run_one(engine, spec, &stream, &|n| progress(i, n)) {
                Ok(m) => ("ok".to_owned(), Some(m)),
                Err(e) if e.is_usage() => return Err(e),
                Err(e) => (format!("failed: {e}"), None),
            },
        };
        assert!(
            (status == "ok") == measured.is_some(),
            "figures exactly for the engines that ran"
        );
        rows.push(Row {
            engine,
            setup,
            status,
            measured,
        });
    }
    assert_eq!(rows.len(), spec.engines.len(), "a row per engine");
    let result = CompareResult {
        loaded: stream.loaded,
        ops: stream.txns.len() as u64,
        statements: stream.op_count(),
        rows,
    };
    Ok(Report { nowa, result })
}

/// A latency histogram from 1 us to an hour.
fn histogram() -> hdrhistogram::Histogram<u64> {
    hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000, 3)
        .unwrap_or_else(|e| panic!("fixed, valid bounds: {e}"))
}

fn run_one(
    engine: EngineName,
    spec: &Spec,
    stream: &Stream,
    progress: &dyn Fn(u64),
) -> Result<Measured, Error> {
    let bed = bed::Bed::start(spec)?;
    let scratch = tempfile::Builder::new()
        .prefix("nowa-compare-logs-")
        .tempdir_in(&spec.work)
        .map_err(|e| Error::io(&spec.work, e))?;
    assert_eq!(
        bed.snapshot().host_write_bytes == 0,
        spec.fs == Fs::Raw,
        "a fresh vssd: only mkfs wrote to it"
    );
    let mut d = engines::open(engine, &bed.target(), spec, scratch.path())?;
    let t = Instant::now();
    d.load(stream)?;
    // What the file system still holds of the load is written now, not in the measured phase.
    bed.sync_fs()?;
    let load_secs = t.elapsed().as_secs_f64();
    let before = bed.snapshot();
    let journal_before = bed.journal_commits();
    assert!(
        before.host_write_bytes > 0,
        "the load reached the device (else the engine is not on the vssd)"
    );
    let model = || bed.model_time();
    let (lat, model_lat, secs) = measured_phase(d.as_mut(), stream, progress, &model)?;
    let after = bed.snapshot();
    let journal = bed
        .journal_commits()
        .zip(journal_before)
        .map(|(a, b)| a.saturating_sub(b));
    let memory_bytes = d.memory();
    d.finish()?;
    let bed::Closed {
        snapshot: closed,
        block_layer,
    } = bed.finish()?;
    Ok(figures(
        Window {
            before,
            after,
            closed,
            block_layer,
        },
        [lat, model_lat],
        secs,
        load_secs,
        journal,
        memory_bytes,
    ))
}

/// The vssd's counters around the measured phase.
struct Window {
    /// After the load (made durable, and the file system synced).
    before: nowa_vssd::Snapshot,
    /// After the last operation.
    after: nowa_vssd::Snapshot,
    /// After the engine stopped and the file system was unmounted.
    closed: nowa_vssd::Snapshot,
    /// The loop device's and the vssd's bytes written from the attach to the unmount.
    block_layer: Option<(u64, u64)>,
}

/// Bytes counter `f` grew by from `a` to `b` (counters only grow).
fn grew(
    a: &nowa_vssd::Snapshot,
    b: &nowa_vssd::Snapshot,
    f: fn(&nowa_vssd::Snapshot) -> u64,
) -> u64 {
    assert!(f(b) >= f(a), "counters only grow");
    f(b) - f(a)
}

/// Operations of 1 ms or more, and their share of all operations' summed latency.
fn stall_tail(lat: &hdrhistogram::Histogram<u64>) -> (u64, f64) {
    const STALL_US: u64 = 1000;
    let (mut n, mut stalled, mut all) = (0u64, 0u128, 0u128);
    for v in lat.iter_recorded() {
        let us = lat.median_equivalent(v.value_iterated_to());
        let t = u128::from(us) * u128::from(v.count_at_value());
        all += t;
        if us >= STALL_US {
            n += v.count_at_value();
            stalled += t;
        }
    }
    assert!(
        stalled <= all && n <= lat.len(),
        "the tail is part of the whole"
    );
    #[expect(clippy::cast_precision_loss, reason = "a ratio of microsecond sums")]
    let share = if all == 0 {
        0.0
    } else {
        stalled as f64 / all as f64
    };
    (n, share)
}

/// The measured phase's figures: `lat` holds each operation's wall-clock latency and the
/// model time accrued during it (empty without `--timing`).
fn figures(
    w: Window,
    [lat, model_lat]: [hdrhistogram::Histogram<u64>; 2],
    secs: f64,
    load_secs: f64,
    journal_commits: Option<u64>,
    memory_bytes: u64,
) -> Measured {
    let done = lat.len();
    let host = grew(&w.before, &w.after, |s| s.host_write_bytes);
    let media = grew(&w.before, &w.after, |s| s.media_write_bytes);
    let host_close = grew(&w.before, &w.closed, |s| s.host_write_bytes);
    let media_close = grew(&w.before, &w.closed, |s| s.media_write_bytes);
    assert!(host_close >= host, "closing only adds writes");
    assert!(media_close >= media, "closing only adds flash programs");
    assert!(lat.len() == done, "a latency per operation");
    let tail = stall_tail(&lat);
    let timed = !model_lat.is_empty();
    assert!(
        !timed || model_lat.len() == done,
        "a model time per operation, or none"
    );
    #[expect(clippy::cast_precision_loss, reason = "byte and op counts as ratios")]
    let per_op = |b: u64| b as f64 / done.max(1) as f64;
    #[expect(clippy::cast_precision_loss, reason = "an op count over seconds")]
    let ops_per_sec = done as f64 / secs.max(1e-9);
    Measured {
        load_secs,
        ops: done,
        secs,
        ops_per_sec,
        p50_us: lat.value_at_quantile(0.5),
        p99_us: lat.value_at_quantile(0.99),
        p999_us: lat.value_at_quantile(0.999),
        max_us: lat.max(),
        stalls: tail.0,
        stall_time_share: tail.1,
        model_secs: timed.then(|| {
            let us = w.after.model_time_us.saturating_sub(w.before.model_time_us);
            std::time::Duration::from_micros(us).as_secs_f64()
        }),
        model_p99_us: timed.then(|| model_lat.value_at_quantile(0.99)),
        model_stalls: timed.then(|| stall_tail(&model_lat).0),
        model_write_stalls: timed.then(|| grew(&w.before, &w.after, |s| s.model_write_stalls)),
        host_write_bytes: host,
        media_write_bytes: media,
        host_read_bytes: grew(&w.before, &w.after, |s| s.host_read_bytes),
        trim_bytes: grew(&w.before, &w.after, |s| s.trim_bytes),
        gc_copy_bytes: grew(&w.before, &w.after, |s| s.gc_copy_bytes),
        device_bytes_per_op: per_op(host),
        flash_bytes_per_op: per_op(media),
        ssd_waf: nowa_units::waf(media / 4096, host.div_ceil(4096)),
        host_write_bytes_to_close: host_close,
        device_bytes_per_op_to_close: per_op(host_close),
        flash_bytes_per_op_to_close: per_op(media_close),
        journal_commits,
        block_layer_write_bytes: w.block_layer,
        memory_bytes,
    }
}

/// Runs the stream's transactions on `d` (until Ctrl-C); their latencies and the seconds.
///
/// With a timing model (`model` gives its clock) also the model time accrued during each
/// operation; that histogram stays empty without one.
type Phase = (
    hdrhistogram::Histogram<u64>,
    hdrhistogram::Histogram<u64>,
    f64,
);
fn measured_phase(
    d: &mut dyn engines::Driver,
    stream: &Stream,
    progress: &dyn Fn(u64),
    model: &dyn Fn() -> Option<std::time::Duration>,
) -> Result<Phase, Error> {
    let (mut lat, mut model_lat) = (histogram(), histogram());
    let t = Instant::now();
    let mut done = 0u64;
    let micros = |d: std::time::Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    for txn in &stream.txns {
        if crate::Cancel.requested() {
            break;
        }
        let (t0, m0) = (Instant::now(), model());
        d.txn(stream, txn)?;
        let us = micros(t0.elapsed());
        assert!(us < 3_600_000_000, "an operation took less than an hour");
        lat.saturating_record(us.max(1));
        if let (Some(a), Some(b)) = (m0, model()) {
            assert!(b >= a, "the model's clock never runs backward");
            model_lat.saturating_record(micros(b - a).max(1));
        }
        done += 1;
        if done % 1000 == 0 {
            progress(done);
        }
    }
    assert!(done <= stream.txns.len() as u64, "no more than the stream");
    Ok((lat, model_lat, t.elapsed().as_secs_f64()))
}

/// The result as a text table, one row per engine, then each engine's setup.
///
/// # Panics
/// On a broken invariant (a bug): the assertions state them.
#[must_use]
pub fn table(r: &CompareResult) -> String {
    use std::fmt::Write as _;
    let mut s = format!(
        "{:<13} {:>12} {:>8} {:>12} {:>12} {:>10} {:>10} {:>11} {:>8}\n",
        "engine",
        "device B/op",
        "SSD WAF",
        "flash B/op",
        "+close B/op",
        "ops/s",
        "p99 us",
        "memory MiB",
        "load s"
    );
    for row in &r.rows {
        assert!(!row.setup.is_empty(), "every row states its setup");
        let Some(m) = &row.measured else {
            let _ = writeln!(s, "{:<13} {}", row.engine.name(), row.status);
            continue;
        };
        #[expect(clippy::cast_precision_loss, reason = "bytes shown in MiB")]
        let mib = m.memory_bytes as f64 / f64::from(1 << 20);
        let _ = writeln!(
            s,
            "{:<13} {:>12.0} {:>8} {:>12.0} {:>12.0} {:>10.0} {:>10} {:>11.1} {:>8.1}",
            row.engine.name(),
            m.device_bytes_per_op,
            m.ssd_waf
                .map_or_else(|| "-".to_owned(), |w| format!("{w:.2}")),
            m.flash_bytes_per_op,
            m.device_bytes_per_op_to_close,
            m.ops_per_sec,
            m.p99_us,
            mib,
            m.load_secs
        );
    }
    s.push_str("setup:\n");
    for row in &r.rows {
        let _ = writeln!(s, "  {:<13} {}", row.engine.name(), row.setup);
    }
    assert_eq!(
        s.lines().count(),
        2 * r.rows.len() + 2,
        "a line per engine, twice"
    );
    s
}

/// Writes one CSV row per engine after the identity line.
///
/// # Errors
/// The file cannot be written.
///
/// # Panics
/// If a record and the header disagree on the columns (a bug).
pub fn write_csv(rep: &Report<CompareResult>, path: &std::path::Path) -> Result<(), Error> {
    let file = crate::csv_file(path, &rep.nowa)?;
    let mut w = csv::Writer::from_writer(file);
    let head = [
        "engine",
        "status",
        "device_bytes_per_op",
        "ssd_waf",
        "flash_bytes_per_op",
        "device_bytes_per_op_to_close",
        "journal_commits",
        "ops_per_sec",
        "p50_us",
        "p99_us",
        "p999_us",
        "max_us",
        "stalls",
        "model_p99_us",
        "model_stalls",
        "memory_bytes",
        "load_secs",
        "ops",
        "setup",
    ];
    w.write_record(head).map_err(|e| Error::io(path, e))?;
    for row in &rep.result.rows {
        let f = |g: &dyn Fn(&Measured) -> String| row.measured.as_ref().map_or_else(String::new, g);
        let rec = [
            row.engine.name().to_owned(),
            row.status.clone(),
            f(&|m| format!("{:.1}", m.device_bytes_per_op)),
            f(&|m| m.ssd_waf.map_or_else(String::new, |w| format!("{w:.4}"))),
            f(&|m| format!("{:.1}", m.flash_bytes_per_op)),
            f(&|m| format!("{:.1}", m.device_bytes_per_op_to_close)),
            f(&|m| {
                m.journal_commits
                    .map_or_else(String::new, |j| j.to_string())
            }),
            f(&|m| format!("{:.1}", m.ops_per_sec)),
            f(&|m| m.p50_us.to_string()),
            f(&|m| m.p99_us.to_string()),
            f(&|m| m.p999_us.to_string()),
            f(&|m| m.max_us.to_string()),
            f(&|m| m.stalls.to_string()),
            f(&|m| m.model_p99_us.map_or_else(String::new, |v| v.to_string())),
            f(&|m| m.model_stalls.map_or_else(String::new, |v| v.to_string())),
            f(&|m| m.memory_bytes.to_string()),
            f(&|m| format!("{:.2}", m.load_secs)),
            f(&|m| m.ops.to_string()),
            row.setup.clone(),
        ];
        assert_eq!(rec.len(), head.len(), "one field per column");
        w.write_record(&rec).map_err(|e| Error::io(path, e))?;
    }
    w.flush().map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_run_once_in_the_order_first_named() {
        use EngineName::{NowaOop, Sqlite3};
        assert_eq!(
            Spec::engines_once(&[Sqlite3, NowaOop, Sqlite3]),
            vec![Sqlite3, NowaOop]
        );
    }

    /// The stall tail counts the operations of 1 ms or more and their share of the time.
    #[test]
    fn stall_tail_counts_operations_of_a_millisecond_or_more() {
        let mut h = histogram();
        for _ in 0..98 {
            h.record(30).unwrap();
        }
        h.record(5_000).unwrap();
        h.record(20_000).unwrap();
        let (n, share) = stall_tail(&h);
        assert_eq!(n, 2);
        // 25,000 us of 27,940 us.
        assert!((share - 25_000.0 / 27_940.0).abs() < 0.01, "{share}");
    }
}
