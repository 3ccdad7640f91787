//! Out-of-place crash test with the background DB GC thread on: the same seeded crash points
//! as oop_crash.rs (torn / dropped n-th device write, power loss between operations, crashes
//! inside recovery), but GC rounds now also run on the background thread, concurrently with
//! the foreground writer, so crashes land in background relocations, trims and zone openings.
//! The calibration run requires background GC rounds to happen. After recovery: every
//! acknowledged write is present, the zone metadata agrees with the mapping, the database keeps
//! working and reopens cleanly.

#[path = "common/oop_crash_harness.rs"]
mod harness;
#[path = "common/oop_store.rs"]
mod oop_store;

use harness::{crash_points, Mode};
use nowa_engine::Compression;

#[test]
fn crash_points_background_gc() {
    crash_points(Mode::plain(Compression::Off, true), 50);
}

/// NoWA with background GC: whole groups (compensation writes) relocated by the thread.
#[test]
fn crash_points_background_gc_nowa() {
    crash_points(Mode::plain(Compression::Zstd, true), 40);
}
