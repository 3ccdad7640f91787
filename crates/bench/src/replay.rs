//! `nowa sim --trace`: replay a block I/O trace through the FTL model.
//!
//! 1. Scan: read the trace through a [`CompactMap`] per device (addresses get device pages on
//!    first touch, discards free them for reuse), once, and a second time when it discards
//!    (the looped replay starts its second pass with the first pass's survivors): the map's
//!    high-water mark is then the peak of the live pages, the smallest device on which the
//!    looped trace fits. Multi-volume traces replay one device per volume (SepBIT's model) or
//!    all volumes on one shared device.
//! 2. Devices: logical capacity = peak live pages / fill (or given), the rest of the geometry
//!    as in `nowa sim`. A placement that needs the future (FK) gets each page write's
//!    next-invalidation time from one more read ([`nowa_trace::pages::NextOverwrite`]).
//! 3. Precondition: one full pass of the trace (skippable). Then warm-up and measured phases
//!    in drive writes (multiples of the logical capacity), looping the trace as often as
//!    needed. Writes become page writes (`Ftl::write_batch`, stream 0) on the device pages of
//!    a fresh compact map; discards trim the pages they cover and free them (never-written
//!    pages are no-ops); flushes and reads are counted.
//! 4. Results: one [`SimResult`] per device, as `nowa sim` reports it (FAR and every other
//!    figure over the measured phase), plus the aggregate.

use crate::sim::{Interval, MeasuredRun, SimResult};
use nowa_flash::{Counters, FlashError, Ftl, FtlConfig, VictimHistogram};
use nowa_trace::pages::{
    page_range, CompactMap, DirectMap, NextOverwrite, PageEvent, TooManyPages, NEVER,
};
use nowa_trace::{open, Format, Op, Record, TraceError, TraceReader};
use nowa_units::cpu::thread_cpu_secs;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// How the volumes of a multi-volume trace map to simulated devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum VolumeMode {
    /// One device per volume, each sized from its own footprint (SepBIT's model).
    PerVolume,
    /// All volumes on one device.
    Shared,
}

/// One trace replay.
#[derive(Debug, Clone, Serialize)]
pub struct ReplaySpec {
    pub trace: PathBuf,
    /// None: recognized from the file.
    pub format: Option<Format>,
    /// Geometry, policy, OP; `logical_pages` is replaced per device.
    pub ftl: FtlConfig,
    /// Logical pages of each device; None: peak live pages / fill.
    pub capacity_pages: Option<u64>,
    /// Peak live pages / logical capacity, in (0, 1].
    pub fill: f64,
    /// Drive writes before measuring (after the preconditioning pass).
    pub warmup: f64,
    /// Measured drive writes.
    pub volume: f64,
    /// Drive writes per reporting interval.
    pub interval: f64,
    /// Replay the whole trace once before the warm-up.
    pub precondition: bool,
    pub volumes: VolumeMode,
    /// Replay only this volume.
    pub only_volume: Option<u32>,
    pub seed: u64,
}

/// Errors of a replay.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("{}: {source}", volume.map_or("device".to_string(), |v| format!("volume {v}")))]
    Flash {
        volume: Option<u32>,
        source: FlashError,
    },
    #[error(transparent)]
    Pages(#[from] TooManyPages),
    #[error("{}: the trace writes nothing{}", path.display(), volume.map_or(String::new(), |v| format!(" to volume {v}")))]
    NoWrites { path: PathBuf, volume: Option<u32> },
    #[error("{name} must be {range}, got {value}")]
    Parameter {
        name: &'static str,
        range: &'static str,
        value: f64,
    },
    #[error("volume {volume}: capacity {capacity} pages is below the trace's live data: {live} pages live at its peak ({footprint} distinct pages written)")]
    TooSmall {
        volume: u32,
        capacity: u64,
        live: u64,
        footprint: u64,
    },
}

/// What the scan found in the trace.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct TraceCounts {
    pub records: u64,
    pub lines: u64,
    pub writes: u64,
    /// 4 KiB page writes per pass.
    pub write_pages: u64,
    pub reads: u64,
    pub discards: u64,
    pub discard_pages: u64,
    pub flushes: u64,
}

/// One simulated device of a replay.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceRun {
    /// The volume (None: the shared device of all volumes).
    pub volume: Option<u32>,
    /// Distinct pages the trace writes (every address ever written).
    pub footprint_pages: u64,
    /// Peak of the live pages (written, not discarded since) over the looped trace: what the
    /// device is sized from.
    pub live_pages: u64,
    /// Pages live at the end of each pass.
    pub live_end_pages: u64,
    /// Page writes of one pass of the trace on this device.
    pub pass_pages: u64,
    pub sim: SimResult,
}

