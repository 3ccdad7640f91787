//! `nowa plan`: PLAN (plan-ssd-parallelism.md) on the chip-addressed FTL
//! ([`nowa_flash::parallel`]) timed by the one timing model's chips
//! ([`nowa_device::timing::Chips`]): single runs and the paper's figures (docs/plan.md).

pub mod run;
pub mod trace;
pub mod workload;

pub use run::{run, run_cancellable, run_observed, RunResult, RunSpec, TICK_REQUESTS};
pub use trace::{replay, replay_cancellable, replay_observed};
pub use workload::{Generator, Kind, Req, WorkloadKind};

use crate::plot::{render_bar_styled, render_line_styled, BarChart, LineChart, Series, Style};
use anyhow::Context as _;
use nowa_device::timing::ChipParams;
use nowa_flash::parallel::{
    ChipGeometry, Scheme, AGED, FEMU_BACKGROUND_GC, FEMU_GC_RESERVE, HOST_OPEN,
};
use std::path::Path;

/// An unknown scheme name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scheme '{0}' (expected baseline[-1/2|1/4|1/8][@OPEN], partial-gc, multi-stream, autostream, plan-nopred-1/4|1/8, plan-pred-1/4|1/8)")]
pub struct UnknownScheme(pub String);

/// Parses a scheme name (parallelism as a fraction of the chips per channel of `g`).
///
/// # Errors
/// [`UnknownScheme`] for a name not in the list.
pub fn parse_scheme(s: &str, g: &ChipGeometry) -> Result<Scheme, UnknownScheme> {
    let cpc = g.chips_per_channel;
    let frac = |f: &str| {
        match f {
            "1/2" => Some(cpc / 2),
            "1/4" => Some(cpc / 4),
            "1/8" => Some(cpc / 8),
            "full" => Some(cpc),
            _ => None,
        }
        .filter(|&k| k >= 1)
    };
    let bad = || UnknownScheme(s.to_owned());
    Ok(match s {
        "partial-gc" => Scheme::PartialGc,
        "multi-stream" => Scheme::MultiStream { streams: 16 },
        "autostream" => Scheme::AutoStream { streams: 16 },
        _ => {
            if let Some(rest) = s.strip_prefix("baseline") {
                // baseline[-F][@N]: parallelism F (full), N host superblocks open (default 1:
                // FEMU's one open line; @18 = the paper's "same number" of open superblocks).
                let (f, open) = match rest.split_once('@') {
                    Some((f, n)) => (
                        f,
                        n.parse::<u16>().ok().filter(|&n| n >= 1).ok_or_else(bad)?,
                    ),
                    None => (rest, 1),
                };
                let chips_per_channel = match f {
                    "" => cpc,
                    _ => f.strip_prefix('-').and_then(frac).ok_or_else(bad)?,
                };
                Scheme::Baseline {
                    chips_per_channel,
                    open,
                }
            } else if let Some(f) = s.strip_prefix("plan-pred-") {
                Scheme::Plan {
                    small_chips: frac(f).ok_or_else(bad)?,
                    predict: true,
                }
            } else if let Some(f) = s.strip_prefix("plan-nopred-") {
                Scheme::Plan {
                    small_chips: frac(f).ok_or_else(bad)?,
                    predict: false,
                }
            } else {
                return Err(bad());
            }
        }
    })
}

/// The name [`parse_scheme`] reads back as `s` on geometry `g` (parallelism as the fraction
/// of the chips per channel the user typed: `plan-pred-1/4`, not the chip count 2).
#[must_use]
pub fn scheme_name(s: Scheme, g: &ChipGeometry) -> String {
    let cpc = g.chips_per_channel;
    let frac = |k: u32| match k {
        _ if k == cpc => "full".to_owned(),
        _ if k * 2 == cpc => "1/2".to_owned(),
        _ if k * 4 == cpc => "1/4".to_owned(),
        _ if k * 8 == cpc => "1/8".to_owned(),
        _ => format!("{k}-of-{cpc}"),
    };
    match s {
        Scheme::Baseline {
            chips_per_channel,
            open,
        } => {
            let mut n = "baseline".to_owned();
            if chips_per_channel != cpc {
                n = format!("{n}-{}", frac(chips_per_channel));
            }
            if open != 1 {
                n = format!("{n}@{open}");
            }
            n
        }
        Scheme::Plan {
            small_chips,
            predict,
        } => format!(
            "plan-{}-{}",
            if predict { "pred" } else { "nopred" },
            frac(small_chips)
        ),
        Scheme::MultiStream { streams: 16 } => "multi-stream".into(),
        Scheme::AutoStream { streams: 16 } => "autostream".into(),
        other => other.to_string(),
    }
}

