//! Geometry of a chip-addressed SSD and its schemes.

use std::fmt;

/// Channels, chips, blocks, pages (planes are folded into blocks per chip: one plane per chip,
/// as the paper's Table 1).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChipGeometry {
    /// Channels.
    pub channels: u32,
    /// Chips (LUNs) per channel.
    pub chips_per_channel: u32,
    /// Erase blocks per chip.
    pub blocks_per_chip: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Bytes per flash page (4 or 16 KiB); also the mapping unit.
    pub page_bytes: u32,
    /// Over-provisioning as spare/physical (the paper's 0.0625; spare/logical is printed
    /// beside it, REFERENCE.md).
    pub op_physical: f64,
}

impl ChipGeometry {
    /// The paper's device scaled by 1/16 in pages per block (256 -> 16), so it keeps the
    /// paper's 1024 full superblocks and 64 spare ones: 8 channels x 8 chips x 1024 blocks x 16
    /// pages x 16 KiB = 16 GiB physical, 15 GiB logical.
    #[must_use]
    pub fn paper_scaled() -> Self {
        ChipGeometry {
            channels: 8,
            chips_per_channel: 8,
            blocks_per_chip: 1024,
            pages_per_block: 16,
            page_bytes: 16384,
            op_physical: 0.0625,
        }
    }

    /// Chips in all.
    #[must_use]
    pub fn chips(&self) -> u32 {
        self.channels * self.chips_per_channel
    }
    /// Physical pages.
    #[must_use]
    pub fn physical_pages(&self) -> u64 {
        u64::from(self.chips()) * u64::from(self.blocks_per_chip) * u64::from(self.pages_per_block)
    }
    /// Logical pages: physical x (1 - op).
    #[must_use]
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "op validated in [0, 1); page counts far below 2^53"
    )]
    pub fn logical_pages(&self) -> u64 {
        (self.physical_pages() as f64 * (1.0 - self.op_physical)).floor() as u64
    }
    /// Spare/logical (the other OP definition).
    #[must_use]
    pub fn op_logical(&self) -> f64 {
        self.op_physical / (1.0 - self.op_physical)
    }

    /// Checks the geometry.
    ///
    /// # Errors
    /// A zero dimension, a page size other than 4 or 16 KiB, an OP outside [0.01, 0.5], more
    /// than 2^32 - 1 physical pages, or chips per channel not a power of two.
    pub fn validate(&self) -> Result<(), GeometryError> {
        if self.channels == 0 || self.chips_per_channel == 0 {
            return Err(GeometryError("channels and chips per channel must be >= 1"));
        }
        if self.blocks_per_chip < 8 || self.pages_per_block == 0 {
            return Err(GeometryError(
                "need >= 8 blocks per chip and >= 1 page per block",
            ));
        }
        if self.page_bytes != 4096 && self.page_bytes != 16384 {
            return Err(GeometryError("page size must be 4 or 16 KiB"));
        }
        if !(0.01..=0.5).contains(&self.op_physical) {
            return Err(GeometryError(
                "over-provisioning (spare/physical) must be in [0.01, 0.5]",
            ));
        }
        if self.physical_pages() >= u64::from(u32::MAX) {
            return Err(GeometryError("more than 2^32 - 1 physical pages"));
        }
        if !self.chips_per_channel.is_power_of_two() {
            return Err(GeometryError("chips per channel must be a power of two"));
        }
        Ok(())
    }
}

/// A geometry or scheme the model cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("chip geometry: {0}")]
pub struct GeometryError(pub &'static str);

/// Where writes go and what GC collects (the paper's section 4 configurations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Scheme {
    /// No classification, superblocks over all channels x `chips_per_channel` chips (full =
    /// every chip), greedy victim by valid pages. `open` host superblocks are open at once and
    /// writes rotate over them page by page: 1 is FEMU's organisation (one open line for host
    /// writes, striped over every chip, and one for GC), [`super::HOST_OPEN`] the paper's
    /// "same number of concurrently opened superblocks"; below full parallelism they sit on the chip groups
    /// (one fixed group each when `open` is a multiple of the groups, else the next group
    /// round-robin at open), plus a GC superblock of the same size (Figure 1).
    Baseline {
        /// Chips per channel in a superblock.
        chips_per_channel: u32,
        /// Host superblocks open at once.
        open: u16,
    },
    /// Full superblocks ([`super::HOST_OPEN`] open for the host, writes rotating over them),
    /// but GC collects the single block with least valid pages.
    PartialGc,
    /// One open full superblock per host stream (stream id from the application / process).
    MultiStream {
        /// Streams.
        streams: u16,
    },
    /// AutoStream SFR picks the stream.
    AutoStream {
        /// Streams.
        streams: u16,
    },
    /// PLAN: big (all chips) and small (all channels x `small_chips` chips) superblocks,
    /// routing by request size, victim by least valid ratio, a full GC superblock, and with
    /// `predict` the lifetime classes.
    Plan {
        /// Chips per channel of a small superblock (2 = 1/4 of 8).
        small_chips: u32,
        /// Use the lifetime predictor (PLAN-Pred) or only size routing (PLAN-NoPred).
        predict: bool,
    },
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scheme::Baseline {
                chips_per_channel,
                open,
            } => {
                write!(f, "baseline-{chips_per_channel}")?;
                // FEMU's single open line is the default reading (no suffix).
                if open != 1 {
                    write!(f, "@{open}")?;
                }
                Ok(())
            }
            Scheme::PartialGc => write!(f, "partial-gc"),
            Scheme::MultiStream { streams } => write!(f, "multi-stream-{streams}"),
            Scheme::AutoStream { streams } => write!(f, "autostream-{streams}"),
            Scheme::Plan {
                small_chips,
                predict,
            } => write!(
                f,
                "plan-{}-{small_chips}",
                if predict { "pred" } else { "nopred" }
            ),
        }
    }
}
