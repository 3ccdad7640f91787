//! [`Disk`]: the virtual SSD's I/O path, shared by the FUSE file system and the benchmark.
//! Requests of any alignment become whole-page operations on the simulated SSD (a partial
//! page is read, merged and written whole, as a drive's firmware does), the host bytes are
//! counted exactly as asked (so they equal a loop device's /sys/block counters), and every
//! request's service time goes into the latency histograms.

use crate::stats::{Snapshot, Stats};
use crate::{Result, VssdError, PAGE};
use nowa_device::timing::TimingModel;
use nowa_device::{
    BlockDevice, DeviceCounters, Geometry, Paced, SimConfig, SimDevice, SimMode, BLOCK_SIZE,
};
use nowa_flash::Counters;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// Where the virtual SSD keeps its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backing {
    /// In memory (lost when the daemon ends).
    Mem,
    /// A sparse file: `disk` i is the byte range [i x file size, (i + 1) x file size).
    File(PathBuf),
}

/// What a [`Disk`] is.
#[derive(Debug, Clone)]
pub struct DiskSpec {
    /// The simulated SSD (FTL configuration and host interface).
    pub sim: SimConfig,
    /// Files the logical space is split into (each its own placement handle under FDP).
    pub files: u16,
    /// Where the data lives.
    pub backing: Backing,
    /// Replies wait for this timing model (None: at memory speed).
    pub timing: Option<TimingModel>,
    /// One line describing the configuration (printed and served in the stats).
    pub describe: String,
    /// Record every page write, trim, read and flush the simulated SSD receives (whole pages,
    /// after partial pages were merged) in this nowa trace CSV, which must not exist:
    /// `nowa sim --trace` replays the same stream (docs/vssd.md).
    pub record: Option<PathBuf>,
}

/// The simulated SSD plus the backing file: the [`BlockDevice`] that [`Paced`] wraps.
struct Store {
    sim: SimDevice,
    file: Option<(File, PathBuf)>,
    /// Bytes read from the backing file: the simulated SSD does not see those reads, and the
    /// timing model paces reads by this counter.
    file_read: AtomicU64,
}

impl Store {
    fn io(path: &std::path::Path, e: std::io::Error) -> nowa_device::DeviceError {
        nowa_device::DeviceError::Io(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", path.display()),
        ))
    }
}