/// The paper's configurations (section 4), in its order, with the baseline in both readings:
/// FEMU's organisation (one open host superblock striped over every chip, one for GC) and the
/// paper's "same number of concurrently opened superblocks" (18 host + GC, writes rotating).
pub const SCHEMES: [&str; 9] = [
    "baseline",
    "baseline@18",
    "partial-gc",
    "multi-stream",
    "autostream",
    "plan-nopred-1/4",
    "plan-nopred-1/8",
    "plan-pred-1/4",
    "plan-pred-1/8",
];

/// The aged SSD's default fill: 70% of the logical space, with FEMU's background GC the
/// highest level in steps of 5% whose FIO baseline WAF is <= 5 (docs/plan.md "Aged SSD"
/// argues it and shows the sensitivity).
pub const DEFAULT_FILL: f64 = 0.7;

/// Options of `nowa plan figures`.
#[derive(Debug, Clone)]
pub struct FigureOpts {
    /// The device.
    pub geometry: ChipGeometry,
    /// Chip timing.
    pub chips: ChipParams,
    /// Host writes per run, drive writes.
    pub drive_writes: f64,
    /// Workload seed.
    pub seed: u64,
    /// Predictor seconds per simulated second.
    pub time_scale: f64,
    /// Workloads of Figures 3 to 6.
    pub workloads: Vec<WorkloadKind>,
    /// Fraction of every chip's blocks GC keeps free (FEMU's 0.05).
    pub gc_reserve: f64,
    /// FEMU's background GC threshold (0.25; 0 = off): [`RunSpec::background_gc`].
    pub background_gc: f64,
    /// Aged SSD: fraction of the logical space filled before each run.
    pub fill: f64,
    /// Captured block traces (name, file) replayed as extra workloads of Figures 3 to 6.
    pub captured: Vec<(String, std::path::PathBuf)>,
    /// Pages per block of the device the captured traces run on (the rest of the geometry is
    /// `geometry`'s: the same 1024 superblocks, smaller, to fit a capture's footprint).
    pub captured_pages_per_block: u32,
}

/// The default options: the paper's device scaled to 16 GiB, FEMU timing, 2 drive writes.
#[must_use]
pub fn default_opts() -> FigureOpts {
    let g = ChipGeometry::paper_scaled();
    FigureOpts {
        chips: ChipParams::femu(g.channels, g.chips_per_channel, g.page_bytes),
        geometry: g,
        drive_writes: 2.0,
        seed: 42,
        time_scale: 16.0,
        workloads: WorkloadKind::ALL.to_vec(),
        gc_reserve: FEMU_GC_RESERVE,
        background_gc: FEMU_BACKGROUND_GC,
        fill: DEFAULT_FILL,
        captured: Vec::new(),
        captured_pages_per_block: 2,
    }
}

fn spec(o: &FigureOpts, scheme: Scheme, workload: WorkloadKind) -> RunSpec {
    RunSpec {
        geometry: o.geometry,
        chips: o.chips,
        scheme,
        workload,
        drive_writes: o.drive_writes,
        seed: o.seed,
        time_scale: o.time_scale,
        gc_reserve: o.gc_reserve,
        background_gc: o.background_gc,
        fill: o.fill,
        track_streams: false,
    }
}

const CSV_HEADER: [&str; 19] = [
    "figure",
    "workload",
    "scheme",
    "waf",
    "host_pages",
    "gc_pages",
    "erased_blocks",
    "victims",
    "requests",
    "sim_secs",
    "iops",
    "pages_per_sec",
    "read_p50_us",
    "read_p99_us",
    "read_p999_us",
    "write_p50_us",
    "write_p99_us",
    "write_p999_us",
    "cpu_secs",
];

