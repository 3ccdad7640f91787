//! PLAN: Figures 1 and 3-6 (`nowa plan figures`), on the paper's device scaled 1/16.

use super::{Measured, Scale, Spec};
use crate::Error;
use nowa_bench::plan::{self, RunResult, WorkloadKind, SCHEMES};
use std::path::Path;

fn failed(e: anyhow::Error) -> Error {
    Error::Failed {
        what: "plan figures",
        source: e.into(),
    }
}

/// The run of `scheme` on `workload` among `rows` (workloads in `order`, SCHEMES within).
fn pick<'a>(
    rows: &'a [RunResult],
    order: &[WorkloadKind],
    workload: WorkloadKind,
    scheme: &str,
) -> Option<&'a RunResult> {
    let w = order.iter().position(|&k| k == workload)?;
    let s = SCHEMES.iter().position(|&n| n == scheme)?;
    rows.get(w * SCHEMES.len() + s)
}

#[expect(clippy::cast_precision_loss, reason = "block counts below 2^53")]
fn erased(r: &RunResult) -> f64 {
    r.counters.erased_blocks as f64
}

pub(super) fn run(
    spec: &Spec,
    dir: &Path,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<Vec<Measured>, Error> {
    let mut o = plan::default_opts();
    o.seed = spec.seed;
    o.drive_writes = match spec.scale {
        Scale::Quick => 1.0,
        Scale::Full => 2.0,
    };
    let scale = plan::setup_line(&o);
    let cmd = format!(
        "nowa plan figures --drive-writes {} --seed {} --out DIR",
        o.drive_writes, o.seed
    );
    let total = 12 + o.workloads.len() * SCHEMES.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut log = |_: &RunResult| {
        let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        sub(d as u64, total as u64, "runs");
    };
    let f1 = plan::figure1(&o, dir, &mut log).map_err(failed)?;
    assert_eq!(f1.len(), 8, "Figure 1: 1 open and 18 open, 4 levels each");
    let f3 = plan::figures3to6(&o, dir, &mut log).map_err(failed)?;
    assert_eq!(
        f3.len(),
        o.workloads.len() * SCHEMES.len(),
        "Figures 3-6: every scheme on every workload"
    );
    assert!(
        f1.iter().chain(&f3).all(|r| r.waf >= 1.0),
        "a WAF is at least 1"
    );
    let mut out = Vec::new();
    let mut push = |item, v: f64| out.push(Measured::new(item, v, &scale, &cmd));
    push(
        "Fig. 1: FIO WAF, full / 1/8 parallelism (baseline)",
        f1[3].waf / f1[0].waf,
    );
    push(
        "Fig. 1: FIO WAF, full / 1/8 parallelism (baseline@18)",
        f1[7].waf / f1[4].waf,
    );
    push(
        "Fig. 1: FIO throughput, 1/2 / full parallelism (baseline@18)",
        f1[6].iops / f1[7].iops,
    );
    for (item, v) in fig3to6(&f3, &o.workloads) {
        push(item, v);
    }
    Ok(out)
}

/// The items of Figures 3, 4 and 6: PLAN-Pred-1/4 against both baselines.
fn fig3to6(f3: &[RunResult], order: &[WorkloadKind]) -> Vec<(&'static str, f64)> {
    let mut out = Vec::new();
    let ratio = |w: WorkloadKind, a: &str, b: &str, f: &dyn Fn(&RunResult) -> f64| {
        pick(f3, order, w, a)
            .zip(pick(f3, order, w, b))
            .map_or(f64::NAN, |(x, y)| f(x) / f(y))
    };
    let pred = "plan-pred-1/4";
    let waf = |r: &RunResult| r.waf;
    let iops = |r: &RunResult| r.iops;
    out.push((
        "Fig. 3: FIO WAF, PLAN-Pred-1/4 / baseline",
        ratio(WorkloadKind::Fio, pred, "baseline", &waf),
    ));
    out.push((
        "Fig. 3: FIO WAF, PLAN-Pred-1/4 / baseline@18",
        ratio(WorkloadKind::Fio, pred, "baseline@18", &waf),
    ));
    out.push((
        "Fig. 3: TPC-C WAF, PLAN-Pred-1/4 / baseline",
        ratio(WorkloadKind::Tpcc, pred, "baseline", &waf),
    ));
    out.push((
        "Fig. 3: YCSB WAF, PLAN-Pred-1/4 / baseline",
        ratio(WorkloadKind::Ycsb, pred, "baseline", &waf),
    ));
    out.push((
        "Fig. 4: FIO blocks erased, PLAN-Pred-1/4 / baseline",
        ratio(WorkloadKind::Fio, pred, "baseline", &erased),
    ));
    out.push((
        "Fig. 6: FIO throughput, PLAN-Pred-1/4 / baseline",
        ratio(WorkloadKind::Fio, pred, "baseline", &iops),
    ));
    out.push((
        "Fig. 6: FIO throughput, PLAN-Pred-1/4 / baseline@18",
        ratio(WorkloadKind::Fio, pred, "baseline@18", &iops),
    ));
    out
}
