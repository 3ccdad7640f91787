//! `nowa ckpt figures`' outputs (Park & Lee's hot-page-aware checkpointing on TPC-C): every
//! run as a CSV row, Table I and Table II as Markdown on stdout (and CSV), Figures 1-5 as CSV
//! and PNG (files named ckpt-*), and the runs as `nowa reproduce` reads them. The runs
//! themselves (`nowa tpcc` child processes, crashes) are the CLI's until the TPC-C driver is
//! in this crate: they come in as each run's JSON report.

use crate::Error;
use nowa_bench::plot::{render_line, render_line_styled, LineChart, Series, Style};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

type Result<T> = std::result::Result<T, Error>;

fn plotted(path: &Path, r: std::result::Result<(), nowa_bench::plot::PlotError>) -> Result<()> {
    r.map_err(|e| Error::io(path, e))
}

/// One point of the experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Write path: inplace or oop.
    pub path: String,
    /// Buffer pool, percent of the database.
    pub buffer_pct: u32,
    /// max_checkpoint_count.
    pub mcc: u32,
    /// Adaptive deferral's redo bound (`--max-redo-bytes`).
    pub redo_bound: Option<u64>,
}

impl Point {
    /// The point's file-name stem.
    #[must_use]
    pub fn name(&self) -> String {
        let bound = self
            .redo_bound
            .map_or_else(String::new, |b| format!("-redo{}k", b >> 10));
        format!("{}-b{}-m{}{bound}", self.path, self.buffer_pct, self.mcc)
    }

    /// The point's legend label.
    #[must_use]
    pub fn label(&self) -> String {
        match self.redo_bound {
            Some(b) => format!("{} adaptive {} MiB", self.path, b >> 20),
            None => format!("{} mcc {}", self.path, self.mcc),
        }
    }
}

/// Recovery after a crash at the end of a run (Table II).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Recovery {
    /// Seconds to open (recover) the database.
    pub open_secs: f64,
    /// Analysis phase, microseconds.
    pub analysis_us: u64,
    /// Redo phase, microseconds.
    pub redo_us: u64,
    /// Log records replayed.
    pub records: u64,
    /// Log bytes from the redo LSN to the end.
    pub redo_bytes: u64,
}

/// The figures of one paced run.
#[derive(Debug, Clone, Default)]
pub struct Row {
    /// Transactions per wall second.
    pub tps: f64,
    /// Transactions per second of simulated-SSD busy time: the throughput the device allows,
    /// which CPU contention from other processes on the machine cannot distort.
    pub bound_tps: f64,
    /// Device write KB per transaction (pages, doublewrite, WAL).
    pub write_kb_txn: f64,
    /// User page writes (checkpoint + LRU, without doublewrite copies and WAL) per txn.
    pub page_kb_txn: f64,
    /// Device read KB per transaction.
    pub read_kb_txn: f64,
    /// Flash (media) write KB per transaction.
    pub flash_kb_txn: f64,
    /// Device write MB/s.
    pub write_mb_s: f64,
    /// Device read MB/s.
    pub read_mb_s: f64,
    /// CPU cores busy on average (process CPU time / run time).
    pub cpu_cores: f64,
    /// Eviction (LRU, cleaner) share of user page writes.
    pub lru_pct: f64,
    /// Checkpoint share of user page writes (forced included).
    pub ckpt_pct: f64,
    /// Forced (log-limit) checkpoint share of user page writes.
    pub forced_pct: f64,
    /// Checkpoint deferrals per transaction.
    pub deferrals_txn: f64,
    /// Checkpoint batches.
    pub checkpoints: f64,
    /// Simulated-SSD busy time over run time.
    pub device_util: f64,
    /// Buffer pool hit ratio.
    pub hit_ratio: f64,
}

fn num(v: &Value, path: &[&str]) -> f64 {
    path.iter()
        .fold(v, |v, k| &v[*k])
        .as_f64()
        .unwrap_or(f64::NAN)
}

