//! `nowa frozen figures --engine`: SepFrozen and its baselines inside the engine's DB GC on
//! the simulated ZNS SSD, from one command (the paper's Figures 11 to 14 on the engine).
//!
//! Per workload (TPC-C standard and steady, YCSB 50% and 100% writes): a training run (seed
//! s+1, SepBIT, `--record-writes`) and a model trained on its log; then one run per scheme
//! (seed s), each recording its writes for the exact FAR; the SepBIT run's log replayed
//! through the placement simulator with every replay scheme, the FK oracles included, so FK is
//! evaluated on exactly the writes SepBIT's run made. Every run is `nowa ycsb|tpcc` itself:
//! the current executable, spawned with `--json` (no copy of the run logic; each run gets a
//! fresh process). CSV, PNG bar charts and a summary under `--out`.

use crate::usage;
use anyhow::{bail, Context, Result};
use clap::Args;
use nowa_bench::plot::{render_bar, render_bars, BarChart};
use nowa_frozen::replay::{self, ReplayLog, SchemeRun};
use nowa_frozen::{ClassifierKind, Dataset, Labels, Metrics, Model, SampleSpec, TrainConfig};
use nowa_lab::frozen::{f4, pct, replay_config as config, table, Rows as Csv};
use nowa_logspace::PolicyKind;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Flags of `nowa frozen figures --engine` (each needs `--engine`).
#[derive(Args, Debug, Clone)]
pub struct EngineFigArgs {
    /// With --engine: workloads, comma-separated (default all four: tpcc-standard,
    /// tpcc-steady, ycsb-50w, ycsb-100w).
    #[arg(long, requires = "engine", value_delimiter = ',', value_parser = workload)]
    workloads: Vec<Workload>,
    /// With --engine: schemes run in the engine, comma-separated (default all: nosep, 2r,
    /// warcip, dac, dac-paper, sepfrozen-dac, sepbit, sepfrozen-bit, the two retrained
    /// online during the run: sepfrozen-dac-online, sepfrozen-bit-online, and the two with the
    /// depth-8 tree model: sepfrozen-dac-tree, sepfrozen-bit-tree). The FK oracles are
    /// replayed on the sepbit run's log, so they need sepbit.
    #[arg(long, requires = "engine", value_delimiter = ',', value_parser = scheme)]
    schemes: Vec<&'static EngineScheme>,
    /// With --engine: TPC-C warehouses (default 2).
    #[arg(long, requires = "engine", value_parser = crate::flags::count::<u32>(1, 10_000))]
    warehouses: Option<u32>,
    /// With --engine: TPC-C transactions per run (default 60k).
    #[arg(long, requires = "engine", value_parser = crate::flags::count::<u64>(100, 1 << 40))]
    transactions: Option<u64>,
    /// With --engine: YCSB records (default 3M; the device holds them at 50% fill).
    #[arg(long, requires = "engine", value_parser = crate::flags::count::<u64>(1000, 1 << 40))]
    records: Option<u64>,
    /// With --engine: YCSB operations per run (default 480k).
    #[arg(long, requires = "engine", value_parser = crate::flags::count::<u64>(100, 1 << 40))]
    ops: Option<u64>,
    /// With --engine: where the runs' write logs and models go (default: a new directory in
    /// the system's temporary directory, removed at the end). Logs are deleted once read.
    #[arg(long, requires = "engine", value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// With --engine: keep the write logs and models in the work directory.
    #[arg(long, requires = "engine")]
    keep_logs: bool,
}

/// A workload of the figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// TPC-C as specified: the database grows.
    TpccStandard,
    /// Steady TPC-C (batch deletes): the database does not grow.
    TpccSteady,
    /// YCSB-A: 50% reads, 50% updates (the paper's "YCSB 50W").
    Ycsb50w,
    /// YCSB-W: 100% updates (the paper's "YCSB 100W").
    Ycsb100w,
}

impl Workload {
    const ALL: [Workload; 4] = [
        Workload::TpccStandard,
        Workload::TpccSteady,
        Workload::Ycsb50w,
        Workload::Ycsb100w,
    ];

