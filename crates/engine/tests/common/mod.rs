//! Test-only crash device (nowa_device::FaultyDevice did not exist when these tests were
//! written): same semantics. Writes since the last flush live in a volatile overlay; on power
//! loss each of them is, per seed, kept, dropped or torn at a 512-byte boundary; the armed
//! "crash after n writes" tears the n-th write call and powers off.
#![allow(dead_code)]

use nowa_device::{
    check_io, BlockDevice, DeviceCounters, DeviceError, Geometry, Result, BLOCK_SIZE,
};
use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;

const SECTOR: usize = 512;

/// A device offset as an index into the image.
fn ix(x: u64) -> usize {
    usize::try_from(x).expect("test images fit in memory")
}

struct State {
    durable: Vec<u8>,
    /// Unflushed block writes, in issue order: (block offset, data).
    pending: Vec<(u64, Vec<u8>)>,
    /// Latest pending content per block, for reads.
    latest: HashMap<u64, usize>,
    off: bool,
    rng: SmallRng,
    crash_in: Option<u64>,
    /// Tear the first write call that touches [lo, hi) (deterministic torn-page tests).
    tear_range: Option<(u64, u64, usize)>,
    written: u64,
    read: u64,
    flushes: u64,
    write_calls: u64,
}

pub struct CrashDevice {
    geo: Geometry,
    st: Mutex<State>,
}

impl CrashDevice {
    pub fn new(capacity: u64, seed: u64) -> Self {
        Self::from_image(vec![0; ix(capacity)], seed)
    }

    pub fn from_image(image: Vec<u8>, seed: u64) -> Self {
        CrashDevice {
            geo: Geometry::conventional(image.len() as u64),
            st: Mutex::new(State {
                durable: image,
                pending: Vec::new(),
                latest: HashMap::new(),
                off: false,
                rng: SmallRng::seed_from_u64(seed),
                crash_in: None,
                tear_range: None,
                written: 0,
                read: 0,
                flushes: 0,
                write_calls: 0,
            }),
        }
    }

    /// Durable contents (what survives a power loss right now, minus pending writes).
    pub fn durable_image(&self) -> Vec<u8> {
        self.st.lock().durable.clone()
    }

    /// The n-th write call from now (1 = the next) is torn and the device powers off.
    pub fn crash_after_writes(&self, n: u64) {
        self.st.lock().crash_in = Some(n.max(1));
    }

    /// The first write call overlapping [lo, hi) keeps only its first `keep` bytes of each
    /// block in that range... precisely: the block is torn after `keep` bytes; then power off.
    pub fn tear_write_in(&self, lo: u64, hi: u64, keep: usize) {
        self.st.lock().tear_range = Some((lo, hi, keep));
    }

    pub fn power_loss(&self) {
        let mut st = self.st.lock();
        Self::lose(&mut st);
    }

    fn lose(st: &mut State) {
        let pending = std::mem::take(&mut st.pending);
        st.latest.clear();
        for (off, data) in pending {
            match st.rng.random_range(0..3u32) {
                0 => {}
                1 => Self::apply(&mut st.durable, off, &data),
                _ => {
                    let k = st.rng.random_range(0..=(BLOCK_SIZE / SECTOR)) * SECTOR;
                    Self::apply(&mut st.durable, off, &data[..k]);
                }
            }
        }
        st.off = true;
    }

    fn apply(durable: &mut [u8], off: u64, data: &[u8]) {
        durable[ix(off)..ix(off) + data.len()].copy_from_slice(data);
    }

    pub fn restart(&self) {
        let mut st = self.st.lock();
        st.off = false;
        st.crash_in = None;
        st.tear_range = None;
    }

    pub fn is_powered_off(&self) -> bool {
        self.st.lock().off
    }

    pub fn write_calls(&self) -> u64 {
        self.st.lock().write_calls
    }
}

impl BlockDevice for CrashDevice {
    fn geometry(&self) -> &Geometry {
        &self.geo
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        let mut st = self.st.lock();
        if st.off {
            return Err(DeviceError::PoweredOff);
        }
        for (i, chunk) in buf.chunks_mut(BLOCK_SIZE).enumerate() {
            let b = offset + (i * BLOCK_SIZE) as u64;
            match st.latest.get(&b) {
                Some(&idx) => chunk.copy_from_slice(&st.pending[idx].1),
                None => chunk.copy_from_slice(&st.durable[ix(b)..ix(b) + BLOCK_SIZE]),
            }
        }
        st.read += buf.len() as u64;
        Ok(())
    }

