//! [`Paced`]: a device wrapper that makes a simulated SSD I/O-bound in real time. The in-memory
//! simulator completes every I/O at memory speed, so throughput measured on it is CPU-bound.
//! `Paced` feeds the media work of every I/O (media bytes written, GC copies included, read
//! from the inner device's counters; bytes read) to the one timing model
//! ([`crate::timing::Timing`]: one chip timed by the bandwidths with [`Paced::new`], any chip
//! configuration with [`Paced::with_model`]) and sleeps until the model's chips have done all
//! the work so far; reads queue behind the writes and GC copies on the same chips. Throughput measured through it reflects the device's work, as on real
//! hardware; [`Paced::busy`] is the device-bound time of the run.
//!
//! It paces *throughput*, not per-request latency: every request is served as if it had
//! arrived when the timeline started (the media is never idle for lack of work), so the wait
//! is `start + total media time - now` and CPU work overlaps device work. Per-request FIFO
//! pacing (arrival = now) would make every request sleep its own few microseconds of service
//! time, which the OS timer cannot honour (tens of microseconds of slack): the run would then
//! measure the sleeps, not the device (`nowa table1 --quick` went from 83 s to 313 s).

use crate::timing::{Ps, Timing, TimingModel, Work};
use crate::{BlockDevice, DeviceCounters, Geometry, Result, ZoneInfo, BLOCK_SIZE_U64};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The timeline of a [`Paced`] device.
struct Timeline {
    /// Wall-clock time of model time 0.
    t0: Instant,
    /// Media and read bytes already accounted.
    media: u64,
    read: u64,
    timing: Timing,
}

/// A [`BlockDevice`] whose I/O takes the time the timing model gives it.
pub struct Paced {
    inner: Arc<dyn BlockDevice>,
    line: Mutex<Timeline>,
}

/// Bytes the media has written: the device's media counter, or its host writes if it has none.
fn media_bytes(c: &DeviceCounters) -> u64 {
    c.media_bytes_written.unwrap_or(c.host_bytes_written)
}

impl Paced {
    /// Paces `inner` at `write_bytes_per_sec` media writes and `read_bytes_per_sec` reads
    /// (each at least 1 byte/s).
    ///
    /// # Panics
    /// Never: bandwidths of at least 1 byte/s make a valid model.
    #[must_use]
    pub fn new(
        inner: Arc<dyn BlockDevice>,
        write_bytes_per_sec: f64,
        read_bytes_per_sec: f64,
    ) -> Self {
        let model =
            TimingModel::bandwidth_only(write_bytes_per_sec.max(1.0), read_bytes_per_sec.max(1.0));
        Self::with_model(inner, model).expect("bandwidths of at least 1 byte/s are valid")
    }

    /// Paces `inner` with any timing model.
    ///
    /// # Errors
    /// The model is invalid.
    pub fn with_model(inner: Arc<dyn BlockDevice>, model: TimingModel) -> Result<Self> {
        let c = inner.counters();
        Ok(Paced {
            line: Mutex::new(Timeline {
                t0: Instant::now(),
                media: media_bytes(&c),
                read: c.host_bytes_read,
                timing: Timing::new(model)?,
            }),
            inner,
        })
    }

    /// Restart the timeline now (e.g. after a load phase that should not be paced).
    pub fn reset(&self) {
        let c = self.inner.counters();
        let mut l = self.line.lock();
        l.t0 = Instant::now();
        l.media = media_bytes(&c);
        l.read = c.host_bytes_read;
        l.timing.restart();
    }

    /// Media busy time since the timeline (re)started: the device-bound duration of the run.
    #[must_use]
    pub fn busy(&self) -> Duration {
        Duration::from_nanos(self.line.lock().timing.busy_total() / 1000)
    }

    /// Model time at which all the work so far is done, from the timeline's start: it grows
    /// by what each request adds (its pages, and the GC copies and erases it triggered), on
    /// the model's clock alone, so a program can attribute device time to its requests
    /// independently of how busy the host machine is (the wall-clock waits are not).
    #[must_use]
    pub fn model_time(&self) -> Duration {
        Duration::from_nanos(self.line.lock().timing.idle_at() / 1000)
    }

