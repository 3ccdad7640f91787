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

use WorkloadKind::{Fileserver, Fio, Gcc, Tpcc, Ycsb};

/// Every run the items read (21 of the figures' 57): what the staleness check re-runs.
const READS: [Pt; 21] = [
    fig1(FIG1[0]),
    fig1(FIG1[3]),
    fig1(FIG1[4]),
    fig1(FIG1[6]),
    fig1(FIG1[7]),
    fig3(Fio, "baseline"),
    fig3(Fio, "baseline@18"),
    fig3(Fio, PRED),
    fig3(Fio, "plan-pred-1/8"),
    fig3(Tpcc, "baseline"),
    fig3(Tpcc, "baseline@18"),
    fig3(Tpcc, PRED),
    fig3(Ycsb, "baseline"),
    fig3(Ycsb, "baseline@18"),
    fig3(Ycsb, PRED),
    fig3(Fileserver, "baseline"),
    fig3(Fileserver, "baseline@18"),
    fig3(Fileserver, PRED),
    fig3(Gcc, "baseline"),
    fig3(Gcc, "baseline@18"),
    fig3(Gcc, PRED),
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
    // Ctrl-C: the figures keep the runs that finished; the paper is reported missing.
    let stop = || crate::Cancel.requested();
    let f1 = plan::figure1(&o, dir, &mut log, &stop).map_err(failed)?;
    if stop() {
        return Err(super::stopped());
    }
    assert_eq!(
        f1.len(),
        FIG1.len(),
        "Figure 1: 1 open and 18 open, 4 levels each"
    );
    let f3 = plan::figures3to6(&o, dir, &mut log, &stop).map_err(failed)?;
    if stop() {
        return Err(super::stopped());
    }
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

/// Figure 5's items: PLAN-Pred-1/4's mean victim valid ratio minus each baseline's, in
/// percentage points (a run without GC counts as empty victims, 0%).
fn fig5_items<'a>(get: &dyn Fn(Pt) -> Option<&'a RunResult>) -> Vec<(&'static str, f64)> {
    const FIG5: [(WorkloadKind, [&str; 2]); 4] = [
        (
            Fio,
            [
                "Fig. 5: FIO mean victim valid ratio, PLAN-Pred-1/4 - baseline",
                "Fig. 5: FIO mean victim valid ratio, PLAN-Pred-1/4 - baseline@18",
            ],
        ),
        (
            Tpcc,
            [
                "Fig. 5: TPC-C mean victim valid ratio, PLAN-Pred-1/4 - baseline",
                "Fig. 5: TPC-C mean victim valid ratio, PLAN-Pred-1/4 - baseline@18",
            ],
        ),
        (
            Fileserver,
            [
                "Fig. 5: Fileserver mean victim valid ratio, PLAN-Pred-1/4 - baseline",
                "Fig. 5: Fileserver mean victim valid ratio, PLAN-Pred-1/4 - baseline@18",
            ],
        ),
        (
            Gcc,
            [
                "Fig. 5: GCC mean victim valid ratio, PLAN-Pred-1/4 - baseline",
                "Fig. 5: GCC mean victim valid ratio, PLAN-Pred-1/4 - baseline@18",
            ],
        ),
    ];
    let pct = |p: Pt| get(p).map_or(f64::NAN, |r| 100.0 * r.mean_victim_ratio());
    let mut v = Vec::new();
    for (w, [one, same]) in FIG5 {
        let pred = pct(fig3(w, PRED));
        assert!(
            pred.is_nan() || (0.0..=100.0).contains(&pred),
            "a share in percent"
        );
        v.push((one, pred - pct(fig3(w, "baseline"))));
        v.push((same, pred - pct(fig3(w, "baseline@18"))));
    }
    // A difference of two shares in percent lies within +-100 points.
    assert!(
        v.iter().all(|(_, d)| d.is_nan() || d.abs() <= 100.0),
        "differences in percentage points"
    );
    v
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
                Some(f) => Measured::new(item, v, &sweep_scale(scale, f), &sweep_command(cmd, f)),
                None => Measured::new(item, v, scale, cmd),
            }
        })
        .collect()
}

/// A fill-sweep entry's scale: the figures' setup line with its aged level replaced by the
/// sweep's (the line says "aged 70% full" for the figures' default fill).
fn sweep_scale(scale: &str, fill: f64) -> String {
    let level = format!("aged {:.0}% full", fill * 100.0);
    let at = scale.find("aged ").and_then(|i| {
        let end = scale[i..].find(" full")? + i + " full".len();
        Some((i, end))
    });
    let out = match at {
        Some((i, end)) => format!("{}{level}{}", &scale[..i], &scale[end..]),
        None => format!("{scale}; {level}"),
    };
    assert!(out.contains(&level), "the sweep's level is stated");
    out
}

