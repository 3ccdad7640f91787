//! Simulated time: one clock per seed that only the simulation advances (device latencies
//! drawn per I/O from the seed, the foreground's CPU time per operation), and the device's
//! volatile write cache destaging out of order on it.
//!
//! A write returns after its acknowledgement latency; each of its blocks reaches the media
//! at its own drawn destage time, so at a power loss (time T) exactly the unflushed blocks
//! destaged by T survive: a later write may be durable while an earlier one is not
//! (`FaultyDevice::set_persisted`). A flush waits for every destage. The clock drives the
//! background tasks' timers (`sched.rs`) and the page cleaner's once-a-period batches
//! (`Config::flushing`), so time-based behaviour replays from the seed.

use crate::setup::Rng;
use nowa_device::Persisted;
use parking_lot::Mutex;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// Simulated nanoseconds since the seed began.
#[derive(Debug, Default)]
pub struct Clock {
    ns: AtomicU64,
}

impl Clock {
    /// Now, in simulated nanoseconds.
    #[must_use]
    pub fn now(&self) -> u64 {
        self.ns.load(Relaxed)
    }

    /// Now, in simulated seconds (the page cleaner's flush clock).
    #[must_use]
    #[expect(clippy::cast_precision_loss, reason = "nanoseconds far below 2^52")]
    pub fn secs(&self) -> f64 {
        self.now() as f64 / 1e9
    }

    /// Let `ns` pass.
    pub fn advance(&self, ns: u64) {
        self.ns.fetch_add(ns, Relaxed);
    }

    /// Move to `t` if it lies ahead (time never goes back).
    ///
    /// # Panics
    /// If the clock went back (a harness bug).
    pub fn advance_to(&self, t: u64) {
        let before = self.ns.fetch_max(t, Relaxed);
        assert!(self.now() >= before.max(t), "the clock went back");
    }
}

/// A seed's device latencies, in simulated nanoseconds: each draw is the base times a factor
/// from 1/2 to 3/2, and a `slow_per_mille` share of the I/Os take `slow_factor` times longer
/// (a drive's GC pause, a queue behind a flush).
#[derive(Debug, Clone, Copy)]
pub struct Latency {
    /// Read of one call.
    pub read_ns: u64,
    /// Acknowledgement of a write call (data in the drive's cache).
    pub write_ns: u64,
    /// From acknowledgement to the media, per block.
    pub destage_ns: u64,
    /// A flush's own cost (after every destage).
    pub flush_ns: u64,
    /// Share of slow I/Os, per mille.
    pub slow_per_mille: u32,
    /// How much slower those are.
    pub slow_factor: u64,
    /// Unflushed blocks survive a power loss by their destage time (else by the fault
    /// injector's keep probability, as before simulated time).
    pub ordered: bool,
}

impl Latency {
    /// Draw a seed's latencies.
    ///
    /// # Panics
    /// If a drawn latency is zero (a harness bug).
    #[must_use]
    pub fn draw(r: &mut Rng) -> Latency {
        let l = Latency {
            read_ns: r.random_range(10..=120) * 1000,
            write_ns: r.random_range(5..=60) * 1000,
            destage_ns: r.random_range(20..=2000) * 1000,
            flush_ns: r.random_range(50..=1000) * 1000,
            slow_per_mille: [0, 5, 50][r.random_range(0..3)],
            slow_factor: r.random_range(5..=50),
            ordered: r.random_bool(0.5),
        };
        assert!(l.read_ns > 0 && l.write_ns > 0, "I/O takes time");
        l
    }
}

/// The timing of one device: its latency draws and the destage times of its unflushed
/// blocks.
pub struct Timing {
    clock: Arc<Clock>,
    lat: Latency,
    rng: Mutex<Rng>,
    /// Unflushed blocks by byte offset: when each reaches the media.
    destage: Arc<Mutex<BTreeMap<u64, u64>>>,
}