/// The outcome of a replay.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayResult {
    pub trace: String,
    pub format: String,
    pub mode: VolumeMode,
    /// Whether the first pass preconditioned the devices.
    pub preconditioned: bool,
    pub counts: TraceCounts,
    pub devices: Vec<DeviceRun>,
    /// All devices together, measured phase.
    pub measured: Counters,
    pub waf: f64,
    /// Passes over the trace, preconditioning included (fractional: the last one stopped early).
    pub passes: f64,
    /// Flushes replayed in the measured phase.
    pub measured_flushes: u64,
    /// Aggregate intervals (WAF over time) of the measured phase.
    pub intervals: Vec<Interval>,
    /// CPU seconds and rate of the scan (parsing + page ids): lines (records in binary) per s.
    pub scan_cpu_secs: f64,
    pub scan_records_per_sec: f64,
    /// CPU seconds and rate of the replay (all phases): page writes per CPU second.
    pub replay_cpu_secs: f64,
    pub replay_pages_per_sec: f64,
    pub elapsed_secs: f64,
}

const BATCH: usize = 4096;
/// Records decoded at once ([`TraceReader::next_records`]).
const RECORDS: usize = 1024;

/// Call `f` on every record to the end of the trace, decoded in blocks.
fn each_record(
    reader: &mut TraceReader,
    mut f: impl FnMut(&Record) -> Result<(), ReplayError>,
) -> Result<(), ReplayError> {
    let mut block = Vec::with_capacity(RECORDS);
    loop {
        block.clear();
        if reader.next_records(&mut block, RECORDS)? == 0 {
            return Ok(());
        }
        block.iter().try_for_each(&mut f)?;
    }
}

struct Device {
    volume: Option<u32>,
    /// Distinct pages written, peak and final live pages (from the scan).
    footprint: u64,
    live_peak: u64,
    live_end: u64,
    /// The replay's map: trace addresses -> device pages, first touch, discards reused.
    map: ReplayMap,
    /// From the scan: one past the highest page written, and whether a map key other than
    /// 0 was written (a shared device of several volumes).
    page_end: u64,
    keyed: bool,
    pass_pages: u64,
    ftl: Option<Ftl>,
    /// Pages written since the last drain (map key `key`), and their device pages.
    pages: Vec<u64>,
    key: u32,
    batch: Vec<u32>,
    /// FK: next-invalidation time of each page write of a pass (looped, in this device's
    /// writes clock), the page writes issued so far, and the batch's hints.
    future: Option<Vec<u64>>,
    clock: u64,
    hints: Vec<u64>,
    start: Counters,
    hist0: VictimHistogram,
    prev: Counters,
    intervals: Vec<Interval>,
}

impl Device {
    fn new(volume: Option<u32>) -> Device {
        Device {
            volume,
            footprint: 0,
            live_peak: 0,
            live_end: 0,
            map: ReplayMap::Compact(CompactMap::default()),
            page_end: 0,
            keyed: false,
            pass_pages: 0,
            ftl: None,
            pages: Vec::with_capacity(BATCH),
            key: 0,
            batch: Vec::with_capacity(BATCH),
            future: None,
            clock: 0,
            hints: Vec::new(),
            start: Counters::default(),
            hist0: VictimHistogram::default(),
            prev: Counters::default(),
            intervals: Vec::new(),
        }
    }

    fn ftl(&mut self) -> &mut Ftl {
        self.ftl.as_mut().expect("devices with writes have an FTL")
    }

    fn drain(&mut self) -> Result<(), ReplayError> {
        if self.pages.is_empty() {
            return Ok(());
        }
        self.batch.clear();
        self.map
            .write_many(self.key, &self.pages, &mut self.batch)?;
        assert!(
            self.map.high_water() <= self.live_peak,
            "the scan found the peak of the live pages"
        );
        self.pages.clear();
        let volume = self.volume;
        let ftl = self.ftl.as_mut().expect("devices with writes have an FTL");
        let done = match &self.future {
            None => ftl.write_batch(&self.batch, 0),
            Some(next) => {
                hints_of(next, self.clock, self.batch.len(), &mut self.hints);
                ftl.write_batch_hinted(&self.batch, &self.hints, 0)
            }
        };
        done.map_err(|source| ReplayError::Flash { volume, source })?;
        self.clock += self.batch.len() as u64;
        self.batch.clear();
        Ok(())
    }

