//! how-to-write-to-ssds, Table 1 (`nowa table1`): the seven rows on the simulated SSD.

use super::{Measured, Scale, Spec};
use crate::Error;
use nowa_bench::table1::{self, Row, Table1Spec};
use std::path::Path;

fn row<'a>(rows: &'a [Row], name: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.name == name)
}

pub(super) fn run(
    spec: &Spec,
    dir: &Path,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<Vec<Measured>, Error> {
    let (mut t1, flag) = match spec.scale {
        Scale::Quick => (Table1Spec::quick(), " --quick"),
        Scale::Full => (Table1Spec::full(), ""),
    };
    t1.seed = spec.seed;
    let mut n = 0;
    let t = table1::run(&t1, &mut |r: &Row| {
        n += 1;
        sub(n, 7, &format!("Table 1: {}", r.name));
    })
    .map_err(|e| Error::Failed {
        what: "table1",
        source: Box::new(e),
    })?;
    assert!(
        t.interrupted || t.rows.len() == 7,
        "the seven rows of Table 1 unless stopped"
    );
    let csv = dir.join("table1.csv");
    table1::write_csv(&t, &csv).map_err(|e| Error::io(&csv, e))?;
    let txt = dir.join("table1.txt");
    std::fs::write(&txt, table1::format(&t)).map_err(|e| Error::io(&txt, e))?;
    let svg = dir.join("table1.svg");
    table1::plot(&t, &svg).map_err(|e| Error::io(&svg, e))?;
    let scale = format!(
        "{} records of {} B, {} MiB simulated SSD (90% full), 4 device writes per row",
        t1.records,
        t1.value_size,
        t.device_capacity >> 20
    );
    let cmd = format!("nowa table1{flag} --seed {}", spec.seed);
    let nan = f64::NAN;
    let get =
        |name: &str, f: &dyn Fn(&Row) -> Option<f64>| row(&t.rows, name).and_then(f).unwrap_or(nan);
    let mut out = Vec::new();
    let mut push = |item, v: f64| out.push(Measured::new(item, v, &scale, &cmd));
    push("Table 1: in-place DB WAF", get("in-place", &|r| r.db_waf));
    push("Table 1: in-place SSD WAF", get("in-place", &|r| r.ssd_waf));
    push(
        "Table 1: + comp. + pagepack DB WAF",
        get("+ comp. + pagepack", &|r| r.db_waf),
    );
    push("Table 1: + NoWA SSD WAF", get("+ NoWA", &|r| r.ssd_waf));
    push(
        "Table 1: + aligning GC unit SSD WAF",
        get("+ aligning GC unit", &|r| r.ssd_waf),
    );
    push("Table 1: - comp. DB WAF", get("- comp.", &|r| r.db_waf));
    push(
        "Table 1: total WAF, in-place / + aligning GC unit",
        get("in-place", &|r| r.total_waf) / get("+ aligning GC unit", &|r| r.total_waf),
    );
    push(
        "Table 1: OPS, + aligning GC unit / in-place (device-bound)",
        get("+ aligning GC unit", &|r| r.device_bound_ops_per_sec)
            / get("in-place", &|r| r.device_bound_ops_per_sec),
    );
    Ok(out)
}
