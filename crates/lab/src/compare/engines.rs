//! The engines: which are installed, how each is set up on its fresh vssd (with its ordinary
//! durability settings, said in [`setup`]), loaded, fed the stream, measured and stopped.

use super::bed::Target;
use super::client::{check_reads, Client, Dialect};
use super::servers::{self, Server};
use super::stream::{Kind, Op, Stream};
use super::{EngineName, Spec};
use crate::Error;
use nowa_device::{FileDevice, FileOptions};
use nowa_engine::{Config, Durability, Engine, TableId, TreeOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// An engine fed by the comparison.
pub trait Driver {
    /// Loads rows 0..`s.loaded` and makes them durable.
    ///
    /// # Errors
    /// The engine's.
    fn load(&mut self, s: &Stream) -> Result<(), Error>;
    /// Runs one transaction, durably committed when it returns.
    ///
    /// # Errors
    /// The engine's, or a read that did not find its row.
    fn txn(&mut self, s: &Stream, ops: &[Op]) -> Result<(), Error>;
    /// Memory the engine uses now (proportional set size of its processes, bytes).
    fn memory(&self) -> u64;
    /// Stops the engine cleanly.
    ///
    /// # Errors
    /// The engine's.
    fn finish(self: Box<Self>) -> Result<(), Error>;
}

/// Rows per multi-row INSERT statement of a client's load (and per batch of a Rust engine's).
const LOAD_BATCH: u64 = 500;
/// [`LOAD_BATCH`] as a step.
const LOAD_STEP: usize = 500;
const _: () = assert!(LOAD_STEP as u64 == LOAD_BATCH, "one batch size");

/// The load's batches `[k, end)` over rows 0..`loaded`, [`LOAD_BATCH`] rows each but the last.
pub(super) fn load_batches(loaded: u64) -> impl Iterator<Item = (u64, u64)> {
    (0..loaded).step_by(LOAD_STEP).map(move |k| {
        let end = (k + LOAD_BATCH).min(loaded);
        assert!(end > k, "every batch loads rows");
        assert!(
            end - k <= LOAD_BATCH,
            "a batch holds at most LOAD_BATCH rows"
        );
        (k, end)
    })
}

/// A program on PATH, or in one of `extra` directories (globs are not expanded: the caller
/// lists them).
pub(super) fn find_tool(name: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra.iter().cloned())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Debian keeps PostgreSQL's server programs in /usr/lib/postgresql/VERSION/bin.
pub(super) fn pg_dirs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|r| {
            r.filter_map(|e| e.ok().map(|e| e.path().join("bin")))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.reverse();
    v
}

/// The uid and gid of a system user (PostgreSQL and MariaDB refuse to run as root).
pub(super) fn user_ids(name: &str) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&name))
            .then(|| Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?)))?
    })
}

/// Whether `engine` can run here; why not (with its install line) when it cannot.
///
/// # Errors
/// A line saying what is missing.
pub fn available(engine: EngineName) -> Result<(), String> {
    let missing = |what: &str| {
        Err(format!(
            "not installed ({what}; scripts/install-peers.sh {})",
            engine.install_name()
        ))
    };
    match engine {
        EngineName::NowaInplace | EngineName::NowaOop => Ok(()),
        EngineName::Sqlite3 => match find_tool("sqlite3", &[]) {
            Some(_) => Ok(()),
            None => missing("no sqlite3"),
        },
        EngineName::Postgresql => {
            let dirs = pg_dirs();
            for t in ["initdb", "pg_ctl", "psql"] {
                if find_tool(t, &dirs).is_none() {
                    return missing(&format!("no {t}"));
                }
            }
            match user_ids("postgres") {
                Some(_) => Ok(()),
                None => missing("no postgres user"),
            }
        }
        EngineName::Rocksdb | EngineName::Lmdb => {
            super::kv::available(engine).or_else(|why| missing(&why))
        }
        EngineName::Sled | EngineName::Redb | EngineName::Fjall => {
            super::rust_kv::available(engine)
        }
        EngineName::Mariadb => {
            let dirs = servers::mariadb_dirs();
            for t in ["mariadb-install-db", "mariadbd", "mariadb", "mariadb-admin"] {
                if find_tool(t, &dirs).is_none() {
                    return missing(&format!("no {t}"));
                }
            }
            match user_ids("mysql") {
                Some(_) => Ok(()),
                None => missing("no mysql user"),
            }
        }
    }
}

