//! [`RecordingDevice`]: records every request a program makes to a [`BlockDevice`], in the
//! nowa trace CSV, without root.

use crate::{CsvWriter, Op, Record, TraceError};
use nowa_device::{BlockDevice, DeviceCounters, DeviceError, Geometry, ZoneInfo};
use parking_lot::Mutex;
use std::path::Path;
use std::time::Instant;

/// A [`BlockDevice`] that forwards every call to `inner` and appends one CSV line per
/// completed request (writes, zone appends, reads, trims, zone resets as discards, flushes).
///
/// Clock: `ts_sec` is the time since the device was wrapped (`std::time::Instant`, the
/// monotonic clock), taken when the request completed, under the recorder's lock: the file is
/// in completion order and its timestamps never decrease. Failed requests are not recorded,
/// so the trace's byte sums equal the bytes the device accepted.
///
/// The CSV buffer is written to the file on every `flush()` of the device and when the device
/// is dropped (a failure then is printed, since `Drop` cannot return it).
pub struct RecordingDevice<D: BlockDevice> {
    inner: D,
    start: Instant,
    out: Mutex<Option<CsvWriter>>,
    /// Timestamp of the last record (they never decrease).
    last_ns: std::sync::atomic::AtomicU64,
}

impl<D: BlockDevice> RecordingDevice<D> {
    /// Wrap `inner`, writing the trace to `path` (an existing file only if `overwrite`).
    ///
    /// # Errors
    /// [`TraceError::Exists`] or [`TraceError::Io`] naming the file.
    pub fn new(inner: D, path: &Path, overwrite: bool) -> Result<RecordingDevice<D>, TraceError> {
        Ok(RecordingDevice {
            inner,
            start: Instant::now(),
            out: Mutex::new(Some(CsvWriter::create(path, overwrite, false)?)),
            last_ns: std::sync::atomic::AtomicU64::new(0),
        })
    }

    fn record(&self, op: Op, offset: u64, len: u64) -> Result<(), DeviceError> {
        let mut out = self.out.lock();
        let ts_ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let last = self
            .last_ns
            .swap(ts_ns, std::sync::atomic::Ordering::Relaxed);
        assert!(
            ts_ns >= last,
            "the recorder's clock is taken under its lock"
        );
        if let Some(w) = out.as_mut() {
            w.push(&Record {
                ts_ns,
                volume: 0,
                op,
                offset,
                len,
            })
            .map_err(to_device)?;
        }
        Ok(())
    }

    /// Write out the remaining lines and close the file; returns the records written.
    ///
    /// # Errors
    /// [`TraceError::Io`] naming the file.
    pub fn finish(&self) -> Result<u64, TraceError> {
        match self.out.lock().take() {
            Some(w) => w.finish(),
            None => Ok(0),
        }
    }

    /// The wrapped device.
    pub fn inner(&self) -> &D {
        &self.inner
    }
}

fn to_device(e: TraceError) -> DeviceError {
    match e {
        TraceError::Io { source, .. } => DeviceError::Io(source),
        other => DeviceError::Io(std::io::Error::other(other.to_string())),
    }
}

fn len64(n: usize) -> u64 {
    u64::try_from(n).expect("buffer lengths fit u64")
}

impl<D: BlockDevice> BlockDevice for RecordingDevice<D> {
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> nowa_device::Result<()> {
        self.inner.read_at(offset, buf)?;
        self.record(Op::Read, offset, len64(buf.len()))
    }
    fn write_at_hinted(
        &self,
        offset: u64,
        buf: &[u8],
        placement: Option<u16>,
    ) -> nowa_device::Result<()> {
        self.inner.write_at_hinted(offset, buf, placement)?;
        self.record(Op::Write, offset, len64(buf.len()))
    }
    fn write_batch(
        &self,
        writes: &[(u64, &[u8])],
        placement: Option<u16>,
    ) -> nowa_device::Result<()> {
        self.inner.write_batch(writes, placement)?;
        for (off, buf) in writes {
            self.record(Op::Write, *off, len64(buf.len()))?;
        }
        Ok(())
    }
    fn read_batch(&self, reads: &mut [(u64, &mut [u8])]) -> nowa_device::Result<()> {
        self.inner.read_batch(reads)?;
        for (off, buf) in reads.iter() {
            self.record(Op::Read, *off, len64(buf.len()))?;
        }
        Ok(())
    }
    fn flush(&self) -> nowa_device::Result<()> {
        self.inner.flush()?;
        self.record(Op::Flush, 0, 0)?;
        match self.out.lock().as_mut() {
            Some(w) => w.flush().map_err(to_device),
            None => Ok(()),
        }
    }
    fn trim(&self, offset: u64, len: u64) -> nowa_device::Result<()> {
        self.inner.trim(offset, len)?;
        self.record(Op::Discard, offset, len)
    }
    fn zone_append(&self, zone_start: u64, buf: &[u8]) -> nowa_device::Result<u64> {
        let at = self.inner.zone_append(zone_start, buf)?;
        self.record(Op::Write, at, len64(buf.len()))?;
        Ok(at)
    }
    fn zone_reset(&self, zone_start: u64) -> nowa_device::Result<()> {
        self.inner.zone_reset(zone_start)?;
        let zone = self.inner.geometry().zone_size.unwrap_or(0);
        self.record(Op::Discard, zone_start, zone)
    }
    fn zone_report(&self) -> nowa_device::Result<Vec<ZoneInfo>> {
        self.inner.zone_report()
    }
    fn counters(&self) -> DeviceCounters {
        self.inner.counters()
    }
    fn buffer_alignment(&self) -> usize {
        self.inner.buffer_alignment()
    }
}

impl<D: BlockDevice> Drop for RecordingDevice<D> {
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            eprintln!("nowa: error: writing the recorded trace: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nowa_device::MemDevice;

    #[test]
    fn records_every_completed_request() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.csv");
        let dev = RecordingDevice::new(MemDevice::new(1 << 20), &path, false).unwrap();
        dev.write_at(4096, &[1u8; 8192]).unwrap();
        let mut buf = [0u8; 4096];
        dev.read_at(4096, &mut buf).unwrap();
        dev.trim(0, 4096).unwrap();
        dev.flush().unwrap();
        assert!(dev.write_at(1 << 20, &[0u8; 4096]).is_err(), "out of range");
        assert_eq!(dev.finish().unwrap(), 4);
        let recs: Vec<Record> = crate::open(&path, None)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let ops: Vec<(Op, u64, u64)> = recs.iter().map(|r| (r.op, r.offset, r.len)).collect();
        assert_eq!(
            ops,
            vec![
                (Op::Write, 4096, 8192),
                (Op::Read, 4096, 4096),
                (Op::Discard, 0, 4096),
                (Op::Flush, 0, 0)
            ]
        );
        assert!(recs.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
        assert!(
            RecordingDevice::new(MemDevice::new(1 << 20), &path, false).is_err(),
            "no overwrite"
        );
    }
}
