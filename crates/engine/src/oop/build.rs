//! Construction: placement limits from the device, the zone geometry at create, the
//! checkpoint state at open. Nothing is written here: `format` (create) and `recover`
//! (open, after every check of the open passed) write.

use super::bg::BgSignal;
use super::{Geo, OopConfig, OutOfPlaceStore, State, BS};
use crate::error::{ConfigError, Corruption, EngineError, MetaDamage, PlacementRefusal, Result};
use crate::format::meta::SNAP_ENTRY;
use crate::num::{u64_of, usize_of};
use crate::store::{OpenMode, StoreContext};
use nowa_device::{BlockDevice, DeviceError, Geometry};
use nowa_logspace::{
    Geometry as PlaceGeometry, Greedy, GreedyUntilUnit, PolicyKind, Space, VictimPolicy,
};
use parking_lot::{Mutex, RwLock};
use std::sync::Arc;

/// What construction found: the geometry, and at open the checkpoint state.
pub(super) struct Loaded {
    pub geo: Geo,
    pub db_id: u32,
    /// Open: the snapshot mapping, the copy it came from, its threshold and next seq, the
    /// GDT clock. None at create.
    pub snapshot: Option<Snapshot>,
    /// Open: why the current snapshot was rejected, if the older one was used.
    pub fallback: Option<Corruption>,
}

/// A loaded mapping snapshot and the record fields that go with it.
pub(super) struct Snapshot {
    pub map: super::map::PageMap,
    pub chain: super::snapshot::Chains,
    pub threshold: u64,
    pub next_seq: u64,
    pub clock: u64,
}

/// FDP handles used, and the open zones the device allows (a placement scheme: one per class,
/// refused when the device allows fewer).
fn placement_limits(g: &Geometry, cfg: &OopConfig) -> Result<(Option<u16>, u32)> {
    if let Some(f) = &cfg.frozen {
        let min = match f.base {
            super::FrozenBase::Bit => 4,
            super::FrozenBase::Dac => 2,
        };
        let other = cfg.placement.is_some() || cfg.gdt || cfg.nowa;
        if other || !(min..=nowa_logspace::MAX_CLASSES).contains(&f.classes) {
            return Err(ConfigError::FrozenPlacement { classes: f.classes }.into());
        }
    }
    if let Some(k) = cfg.placement {
        let refuse = |why| ConfigError::Placement { placement: k, why };
        if k.needs_future() {
            return Err(refuse(PlacementRefusal::NeedsFuture).into());
        }
        if cfg.gdt || cfg.nowa {
            return Err(refuse(PlacementRefusal::WithGdtOrNowa).into());
        }
    }
    let handles = if cfg.fdp_hints {
        g.placement_handles
    } else {
        None
    };
    let mut open_limit = cfg.zones_open();
    if let Some(h) = handles {
        // Handle 0 carries the WAL and metadata; zones use 1..h.
        open_limit = open_limit.min(u32::from(h).saturating_sub(1).max(1));
    }
    if let Some(m) = g.max_open_zones {
        // ZNS: the device's open-zone limit.
        open_limit = open_limit.min(m.max(1));
    }
    if let Some(f) = cfg
        .frozen
        .as_ref()
        .filter(|f| u32::from(f.classes) > open_limit)
    {
        return Err(ConfigError::FrozenPlacement { classes: f.classes }.into());
    }
    if let Some(k) = cfg.placement {
        let classes = k.build().classes();
        if open_limit < u32::from(classes) {
            return Err(ConfigError::Placement {
                placement: k,
                why: PlacementRefusal::TooManyClasses {
                    classes,
                    open_limit,
                },
            }
            .into());
        }
    }
    Ok((handles, open_limit))
}

