//! [`Paced`]: a device wrapper that makes a simulated SSD I/O-bound. The in-memory simulator
//! completes every I/O at memory speed, so throughput measured on it is CPU-bound. `Paced`
//! keeps a timeline on which the device is busy for `media bytes written / write bandwidth +
//! bytes read / read bandwidth` (media bytes include the SSD's own GC copies, read from the
//! inner device's counters) and delays each I/O until the timeline has caught up with it.
//! Throughput measured through it reflects the device's work, as on real hardware.

use nowa_device::{BlockDevice, DeviceCounters, Geometry, Result, ZoneInfo};
use parking_lot::Mutex;
use std::time::{Duration, Instant};

pub struct Paced {
    inner: std::sync::Arc<dyn BlockDevice>,
    write_bytes_per_sec: f64,
    read_bytes_per_sec: f64,
    /// (start of the timeline, media bytes and read bytes at the start).
    base: Mutex<(Instant, u64, u64)>,
}

impl Paced {
    pub fn new(
        inner: std::sync::Arc<dyn BlockDevice>,
        write_bytes_per_sec: f64,
        read_bytes_per_sec: f64,
    ) -> Self {
        let c = inner.counters();
        Paced {
            write_bytes_per_sec: write_bytes_per_sec.max(1.0),
            read_bytes_per_sec: read_bytes_per_sec.max(1.0),
            base: Mutex::new((
                Instant::now(),
                c.media_bytes_written.unwrap_or(c.host_bytes_written),
                c.host_bytes_read,
            )),
            inner,
        }
    }

    /// Restart the timeline now (e.g. after a load phase that should not be paced).
    pub fn reset(&self) {
        let c = self.inner.counters();
        *self.base.lock() = (
            Instant::now(),
            c.media_bytes_written.unwrap_or(c.host_bytes_written),
            c.host_bytes_read,
        );
    }

    fn pace(&self) {
        let c = self.inner.counters();
        let (t0, m0, r0) = *self.base.lock();
        let media = c.media_bytes_written.unwrap_or(c.host_bytes_written) - m0;
        let reads = c.host_bytes_read - r0;
        let busy = media as f64 / self.write_bytes_per_sec + reads as f64 / self.read_bytes_per_sec;
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
