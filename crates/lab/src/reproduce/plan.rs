//! PLAN: Figures 1 and 3-6 (`nowa plan figures`), on the paper's device scaled 1/16, and the
//! fill sweep (docs/plan.md, "What makes WAF grow with parallelism"): FIO's PLAN-Pred-1/4
//! against both baselines on devices aged to 90, 95, 98 and 100% (the figures run at the
//! default fill, 70%).

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

/// A run the items read: Figure 1's (FIO, per-stream shares tracked), Figures 3-6's, or the
/// fill sweep's (`fill` > 0: FIO on a device aged to that level instead of the default).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pt {
    fig1: bool,
    workload: WorkloadKind,
    scheme: &'static str,
    fill: f64,
}

const fn fig1(scheme: &'static str) -> Pt {
    Pt {
        fig1: true,
        workload: WorkloadKind::Fio,
        scheme,
        fill: 0.0,
    }
}

const fn fig3(workload: WorkloadKind, scheme: &'static str) -> Pt {
    Pt {
        fig1: false,
        workload,
        scheme,
        fill: 0.0,
    }
}

const fn sweep(fill: f64, scheme: &'static str) -> Pt {
    Pt {
        fig1: false,
        workload: WorkloadKind::Fio,
        scheme,
        fill,
    }
}

/// The fill sweep's levels, and its items per level: PLAN-Pred-1/4's FIO WAF over each
/// baseline's (the paper's -42% is judged at every level: it gives no aging level).
const FILLS: [f64; 4] = [0.9, 0.95, 0.98, 1.0];
const SWEEP_ITEMS: [[&str; 2]; 4] = [
    [
        "Fill 90%: FIO WAF, PLAN-Pred-1/4 / baseline",
        "Fill 90%: FIO WAF, PLAN-Pred-1/4 / baseline@18",
    ],
    [
        "Fill 95%: FIO WAF, PLAN-Pred-1/4 / baseline",
        "Fill 95%: FIO WAF, PLAN-Pred-1/4 / baseline@18",
    ],
    [
        "Fill 98%: FIO WAF, PLAN-Pred-1/4 / baseline",
        "Fill 98%: FIO WAF, PLAN-Pred-1/4 / baseline@18",
    ],
    [
        "Fill 100%: FIO WAF, PLAN-Pred-1/4 / baseline",
        "Fill 100%: FIO WAF, PLAN-Pred-1/4 / baseline@18",
    ],
];
const SWEEP_SCHEMES: [&str; 3] = ["baseline", "baseline@18", PRED];

/// Every run of the fill sweep.
fn sweep_points() -> Vec<Pt> {
    let v: Vec<Pt> = FILLS
        .iter()
        .flat_map(|&f| SWEEP_SCHEMES.map(|s| sweep(f, s)))
        .collect();
    // The items pair each level's runs by position: one run per scheme and level.
    assert_eq!(v.len(), FILLS.len() * SWEEP_SCHEMES.len(), "a run per pair");
    assert_eq!(SWEEP_ITEMS.len(), FILLS.len(), "an item pair per level");
    v
}

/// Runs `p` on the options of the figures (`o`), at its own fill for a sweep point.
fn run_point(o: &plan::FigureOpts, p: Pt) -> Result<RunResult, Error> {
    let mut o = o.clone();
    assert!((0.0..=1.0).contains(&p.fill), "fill {} is a share", p.fill);
    if p.fill > 0.0 {
        o.fill = p.fill;
    }
    plan::figure_run(&o, p.scheme, p.workload, p.fig1).map_err(failed)
}

/// Figure 1's runs in [`plan::figure1`]'s order: one open host superblock at 1/8, 1/4, 1/2
/// and full parallelism, then the paper's 18.
const FIG1: [&str; 8] = [
    "baseline-1/8@1",
    "baseline-1/4@1",
    "baseline-1/2@1",
    "baseline-full@1",
    "baseline-1/8@18",
    "baseline-1/4@18",
    "baseline-1/2@18",
    "baseline-full@18",
];

const PRED: &str = "plan-pred-1/4";

/// Every run the items read (12 of the figures' 57): what the staleness check re-runs.
const READS: [Pt; 12] = [
    fig1(FIG1[0]),
    fig1(FIG1[3]),
    fig1(FIG1[4]),
    fig1(FIG1[6]),
    fig1(FIG1[7]),
    fig3(WorkloadKind::Fio, "baseline"),
    fig3(WorkloadKind::Fio, "baseline@18"),
    fig3(WorkloadKind::Fio, PRED),
    fig3(WorkloadKind::Tpcc, "baseline"),
    fig3(WorkloadKind::Tpcc, PRED),
    fig3(WorkloadKind::Ycsb, "baseline"),
    fig3(WorkloadKind::Ycsb, PRED),
];

fn opts(spec: &Spec) -> plan::FigureOpts {
    let mut o = plan::default_opts();
    o.seed = spec.seed;
    o.drive_writes = match spec.scale {
        Scale::Quick => 1.0,
        Scale::Full => 2.0,
    };
    o
}

fn command(o: &plan::FigureOpts) -> String {
    format!(
        "nowa plan figures --drive-writes {} --seed {} --out DIR",
        o.drive_writes, o.seed
    )
}

/// The PLAN entries of `spec` from only the runs they read ([`READS`]; no files): the same
/// values as [`run`]'s, each run being its own seeded, single-threaded simulation.
///
/// # Errors
/// A run fails.
pub fn entries_only(spec: &Spec) -> Result<Vec<Measured>, Error> {
    let o = opts(spec);
    let mut runs = Vec::new();
    for p in READS.into_iter().chain(sweep_points()) {
        runs.push((p, run_point(&o, p)?));
    }
    Ok(measured(&runs, &plan::setup_line(&o), &command(&o)))
}

