//! `nowa frozen figures --engine` (job `frozen-engine-figures`): SepFrozen and its baselines
//! inside the engine's DB GC on the simulated ZNS SSD, from one spec (the paper's Figures 11
//! to 14 on the engine).
//!
//! Per workload (TPC-C standard and steady, YCSB 50% and 100% writes): a training run (seed
//! s+1, SepBIT, recording its writes) and a model trained on its log; then one run per scheme
//! (seed s), each recording its writes for the exact FAR; the SepBIT run's log replayed
//! through the placement simulator with every replay scheme, the FK oracles included, so FK is
//! evaluated on exactly the writes SepBIT's run made. Every run is `nowa ycsb|tpcc` itself:
//! its flags resolved by [`crate::ycsb::flags`] / [`crate::tpcc::flags`] and run in this
//! process, its typed result read (no output parsed). CSV, PNG bar charts and a summary under
//! `out`.

use super::{f4, pct, replay_config as config, table, Rows as Csv};
use crate::engine_flags::InMemory;
use crate::{Cancel, Error, Identity, Report};
use nowa_bench::plot::{render_bar_styled, BarChart, Style};
use nowa_frozen::replay::{self, ReplayLog, SchemeRun};
use nowa_frozen::{ClassifierKind, Dataset, Labels, Metrics, Model, SampleSpec, TrainConfig};
use nowa_logspace::PolicyKind;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The figures' spec: which workloads and schemes, at which sizes (keys as the flags of
/// `nowa frozen figures --engine` with underscores).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineFiguresSpec {
    /// Output directory (CSV + PNG + summary).
    pub out: PathBuf,
    /// Overwrite the figures already in `out`.
    pub force: bool,
    /// Workloads: tpcc-standard, tpcc-steady, ycsb-50w, ycsb-100w.
    pub workloads: Vec<String>,
    /// Schemes run in the engine ([`SCHEMES`]' names).
    pub schemes: Vec<String>,
    /// TPC-C warehouses.
    pub warehouses: u32,
    /// TPC-C transactions per run.
    pub transactions: u64,
    /// YCSB records (the device holds them at 50% fill).
    pub records: u64,
    /// YCSB operations per run.
    pub ops: u64,
    /// Seed of the runs (the training runs: seed + 1).
    pub seed: u64,
    /// Where the runs' write logs and models go (absent: a new temporary directory, removed
    /// at the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<PathBuf>,
    /// Keep the write logs and models in the work directory.
    pub keep_logs: bool,
}

impl EngineFiguresSpec {
    /// The defaults of `nowa frozen figures --engine --out OUT`: every workload and scheme,
    /// 2 warehouses and 60k transactions, 3M records and 480k operations, seed 42.
    #[must_use]
    pub fn new(out: PathBuf) -> EngineFiguresSpec {
        EngineFiguresSpec {
            out,
            force: false,
            workloads: Workload::ALL.iter().map(|w| w.name().to_owned()).collect(),
            schemes: SCHEMES.iter().map(|s| s.name.to_owned()).collect(),
            warehouses: 2,
            transactions: 60_000,
            records: 3_000_000,
            ops: 480_000,
            seed: 42,
            work_dir: None,
            keep_logs: false,
        }
    }

    /// Checks every field (names, no repeats, sizes in their flags' ranges) and that no
    /// figure would be overwritten without `force`.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field.
    pub fn check(&self) -> Result<(), Error> {
        self.plan().map(|_| ())
    }

    fn plan(&self) -> Result<Plan, Error> {
        let workloads = names(&self.workloads, "workloads", workload)?;
        let schemes = names(&self.schemes, "schemes", scheme)?;
        crate::check_ranges(&[
            ("warehouses", u64::from(self.warehouses), 1, 10_000),
            ("transactions", self.transactions, 100, 1 << 40),
            ("records", self.records, 1000, 1 << 40),
            ("ops", self.ops, 100, 1 << 40),
        ])?;
        if let Some(f) = OUTPUTS.iter().find(|f| self.out.join(f).exists()) {
            if !self.force {
                return Err(Error::Usage(format!(
                    "--out {}: {f} exists (pass --force to overwrite)",
                    self.out.display()
                )));
            }
        }
        let (work, own_work) = match &self.work_dir {
            Some(d) => (d.clone(), false),
            None => (
                std::env::temp_dir().join(format!("nowa-frozen-engine-{}", std::process::id())),
                true,
            ),
        };
        assert!(
            !workloads.is_empty() && !schemes.is_empty(),
            "names() refuses empty lists"
        );
        Ok(Plan {
            workloads,
            schemes,
            sizes: Sizes {
                warehouses: self.warehouses,
                transactions: self.transactions,
                records: self.records,
                ops: self.ops,
            },
            seed: self.seed,
            work,
            own_work,
            keep: self.keep_logs,
        })
    }
}