    fn trim(&mut self, key: u32, r: &Record) -> Result<(), ReplayError> {
        self.drain()?;
        let volume = self.volume;
        for p in page_range(r.offset, r.len) {
            if let Some(id) = self.map.discard(key, p) {
                self.ftl()
                    .trim(u64::from(id), 1)
                    .map_err(|source| ReplayError::Flash { volume, source })?;
            }
        }
        Ok(())
    }
}

/// The replay's address map of a device: the compact map, or a direct table when the scan
/// found the device's written pages dense under a bound of one key (4 B per page of that
/// range no more than the compact map's memory). Both hand out the same device pages.
#[derive(Debug)]
enum ReplayMap {
    Compact(CompactMap),
    Direct(DirectMap),
}

impl ReplayMap {
    /// The map for a device whose scan map is `scan` (every address written), written
    /// below page `page_end` under key 0 only unless `keyed`.
    fn for_device(scan: &CompactMap, page_end: u64, keyed: bool) -> ReplayMap {
        let direct = !keyed && page_end.saturating_mul(4) <= scan.memory_bytes();
        match direct.then(|| DirectMap::new(page_end)) {
            Some(Ok(m)) => ReplayMap::Direct(m),
            _ => ReplayMap::Compact(CompactMap::default()),
        }
    }

    fn write_many(
        &mut self,
        key: u32,
        pages: &[u64],
        out: &mut Vec<u32>,
    ) -> Result<(), TooManyPages> {
        match self {
            ReplayMap::Compact(m) => m.write_many(key, pages, out),
            ReplayMap::Direct(m) => {
                assert_eq!(key, 0, "a direct map serves one key");
                m.write_many(pages, out)
            }
        }
    }

    fn discard(&mut self, key: u32, page: u64) -> Option<u32> {
        match self {
            ReplayMap::Compact(m) => m.discard(key, page).map(|s| s.id),
            ReplayMap::Direct(m) => {
                assert_eq!(key, 0, "a direct map serves one key");
                m.discard(page)
            }
        }
    }

    fn high_water(&self) -> u64 {
        match self {
            ReplayMap::Compact(m) => m.high_water(),
            ReplayMap::Direct(m) => m.high_water(),
        }
    }
}

/// The FK hints of `n` page writes from clock `t0`: user writes until each page is next
/// invalidated. `next` holds one looped pass (write i of pass k is invalidated at k * pass +
/// next[i], see [`nowa_trace::pages::NextOverwrite::finish`]).
fn hints_of(next: &[u64], t0: u64, n: usize, out: &mut Vec<u64>) {
    let pass = next.len() as u64;
    assert!(pass > 0, "a device with writes has a pass");
    out.clear();
    out.extend((t0..t0 + n as u64).map(|t| {
        let (k, i) = (t / pass, t % pass);
        let at = next[usize::try_from(i).expect("a pass fits memory")];
        if at == NEVER {
            return NEVER;
        }
        let abs = k * pass + at;
        debug_assert!(abs > t, "a write is invalidated after it");
        abs - t
    }));
}

/// Which device and map key a volume's requests go to.
struct Router {
    mode: VolumeMode,
    only: Option<u32>,
    /// PerVolume: device index of each volume id (u32::MAX: none yet).
    of_volume: Vec<u32>,
}

impl Router {
    /// (device index, key volume) of `volume`, creating the device if `create`.
    #[inline]
    fn route(
        &mut self,
        volume: u32,
        devices: &mut Vec<Device>,
        create: bool,
    ) -> Option<(usize, u32)> {
        if self.only.is_some_and(|v| v != volume) {
            return None;
        }
        if self.mode == VolumeMode::Shared {
            if devices.is_empty() && create {
                devices.push(Device::new(None));
            }
            return (!devices.is_empty()).then_some((0, volume));
        }
        let v = volume as usize;
        if let Some(&d) = self.of_volume.get(v).filter(|&&d| d != u32::MAX) {
            return Some((d as usize, 0));
        }
        if !create {
            return None;
        }
        if v >= self.of_volume.len() {
            self.of_volume.resize(v + 1, u32::MAX);
        }
        self.of_volume[v] = u32::try_from(devices.len()).expect("fewer than 2^32 volumes");
        devices.push(Device::new(Some(volume)));
        Some((devices.len() - 1, 0))
    }
}

fn count(c: &mut TraceCounts, r: &Record) {
    c.records += 1;
    match r.op {
        Op::Write => {
            c.writes += 1;
            let p = page_range(r.offset, r.len);
            c.write_pages += p.end - p.start;
        }
        Op::Read => c.reads += 1,
        Op::Discard => {
            c.discards += 1;
            let p = page_range(r.offset, r.len);
            c.discard_pages += p.end - p.start;
        }
        Op::Flush => c.flushes += 1,
    }
}

