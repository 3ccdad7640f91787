//! [`Paced`]: a device wrapper that makes a simulated SSD I/O-bound. The in-memory simulator
//! completes every I/O at memory speed, so throughput measured on it is CPU-bound. `Paced`
//! keeps a timeline on which the device is busy for `media bytes written / write bandwidth +
//! bytes read / read bandwidth` (media bytes include the SSD's own GC copies, read from the
//! inner device's counters) and delays each I/O until the timeline has caught up with it.
//! Throughput measured through it reflects the device's work, as on real hardware.

use nowa_device::{BlockDevice, DeviceCounters, Geometry, Result, ZoneInfo};
use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// The timing model behind [`Paced`]: seconds a device is busy for the I/O between two
/// counter snapshots = media bytes written (host writes plus the SSD's own GC copies; host
/// bytes when the device cannot tell) / write bandwidth + bytes read / read bandwidth.
#[must_use]
pub fn busy_secs(
    from: &DeviceCounters,
    to: &DeviceCounters,
    write_bytes_per_sec: f64,
    read_bytes_per_sec: f64,
) -> f64 {
    let media = |c: &DeviceCounters| c.media_bytes_written.unwrap_or(c.host_bytes_written);
    let written = media(to).saturating_sub(media(from));
    let read = to.host_bytes_read.saturating_sub(from.host_bytes_read);
    written as f64 / write_bytes_per_sec.max(1.0) + read as f64 / read_bytes_per_sec.max(1.0)
}

/// A device wrapper that delays every I/O until the [`busy_secs`] timeline has caught up.
pub struct Paced {
    inner: std::sync::Arc<dyn BlockDevice>,
    write_bytes_per_sec: f64,
    read_bytes_per_sec: f64,
    /// Start of the timeline and the counters at the start.
    base: Mutex<(Instant, DeviceCounters)>,
}

impl Paced {
    /// Paces `inner` at the given bandwidths (bytes per second).
    pub fn new(
        inner: std::sync::Arc<dyn BlockDevice>,
        write_bytes_per_sec: f64,
        read_bytes_per_sec: f64,
    ) -> Self {
        let c = inner.counters();
        Paced {
            write_bytes_per_sec: write_bytes_per_sec.max(1.0),
            read_bytes_per_sec: read_bytes_per_sec.max(1.0),
            base: Mutex::new((Instant::now(), c)),
            inner,
        }
    }

    /// Restart the timeline now (e.g. after a load phase that should not be paced).
    pub fn reset(&self) {
        *self.base.lock() = (Instant::now(), self.inner.counters());
    }

    fn pace(&self) {
        let c = self.inner.counters();
        let (t0, c0) = *self.base.lock();
        let busy = busy_secs(&c0, &c, self.write_bytes_per_sec, self.read_bytes_per_sec);
        let target = t0 + Duration::from_secs_f64(busy);
        let now = Instant::now();
        if target > now {
            std::thread::sleep(target - now);
        }
    }
}

impl BlockDevice for Paced {
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read_at(offset, buf)?;
        self.pace();
        Ok(())
    }
    fn write_at_hinted(&self, offset: u64, buf: &[u8], placement: Option<u16>) -> Result<()> {
        self.inner.write_at_hinted(offset, buf, placement)?;
        self.pace();
        Ok(())
    }
    fn write_batch(&self, writes: &[(u64, &[u8])], placement: Option<u16>) -> Result<()> {
        self.inner.write_batch(writes, placement)?;
        self.pace();
        Ok(())
    }
    fn flush(&self) -> Result<()> {
        self.inner.flush()
    }
    fn trim(&self, offset: u64, len: u64) -> Result<()> {
        self.inner.trim(offset, len)
    }
    fn zone_append(&self, zone_start: u64, buf: &[u8]) -> Result<u64> {
        let r = self.inner.zone_append(zone_start, buf)?;
        self.pace();
        Ok(r)
    }
    fn zone_reset(&self, zone_start: u64) -> Result<()> {
        self.inner.zone_reset(zone_start)
    }
    fn zone_report(&self) -> Result<Vec<ZoneInfo>> {
        self.inner.zone_report()
    }
    fn counters(&self) -> DeviceCounters {
        self.inner.counters()
    }
}
