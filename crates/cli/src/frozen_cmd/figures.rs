//! `nowa frozen figures`: the paper's figures that need no engine, on write logs available
//! today (a synthetic log by default; any `--writes` log, e.g. one converted from a block
//! trace). CSV and PNG per figure under `--out`, a summary on stdout. With `--engine`, the
//! figures of runs in the engine instead ([`super::engine_figures`]).

use super::replay::{config, table};
use crate::flags;
use crate::usage;
use anyhow::{Context, Result};
use clap::Args;
use nowa_bench::plot::{render_bar, render_line, BarChart, LineChart, Series};
use nowa_frozen::replay::{run, OracleKind, ReplayConfig, ReplayLog, Scheme, SchemeRun};
use nowa_frozen::{
    train, ClassifierKind, Dataset, FeatureSet, LogReader, Metrics, Model, SampleSpec, Synth,
    SynthConfig, TrainConfig, Twl, WriteRecord,
};
use nowa_logspace::{PlacementKind, PolicyKind};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct FiguresArgs {
    /// Output directory (CSV + PNG, files named sepfrozen-*). Default: docs/figures, with
    /// --engine docs/figures/sepfrozen-engine.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run the engine instead of replaying logs: every scheme in the engine's DB GC on the
    /// simulated ZNS SSD for TPC-C (standard, steady) and YCSB (50% and 100% writes), a
    /// model trained on a run of the next seed, FK replayed on the SepBIT run's writes.
    #[arg(long, conflicts_with_all = ["writes", "train_writes", "no_synth", "synth_writes", "zone_size", "max_samples"])]
    engine: bool,
    #[command(flatten)]
    engine_args: super::engine_figures::EngineFigArgs,
    /// More write logs to evaluate (repeatable), after the synthetic one; the sweeps and
    /// model figures use the first log.
    #[arg(long, value_name = "FILE")]
    writes: Vec<PathBuf>,
    /// The log the model deployed on the i-th --writes log is trained on (repeatable, in
    /// the order of --writes; e.g. an engine-recorded TPC-C run of another seed: "trained on
    /// one run, deployed in the next"). Without it the model is trained on the log itself
    /// (in-sample).
    #[arg(long, value_name = "FILE")]
    train_writes: Vec<PathBuf>,
    /// Leave the synthetic log out (then --writes is needed).
    #[arg(long)]
    no_synth: bool,
    /// User writes of the synthetic log.
    #[arg(long, default_value = "1M", value_parser = flags::count::<u64>(10_000, 1 << 32))]
    synth_writes: u64,
    /// Zone size of the default configuration (the paper's 256 MiB, scaled).
    #[arg(long, default_value = "1MiB", value_parser = flags::size_4k(64 << 10, 1 << 40))]
    zone_size: u64,
    /// Samples for the classifier comparison (linfa's trainers are slow on millions).
    #[arg(long, default_value = "200k", value_parser = flags::count::<u64>(1000, 1 << 32))]
    max_samples: u64,
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

impl FiguresArgs {
    /// `--out` of the replay figures.
    fn out_dir(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from("docs/figures"))
    }
}

/// One evaluated log: its name, records, replay form and the model deployed on it.
struct Workload {
    name: String,
    records: Vec<WriteRecord>,
    log: ReplayLog,
    model: Model,
    /// Where the model was trained.
    trained_on: String,
}

/// A CSV file built in memory.
pub(super) struct Csv(String, usize);

impl Csv {
    pub(super) fn new(header: &[&str]) -> Self {
        Csv(header.join(",") + "\n", header.len())
    }
    pub(super) fn row(&mut self, cells: &[String]) {
        assert_eq!(cells.len(), self.1, "one cell per column");
        assert!(
            cells.iter().all(|c| !c.contains(',')),
            "cells without commas"
        );
        let _ = writeln!(self.0, "{}", cells.join(","));
    }
    pub(super) fn save(&self, dir: &Path, name: &str) -> Result<()> {
        let p = dir.join(name);
        std::fs::write(&p, &self.0).with_context(|| format!("writing {}", p.display()))
    }
}

