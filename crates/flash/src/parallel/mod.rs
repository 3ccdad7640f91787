//! A chip-addressed FTL with flexible superblocks (PLAN, plan-ssd-parallelism.md): every page
//! program goes to a definite chip, a superblock is one block on each chip of a chosen set
//! (all channels x k chips per channel), concurrently open superblocks may have different
//! sizes, and GC collects superblocks (or single blocks for Partial GC).
//!
//! Flash operations (reads, programs, erases, GC copies included) are recorded per chip in
//! [`ParallelFtl::ops`] for the one timing model (`nowa_device::timing::Chips`) to serve.
//!
//! Superblock pages are striped channel first: page k of a superblock over chips c_0..c_{n-1}
//! lands on chip c_{k mod n} at page k / n of its block. Chip `c` sits on channel
//! `c mod channels` (way `c / channels`); a small superblock of group g with k chips per
//! channel holds ways g*k .. g*k + k - 1 of every channel (the spec's disjoint chip groups).
//!
//! Victim choice: greedy by valid pages (Baseline, Multi-stream, AutoStream), least valid
//! *ratio* (PLAN), or the single block with least valid pages (Partial GC). GC runs when a
//! superblock must open and one of its chips has at most its GC reserve of free blocks
//! ([`ParallelFtl::set_gc_reserve`]: FEMU's 5% by default in `nowa plan`, at least
//! [`RESERVE`]); the victim
//! is the best superblock holding a block on that chip. GC copies go to the GC superblock
//! (full parallelism for PLAN; the scheme's own size for the baselines).

mod geometry;
mod predictor;
mod sfr;
mod store;
mod streams;
mod victims;

pub use geometry::{ChipGeometry, GeometryError, Scheme};
pub use predictor::{class_of, Predictor, Record, OLD_WEIGHT, TICKS_PER_SEC};
pub use sfr::Sfr;
pub use store::{
    FlashOp, OpKind, ParallelCounters, ParallelFtl, FEMU_BACKGROUND_GC, FEMU_GC_RESERVE, RESERVE,
};
pub use streams::{StreamStats, AGED, STREAM_STATS};

/// Lifetime classes of PLAN-Pred (8 big + 8 small superblocks).
pub const LIFETIME_CLASSES: u16 = 8;
/// Host superblocks open at once in every scheme without its own count (Baseline, Partial
/// GC): PLAN's 8 + 8 lifetime and 2 default ones, so with the GC superblock every scheme has
/// the paper's "same number of concurrently opened superblocks" (19; Multi-stream and
/// AutoStream have 16 streams + GC = 17).
pub const HOST_OPEN: u16 = 2 * LIFETIME_CLASSES + 2;
/// Chunk of the lifetime predictor, flash pages (the paper's 32).
pub const CHUNK_PAGES: u64 = 32;
/// Requests of at least this many flash pages go to big superblocks (the paper's 8).
pub const BIG_REQUEST_PAGES: u64 = 8;

#[cfg(test)]
mod tests;