impl BlockDevice for Store {
    fn geometry(&self) -> &Geometry {
        self.sim.geometry()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> nowa_device::Result<()> {
        match &self.file {
            Some((f, p)) => {
                f.read_exact_at(buf, offset).map_err(|e| Self::io(p, e))?;
                self.file_read.fetch_add(buf.len() as u64, Relaxed);
                Ok(())
            }
            None => self.sim.read_at(offset, buf),
        }
    }
    fn write_at_hinted(
        &self,
        offset: u64,
        buf: &[u8],
        hint: Option<u16>,
    ) -> nowa_device::Result<()> {
        assert_eq!(buf.len() % BLOCK_SIZE, 0, "Disk sends whole pages");
        self.sim.write_at_hinted(offset, buf, hint)?;
        if let Some((f, p)) = &self.file {
            f.write_all_at(buf, offset).map_err(|e| Self::io(p, e))?;
        }
        Ok(())
    }
    fn flush(&self) -> nowa_device::Result<()> {
        self.sim.flush()?;
        // A flush makes the data durable on the host too, so what a program synced survives
        // a crash of the daemon or of the machine.
        match &self.file {
            Some((f, p)) => f.sync_data().map_err(|e| Self::io(p, e)),
            None => Ok(()),
        }
    }
    fn trim(&self, offset: u64, len: u64) -> nowa_device::Result<()> {
        self.sim.trim(offset, len)?;
        if let Some((f, p)) = &self.file {
            punch_hole(f, offset, len).map_err(|e| Self::io(p, e))?;
        }
        Ok(())
    }
    fn counters(&self) -> DeviceCounters {
        let mut c = self.sim.counters();
        c.host_bytes_read += self.file_read.load(Relaxed);
        c
    }
}

/// Deallocates `len` bytes at `offset` of `f`, keeping its size (reads return zeroes).
fn punch_hole(f: &File, offset: u64, len: u64) -> std::io::Result<()> {
    let (Ok(off), Ok(n)) = (i64::try_from(offset), i64::try_from(len)) else {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    };
    // SAFETY: fallocate on a file descriptor this File owns, with plain integer arguments;
    // no memory is passed. Test: tests/vssd_fuse.rs punches holes through it.
    let r = unsafe {
        libc::fallocate(
            f.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            off,
            n,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The virtual SSD: see the module documentation.
pub struct Disk {
    spec: DiskSpec,
    store: Arc<Store>,
    /// `store`, or `store` paced by the timing model, recorded with `--record-trace`.
    dev: Arc<dyn BlockDevice>,
    /// The pacing layer of `dev` with `--timing`: its model clock attributes device time to
    /// each request (wall-clock latencies also hold the host's CPU waits).
    paced: Option<Arc<Paced>>,
    file_bytes: u64,
    /// FTL counters when the disk was opened (the pages of a reused backing file are
    /// written into the FTL first and are not the program's writes).
    base: Counters,
    stats: Stats,
    started: Instant,
}

/// Opens (creating or growing) the backing file; refuses one larger than the SSD.
fn open_backing(path: &std::path::Path, capacity: u64) -> Result<File> {
    let io = |source| VssdError::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    if len > capacity {
        return Err(VssdError::BackingTooLarge {
            path: path.to_path_buf(),
            len,
            capacity,
        });
    }
    f.set_len(capacity).map_err(io)?;
    Ok(f)
}

/// The allocated extents of `f` (SEEK_DATA / SEEK_HOLE), as (offset, length) in whole pages.
fn data_extents(f: &File, len: u64) -> Vec<(u64, u64)> {
    let fd = f.as_raw_fd();
    let mut out = Vec::new();
    let mut pos: u64 = 0;
    while pos < len {
        let Ok(at) = i64::try_from(pos) else { break };
        // SAFETY: lseek on a descriptor this File owns, integer arguments only; it moves the
        // shared file offset, which nothing else uses (all I/O is positioned). Test:
        // tests/vssd_fuse.rs remounts a backing file.
        let data = unsafe { libc::lseek(fd, at, libc::SEEK_DATA) };
        let Ok(start) = u64::try_from(data) else {
            break;
        };
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        let end = u64::try_from(hole).map_or(len, |h| h.min(len));
        let (first, last) = (start / PAGE * PAGE, end.div_ceil(PAGE) * PAGE);
        if last > first {
            out.push((first, last.min(len) - first));
        }
        pos = end.max(start + 1);
    }
    out
}

impl Disk {
    /// Builds the simulated SSD, opens the backing file and, when it already holds data (a
    /// remount), writes its allocated pages into the FTL so they count as live; the counters
    /// start after that.
    ///
    /// # Errors
    /// The FTL refuses the configuration, `--files` does not split the capacity into pages,
    /// the backing file cannot be opened or is larger than the SSD.
    ///
    /// # Panics
    /// If the files do not fit the device (a bug in the split above).
    pub fn open(spec: DiskSpec) -> Result<Disk> {
        let mut sim_cfg = spec.sim.clone();
        sim_cfg.store_data = spec.backing == Backing::Mem;
        let sim = SimDevice::new(sim_cfg)?;
        let capacity = sim.geometry().capacity;
        let files = u64::from(spec.files.max(1));
        let file_bytes = capacity / files / PAGE * PAGE;
        if file_bytes == 0 {
            return Err(VssdError::Split {
                files: spec.files,
                capacity,
            });
        }
        assert!(
            file_bytes % PAGE == 0 && file_bytes * files <= capacity,
            "the files are whole pages inside the device"
        );
        let file = match &spec.backing {
            Backing::Mem => None,
            Backing::File(p) => Some((open_backing(p, capacity)?, p.clone())),
        };
        let store = Arc::new(Store {
            sim,
            file,
            file_read: AtomicU64::new(0),
        });
        let mut disk = Disk {
            dev: store.clone(),
            paced: None,
            store,
            file_bytes,
            base: Counters::default(),
            stats: Stats::new(),
            started: Instant::now(),
            spec,
        };
        disk.preload()?;
        disk.base = disk.store.sim.ftl_counters();
        if let Some(model) = disk.spec.timing {
            let paced = Arc::new(Paced::with_model(disk.store.clone(), model)?);
            disk.dev = paced.clone();
            disk.paced = Some(paced);
        }
        if let Some(path) = &disk.spec.record {
            // Outermost, so the trace has the requests as the FTL got them, in the order they
            // completed; the recorder writes its buffer out at every flush and when dropped.
            let rec =
                nowa_trace::RecordingDevice::new(disk.dev.clone(), path, false).map_err(|e| {
                    VssdError::Io {
                        path: path.clone(),
                        source: std::io::Error::other(e.to_string()),
                    }
                })?;
            disk.dev = Arc::new(rec);
        }
        Ok(disk)
    }

    /// Writes the allocated pages of a reused backing file into the FTL (not the file).
    fn preload(&self) -> Result<()> {
        let Some((f, _)) = &self.store.file else {
            return Ok(());
        };
        let zeros = vec![0u8; 64 * BLOCK_SIZE];
        let capacity = self.capacity();
        for (start, len) in data_extents(f, capacity) {
            let mut pos = start;
            while pos < start + len {
                assert!(pos < capacity, "extents are clipped to the device");
                let n = (start + len - pos).min(zeros.len() as u64);
                let file = (pos / self.file_bytes).min(u64::from(self.files()) - 1);
                let hint = self.hint(u16::try_from(file).unwrap_or(0));
                self.store
                    .sim
                    .write_at_hinted(pos, &zeros[..usize_of(n)], hint)?;
                pos += n;
            }
        }
        Ok(())
    }

    /// The configuration.
    #[must_use]
    pub fn spec(&self) -> &DiskSpec {
        &self.spec
    }
    /// Files the logical space is split into.
    #[must_use]
    pub fn files(&self) -> u16 {
        self.spec.files.max(1)
    }
    /// Bytes of each file.
    #[must_use]
    pub fn file_bytes(&self) -> u64 {
        self.file_bytes
    }
    /// Logical capacity of the simulated SSD.
    #[must_use]
    pub fn capacity(&self) -> u64 {
        self.store.sim.geometry().capacity
    }
    /// Bytes of the FTL's GC unit (the superblock GC erases as one). A host that trims in
    /// these units, aligned, frees whole units: what an out-of-place engine's zone size
    /// should be (`nowa compare` sizes nowa's zones by it).
    #[must_use]
    pub fn gc_unit_bytes(&self) -> u64 {
        u64::from(self.store.sim.layout().unit_pages) * PAGE
    }

    /// The placement handle of `file`: its own under FDP (modulo the handles), none otherwise.
    fn hint(&self, file: u16) -> Option<u16> {
        match self.store.sim.mode() {
            SimMode::Fdp { handles } => Some(file % handles.max(1)),
            _ => None,
        }
    }

    /// The device offset of `off` in `file`, after checking that `len` bytes fit the file.
    fn place(&self, file: u16, off: u64, len: u64) -> Result<u64> {
        assert!(file < self.files(), "file {file} of {}", self.files());
        let end = off.checked_add(len).filter(|&e| e <= self.file_bytes);
        if end.is_none() {
            return Err(nowa_device::DeviceError::OutOfRange {
                offset: off,
                len: usize_of(len),
                capacity: self.file_bytes,
            }
            .into());
        }
        let at = u64::from(file) * self.file_bytes + off;
        assert!(
            at + len <= self.capacity(),
            "a file's range lies inside the device"
        );
        Ok(at)
    }

    /// Reads the page at device offset `page` into `buf` (one page).
    fn read_page(&self, page: u64, buf: &mut [u8]) -> Result<()> {
        assert!(
            page % PAGE == 0 && buf.len() == BLOCK_SIZE,
            "one whole page"
        );
        Ok(self.dev.read_at(page, buf)?)
    }

    /// Writes `data` at `off` of `file`: whole pages as one request, partial pages merged
    /// with their old contents.
    ///
    /// # Errors
    /// Past the file's end, the FTL is full, or the backing file fails.
    pub fn write(&self, file: u16, off: u64, data: &[u8]) -> Result<()> {
        let (t, model) = (Instant::now(), self.model_time());
        let base = self.place(file, off, data.len() as u64)?;
        self.write_dev(base, data, self.hint(file))?;
        let added = self
            .model_time()
            .map(|m| m.saturating_sub(model.unwrap_or_default()));
        self.stats.wrote(data.len() as u64, t.elapsed(), added);
        Ok(())
    }

    /// With `--timing`: the timing model's time at which all the work so far is done
    /// ([`Paced::model_time`]); None at memory speed.
    #[must_use]
    pub fn model_time(&self) -> Option<std::time::Duration> {
        self.paced.as_ref().map(|p| p.model_time())
    }

    fn write_dev(&self, base: u64, data: &[u8], hint: Option<u16>) -> Result<()> {
        let end = base + data.len() as u64;
        assert!(
            end <= self.capacity(),
            "place() keeps requests inside the device"
        );
        let mut page = [0u8; BLOCK_SIZE];
        for p in pieces(base, end) {
            let from = usize_of(p.pos - base);
            match p.part {
                None => {
                    let n = usize_of(p.len);
                    self.dev
                        .write_at_hinted(p.pos, &data[from..from + n], hint)?;
                }
                Some((start, s, e)) => {
                    self.read_page(start, &mut page)?;
                    page[s..e].copy_from_slice(&data[from..from + e - s]);
                    self.dev.write_at_hinted(start, &page, hint)?;
                }
            }
        }
        Ok(())
    }

    /// Reads `buf.len()` bytes at `off` of `file`.
    ///
    /// # Errors
    /// Past the file's end, or the backing file fails.
    ///
    /// # Panics
    /// If `file` is not one of the disk's files (the FUSE layer only passes its own).
    pub fn read(&self, file: u16, off: u64, buf: &mut [u8]) -> Result<()> {
        let t = Instant::now();
        let base = self.place(file, off, buf.len() as u64)?;
        let end = base + buf.len() as u64;
        let mut page = [0u8; BLOCK_SIZE];
        for p in pieces(base, end) {
            let from = usize_of(p.pos - base);
            match p.part {
                None => {
                    let n = usize_of(p.len);
                    self.dev.read_at(p.pos, &mut buf[from..from + n])?;
                }
                Some((start, s, e)) => {
                    self.read_page(start, &mut page)?;
                    buf[from..from + e - s].copy_from_slice(&page[s..e]);
                }
            }
        }
        self.stats.read(buf.len() as u64, t.elapsed());
        Ok(())
    }

    /// Deallocates `len` bytes at `off` of `file` (TRIM): the whole pages inside go to the
    /// FTL as a trim, the partial pages at the edges are written with zeroes.
    ///
    /// # Errors
    /// Past the file's end, the FTL refuses, or the backing file fails.
    ///
    /// # Panics
    /// If `file` is not one of the disk's files (the FUSE layer only passes its own).
    pub fn punch(&self, file: u16, off: u64, len: u64) -> Result<()> {
        let base = self.place(file, off, len)?;
        let end = base + len;
        let (first, last) = (base.div_ceil(PAGE) * PAGE, end / PAGE * PAGE);
        assert!(
            base <= first && last <= end,
            "the trimmed pages lie inside the range"
        );
        let hint = self.hint(file);
        if last > first {
            self.dev.trim(first, last - first)?;
            if first > base {
                self.write_dev(base, &vec![0; usize_of(first - base)], hint)?;
            }
            if end > last {
                self.write_dev(last, &vec![0; usize_of(end - last)], hint)?;
            }
        } else if len > 0 {
            self.write_dev(base, &vec![0; usize_of(len)], hint)?;
        }
        self.stats.trimmed(len);
        Ok(())
    }

    /// Write-zeroes (fallocate ZERO_RANGE, a loop device's REQ_OP_WRITE_ZEROES): deallocated
    /// like a trim, as an NVMe Write Zeroes with the deallocate bit, but counted as host
    /// writes, because the block layer counts it so (/sys/block/loopN/stat).
    ///
    /// # Errors
    /// As [`Disk::punch`].
    pub fn zero(&self, file: u16, off: u64, len: u64) -> Result<()> {
        self.punch(file, off, len)?;
        self.stats.zeroed(len);
        Ok(())
    }

    /// A flush (fsync): the device's cache and, with a backing file, the host's.
    ///
    /// # Errors
    /// The backing file's sync fails.
    pub fn flush(&self) -> Result<()> {
        let t = Instant::now();
        self.dev.flush()?;
        self.stats.flushed(t.elapsed());
        Ok(())
    }

    /// The counters now.
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        let ftl = self.store.sim.ftl_counters().since(&self.base);
        self.stats.snapshot(
            &ftl,
            self.model_time(),
            self.started.elapsed().as_secs_f64(),
            self.capacity(),
            self.files(),
            &self.spec.describe,
        )
    }
}

/// One piece of a request: a run of whole pages, or a part of one page.
struct Piece {
    /// Device offset of the piece's first byte.
    pos: u64,
    /// Its length in bytes.
    len: u64,
    /// A partial page: (page offset, first byte, end byte) within the page.
    part: Option<(u64, usize, usize)>,
}

/// The pieces of the byte range [base, end): partial pages at the edges, the whole pages
/// between them as one run; they cover the range once, in order.
fn pieces(base: u64, end: u64) -> impl Iterator<Item = Piece> {
    let mut pos = base;
    std::iter::from_fn(move || {
        if pos >= end {
            assert_eq!(pos, end, "the pieces cover the range exactly");
            return None;
        }
        let p = if pos % PAGE == 0 && end - pos >= PAGE {
            let len = (end - pos) / PAGE * PAGE;
            Piece {
                pos,
                len,
                part: None,
            }
        } else {
            let start = pos / PAGE * PAGE;
            let stop = end.min(start + PAGE);
            assert!(
                pos < stop,
                "a partial page holds at least one byte of the range"
            );
            let part = Some((start, usize_of(pos - start), usize_of(stop - start)));
            Piece {
                pos,
                len: stop - pos,
                part,
            }
        };
        pos += p.len;
        Some(p)
    })
}

/// A length that came from a slice or a page count fits `usize`.
fn usize_of(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(backing: Backing, files: u16, mode: SimMode) -> Disk {
        let sim = SimConfig::for_capacity(64 << 20, 0.07, mode).expect("geometry");
        Disk::open(DiskSpec {
            sim,
            files,
            backing,
            timing: None,
            describe: "test".into(),
            record: None,
        })
        .expect("open")
    }

    #[test]
    fn unaligned_writes_read_back_and_punched_ranges_read_zero() {
        let tmp = tempfile::tempdir().expect("tempdir");
        for backing in [Backing::Mem, Backing::File(tmp.path().join("b.img"))] {
            let d = disk(backing, 1, SimMode::Conventional);
            let data: Vec<u8> = (0..20_000u32).map(|i| (i % 253) as u8 + 1).collect();
            d.write(0, 1000, &data).expect("write");
            let mut back = vec![0u8; data.len()];
            d.read(0, 1000, &mut back).expect("read");
            assert_eq!(back, data);
            d.punch(0, 3000, 10_000).expect("punch");
            d.read(0, 1000, &mut back).expect("read");
            assert!(
                back[2000..12_000].iter().all(|&b| b == 0),
                "punched = zeroes"
            );
            assert_eq!(back[..2000], data[..2000]);
            assert_eq!(back[12_000..], data[12_000..]);
            d.flush().expect("flush");
            let s = d.snapshot();
            assert_eq!(s.host_write_bytes, 20_000, "counted exactly as asked");
            assert_eq!((s.trim_bytes, s.flushes), (10_000, 1));
            assert!(
                d.write(0, d.file_bytes() - 1, b"xy").is_err(),
                "past the end"
            );
        }
    }

    /// With a timing model every write records the model time it added, and one that adds
    /// 1 ms or more counts as a stall; without one the model figures stay empty.
    #[test]
    fn writes_record_the_model_time_they_add() {
        let plain = disk(Backing::Mem, 1, SimMode::Conventional);
        plain.write(0, 0, &[1u8; 4096]).expect("write");
        let s = plain.snapshot();
        assert_eq!((s.model_time_us, s.model_write_latency.count), (0, 0));
        assert_eq!(plain.model_time(), None);
        let sim = SimConfig::for_capacity(64 << 20, 0.07, SimMode::Conventional).expect("sim");
        // 64 MiB/s of media writes: a 4 KiB page takes 61 us, 64 pages take 3.9 ms.
        let model = TimingModel::bandwidth_only(64.0 * 1048576.0, 1e9);
        let d = Disk::open(DiskSpec {
            sim,
            files: 1,
            backing: Backing::Mem,
            timing: Some(model),
            describe: "timed".into(),
            record: None,
        })
        .expect("open");
        d.write(0, 0, &[1u8; 4096]).expect("one page");
        d.write(0, 4096, &[2u8; 64 * 4096]).expect("64 pages");
        let s = d.snapshot();
        assert_eq!(s.model_write_latency.count, 2, "a model time per write");
        assert_eq!(
            s.model_write_stalls, 1,
            "only the 64-page write took 1 ms or more"
        );
        assert!(
            (3900..4100).contains(&s.model_time_us),
            "65 pages at 64 MiB/s: {} us",
            s.model_time_us
        );
    }

    #[test]
    fn pieces_cover_a_range_once_with_partial_pages_only_at_its_edges() {
        for (base, end) in [
            (0, 4096),
            (1, 2),
            (100, 9000),
            (4096, 20_480),
            (4095, 12_289),
        ] {
            let ps: Vec<Piece> = pieces(base, end).collect();
            assert_eq!(ps.iter().map(|p| p.len).sum::<u64>(), end - base);
            assert!(ps.windows(2).all(|w| w[0].pos + w[0].len == w[1].pos));
            let whole = ps.iter().filter(|p| p.part.is_none()).count();
            assert!(whole <= 1 && ps.len() <= 3, "{base}..{end}");
            for p in ps.iter().filter(|p| p.part.is_none()) {
                assert!(p.pos % PAGE == 0 && p.len % PAGE == 0);
            }
        }
    }

    #[test]
    fn files_split_the_space_and_write_with_their_own_handle() {
        let d = disk(Backing::Mem, 4, SimMode::Fdp { handles: 4 });
        assert_eq!(d.file_bytes() * 4, d.capacity());
        assert_eq!(d.hint(3), Some(3));
        d.write(3, 0, &[7u8; 4096]).expect("write");
        let mut b = [0u8; 4096];
        d.read(2, 0, &mut b).expect("read");
        assert!(
            b.iter().all(|&x| x == 0),
            "file 2 does not see file 3's data"
        );
        d.read(3, 0, &mut b).expect("read");
        assert!(b.iter().all(|&x| x == 7));
    }
}