fn sgd_model(records: &[WriteRecord], spec: &SampleSpec, cfg: &TrainConfig) -> Result<Model> {
    let (data, labels) = Dataset::from_records(records, spec);
    Ok(train(&data, spec, cfg, labels.len() as u64)?)
}

fn read_log(p: &Path) -> Result<Vec<WriteRecord>> {
    let mut r = LogReader::open(p).with_context(|| format!("--writes {}", p.display()))?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok(out)
}

fn synth(writes: u64, seed: u64) -> Vec<WriteRecord> {
    Synth::new(SynthConfig {
        writes,
        seed,
        ..SynthConfig::default()
    })
    .collect()
}

/// The logs: a synthetic one (model trained on another seed's log: "the previous run"), or
/// the given ones (model trained on the same log: in-sample, said in the output).
fn workloads(a: &FiguresArgs) -> Result<Vec<Workload>> {
    let cfg = TrainConfig {
        seed: a.seed,
        ..TrainConfig::default()
    };
    let spec = SampleSpec::default();
    let mut out = Vec::new();
    if !a.no_synth {
        let records = synth(a.synth_writes, a.seed);
        let model = sgd_model(&synth(a.synth_writes, a.seed + 1), &spec, &cfg)?;
        out.push(Workload {
            name: format!("synth-{}", a.synth_writes),
            log: ReplayLog::from_records(&records),
            records,
            model,
            trained_on: format!("synthetic log of seed {}", a.seed + 1),
        });
    }
    for (i, p) in a.writes.iter().enumerate() {
        let records = read_log(p)?;
        let (model, trained_on) = match a.train_writes.get(i) {
            Some(t) => (
                sgd_model(&read_log(t)?, &spec, &cfg)?,
                format!("{} (another run)", t.display()),
            ),
            None => (
                sgd_model(&records, &spec, &cfg)?,
                "the same log (in-sample)".into(),
            ),
        };
        let name = p
            .file_stem()
            .map_or("log".into(), |s| s.to_string_lossy().into_owned());
        out.push(Workload {
            name,
            log: ReplayLog::from_records(&records),
            records,
            model,
            trained_on,
        });
    }
    Ok(out)
}

fn clock() -> f64 {
    nowa_units::cpu::thread_cpu_secs()
}

fn replay_all(w: &Workload, schemes: &[Scheme], cfg: &ReplayConfig) -> Result<Vec<SchemeRun>> {
    schemes
        .iter()
        .map(|&s| Ok(run(&w.log, s, Some(&w.model), cfg, clock)?))
        .collect()
}

fn frozen(dac: bool, oracle: OracleKind) -> Scheme {
    Scheme::Frozen {
        dac,
        classes: 6,
        oracle,
    }
}

/// The seven schemes of the paper's configuration sweeps (Figures 15 to 17).
fn seven() -> Vec<Scheme> {
    vec![
        Scheme::Plain(PlacementKind::NoSep),
        Scheme::Plain(PlacementKind::SepGc),
        Scheme::Plain(PlacementKind::Warcip(6)),
        Scheme::Plain(PlacementKind::DacPaper(6)),
        frozen(true, OracleKind::Model),
        Scheme::Plain(PlacementKind::SepBit(6)),
        frozen(false, OracleKind::Model),
    ]
}