/// The scan's per-device batch of written pages (one map key), mapped in
/// [`CompactMap::write_many`]'s batches.
#[derive(Default)]
struct Pending {
    key: u32,
    pages: Vec<u64>,
    ids: Vec<u32>,
}

impl Pending {
    fn flush(&mut self, map: &mut CompactMap) -> Result<(), ReplayError> {
        self.ids.clear();
        map.write_many(self.key, &self.pages, &mut self.ids)?;
        self.pages.clear();
        Ok(())
    }
}

/// One record of the scan: writes map their pages (creating the device), discards free them.
fn scan_record(
    router: &mut Router,
    devices: &mut Vec<Device>,
    maps: &mut Vec<(CompactMap, Pending)>,
    r: &Record,
    first_pass: bool,
) -> Result<(), ReplayError> {
    let create = r.op == Op::Write;
    if !create && r.op != Op::Discard {
        return Ok(());
    }
    let Some((d, key)) = router.route(r.volume, devices, create) else {
        return Ok(());
    };
    if d == maps.len() {
        maps.push((CompactMap::default(), Pending::default()));
    }
    let ((map, pending), pages) = (&mut maps[d], page_range(r.offset, r.len));
    if create {
        if first_pass {
            let dev = &mut devices[d];
            dev.pass_pages += pages.end - pages.start;
            dev.page_end = dev.page_end.max(pages.end);
            dev.keyed |= key != 0;
        }
        if pending.key != key || pending.pages.len() >= BATCH {
            pending.flush(map)?;
            pending.key = key;
        }
        pending.pages.extend(pages);
    } else {
        pending.flush(map)?;
        for p in pages {
            map.discard(key, p);
        }
    }
    Ok(())
}

/// Map every device's pending pages (at the end of a pass).
fn flush_all(maps: &mut [(CompactMap, Pending)]) -> Result<(), ReplayError> {
    maps.iter_mut().try_for_each(|(m, p)| p.flush(m))
}

/// What the scan found: the devices (footprint, live pages, pass length), the counts, the
/// format, and each device's scan map (every address written, with its stable index).
struct Scan {
    devices: Vec<Device>,
    counts: TraceCounts,
    format: Format,
    maps: Vec<CompactMap>,
}

/// Read the trace once (counts, devices, addresses, live pages), and once more when it
/// discards: a looped replay's second pass starts with the pages the first left live, and
/// every later pass starts with the same set (a page's state at the end of a pass is its last
/// event in the trace), so the peak of two passes is the peak of any number.
fn scan(spec: &ReplaySpec, router: &mut Router) -> Result<Scan, ReplayError> {
    let mut reader = open(&spec.trace, spec.format)?;
    let format = reader.format();
    let (mut devices, mut maps) = (Vec::new(), Vec::new());
    let mut c = TraceCounts::default();
    each_record(&mut reader, |r| {
        count(&mut c, r);
        scan_record(router, &mut devices, &mut maps, r, true)
    })?;
    flush_all(&mut maps)?;
    c.lines = reader.lines();
    if devices.is_empty() {
        return Err(ReplayError::NoWrites {
            path: spec.trace.clone(),
            volume: spec.only_volume,
        });
    }
    let ends: Vec<u64> = maps.iter().map(|(m, _)| m.live()).collect();
    if c.discard_pages > 0 {
        let mut reader = open(&spec.trace, Some(format))?;
        each_record(&mut reader, |r| {
            scan_record(router, &mut devices, &mut maps, r, false)
        })?;
        flush_all(&mut maps)?;
    }
    let maps: Vec<CompactMap> = maps.into_iter().map(|(m, _)| m).collect();
    for ((d, m), end) in devices.iter_mut().zip(&maps).zip(ends) {
        assert_eq!(m.live(), end, "every pass ends with the same live pages");
        (d.footprint, d.live_peak, d.live_end) = (m.addresses(), m.high_water(), end);
        assert!(d.live_peak >= 1 && d.live_peak <= d.footprint);
    }
    Ok(Scan {
        devices,
        counts: c,
        format,
        maps,
    })
}

fn check_spec(spec: &ReplaySpec) -> Result<(), ReplayError> {
    let bad = |name, range, value| Err(ReplayError::Parameter { name, range, value });
    if !(spec.fill > 0.0 && spec.fill <= 1.0) {
        return bad("fill", "in (0, 1]", spec.fill);
    }
    if !(spec.warmup >= 0.0 && spec.warmup.is_finite()) {
        return bad("warm-up volume", ">= 0", spec.warmup);
    }
    if !(spec.volume > 0.0 && spec.volume.is_finite()) {
        return bad("write volume", "> 0", spec.volume);
    }
    if !(spec.interval > 0.0 && spec.interval.is_finite()) {
        return bad("interval", "> 0", spec.interval);
    }
    Ok(())
}

