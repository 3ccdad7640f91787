//! The human-readable summary of a YCSB run and its per-interval CSV.

use super::measure::{Bound, BoundBy, Drilldown, YcsbResult};
use super::{KeyOrder, Tick, WritePath};
use std::fmt::Write;

/// "1.23", or "n/a" for a WAF of nothing.
#[must_use]
pub fn fmt_waf(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), |v| format!("{v:.2}"))
}

/// Human-readable summary: a Table-1-style row, the write drill-down, what bounds the run.
#[must_use]
pub fn summary(r: &YcsbResult) -> String {
    let mut s = String::new();
    header(&mut s, r);
    row(&mut s, r);
    drilldown(&mut s, &r.drilldown);
    pending_blind(&mut s, r);
    flushes(&mut s, r);
    s.push_str(&bound_line(&r.bound));
    s.push('\n');
    for (name, l) in [("read", &r.read), ("update", &r.update)] {
        if l.count > 0 {
            let _ = writeln!(
                s,
                "latency   {name:<6} n={} mean {:.1} us  p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
                l.count, l.mean_us, l.p50_us, l.p99_us, l.p999_us, l.max_us
            );
        }
    }
    if let Some(p) = &r.placement {
        s.push_str(&p.text());
    }
    let _ = writeln!(
        s,
        "time      load {:.1} s, run {:.1} s, {} ops",
        r.load_secs, r.run_secs, r.ops
    );
    if r.interrupted {
        let _ = writeln!(
            s,
            "INTERRUPTED (Ctrl-C): {} of {} records loaded; the figures cover what ran until then",
            r.records_loaded, r.spec.records
        );
    }
    s
}

fn pending_blind(s: &mut String, r: &YcsbResult) {
    if let Some(p) = &r.pending_blind_changes {
        let _ = writeln!(
            s,
            "pending   {} blind changes pending on {} leaves at the end: their write-back (est. {:.1} MB, {:.0} B per update) is not in the writes above",
            p.changes,
            p.leaves,
            p.est_write_back_bytes as f64 / 1e6,
            p.est_bytes_per_update
        );
    }
}

fn header(s: &mut String, r: &YcsbResult) {
    let _ = writeln!(s, "nowa ycsb — seed {}", r.seed);
    let _ = writeln!(
        s,
        "workload  YCSB-{:?}, {} records x {} B values ({:?}), zipf theta {}{}, {} threads",
        r.spec.mix,
        r.spec.records,
        r.spec.value_size,
        r.spec.value_kind,
        r.spec.theta,
        match r.spec.key_order {
            KeyOrder::Scrambled => "",
            KeyOrder::Ranked => " (ranked keys)",
        },
        r.spec.threads
    );
    let path = match &r.spec.store {
        // Out of place has no doublewrite buffer.
        WritePath::OutOfPlace(o) => format!(
            "out of place (space limit {})",
            o.space_limit_bytes.map_or_else(
                || "none: the device".to_string(),
                |b| nowa_units::Bytes(b).to_string()
            )
        ),
        WritePath::InPlace if r.spec.engine.doublewrite => "in place, doublewrite on".into(),
        WritePath::InPlace => "in place, doublewrite OFF (unsafe)".into(),
    };
    let _ = writeln!(
        s,
        "engine    pool {} MiB, {path}, durability {:?}{}; device {:.2} GiB",
        r.spec.engine.pool_bytes >> 20,
        r.spec.durability,
        r.spec.durable_every.map_or_else(String::new, |n| format!(
            " (a durability point every {n} updates)"
        )),
        r.device_capacity as f64 / f64::from(1u32 << 30)
    );
    let _ = writeln!(
        s,
        "writeback page cleaner {}, max checkpoint count {}",
        if r.spec.engine.page_cleaner {
            "on"
        } else {
            "off"
        },
        r.spec.engine.max_checkpoint_count
    );
    let _ = writeln!(s);
}

