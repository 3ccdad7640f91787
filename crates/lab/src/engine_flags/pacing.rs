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
    /// The simulated SSD's timing model. On a file or block device the model paces only when
    /// a timing flag asks for it (the device's own time then adds to the model's: `nowa ckpt
    /// figures` paces its crash runs on a file so their page cleaner keeps the paced runs'
    /// clock, docs/checkpointing.md section 3); None without such a flag, and on `mem`, which
    /// refuses them (a one-line usage error naming the flag).
    ///
    /// # Errors
    /// A timing flag on the memory device.
    ///
    /// # Panics
    /// Never: the bandwidth flags are positive.
    pub fn pacing(&self, device: &str) -> Result<Option<Pacing>, Error> {
        let set = [
            ("--pacing", self.pacing.is_some()),
            ("--media-bandwidth", self.media_bandwidth.is_some()),
            ("--read-bandwidth", self.read_bandwidth.is_some()),
            ("--sim-timing", self.sim_timing.is_some()),
        ];
        let flag = set.iter().find(|(_, s)| *s).map(|(f, _)| *f);
        match (device, flag) {
            ("mem", Some(flag)) => {
                return Err(Error::Usage(format!(
                "{flag}: the memory device (--device mem) has no timing model (sim or a file has)"
            )))
            }
            ("sim", _) => {}
            (_, None) => return Ok(None),
            (_, Some(_)) => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A file device is paced when a timing flag asks for it (the crash runs of `nowa ckpt
    /// figures`), not otherwise; `mem` refuses the flags naming one (the old code refused
    /// them on a file too).
    #[test]
    fn a_file_is_paced_only_when_asked_and_mem_refuses() {
        let none = PacingFlags::default();
        assert_eq!(none.pacing("/tmp/db.img").expect("no flag"), None);
        assert!(none.pacing("sim").expect("sim").is_some_and(|p| p.paced));
        let bw = PacingFlags {
            media_bandwidth: Some(10_000_000),
            ..PacingFlags::default()
        };
        let p = bw.pacing("/tmp/db.img").expect("a file").expect("paced");
        assert!(
            p.paced && (p.media_bytes_per_sec - 1e7).abs() < 1e-6,
            "{p:?}"
        );
        let e = bw.pacing("mem").expect_err("mem");
        assert!(e.to_string().starts_with("--media-bandwidth"), "{e}");
        assert_eq!(none.pacing("mem").expect("no flag"), None);
    }
}
