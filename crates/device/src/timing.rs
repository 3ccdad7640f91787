//! The one timing model of a simulated SSD: how long the media is busy with each host request,
//! and when the request completes. Used by the simulated target of `nowa ssdiq` (virtual time,
//! [`crate::SimDevice::timed_queue`]) and by [`crate::Paced`], which makes the engine's
//! simulated SSD I/O-bound in real time (`nowa ycsb`, `nowa table1`).
//!
//! Today's model is deliberately simple (a later chip-level model replaces the inside of
//! [`Timing`], keeping its interface):
//! - one media server, requests served first come first served;
//! - a request occupies the media for the pages it programs (the host pages plus every GC copy
//!   it triggered) at `media_write_mb_s`, the pages it reads at `read_mb_s`, and its erases at
//!   `erase_us` each (0 by default: not modelled);
//! - it completes a fixed controller latency (`read_base_us` / `write_base_us`) after its media
//!   work ends; that latency does not occupy the media;
//! - optionally at most `queue_depth` requests are accepted at once; a later one waits for the
//!   earliest to complete.
//!
//! So steady host write bandwidth = media bandwidth / WAF, and sequential writes (WAF 1) run at
//! the media bandwidth. Not modelled: channel and die parallelism, program/erase suspension,
//! write cache.
//!
//! Time is in picoseconds ([`Ps`]): a `u64` holds 213 days.

use crate::error::{DeviceError, Result};
use crate::BLOCK_SIZE_U64;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Picoseconds of (virtual or paced) time.
pub type Ps = u64;

/// Picoseconds per microsecond.
pub const PS_PER_US: f64 = 1e6;

/// Parameters of the timing model (see the module documentation). Field names are those of
/// `nowa ssdiq`'s JSON results.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimingModel {
    /// Media program bandwidth in MB/s (10^6 bytes/s).
    pub media_write_mb_s: f64,
    /// Media read bandwidth in MB/s.
    pub read_mb_s: f64,
    /// Fixed controller latency of a read, microseconds.
    pub read_base_us: f64,
    /// Fixed controller latency of a write, microseconds.
    pub write_base_us: f64,
    /// Media busy time per erased unit, microseconds (0: erases are free).
    #[serde(default)]
    pub erase_us: f64,
    /// Requests the device accepts at once (None: unbounded; the host's queue depth rules).
    #[serde(default)]
    pub queue_depth: Option<u32>,
}

impl Default for TimingModel {
    fn default() -> Self {
        TimingModel {
            media_write_mb_s: 2000.0,
            read_mb_s: 3200.0,
            read_base_us: 70.0,
            write_base_us: 12.0,
            erase_us: 0.0,
            queue_depth: None,
        }
    }
}

impl TimingModel {
    /// Bandwidths only (no controller latency): the model [`crate::Paced`] uses.
    #[must_use]
    pub fn bandwidth_only(write_bytes_per_sec: f64, read_bytes_per_sec: f64) -> Self {
        TimingModel {
            media_write_mb_s: write_bytes_per_sec / 1e6,
            read_mb_s: read_bytes_per_sec / 1e6,
            read_base_us: 0.0,
            write_base_us: 0.0,
            erase_us: 0.0,
            queue_depth: None,
        }
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`DeviceError::SimConfig`] for a bandwidth that is not positive and finite, a negative
    /// or non-finite latency, or a queue depth of 0.
    pub fn validate(&self) -> Result<()> {
        let bw = |v: f64| v.is_finite() && v > 0.0;
        let lat = |v: f64| v.is_finite() && v >= 0.0;
        if !bw(self.media_write_mb_s) || !bw(self.read_mb_s) {
            return Err(DeviceError::SimConfig {
                what: "timing model: bandwidths must be finite and > 0",
            });
        }
        if !lat(self.read_base_us) || !lat(self.write_base_us) || !lat(self.erase_us) {
            return Err(DeviceError::SimConfig {
                what: "timing model: latencies must be finite and >= 0",
            });
        }
        if self.queue_depth == Some(0) {
            return Err(DeviceError::SimConfig {
                what: "timing model: queue depth must be >= 1",
            });
        }
        Ok(())
    }
}

/// The media work one host request caused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// A write (else a read, trim or flush): selects the controller latency.
    pub write: bool,
    /// 4 KiB pages programmed (host pages + GC copies).
    pub programmed_pages: u64,
    /// 4 KiB pages read.
    pub read_pages: u64,
    /// Units (superblocks / zones) erased.
    pub erased_units: u64,
}