/// The engine's configuration and durability settings, as the output states them.
#[must_use]
pub fn setup(engine: EngineName, spec: &Spec) -> String {
    setup_template(engine)
        .replace("{mib}", &(spec.memory >> 20).to_string())
        .replace("{max_wal}", &(pg_max_wal(spec) >> 20).to_string())
}

/// Each engine's setup line: `{mib}` stands for --memory and `{max_wal}` for PostgreSQL's
/// max_wal_size, both in MiB (one substitution in [`setup`] for every engine).
fn setup_template(engine: EngineName) -> &'static str {
    match engine {
        EngineName::NowaInplace => {
            "nowa in place, doublewrite on, WAL group commit, sync commit, pool {mib} MiB, O_DIRECT"
        }
        EngineName::NowaOop => {
            "nowa out of place (zones, DB GC), WAL group commit, sync commit, pool {mib} MiB, O_DIRECT"
        }
        EngineName::Sqlite3 => {
            "sqlite3 defaults: rollback journal (DELETE), synchronous=FULL; cache_size {mib} MiB"
        }
        EngineName::Postgresql => {
            "PostgreSQL defaults: fsync on, synchronous_commit on, full_page_writes on; shared_buffers {mib} MiB, max_wal_size {max_wal} MiB"
        }
        EngineName::Mariadb => {
            "MariaDB InnoDB defaults: innodb_flush_log_at_trx_commit=1, doublewrite on, binlog off; buffer pool {mib} MiB"
        }
        EngineName::Rocksdb => {
            "RocksDB (rocksdict) defaults: WAL on, leveled compaction, 64 MiB memtable; sync=true per commit (one WriteBatch); block cache {mib} MiB"
        }
        EngineName::Lmdb => {
            "LMDB defaults: copy-on-write B+tree, fsync at every commit (sync, metasync on); no cache of its own (mmap: the OS page cache)"
        }
        EngineName::Sled => {
            "sled 0.34 defaults (background flush every 500 ms); one Batch per transaction, then flush() (fsync); cache_capacity {mib} MiB"
        }
        EngineName::Redb => {
            "redb defaults: copy-on-write B-tree, Durability::Immediate (fsync at every commit); one write transaction per transaction; cache {mib} MiB"
        }
        EngineName::Fjall => {
            "fjall defaults: LSM tree, journal, leveled compaction; one write batch per transaction with PersistMode::SyncAll (fjall's default Buffer is not power-safe); block cache {mib} MiB"
        }
    }
}

/// PostgreSQL's default max_wal_size (1 GiB) can exceed a small vssd: a quarter of it then.
pub(super) fn pg_max_wal(spec: &Spec) -> u64 {
    (spec.capacity / 4).clamp(32 << 20, 1 << 30)
}

/// Starts `engine` on `target` (`scratch`: a directory outside the vssd for logs).
///
/// # Errors
/// The engine cannot be created or started.
pub fn open(
    engine: EngineName,
    target: &Target,
    spec: &Spec,
    scratch: &Path,
) -> Result<Box<dyn Driver>, Error> {
    match engine {
        EngineName::NowaInplace | EngineName::NowaOop => Ok(Box::new(NowaDriver::open(
            engine == EngineName::NowaOop,
            target,
            spec,
        )?)),
        EngineName::Sqlite3 => {
            let dir = fs_dir(target, engine)?;
            let mut c = Command::new("sqlite3");
            c.arg("-bail").arg(dir.join("t.db"));
            let mut cl = Client::start(c, Dialect::Sqlite, scratch.join("sqlite3.err"))?;
            let kib = spec.memory >> 10;
            cl.exec(&format!(
                "PRAGMA cache_size=-{kib};\nCREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);"
            ))?;
            Ok(Box::new(ClientDriver {
                client: cl,
                server: None,
                after_load: None,
            }))
        }
        EngineName::Postgresql => Ok(Box::new(servers::postgres(target, spec, scratch)?)),
        EngineName::Mariadb => Ok(Box::new(servers::mariadb(target, spec, scratch)?)),
        EngineName::Rocksdb | EngineName::Lmdb => {
            Ok(Box::new(super::kv::open(engine, target, spec, scratch)?))
        }
        EngineName::Sled | EngineName::Redb | EngineName::Fjall => {
            super::rust_kv::open(engine, target, spec.memory)
        }
    }
}