pub(super) fn run(
    spec: &Spec,
    dir: &Path,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<Vec<Measured>, Error> {
    let o = opts(spec);
    let points = sweep_points();
    let total = plan::figure_run_count(&o, false) + points.len() as u64;
    let done = std::sync::atomic::AtomicU64::new(0);
    let mut log = |_: &RunResult| {
        let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        sub(d, total, "runs");
    };
    let f1 = plan::figure1(&o, dir, &mut log).map_err(failed)?;
    assert_eq!(
        f1.len(),
        FIG1.len(),
        "Figure 1: 1 open and 18 open, 4 levels each"
    );
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
    let mut runs: Vec<(Pt, RunResult)> = FIG1.iter().map(|&n| fig1(n)).zip(f1).collect();
    for (i, r) in f3.into_iter().enumerate() {
        let w = o.workloads[i / SCHEMES.len()];
        runs.push((fig3(w, SCHEMES[i % SCHEMES.len()]), r));
    }
    for p in points {
        let r = run_point(&o, p)?;
        log(&r);
        runs.push((p, r));
    }
    Ok(measured(&runs, &plan::setup_line(&o), &command(&o)))
}

#[expect(clippy::cast_precision_loss, reason = "block counts below 2^53")]
fn erased(r: &RunResult) -> f64 {
    r.counters.erased_blocks as f64
}

/// The entries: the figures' under `cmd`, the fill sweep's under the `nowa plan run` lines
/// that measure them.
fn measured(runs: &[(Pt, RunResult)], scale: &str, cmd: &str) -> Vec<Measured> {
    assert!(!runs.is_empty(), "entries come from runs");
    items(runs)
        .into_iter()
        .map(|(item, v)| {
            let fill = FILLS
                .iter()
                .zip(SWEEP_ITEMS)
                .find(|(_, pair)| pair.contains(&item))
                .map(|(f, _)| *f);
            match fill {
                Some(f) => Measured::new(
                    item,
                    v,
                    &format!("{scale}; aged {:.0}%", f * 100.0),
                    &sweep_command(cmd, f),
                ),
                None => Measured::new(item, v, scale, cmd),
            }
        })
        .collect()
}

/// The `nowa plan run` lines of a fill-sweep entry, from the figures' command's flags.
fn sweep_command(figures_cmd: &str, fill: f64) -> String {
    let flags = figures_cmd
        .trim_start_matches("nowa plan figures ")
        .trim_end_matches(" --out DIR");
    format!("nowa plan run --workload fio --fill {fill} --scheme plan-pred-1/4|baseline|baseline@18 {flags}")
}

/// The items of Figures 1, 3, 4 and 6: PLAN-Pred-1/4 against both baselines (NaN where a
/// run is absent).
fn items(runs: &[(Pt, RunResult)]) -> Vec<(&'static str, f64)> {
    let get = |p: Pt| runs.iter().find(|(q, _)| *q == p).map(|(_, r)| r);
    let ratio = |a: Pt, b: Pt, f: &dyn Fn(&RunResult) -> f64| {
        get(a).zip(get(b)).map_or(f64::NAN, |(x, y)| f(x) / f(y))
    };
    let waf = |r: &RunResult| r.waf;
    let iops = |r: &RunResult| r.iops;
    let f = |w, s| fig3(w, s);
    use WorkloadKind::{Fio, Tpcc, Ycsb};
    let mut v = vec![
        (
            "Fig. 1: FIO WAF, full / 1/8 parallelism (baseline)",
            ratio(fig1(FIG1[3]), fig1(FIG1[0]), &waf),
        ),
        (
            "Fig. 1: FIO WAF, full / 1/8 parallelism (baseline@18)",
            ratio(fig1(FIG1[7]), fig1(FIG1[4]), &waf),
        ),
        (
            "Fig. 1: FIO throughput, 1/2 / full parallelism (baseline@18)",
            ratio(fig1(FIG1[6]), fig1(FIG1[7]), &iops),
        ),
        (
            "Fig. 3: FIO WAF, PLAN-Pred-1/4 / baseline",
            ratio(f(Fio, PRED), f(Fio, "baseline"), &waf),
        ),
        (
            "Fig. 3: FIO WAF, PLAN-Pred-1/4 / baseline@18",
            ratio(f(Fio, PRED), f(Fio, "baseline@18"), &waf),
        ),
        (
            "Fig. 3: TPC-C WAF, PLAN-Pred-1/4 / baseline",
            ratio(f(Tpcc, PRED), f(Tpcc, "baseline"), &waf),
        ),
        (
            "Fig. 3: YCSB WAF, PLAN-Pred-1/4 / baseline",
            ratio(f(Ycsb, PRED), f(Ycsb, "baseline"), &waf),
        ),
        (
            "Fig. 4: FIO blocks erased, PLAN-Pred-1/4 / baseline",
            ratio(f(Fio, PRED), f(Fio, "baseline"), &erased),
        ),
        (
            "Fig. 6: FIO throughput, PLAN-Pred-1/4 / baseline",
            ratio(f(Fio, PRED), f(Fio, "baseline"), &iops),
        ),
        (
            "Fig. 6: FIO throughput, PLAN-Pred-1/4 / baseline@18",
            ratio(f(Fio, PRED), f(Fio, "baseline@18"), &iops),
        ),
    ];
    for (&fill, [one, same]) in FILLS.iter().zip(SWEEP_ITEMS) {
        let at = |s| sweep(fill, s);
        v.push((one, ratio(at(PRED), at("baseline"), &waf)));
        v.push((same, ratio(at(PRED), at("baseline@18"), &waf)));
    }
    v
}