impl Work {
    /// The media work between two counter snapshots of a device: media bytes written (host
    /// writes plus the device's GC copies; host bytes when the device cannot tell) and bytes
    /// read, in whole 4 KiB pages.
    #[must_use]
    pub fn between(from: &crate::DeviceCounters, to: &crate::DeviceCounters) -> Work {
        let media =
            |c: &crate::DeviceCounters| c.media_bytes_written.unwrap_or(c.host_bytes_written);
        Work {
            write: true,
            programmed_pages: media(to).saturating_sub(media(from)) / crate::BLOCK_SIZE_U64,
            read_pages: to.host_bytes_read.saturating_sub(from.host_bytes_read)
                / crate::BLOCK_SIZE_U64,
            erased_units: 0,
        }
    }
}

/// Seconds the media of `model` is busy for the I/O between two counter snapshots: the
/// device-bound duration of a run, as [`crate::Paced`] would pace it.
///
/// # Errors
/// The model is invalid ([`TimingModel::validate`]).
pub fn busy_secs_between(
    model: &TimingModel,
    from: &crate::DeviceCounters,
    to: &crate::DeviceCounters,
) -> Result<f64> {
    let t = Timing::new(*model)?;
    #[expect(
        clippy::cast_precision_loss,
        reason = "picoseconds to seconds: 52 bits are ~52 days of picoseconds, far beyond a run"
    )]
    Ok(t.busy(&Work::between(from, to)) as f64 / 1e12)
}

/// Converts microseconds to picoseconds (truncating; inputs are validated non-negative).
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "validated finite and >= 0; sub-picosecond parts are dropped"
)]
fn us_to_ps(us: f64) -> Ps {
    (us * PS_PER_US) as Ps
}

/// The timing model with its clock: a media server and the requests it accepted.
#[derive(Debug, Clone)]
pub struct Timing {
    model: TimingModel,
    /// Picoseconds per byte written / read.
    ps_per_byte_w: f64,
    ps_per_byte_r: f64,
    read_base: Ps,
    write_base: Ps,
    /// When the media is free again.
    busy_until: Ps,
    /// Time now: the latest arrival or explicit advance seen.
    clock: Ps,
    /// Total media busy time so far.
    busy_total: Ps,
    /// Latest completion time handed out.
    last_done: Ps,
    /// Completion times of accepted requests (only with a device queue depth).
    outstanding: BinaryHeap<Reverse<Ps>>,
}

impl Timing {
    /// A model at time 0 with an idle media.
    ///
    /// # Errors
    /// The parameters are invalid ([`TimingModel::validate`]).
    pub fn new(model: TimingModel) -> Result<Timing> {
        model.validate()?;
        Ok(Timing {
            // ps per byte at MB/s: 1e12 / (mb * 1e6).
            ps_per_byte_w: 1e6 / model.media_write_mb_s,
            ps_per_byte_r: 1e6 / model.read_mb_s,
            read_base: us_to_ps(model.read_base_us),
            write_base: us_to_ps(model.write_base_us),
            model,
            busy_until: 0,
            clock: 0,
            busy_total: 0,
            last_done: 0,
            outstanding: BinaryHeap::new(),
        })
    }

    /// The parameters.
    #[must_use]
    pub fn model(&self) -> &TimingModel {
        &self.model
    }

    /// Media busy time of programming `pages` 4 KiB pages.
    #[must_use]
    pub fn program_busy(&self, pages: u64) -> Ps {
        bytes_time(pages, self.ps_per_byte_w)
    }

    /// Media busy time of reading `pages` 4 KiB pages.
    #[must_use]
    pub fn read_busy(&self, pages: u64) -> Ps {
        bytes_time(pages, self.ps_per_byte_r)
    }

    /// Media busy time of erasing `units` units.
    #[must_use]
    pub fn erase_busy(&self, units: u64) -> Ps {
        us_to_ps(self.model.erase_us).saturating_mul(units)
    }

    /// Fixed controller latency of a host request (does not occupy the media).
    #[must_use]
    pub fn request_latency(&self, write: bool) -> Ps {
        if write {
            self.write_base
        } else {
            self.read_base
        }
    }

    /// Media busy time of one request's work.
    #[must_use]
    pub fn busy(&self, w: &Work) -> Ps {
        self.program_busy(w.programmed_pages)
            + self.read_busy(w.read_pages)
            + self.erase_busy(w.erased_units)
    }

    /// Time now.
    #[must_use]
    pub fn now(&self) -> Ps {
        self.clock
    }

    /// When the media is free again.
    #[must_use]
    pub fn busy_until(&self) -> Ps {
        self.busy_until
    }

