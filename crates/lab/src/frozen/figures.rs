//! `frozen figures`: the SepFrozen paper's figures that need no engine, on the write logs
//! available (a synthetic log by default; any recorded or converted log): every scheme's WAF
//! and FAR (Figures 3, 4, 11, 12), the configuration sweeps (15 to 17), the models (18, 20,
//! 21) and online retraining. A CSV (under the run's identity line) and a PNG per figure in
//! `out`, a summary. Nothing in `out` is overwritten without `force`.

use super::{f4, pct, replay_config, scheme_name, table, Rows};
use crate::text::size;
use crate::{Cancel, Error, Identity, Progress, Report};
use nowa_bench::plot::{render_bar_styled, render_line_styled, BarChart, LineChart, Series, Style};
use nowa_frozen::replay::{run as replay, OracleKind, ReplayConfig, ReplayLog, Scheme, SchemeRun};
use nowa_frozen::{ClassifierKind, FeatureSet, Model, SampleSpec, TrainConfig, Twl, WriteRecord};
use nowa_logspace::PolicyKind;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::PathBuf;

/// The figures' run, resolved (a result's `nowa.spec`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FiguresSpec {
    /// The directory of the `sepfrozen-*` files.
    pub out: PathBuf,
    /// Overwrite files already in `out`.
    pub force: bool,
    /// User writes of the synthetic log (absent: no synthetic log, `writes` only).
    pub synth_writes: Option<u64>,
    /// More write logs to evaluate, after the synthetic one.
    pub writes: Vec<PathBuf>,
    /// The log the model deployed on the i-th `writes` log is trained on (absent: the log
    /// itself, in-sample).
    pub train_writes: Vec<PathBuf>,
    /// Zone size in bytes of the default configuration.
    #[serde(with = "size")]
    pub zone_size: u64,
    /// Samples for the classifier comparison.
    pub max_samples: u64,
    /// Seed of the synthetic log, the splits and the replays (the model of the synthetic log
    /// is trained on the log of seed + 1).
    pub seed: u64,
}

/// The files written in `out`.
pub const OUTPUTS: [&str; 14] = [
    "sepfrozen-schemes.csv",
    "sepfrozen-waf.png",
    "sepfrozen-far.png",
    "sepfrozen-sweeps.csv",
    "sepfrozen-policy.png",
    "sepfrozen-zone-size.png",
    "sepfrozen-gp.png",
    "sepfrozen-models.csv",
    "sepfrozen-models.png",
    "sepfrozen-online.csv",
    "sepfrozen-online.png",
    "sepfrozen-summary.txt",
    "sepfrozen-twl.png",
    "sepfrozen-features.png",
];

/// One model's test metrics: (figure, variant, accuracy, recall, FPR).
pub type ModelRow = (String, String, Option<f64>, Option<f64>, Option<f64>);

/// What the figures measured.
#[derive(Debug, Clone, Serialize)]
pub struct FiguresResult {
    /// Per log: every scheme's replay (Figures 3, 4, 11, 12).
    pub schemes: Vec<(String, Vec<SchemeRun>)>,
    /// The configuration sweeps: (sweep, value, scheme, WAF, FAR).
    pub sweeps: Vec<(String, String, String, f64, f64)>,
    /// The models: (figure, variant, test accuracy, recall, FPR).
    pub models: Vec<ModelRow>,
    /// Online retraining: (base scheme, oracle, WAF, FAR).
    pub online: Vec<(String, String, f64, f64)>,
    /// The report printed and saved as `sepfrozen-summary.txt`.
    pub summary: String,
    /// The files written.
    pub files: Vec<PathBuf>,
}

