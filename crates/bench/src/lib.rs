//! Benchmark drivers and reports.
//!
//! - [`sim`]: `nowa sim` — workloads on the FTL model, per-interval WAF, parameter sweeps.
//! - [`ssdiq`]: `nowa ssdiq` — the SSD-iq suite on block devices, files and simulated SSDs.
//! - [`ycsb`]: `nowa ycsb` — YCSB on the engine with the write drill-down (DB / SSD WAF).
//! - [`table1`]: `nowa table1` — Table 1 of how-to-write-to-ssds.md, row by row.
//! - [`gcunit`]: infer an SSD's GC unit with the ZNS-like zone-size sweep (how-to-write 5.3).
//! - [`paced`]: a wrapper that makes a simulated SSD I/O-bound (media bandwidth timeline).
//! - [`replay`]: `nowa sim --trace` — block traces replayed through the FTL model.
//! - [`plan`]: `nowa plan` — PLAN (flexible superblocks, lifetime predictor) with chip timing.
//! - [`plot`]: line and bar charts (PNG/SVG, embedded font, no system libraries).
//! - [`plot_layout`]: the SVG layout check every figure test runs (no overprinted text, no
//!   legend over data).
//! - [`interrupt`]: Ctrl-C, the one stop flag every driver polls.

pub mod gcunit;
pub use nowa_interrupt as interrupt;
pub mod paced;
pub mod plan;
pub mod plot;
pub mod plot_layout;
// Temporary: cleaned when sim.rs's result assembly is shared with it (after the placement merge).
#[expect(
    missing_docs,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::must_use_candidate,
    clippy::missing_panics_doc,
    reason = "replay is cleaned together with sim.rs once the placement branch is merged"
)]
pub mod replay;
// Temporary, until the branches that clean these modules are merged (the placement helper's
// for sim, the device-io helper's for ssdiq): remove these two attributes then.
#[expect(
    missing_docs,
    clippy::cast_lossless,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::missing_errors_doc,
    clippy::must_use_candidate,
    reason = "cleaned in the placement branch (owner of sim.rs and sim/sweep.rs)"
)]
pub mod sim;
pub mod ssdiq;
pub mod table1;
pub mod ycsb;

/// `x` rounded to the nearest integer, as a `u64`: negative and NaN give 0, values beyond the
/// range `u64::MAX` (Rust's float-to-integer conversion saturates). For sizes and counts
/// derived from fractions (a device `fill` of a capacity, a pool share of a dataset).
#[must_use]
pub fn round_u64(x: f64) -> u64 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "float-to-integer `as` saturates (NaN -> 0): the documented behaviour"
    )]
    let v = x.round() as u64;
    v
}
