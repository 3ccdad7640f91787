//! `nowa frozen train|synth|bench|replay`: SepFrozen's frozen-page model and its placement
//! (docs/sepfrozen.md).

mod figures;
mod from_trace;
mod replay;

use crate::flags::{self, count, parsed};
use crate::{lab_error, usage};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use nowa_frozen::{
    ClassifierKind, Dataset, Encoding, FeatureSet, FeatureStats, HrWindow, Model, SampleKinds,
    SampleSpec, Synth, SynthConfig, TrainConfig, WriteKind,
};
use nowa_lab::frozen::training::{self, SynthSpec, TrainSpec};
use nowa_units::cpu::process_cpu_secs;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args, Debug)]
#[command(subcommand_required = true, arg_required_else_help = false)]
pub struct FrozenArgs {
    #[command(subcommand)]
    sub: FrozenSub,
}

#[derive(Subcommand, Debug)]
enum FrozenSub {
    /// Train a frozen-page model on a write log (`--record-writes`), print accuracy, recall
    /// and false-positive rate on the held-out test split, and write MODEL.json.
    Train(TrainArgs),
    /// Pearson correlation of each HR field (current and last record), WT-diff, VD-diff
    /// and the age with the frozen label, for user writes and for GC moves (the paper's
    /// §4.1 analysis).
    Stats(StatsArgs),
    /// Write a synthetic write log (append pages that freeze, Zipf-hot pages updated
    /// forever), for trying the pipeline and timing it.
    Synth(SynthArgs),
    /// Time batched inference over one victim zone's pages (default: 256 MiB of 4 KiB pages)
    /// against the paper's 0.05 s budget.
    Bench(BenchArgs),
    /// Replay a write log's user writes through the placement simulator with every scheme
    /// (SepFrozenBIT/DAC with a model, the exact labels or online retraining, and the
    /// baselines): WAF, FAR, per-class statistics, victims' GP, inference cost at GC.
    Replay(replay::ReplayArgs),
    /// The paper's figures that need no engine (schemes' WAF/FAR, configuration sweeps,
    /// classifiers, TWL, feature sets, online retraining) on a synthetic log and any
    /// `--writes` logs: CSV + PNG under --out, a summary on stdout. With --engine: every
    /// scheme run in the engine on the simulated ZNS SSD (TPC-C, YCSB 50%/100% writes).
    Figures(figures::FiguresArgs),
    /// Convert a block trace (in-place engine: LBA = page) to a write log, hotness records
    /// tracked per page from the trace's reads and writes.
    FromTrace(from_trace::FromTraceArgs),
}

