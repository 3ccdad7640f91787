//! ssd-iq: the simulator's Figures 3b, 4b and 7a (`nowa sim sweep`), on nowa's simulator.

use super::{Measured, Scale, Spec};
use crate::Error;
use nowa_bench::sim::sweep::{self, Figure, Row};
use nowa_flash::PolicyKind;
use std::path::Path;

/// The sweeps' device flags at `scale` (the docs' figures: 8 GiB).
fn flags(scale: Scale, seed: u64) -> Vec<String> {
    let cap = match scale {
        Scale::Quick => "1GiB",
        Scale::Full => "8GiB",
    };
    vec![format!("--capacity={cap}"), format!("--seed={seed}")]
}

fn y_at(rows: &[Row], series: &str, x: f64) -> Option<f64> {
    rows.iter()
        .find(|r| r.series == series && (r.x - x).abs() < 1e-9)
        .map(|r| r.y)
}

/// One figure: its runs, CSV and PNG under `dir`; its rows.
fn figure(
    fig: Figure,
    base: &nowa_bench::sim::SimSpec,
    dir: &Path,
    job: &crate::sim::Spec,
) -> Result<Vec<Row>, Error> {
    let points = sweep::figure_points(fig, base);
    let results = sweep::run_points(&points, &|_, _| {}).map_err(crate::sim::sim_error)?;
    assert_eq!(points.len(), results.len(), "one result per point");
    let sw = sweep::figure_sweep(fig, &points, &results);
    assert!(!sw.rows.is_empty(), "a figure has rows");
    let stem = format!("sim-{}", format!("{fig:?}").to_ascii_lowercase());
    let csv = dir.join(format!("{stem}.csv"));
    let id = crate::Identity::now("sim sweep", job, job.seed);
    let file = crate::csv_file(&csv, &id)?;
    sweep::write_csv(&sw.rows, file).map_err(|e| Error::io(&csv, e))?;
    let png = dir.join(format!("{stem}.png"));
    sweep::write_plot(&sw, &png).map_err(|e| Error::Io {
        path: png.clone(),
        source: e.into(),
    })?;
    Ok(sw.rows)
}

/// What one item reads: its figure, its series and x (a normalized y also reads the series'
/// uniform run: x 50 in Fig. 3b, 0 in Fig. 4b).
struct Read {
    fig: Figure,
    series: String,
    x: f64,
}

/// Every (figure, series, x) the items read.
fn reads() -> Vec<Read> {
    let fifo = PolicyKind::TwoRFifo.to_string();
    let greedy = PolicyKind::Greedy.to_string();
    let r = |fig, series: &str, x| Read {
        fig,
        series: series.to_owned(),
        x,
    };
    vec![
        r(Figure::Fig3b, &fifo, 90.0),
        r(Figure::Fig3b, &fifo, 50.0),
        r(Figure::Fig3b, &greedy, 95.0),
        r(Figure::Fig3b, &greedy, 50.0),
        r(Figure::Fig4b, "greedy", 0.8),
        r(Figure::Fig4b, "greedy", 0.0),
        r(Figure::Fig4b, "greedy", 1.2),
        r(Figure::Fig4b, BUFFERED, 1.2),
        r(Figure::Fig7a, "simulated greedy", 0.05),
        r(Figure::Fig7a, "simulated greedy", 0.10),
    ]
}

const BUFFERED: &str = "greedy + 0.02% write buffer";

/// The items of the three figures' rows.
fn items(r3: &[Row], r4: &[Row], r7: &[Row]) -> Vec<(&'static str, Option<f64>)> {
    let fifo = PolicyKind::TwoRFifo.to_string();
    let greedy = PolicyKind::Greedy.to_string();
    let waf = |rows: &[Row], s: &str, x: f64| {
        rows.iter()
            .find(|r| r.series == s && (r.x - x).abs() < 1e-9)
            .map(|r| r.waf)
    };
    vec![
        (
            "Fig. 3b: 2R-FIFO WAF at 90/10 / uniform",
            y_at(r3, &fifo, 90.0),
        ),
        (
            "Fig. 3b: naive greedy WAF at 95/5 / uniform",
            y_at(r3, &greedy, 95.0),
        ),
        (
            "Fig. 4b: greedy WAF at zipf 0.8 / uniform",
            y_at(r4, "greedy", 0.8),
        ),
        (
            "Fig. 4b: WAF at zipf 1.2, 0.02% write buffer / none",
            waf(r4, BUFFERED, 1.2)
                .zip(waf(r4, "greedy", 1.2))
                .map(|(b, n)| b / n),
        ),
        (
            "Fig. 7a: greedy WAF at OP 5% (spare/physical)",
            waf(r7, "simulated greedy", 0.05),
        ),
        (
            "Fig. 7a: greedy WAF at OP 10% (spare/physical)",
            waf(r7, "simulated greedy", 0.10),
        ),
    ]
}

