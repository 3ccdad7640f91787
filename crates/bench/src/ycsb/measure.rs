//! What a YCSB run measures: snapshots of the engine's and the device's counters (and of the
//! process's CPU time), the differences between two snapshots (per-interval [`Tick`]s and the
//! run's [`Drilldown`]), latency histograms, and which of the device and the CPU bounds the
//! run ([`Bound`]).

use super::setup::Pacing;
use super::YcsbSpec;
use hdrhistogram::Histogram;
use nowa_device::{BlockDevice, DeviceCounters};
use nowa_engine::{Engine, Stats};
use nowa_units::cpu::process_cpu_secs;
use nowa_units::waf;
use serde::Serialize;
use std::time::Instant;

/// The engine's and the device's counters, the operations done and the process CPU time at
/// one instant.
/// The engine's and the device's counters at one instant (for [`Drilldown::between`]).
pub struct Snapshot {
    pub(crate) at: Instant,
    pub(crate) ops: u64,
    pub(crate) stats: Stats,
    pub(crate) dev: DeviceCounters,
    pub(crate) cpu_secs: f64,
}

impl Snapshot {
    /// The counters now; `ops` is the caller's operation count.
    #[must_use]
    pub fn take(engine: &Engine, dev: &dyn BlockDevice, ops: u64) -> Snapshot {
        Snapshot {
            at: Instant::now(),
            ops,
            stats: engine.stats(),
            dev: dev.counters(),
            cpu_secs: process_cpu_secs(),
        }
    }

    /// Seconds from `earlier` to this snapshot.
    pub(crate) fn secs_since(&self, earlier: &Snapshot) -> f64 {
        assert!(self.at >= earlier.at, "snapshots out of order");
        (self.at - earlier.at).as_secs_f64()
    }

    /// Device host bytes written since `earlier`.
    pub(crate) fn host_bytes_since(&self, earlier: &Snapshot) -> u64 {
        let (a, b) = (earlier.dev.host_bytes_written, self.dev.host_bytes_written);
        assert!(
            b >= a,
            "device host byte counter went backwards: {a} -> {b}"
        );
        b - a
    }
}

/// One reporting interval.
#[derive(Debug, Clone, Serialize)]
pub struct Tick {
    /// Seconds since the run phase started.
    pub t_secs: f64,
    /// Operations in this interval.
    pub ops: u64,
    /// Operations per second in this interval.
    pub ops_per_sec: f64,
    /// Buffer-pool hit ratio in this interval.
    pub hit_ratio: f64,
    /// MB/s of page writes by eviction.
    pub eviction_mb_s: f64,
    /// MB/s of page writes by checkpoints.
    pub checkpoint_mb_s: f64,
    /// MB/s of doublewrite copies.
    pub doublewrite_mb_s: f64,
    /// MB/s of DB GC copies.
    pub db_gc_mb_s: f64,
    /// NoWA compensation writes, MB/s.
    pub compensation_mb_s: f64,
    /// Device bytes written for user pages (after compression and packing), MB/s.
    pub user_store_mb_s: f64,
    /// MB/s of WAL writes.
    pub wal_mb_s: f64,
    /// MB/s of the SSD's own GC copies (0 when the device cannot tell).
    pub ssd_gc_mb_s: f64,
    /// DB WAF of this interval (None: no user page written).
    pub db_waf: Option<f64>,
    /// SSD WAF of this interval (None: no media counter, or nothing written).
    pub ssd_waf: Option<f64>,
    /// DB WAF x SSD WAF.
    pub total_waf: Option<f64>,
    /// Device writes so far in the run phase, in multiples of its capacity.
    pub device_writes: f64,
    /// Device reads (page reads + delta chain reads) per operation in this interval (0
    /// without operations).
    pub reads_per_op: f64,
    /// Media bytes (device host bytes without a media counter) per operation in this
    /// interval: where a long run's flash bytes per update grow (0 without operations).
    pub flash_bytes_per_op: f64,
}