    fn name(self) -> &'static str {
        match self {
            Workload::TpccStandard => "tpcc-standard",
            Workload::TpccSteady => "tpcc-steady",
            Workload::Ycsb50w => "ycsb-50w",
            Workload::Ycsb100w => "ycsb-100w",
        }
    }

    fn is_tpcc(self) -> bool {
        matches!(self, Workload::TpccStandard | Workload::TpccSteady)
    }

    /// The throughput's unit.
    fn unit(self) -> &'static str {
        if self.is_tpcc() {
            "tpmC"
        } else {
            "ops/s"
        }
    }

    /// The run's command line without `--placement`: 1 thread, the simulated ZNS SSD with
    /// its own zone size, the WAL on a separate device, GC at a garbage proportion of 15%.
    fn args(self, s: &Sizes, seed: u64) -> Vec<String> {
        let mut v: Vec<String> = match self {
            Workload::TpccStandard | Workload::TpccSteady => {
                let mut t = vec![
                    "tpcc".into(),
                    "--warehouses".into(),
                    s.warehouses.to_string(),
                    "--transactions".into(),
                    s.transactions.to_string(),
                ];
                if self == Workload::TpccSteady {
                    t.push("--steady".into());
                }
                t
            }
            Workload::Ycsb50w | Workload::Ycsb100w => vec![
                "ycsb".into(),
                "--records".into(),
                s.records.to_string(),
                "--dataset-fill".into(),
                "0.5".into(),
                "--workload".into(),
                if self == Workload::Ycsb50w { "A" } else { "W" }.into(),
                "--ops".into(),
                s.ops.to_string(),
            ],
        };
        let common = "--threads 1 --device sim --sim-mode zns --write-path oop --zone-size auto \
                      --separate-wal --gc-trigger gp -q --json";
        v.extend(common.split_whitespace().map(String::from));
        v.extend(["--seed".into(), seed.to_string()]);
        v
    }
}

fn workload(s: &str) -> Result<Workload, String> {
    Workload::ALL
        .into_iter()
        .find(|w| w.name() == s.trim())
        .ok_or_else(|| {
            let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
            format!("unknown workload '{s}' (expected {})", names.join(", "))
        })
}

/// Which of the models trained on the workload's training run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Logistic regression by SGD (the paper's model).
    Sgd,
    /// The depth-8 decision tree (Figure 18's non-linear comparison).
    Tree,
}

/// How a scheme gets its `--frozen-model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelArg {
    /// None (a rule-based scheme).
    None,
    /// A model trained on the workload's training run.
    Trained(Fit),
    /// This value as it is (e.g. a model the engine builds during the run).
    Literal(&'static str),
}

/// A scheme run in the engine.
#[derive(Debug, PartialEq, Eq)]
pub struct EngineScheme {
    /// Its name in the figures.
    pub name: &'static str,
    /// `--placement`.
    placement: &'static str,
    /// `--frozen-model`.
    model: ModelArg,
    /// The scheme it is compared with (SepFrozen's base scheme).
    base: Option<&'static str>,
}

/// The schemes, in the order of the figures. Adding one is one line here.
pub const SCHEMES: &[EngineScheme] = &[
    EngineScheme {
        name: "nosep",
        placement: "nosep",
        model: ModelArg::None,
        base: None,
    },
    EngineScheme {
        name: "2r",
        placement: "2r",
        model: ModelArg::None,
        base: None,
    },
    EngineScheme {
        name: "warcip",
        placement: "warcip",
        model: ModelArg::None,
        base: None,
    },
    EngineScheme {
        name: "dac",
        placement: "dac",
        model: ModelArg::None,
        base: None,
    },
    EngineScheme {
        name: "dac-paper",
        placement: "dac-paper",
        model: ModelArg::None,
        base: None,
    },
    EngineScheme {
        name: "sepfrozen-dac",
        placement: "sepfrozen-dac",
        model: ModelArg::Trained(Fit::Sgd),
        base: Some("dac-paper"),
    },
    EngineScheme {
        name: "sepbit",
        placement: "sepbit",
        model: ModelArg::None,
        base: None,
    },
    EngineScheme {
        name: "sepfrozen-bit",
        placement: "sepfrozen-bit",
        model: ModelArg::Trained(Fit::Sgd),
        base: Some("sepbit"),
    },
    EngineScheme {
        name: "sepfrozen-dac-online",
        placement: "sepfrozen-dac",
        model: ModelArg::Literal("online"),
        base: Some("dac-paper"),
    },
    EngineScheme {
        name: "sepfrozen-bit-online",
        placement: "sepfrozen-bit",
        model: ModelArg::Literal("online"),
        base: Some("sepbit"),
    },
    EngineScheme {
        name: "sepfrozen-dac-tree",
        placement: "sepfrozen-dac",
        model: ModelArg::Trained(Fit::Tree),
        base: Some("dac-paper"),
    },
    EngineScheme {
        name: "sepfrozen-bit-tree",
        placement: "sepfrozen-bit",
        model: ModelArg::Trained(Fit::Tree),
        base: Some("sepbit"),
    },
];

/// The scheme whose run's log is replayed (and trained on, from the training seed).
const REPLAYED: &str = "sepbit";

fn scheme(s: &str) -> Result<&'static EngineScheme, String> {
    SCHEMES.iter().find(|e| e.name == s.trim()).ok_or_else(|| {
        let names: Vec<_> = SCHEMES.iter().map(|e| e.name).collect();
        format!("unknown scheme '{s}' (expected {})", names.join(", "))
    })
}