    fn write_at_hinted(&self, offset: u64, buf: &[u8], _p: Option<u16>) -> Result<()> {
        check_io(&self.geo, offset, buf.len())?;
        let mut st = self.st.lock();
        if st.off {
            return Err(DeviceError::PoweredOff);
        }
        st.write_calls += 1;
        if let Some((lo, hi, keep)) = st.tear_range {
            if offset < hi && offset + buf.len() as u64 > lo {
                // Tear the first block inside the range, drop the rest of this call.
                let first = offset.max(lo) / BLOCK_SIZE as u64 * BLOCK_SIZE as u64;
                let i = ix(first - offset);
                Self::lose(&mut st);
                Self::apply(&mut st.durable, first, &buf[i..i + keep]);
                return Err(DeviceError::PoweredOff);
            }
        }
        if let Some(n) = st.crash_in {
            if n <= 1 {
                // The write in flight: a random 512-byte prefix of it reaches the overlay.
                let k = st.rng.random_range(0..=buf.len() / SECTOR) * SECTOR;
                let mut b = 0;
                while b < k {
                    let end = (b + BLOCK_SIZE).min(k);
                    let blk = offset + b as u64;
                    let mut data = st.durable[ix(blk)..ix(blk) + BLOCK_SIZE].to_vec();
                    if let Some(&idx) = st.latest.get(&blk) {
                        data.copy_from_slice(&st.pending[idx].1);
                    }
                    data[..end - b].copy_from_slice(&buf[b..end]);
                    let idx = st.pending.len();
                    st.pending.push((blk, data));
                    st.latest.insert(blk, idx);
                    b += BLOCK_SIZE;
                }
                Self::lose(&mut st);
                return Err(DeviceError::PoweredOff);
            }
            st.crash_in = Some(n - 1);
        }
        for (i, chunk) in buf.chunks(BLOCK_SIZE).enumerate() {
            let b = offset + (i * BLOCK_SIZE) as u64;
            let idx = st.pending.len();
            st.pending.push((b, chunk.to_vec()));
            st.latest.insert(b, idx);
        }
        st.written += buf.len() as u64;
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        let mut st = self.st.lock();
        if st.off {
            return Err(DeviceError::PoweredOff);
        }
        let pending = std::mem::take(&mut st.pending);
        st.latest.clear();
        for (off, data) in pending {
            Self::apply(&mut st.durable, off, &data);
        }
        st.flushes += 1;
        Ok(())
    }

    fn trim(&self, offset: u64, len: u64) -> Result<()> {
        check_io(&self.geo, offset, ix(len))
    }

    fn counters(&self) -> DeviceCounters {
        let st = self.st.lock();
        DeviceCounters {
            host_bytes_written: st.written,
            media_bytes_written: None,
            host_bytes_read: st.read,
            trimmed_bytes: 0,
            flushes: st.flushes,
        }
    }
}

/// Deterministic test value for (key, version).
pub fn value_for(key: u64, ver: u64, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    let mut x = key.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ver.wrapping_mul(0xD1B5_4A32_D192_ED03);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x.to_le_bytes()[0]);
    }
    v
}

/// Every byte of `d`.
pub fn image(d: &dyn BlockDevice) -> Vec<u8> {
    let mut v = vec![0u8; ix(d.geometry().capacity)];
    d.read_at(0, &mut v).expect("read the whole image");
    v
}

/// A memory device holding `img`.
pub fn device(img: &[u8]) -> std::sync::Arc<nowa_device::MemDevice> {
    let d = nowa_device::MemDevice::new(img.len() as u64);
    d.write_at(0, img).expect("write the image");
    std::sync::Arc::new(d)
}

/// An engine that never checkpoints while a test loads it (the WAL limit is far above what
/// the tests write): every acknowledged put lives only in the log, so damage to the log is
/// damage to acknowledged data. wal_damage.rs and wal_mark_torn.rs.
pub fn log_only_cfg() -> nowa_engine::Config {
    nowa_engine::Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(1 << 20),
        dw_pages: 8,
        durability: nowa_engine::Durability::Sync,
        ..nowa_engine::Config::default()
    }
}
