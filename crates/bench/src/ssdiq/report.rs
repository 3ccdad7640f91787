//! Reports of `nowa ssdiq`: a Table-2/3-style text summary (one column per device), the
//! per-interval CSV and the plots (throughput over time, latency vs write rate).

use super::{fmt_bytes, PhaseKind, SsdiqResult, WorkloadRow};
use crate::plot::{render_line, LineChart, PlotError, Series};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn f1(v: Option<f64>) -> String {
    v.map(|v| {
        if v >= 100.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    })
    .unwrap_or_else(|| "-".into())
}

fn f2(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into())
}

/// How far an interrupted run got: its measured phases (a plan step runs several: one per
/// workload, load or probe) against the plan's steps, without comparing the two counts.
#[must_use]
pub fn interrupted_line(r: &SsdiqResult) -> String {
    format!(
        "stopped before the plan ({} steps) finished; the {} measured phases below are complete",
        r.plan.len(),
        r.phases.len()
    )
}

/// Short column name of a result: the file name of its path, or "sim:..."
fn column_name(r: &SsdiqResult) -> String {
    let p = &r.target.path;
    if p.starts_with("sim:") {
        let op = r
            .target
            .sim
            .as_ref()
            .map(|s| format!(" OP {:.0}%", s.op * 100.0))
            .unwrap_or_default();
        return format!("{p}{op}");
    }
    Path::new(p)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(p)
        .to_string()
}

/// The workloads in first-seen order across results.
fn workloads(results: &[&SsdiqResult]) -> Vec<String> {
    let mut w: Vec<String> = Vec::new();
    for r in results {
        for row in &r.summary.rand_write {
            if !w.contains(&row.workload) {
                w.push(row.workload.clone());
            }
        }
    }
    w
}

/// One row of the summary table: group, sub-label, one cell per result.
type Row = (String, String, Vec<String>);

/// Collects rows of the summary table.
struct Rows<'a> {
    results: &'a [&'a SsdiqResult],
    rows: Vec<Row>,
}

impl Rows<'_> {
    fn add(&mut self, group: &str, sub: &str, f: &dyn Fn(&SsdiqResult) -> String) {
        let cells = self.results.iter().map(|r| f(r)).collect();
        self.rows.push((group.to_string(), sub.to_string(), cells));
    }

    /// One row per workload under `group`, the group name on the first only.
    fn per_workload(
        &mut self,
        group: &str,
        f: &dyn Fn(&WorkloadRow) -> Option<f64>,
        fmt: fn(Option<f64>) -> String,
    ) {
        for (i, w) in workloads(self.results).iter().enumerate() {
            let cell = |r: &SsdiqResult| {
                fmt(r
                    .summary
                    .rand_write
                    .iter()
                    .find(|x| &x.workload == w)
                    .and_then(f))
            };
            self.add(if i == 0 { group } else { "" }, w, &cell);
        }
    }
}

