//! The live counters: host bytes counted exactly as asked, the FTL's page counters, latency
//! histograms; [`Snapshot`] is what `.stats` serves (JSON) and [`CsvLog`] writes every second.

use crate::{Disk, Result, VssdError, PAGE};
use hdrhistogram::Histogram;
use nowa_flash::Counters;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// Latency percentiles of one kind of request, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Requests recorded.
    pub count: u64,
    /// Median.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
    /// Largest.
    pub max_us: u64,
}

/// The virtual SSD's counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Process id of the daemon (what `nowa vssd stop` waits for).
    pub pid: u32,
    /// Seconds since the disk was opened.
    pub uptime_s: f64,
    /// Logical capacity in bytes.
    pub capacity_bytes: u64,
    /// Files the capacity is split into.
    pub files: u16,
    /// The configuration, one line.
    pub config: String,
    /// Bytes the programs wrote (exactly as asked).
    pub host_write_bytes: u64,
    /// Bytes the programs read.
    pub host_read_bytes: u64,
    /// Bytes programmed on flash (host pages and GC copies).
    pub media_write_bytes: u64,
    /// Bytes GC copied.
    pub gc_copy_bytes: u64,
    /// Bytes the programs trimmed (hole punches).
    pub trim_bytes: u64,
    /// Bytes of write-zeroes (fallocate ZERO_RANGE): part of `host_write_bytes`, deallocated
    /// in the FTL like a trim.
    pub zero_bytes: u64,
    /// Flushes (fsync).
    pub flushes: u64,
    /// Units erased.
    pub erases: u64,
    /// SSD write amplification: flash pages programmed / host pages written.
    pub waf: f64,
    /// Write latency.
    pub write_latency: Latency,
    /// Read latency.
    pub read_latency: Latency,
    /// Flush latency.
    pub flush_latency: Latency,
    /// With `--timing`: the timing model's time at which all the work so far is done, in
    /// microseconds (0 at memory speed).
    #[serde(default)]
    pub model_time_us: u64,
    /// With `--timing`: the model time each write request added (its pages, and the GC copies
    /// and erases it triggered), on the model's clock alone: what the write waits on a device
    /// that is the bottleneck, whatever the host's load (empty at memory speed).
    #[serde(default)]
    pub model_write_latency: Latency,
    /// With `--timing`: write requests that added 1 ms or more of model time (GC stalls).
    #[serde(default)]
    pub model_write_stalls: u64,
}

/// A request that adds this much model time (or a wall-clock wait this long) is a stall.
pub const STALL: Duration = Duration::from_millis(1);

/// Histogram range: 1 us to an hour, 2 significant digits.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 2).unwrap_or_else(|_| {
        // Fixed, valid bounds: hdrhistogram only refuses low < 1 or high < 2 x low.
        Histogram::new(2).unwrap_or_else(|e| panic!("hdrhistogram refuses 2 digits: {e}"))
    })
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}

fn latency(h: &Histogram<u64>) -> Latency {
    Latency {
        count: h.len(),
        p50_us: h.value_at_quantile(0.5),
        p99_us: h.value_at_quantile(0.99),
        p999_us: h.value_at_quantile(0.999),
        max_us: h.max(),
    }
}

/// The counters the I/O path updates.
pub(crate) struct Stats {
    host_write: AtomicU64,
    host_read: AtomicU64,
    trim: AtomicU64,
    zero: AtomicU64,
    flushes: AtomicU64,
    /// Wall-clock write, read and flush latency; model time added per write.
    lat: Mutex<[Histogram<u64>; 4]>,
    model_stalls: AtomicU64,
}

impl Stats {
    pub(crate) fn new() -> Self {
        Stats {
            host_write: AtomicU64::new(0),
            host_read: AtomicU64::new(0),
            trim: AtomicU64::new(0),
            zero: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            lat: Mutex::new([histogram(), histogram(), histogram(), histogram()]),
            model_stalls: AtomicU64::new(0),
        }
    }
    fn record(&self, which: usize, d: Duration) {
        // Saturating record: a value past the range lands in the top bucket.
        self.lat.lock()[which].saturating_record(micros(d));
    }
    /// A write of `bytes` that took `d` and, with a timing model, added `model` to its time.
    pub(crate) fn wrote(&self, bytes: u64, d: Duration, model: Option<Duration>) {
        self.host_write.fetch_add(bytes, Relaxed);
        self.record(0, d);
        if let Some(m) = model {
            self.record(3, m);
            if m >= STALL {
                self.model_stalls.fetch_add(1, Relaxed);
            }
        }
    }
    pub(crate) fn read(&self, bytes: u64, d: Duration) {
        self.host_read.fetch_add(bytes, Relaxed);
        self.record(1, d);
    }
    pub(crate) fn flushed(&self, d: Duration) {
        self.flushes.fetch_add(1, Relaxed);
        self.record(2, d);
    }
    /// Write-zeroes: host writes as the block layer counts them, and a trim in the FTL.
    pub(crate) fn zeroed(&self, bytes: u64) {
        self.host_write.fetch_add(bytes, Relaxed);
        self.zero.fetch_add(bytes, Relaxed);
        self.trim.fetch_sub(bytes, Relaxed);
    }
    pub(crate) fn trimmed(&self, bytes: u64) {
        self.trim.fetch_add(bytes, Relaxed);
    }

