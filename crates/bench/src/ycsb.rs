//! `nowa ycsb`: YCSB on the engine, with the write drill-down of how-to-write-to-ssds.md 7.1.
//!
//! Definitions (how-to-write-to-ssds.md 7.1): user writes = eviction + checkpoint page writes;
//! DB-issued writes = user + doublewrite + DB GC page writes; DB WAF = DB-issued / user;
//! SSD WAF = media bytes / bytes the device received (everything the DB issued, WAL included);
//! total WAF = DB WAF x SSD WAF. Logical bytes/op = DB-issued page bytes per op, physical
//! bytes/op = media bytes per op (device host bytes when the device cannot tell).

use hdrhistogram::Histogram;
use nowa_device::{BlockDevice, DeviceCounters};
use nowa_engine::{out_of_place_store, Config, Durability, Engine, OopConfig, Stats};
use nowa_workload::{Uniform, Zipfian};
use parking_lot::Mutex;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The YCSB core mixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Mix {
    /// 50% read, 50% update.
    A,
    /// 95% read, 5% update.
    B,
    /// 100% read.
    C,
    /// 50% read, 50% read-modify-write.
    F,
}

impl std::str::FromStr for Mix {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_uppercase().as_str() {
            "A" => Ok(Mix::A),
            "B" => Ok(Mix::B),
            "C" => Ok(Mix::C),
            "F" => Ok(Mix::F),
            _ => Err(format!(
                "unknown YCSB workload '{s}' (expected A, B, C or F)"
            )),
        }
    }
}

impl Mix {
    /// Percent of operations that read only.
    fn read_pct(self) -> u64 {
        match self {
            Mix::A | Mix::F => 50,
            Mix::B => 95,
            Mix::C => 100,
        }
    }
}

/// What values look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ValueKind {
    /// Random bytes: incompressible.
    Random,
    /// An 8-byte counter then a repeated text pattern: compresses well, like the paper's values.
    Pattern,
}

impl std::str::FromStr for ValueKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "random" => Ok(ValueKind::Random),
            "pattern" | "compressible" => Ok(ValueKind::Pattern),
            _ => Err(format!(
                "unknown value kind '{s}' (expected random or pattern)"
            )),
        }
    }
}

/// When the run phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Stop {
    Ops(u64),
    Seconds(f64),
    /// The device has received this many times its capacity in writes (run phase only).
    DeviceWrites(f64),
}

#[derive(Debug, Clone, Serialize)]
pub struct YcsbSpec {
    pub records: u64,
    pub value_size: usize,
    pub value_kind: ValueKind,
    pub mix: Mix,
    /// Zipf theta of key popularity; 0 = uniform.
    pub theta: f64,
    pub threads: usize,
    pub stop: Stop,
    pub durability: Durability,
    pub seed: u64,
    /// Reporting interval.
    pub interval_secs: f64,
    pub engine: Config,
    /// Write path: in place (optional doublewrite) or out of place (zones, DB GC, ...).
    pub store: WritePath,
    /// Keep the WAL on a separate (in-memory) device, so the device under test holds only
    /// pages (how-to-write-to-ssds.md, Figure 1 and 7.1).
    pub separate_wal: bool,
    /// Append "key-id version" to this file after every acknowledged update (crash tests use it
    /// to check that acknowledged durable writes survive). Slow: one write(2) per update.
    pub ack_log: Option<std::path::PathBuf>,
}

/// Which write path the engine uses.
#[derive(Debug, Clone, Default, Serialize)]
pub enum WritePath {
    #[default]
    InPlace,
    OutOfPlace(OopConfig),
}

/// Create the engine of `spec` on `dev` (formats the device).
pub fn create_engine(dev: Device, spec: &YcsbSpec) -> Result<Engine, YcsbError> {
    let wal: Option<Device> = if spec.separate_wal {
        let limit = spec
            .engine
            .wal_limit_bytes
            .unwrap_or(spec.engine.pool_bytes);
        let region = spec
            .engine
            .wal_region_bytes
            .unwrap_or(limit + limit / 4 + (1 << 20));
        // Superblocks + WAL region + two mapping snapshots (24 B per data page).
        let snaps = 2 * ((dev.geometry().capacity / 4096) * 24 + 8192);
        Some(Arc::new(nowa_device::MemDevice::new(
            (region + snaps).div_ceil(4096) * 4096 + (1 << 20),
        )))
    } else {
        None
    };
    Ok(match &spec.store {
        WritePath::InPlace => Engine::create_with_wal(
            dev,
            wal,
            spec.engine.clone(),
            &nowa_engine::in_place_store(),
        )?,
        WritePath::OutOfPlace(o) => Engine::create_with_wal(
            dev,
            wal,
            spec.engine.clone(),
            &out_of_place_store(o.clone()),
        )?,
    })
}