/// The runs' sizes.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    warehouses: u32,
    transactions: u64,
    records: u64,
    ops: u64,
}

/// The files the command writes under `--out`.
const OUTPUTS: [&str; 6] = [
    "sepfrozen-engine.csv",
    "sepfrozen-engine-summary.txt",
    "sepfrozen-engine-waf.png",
    "sepfrozen-engine-far.png",
    "sepfrozen-engine-throughput.png",
    "sepfrozen-engine-replay-waf.png",
];

/// What one command needs: the flags resolved.
struct Plan {
    workloads: Vec<Workload>,
    schemes: Vec<&'static EngineScheme>,
    sizes: Sizes,
    seed: u64,
    work: PathBuf,
    /// The work directory is ours to remove.
    own_work: bool,
    keep: bool,
}

impl Plan {
    /// The sizes of the workloads run, in words.
    fn scale(&self) -> String {
        let s = &self.sizes;
        let mut parts = Vec::new();
        if self.workloads.iter().any(|w| w.is_tpcc()) {
            parts.push(format!(
                "TPC-C {} warehouses, {} transactions per run",
                s.warehouses, s.transactions
            ));
        }
        if self.workloads.iter().any(|w| !w.is_tpcc()) {
            parts.push(format!(
                "YCSB {} records, {} operations per run",
                s.records, s.ops
            ));
        }
        parts.join("; ")
    }
}

/// A trained model and what it scored.
struct Trained {
    sgd: Fitted,
    tree: Fitted,
    /// User writes in the training log and the share of their versions never invalidated.
    user_writes: u64,
    frozen_share: Option<f64>,
}

/// One model trained on the training run's log, and where it was saved.
struct Fitted {
    path: PathBuf,
    model: Model,
    /// CPU to read and label the log (shared by both models) and to train this one.
    train_cpu_secs: f64,
}

impl Trained {
    fn fitted(&self, f: Fit) -> &Fitted {
        match f {
            Fit::Sgd => &self.sgd,
            Fit::Tree => &self.tree,
        }
    }

    /// The trained model a run of scheme `name` deployed (None: rule-based or online).
    fn of_scheme(&self, name: &str) -> Option<&Fitted> {
        match SCHEMES.iter().find(|e| e.name == name)?.model {
            ModelArg::Trained(f) => Some(self.fitted(f)),
            ModelArg::None | ModelArg::Literal(_) => None,
        }
    }
}

/// One engine run's numbers (from its `--json` and its write log).
#[derive(Debug, Clone, Default)]
struct RunRow {
    scheme: String,
    db_waf: f64,
    far: Option<f64>,
    gc_moves: u64,
    gc_frozen: u64,
    throughput: f64,
    device_bound: Option<f64>,
    cpu_us_per_op: Option<f64>,
    /// (pages judged at GC, judged frozen, inference ms per 256 MiB).
    judged: Option<(u64, u64, f64)>,
    zone_bytes: u64,
    wall_secs: f64,
}

/// A replay: the zone size in pages and one run per replay scheme.
type Replay = (u32, Vec<SchemeRun>);

/// A workload's results.
struct WorkloadResult {
    workload: Workload,
    trained: Trained,
    runs: Vec<RunRow>,
    /// The replay of the SepBIT run's log (None without sepbit among the schemes).
    replay: Option<Replay>,
}

/// `nowa frozen figures --engine --out DIR`.
///
/// # Errors
/// Bad flags or existing outputs (usage), a run that fails, unwritable outputs.
pub fn run(a: &EngineFigArgs, out: &Path, seed: u64, force: bool) -> Result<()> {
    let plan = plan(a, seed)?;
    if let Some(f) = OUTPUTS.iter().find(|f| out.join(f).exists()) {
        if !force {
            return Err(usage(format!(
                "--out {}: {f} exists (pass --force to overwrite)",
                out.display()
            )));
        }
    }
    crate::resources::create_output_dir("--out", out)?;
    std::fs::create_dir_all(&plan.work)
        .with_context(|| format!("--work-dir {}", plan.work.display()))?;
    eprintln!(
        "nowa frozen figures --engine: seed {} (training runs seed {}), {} workloads x {} schemes; {}; work dir {}",
        plan.seed,
        plan.seed + 1,
        plan.workloads.len(),
        plan.schemes.len(),
        plan.scale(),
        plan.work.display()
    );
    let mut progress = Progress {
        done: 0,
        total: plan.workloads.len() * (plan.schemes.len() + 1),
    };
    let mut results = Vec::new();
    for &w in &plan.workloads {
        results.push(workload_runs(&plan, w, &mut progress)?);
    }
    write_csv(&plan, &results, out)?;
    charts(&plan, &results, out)?;
    let summary = summary(&plan, &results);
    print!("{summary}");
    std::fs::write(out.join(OUTPUTS[1]), &summary)
        .with_context(|| format!("writing {}", out.join(OUTPUTS[1]).display()))?;
    if plan.own_work && !plan.keep {
        std::fs::remove_dir_all(&plan.work)
            .with_context(|| format!("removing {}", plan.work.display()))?;
    }
    Ok(())
}