/// What a figure pipeline ([`figure1`], [`figures3to6`]) tells its caller while it runs.
/// A closure `FnMut(&RunResult)` is one that only hears of finished runs.
pub trait Observer {
    /// Inside the current run: host pages written of the pages it writes
    /// ([`run_observed`]).
    fn tick(&mut self, _written: u64, _target: u64) {}
    /// A run finished.
    fn ran(&mut self, r: &RunResult);
}

impl<F: FnMut(&RunResult)> Observer for F {
    fn ran(&mut self, r: &RunResult) {
        self(r);
    }
}

/// One run of the figures: `scheme` on `workload` as [`figure1`] (`streams`: per-stream
/// shares tracked) and [`figures3to6`] run it; a check that re-measures single points of
/// the figures (the committed report's staleness test) runs exactly these.
///
/// # Errors
/// An unknown scheme, or the run fails.
pub fn figure_run(
    o: &FigureOpts,
    scheme: &str,
    workload: WorkloadKind,
    streams: bool,
) -> anyhow::Result<RunResult> {
    figure_run_observed(o, scheme, workload, streams, &mut |_, _| {})
}

/// [`figure_run`] with progress inside the run, as [`run_observed`].
///
/// # Errors
/// As [`figure_run`].
pub fn figure_run_observed(
    o: &FigureOpts,
    scheme: &str,
    workload: WorkloadKind,
    streams: bool,
    tick: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<RunResult> {
    let s = parse_scheme(scheme, &o.geometry)?;
    run_observed(
        &RunSpec {
            track_streams: streams,
            ..spec(o, s, workload)
        },
        tick,
    )
}

/// One run's CSV fields, in [`CSV_HEADER`]'s order (the csv crate quotes a name with a
/// comma: a captured trace's name is the user's).
fn csv_row(fig: &str, r: &RunResult) -> [String; 19] {
    let c = &r.counters;
    [
        fig.to_owned(),
        r.workload.clone(),
        r.scheme.clone(),
        format!("{:.4}", r.waf),
        c.host_pages.to_string(),
        c.gc_pages.to_string(),
        c.erased_blocks.to_string(),
        c.victims.to_string(),
        r.requests.to_string(),
        format!("{:.4}", r.sim_secs),
        format!("{:.1}", r.iops),
        format!("{:.1}", r.pages_per_sec),
        format!("{:.1}", r.read_us[0]),
        format!("{:.1}", r.read_us[1]),
        format!("{:.1}", r.read_us[2]),
        format!("{:.1}", r.write_us[0]),
        format!("{:.1}", r.write_us[1]),
        format!("{:.1}", r.write_us[2]),
        format!("{:.3}", r.cpu_secs),
    ]
}

/// The Figure 1 variants: (label, GC reserve, host superblocks open). The first two are the
/// figure (the baseline in both readings: FEMU's one open line, the paper's "same number" of
/// open superblocks); the third takes the GC reserve and background GC away (docs/plan.md,
/// Figure 1 breakdown).
fn fig1_variants(o: &FigureOpts) -> [(&'static str, f64, u16); 3] {
    [
        ("one-open", o.gc_reserve, 1),
        ("same-open", o.gc_reserve, HOST_OPEN),
        ("min-reserve", 0.0, HOST_OPEN),
    ]
}

/// Runs of [`figure1`] (three variants at four parallelism levels) and, unless `fig1_only`,
/// of [`figures3to6`] (every scheme on every workload and capture): a progress bar's length.
///
/// # Panics
/// Never: Figure 1 always has runs (asserted).
#[must_use]
pub fn figure_run_count(o: &FigureOpts, fig1_only: bool) -> u64 {
    let fig1 = fig1_variants(o).len() * 4;
    let rest = if fig1_only {
        0
    } else {
        SCHEMES.len() * (o.workloads.len() + o.captured.len())
    };
    assert!(fig1 > 0, "Figure 1 always runs");
    (fig1 + rest) as u64
}

/// FEMU's background GC as the setup line says it.
#[must_use]
pub fn background_label(fraction: f64) -> String {
    if fraction > 0.0 {
        format!(" (background at {:.0}%)", fraction * 100.0)
    } else {
        ", no background GC".to_owned()
    }
}

/// The setup line under every figure's title.
#[must_use]
pub fn setup_line(o: &FigureOpts) -> String {
    let g = &o.geometry;
    let gib = |p: u64| (p * u64::from(g.page_bytes)) >> 30;
    format!(
        "{}/{} GiB phys/logical (paper 256/240: 1/{:.0}), {}x{} chips, OP {:.2}%, aged {:.0}% full, GC at {:.0}% free{}, FEMU timing, {} drive writes, seed {}",
        gib(g.physical_pages()),
        gib(g.logical_pages()),
        o.time_scale,
        g.channels,
        g.chips_per_channel,
        g.op_physical * 100.0,
        o.fill * 100.0,
        o.gc_reserve * 100.0,
        background_label(o.background_gc),
        o.drive_writes,
        o.seed
    )
}

/// Figure 1: FIO on the baseline at parallelism 1/8, 1/4, 1/2, full, with one open host
/// superblock and with the paper's 18 (+ GC), and the breakdown without the GC reserve, each
/// with per-stream host and GC shares (`plan-fig1-streams.csv`). Returns the one-open rows,
/// then the same-open rows.
///
/// # Errors
/// A run fails or a file cannot be written.
pub fn figure1(
    o: &FigureOpts,
    out: &Path,
    log: &mut dyn Observer,
) -> anyhow::Result<Vec<RunResult>> {
    let mut rows = Vec::new();
    let mut variants = Vec::new();
    for (label, reserve, open) in fig1_variants(o) {
        let v = FigureOpts {
            gc_reserve: reserve,
            background_gc: if label == "min-reserve" {
                0.0
            } else {
                o.background_gc
            },
            ..o.clone()
        };
        for f in ["1/8", "1/4", "1/2", "full"] {
            let name = format!("baseline-{f}@{open}");
            let r = figure_run_observed(&v, &name, WorkloadKind::Fio, true, &mut |w, t| {
                log.tick(w, t);
            })?;
            log.ran(&r);
            variants.push((label, reserve, r.clone()));
            if label != "min-reserve" {
                rows.push(r);
            }
        }
    }
    write_csv(&out.join("plan-fig1.csv"), "fig1", &rows)?;
    write_streams_csv(&out.join("plan-fig1-streams.csv"), &variants)?;
    plot_fig1(o, &rows, &out.join("plan-fig1.png"))?;
    Ok(rows)
}

/// Figure 1 as bars per parallelism (every level labelled): WAF over WAF at 1/8 and
/// throughput over full, for both baselines, beside the paper's values.
fn plot_fig1(o: &FigureOpts, rows: &[RunResult], path: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(rows.len() == 8, "Figure 1 has 2 x 4 runs");
    let (one, same) = rows.split_at(4);
    let waf = |rs: &[RunResult]| rs.iter().map(|r| r.waf / rs[0].waf).collect::<Vec<_>>();
    let tput = |rs: &[RunResult]| rs.iter().map(|r| r.iops / rs[3].iops).collect::<Vec<_>>();
    let chart = BarChart {
        title: "Figure 1: FIO, 4 streams, baseline with greedy GC".into(),
        y_label: "WAF / WAF at 1/8;  throughput / full".into(),
        categories: ["1/8", "1/4", "1/2", "full"].map(String::from).to_vec(),
        groups: vec![
            ("WAF, 1 open".into(), waf(one)),
            ("WAF, 18+1 open".into(), waf(same)),
            ("throughput, 1 open".into(), tput(one)),
            ("throughput, 18+1 open".into(), tput(same)),
        ],
    };
    // The paper's values, against its reading (18 + 1 open superblocks).
    let none = vec![f64::NAN; 4];
    let style = Style {
        subtitle: setup_line(o),
        bar_reference: vec![
            none.clone(),
            vec![1.0, f64::NAN, f64::NAN, 2.3],
            none,
            vec![f64::NAN, f64::NAN, 1.4, 1.0],
        ],
        ..Style::default()
    };
    render_bar_styled(&chart, &style, path)?;
    Ok(())
}

/// Per run: WAF, victims' mean valid ratio, the dominant stream's share of a sealed host
/// superblock, and per stream (0..3, then data not rewritten since the fill) the share of
/// host writes and of GC-moved pages.
fn write_streams_csv(path: &Path, rows: &[(&str, f64, RunResult)]) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(path).with_context(|| format!("{}", path.display()))?;
    let mut head: Vec<String> = [
        "variant",
        "gc_reserve",
        "scheme",
        "waf",
        "iops",
        "mean_victim_valid",
        "dominant_share",
    ]
    .map(String::from)
    .to_vec();
    for i in 0..4 {
        head.extend([format!("host_share_{i}"), format!("gc_share_{i}")]);
    }
    head.push("gc_share_fill".into());
    w.write_record(&head)?;
    for (label, reserve, r) in rows {
        let s = &r.streams;
        let (h, g) = (
            s.host_pages.iter().sum::<u64>(),
            s.gc_pages.iter().sum::<u64>(),
        );
        #[expect(clippy::cast_precision_loss, reason = "page counts below 2^53")]
        let share = |x: u64, of: u64| format!("{:.4}", x as f64 / of.max(1) as f64);
        let mut rec = vec![
            (*label).to_owned(),
            reserve.to_string(),
            r.scheme.clone(),
            format!("{:.4}", r.waf),
            format!("{:.1}", r.iops),
            format!("{:.4}", r.mean_victim_ratio()),
            format!("{:.4}", s.dominant_share()),
        ];
        for i in 0..4 {
            rec.extend([share(s.host_pages[i], h), share(s.gc_pages[i], g)]);
        }
        rec.push(share(s.gc_pages[AGED], g));
        assert_eq!(rec.len(), head.len(), "a field per column");
        w.write_record(&rec)?;
    }
    w.flush()?;
    Ok(())
}

fn write_csv(path: &Path, fig: &str, rows: &[RunResult]) -> anyhow::Result<()> {
    let mut f = std::fs::File::create(path).with_context(|| format!("{}", path.display()))?;
    let mut w = csv::Writer::from_writer(&mut f);
    w.write_record(CSV_HEADER)?;
    for r in rows {
        w.write_record(csv_row(fig, r))?;
    }
    w.flush()?;
    Ok(())
}

/// Figures 3 to 6: every scheme on every workload.
///
/// # Errors
/// A run fails or a file cannot be written.
pub fn figures3to6(
    o: &FigureOpts,
    out: &Path,
    log: &mut dyn Observer,
) -> anyhow::Result<Vec<RunResult>> {
    let rows = fig3_runs(o, log)?;
    write_csv(&out.join("plan-fig3-6.csv"), "fig3-6", &rows)?;
    let gens: Vec<String> = o.workloads.iter().map(|w| w.name().to_owned()).collect();
    let traces: Vec<String> = o.captured.iter().map(|c| c.0.clone()).collect();
    // Generators and traces in separate charts: ten groups of nine bars do not leave room
    // for the workload names.
    let parts = [("", 0, &gens), ("-traces", gens.len(), &traces)];
    for (suffix, first, cats) in parts {
        if !cats.is_empty() {
            fig3_bars(o, out, suffix, &rows[first * SCHEMES.len()..], cats)?;
        }
    }
    let mut cats = gens;
    cats.extend(traces);
    figure5(o, &cats, out, &rows)?;
    Ok(rows)
}

/// Figures 3, 4, 6 over the workloads `cats` (their runs first in `rows`), on log value axes
/// where the values span more than a decade.
fn fig3_bars(
    o: &FigureOpts,
    out: &Path,
    suffix: &str,
    rows: &[RunResult],
    cats: &[String],
) -> anyhow::Result<()> {
    let per = |f: &dyn Fn(&RunResult, &RunResult) -> f64| -> Vec<(String, Vec<f64>)> {
        SCHEMES
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let vals = (0..cats.len())
                    .map(|w| f(&rows[w * SCHEMES.len() + i], &rows[w * SCHEMES.len()]))
                    .collect();
                (s.to_owned(), vals)
            })
            .collect()
    };
    #[expect(clippy::cast_precision_loss, reason = "block counts below 2^53")]
    let bars = [
        (
            "plan-fig3-waf",
            "Figure 3: WAF (lower is better)",
            "WAF",
            per(&|r, _| r.waf),
        ),
        (
            "plan-fig4-erased",
            "Figure 4: blocks erased / baseline (1 open)",
            "erased / baseline",
            per(&|r, b| r.counters.erased_blocks as f64 / b.counters.erased_blocks.max(1) as f64),
        ),
        (
            "plan-fig6-throughput",
            "Figure 6: throughput / baseline (1 open)",
            "IOPS / baseline",
            per(&|r, b| r.iops / b.iops),
        ),
    ];
    for (file, title, y, groups) in bars {
        // A log axis only where the values span more than a decade (else bars of 1 vanish).
        let vals = groups.iter().flat_map(|g| g.1.iter()).filter(|v| **v > 0.0);
        let (lo, hi) = vals.fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
        let style = Style {
            subtitle: setup_line(o),
            log_y: hi > 10.0 * lo,
            ..Style::default()
        };
        let chart = BarChart {
            title: title.into(),
            y_label: y.into(),
            categories: cats.to_vec(),
            groups,
        };
        render_bar_styled(&chart, &style, &out.join(format!("{file}{suffix}.png")))?;
    }
    Ok(())
}