impl Row {
    /// The figures of a `nowa tpcc` JSON report.
    ///
    /// # Panics
    /// If the report's user page bytes are not its eviction + checkpoint bytes.
    #[must_use]
    pub fn of(v: &Value) -> Row {
        let tps = num(v, &["run", "txn_per_s"]);
        let txns = num(v, &["run", "transactions"]).max(1.0);
        let d = |k: &str| num(v, &["drilldown", k]);
        let user = d("user_bytes").max(1.0);
        let host = num(v, &["host_bytes_per_txn"]);
        let read = num(v, &["read_bytes_per_txn"]);
        let (ev, ck) = (d("eviction_bytes"), d("checkpoint_bytes"));
        assert!(
            ev.is_nan() || ck.is_nan() || (ev + ck - d("user_bytes")).abs() < 1.0,
            "user page writes are eviction + checkpoint writes"
        );
        Row {
            tps,
            bound_tps: num(v, &["run", "transactions"]) / num(v, &["device_busy_secs"]),
            write_kb_txn: host / 1024.0,
            page_kb_txn: d("user_bytes") / txns / 1024.0,
            read_kb_txn: read / 1024.0,
            flash_kb_txn: num(v, &["flash_bytes_per_txn"]) / 1024.0,
            write_mb_s: host * tps / 1e6,
            read_mb_s: read * tps / 1e6,
            cpu_cores: num(v, &["run", "cpu_us_per_txn"]) * tps / 1e6,
            lru_pct: 100.0 * d("eviction_bytes") / user,
            ckpt_pct: 100.0 * d("checkpoint_bytes") / user,
            forced_pct: 100.0 * d("forced_checkpoint_bytes") / user,
            deferrals_txn: d("checkpoint_deferrals") / txns,
            checkpoints: d("checkpoints"),
            device_util: num(v, &["device_busy_secs"]) / num(v, &["run", "seconds"]),
            hit_ratio: num(v, &["engine", "hit_ratio"]),
        }
    }
}

const RUN_HEADER: &str = "path,buffer_pct,mcc,redo_bound_bytes,tps,device_bound_tps,write_kb_txn,page_kb_txn,read_kb_txn,flash_kb_txn,write_mb_s,read_mb_s,cpu_cores,lru_flush_pct,ckpt_flush_pct,forced_pct,deferrals_per_txn,checkpoints,device_util,hit_ratio";

fn run_line(p: &Point, r: &Row) -> String {
    format!(
        "{},{},{},{},{:.1},{:.1},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.3},{:.1},{:.1},{:.1},{:.3},{},{:.3},{:.4}",
        p.path,
        p.buffer_pct,
        p.mcc,
        p.redo_bound.unwrap_or(0),
        r.tps,
        r.bound_tps,
        r.write_kb_txn,
        r.page_kb_txn,
        r.read_kb_txn,
        r.flash_kb_txn,
        r.write_mb_s,
        r.read_mb_s,
        r.cpu_cores,
        r.lru_pct,
        r.ckpt_pct,
        r.forced_pct,
        r.deferrals_txn,
        r.checkpoints,
        r.device_util,
        r.hit_ratio
    )
}

fn write(out: &Path, name: &str, text: &str) -> Result<()> {
    let p = out.join(name);
    std::fs::write(&p, text).map_err(|e| Error::io(&p, e))?;
    eprintln!("nowa ckpt: wrote {}", p.display());
    Ok(())
}

