//! FTL configuration: geometry, over-provisioning, GC policy and trigger, placement, streams,
//! write buffer, mode.

use nowa_logspace::{PlacementKind, PolicyKind};
use serde::{Deserialize, Serialize};

/// Bytes per flash page / logical block. Everything in this crate counts 4 KiB pages.
pub const PAGE_SIZE: u64 = 4096;

/// What the garbage collector erases at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum GcUnit {
    /// A superblock: one erase block on every channel x chip x plane (the common design).
    Superblock,
    /// A single erase block ("partial GC", plan-ssd-parallelism.md).
    Block,
}

/// Where GC-relocated pages are written (without a placement scheme).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum GcFrontier {
    /// Into the host write frontier of the victim's stream: relocated cold data and fresh host
    /// data share units (ssd-iq.md's "Naive Greedy").
    Shared,
    /// Into one GC frontier of its own (2R: a separate region for GC data).
    Separate,
    /// Into one GC frontier per host stream, keeping streams (FDP handles) isolated.
    PerStream,
}

/// A GC frontier name that is not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown GC frontier '{text}' (expected shared, separate or per-stream)")]
pub struct GcFrontierParseError {
    /// The text given.
    pub text: String,
}

impl std::str::FromStr for GcFrontier {
    type Err = GcFrontierParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "shared" => Ok(GcFrontier::Shared),
            "separate" => Ok(GcFrontier::Separate),
            "per-stream" => Ok(GcFrontier::PerStream),
            _ => Err(GcFrontierParseError { text: s.to_owned() }),
        }
    }
}

/// When the FTL collects garbage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum GcTrigger {
    /// A fixed-capacity SSD: GC runs when a frontier needs a unit and at most
    /// `min_free_units` are free.
    FreeUnits,
    /// SepBIT's log: it grows until its garbage proportion (garbage in sealed units over all
    /// written pages) exceeds the threshold; then, after a user write, one GC round collects
    /// victims among the sealed units whose own GP is at least the threshold.
    GarbageProportion(f64),
}

/// Conventional (the FTL does GC) or zoned (host-managed zones, no device GC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Mode {
    /// A block device with an FTL.
    Conventional,
    /// ZNS: zones are GC units, writes sequential per zone, host resets zones.
    Zoned {
        /// Most zones open at once.
        max_open_zones: u32,
    },
}

/// A configuration the model cannot run. Every message is one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Zero logical pages.
    #[error("logical capacity must be > 0 pages")]
    ZeroCapacity,
    /// Zero pages per block or blocks per superblock.
    #[error("pages per block and blocks per superblock must be > 0")]
    ZeroGeometry,
    /// Zero streams.
    #[error("streams must be >= 1")]
    ZeroStreams,
    /// Zero reserved free units.
    #[error("min free units must be >= 1 (GC needs a unit to relocate into)")]
    ZeroMinFree,
    /// Zero victims per GC round.
    #[error("victims per GC round must be >= 1")]
    ZeroVictims,
    /// The GC unit exceeds the device.
    #[error("GC unit of {unit_pages} pages ({} MiB) is larger than the device ({logical_pages} pages)", (unit_pages * PAGE_SIZE) >> 20)]
    UnitLargerThanDevice {
        /// Pages per GC unit.
        unit_pages: u64,
        /// Logical pages.
        logical_pages: u64,
    },
    /// The GC unit is too large for 32-bit page numbers.
    #[error("GC unit of {unit_pages} pages is too large")]
    UnitTooLarge {
        /// Pages per GC unit.
        unit_pages: u64,
    },
    /// Negative or non-finite over-provisioning.
    #[error("over-provisioning must be >= 0, got {op}")]
    BadOp {
        /// The value given.
        op: f64,
    },
    /// Not enough spare units for open frontiers, reserved units and garbage.
    #[error("over-provisioning too small: {spare_units} spare units of {unit_pages} pages, need >= {needed} ({open} open units + {reserved} reserved free + 1); raise --op or shrink the GC unit")]
    OpTooSmall {
        /// Spare units available.
        spare_units: u64,
        /// Pages per unit.
        unit_pages: u64,
        /// Spare units needed.
        needed: u64,
        /// Open units.
        open: u64,
        /// Reserved free units.
        reserved: u64,
    },
    /// Zero open zones in zoned mode.
    #[error("max open zones must be >= 1")]
    ZeroOpenZones,
    /// A feature the chosen mode does not have.
    #[error("{what} is not available {with}")]
    Unsupported {
        /// The feature.
        what: &'static str,
        /// With what it is not available.
        with: &'static str,
    },
    /// More physical pages than 32-bit page numbers reach.
    #[error("device too large for this model: {physical_pages} physical pages (max 2^32-1)")]
    TooLarge {
        /// Physical pages.
        physical_pages: u64,
    },
    /// Garbage-proportion threshold outside (0, 1).
    #[error("garbage-proportion threshold must be in (0, 1), got {threshold}")]
    BadThreshold {
        /// The value given.
        threshold: f64,
    },
    /// A GC trigger the victim policy cannot serve.
    #[error("the garbage-proportion trigger needs a policy that filters victims (greedy, cost-benefit, cb-sepbit), got {policy}")]
    PolicyWithoutFilter {
        /// The policy.
        policy: String,
    },
}

