//! Rust engines in this process: sled, redb and fjall, each behind its own cargo feature of
//! nowa-lab (and nowa-cli), so a default build compiles none of them. Each keeps its data in a
//! directory of the file system on the vssd and uses its ordinary durability settings
//! ([`super::engines::setup`] states them); a transaction returns once it is durable.
//!
//! An engine whose feature is off is reported by [`available`] with the build line that adds
//! it, as a peer that is not installed is reported with its install line.

use super::bed::Target;
use super::engines::{fs_dir, heap_in_use, load_batches, Driver};
use super::stream::{Kind, Op, Stream};
use super::EngineName;
use crate::Error;
use std::collections::BTreeMap;

/// The build line that adds `engine` (when its feature is off).
#[must_use]
pub fn build_line(engine: EngineName) -> String {
    format!(
        "cargo build --release -p nowa-cli --features {}",
        engine.name()
    )
}

/// Whether `engine` is built into this binary; the build line that adds it when not.
///
/// # Errors
/// Why not, with the build line.
pub fn available(engine: EngineName) -> Result<(), String> {
    // Which features this build has (a table, so the test reads the same in every build).
    const BUILT: [(EngineName, bool); 3] = [
        (EngineName::Sled, cfg!(feature = "sled")),
        (EngineName::Redb, cfg!(feature = "redb")),
        (EngineName::Fjall, cfg!(feature = "fjall")),
    ];
    if BUILT.iter().any(|&(e, on)| e == engine && on) {
        Ok(())
    } else {
        Err(format!("not built in ({})", build_line(engine)))
    }
}

/// What the driver needs of an engine: durable batches of puts, and point reads. Every
/// method's error is the engine's own message.
pub trait Kv {
    /// Writes `rows` atomically; durable when it returns.
    ///
    /// # Errors
    /// The engine's.
    fn commit(&mut self, rows: &BTreeMap<u64, Vec<u8>>) -> Result<(), String>;
    /// `key`'s value, None when it has none.
    ///
    /// # Errors
    /// The engine's.
    fn get(&self, key: u64) -> Result<Option<Vec<u8>>, String>;
    /// Makes the load durable and settled (memtables flushed), before the measured phase.
    ///
    /// # Errors
    /// The engine's.
    fn settle(&mut self) -> Result<(), String>;
    /// Closes the engine cleanly.
    ///
    /// # Errors
    /// The engine's.
    fn close(self: Box<Self>) -> Result<(), String>;
}

/// A Rust engine fed the stream.
struct RustDriver {
    engine: EngineName,
    kv: Box<dyn Kv>,
    /// The heap in use before the engine was opened (as nowa's in-process engines).
    base: u64,
}

/// Opens `engine` in a fresh directory of the target's file system.
///
/// # Errors
/// The engine is not built in, or cannot create its database.
///
/// # Panics
/// On a broken invariant (a bug): the assertions state them.
pub fn open(engine: EngineName, target: &Target, memory: u64) -> Result<Box<dyn Driver>, Error> {
    assert!(
        matches!(
            engine,
            EngineName::Sled | EngineName::Redb | EngineName::Fjall
        ),
        "a Rust engine"
    );
    let dir = fs_dir(target, engine)?.join(engine.name());
    assert!(!dir.exists(), "a fresh file system");
    std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
    let base = heap_in_use();
    let kv = open_kv(engine, &dir, memory)
        .map_err(|e| failed(engine, format!("opening {}: {e}", dir.display())))?;
    Ok(Box::new(RustDriver { engine, kv, base }))
}

fn failed(engine: EngineName, msg: String) -> Error {
    Error::failed(engine.name(), std::io::Error::other(msg))
}

#[cfg_attr(
    not(any(feature = "sled", feature = "redb", feature = "fjall")),
    expect(
        unused_variables,
        reason = "an engine whose feature is off leaves its arguments unused"
    )
)]
/// Opens `engine`'s database in `dir` (an existing one is opened again), with a cache of
/// `memory` bytes.
///
/// # Errors
/// The engine is not built in, or cannot open the database.
pub fn open_kv(
    engine: EngineName,
    dir: &std::path::Path,
    memory: u64,
) -> Result<Box<dyn Kv>, String> {
    match engine {
        #[cfg(feature = "sled")]
        EngineName::Sled => Ok(Box::new(sled_kv::SledKv::open(dir, memory)?)),
        #[cfg(feature = "redb")]
        EngineName::Redb => Ok(Box::new(redb_kv::RedbKv::open(dir, memory)?)),
        #[cfg(feature = "fjall")]
        EngineName::Fjall => Ok(Box::new(fjall_kv::FjallKv::open(dir, memory)?)),
        _ => Err(available(engine).err().unwrap_or_default()),
    }
}