    pub(crate) fn snapshot(
        &self,
        ftl: &Counters,
        model_time: Option<Duration>,
        uptime_s: f64,
        capacity_bytes: u64,
        files: u16,
        config: &str,
    ) -> Snapshot {
        assert!(
            ftl.media_pages >= ftl.gc_pages,
            "GC copies are media writes"
        );
        let lat = self.lat.lock();
        Snapshot {
            pid: std::process::id(),
            uptime_s,
            capacity_bytes,
            files,
            config: config.to_owned(),
            host_write_bytes: self.host_write.load(Relaxed),
            host_read_bytes: self.host_read.load(Relaxed),
            media_write_bytes: ftl.media_pages * PAGE,
            gc_copy_bytes: ftl.gc_pages * PAGE,
            trim_bytes: self.trim.load(Relaxed),
            zero_bytes: self.zero.load(Relaxed),
            flushes: self.flushes.load(Relaxed),
            erases: ftl.erases,
            waf: ftl.waf(),
            write_latency: latency(&lat[0]),
            read_latency: latency(&lat[1]),
            flush_latency: latency(&lat[2]),
            model_time_us: model_time
                .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX)),
            model_write_latency: latency(&lat[3]),
            model_write_stalls: self.model_stalls.load(Relaxed),
        }
    }
}

impl Snapshot {
    /// The summary printed when the daemon stops (and by `nowa vssd stats`).
    #[must_use]
    pub fn summary(&self) -> String {
        use nowa_units::Bytes;
        let l = |x: &Latency| {
            format!(
                "{} requests, p50 {} us, p99 {} us, p99.9 {} us, max {} us",
                x.count, x.p50_us, x.p99_us, x.p999_us, x.max_us
            )
        };
        let model = if self.model_write_latency.count == 0 {
            String::new()
        } else {
            format!(
                "model     {:.3} s of device time; per write (model clock, whatever the host's load): {}; {} writes of 1 ms or more\n",
                Duration::from_micros(self.model_time_us).as_secs_f64(),
                l(&self.model_write_latency),
                self.model_write_stalls
            )
        };
        let text = format!(
            "vssd      {}\nuptime    {:.1} s\nhost      written {} ({} B, {} B of it write-zeroes), read {} ({} B), trimmed {} ({} B), {} flushes\nflash     programmed {} ({} B), GC copies {} ({} B), {} erases\nWAF       {:.4} (flash pages programmed / host pages written)\nwrites    {}\nreads     {}\nflushes   {}\n",
            self.config,
            self.uptime_s,
            Bytes(self.host_write_bytes),
            self.host_write_bytes,
            self.zero_bytes,
            Bytes(self.host_read_bytes),
            self.host_read_bytes,
            Bytes(self.trim_bytes),
            self.trim_bytes,
            self.flushes,
            Bytes(self.media_write_bytes),
            self.media_write_bytes,
            Bytes(self.gc_copy_bytes),
            self.gc_copy_bytes,
            self.erases,
            self.waf,
            l(&self.write_latency),
            l(&self.read_latency),
            l(&self.flush_latency),
        );
        text + &model
    }
}

/// The per-second CSV: a thread appending one row of cumulative counters (and the interval's
/// WAF) every second until [`CsvLog::finish`].
pub struct CsvLog {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
    path: PathBuf,
}

/// One CSV row.
#[derive(Serialize)]
struct Row {
    t_s: f64,
    host_write_bytes: u64,
    host_read_bytes: u64,
    media_write_bytes: u64,
    gc_copy_bytes: u64,
    trim_bytes: u64,
    flushes: u64,
    erases: u64,
    waf: f64,
    interval_waf: Option<f64>,
    write_p99_us: u64,
}

fn row(s: &Snapshot, prev: &Snapshot) -> Row {
    assert!(
        s.host_write_bytes >= prev.host_write_bytes
            && s.media_write_bytes >= prev.media_write_bytes,
        "counters only grow"
    );
    Row {
        t_s: s.uptime_s,
        host_write_bytes: s.host_write_bytes,
        host_read_bytes: s.host_read_bytes,
        media_write_bytes: s.media_write_bytes,
        gc_copy_bytes: s.gc_copy_bytes,
        trim_bytes: s.trim_bytes,
        flushes: s.flushes,
        erases: s.erases,
        waf: s.waf,
        interval_waf: nowa_units::waf(
            s.media_write_bytes - prev.media_write_bytes,
            s.host_write_bytes - prev.host_write_bytes,
        ),
        write_p99_us: s.write_latency.p99_us,
    }
}

impl CsvLog {
    /// Creates `path` and starts the thread.
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn start(disk: Arc<Disk>, path: &Path) -> Result<CsvLog> {
        let io = |source| VssdError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut w = csv::Writer::from_path(path).map_err(|e| io(e.into()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let p = path.to_path_buf();
        let thread = std::thread::spawn(move || {
            let io = |e: csv::Error| VssdError::Io {
                path: p.clone(),
                source: e.into(),
            };
            let mut prev = disk.snapshot();
            loop {
                // Sleep in small steps so finish() returns quickly.
                for _ in 0..10 {
                    if flag.load(Relaxed) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                let s = disk.snapshot();
                w.serialize(row(&s, &prev)).map_err(io)?;
                w.flush().map_err(|e| io(e.into()))?;
                prev = s;
                if flag.load(Relaxed) {
                    return Ok(());
                }
            }
        });
        Ok(CsvLog {
            stop,
            thread: Some(thread),
            path: path.to_path_buf(),
        })
    }

    /// Writes the last row and stops the thread.
    ///
    /// # Errors
    /// Writing the file failed.
    pub fn finish(mut self) -> Result<PathBuf> {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap_or_else(|_| {
                Err(VssdError::Io {
                    path: self.path.clone(),
                    source: std::io::Error::other("the CSV thread panicked"),
                })
            })?;
        }
        Ok(self.path.clone())
    }
}