impl Timing {
    /// Device `index`'s timing on `clock`, its draws from `seed`.
    #[must_use]
    pub fn new(clock: Arc<Clock>, lat: Latency, seed: u64, index: u64) -> Timing {
        Timing {
            clock,
            lat,
            rng: Mutex::new(Rng::seed_from_u64(nowa_units::mix64(
                seed ^ 0x7469_6d65 ^ index.wrapping_mul(0x9e37_79b9),
            ))),
            destage: Arc::new(Mutex::new(BTreeMap::new())),
        }
    }

    /// The latencies.
    #[must_use]
    pub fn latency(&self) -> Latency {
        self.lat
    }

    /// One draw around `base`.
    fn draw(&self, base: u64) -> u64 {
        let mut r = self.rng.lock();
        let mut t = base / 2 + r.random_range(0..=base);
        if r.random_range(0..1000) < self.lat.slow_per_mille {
            t *= self.lat.slow_factor;
        }
        t.max(1)
    }

    /// A read call.
    pub fn read(&self) {
        self.clock.advance(self.draw(self.lat.read_ns));
    }

    /// A write call of the 4 KiB blocks at `offsets` was acknowledged: time passes, and
    /// each block gets its destage time.
    pub fn wrote(&self, offsets: impl Iterator<Item = u64>) {
        self.clock.advance(self.draw(self.lat.write_ns));
        let now = self.clock.now();
        let times: Vec<(u64, u64)> = offsets
            .map(|o| (o, now + self.draw(self.lat.destage_ns)))
            .collect();
        self.destage.lock().extend(times);
    }

    /// A flush: it returns once every block reached the media.
    ///
    /// # Panics
    /// If a block stays in flight (a harness bug).
    pub fn flushed(&self) {
        let last = {
            let mut d = self.destage.lock();
            let last = d.values().copied().max().unwrap_or(0);
            d.clear();
            assert!(d.is_empty(), "nothing in flight after a flush");
            last
        };
        self.clock.advance_to(last);
        self.clock.advance(self.draw(self.lat.flush_ns));
    }

    /// A call that costs a write's latency but buffers nothing (trim, zone reset).
    pub fn other(&self) {
        self.clock.advance(self.draw(self.lat.write_ns));
    }

    /// Power loss: nothing is in flight any more.
    pub fn lost_power(&self) {
        self.destage.lock().clear();
    }

    /// The oracle for `FaultyDevice::set_persisted`: a block survives if it reached the
    /// media by now.
    #[must_use]
    pub fn persisted(&self) -> Persisted {
        let (d, clock) = (self.destage.clone(), self.clock.clone());
        Arc::new(move |off| d.lock().get(&off).is_some_and(|&t| t <= clock.now()))
    }

    /// Unflushed blocks that reached the media by now (for the coverage counters).
    #[must_use]
    pub fn destaged_now(&self) -> u64 {
        let now = self.clock.now();
        self.destage.lock().values().filter(|&&t| t <= now).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Destaging is out of order: of two blocks written one after the other, the later one
    /// can be on the media while the earlier one is not; a flush waits for both.
    #[test]
    fn destage_out_of_order_then_flush() {
        let clock = Arc::new(Clock::default());
        let lat = Latency {
            read_ns: 1000,
            write_ns: 1000,
            destage_ns: 1_000_000,
            flush_ns: 1000,
            slow_per_mille: 0,
            slow_factor: 1,
            ordered: true,
        };
        let mut seen = false;
        for seed in 0..64 {
            let t = Timing::new(clock.clone(), lat, seed, 0);
            t.wrote(std::iter::once(0));
            t.wrote(std::iter::once(4096));
            let (a, b) = {
                let d = t.destage.lock();
                (d[&0], d[&4096])
            };
            clock.advance_to(b);
            let p = t.persisted();
            if b < a {
                assert!(p(4096) && !p(0), "seed {seed}");
                seen = true;
            }
            t.flushed();
            assert!(clock.now() >= a.max(b), "a flush waits for every destage");
            assert!(!p(0) && !p(4096), "nothing unflushed after the flush");
        }
        assert!(seen, "some seed destaged the later block first");
    }
}