impl Tick {
    pub(crate) fn between(a: &Snapshot, b: &Snapshot, start: &Snapshot, capacity: u64) -> Tick {
        let secs = b.secs_since(a).max(1e-9);
        let mb = |x: u64| x as f64 / secs / 1e6;
        let d = Drilldown::between(a, b);
        let ops = b.ops.saturating_sub(a.ops);
        Tick {
            t_secs: b.secs_since(start),
            ops,
            ops_per_sec: ops as f64 / secs,
            hit_ratio: hit_ratio(&a.stats, &b.stats),
            eviction_mb_s: mb(d.eviction_bytes),
            checkpoint_mb_s: mb(d.checkpoint_bytes),
            doublewrite_mb_s: mb(d.doublewrite_bytes),
            db_gc_mb_s: mb(d.db_gc_bytes),
            compensation_mb_s: mb(d.compensation_bytes),
            user_store_mb_s: mb(d.user_store_bytes),
            wal_mb_s: mb(d.wal_bytes),
            ssd_gc_mb_s: mb(d.ssd_gc_bytes.unwrap_or(0)),
            db_waf: d.db_waf(),
            ssd_waf: d.ssd_waf(),
            total_waf: d.total_waf(),
            device_writes: b.host_bytes_since(start) as f64 / capacity.max(1) as f64,
            reads_per_op: per_op(device_reads(&b.stats) - device_reads(&a.stats), ops),
            flash_bytes_per_op: per_op(d.media_bytes.unwrap_or(d.device_host_bytes), ops),
        }
    }
}

/// Device reads the engine made so far: whole pages and delta chain elements.
fn device_reads(s: &Stats) -> u64 {
    s.page_reads + s.delta_reads
}

/// `x` per operation (0 without operations).
fn per_op(x: u64, ops: u64) -> f64 {
    if ops == 0 {
        0.0
    } else {
        x as f64 / ops as f64
    }
}

/// Buffer-pool hits / accesses between two stats snapshots (1.0 without accesses: nothing
/// missed).
fn hit_ratio(p: &Stats, s: &Stats) -> f64 {
    let hits = s.pool_hits.saturating_sub(p.pool_hits);
    let misses = s.pool_misses.saturating_sub(p.pool_misses);
    if hits + misses == 0 {
        1.0
    } else {
        hits as f64 / (hits + misses) as f64
    }
}

pub(crate) use nowa_units::latency::new_histogram as new_hist;
pub use nowa_units::latency::Latency;

/// Write drill-down between two snapshots, in bytes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Drilldown {
    /// Pages the engine wrote for the user's data: eviction + checkpoint, uncompressed.
    pub user_bytes: u64,
    /// Of which by eviction.
    pub eviction_bytes: u64,
    /// Of which by checkpoints.
    pub checkpoint_bytes: u64,
    /// Doublewrite copies.
    pub doublewrite_bytes: u64,
    /// DB GC copies.
    pub db_gc_bytes: u64,
    /// NoWA compensation writes.
    pub compensation_bytes: u64,
    /// Device bytes of the user pages as written (compressed + packed out of place).
    pub user_store_bytes: u64,
    /// Mapping-table snapshots (out-of-place checkpoints; not in DB WAF, in SSD host bytes).
    pub meta_bytes: u64,
    /// WAL bytes.
    pub wal_bytes: u64,
    /// Bytes the device received.
    pub device_host_bytes: u64,
    /// Bytes the device wrote to flash (None if it cannot tell).
    pub media_bytes: Option<u64>,
    /// media - host: the SSD's own GC copies.
    pub ssd_gc_bytes: Option<u64>,
    /// DB GC rounds (victim zone or NoWA group) run by writers (low watermark).
    pub gc_rounds_foreground: u64,
    /// DB GC rounds run by the background GC thread (high watermark).
    pub gc_rounds_background: u64,
    /// Checkpoints in the interval.
    pub checkpoints: u64,
    /// Out of place: full mapping snapshots in the interval (the other checkpoints wrote
    /// deltas).
    pub full_snapshots: u64,
    /// Out of place: RAM of the mapping at the end (at its last checkpoint).
    pub mapping_ram_bytes: u64,
    /// Out of place: mapped pages at the end (at its last checkpoint).
    pub mapping_pages: u64,
    /// Flushes the device under test received (fdatasync / cache flush).
    pub device_flushes: u64,
    /// Engine flushes by cause: WAL, page store (in place: doublewrite chunks), checkpoint
    /// superblocks (on the WAL device when it is separate).
    pub wal_flushes: u64,
    /// Page-store flushes.
    pub store_flushes: u64,
    /// Checkpoint (superblock) flushes.
    pub checkpoint_flushes: u64,
    /// Eviction page bytes written by the background page cleaner.
    pub cleaner_bytes: u64,
    /// Checkpoint page bytes written by forced passes (WAL limit).
    pub forced_checkpoint_bytes: u64,
    /// Checkpoint deferrals of hot pages.
    pub checkpoint_deferrals: u64,
}