pub fn run_figures(a: &FiguresArgs) -> Result<()> {
    if a.engine {
        let out = a
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("docs/figures/sepfrozen-engine"));
        return super::engine_figures::run(&a.engine_args, &out, a.seed);
    }
    let out = a.out_dir();
    std::fs::create_dir_all(&out).with_context(|| format!("--out {}", out.display()))?;
    if a.no_synth && a.writes.is_empty() {
        return Err(usage(
            "--no-synth needs at least one --writes FILE".to_owned(),
        ));
    }
    if let Some(p) = a.writes.iter().find(|p| !p.exists()) {
        return Err(usage(format!("--writes {}: no such file", p.display())));
    }
    if let Some(p) = a.train_writes.iter().find(|p| !p.exists()) {
        return Err(usage(format!(
            "--train-writes {}: no such file",
            p.display()
        )));
    }
    if a.train_writes.len() > a.writes.len() {
        return Err(usage(format!(
            "--train-writes: {} logs for {} --writes logs",
            a.train_writes.len(),
            a.writes.len()
        )));
    }
    let cfg = config(
        a.zone_size,
        0.15,
        &PolicyKind::CostBenefitSepBit,
        None,
        a.seed,
    )?;
    let ws = workloads(a)?;
    let mut report = String::new();
    for w in &ws {
        let _ = writeln!(
            report,
            "workload {}: {} user writes, {} pages, {:.1}% of versions frozen; model trained on {} (test accuracy {})",
            w.name, w.log.user_writes(), w.log.logical_pages, 100.0 * w.log.frozen_share(),
            w.trained_on, pct(w.model.metrics.test.accuracy)
        );
        recording_run(w, &mut report);
    }
    schemes_figure(a, &ws, &cfg, &mut report)?;
    sweeps_figure(a, &ws[0], &cfg, &mut report)?;
    models_figure(a, &ws[0], &mut report)?;
    online_figure(a, &ws[0], &cfg, &mut report)?;
    print!("{report}");
    std::fs::write(a.out_dir().join("sepfrozen-summary.txt"), &report)?;
    Ok(())
}

/// What the log says about the run that recorded it (engine logs have GC moves): its FAR,
/// and 2R's rule (every GC-written page is frozen) scored against the exact labels.
fn recording_run(w: &Workload, rep: &mut String) {
    let c = nowa_frozen::Labels::from_records(&w.records).counts();
    if c.gc == 0 {
        return;
    }
    let m = c.rule_2r().metrics();
    let _ = writeln!(
        rep,
        "  recording run: {} GC moves, FAR {}; 2R's rule (GC-written = frozen): accuracy {}, recall {}, FPR {} (non-frozen share of GC moves {})",
        c.gc,
        pct(c.far()),
        pct(m.accuracy),
        pct(m.recall),
        pct(m.fpr),
        pct(c.far().map(|f| 1.0 - f))
    );
}

pub(super) fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |x| format!("{:.2}%", 100.0 * x))
}

pub(super) fn f4(x: f64) -> String {
    format!("{x:.4}")
}

/// Figures 3, 4, 11, 12 (and 19's inference cost): every scheme on every workload.
fn schemes_figure(
    a: &FiguresArgs,
    ws: &[Workload],
    cfg: &ReplayConfig,
    rep: &mut String,
) -> Result<()> {
    let mut schemes = Scheme::paper();
    schemes.push(frozen(false, OracleKind::Truth));
    schemes.push(frozen(true, OracleKind::Truth));
    let mut csv = Csv::new(&[
        "workload",
        "scheme",
        "waf",
        "far",
        "gc_moves",
        "frozen_moves",
        "victim_gp",
        "infer_ms_per_256mib",
    ]);
    let (mut waf, mut far) = (Vec::new(), Vec::new());
    for w in ws {
        let runs = replay_all(w, &schemes, cfg)?;
        let _ = writeln!(
            rep,
            "\n[Figures 3, 4, 11, 12] {} — zones {} pages, GP 15%, cb-sepbit\n{}",
            w.name,
            cfg.unit_pages,
            table(&runs, false)
        );
        for r in &runs {
            let inf = r
                .inference
                .map_or(String::new(), |c| f4(1e3 * c.secs_per_256mib()));
            csv.row(&[
                w.name.clone(),
                r.scheme.clone(),
                f4(r.waf),
                f4(r.far),
                r.gc_pages.to_string(),
                r.frozen_moves.to_string(),
                f4(r.victim_gp),
                inf,
            ]);
        }
        waf.push((w.name.clone(), runs.iter().map(|r| r.waf).collect()));
        far.push((w.name.clone(), runs.iter().map(|r| r.far).collect()));
    }
    csv.save(&a.out_dir(), "sepfrozen-schemes.csv")?;
    // Short labels so twelve bars fit: "sf-bit" for sepfrozen-bit:6.
    let cats: Vec<String> = schemes
        .iter()
        .map(|s| s.to_string().replace(":6", "").replace("sepfrozen-", "sf-"))
        .collect();
    for (name, groups, y) in [("waf", waf, "WAF"), ("far", far, "FAR")] {
        let chart = BarChart {
            title: format!("SepFrozen replay: {y} per scheme"),
            y_label: y.into(),
            categories: cats.clone(),
            groups,
        };
        render_bar(&chart, &a.out_dir().join(format!("sepfrozen-{name}.png")))?;
    }
    Ok(())
}

