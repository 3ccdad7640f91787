//! `nowa sim sweep`: a grid of simulations run in parallel, one CSV, one plot.
//!
//! Presets reproduce the shape of ssd-iq.md figures:
//! - `fig3b`: normalized WAF (WAF / WAF of uniform) vs two-zone skew, for greedy (naive),
//!   2R-Greedy and 2R-FIFO, plus the analytic "optimal" spare split.
//! - `fig4b`: normalized WAF vs zipf theta, greedy with and without a 0.02% write buffer.
//! - `fig7a`: WAF vs OP (spare/physical, as ssd-iq's simulator defines it), simulated greedy
//!   against WAF ~ 1/(2 OP) and the Lambert-W model.

use super::{run, waf_model_greedy, waf_model_lambert, SimResult, SimSpec};
use crate::plot::{render_line_styled, LineChart, Series, Style};
use nowa_flash::PolicyKind;
use nowa_workload::WorkloadSpec;
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;

/// A named paper figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    Fig3b,
    Fig4b,
    Fig7a,
}

impl std::str::FromStr for Figure {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fig3b" | "3b" => Ok(Figure::Fig3b),
            "fig4b" | "4b" => Ok(Figure::Fig4b),
            "fig7a" | "7a" => Ok(Figure::Fig7a),
            _ => Err(format!(
                "unknown figure '{s}' (expected fig3b, fig4b or fig7a)"
            )),
        }
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

/// The rows of a figure's runs, y normalized by the uniform run of the same series for
/// Fig. 3b and 4b (x = 50 for two-zone, theta 0 for zipf).
fn figure_rows(fig: Figure, points: &[Point], results: &[SimResult]) -> Vec<Row> {
    let mut rows: Vec<Row> = points.iter().zip(results).map(|(p, r)| row(p, r)).collect();
    if matches!(fig, Figure::Fig3b | Figure::Fig4b) {
        let base_x = if fig == Figure::Fig3b { 50.0 } else { 0.0 };
        let bases: Vec<(String, f64)> = rows
            .iter()
            .filter(|r| r.x == base_x)
            .map(|r| (r.series.clone(), r.waf))
            .collect();
        for r in &mut rows {
            if let Some((_, b)) = bases.iter().find(|(s, _)| *s == r.series) {
                r.y = r.waf / b;
            }
        }
    }
    rows
}

/// Assemble rows and the chart of a figure from its results.
pub fn figure_sweep(fig: Figure, points: &[Point], results: &[SimResult]) -> Sweep {
    let rows = figure_rows(fig, points, results);
    let mut series: Vec<Series> = Vec::new();
    for r in &rows {
        match series.iter_mut().find(|s| s.label == r.series) {
            Some(s) => s.points.push((r.x, r.y)),
            None => series.push(Series {
                label: r.series.clone(),
                points: vec![(r.x, r.y)],
            }),
        }
    }
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
            subtitle: (points.first())
                .map_or_else(String::new, |p| setup_line(&p.spec, fig == Figure::Fig7a)),
            reference,
            x_ticks,
            // Normalized WAF around 1: the figure is about the ratio, not its distance from 0.
            y_from_data: false,
            ..Style::default()
        },
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
}