impl Drilldown {
    /// The counters' differences from `a` to `b`: the one place they are taken.
    ///
    /// # Panics
    /// If a counter went backwards (`b` taken before `a`, or from another engine).
    #[must_use]
    pub fn between(a: &Snapshot, b: &Snapshot) -> Drilldown {
        let (p, s) = (&a.stats, &b.stats);
        let d = |new: u64, old: u64| {
            assert!(new >= old, "engine counter went backwards: {old} -> {new}");
            new - old
        };
        let ps = s.page_size;
        let eviction = d(s.eviction_page_writes, p.eviction_page_writes) * ps;
        let checkpoint = d(s.checkpoint_page_writes, p.checkpoint_page_writes) * ps;
        let host = b.host_bytes_since(a);
        let media = b
            .dev
            .media_bytes_written
            .zip(a.dev.media_bytes_written)
            .map(|(new, old)| d(new, old));
        Drilldown {
            user_bytes: eviction + checkpoint,
            eviction_bytes: eviction,
            checkpoint_bytes: checkpoint,
            doublewrite_bytes: d(s.doublewrite_bytes, p.doublewrite_bytes),
            db_gc_bytes: d(s.gc_store_bytes, p.gc_store_bytes),
            compensation_bytes: d(s.compensation_store_bytes, p.compensation_store_bytes),
            user_store_bytes: d(s.user_store_bytes, p.user_store_bytes),
            meta_bytes: d(s.meta_store_bytes, p.meta_store_bytes),
            wal_bytes: d(s.wal_device_bytes, p.wal_device_bytes),
            device_host_bytes: host,
            media_bytes: media,
            ssd_gc_bytes: media.map(|m| m.saturating_sub(host)),
            gc_rounds_foreground: d(s.gc_rounds_foreground, p.gc_rounds_foreground),
            gc_rounds_background: d(s.gc_rounds_background, p.gc_rounds_background),
            checkpoints: d(s.checkpoints, p.checkpoints),
            full_snapshots: d(s.full_snapshots, p.full_snapshots),
            mapping_ram_bytes: s.mapping_ram_bytes,
            mapping_pages: s.mapping_pages,
            device_flushes: d(b.dev.flushes, a.dev.flushes),
            wal_flushes: d(s.wal_flushes, p.wal_flushes),
            store_flushes: d(s.store_flushes, p.store_flushes),
            checkpoint_flushes: d(s.checkpoint_flushes, p.checkpoint_flushes),
            cleaner_bytes: d(s.cleaner_page_writes, p.cleaner_page_writes) * ps,
            forced_checkpoint_bytes: d(
                s.forced_checkpoint_page_writes,
                p.forced_checkpoint_page_writes,
            ) * ps,
            checkpoint_deferrals: d(s.checkpoint_deferrals, p.checkpoint_deferrals),
        }
    }

    /// Flushes per operation: the device's, plus the WAL's when the WAL is on another device.
    #[must_use]
    pub fn flushes(&self, separate_wal: bool) -> u64 {
        if separate_wal {
            self.device_flushes + self.wal_flushes + self.checkpoint_flushes
        } else {
            self.device_flushes
        }
    }

