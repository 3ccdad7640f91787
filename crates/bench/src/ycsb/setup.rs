//! Before the measured phase: the engine on its device (and separate WAL device), the load, the
//! dataset size estimate that sizes devices, and the simulated device's pacing.

use super::values::{key_of, make_value};
use super::{Device, WritePath, YcsbError, YcsbSpec};
use crate::paced::Paced;
use nowa_device::timing::{busy_secs_between, ChipParams, TimingModel};
use nowa_device::DeviceCounters;
use nowa_engine::{out_of_place_store, Engine};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The simulated SSD's timing model ([`crate::paced`]) and whether it paces the run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pacing {
    /// Delay every I/O until the model's timeline has caught up (OPS then reflect the device's
    /// work); false: the model is only consulted for the device-bound throughput.
    pub paced: bool,
    /// Media write bandwidth, bytes per second (the SSD's own GC copies count).
    pub media_bytes_per_sec: f64,
    /// Read bandwidth, bytes per second.
    pub read_bytes_per_sec: f64,
    /// Flash chips timed by their own latencies (a FEMU or MQSim preset) instead of one media
    /// server at the bandwidths above (None, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chips: Option<ChipParams>,
}

impl Default for Pacing {
    /// Paced, 1 GB/s media writes, 3 GB/s reads: the default of `nowa ycsb` and `nowa table1`.
    fn default() -> Self {
        Pacing {
            paced: true,
            media_bytes_per_sec: 1e9,
            read_bytes_per_sec: 3e9,
            chips: None,
        }
    }
}

impl Pacing {
    /// The one timing model this pacing stands for: the chips when set, else one chip timed by
    /// the bandwidths; no controller latency (throughput pacing).
    #[must_use]
    pub fn model(&self) -> TimingModel {
        TimingModel {
            chips: self.chips,
            ..TimingModel::bandwidth_only(self.media_bytes_per_sec, self.read_bytes_per_sec)
        }
    }

    /// Seconds the device is busy, by the timing model, for the I/O between two snapshots.
    /// The one place the bench drivers consult the model.
    ///
    /// # Panics
    /// If a bandwidth is not positive and finite (the flags refuse such values).
    #[must_use]
    pub fn busy_secs(&self, from: &DeviceCounters, to: &DeviceCounters) -> f64 {
        busy_secs_between(&self.model(), from, to)
            .expect("pacing bandwidths and chip presets are valid")
    }
}

/// `dev` as the run sees it: wrapped in [`Paced`] when `pacing` asks for it. The second value
/// restarts the timeline after the load ([`Paced::reset`]).
///
/// # Panics
/// Never for the flags' pacings: their bandwidths are positive and their chip presets valid.
#[must_use]
pub fn pace(dev: Device, pacing: Option<&Pacing>) -> (Device, Option<Arc<Paced>>) {
    match pacing {
        Some(p) if p.paced => {
            let paced = Arc::new(
                Paced::with_model(dev, p.model())
                    .expect("pacing bandwidths and chip presets are valid"),
            );
            (paced.clone(), Some(paced))
        }
        _ => (dev, None),
    }
}

/// A separate in-memory WAL device for an engine with configuration `cfg` whose data device
/// has `data_capacity` bytes (the paper's setup: the device under test then holds only pages):
/// superblocks, the WAL region and two mapping snapshots (24 B per data page). Shared by
/// `nowa ycsb --separate-wal` and `nowa tpcc --separate-wal`.
///
/// # Panics
/// Never for a real configuration (the device always exceeds the WAL region).
#[must_use]
pub fn separate_wal_device(data_capacity: u64, cfg: &nowa_engine::Config) -> Device {
    let region = nowa_engine::wal_region_bytes(cfg);
    // Superblocks + WAL region + the mapping snapshots (two copies of a full and a delta
    // area; the engine's own figure).
    let snaps = nowa_engine::oop::snapshot_area_bytes(data_capacity);
    let bytes = (region + snaps).div_ceil(4096) * 4096 + (1 << 20);
    assert!(bytes > region, "the WAL device holds the WAL region");
    Arc::new(nowa_device::MemDevice::new(bytes))
}