/// The `nowa plan run` lines of a fill-sweep entry, from the figures' command's flags.
fn sweep_command(figures_cmd: &str, fill: f64) -> String {
    let flags = figures_cmd
        .trim_start_matches("nowa plan figures ")
        .trim_end_matches(" --out DIR");
    assert!(!flags.contains("--out"), "plan run takes no --out");
    format!("nowa plan run --workload fio --fill {fill} --scheme plan-pred-1/4|baseline|baseline@18 {flags}")
}

/// `f(a) / f(b)` of the runs `a` and `b` (NaN where a run is absent).
fn ratio_of(runs: &[(Pt, RunResult)], a: Pt, b: Pt, f: &dyn Fn(&RunResult) -> f64) -> f64 {
    let get = |p: Pt| runs.iter().find(|(q, _)| *q == p).map(|(_, r)| r);
    get(a).zip(get(b)).map_or(f64::NAN, |(x, y)| f(x) / f(y))
}

fn waf(r: &RunResult) -> f64 {
    r.waf
}

fn iops(r: &RunResult) -> f64 {
    r.iops
}

/// Figure 1's items.
fn fig1_items(runs: &[(Pt, RunResult)]) -> Vec<(&'static str, f64)> {
    let ratio = |a, b, f: &dyn Fn(&RunResult) -> f64| ratio_of(runs, a, b, f);
    vec![
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
    ]
}

/// Figures 3 and 4's items: PLAN-Pred-1/4 against both baselines.
fn fig34_items(runs: &[(Pt, RunResult)]) -> Vec<(&'static str, f64)> {
    let one =
        |w, f: &dyn Fn(&RunResult) -> f64| ratio_of(runs, fig3(w, PRED), fig3(w, "baseline"), f);
    let same =
        |w, f: &dyn Fn(&RunResult) -> f64| ratio_of(runs, fig3(w, PRED), fig3(w, "baseline@18"), f);
    vec![
        ("Fig. 3: FIO WAF, PLAN-Pred-1/4 / baseline", one(Fio, &waf)),
        (
            "Fig. 3: FIO WAF, PLAN-Pred-1/4 / baseline@18",
            same(Fio, &waf),
        ),
        (
            "Fig. 3: TPC-C WAF, PLAN-Pred-1/4 / baseline",
            one(Tpcc, &waf),
        ),
        (
            "Fig. 3: TPC-C WAF, PLAN-Pred-1/4 / baseline@18",
            same(Tpcc, &waf),
        ),
        (
            "Fig. 3: YCSB WAF, PLAN-Pred-1/4 / baseline",
            one(Ycsb, &waf),
        ),
        (
            "Fig. 3: YCSB WAF, PLAN-Pred-1/4 / baseline@18",
            same(Ycsb, &waf),
        ),
        (
            "Fig. 3: Fileserver WAF, PLAN-Pred-1/4 / baseline",
            one(Fileserver, &waf),
        ),
        (
            "Fig. 3: Fileserver WAF, PLAN-Pred-1/4 / baseline@18",
            same(Fileserver, &waf),
        ),
        ("Fig. 3: GCC WAF, PLAN-Pred-1/4 / baseline", one(Gcc, &waf)),
        (
            "Fig. 3: GCC WAF, PLAN-Pred-1/4 / baseline@18",
            same(Gcc, &waf),
        ),
        (
            "Fig. 3: FIO WAF, PLAN-Pred-1/8 / PLAN-Pred-1/4",
            ratio_of(runs, fig3(Fio, "plan-pred-1/8"), fig3(Fio, PRED), &waf),
        ),
        (
            "Fig. 4: FIO blocks erased, PLAN-Pred-1/4 / baseline",
            one(Fio, &erased),
        ),
        (
            "Fig. 4: FIO blocks erased, PLAN-Pred-1/4 / baseline@18",
            same(Fio, &erased),
        ),
        (
            "Fig. 4: GCC blocks erased, PLAN-Pred-1/4 / baseline",
            one(Gcc, &erased),
        ),
        (
            "Fig. 4: GCC blocks erased, PLAN-Pred-1/4 / baseline@18",
            same(Gcc, &erased),
        ),
    ]
}