/// Everything that defines a simulated SSD.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FtlConfig {
    /// Logical capacity in 4 KiB pages (what the host sees).
    pub logical_pages: u64,
    /// Over-provisioning as spare/logical: physical = logical x (1 + op). Ignored in zoned mode
    /// and with the garbage-proportion trigger (the log sizes itself).
    pub op: f64,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Erase blocks per superblock = channels x chips x planes.
    pub blocks_per_superblock: u32,
    /// What GC erases at once.
    pub gc_unit: GcUnit,
    /// Victim selection.
    pub policy: PolicyKind,
    /// None: the policy's default (shared for greedy, separate for the others). Ignored with a
    /// placement scheme.
    pub gc_frontier: Option<GcFrontier>,
    /// A placement scheme (classes = open units) instead of streams and GC frontiers.
    #[serde(default)]
    pub placement: Option<PlacementKind>,
    /// When GC runs.
    #[serde(default = "default_trigger")]
    pub gc_trigger: GcTrigger,
    /// Victims collected per GC round (k).
    #[serde(default = "one")]
    pub victims_per_round: u32,
    /// Count GC moves per page for FAR (packed into the reverse map's spare LBA bits; a few
    /// percent of speed).
    #[serde(default = "yes")]
    pub track_far: bool,
    /// Host write streams (multi-stream / FDP reclaim-unit handles). 1 = conventional SSD.
    pub streams: u16,
    /// Device write buffer in pages (LRU that absorbs rewrites); 0 = none.
    pub write_buffer_pages: u64,
    /// GC runs while the free-unit count is at or below this watermark (>= 1).
    pub min_free_units: u32,
    /// Conventional or zoned.
    pub mode: Mode,
    /// Seed of randomized policies.
    pub seed: u64,
}

fn default_trigger() -> GcTrigger {
    GcTrigger::FreeUnits
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            logical_pages: 1 << 20,
            op: 0.07,
            pages_per_block: 256,
            blocks_per_superblock: 8,
            gc_unit: GcUnit::Superblock,
            policy: PolicyKind::Greedy,
            gc_frontier: None,
            placement: None,
            gc_trigger: GcTrigger::FreeUnits,
            victims_per_round: 1,
            track_far: true,
            streams: 1,
            write_buffer_pages: 0,
            min_free_units: 1,
            mode: Mode::Conventional,
            seed: 42,
        }
    }
}

/// The resolved geometry of a configuration, with every OP form spelled out.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Layout {
    /// Logical pages.
    pub logical_pages: u64,
    /// Physical pages.
    pub physical_pages: u64,
    /// Pages per GC unit.
    pub unit_pages: u32,
    /// GC units.
    pub units: u32,
    /// Logical capacity in units.
    pub logical_units: f64,
    /// alpha = physical / logical.
    pub alpha: f64,
    /// (physical - logical) / logical.
    pub op_spare_over_logical: f64,
    /// (physical - logical) / physical.
    pub op_spare_over_physical: f64,
    /// Host frontiers + GC frontiers (or placement classes) that hold an open unit.
    pub open_frontiers: u32,
    /// Free units GC keeps in reserve.
    pub reserved_units: u32,
    /// Where GC copies go without a placement scheme.
    pub gc_frontier: GcFrontier,
}