/// The garbage-proportion trigger collects only zones whose own garbage reaches it: the victim
/// chooser must honor that filter (`UnitView::max_victim_valid`), as the FTL model requires
/// (`nowa_flash::ConfigError::PolicyWithoutFilter`). A chooser that cannot filter collects any
/// zone, often one almost all valid: a round frees about nothing, the trigger stays due, and
/// every write runs up to two rounds per zone (nowa-vopr seed 20,010,073, MiDAS: 8,808
/// foreground rounds in 4,651 operations).
fn check_gc_trigger(cfg: &OopConfig) -> Result<()> {
    if cfg.gc_garbage_proportion.is_none() {
        return Ok(());
    }
    let refused = match (&cfg.placement, &cfg.gc_victim) {
        (Some(nowa_logspace::PlacementKind::MiDas), _) => Some("midas's own".to_string()),
        (_, Some(k)) if !k.honors_victim_filter() => Some(k.to_string()),
        // NoWA's whole groups (`GroupGreedy`) ignore the filter.
        (_, None) if cfg.nowa => Some("nowa's group-greedy".to_string()),
        _ => None,
    };
    match refused {
        Some(victims) => Err(ConfigError::GcTriggerVictims { victims }.into()),
        None => Ok(()),
    }
}

/// The zone geometry of a new database.
/// Blocks of the mapping snapshots for `pages` mapped pages: (full area, one copy). Per
/// copy: a full area for every pid, and a delta area as large. Two copies are kept.
fn snapshot_blocks(pages: u64) -> (u64, u64) {
    let full_blocks = (pages * u64_of(SNAP_ENTRY)).div_ceil(BS) + 1;
    (full_blocks, 2 * full_blocks)
}

/// Bytes the mapping snapshots take (both copies) for a data device of `capacity` bytes:
/// what a separate log device needs besides its superblocks and WAL region.
#[must_use]
pub fn snapshot_area_bytes(capacity: u64) -> u64 {
    2 * snapshot_blocks(capacity / BS).1 * BS
}

fn create_geometry(ctx: &StoreContext, cfg: &OopConfig, open_limit: u32) -> Result<Geo> {
    let g = ctx.device.geometry();
    let zone_bytes = cfg
        .zone_bytes
        .or(g.reclaim_unit_size)
        .or(g.zone_size)
        .unwrap_or(1 << 20);
    if zone_bytes % BS != 0 || zone_bytes < 8 * BS || zone_bytes / BS > u64::from(u32::MAX) / BS {
        return Err(ConfigError::ZoneSize { bytes: zone_bytes }.into());
    }
    let zp = zone_bytes / BS;
    let l = ctx.layout;
    let end = l.data_start + l.data_pages;
    // Zones the space limit allows (and a zone area addressable by 32-bit mapping entries).
    let limit_zones = cfg
        .space_limit_bytes
        .map_or(u64::MAX, |b| b / zone_bytes)
        .min((u64::from(u32::MAX) - 1) / zp);
    let pages_bound = l.data_pages.min(limit_zones.saturating_mul(zp));
    let (full_blocks, meta_blocks) = snapshot_blocks(pages_bound);
    let zone_first = l.data_start.div_ceil(zp) * zp;
    if let Some((m, first)) = &ctx.meta_device {
        let need = (first + 2 * meta_blocks) * BS;
        if need > m.geometry().capacity {
            return Err(ConfigError::LogDeviceTooSmall {
                bytes: m.geometry().capacity,
                need,
            }
            .into());
        }
    }
    let meta_here = if ctx.meta_device.is_some() {
        0
    } else {
        2 * meta_blocks
    };
    let zones = (end.saturating_sub(zone_first + meta_here) / zp).min(limit_zones);
    let spare =
        u64::from(open_limit) + u64::from(OutOfPlaceStore::reserve_for(cfg, open_limit)) + 1;
    if zones < spare + 2 || zones > u64::from(u32::MAX) {
        return Err(ConfigError::TooFewZones {
            zones,
            zone_bytes,
            need: spare + 1,
        }
        .into());
    }
    let zones32 = crate::num::u32_from_u64(zones);
    Ok(Geo {
        zone_first,
        zone_pages: zp,
        zones: zones32,
        meta_start: match &ctx.meta_device {
            Some((_, first)) => *first,
            None => zone_first + zones * zp,
        },
        meta_blocks,
        full_blocks,
        capacity: ((zones - spare) * (zp - 1)).min(pages_bound),
        meta_on_log: ctx.meta_device.is_some(),
    })
}