impl FiguresSpec {
    /// Checks what the flags' parsers cannot: logs that exist, a log to evaluate, one
    /// training log per evaluated log at most, outputs that may be written.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the flag.
    pub fn check(&self) -> Result<(), Error> {
        if self.synth_writes.is_none() && self.writes.is_empty() {
            return Err(Error::Usage(
                "--no-synth needs at least one --writes FILE".into(),
            ));
        }
        for (flag, list) in [
            ("--writes", &self.writes),
            ("--train-writes", &self.train_writes),
        ] {
            if let Some(p) = list.iter().find(|p| !p.is_file()) {
                return Err(Error::Usage(format!(
                    "{flag} {}: no such file",
                    p.display()
                )));
            }
        }
        if self.train_writes.len() > self.writes.len() {
            return Err(Error::Usage(format!(
                "--train-writes: {} logs for {} --writes logs",
                self.train_writes.len(),
                self.writes.len()
            )));
        }
        if self.zone_size < 64 << 10 || self.zone_size % 4096 != 0 {
            return Err(Error::Usage(format!(
                "--zone-size {}: a multiple of 4 KiB, at least 64 KiB",
                self.zone_size
            )));
        }
        match OUTPUTS.iter().find(|f| self.out.join(f).exists()) {
            Some(f) if !self.force => Err(Error::Usage(format!(
                "--out {}: {f} exists (pass --force to overwrite)",
                self.out.display()
            ))),
            _ => Ok(()),
        }
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

/// What a run carries through its figures: the spec, the replay settings, the progress,
/// the report and the results so far.
struct Ctx<'a> {
    spec: &'a FiguresSpec,
    id: Identity,
    cfg: ReplayConfig,
    progress: Option<Progress<'a>>,
    done: u64,
    total: u64,
    /// The plots' extension (`png`; `svg` for the layout test).
    ext: &'static str,
    setup: String,
    rep: String,
    out: FiguresResult,
}

impl Ctx<'_> {
    fn tick(&mut self) {
        self.done += 1;
        assert!(self.done <= self.total, "no more steps than planned");
        if let Some(p) = self.progress {
            p(self.done, self.total);
        }
    }

    fn replay(&mut self, w: &Workload, s: Scheme, cfg: &ReplayConfig) -> Result<SchemeRun, Error> {
        let r = replay(&w.log, s, Some(&w.model), cfg, clock).map_err(super::failed)?;
        assert!(r.waf >= 1.0 - 1e-9, "{}: WAF >= 1", r.scheme);
        assert!(
            r.far.is_nan() || (0.0..=1.0).contains(&r.far),
            "{}: FAR is a share",
            r.scheme
        );
        assert!(
            r.frozen_moves <= r.gc_pages,
            "{}: frozen moves are GC moves",
            r.scheme
        );
        self.tick();
        Ok(r)
    }

    fn path(&mut self, name: &str) -> PathBuf {
        let p = self.spec.out.join(name);
        self.out.files.push(p.clone());
        p
    }

    fn save(&mut self, rows: &Rows, name: &str) -> Result<(), Error> {
        let p = self.path(name);
        rows.save(&p, &self.id)
    }

    fn bar(&mut self, chart: &BarChart, style: &Style, png: &str) -> Result<(), Error> {
        let p = self.path(&png.replace(".png", &format!(".{}", self.ext)));
        render_bar_styled(chart, style, &p).map_err(|e| Error::io(&p, e))
    }

    fn line(&mut self, chart: &LineChart, style: &Style, png: &str) -> Result<(), Error> {
        let p = self.path(&png.replace(".png", &format!(".{}", self.ext)));
        render_line_styled(chart, style, &p).map_err(|e| Error::io(&p, e))
    }

    /// The setup subtitle, with `more` after it.
    fn style(&self, more: &str) -> Style {
        Style {
            subtitle: format!("{}{more}", self.setup),
            ..Style::default()
        }
    }
}

fn clock() -> f64 {
    nowa_units::cpu::thread_cpu_secs()
}

/// The steps of a run (replays and fits), for the progress bar.
fn steps(logs: usize) -> u64 {
    assert!(logs >= 1, "the checked spec has a log");
    let schemes = super::paper_and_truth().len() * logs;
    let sweeps = super::seven().len() * (2 + 5 + 4);
    let models = 3 + 4 + FeatureSet::ladder().len();
    (logs + schemes + sweeps + models + 2 * 5) as u64
}

/// Runs every figure of `spec` (after [`FiguresSpec::check`]). Ctrl-C ([`Cancel`]) stops
/// between figures; the figures done are written and the summary says which did not run.
///
/// # Errors
/// [`Error::Usage`] for bad input (a damaged log), [`Error::Failed`] for a replay or training
/// that fails, [`Error::Io`] for an output that cannot be written.
pub fn run(
    spec: &FiguresSpec,
    progress: Option<Progress<'_>>,
    cancel: &Cancel,
) -> Result<Report<FiguresResult>, Error> {
    run_as(spec, progress, cancel, "png")
}