impl Layout {
    /// Spare space as the GC really sees it: open and reserved free units do not hold data
    /// (REFERENCE.md: alpha_eff = (T - (reserved + open) x Np) / U), for `in_use` logical pages.
    #[must_use]
    pub fn alpha_eff(&self, in_use: u64) -> f64 {
        let reserved =
            f64::from(self.open_frontiers + self.reserved_units) * f64::from(self.unit_pages);
        (as_f64(self.physical_pages) - reserved) / as_f64(in_use)
    }
}

pub(crate) use nowa_units::num::f64_of as as_f64;

impl FtlConfig {
    /// Pages per GC unit.
    #[must_use]
    pub fn unit_pages(&self) -> u64 {
        match self.gc_unit {
            GcUnit::Superblock => {
                u64::from(self.pages_per_block) * u64::from(self.blocks_per_superblock)
            }
            GcUnit::Block => u64::from(self.pages_per_block),
        }
    }

    /// Where GC copies go without a placement scheme.
    #[must_use]
    pub fn frontier(&self) -> GcFrontier {
        self.gc_frontier
            .unwrap_or(if self.policy.separates_gc_data() {
                GcFrontier::Separate
            } else {
                GcFrontier::Shared
            })
    }

    /// Classes (open units) of the placement scheme, 0 without one.
    #[must_use]
    pub fn placement_classes(&self) -> u16 {
        self.placement.map_or(0, |p| p.build().classes())
    }

    /// Open units and reserved free units of a conventional device.
    fn open_and_reserved(&self) -> (u64, u64) {
        if self.policy.compacts_victims() {
            // The SSD-iq reference: one host block, GC only when no block is free.
            return (1, 0);
        }
        if let Some(p) = self.placement {
            // One GC round may open a unit in every class before its victim is erased, and a
            // run of rounds may open one more than it erases: keep classes + 1 free (one class
            // copies into a single frontier, like the shared GC frontier: 1 is enough).
            let classes = u64::from(p.build().classes());
            let reserve = if classes > 1 { classes + 1 } else { 1 };
            return (classes, reserve.max(u64::from(self.min_free_units)));
        }
        let gc_frontiers = match self.frontier() {
            GcFrontier::Shared => 0,
            GcFrontier::Separate => 1,
            GcFrontier::PerStream => u64::from(self.streams),
        };
        (
            u64::from(self.streams) + gc_frontiers,
            u64::from(self.min_free_units),
        )
    }

    fn check_basics(&self) -> Result<u64, ConfigError> {
        if self.logical_pages == 0 {
            return Err(ConfigError::ZeroCapacity);
        }
        if self.pages_per_block == 0 || self.blocks_per_superblock == 0 {
            return Err(ConfigError::ZeroGeometry);
        }
        if self.streams == 0 {
            return Err(ConfigError::ZeroStreams);
        }
        if self.min_free_units == 0 {
            return Err(ConfigError::ZeroMinFree);
        }
        if self.victims_per_round == 0 {
            return Err(ConfigError::ZeroVictims);
        }
        let unit = self.unit_pages();
        if unit > self.logical_pages {
            return Err(ConfigError::UnitLargerThanDevice {
                unit_pages: unit,
                logical_pages: self.logical_pages,
            });
        }
        if unit > u64::from(u32::MAX) / 2 {
            return Err(ConfigError::UnitTooLarge { unit_pages: unit });
        }
        Ok(unit)
    }