/// The rows of Table 2 and Table 3.
fn table_rows<'a>(results: &'a [&'a SsdiqResult]) -> Vec<Row> {
    let mut t = Rows {
        results,
        rows: Vec::new(),
    };
    t.add("Target", "", &|r| r.target.kind.clone());
    #[expect(clippy::cast_precision_loss, reason = "a capacity shown in GB")]
    t.add("Capacity [GB]", "", &|r| {
        format!("{:.3}", r.summary.capacity as f64 / 1e9)
    });
    t.add("Seq. Read [MB/s]", "", &|r| f1(r.summary.seq_read_mb_s));
    t.add("Seq. Write [MB/s]", "", &|r| f1(r.summary.seq_write_mb_s));
    t.add("Rnd. Read [k IOPS]", "", &|r| f1(r.summary.rand_read_kiops));
    t.per_workload("Rnd. Write [k IOPS]", &|x| Some(x.kiops), f1);
    t.add("Read Lat. [us]", "under load Avg", &|r| {
        f1(r.summary.read_lat.map(|l| l.mean_us))
    });
    t.add("", "P99.9", &|r| f1(r.summary.read_lat.map(|l| l.p999_us)));
    t.add("Write Lat. [us]", "under load Avg", &|r| {
        f1(r.summary.write_lat.map(|l| l.mean_us))
    });
    t.add("", "P99.9", &|r| f1(r.summary.write_lat.map(|l| l.p999_us)));
    t.add("Background writes [MB/s]", "target/achieved", &|r| {
        r.summary
            .bg_mb_s
            .map_or_else(|| "-".into(), |(t, a)| format!("{t:.1}/{a:.1}"))
    });
    t.add("WAF counters", "", &|r| {
        if r.target.counters.is_some() {
            "yes"
        } else {
            "no"
        }
        .to_string()
    });
    t.per_workload("WA measured", &|x| x.waf_measured, f2);
    t.per_workload("WA implied", &|x| x.waf_implied, f2);
    t.add("Estimated OP", "1/(2 WAF)", &|r| {
        r.summary.est_op.as_ref().map_or_else(
            || "-".into(),
            |e| format!("{:.1}% ({})", e.op * 100.0, e.from),
        )
    });
    t.rows
}

/// Table 2 and Table 3 of ssd-iq.md for one or more results, side by side.
#[must_use]
pub fn summary_table(results: &[&SsdiqResult]) -> String {
    let rows = table_rows(results);
    let names: Vec<String> = results.iter().map(|r| column_name(r)).collect();
    let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(6);
    let w1 = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let wc: Vec<usize> = (0..results.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.2[i].len())
                .chain([names[i].len()])
                .max()
                .unwrap_or(0)
                .max(8)
        })
        .collect();
    let mut out = String::new();
    let _ = write!(out, "{:w0$}  {:w1$}", "", "");
    for (i, n) in names.iter().enumerate() {
        let _ = write!(out, "  {:>w$}", n, w = wc[i]);
    }
    out.push('\n');
    for (g, sub, cells) in &rows {
        let _ = write!(out, "{g:w0$}  {sub:w1$}");
        for (i, c) in cells.iter().enumerate() {
            let _ = write!(out, "  {:>w$}", c, w = wc[i]);
        }
        out.push('\n');
    }
    out
}

/// The header lines of a report: target, configuration, notes, interruption, error.
fn header(out: &mut String, r: &SsdiqResult) {
    let t = &r.target;
    let io = match (t.sim.is_some(), t.direct) {
        (true, _) => "no host I/O",
        (false, true) => "O_DIRECT",
        (false, false) => "buffered",
    };
    let _ = writeln!(
        out,
        "SSD-iq: {} ({}, {}, engine {}, {io})",
        t.path,
        t.kind,
        fmt_bytes(t.capacity),
        t.engine
    );
    let c = &r.config;
    let wl: Vec<String> = c.workloads.iter().map(ToString::to_string).collect();
    let _ = writeln!(
        out,
        "config: bs {} (seq {}), QD {} x {} threads, fill {:.0}%, warm-up {}x + measured {}x capacity, workloads {}",
        fmt_bytes(u64::from(c.bs)),
        fmt_bytes(u64::from(c.seq_bs)),
        c.qd,
        c.threads,
        c.fill * 100.0,
        c.warmup,
        c.volume,
        wl.join(", ")
    );
    for n in &t.notes {
        let _ = writeln!(out, "NOTE: {n}");
    }
    if r.interrupted {
        let _ = writeln!(out, "INTERRUPTED: {}", interrupted_line(r));
    }
    if let Some(e) = &r.error {
        let _ = writeln!(out, "ERROR: {e}");
    }
}