fn run_as(
    spec: &FiguresSpec,
    progress: Option<Progress<'_>>,
    cancel: &Cancel,
    ext: &'static str,
) -> Result<Report<FiguresResult>, Error> {
    spec.check()?;
    std::fs::create_dir_all(&spec.out).map_err(|e| Error::io(&spec.out, e))?;
    let id = Identity::now("frozen-figures", spec, spec.seed);
    let logs = usize::from(spec.synth_writes.is_some()) + spec.writes.len();
    let cfg = replay_config(
        spec.zone_size,
        0.15,
        &PolicyKind::CostBenefitSepBit,
        None,
        spec.seed,
    )?;
    let mut c = Ctx {
        spec,
        id: id.clone(),
        setup: String::new(),
        cfg,
        progress,
        done: 0,
        total: steps(logs),
        ext,
        rep: String::new(),
        out: FiguresResult {
            schemes: Vec::new(),
            sweeps: Vec::new(),
            models: Vec::new(),
            online: Vec::new(),
            summary: String::new(),
            files: Vec::new(),
        },
    };
    let ws = workloads(&mut c)?;
    assert_eq!(ws.len(), logs, "one workload per log");
    c.setup = setup_line(&ws[0], &c.cfg, spec.seed);
    let figures: [(&str, Figure); 4] = [
        ("schemes", |c, ws| schemes_figure(c, ws)),
        ("sweeps", |c, ws| sweeps_figure(c, &ws[0])),
        ("models", |c, ws| models_figure(c, &ws[0])),
        ("online", |c, ws| online_figure(c, &ws[0])),
    ];
    for (name, f) in figures {
        if cancel.requested() {
            let _ = writeln!(
                c.rep,
                "\ninterrupted (Ctrl-C): the {name} figure did not run"
            );
            continue;
        }
        f(&mut c, &ws)?;
    }
    assert!(
        c.done == c.total || cancel.requested(),
        "every planned step ran"
    );
    let p = c.path(OUTPUTS[11]);
    std::fs::write(&p, &c.rep).map_err(|e| Error::io(&p, e))?;
    c.out.summary = std::mem::take(&mut c.rep);
    Ok(Report {
        nowa: id,
        result: c.out,
    })
}

