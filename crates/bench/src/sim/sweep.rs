//! `nowa sim sweep`: a grid of simulations run in parallel, one CSV, one plot.
//!
//! Presets reproduce the shape of ssd-iq.md figures:
//! - `fig3b`: normalized WAF (WAF / WAF of uniform) vs two-zone skew, for greedy (naive),
//!   2R-Greedy and 2R-FIFO, plus the analytic "optimal" spare split.
//! - `fig4b`: normalized WAF vs zipf theta, greedy with and without a 0.02% write buffer.
//! - `fig7a`: WAF vs OP (spare/physical, as ssd-iq's simulator defines it), simulated greedy
//!   against WAF ~ 1/(2 OP) and the Lambert-W model.

use super::{run, waf_model_greedy, waf_model_lambert, SimResult, SimSpec};
use crate::plot::{render_line_styled, LineChart, Series, Spread, Style};
use nowa_flash::PolicyKind;
use nowa_workload::WorkloadSpec;
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;

/// A named paper figure (`"fig3b"` in a spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Figure {
    /// Normalized WAF vs two-zone skew.
    #[value(name = "fig3b", alias = "3b")]
    Fig3b,
    /// Normalized WAF vs zipf theta, with and without a write buffer.
    #[value(name = "fig4b", alias = "4b")]
    Fig4b,
    /// WAF vs OP against the analytic models.
    #[value(name = "fig7a", alias = "7a")]
    Fig7a,
}

impl Figure {
    /// Every figure, in order.
    pub const ALL: [Figure; 3] = [Figure::Fig3b, Figure::Fig4b, Figure::Fig7a];

    /// The name (`fig3b`): the flag's value and the stem of its files (`sim-fig3b.*`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig3b => "fig3b",
            Figure::Fig4b => "fig4b",
            Figure::Fig7a => "fig7a",
        }
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One run of a sweep: which series and x value it belongs to.
#[derive(Debug, Clone)]
pub struct Point {
    pub series: String,
    pub x: f64,
    pub spec: SimSpec,
}

/// One CSV row of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub series: String,
    pub x: f64,
    pub policy: String,
    pub placement: String,
    pub workload: String,
    pub op_spare_over_logical: f64,
    pub op_spare_over_physical: f64,
    pub fill: f64,
    pub write_buffer_pages: u64,
    pub waf: f64,
    pub waf_steady: f64,
    /// FAR of the measured phase.
    pub far: f64,
    /// Mean valid ratio of the measured phase's victims.
    pub victim_valid_ratio: f64,
    /// y as plotted (normalized WAF for fig3b/fig4b, WAF otherwise).
    pub y: f64,
    pub seed: u64,
    pub sim_writes_per_sec: f64,
}

/// A finished sweep.
pub struct Sweep {
    pub rows: Vec<Row>,
    pub chart: LineChart,
    /// The setup subtitle and the model curves (drawn dashed under the simulation).
    pub style: Style,
}

/// The setup line under a sweep's title: device, GC unit, OP, fill, seed, run length.
#[must_use]
pub fn setup_line(base: &SimSpec, op_on_x: bool) -> String {
    let f = &base.ftl;
    let op = if op_on_x {
        "OP on the x axis".to_owned()
    } else {
        format!("OP {:.1}% spare/logical", f.op * 100.0)
    };
    let gib = f.logical_pages as f64 * 4096.0 / f64::from(1u32 << 30);
    let unit_mib = f.unit_pages() as f64 * 4096.0 / f64::from(1u32 << 20);
    format!(
        "{gib:.1} GiB logical, {unit_mib:.0} MiB GC units, {op}, fill {:.0}%, {}+{} drive writes (warm-up + measured), seed {}",
        base.fill * 100.0,
        base.warmup,
        base.volume,
        base.seed
    )
}

fn with(base: &SimSpec, f: impl FnOnce(&mut SimSpec)) -> SimSpec {
    let mut s = base.clone();
    f(&mut s);
    s
}