/// Every scheme on every generator workload, then on every captured trace.
fn fig3_runs(o: &FigureOpts, log: &mut dyn Observer) -> anyhow::Result<Vec<RunResult>> {
    let mut rows = Vec::new();
    for &w in &o.workloads {
        for name in SCHEMES {
            let r = figure_run_observed(o, name, w, false, &mut |d, t| log.tick(d, t))?;
            log.ran(&r);
            rows.push(r);
        }
    }
    let tg = ChipGeometry {
        pages_per_block: o.captured_pages_per_block,
        ..o.geometry
    };
    for (label, path) in &o.captured {
        for name in SCHEMES {
            let mut s = spec(o, parse_scheme(name, &tg)?, WorkloadKind::Fio);
            s.geometry = tg;
            // A capture's clock is real time: its lifetimes need no scaling.
            s.time_scale = 1.0;
            let mut r = replay_observed(&s, path, None, &mut |d, t| log.tick(d, t))?;
            r.workload.clone_from(label);
            log.ran(&r);
            rows.push(r);
        }
    }
    Ok(rows)
}

/// Victims' valid ratio percentiles (10, 50, 90) in percent, from the histogram.
#[must_use]
pub fn victim_percentiles(hist: &[u64]) -> Option<[f64; 3]> {
    let c = cdf(hist);
    if hist.iter().sum::<u64>() == 0 {
        return None;
    }
    let at = |q: f64| c.iter().find(|p| p.1 >= q).map_or(100.0, |p| p.0);
    Some([at(0.1), at(0.5), at(0.9)])
}