fn plan(a: &EngineFigArgs, seed: u64) -> Result<Plan> {
    let schemes = if a.schemes.is_empty() {
        SCHEMES.iter().collect()
    } else {
        a.schemes.clone()
    };
    let mut seen = std::collections::HashSet::new();
    if let Some(d) = schemes.iter().find(|s| !seen.insert(s.name)) {
        return Err(usage(format!("--schemes: {} given twice", d.name)));
    }
    let (work, own_work) = match &a.work_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("nowa-frozen-engine-{}", std::process::id())),
            true,
        ),
    };
    Ok(Plan {
        workloads: if a.workloads.is_empty() {
            Workload::ALL.to_vec()
        } else {
            a.workloads.clone()
        },
        schemes,
        sizes: Sizes {
            warehouses: a.warehouses.unwrap_or(2),
            transactions: a.transactions.unwrap_or(60_000),
            records: a.records.unwrap_or(3_000_000),
            ops: a.ops.unwrap_or(480_000),
        },
        seed,
        work,
        own_work,
        keep: a.keep_logs,
    })
}

/// Runs done of all, for the progress lines.
struct Progress {
    done: usize,
    total: usize,
}

impl Progress {
    fn line(&mut self, what: &str, result: &str, secs: f64) {
        self.done += 1;
        eprintln!(
            "[{}/{}] {what}: {result} ({secs:.1} s wall)",
            self.done, self.total
        );
    }
}

/// Runs `nowa ARGS` (this executable) and parses its JSON output.
fn run_nowa(args: &[String]) -> Result<(Value, f64)> {
    let exe = std::env::current_exe().context("finding the nowa executable")?;
    let t0 = Instant::now();
    let out = Command::new(&exe)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("starting {}", exe.display()))?;
    let wall = t0.elapsed().as_secs_f64();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("no message");
        bail!("nowa {} failed ({}): {last}", args.join(" "), out.status);
    }
    let v = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("the JSON output of nowa {}", args.join(" ")))?;
    Ok((v, wall))
}

fn num(v: &Value, ptr: &str) -> Option<f64> {
    v.pointer(ptr).and_then(Value::as_f64)
}

fn int(v: &Value, ptr: &str) -> Result<u64> {
    v.pointer(ptr)
        .and_then(Value::as_u64)
        .with_context(|| format!("no {ptr} in the run's JSON"))
}

/// The engine numbers of a run's JSON (`nowa tpcc` or `nowa ycsb`).
fn from_json(w: Workload, v: &Value) -> Result<RunRow> {
    let need = |ptr: &str| num(v, ptr).with_context(|| format!("no {ptr} in the run's JSON"));
    let mut r = RunRow {
        db_waf: need("/db_waf")?,
        ..RunRow::default()
    };
    if w.is_tpcc() {
        r.throughput = need("/run/tpmc")?;
        let new_orders = need("/run/new_orders")?;
        r.device_bound = num(v, "/device_busy_secs")
            .filter(|&s| s > 0.0)
            .map(|s| new_orders * 60.0 / s);
        r.cpu_us_per_op = num(v, "/run/cpu_us_per_txn");
        r.zone_bytes = int(v, "/zone_bytes")?;
    } else {
        r.throughput = need("/ops_per_sec")?;
        r.device_bound = num(v, "/bound/device_bound_ops_per_sec");
        r.cpu_us_per_op = num(v, "/bound/cpu_us_per_op");
        r.zone_bytes = int(v, "/spec/store/oop/zone_bytes")?;
    }
    if v.pointer("/frozen").is_some_and(|f| !f.is_null()) {
        r.judged = Some((
            int(v, "/frozen/inference/pages")?,
            int(v, "/frozen/inference/frozen")?,
            1e3 * need("/frozen/secs_per_256mib")?,
        ));
    }
    assert!(r.db_waf >= 1.0 - 1e-9, "DB WAF {} below 1", r.db_waf);
    Ok(r)
}

/// A write log's path in the work directory (a stale one from an earlier command is removed:
/// `--record-writes` refuses existing files).
fn log_path(p: &Plan, name: &str) -> Result<PathBuf> {
    let f = p.work.join(format!("nowa-engine-fig-{name}.log"));
    if f.exists() {
        std::fs::remove_file(&f).with_context(|| format!("removing {}", f.display()))?;
    }
    Ok(f)
}