/// Figure 6's items.
fn fig6_items(runs: &[(Pt, RunResult)]) -> Vec<(&'static str, f64)> {
    let one = |w| ratio_of(runs, fig3(w, PRED), fig3(w, "baseline"), &iops);
    let same = |w| ratio_of(runs, fig3(w, PRED), fig3(w, "baseline@18"), &iops);
    vec![
        ("Fig. 6: FIO throughput, PLAN-Pred-1/4 / baseline", one(Fio)),
        (
            "Fig. 6: FIO throughput, PLAN-Pred-1/4 / baseline@18",
            same(Fio),
        ),
        (
            "Fig. 6: Fileserver throughput, PLAN-Pred-1/4 / baseline",
            one(Fileserver),
        ),
        (
            "Fig. 6: Fileserver throughput, PLAN-Pred-1/4 / baseline@18",
            same(Fileserver),
        ),
        (
            "Fig. 6: TPC-C throughput, PLAN-Pred-1/4 / baseline",
            one(Tpcc),
        ),
        (
            "Fig. 6: YCSB throughput, PLAN-Pred-1/4 / baseline",
            one(Ycsb),
        ),
        ("Fig. 6: GCC throughput, PLAN-Pred-1/4 / baseline", one(Gcc)),
    ]
}

/// The items of Figures 1 and 3 to 6 and of the fill sweep: PLAN-Pred-1/4 against both
/// baselines (NaN where a run is absent), in the paper-value table's order.
fn items(runs: &[(Pt, RunResult)]) -> Vec<(&'static str, f64)> {
    let get = |p: Pt| runs.iter().find(|(q, _)| *q == p).map(|(_, r)| r);
    let mut v = fig1_items(runs);
    v.extend(fig34_items(runs));
    v.extend(fig5_items(&get));
    v.extend(fig6_items(runs));
    for (&fill, [one, same]) in FILLS.iter().zip(SWEEP_ITEMS) {
        let at = |s| sweep(fill, s);
        v.push((one, ratio_of(runs, at(PRED), at("baseline"), &waf)));
        v.push((same, ratio_of(runs, at(PRED), at("baseline@18"), &waf)));
    }
    // Every PLAN paper value is measured here, once.
    let plan_values = super::values::PAPER_VALUES
        .iter()
        .filter(|p| p.paper == super::Paper::Plan)
        .count();
    assert_eq!(v.len(), plan_values, "an item per PLAN paper value");
    assert!(
        v.iter().all(|(i, _)| super::values::lookup(i).is_some()),
        "items are paper values"
    );
    assert!(
        v.iter()
            .enumerate()
            .all(|(k, a)| v[k + 1..].iter().all(|b| b.0 != a.0)),
        "no item twice"
    );
    v
}

/// One claim of the paper as docs/plan.md's claims table shows it: the paper's words, the
/// items measuring it against FEMU's baseline (one open superblock) and against the paper's
/// "same number of open superblocks" reading (None: not measured that way), and why the
/// model gives what it gives (docs/plan.md's sections hold the measurements behind it).
struct Claim {
    claim: &'static str,
    one: Option<&'static str>,
    same: Option<&'static str>,
    why: &'static str,
}

const fn claim(
    claim: &'static str,
    one: Option<&'static str>,
    same: Option<&'static str>,
    why: &'static str,
) -> Claim {
    Claim {
        claim,
        one,
        same,
        why,
    }
}

const WHY_SPACE: &str = "the superblock's size moves WAF here only through the space open superblocks hold, which matters only when the room for garbage is of that order (a device aged to 99-100%: fill rows below); at 70% with background GC the 1/8 rule, not the GC unit, sets the victims' valid ratio";
const WHY_UNIFORM: &str = "uniform random rewrites inside each file leave a superblock's valid count at the mean whatever its size or stream, so separating lifetimes gains little (Multi-stream, which separates FIO's files exactly, gains as little); PLAN's gain appears against the 18-open baseline near 100% fill (fill rows)";
const WHY_BUILD: &str = "our build loops trim their whole area every iteration, and it never mixes with relocated user data: every scheme's victims are almost all empty and WAF is ~1 for all (the paper's baseline GCC WAF > 2 needs that mixing)";
const WHY_FILL: &str = "near full, the room for garbage is about what 18-19 open superblocks hold: the 18-open baseline loses most of it (Fig. 1's x2.3 at 100%), PLAN's small superblocks less; against the one-open baseline it is PLAN's 19 open superblocks that lose it";
const WHY_FIG5: &str = "the victims' valid ratios follow the WAF: where the WAFs are within a few percent, so are the CDFs (the table plan-fig5-victims.md has every run)";