fn row(s: &mut String, r: &YcsbResult) {
    let _ = writeln!(
        s,
        "{:>10} {:>7} {:>7} {:>9} {:>12} {:>12} {:>9}",
        "OPS", "DB WAF", "SSD WAF", "total WAF", "logical B/op", "physical B/op", "hit ratio"
    );
    let _ = writeln!(
        s,
        "{:>10.0} {:>7} {:>7} {:>9} {:>12.0} {:>12.0} {:>9.3}",
        r.ops_per_sec,
        fmt_waf(r.db_waf),
        fmt_waf(r.ssd_waf),
        fmt_waf(r.total_waf),
        r.logical_bytes_per_op,
        r.physical_bytes_per_op,
        r.hit_ratio
    );
    let _ = writeln!(s);
}

fn drilldown(s: &mut String, d: &Drilldown) {
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
        d.ssd_gc_bytes.map_or_else(
            || "n/a (device has no media counter)".into(),
            |b| format!("{:.1} MB", mb(b))
        )
    );
    if d.mapping_pages > 0 {
        let _ = writeln!(
            s,
            "mapping   {:.1} B RAM per mapped page ({} pages, {:.1} MiB) | snapshots {:.0} B per checkpoint ({} checkpoints, {} full)",
            d.mapping_ram_bytes as f64 / d.mapping_pages as f64,
            d.mapping_pages,
            d.mapping_ram_bytes as f64 / f64::from(1u32 << 20),
            d.meta_bytes as f64 / d.checkpoints.max(1) as f64,
            d.checkpoints,
            d.full_snapshots
        );
    }
    if d.gc_rounds_foreground + d.gc_rounds_background > 0 {
        let _ = writeln!(
            s,
            "DB GC     rounds foreground {} | background {}",
            d.gc_rounds_foreground, d.gc_rounds_background
        );
    }
}

fn flushes(s: &mut String, r: &YcsbResult) {
    let d = &r.drilldown;
    let mb = |b: u64| b as f64 / 1e6;
    let _ = writeln!(
        s,
        "flushes   {:.3}/op (device {}; engine: WAL {}, store {}, checkpoint {}); {} page writes per store flush",
        r.flushes_per_op,
        d.device_flushes,
        d.wal_flushes,
        d.store_flushes,
        d.checkpoint_flushes,
        r.page_writes_per_store_flush
            .map_or_else(|| "n/a".to_string(), |x| format!("{x:.1}"))
    );
    let _ = writeln!(
        s,
        "cleaning  page cleaner {:.1} MB | forced checkpoint {:.1} MB | hot-page deferrals {} | peak RSS {} MiB",
        mb(d.cleaner_bytes),
        mb(d.forced_checkpoint_bytes),
        d.checkpoint_deferrals,
        r.peak_rss_bytes >> 20
    );
    if let Some(b) = &r.block_device {
        let _ = writeln!(
            s,
            "blockdev  {}: {:.0} B/op written ({:.1} MB, {} writes, {} flushes, {:.1} MB read): the kernel's counters, every process and the file system included; \"physical B/op\" above counts only the engine's own bytes",
            b.name,
            b.bytes_written_per_op,
            mb(b.bytes_written),
            b.writes,
            b.flushes,
            mb(b.bytes_read)
        );
    }
}

/// One line: the device-bound throughput, CPU per operation, and which bounds the run (no
/// newline at the end).
#[must_use]
pub fn bound_line(b: &Bound) -> String {
    let pacing = match b.paced {
        Some(true) => "paced by the simulated SSD's timing model",
        Some(false) => "UNPACED: the simulator answers at memory speed",
        None => "no device timing model",
    };
    let device = b.device_bound_ops_per_sec.map_or_else(
        || "device-bound n/a".to_string(),
        |o| {
            format!(
                "device-bound {o:.0} ops/s (device busy {:.0}% of the run)",
                100.0 * b.device_utilization.unwrap_or(0.0)
            )
        },
    );
    let mut line = format!(
        "bound     {} ({pacing}); {device}; CPU {:.1} us/op ({:.2} cores busy)",
        b.by, b.cpu_us_per_op, b.cpu_utilization
    );
    if b.paced == Some(false) && b.by == BoundBy::Device {
        line.push_str("; the measured OPS exceed what the device sustains");
    }
    line
}

/// Write the ticks as CSV.
///
/// # Errors
/// Creating or writing the file.
pub fn write_ticks_csv(ticks: &[Tick], out: impl std::io::Write) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    for t in ticks {
        w.serialize(t)?;
    }
    w.flush()?;
    Ok(())
}