/// The directory of a file-system target; engines other than nowa need one.
pub(super) fn fs_dir(target: &Target, engine: EngineName) -> Result<PathBuf, Error> {
    match target {
        Target::Dir(d, _) => Ok(d.clone()),
        Target::Raw(..) => Err(Error::Usage(format!(
            "--fs raw: {} needs a file system (--fs ext4 or xfs)",
            engine.name()
        ))),
    }
}

/// Proportional set size of process `pid` in bytes (0 when it is gone).
pub(super) fn pss(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let kib = text.lines().find_map(|l| {
        l.strip_prefix("Pss:")
            .and_then(|r| r.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    });
    let bytes = kib.unwrap_or(0) * 1024;
    assert!(bytes % 1024 == 0, "whole KiB");
    bytes
}

/// Process `pid` and its children (a server's backends).
pub(super) fn with_children(pid: u32) -> Vec<u32> {
    let mut v = vec![pid];
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return v;
    };
    for e in dir.flatten() {
        let Some(child) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // Field 4 (after the parenthesized name) is the parent's pid.
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1));
        if ppid.and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            assert_ne!(child, pid, "a process is not its own child");
            v.push(child);
        }
    }
    v
}

/// Heap bytes this process's allocations hold now (glibc's mallinfo2, over all arenas).
pub(super) fn heap_in_use() -> u64 {
    // SAFETY: mallinfo2 takes no arguments and returns a struct by value; it only reads the
    // allocator's own bookkeeping. Test: tests/compare_cli.rs checks nowa's memory is counted.
    let m = unsafe { libc::mallinfo2() };
    (m.uordblks as u64).saturating_add(m.hblkhd as u64)
}

/// The out-of-place engine's configuration on `target`. On the vssd's raw disk each zone
/// is one of the vssd's GC units, filled one at a time (one open zone): the vssd receives
/// one zone after another in its single write stream, so the trim of a zone that DB GC
/// reclaimed frees about a unit's worth of whole pages together. The engine's default
/// (1 MiB zones, four filled at once by turns) spread every GC unit of a 64 MiB vssd
/// (2 MiB) over several zones that die at different times, and the vssd copied what the
/// others still held: SSD WAF 3.05 against 1.77 (docs/vssd.md, "Out of place on the raw
/// disk"). A file on a file system keeps the default: its blocks lie where the file system
/// put them.
fn oop_config(target: &Target) -> nowa_engine::OopConfig {
    let mut c = nowa_engine::OopConfig::default();
    if let Target::Raw(_, unit) = target {
        assert!(
            *unit >= 8 * 4096 && unit % 4096 == 0,
            "a GC unit of whole pages"
        );
        c.open_zones = 1;
        // `--zone-size auto`'s rule elsewhere: the unit over the open zones, here one.
        c.zone_bytes = Some(crate::devices::zone_for_unit(*unit, c.open_zones));
    }
    c
}

/// nowa's engine in this process, on the vssd's disk or on a file on its file system.
struct NowaDriver {
    eng: Engine,
    table: TableId,
    /// The heap in use before the engine existed. Not PSS: a second engine of the same run
    /// reuses the pages the first one freed, and its PSS growth was then near 0.
    base: u64,
}