/// The DB GC victim policy: NoWA's `GroupGreedy`, else the configured one, else greedy (GDT:
/// its batch policy, `GreedyUntilUnit`), or SepBIT's cost-benefit with a placement scheme.
fn victim_policy(cfg: &OopConfig) -> Box<dyn VictimPolicy> {
    if cfg.nowa {
        // NoWA's whole groups (section 5), its deferred compensation in the policy.
        return Box::new(nowa_logspace::GroupGreedy::new(cfg.defer_compensation));
    }
    match (&cfg.gc_victim, cfg.placement, cfg.gdt) {
        (Some(k), _, _) => k.build(cfg.seed),
        (None, Some(_), _) => PolicyKind::CostBenefitSepBit.build(cfg.seed),
        (None, None, _) if cfg.frozen.is_some() => PolicyKind::CostBenefitSepBit.build(cfg.seed),
        (None, None, true) => Box::new(GreedyUntilUnit::default()),
        (None, None, false) => Box::new(Greedy::default()),
    }
}

/// Fresh in-memory state for `geo`.
fn empty_state(geo: &Geo, cfg: &OopConfig, open_limit: u32) -> State {
    let units = usize_of(u64::from(geo.zones));
    let cap = usize_of(geo.capacity);
    let zone_slots = crate::num::u32_from_u64(geo.zone_pages - 1);
    let pgeo = PlaceGeometry {
        logical_pages: geo.capacity,
        unit_pages: zone_slots,
        units: geo.zones,
        gc_in_order: false,
    };
    let mut space = Space::new(
        geo.zones,
        crate::num::u32_from_u64((geo.zone_pages - 1) * BS),
        // One victim mechanism with the FTL (logspace); GDT's batch is a policy there.
        victim_policy(cfg),
    );
    if let Some(gp) = cfg.gc_garbage_proportion {
        assert!(
            (0.0..1.0).contains(&gp),
            "garbage proportion {gp} in [0, 1)"
        );
    }
    space.set_max_victim_valid(space.unit_capacity());
    let (placer, stash) = super::place::build_placer(cfg, &pgeo, open_limit);
    State {
        space: Mutex::new(space),
        placer: Mutex::new(placer),
        stash,
        hot_now: 0,
        map: super::map::PageMap::new(geo.capacity, geo.zone_first),
        zone_seq: vec![0; units],
        next_group: 1,
        wh: if cfg.gdt {
            vec![[0; 4]; cap]
        } else {
            Vec::new()
        },
        clock: 1,
        zone_wp: vec![0; units],
        open: Vec::new(),
        cursor: 0,
        next_seq: 1,
        snap: super::snapshot::Chains::NEW,
        rng: cfg.seed | 1,
        chains: std::collections::HashMap::new(),
        head_spans: std::collections::HashMap::new(),
    }
}

/// The configuration against the device, before anything is read: (placement handles, open
/// zone limit).
fn check_config(ctx: &StoreContext, g: &Geometry, cfg: &OopConfig) -> Result<(Option<u16>, u32)> {
    if g.zone_size.is_some() && ctx.meta_device.is_none() {
        return Err(ConfigError::ZonedNeedsLogDevice.into());
    }
    if let (Some(zs), Some(want)) = (g.zone_size, cfg.zone_bytes) {
        if zs != want {
            return Err(ConfigError::ZoneSizeMismatch {
                required: zs,
                requested: want,
                why: "the device's zone size",
            }
            .into());
        }
    }
    let limits = placement_limits(g, cfg)?;
    check_gc_trigger(cfg)?;
    if cfg.deltas && !cfg.packing {
        return Err(ConfigError::DeltasWithoutPacking.into());
    }
    if !(0.0..1.0).contains(&cfg.shared_wal_free) {
        return Err(ConfigError::SharedWalFree(cfg.shared_wal_free.to_string()).into());
    }
    Ok(limits)
}