/// Steady state: the second and the last quarter of each measured phase's intervals.
fn steady_state(out: &mut String, r: &SsdiqResult) {
    for p in r.phases.iter().filter(|p| p.step == PhaseKind::RandWrite) {
        let Some(iv) = p.jobs.first().map(|j| &j.intervals) else {
            continue;
        };
        if iv.len() < 4 {
            continue;
        }
        #[expect(clippy::cast_precision_loss, reason = "a handful of intervals")]
        let avg = |s: &[super::IntervalPoint]| {
            s.iter().map(|x| x.mb_s).sum::<f64>() / s.len().max(1) as f64
        };
        let (a, b) = (
            avg(&iv[iv.len() / 4..iv.len() / 2]),
            avg(&iv[iv.len() * 3 / 4..]),
        );
        let drift = if a > 0.0 { (b - a) / a * 100.0 } else { 0.0 };
        let hint = if drift.abs() > 10.0 {
            "  <- not steady: raise --warmup/--volume"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "steady state {}: 2nd quarter {a:.1} MB/s, last quarter {b:.1} MB/s ({drift:+.1}%){hint}",
            p.workload.as_deref().unwrap_or("")
        );
    }
}

/// The latency sweep as a table (Figure 8).
fn sweep_table(out: &mut String, r: &SsdiqResult) {
    if r.summary.sweep.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nlatency vs write rate (Figure 8), microseconds:");
    let _ = writeln!(
        out,
        "  load   write MB/s   read avg   p99   p99.9   write avg   p99   p99.9"
    );
    for s in &r.summary.sweep {
        let _ = writeln!(
            out,
            "  {:>3.0}%  {:>10.1}  {:>9.1} {:>5.0} {:>7.0}  {:>10.1} {:>5.0} {:>7.0}",
            s.load * 100.0,
            s.write_mb_s,
            s.read.mean_us,
            s.read.p99_us,
            s.read.p999_us,
            s.write.mean_us,
            s.write.p99_us,
            s.write.p999_us
        );
    }
}

/// Full human-readable report of one result: header, notes, the table, steady-state hints.
#[must_use]
pub fn text_report(r: &SsdiqResult) -> String {
    let mut out = String::new();
    header(&mut out, r);
    out.push('\n');
    out.push_str(&summary_table(&[r]));
    steady_state(&mut out, r);
    sweep_table(&mut out, r);
    out
}

/// Per-interval CSV: step, workload, job, load, t_s, mb_s, iops, bytes.
///
/// # Errors
/// The file cannot be written.
pub fn write_intervals_csv(r: &SsdiqResult, path: &Path) -> anyhow::Result<()> {
    write_intervals(r, std::fs::File::create(path)?)?;
    Ok(())
}

/// The per-interval CSV rows of [`write_intervals_csv`] into `out` (after whatever it holds:
/// a run's identity line).
///
/// # Errors
/// Writing failed.
pub fn write_intervals<W: std::io::Write>(r: &SsdiqResult, out: W) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "step", "workload", "job", "load", "t_s", "mb_s", "iops", "bytes",
    ])?;
    for p in &r.phases {
        for j in &p.jobs {
            for iv in &j.intervals {
                w.write_record([
                    p.step.name().to_string(),
                    p.workload.clone().unwrap_or_default(),
                    j.name.clone(),
                    p.load.map(|l| l.to_string()).unwrap_or_default(),
                    format!("{:.4}", iv.t),
                    format!("{:.3}", iv.mb_s),
                    format!("{:.1}", iv.iops),
                    iv.bytes.to_string(),
                ])?;
            }
        }
    }
    w.flush()?;
    Ok(())
}

