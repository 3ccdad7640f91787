//! The out-of-place write path's flags, shared by the engine benchmarks (`nowa ycsb`, `nowa
//! tpcc`): flatten [`OopFlags`] into a command's args and build the store's configuration
//! with [`oop_config`] (the zone size is resolved on the device by [`zone_of`]).

use crate::placement::EnginePlacement;
use crate::{flags, Error};
use clap::Args;
use nowa_device::{BlockDevice, SimDevice};
use nowa_engine::{Compression, OopConfig};
use std::path::PathBuf;

fn usage(m: impl Into<String>) -> Error {
    Error::Usage(m.into())
}

/// The largest space limit a flag accepts.
const MAX_BYTES: u64 = 1 << 50;

/// The out-of-place write path's flags.
#[derive(Args, Debug, Clone)]
pub struct OopFlags {
    /// Write path: inplace (fixed home per page, doublewrite) or oop (out of place: zones,
    /// DB GC, no doublewrite).
    #[arg(long, default_value = "inplace", value_enum)]
    pub write_path: PathKind,
    /// Out of place: per-page compression (off, lz4, zstd).
    #[arg(long, default_value = "off", value_parser = flags::parsed::<Compression>())]
    pub compression: Compression,
    /// Out of place: 4 KiB page packing of compressed pages (on, off). Off: every page,
    /// compressed or not, takes a 4 KiB slot of its own.
    #[arg(long, default_value = "on", value_parser = flags::on_off, action = clap::ArgAction::Set)]
    pub packing: bool,
    /// Out of place: background DB GC thread (on, off). Off: GC runs only in the writer
    /// that needs space (foreground).
    #[arg(long, default_value = "on", value_parser = flags::on_off, action = clap::ArgAction::Set)]
    pub background_gc: bool,
    /// Out of place: zone size (the DB GC unit): a size (a multiple of 4 KiB, 32 KiB to
    /// 4 GiB), `auto` (the device's FDP RU size / ZNS zone size; on the conventional simulated
    /// SSD its GC unit (superblock) split over --open-zones, so an active group of open zones
    /// is never smaller than the unit; 1 MiB where the device tells no unit) or `infer` (the
    /// GC unit found by the ZNS-like sweep of `nowa infer-gc-unit`, run on identical
    /// simulated devices).
    #[arg(long, default_value = "auto", value_parser = crate::devices::zone_size)]
    pub zone_size: crate::devices::ZoneSize,
    /// Out of place: zones appended concurrently (the active group).
    #[arg(long, default_value = "4", value_parser = flags::count::<u32>(1, 256))]
    pub open_zones: u32,
    /// Out of place: NoWA (active groups, group GC with compensation writes).
    #[arg(long)]
    pub nowa: bool,
    /// Out of place: GDT (deathtime-grouped placement and GC, write history in page headers).
    #[arg(long)]
    pub gdt: bool,
    /// Out of place: sub-page deltas (issue 31): a write-back that changed few 64-byte chunks
    /// of a page is written as a delta over the page's chain, rebuilt on a miss.
    #[arg(long)]
    pub deltas: bool,
    /// Out of place, --deltas: most deltas per page before it is written whole again (each
    /// costs a read on a miss).
    #[arg(long, default_value = "8", value_parser = flags::count::<u32>(1, 63), requires = "deltas")]
    pub delta_chain: u32,
    /// Out of place, --deltas: a new delta replaces the page's newest delta while their
    /// merged payload stays within this many bytes (0: never merge).
    #[arg(long, default_value = "768", value_parser = flags::count::<u32>(0, 4096), requires = "deltas")]
    pub delta_merge: u32,
    /// Out of place, --deltas: memory for the delta cache (the cumulative change of chained
    /// pages, so a miss reads the base alone), beside --pool; 0: off.
    #[arg(long, default_value = "0", value_parser = flags::size(0, MAX_BYTES), requires = "deltas")]
    pub delta_cache: u64,
    /// Out of place: trim and free a zone as soon as every copy in it died, instead of when
    /// DB GC needs free zones (the SSD then stops holding dead deltas as valid data).
    #[arg(long)]
    pub trim_dead_zones: bool,
    /// Out of place, NoWA: defer compensation writes until the estimated SSD free space runs
    /// short (estimate: device capacity x (1 + --op)), instead of compensating whole groups
    /// at once.
    #[arg(long, requires = "nowa")]
    pub defer_compensation: bool,
    /// Out of place: bound the store's zone area (e.g. 1.25 times the dataset): DB GC starts
    /// when it is full, not when the device is. Default: the whole device.
    #[arg(long, value_parser = flags::size_4k(1 << 20, MAX_BYTES))]
    pub space_limit: Option<u64>,
    /// Out of place, NoWA with the WAL on the same conventional SSD (no --separate-wal, no
    /// FDP, not ZNS): background DB GC keeps this share of the zones free (trimmed), so the
    /// SSD's own GC finds superblocks without valid data although the WAL's blocks break the
    /// groups' alignment (0: the GC reserve alone).
    #[arg(long, default_value_t = nowa_engine::SHARED_WAL_FREE, value_parser = flags::fraction(0.0, true, 1.0, false))]
    pub shared_wal_free: f64,
    /// Out of place: place every user write and GC relocation with a scheme of the shared
    /// log-structured space (nosep, sepgc|2r, dac[:N], dac-paper[:N], warcip[:N], sepbit[:N],
    /// sfr[:N], multiqueue[:N], midas (7 classes, its own victims), or sepfrozen-bit[:N] /
    /// sepfrozen-dac[:N] with --frozen-model; one open zone per class: 6 by default, 2 for
    /// sepgc, 1 for nosep, so --open-zones is ignored). Default: random among --open-zones
    /// (or --gdt, --nowa).
    #[arg(long, value_parser = crate::placement::engine_placement, conflicts_with_all = ["nowa", "gdt"])]
    pub placement: Option<crate::placement::EnginePlacement>,
    /// Out of place, --placement sepfrozen-bit|sepfrozen-dac: the trained frozen-page model
    /// (`nowa frozen train`, TWL 1 or 2) that judges each DB GC victim's pages from the
    /// hotness records in their headers; or `online[:HORIZON[:EVERY[:FEATURES]]]`: no model
    /// file, an SGD model retrained during the run from the outcomes observed (a version
    /// still valid HORIZON DB page writes after its write is frozen; default 64k, a refit
    /// at GC per EVERY new labels, default 16k; FEATURES default vd,ai,mi,ac,mc).
    #[arg(long, value_name = "MODEL.json")]
    pub frozen_model: Option<PathBuf>,
    /// With --frozen-model MODEL.json: judge a page frozen when the model's probability is
    /// above P, in (0, 1) (default: the threshold stored in the model, 0.5 unless trained
    /// with another; 0.5 = scikit-learn's `predict`, the paper's).
    #[arg(long, value_name = "P", value_parser = flags::fraction(0.0, true, 1.0, true))]
    pub frozen_threshold: Option<f64>,
    /// Out of place: DB GC victim policy (greedy, cost-benefit, cb-sepbit, fifo, ...).
    /// Default: greedy, or cb-sepbit (SepBIT's (1-u)/u sqrt(age)) with --placement.
    #[arg(long, value_parser = crate::placement::gc_victim)]
    pub gc_victim: Option<nowa_logspace::PolicyKind>,
    /// Out of place: DB GC trigger: free (free zones below the reserve) or gp[:THETA] (also
    /// when the sealed zones' garbage proportion exceeds THETA, default 0.15, collecting
    /// zones with GP >= THETA, as SepBIT's log). Default: free, gp with SepFrozen (the
    /// paper's setup).
    #[arg(long, value_parser = crate::placement::gc_trigger)]
    pub gc_trigger: Option<crate::placement::GcTrigger>,
}

