//! Software prefetch of the mapping table's random lines (`nowa_logspace::prefetch`, shared
//! with the placement schemes' per-page state).
//!
//! A host write and a GC copy each touch one random line of `l2p` (a 64 MiB table at 2^24
//! pages: a DRAM miss). Asking for the line a few writes ahead lets those misses overlap with
//! the work in between instead of stalling it.

pub(crate) use nowa_logspace::prefetch::{line, line_l2};

/// How many writes (or GC copies) ahead the line is asked for: enough to cover a DRAM miss
/// (~100 ns) at ~10-20 ns of work per write, few enough that the lines are still in L1/L2.
pub(crate) const AHEAD: usize = 32;

/// How many pages ahead the GC copy loop asks for a victim page's mapping line, into L2
/// ([`line_l2`]): the L2's miss entries outnumber the L1's fill buffers, so twice as many
/// lines can be on their way (64 against 32 into L1: 11.97-12.04 -> 13.38-13.68 M host
/// writes per CPU second on the SSD-iq configuration, alternated; docs/simulator.md, "Round 9").
pub(crate) const GC_AHEAD: usize = 64;
