//! `nowa frozen train|synth|bench|replay`: SepFrozen's frozen-page model and its placement
//! (docs/sepfrozen.md).

mod figures;
mod from_trace;
mod replay;

use crate::flags::{self, count, parsed};
use crate::lab_error;
use anyhow::Result;
use clap::{Args, Subcommand};
use nowa_frozen::{ClassifierKind, Encoding, FeatureSet, SampleKinds};
use nowa_lab::frozen::tools::{self, BenchSpec, StatsSpec};
use nowa_lab::frozen::training::{self, SynthSpec, TrainSpec};
use nowa_lab::Cancel;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(subcommand_required = true, arg_required_else_help = false)]
pub struct FrozenArgs {
    #[command(subcommand)]
    sub: FrozenSub,
}

#[derive(Subcommand, Debug)]
enum FrozenSub {
    /// Train a frozen-page model on a write log (`--record-writes`), print accuracy, recall
    /// and false-positive rate on the held-out test split, and write OUT/model.json.
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
    /// Output directory: the model goes to OUT/model.json (created; a directory that holds
    /// something needs --force).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Write into a non-empty --out (its model.json is overwritten).
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
    #[arg(long, value_enum, default_value = "sgd")]
    classifier: ClassifierKind,
    /// Which records are samples: user (DB writes, the paper's), gc (GC moves) or all.
    #[arg(long, value_enum, default_value = "user")]
    samples: SampleKinds,
    /// Share of samples held out for testing.
    #[arg(long, default_value = "25%", value_parser = flags::fraction(0.0, true, 1.0, true))]
    test_fraction: f64,
    /// Feature encoding: diff (WT and VD as differences between consecutive records, the
    /// paper's WT-diff and VD-diff; transfers across run lengths) or raw (the absolute
    /// timer, the only form of format-1 models).
    #[arg(long, value_enum, default_value = "diff")]
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
    /// Output directory: the log goes to OUT/writes.log (created; a directory that holds
    /// something needs --force).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Write into a non-empty --out (its writes.log is overwritten).
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

/// `nowa frozen stats`: flags -> [`StatsSpec`] -> stats (nowa-lab) -> the table or JSON.
fn stats(a: &StatsArgs) -> Result<()> {
    let spec = StatsSpec {
        writes: a.writes.clone(),
    };
    let out = tools::stats(&spec, &Cancel).map_err(lab_error)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", tools::stats_table(&out.result));
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
        classifier: a.classifier,
        samples: a.samples,
        test_fraction: a.test_fraction,
        encoding: a.encoding,
        eval_writes: a.eval_writes.clone(),
        exclude_tail: a.exclude_tail,
        max_samples: a.max_samples,
        tree_depth: a.tree_depth,
        frozen_threshold: a.frozen_threshold,
    };
    spec.check().map_err(lab_error)?;
    eprintln!("nowa frozen train: {}", spec.banner());
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
        spec.log().display()
    );
    Ok(())
}

/// `nowa frozen bench`: flags -> [`BenchSpec`] -> bench (nowa-lab) -> the timings.
fn bench(a: &BenchArgs) -> Result<()> {
    let spec = BenchSpec {
        model: a.model.clone(),
        pages: a.pages,
        reps: a.reps,
        seed: a.seed,
    };
    let out = tools::bench(&spec, &Cancel).map_err(lab_error)?;
    print!("{}", tools::bench_text(&out));
    Ok(())
}