/// `--write-path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PathKind {
    /// A fixed home per page, doublewrite.
    #[value(name = "inplace", alias = "in-place")]
    InPlace,
    /// Out of place: zones, DB GC.
    #[value(name = "oop", alias = "out-of-place")]
    OutOfPlace,
}

impl OopFlags {
    /// `--zone-size` on the device (`nowa ycsb` and `nowa tpcc`).
    ///
    /// # Errors
    /// As [`crate::devices::resolve_zone_size`].
    pub fn zone_of(&self, dev: &dyn BlockDevice, sim: Option<&SimDevice>) -> Result<u64, Error> {
        crate::devices::resolve_zone_size(
            self.zone_size,
            self.open_zones,
            dev,
            sim.map(|s| s.config()),
        )
    }

    /// The spec of the write path `cfg` (from [`oop_config`]) with its zone size resolved.
    ///
    /// # Panics
    /// If the spec loses the zone size (a bug of the conversion).
    #[must_use]
    pub fn spec(&self, cfg: &OopConfig, zone: u64) -> crate::ycsb::Oop {
        let mut c = cfg.clone();
        c.zone_bytes = Some(zone);
        let mut o = crate::ycsb::Oop::from_config(&c);
        o.frozen_model.clone_from(&self.frozen_model);
        o.frozen_threshold = self.frozen_threshold;
        assert_eq!(o.zone_size, zone, "the spec names the resolved zone size");
        o
    }
}