/// Table I as Markdown: one column per (path, mcc) at the buffer `big`.
fn table1(rows: &[(&Point, Row)], big: u32) -> String {
    let cols: Vec<&(&Point, Row)> = rows.iter().filter(|(p, _)| p.buffer_pct == big).collect();
    let mut s = String::from("| metric |");
    for (p, _) in &cols {
        let _ = write!(s, " {} |", p.label());
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(cols.len()));
    s.push('\n');
    type Get = fn(&Row) -> f64;
    let metrics: [(&str, Get, usize); 13] = [
        ("TPS (measured)", |r| r.tps, 0),
        ("TPS (device-bound)", |r| r.bound_tps, 0),
        ("write KB/txn (device)", |r| r.write_kb_txn, 1),
        ("page writes KB/txn", |r| r.page_kb_txn, 2),
        ("read KB/txn", |r| r.read_kb_txn, 1),
        ("flash KB/txn", |r| r.flash_kb_txn, 1),
        ("write MB/s", |r| r.write_mb_s, 1),
        ("read MB/s", |r| r.read_mb_s, 1),
        ("CPU (cores)", |r| r.cpu_cores, 2),
        ("LRU flush %", |r| r.lru_pct, 1),
        ("checkpoint flush %", |r| r.ckpt_pct, 1),
        ("device busy %", |r| 100.0 * r.device_util, 0),
        ("deferrals/txn", |r| r.deferrals_txn, 2),
    ];
    for (name, get, prec) in metrics {
        let _ = write!(s, "| {name} |");
        for (_, r) in &cols {
            let _ = write!(s, " {:.*} |", prec, get(r));
        }
        s.push('\n');
    }
    s
}

/// A line chart whose y axis starts at zero (no auto-scaled noise: a flat line stays flat)
/// and whose x label carries the setup line.
fn chart(title: &str, x: &str, y: &str, series: Vec<Series>) -> LineChart {
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    LineChart {
        title: title.into(),
        x_label: x.into(),
        y_label: y.into(),
        series,
        log_x: false,
        log_y: false,
        y_range: Some((0.0, if top > 0.0 { top * 1.15 } else { 1.0 })),
    }
}

/// The paper's values (Park & Lee, Table I and Figure 5; TPC-C 500 warehouses, 50% buffer,
/// InnoDB on a 970 EVO Plus): (max_checkpoint_count, TPS, checkpoint flush %). Count 0 is
/// vanilla (Table I); the others are read off Figure 5 as the text gives them.
const PAPER_FIG5: [(f64, f64, f64); 6] = [
    (0.0, 630.0, 99.1),
    (3.0, 1000.0, 43.0),
    (4.0, 1250.0, 28.0),
    (6.0, 1250.0, 21.0),
    (8.0, 1340.0, 18.0),
    (10.0, 1260.0, 17.0),
];

/// The paper's values as a series of markers.
fn paper(label: &str, points: Vec<(f64, f64)>) -> Series {
    Series {
        label: format!("paper: {label}"),
        points,
    }
}

/// Figure 3: TPS over time at the buffer `big`, one line per count/bound (in place).
fn figure3(out: &Path, runs: &[(Point, Value)], big: u32, setup: &str) -> Result<()> {
    let mut csv = String::from("label,elapsed_s,txn_per_s\n");
    let mut series = Vec::new();
    let shown = |p: &Point| p.buffer_pct == big && p.path == "inplace" && shown_count(p);
    for (p, v) in runs.iter().filter(|(p, _)| shown(p)) {
        let samples = v["run"]["samples"].as_array().cloned().unwrap_or_default();
        let mut pts: Vec<(f64, f64)> = samples
            .iter()
            .map(|s| (num(s, &["elapsed_s"]), num(s, &["txn_per_s"])))
            .collect();
        // The last sample covers the partial second before the stop: not a rate.
        pts.pop();
        for (t, x) in &pts {
            let _ = writeln!(csv, "{},{t:.2},{x:.1}", p.label());
        }
        series.push(Series {
            label: p.label(),
            points: pts,
        });
    }
    series.push(paper("vanilla mean", vec![(0.0, 630.0)]));
    series.push(paper("mcc 3 mean", vec![(0.0, 995.0)]));
    write(out, "ckpt-fig3-tps-time.csv", &csv)?;
    let title = format!("TPC-C throughput over time, in place, buffer {big}% (Fig. 3)");
    let png = out.join("ckpt-fig3-tps-time.png");
    plotted(
        &png,
        render_line(
            &chart(
                &title,
                &format!("seconds  ({setup})"),
                "transactions/s",
                series,
            ),
            &png,
        ),
    )?;
    Ok(())
}

