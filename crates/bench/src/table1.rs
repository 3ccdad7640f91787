//! `nowa table1`: Table 1 of how-to-write-to-ssds.md, row by row, on identical simulated
//! conventional SSDs: YCSB-A, zipf 0.8, compressible values, buffer pool 10% of the data,
//! dataset ~90% of the device, run until the device received `device_writes` x its capacity.
//!
//! Rows: in-place (doublewrite); out-of-place (zones smaller than the SSD GC unit, random
//! placement among the open zones, greedy DB GC); then LZ4 compression with 4 KiB page
//! packing; GDT (write history, EDT-grouped placement, EDT-ordered GC); NoWA (active groups, group GC with
//! compensation writes); zone size aligned to the inferred SSD GC unit (active group = one
//! GC unit); and finally without compression. The WAL, superblocks and mapping snapshots
//! live on a separate log device, so the SSD under test holds pages only (as in the paper).

use crate::gcunit::{self, InferSpec};
use crate::plot::{render_bar, BarChart};
use crate::ycsb::{self, Mix, Stop, ValueKind, WritePath, YcsbResult, YcsbSpec};
use nowa_device::{BlockDevice, SimConfig, SimDevice, SimMode};
use nowa_engine::{Compression, Config, Durability, OopConfig};
use serde::Serialize;
use std::sync::Arc;

#[derive(Debug, Clone, Serialize)]
pub struct Table1Spec {
    pub records: u64,
    pub value_size: usize,
    pub theta: f64,
    pub threads: usize,
    /// Run phase length in device capacities written.
    pub device_writes: f64,
    pub dataset_fill: f64,
    /// Simulated SSD over-provisioning.
    pub op: f64,
    /// Buffer pool as a fraction of the dataset.
    pub pool_frac: f64,
    pub open_zones: u32,
    /// Media write bandwidth (bytes/s) of the paced device and of the I/O-bound estimate.
    pub media_bytes_per_sec: f64,
    /// Read bandwidth (bytes/s) of the paced device.
    pub read_bytes_per_sec: f64,
    /// Pace the simulated SSD (`paced::Paced`): OPS then reflect the device's work (media
    /// writes incl. its GC copies, reads) instead of the simulator's CPU cost.
    pub paced: bool,
    pub seed: u64,
}