#[derive(Args, Debug)]
struct TrainArgs {
    /// The write log.
    #[arg(long, value_name = "FILE")]
    writes: PathBuf,
    /// Where the model goes (JSON).
    #[arg(long, value_name = "MODEL.json")]
    out: PathBuf,
    /// Overwrite --out if it exists.
    #[arg(long)]
    force: bool,
    /// Seed of the 75/25 split and of SGD's shuffles.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Records per sample (time window length), 1 to 4.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    twl: u8,
    /// HR fields: `all` (the six) or a list of wt, vd, ai, mi, ac, mc joined by `,` or `+`;
    /// `ag` adds the age at judgement (timer - WT of HR_current, 0 at user writes: needs
    /// --samples gc or all), e.g. `all+ag`.
    #[arg(long, default_value = "all", value_parser = parsed::<FeatureSet>())]
    features: FeatureSet,
    /// sgd (scikit-learn's SGDClassifier, the paper's), logreg (L-BFGS) or tree.
    #[arg(long, default_value = "sgd", value_parser = parsed::<ClassifierKind>())]
    classifier: ClassifierKind,
    /// Which records are samples: user (DB writes, the paper's), gc (GC moves) or all.
    #[arg(long, default_value = "user", value_parser = parsed::<SampleKinds>())]
    samples: SampleKinds,
    /// Share of samples held out for testing.
    #[arg(long, default_value = "25%", value_parser = flags::fraction(0.0, true, 1.0, true))]
    test_fraction: f64,
    /// Feature encoding: diff (WT and VD as differences between consecutive records, the
    /// paper's WT-diff and VD-diff; transfers across run lengths) or raw (the absolute
    /// timer, the only form of format-1 models).
    #[arg(long, default_value = "diff", value_parser = parsed::<Encoding>())]
    encoding: Encoding,
    /// Evaluate the model on every sample of another write log too (trained on one run,
    /// deployed in the next).
    #[arg(long, value_name = "FILE")]
    eval_writes: Option<PathBuf>,
    /// Leave out samples in the last fraction of the log's timer range (labels there are
    /// "frozen" mostly because the log ends). 0 = the paper's exact labels.
    #[arg(long, default_value = "0", value_parser = flags::fraction(0.0, false, 0.99, false))]
    exclude_tail: f64,
    /// Train and test on a seeded uniform subsample of at most this many samples (default:
    /// all; 500k for the tree, whose linfa trainer scans every sample at every node).
    #[arg(long, value_parser = count::<u64>(100, 1 << 40))]
    max_samples: Option<u64>,
    /// Depth limit of the tree classifier.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(1..=30))]
    tree_depth: u8,
    /// Decision threshold stored in the model (metrics are at it): frozen when the
    /// probability is above P, in (0, 1); 0.5 = scikit-learn's `predict` (the paper's).
    #[arg(long, value_name = "P", default_value = "0.5", value_parser = flags::fraction(0.0, true, 1.0, true))]
    frozen_threshold: f64,
    /// Print the model's training summary and metrics as JSON instead of the report.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct StatsArgs {
    /// The write log.
    #[arg(long, value_name = "FILE")]
    writes: PathBuf,
    /// Print the rows as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct SynthArgs {
    /// Output write log.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Overwrite --out if it exists.
    #[arg(long)]
    force: bool,
    /// DB page writes (timer ticks), e.g. 5M.
    #[arg(long, default_value = "1M", value_parser = count::<u64>(1, 1 << 40))]
    writes: u64,
    /// Pages updated forever (Zipf-chosen).
    #[arg(long, default_value = "50k", value_parser = count::<u64>(1, 1 << 32))]
    hot_pages: u64,
    /// Zipf skew of the hot pages.
    #[arg(long, default_value = "0.9", value_parser = flags::number(0.0, false, 10.0))]
    zipf: f64,
    /// Share of writes that go to the growing (append) page.
    #[arg(long, default_value = "40%", value_parser = flags::fraction(0.0, false, 1.0, false))]
    append_share: f64,
    /// Writes that fill an append page (then it freezes).
    #[arg(long, default_value = "8", value_parser = count::<u64>(1, 1 << 20))]
    fill_writes: u64,
    /// Probability that a full page is updated once more later.
    #[arg(long, default_value = "10%", value_parser = flags::fraction(0.0, false, 1.0, false))]
    late_update: f64,
    /// Probability that a full page is freed later.
    #[arg(long, default_value = "5%", value_parser = flags::fraction(0.0, false, 1.0, false))]
    free_share: f64,
    /// Seed of the synthetic log (the same seed writes the same log).
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

#[derive(Args, Debug)]
struct BenchArgs {
    /// Model to time (default: an SGD model trained on a synthetic log first).
    #[arg(long, value_name = "MODEL.json")]
    model: Option<PathBuf>,
    /// Pages per batch: one victim zone's valid pages (65,536 = 256 MiB of 4 KiB pages).
    #[arg(long, default_value = "65536", value_parser = count::<u64>(1, 1 << 26))]
    pages: u64,
    /// Batches timed.
    #[arg(long, default_value = "200", value_parser = count::<u64>(1, 1_000_000))]
    reps: u64,
    /// Seed of the synthetic log the inputs come from and of the model trained on it.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

/// Whether a `nowa-frozen` error is the fault of an input file (exit 2).
pub use nowa_lab::frozen::is_bad_input;

pub fn run(a: FrozenArgs) -> Result<()> {
    match a.sub {
        FrozenSub::Train(t) => train(&t),
        FrozenSub::Stats(s) => stats(&s),
        FrozenSub::Synth(s) => synth(&s),
        FrozenSub::Bench(b) => bench(&b),
        FrozenSub::Replay(r) => replay::run(&r),
        FrozenSub::Figures(f) => figures::run_figures(&f),
        FrozenSub::FromTrace(t) => from_trace::run(&t),
    }
}

fn stats(a: &StatsArgs) -> Result<()> {
    if !a.writes.exists() {
        return Err(usage(format!(
            "--writes {}: no such file",
            a.writes.display()
        )));
    }
    let both = FeatureStats::from_log(&a.writes)
        .with_context(|| format!("--writes {}", a.writes.display()))?;
    if a.json {
        let out: Vec<_> = both
            .iter()
            .zip(["user", "gc"])
            .map(|(s, k)| {
                serde_json::json!({ "samples": k, "count": s.samples(),
                    "frozen": s.frozen(), "rows": s.rows() })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let r3 = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:+.4}"));
    let [user, gc] = &both;
    println!(
        "Pearson r with the frozen label: user writes {} ({} frozen), GC moves {} ({} frozen)",
        user.samples(),
        user.frozen(),
        gc.samples(),
        gc.frozen()
    );
    println!(
        "{:<12} {:>9} {:>9} {:>14} {:>14}",
        "column", "r user", "r GC", "mean user", "paper r"
    );
    for (u, g) in user.rows().iter().zip(gc.rows()) {
        let mean = u.mean.map_or_else(|| "-".to_owned(), |m| format!("{m:.1}"));
        println!(
            "{:<12} {:>9} {:>9} {:>14} {:>14}",
            u.name,
            r3(u.r),
            r3(g.r),
            mean,
            r3(u.paper)
        );
    }
    Ok(())
}

/// `nowa frozen train`: flags -> [`TrainSpec`] -> train (nowa-lab) -> the report or JSON.
fn train(a: &TrainArgs) -> Result<()> {
    let spec = TrainSpec {
        writes: a.writes.clone(),
        out: a.out.clone(),
        force: a.force,
        seed: a.seed,
        twl: a.twl,
        features: a.features.to_string(),
        classifier: a.classifier.name().to_owned(),
        samples: format!("{:?}", a.samples).to_lowercase(),
        test_fraction: a.test_fraction,
        encoding: a.encoding.name().to_owned(),
        eval_writes: a.eval_writes.clone(),
        exclude_tail: a.exclude_tail,
        max_samples: a.max_samples,
        tree_depth: a.tree_depth,
        frozen_threshold: a.frozen_threshold,
    };
    spec.check().map_err(lab_error)?;
    crate::resources::check_output_file("--out", Some(&a.out))?;
    eprintln!(
        "nowa frozen train: seed {}, log {}, {} with TWL {} on {} ({} encoding, {} samples)",
        a.seed,
        a.writes.display(),
        a.classifier.name(),
        a.twl,
        a.features,
        a.encoding.name(),
        spec.samples
    );
    let out = training::train(&spec, &nowa_lab::Cancel).map_err(lab_error)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    print!("{}", out.result.text);
    Ok(())
}

/// `nowa frozen synth`: flags -> [`SynthSpec`] -> the log (nowa-lab).
fn synth(a: &SynthArgs) -> Result<()> {
    crate::resources::check_new_output("--out", &a.out, a.force)?;
    let spec = SynthSpec {
        out: a.out.clone(),
        force: a.force,
        writes: a.writes,
        hot_pages: a.hot_pages,
        zipf: a.zipf,
        append_share: a.append_share,
        fill_writes: a.fill_writes,
        late_update: a.late_update,
        free_share: a.free_share,
        seed: a.seed,
    };
    let s = training::synth(&spec, &nowa_lab::Cancel)
        .map_err(lab_error)?
        .result
        .summary;
    println!(
        "nowa frozen synth: seed {}, {} records ({} user writes, {} frees) to {}",
        a.seed,
        s.records,
        s.user,
        s.free,
        a.out.display()
    );
    Ok(())
}

/// Windows of the last `pages` user writes of a synthetic log, and a model trained on it.
fn bench_inputs(a: &BenchArgs, pages: usize) -> Result<(Vec<HrWindow>, Option<Model>)> {
    let writes = (a.pages * 4).max(100_000);
    let log: Vec<_> = Synth::new(SynthConfig {
        writes,
        seed: a.seed,
        ..SynthConfig::default()
    })
    .collect();
    let windows: Vec<HrWindow> = log
        .iter()
        .rev()
        .filter(|r| r.kind == WriteKind::User)
        .take(pages)
        .map(|r| HrWindow::from_pair(r.hr_current, r.hr_last))
        .collect();
    if a.model.is_some() {
        return Ok((windows, None));
    }
    let spec = SampleSpec::default();
    let (data, labels) = Dataset::from_records(&log, &spec);
    let cfg = TrainConfig {
        seed: a.seed,
        ..TrainConfig::default()
    };
    Ok((
        windows,
        Some(nowa_frozen::train(&data, &spec, &cfg, labels.len() as u64)?),
    ))
}

fn bench(a: &BenchArgs) -> Result<()> {
    if let Some(p) = a.model.as_ref().filter(|p| !p.exists()) {
        return Err(usage(format!("--model {}: no such file", p.display())));
    }
    let pages = usize::try_from(a.pages).context("--pages fits memory")?;
    let (windows, trained) = bench_inputs(a, pages)?;
    let model = match (&a.model, trained) {
        (Some(p), _) => Model::load(p).with_context(|| format!("--model {}", p.display()))?,
        (None, Some(m)) => m,
        (None, None) => unreachable!("bench_inputs trains when no model is given"),
    };
    // Repeat the windows to the batch size if the log had fewer user writes.
    let batch: Vec<HrWindow> = windows.iter().cycle().take(pages).copied().collect();
    let mut out = Vec::with_capacity(pages);
    model.predict_into(&batch, &mut out); // warm-up
    let frozen = out.iter().filter(|&&f| f).count();
    let (cpu0, wall0) = (process_cpu_secs(), Instant::now());
    let mut best = f64::INFINITY;
    for _ in 0..a.reps {
        let t = Instant::now();
        model.predict_into(std::hint::black_box(&batch), &mut out);
        best = best.min(t.elapsed().as_secs_f64());
    }
    #[expect(clippy::cast_precision_loss, reason = "repetitions as a divisor")]
    let reps = a.reps as f64;
    let cpu = (process_cpu_secs() - cpu0) / reps;
    let wall = wall0.elapsed().as_secs_f64() / reps;
    #[expect(clippy::cast_precision_loss, reason = "pages as a rate")]
    let rate = pages as f64 / cpu;
    println!(
        "nowa frozen bench: seed {}, {} model, {} inputs, batch of {pages} pages ({} MiB of 4 KiB pages), {} reps",
        a.seed,
        model.classifier.name(),
        model.feature_count(),
        pages / 256,
        a.reps
    );
    println!(
        "per batch: {:.3} ms CPU (mean), {:.3} ms wall (mean), {:.3} ms wall (best); {:.1} M pages/s; {frozen} judged frozen",
        cpu * 1e3,
        wall * 1e3,
        best * 1e3,
        rate / 1e6
    );
    println!(
        "budget: 50 ms per 256 MiB victim (SepFrozen §4.3): {:.2}% of it per 256 MiB",
        100.0 * cpu / 0.05 * 65_536.0 / pages as f64
    );
    println!(
        "memory: {} KiB of input windows ({} B each), {} KiB of output; no allocation per batch",
        pages * std::mem::size_of::<HrWindow>() / 1024,
        std::mem::size_of::<HrWindow>(),
        out.capacity() / 1024
    );
    Ok(())
}
