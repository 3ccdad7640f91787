//! `nowa ckpt figures`' outputs: every run as a CSV row, Table I and Table II as Markdown
//! (and CSV), Figures 1-5 as CSV and PNG (files named ckpt-*) in the shared plot style
//! (setup subtitle, the paper's values dashed, y from zero, min-max over seeds shaded), and
//! the runs as `nowa reproduce` reads them.

mod tables;

use super::{Spec, TpccReport};
use crate::reproduce::{CkptCrash, CkptResult, CkptRun, DocTable};
use crate::Error;
use nowa_bench::plot::{render_line_styled, LineChart, PlotError, Series, Spread, Style};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

type Result<T> = std::result::Result<T, Error>;

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
    /// Seed of the run.
    pub seed: u64,
}

impl Point {
    /// A point.
    #[must_use]
    pub fn new(path: &str, buffer_pct: u32, mcc: u32, redo_bound: Option<u64>, seed: u64) -> Point {
        Point {
            path: path.to_owned(),
            buffer_pct,
            mcc,
            redo_bound,
            seed,
        }
    }

    /// The point's file-name stem.
    #[must_use]
    pub fn name(&self) -> String {
        let bound = self
            .redo_bound
            .map_or_else(String::new, |b| format!("-redo{}k", b >> 10));
        format!(
            "{}-b{}-m{}{bound}-s{}",
            self.path, self.buffer_pct, self.mcc, self.seed
        )
    }

    /// The point's legend label (seeds of one setting share it).
    #[must_use]
    pub fn label(&self) -> String {
        match self.redo_bound {
            Some(b) => format!("{} adaptive {} MiB", self.path, b >> 20),
            None => format!("{} mcc {}", self.path, self.mcc),
        }
    }

    fn setting(&self) -> (String, u32, u32, Option<u64>) {
        (
            self.path.clone(),
            self.buffer_pct,
            self.mcc,
            self.redo_bound,
        )
    }
}

/// Recovery after a crash at the end of a run (Table II).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Recovery {
    /// When the crash image was taken, seconds after the load.
    #[serde(default)]
    pub crash_secs: f64,
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
    /// CPU seconds of the open (recovery), of the checking process.
    pub cpu_secs: f64,
    /// Bytes the recovery read from the device (the log from the analysis' start, pages).
    pub read_bytes: u64,
    /// Bytes the recovery wrote (pages evicted or checkpointed during redo).
    pub written_bytes: u64,
    /// Pages the engine read during the recovery.
    pub pages_read: u64,
    /// Seconds the simulated SSD's timing model (the paced runs') takes for that I/O.
    pub device_secs: f64,
}

impl Recovery {
    /// The recovery time that the machine's load does not set: its CPU time plus its I/O
    /// timed by the simulated SSD's model (the wall clock of the open is `open_secs`).
    ///
    /// # Panics
    /// If a duration is negative (a measurement bug).
    #[must_use]
    pub fn work_secs(&self) -> f64 {
        assert!(
            self.cpu_secs >= 0.0 && self.device_secs >= 0.0,
            "durations: {self:?}"
        );
        self.cpu_secs + self.device_secs
    }
}

/// The figures of one paced run.
#[derive(Debug, Clone, Default, PartialEq)]
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

#[expect(clippy::cast_precision_loss, reason = "counters far below 2^52")]
fn f(x: u64) -> f64 {
    x as f64
}

impl Row {
    /// The figures of a `nowa tpcc` report.
    ///
    /// # Panics
    /// If the user page bytes are not eviction + checkpoint bytes (checked when read).
    #[must_use]
    pub fn of(v: &TpccReport) -> Row {
        let tps = v.run.txn_per_s;
        let txns = f(v.run.transactions.max(1));
        let d = &v.drilldown;
        let user = f(d.user_bytes.max(1));
        let (host, read) = (v.host_bytes_per_txn, v.read_bytes_per_txn);
        assert_eq!(
            d.eviction_bytes + d.checkpoint_bytes,
            d.user_bytes,
            "user page writes are eviction + checkpoint (checked when read)"
        );
        let busy = v.device_busy_secs.unwrap_or(f64::NAN);
        Row {
            tps,
            bound_tps: f(v.run.transactions) / busy,
            write_kb_txn: host / 1024.0,
            page_kb_txn: f(d.user_bytes) / txns / 1024.0,
            read_kb_txn: read / 1024.0,
            flash_kb_txn: v.flash_bytes_per_txn.unwrap_or(f64::NAN) / 1024.0,
            write_mb_s: host * tps / 1e6,
            read_mb_s: read * tps / 1e6,
            cpu_cores: v.run.cpu_us_per_txn * tps / 1e6,
            lru_pct: 100.0 * f(d.eviction_bytes) / user,
            ckpt_pct: 100.0 * f(d.checkpoint_bytes) / user,
            forced_pct: 100.0 * f(d.forced_checkpoint_bytes) / user,
            deferrals_txn: f(d.checkpoint_deferrals) / txns,
            checkpoints: f(d.checkpoints),
            device_util: busy / v.run.seconds,
            hit_ratio: v.engine.hit_ratio,
        }
    }
}

/// What `run` produced: the typed runs, and the tables (Markdown) the CLI prints.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The runs and crashes.
    pub result: CkptResult,
    /// Table I (the largest buffer; mean over seeds, min-max in brackets).
    pub table1: String,
    /// Table II.
    pub table2: String,
    /// Figures 1-2's summary line.
    pub residency: String,
    /// Tables I and II, Figure 4's and Figures 1-2's, as the reproduction report carries them
    /// (docs/checkpointing.md's generated blocks).
    pub tables: Vec<DocTable>,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// Ctrl-C stopped the runs: what finished (the outputs cover only that).
    pub interrupted: Option<String>,
}