impl OutOfPlaceStore {
    /// Build from the engine's context: lay out the zones (create) or load the checkpoint
    /// and roll the mapping forward over the zones written since (open). Never writes.
    ///
    /// # Errors
    /// `Config` (device, zone size, log device), `Corrupt` (metadata record, both mapping
    /// snapshots), device read errors.
    pub fn new(ctx: StoreContext, cfg: OopConfig) -> Result<Self> {
        let g = ctx.device.geometry().clone();
        let (handles, open_limit) = check_config(&ctx, &g, &cfg)?;
        let loaded = match ctx.mode {
            OpenMode::Create => Loaded {
                geo: create_geometry(&ctx, &cfg, open_limit)?,
                db_id: u32::try_from(ctx.create_id >> 32).unwrap_or(1) | 1,
                snapshot: None,
                fallback: None,
            },
            OpenMode::Open => Self::load_checkpoint(&ctx, &cfg)?,
        };
        let meta_dev = match (&ctx.meta_device, loaded.geo.meta_on_log) {
            (Some((m, _)), true) => m.clone(),
            (None, false) => ctx.device.clone(),
            (m, on_log) => {
                return Err(Corruption::StoreMeta(MetaDamage::MetaDevice {
                    on_log,
                    given: m.is_some(),
                })
                .into())
            }
        };
        let mut state = empty_state(&loaded.geo, &cfg, open_limit);
        // The last time any page the store holds was written (the timer is one past it).
        state.hot_now = ctx.write_timer.saturating_sub(1);
        let cfg_cache_bytes = if cfg.deltas { cfg.delta_cache_bytes } else { 0 };
        let store = OutOfPlaceStore {
            dev: ctx.device,
            meta_dev,
            counters: ctx.counters,
            geo: loaded.geo,
            db_id: loaded.db_id,
            handles,
            zoned: g.zone_size.is_some(),
            open_limit,
            st: RwLock::new(state),
            cfg,
            cache: Mutex::new(None),
            ckpt: Mutex::new(()),
            io: Mutex::new(()),
            bg: Mutex::new(None),
            bg_sig: Arc::new(BgSignal::default()),
            bg_error: Mutex::new(None),
            fallback: loaded.fallback,
            wlog: Default::default(),
            dcache: Mutex::new(super::dcache::Cache::new(cfg_cache_bytes)),
            yields: std::sync::OnceLock::new(),
            newest: std::sync::OnceLock::new(),
        };
        if let Some(snap) = loaded.snapshot {
            store.rebuild(snap)?;
        }
        Ok(store)
    }

    /// Create: start from a clean zone area (ZNS: reset every zone; else trim, where the
    /// device supports it).
    pub(super) fn format_zones(&self) -> Result<()> {
        if self.zoned {
            for z in 0..self.geo.zones {
                self.dev.zone_reset(self.zone_block(z) * BS)?;
            }
            return Ok(());
        }
        let (start, len) = (
            self.geo.zone_first * BS,
            u64::from(self.geo.zones) * self.zone_bytes(),
        );
        match self.dev.trim(start, len) {
            Ok(()) | Err(DeviceError::Unsupported(_)) => Ok(()),
            Err(e) => Err(EngineError::Device(e)),
        }
    }

    /// The devices a metadata record says the snapshots are on.
    pub(super) fn snapshot_device(ctx: &StoreContext, on_log: bool) -> Result<&dyn BlockDevice> {
        match (on_log, &ctx.meta_device) {
            (true, Some((l, _))) => Ok(&**l),
            (false, _) => Ok(&*ctx.device),
            (true, None) => Err(Corruption::StoreMeta(MetaDamage::MetaDevice {
                on_log: true,
                given: false,
            })
            .into()),
        }
    }
}