/// One reporting interval.
#[derive(Debug, Clone, Serialize)]
pub struct Tick {
    pub t_secs: f64,
    pub ops: u64,
    pub ops_per_sec: f64,
    pub hit_ratio: f64,
    pub eviction_mb_s: f64,
    pub checkpoint_mb_s: f64,
    pub doublewrite_mb_s: f64,
    pub db_gc_mb_s: f64,
    /// NoWA compensation writes.
    pub compensation_mb_s: f64,
    /// Device bytes written for user pages (after compression and packing).
    pub user_store_mb_s: f64,
    pub wal_mb_s: f64,
    pub ssd_gc_mb_s: f64,
    pub db_waf: f64,
    pub ssd_waf: f64,
    pub total_waf: f64,
    /// Device writes so far in the run phase, in multiples of its capacity.
    pub device_writes: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Latency {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// Latency histogram in nanoseconds, 1 ns to 100 s, 3 significant digits.
fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("histogram bounds")
}

fn latency(h: &Histogram<u64>) -> Latency {
    let us = |v: u64| v as f64 / 1000.0;
    Latency {
        count: h.len(),
        mean_us: h.mean() / 1000.0,
        p50_us: us(h.value_at_quantile(0.5)),
        p99_us: us(h.value_at_quantile(0.99)),
        p999_us: us(h.value_at_quantile(0.999)),
        max_us: us(h.max()),
    }
}

/// Write drill-down of the run phase, in bytes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Drilldown {
    pub user_bytes: u64,
    pub eviction_bytes: u64,
    pub checkpoint_bytes: u64,
    pub doublewrite_bytes: u64,
    pub db_gc_bytes: u64,
    /// NoWA compensation writes.
    pub compensation_bytes: u64,
    /// Device bytes of the user pages as written (compressed + packed out of place).
    pub user_store_bytes: u64,
    /// Mapping-table snapshots (out-of-place checkpoints; not in DB WAF, in SSD host bytes).
    pub meta_bytes: u64,
    pub wal_bytes: u64,
    /// Bytes the device received.
    pub device_host_bytes: u64,
    /// Bytes the device wrote to flash (None if it cannot tell).
    pub media_bytes: Option<u64>,
    /// media - host: the SSD's own GC copies.
    pub ssd_gc_bytes: Option<u64>,
    /// DB GC rounds (victim zone or NoWA group) run by writers (low watermark) / by the
    /// background GC thread (high watermark).
    pub gc_rounds_foreground: u64,
    pub gc_rounds_background: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct YcsbResult {
    pub seed: u64,
    pub spec: YcsbSpec,
    pub device_capacity: u64,
    pub load_secs: f64,
    pub run_secs: f64,
    pub ops: u64,
    pub ops_per_sec: f64,
    pub read: Latency,
    pub update: Latency,
    pub hit_ratio: f64,
    pub db_waf: f64,
    pub ssd_waf: Option<f64>,
    pub total_waf: Option<f64>,
    pub logical_bytes_per_op: f64,
    pub physical_bytes_per_op: f64,
    pub drilldown: Drilldown,
    pub stats: Stats,
    pub ticks: Vec<Tick>,
}

#[derive(Debug, thiserror::Error)]
pub enum YcsbError {
    #[error(transparent)]
    Engine(#[from] nowa_engine::EngineError),
    #[error("{0}")]
    Config(String),
}

/// Key of record `id`: 8 bytes, big-endian so the B+-tree order is the numeric order.
pub fn key_of(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

/// The version a pattern value carries (see [`make_value`]); None if the value is too short.
pub fn pattern_version(value: &[u8], id: u64) -> Option<u64> {
    let tag = u64::from_le_bytes(value.get(..8)?.try_into().ok()?);
    Some((tag ^ id).rotate_right(32))
}

/// Fill `buf` with a value for record `id`, version `ver`.
pub fn make_value(buf: &mut [u8], kind: ValueKind, id: u64, ver: u64, rng: &mut u64) {
    match kind {
        ValueKind::Random => {
            for chunk in buf.chunks_mut(8) {
                *rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = *rng;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                let b = (z ^ (z >> 31)).to_le_bytes();
                chunk.copy_from_slice(&b[..chunk.len()]);
            }
        }
        ValueKind::Pattern => {
            const PAT: &[u8] = b"nowa-ycsb-value-";
            for (i, b) in buf.iter_mut().enumerate() {
                *b = PAT[i % PAT.len()];
            }
            let tag = (id ^ ver.rotate_left(32)).to_le_bytes();
            let n = buf.len().min(8);
            buf[..n].copy_from_slice(&tag[..n]);
        }
    }
}

enum KeyGen {
    Uniform(Uniform),
    Zipf(Zipfian),
}

impl KeyGen {
    fn new(records: u64, theta: f64, seed: u64) -> Result<KeyGen, YcsbError> {
        let e = |e: nowa_workload::WorkloadError| YcsbError::Config(e.to_string());
        Ok(if theta == 0.0 {
            KeyGen::Uniform(Uniform::new(records, seed).map_err(e)?)
        } else {
            KeyGen::Zipf(Zipfian::new(records, theta, seed).map_err(e)?)
        })
    }
    fn next(&mut self) -> u64 {
        match self {
            KeyGen::Uniform(u) => u.next_write(),
            KeyGen::Zipf(z) => z.next_write(),
        }
    }
}

/// Load `records` records with sequential keys.
pub fn load(
    engine: &Engine,
    spec: &YcsbSpec,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(), YcsbError> {
    let mut value = vec![0u8; spec.value_size];
    let mut rng = spec.seed ^ 0x5EED;
    for id in 0..spec.records {
        make_value(&mut value, spec.value_kind, id, 0, &mut rng);
        engine.put_with(&key_of(id), &value, Durability::Async)?;
        if id % 65536 == 0 {
            progress(id);
        }
    }
    engine.sync()?;
    engine.checkpoint()?;
    Ok(())
}

struct Snapshot {
    at: Instant,
    ops: u64,
    stats: Stats,
    dev: DeviceCounters,
}

fn delta_tick(
    a: &Snapshot,
    b: &Snapshot,
    t0: Instant,
    dev0: &DeviceCounters,
    capacity: u64,
) -> Tick {
    let secs = (b.at - a.at).as_secs_f64().max(1e-9);
    let mb = |x: u64| x as f64 / secs / 1e6;
    let ps = b.stats.page_size;
    let (s, p) = (&b.stats, &a.stats);
    let user = s.user_page_bytes - p.user_page_bytes;
    let db = s.db_page_bytes - p.db_page_bytes;
    let host = b.dev.host_bytes_written - a.dev.host_bytes_written;
    let media = b
        .dev
        .media_bytes_written
        .zip(a.dev.media_bytes_written)
        .map(|(x, y)| x - y);
    let hits = s.pool_hits - p.pool_hits;
    let misses = s.pool_misses - p.pool_misses;
    let db_waf = if user == 0 {
        1.0
    } else {
        db as f64 / user as f64
    };
    let ssd_waf = media.map_or(1.0, |m| {
        if host == 0 {
            1.0
        } else {
            m as f64 / host as f64
        }
    });
    Tick {
        t_secs: (b.at - t0).as_secs_f64(),
        ops: b.ops - a.ops,
        ops_per_sec: (b.ops - a.ops) as f64 / secs,
        hit_ratio: if hits + misses == 0 {
            1.0
        } else {
            hits as f64 / (hits + misses) as f64
        },
        eviction_mb_s: mb((s.eviction_page_writes - p.eviction_page_writes) * ps),
        checkpoint_mb_s: mb((s.checkpoint_page_writes - p.checkpoint_page_writes) * ps),
        doublewrite_mb_s: mb(s.doublewrite_bytes - p.doublewrite_bytes),
        db_gc_mb_s: mb(s.gc_store_bytes - p.gc_store_bytes),
        compensation_mb_s: mb(s.compensation_store_bytes - p.compensation_store_bytes),
        user_store_mb_s: mb(s.user_store_bytes - p.user_store_bytes),
        wal_mb_s: mb(s.wal_device_bytes - p.wal_device_bytes),
        ssd_gc_mb_s: mb(media.map_or(0, |m| m.saturating_sub(host))),
        db_waf,
        ssd_waf,
        total_waf: db_waf * ssd_waf,
        device_writes: (b.dev.host_bytes_written - dev0.host_bytes_written) as f64
            / capacity.max(1) as f64,
    }
}

/// Run the measured phase on a loaded engine. `on_tick` sees every interval (CSV, progress).
pub fn run(
    engine: Arc<Engine>,
    spec: &YcsbSpec,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<YcsbResult, YcsbError> {
    if spec.threads == 0 {
        return Err(YcsbError::Config("threads must be >= 1".into()));
    }
    let dev = engine.device().clone();
    let capacity = dev.geometry().capacity;
    let stop = AtomicBool::new(false);
    let ops = AtomicU64::new(0);
    let failure: Mutex<Option<nowa_engine::EngineError>> = Mutex::new(None);
    let hists: Mutex<(Histogram<u64>, Histogram<u64>)> = Mutex::new((new_hist(), new_hist()));
    let ack_log = match &spec.ack_log {
        Some(p) => Some(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| YcsbError::Config(format!("ack log {}: {e}", p.display())))?,
        )),
        None => None,
    };
    let snap = |ops: u64| Snapshot {
        at: Instant::now(),
        ops,
        stats: engine.stats(),
        dev: dev.counters(),
    };
    let start = snap(0);
    let t0 = start.at;
    let mut ticks = Vec::new();
    std::thread::scope(|scope| {
        for t in 0..spec.threads {
            let (engine, stop, ops, hists, failure, ack_log) =
                (&engine, &stop, &ops, &hists, &failure, &ack_log);
            scope.spawn(move || {
                let seed = spec.seed.wrapping_add(1 + t as u64 * 0x9E37_79B9);
                let mut keys = match KeyGen::new(spec.records, spec.theta, seed) {
                    Ok(k) => k,
                    Err(_) => return,
                };
                let mut rng = seed;
                let mut read_h = new_hist();
                let mut upd_h = new_hist();
                let mut value = vec![0u8; spec.value_size];
                let mut ver = 0u64;
                let limit = match spec.stop {
                    Stop::Ops(n) => n,
                    _ => u64::MAX,
                };
                'outer: while !stop.load(Relaxed) {
                    // Claim ops in small batches to keep the shared counter cold.
                    let base = ops.fetch_add(64, Relaxed);
                    if base >= limit {
                        break;
                    }
                    for _ in 0..(limit - base).min(64) {
                        let id = keys.next();
                        rng = rng
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let is_read = (rng >> 33) % 100 < spec.mix.read_pct();
                        let t = Instant::now();
                        let res = if is_read {
                            engine.get(&key_of(id)).map(|_| ())
                        } else {
                            ver += 1;
                            let r = if spec.mix == Mix::F {
                                engine.get(&key_of(id)).map(|_| ())
                            } else {
                                Ok(())
                            };
                            r.and_then(|_| {
                                make_value(&mut value, spec.value_kind, id, ver, &mut rng);
                                engine.put_with(&key_of(id), &value, spec.durability)
                            })
                        };
                        let ns = t.elapsed().as_nanos() as u64;
                        if let Err(e) = res {
                            failure.lock().get_or_insert(e);
                            stop.store(true, Relaxed);
                            break 'outer;
                        }
                        if is_read {
                            read_h.saturating_record(ns.max(1));
                        } else {
                            upd_h.saturating_record(ns.max(1));
                            if let Some(log) = ack_log {
                                use std::io::Write;
                                // The update is acknowledged: record it before the next one.
                                let _ = writeln!(log.lock(), "{id} {ver}");
                            }
                        }
                    }
                }
                let mut h = hists.lock();
                h.0.add(&read_h).ok();
                h.1.add(&upd_h).ok();
            });
        }
        // The monitor: one tick per interval until the stop condition holds.
        let interval = Duration::from_secs_f64(spec.interval_secs.max(0.01));
        let mut prev = snap(0);
        loop {
            let mut slept = Duration::ZERO;
            let mut done = false;
            while slept < interval {
                let step = Duration::from_millis(10).min(interval - slept);
                std::thread::sleep(step);
                slept += step;
                let n = ops.load(Relaxed);
                done = stop.load(Relaxed)
                    || match spec.stop {
                        Stop::Ops(limit) => n >= limit,
                        Stop::Seconds(s) => t0.elapsed().as_secs_f64() >= s,
                        Stop::DeviceWrites(k) => {
                            (dev.counters().host_bytes_written - start.dev.host_bytes_written)
                                as f64
                                >= k * capacity as f64
                        }
                    };
                if done {
                    break;
                }
            }
            let now = snap(ops.load(Relaxed));
            let tick = delta_tick(&prev, &now, t0, &start.dev, capacity);
            on_tick(&tick);
            ticks.push(tick);
            prev = now;
            if done {
                stop.store(true, Relaxed);
                break;
            }
        }
    });
    if let Some(e) = failure.into_inner() {
        return Err(e.into());
    }
    let end = snap(0);
    let run_secs = (end.at - t0).as_secs_f64();
    let total_ops: u64 = ticks.iter().map(|t| t.ops).sum::<u64>();
    // Count the ops actually done (claimed batches may overshoot the counter).
    let done_ops = {
        let h = hists.lock();
        h.0.len() + h.1.len()
    };
    let ops_n = done_ops.max(1);
    let _ = total_ops;
    let (s, p) = (&end.stats, &start.stats);
    let ps = s.page_size;
    let ev = (s.eviction_page_writes - p.eviction_page_writes) * ps;
    let ck = (s.checkpoint_page_writes - p.checkpoint_page_writes) * ps;
    let dw = s.doublewrite_bytes - p.doublewrite_bytes;
    let gc = s.gc_store_bytes - p.gc_store_bytes;
    let comp = s.compensation_store_bytes - p.compensation_store_bytes;
    let user_store = s.user_store_bytes - p.user_store_bytes;
    let user = ev + ck;
    let db = user_store + dw + gc + comp;
    let host = end.dev.host_bytes_written - start.dev.host_bytes_written;
    let media = end
        .dev
        .media_bytes_written
        .zip(start.dev.media_bytes_written)
        .map(|(a, b)| a - b);
    let db_waf = if user == 0 {
        1.0
    } else {
        db as f64 / user as f64
    };
    let ssd_waf = media.map(|m| {
        if host == 0 {
            1.0
        } else {
            m as f64 / host as f64
        }
    });
    let hits = s.pool_hits - p.pool_hits;
    let misses = s.pool_misses - p.pool_misses;
    let h = hists.into_inner();
    Ok(YcsbResult {
        seed: spec.seed,
        spec: spec.clone(),
        device_capacity: capacity,
        load_secs: 0.0,
        run_secs,
        ops: done_ops,
        ops_per_sec: done_ops as f64 / run_secs.max(1e-9),
        read: latency(&h.0),
        update: latency(&h.1),
        hit_ratio: if hits + misses == 0 {
            1.0
        } else {
            hits as f64 / (hits + misses) as f64
        },
        db_waf,
        ssd_waf,
        total_waf: ssd_waf.map(|w| w * db_waf),
        logical_bytes_per_op: db as f64 / ops_n as f64,
        physical_bytes_per_op: media.unwrap_or(host) as f64 / ops_n as f64,
        drilldown: Drilldown {
            user_bytes: user,
            eviction_bytes: ev,
            checkpoint_bytes: ck,
            doublewrite_bytes: dw,
            db_gc_bytes: gc,
            compensation_bytes: comp,
            user_store_bytes: user_store,
            meta_bytes: s.meta_store_bytes - p.meta_store_bytes,
            wal_bytes: s.wal_device_bytes - p.wal_device_bytes,
            device_host_bytes: host,
            media_bytes: media,
            ssd_gc_bytes: media.map(|m| m.saturating_sub(host)),
            gc_rounds_foreground: s.gc_rounds_foreground - p.gc_rounds_foreground,
            gc_rounds_background: s.gc_rounds_background - p.gc_rounds_background,
        },
        stats: engine.stats(),
        ticks,
    })
}

/// Human-readable summary: a Table-1-style row and the write drill-down.
pub fn summary(r: &YcsbResult) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let f2 = |x: Option<f64>| x.map_or("n/a".to_string(), |v| format!("{v:.2}"));
    let _ = writeln!(s, "nowa ycsb — seed {}", r.seed);
    let _ = writeln!(
        s,
        "workload  YCSB-{:?}, {} records x {} B values ({:?}), zipf theta {}, {} threads",
        r.spec.mix,
        r.spec.records,
        r.spec.value_size,
        r.spec.value_kind,
        r.spec.theta,
        r.spec.threads
    );
    let _ = writeln!(
        s,
        "engine    pool {} MiB, doublewrite {}, durability {:?}; device {:.2} GiB",
        r.spec.engine.pool_bytes >> 20,
        if r.spec.engine.doublewrite {
            "on"
        } else {
            "OFF (unsafe)"
        },
        r.spec.durability,
        r.device_capacity as f64 / (1u64 << 30) as f64
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:>10} {:>7} {:>7} {:>9} {:>12} {:>12} {:>9}",
        "OPS", "DB WAF", "SSD WAF", "total WAF", "logical B/op", "physical B/op", "hit ratio"
    );
    let _ = writeln!(
        s,
        "{:>10.0} {:>7.2} {:>7} {:>9} {:>12.0} {:>12.0} {:>9.3}",
        r.ops_per_sec,
        r.db_waf,
        f2(r.ssd_waf),
        f2(r.total_waf),
        r.logical_bytes_per_op,
        r.physical_bytes_per_op,
        r.hit_ratio
    );
    let _ = writeln!(s);
    let d = &r.drilldown;
    let mb = |b: u64| b as f64 / 1e6;
    let _ = writeln!(
        s,
        "writes    user {:.1} MB (eviction {:.1}, checkpoint {:.1}; {:.1} MB as written) | doublewrite {:.1} MB | DB GC {:.1} MB | compensation {:.1} MB | WAL {:.1} MB | SSD GC {}",
        mb(d.user_bytes),
        mb(d.eviction_bytes),
        mb(d.checkpoint_bytes),
        mb(d.user_store_bytes),
        mb(d.doublewrite_bytes),
        mb(d.db_gc_bytes),
        mb(d.compensation_bytes),
        mb(d.wal_bytes),
        d.ssd_gc_bytes.map_or("n/a (device has no media counter)".into(), |b| format!("{:.1} MB", mb(b)))
    );
    if d.gc_rounds_foreground + d.gc_rounds_background > 0 {
        let _ = writeln!(
            s,
            "DB GC     rounds foreground {} | background {}",
            d.gc_rounds_foreground, d.gc_rounds_background
        );
    }
    for (name, l) in [("read", &r.read), ("update", &r.update)] {
        if l.count > 0 {
            let _ = writeln!(
                s,
                "latency   {name:<6} n={} mean {:.1} us  p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
                l.count, l.mean_us, l.p50_us, l.p99_us, l.p999_us, l.max_us
            );
        }
    }
    let _ = writeln!(
        s,
        "time      load {:.1} s, run {:.1} s, {} ops",
        r.load_secs, r.run_secs, r.ops
    );
    s
}

/// Bytes the loaded dataset takes on the device: the loader fills leaves with
/// (4096 - 72) / (value + 22) records each (page header; key, slot and length per record),
/// plus 1% inner nodes. Device sizing (`--dataset-fill`, Table 1) depends on it.
pub fn estimate_dataset_bytes(records: u64, value_size: usize) -> u64 {
    let per_page = ((4096 - 72) / (value_size + 22)).max(1) as u64;
    let leaves = records.div_ceil(per_page);
    (leaves + leaves / 100 + 1) * 4096
}

/// Write the ticks as CSV.
pub fn write_ticks_csv(ticks: &[Tick], path: &std::path::Path) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    for t in ticks {
        w.serialize(t)?;
    }
    w.flush()?;
    Ok(())
}

/// The device trait object type the driver works on.
pub type Device = Arc<dyn BlockDevice>;
