//! SepFrozen: the schemes of Figures 11 and 12 and the model of Figure 18, replayed through
//! the placement simulator on a synthetic write log (`nowa frozen figures`' default log), the
//! model trained on the log of the next seed ("trained on one run, deployed on the next").

use super::{Measured, Scale, Spec};
use crate::Error;
use nowa_bench::plot::{render_bar_styled, BarChart, Style};
use nowa_frozen::replay::{self, ReplayConfig, ReplayLog, SchemeRun};
use nowa_frozen::{Model, WriteRecord};
use nowa_logspace::PolicyKind;
use std::path::Path;

fn failed(e: nowa_frozen::FrozenError) -> Error {
    Error::Failed {
        what: "sepfrozen replay",
        source: Box::new(e),
    }
}

use crate::frozen::{compared as schemes, synth};

fn model(records: &[WriteRecord], seed: u64) -> Result<Model, Error> {
    crate::frozen::sgd_model(records, seed)
}

fn write_outputs(dir: &Path, runs: &[SchemeRun], setup: &str) -> Result<(), Error> {
    let csv = dir.join("sepfrozen-schemes.csv");
    let mut w = csv::Writer::from_path(&csv).map_err(|e| Error::io(&csv, e))?;
    w.write_record(["scheme", "waf", "far", "gc_moves", "frozen_moves"])
        .map_err(|e| Error::io(&csv, e))?;
    for r in runs {
        w.write_record([
            r.scheme.clone(),
            format!("{:.4}", r.waf),
            format!("{:.4}", r.far),
            r.gc_pages.to_string(),
            r.frozen_moves.to_string(),
        ])
        .map_err(|e| Error::io(&csv, e))?;
    }
    w.flush().map_err(|e| Error::io(&csv, e))?;
    let chart = BarChart {
        title: "SepFrozen replay (synthetic log): WAF and FAR per scheme".into(),
        y_label: "WAF; FAR (frozen share of GC moves)".into(),
        categories: runs
            .iter()
            .map(|r| crate::frozen::scheme_name(&r.scheme))
            .collect(),
        groups: vec![
            ("WAF".into(), runs.iter().map(|r| r.waf).collect()),
            ("FAR".into(), runs.iter().map(|r| r.far).collect()),
        ],
    };
    let style = Style {
        subtitle: setup.to_owned(),
        ..Style::default()
    };
    let png = dir.join("sepfrozen-schemes.png");
    render_bar_styled(&chart, &style, &png).map_err(|e| Error::io(&png, e))
}

/// The five replays and the model of `spec`'s scale (no files written).
fn measure(
    spec: &Spec,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<(Vec<SchemeRun>, Model, u64), Error> {
    let writes: u64 = match spec.scale {
        Scale::Quick => 300_000,
        Scale::Full => 1_000_000,
    };
    sub(0, 6, "synthetic logs and the model");
    let records = synth(writes, spec.seed);
    let m = model(&synth(writes, spec.seed + 1), spec.seed)?;
    let log = ReplayLog::from_records(&records);
    let cfg = ReplayConfig {
        unit_pages: 256,
        gp: 0.15,
        policy: PolicyKind::CostBenefitSepBit,
        seed: spec.seed,
        horizon: None,
        ..ReplayConfig::default()
    };
    let mut runs = Vec::new();
    for (i, s) in schemes().into_iter().enumerate() {
        sub(i as u64 + 1, 6, "replay");
        runs.push(
            replay::run(&log, s, Some(&m), &cfg, nowa_units::cpu::thread_cpu_secs)
                .map_err(failed)?,
        );
    }
    assert_eq!(runs.len(), 5, "one replay per scheme");
    for r in &runs {
        assert!(
            r.waf >= 1.0 - 1e-9,
            "{}: WAF = (user + GC) / user >= 1",
            r.scheme
        );
        assert!(
            (0.0..=1.0).contains(&r.far) || r.far.is_nan(),
            "{}: FAR is a share",
            r.scheme
        );
    }
    Ok((runs, m, writes))
}

/// The SepFrozen entries of `spec` without writing files (the staleness check).
///
/// # Errors
/// The model or a replay fails.
pub fn entries_only(spec: &Spec) -> Result<Vec<Measured>, Error> {
    let (runs, m, writes) = measure(spec, &|_, _, _| {})?;
    Ok(items(&runs, &m, writes, spec.seed))
}

pub(super) fn run(
    spec: &Spec,
    dir: &Path,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<Vec<Measured>, Error> {
    let (runs, m, writes) = measure(spec, sub)?;
    write_outputs(dir, &runs, &setup_line(writes, spec.seed))?;
    Ok(items(&runs, &m, writes, spec.seed))
}

/// The scale of the items (the reproduction report's wording).
fn scale(writes: u64, seed: u64) -> String {
    format!(
        "synthetic log of {writes} page writes, 1 MiB zones (256 pages), GP 15%, cb-sepbit; model trained on seed {}",
        seed + 1
    )
}

/// The figure's setup line: the scale, the paper's, the seeds.
fn setup_line(writes: u64, seed: u64) -> String {
    format!(
        "synthetic log of {writes} page writes (paper: TPC-C, 406 GiB written); zones of 256 pages = 1 MiB (paper: 256 MiB); GC at GP 15%, cost-benefit victims (SepBIT's); SGD model (TWL 2) trained on the log of seed {}; seed {seed}",
        seed + 1
    )
}

/// The paper's items from the five replays and the model.
fn items(runs: &[SchemeRun], m: &Model, writes: u64, seed: u64) -> Vec<Measured> {
    let [dac, sf_dac, sepbit, sf_bit, fk] = runs else {
        unreachable!("five schemes, five runs")
    };
    let scale = scale(writes, seed);
    let cmd = format!(
        "nowa frozen figures --synth-writes {writes} --zone-size 1MiB --seed {}",
        seed
    );
    let acc = m.metrics.test.accuracy.map_or(f64::NAN, |a| 100.0 * a);
    vec![
        Measured::new(
            "Fig. 12: WAF, SepFrozenBIT / SepBIT",
            sf_bit.waf / sepbit.waf,
            &scale,
            &cmd,
        ),
        Measured::new(
            "Fig. 11: FAR, SepFrozenBIT / SepBIT",
            sf_bit.far / sepbit.far,
            &scale,
            &cmd,
        ),
        Measured::new(
            "Fig. 11: FAR, SepFrozenDAC / DAC",
            sf_dac.far / dac.far,
            &scale,
            &cmd,
        ),
        Measured::new(
            "Fig. 12: WAF, FK / SepFrozenBIT",
            fk.waf / sf_bit.waf,
            &scale,
            &cmd,
        ),
        Measured::new("Fig. 18: SGD model accuracy", acc, &scale, &cmd),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figure's subtitle states the log, the zones beside the paper's, the GC, the model's
    /// training seed and the seed (the figure had no setup line).
    #[test]
    fn the_figure_states_its_setup() {
        let s = setup_line(300_000, 42);
        for part in [
            "300000 page writes",
            "paper: TPC-C",
            "256 pages = 1 MiB (paper: 256 MiB)",
            "GP 15%",
            "seed 43",
            "seed 42",
        ] {
            assert!(s.contains(part), "{part:?} missing from {s:?}");
        }
    }
}