    /// Page writes (user write-backs, whole pages or deltas, plus doublewrite pages) per
    /// page-store flush: how well write-back batches its durability points (`None`: no store
    /// flush in the interval). The one formula of every command that reports it.
    ///
    /// # Panics
    /// If `page_size` is 0.
    #[must_use]
    pub fn page_writes_per_store_flush(&self, page_size: u64) -> Option<f64> {
        assert!(page_size > 0, "a page has bytes");
        (self.store_flushes > 0).then(|| {
            (self.user_bytes + self.doublewrite_bytes) as f64
                / page_size as f64
                / self.store_flushes as f64
        })
    }

    /// Page bytes the DB issued: user pages as written + doublewrite + DB GC + compensation.
    #[must_use]
    pub fn db_bytes(&self) -> u64 {
        self.user_store_bytes + self.doublewrite_bytes + self.db_gc_bytes + self.compensation_bytes
    }

    /// DB WAF = DB-issued page bytes / user page bytes.
    #[must_use]
    pub fn db_waf(&self) -> Option<f64> {
        waf(self.db_bytes(), self.user_bytes)
    }

    /// SSD WAF = media bytes / bytes the device received.
    #[must_use]
    pub fn ssd_waf(&self) -> Option<f64> {
        waf(self.media_bytes?, self.device_host_bytes)
    }

    /// DB WAF x SSD WAF.
    #[must_use]
    pub fn total_waf(&self) -> Option<f64> {
        Some(self.db_waf()? * self.ssd_waf()?)
    }

    /// User page bytes as written / uncompressed (out of place with compression: below 1).
    #[must_use]
    pub fn compression_ratio(&self) -> Option<f64> {
        (self.user_bytes > 0).then(|| self.user_store_bytes as f64 / self.user_bytes as f64)
    }
}

/// What limits a run's throughput.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum BoundBy {
    /// The simulated device's timing model: the device was busy (nearly) all the run.
    Device,
    /// The CPU (the engine, the simulator, compression; on a loaded machine also the wait for
    /// a core): the device was idle part of the run.
    Cpu,
    /// No timing model for this device (memory, files, block devices).
    Unknown,
}

impl std::fmt::Display for BoundBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BoundBy::Device => "device",
            BoundBy::Cpu => "CPU",
            BoundBy::Unknown => "unknown",
        })
    }
}

/// Device busy time at or above this share of the run time: the device bounds the run.
pub const DEVICE_BOUND_SHARE: f64 = 0.9;

/// The two bounds of a run: the device-bound throughput the simulated device's timing model
/// gives (deterministic: its busy time per operation), the measured CPU time per operation,
/// and which of the two bounds the run.
#[derive(Debug, Clone, Serialize)]
pub struct Bound {
    /// The device was paced by its timing model (None: no timing model).
    pub paced: Option<bool>,
    /// Seconds the device was busy by the timing model.
    pub device_busy_secs: Option<f64>,
    /// Operations per second if the device were the only limit: ops / busy seconds.
    pub device_bound_ops_per_sec: Option<f64>,
    /// Process CPU seconds (user + system, all threads) in the run.
    pub cpu_secs: f64,
    /// CPU microseconds per operation.
    pub cpu_us_per_op: f64,
    /// CPU seconds / wall seconds (2.0 = two cores busy on average).
    pub cpu_utilization: f64,
    /// Device busy seconds / wall seconds.
    pub device_utilization: Option<f64>,
    /// Which of the two bounds the run.
    pub by: BoundBy,
}

impl Bound {
    pub(crate) fn between(a: &Snapshot, b: &Snapshot, ops: u64, pacing: Option<&Pacing>) -> Bound {
        let wall = b.secs_since(a).max(1e-9);
        assert!(b.cpu_secs >= a.cpu_secs, "process CPU time went backwards");
        let cpu = b.cpu_secs - a.cpu_secs;
        let busy = pacing.map(|p| p.busy_secs(&a.dev, &b.dev));
        assert!(
            busy.is_none_or(|s| s >= 0.0 && s.is_finite()),
            "busy time {busy:?}"
        );
        let n = ops.max(1) as f64;
        let device_utilization = busy.map(|s| s / wall);
        let by = match device_utilization {
            None => BoundBy::Unknown,
            Some(u) if u >= DEVICE_BOUND_SHARE => BoundBy::Device,
            Some(_) => BoundBy::Cpu,
        };
        Bound {
            paced: pacing.map(|p| p.paced),
            device_busy_secs: busy,
            device_bound_ops_per_sec: busy.map(|s| n / s.max(1e-9)),
            cpu_secs: cpu,
            cpu_us_per_op: cpu * 1e6 / n,
            cpu_utilization: cpu / wall,
            device_utilization,
            by,
        }
    }
}