impl Outcome {
    /// The tables as `nowa ckpt figures` prints them (Markdown): Table I at the largest buffer
    /// `big`, Figures 1-2's summary, Table II.
    #[must_use]
    pub fn markdown(&self, big: u32) -> String {
        let mut s = format!("## Table I (buffer {big}%)\n\n{}\n", self.table1);
        if !self.residency.is_empty() {
            let _ = writeln!(
                s,
                "## Figures 1-2 (vanilla, buffer {big}%)\n\n{}\n",
                self.residency
            );
        }
        let _ = writeln!(
            s,
            "## Table II (crash images of each crash run, in place)\n\n{}",
            self.table2
        );
        s
    }
}

const RUN_HEADER: [&str; 21] = [
    "path",
    "buffer_pct",
    "mcc",
    "redo_bound_bytes",
    "seed",
    "tps",
    "device_bound_tps",
    "write_kb_txn",
    "page_kb_txn",
    "read_kb_txn",
    "flash_kb_txn",
    "write_mb_s",
    "read_mb_s",
    "cpu_cores",
    "lru_flush_pct",
    "ckpt_flush_pct",
    "forced_pct",
    "deferrals_per_txn",
    "checkpoints",
    "device_util",
    "hit_ratio",
];

fn run_record(p: &Point, r: &Row) -> Vec<String> {
    let mut v = vec![
        p.path.clone(),
        p.buffer_pct.to_string(),
        p.mcc.to_string(),
        p.redo_bound.unwrap_or(0).to_string(),
        p.seed.to_string(),
    ];
    let nums = [
        (r.tps, 1),
        (r.bound_tps, 1),
        (r.write_kb_txn, 2),
        (r.page_kb_txn, 2),
        (r.read_kb_txn, 2),
        (r.flash_kb_txn, 2),
        (r.write_mb_s, 2),
        (r.read_mb_s, 2),
        (r.cpu_cores, 3),
        (r.lru_pct, 1),
        (r.ckpt_pct, 1),
        (r.forced_pct, 1),
        (r.deferrals_txn, 3),
        (r.checkpoints, 0),
        (r.device_util, 3),
        (r.hit_ratio, 4),
    ];
    v.extend(nums.iter().map(|(x, p)| format!("{x:.p$}")));
    assert_eq!(v.len(), RUN_HEADER.len(), "one field per column");
    v
}

/// A CSV file of `header` and `records` under `out` (the one CSV writer: the csv crate).
fn write_csv(out: &Path, name: &str, header: &[&str], records: &[Vec<String>]) -> Result<PathBuf> {
    let p = out.join(name);
    let io = |e: csv::Error| Error::io(&p, e);
    let mut w = csv::Writer::from_path(&p).map_err(io)?;
    w.write_record(header).map_err(io)?;
    for r in records {
        w.write_record(r).map_err(io)?;
    }
    w.flush().map_err(|e| Error::io(&p, e))?;
    Ok(p)
}

/// One setting's runs over seeds: the mean row, and each field's (min, max).
struct Agg<'a> {
    point: &'a Point,
    rows: Vec<&'a Row>,
}

impl Agg<'_> {
    fn mean(&self, y: &dyn Fn(&Row) -> f64) -> f64 {
        assert!(!self.rows.is_empty(), "a setting has a run");
        self.rows.iter().map(|r| y(r)).sum::<f64>() / self.rows.len() as f64
    }
    fn range(&self, y: &dyn Fn(&Row) -> f64) -> (f64, f64) {
        let it = self.rows.iter().map(|r| y(r));
        let lo = it.clone().fold(f64::INFINITY, f64::min);
        let hi = it.fold(f64::NEG_INFINITY, f64::max);
        assert!(
            lo <= hi || (lo == f64::INFINITY && hi == f64::NEG_INFINITY),
            "min <= max, or no finite value"
        );
        (lo, hi)
    }
}