/// The figure's command, per item.
fn fig_of(item: &str) -> &'static str {
    if item.starts_with("Fig. 3b") {
        "fig3b"
    } else if item.starts_with("Fig. 4b") {
        "fig4b"
    } else {
        assert!(item.starts_with("Fig. 7a"), "{item}: an ssd-iq figure");
        "fig7a"
    }
}

/// The base spec, the scale line and the command of each figure.
fn setup(spec: &Spec) -> Result<(nowa_bench::sim::SimSpec, String, Vec<String>), Error> {
    let f = flags(spec.scale, spec.seed);
    let job = crate::sim::Spec::from_flags(&crate::sim::parse_flags(&f)?)?;
    let base = job.bench()?;
    let scale = format!(
        "{} logical, OP 7% spare/logical, 8 MiB superblocks, 2 + 2 drive writes",
        f[0].trim_start_matches("--capacity=")
    );
    Ok((base, scale, f))
}

fn measured(its: Vec<(&'static str, Option<f64>)>, scale: &str, f: &[String]) -> Vec<Measured> {
    its.into_iter()
        .filter_map(|(item, v)| {
            let cmd = format!("nowa sim sweep --figure {} {}", fig_of(item), f.join(" "));
            v.map(|v| Measured::new(item, v, scale, &cmd))
        })
        .collect()
}

/// The ssd-iq entries of `spec` from only the runs they read (10 of the figures' 46 points;
/// no files): the same values as [`run`]'s, each point being its own seeded simulation.
///
/// # Errors
/// A simulation fails.
pub fn entries_only(spec: &Spec) -> Result<Vec<Measured>, Error> {
    let (base, scale, f) = setup(spec)?;
    let rd = reads();
    let rows = |fig: Figure| -> Result<Vec<Row>, Error> {
        let points: Vec<_> = sweep::figure_points(fig, &base)
            .into_iter()
            .filter(|p| {
                rd.iter()
                    .any(|r| r.fig == fig && r.series == p.series && (r.x - p.x).abs() < 1e-9)
            })
            .collect();
        assert_eq!(
            points.len(),
            rd.iter().filter(|r| r.fig == fig).count(),
            "every read point is in its figure"
        );
        let results = sweep::run_points(&points, &|_, _| {}).map_err(crate::sim::sim_error)?;
        let rows = sweep::figure_sweep(fig, &points, &results).rows;
        assert_eq!(rows.len(), points.len(), "one row per point");
        Ok(rows)
    };
    let (r3, r4, r7) = (
        rows(Figure::Fig3b)?,
        rows(Figure::Fig4b)?,
        rows(Figure::Fig7a)?,
    );
    Ok(measured(items(&r3, &r4, &r7), &scale, &f))
}

pub(super) fn run(
    spec: &Spec,
    dir: &Path,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<Vec<Measured>, Error> {
    let (base, scale, f) = setup(spec)?;
    let job = crate::sim::Spec::from_flags(&crate::sim::parse_flags(&f)?)?;
    sub(0, 3, "Figure 3b");
    let r3 = figure(Figure::Fig3b, &base, dir, &job)?;
    sub(1, 3, "Figure 4b");
    let r4 = figure(Figure::Fig4b, &base, dir, &job)?;
    sub(2, 3, "Figure 7a");
    let r7 = figure(Figure::Fig7a, &base, dir, &job)?;
    Ok(measured(items(&r3, &r4, &r7), &scale, &f))
}
