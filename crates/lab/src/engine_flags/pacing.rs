//! Simulated-SSD timing flags shared by the engine benchmarks (`nowa ycsb`, `nowa tpcc`):
//! flatten [`PacingFlags`] into a command's args and call [`PacingFlags::pacing`]; wrap the
//! device with `nowa_bench::ycsb::pace` (the one timing model, `nowa_device::Paced`).

use crate::{flags, Error};
use clap::Args;
use nowa_bench::ycsb::Pacing;

/// How the simulated SSD is timed and whether it paces the run.
#[derive(Args, Debug, Clone, Default)]
pub struct PacingFlags {
    /// Simulated SSD: pace it by its timing model (on, the default: throughput reflects the
    /// device's work; reads wait behind queued writes and GC) or not (off: it measures the CPU).
    #[arg(long, value_parser = flags::on_off)]
    pub pacing: Option<bool>,
    /// Simulated SSD: media write bandwidth per second (default 1GB = 10^9 bytes/s).
    #[arg(long, value_parser = flags::size(1_000_000, 1 << 50))]
    pub media_bandwidth: Option<u64>,
    /// Simulated SSD: read bandwidth per second (default 3GB).
    #[arg(long, value_parser = flags::size(1_000_000, 1 << 50))]
    pub read_bandwidth: Option<u64>,
    /// Simulated SSD timing: bandwidth (one media server at the bandwidths above) or femu /
    /// mqsim (8 channels x 8 chips of 4 KiB pages with those simulators' latencies; a read
    /// waits on its chip behind programs and GC).
    #[arg(long, value_enum)]
    pub sim_timing: Option<flags::SimTiming>,
}

impl PacingFlags {
    /// The simulated SSD's timing model; None on other devices than `sim` (which refuse the
    /// flags: a one-line usage error naming the flag).
    ///
    /// # Errors
    /// A timing flag on a device that has no timing model.
    ///
    /// # Panics
    /// Never: the bandwidth flags are positive.
    pub fn pacing(&self, device: &str) -> Result<Option<Pacing>, Error> {
        if device != "sim" {
            let set = [
                ("--pacing", self.pacing.is_some()),
                ("--media-bandwidth", self.media_bandwidth.is_some()),
                ("--read-bandwidth", self.read_bandwidth.is_some()),
                ("--sim-timing", self.sim_timing.is_some()),
            ];
            if let Some((flag, _)) = set.iter().find(|(_, s)| *s) {
                return Err(Error::Usage(format!(
                    "{flag}: only a simulated SSD (--device sim) has a timing model"
                )));
            }
            return Ok(None);
        }
        let d = Pacing::default();
        // Bandwidths below 2^50 bytes/s (the flags' bound): exact in an f64.
        let bw = |b: Option<u64>, def: f64| b.map_or(def, |b| b as f64);
        let p = Pacing {
            paced: self.pacing.unwrap_or(d.paced),
            media_bytes_per_sec: bw(self.media_bandwidth, d.media_bytes_per_sec),
            read_bytes_per_sec: bw(self.read_bandwidth, d.read_bytes_per_sec),
            chips: self.sim_timing.and_then(flags::SimTiming::chips),
        };
        assert!(
            p.media_bytes_per_sec > 0.0 && p.read_bytes_per_sec > 0.0,
            "positive bandwidths (the flags' floor)"
        );
        Ok(Some(p))
    }
}