/// The paper's claims, in its order (docs/plan.md "The paper's claims").
const CLAIMS: [Claim; 19] = [
    claim("Fig. 1: WAF rises to 230% from 1/8 to full parallelism", Some("Fig. 1: FIO WAF, full / 1/8 parallelism (baseline)"), Some("Fig. 1: FIO WAF, full / 1/8 parallelism (baseline@18)"), WHY_SPACE),
    claim("Fig. 1: 1/2 parallelism ~40% more throughput than full", None, Some("Fig. 1: FIO throughput, 1/2 / full parallelism (baseline@18)"), "with the WAF flat across the levels, full parallelism spreads the host's programs over the most chips"),
    claim("Fig. 3: FIO WAF -42% (PLAN-Pred-1/4)", Some("Fig. 3: FIO WAF, PLAN-Pred-1/4 / baseline"), Some("Fig. 3: FIO WAF, PLAN-Pred-1/4 / baseline@18"), WHY_UNIFORM),
    claim("Fig. 3: TPC-C WAF at least -25%", Some("Fig. 3: TPC-C WAF, PLAN-Pred-1/4 / baseline"), Some("Fig. 3: TPC-C WAF, PLAN-Pred-1/4 / baseline@18"), "the generator's hot 20% is rewritten uniformly within itself: the predictor's classes do not split it further than the baseline's greedy choice already does"),
    claim("Fig. 3: Fileserver WAF at least -25%", Some("Fig. 3: Fileserver WAF, PLAN-Pred-1/4 / baseline"), Some("Fig. 3: Fileserver WAF, PLAN-Pred-1/4 / baseline@18"), "whole files are created and deleted (TRIM) together, so victims are already emptied by deletes; lifetime classes add little"),
    claim("Fig. 3: GCC WAF more than halved, to 1.04-1.07", Some("Fig. 3: GCC WAF, PLAN-Pred-1/4 / baseline"), Some("Fig. 3: GCC WAF, PLAN-Pred-1/4 / baseline@18"), WHY_BUILD),
    claim("Fig. 3: YCSB WAF -5%", Some("Fig. 3: YCSB WAF, PLAN-Pred-1/4 / baseline"), Some("Fig. 3: YCSB WAF, PLAN-Pred-1/4 / baseline@18"), "the LSM generator's level regions have lifetimes that differ by region, which the predictor's 32-page chunks separate: a larger gain than the paper's"),
    claim("Fig. 3: 1/4 -> 1/8 changes WAF marginally", Some("Fig. 3: FIO WAF, PLAN-Pred-1/8 / PLAN-Pred-1/4"), None, "as the paper says: the small superblocks' size barely matters once they are small"),
    claim("Fig. 4: FIO blocks erased -46%", Some("Fig. 4: FIO blocks erased, PLAN-Pred-1/4 / baseline"), Some("Fig. 4: FIO blocks erased, PLAN-Pred-1/4 / baseline@18"), "every scheme writes the same host pages, so the erases follow the WAF (Fig. 3)"),
    claim("Fig. 4: GCC blocks erased -69%", Some("Fig. 4: GCC blocks erased, PLAN-Pred-1/4 / baseline"), Some("Fig. 4: GCC blocks erased, PLAN-Pred-1/4 / baseline@18"), WHY_BUILD),
    claim("Fig. 5: PLAN's victim CDF left of the others, FIO", Some("Fig. 5: FIO mean victim valid ratio, PLAN-Pred-1/4 - baseline"), Some("Fig. 5: FIO mean victim valid ratio, PLAN-Pred-1/4 - baseline@18"), WHY_FIG5),
    claim("Fig. 5: the same, TPC-C", Some("Fig. 5: TPC-C mean victim valid ratio, PLAN-Pred-1/4 - baseline"), Some("Fig. 5: TPC-C mean victim valid ratio, PLAN-Pred-1/4 - baseline@18"), WHY_FIG5),
    claim("Fig. 5: the same, Fileserver", Some("Fig. 5: Fileserver mean victim valid ratio, PLAN-Pred-1/4 - baseline"), Some("Fig. 5: Fileserver mean victim valid ratio, PLAN-Pred-1/4 - baseline@18"), WHY_FIG5),
    claim("Fig. 5: the same, GCC", Some("Fig. 5: GCC mean victim valid ratio, PLAN-Pred-1/4 - baseline"), Some("Fig. 5: GCC mean victim valid ratio, PLAN-Pred-1/4 - baseline@18"), WHY_BUILD),
    claim("Fig. 6: FIO throughput +30%", Some("Fig. 6: FIO throughput, PLAN-Pred-1/4 / baseline"), Some("Fig. 6: FIO throughput, PLAN-Pred-1/4 / baseline@18"), "throughput follows the GC work: no WAF gain over the 1-open baseline, no throughput gain; the 18-open baseline rotates its programs over 18 superblocks and interleaves GC with them on every chip"),
    claim("Fig. 6: Fileserver throughput ~+10%", Some("Fig. 6: Fileserver throughput, PLAN-Pred-1/4 / baseline"), Some("Fig. 6: Fileserver throughput, PLAN-Pred-1/4 / baseline@18"), "no WAF gain (Fig. 3), and the small superblocks serve the small writes on a quarter of the chips"),
    claim("Fig. 6: TPC-C throughput kept, if not improved", Some("Fig. 6: TPC-C throughput, PLAN-Pred-1/4 / baseline"), None, "throughput follows the WAF (Fig. 3)"),
    claim("Fig. 6: YCSB throughput kept, if not improved", Some("Fig. 6: YCSB throughput, PLAN-Pred-1/4 / baseline"), None, "throughput follows the WAF (Fig. 3), which PLAN cuts on this generator"),
    claim("Fig. 6: GCC throughput kept", Some("Fig. 6: GCC throughput, PLAN-Pred-1/4 / baseline"), None, "closed loop: the link step's 32-page writes wait behind small-superblock programs on a quarter of the chips"),
];