/// One configuration sweep: the seven schemes at every value; a series per scheme.
fn sweep(
    w: &Workload,
    name: &str,
    values: Vec<(String, f64, ReplayConfig)>,
    csv: &mut Csv,
    rep: &mut String,
) -> Result<Vec<Series>> {
    let schemes = seven();
    let mut series: Vec<Series> = schemes
        .iter()
        .map(|s| Series {
            label: s.to_string(),
            points: Vec::new(),
        })
        .collect();
    for (label, x, cfg) in values {
        let runs = replay_all(w, &schemes, &cfg)?;
        assert_eq!(runs.len(), series.len(), "one run per scheme");
        let line: Vec<String> = runs
            .iter()
            .map(|r| format!("{} {:.3}", r.scheme, r.waf))
            .collect();
        let _ = writeln!(rep, "{name} {label}: {}", line.join(", "));
        for (s, r) in series.iter_mut().zip(&runs) {
            s.points.push((x, r.waf));
            csv.row(&[
                name.into(),
                label.clone(),
                r.scheme.clone(),
                f4(r.waf),
                f4(r.far),
            ]);
        }
    }
    Ok(series)
}

fn line_chart(series: Vec<Series>, x: &str, title: &str, path: &Path) -> Result<()> {
    let chart = LineChart {
        title: title.into(),
        x_label: x.into(),
        y_label: "WAF".into(),
        series,
        log_x: false,
        log_y: false,
        y_range: None,
    };
    Ok(render_line(&chart, path)?)
}

/// Figures 15, 16, 17: victim policy, zone size, GP threshold (first workload). Zone sizes
/// are the default's 1/4 to 4x (the paper's 64 MiB to 1 GiB around 256 MiB).
fn sweeps_figure(
    a: &FiguresArgs,
    w: &Workload,
    base: &ReplayConfig,
    rep: &mut String,
) -> Result<()> {
    let mut csv = Csv::new(&["sweep", "value", "scheme", "waf", "far"]);
    let _ = writeln!(rep, "\n[Figures 15, 16, 17] {} — WAF", w.name);
    let with = |f: &dyn Fn(&mut ReplayConfig)| {
        let mut c = base.clone();
        f(&mut c);
        c
    };
    let policies = [
        ("greedy", PolicyKind::Greedy),
        ("cost-benefit", PolicyKind::CostBenefitSepBit),
    ];
    let pol_values = policies
        .iter()
        .zip([0.0, 1.0])
        .map(|((l, p), x)| ((*l).to_owned(), x, with(&|c| c.policy = p.clone())))
        .collect();
    let pol = sweep(w, "policy", pol_values, &mut csv, rep)?;
    let unit = (base.unit_pages / 4).max(16);
    let zone_values = [1u32, 2, 4, 8, 16]
        .map(|k| (unit * k).to_string())
        .into_iter()
        .zip([1u32, 2, 4, 8, 16])
        .map(|(l, k)| (l, f64::from(unit * k), with(&|c| c.unit_pages = unit * k)))
        .collect();
    let zones = sweep(w, "zone_pages", zone_values, &mut csv, rep)?;
    let gp_values = [0.10, 0.15, 0.20, 0.25]
        .into_iter()
        .map(|g| (format!("{g}"), g, with(&|c| c.gp = g)))
        .collect();
    let gps = sweep(w, "gp", gp_values, &mut csv, rep)?;
    csv.save(&a.out_dir(), "sepfrozen-sweeps.csv")?;
    let groups = pol
        .iter()
        .map(|x| (x.label.clone(), x.points.iter().map(|p| p.1).collect()))
        .collect();
    let chart = BarChart {
        title: "WAF: greedy vs cost-benefit (Fig. 15)".into(),
        y_label: "WAF".into(),
        categories: vec!["greedy".into(), "cost-benefit".into()],
        groups,
    };
    render_bar(&chart, &a.out_dir().join("sepfrozen-policy.png"))?;
    line_chart(
        zones,
        "zone size (pages)",
        "WAF vs zone size (Fig. 16)",
        &a.out_dir().join("sepfrozen-zone-size.png"),
    )?;
    line_chart(
        gps,
        "GP threshold",
        "WAF vs GP threshold (Fig. 17)",
        &a.out_dir().join("sepfrozen-gp.png"),
    )
}