impl NowaDriver {
    fn open(oop: bool, target: &Target, spec: &Spec) -> Result<NowaDriver, Error> {
        let base = heap_in_use();
        let mut opts = FileOptions::default();
        let dev = match target {
            Target::Raw(p, _) => {
                // The vssd's disk is a device, not a file: a trim must reach it as a hole
                // punch (the vssd's TRIM). The default on a regular file ignores trims, and
                // the vssd then kept every zone DB GC had freed as live data.
                opts.trim = nowa_device::TrimPolicy::Deallocate;
                FileDevice::open(p, &opts)
            }
            Target::Dir(d, free) => {
                // File-system metadata grows with the file: leave a tenth free.
                let size = free / 10 * 9 / 4096 * 4096;
                assert!(
                    size % 4096 == 0 && size <= *free,
                    "a page-aligned file that fits"
                );
                FileDevice::create(d.join("nowa.db"), size, &opts)
            }
        }
        .map_err(|e| Error::failed("opening nowa's device", e))?;
        assert!(spec.memory >= 1 << 20, "--memory is at least 1 MiB");
        let cfg = Config {
            pool_bytes: spec.memory,
            durability: Durability::Sync,
            ..Config::default()
        };
        let dev: Arc<dyn nowa_device::BlockDevice> = Arc::new(dev);
        let eng = if oop {
            let store = nowa_engine::out_of_place_store(oop_config(target));
            Engine::create_with_wal(dev, None, cfg, &store)
        } else {
            Engine::create_with_wal(dev, None, cfg, &nowa_engine::in_place_store())
        }
        .map_err(|e| Error::failed("creating nowa's engine", e))?;
        let (table, _) = eng
            .open_table("t", TreeOptions::default())
            .map_err(|e| Error::failed("creating nowa's table", e))?;
        assert_ne!(table.number(), 0, "table 0 is the catalog");
        Ok(NowaDriver { eng, table, base })
    }
}

fn engine_err(e: nowa_engine::EngineError) -> Error {
    Error::failed("nowa's engine", e)
}

impl Driver for NowaDriver {
    fn load(&mut self, s: &Stream) -> Result<(), Error> {
        assert!(s.loaded > 0, "something to load");
        for k in 0..s.loaded {
            self.eng
                .load_put(self.table, &k.to_be_bytes(), &s.value(k, 0))
                .map_err(engine_err)?;
        }
        self.eng.checkpoint().map_err(engine_err)
    }

    fn txn(&mut self, s: &Stream, ops: &[Op]) -> Result<(), Error> {
        let mut t = self.eng.begin();
        for o in ops {
            let key = o.key.to_be_bytes();
            if o.kind == Kind::Read {
                let v = t.get(self.table, &key).map_err(engine_err)?;
                if v.as_ref().map(Vec::len) != Some(s.value_size) {
                    return Err(Error::failed(
                        "nowa's engine",
                        std::io::Error::other(format!("key {} read {v:?}", o.key)),
                    ));
                }
            } else {
                t.put(self.table, &key, &s.value(o.key, o.ver))
                    .map_err(engine_err)?;
            }
        }
        t.commit_with(Durability::Sync).map_err(engine_err)
    }

    fn memory(&self) -> u64 {
        heap_in_use().saturating_sub(self.base)
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        self.eng.close().map_err(engine_err)
    }
}

/// An engine fed through its client; `server` is stopped at the end.
pub(super) struct ClientDriver {
    pub(super) client: Client,
    pub(super) server: Option<Box<dyn Server>>,
    /// What makes the load durable when there is no server to say it (kv_driver.py's flush).
    pub(super) after_load: Option<&'static str>,
}

impl Driver for ClientDriver {
    fn load(&mut self, s: &Stream) -> Result<(), Error> {
        for (k, end) in load_batches(s.loaded) {
            let sql = self.client.insert_rows(s, k, end);
            self.client.exec(&sql)?;
        }
        let server = self.server.as_ref().and_then(|s| s.after_load());
        if let Some(sql) = self.after_load.or(server) {
            self.client.exec(sql)?;
        }
        Ok(())
    }

    fn txn(&mut self, s: &Stream, ops: &[Op]) -> Result<(), Error> {
        assert!(!ops.is_empty(), "a transaction does something");
        let sql = self.client.txn(s, ops);
        let lines = self.client.exec(&sql)?;
        check_reads(&lines, ops, s.value_size)
    }

    fn memory(&self) -> u64 {
        match &self.server {
            Some(p) => p.memory(),
            None => pss(self.client.pid()),
        }
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        let r = self.client.finish();
        if let Some(mut p) = self.server {
            p.stop()?;
        }
        r
    }
}