/// docs/plan.md's claims table from the report `r`: each claim of the paper with nowa's
/// value against both baselines, its verdict and the paper's value, and why (the generated
/// block `<!-- reproduction:begin plan-ssd-parallelism claims ... -->`).
///
/// # Panics
/// If a claim names an item the paper-value table lacks (a bug: `claims_name_paper_values`).
pub(super) fn claims_table(r: &super::Reproduction) -> String {
    use std::fmt::Write as _;
    let cell = |item: Option<&str>| -> String {
        let Some(item) = item else {
            return "-".into();
        };
        assert!(
            super::values::lookup(item).is_some(),
            "{item}: a paper value"
        );
        match r.entries.iter().find(|e| e.item == item) {
            None => "(not in the report)".into(),
            Some(e) => {
                let v = e.nowa_value.map_or_else(|| "-".into(), super::report::num);
                format!("{v} {}: **{}**", e.unit, e.verdict)
            }
        }
    };
    let paper = |c: &Claim| {
        let item = c.one.or(c.same).expect("a claim has an item");
        let v = super::values::lookup(item).expect("a paper value");
        let bound = match v.criterion {
            super::Criterion::AtMost => "<= ",
            super::Criterion::AtLeast => ">= ",
            super::Criterion::Near { .. } => "",
        };
        format!("{bound}{} {}", super::report::num(v.value), v.unit)
    };
    let mut s = String::from(
        "| claim (paper) | paper | vs baseline (1 open, FEMU) | vs baseline@18 (the paper's \"same number\") | why, in this model |\n|---|---:|---|---|---|\n",
    );
    for c in &CLAIMS {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            c.claim,
            paper(c),
            cell(c.one),
            cell(c.same),
            c.why
        );
    }
    for (&fill, [one, same]) in FILLS.iter().zip(SWEEP_ITEMS) {
        let _ = writeln!(
            s,
            "| Fig. 3: FIO WAF -42%, device aged to {:.0}% | 0.580 x | {} | {} | {WHY_FILL} |",
            fill * 100.0,
            cell(Some(one)),
            cell(Some(same))
        );
    }
    // The header, its rule, a row per claim and per fill level: no row lost to a bad cell.
    assert_eq!(
        s.lines().count(),
        2 + CLAIMS.len() + FILLS.len(),
        "a row per claim"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweeps_scale_line_states_its_own_fill_once() {
        let s = "16/15 GiB, OP 6.25%, aged 70% full, GC at 5% free, seed 42";
        assert_eq!(
            sweep_scale(s, 0.9),
            "16/15 GiB, OP 6.25%, aged 90% full, GC at 5% free, seed 42"
        );
        assert_eq!(sweep_scale("no level", 1.0), "no level; aged 100% full");
    }

    #[test]
    fn claims_name_paper_values_of_this_paper() {
        for c in &CLAIMS {
            for item in c.one.iter().chain(&c.same) {
                let v = super::super::values::lookup(item).unwrap_or_else(|| panic!("{item}"));
                assert_eq!(v.paper, super::super::Paper::Plan, "{item}");
            }
            assert!(c.one.is_some() || c.same.is_some(), "{}", c.claim);
        }
    }
}
