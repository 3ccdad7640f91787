//! Benchmark drivers and reports.
//!
//! - [`sim`]: `nowa sim` — workloads on the FTL model, per-interval WAF, parameter sweeps.
//! - [`ssdiq`]: `nowa ssdiq` — the SSD-iq suite on block devices, files and simulated SSDs.
//! - [`ycsb`]: `nowa ycsb` — YCSB on the engine with the write drill-down (DB / SSD WAF).
//! - [`table1`]: `nowa table1` — Table 1 of how-to-write-to-ssds.md, row by row.
//! - [`gcunit`]: infer an SSD's GC unit with the ZNS-like zone-size sweep (how-to-write 5.3).
//! - [`paced`]: a wrapper that makes a simulated SSD I/O-bound (media bandwidth timeline).
//! - [`replay`]: `nowa sim --trace` — block traces replayed through the FTL model.
//! - [`plot`]: line and bar charts (PNG/SVG, embedded font, no system libraries).

pub mod gcunit;
pub mod paced;
pub mod plot;
pub mod replay;
pub mod sim;
pub mod ssdiq;
pub mod table1;
pub mod ycsb;