fn done_with(p: &Plan, log: &Path) -> Result<()> {
    if p.keep {
        return Ok(());
    }
    std::fs::remove_file(log).with_context(|| format!("removing {}", log.display()))
}

/// The training run (seed + 1, SepBIT) and the two models trained on its log.
fn train_run(p: &Plan, w: Workload, prog: &mut Progress) -> Result<Trained> {
    let log = log_path(p, &format!("{}-train", w.name()))?;
    let mut args = w.args(&p.sizes, p.seed + 1);
    args.extend([
        "--placement".into(),
        REPLAYED.into(),
        "--record-writes".into(),
    ]);
    args.push(log.display().to_string());
    let (_, wall) = run_nowa(&args)?;
    let spec = SampleSpec::default();
    let cpu0 = nowa_units::cpu::process_cpu_secs();
    let (data, labels) =
        Dataset::from_log(&log, &spec).with_context(|| format!("reading {}", log.display()))?;
    let read_cpu = nowa_units::cpu::process_cpu_secs() - cpu0;
    let c = labels.counts();
    let records = labels.len() as u64;
    done_with(p, &log)?;
    let fit = |f: Fit| fit_model(p, w, f, (&data, &spec, records), read_cpu);
    let (sgd, tree) = (fit(Fit::Sgd)?, fit(Fit::Tree)?);
    let [a, b] = [&sgd, &tree].map(|f| {
        let t = &f.model.metrics.test;
        format!(
            "test accuracy {}, recall {}, FPR {} ({:.2} s CPU)",
            pct(t.accuracy),
            pct(t.recall),
            pct(t.fpr),
            f.train_cpu_secs
        )
    });
    prog.line(
        &format!("{} training run (seed {}, sepbit)", w.name(), p.seed + 1),
        &format!("SGD model: {a}; tree: {b}"),
        wall,
    );
    #[expect(clippy::cast_precision_loss, reason = "counts as a share")]
    let frozen_share = (c.user > 0).then(|| c.user_frozen as f64 / c.user as f64);
    Ok(Trained {
        sgd,
        tree,
        user_writes: c.user,
        frozen_share,
    })
}

/// Train model `f` on the training run's samples and save it in the work directory.
fn fit_model(
    p: &Plan,
    w: Workload,
    f: Fit,
    (data, spec, records): (&Dataset, &SampleSpec, u64),
    read_cpu: f64,
) -> Result<Fitted> {
    let cfg = match f {
        Fit::Sgd => TrainConfig {
            seed: p.seed,
            ..TrainConfig::default()
        },
        Fit::Tree => TrainConfig {
            classifier: ClassifierKind::Tree,
            seed: p.seed,
            max_samples: Some(nowa_frozen::TREE_SAMPLE_CAP),
            ..TrainConfig::default()
        },
    };
    let cpu0 = nowa_units::cpu::process_cpu_secs();
    let model = nowa_frozen::train(data, spec, &cfg, records)?;
    let train_cpu_secs = read_cpu + nowa_units::cpu::process_cpu_secs() - cpu0;
    let kind = match f {
        Fit::Sgd => "model",
        Fit::Tree => "tree",
    };
    let path = p
        .work
        .join(format!("nowa-engine-fig-{}-{kind}.json", w.name()));
    model
        .save(&path, true)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(Fitted {
        path,
        model,
        train_cpu_secs,
    })
}

/// One scheme's run in the engine, its FAR from its write log, and (for SepBIT) the replay
/// of that log.
fn scheme_run(
    p: &Plan,
    w: Workload,
    s: &EngineScheme,
    t: &Trained,
    prog: &mut Progress,
) -> Result<(RunRow, Option<Replay>)> {
    let log = log_path(p, &format!("{}-{}", w.name(), s.name))?;
    let mut args = w.args(&p.sizes, p.seed);
    args.extend(["--placement".into(), s.placement.into()]);
    match s.model {
        ModelArg::None => {}
        ModelArg::Trained(f) => args.extend([
            "--frozen-model".into(),
            t.fitted(f).path.display().to_string(),
        ]),
        ModelArg::Literal(m) => args.extend(["--frozen-model".into(), m.into()]),
    }
    args.extend(["--record-writes".into(), log.display().to_string()]);
    let (v, wall) = run_nowa(&args)?;
    let mut r = from_json(w, &v)?;
    let c = Labels::from_log(&log)
        .with_context(|| format!("reading {}", log.display()))?
        .counts();
    r.scheme = s.name.into();
    r.far = c.far();
    r.gc_moves = c.gc;
    r.gc_frozen = c.gc_frozen;
    r.wall_secs = wall;
    let replay = if s.name == REPLAYED {
        Some(replay_log(p, &log, r.zone_bytes, &t.sgd.model)?)
    } else {
        None
    };
    done_with(p, &log)?;
    prog.line(
        &format!("{} {} (seed {})", w.name(), s.name, p.seed),
        &format!(
            "DB WAF {:.3}, FAR {}, {} {:.0}",
            r.db_waf,
            pct(r.far),
            w.unit(),
            r.throughput
        ),
        wall,
    );
    Ok((r, replay))
}

