//! `nowa trace stats`: footprint, volumes, request sizes, discards and flushes, per volume.

use crate::pages::{page_range, PageSet, PAGE};
use crate::{Op, Record, TraceError, TraceReader};
use serde::Serialize;
use std::collections::BTreeMap;

/// Upper bounds (bytes, inclusive) of the request-size buckets; the last bucket is open.
pub const SIZE_BUCKETS: [u64; 9] = [
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
];

/// Counts of one volume (or of the whole trace).
#[derive(Debug, Clone, Default, Serialize)]
pub struct VolumeStats {
    /// Volume id (0 for the total).
    pub volume: u32,
    /// Records of any kind.
    pub records: u64,
    /// Read requests and bytes.
    pub reads: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Write requests.
    pub writes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// 4 KiB pages written (a partial page counts whole, as the replay writes it).
    pub write_pages: u64,
    /// Discard requests.
    pub discards: u64,
    /// Bytes discarded.
    pub discard_bytes: u64,
    /// Flushes.
    pub flushes: u64,
    /// Distinct 4 KiB pages written: the footprint (a replay sizes its device from the peak
    /// of the live pages, which discards keep below it).
    pub footprint_pages: u64,
    /// Highest byte touched + 1 by any request.
    pub max_end: u64,
    /// Write requests by size: `SIZE_BUCKETS[i]` is the upper bound of bucket i, the last
    /// bucket holds larger requests.
    pub write_sizes: [u64; 10],
    /// Earliest and latest timestamp (ns).
    pub first_ts_ns: u64,
    /// Latest timestamp (ns).
    pub last_ts_ns: u64,
    #[serde(skip)]
    written: PageSet,
}

impl VolumeStats {
    /// Count `r` (everything but the footprint).
    fn count(&mut self, r: &Record) {
        if self.records == 0 {
            self.first_ts_ns = r.ts_ns;
        }
        self.records += 1;
        self.first_ts_ns = self.first_ts_ns.min(r.ts_ns);
        self.last_ts_ns = self.last_ts_ns.max(r.ts_ns);
        debug_assert!(self.first_ts_ns <= self.last_ts_ns);
        self.max_end = self.max_end.max(r.offset.saturating_add(r.len));
        match r.op {
            Op::Read => {
                self.reads += 1;
                self.read_bytes += r.len;
            }
            Op::Write => {
                self.writes += 1;
                self.write_bytes += r.len;
                let pages = page_range(r.offset, r.len);
                self.write_pages += pages.end - pages.start;
                let bucket = SIZE_BUCKETS.iter().position(|&b| r.len <= b).unwrap_or(9);
                self.write_sizes[bucket] += 1;
            }
            Op::Discard => {
                self.discards += 1;
                self.discard_bytes += r.len;
            }
            Op::Flush => self.flushes += 1,
        }
    }

    /// Count `r` and the pages it writes for the first time.
    fn add(&mut self, r: &Record) {
        self.count(r);
        if r.op == Op::Write {
            for p in page_range(r.offset, r.len) {
                if self.written.insert(p) {
                    self.footprint_pages += 1;
                }
            }
        }
    }

    /// Mean write request size in bytes (0 without writes).
    #[must_use]
    pub fn mean_write_bytes(&self) -> f64 {
        if self.writes == 0 {
            0.0
        } else {
            self.write_bytes as f64 / self.writes as f64
        }
    }
}

/// Statistics of a whole trace.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TraceStats {
    /// All volumes together (the footprint is the sum of the volumes' footprints).
    pub total: VolumeStats,
    /// Each volume, by id.
    pub volumes: Vec<VolumeStats>,
}

