//! The engine's part of a spec (`tpcc`'s `engine` table): buffer pool, WAL, durability,
//! write-back, the simulated SSD's timing model and the write path, resolved. One conversion
//! to and from [`nowa_engine::Config`] and one store builder for every engine experiment.

use crate::text::size;
use crate::ycsb::{InnodbFlushing, Oop, Path};
use crate::Error;
use nowa_bench::ycsb::Pacing;
use nowa_engine::{Config, Durability, FrozenHook, StoreBuilder};
use serde::{Deserialize, Serialize};

/// The engine of a run, resolved: keys are the engine flags with underscores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSpec {
    /// Buffer pool bytes.
    #[serde(with = "size")]
    pub pool: u64,
    /// WAL limit bytes (absent: the pool size, or the database's own when it is opened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_limit: Option<u64>,
    /// `async` or `sync`.
    pub durability: String,
    /// In place: write pages through the doublewrite area.
    pub doublewrite: bool,
    /// The page-cleaner thread.
    pub page_cleaner: bool,
    /// Hot-page-aware checkpointing's deferral count.
    pub max_checkpoint_count: u32,
    /// Adaptive deferral's redo bound, log bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_redo_bytes: Option<u64>,
    /// `--flushing innodb`: its io capacities (absent: checkpoint passes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flushing: Option<InnodbFlushing>,
    /// The WAL on a separate in-memory device.
    pub separate_wal: bool,
    /// The simulated SSD's timing model (absent on other devices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<Pacing>,
    /// `"inplace"`, or `{"oop": {...}}`.
    pub write_path: Path,
    /// Record cache bytes (absent: 0, off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub record_cache: u64,
    /// Blind-update memory bytes (absent: 0, off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blind_updates: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// `--durability`: async or sync.
///
/// # Errors
/// Any other word.
pub fn durability(s: &str) -> Result<Durability, String> {
    match s {
        "async" => Ok(Durability::Async),
        "sync" => Ok(Durability::Sync),
        o => Err(format!("unknown durability '{o}' (expected async or sync)")),
    }
}

/// The `--durability` text of `d`.
#[must_use]
pub fn durability_text(d: Durability) -> &'static str {
    match d {
        Durability::Async => "async",
        Durability::Sync => "sync",
    }
}

impl EngineSpec {
    /// The spec of an engine configured as `c`, with the WAL where `separate_wal` says, the
    /// timing model and the write path.
    ///
    /// # Panics
    /// If `c` sets a knob the flags do not (a spec would not carry it).
    #[must_use]
    pub fn from_config(
        c: &Config,
        separate_wal: bool,
        pacing: Option<Pacing>,
        write_path: Path,
    ) -> EngineSpec {
        let d = Config::default();
        assert!(
            c.dw_pages == d.dw_pages
                && c.wal_region_bytes.is_none()
                && c.async_flush_bytes == d.async_flush_bytes,
            "an engine configuration the flags can give"
        );
        EngineSpec {
            pool: c.pool_bytes,
            wal_limit: c.wal_limit_bytes,
            durability: durability_text(c.durability).to_owned(),
            doublewrite: c.doublewrite,
            page_cleaner: c.page_cleaner,
            max_checkpoint_count: c.max_checkpoint_count,
            max_redo_bytes: c.max_redo_bytes,
            flushing: c.flushing.as_ref().map(|f| InnodbFlushing {
                io_capacity: f.io_capacity,
                io_capacity_max: f.io_capacity_max,
            }),
            separate_wal,
            pacing,
            write_path,
            record_cache: c.record_cache_bytes,
            blind_updates: c.blind_update_bytes,
        }
    }