/// Give every device its FTL: logical = peak live pages / fill, or the explicit capacity.
fn build_ftls(spec: &ReplaySpec, devices: &mut [Device]) -> Result<(), ReplayError> {
    for d in devices.iter_mut() {
        let live = d.live_peak;
        let logical = match spec.capacity_pages {
            Some(c) => c,
            None => ((live as f64 / spec.fill).ceil() as u64).max(live),
        };
        if logical < live {
            return Err(ReplayError::TooSmall {
                volume: d.volume.unwrap_or(0),
                capacity: logical,
                live,
                footprint: d.footprint,
            });
        }
        let cfg = FtlConfig {
            logical_pages: logical,
            seed: spec.seed,
            ..spec.ftl.clone()
        };
        let volume = d.volume;
        d.ftl = Some(Ftl::new(cfg).map_err(|source| ReplayError::Flash { volume, source })?);
    }
    Ok(())
}

/// The replay loop's state: devices, router, the open trace and counters.
struct Replayer<'a> {
    spec: &'a ReplaySpec,
    router: Router,
    devices: Vec<Device>,
    reader: TraceReader,
    /// Records decoded and not applied yet: `block[at..]`.
    block: Vec<Record>,
    at: usize,
    /// Page writes issued so far (all devices, all phases).
    issued: u64,
    /// Completed passes over the trace.
    passes: u64,
    /// Records applied in the current pass and in one whole pass.
    in_pass: u64,
    pass_records: u64,
    flushes: u64,
}

impl Replayer<'_> {
    fn apply(&mut self, r: &Record) -> Result<(), ReplayError> {
        if r.op == Op::Flush {
            self.flushes += 1;
            return Ok(());
        }
        if r.op == Op::Read {
            return Ok(());
        }
        let Some((d, key)) = self.router.route(r.volume, &mut self.devices, false) else {
            return Ok(());
        };
        let dev = &mut self.devices[d];
        if r.op == Op::Discard {
            return dev.trim(key, r);
        }
        if dev.key != key {
            dev.drain()?;
            dev.key = key;
        }
        for p in page_range(r.offset, r.len) {
            dev.pages.push(p);
            if dev.pages.len() == BATCH {
                dev.drain()?;
            }
            self.issued += 1;
        }
        Ok(())
    }

    /// Apply records until `target` page writes were issued, or (`one_pass`) to the end of the
    /// current pass. The trace is reopened at its end.
    fn run_until(&mut self, target: u64, one_pass: bool) -> Result<(), ReplayError> {
        while self.issued < target || one_pass {
            if self.at == self.block.len() {
                self.block.clear();
                self.at = 0;
                if self.reader.next_records(&mut self.block, RECORDS)? == 0 {
                    assert_eq!(
                        self.in_pass, self.pass_records,
                        "every pass reads the same trace"
                    );
                    self.passes += 1;
                    self.in_pass = 0;
                    self.reader = open(&self.spec.trace, Some(self.reader.format()))?;
                    if one_pass {
                        break;
                    }
                    continue;
                }
            }
            let r = self.block[self.at];
            self.at += 1;
            self.in_pass += 1;
            self.apply(&r)?;
        }
        self.drain_all()
    }

    fn drain_all(&mut self) -> Result<(), ReplayError> {
        self.devices.iter_mut().try_for_each(Device::drain)
    }
}

fn sum(devices: &[Device]) -> Counters {
    let mut t = Counters::default();
    for d in devices {
        let c = d.ftl.as_ref().expect("devices have an FTL").counters();
        t.host_pages += c.host_pages;
        t.media_pages += c.media_pages;
        t.gc_pages += c.gc_pages;
        t.buffer_absorbed += c.buffer_absorbed;
        t.trimmed_pages += c.trimmed_pages;
        t.erases += c.erases;
        t.gc_rounds += c.gc_rounds;
    }
    t
}

fn interval(index: usize, dw: f64, d: &Counters, cum: &Counters, secs: f64) -> Interval {
    Interval {
        index: index as u32,
        drive_writes: dw,
        host_pages: d.host_pages,
        media_pages: d.media_pages,
        gc_pages: d.gc_pages,
        erases: d.erases,
        waf: d.waf(),
        waf_cumulative: cum.waf(),
        sim_writes_per_sec: d.host_pages as f64 / secs.max(1e-9),
    }
}

