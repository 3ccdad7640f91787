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
    figure_run_stoppable(o, scheme, workload, streams, tick, &|| false)
}

/// [`figure_run_observed`] that stops once `stop` holds (Ctrl-C), as [`run_cancellable`]:
/// the result is what ran until then, marked `interrupted`.
fn figure_run_stoppable(
    o: &FigureOpts,
    scheme: &str,
    workload: WorkloadKind,
    streams: bool,
    tick: &mut dyn FnMut(u64, u64),
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<RunResult> {
    let s = parse_scheme(scheme, &o.geometry)?;
    run_cancellable(
        &RunSpec {
            track_streams: streams,
            ..spec(o, s, workload)
        },
        tick,
        stop,
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
/// Once `stop` holds (Ctrl-C) the current run ends early and no other starts: `log` hears
/// of and the CSVs keep the runs that finished (not the cut one), and the chart, which needs
/// all eight, is not drawn.
///
/// # Errors
/// A run fails or a file cannot be written.
pub fn figure1(
    o: &FigureOpts,
    out: &Path,
    log: &mut dyn Observer,
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<Vec<RunResult>> {
    let mut rows = Vec::new();
    let mut variants = Vec::new();
    'variants: for (label, reserve, open) in fig1_variants(o) {
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
            let mut tick = |w, t| log.tick(w, t);
            let r = figure_run_stoppable(&v, &name, WorkloadKind::Fio, true, &mut tick, stop)?;
            if r.interrupted {
                break 'variants;
            }
            log.ran(&r);
            variants.push((label, reserve, r.clone()));
            if label != "min-reserve" {
                rows.push(r);
            }
        }
    }
    write_csv(&out.join("plan-fig1.csv"), "fig1", &rows)?;
    write_streams_csv(&out.join("plan-fig1-streams.csv"), &variants)?;
    if rows.len() == 8 {
        plot_fig1(o, &rows, &out.join("plan-fig1.png"))?;
    }
    Ok(rows)
}

/// Figure 1 as bars per parallelism (every level labelled): WAF over WAF at 1/8 and
/// throughput over full, for both baselines, beside the paper's values.
fn plot_fig1(o: &FigureOpts, rows: &[RunResult], path: &Path) -> anyhow::Result<()> {
    let (chart, style) = fig1_chart(o, rows)?;
    render_bar_styled(&chart, &style, path)?;
    Ok(())
}

/// The chart of [`plot_fig1`] (apart from rendering: the tests draw it as SVG). The paper's
/// marks are its two relative values, against its reading (18 + 1 open superblocks): WAF at
/// full 2.3x WAF at 1/8, throughput at 1/2 1.4x full. The levels each series is divided by
/// (WAF at 1/8, throughput at full) are 1 by construction, so no mark is drawn there: a mark
/// at 1 would read as the paper agreeing with a value the division forced.
fn fig1_chart(o: &FigureOpts, rows: &[RunResult]) -> anyhow::Result<(BarChart, Style)> {
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
    let none = vec![f64::NAN; 4];
    let bar_reference = vec![
        none.clone(),
        vec![f64::NAN, f64::NAN, f64::NAN, 2.3],
        none,
        vec![f64::NAN, f64::NAN, 1.4, f64::NAN],
    ];
    // No mark where a series is 1 by its own division (WAF at 1/8, throughput at full).
    for (g, marks) in bar_reference.iter().enumerate() {
        let anchor = if g < 2 { 0 } else { 3 };
        assert!(marks[anchor].is_nan(), "a paper mark on a normalised bar");
    }
    let style = Style {
        subtitle: format!(
            "{}; paper (its 18+1 reading): WAF at full 2.3x WAF at 1/8, throughput at 1/2 1.4x full",
            setup_line(o)
        ),
        bar_reference,
        ..Style::default()
    };
    Ok((chart, style))
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
/// Once `stop` holds (Ctrl-C), as [`figure1`]: `plan-fig3-6.csv` keeps the runs that
/// finished, and no chart is drawn (each compares every scheme).
///
/// # Errors
/// A run fails or a file cannot be written.
pub fn figures3to6(
    o: &FigureOpts,
    out: &Path,
    log: &mut dyn Observer,
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<Vec<RunResult>> {
    let rows = fig3_runs(o, log, stop)?;
    write_csv(&out.join("plan-fig3-6.csv"), "fig3-6", &rows)?;
    if rows.len() < SCHEMES.len() * (o.workloads.len() + o.captured.len()) {
        return Ok(rows);
    }
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

/// The paper's PLAN-Pred-1/4 against its baseline, per workload it ran (section 5, text of
/// Figures 3, 4 and 6): WAF (FIO -42%; TPC-C and Fileserver "at least 25%" less, drawn at
/// the bound; YCSB -5%; GCC an absolute 1.04-1.07, drawn at 1.055 as [`PAPER_GCC_WAF`]),
/// blocks erased (FIO -46%, GCC -69%), throughput (FIO +30%, Fileserver ~+10%, TPC-C, YCSB
/// and GCC "kept, if not improved": 1). NaN: the paper gives none.
const PAPER_PRED: [(&str, [f64; 3]); 5] = [
    ("fio", [0.58, 0.54, 1.30]),
    ("tpcc", [0.75, f64::NAN, 1.0]),
    ("ycsb", [0.95, f64::NAN, 1.0]),
    ("fileserver", [0.75, f64::NAN, 1.10]),
    ("gcc", [f64::NAN, 0.31, 1.0]),
];

/// GCC's WAF under PLAN in the paper (1.04-1.07): an absolute value, not a ratio.
const PAPER_GCC_WAF: f64 = 1.055;

/// The paper's workload a workload of ours stands for: a generator by its name, a captured
/// trace by the paper workload it stands for (docs/plan.md "Workloads").
fn paper_workload(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    let kind = if n.contains("compile") || n.contains("gcc") {
        "gcc"
    } else {
        ["fio", "tpcc", "ycsb", "fileserver"]
            .into_iter()
            .find(|k| n.contains(k))?
    };
    PAPER_PRED.iter().find(|p| p.0 == kind).map(|p| p.0)
}

/// The paper's marks of one chart (`fig`: 0 = Figure 3's WAF, drawn as the paper's change
/// applied to our baseline's WAF `base[c]`; 1 = Figure 4, 2 = Figure 6, ratios as drawn):
/// on PLAN-Pred-1/4's bars only, NaN elsewhere.
fn paper_marks(fig: usize, cats: &[String], base: &[f64]) -> Vec<Vec<f64>> {
    assert!(fig < 3 && base.len() == cats.len(), "a base per category");
    let pred = SCHEMES.iter().position(|s| *s == "plan-pred-1/4");
    let marks: Vec<f64> = cats
        .iter()
        .zip(base)
        .map(|(c, &b)| {
            let Some(w) = paper_workload(c) else {
                return f64::NAN;
            };
            let r = PAPER_PRED
                .iter()
                .find(|p| p.0 == w)
                .map_or(f64::NAN, |p| p.1[fig]);
            match (fig, w) {
                (0, "gcc") => PAPER_GCC_WAF,
                (0, _) => r * b,
                _ => r,
            }
        })
        .collect();
    (0..SCHEMES.len())
        .map(|i| {
            if Some(i) == pred {
                marks.clone()
            } else {
                vec![f64::NAN; cats.len()]
            }
        })
        .collect()
}

/// Per scheme, `f(run, baseline's run)` on each of the `n` workloads (runs by workload, then
/// scheme, the baseline first).
fn per_scheme(
    rows: &[RunResult],
    n: usize,
    f: &dyn Fn(&RunResult, &RunResult) -> f64,
) -> Vec<(String, Vec<f64>)> {
    assert!(
        rows.len() >= n * SCHEMES.len(),
        "every scheme on every workload"
    );
    SCHEMES
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let vals = (0..n)
                .map(|w| f(&rows[w * SCHEMES.len() + i], &rows[w * SCHEMES.len()]))
                .collect();
            (s.to_owned(), vals)
        })
        .collect()
}

/// Figures 3, 4, 6 over the workloads `cats` (their runs first in `rows`), on log value axes
/// where the values span more than a decade (Figure 6 always: one scheme's gain of several
/// times leaves the others as stubs on a linear axis), with the paper's values on
/// PLAN-Pred-1/4's bars. Throughput marks only on the generators: a capture replays at its
/// own request rate (open loop).
fn fig3_bars(
    o: &FigureOpts,
    out: &Path,
    suffix: &str,
    rows: &[RunResult],
    cats: &[String],
) -> anyhow::Result<()> {
    for (file, chart, style) in fig3_charts(o, suffix, rows, cats) {
        render_bar_styled(&chart, &style, &out.join(format!("{file}{suffix}.png")))?;
    }
    Ok(())
}

/// The charts of [`fig3_bars`] with their file stems (apart from rendering: the tests draw
/// them as SVG).
fn fig3_charts(
    o: &FigureOpts,
    suffix: &str,
    rows: &[RunResult],
    cats: &[String],
) -> Vec<(&'static str, BarChart, Style)> {
    let per = |f: &dyn Fn(&RunResult, &RunResult) -> f64| per_scheme(rows, cats.len(), f);
    let base: Vec<f64> = (0..cats.len())
        .map(|w| rows[w * SCHEMES.len()].waf)
        .collect();
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
            "IOPS / baseline (log)",
            per(&|r, b| r.iops / b.iops),
        ),
    ];
    let mut charts = Vec::new();
    for (fig, (file, title, y, groups)) in bars.into_iter().enumerate() {
        let marks = if fig == 2 && !suffix.is_empty() {
            Vec::new()
        } else {
            paper_marks(fig, cats, &base)
        };
        let said = match fig {
            0 => "paper: PLAN-Pred-1/4's change against its baseline applied to ours (GCC: its 1.04-1.07)",
            _ => "paper: PLAN-Pred-1/4 / its baseline",
        };
        let subtitle = if marks.iter().flatten().any(|v| v.is_finite()) {
            format!("{}; {said}", setup_line(o))
        } else {
            setup_line(o)
        };
        let style = Style {
            subtitle,
            log_y: fig == 2,
            bar_reference: marks,
            ..Style::default()
        };
        let chart = BarChart {
            title: title.into(),
            y_label: y.into(),
            categories: cats.to_vec(),
            groups,
        };
        charts.push((file, chart, style));
    }
    charts
}

/// Every scheme on every generator workload, then on every captured trace; the runs that
/// finished before `stop` held.
fn fig3_runs(
    o: &FigureOpts,
    log: &mut dyn Observer,
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<Vec<RunResult>> {
    let mut rows = Vec::new();
    for &w in &o.workloads {
        for name in SCHEMES {
            let mut tick = |d, t| log.tick(d, t);
            let r = figure_run_stoppable(o, name, w, false, &mut tick, stop)?;
            if r.interrupted {
                return Ok(rows);
            }
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
            let mut r = replay_cancellable(&s, path, None, &mut |d, t| log.tick(d, t), stop)?;
            r.workload.clone_from(label);
            if r.interrupted {
                return Ok(rows);
            }
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

/// A victim CDF that would be a flat line at the top of its chart: at least this share of
/// the victims were empty (0% valid), so the curve starts at >= 0.95 and shows nothing a
/// table does not (the table, `plan-fig5-victims.md`, gives it instead).
const FLAT_EMPTY_SHARE: f64 = 0.95;

/// Share of a run's victims that were empty (NaN without GC).
#[expect(clippy::cast_precision_loss, reason = "counts below 2^53")]
fn empty_share(hist: &[u64]) -> f64 {
    let n: u64 = hist.iter().sum();
    if n == 0 {
        return f64::NAN;
    }
    hist.first().copied().unwrap_or(0) as f64 / n as f64
}

/// Figure 5: CDF of the victims' valid ratio, one chart per workload, every run's
/// percentiles in `plan-fig5-victims.csv` and as a table per workload in
/// `plan-fig5-victims.md` (docs/plan.md links it). A run without GC, or whose victims were
/// at least 95% empty ([`FLAT_EMPTY_SHARE`]), is left out of its chart and named under it (the
/// table has it); a workload with fewer than two curves left gets no chart. The x axis spans
/// where the drawn curves rise (they overlap within a few percent on a 0-100 axis), and the
/// baselines are drawn last, on top of the others.
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
        for r in runs {
            let [a, b, c] = victim_percentiles(&r.victim_hist).unwrap_or([f64::NAN; 3]);
            f.write_record([
                w.clone(),
                r.scheme.clone(),
                r.victim_hist.iter().sum::<u64>().to_string(),
                a.to_string(),
                b.to_string(),
                c.to_string(),
                format!("{:.2}", r.mean_victim_ratio() * 100.0),
            ])?;
        }
        figure5_chart(o, w, runs, &out.join(format!("plan-fig5-{w}.png")))?;
    }
    f.flush()?;
    let md = out.join("plan-fig5-victims.md");
    std::fs::write(&md, victims_table(o, cats, rows))
        .with_context(|| format!("{}", md.display()))?;
    Ok(())
}

/// One workload's chart of Figure 5 (removed when fewer than two curves are worth drawing:
/// a stale chart of an earlier run must not stay behind).
fn figure5_chart(o: &FigureOpts, w: &str, runs: &[RunResult], png: &Path) -> anyhow::Result<()> {
    let (mut series, mut flat) = (Vec::new(), Vec::new());
    for r in runs {
        let e = empty_share(&r.victim_hist);
        if e.is_nan() {
            flat.push(format!("{} (no GC)", r.scheme));
        } else if e >= FLAT_EMPTY_SHARE {
            flat.push(format!("{} ({:.0}% empty)", r.scheme, e * 100.0));
        } else {
            series.push(Series {
                label: r.scheme.clone(),
                points: cdf(&r.victim_hist),
            });
        }
    }
    if series.len() < 2 {
        let _ = std::fs::remove_file(png);
        return Ok(());
    }
    // Baselines last: drawn on top, so a scheme that equals the baseline cannot hide it.
    series.sort_by_key(|s| s.label.starts_with("baseline"));
    let (lo, hi) = rise_range(&series);
    for s in &mut series {
        s.points.retain(|p| (lo..=hi).contains(&p.0));
    }
    let mut x_label = "valid ratio of the GC victim (%)".to_owned();
    if !flat.is_empty() {
        x_label = format!("{x_label}; in the table, not drawn: {}", flat.join(", "));
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
        subtitle: format!("{}; x axis: {lo:.0}-{hi:.0}% valid", setup_line(o)),
        ..Style::default()
    };
    render_line_styled(&chart, &style, png)?;
    Ok(())
}

/// The x range (percent, multiples of 5) where the curves rise: from below the first point
/// any curve leaves 0.5% to past the last point one reaches 99.9%.
fn rise_range(series: &[Series]) -> (f64, f64) {
    let first = |s: &Series| s.points.iter().find(|p| p.1 > 0.005).map_or(0.0, |p| p.0);
    let last = |s: &Series| {
        s.points
            .iter()
            .find(|p| p.1 >= 0.999)
            .map_or(100.0, |p| p.0)
    };
    let lo = series.iter().map(first).fold(100.0, f64::min);
    let hi = series.iter().map(last).fold(0.0, f64::max);
    let lo = ((lo - 1.0).max(0.0) / 5.0).floor() * 5.0;
    let hi = ((hi + 1.0).min(100.0) / 5.0).ceil() * 5.0;
    assert!(lo < hi, "a curve rises somewhere in 0..100");
    (lo, hi)
}

/// `plan-fig5-victims.md`: per workload, each scheme's victims, their median and mean valid
/// ratio and the share that were empty: what Figure 5's charts cannot show where CDFs are
/// flat or overlap.
fn victims_table(o: &FigureOpts, cats: &[String], rows: &[RunResult]) -> String {
    use std::fmt::Write as _;
    let mut s = format!(
        "# Figure 5: victims' valid ratio per workload and scheme\n\nGenerated by `nowa plan figures` ({}). \
         Per cell: median valid ratio of the GC victims in % / mean in % / share of victims that were empty / victims collected \
         (Partial GC's are blocks, the others' superblocks); \"-\": no GC. \
         The paper: PLAN (plan-ssd-parallelism), referenced in docs/papers.md.\n\n| workload |",
        setup_line(o)
    );
    for sch in SCHEMES {
        let _ = write!(s, " {sch} |");
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(SCHEMES.len()));
    for (wi, w) in cats.iter().enumerate() {
        let _ = write!(s, "\n| {w} |");
        for r in &rows[wi * SCHEMES.len()..(wi + 1) * SCHEMES.len()] {
            let n: u64 = r.victim_hist.iter().sum();
            match victim_percentiles(&r.victim_hist) {
                None => s.push_str(" - |"),
                Some([_, p50, _]) => {
                    let _ = write!(
                        s,
                        " {p50:.0} / {:.1} / {:.0}% / {n} |",
                        r.mean_victim_ratio() * 100.0,
                        empty_share(&r.victim_hist) * 100.0
                    );
                }
            }
        }
    }
    s.push('\n');
    s
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
mod figure_tests;

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
