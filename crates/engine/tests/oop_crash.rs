//! Out-of-place crash test: seeded crash points (torn / dropped n-th device write, or power
//! loss between operations) during a sync-update run on a device small enough that DB GC runs
//! all the time (so a large share of crash points fall into GC relocation, zone opening or
//! mapping snapshots). After recovery: every acknowledged write is present, the in-flight one
//! is old or new, the zone metadata agrees with the mapping; every 4th seed crashes again
//! inside recovery. Variants: compression off, LZ4 with GDT, and NoWA (group GC: crashes in the middle
//! of compensation writes) with ZSTD.
//! Background DB GC is off here (deterministic write sequence); oop_crash_bg.rs runs the same
//! crash points with it on.

#[path = "common/oop_crash_harness.rs"]
mod harness;
#[path = "common/oop_store.rs"]
mod oop_store;

use harness::{crash_points, scenario, Mode};
use nowa_device::BlockDevice;
use nowa_engine::Compression;

#[test]
fn crash_points_uncompressed() {
    crash_points(Mode::plain(Compression::Off, false), 90);
}

#[test]
fn crash_points_lz4() {
    crash_points(Mode::plain(Compression::Lz4, false), 60);
}

/// NoWA: crashes in the middle of group GC, i.e. of compensation writes.
#[test]
fn crash_points_nowa_compensation() {
    crash_points(Mode::plain(Compression::Zstd, false), 60);
}

#[test]
fn device_is_not_reused_across_seeds() {
    // Sanity: a fresh device has no zone data (guards the calibration above).
    let sc = scenario(Mode::plain(Compression::Off, false));
    let (dev, _) = sc.fresh(1, &sc.builder().0);
    assert!(dev.geometry().capacity >= 3 << 20);
}