fn metrics_cells(m: &Metrics) -> [String; 3] {
    [m.accuracy, m.recall, m.fpr].map(|v| v.map_or(String::new(), f4))
}

/// Accumulates the model figures' rows.
struct ModelRows {
    csv: Csv,
    bars: Vec<(String, Vec<f64>)>,
    cap: usize,
    seed: u64,
}

impl ModelRows {
    fn fit(
        &mut self,
        w: &Workload,
        fig: &str,
        variant: &str,
        spec: SampleSpec,
        classifier: ClassifierKind,
        rep: &mut String,
    ) -> Result<()> {
        let cfg = TrainConfig {
            classifier,
            seed: self.seed,
            max_samples: Some(self.cap),
            ..TrainConfig::default()
        };
        let t0 = clock();
        let m = sgd_model(&w.records, &spec, &cfg)?;
        let secs = clock() - t0;
        let t = &m.metrics.test;
        let _ = writeln!(
            rep,
            "{fig} {variant:<22} accuracy {} recall {} FPR {} ({secs:.2} s CPU)",
            pct(t.accuracy),
            pct(t.recall),
            pct(t.fpr)
        );
        let [acc, rec, fpr] = metrics_cells(t);
        self.csv.row(&[
            fig.into(),
            variant.into(),
            acc,
            rec,
            fpr,
            format!("{secs:.3}"),
        ]);
        let v = [t.accuracy, t.recall, t.fpr].map(|x| x.unwrap_or(f64::NAN));
        self.bars.push((format!("{fig} {variant}"), v.to_vec()));
        Ok(())
    }
}

/// Figures 18, 20, 21: classifiers, TWL, feature sets (test split of the first workload).
fn models_figure(a: &FiguresArgs, w: &Workload, rep: &mut String) -> Result<()> {
    let _ = writeln!(
        rep,
        "\n[Figures 18, 20, 21] {} — test split (25%), seed {}",
        w.name, a.seed
    );
    let mut rows = ModelRows {
        csv: Csv::new(&[
            "figure",
            "variant",
            "accuracy",
            "recall",
            "fpr",
            "train_cpu_secs",
        ]),
        bars: Vec::new(),
        cap: usize::try_from(a.max_samples).unwrap_or(usize::MAX),
        seed: a.seed,
    };
    for c in [
        ClassifierKind::Sgd,
        ClassifierKind::Logreg,
        ClassifierKind::Tree,
    ] {
        rows.fit(w, "fig18", c.name(), SampleSpec::default(), c, rep)?;
    }
    for n in 1..=4u8 {
        let spec = SampleSpec {
            twl: Twl::new(n).context("1..=4")?,
            ..SampleSpec::default()
        };
        rows.fit(
            w,
            "fig20",
            &format!("twl {n}"),
            spec,
            ClassifierKind::Sgd,
            rep,
        )?;
    }
    for fs in FeatureSet::ladder() {
        let spec = SampleSpec {
            features: fs,
            ..SampleSpec::default()
        };
        rows.fit(
            w,
            "fig21",
            &fs.to_string().replace(',', "+"),
            spec,
            ClassifierKind::Sgd,
            rep,
        )?;
    }
    rows.csv.save(&a.out_dir(), "sepfrozen-models.csv")?;
    let chart = BarChart {
        title: "Frozen-page models: test accuracy, recall, FPR (Figs. 18, 20, 21)".into(),
        y_label: "share".into(),
        categories: vec!["accuracy".into(), "recall".into(), "FPR".into()],
        groups: rows.bars,
    };
    Ok(render_bar(
        &chart,
        &a.out_dir().join("sepfrozen-models.png"),
    )?)
}