    /// The engine configuration.
    ///
    /// # Errors
    /// [`Error::Usage`] naming `engine.durability`.
    ///
    /// # Panics
    /// Never: the pool is copied.
    pub fn config(&self) -> Result<Config, Error> {
        let durability = durability(&self.durability)
            .map_err(|e| Error::Usage(format!("engine.durability: {e}")))?;
        let c = Config {
            pool_bytes: self.pool,
            wal_limit_bytes: self.wal_limit,
            durability,
            doublewrite: self.doublewrite,
            page_cleaner: self.page_cleaner,
            max_checkpoint_count: self.max_checkpoint_count,
            max_redo_bytes: self.max_redo_bytes,
            flushing: self.flushing.map(|f| nowa_engine::Flushing {
                io_capacity: f.io_capacity,
                io_capacity_max: f.io_capacity_max,
                ..nowa_engine::Flushing::default()
            }),
            record_cache_bytes: self.record_cache,
            blind_update_bytes: self.blind_updates,
            ..Config::default()
        };
        assert_eq!(c.pool_bytes, self.pool, "the pool as resolved");
        assert_eq!(
            c.blind_update_bytes, self.blind_updates,
            "the blind-update memory as resolved"
        );
        Ok(c)
    }

    /// Checks every field against its flag's range; `op` and `seed` are the run's (the
    /// deferral estimate and the placement seed of the out-of-place store).
    ///
    /// # Errors
    /// [`Error::Usage`]: `engine.field: why`.
    pub fn check(&self, op: f64, seed: u64) -> Result<(), Error> {
        self.config()?;
        let ranges = [
            ("pool", self.pool),
            ("wal_limit", self.wal_limit.unwrap_or(1 << 20)),
        ];
        for (field, v) in ranges {
            if !(1 << 20..=1 << 50).contains(&v) {
                return Err(Error::Usage(format!(
                    "engine.{field}: {v} is not in [1 MiB, 1 PiB]"
                )));
            }
        }
        if self.separate_wal && self.wal_limit.is_none() {
            return Err(Error::Usage(
                "engine.wal_limit: a separate WAL device needs its size".into(),
            ));
        }
        self.store(op, seed, None).map(|_| ())
    }

    /// The store builder of the write path; `frozen` is SepFrozen's model (`--frozen-model`),
    /// which a spec names but does not hold.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the first bad `engine.write_path.oop` field.
    ///
    /// # Panics
    /// If the builder is of another write path (a bug).
    pub fn store(
        &self,
        op: f64,
        seed: u64,
        frozen: Option<FrozenHook>,
    ) -> Result<Box<dyn StoreBuilder>, Error> {
        let prefixed = |e: Error| match e {
            Error::Usage(m) => Error::Usage(format!("engine.{m}")),
            e => e,
        };
        let b: Box<dyn StoreBuilder> = match &self.write_path {
            Path::InPlace => Box::new(nowa_engine::in_place_store()),
            Path::Oop(o) => {
                let mut c = Oop::to_config(o, op, seed).map_err(prefixed)?;
                c.frozen = frozen;
                Box::new(nowa_engine::out_of_place_store(c))
            }
        };
        assert_eq!(
            b.kind() == nowa_engine::WritePathKind::OutOfPlace,
            matches!(self.write_path, Path::Oop(_)),
            "the store of the spec's write path"
        );
        Ok(b)
    }

    /// The zone size out of place.
    #[must_use]
    pub fn zone_bytes(&self) -> Option<u64> {
        match &self.write_path {
            Path::InPlace => None,
            Path::Oop(o) => Some(o.zone_size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_converts_back_to_the_same_spec() {
        let c = Config {
            pool_bytes: 8 << 20,
            wal_limit_bytes: Some(16 << 20),
            durability: Durability::Sync,
            page_cleaner: false,
            max_checkpoint_count: 8,
            ..Config::default()
        };
        let s = EngineSpec::from_config(&c, false, None, Path::InPlace);
        assert_eq!(s.durability, "sync");
        let back = s.config().expect("valid");
        assert_eq!(
            EngineSpec::from_config(&back, false, None, Path::InPlace),
            s
        );
        assert!(s.check(0.07, 1).is_ok());
        let bad = EngineSpec {
            durability: "eventual".into(),
            ..s.clone()
        };
        let e = bad.check(0.07, 1).expect_err("bad durability");
        assert!(e.to_string().starts_with("engine.durability: "), "{e}");
        let tiny = EngineSpec { pool: 4096, ..s };
        assert!(tiny
            .check(0.07, 1)
            .expect_err("tiny pool")
            .to_string()
            .starts_with("engine.pool"));
    }
}