impl Table1Spec {
    /// ~1 minute in total on 2 cores (the README headline).
    pub fn quick() -> Self {
        Table1Spec {
            records: 1_500_000,
            value_size: 120,
            theta: 0.8,
            threads: 2,
            device_writes: 4.0,
            dataset_fill: 0.9,
            op: 0.07,
            pool_frac: 0.1,
            open_zones: 4,
            media_bytes_per_sec: 1e9,
            read_bytes_per_sec: 3e9,
            paced: true,
            seed: 42,
        }
    }
    /// The full run: a larger dataset, still 4x the device capacity written per row.
    pub fn full() -> Self {
        Table1Spec {
            records: 5_000_000,
            ..Self::quick()
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub name: String,
    /// False: the optimization is not implemented yet; the row carries no numbers.
    pub implemented: bool,
    pub zone_bytes: Option<u64>,
    pub ops_per_sec: f64,
    /// ops/s relative to the in-place row.
    pub speedup: f64,
    /// Throughput if the device's media write bandwidth were the bottleneck.
    pub io_bound_ops_per_sec: f64,
    pub db_waf: f64,
    pub ssd_waf: f64,
    pub total_waf: f64,
    pub logical_bytes_per_op: f64,
    pub physical_bytes_per_op: f64,
    pub hit_ratio: f64,
    pub compression_ratio: f64,
    pub user_mb: f64,
    pub doublewrite_mb: f64,
    pub db_gc_mb: f64,
    pub compensation_mb: f64,
    pub ssd_gc_mb: f64,
    pub wal_mb: f64,
    /// DB GC rounds run by writers (foreground) / by the background GC thread.
    pub gc_rounds_foreground: u64,
    pub gc_rounds_background: u64,
    pub run_secs: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Table1 {
    pub spec: Table1Spec,
    pub device_capacity: u64,
    pub ssd_gc_unit_bytes: u64,
    pub inferred_gc_unit_bytes: Option<u64>,
    pub rows: Vec<Row>,
}

#[derive(Debug, thiserror::Error)]
pub enum Table1Error {
    #[error(transparent)]
    Ycsb(#[from] ycsb::YcsbError),
    #[error(transparent)]
    Device(#[from] nowa_device::DeviceError),
    #[error(transparent)]
    Infer(#[from] gcunit::InferError),
    #[error("{0}")]
    Config(String),
}

fn row_of(name: &str, zone: Option<u64>, r: &YcsbResult, spec: &Table1Spec) -> Row {
    let d = &r.drilldown;
    let mb = |b: u64| b as f64 / 1e6;
    let ssd_waf = r.ssd_waf.unwrap_or(1.0);
    Row {
        name: name.into(),
        implemented: true,
        zone_bytes: zone,
        ops_per_sec: r.ops_per_sec,
        speedup: 1.0,
        io_bound_ops_per_sec: spec.media_bytes_per_sec / r.physical_bytes_per_op.max(1.0),
        db_waf: r.db_waf,
        ssd_waf,
        total_waf: r.db_waf * ssd_waf,
        logical_bytes_per_op: r.logical_bytes_per_op,
        physical_bytes_per_op: r.physical_bytes_per_op,
        hit_ratio: r.hit_ratio,
        compression_ratio: if d.user_bytes == 0 {
            1.0
        } else {
            d.user_store_bytes as f64 / d.user_bytes as f64
        },
        user_mb: mb(d.user_store_bytes),
        doublewrite_mb: mb(d.doublewrite_bytes),
        db_gc_mb: mb(d.db_gc_bytes),
        compensation_mb: mb(d.compensation_bytes),
        ssd_gc_mb: mb(d.ssd_gc_bytes.unwrap_or(0)),
        wal_mb: mb(d.wal_bytes),
        gc_rounds_foreground: d.gc_rounds_foreground,
        gc_rounds_background: d.gc_rounds_background,
        run_secs: r.run_secs,
    }
}

fn missing(name: &str) -> Row {
    Row {
        name: name.into(),
        implemented: false,
        zone_bytes: None,
        ops_per_sec: 0.0,
        speedup: 0.0,
        io_bound_ops_per_sec: 0.0,
        db_waf: 0.0,
        ssd_waf: 0.0,
        total_waf: 0.0,
        logical_bytes_per_op: 0.0,
        physical_bytes_per_op: 0.0,
        hit_ratio: 0.0,
        compression_ratio: 0.0,
        user_mb: 0.0,
        doublewrite_mb: 0.0,
        db_gc_mb: 0.0,
        compensation_mb: 0.0,
        ssd_gc_mb: 0.0,
        wal_mb: 0.0,
        gc_rounds_foreground: 0,
        gc_rounds_background: 0,
        run_secs: 0.0,
    }
}

/// Device configuration shared by every row.
pub fn device_config(spec: &Table1Spec) -> Result<(SimConfig, u64, u64), Table1Error> {
    let dataset = crate::ycsb::estimate_dataset_bytes(spec.records, spec.value_size);
    let pool = ((dataset as f64 * spec.pool_frac) as u64).max(1 << 20);
    // The WAL (and superblocks, mapping snapshots) live on a separate log device: the SSD
    // under test holds the pages only, `dataset_fill` of its capacity.
    let capacity = ((dataset as f64 / spec.dataset_fill) as u64 + (1 << 20)) / 4096 * 4096;
    let cfg = SimConfig::for_capacity(capacity, spec.op, SimMode::Conventional)?;
    Ok((cfg, pool, capacity))
}

/// Run every row; `on_row` sees each finished row (progress output).
pub fn run(spec: &Table1Spec, on_row: &mut dyn FnMut(&Row)) -> Result<Table1, Table1Error> {
    let (sim, pool, _) = device_config(spec)?;
    let probe = SimDevice::new(sim.clone())?;
    let unit = probe.layout().unit_pages as u64 * 4096;
    let capacity = probe.geometry().capacity;
    drop(probe);
    // Section 5.3: infer the GC unit with the ZNS-like sweep on identical fresh devices.
    let inf_spec = InferSpec {
        min_zone: 64 << 10,
        max_zone: (capacity / 8).next_power_of_two() / 2,
        volume: 1.5,
        ..InferSpec::default()
    };
    let mut fresh = || -> Result<Box<dyn BlockDevice>, gcunit::InferError> {
        Ok(Box::new(SimDevice::new(sim.clone())?))
    };
    let inferred = gcunit::infer(&mut fresh, &inf_spec, &mut |_| {})?.gc_unit_bytes;
    let gc_unit = inferred.unwrap_or(unit);
    let k = spec.open_zones.max(1) as u64;
    // Unaligned zones: a quarter of the GC unit per zone and only 3/4 of a unit per group
    // (the "250 MB before aligning" of the paper); aligned: group = one GC unit.
    let unaligned = (gc_unit * 3 / 4 / k).max(64 << 10) / 4096 * 4096;
    let aligned = (gc_unit / k).max(64 << 10) / 4096 * 4096;
    let engine = Config {
        pool_bytes: pool,
        durability: Durability::Async,
        ..Config::default()
    };
    // "+ comp. + pagepack": compression always comes with 4 KiB page packing here.
    // Deferred NoWA compensation (section 5.4: compensate "before the SSD reaches its
    // minimum free-space threshold") needs each group to be exactly one SSD GC unit, so only
    // the aligned rows defer; the SSD's OP is the configured one (SSD-iq estimates it).
    let oop = |zone: u64, c: Compression, gdt: bool, nowa: bool| {
        WritePath::OutOfPlace(OopConfig {
            zone_bytes: Some(zone),
            open_zones: spec.open_zones,
            compression: c,
            packing: c != Compression::Off,
            gdt,
            nowa,
            defer_compensation: nowa && zone == aligned,
            ssd_op: spec.op,
            seed: spec.seed,
            ..OopConfig::default()
        })
    };
    type RowCfg = Option<(WritePath, Option<u64>)>;
    let rows: Vec<(&str, RowCfg)> = vec![
        ("in-place", Some((WritePath::InPlace, None))),
        (
            "-> out-of-place",
            Some((
                oop(unaligned, Compression::Off, false, false),
                Some(unaligned),
            )),
        ),
        (
            "+ comp. + pagepack",
            Some((
                oop(unaligned, Compression::Lz4, false, false),
                Some(unaligned),
            )),
        ),
        (
            "+ GDT",
            Some((
                oop(unaligned, Compression::Lz4, true, false),
                Some(unaligned),
            )),
        ),
        (
            "+ NoWA",
            Some((
                oop(unaligned, Compression::Lz4, true, true),
                Some(unaligned),
            )),
        ),
        (
            "+ aligning GC unit",
            Some((oop(aligned, Compression::Lz4, true, true), Some(aligned))),
        ),
        (
            "- comp.",
            Some((oop(aligned, Compression::Off, true, true), Some(aligned))),
        ),
    ];
    let mut out = Vec::new();
    let mut base_ops = None;
    for (name, row) in rows {
        let Some((store, zone)) = row else {
            let r = missing(name);
            on_row(&r);
            out.push(r);
            continue;
        };
        let sim_dev: Arc<dyn BlockDevice> = Arc::new(SimDevice::new(sim.clone())?);
        let paced = spec.paced.then(|| {
            Arc::new(crate::paced::Paced::new(
                sim_dev.clone(),
                spec.media_bytes_per_sec,
                spec.read_bytes_per_sec,
            ))
        });
        let dev: Arc<dyn BlockDevice> = match &paced {
            Some(p) => p.clone(),
            None => sim_dev,
        };
        let yspec = YcsbSpec {
            records: spec.records,
            value_size: spec.value_size,
            value_kind: ValueKind::Pattern,
            mix: Mix::A,
            theta: spec.theta,
            threads: spec.threads,
            stop: Stop::DeviceWrites(spec.device_writes),
            durability: Durability::Async,
            seed: spec.seed,
            interval_secs: 1.0,
            engine: engine.clone(),
            store,
            separate_wal: true,
            ack_log: None,
        };
        let engine = Arc::new(ycsb::create_engine(dev, &yspec)?);
        ycsb::load(&engine, &yspec, &|_| {})?;
        if let Some(p) = &paced {
            p.reset(); // the load phase is not measured
        }
        let res = ycsb::run(engine.clone(), &yspec, &mut |_| {})?;
        engine.close().map_err(ycsb::YcsbError::from)?;
        let mut r = row_of(name, zone, &res, spec);
        let b = *base_ops.get_or_insert(r.ops_per_sec);
        r.speedup = r.ops_per_sec / b.max(1e-9);
        on_row(&r);
        out.push(r);
    }
    Ok(Table1 {
        spec: spec.clone(),
        device_capacity: capacity,
        ssd_gc_unit_bytes: unit,
        inferred_gc_unit_bytes: inferred,
        rows: out,
    })
}

/// The Table-1-style text table.
pub fn format(t: &Table1) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Table 1 (how-to-write-to-ssds.md) on a simulated {:.0} MiB conventional SSD: YCSB-A zipf {}, {} records x {} B compressible values, pool {:.0}% of the data, {}x device writes per row",
        t.device_capacity as f64 / (1u64 << 20) as f64,
        t.spec.theta,
        t.spec.records,
        t.spec.value_size,
        t.spec.pool_frac * 100.0,
        t.spec.device_writes
    );
    let _ = writeln!(
        s,
        "SSD GC unit (superblock) {} KiB, inferred by the ZNS-like sweep: {}",
        t.ssd_gc_unit_bytes >> 10,
        t.inferred_gc_unit_bytes
            .map_or("none".into(), |b| format!("{} KiB", b >> 10))
    );
    let _ = writeln!(
        s,
        "{:<20} {:>9} {:>6} {:>7} {:>7} {:>9} {:>9} {:>9} {:>7} {:>6} {:>10} {:>8}",
        "Version",
        "OPS",
        "x base",
        "DB WAF",
        "SSD WAF",
        "total WAF",
        "log B/op",
        "phys B/op",
        "hit",
        "comp",
        "IO-bound",
        "zone KiB"
    );
    for r in &t.rows {
        if !r.implemented {
            let _ = writeln!(s, "{:<20} (not implemented)", r.name);
            continue;
        }
        let _ = writeln!(
            s,
            "{:<20} {:>9.0} {:>6.2} {:>7.2} {:>7.2} {:>9.2} {:>9.0} {:>9.0} {:>7.3} {:>6.2} {:>10.0} {:>8}",
            r.name,
            r.ops_per_sec,
            r.speedup,
            r.db_waf,
            r.ssd_waf,
            r.total_waf,
            r.logical_bytes_per_op,
            r.physical_bytes_per_op,
            r.hit_ratio,
            r.compression_ratio,
            r.io_bound_ops_per_sec,
            r.zone_bytes.map_or("-".into(), |z| (z >> 10).to_string())
        );
    }
    let _ = writeln!(
        s,
        "\nWrite drill-down (MB, Figure 13b): user (as written) | doublewrite | DB GC | compensation | SSD GC | WAL"
    );
    for r in t.rows.iter().filter(|r| r.implemented) {
        let _ = writeln!(
            s,
            "{:<20} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
            r.name,
            r.user_mb,
            r.doublewrite_mb,
            r.db_gc_mb,
            r.compensation_mb,
            r.ssd_gc_mb,
            r.wal_mb
        );
    }
    if t.spec.paced {
        let _ = writeln!(
            s,
            "\nOPS: measured on the paced SSD (media writes {:.1} GB/s incl. its GC copies, reads {:.1} GB/s); IO-bound: bandwidth / physical B/op.",
            t.spec.media_bytes_per_sec / 1e9,
            t.spec.read_bytes_per_sec / 1e9
        );
    } else {
        let _ = writeln!(
            s,
            "\nOPS: measured on the unpaced in-memory simulator (CPU-bound); IO-bound: ops/s if the media write bandwidth ({:.1} GB/s) were the limit = bandwidth / physical B/op.",
            t.spec.media_bytes_per_sec / 1e9
        );
    }
    s
}

/// CSV of the rows.
pub fn write_csv(t: &Table1, path: &std::path::Path) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    for r in &t.rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Bar plot: DB / SSD / total WAF per row.
pub fn plot(t: &Table1, path: &std::path::Path) -> Result<(), crate::plot::PlotError> {
    let rows: Vec<&Row> = t.rows.iter().filter(|r| r.implemented).collect();
    let chart = BarChart {
        title: "Table 1 on a simulated SSD: WAF per optimization (YCSB-A, zipf 0.8)".into(),
        y_label: "write amplification".into(),
        categories: rows.iter().map(|r| r.name.clone()).collect(),
        groups: vec![
            ("DB WAF".into(), rows.iter().map(|r| r.db_waf).collect()),
            ("SSD WAF".into(), rows.iter().map(|r| r.ssd_waf).collect()),
            (
                "total WAF".into(),
                rows.iter().map(|r| r.total_waf).collect(),
            ),
        ],
    };
    render_bar(&chart, path)
}