/// The grid of a figure, built on `base` (geometry, volumes, seed come from it).
pub fn figure_points(fig: Figure, base: &SimSpec) -> Vec<Point> {
    let mut pts = Vec::new();
    match fig {
        Figure::Fig3b => {
            for policy in [
                PolicyKind::Greedy,
                PolicyKind::TwoRGreedy,
                PolicyKind::TwoRFifo,
            ] {
                for x in [50.0, 60.0, 70.0, 80.0, 90.0, 95.0] {
                    let workload = if x == 50.0 {
                        WorkloadSpec::Uniform
                    } else {
                        WorkloadSpec::TwoZone {
                            write_pct: x,
                            space_pct: 100.0 - x,
                        }
                    };
                    let policy = policy.clone();
                    pts.push(Point {
                        series: policy.to_string(),
                        x,
                        spec: with(base, |s| {
                            s.ftl.policy = policy;
                            s.ftl.gc_frontier = None;
                            s.workload = workload;
                        }),
                    });
                }
            }
        }
        Figure::Fig4b => {
            let buffer = ((base.ftl.logical_pages as f64 * 0.0002).round() as u64).max(1);
            for (name, pages) in [("greedy", 0u64), ("greedy + 0.02% write buffer", buffer)] {
                for theta in [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4] {
                    let workload = if theta == 0.0 {
                        WorkloadSpec::Uniform
                    } else {
                        WorkloadSpec::Zipf { theta }
                    };
                    pts.push(Point {
                        series: name.to_string(),
                        x: theta,
                        spec: with(base, |s| {
                            s.ftl.policy = PolicyKind::Greedy;
                            s.ftl.write_buffer_pages = pages;
                            s.workload = workload;
                        }),
                    });
                }
            }
        }
        Figure::Fig7a => {
            for p in [0.05, 0.07, 0.10, 0.15, 0.20, 0.28, 0.35, 0.50] {
                pts.push(Point {
                    series: "simulated greedy".into(),
                    x: p,
                    spec: with(base, |s| {
                        s.ftl.policy = PolicyKind::Greedy;
                        s.ftl.op = p / (1.0 - p);
                        s.workload = WorkloadSpec::Uniform;
                        s.fill = 1.0;
                    }),
                });
            }
        }
    }
    pts
}

/// The grid of a figure once per seed: `seeds` copies of [`figure_points`], the k-th with
/// the base seed + k (the spread over seeds shows which differences are noise).
///
/// # Panics
/// If `seeds` is 0.
#[must_use]
pub fn seeded_points(fig: Figure, base: &SimSpec, seeds: u32) -> Vec<Point> {
    assert!(seeds >= 1, "a sweep runs at least one seed");
    let mut pts = Vec::new();
    for k in 0..u64::from(seeds) {
        let b = with(base, |s| s.seed = base.seed.wrapping_add(k));
        pts.extend(figure_points(fig, &b));
    }
    pts
}