    /// Combinations the model does not support.
    fn check_combinations(&self) -> Result<(), ConfigError> {
        let no = |what, with| Err(ConfigError::Unsupported { what, with });
        let zoned = matches!(self.mode, Mode::Zoned { .. });
        if self.placement.is_some() {
            if self.streams > 1 {
                return no("a placement scheme", "with several host streams");
            }
            if self.write_buffer_pages > 0 {
                return no("a placement scheme", "with a write buffer");
            }
            if zoned || self.policy.compacts_victims() {
                return no("a placement scheme", "with zones or a 2R reference policy");
            }
        }
        if self.policy.compacts_victims() && self.streams > 1 {
            return no("a 2R reference policy", "with several host streams");
        }
        if let GcTrigger::GarbageProportion(t) = self.gc_trigger {
            if !(t > 0.0 && t < 1.0) {
                return Err(ConfigError::BadThreshold { threshold: t });
            }
            if !self.policy.honors_victim_filter() {
                return Err(ConfigError::PolicyWithoutFilter {
                    policy: self.policy.to_string(),
                });
            }
            if zoned {
                return no("the garbage-proportion trigger", "on a zoned device");
            }
            if matches!(self.placement, Some(PlacementKind::MiDas)) {
                return no(
                    "MiDAS (it sizes its groups for a fixed capacity)",
                    "with the garbage-proportion trigger",
                );
            }
        }
        Ok(())
    }

    /// Physical units of a conventional device (checked against what it must hold).
    fn conventional_units(&self, unit: u64) -> Result<(u64, u64, u64), ConfigError> {
        let (open, reserved) = self.open_and_reserved();
        let logical_units = self.logical_pages.div_ceil(unit);
        let units = match self.gc_trigger {
            GcTrigger::GarbageProportion(t) => {
                // The log's own size: 1/(1 - t) of the data, 5% slack, open and reserved units.
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a positive unit count far below 2^53"
                )]
                let log = (as_f64(logical_units) / (1.0 - t) * 1.05).ceil() as u64;
                log + 2 * (open + reserved) + 2
            }
            GcTrigger::FreeUnits => {
                if !self.op.is_finite() || self.op < 0.0 {
                    return Err(ConfigError::BadOp { op: self.op });
                }
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a positive page count checked against 2^32 below"
                )]
                let want = (as_f64(self.logical_pages) * (1.0 + self.op)).ceil() as u64;
                want.div_ceil(unit)
            }
        };
        // Sealed units must be able to hold every logical page plus at least one unit of
        // garbage, or GC can never make progress.
        let spare_units = units.saturating_sub(logical_units);
        let needed = open + reserved + 1;
        if spare_units < needed {
            return Err(ConfigError::OpTooSmall {
                spare_units,
                unit_pages: unit,
                needed,
                open,
                reserved,
            });
        }
        Ok((units * unit, open, reserved))
    }

    /// Validate and resolve the geometry.
    ///
    /// # Errors
    /// A [`ConfigError`] for every configuration the model cannot run.
    pub fn layout(&self) -> Result<Layout, ConfigError> {
        let unit = self.check_basics()?;
        self.check_combinations()?;
        let (physical, open, reserved) = match self.mode {
            Mode::Zoned { max_open_zones } => {
                if max_open_zones == 0 {
                    return Err(ConfigError::ZeroOpenZones);
                }
                if self.write_buffer_pages > 0 {
                    return Err(ConfigError::Unsupported {
                        what: "a write buffer",
                        with: "on a zoned device",
                    });
                }
                ((self.logical_pages / unit) * unit, 0, 0)
            }
            Mode::Conventional => self.conventional_units(unit)?,
        };
        if physical >= u64::from(u32::MAX) {
            return Err(ConfigError::TooLarge {
                physical_pages: physical,
            });
        }
        let logical = match self.mode {
            Mode::Zoned { .. } => physical,
            Mode::Conventional => self.logical_pages,
        };
        let small = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
        Ok(Layout {
            logical_pages: logical,
            physical_pages: physical,
            unit_pages: small(unit),
            units: small(physical / unit),
            logical_units: as_f64(logical) / as_f64(unit),
            alpha: as_f64(physical) / as_f64(logical),
            op_spare_over_logical: as_f64(physical - logical) / as_f64(logical),
            op_spare_over_physical: as_f64(physical - logical) / as_f64(physical),
            open_frontiers: small(open),
            reserved_units: small(reserved),
            gc_frontier: self.frontier(),
        })
    }
}