/// The replay of `log` with every replay scheme (the paper's, FK and FK-kmeans included) at
/// the engine's zone size, GP 15%, SepBIT's cost-benefit victims.
fn replay_log(p: &Plan, log: &Path, zone_bytes: u64, model: &Model) -> Result<Replay> {
    let cfg = config(
        zone_bytes,
        0.15,
        &PolicyKind::CostBenefitSepBit,
        None,
        p.seed,
    )
    .map_err(crate::lab_error)?;
    let rl = ReplayLog::load(log).with_context(|| format!("reading {}", log.display()))?;
    let runs = nowa_lab::frozen::paper_and_truth()
        .into_iter()
        .map(|s| {
            Ok(replay::run(
                &rl,
                s,
                Some(model),
                &cfg,
                nowa_units::cpu::thread_cpu_secs,
            )?)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((cfg.unit_pages, runs))
}

fn workload_runs(p: &Plan, w: Workload, prog: &mut Progress) -> Result<WorkloadResult> {
    let trained = train_run(p, w, prog)?;
    let mut runs = Vec::new();
    let mut replay = None;
    for s in &p.schemes {
        let (r, rp) = scheme_run(p, w, s, &trained, prog)?;
        runs.push(r);
        replay = replay.or(rp);
    }
    if !p.keep {
        for f in [&trained.sgd, &trained.tree] {
            std::fs::remove_file(&f.path)
                .with_context(|| format!("removing {}", f.path.display()))?;
        }
    }
    Ok(WorkloadResult {
        workload: w,
        trained,
        runs,
        replay,
    })
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or_else(String::new, f)
}

fn model_cells(m: &Metrics) -> [String; 3] {
    [m.accuracy, m.recall, m.fpr].map(|v| opt(v, f4))
}

/// One CSV: the engine runs (`source` engine) and the replays of the SepBIT run's log
/// (`source` replay, where FK and FK-kmeans are).
fn write_csv(p: &Plan, results: &[WorkloadResult], out: &Path) -> Result<()> {
    let mut csv = Csv::new(&[
        "workload",
        "source",
        "scheme",
        "waf",
        "far",
        "gc_moves",
        "frozen_moves",
        "throughput",
        "throughput_unit",
        "device_bound_throughput",
        "cpu_us_per_op",
        "judged_pages",
        "judged_frozen",
        "infer_ms_per_256mib",
        "model_accuracy",
        "model_recall",
        "model_fpr",
        "train_cpu_secs",
        "zone_pages",
        "wall_secs",
    ]);
    for wr in results {
        let w = wr.workload;
        for r in &wr.runs {
            let fitted = wr.trained.of_scheme(&r.scheme);
            let [acc, rec, fpr] =
                fitted.map_or_else(Default::default, |f| model_cells(&f.model.metrics.test));
            csv.row(vec![
                w.name().into(),
                "engine".into(),
                r.scheme.clone(),
                f4(r.db_waf),
                opt(r.far, f4),
                r.gc_moves.to_string(),
                r.gc_frozen.to_string(),
                format!("{:.1}", r.throughput),
                w.unit().into(),
                opt(r.device_bound, |x| format!("{x:.1}")),
                opt(r.cpu_us_per_op, |x| format!("{x:.2}")),
                r.judged.map_or(String::new(), |j| j.0.to_string()),
                r.judged.map_or(String::new(), |j| j.1.to_string()),
                r.judged.map_or(String::new(), |j| f4(j.2)),
                acc,
                rec,
                fpr,
                fitted.map_or_else(String::new, |f| f4(f.train_cpu_secs)),
                (r.zone_bytes / 4096).to_string(),
                format!("{:.1}", r.wall_secs),
            ]);
        }
        replay_rows(&mut csv, wr);
    }
    let spec = serde_json::json!({
        "workloads": p.workloads.iter().map(|w| w.name()).collect::<Vec<_>>(),
        "schemes": p.schemes.iter().map(|s| s.name).collect::<Vec<_>>(),
        "warehouses": p.sizes.warehouses,
        "transactions": p.sizes.transactions,
        "records": p.sizes.records,
        "ops": p.sizes.ops,
        "seed": p.seed,
    });
    let id = nowa_lab::Identity::now("frozen-figures-engine", &spec, p.seed);
    csv.save(&out.join(OUTPUTS[0]), &id)
        .map_err(crate::lab_error)
}

fn replay_rows(csv: &mut Csv, wr: &WorkloadResult) {
    let Some((unit, runs)) = &wr.replay else {
        return;
    };
    for r in runs {
        let inf = r.inference.map(|c| 1e3 * c.secs_per_256mib());
        let mut cells = vec![
            wr.workload.name().into(),
            "replay".into(),
            r.scheme.replace(":6", ""),
            f4(r.waf),
            f4(r.far),
            r.gc_pages.to_string(),
            r.frozen_moves.to_string(),
        ];
        cells.extend(std::iter::repeat_n(String::new(), 6));
        cells.push(opt(inf, f4));
        cells.extend(std::iter::repeat_n(String::new(), 4));
        cells.extend([unit.to_string(), String::new()]);
        csv.row(cells);
    }
}

/// Bar charts: categories are the workloads, one bar per scheme.
fn charts(p: &Plan, results: &[WorkloadResult], out: &Path) -> Result<()> {
    let cats: Vec<String> = results.iter().map(|r| r.workload.name().into()).collect();
    let per_scheme = |f: &dyn Fn(&WorkloadResult, &RunRow) -> f64| -> Vec<(String, Vec<f64>)> {
        p.schemes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let v = results.iter().map(|wr| f(wr, &wr.runs[i])).collect();
                (s.name.to_owned(), v)
            })
            .collect()
    };
    let base = |wr: &WorkloadResult| {
        wr.runs
            .iter()
            .find(|r| r.scheme == REPLAYED)
            .unwrap_or(&wr.runs[0])
            .device_bound
    };
    let bars = [
        (
            OUTPUTS[2],
            "DB WAF in the engine (simulated ZNS SSD)",
            "DB WAF",
            per_scheme(&|_, r| r.db_waf),
        ),
        (
            OUTPUTS[3],
            "FAR: frozen share of the pages DB GC moved",
            "FAR",
            per_scheme(&|_, r| r.far.unwrap_or(f64::NAN)),
        ),
        (
            OUTPUTS[4],
            "Device-bound throughput relative to SepBIT",
            "throughput / SepBIT's",
            per_scheme(&|wr, r| match (r.device_bound, base(wr)) {
                (Some(x), Some(b)) if b > 0.0 => x / b,
                _ => f64::NAN,
            }),
        ),
    ];
    render_bars(out, &cats, bars)?;
    replay_chart(results, out)
}