/// Figure 5: CDF of the victims' valid ratio, one chart per workload, and every run's
/// percentiles in `plan-fig5-victims.csv`. A scheme without GC, or whose victims were all
/// empty, is a flat line: it is left out of the chart and named in its subtitle; a workload
/// with fewer than two curves left gets no chart (the CSV, and docs/plan.md's table, show it).
fn figure5(o: &FigureOpts, cats: &[String], out: &Path, rows: &[RunResult]) -> anyhow::Result<()> {
    let path = out.join("plan-fig5-victims.csv");
    let mut f = csv::Writer::from_path(&path).with_context(|| format!("{}", path.display()))?;
    f.write_record([
        "workload",
        "scheme",
        "victims",
        "p10_valid_pct",
        "p50_valid_pct",
        "p90_valid_pct",
        "mean_valid_pct",
    ])?;
    for (wi, w) in cats.iter().enumerate() {
        let runs = &rows[wi * SCHEMES.len()..(wi + 1) * SCHEMES.len()];
        let (mut series, mut flat) = (Vec::new(), Vec::new());
        for r in runs {
            let v: u64 = r.victim_hist.iter().sum();
            let p = victim_percentiles(&r.victim_hist);
            let [a, b, c] = p.unwrap_or([f64::NAN; 3]);
            f.write_record([
                w.clone(),
                r.scheme.clone(),
                v.to_string(),
                a.to_string(),
                b.to_string(),
                c.to_string(),
                format!("{:.2}", r.mean_victim_ratio() * 100.0),
            ])?;
            let nonempty = r.victim_hist.iter().skip(1).any(|&n| n > 0);
            match p {
                Some(_) if nonempty => series.push(Series {
                    label: r.scheme.clone(),
                    points: cdf(&r.victim_hist),
                }),
                Some(_) => flat.push(format!("{} (all 0%)", r.scheme)),
                None => flat.push(format!("{} (no GC)", r.scheme)),
            }
        }
        let png = out.join(format!("plan-fig5-{w}.png"));
        if series.len() < 2 {
            // Nothing to compare: a stale chart of an earlier run must not stay behind.
            let _ = std::fs::remove_file(&png);
            continue;
        }
        let mut x_label = "valid ratio of the GC victim (%)".to_owned();
        if !flat.is_empty() {
            x_label = format!("{x_label}; not drawn: {}", flat.join(", "));
        }
        let chart = LineChart {
            title: format!("Figure 5: victim valid ratio CDF, {w}"),
            x_label,
            y_label: "CDF".into(),
            series,
            log_x: false,
            log_y: false,
            y_range: Some((0.0, 1.0)),
        };
        let style = Style {
            subtitle: setup_line(o),
            ..Style::default()
        };
        render_line_styled(&chart, &style, &png)?;
    }
    f.flush()?;
    Ok(())
}