/// SepFrozen (`dac` or BIT) with the offline model, online refits at three horizons, and
/// the exact labels: (oracle, horizon, run).
fn online_runs(
    w: &Workload,
    dac: bool,
    base: &ReplayConfig,
) -> Result<Vec<(String, String, SchemeRun)>> {
    let pages = w.log.logical_pages.max(16);
    let model = run(
        &w.log,
        frozen(dac, OracleKind::Model),
        Some(&w.model),
        base,
        clock,
    )?;
    let mut runs = vec![("offline".to_owned(), String::new(), model)];
    for h in [pages / 16, pages / 4, pages] {
        let cfg = ReplayConfig {
            horizon: Some(h),
            ..base.clone()
        };
        let r = run(&w.log, frozen(dac, OracleKind::Online), None, &cfg, clock)?;
        runs.push((format!("online h={h}"), h.to_string(), r));
    }
    let truth = run(&w.log, frozen(dac, OracleKind::Truth), None, base, clock)?;
    runs.push(("truth".into(), String::new(), truth));
    Ok(runs)
}

/// Beyond the paper: the offline model, online retraining (three horizons) and exact labels.
fn online_figure(
    a: &FiguresArgs,
    w: &Workload,
    base: &ReplayConfig,
    rep: &mut String,
) -> Result<()> {
    let mut csv = Csv::new(&[
        "base",
        "oracle",
        "horizon",
        "waf",
        "far",
        "judged_frozen",
        "retrains",
        "retrain_cpu_secs",
    ]);
    let _ = writeln!(rep, "\n[online retraining] {} — SepFrozen with the offline model, online refits (horizon h in user writes), exact labels", w.name);
    let mut groups = Vec::new();
    for dac in [false, true] {
        let runs = online_runs(w, dac, base)?;
        let b = if dac {
            "sepfrozen-dac"
        } else {
            "sepfrozen-bit"
        };
        for (o, h, r) in &runs {
            let (jf, rt, rs) = r.inference.map_or_else(Default::default, |c| {
                (
                    c.frozen.to_string(),
                    c.retrains.to_string(),
                    format!("{:.3}", c.retrain_secs),
                )
            });
            let _ = writeln!(
                rep,
                "{b} {o:<16} WAF {:.3} FAR {:.3} judged frozen {jf} retrains {rt}",
                r.waf, r.far
            );
            csv.row(&[
                b.into(),
                o.clone(),
                h.clone(),
                f4(r.waf),
                f4(r.far),
                jf,
                rt,
                rs,
            ]);
        }
        groups.push((b.to_owned(), runs.iter().map(|r| r.2.waf).collect()));
    }
    csv.save(&a.out_dir(), "sepfrozen-online.csv")?;
    let cats = [
        "offline",
        "online h=n/16",
        "online h=n/4",
        "online h=n",
        "truth",
    ];
    let chart = BarChart {
        title: "SepFrozen WAF: offline model vs online retraining vs exact labels".into(),
        y_label: "WAF".into(),
        categories: cats.map(String::from).to_vec(),
        groups,
    };
    let png = a.out_dir().join("sepfrozen-online.png");
    Ok(render_bar(&chart, &png)?)
}
