//! One power rail for every device of a simulated machine: the main device and, when the
//! database has one, its log device fail together. A crash is armed at the n-th write call
//! counted over *all* devices, and the first touch of a device after another one lost power
//! loses its power too, before anything else reaches it (as if both died at one instant).

use crate::clock::Timing;
use nowa_device::{
    BlockDevice, DeviceCounters, DeviceError, FaultyDevice, Geometry, Result, ZoneInfo,
};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// A device of the simulation: any device behind the fault injector.
pub type Faulty = FaultyDevice<Arc<dyn BlockDevice>>;

/// The shared power supply.
#[derive(Default)]
pub struct Power {
    devices: Mutex<Vec<Arc<Faulty>>>,
    /// Write calls issued so far over every device (batch elements count one each).
    writes: AtomicU64,
    /// Global write call number that crashes (0 = none armed).
    crash_at: AtomicU64,
    /// The devices' timings (simulated time), to forget in-flight blocks at a power loss.
    timings: Mutex<Vec<Arc<Timing>>>,
    /// A crash armed at the n-th write call into a byte range of one device (the log).
    range_crash: Mutex<Option<RangeCrash>>,
}

/// See [`Power::crash_at_range_write`].
#[derive(Debug, Clone)]
struct RangeCrash {
    device: usize,
    range: std::ops::Range<u64>,
    /// Write calls into the range left until the one that crashes (1: the next).
    left: u64,
}

impl Power {
    /// A device on this rail, its I/O timed on the simulated clock when `timing` is given
    /// (with ordered destaging, its unflushed blocks then survive a power loss by their
    /// destage time: `clock.rs`).
    pub fn attach(self: &Arc<Self>, dev: Arc<Faulty>, timing: Option<Arc<Timing>>) -> Rail {
        if let Some(t) = timing.as_ref().filter(|t| t.latency().ordered) {
            dev.set_persisted(Some(t.persisted()));
        }
        let index = {
            let mut d = self.devices.lock();
            d.push(dev.clone());
            d.len() - 1
        };
        self.timings.lock().extend(timing.clone());
        Rail {
            dev,
            power: self.clone(),
            timing,
            index,
        }
    }

    /// Unflushed blocks of every device that reached the media by now.
    #[must_use]
    pub fn destaged_now(&self) -> u64 {
        self.timings.lock().iter().map(|t| t.destaged_now()).sum()
    }

    /// Write calls issued so far over every device.
    #[must_use]
    pub fn writes(&self) -> u64 {
        self.writes.load(Relaxed)
    }

    /// The n-th write call from now (over every device, n >= 1) crashes the machine.
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn crash_after_writes(&self, n: u64) {
        assert!(n >= 1, "a crash is armed at a future write");
        self.crash_at.store(self.writes() + n, Relaxed);
    }

    /// The n-th write call from now that starts inside `range` of device `device` (in
    /// [`Self::devices`] order) crashes the machine: a crash during a log flush, drawn among
    /// the log's writes rather than all writes (the same kind of crash point, more often
    /// where it matters for the log's tail).
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn crash_at_range_write(&self, device: usize, range: std::ops::Range<u64>, n: u64) {
        assert!(n >= 1, "a crash is armed at a future write");
        *self.range_crash.lock() = Some(RangeCrash {
            device,
            range,
            left: n,
        });
    }

    /// Does a write call at `offset` of device `device` hit the armed range crash?
    fn hits_range_crash(&self, device: usize, offset: u64) -> bool {
        let mut g = self.range_crash.lock();
        let Some(c) = g.as_mut() else {
            return false;
        };
        if c.device != device || !c.range.contains(&offset) {
            return false;
        }
        assert!(c.left >= 1, "an armed range crash has writes left");
        c.left -= 1;
        let hit = c.left == 0;
        if hit {
            *g = None;
        }
        hit
    }

    /// Disarm a crash that did not happen.
    pub fn disarm(&self) {
        self.crash_at.store(0, Relaxed);
        *self.range_crash.lock() = None;
    }

    /// Power loss now, on every device.
    ///
    /// # Panics
    /// If a device stays on (a fault-injector bug).
    pub fn power_loss(&self) {
        for d in self.devices.lock().iter() {
            d.power_loss();
            assert!(d.is_powered_off(), "a power loss turns every device off");
        }
        for t in self.timings.lock().iter() {
            t.lost_power();
        }
        self.disarm();
    }

    /// Is some device without power?
    #[must_use]
    pub fn is_off(&self) -> bool {
        self.devices.lock().iter().any(|d| d.is_powered_off())
    }

    /// Power back on (whatever survived stays).
    ///
    /// # Panics
    /// If a device stays off (a fault-injector bug).
    pub fn restart(&self) {
        self.disarm();
        for d in self.devices.lock().iter() {
            d.restart();
        }
        assert!(!self.is_off(), "every device is back on");
    }

