//! how-to-write-to-ssds, Table 1 (`nowa table1`): the seven rows on the simulated SSD.

use super::{Measured, Scale, Spec};
use crate::Error;
use nowa_bench::table1::{self, Row, Table1Spec};
use std::path::Path;

fn row<'a>(rows: &'a [Row], name: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.name == name)
}

/// The Table 1 rows of `spec`'s scale, and the items they give (no files written).
fn measure(
    spec: &Spec,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<(table1::Table1, Vec<Measured>), Error> {
    let (mut t1, flag) = match spec.scale {
        Scale::Quick => (Table1Spec::quick(), " --quick"),
        Scale::Full => (Table1Spec::full(), ""),
    };
    t1.seed = spec.seed;
    let t =
        table1::run_observed(&t1, &mut |_| {}, &|d, t| sub(d, t, "Table 1 rows")).map_err(|e| {
            Error::Failed {
                what: "table1",
                source: Box::new(e),
            }
        })?;
    assert!(
        t.interrupted || t.rows.len() == 7,
        "the seven rows of Table 1 unless stopped"
    );
    let scale = format!(
        "{} records of {} B, {} MiB simulated SSD (90% full), 4 device writes per row",
        t1.records,
        t1.value_size,
        t.device_capacity >> 20
    );
    let cmd = format!("nowa table1{flag} --seed {}", spec.seed);
    let out = items(&t.rows)
        .into_iter()
        .map(|(item, v)| Measured::new(item, v, &scale, &cmd))
        .collect();
    Ok((t, out))
}

/// The Table 1 entries of `spec` without writing files (the staleness check).
///
/// # Errors
/// A row fails.
pub fn entries_only(spec: &Spec) -> Result<Vec<Measured>, Error> {
    Ok(measure(spec, &|_, _, _| {})?.1)
}

pub(super) fn run(
    spec: &Spec,
    dir: &Path,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<Vec<Measured>, Error> {
    let (t, out) = measure(spec, sub)?;
    let csv = dir.join("table1.csv");
    table1::write_csv(&t, &csv).map_err(|e| Error::io(&csv, e))?;
    let txt = dir.join("table1.txt");
    std::fs::write(&txt, table1::format(&t)).map_err(|e| Error::io(&txt, e))?;
    let svg = dir.join("table1.svg");
    table1::plot(&t, &svg).map_err(|e| Error::io(&svg, e))?;
    Ok(out)
}

/// The paper's items from the rows (NaN where a row is missing: an interrupted run).
fn items(rows: &[Row]) -> Vec<(&'static str, f64)> {
    let nan = f64::NAN;
    let get =
        |name: &str, f: &dyn Fn(&Row) -> Option<f64>| row(rows, name).and_then(f).unwrap_or(nan);
    vec![
        ("Table 1: in-place DB WAF", get("in-place", &|r| r.db_waf)),
        ("Table 1: in-place SSD WAF", get("in-place", &|r| r.ssd_waf)),
        (
            "Table 1: + comp. + pagepack DB WAF",
            get("+ comp. + pagepack", &|r| r.db_waf),
        ),
        ("Table 1: + NoWA SSD WAF", get("+ NoWA", &|r| r.ssd_waf)),
        (
            "Table 1: + aligning GC unit SSD WAF",
            get("+ aligning GC unit", &|r| r.ssd_waf),
        ),
        ("Table 1: - comp. DB WAF", get("- comp.", &|r| r.db_waf)),
        (
            "Table 1: total WAF, in-place / + aligning GC unit",
            get("in-place", &|r| r.total_waf) / get("+ aligning GC unit", &|r| r.total_waf),
        ),
        (
            "Table 1: OPS, + aligning GC unit / in-place (device-bound)",
            get("+ aligning GC unit", &|r| r.device_bound_ops_per_sec)
                / get("in-place", &|r| r.device_bound_ops_per_sec),
        ),
    ]
}