/// `list`'s entries parsed by `parse`, refusing an empty list and a name given twice.
fn names<T: Copy>(
    list: &[String],
    field: &str,
    parse: fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, Error> {
    // Named as the flag: the same message for `--schemes` and a job file's `schemes`.
    if list.is_empty() {
        return Err(Error::Usage(format!("--{field}: none given")));
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for n in list {
        if !seen.insert(n.trim()) {
            return Err(Error::Usage(format!("--{field}: {n} given twice")));
        }
        out.push(parse(n).map_err(|e| Error::Usage(format!("--{field}: {e}")))?);
    }
    assert_eq!(out.len(), list.len(), "one entry per name");
    Ok(out)
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
    /// Every workload, in the figures' order.
    pub const ALL: [Workload; 4] = [
        Workload::TpccStandard,
        Workload::TpccSteady,
        Workload::Ycsb50w,
        Workload::Ycsb100w,
    ];

    /// Its name in the figures.
    #[must_use]
    pub fn name(self) -> &'static str {
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

    /// The run's flags (of `nowa tpcc` or `nowa ycsb`) without `--placement`: 1 thread, the simulated ZNS SSD with
    /// its own zone size, the WAL on a separate device, GC at a garbage proportion of 15%.
    fn args(self, s: &Sizes, seed: u64) -> Vec<String> {
        let mut v: Vec<String> = match self {
            Workload::TpccStandard | Workload::TpccSteady => {
                let mut t = vec![
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
                      --separate-wal --gc-trigger gp";
        v.extend(common.split_whitespace().map(String::from));
        v.extend(["--seed".into(), seed.to_string()]);
        v
    }
}

/// A workload's name, parsed.
///
/// # Errors
/// An unknown name (the message lists the names).
pub fn workload(s: &str) -> Result<Workload, String> {
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

/// A scheme's name, parsed.
///
/// # Errors
/// An unknown name (the message lists the names).
pub fn scheme(s: &str) -> Result<&'static EngineScheme, String> {
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

/// One engine run's numbers (from its typed result and its write log).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunRow {
    /// The workload.
    pub workload: String,
    /// The scheme.
    pub scheme: String,
    /// DB WAF.
    pub db_waf: f64,
    /// Frozen share of the pages DB GC moved (from the run's write log).
    pub far: Option<f64>,
    /// Pages DB GC moved.
    pub gc_moves: u64,
    /// Frozen pages among them.
    pub gc_frozen: u64,
    /// tpmC or operations per second.
    pub throughput: f64,
    /// The throughput the simulated SSD's busy time allows.
    pub device_bound: Option<f64>,
    /// CPU microseconds per transaction or operation.
    pub cpu_us_per_op: Option<f64>,
    /// (pages judged at GC, judged frozen, inference ms per 256 MiB).
    pub judged: Option<(u64, u64, f64)>,
    /// The zone (GC unit) size, bytes.
    pub zone_bytes: u64,
    /// Wall seconds of the run (load included).
    pub wall_secs: f64,
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

/// The figures' outcome: what the runs measured (one row per run, as the CSV), the
/// summary, the files written.
#[derive(Debug, Clone, Serialize)]
pub struct EngineFiguresResult {
    /// The summary (also in `sepfrozen-engine-summary.txt`).
    pub summary: String,
    /// The files written under `out`.
    pub files: Vec<PathBuf>,
    /// Each engine run's numbers.
    pub runs: Vec<RunRow>,
}

/// The figures' outcome under the run's identity.
pub type Outcome = Report<EngineFiguresResult>;

/// A line of progress: runs done, runs in all, what the last one measured.
pub type Observe<'a> = &'a dyn Fn(u64, u64, &str);

/// Runs the figures (progress as runs done of all).
///
/// # Errors
/// As [`run_with`].
pub fn run(
    spec: &EngineFiguresSpec,
    progress: Option<crate::Progress<'_>>,
    cancel: &Cancel,
) -> Result<Outcome, Error> {
    let observe = |done: u64, total: u64, _: &str| {
        if let Some(p) = progress {
            p(done, total);
        }
    };
    run_with(spec, &observe, cancel)
}

/// Runs the figures, each run's result line handed to `observe`.
///
/// # Errors
/// A bad spec or existing outputs ([`Error::Usage`]), a run that fails, unwritable outputs.
///
/// # Panics
/// If a run was skipped without a stop being asked (a bug).
pub fn run_with(
    spec: &EngineFiguresSpec,
    observe: Observe<'_>,
    cancel: &Cancel,
) -> Result<Outcome, Error> {
    let plan = spec.plan()?;
    let out = spec.out.as_path();
    let id = Identity::now("frozen-engine-figures", spec, spec.seed);
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    std::fs::create_dir_all(&plan.work).map_err(|e| Error::io(&plan.work, e))?;
    let total = plan.workloads.len() * (plan.schemes.len() + 1);
    let mut progress = Steps {
        done: 0,
        total: total as u64,
        observe,
    };
    let mut results = Vec::new();
    for &w in &plan.workloads {
        if cancel.requested() {
            break;
        }
        results.push(workload_runs(&plan, w, &mut progress)?);
    }
    assert!(
        cancel.requested() || progress.done == progress.total,
        "every planned run ran"
    );
    write_csv(&results, out, &id)?;
    charts(&plan, &results, out)?;
    let summary = summary(&plan, &results);
    let path = out.join(OUTPUTS[1]);
    std::fs::write(&path, &summary).map_err(|e| Error::io(&path, e))?;
    if plan.own_work && !plan.keep {
        std::fs::remove_dir_all(&plan.work).map_err(|e| Error::io(&plan.work, e))?;
    }
    let files = OUTPUTS
        .iter()
        .map(|f| out.join(f))
        .filter(|f| f.exists())
        .collect();
    let runs = results.into_iter().flat_map(|r| r.runs).collect();
    Ok(Report {
        nowa: id,
        result: EngineFiguresResult {
            summary,
            files,
            runs,
        },
    })
}

/// Runs done of all, for the progress lines.
struct Steps<'a> {
    done: u64,
    total: u64,
    observe: Observe<'a>,
}

impl Steps<'_> {
    fn line(&mut self, what: &str, result: &str, secs: f64) {
        self.done += 1;
        assert!(self.done <= self.total, "no more runs than planned");
        (self.observe)(
            self.done,
            self.total,
            &format!("{what}: {result} ({secs:.1} s wall)"),
        );
    }
}

/// A run's typed result.
enum RunOut {
    Ycsb(Box<crate::ycsb::Outcome>),
    Tpcc(Box<crate::tpcc::Outcome>),
}

/// Runs `nowa ycsb|tpcc` with `args` (their flags) in this process.
fn run_engine(w: Workload, args: &[String]) -> Result<(RunOut, f64), Error> {
    let t0 = Instant::now();
    let out = if w.is_tpcc() {
        let f = crate::tpcc::flags::parse_flags(args)?;
        let r = crate::tpcc::flags::resolve(&f, &InMemory)?;
        let hooks = crate::tpcc::Hooks {
            device: Some(r.device),
            ..crate::tpcc::Hooks::default()
        };
        RunOut::Tpcc(Box::new(crate::tpcc::run_with(&r.spec, hooks, &Cancel)?))
    } else {
        let f = crate::ycsb::flags::parse_flags(args)?;
        let r = crate::ycsb::flags::resolve(&f, &InMemory)?;
        let hooks = crate::ycsb::Hooks {
            device: Some(r.device),
            ..crate::ycsb::Hooks::default()
        };
        RunOut::Ycsb(Box::new(crate::ycsb::run_with(&r.spec, hooks, &Cancel)?))
    };
    Ok((out, t0.elapsed().as_secs_f64()))
}

/// A result that lacks a figure the rows need.
fn missing(what: &str) -> Error {
    Error::Failed {
        what: "an engine run of the figures",
        source: format!("no {what} in its result").into(),
    }
}

/// The engine numbers of a run's result.
fn row_of(out: &RunOut) -> Result<RunRow, Error> {
    let (db_waf, frozen) = match out {
        RunOut::Tpcc(o) => (o.result.db_waf, o.result.frozen.as_ref()),
        RunOut::Ycsb(o) => (o.result.result.db_waf, o.result.frozen.as_ref()),
    };
    let mut r = RunRow {
        db_waf: db_waf.ok_or_else(|| missing("DB WAF"))?,
        ..RunRow::default()
    };
    match out {
        RunOut::Tpcc(o) => {
            let t = &o.result;
            r.throughput = t.run.tpmc;
            #[expect(clippy::cast_precision_loss, reason = "a count as a rate")]
            let new_orders = t.run.new_orders as f64;
            r.device_bound = t
                .device_busy_secs
                .filter(|&s| s > 0.0)
                .map(|s| new_orders * 60.0 / s);
            r.cpu_us_per_op = Some(t.run.cpu_us_per_txn);
            r.zone_bytes = t.zone_bytes.ok_or_else(|| missing("zone size"))?;
        }
        RunOut::Ycsb(o) => {
            let y = &o.result.result;
            r.throughput = y.ops_per_sec;
            r.device_bound = y.bound.device_bound_ops_per_sec;
            r.cpu_us_per_op = Some(y.bound.cpu_us_per_op);
            r.zone_bytes = o.nowa.spec["engine"]["write_path"]["oop"]["zone_size"]
                .as_u64()
                .or(match &y.spec.store {
                    nowa_bench::ycsb::WritePath::OutOfPlace(c) => c.zone_bytes,
                    nowa_bench::ycsb::WritePath::InPlace => None,
                })
                .ok_or_else(|| missing("zone size"))?;
        }
    }
    r.judged = frozen.map(|f| {
        (
            f.inference.pages,
            f.inference.frozen,
            1e3 * f.secs_per_256mib,
        )
    });
    assert!(r.db_waf >= 1.0 - 1e-9, "DB WAF {} below 1", r.db_waf);
    assert!(
        r.zone_bytes > 0 && r.zone_bytes % 4096 == 0,
        "zones of whole pages"
    );
    assert!(
        r.judged.is_none_or(|(pages, frozen, _)| frozen <= pages),
        "judged frozen among the pages judged"
    );
    Ok(r)
}

/// A write log's path in the work directory (a stale one from an earlier run is removed:
/// `record_writes` refuses existing files).
fn log_path(p: &Plan, name: &str) -> Result<PathBuf, Error> {
    let f = p.work.join(format!("nowa-engine-fig-{name}.log"));
    if f.exists() {
        std::fs::remove_file(&f).map_err(|e| Error::io(&f, e))?;
    }
    assert!(
        !f.exists(),
        "a fresh log path (the log refuses existing files)"
    );
    Ok(f)
}

fn done_with(p: &Plan, log: &Path) -> Result<(), Error> {
    if p.keep {
        return Ok(());
    }
    std::fs::remove_file(log).map_err(|e| Error::io(log, e))
}

/// A write log read into labels (a damaged log is the run's failure).
fn read_failed(log: &Path, e: nowa_frozen::FrozenError) -> Error {
    Error::Failed {
        what: "reading a run's write log",
        source: format!("{}: {e}", log.display()).into(),
    }
}

/// The training run (seed + 1, SepBIT) and the two models trained on its log.
fn train_run(p: &Plan, w: Workload, prog: &mut Steps<'_>) -> Result<Trained, Error> {
    let log = log_path(p, &format!("{}-train", w.name()))?;
    let mut args = w.args(&p.sizes, p.seed + 1);
    args.extend([
        "--placement".into(),
        REPLAYED.into(),
        "--record-writes".into(),
    ]);
    args.push(log.display().to_string());
    let (_, wall) = run_engine(w, &args)?;
    let spec = SampleSpec::default();
    let cpu0 = nowa_units::cpu::process_cpu_secs();
    let (data, labels) = Dataset::from_log(&log, &spec).map_err(|e| read_failed(&log, e))?;
    let read_cpu = nowa_units::cpu::process_cpu_secs() - cpu0;
    let c = labels.counts();
    assert!(
        c.user_frozen <= c.user,
        "frozen versions among the user writes"
    );
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
) -> Result<Fitted, Error> {
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
    let model = nowa_frozen::train(data, spec, &cfg, records).map_err(super::failed)?;
    let train_cpu_secs = read_cpu + nowa_units::cpu::process_cpu_secs() - cpu0;
    let kind = match f {
        Fit::Sgd => "model",
        Fit::Tree => "tree",
    };
    let path = p
        .work
        .join(format!("nowa-engine-fig-{}-{kind}.json", w.name()));
    model.save(&path, true).map_err(|e| Error::io(&path, e))?;
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
    prog: &mut Steps<'_>,
) -> Result<(RunRow, Option<Replay>), Error> {
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
    let (out, wall) = run_engine(w, &args)?;
    let mut r = row_of(&out)?;
    let c = Labels::from_log(&log)
        .map_err(|e| read_failed(&log, e))?
        .counts();
    r.scheme = s.name.into();
    r.workload = w.name().into();
    r.far = c.far();
    r.gc_moves = c.gc;
    r.gc_frozen = c.gc_frozen;
    r.wall_secs = wall;
    assert!(r.gc_frozen <= r.gc_moves, "frozen moves among the moves");
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
fn replay_log(p: &Plan, log: &Path, zone_bytes: u64, model: &Model) -> Result<Replay, Error> {
    let cfg = config(
        zone_bytes,
        0.15,
        &PolicyKind::CostBenefitSepBit,
        None,
        p.seed,
    )?;
    let rl = ReplayLog::load(log).map_err(|e| read_failed(log, e))?;
    let runs = super::paper_and_truth()
        .into_iter()
        .map(|s| {
            replay::run(&rl, s, Some(model), &cfg, nowa_units::cpu::thread_cpu_secs)
                .map_err(super::failed)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    assert_eq!(
        runs.len(),
        super::paper_and_truth().len(),
        "one replay per scheme"
    );
    Ok((cfg.unit_pages, runs))
}

fn workload_runs(p: &Plan, w: Workload, prog: &mut Steps<'_>) -> Result<WorkloadResult, Error> {
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
            std::fs::remove_file(&f.path).map_err(|e| Error::io(&f.path, e))?;
        }
    }
    assert_eq!(runs.len(), p.schemes.len(), "one run per scheme");
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
fn write_csv(results: &[WorkloadResult], out: &Path, id: &Identity) -> Result<(), Error> {
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
    csv.save(&out.join(OUTPUTS[0]), id)
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

/// The setup line under every figure's title: the scale, the device, the GC, the seeds.
fn setup_line(p: &Plan, results: &[WorkloadResult]) -> String {
    let zones: Vec<u64> = results
        .iter()
        .filter_map(|wr| wr.runs.first().map(|r| r.zone_bytes >> 10))
        .collect();
    let (lo, hi) = (zones.iter().min(), zones.iter().max());
    let zones = match (lo, hi) {
        (Some(a), Some(b)) if a == b => format!("zones of {a} KiB"),
        (Some(a), Some(b)) => format!("zones of {a}-{b} KiB"),
        _ => "zones: none run".to_owned(),
    };
    format!(
        "{} (paper: 100 warehouses; 10 GiB YCSB); ycsb-50w = YCSB-A, ycsb-100w = updates only, 50% full; 1 thread; simulated ZNS SSD, {zones} (the inferred GC unit; paper: 256 MiB), WAL apart; DB GC at GP 15%, cost-benefit victims; seed {}, models trained on seed {}'s SepBIT run",
        p.scale(),
        p.seed,
        p.seed + 1
    )
}

/// Bar charts: categories are the workloads, one bar per scheme; the setup in the subtitle.
fn charts(p: &Plan, results: &[WorkloadResult], out: &Path) -> Result<(), Error> {
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
    let style = Style {
        subtitle: setup_line(p, results),
        ..Style::default()
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
    for (file, title, y, groups) in bars {
        let chart = BarChart {
            title: title.into(),
            y_label: y.into(),
            categories: cats.clone(),
            groups,
        };
        let path = out.join(file);
        render_bar_styled(&chart, &style, &path).map_err(|e| Error::io(&path, e))?;
    }
    replay_chart(results, out, &style)
}

fn replay_chart(results: &[WorkloadResult], out: &Path, style: &Style) -> Result<(), Error> {
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
    let path = out.join(OUTPUTS[5]);
    render_bar_styled(&chart, style, &path).map_err(|e| Error::io(&path, e))
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