fn replay_chart(results: &[WorkloadResult], out: &Path) -> Result<()> {
    let replayed: Vec<&WorkloadResult> = results.iter().filter(|r| r.replay.is_some()).collect();
    let Some(first) = replayed.first().and_then(|r| r.replay.as_ref()) else {
        return Ok(()); // no sepbit run: nothing replayed
    };
    let groups = first
        .1
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let v = replayed
                .iter()
                .filter_map(|r| r.replay.as_ref().map(|x| x.1[i].waf))
                .collect();
            (s.scheme.replace(":6", ""), v)
        })
        .collect();
    let chart = BarChart {
        title: "WAF replaying SepBIT's engine run (FK oracles on the same writes)".into(),
        y_label: "WAF".into(),
        categories: replayed.iter().map(|r| r.workload.name().into()).collect(),
        groups,
    };
    Ok(render_bar(&chart, &out.join(OUTPUTS[5]))?)
}

/// `a` relative to `b` in percent, signed.
fn rel(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:+.1}%", 100.0 * (a / b - 1.0))
    } else {
        String::new()
    }
}

fn engine_table(s: &mut String, wr: &WorkloadResult) {
    let unit = wr.workload.unit();
    let _ = writeln!(
        s,
        "{:<14} {:>7} {:>7} {:>7} {:>7} {:>10} {:>8} {:>13} {:>8} {:>19} {:>9} {:>7}",
        "scheme",
        "DB WAF",
        "vs base",
        "FAR",
        "vs base",
        unit,
        "vs base",
        format!("device {unit}"),
        "vs base",
        "judged frozen/pages",
        "ms/256MiB",
        "wall s"
    );
    let find = |n: &str| wr.runs.iter().find(|r| r.scheme == n);
    for r in &wr.runs {
        let base = SCHEMES
            .iter()
            .find(|e| e.name == r.scheme)
            .and_then(|e| e.base)
            .and_then(find);
        let vs = |f: &dyn Fn(&RunRow) -> Option<f64>| {
            base.and_then(|b| Some(rel(f(r)?, f(b)?)))
                .unwrap_or_default()
        };
        let (judged, ms) = r.judged.map_or((String::new(), String::new()), |j| {
            (format!("{}/{}", j.1, j.0), format!("{:.2}", j.2))
        });
        let _ = writeln!(
            s,
            "{:<14} {:>7.3} {:>7} {:>7} {:>7} {:>10.0} {:>8} {:>13} {:>8} {:>19} {:>9} {:>7.1}",
            r.scheme,
            r.db_waf,
            vs(&|x| Some(x.db_waf)),
            pct(r.far),
            vs(&|x| x.far),
            r.throughput,
            vs(&|x| Some(x.throughput)),
            opt(r.device_bound, |x| format!("{x:.0}")),
            vs(&|x| x.device_bound),
            judged,
            ms,
            r.wall_secs
        );
    }
}