/// Create the engine of `spec` on `dev` (formats the device).
///
/// # Errors
/// The engine's, e.g. a configuration the device cannot hold.
pub fn create_engine(dev: Device, spec: &YcsbSpec) -> Result<Engine, YcsbError> {
    let wal = spec
        .separate_wal
        .then(|| separate_wal_device(dev.geometry().capacity, &spec.engine));
    Ok(match &spec.store {
        WritePath::InPlace => Engine::create_with_wal(
            dev,
            wal,
            spec.engine.clone(),
            &nowa_engine::in_place_store(),
        )?,
        WritePath::OutOfPlace(o) => Engine::create_with_wal(
            dev,
            wal,
            spec.engine.clone(),
            &out_of_place_store(o.clone()),
        )?,
    })
}

/// Load `spec.records` records with sequential keys by the engine's bulk load (a sorted
/// bottom-up build: full leaves, no WAL record per put, durable when it returns), then
/// checkpoint. Stops early on Ctrl-C ([`crate::interrupt`]); returns the number of records
/// loaded.
///
/// # Errors
/// The engine's.
///
/// # Panics
/// If the loop loaded more records than asked (a bug).
pub fn load(
    engine: &Engine,
    spec: &YcsbSpec,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, YcsbError> {
    let mut value = vec![0u8; spec.value_size];
    let mut rng = spec.seed ^ 0x5EED;
    let records = (0..spec.records).map_while(|id| {
        if id % 65536 == 0 {
            progress(id);
            if crate::interrupt::requested() {
                return None;
            }
        }
        make_value(&mut value, spec.value_kind, id, 0, &mut rng);
        Some((key_of(id), value.clone()))
    });
    let loaded = engine.bulk_load(records)?;
    assert!(loaded <= spec.records, "loaded past the record count");
    engine.checkpoint()?;
    Ok(loaded)
}

/// Bytes the loaded dataset takes on the device: the loader fills leaves with
/// `leaf_records_per_page(8, value)` = (4096 - header) / (value + 22) records each (key, slot
/// and lengths per record),
/// plus 1% inner nodes. Device sizing (`--dataset-fill`, Table 1) depends on it.
///
/// # Panics
/// Never for `records < 2^51`: the estimate is a whole number of pages.
#[must_use]
pub fn estimate_dataset_bytes(records: u64, value_size: usize) -> u64 {
    let per_page = nowa_engine::leaf_records_per_page(8, value_size) as u64;
    let leaves = records.div_ceil(per_page);
    let bytes = (leaves + leaves / 100 + 1) * 4096;
    assert!(bytes >= 4096 && bytes % 4096 == 0);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::{KeyOrder, Mix, Stop, ValueKind};
    use nowa_engine::{Config, Durability, OopConfig};

    /// The separate log device holds the mapping snapshots the engine asks for: a 1 GiB
    /// out-of-place device with a 67 MiB pool (issue 16's NoWA fill runs) was refused with
    /// "log device too small" when they were sized at 24 B per page.
    #[test]
    fn separate_log_device_fits_the_snapshots_at_gib_scale() {
        for (capacity, pool) in [(1u64 << 30, 67u64 << 20), (4 << 30, 8 << 20)] {
            let spec = YcsbSpec {
                records: 1,
                value_size: 120,
                value_kind: ValueKind::Pattern,
                mix: Mix::A,
                theta: 0.8,
                key_order: KeyOrder::Scrambled,
                threads: 1,
                stop: Stop::Ops(1),
                durability: Durability::Async,
                durable_every: None,
                seed: 1,
                interval_secs: 1.0,
                engine: Config {
                    pool_bytes: pool,
                    ..Config::default()
                },
                store: WritePath::OutOfPlace(OopConfig {
                    zone_bytes: Some(1 << 20),
                    open_zones: 8,
                    nowa: true,
                    ..OopConfig::default()
                }),
                separate_wal: true,
                ack_log: None,
                pacing: None,
            };
            let dev: Device = Arc::new(nowa_device::MemDevice::new(capacity));
            let e = create_engine(dev, &spec);
            assert!(e.is_ok(), "capacity {capacity}, pool {pool}: {:?}", e.err());
        }
    }
}