/// Throughput over time (Figure 1 style): per workload, sequential init + warm-up + measured
/// phase back to back, in MB/s over seconds since the workload's initialization started.
#[must_use]
pub fn throughput_chart(r: &SsdiqResult) -> LineChart {
    let mut series: Vec<Series> = Vec::new();
    // Seconds since the current workload's initialization started.
    let mut offset = 0.0;
    let first_wl = r.summary.rand_write.first().map(|x| x.workload.clone());
    for p in &r.phases {
        let wl = match p.step {
            PhaseKind::SeqWrite => p.workload.clone().or_else(|| first_wl.clone()),
            PhaseKind::WarmUp | PhaseKind::RandWrite => p.workload.clone(),
            _ => continue,
        };
        let Some(wl) = wl else { continue };
        if series.last().is_none_or(|s| s.label != wl) {
            series.push(Series {
                label: wl,
                points: Vec::new(),
            });
            offset = 0.0;
        }
        let (Some(s), Some(j)) = (series.last_mut(), p.jobs.first()) else {
            continue;
        };
        s.points
            .extend(j.intervals.iter().map(|iv| (offset + iv.t, iv.mb_s)));
        offset += j.secs;
    }
    LineChart {
        title: format!(
            "Write throughput over time: {} (seq. init, warm-up, measured)",
            column_name(r)
        ),
        x_label: if r.target.kind == "simulated SSD" {
            "virtual time [s]".into()
        } else {
            "time [s]".into()
        },
        y_label: "MB/s".into(),
        series,
        log_x: false,
        log_y: false,
        y_range: None,
    }
}

/// Latency vs write rate (Figure 8): x = background write rate in % of the random-write
/// bandwidth, y = latency in microseconds (log axis).
#[must_use]
pub fn latency_chart(r: &SsdiqResult) -> LineChart {
    let pts = |f: &dyn Fn(&super::SweepPoint) -> f64| {
        r.summary
            .sweep
            .iter()
            .map(|s| (s.load * 100.0, f(s)))
            .collect::<Vec<_>>()
    };
    LineChart {
        title: format!("QD1 latency vs write rate: {}", column_name(r)),
        x_label: "background write rate [% of random-write bandwidth]".into(),
        y_label: "latency [us]".into(),
        series: vec![
            Series {
                label: "read avg".into(),
                points: pts(&|s| s.read.mean_us),
            },
            Series {
                label: "read p99".into(),
                points: pts(&|s| s.read.p99_us),
            },
            Series {
                label: "read p99.9".into(),
                points: pts(&|s| s.read.p999_us),
            },
            Series {
                label: "write avg".into(),
                points: pts(&|s| s.write.mean_us),
            },
            Series {
                label: "write p99".into(),
                points: pts(&|s| s.write.p99_us),
            },
            Series {
                label: "write p99.9".into(),
                points: pts(&|s| s.write.p999_us),
            },
        ],
        log_x: false,
        log_y: true,
        y_range: None,
    }
}

/// Writes `ssdiq.json`, `intervals.csv`, `throughput.<ext>` and (with a sweep)
/// `latency.<ext>` into `dir`. Returns the files written.
///
/// # Errors
/// A file cannot be written or a chart cannot be rendered.
pub fn write_all(r: &SsdiqResult, dir: &Path, plot_ext: &str) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut files = Vec::new();
    let j = dir.join("ssdiq.json");
    std::fs::write(&j, serde_json::to_string_pretty(r)?)?;
    files.push(j);
    let c = dir.join("intervals.csv");
    write_intervals_csv(r, &c)?;
    files.push(c);
    files.extend(write_plots(r, dir, plot_ext)?);
    Ok(files)
}

/// Writes `throughput.<ext>` and (with a sweep) `latency.<ext>` into `dir`. Returns the files
/// written (a run without a write phase has no throughput plot).
///
/// # Errors
/// A chart cannot be rendered.
pub fn write_plots(r: &SsdiqResult, dir: &Path, plot_ext: &str) -> Result<Vec<PathBuf>, PlotError> {
    let mut files = Vec::new();
    let t = dir.join(format!("throughput.{plot_ext}"));
    match render_line(&throughput_chart(r), &t) {
        Ok(()) => files.push(t),
        Err(PlotError::Empty(_)) => {}
        Err(e) => return Err(e),
    }
    if !r.summary.sweep.is_empty() {
        let l = dir.join(format!("latency.{plot_ext}"));
        render_line(&latency_chart(r), &l)?;
        files.push(l);
    }
    Ok(files)
}