type Figure = fn(&mut Ctx<'_>, &[Workload]) -> Result<(), Error>;

/// The subtitle of every figure: the log, the model's training log, the replay setup.
fn setup_line(w: &Workload, cfg: &ReplayConfig, seed: u64) -> String {
    assert!(cfg.unit_pages >= 16, "the checked zone size holds 16 pages");
    format!(
        "{}, {} user writes ({:.0}% of versions frozen); model trained on {}; zones of {} pages ({} KiB; paper: 256 MiB), GC at GP {:.0}%, cb-sepbit victims; seed {seed}",
        w.name,
        w.log.user_writes(),
        100.0 * w.log.frozen_share(),
        w.trained_on,
        cfg.unit_pages,
        u64::from(cfg.unit_pages) * 4,
        100.0 * cfg.gp
    )
}

/// The logs: a synthetic one (model trained on another seed's log: "the previous run"), and
/// the given ones (model trained on the `train_writes` log, else on the same log: in-sample,
/// said in the output).
fn workloads(c: &mut Ctx<'_>) -> Result<Vec<Workload>, Error> {
    let s = c.spec;
    let mut out = Vec::new();
    if let Some(n) = s.synth_writes {
        let records = super::synth(n, s.seed);
        let model = super::sgd_model(&super::synth(n, s.seed + 1), s.seed)?;
        out.push(Workload {
            name: "synthetic log".to_owned(),
            log: ReplayLog::from_records(&records),
            records,
            model,
            trained_on: format!("the synthetic log of seed {}", s.seed + 1),
        });
        c.tick();
    }
    for (i, p) in s.writes.iter().enumerate() {
        let records = super::read_log("--writes", p)?;
        let (model, trained_on) = match s.train_writes.get(i) {
            Some(t) => (
                super::sgd_model(&super::read_log("--train-writes", t)?, s.seed)?,
                // The file name only: a full path (often a scratch directory) says nothing
                // to a reader of the figure and leaks the machine's layout into the docs.
                format!("{} (another run)", file_name(t)),
            ),
            None => (
                super::sgd_model(&records, s.seed)?,
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
        c.tick();
    }
    for w in &out {
        let _ = writeln!(
            c.rep,
            "workload {}: {} user writes, {} pages, {:.1}% of versions frozen; model trained on {} (test accuracy {}, recall {})",
            w.name, w.log.user_writes(), w.log.logical_pages, 100.0 * w.log.frozen_share(),
            w.trained_on, pct(w.model.metrics.test.accuracy), pct(w.model.metrics.test.recall)
        );
        recording_run(w, &mut c.rep);
    }
    Ok(out)
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

/// Figures 3, 4, 11, 12 (and 19's inference cost): every scheme on every workload; one bar
/// per scheme and log (categories are the schemes, spelled out).
fn schemes_figure(c: &mut Ctx<'_>, ws: &[Workload]) -> Result<(), Error> {
    let schemes = super::paper_and_truth();
    let mut csv = Rows::new(&[
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
    let cfg = c.cfg.clone();
    for w in ws {
        let runs = schemes
            .iter()
            .map(|&s| c.replay(w, s, &cfg))
            .collect::<Result<Vec<_>, _>>()?;
        assert_eq!(runs.len(), schemes.len(), "one run per scheme");
        let _ = writeln!(
            c.rep,
            "\n[Figures 3, 4, 11, 12] {} — zones {} pages, GP 15%, cb-sepbit\n{}",
            w.name,
            cfg.unit_pages,
            table(&runs, false)
        );
        for r in &runs {
            let inf = r
                .inference
                .map_or(String::new(), |x| f4(1e3 * x.secs_per_256mib()));
            csv.row(vec![
                w.name.clone(),
                scheme_name(&r.scheme),
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
        c.out.schemes.push((w.name.clone(), runs));
    }
    c.save(&csv, OUTPUTS[0])?;
    let paper = "; paper (TPC-C): SepFrozenBIT vs SepBIT WAF -30.2%, FAR -35.4%";
    for (groups, y, png) in [(waf, "WAF", OUTPUTS[1]), (far, "FAR", OUTPUTS[2])] {
        let (cats, groups) = by_base(&schemes, &groups);
        let chart = BarChart {
            title: format!("SepFrozen replay: {y} of each scheme, and with SepFrozen on top"),
            y_label: y.into(),
            categories: cats,
            groups,
        };
        let style = c.style(paper);
        c.bar(&chart, &style, png)?;
    }
    Ok(())
}

/// The bars of the schemes figure: a category per scheme without SepFrozen, and per log the
/// scheme itself, with SepFrozen's model on top and with the exact labels (SepFrozenBIT on
/// SepBIT, SepFrozenDAC on DAC as the paper states it; a gap elsewhere). Eight categories and
/// three colours, where twelve bars of one colour left no room for their names.
fn by_base(
    schemes: &[Scheme],
    per_log: &[(String, Vec<f64>)],
) -> (Vec<String>, Vec<(String, Vec<f64>)>) {
    let base_of = |s: &Scheme| match s {
        Scheme::Frozen { dac: true, .. } => "dac-paper".to_owned(),
        Scheme::Frozen { dac: false, .. } => "sepbit".to_owned(),
        other => scheme_name(&other.to_string()),
    };
    let mut cats: Vec<String> = Vec::new();
    for s in schemes
        .iter()
        .filter(|s| !matches!(s, Scheme::Frozen { .. }))
    {
        cats.push(scheme_name(&s.to_string()));
    }
    let kind = |s: &Scheme| match s {
        Scheme::Frozen {
            oracle: OracleKind::Truth,
            ..
        } => 2,
        Scheme::Frozen { .. } => 1,
        _ => 0,
    };
    let names = [
        "scheme",
        "with SepFrozen (model)",
        "with SepFrozen (exact labels)",
    ];
    let mut groups = Vec::new();
    for (log, values) in per_log {
        for (k, name) in names.iter().enumerate() {
            let mut v = vec![f64::NAN; cats.len()];
            for (s, &x) in schemes.iter().zip(values) {
                if kind(s) == k {
                    let i = cats
                        .iter()
                        .position(|c| *c == base_of(s))
                        .expect("every base is a category");
                    v[i] = x;
                }
            }
            let label = if per_log.len() > 1 {
                format!("{log}: {name}")
            } else {
                (*name).to_owned()
            };
            groups.push((label, v));
        }
    }
    assert!(
        groups.iter().all(|g| g.1.len() == cats.len()),
        "a value per category"
    );
    assert!(
        cats.contains(&"sepbit".to_owned()) && cats.contains(&"dac-paper".to_owned()),
        "SepFrozen's bases are categories"
    );
    (cats, groups)
}

/// One configuration sweep: the seven schemes at every value; a series per scheme.
fn sweep(
    c: &mut Ctx<'_>,
    w: &Workload,
    name: &str,
    values: Vec<(String, f64, ReplayConfig)>,
    csv: &mut Rows,
) -> Result<Vec<Series>, Error> {
    let schemes = super::seven();
    let mut series: Vec<Series> = schemes
        .iter()
        .map(|s| Series {
            label: scheme_name(&s.to_string()),
            points: Vec::new(),
        })
        .collect();
    for (label, x, cfg) in values {
        let runs = schemes
            .iter()
            .map(|&s| c.replay(w, s, &cfg))
            .collect::<Result<Vec<_>, _>>()?;
        assert_eq!(runs.len(), series.len(), "one run per scheme");
        let line: Vec<String> = runs
            .iter()
            .map(|r| format!("{} {:.3}", scheme_name(&r.scheme), r.waf))
            .collect();
        let _ = writeln!(c.rep, "{name} {label}: {}", line.join(", "));
        for (s, r) in series.iter_mut().zip(&runs) {
            s.points.push((x, r.waf));
            let scheme = scheme_name(&r.scheme);
            csv.row(vec![
                name.into(),
                label.clone(),
                scheme.clone(),
                f4(r.waf),
                f4(r.far),
            ]);
            c.out
                .sweeps
                .push((name.into(), label.clone(), scheme, r.waf, r.far));
        }
    }
    Ok(series)
}

/// Figures 15, 16, 17: victim policy, zone size, GP threshold (first workload). Zone sizes
/// are the default's 1/4 to 4x (the paper's 64 MiB to 1 GiB around 256 MiB).
fn sweeps_figure(c: &mut Ctx<'_>, w: &Workload) -> Result<(), Error> {
    let mut csv = Rows::new(&["sweep", "value", "scheme", "waf", "far"]);
    let _ = writeln!(c.rep, "\n[Figures 15, 16, 17] {} — WAF", w.name);
    let base = c.cfg.clone();
    let with = |f: &dyn Fn(&mut ReplayConfig)| {
        let mut x = base.clone();
        f(&mut x);
        x
    };
    let pol_values = [
        ("greedy", PolicyKind::Greedy),
        ("cost-benefit", PolicyKind::CostBenefitSepBit),
    ]
    .into_iter()
    .zip([0.0, 1.0])
    .map(|((l, p), x)| (l.to_owned(), x, with(&|c| c.policy = p.clone())))
    .collect();
    let pol = sweep(c, w, "policy", pol_values, &mut csv)?;
    let unit = (base.unit_pages / 4).max(16);
    let ks = [1u32, 2, 4, 8, 16];
    let zone_values = ks
        .iter()
        .map(|&k| {
            (
                (unit * k).to_string(),
                f64::from(unit * k),
                with(&|c| c.unit_pages = unit * k),
            )
        })
        .collect();
    let zones = sweep(c, w, "zone_pages", zone_values, &mut csv)?;
    let gp_values = [0.10, 0.15, 0.20, 0.25]
        .into_iter()
        .map(|g| (format!("{g}"), g, with(&|c| c.gp = g)))
        .collect();
    let gps = sweep(c, w, "gp", gp_values, &mut csv)?;
    c.save(&csv, OUTPUTS[3])?;
    sweep_charts(
        c,
        &pol,
        zones,
        gps,
        ks.map(|k| f64::from(unit * k)).to_vec(),
    )
}

/// The charts of Figures 15 (bars per scheme), 16 and 17 (a line per scheme).
fn sweep_charts(
    c: &mut Ctx<'_>,
    pol: &[Series],
    zones: Vec<Series>,
    gps: Vec<Series>,
    zone_ticks: Vec<f64>,
) -> Result<(), Error> {
    let chart = BarChart {
        title: "WAF: greedy vs cost-benefit victims (Fig. 15)".into(),
        y_label: "WAF".into(),
        categories: pol.iter().map(|s| s.label.clone()).collect(),
        groups: ["greedy", "cost-benefit"]
            .iter()
            .enumerate()
            .map(|(i, l)| ((*l).to_owned(), pol.iter().map(|s| s.points[i].1).collect()))
            .collect(),
    };
    let style = c.style("");
    c.bar(&chart, &style, OUTPUTS[4])?;
    let line = |series, x: &str, title: &str, log_x| LineChart {
        title: title.into(),
        x_label: x.into(),
        y_label: "WAF".into(),
        series,
        log_x,
        log_y: false,
        y_range: None,
    };
    let style = Style {
        x_ticks: zone_ticks,
        ..c.style("")
    };
    let chart = line(
        zones,
        "zone size (4 KiB pages)",
        "WAF vs zone size (Fig. 16)",
        true,
    );
    c.line(&chart, &style, OUTPUTS[5])?;
    let style = Style {
        x_ticks: vec![0.10, 0.15, 0.20, 0.25],
        ..c.style("")
    };
    let chart = line(
        gps,
        "GP threshold (garbage share that starts GC)",
        "WAF vs GP threshold (Fig. 17)",
        false,
    );
    c.line(&chart, &style, OUTPUTS[6])
}

/// The models of Figures 18, 20 and 21: (figure, variant, samples, classifier), and each
/// one's bar name.
type Variant = (&'static str, String, SampleSpec, ClassifierKind);

fn model_variants() -> (Vec<Variant>, Vec<String>) {
    let mut variants: Vec<Variant> = Vec::new();
    let mut bar_names: Vec<String> = Vec::new();
    for k in [
        ClassifierKind::Sgd,
        ClassifierKind::Logreg,
        ClassifierKind::Tree,
    ] {
        variants.push(("fig18", k.name().to_owned(), SampleSpec::default(), k));
        bar_names.push(k.name().to_owned());
    }
    for n in 1..=4u8 {
        let twl = Twl::new(n).expect("1..=4 are window lengths");
        let spec = SampleSpec {
            twl,
            ..SampleSpec::default()
        };
        variants.push(("fig20", format!("TWL {n}"), spec, ClassifierKind::Sgd));
        bar_names.push(format!("{n} record{}", if n > 1 { "s" } else { "" }));
    }
    let mut prev = String::new();
    for fs in FeatureSet::ladder() {
        // Each rung adds one field to the one before: its bar is named by the field added.
        let text = fs.to_string();
        let added: Vec<&str> = text
            .split(',')
            .filter(|f| !prev.split(',').any(|p| p == *f))
            .collect();
        let added = added.join("+").to_uppercase();
        bar_names.push(if prev.is_empty() {
            added
        } else {
            format!("+ {added}")
        });
        prev = text.clone();
        let spec = SampleSpec {
            features: fs,
            ..SampleSpec::default()
        };
        variants.push((
            "fig21",
            fs.to_string().replace(',', "+"),
            spec,
            ClassifierKind::Sgd,
        ));
    }
    assert_eq!(variants.len(), bar_names.len(), "a bar name per model");
    (variants, bar_names)
}

/// Figures 18, 20, 21: classifiers, TWL, feature sets (test split of the first workload).
fn models_figure(c: &mut Ctx<'_>, w: &Workload) -> Result<(), Error> {
    let seed = c.spec.seed;
    let _ = writeln!(
        c.rep,
        "\n[Figures 18, 20, 21] {} — test split (25%), seed {seed}",
        w.name
    );
    let mut csv = Rows::new(&[
        "figure",
        "variant",
        "accuracy",
        "recall",
        "fpr",
        "train_cpu_secs",
    ]);
    let (variants, bar_names) = model_variants();
    let mut values: [Vec<f64>; 3] = Default::default();
    for (fig, variant, spec, classifier) in variants {
        let cfg = TrainConfig {
            classifier,
            seed,
            max_samples: Some(usize::try_from(c.spec.max_samples).unwrap_or(usize::MAX)),
            ..TrainConfig::default()
        };
        let t0 = clock();
        let m = super::fit(&w.records, &spec, &cfg)?;
        let secs = clock() - t0;
        c.tick();
        let t = &m.metrics.test;
        let share = |v: Option<f64>| v.is_none_or(|x| (0.0..=1.0).contains(&x));
        assert!(
            share(t.accuracy) && share(t.recall) && share(t.fpr),
            "metrics are shares"
        );
        let _ = writeln!(
            c.rep,
            "{fig} {variant:<22} accuracy {} recall {} FPR {} ({secs:.2} s CPU)",
            pct(t.accuracy),
            pct(t.recall),
            pct(t.fpr)
        );
        let cell = |v: Option<f64>| v.map_or(String::new(), f4);
        csv.row(vec![
            fig.into(),
            variant.clone(),
            cell(t.accuracy),
            cell(t.recall),
            cell(t.fpr),
            format!("{secs:.3}"),
        ]);
        for (vs, v) in values.iter_mut().zip([t.accuracy, t.recall, t.fpr]) {
            vs.push(v.unwrap_or(f64::NAN));
        }
        c.out
            .models
            .push((fig.into(), variant.clone(), t.accuracy, t.recall, t.fpr));
    }
    c.save(&csv, OUTPUTS[7])?;
    model_charts(c, &bar_names, values)
}

/// Figures 18 (classifiers), 20 (records per sample) and 21 (fields added one at a time):
/// test accuracy, recall and false-positive rate, one chart each.
fn model_charts(c: &mut Ctx<'_>, names: &[String], values: [Vec<f64>; 3]) -> Result<(), Error> {
    assert_eq!(names.len(), values[0].len(), "a name per model");
    assert!(
        names.len() > 7,
        "the feature ladder follows the classifiers and the TWLs"
    );
    // The paper's SGD accuracy (Figure 18, TPC-C) as the reference on the SGD bar.
    let paper_acc = crate::reproduce::values::lookup("Fig. 18: SGD model accuracy")
        .map_or(f64::NAN, |v| v.value / 100.0);
    let charts = [
        (
            0..3,
            "Fig. 18: classifiers (TWL 2, all six fields)",
            OUTPUTS[8],
        ),
        (
            3..7,
            "Fig. 20: hotness records per sample (TWL; SGD)",
            OUTPUTS[12],
        ),
        (
            7..names.len(),
            "Fig. 21: fields added one at a time (TWL 2; SGD)",
            OUTPUTS[13],
        ),
    ];
    for (range, title, png) in charts {
        let pick = |v: &Vec<f64>| v[range.clone()].to_vec();
        let mut reference = vec![vec![f64::NAN; range.len()]; 3];
        let note = if range.start == 0 {
            reference[0][0] = paper_acc;
            "; paper: SGD accuracy 92% on TPC-C (black mark)"
        } else {
            ""
        };
        let chart = BarChart {
            title: format!("Frozen-page models, {title}"),
            y_label: "share of test samples".into(),
            categories: names[range.clone()].to_vec(),
            groups: vec![
                ("accuracy".into(), pick(&values[0])),
                ("recall".into(), pick(&values[1])),
                ("false-positive rate".into(), pick(&values[2])),
            ],
        };
        let style = Style {
            bar_reference: reference,
            ..c.style(note)
        };
        c.bar(&chart, &style, png)?;
    }
    Ok(())
}

/// SepFrozen (`dac` or BIT) with the offline model, online refits at three horizons, and
/// the exact labels: (oracle, horizon, run).
fn online_runs(
    c: &mut Ctx<'_>,
    w: &Workload,
    dac: bool,
) -> Result<Vec<(String, String, SchemeRun)>, Error> {
    let base = c.cfg.clone();
    let pages = w.log.logical_pages.max(16);
    let model = c.replay(w, super::frozen(dac, OracleKind::Model), &base)?;
    let mut runs = vec![("offline model".to_owned(), String::new(), model)];
    for (h, name) in [(pages / 16, "n/16"), (pages / 4, "n/4"), (pages, "n")] {
        let cfg = ReplayConfig {
            horizon: Some(h),
            ..base.clone()
        };
        let r = replay(
            &w.log,
            super::frozen(dac, OracleKind::Online),
            None,
            &cfg,
            clock,
        )
        .map_err(super::failed)?;
        c.tick();
        runs.push((format!("online, horizon {name}"), h.to_string(), r));
    }
    let truth = c.replay(w, super::frozen(dac, OracleKind::Truth), &base)?;
    runs.push(("exact labels".into(), String::new(), truth));
    assert_eq!(runs.len(), 5, "offline, three horizons, exact labels");
    Ok(runs)
}

/// Beyond the paper: the offline model, online retraining (three horizons) and exact labels.
fn online_figure(c: &mut Ctx<'_>, w: &Workload) -> Result<(), Error> {
    let mut csv = Rows::new(&[
        "base",
        "oracle",
        "horizon",
        "waf",
        "far",
        "judged_frozen",
        "retrains",
        "retrain_cpu_secs",
    ]);
    let _ = writeln!(c.rep, "\n[online retraining] {} — SepFrozen with the offline model, online refits (horizon h in user writes, n = the log's pages), exact labels", w.name);
    let mut groups = Vec::new();
    let mut cats = Vec::new();
    for dac in [false, true] {
        let runs = online_runs(c, w, dac)?;
        let b = if dac {
            "sepfrozen-dac"
        } else {
            "sepfrozen-bit"
        };
        for (o, h, r) in &runs {
            let (jf, rt, rs) = r.inference.map_or_else(Default::default, |x| {
                (
                    x.frozen.to_string(),
                    x.retrains.to_string(),
                    format!("{:.3}", x.retrain_secs),
                )
            });
            let _ = writeln!(
                c.rep,
                "{b} {o:<22} WAF {:.3} FAR {:.3} judged frozen {jf} retrains {rt}",
                r.waf, r.far
            );
            csv.row(vec![
                b.into(),
                o.clone(),
                h.clone(),
                f4(r.waf),
                f4(r.far),
                jf,
                rt,
                rs,
            ]);
            c.out.online.push((b.into(), o.clone(), r.waf, r.far));
        }
        cats = runs.iter().map(|r| r.0.clone()).collect();
        groups.push((b.to_owned(), runs.iter().map(|r| r.2.waf).collect()));
    }
    c.save(&csv, OUTPUTS[9])?;
    let chart = BarChart {
        title: "SepFrozen WAF: offline model vs online retraining vs exact labels".into(),
        y_label: "WAF".into(),
        categories: cats,
        groups,
    };
    let style = c.style("; n = the log's distinct pages");
    c.bar(&chart, &style, OUTPUTS[10])
}

/// A path's last component, for figure subtitles and reports (the whole path if it has none).
fn file_name(p: &std::path::Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn small(out: &Path) -> FiguresSpec {
        FiguresSpec {
            out: out.to_owned(),
            force: false,
            synth_writes: Some(20_000),
            writes: Vec::new(),
            train_writes: Vec::new(),
            zone_size: 256 << 10,
            max_samples: 5_000,
            seed: 7,
        }
    }

    /// Every figure, rendered as SVG from a small synthetic log: no overprinted text, no
    /// covered data (the layout check), the setup subtitle on each, every step counted.
    #[test]
    fn every_figure_passes_the_layout_check() {
        let dir = tempfile::tempdir().unwrap();
        let spec = small(dir.path());
        let last = std::sync::Mutex::new((0, 0));
        let progress = |d: u64, t: u64| *last.lock().unwrap() = (d, t);
        let out = run_as(&spec, Some(&progress), &Cancel, "svg").unwrap();
        let (d, t) = *last.lock().unwrap();
        assert_eq!((d, t), (steps(1), steps(1)), "every step reported");
        let svgs: Vec<&PathBuf> = out
            .result
            .files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "svg"))
            .collect();
        assert_eq!(svgs.len(), 9, "{:?}", out.result.files);
        for p in svgs {
            nowa_bench::plot_layout::check_file(p)
                .unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
            let svg = std::fs::read_to_string(p).unwrap();
            assert!(
                svg.contains("synthetic log, 20000 user writes"),
                "{}: no setup subtitle",
                p.display()
            );
        }
        let csv = std::fs::read_to_string(dir.path().join(OUTPUTS[0])).unwrap();
        assert!(csv.starts_with("# nowa {"), "identity line first");
        assert!(
            !csv.contains(":6,"),
            "scheme names without the default class count"
        );
    }

    /// The subtitle names a training log by its file name, not by where it lay (a scratch
    /// directory in the shipped figures before).
    #[test]
    fn a_training_log_is_named_by_its_file_name() {
        assert_eq!(
            file_name(Path::new("/tmp/run.x/tpcc-43.log")),
            "tpcc-43.log"
        );
        assert_eq!(file_name(Path::new("tpcc-43.log")), "tpcc-43.log");
        assert_eq!(file_name(Path::new("/")), "/");
    }

    /// A second run into the same directory is refused without force (nothing overwritten);
    /// bad inputs name their flag; the spec round-trips through JSON and TOML.
    #[test]
    fn outputs_are_not_overwritten_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let spec = small(dir.path());
        std::fs::write(dir.path().join("sepfrozen-gp.png"), b"earlier").unwrap();
        let e = spec.check().unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("--force"), "{e}");
        assert!(FiguresSpec {
            force: true,
            ..spec.clone()
        }
        .check()
        .is_ok());
        let none = FiguresSpec {
            synth_writes: None,
            force: true,
            ..spec.clone()
        };
        assert!(none.check().unwrap_err().to_string().contains("--no-synth"));
        let missing = FiguresSpec {
            writes: vec!["/nonexistent/w.log".into()],
            force: true,
            ..spec.clone()
        };
        assert!(missing
            .check()
            .unwrap_err()
            .to_string()
            .contains("--writes /nonexistent/w.log"));
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(serde_json::from_str::<FiguresSpec>(&json).unwrap(), spec);
        let toml = toml::to_string(&spec).unwrap();
        assert_eq!(toml::from_str::<FiguresSpec>(&toml).unwrap(), spec);
    }
}