/// What the paper claims, checked on this workload's runs.
fn verdict(s: &mut String, wr: &WorkloadResult) {
    let find = |n: &str| wr.runs.iter().find(|r| r.scheme == n);
    let pairs = SCHEMES
        .iter()
        .filter(|e| matches!(e.model, ModelArg::Trained(_)))
        .filter_map(|e| Some((e.name, e.base?)));
    for (f, b) in pairs {
        if let (Some(x), Some(y)) = (find(f), find(b)) {
            let far_lower = matches!((x.far, y.far), (Some(a), Some(c)) if a < c);
            let _ = writeln!(
                s,
                "verdict: {f} vs {b}: DB WAF {} ({}), FAR {} ({})",
                rel(x.db_waf, y.db_waf),
                if x.db_waf < y.db_waf {
                    "lower"
                } else {
                    "NOT lower"
                },
                match (x.far, y.far) {
                    (Some(a), Some(c)) => rel(a, c),
                    _ => "n/a".into(),
                },
                if far_lower { "lower" } else { "NOT lower" }
            );
        }
    }
    if let Some((_, runs)) = &wr.replay {
        let best = runs
            .iter()
            .min_by(|a, b| a.waf.total_cmp(&b.waf))
            .map(|r| r.scheme.replace(":6", ""))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "verdict: lowest WAF in the replay: {best} (FK lowest: {})",
            if best.starts_with("fk") { "yes" } else { "NO" }
        );
        ceiling(s, runs);
    }
}

/// What a perfect model would gain in the replay, beside what the trained one gains.
fn ceiling(s: &mut String, runs: &[SchemeRun]) {
    let waf = |n: &str| runs.iter().find(|r| r.scheme == n).map(|r| r.waf);
    for (base, f) in [
        ("sepbit:6", "sepfrozen-bit"),
        ("dac-paper:6", "sepfrozen-dac"),
    ] {
        let (Some(b), Some(m), Some(t)) = (
            waf(base),
            waf(&format!("{f}:6")),
            waf(&format!("{f}-truth:6")),
        ) else {
            continue;
        };
        let _ = writeln!(
            s,
            "verdict: replay {f} vs {}: model {}, exact labels {} (the most recognition at GC can gain)",
            base.trim_end_matches(":6"),
            rel(m, b),
            rel(t, b)
        );
    }
}

fn summary(p: &Plan, results: &[WorkloadResult]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "nowa frozen figures --engine: seed {} (models trained on seed {}'s SepBIT run); {}; 1 thread, simulated ZNS SSD, WAL on a separate device, GC at GP 15%, SepBIT's cost-benefit victims",
        p.seed,
        p.seed + 1,
        p.scale()
    );
    for wr in results {
        let t = &wr.trained;
        let zone = wr.runs.first().map_or(0, |r| r.zone_bytes);
        let _ = writeln!(
            s,
            "\n== {} (zones {} KiB) ==\nmodels trained on seed {}'s run ({} user writes, {} of versions frozen), TWL 2, all six features:",
            wr.workload.name(),
            zone >> 10,
            p.seed + 1,
            t.user_writes,
            pct(t.frozen_share),
        );
        for (name, f) in [("SGD (the paper's)", &t.sgd), ("tree (depth 8)", &t.tree)] {
            let m = &f.model.metrics.test;
            let _ = writeln!(
                s,
                "  {name}: test accuracy {}, recall {}, FPR {}; {:.2} s CPU to read and train",
                pct(m.accuracy),
                pct(m.recall),
                pct(m.fpr),
                f.train_cpu_secs
            );
        }
        let _ = writeln!(s, "engine (seed {}; vs base: SepFrozenBIT vs SepBIT, SepFrozenDAC vs DAC as the paper states it; -tree: the tree model, -online: retrained during the run):", p.seed);
        engine_table(&mut s, wr);
        if let Some((unit, runs)) = &wr.replay {
            let _ = writeln!(
                s,
                "replay of the sepbit run's write log (user writes only; zones of {unit} pages, GP 15%, cb-sepbit):"
            );
            s.push_str(&table(runs, false));
        }
        verdict(&mut s, wr);
    }
    s
}