impl TraceStats {
    /// Read every record of `reader`; `progress` is called every 2^16 records with the count
    /// read, and returning false stops the reading there (the statistics then cover the
    /// records read: a Ctrl-C keeps a partial result).
    ///
    /// # Errors
    /// The reader's first error.
    ///
    /// # Panics
    /// If the total disagrees with the records read (a bug).
    pub fn collect(
        reader: &mut TraceReader,
        progress: &mut dyn FnMut(u64) -> bool,
    ) -> Result<TraceStats, TraceError> {
        let mut vols: BTreeMap<u32, VolumeStats> = BTreeMap::new();
        let mut total = VolumeStats::default();
        let mut n = 0u64;
        while let Some(r) = reader.next_record()? {
            let v = vols.entry(r.volume).or_insert_with(|| VolumeStats {
                volume: r.volume,
                ..VolumeStats::default()
            });
            v.add(&r);
            total.count(&r);
            n += 1;
            if n % (1 << 16) == 0 && !progress(n) {
                break;
            }
        }
        total.footprint_pages = vols.values().map(|v| v.footprint_pages).sum();
        assert!(
            total.footprint_pages <= total.write_pages,
            "a page is new at most once per write"
        );
        assert_eq!(total.records, n, "every record is counted once");
        Ok(TraceStats {
            total,
            volumes: vols.into_values().collect(),
        })
    }

    /// A human-readable report: totals, write sizes, and one line per volume (the first
    /// `max_volumes` by bytes written).
    #[must_use]
    pub fn summary(&self, max_volumes: usize) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let t = &self.total;
        let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
        let secs = (t.last_ts_ns.saturating_sub(t.first_ts_ns)) as f64 / 1e9;
        let _ = writeln!(
            s,
            "records   {} over {secs:.3} s, {} volume(s)",
            t.records,
            self.volumes.len()
        );
        let _ = writeln!(
            s,
            "writes    {} requests, {:.1} MiB ({} pages of 4 KiB), mean {:.1} KiB",
            t.writes,
            mib(t.write_bytes),
            t.write_pages,
            t.mean_write_bytes() / 1024.0
        );
        let _ =
            writeln!(
            s,
            "footprint {} pages = {:.1} MiB written at least once; highest byte touched {:.1} MiB",
            t.footprint_pages, mib(t.footprint_pages * PAGE), mib(t.max_end)
        );
        let _ = writeln!(
            s,
            "reads     {} requests, {:.1} MiB",
            t.reads,
            mib(t.read_bytes)
        );
        let _ = writeln!(
            s,
            "discards  {} requests, {:.1} MiB",
            t.discards,
            mib(t.discard_bytes)
        );
        let _ = writeln!(s, "flushes   {}", t.flushes);
        let _ = write!(s, "sizes    ");
        for (i, n) in t.write_sizes.iter().enumerate() {
            let label = SIZE_BUCKETS
                .get(i)
                .map_or(">1M".to_string(), |b| format!("<={}K", b >> 10));
            let _ = write!(s, " {label}:{n}");
        }
        let _ = writeln!(s);
        if self.volumes.len() > 1 {
            s.push_str(&self.volume_table(max_volumes));
        }
        s
    }

    /// One line per volume, the `max_volumes` that write most.
    fn volume_table(&self, max_volumes: usize) -> String {
        use std::fmt::Write;
        let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
        let mut s = String::new();
        let mut v: Vec<&VolumeStats> = self.volumes.iter().collect();
        v.sort_by_key(|v| std::cmp::Reverse(v.write_bytes));
        let _ = writeln!(
            s,
            "{:>8} {:>12} {:>12} {:>13} {:>10} {:>8}",
            "volume", "writes", "write MiB", "footprint MiB", "discards", "flushes"
        );
        for v in v.iter().take(max_volumes) {
            let _ = writeln!(
                s,
                "{:>8} {:>12} {:>12.1} {:>13.1} {:>10} {:>8}",
                v.volume,
                v.writes,
                mib(v.write_bytes),
                mib(v.footprint_pages * PAGE),
                v.discards,
                v.flushes
            );
        }
        if v.len() > max_volumes {
            let _ = writeln!(s, "({} more volumes)", v.len() - max_volumes);
        }
        s
    }
}
