//! FTL configuration: geometry, over-provisioning, GC policy, streams, write buffer, mode.

use crate::FlashError;
use nowa_logspace::PolicyKind;
use serde::{Deserialize, Serialize};

/// Bytes per flash page / logical block. Everything in this crate counts 4 KiB pages.
pub const PAGE_SIZE: u64 = 4096;

/// What the garbage collector erases at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GcUnit {
    /// A superblock: one erase block on every channel x chip x plane (the common design).
    Superblock,
    /// A single erase block ("partial GC", plan-ssd-parallelism.md).
    Block,
}

/// Where GC-relocated pages are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GcFrontier {
    /// Into the host write frontier of the victim's stream: relocated cold data and fresh host
    /// data share units (ssd-iq.md's "Naive Greedy").
    Shared,
    /// Into one GC frontier of its own (2R: a separate region for GC data).
    Separate,
    /// Into one GC frontier per host stream, keeping streams (FDP handles) isolated.
    PerStream,
}

impl std::str::FromStr for GcFrontier {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "shared" => Ok(GcFrontier::Shared),
            "separate" => Ok(GcFrontier::Separate),
            "per-stream" => Ok(GcFrontier::PerStream),
            _ => Err(format!(
                "unknown GC frontier '{s}' (expected shared, separate or per-stream)"
            )),
        }
    }
}

/// Conventional (the FTL does GC) or zoned (host-managed zones, no device GC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    Conventional,
    /// ZNS: zones are GC units, writes sequential per zone, host resets zones.
    Zoned {
        max_open_zones: u32,
    },
}

/// Everything that defines a simulated SSD.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FtlConfig {
    /// Logical capacity in 4 KiB pages (what the host sees).
    pub logical_pages: u64,
    /// Over-provisioning as spare/logical: physical = logical x (1 + op). Ignored in zoned mode.
    pub op: f64,
    pub pages_per_block: u32,
    /// Erase blocks per superblock = channels x chips x planes.
    pub blocks_per_superblock: u32,
    pub gc_unit: GcUnit,
    pub policy: PolicyKind,
    /// None: the policy's default (shared for greedy, separate for the others).
    pub gc_frontier: Option<GcFrontier>,
    /// Host write streams (multi-stream / FDP reclaim-unit handles). 1 = conventional SSD.
    pub streams: u16,
    /// Device write buffer in pages (LRU that absorbs rewrites); 0 = none.
    pub write_buffer_pages: u64,
    /// GC runs while the free-unit count is at or below this watermark (>= 1).
    pub min_free_units: u32,
    pub mode: Mode,
    pub seed: u64,
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
    pub logical_pages: u64,
    pub physical_pages: u64,
    pub unit_pages: u32,
    pub units: u32,
    pub logical_units: f64,
    /// alpha = physical / logical.
    pub alpha: f64,
    /// (physical - logical) / logical.
    pub op_spare_over_logical: f64,
    /// (physical - logical) / physical.
    pub op_spare_over_physical: f64,
    /// Host frontiers + GC frontiers that hold an open unit.
    pub open_frontiers: u32,
    pub gc_frontier: GcFrontier,
}

impl Layout {
    /// Spare space as the GC really sees it: open and reserved free units do not hold data
    /// (REFERENCE.md: alpha_eff = (T - (reserved + open) x Np) / U), for `in_use` logical pages.
    pub fn alpha_eff(&self, in_use: u64, min_free: u32) -> f64 {
        let reserved = (self.open_frontiers + min_free) as f64 * self.unit_pages as f64;
        (self.physical_pages as f64 - reserved) / in_use as f64
    }
}

impl FtlConfig {
    pub fn unit_pages(&self) -> u64 {
        match self.gc_unit {
            GcUnit::Superblock => self.pages_per_block as u64 * self.blocks_per_superblock as u64,
            GcUnit::Block => self.pages_per_block as u64,
        }
    }

    pub fn frontier(&self) -> GcFrontier {
        self.gc_frontier
            .unwrap_or(if self.policy.separates_gc_data() {
                GcFrontier::Separate
            } else {
                GcFrontier::Shared
            })
    }

    /// Validate and resolve the geometry. Every bad input is a one-line [`FlashError::Config`].
    pub fn layout(&self) -> Result<Layout, FlashError> {
        let bad = |m: String| Err(FlashError::Config(m));
        if self.logical_pages == 0 {
            return bad("logical capacity must be > 0 pages".into());
        }
        if self.pages_per_block == 0 || self.blocks_per_superblock == 0 {
            return bad("pages per block and blocks per superblock must be > 0".into());
        }
        if self.streams == 0 {
            return bad("streams must be >= 1".into());
        }
        if self.min_free_units == 0 {
            return bad("min free units must be >= 1 (GC needs a unit to relocate into)".into());
        }
        let unit = self.unit_pages();
        if unit > self.logical_pages {
            return bad(format!(
                "GC unit of {unit} pages ({} MiB) is larger than the device ({} pages)",
                (unit * PAGE_SIZE) >> 20,
                self.logical_pages
            ));
        }
        if unit > u32::MAX as u64 / 2 {
            return bad(format!("GC unit of {unit} pages is too large"));
        }
        let frontier = self.frontier();
        let (physical, open) = match self.mode {
            Mode::Zoned { max_open_zones } => {
                if max_open_zones == 0 {
                    return bad("max open zones must be >= 1".into());
                }
                if self.write_buffer_pages > 0 {
                    return bad("a zoned device has no write buffer in this model".into());
                }
                let zones = self.logical_pages / unit;
                (zones * unit, 0)
            }
            Mode::Conventional => {
                if !self.op.is_finite() || self.op < 0.0 {
                    return bad(format!("over-provisioning must be >= 0, got {}", self.op));
                }
                let want = (self.logical_pages as f64 * (1.0 + self.op)).ceil() as u64;
                let units = want.div_ceil(unit);
                let gc_frontiers = match frontier {
                    GcFrontier::Shared => 0,
                    GcFrontier::Separate => 1,
                    GcFrontier::PerStream => self.streams as u64,
                };
                let open = self.streams as u64 + gc_frontiers;
                // Sealed units must be able to hold every logical page plus at least one unit
                // of garbage, or GC can never make progress.
                let spare_units = units.saturating_sub(self.logical_pages.div_ceil(unit));
                let needed = open + self.min_free_units as u64 + 1;
                if spare_units < needed {
                    return bad(format!(
                        "over-provisioning too small: {spare_units} spare units of {unit} pages, need >= {needed} \
                         ({open} open frontiers + {} reserved free + 1); raise --op or shrink the GC unit",
                        self.min_free_units
                    ));
                }
                (units * unit, open as u32)
            }
        };
        if physical >= u32::MAX as u64 {
            return bad(format!(
                "device too large for this model: {physical} physical pages (max 2^32-1)"
            ));
        }
        let logical = match self.mode {
            Mode::Zoned { .. } => physical,
            Mode::Conventional => self.logical_pages,
        };
        Ok(Layout {
            logical_pages: logical,
            physical_pages: physical,
            unit_pages: unit as u32,
            units: (physical / unit) as u32,
            logical_units: logical as f64 / unit as f64,
            alpha: physical as f64 / logical as f64,
            op_spare_over_logical: (physical - logical) as f64 / logical as f64,
            op_spare_over_physical: (physical - logical) as f64 / physical as f64,
            open_frontiers: open,
            gc_frontier: frontier,
        })
    }
}