    /// Account the work done since the last call and sleep until the model completes it.
    fn pace(&self, write: bool) {
        let c = self.inner.counters();
        let until = {
            let mut l = self.line.lock();
            let (media, read) = (media_bytes(&c), c.host_bytes_read);
            let work = Work {
                write,
                programmed_pages: media.saturating_sub(l.media) / BLOCK_SIZE_U64,
                read_pages: read.saturating_sub(l.read) / BLOCK_SIZE_U64,
                erased_units: 0,
            };
            l.media = l.media.max(media);
            l.read = l.read.max(read);
            // Throughput pacing: every request arrives at the start of the timeline.
            let done: Ps = l.timing.serve(0, &work);
            l.t0 + Duration::from_nanos(done / 1000)
        };
        let now = Instant::now();
        if until > now {
            std::thread::sleep(until - now);
        }
    }
}

impl BlockDevice for Paced {
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read_at(offset, buf)?;
        self.pace(false);
        Ok(())
    }
    fn write_at_hinted(&self, offset: u64, buf: &[u8], placement: Option<u16>) -> Result<()> {
        self.inner.write_at_hinted(offset, buf, placement)?;
        self.pace(true);
        Ok(())
    }
    fn write_batch(&self, writes: &[(u64, &[u8])], placement: Option<u16>) -> Result<()> {
        self.inner.write_batch(writes, placement)?;
        self.pace(true);
        Ok(())
    }
    fn read_batch(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        self.inner.read_batch(reads)?;
        self.pace(false);
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
        self.pace(true);
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
    fn buffer_alignment(&self) -> usize {
        self.inner.buffer_alignment()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemDevice;

    #[test]
    fn writes_take_their_media_time() {
        // 4 MiB/s: 64 writes of 4 KiB = 256 KiB take 62.5 ms of media time.
        let p = Paced::new(Arc::new(MemDevice::new(1 << 20)), 4.0 * 1048576.0, 1e9);
        let t = Instant::now();
        for i in 0..64u64 {
            p.write_at(i * 4096, &[1u8; 4096]).unwrap();
        }
        let el = t.elapsed();
        assert!(el >= Duration::from_millis(62), "{el:?}");
        let busy = p.busy();
        assert!(
            busy >= Duration::from_micros(62_400) && busy <= Duration::from_micros(62_600),
            "{busy:?}"
        );
        assert!(
            p.model_time() >= busy,
            "everything done after the busy time"
        );
        p.reset();
        assert_eq!(p.busy(), Duration::ZERO);
        assert_eq!(p.model_time(), Duration::ZERO, "a new timeline");
    }

    /// With the chip model a read waits on its chip behind the programs queued before it:
    /// 64,000 page writes that reached the device without being paced yet (another thread's
    /// writes, or the SSD's GC copies, which show up in the same media counter) occupy every
    /// chip of FEMU's 8 x 8 for 1000 x 200 us = 200 ms, and a one-page read issued after them
    /// completes only then; on idle chips the same read costs one read latency.
    #[test]
    fn reads_wait_behind_queued_writes_with_the_chip_model() {
        use crate::timing::{ChipParams, TimingModel};
        let model = TimingModel::with_chips(ChipParams::femu(8, 8, 4096));
        let inner = Arc::new(MemDevice::new(1 << 20));
        let p = Paced::with_model(inner.clone(), model).unwrap();
        let mut buf = vec![0u8; 4096];
        p.read_at(0, &mut buf).unwrap();
        let idle = p.busy();
        assert!(
            idle < Duration::from_micros(10),
            "one read over 64 chips: {idle:?}"
        );
        p.reset();
        for _ in 0..64_000 {
            inner.write_at(0, &[7u8; 4096]).unwrap();
        }
        let t = Instant::now();
        p.read_at(0, &mut buf).unwrap();
        let waited = t.elapsed();
        assert_eq!(buf[0], 7);
        // The read's chip finishes its 1000 programs at 200 ms from the reset; the writes
        // took far less than 100 ms of that.
        assert!(
            waited >= Duration::from_millis(100),
            "read waited {waited:?}"
        );
        let busy = p.busy();
        assert!(
            busy >= Duration::from_millis(200) && busy < Duration::from_millis(201),
            "{busy:?}"
        );
    }
}