/// The rows grouped by setting (path, buffer, count, bound), in first-seen order.
fn settings<'a>(rows: &'a [(&'a Point, Row)]) -> Vec<Agg<'a>> {
    let mut out: Vec<Agg<'a>> = Vec::new();
    for (p, r) in rows {
        match out.iter_mut().find(|a| a.point.setting() == p.setting()) {
            Some(a) => a.rows.push(r),
            None => out.push(Agg {
                point: p,
                rows: vec![r],
            }),
        }
    }
    assert!(
        out.iter().all(|a| !a.rows.is_empty()),
        "a setting has a run"
    );
    out
}

/// Table I as Markdown: one column per (path, count) at the buffer `big`, the mean over
/// seeds with the min-max in brackets when there are several.
fn table1(aggs: &[Agg<'_>], big: u32) -> String {
    let cols: Vec<&Agg<'_>> = aggs.iter().filter(|a| a.point.buffer_pct == big).collect();
    if cols.is_empty() {
        // Only after Ctrl-C: a whole grid runs every buffer (`run` asserts every run ran).
        return format!("no run at buffer {big}% finished\n");
    }
    let mut s = String::from("| metric |");
    for a in &cols {
        let _ = write!(s, " {} |", a.point.label());
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
        for a in &cols {
            let _ = write!(s, " {:.*}", prec, a.mean(&get));
            if a.rows.len() > 1 {
                let (lo, hi) = a.range(&get);
                let _ = write!(s, " ({lo:.prec$}-{hi:.prec$})");
            }
            s.push_str(" |");
        }
        s.push('\n');
    }
    s
}

/// A line chart (y from zero: the shared style's default).
fn chart(title: &str, x: &str, y: &str, series: Vec<Series>) -> LineChart {
    LineChart {
        title: title.into(),
        x_label: x.into(),
        y_label: y.into(),
        series,
        log_x: false,
        log_y: false,
        y_range: None,
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

/// The paper's values as a reference series.
fn paper(label: &str, points: Vec<(f64, f64)>) -> Series {
    Series {
        label: format!("paper: {label}"),
        points,
    }
}

/// The files of one figure: `stem.ext` (and the list of written files).
struct Sink<'a> {
    out: &'a Path,
    ext: &'a str,
    setup: String,
    files: Vec<PathBuf>,
    /// Fewer runs than the grid (Ctrl-C): a figure with no measured point is not drawn.
    partial: bool,
}

impl Sink<'_> {
    fn plot(&mut self, stem: &str, c: &LineChart, mut style: Style) -> Result<()> {
        let p = self.out.join(format!("{stem}.{}", self.ext));
        style.subtitle.clone_from(&self.setup);
        match render_line_styled(c, &style, &p) {
            Err(PlotError::Empty(_)) if self.partial => Ok(()),
            r => {
                r.map_err(|e| Error::io(&p, e))?;
                self.files.push(p);
                Ok(())
            }
        }
    }
    fn csv(&mut self, name: &str, header: &[&str], records: &[Vec<String>]) -> Result<()> {
        let p = write_csv(self.out, name, header, records)?;
        self.files.push(p);
        Ok(())
    }
}

/// The lines of Figures 3 and 4: the paper's counts 0 (vanilla), 3 (its Table I) and 8 (its
/// best), and the adaptive bounds.
fn shown_count(p: &Point) -> bool {
    p.redo_bound.is_some() || [0, 3, 8].contains(&p.mcc)
}

/// Figure 3's window: throughput over time is drawn as 5-second means (one-second samples of
/// a 40 s run on a shared machine swing 10x and cross each other).
const FIG3_WINDOW_S: f64 = 5.0;

/// `(end of window, transactions per second)` of the samples `(end of interval, rate)` in
/// windows of `w` seconds from the run's start; a window the samples cover less than 95%
/// of (the partial interval before the stop) is not a rate and is dropped.
fn windows(samples: &[(f64, f64)], w: f64) -> Vec<(f64, f64)> {
    assert!(w > 0.0, "a window has a length");
    let mut acc: Vec<(f64, f64)> = Vec::new();
    let mut prev = 0.0;
    for &(end, rate) in samples {
        let dt = end - prev;
        assert!(dt >= 0.0, "samples in time order");
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "seconds of a run"
        )]
        let k = ((end - 1e-9).max(0.0) / w) as usize;
        if acc.len() <= k {
            acc.resize(k + 1, (0.0, 0.0));
        }
        acc[k].0 += rate * dt;
        acc[k].1 += dt;
        prev = end;
    }
    let out = acc
        .iter()
        .enumerate()
        .filter(|(_, (_, dt))| *dt >= 0.95 * w)
        .map(|(k, (txns, dt))| (f((k + 1) as u64) * w, txns / dt))
        .collect::<Vec<_>>();
    assert!(
        out.iter().all(|p| p.1 >= 0.0 && p.0 <= prev + 0.05 * w),
        "rates of whole windows within the run"
    );
    out
}

/// A run's throughput in Figure 3's windows, relative to `vanilla` transactions per second.
fn relative_windows(v: &TpccReport, vanilla: f64) -> Vec<(f64, f64)> {
    let raw: Vec<(f64, f64)> = v
        .run
        .samples
        .iter()
        .map(|x| (x.elapsed_s, x.txn_per_s))
        .collect();
    windows(&raw, FIG3_WINDOW_S)
        .into_iter()
        .map(|(t, x)| (t, x / vanilla))
        .collect()
}

/// Figure 3: TPS over time at the buffer `big`, one line per count (in place, the paper's
/// 0, 3 and 8), the first seed's run, in 5 s windows relative to vanilla's mean over its run
/// (the paper's numbers are of a ~500x larger database: its ratio is the mark).
fn figure3(s: &mut Sink<'_>, runs: &[(Point, TpccReport)], big: u32, seed: u64) -> Result<()> {
    let mut recs = Vec::new();
    let mut series = Vec::new();
    let shown = |p: &Point| {
        p.buffer_pct == big
            && p.path == "inplace"
            && p.redo_bound.is_none()
            && shown_count(p)
            && p.seed == seed
    };
    let Some(vanilla) = runs
        .iter()
        .find(|(p, _)| shown(p) && p.mcc == 0)
        .map(|(_, v)| v.run.txn_per_s)
    else {
        return Ok(());
    };
    for (p, v) in runs.iter().filter(|(p, _)| shown(p)) {
        let pts = relative_windows(v, vanilla);
        for (t, x) in &pts {
            let (t, tps) = (format!("{t:.1}"), format!("{:.1}", x * vanilla));
            recs.push(vec![p.label(), t, tps, format!("{x:.3}")]);
        }
        series.push(Series {
            label: p.label(),
            points: pts,
        });
    }
    s.csv(
        "ckpt-fig3-tps-time.csv",
        &["label", "window_end_s", "txn_per_s", "per_vanilla_mean"],
        &recs,
    )?;
    let end = series
        .iter()
        .flat_map(|x| x.points.last().map(|p| p.0))
        .fold(FIG3_WINDOW_S, f64::max);
    let style = Style {
        reference: vec![
            paper("vanilla (1.0)", vec![(0.0, 1.0), (end, 1.0)]),
            paper(
                "mcc 3 mean / vanilla mean (1.58)",
                vec![(0.0, 1.58), (end, 1.58)],
            ),
        ],
        ..Style::default()
    };
    let title = format!(
        "Throughput over time relative to vanilla, in place, buffer {big}%, seed {seed} (Fig. 3)"
    );
    let c = chart(
        &title,
        &format!("seconds into the run (means over {FIG3_WINDOW_S:.0} s windows; partial windows dropped)"),
        "transactions/s (wall) / vanilla's run mean",
        series,
    );
    s.plot("ckpt-fig3-tps-time", &c, style)
}

/// Mean lines of `y` against `x` for the settings `keep` selects, one line per `key`, with
/// their min-max spread over seeds.
fn lines(
    aggs: &[Agg<'_>],
    keep: impl Fn(&Point) -> bool,
    key: impl Fn(&Point) -> String,
    x: impl Fn(&Point) -> f64,
    y: fn(&Row) -> f64,
) -> (Vec<Series>, Vec<Spread>) {
    let mut out: Vec<Series> = Vec::new();
    let mut spread: Vec<Spread> = Vec::new();
    for a in aggs.iter().filter(|a| keep(a.point)) {
        let k = key(a.point);
        let (xv, (lo, hi)) = (x(a.point), a.range(&y));
        let pt = (xv, a.mean(&y));
        match out
            .iter_mut()
            .zip(spread.iter_mut())
            .find(|(s, _)| s.label == k)
        {
            Some((s, sp)) => {
                s.points.push(pt);
                sp.points.push((xv, lo, hi));
            }
            None => {
                out.push(Series {
                    label: k.clone(),
                    points: vec![pt],
                });
                spread.push(Spread {
                    label: k,
                    points: vec![(xv, lo, hi)],
                });
            }
        }
    }
    assert_eq!(out.len(), spread.len(), "one spread per line");
    for (s, sp) in out.iter_mut().zip(&spread) {
        assert_eq!(s.points.len(), sp.points.len(), "one range per point");
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    for s in &mut spread {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    (out, spread)
}

/// Figure 5's ticks: the measured counts and the paper's (its references' points get labels).
fn with_paper_counts(mut xs: Vec<f64>) -> Vec<f64> {
    xs.extend(PAPER_FIG5.iter().map(|p| p.0));
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}

/// The x ticks: every x of the series.
fn ticks(series: &[Series]) -> Vec<f64> {
    let mut xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    assert!(
        series.iter().all(|s| s.points.is_empty()) || !xs.is_empty(),
        "ticks of the points"
    );
    xs
}

/// The lines `lines` drew, each point divided by vanilla's mean at the same buffer and path
/// (the setting with count 0 and no bound; a point without one is dropped): the paper's
/// database is ~500x nowa's quick one, so the figures compare ratios, the paper's as marks.
/// The spread is the seeds' min-max over the same vanilla mean.
fn relative(
    aggs: &[Agg<'_>],
    keep: impl Fn(&Point) -> bool,
    key: impl Fn(&Point) -> String,
    x: impl Fn(&Point) -> f64,
) -> (Vec<Series>, Vec<Spread>) {
    let tps: fn(&Row) -> f64 = |r| r.bound_tps;
    let base = |p: &Point| {
        aggs.iter()
            .find(|a| {
                a.point.mcc == 0
                    && a.point.redo_bound.is_none()
                    && a.point.path == p.path
                    && a.point.buffer_pct == p.buffer_pct
            })
            .map(|a| a.mean(&tps))
    };
    let mut ls: Vec<Series> = Vec::new();
    let mut sp: Vec<Spread> = Vec::new();
    for a in aggs.iter().filter(|a| keep(a.point)) {
        let Some(v) = base(a.point) else { continue };
        assert!(v > 0.0 || v.is_nan(), "vanilla's throughput is positive");
        let (k, xv, (lo, hi)) = (key(a.point), x(a.point), a.range(&tps));
        if let Some(i) = ls.iter().position(|l| l.label == k) {
            ls[i].points.push((xv, a.mean(&tps) / v));
            sp[i].points.push((xv, lo / v, hi / v));
        } else {
            ls.push(Series {
                label: k.clone(),
                points: vec![(xv, a.mean(&tps) / v)],
            });
            sp.push(Spread {
                label: k,
                points: vec![(xv, lo / v, hi / v)],
            });
        }
    }
    for l in &mut ls {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    for l in &mut sp {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    assert!(
        ls.iter()
            .zip(&sp)
            .all(|(l, s)| l.points.len() == s.points.len()),
        "one range per point"
    );
    (ls, sp)
}

/// Figure 4: TPS relative to vanilla against the buffer size.
fn figure4(s: &mut Sink<'_>, aggs: &[Agg<'_>]) -> Result<()> {
    let keep = |p: &Point| p.redo_bound.is_none() && shown_count(p);
    let (f4, spread) = relative(aggs, keep, Point::label, |p| f64::from(p.buffer_pct));
    let style = Style {
        reference: vec![
            paper(
                "mcc 3 (<= 1 at 10-20%, 1.58 at 50%)",
                vec![(20.0, 1.0), (50.0, 1.58)],
            ),
            paper("mcc 8 at 50% (2.13)", vec![(50.0, 2.13)]),
        ],
        x_ticks: ticks(&f4),
        spread,
        ..Style::default()
    };
    let c = chart(
        "Throughput relative to vanilla vs buffer size (Fig. 4)",
        "buffer, % of the database",
        "device-bound TPS / vanilla's at the same buffer",
        f4,
    );
    s.plot("ckpt-fig4-buffer", &c, style)
}

/// Figure 5: TPS (relative to vanilla) and the flush shares against the count, at the buffer
/// `big`.
fn figure5(s: &mut Sink<'_>, aggs: &[Agg<'_>], big: u32) -> Result<()> {
    let at_big = |p: &Point| p.redo_bound.is_none() && p.buffer_pct == big;
    let f5 = |y: fn(&Row) -> f64| lines(aggs, at_big, |p| p.path.clone(), |p| f64::from(p.mcc), y);
    let (tps, spread) = relative(aggs, at_big, |p| p.path.clone(), |p| f64::from(p.mcc));
    let vanilla = PAPER_FIG5[0].1;
    let style = Style {
        reference: vec![paper(
            "TPS / vanilla's",
            PAPER_FIG5.iter().map(|p| (p.0, p.1 / vanilla)).collect(),
        )],
        x_ticks: with_paper_counts(ticks(&tps)),
        spread,
        ..Style::default()
    };
    let t =
        format!("Throughput relative to vanilla vs max_checkpoint_count, buffer {big}% (Fig. 5)");
    let c = chart(
        &t,
        "max_checkpoint_count",
        "device-bound TPS / vanilla's",
        tps,
    );
    s.plot("ckpt-fig5-tps", &c, style)?;
    let named = |(v, sp): (Vec<Series>, Vec<Spread>), what: &str| {
        let name = |l: &str| format!("{l} {what}");
        let v: Vec<Series> = v
            .into_iter()
            .map(|x| Series {
                label: name(&x.label),
                ..x
            })
            .collect();
        let sp: Vec<Spread> = sp
            .into_iter()
            .map(|x| Spread {
                label: name(&x.label),
                ..x
            })
            .collect();
        (v, sp)
    };
    let (mut sh, mut sp) = named(f5(|r| r.ckpt_pct), "checkpoint %");
    let (lru, lsp) = named(f5(|r| r.lru_pct), "LRU %");
    sh.extend(lru);
    sp.extend(lsp);
    let style = Style {
        reference: vec![
            paper(
                "checkpoint %",
                PAPER_FIG5.iter().map(|p| (p.0, p.2)).collect(),
            ),
            paper("LRU % (Table I)", vec![(0.0, 0.9), (3.0, 56.9)]),
        ],
        x_ticks: with_paper_counts(ticks(&sh)),
        spread: sp,
        ..Style::default()
    };
    let t = format!("Checkpoint and LRU shares of page writes, buffer {big}% (Fig. 5)");
    let c = chart(&t, "max_checkpoint_count", "share of page writes, %", sh);
    s.plot("ckpt-fig5-share", &c, style)
}

/// Table II: recovery after each crash (every crash image of every crash run).
fn table2(crashes: &[(Point, Recovery)]) -> (String, Vec<Vec<String>>) {
    let mut md = String::from(
        "| run | seed | crash s | recovery s (CPU + simulated SSD) | CPU s | simulated SSD s | open wall s | redo wall ms | records replayed | pages read | redo range MiB |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut recs = Vec::new();
    for (p, r) in crashes {
        let mib = f(r.redo_bytes) / 1_048_576.0;
        let _ = writeln!(
            md,
            "| {} | {} | {:.1} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} | {} | {} | {mib:.2} |",
            p.label(),
            p.seed,
            r.crash_secs,
            r.work_secs(),
            r.cpu_secs,
            r.device_secs,
            r.open_secs,
            f(r.redo_us) / 1000.0,
            r.records,
            r.pages_read
        );
        recs.push(vec![
            p.path.clone(),
            p.buffer_pct.to_string(),
            p.mcc.to_string(),
            p.redo_bound.unwrap_or(0).to_string(),
            format!("{:.4}", r.open_secs),
            r.analysis_us.to_string(),
            r.redo_us.to_string(),
            r.records.to_string(),
            r.redo_bytes.to_string(),
            p.seed.to_string(),
            format!("{:.1}", r.crash_secs),
            format!("{:.4}", r.cpu_secs),
            format!("{:.4}", r.device_secs),
            r.read_bytes.to_string(),
            r.written_bytes.to_string(),
            r.pages_read.to_string(),
        ]);
    }
    (md, recs)
}

const RECOVERY_HEADER: [&str; 16] = [
    "path",
    "buffer_pct",
    "mcc",
    "redo_bound_bytes",
    "open_secs",
    "analysis_us",
    "redo_us",
    "records",
    "redo_bytes",
    "seed",
    "crash_secs",
    "cpu_secs",
    "device_model_secs",
    "read_bytes",
    "written_bytes",
    "pages_read",
];

/// Every output of the command, as `ext` (png; svg in the layout test).
///
/// # Errors
/// A file cannot be written.
pub fn write_all(
    spec: &Spec,
    runs: &[(Point, TpccReport)],
    crashes: &[(Point, Recovery)],
    ext: &str,
) -> Result<Outcome> {
    let big = spec.big();
    let rows: Vec<(&Point, Row)> = runs.iter().map(|(p, v)| (p, Row::of(v))).collect();
    let mut s = Sink {
        out: &spec.out,
        ext,
        setup: spec.setup(),
        files: Vec::new(),
        partial: runs.len() < spec.points().len(),
    };
    let recs: Vec<Vec<String>> = rows.iter().map(|(p, r)| run_record(p, r)).collect();
    s.csv("ckpt-runs.csv", &RUN_HEADER, &recs)?;
    let aggs = settings(&rows);
    figure3(&mut s, runs, big, spec.seed)?;
    figure4(&mut s, &aggs)?;
    figure5(&mut s, &aggs, big)?;
    let (residency, fig12) = residency(&mut s, runs, big, spec.seed)?;
    let (table2, recs2) = table2(crashes);
    s.csv("ckpt-recovery.csv", &RECOVERY_HEADER, &recs2)?;
    let note = format!(
        "Mean [min-max] over {} seed(s) from {}; ratios are of the means, to vanilla at the same buffer. Setup: {}.",
        spec.seeds,
        spec.seed,
        spec.setup()
    );
    let mut tables = tables::all(&aggs, crashes, big, spec.seconds, &note);
    tables.extend(fig12);
    Ok(Outcome {
        result: typed(&rows, crashes),
        table1: table1(&aggs, big),
        table2,
        residency,
        tables,
        files: s.files,
        interrupted: None,
    })
}

/// Figures 1 and 2 (the paper's characterization) from the vanilla run at the buffer `big`
/// (first seed): pages by the consecutive checkpoint selections they saw while resident and
/// dirty (CDF over pages), and the checkpoint writes of those pages (CDF over writes), for
/// the evicted pages (the paper's "before eviction") and for those plus the pages still
/// resident at the end (a 40 s run evicts only cold pages; the paper's hour evicts hot ones
/// too). Engine lifetime counters (load and run). Returns the summary line (the shares of
/// checkpoint writes by pages resident for >= 5 and >= 10 selections) and the table of the
/// shares the paper's text gives.
fn residency(
    s: &mut Sink<'_>,
    runs: &[(Point, TpccReport)],
    big: u32,
    seed: u64,
) -> Result<(String, Option<DocTable>)> {
    let Some((_, v)) = runs.iter().find(|(p, _)| {
        p.buffer_pct == big && p.mcc == 0 && p.redo_bound.is_none() && p.seed == seed
    }) else {
        return Ok((String::new(), None));
    };
    let e = &v.engine;
    let evicted = Cdfs::of(&e.residency_pages, &e.residency_checkpoint_writes);
    let add = |a: &[u64], b: &[u64]| -> Vec<u64> {
        (0..a.len().max(b.len()))
            .map(|i| a.get(i).copied().unwrap_or(0) + b.get(i).copied().unwrap_or(0))
            .collect()
    };
    let all = Cdfs::of(
        &add(&e.residency_pages, &e.resident_pages),
        &add(
            &e.residency_checkpoint_writes,
            &e.resident_checkpoint_writes,
        ),
    );
    let header = [
        "checkpoints",
        "pages",
        "checkpoint_writes",
        "cdf_pages",
        "cdf_writes",
        "pages_with_resident",
        "checkpoint_writes_with_resident",
        "cdf_pages_with_resident",
        "cdf_writes_with_resident",
    ];
    let recs: Vec<Vec<String>> = evicted
        .recs
        .iter()
        .zip(&all.recs)
        .map(|(a, b)| a.iter().chain(b.iter().skip(1)).cloned().collect())
        .collect();
    s.csv("ckpt-fig12-residency.csv", &header, &recs)?;
    let line = format!(
        "checkpoint writes by pages resident >= 5 checkpoints: {:.1}% evicted only, {:.1}% with the pages resident at the end (paper ~51%); >= 10: {:.1}%, {:.1}% (paper ~20%)",
        evicted.share(5),
        all.share(5),
        evicted.share(10),
        all.share(10)
    );
    let shares = |c: &Cdfs| [c.pages_upto(1), c.pages_upto(3), c.share(5), c.share(10)];
    let table = tables::residency(shares(&evicted), shares(&all), big, seed);
    residency_charts(s, big, evicted, all)?;
    Ok((line, Some(table)))
}

/// The CDFs of Figures 1 and 2 from one residency histogram (index = selections seen).
struct Cdfs {
    pages: Vec<(f64, f64)>,
    writes: Vec<(f64, f64)>,
    /// CSV cells: selections, pages, writes, cdf of pages, cdf of writes.
    recs: Vec<Vec<String>>,
    /// Checkpoint writes by bucket, and their total.
    by: Vec<u64>,
    total: f64,
}

impl Cdfs {
    fn of(pages: &[u64], writes: &[u64]) -> Cdfs {
        assert_eq!(pages.len(), writes.len(), "one length (checked when read)");
        // Pages never selected while dirty are not in the paper's Figure 1 (its CDF starts
        // at 1).
        let tp = f(pages.iter().skip(1).sum::<u64>().max(1));
        let tw = f(writes.iter().sum::<u64>().max(1));
        let (mut cp, mut cw) = (0.0, 0.0);
        let mut c = Cdfs {
            pages: Vec::new(),
            writes: Vec::new(),
            recs: Vec::new(),
            by: writes.to_vec(),
            total: tw,
        };
        for (i, (p, w)) in pages.iter().zip(writes).enumerate().skip(1) {
            cp += f(*p);
            cw += f(*w);
            let x = f(i as u64);
            c.recs.push(vec![
                i.to_string(),
                p.to_string(),
                w.to_string(),
                format!("{:.4}", cp / tp),
                format!("{:.4}", cw / tw),
            ]);
            c.pages.push((x, 100.0 * cp / tp));
            c.writes.push((x, 100.0 * cw / tw));
        }
        c
    }

    /// Percent of the pages selected at most `n` times (of those selected at least once).
    fn pages_upto(&self, n: usize) -> f64 {
        assert!(n >= 1, "the CDF starts at one selection");
        self.pages
            .get(n - 1)
            .or(self.pages.last())
            .map_or(0.0, |p| p.1)
    }

    /// Percent of the checkpoint writes by pages that saw >= `from` selections.
    fn share(&self, from: usize) -> f64 {
        100.0 * f(self.by.iter().skip(from).sum::<u64>()) / self.total
    }
}

/// The PNGs of Figures 1 and 2 (CDFs in percent, the paper's values as references): the
/// evicted pages, and those with the pages resident at the end.
fn residency_charts(s: &mut Sink<'_>, big: u32, evicted: Cdfs, all: Cdfs) -> Result<()> {
    let last = cdf_end(&[&evicted.pages, &evicted.writes, &all.pages, &all.writes]);
    let x = format!(
        "consecutive checkpoints before eviction (or the run's end); every curve is at 100% beyond {last:.0}"
    );
    let x = x.as_str();
    let cut =
        |v: Vec<(f64, f64)>| -> Vec<(f64, f64)> { v.into_iter().filter(|p| p.0 <= last).collect() };
    let two = |a, b| {
        vec![
            Series {
                label: "nowa vanilla, evicted pages".into(),
                points: cut(a),
            },
            Series {
                label: "nowa vanilla, evicted + resident at the end".into(),
                points: cut(b),
            },
        ]
    };
    let c1 = chart(
        &format!("Pages by checkpoints resident, vanilla, buffer {big}% (Fig. 1)"),
        x,
        "cumulative % of pages",
        two(evicted.pages, all.pages),
    );
    let r1 = paper("~62% at 1, ~81% by 3", vec![(1.0, 62.0), (3.0, 81.0)]);
    s.plot(
        "ckpt-fig1-residency-pages",
        &c1,
        Style {
            reference: vec![r1],
            ..Style::default()
        },
    )?;
    let c2 = chart(
        &format!("Checkpoint writes by checkpoints resident, vanilla, buffer {big}% (Fig. 2)"),
        x,
        "cumulative % of checkpoint writes",
        two(evicted.writes, all.writes),
    );
    let r2 = paper(
        "~49% below 5, ~80% below 10",
        vec![(4.0, 49.0), (9.0, 80.0)],
    );
    s.plot(
        "ckpt-fig2-residency-writes",
        &c2,
        Style {
            reference: vec![r2],
            ..Style::default()
        },
    )
}

/// The x where Figures 1-2 end: one past the last x at which some CDF is still below 100%
/// (the rest is a flat line at 100%), and at least 10 (the paper's marks reach 9).
fn cdf_end(cdfs: &[&Vec<(f64, f64)>]) -> f64 {
    let changing = cdfs
        .iter()
        .flat_map(|c| c.iter())
        .filter(|p| p.1 < 99.95)
        .map(|p| p.0)
        .fold(0.0, f64::max);
    let end = (changing + 1.0).max(10.0);
    assert!(
        end >= changing && end.is_finite(),
        "the axis covers every change"
    );
    end
}

/// The runs and crashes as `nowa reproduce` reads them.
fn typed(rows: &[(&Point, Row)], crashes: &[(Point, Recovery)]) -> CkptResult {
    let runs = rows
        .iter()
        .map(|(p, r)| CkptRun {
            path: p.path.clone(),
            buffer_pct: p.buffer_pct,
            mcc: p.mcc,
            redo_bound: p.redo_bound,
            seed: p.seed,
            tps: r.tps,
            bound_tps: r.bound_tps,
            write_kb_txn: r.write_kb_txn,
            page_kb_txn: r.page_kb_txn,
            ckpt_pct: r.ckpt_pct,
            lru_pct: r.lru_pct,
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
            work_secs: r.work_secs(),
        })
        .collect();
    CkptResult { runs, crashes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ckpt::report::tests::sample_json;

    /// Every figure kind rendered from fixed data as SVG: no text over text, no legend over
    /// data (the shared layout checker), and every file named.
    #[test]
    fn the_figures_pass_the_layout_check() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut spec = Spec::new(dir.path().to_path_buf(), dir.path().join("w")).quick();
        spec.buffers = vec![20, 50];
        let mut runs = Vec::new();
        for seed in [42, 43] {
            for b in [20, 50] {
                for (m, busy) in [(0, 5.0), (3, 4.5), (8, 4.0)] {
                    let j = sample_json(4000 + 100 * seed, busy, 10 * u64::from(m), 90);
                    let mut r = TpccReport::parse(&j).expect("report");
                    // Two 5 s windows of Figure 3 and the partial second before the stop.
                    r.run.samples = (1..=10)
                        .map(|t| (f(t), f(100 + t * u64::from(m))))
                        .chain([(10.4, 3.0)])
                        .map(|(elapsed_s, txn_per_s)| crate::ckpt::report::Sample {
                            elapsed_s,
                            txn_per_s,
                        })
                        .collect();
                    runs.push((Point::new("inplace", b, m, None, seed), r));
                }
            }
        }
        let crash = Recovery {
            crash_secs: 30.0,
            open_secs: 1.0,
            analysis_us: 10,
            redo_us: 20,
            records: 5,
            redo_bytes: 1 << 20,
            cpu_secs: 0.5,
            read_bytes: 3 << 20,
            written_bytes: 0,
            pages_read: 512,
            device_secs: 0.1,
        };
        let crashes = vec![(Point::new("inplace", 50, 0, None, 42), crash)];
        let o = write_all(&spec, &runs, &crashes, "svg").expect("written");
        let svgs: Vec<_> = o
            .files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "svg"))
            .collect();
        assert_eq!(svgs.len(), 6, "{:?}", o.files);
        for p in svgs {
            nowa_bench::plot_layout::check_file(p).unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(o.result.runs.len(), 12);
        assert!(
            o.table1.contains("("),
            "several seeds show their range:\n{}",
            o.table1
        );
    }

    /// Ctrl-C can stop the grid anywhere: the outputs of the runs that finished are written,
    /// even with no run (or none at the largest buffer), without a panic.
    #[test]
    fn a_grid_cut_short_still_writes_its_outputs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut spec = Spec::new(dir.path().to_path_buf(), dir.path().join("w")).quick();
        spec.buffers = vec![20, 50];
        let j = sample_json(4000, 5.0, 0, 90);
        let one = [(
            Point::new("inplace", 20, 0, None, 42),
            TpccReport::parse(&j).expect("report"),
        )];
        for runs in [&one[..], &[]] {
            let o = write_all(&spec, runs, &[], "svg").expect("written");
            assert_eq!(o.result.runs.len(), runs.len());
            assert!(
                o.table1.contains("no run at buffer 50% finished"),
                "{}",
                o.table1
            );
            assert!(dir.path().join("ckpt-runs.csv").exists());
        }
    }

    /// Figures 1-2 count the pages still resident at the end beside the evicted ones: a
    /// short run keeps its hot pages, which take most checkpoint writes.
    #[test]
    fn the_residency_shares_count_the_resident_pages() {
        let mut v: serde_json::Value =
            serde_json::from_str(&sample_json(1000, 5.0, 10, 90)).expect("json");
        // Evicted: 3 pages selected once (3 writes); resident: 2 pages selected 6 times
        // (12 writes) and 1 page 12 times (12 writes, the last bucket here).
        v["engine"]["residency_pages"] = serde_json::json!([0, 3, 0, 0, 0, 0, 0, 0]);
        v["engine"]["residency_checkpoint_writes"] = serde_json::json!([0, 3, 0, 0, 0, 0, 0, 0]);
        v["engine"]["resident_pages"] = serde_json::json!([9, 0, 0, 0, 0, 0, 2, 1]);
        v["engine"]["resident_checkpoint_writes"] = serde_json::json!([0, 0, 0, 0, 0, 0, 12, 7]);
        let r = TpccReport::parse(&v.to_string()).expect("report");
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = Spec::new(dir.path().to_path_buf(), dir.path().join("w")).quick();
        let runs = vec![(Point::new("inplace", 50, 0, None, 42), r)];
        let mut s = Sink {
            out: &spec.out,
            ext: "svg",
            setup: spec.setup(),
            files: Vec::new(),
            partial: false,
        };
        let (line, table) = residency(&mut s, &runs, 50, 42).expect("written");
        let table = table.expect("the residency table").markdown();
        assert!(
            table.contains(
                "| checkpoint writes by pages resident >= 5 selections, % | ~51 | 0.0 | 86.4 |"
            ),
            "{table}"
        );
        // Evicted only: nothing >= 5; with the resident pages: 19 of 22 writes.
        assert!(
            line.contains(": 0.0% evicted only, 86.4% with the pages resident"),
            "{line}"
        );
    }

    /// Figure 3's windows: a rate is the transactions over the seconds the samples cover,
    /// and the partial interval before the stop is no window of its own.
    #[test]
    fn throughput_windows_drop_the_partial_interval() {
        let mut samples: Vec<(f64, f64)> = (1..=10).map(|t| (f(t), 100.0 * f(t))).collect();
        samples.push((10.3, 3.0));
        let w = windows(&samples, 5.0);
        assert_eq!(w, vec![(5.0, 300.0), (10.0, 800.0)]);
    }

    /// Figures 1-2 stop where every curve has reached 100%, not at the histogram's end.
    #[test]
    fn residency_figures_end_where_the_curves_stop_changing() {
        let flat_from = |n: u64| -> Vec<(f64, f64)> {
            (1..=31)
                .map(|x| (f(x), if x < n { 50.0 } else { 100.0 }))
                .collect()
        };
        assert!((cdf_end(&[&flat_from(14), &flat_from(3)]) - 14.0).abs() < 1e-9);
        assert!((cdf_end(&[&flat_from(2)]) - 10.0).abs() < 1e-9);
    }

    /// Figures 4 and 5 draw throughput relative to vanilla at the same buffer (vanilla = 1),
    /// the seeds' range divided by the same mean.
    #[test]
    fn throughput_figures_are_relative_to_vanilla_at_each_buffer() {
        let r = |tps| Row {
            bound_tps: tps,
            ..Row::default()
        };
        let ps = [
            Point::new("inplace", 20, 0, None, 1),
            Point::new("inplace", 20, 3, None, 1),
            Point::new("inplace", 50, 0, None, 1),
            Point::new("inplace", 50, 3, None, 1),
            Point::new("inplace", 50, 3, None, 2),
        ];
        let rows = vec![
            (&ps[0], r(200.0)),
            (&ps[1], r(180.0)),
            (&ps[2], r(250.0)),
            (&ps[3], r(400.0)),
            (&ps[4], r(300.0)),
        ];
        let aggs = settings(&rows);
        let (ls, sp) = relative(&aggs, |_| true, Point::label, |p| f64::from(p.buffer_pct));
        assert_eq!(ls[0].points, vec![(20.0, 1.0), (50.0, 1.0)]);
        assert_eq!(ls[1].points, vec![(20.0, 0.9), (50.0, 1.4)]);
        assert_eq!(sp[1].points, vec![(20.0, 0.9, 0.9), (50.0, 1.2, 1.6)]);
    }

    #[test]
    fn seeds_of_a_setting_are_one_line_with_its_spread() {
        let r = |tps| Row {
            bound_tps: tps,
            ..Row::default()
        };
        let (p0, p1) = (
            Point::new("inplace", 50, 3, None, 1),
            Point::new("inplace", 50, 3, None, 2),
        );
        let rows = vec![(&p0, r(100.0)), (&p1, r(140.0))];
        let aggs = settings(&rows);
        assert_eq!(aggs.len(), 1);
        let (s, sp) = lines(
            &aggs,
            |_| true,
            Point::label,
            |p| f64::from(p.mcc),
            |r| r.bound_tps,
        );
        assert_eq!(s[0].points, vec![(3.0, 120.0)]);
        assert_eq!(sp[0].points, vec![(3.0, 100.0, 140.0)]);
    }
}