impl Driver for RustDriver {
    fn load(&mut self, s: &Stream) -> Result<(), Error> {
        for (k, end) in load_batches(s.loaded) {
            let rows: BTreeMap<u64, Vec<u8>> = (k..end).map(|k| (k, s.value(k, 0))).collect();
            self.kv.commit(&rows).map_err(|e| failed(self.engine, e))?;
        }
        self.kv.settle().map_err(|e| failed(self.engine, e))
    }

    fn txn(&mut self, s: &Stream, ops: &[Op]) -> Result<(), Error> {
        assert!(!ops.is_empty(), "a transaction does something");
        // Writes wait in `pending` until the commit; a read sees its own transaction's write
        // first (tpcc-lite reads a stock row, then updates it).
        let mut pending = BTreeMap::new();
        for o in ops {
            if o.kind == Kind::Read {
                let len = match pending.get(&o.key) {
                    Some(v) => Some(Vec::len(v)),
                    None => self
                        .kv
                        .get(o.key)
                        .map_err(|e| failed(self.engine, e))?
                        .as_ref()
                        .map(Vec::len),
                };
                if len != Some(s.value_size) {
                    return Err(failed(
                        self.engine,
                        format!("key {} read a value of {len:?} bytes", o.key),
                    ));
                }
            } else {
                pending.insert(o.key, s.value(o.key, o.ver));
            }
        }
        assert!(pending.len() <= ops.len(), "at most a write per operation");
        if pending.is_empty() {
            return Ok(());
        }
        self.kv.commit(&pending).map_err(|e| failed(self.engine, e))
    }

    fn memory(&self) -> u64 {
        heap_in_use().saturating_sub(self.base)
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        let engine = self.engine;
        self.kv.close().map_err(|e| failed(engine, e))
    }
}

/// Keys as nowa's and the other engines': 8-byte big-endian numbers.
#[cfg(any(feature = "sled", feature = "fjall"))]
fn key(k: u64) -> [u8; 8] {
    k.to_be_bytes()
}

#[cfg(feature = "sled")]
mod sled_kv {
    use super::{key, Kv};
    use std::collections::BTreeMap;

    /// sled 0.34 with its defaults (a background flush every 500 ms), `cache_capacity` the
    /// engine's memory; a commit is one atomic `Batch` followed by `flush()`, sled's documented
    /// way to make writes durable (it fsyncs).
    pub(super) struct SledKv {
        db: sled::Db,
    }

    impl SledKv {
        pub(super) fn open(dir: &std::path::Path, memory: u64) -> Result<SledKv, String> {
            let db = sled::Config::new()
                .path(dir)
                .cache_capacity(memory)
                .open()
                .map_err(|e| e.to_string())?;
            Ok(SledKv { db })
        }
    }

    impl Kv for SledKv {
        fn commit(&mut self, rows: &BTreeMap<u64, Vec<u8>>) -> Result<(), String> {
            let mut b = sled::Batch::default();
            for (k, v) in rows {
                b.insert(&key(*k)[..], v.as_slice());
            }
            self.db.apply_batch(b).map_err(|e| e.to_string())?;
            self.db.flush().map(|_| ()).map_err(|e| e.to_string())
        }

        fn get(&self, k: u64) -> Result<Option<Vec<u8>>, String> {
            let v = self.db.get(key(k)).map_err(|e| e.to_string())?;
            Ok(v.map(|v| v.to_vec()))
        }

        fn settle(&mut self) -> Result<(), String> {
            self.db.flush().map(|_| ()).map_err(|e| e.to_string())
        }

        fn close(self: Box<Self>) -> Result<(), String> {
            self.db.flush().map(|_| ()).map_err(|e| e.to_string())
        }
    }
}