/// (percent, fraction of victims at or below it).
#[must_use]
pub fn cdf(hist: &[u64]) -> Vec<(f64, f64)> {
    let total: u64 = hist.iter().sum();
    let mut acc = 0u64;
    hist.iter()
        .enumerate()
        .map(|(pct, &n)| {
            acc += n;
            #[expect(clippy::cast_precision_loss, reason = "counts below 2^53")]
            let y = acc as f64 / total.max(1) as f64;
            #[expect(clippy::cast_precision_loss, reason = "index <= 100")]
            (pct as f64, y)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme_names_round_trip() {
        let g = ChipGeometry::paper_scaled();
        for name in SCHEMES {
            let s = parse_scheme(name, &g).unwrap();
            assert!(!s.to_string().is_empty());
        }
        assert_eq!(
            parse_scheme("plan-pred-1/4", &g).unwrap(),
            Scheme::Plan {
                small_chips: 2,
                predict: true
            }
        );
        assert!(parse_scheme("plan-pred-1/16", &g).is_err());
        assert_eq!(
            parse_scheme("baseline-1/8@1", &g).unwrap(),
            Scheme::Baseline {
                chips_per_channel: 1,
                open: 1
            }
        );
        // The default baseline is FEMU's: one open host superblock over every chip.
        assert_eq!(
            parse_scheme("baseline", &g).unwrap(),
            Scheme::Baseline {
                chips_per_channel: 8,
                open: 1
            }
        );
        assert_eq!(
            parse_scheme("baseline", &g).unwrap().to_string(),
            "baseline-8"
        );
        assert_eq!(
            parse_scheme("baseline@18", &g).unwrap().to_string(),
            "baseline-8@18"
        );
        assert!(parse_scheme("baseline@0", &g).is_err());
        // Rows are named as the user typed the scheme (was: plan-pred-1/4 -> "plan-pred-2").
        for name in SCHEMES
            .into_iter()
            .chain(["baseline-1/8@18", "baseline-1/2"])
        {
            assert_eq!(scheme_name(parse_scheme(name, &g).unwrap(), &g), name);
        }
        assert!(parse_scheme("baseline-1/3", &g).is_err());
        assert_eq!(cdf(&[1, 0, 3]), vec![(0.0, 0.25), (1.0, 0.25), (2.0, 1.0)]);
    }

    #[test]
    fn victim_percentiles_from_the_histogram() {
        let mut h = vec![0u64; 101];
        assert_eq!(victim_percentiles(&h), None, "no GC");
        h[20] = 1;
        h[50] = 8;
        h[90] = 1;
        assert_eq!(victim_percentiles(&h), Some([20.0, 50.0, 50.0]));
        h[90] = 9;
        assert_eq!(victim_percentiles(&h), Some([50.0, 50.0, 90.0]));
    }

    #[test]
    fn setup_line_states_the_device_fill_and_seed() {
        let o = default_opts();
        let s = setup_line(&o);
        for want in [
            "16/15 GiB",
            "aged 70% full",
            "(background at 25%)",
            "seed 42",
            "2 drive writes",
            "1/16)",
        ] {
            assert!(s.contains(want), "{s} lacks {want}");
        }
    }
}