/// Switches of one write path given to the other, which would ignore them: out-of-place
/// switches in place, `--no-doublewrite` out of place (no doublewrite buffer to turn off).
fn refuse_ignored_switches(o: &OopFlags, no_doublewrite: bool) -> Result<(), Error> {
    if o.write_path != PathKind::InPlace {
        if no_doublewrite {
            return Err(usage(
                "--no-doublewrite needs --write-path inplace (out of place writes no doublewrite buffer)",
            ));
        }
        return Ok(());
    }
    let oop_only = [
        ("--compression", o.compression != Compression::Off),
        ("--nowa", o.nowa),
        ("--gdt", o.gdt),
        ("--deltas", o.deltas),
        ("--defer-compensation", o.defer_compensation),
        ("--space-limit", o.space_limit.is_some()),
        ("--placement", o.placement.is_some()),
        ("--gc-victim", o.gc_victim.is_some()),
        ("--gc-trigger", o.gc_trigger.is_some()),
        ("--frozen-model", o.frozen_model.is_some()),
        ("--frozen-threshold", o.frozen_threshold.is_some()),
    ];
    match oop_only.iter().find(|(_, set)| *set) {
        Some((flag, _)) => Err(usage(format!("{flag} needs --write-path oop"))),
        None => Ok(()),
    }
}

/// The out-of-place configuration `--write-path` and its switches ask for (None: in place),
/// after refusing out-of-place switches an in-place run would ignore; `op` is the SSD OP
/// estimate of `--defer-compensation` (shared by `nowa ycsb` and `nowa tpcc`); and the
/// in-place switch an out-of-place run would ignore (`no_doublewrite`: out of place has no
/// doublewrite buffer to turn off). SepFrozen's model is loaded (and refused here, naming the
/// flag) and its hook set; the run builds its own from the spec.
///
/// # Errors
/// [`Error::Usage`] naming the flag at fault.
///
/// # Panics
/// If SepFrozen and a placement scheme were both set (clap refuses the pair).
pub fn oop_config(
    o: &OopFlags,
    op: f64,
    seed: u64,
    no_doublewrite: bool,
) -> Result<Option<OopConfig>, Error> {
    refuse_ignored_switches(o, no_doublewrite)?;
    if o.write_path == PathKind::InPlace {
        return Ok(None);
    }
    let frozen = crate::frozen::engine::frozen_run(o.placement, o.frozen_model.as_deref(), seed)?;
    let frozen = crate::frozen::engine::with_threshold(frozen, o.frozen_threshold)?;
    let placement = match o.placement {
        Some(EnginePlacement::Scheme(k)) => Some(k),
        _ => None,
    };
    assert!(
        placement.is_none() || frozen.is_none(),
        "SepFrozen replaces the placement scheme"
    );
    if placement == Some(nowa_logspace::PlacementKind::MiDas) {
        let own = [
            ("--gc-victim", o.gc_victim.is_some()),
            ("--gc-trigger", o.gc_trigger.is_some_and(|t| t.0.is_some())),
        ];
        if let Some((flag, _)) = own.iter().find(|(_, set)| *set) {
            return Err(usage(format!(
                "{flag}: midas picks its own GC victims (FIFO per group, the least valid zone \
                 in the last group) when free zones run short"
            )));
        }
    }
    // SepFrozen's paper collects when the garbage proportion exceeds 15%.
    let gp_default = frozen.as_ref().map(|_| 0.15);
    let gp = o.gc_trigger.map_or(gp_default, |t| t.0);
    refuse_unfiltered_gp(o, gp)?;
    assert!(
        gp.is_none_or(|g| g > 0.0 && g < 1.0),
        "the trigger parser's range"
    );
    let cfg = OopConfig {
        open_zones: o.open_zones,
        compression: o.compression,
        nowa: o.nowa,
        gdt: o.gdt,
        deltas: o.deltas,
        delta_chain: o.delta_chain,
        delta_merge: o.delta_merge,
        delta_cache_bytes: o.delta_cache,
        trim_dead_zones: o.trim_dead_zones,
        packing: o.packing,
        background_gc: o.background_gc,
        defer_compensation: o.defer_compensation,
        // The SSD's OP for the deferral estimate: the simulated SSD's, else the default.
        ssd_op: op,
        seed,
        space_limit_bytes: o.space_limit,
        shared_wal_free: o.shared_wal_free,
        placement,
        gc_victim: o.gc_victim.clone(),
        gc_garbage_proportion: gp,
        frozen: frozen.as_ref().map(|f| f.hook.clone()),
        ..OopConfig::default()
    };
    Ok(Some(cfg))
}

/// The garbage-proportion trigger collects only zones at its threshold: victims it cannot
/// filter are refused by the engine (`ConfigError::GcTriggerVictims`); name the flag here.
fn refuse_unfiltered_gp(o: &OopFlags, gp: Option<f64>) -> Result<(), Error> {
    if gp.is_none() {
        return Ok(());
    }
    if let Some(v) = o.gc_victim.as_ref().filter(|v| !v.honors_victim_filter()) {
        return Err(usage(format!(
            "--gc-victim {v}: the garbage-proportion trigger (--gc-trigger gp) collects only \
             zones at its threshold and needs greedy, cost-benefit or cb-sepbit"
        )));
    }
    if o.nowa {
        return Err(usage(
            "--gc-trigger gp: NoWA collects whole zone groups (group-greedy), which the \
             garbage-proportion filter cannot restrict",
        ));
    }
    Ok(())
}