/// The outcome of a run.
#[derive(Debug, Clone, Serialize)]
pub struct YcsbResult {
    /// Seed of the run.
    pub seed: u64,
    /// What was run.
    pub spec: YcsbSpec,
    /// Bytes of the device under test.
    pub device_capacity: u64,
    /// Records loaded (below `spec.records` when the load was interrupted).
    pub records_loaded: u64,
    /// Seconds of the load.
    pub load_secs: f64,
    /// Seconds of the run phase.
    pub run_secs: f64,
    /// Operations done.
    pub ops: u64,
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Read latency.
    pub read: Latency,
    /// Update latency.
    pub update: Latency,
    /// Buffer-pool hit ratio.
    pub hit_ratio: f64,
    /// DB WAF (None: no user page written).
    pub db_waf: Option<f64>,
    /// SSD WAF (None: no media counter, or nothing written).
    pub ssd_waf: Option<f64>,
    /// DB WAF x SSD WAF.
    pub total_waf: Option<f64>,
    /// DB-issued page bytes per operation.
    pub logical_bytes_per_op: f64,
    /// Media bytes (device host bytes without a media counter) per operation.
    pub physical_bytes_per_op: f64,
    /// The write drill-down.
    pub drilldown: Drilldown,
    /// Device-bound throughput, CPU per operation, and which bounds the run.
    pub bound: Bound,
    /// The engine's counters at the end.
    pub stats: Stats,
    /// Per-interval figures.
    pub ticks: Vec<Tick>,
    /// Ctrl-C stopped the run: the figures cover what ran until then.
    pub interrupted: bool,
    /// Device flushes per operation (with a separate WAL device: its flushes too).
    pub flushes_per_op: f64,
    /// Page writes (user + doublewrite copies) per page-store flush (None: no store flush).
    pub page_writes_per_store_flush: Option<f64>,
    /// Peak resident set size of the process, in bytes.
    pub peak_rss_bytes: u64,
    /// The block device under a file or device target, from /sys/block/*/stat (None for
    /// simulated and memory devices, or when the kernel's counters are not readable).
    pub block_device: Option<BlockDevStat>,
    /// Out of place: the placement scheme and its per-class table, over the store's life
    /// (load and run; None in place).
    pub placement: Option<nowa_logspace::ClassReport>,
    /// Blind updates on: the changes still pending when the run stopped, whose write-back
    /// the byte counts above do not hold (None: blind updates off).
    pub pending_blind_changes: Option<PendingBlind>,
}

/// Blind changes pending at the end of a run: logged (their WAL bytes are counted), not yet
/// applied to their leaves, so the write-back of those leaves is still to come.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PendingBlind {
    /// Changes pending.
    pub changes: u64,
    /// Leaves they wait for: one write-back each when applied.
    pub leaves: u64,
    /// Estimated store bytes of those write-backs: leaves x the run's mean store bytes per
    /// user page write-back (whole pages and deltas alike).
    pub est_write_back_bytes: u64,
    /// That estimate per update of the run.
    pub est_bytes_per_update: f64,
}

impl PendingBlind {
    /// The pending changes of `end` (None with blind updates off), priced at the mean user
    /// write-back of `d` (a page when the run wrote none).
    ///
    /// # Panics
    /// If more leaves than changes are pending (a leaf waits for one change at least).
    #[must_use]
    pub fn of(on: bool, end: &Stats, d: &Drilldown, updates: u64) -> Option<PendingBlind> {
        if !on {
            return None;
        }
        let page = end.page_size;
        let writes = d.user_bytes / page.max(1);
        let mean = if writes == 0 {
            page
        } else {
            d.user_store_bytes.div_ceil(writes)
        };
        let est = end.blind_pending_leaves * mean;
        assert!(
            end.blind_pending_leaves <= end.blind_pending_changes,
            "{} leaves wait for {} changes",
            end.blind_pending_leaves,
            end.blind_pending_changes
        );
        Some(PendingBlind {
            changes: end.blind_pending_changes,
            leaves: end.blind_pending_leaves,
            est_write_back_bytes: est,
            est_bytes_per_update: est as f64 / updates.max(1) as f64,
        })
    }
}

