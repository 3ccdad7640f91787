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

pub(super) fn run(
    spec: &Spec,
    dir: &Path,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<Vec<Measured>, Error> {
    let f = flags(spec.scale, spec.seed);
    let job = crate::sim::Spec::from_flags(&crate::sim::parse_flags(&f)?)?;
    let base = job.bench()?;
    let scale = format!(
        "{} logical, OP 7% spare/logical, 8 MiB superblocks, 2 + 2 drive writes",
        f[0].trim_start_matches("--capacity=")
    );
    let cmd = |fig: &str| format!("nowa sim sweep --figure {fig} {}", f.join(" "));
    let mut out = Vec::new();
    sub(0, 3, "Figure 3b");
    let r3 = figure(Figure::Fig3b, &base, dir, &job)?;
    let fifo = PolicyKind::TwoRFifo.to_string();
    let greedy = PolicyKind::Greedy.to_string();
    let mut push = |item, v: Option<f64>, c: &str| {
        if let Some(v) = v {
            out.push(Measured::new(item, v, &scale, c));
        }
    };
    push(
        "Fig. 3b: 2R-FIFO WAF at 90/10 / uniform",
        y_at(&r3, &fifo, 90.0),
        &cmd("fig3b"),
    );
    push(
        "Fig. 3b: naive greedy WAF at 95/5 / uniform",
        y_at(&r3, &greedy, 95.0),
        &cmd("fig3b"),
    );
    sub(1, 3, "Figure 4b");
    let r4 = figure(Figure::Fig4b, &base, dir, &job)?;
    let buffered = "greedy + 0.02% write buffer";
    push(
        "Fig. 4b: greedy WAF at zipf 0.8 / uniform",
        y_at(&r4, "greedy", 0.8),
        &cmd("fig4b"),
    );
    let waf = |s: &str| {
        r4.iter()
            .find(|r| r.series == s && (r.x - 1.2).abs() < 1e-9)
            .map(|r| r.waf)
    };
    push(
        "Fig. 4b: WAF at zipf 1.2, 0.02% write buffer / none",
        waf(buffered).zip(waf("greedy")).map(|(b, n)| b / n),
        &cmd("fig4b"),
    );
    sub(2, 3, "Figure 7a");
    let r7 = figure(Figure::Fig7a, &base, dir, &job)?;
    let at = |x: f64| r7.iter().find(|r| (r.x - x).abs() < 1e-9).map(|r| r.waf);
    push(
        "Fig. 7a: greedy WAF at OP 5% (spare/physical)",
        at(0.05),
        &cmd("fig7a"),
    );
    push(
        "Fig. 7a: greedy WAF at OP 10% (spare/physical)",
        at(0.10),
        &cmd("fig7a"),
    );
    Ok(out)
}