/// Lines of `y` against `x` for the runs `keep` selects, one line per `key`.
fn lines(
    rows: &[(&Point, Row)],
    keep: impl Fn(&Point) -> bool,
    key: impl Fn(&Point) -> String,
    x: impl Fn(&Point) -> f64,
    y: impl Fn(&Row) -> f64,
) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for (p, r) in rows.iter().filter(|(p, _)| keep(p)) {
        let k = key(p);
        let pt = (x(p), y(r));
        match out.iter_mut().find(|s| s.label == k) {
            Some(s) => s.points.push(pt),
            None => out.push(Series {
                label: k,
                points: vec![pt],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(!s.points.is_empty(), "a line has a point");
    }
    out
}

/// The lines of Figures 3 and 4: the paper's counts 0 (vanilla), 3 (its Table I) and 8 (its
/// best), and the adaptive bounds.
fn shown_count(p: &Point) -> bool {
    p.redo_bound.is_some() || [0, 3, 8].contains(&p.mcc)
}

/// Figures 4 and 5.
fn figures45(out: &Path, rows: &[(&Point, Row)], big: u32, setup: &str) -> Result<()> {
    let fixed = |p: &Point| p.redo_bound.is_none();
    let f4 = lines(
        rows,
        |p| fixed(p) && shown_count(p),
        Point::label,
        |p| f64::from(p.buffer_pct),
        |r| r.bound_tps,
    );
    // The paper's values are references: dashed, hollow markers, under the measured lines.
    let left = Style {
        reference: vec![
            paper("vanilla at 50%", vec![(50.0, 630.0)]),
            paper("mcc 3 at 50%", vec![(50.0, 995.0)]),
            paper("mcc 8 at 50%", vec![(50.0, 1340.0)]),
        ],
        ..Style::default()
    };
    let c4 = chart(
        "TPC-C throughput vs buffer size (Fig. 4)",
        &format!("buffer, % of the database  ({setup})"),
        "transactions/s (device-bound)",
        f4,
    );
    let p = out.join("ckpt-fig4-buffer.png");
    plotted(&p, render_line_styled(&c4, &left, &p))?;
    let at_big = |p: &Point| fixed(p) && p.buffer_pct == big;
    let f5 = |y: fn(&Row) -> f64| lines(rows, at_big, |p| p.path.clone(), |p| f64::from(p.mcc), y);
    let t = format!("Throughput vs max_checkpoint_count, buffer {big}% (Fig. 5)");
    let y = "transactions/s (device-bound)";
    let x = format!("max_checkpoint_count  ({setup})");
    let c5 = chart(&t, &x, y, f5(|r| r.bound_tps));
    let tps = Style {
        reference: vec![paper(
            "TPS",
            PAPER_FIG5.iter().map(|p| (p.0, p.1)).collect(),
        )],
        ..Style::default()
    };
    let p = out.join("ckpt-fig5-tps.png");
    plotted(&p, render_line_styled(&c5, &tps, &p))?;
    let t = format!("Checkpoint share of page writes, buffer {big}% (Fig. 5)");
    let suffixed = |mut s: Series, what: &str| {
        s.label = format!("{} {what}", s.label);
        s
    };
    let mut s5: Vec<Series> = f5(|r| r.ckpt_pct)
        .into_iter()
        .map(|s| suffixed(s, "checkpoint %"))
        .collect();
    s5.extend(f5(|r| r.lru_pct).into_iter().map(|s| suffixed(s, "LRU %")));
    let c5 = chart(&t, &x, "share of page writes, %", s5);
    let share = Style {
        reference: vec![paper(
            "checkpoint %",
            PAPER_FIG5.iter().map(|p| (p.0, p.2)).collect(),
        )],
        ..Style::default()
    };
    let p = out.join("ckpt-fig5-share.png");
    plotted(&p, render_line_styled(&c5, &share, &p))?;
    Ok(())
}

/// Table II: recovery after a crash at the end of a run.
fn table2(crashes: &[(Point, Recovery)]) -> (String, String) {
    let mut md = String::from(
        "| run | analysis ms | redo ms | open total s | records replayed | redo range MiB |\n|---|---|---|---|---|---|\n",
    );
    let mut csv = String::from(
        "path,buffer_pct,mcc,redo_bound_bytes,open_secs,analysis_us,redo_us,records,redo_bytes\n",
    );
    for (p, r) in crashes {
        #[expect(clippy::cast_precision_loss, reason = "byte counts far below 2^52")]
        let mib = r.redo_bytes as f64 / 1048576.0;
        let _ = writeln!(
            md,
            "| {} | {:.1} | {:.1} | {:.3} | {} | {mib:.2} |",
            p.label(),
            r.analysis_us as f64 / 1000.0,
            r.redo_us as f64 / 1000.0,
            r.open_secs,
            r.records
        );
        let _ = writeln!(
            csv,
            "{},{},{},{},{:.4},{},{},{},{}",
            p.path,
            p.buffer_pct,
            p.mcc,
            p.redo_bound.unwrap_or(0),
            r.open_secs,
            r.analysis_us,
            r.redo_us,
            r.records,
            r.redo_bytes
        );
    }
    (md, csv)
}

/// Every output of the command.
/// Every output of the command.
///
/// # Errors
/// A file cannot be written.
pub fn write_all(
    out: &Path,
    runs: &[(Point, Value)],
    crashes: &[(Point, Recovery)],
    big: u32,
    setup: &str,
) -> Result<()> {
    let rows: Vec<(&Point, Row)> = runs.iter().map(|(p, v)| (p, Row::of(v))).collect();
    let mut csv = String::from(RUN_HEADER);
    csv.push('\n');
    for (p, r) in &rows {
        csv.push_str(&run_line(p, r));
        csv.push('\n');
    }
    write(out, "ckpt-runs.csv", &csv)?;
    figure3(out, runs, big, setup)?;
    figures45(out, &rows, big, setup)?;
    residency(out, runs, big, setup)?;
    let (md2, csv2) = table2(crashes);
    write(out, "ckpt-recovery.csv", &csv2)?;
    println!("## Table I (buffer {big}%)\n\n{}", table1(&rows, big));
    println!("## Table II (crash at the end of the run, in place)\n\n{md2}");
    Ok(())
}

/// Figures 1 and 2 (the paper's characterization) from the vanilla run at the buffer `big`:
/// evicted pages by the consecutive checkpoint selections they saw while resident and dirty
/// (CDF over pages), and the checkpoint writes of those pages (CDF over writes). Engine
/// lifetime counters (load and run). Returns the shares of checkpoint writes by pages
/// resident for >= 5 and >= 10 selections.
fn residency(out: &Path, runs: &[(Point, Value)], big: u32, setup: &str) -> Result<()> {
    let Some((_, v)) = runs
        .iter()
        .find(|(p, _)| p.buffer_pct == big && p.mcc == 0 && p.redo_bound.is_none())
    else {
        return Ok(());
    };
    let arr = |k: &str| -> Vec<f64> {
        v["engine"][k]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect())
            .unwrap_or_default()
    };
    let (pages, writes) = (arr("residency_pages"), arr("residency_checkpoint_writes"));
    assert_eq!(
        pages.len(),
        writes.len(),
        "the engine's residency histograms have one length"
    );
    // Pages never selected while dirty are not in the paper's Figure 1 (its CDF starts at 1).
    let tp: f64 = pages.iter().skip(1).sum::<f64>().max(1.0);
    let tw: f64 = writes.iter().sum::<f64>().max(1.0);
    let mut csv = String::from("checkpoints,pages,checkpoint_writes,cdf_pages,cdf_writes\n");
    let (mut cp, mut cw) = (0.0, 0.0);
    let (mut f1, mut f2) = (Vec::new(), Vec::new());
    for (i, (p, w)) in pages.iter().zip(&writes).enumerate().skip(1) {
        cp += p;
        cw += w;
        #[expect(clippy::cast_precision_loss, reason = "bucket index below 2^52")]
        let x = i as f64;
        let _ = writeln!(csv, "{i},{p},{w},{:.4},{:.4}", cp / tp, cw / tw);
        f1.push((x, 100.0 * cp / tp));
        f2.push((x, 100.0 * cw / tw));
    }
    let share = |from: usize| 100.0 * writes.iter().skip(from).sum::<f64>() / tw;
    write(out, "ckpt-fig12-residency.csv", &csv)?;
    residency_charts(out, big, setup, f1, f2)?;
    println!(
        "## Figures 1-2 (vanilla, buffer {big}%)\n\ncheckpoint writes by pages resident >= 5 checkpoints: {:.1}% (paper ~51%); >= 10: {:.1}% (paper ~20%)\n",
        share(5),
        share(10)
    );
    Ok(())
}

/// The PNGs of Figures 1 and 2 (CDFs in percent, with the paper's values as markers).
fn residency_charts(
    out: &Path,
    big: u32,
    setup: &str,
    f1: Vec<(f64, f64)>,
    f2: Vec<(f64, f64)>,
) -> Result<()> {
    let x = format!("consecutive checkpoints before eviction  ({setup})");
    let nowa = |points| Series {
        label: "nowa".into(),
        points,
    };
    let c1 = chart(
        &format!("Evicted pages by checkpoints resident, vanilla, buffer {big}% (Fig. 1)"),
        &x,
        "cumulative % of pages",
        vec![
            nowa(f1),
            paper("~62% at 1, ~81% by 3", vec![(1.0, 62.0), (3.0, 81.0)]),
        ],
    );
    let p = out.join("ckpt-fig1-residency-pages.png");
    plotted(&p, render_line(&c1, &p))?;
    let c2 = chart(
        &format!("Checkpoint writes by checkpoints resident, vanilla, buffer {big}% (Fig. 2)"),
        &x,
        "cumulative % of checkpoint writes",
        vec![
            nowa(f2),
            paper(
                "~49% below 5, ~80% below 10",
                vec![(4.0, 49.0), (9.0, 80.0)],
            ),
        ],
    );
    let p = out.join("ckpt-fig2-residency-writes.png");
    plotted(&p, render_line(&c2, &p))?;
    Ok(())
}

/// The runs and crashes as `nowa reproduce` reads them.
#[must_use]
pub fn typed(
    runs: &[(Point, Value)],
    crashes: &[(Point, Recovery)],
) -> crate::reproduce::CkptResult {
    use crate::reproduce::{CkptCrash, CkptResult, CkptRun};
    let runs = runs
        .iter()
        .map(|(p, v)| {
            let r = Row::of(v);
            CkptRun {
                path: p.path.clone(),
                buffer_pct: p.buffer_pct,
                mcc: p.mcc,
                redo_bound: p.redo_bound,
                tps: r.tps,
                bound_tps: r.bound_tps,
                write_kb_txn: r.write_kb_txn,
                page_kb_txn: r.page_kb_txn,
                ckpt_pct: r.ckpt_pct,
                lru_pct: r.lru_pct,
            }
        })
        .collect();
    let crashes = crashes
        .iter()
        .filter(|(p, _)| p.redo_bound.is_none())
        .map(|(p, r)| CkptCrash {
            mcc: p.mcc,
            open_secs: r.open_secs,
            analysis_us: r.analysis_us,
            redo_us: r.redo_us,
            redo_bytes: r.redo_bytes,
        })
        .collect();
    CkptResult { runs, crashes }
}