    /// Total media busy time since the model was created (or [`Timing::restart`]ed).
    #[must_use]
    pub fn busy_total(&self) -> Ps {
        self.busy_total
    }

    /// When everything served so far has completed (and the clock has reached): the start
    /// of a new, idle phase.
    #[must_use]
    pub fn idle_at(&self) -> Ps {
        self.clock.max(self.busy_until).max(self.last_done)
    }

    /// Moves the clock forward to `t` (never backward).
    pub fn advance_to(&mut self, t: Ps) {
        self.clock = self.clock.max(t);
    }

    /// Back to time 0 with an idle media (a paced run's timeline restarting).
    pub fn restart(&mut self) {
        self.busy_until = 0;
        self.clock = 0;
        self.busy_total = 0;
        self.last_done = 0;
        self.outstanding.clear();
    }

    /// Serves a request arriving at `arrival` that causes `work`; returns its completion time.
    /// Requests are served in the order this is called (FIFO): callers pass arrivals in
    /// non-decreasing order (a smaller one is treated as arriving now).
    ///
    /// # Panics
    /// Never in practice: the queue-depth bookkeeping is internally consistent.
    pub fn serve(&mut self, arrival: Ps, work: &Work) -> Ps {
        let mut arrival = arrival.max(self.clock);
        if let Some(qd) = self.model.queue_depth {
            while self.outstanding.peek().is_some_and(|r| r.0 <= arrival) {
                self.outstanding.pop();
            }
            if self.outstanding.len() >= qd as usize {
                let Reverse(first) = self.outstanding.pop().expect("len >= qd >= 1");
                arrival = arrival.max(first);
            }
        }
        assert!(arrival >= self.clock, "time never runs backward");
        self.clock = arrival;
        let service = self.busy(work);
        let start = arrival.max(self.busy_until);
        self.busy_until = start + service;
        self.busy_total += service;
        let done = self.busy_until + self.request_latency(work.write);
        if self.model.queue_depth.is_some() {
            self.outstanding.push(Reverse(done));
        }
        self.last_done = self.last_done.max(done);
        debug_assert!(done >= arrival && self.busy_until >= start);
        done
    }
}

/// Time of `pages` 4 KiB pages at `ps_per_byte`.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    reason = "page counts are far below 2^53; the product is a positive duration in ps"
)]
fn bytes_time(pages: u64, ps_per_byte: f64) -> Ps {
    (pages as f64 * BLOCK_SIZE_U64 as f64 * ps_per_byte) as Ps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(pages: u64) -> Work {
        Work {
            write: true,
            programmed_pages: pages,
            ..Work::default()
        }
    }

    #[test]
    fn fifo_server_and_latencies() {
        let mut t = Timing::new(TimingModel::default()).unwrap();
        // 4 KiB at 2000 MB/s = 2048 ns; + 12 us controller latency.
        assert_eq!(t.program_busy(1), 2_048_000);
        assert_eq!(t.read_busy(1), 1_280_000);
        let a = t.serve(0, &write(1));
        assert_eq!(a, 2_048_000 + 12_000_000);
        // A second write at time 0 queues behind the first.
        let b = t.serve(0, &write(2));
        assert_eq!(b, 3 * 2_048_000 + 12_000_000);
        // A read arriving after the media went idle starts at once.
        let r = t.serve(1_000_000_000, &Work::default());
        assert_eq!(r, 1_000_000_000 + 70_000_000);
        assert_eq!(t.busy_total(), 3 * 2_048_000);
        assert_eq!(t.now(), 1_000_000_000);
        t.restart();
        assert_eq!((t.now(), t.busy_until(), t.busy_total()), (0, 0, 0));
    }

    #[test]
    fn device_queue_depth_delays_arrivals() {
        let m = TimingModel {
            queue_depth: Some(1),
            ..TimingModel::bandwidth_only(4096e6, 4096e6)
        };
        let mut t = Timing::new(m).unwrap();
        assert_eq!(t.serve(0, &write(1)), 1_000_000);
        // With room for one request, the second arrives when the first completes.
        assert_eq!(t.serve(0, &write(1)), 2_000_000);
        assert_eq!(t.now(), 1_000_000);
    }

    #[test]
    fn bad_models_are_refused() {
        for m in [
            TimingModel {
                media_write_mb_s: 0.0,
                ..TimingModel::default()
            },
            TimingModel {
                read_base_us: f64::NAN,
                ..TimingModel::default()
            },
            TimingModel {
                queue_depth: Some(0),
                ..TimingModel::default()
            },
        ] {
            assert!(Timing::new(m).is_err(), "{m:?}");
        }
    }
}