/// Progress callback: (pages done, pages total).
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Scan the trace and build the devices: the replayer at the start of the trace, what the
/// scan counted, the format, and the scan's CPU seconds (the future-knowledge read included).
fn prepare(spec: &ReplaySpec) -> Result<(Replayer<'_>, TraceCounts, Format, f64), ReplayError> {
    let c0 = thread_cpu_secs();
    let mut router = Router {
        mode: spec.volumes,
        only: spec.only_volume,
        of_volume: Vec::new(),
    };
    let Scan {
        mut devices,
        counts,
        format,
        maps,
    } = scan(spec, &mut router)?;
    if spec.ftl.placement.is_some_and(|p| p.needs_future()) {
        let next = future(spec, &mut router, &mut devices, &maps, format, true)?;
        for (d, n) in devices.iter_mut().zip(next) {
            assert_eq!(n.len() as u64, d.pass_pages, "one time per page write");
            d.future = Some(n);
        }
    }
    for (d, m) in devices.iter_mut().zip(&maps) {
        d.map = ReplayMap::for_device(m, d.page_end, d.keyed);
    }
    drop(maps);
    let scan_cpu = thread_cpu_secs() - c0;
    build_ftls(spec, &mut devices)?;
    let rp = Replayer {
        spec,
        router,
        devices,
        reader: open(&spec.trace, Some(format))?,
        block: Vec::with_capacity(RECORDS),
        at: 0,
        issued: 0,
        passes: 0,
        in_pass: 0,
        pass_records: counts.records,
        flushes: 0,
    };
    Ok((rp, counts, format, scan_cpu))
}

/// Replay a trace: scan, size the devices, precondition, warm up, measure.
///
/// # Errors
/// Trace errors (file and line), FTL errors (naming the volume), bad parameters.
pub fn run(spec: &ReplaySpec, progress: Option<Progress<'_>>) -> Result<ReplayResult, ReplayError> {
    check_spec(spec)?;
    let t0 = Instant::now();
    let (mut rp, counts, format, scan_cpu) = prepare(spec)?;
    let logical: u64 = rp
        .devices
        .iter()
        .map(|d| d.ftl.as_ref().map_or(0, Ftl::logical_pages))
        .sum();
    let pass_pages: u64 = rp.devices.iter().map(|d| d.pass_pages).sum();
    let c1 = thread_cpu_secs();
    let pre = if spec.precondition { pass_pages } else { 0 };
    let warm = (spec.warmup * logical as f64).round() as u64;
    let measure = ((spec.volume * logical as f64).round() as u64).max(1);
    let total = pre + warm + measure;
    if spec.precondition {
        rp.run_until(0, true)?;
    }
    rp.run_until(rp.issued + warm, false)?;
    if let Some(p) = progress {
        p(rp.issued.min(total), total);
    }
    let flushes0 = rp.flushes;
    let (c2, m0) = (thread_cpu_secs(), rp.issued);
    let intervals = measure_phase(&mut rp, logical, measure, total, progress)?;
    let c3 = thread_cpu_secs();
    let replay_cpu = c3 - c1;
    let host = sum(&rp.devices).host_pages;
    assert_eq!(host, rp.issued, "every page write issued reached an FTL");
    let measured_flushes = rp.flushes - flushes0;
    let passes = rp.passes as f64 + rp.in_pass as f64 / counts.records.max(1) as f64;
    let issued = rp.issued;
    let elapsed = t0.elapsed().as_secs_f64();
    // The measured phase's CPU time, apportioned to the devices by their page writes.
    let cpu_per_page = (c3 - c2) / (issued - m0).max(1) as f64;
    let runs: Vec<DeviceRun> = rp
        .devices
        .iter()
        .map(|d| device_run(spec, d, elapsed, cpu_per_page))
        .collect();
    let measured = runs
        .iter()
        .fold(Counters::default(), |a, r| add(&a, &r.sim.measured));
    Ok(ReplayResult {
        trace: spec.trace.display().to_string(),
        format: format.to_string(),
        mode: spec.volumes,
        preconditioned: spec.precondition,
        counts,
        devices: runs,
        waf: measured.waf(),
        measured,
        passes,
        measured_flushes,
        intervals,
        scan_cpu_secs: scan_cpu,
        scan_records_per_sec: counts.lines.max(counts.records) as f64 / scan_cpu.max(1e-9),
        replay_cpu_secs: replay_cpu,
        replay_pages_per_sec: issued as f64 / replay_cpu.max(1e-9),
        elapsed_secs: elapsed,
    })
}