#[cfg(feature = "redb")]
mod redb_kv {
    use super::Kv;
    use redb::{ReadableDatabase, TableDefinition};
    use std::collections::BTreeMap;

    const TABLE: TableDefinition<u64, &[u8]> = TableDefinition::new("t");

    /// redb with its defaults: `Durability::Immediate` (the commit of a write transaction
    /// fsyncs before it returns), cache size the engine's memory.
    pub(super) struct RedbKv {
        db: redb::Database,
    }

    fn s(e: impl std::fmt::Display) -> String {
        e.to_string()
    }

    impl RedbKv {
        pub(super) fn open(dir: &std::path::Path, memory: u64) -> Result<RedbKv, String> {
            let cache = usize::try_from(memory).map_err(s)?;
            let db = redb::Database::builder()
                .set_cache_size(cache)
                .create(dir.join("t.redb"))
                .map_err(s)?;
            // The table exists before the first read.
            let t = db.begin_write().map_err(s)?;
            t.open_table(TABLE).map_err(s)?;
            t.commit().map_err(s)?;
            Ok(RedbKv { db })
        }
    }

    impl Kv for RedbKv {
        fn commit(&mut self, rows: &BTreeMap<u64, Vec<u8>>) -> Result<(), String> {
            let t = self.db.begin_write().map_err(s)?;
            {
                let mut table = t.open_table(TABLE).map_err(s)?;
                for (k, v) in rows {
                    table.insert(*k, v.as_slice()).map_err(s)?;
                }
            }
            t.commit().map_err(s)
        }

        fn get(&self, k: u64) -> Result<Option<Vec<u8>>, String> {
            let t = self.db.begin_read().map_err(s)?;
            let table = t.open_table(TABLE).map_err(s)?;
            let v = table.get(k).map_err(s)?;
            Ok(v.map(|v| v.value().to_vec()))
        }

        fn settle(&mut self) -> Result<(), String> {
            // Every commit was durable already; redb has no log to flush.
            Ok(())
        }

        fn close(self: Box<Self>) -> Result<(), String> {
            drop(self.db);
            Ok(())
        }
    }
}

#[cfg(feature = "fjall")]
mod fjall_kv {
    use super::{key, Kv};
    use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
    use std::collections::BTreeMap;

    /// fjall with its defaults (LSM tree, journal, leveled compaction), block cache the
    /// engine's memory; a commit is one write batch with `PersistMode::SyncAll` (fjall's own
    /// default, `Buffer`, survives a process crash but not a power loss: the other engines
    /// commit durably, so fjall does too, as RocksDB's `sync=true`).
    pub(super) struct FjallKv {
        db: Database,
        ks: Keyspace,
    }

    fn s(e: impl std::fmt::Display) -> String {
        e.to_string()
    }

    impl FjallKv {
        pub(super) fn open(dir: &std::path::Path, memory: u64) -> Result<FjallKv, String> {
            let db = Database::builder(dir)
                .cache_size(memory)
                .open()
                .map_err(s)?;
            let ks = db
                .keyspace("t", KeyspaceCreateOptions::default)
                .map_err(s)?;
            Ok(FjallKv { db, ks })
        }
    }

    impl Kv for FjallKv {
        fn commit(&mut self, rows: &BTreeMap<u64, Vec<u8>>) -> Result<(), String> {
            let mut b = self.db.batch().durability(Some(PersistMode::SyncAll));
            for (k, v) in rows {
                b.insert(&self.ks, key(*k), v.as_slice());
            }
            b.commit().map_err(s)
        }

        fn get(&self, k: u64) -> Result<Option<Vec<u8>>, String> {
            let v = self.ks.get(key(k)).map_err(s)?;
            Ok(v.map(|v| v.to_vec()))
        }

        fn settle(&mut self) -> Result<(), String> {
            // The load's memtable written out as a table, as RocksDB's flush after its load
            // (fjall calls this test support; it is the one way to wait for the flush).
            self.ks.rotate_memtable_and_wait().map_err(s)?;
            self.db.persist(PersistMode::SyncAll).map_err(s)
        }

        fn close(self: Box<Self>) -> Result<(), String> {
            self.db.persist(PersistMode::SyncAll).map_err(s)
        }
    }
}
