//! A plain in-memory device: every write is durable at once. For tests and as a fast backend.

use crate::{check_io, BlockDevice, DeviceCounters, Geometry, Result, BLOCK_SIZE};
use parking_lot::RwLock;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// An in-memory [`BlockDevice`]: zero-filled, durable at once, no media counter.
pub struct MemDevice {
    geo: Geometry,
    /// One lock per 1 MiB stripe keeps concurrent I/O from serializing on one lock.
    stripes: Vec<RwLock<Vec<u8>>>,
    host_written: AtomicU64,
    host_read: AtomicU64,
    trimmed: AtomicU64,
    flushes: AtomicU64,
}

const STRIPE: u64 = 1 << 20;

impl MemDevice {
    /// A device of `capacity` bytes (rounded down to BLOCK_SIZE), zero-filled lazily.
    ///
    /// # Panics
    /// Never (an internal check of the stripe count).
    #[must_use]
    pub fn new(capacity: u64) -> Self {
        let capacity = capacity / BLOCK_SIZE as u64 * BLOCK_SIZE as u64;
        let n = crate::usize_of(capacity.div_ceil(STRIPE));
        assert!(capacity % BLOCK_SIZE as u64 == 0 && (n as u64) * STRIPE >= capacity);
        MemDevice {
            geo: Geometry::conventional(capacity),
            stripes: (0..n).map(|_| RwLock::new(Vec::new())).collect(),
            host_written: AtomicU64::new(0),
            host_read: AtomicU64::new(0),
            trimmed: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
        }
    }

    fn for_each_block(offset: u64, len: usize, mut f: impl FnMut(usize, usize, usize)) {
        // f(stripe index, offset inside stripe, offset inside buffer), per 4 KiB block.
        let mut done = 0usize;
        while done < len {
            let abs = offset + done as u64;
            f(
                crate::usize_of(abs / STRIPE),
                crate::usize_of(abs % STRIPE),
                done,
            );
            done += BLOCK_SIZE;
        }
    }
}

impl BlockDevice for MemDevice {
    fn geometry(&self) -> &Geometry {
        &self.geo
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        Self::for_each_block(offset, buf.len(), |s, so, bo| {
            let stripe = self.stripes[s].read();
            let dst = &mut buf[bo..bo + BLOCK_SIZE];
            if stripe.is_empty() {
                dst.fill(0);
            } else {
                dst.copy_from_slice(&stripe[so..so + BLOCK_SIZE]);
            }
        });
        self.host_read.fetch_add(buf.len() as u64, Relaxed);
        Ok(())
    }

    fn write_at_hinted(&self, offset: u64, buf: &[u8], _placement: Option<u16>) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        Self::for_each_block(offset, buf.len(), |s, so, bo| {
            let mut stripe = self.stripes[s].write();
            if stripe.is_empty() {
                stripe.resize(crate::usize_of(STRIPE), 0);
            }
            assert_eq!(
                stripe.len(),
                crate::usize_of(STRIPE),
                "a written stripe is whole"
            );
            stripe[so..so + BLOCK_SIZE].copy_from_slice(&buf[bo..bo + BLOCK_SIZE]);
        });
        self.host_written.fetch_add(buf.len() as u64, Relaxed);
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        self.flushes.fetch_add(1, Relaxed);
        Ok(())
    }

    fn trim(&self, offset: u64, len: u64) -> Result<()> {
        check_io(&self.geo, offset, crate::usize_of(len))?;
        self.trimmed.fetch_add(len, Relaxed);
        Ok(())
    }

    fn counters(&self) -> DeviceCounters {
        DeviceCounters {
            host_bytes_written: self.host_written.load(Relaxed),
            media_bytes_written: None,
            host_bytes_read: self.host_read.load(Relaxed),
            trimmed_bytes: self.trimmed.load(Relaxed),
            flushes: self.flushes.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_roundtrip_and_alignment() {
        let d = MemDevice::new(8 << 20);
        let mut block = vec![7u8; 8192];
        block[4096] = 9;
        d.write_at(4096 * 300, &block).unwrap();
        let mut out = vec![0u8; 8192];
        d.read_at(4096 * 300, &mut out).unwrap();
        assert_eq!(out, block);
        assert!(d.write_at(100, &block).is_err());
        assert!(d.read_at(8 << 20, &mut out).is_err());
        assert_eq!(d.counters().host_bytes_written, 8192);
    }
}