/// Run points in parallel (rayon). `progress` is called after each finished run.
pub fn run_points(
    points: &[Point],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<SimResult>, super::SimError> {
    let done = std::sync::atomic::AtomicUsize::new(0);
    points
        .par_iter()
        .map(|p| {
            let r = run(&p.spec, None);
            progress(
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                points.len(),
            );
            r
        })
        .collect()
}

/// Best split of spare space between the two zones of an X/Y workload, each zone cleaned by
/// greedy (ssd-iq.md's "Optimal", computed from the greedy model per zone).
pub fn optimal_two_zone_waf(alpha: f64, write_frac: f64, space_frac: f64, np: u32) -> f64 {
    let spare = alpha - 1.0; // in units of the whole logical space
    let mut best = f64::INFINITY;
    for i in 1..1000 {
        let s_hot = spare * i as f64 / 1000.0;
        let a_hot = (space_frac + s_hot) / space_frac;
        let a_cold = (1.0 - space_frac + spare - s_hot) / (1.0 - space_frac);
        let w = write_frac * waf_model_greedy(a_hot, np)
            + (1.0 - write_frac) * waf_model_greedy(a_cold, np);
        best = best.min(w);
    }
    best
}

/// The CSV row of one run.
fn row(p: &Point, r: &SimResult) -> Row {
    Row {
        series: p.series.clone(),
        x: p.x,
        policy: r.policy.clone(),
        placement: r.placement.clone(),
        workload: r.workload.clone(),
        op_spare_over_logical: r.layout.op_spare_over_logical,
        op_spare_over_physical: r.layout.op_spare_over_physical,
        fill: r.fill,
        write_buffer_pages: p.spec.ftl.write_buffer_pages,
        waf: r.waf,
        waf_steady: r.waf_steady,
        far: r.far.far,
        victim_valid_ratio: r.victim_valid_ratio,
        y: r.waf,
        seed: r.seed,
        sim_writes_per_sec: r.sim_writes_per_sec,
    }
}

/// The rows of a figure's runs, y normalized by the uniform run of the same series and seed
/// for Fig. 3b and 4b (x = 50 for two-zone, theta 0 for zipf).
fn figure_rows(fig: Figure, points: &[Point], results: &[SimResult]) -> Vec<Row> {
    let mut rows: Vec<Row> = points.iter().zip(results).map(|(p, r)| row(p, r)).collect();
    if matches!(fig, Figure::Fig3b | Figure::Fig4b) {
        let base_x = if fig == Figure::Fig3b { 50.0 } else { 0.0 };
        let bases: Vec<(String, u64, f64)> = rows
            .iter()
            .filter(|r| r.x == base_x)
            .map(|r| (r.series.clone(), r.seed, r.waf))
            .collect();
        // A full grid has every series' uniform run; a subset of the grid (the reproduction's
        // staleness check runs only the points it reads) keeps y = WAF where it has none.
        for r in &mut rows {
            if let Some(b) = bases.iter().find(|b| b.0 == r.series && b.1 == r.seed) {
                r.y = r.waf / b.2;
            }
        }
    }
    rows
}

/// An x and the y of every seed at it.
type XYs = (f64, Vec<f64>);

/// The series of the rows (y averaged over seeds per x) and, with more than one seed, their
/// min-max spread.
fn series_of(rows: &[Row]) -> (Vec<Series>, Vec<Spread>) {
    let mut cells: Vec<(String, Vec<XYs>)> = Vec::new();
    for r in rows {
        let i = match cells.iter().position(|c| c.0 == r.series) {
            Some(i) => i,
            None => {
                cells.push((r.series.clone(), Vec::new()));
                cells.len() - 1
            }
        };
        match cells[i].1.iter_mut().find(|p| p.0 == r.x) {
            Some(p) => p.1.push(r.y),
            None => cells[i].1.push((r.x, vec![r.y])),
        }
    }
    let seeds = cells.iter().flat_map(|c| &c.1).map(|p| p.1.len()).max();
    let mut series = Vec::new();
    let mut spread = Vec::new();
    for (label, pts) in cells {
        let mean = |ys: &[f64]| ys.iter().sum::<f64>() / ys.len() as f64;
        let lo = |ys: &[f64]| ys.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = |ys: &[f64]| ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        series.push(Series {
            label: label.clone(),
            points: pts.iter().map(|(x, ys)| (*x, mean(ys))).collect(),
        });
        if seeds > Some(1) {
            spread.push(Spread {
                label,
                points: pts.iter().map(|(x, ys)| (*x, lo(ys), hi(ys))).collect(),
            });
        }
    }
    (series, spread)
}

/// The seeds of the rows, fewest first.
fn seeds_of(rows: &[Row]) -> Vec<u64> {
    let mut s: Vec<u64> = rows.iter().map(|r| r.seed).collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// Assemble rows and the chart of a figure from its results.
pub fn figure_sweep(fig: Figure, points: &[Point], results: &[SimResult]) -> Sweep {
    let rows = figure_rows(fig, points, results);
    let (series, spread) = series_of(&rows);
    let np = points
        .first()
        .map_or(256, |p| p.spec.ftl.unit_pages() as u32);
    let mut reference = Vec::new();
    let (title, x_label, y_label, log_y) = match fig {
        Figure::Fig3b => {
            // The analytic optimum at the same alpha, normalized like the rest.
            let alpha = results.first().map_or(1.07, |r| r.alpha_eff);
            let uni = waf_model_greedy(alpha, np);
            let pts = [50.0, 60.0, 70.0, 80.0, 90.0, 95.0]
                .iter()
                .map(|&x| {
                    (
                        x,
                        optimal_two_zone_waf(alpha, x / 100.0, 1.0 - x / 100.0, np) / uni,
                    )
                })
                .collect();
            reference.push(Series {
                label: "optimal spare split (greedy model)".into(),
                points: pts,
            });
            (
                "Two-zone workload: WAF normalized to uniform (cf. ssd-iq Fig. 3b)",
                "write skew X of X/(100-X)",
                "WAF / WAF(uniform)",
                false,
            )
        }
        Figure::Fig4b => (
            "Zipf workload: WAF normalized to uniform (cf. ssd-iq Fig. 4b)",
            "zipf theta",
            "WAF / WAF(uniform)",
            false,
        ),
        Figure::Fig7a => {
            let xs: Vec<f64> = rows.iter().map(|r| r.x).collect();
            // The paper's two curves: the approximation and the analytic greedy model.
            reference.push(Series {
                label: "1 / (2 OP) (paper's approximation)".into(),
                points: xs.iter().map(|&x| (x, 1.0 / (2.0 * x))).collect(),
            });
            reference.push(Series {
                label: "Lambert-W model".into(),
                points: xs
                    .iter()
                    .map(|&x| (x, waf_model_lambert(1.0 / (1.0 - x))))
                    .collect(),
            });
            (
                "WAF vs over-provisioning, uniform writes (cf. ssd-iq Fig. 7a)",
                "OP = spare / physical",
                "WAF",
                true,
            )
        }
    };
    let x_ticks = xs_of(&rows);
    let subtitle = subtitle(fig, points, &rows);
    Sweep {
        rows,
        chart: LineChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series,
            // OP 5% to 50%: a decade, and on a linear axis 5% and 7% would share a label.
            log_x: fig == Figure::Fig7a,
            log_y,
            y_range: None,
        },
        style: Style {
            subtitle,
            reference,
            spread,
            x_ticks,
            // Normalized WAF around 1: the figure is about the ratio, not its distance from 0.
            y_from_data: false,
            ..Style::default()
        },
    }
}

/// The setup line; over several seeds, which seeds and that the band is their min-max.
fn subtitle(fig: Figure, points: &[Point], rows: &[Row]) -> String {
    let Some(p) = points.first() else {
        return String::new();
    };
    let line = setup_line(&p.spec, fig == Figure::Fig7a);
    match seeds_of(rows).as_slice() {
        [] | [_] => line,
        s => {
            let n = s.len();
            let line = line.replace(
                &format!("seed {}", s[0]),
                &format!("seeds {}-{}", s[0], s[n - 1]),
            );
            format!("{line}; mean of {n} seeds, band: min-max")
        }
    }
}

/// The distinct x values of the rows, in order: every simulated point gets its tick label.
fn xs_of(rows: &[Row]) -> Vec<f64> {
    let mut xs: Vec<f64> = rows.iter().map(|r| r.x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    assert!(rows.is_empty() || !xs.is_empty(), "every row has an x");
    xs
}

/// Write the rows as CSV (after whatever `out` already holds: the run's identity line).
pub fn write_csv(rows: &[Row], out: impl std::io::Write) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Render the chart (.png or .svg by extension).
pub fn write_plot(sweep: &Sweep, path: &Path) -> Result<(), String> {
    render_line_styled(&sweep.chart, &sweep.style, path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> SimSpec {
        let mut s = SimSpec::default();
        s.ftl.logical_pages = 8192;
        s.ftl.pages_per_block = 32;
        s.ftl.blocks_per_superblock = 1;
        s.warmup = 0.5;
        s.volume = 0.5;
        s
    }

    /// Every sweep figure, rendered from a small run: no overprinted text, no covered data,
    /// the setup in the subtitle, and (Fig. 7a) the simulation drawn over the models, not
    /// under them.
    #[test]
    fn sweep_figures_pass_the_layout_check() {
        let dir = tempfile::tempdir().unwrap();
        for fig in [Figure::Fig3b, Figure::Fig4b, Figure::Fig7a] {
            let pts = figure_points(fig, &tiny());
            let res = run_points(&pts, &|_, _| {}).unwrap();
            let sw = figure_sweep(fig, &pts, &res);
            let p = dir.path().join(format!("{fig:?}.svg"));
            write_plot(&sw, &p).unwrap();
            crate::plot_layout::check_file(&p).unwrap();
            assert!(
                sw.style.subtitle.contains("seed 42"),
                "{}",
                sw.style.subtitle
            );
            let every_x = sw.rows.iter().all(|r| sw.style.x_ticks.contains(&r.x));
            assert!(every_x, "every simulated x is a labelled tick");
        }
        let pts = figure_points(Figure::Fig7a, &tiny());
        let sw = figure_sweep(Figure::Fig7a, &pts, &run_points(&pts, &|_, _| {}).unwrap());
        let labels: Vec<&str> = sw.chart.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            ["simulated greedy"],
            "models are references, drawn first"
        );
        assert_eq!(sw.style.reference.len(), 2);
        assert!(sw.chart.log_x && sw.chart.log_y);
    }

    /// Over three seeds every series gets a min-max band holding its mean, each seed is
    /// normalized by its own uniform run (Fig. 4b: y = 1 at theta 0 for every seed), and the
    /// subtitle names the seeds.
    #[test]
    fn seeded_sweeps_draw_the_spread_over_seeds() {
        let pts = seeded_points(Figure::Fig4b, &tiny(), 3);
        assert_eq!(pts.len(), 3 * figure_points(Figure::Fig4b, &tiny()).len());
        let sw = figure_sweep(Figure::Fig4b, &pts, &run_points(&pts, &|_, _| {}).unwrap());
        assert_eq!(sw.style.spread.len(), sw.chart.series.len());
        for (s, band) in sw.chart.series.iter().zip(&sw.style.spread) {
            assert_eq!(s.label, band.label);
            for (&(x, y), &(bx, lo, hi)) in s.points.iter().zip(&band.points) {
                assert!(x == bx && lo <= y && y <= hi, "{x}: {lo} <= {y} <= {hi}");
            }
        }
        let at_zero = sw.rows.iter().filter(|r| r.x == 0.0);
        assert!(at_zero.clone().count() == 6 && at_zero.clone().all(|r| r.y == 1.0));
        assert!(
            sw.style.subtitle.contains("seeds 42-44"),
            "{}",
            sw.style.subtitle
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("spread.svg");
        write_plot(&sw, &p).unwrap();
        crate::plot_layout::check_file(&p).unwrap();
    }
}
