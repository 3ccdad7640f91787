//! Benchmark drivers and reports.
//!
//! - [`sim`]: `nowa sim` — workloads on the FTL model, per-interval WAF, parameter sweeps.
//! - [`ssdiq`]: `nowa ssdiq` — the SSD-iq suite on block devices, files and simulated SSDs.
//! - [`plot`]: line and bar charts (PNG/SVG, embedded font, no system libraries).

pub mod plot;
pub mod sim;
pub mod ssdiq;