fn add(a: &Counters, b: &Counters) -> Counters {
    Counters {
        host_pages: a.host_pages + b.host_pages,
        media_pages: a.media_pages + b.media_pages,
        gc_pages: a.gc_pages + b.gc_pages,
        buffer_absorbed: a.buffer_absorbed + b.buffer_absorbed,
        trimmed_pages: a.trimmed_pages + b.trimmed_pages,
        erases: a.erases + b.erases,
        gc_rounds: a.gc_rounds + b.gc_rounds,
    }
}

/// The measured phase: interval by interval, per device and in aggregate.
fn measure_phase(
    rp: &mut Replayer<'_>,
    logical: u64,
    measure: u64,
    total: u64,
    progress: Option<Progress<'_>>,
) -> Result<Vec<Interval>, ReplayError> {
    for d in &mut rp.devices {
        let ftl = d.ftl.as_mut().expect("devices have an FTL");
        // FAR counts the measured phase, as every other figure of the report.
        ftl.reset_far();
        d.start = ftl.counters();
        d.prev = d.start;
        d.hist0 = ftl.victim_histogram().clone();
    }
    let step = ((rp.spec.interval * logical as f64).round() as u64).clamp(1, measure);
    let (begin, start) = (rp.issued, sum(&rp.devices));
    let mut prev = start;
    let mut out = Vec::new();
    while rp.issued - begin < measure {
        let ti = Instant::now();
        let target = begin + (rp.issued - begin + step).min(measure);
        rp.run_until(target, false)?;
        let secs = ti.elapsed().as_secs_f64();
        let done = rp.issued - begin;
        for d in &mut rp.devices {
            let now = d.ftl.as_ref().expect("devices have an FTL").counters();
            let dw = now.since(&d.start).host_pages as f64
                / d.ftl.as_ref().map_or(1, Ftl::logical_pages) as f64;
            let iv = interval(
                d.intervals.len(),
                dw,
                &now.since(&d.prev),
                &now.since(&d.start),
                secs,
            );
            d.intervals.push(iv);
            d.prev = now;
        }
        let now = sum(&rp.devices);
        out.push(interval(
            out.len(),
            done as f64 / logical as f64,
            &now.since(&prev),
            &now.since(&start),
            secs,
        ));
        prev = now;
        if let Some(p) = progress {
            p((total - measure + done).min(total), total);
        }
    }
    Ok(out)
}