/// The kernel's counters of the block device holding a file target, over the run phase
/// (they count every process's I/O on that device, the file system's journal included).
#[derive(Debug, Clone, Default, Serialize)]
pub struct BlockDevStat {
    /// The device (`/sys/dev/block/MAJ:MIN` resolved to its name).
    pub name: String,
    /// Bytes written (sectors x 512).
    pub bytes_written: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Write requests completed.
    pub writes: u64,
    /// Flush requests completed (0 on kernels before 5.5).
    pub flushes: u64,
    /// Bytes written per operation of the run.
    pub bytes_written_per_op: f64,
}

impl YcsbResult {
    /// The result of a run phase from its first and last snapshots.
    pub(crate) fn between(
        spec: &YcsbSpec,
        capacity: u64,
        (start, end): (&Snapshot, &Snapshot),
        (read, update): (&Histogram<u64>, &Histogram<u64>),
        ticks: Vec<Tick>,
    ) -> YcsbResult {
        let done_ops = read.len() + update.len();
        let n = done_ops.max(1) as f64;
        let run_secs = end.secs_since(start);
        let d = Drilldown::between(start, end);
        assert_eq!(d.user_bytes, d.eviction_bytes + d.checkpoint_bytes);
        let flushes_per_op = d.flushes(spec.separate_wal) as f64 / n;
        let page_writes_per_store_flush = d.page_writes_per_store_flush(end.stats.page_size);
        let pending_blind_changes = PendingBlind::of(
            spec.engine.blind_update_bytes > 0,
            &end.stats,
            &d,
            update.len(),
        );
        YcsbResult {
            pending_blind_changes,
            seed: spec.seed,
            spec: spec.clone(),
            device_capacity: capacity,
            records_loaded: spec.records,
            load_secs: 0.0,
            run_secs,
            ops: done_ops,
            ops_per_sec: done_ops as f64 / run_secs.max(1e-9),
            read: Latency::of(read),
            update: Latency::of(update),
            hit_ratio: hit_ratio(&start.stats, &end.stats),
            db_waf: d.db_waf(),
            ssd_waf: d.ssd_waf(),
            total_waf: d.total_waf(),
            logical_bytes_per_op: d.db_bytes() as f64 / n,
            physical_bytes_per_op: d.media_bytes.unwrap_or(d.device_host_bytes) as f64 / n,
            bound: Bound::between(start, end, done_ops, spec.pacing.as_ref()),
            drilldown: d,
            stats: end.stats.clone(),
            ticks,
            interrupted: false,
            flushes_per_op,
            page_writes_per_store_flush,
            peak_rss_bytes: process_peak_rss_bytes(),
            block_device: None,
            placement: None,
        }
    }
}

/// Peak resident set size of the process in bytes (VmHWM in /proc/self/status; 0 where the
/// kernel does not say).
#[must_use]
pub fn process_peak_rss_bytes() -> u64 {
    crate::sim::rss::status_bytes("VmHWM:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waf_of_nothing_is_none_and_totals_multiply() {
        let d = Drilldown::default();
        assert_eq!(d.db_waf(), None);
        assert_eq!(d.ssd_waf(), None);
        assert_eq!(d.total_waf(), None);
        let d = Drilldown {
            user_bytes: 100,
            user_store_bytes: 100,
            doublewrite_bytes: 100,
            device_host_bytes: 400,
            media_bytes: Some(800),
            ..Drilldown::default()
        };
        assert_eq!(d.db_waf(), Some(2.0));
        assert_eq!(d.ssd_waf(), Some(2.0));
        assert_eq!(d.total_waf(), Some(4.0));
        assert_eq!(d.compression_ratio(), Some(1.0));
    }
}