    /// The devices, main first.
    #[must_use]
    pub fn devices(&self) -> Vec<Arc<Faulty>> {
        self.devices.lock().clone()
    }
}

/// One device on the rail: what the engine sees.
pub struct Rail {
    dev: Arc<Faulty>,
    power: Arc<Power>,
    timing: Option<Arc<Timing>>,
    /// This device's place in [`Power::devices`].
    index: usize,
}

impl Rail {
    /// If another device lost power, this one loses it too (before the call goes on).
    fn follow(&self) {
        if !self.dev.is_powered_off() && self.power.is_off() {
            self.dev.power_loss();
        }
    }

    /// Count `calls` write calls; arm this device's crash if the global crash point falls
    /// among them.
    fn count_writes(&self, calls: u64) {
        assert!(
            calls > 0 || !self.dev.is_powered_off(),
            "no write call to a dead device"
        );
        let before = self.power.writes.fetch_add(calls, Relaxed);
        let at = self.power.crash_at.load(Relaxed);
        if at > before && at <= before + calls {
            assert!(
                at - before >= 1 && at - before <= calls,
                "the crash hits this call"
            );
            self.dev.crash_after_writes(at - before);
            self.power.crash_at.store(0, Relaxed);
        }
    }

    /// Time passes for a call (`f` on the timing, when the device is timed).
    fn time(&self, f: impl FnOnce(&Timing)) {
        if let Some(t) = &self.timing {
            f(t);
        }
    }

    /// After a call: a crash here takes the other devices down with it.
    fn spread<T>(&self, r: Result<T>) -> Result<T> {
        if self.dev.is_powered_off() {
            assert!(r.is_err(), "a call that lost power fails");
            self.power.power_loss();
        }
        r
    }
}

impl BlockDevice for Rail {
    fn geometry(&self) -> &Geometry {
        self.dev.geometry()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.follow();
        self.time(Timing::read);
        self.dev.read_at(offset, buf)
    }
    fn write_at_hinted(&self, offset: u64, buf: &[u8], placement: Option<u16>) -> Result<()> {
        self.follow();
        if !self.dev.is_powered_off() && self.power.hits_range_crash(self.index, offset) {
            self.dev.crash_after_writes(1);
        }
        self.count_writes(1);
        let r = self.spread(self.dev.write_at_hinted(offset, buf, placement));
        if r.is_ok() {
            self.time(|t| t.wrote(blocks(offset, buf.len())));
        }
        r
    }
    fn write_batch(&self, writes: &[(u64, &[u8])], placement: Option<u16>) -> Result<()> {
        self.follow();
        self.count_writes(u64::try_from(writes.len()).unwrap_or(u64::MAX));
        let r = self.spread(self.dev.write_batch(writes, placement));
        if r.is_ok() {
            self.time(|t| t.wrote(writes.iter().flat_map(|(o, b)| blocks(*o, b.len()))));
        }
        r
    }
    fn read_batch(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        self.follow();
        self.time(Timing::read);
        self.dev.read_batch(reads)
    }
    fn flush(&self) -> Result<()> {
        self.follow();
        let r = self.spread(self.dev.flush());
        if r.is_ok() {
            self.time(Timing::flushed);
        }
        r
    }
    fn trim(&self, offset: u64, len: u64) -> Result<()> {
        self.follow();
        self.time(Timing::other);
        self.spread(self.dev.trim(offset, len))
    }
    fn zone_append(&self, zone_start: u64, buf: &[u8]) -> Result<u64> {
        self.follow();
        self.count_writes(1);
        let r = self.spread(self.dev.zone_append(zone_start, buf));
        if let Ok(at) = r {
            self.time(|t| t.wrote(blocks(at, buf.len())));
        }
        r
    }
    fn zone_reset(&self, zone_start: u64) -> Result<()> {
        self.follow();
        self.time(Timing::other);
        self.spread(self.dev.zone_reset(zone_start))
    }
    fn zone_report(&self) -> Result<Vec<ZoneInfo>> {
        self.follow();
        self.dev.zone_report()
    }
    fn counters(&self) -> DeviceCounters {
        self.dev.counters()
    }
    fn buffer_alignment(&self) -> usize {
        self.dev.buffer_alignment()
    }
}

/// The 4 KiB blocks of a write of `len` bytes at `offset`.
fn blocks(offset: u64, len: usize) -> impl Iterator<Item = u64> {
    let n = u64::try_from(len.div_ceil(4096)).unwrap_or(0);
    (0..n).map(move |i| offset + i * 4096)
}

/// Is this the error of a device without power?
#[must_use]
pub fn is_power_off(e: &DeviceError) -> bool {
    matches!(e, DeviceError::PoweredOff)
}