/// One device's result in `nowa sim`'s form ([`SimResult::assemble`]). The replay runs every
/// device on one thread, so a device's CPU time is the replay's, apportioned by its share of
/// the measured page writes.
fn device_run(spec: &ReplaySpec, d: &Device, elapsed: f64, cpu_per_page: f64) -> DeviceRun {
    let ftl = d.ftl.as_ref().expect("devices have an FTL");
    let name = spec.trace.file_name().map_or_else(
        || spec.trace.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let secs: f64 = d
        .intervals
        .iter()
        .map(|i| i.host_pages as f64 / i.sim_writes_per_sec.max(1e-9))
        .sum();
    let host = ftl.counters().since(&d.start).host_pages;
    let sim = SimResult::assemble(MeasuredRun {
        seed: spec.seed,
        workload: match d.volume {
            Some(v) => format!("trace {name} volume {v}"),
            None => format!("trace {name}"),
        },
        ftl,
        start: d.start,
        hist0: &d.hist0,
        in_use_pages: d.live_peak,
        fill: d.live_peak as f64 / ftl.logical_pages() as f64,
        intervals: d.intervals.clone(),
        elapsed_secs: elapsed,
        measure_secs: secs,
        measure_cpu_secs: cpu_per_page * host as f64,
        // Several devices share the process: no per-device resident figure.
        rss_bytes: 0,
    });
    DeviceRun {
        volume: d.volume,
        footprint_pages: d.footprint,
        live_pages: d.live_peak,
        live_end_pages: d.live_end,
        pass_pages: d.pass_pages,
        sim,
    }
}

/// Next-overwrite times of every page write of each device, in that device's writes clock
/// (see [`nowa_trace::pages::next_overwrite`]), from one more read of the trace. Pages are
/// the addresses' stable indices of the scan maps (the same in every pass, whatever device
/// page the replay gives them), so write i of pass k happens at host page write k * pass + i
/// of the device's FTL and its page is next invalidated (overwritten or discarded) at
/// k * pass + result[i] (when the replay loops the trace: `looped` = true).
fn future(
    spec: &ReplaySpec,
    router: &mut Router,
    devices: &mut Vec<Device>,
    maps: &[CompactMap],
    format: Format,
    looped: bool,
) -> Result<Vec<Vec<u64>>, ReplayError> {
    let mut reader = open(&spec.trace, Some(format))?;
    let mut b: Vec<NextOverwrite> = maps.iter().map(|_| NextOverwrite::new()).collect();
    while let Some(r) = reader.next_record()? {
        if !matches!(r.op, Op::Write | Op::Discard) {
            continue;
        }
        let Some((d, key)) = router.route(r.volume, devices, false) else {
            continue;
        };
        for p in page_range(r.offset, r.len) {
            let Some(s) = maps[d].get(key, p) else {
                continue;
            };
            b[d].push(if r.op == Op::Write {
                PageEvent::Write(s.addr)
            } else {
                PageEvent::Discard(s.addr)
            });
        }
    }
    Ok(b.into_iter().map(|b| b.finish(looped)).collect())
}

/// Next-overwrite times of every page write of one device of the trace (`volume`, or the
/// shared device), in that device's writes clock: see [`future`].
///
/// # Errors
/// Trace errors; [`ReplayError::NoWrites`] if the volume writes nothing.
pub fn trace_next_overwrite(
    spec: &ReplaySpec,
    volume: Option<u32>,
    looped: bool,
) -> Result<Vec<u64>, ReplayError> {
    let mut router = Router {
        mode: spec.volumes,
        only: volume.or(spec.only_volume),
        of_volume: Vec::new(),
    };
    let Scan {
        mut devices,
        format,
        maps,
        ..
    } = scan(spec, &mut router)?;
    let mut all = future(spec, &mut router, &mut devices, &maps, format, looped)?;
    Ok(all.swap_remove(0))
}

/// Human-readable report: `nowa sim`'s summary per device (or a table for many), the trace's
/// counts and the replay speed.
pub fn summary(r: &ReplayResult) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let c = &r.counts;
    let _ = writeln!(
        s,
        "trace     {} ({}): {} records, {} writes = {} pages, {} reads, {} discards ({} pages), {} flushes per pass",
        r.trace, r.format, c.records, c.writes, c.write_pages, c.reads, c.discards, c.discard_pages, c.flushes
    );
    let _ =
        writeln!(
        s,
        "replay    {:.2} passes over the trace{}, {} flushes in the measured phase, volumes {:?}",
        r.passes,
        if r.preconditioned { " (the first one preconditions)" } else { "" },
        r.measured_flushes,
        r.mode
    );
    if let [d] = &r.devices[..] {
        let _ = writeln!(
            s,
            "data      {} distinct pages written, {} live at the peak (the device is sized from it), {} live at the end of a pass",
            d.footprint_pages, d.live_pages, d.live_end_pages
        );
        s.push_str(&crate::sim::summary(&d.sim));
    } else {
        let _ = writeln!(
            s,
            "{:>8} {:>12} {:>12} {:>12} {:>12} {:>8}",
            "volume", "footprint", "live (peak)", "logical", "host pages", "WAF"
        );
        for d in &r.devices {
            let _ = writeln!(
                s,
                "{:>8} {:>12} {:>12} {:>12} {:>12} {:>8.3}",
                d.volume.map_or("all".into(), |v| v.to_string()),
                d.footprint_pages,
                d.live_pages,
                d.sim.layout.logical_pages,
                d.sim.measured.host_pages,
                d.sim.waf
            );
        }
        let _ = writeln!(s, "WAF       {:.3} (all devices, measured phase)", r.waf);
    }
    let _ = writeln!(
        s,
        "cpu       scan {:.2} M lines/s ({:.2} s), replay {:.2} M page writes/s ({:.2} s), one core",
        r.scan_records_per_sec / 1e6,
        r.scan_cpu_secs,
        r.replay_pages_per_sec / 1e6,
        r.replay_cpu_secs
    );
    s
}

/// Write the aggregate per-interval series (WAF over time) as CSV.
///
/// # Errors
/// The CSV writer's.
pub fn write_intervals(r: &ReplayResult, out: impl std::io::Write) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    for i in &r.intervals {
        w.serialize(i)?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_count_user_writes_to_the_next_invalidation_across_passes() {
        // One pass of 3 page writes: write 0 dies at clock 2, write 1 at 4 (next pass), write
        // 2 at 3 (next pass).
        let next = [2, 4, 3];
        let mut h = Vec::new();
        hints_of(&next, 0, 3, &mut h);
        assert_eq!(h, vec![2, 3, 1]);
        // Pass 2 (clocks 3..6) is pass 1 shifted by 3; a batch may straddle passes.
        hints_of(&next, 2, 4, &mut h);
        assert_eq!(h, vec![1, 2, 3, 1]);
        hints_of(&[NEVER, 5], 0, 2, &mut h);
        assert_eq!(h, vec![NEVER, 4]);
    }
}
