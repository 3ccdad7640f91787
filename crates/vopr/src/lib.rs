//! nowa-vopr: a deterministic simulation of the whole engine, after TigerBeetle's VOPR.
//!
//! One `u64` seed drives everything: the device (memory, simulated conventional / FDP / ZNS
//! SSD, a separate log device), the write path and its options (in place with or without
//! doublewrite; out of place with compression, packing, GDT, NoWA, or a placement scheme of
//! the shared log space or SepFrozen over a seeded oracle, with a victim policy and the
//! garbage-proportion trigger: `placement.rs`), the engine's sizes, the
//! workload (put / delete / get / scan, key and value sizes, sync and async writes,
//! `sync` / `checkpoint` durability points, background DB GC passes run on the harness's
//! thread), the device faults (power loss between operations or at a random write across
//! every device, torn sectors, TRIM modes, lost and misdirected writes, read errors) and the
//! crash/recover cycles (a second crash inside recovery included). A model of acknowledged
//! state checks every read and every recovered database (see `model.rs` for the rule).
//! Time is simulated (`clock.rs`: device latencies drawn per I/O, out-of-order destaging of
//! the write cache) and the engine's background work (page cleaner, background DB GC,
//! group-commit log flush) runs as simulated tasks of a seeded scheduler (`sched.rs`)
//! through `Engine::run_background_step`, between operations and (`sim/inside.rs`) at the
//! engine's yield points inside a write: no engine thread runs, so a seed replays exactly
//! (the engine's random numbers come from `Config::seed`). After the last epoch a liveness
//! phase checks that the cleaner, the WAL and the DB GC make progress with the faults off
//! (`sim/liveness.rs`). `Outcome::trace` hashes everything observed and the tests compare it
//! across two runs.
//!
//! Run it: `cargo run -p nowa-vopr --profile sim -- --seeds 100000 --from 0` (docs/testing.md;
//! the `sim` profile is the release build with debug assertions and overflow checks on).

pub mod clock;
pub mod model;
pub mod placement;
pub mod rail;
pub mod sched;
pub mod setup;
pub mod sim;
pub mod workload;

pub use sim::{replay_command, run_seed, run_seed_with, Coverage, Failure, Options, Outcome};
