//! `nowa frozen stats|bench|from-trace` (jobs `frozen-stats`, `frozen-bench`,
//! `frozen-from-trace`): the HR fields' correlation with the frozen label, the cost of batched
//! inference against the paper's budget, and a block trace as a write log.

use super::training::file_error;
use super::{failed, from_trace};
use crate::{Cancel, Error, Identity, Report};
use nowa_frozen::{
    Dataset, FeatureStats, HrWindow, LogSummary, Model, SampleSpec, Synth, SynthConfig,
    TrainConfig, WriteKind,
};
use nowa_units::cpu::process_cpu_secs;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// `nowa frozen stats`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatsSpec {
    /// The write log.
    pub writes: PathBuf,
}

/// The statistics of one kind of record (user writes, GC moves).
#[derive(Debug, Clone, Serialize)]
pub struct KindStats {
    /// `user` or `gc`.
    pub samples: &'static str,
    /// Records of the kind.
    pub count: u64,
    /// Of them frozen.
    pub frozen: u64,
    /// One row per column: Pearson r with the label, the mean, the paper's r.
    pub rows: Vec<nowa_frozen::dataset::StatRow>,
}

/// The statistics of a log: user writes, then GC moves.
#[derive(Debug, Clone, Serialize)]
pub struct StatsResult {
    /// User writes, then GC moves.
    pub kinds: [KindStats; 2],
}

/// Pearson correlation of each HR field with the frozen label, for user writes and GC moves.
///
/// # Errors
/// [`Error::Usage`]: a missing or damaged log, naming `--writes`.
///
/// # Panics
/// If the log has more frozen samples than samples (a bug of the reader).
pub fn stats(spec: &StatsSpec, _: &Cancel) -> Result<Report<StatsResult>, Error> {
    let w = &spec.writes;
    if !w.exists() {
        return Err(Error::Usage(format!(
            "--writes {}: no such file",
            w.display()
        )));
    }
    let id = Identity::now("frozen-stats", spec, 0);
    let both = FeatureStats::from_log(w).map_err(|e| file_error("--writes", w, e))?;
    let kind = |s: &FeatureStats, samples| KindStats {
        samples,
        count: s.samples(),
        frozen: s.frozen(),
        rows: s.rows(),
    };
    let kinds = [kind(&both[0], "user"), kind(&both[1], "gc")];
    assert!(
        kinds.iter().all(|k| k.frozen <= k.count),
        "frozen samples are samples"
    );
    Ok(Report {
        nowa: id,
        result: StatsResult { kinds },
    })
}

/// The statistics as a table.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
#[must_use]
pub fn stats_table(r: &StatsResult) -> String {
    let r3 = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:+.4}"));
    let [user, gc] = &r.kinds;
    assert_eq!(
        user.rows.len(),
        gc.rows.len(),
        "the same columns for both kinds"
    );
    let mut s = format!(
        "Pearson r with the frozen label: user writes {} ({} frozen), GC moves {} ({} frozen)\n",
        user.count, user.frozen, gc.count, gc.frozen
    );
    let _ = writeln!(
        s,
        "{:<12} {:>9} {:>9} {:>14} {:>14}",
        "column", "r user", "r GC", "mean user", "paper r"
    );
    for (u, g) in user.rows.iter().zip(&gc.rows) {
        let mean = u.mean.map_or_else(|| "-".to_owned(), |m| format!("{m:.1}"));
        let _ = writeln!(
            s,
            "{:<12} {:>9} {:>9} {:>14} {:>14}",
            u.name,
            r3(u.r),
            r3(g.r),
            mean,
            r3(u.paper)
        );
    }
    s
}

/// `nowa frozen bench`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchSpec {
    /// The model timed (None: an SGD model trained on a synthetic log first).
    pub model: Option<PathBuf>,
    /// Pages per batch (one victim zone's valid pages).
    pub pages: u64,
    /// Batches timed.
    pub reps: u64,
    /// Seed of the synthetic log.
    pub seed: u64,
}

/// What inference cost.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    /// The classifier's name.
    pub classifier: String,
    /// Inputs per page.
    pub inputs: usize,
    /// CPU seconds per batch (mean).
    pub cpu_secs: f64,
    /// Wall-clock seconds per batch (mean).
    pub wall_secs: f64,
    /// Wall-clock seconds of the fastest batch.
    pub best_secs: f64,
    /// Pages judged frozen in a batch.
    pub frozen: usize,
    /// Bytes of one input window.
    pub window_bytes: usize,
}

impl BenchSpec {
    /// Checks the ranges and the model file.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field or flag.
    pub fn check(&self) -> Result<(), Error> {
        crate::check_ranges(&[
            ("pages", self.pages, 1, 1 << 26),
            ("reps", self.reps, 1, 1_000_000),
        ])?;
        match self.model.as_ref().filter(|p| !p.exists()) {
            Some(p) => Err(Error::Usage(format!(
                "--model {}: no such file",
                p.display()
            ))),
            None => Ok(()),
        }
    }
}

/// Windows of the last `pages` user writes of a synthetic log, and a model trained on it
/// when the spec names none.
fn bench_inputs(spec: &BenchSpec, pages: usize) -> Result<(Vec<HrWindow>, Model), Error> {
    let writes = (spec.pages * 4).max(100_000);
    let log: Vec<_> = Synth::new(SynthConfig {
        writes,
        seed: spec.seed,
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
    assert!(!windows.is_empty(), "a synthetic log has user writes");
    if let Some(p) = &spec.model {
        return Ok((
            windows,
            Model::load(p).map_err(|e| file_error("--model", p, e))?,
        ));
    }
    let sample = SampleSpec::default();
    let (data, labels) = Dataset::from_records(&log, &sample);
    let cfg = TrainConfig {
        seed: spec.seed,
        ..TrainConfig::default()
    };
    let model = nowa_frozen::train(&data, &sample, &cfg, labels.len() as u64).map_err(failed)?;
    Ok((windows, model))
}

/// Times batched inference over `pages` pages, `reps` times.
///
/// # Errors
/// [`Error::Usage`]: a bad field, a missing or damaged model; the training's errors.
///
/// # Panics
/// If a batch's output is not one judgement per page (a bug of the model).
pub fn bench(spec: &BenchSpec, _: &Cancel) -> Result<Report<BenchResult>, Error> {
    spec.check()?;
    let id = Identity::now("frozen-bench", spec, spec.seed);
    let pages = usize::try_from(spec.pages).map_err(|e| Error::Usage(format!("pages: {e}")))?;
    let (windows, model) = bench_inputs(spec, pages)?;
    // Repeat the windows to the batch size if the log had fewer user writes.
    let batch: Vec<HrWindow> = windows.iter().cycle().take(pages).copied().collect();
    let mut out = Vec::with_capacity(pages);
    model.predict_into(&batch, &mut out); // warm-up
    assert_eq!(out.len(), pages, "one judgement per page");
    let frozen = out.iter().filter(|&&f| f).count();
    let (cpu0, wall0) = (process_cpu_secs(), Instant::now());
    let mut best = f64::INFINITY;
    for _ in 0..spec.reps {
        let t = Instant::now();
        model.predict_into(std::hint::black_box(&batch), &mut out);
        best = best.min(t.elapsed().as_secs_f64());
    }
    #[expect(clippy::cast_precision_loss, reason = "repetitions as a divisor")]
    let reps = spec.reps as f64;
    let result = BenchResult {
        classifier: model.classifier.name().to_owned(),
        inputs: model.feature_count(),
        cpu_secs: (process_cpu_secs() - cpu0) / reps,
        wall_secs: wall0.elapsed().as_secs_f64() / reps,
        best_secs: best,
        frozen,
        window_bytes: std::mem::size_of::<HrWindow>(),
    };
    assert!(
        result.best_secs <= result.wall_secs,
        "the fastest batch is no slower than the mean"
    );
    Ok(Report { nowa: id, result })
}

/// The timings against the paper's budget (SepFrozen §4.3: 50 ms per 256 MiB victim).
#[must_use]
pub fn bench_text(out: &Report<BenchResult>) -> String {
    let (r, seed) = (&out.result, out.nowa.seed);
    let pages = usize::try_from(out.nowa.spec["pages"].as_u64().unwrap_or(1)).unwrap_or(1);
    let reps = out.nowa.spec["reps"].as_u64().unwrap_or(0);
    #[expect(clippy::cast_precision_loss, reason = "pages as a rate")]
    let (rate, per_zone) = (pages as f64 / r.cpu_secs, 65_536.0 / pages as f64);
    let mut s = format!(
        "nowa frozen bench: seed {seed}, {} model, {} inputs, batch of {pages} pages ({} MiB of 4 KiB pages), {reps} reps\n",
        r.classifier, r.inputs, pages / 256
    );
    let _ = writeln!(s, "per batch: {:.3} ms CPU (mean), {:.3} ms wall (mean), {:.3} ms wall (best); {:.1} M pages/s; {} judged frozen",
        r.cpu_secs * 1e3, r.wall_secs * 1e3, r.best_secs * 1e3, rate / 1e6, r.frozen);
    let _ = writeln!(
        s,
        "budget: 50 ms per 256 MiB victim (SepFrozen §4.3): {:.2}% of it per 256 MiB",
        100.0 * r.cpu_secs / 0.05 * per_zone
    );
    let _ = writeln!(
        s,
        "memory: {} KiB of input windows ({} B each), {} KiB of output; no allocation per batch",
        pages * r.window_bytes / 1024,
        r.window_bytes,
        pages / 1024
    );
    s
}

/// `nowa frozen from-trace`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FromTraceSpec {
    /// The block trace.
    pub trace: PathBuf,
    /// Output directory: the write log goes to `out/writes.log` ([`FromTraceSpec::log`]).
    pub out: PathBuf,
    /// Write into a non-empty `out`.
    pub force: bool,
    /// Stop after this many page writes.
    pub max_writes: Option<u64>,
    /// Accept a trace however many of its lines are unreadable.
    pub skip_bad: bool,
}

impl FromTraceSpec {
    /// The write log (`out/writes.log`).
    #[must_use]
    pub fn log(&self) -> PathBuf {
        self.out.join(super::training::LOG_FILE)
    }
}

/// What a conversion wrote.
#[derive(Debug, Clone, Serialize)]
pub struct FromTraceResult {
    /// The log's counts.
    pub summary: LogSummary,
    /// Distinct pages the trace touched.
    pub pages: usize,
}

/// Converts the trace ([`from_trace::convert`]).
///
/// # Errors
/// As [`from_trace::convert`]; `max_writes` 0.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn from_trace(spec: &FromTraceSpec, _: &Cancel) -> Result<Report<FromTraceResult>, Error> {
    if spec.max_writes == Some(0) {
        return Err(Error::Usage("max_writes: 0 is not in [1, 2^50]".into()));
    }
    crate::resources::check_out_dir("--out", &spec.out, spec.force)?;
    let id = Identity::now("frozen-from-trace", spec, 0);
    nowa_trace::set_skip_bad(spec.skip_bad);
    let (summary, pages) =
        from_trace::convert(&spec.trace, &spec.log(), spec.force, spec.max_writes)?;
    assert!(
        summary.user <= spec.max_writes.unwrap_or(u64::MAX),
        "no more page writes than asked for"
    );
    Ok(Report {
        nowa: id,
        result: FromTraceResult { summary, pages },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_job, Job, JobOutcome};

    /// The three jobs round-trip through TOML and JSON, and a result runs again from its
    /// `nowa` object (`nowa run RESULT.json`) to the same log and the same statistics.
    #[test]
    fn stats_bench_and_from_trace_are_jobs_that_run_again() {
        let dir = tempfile::tempdir().expect("tmp");
        let trace = dir.path().join("t.csv");
        let gen = crate::trace::GenSpec {
            output: trace.clone(),
            workload: "zipf:0.9".parse().expect("a workload"),
            capacity: 16 << 20,
            fill: 1.0,
            writes: 3000,
            seed: 3,
            force: false,
        };
        crate::trace::generate(&gen, &Cancel).expect("a trace");
        let conv = FromTraceSpec {
            trace,
            out: dir.path().join("conv"),
            force: true,
            max_writes: Some(2000),
            skip_bad: false,
        };
        let log = conv.log();
        let jobs = [
            Job::FrozenFromTrace(Box::new(conv)),
            Job::FrozenStats(Box::new(StatsSpec {
                writes: log.clone(),
            })),
            Job::FrozenBench(Box::new(BenchSpec {
                model: None,
                pages: 256,
                reps: 1,
                seed: 1,
            })),
        ];
        let mut results = Vec::new();
        for job in &jobs {
            let json = serde_json::to_string(job).expect("serializes");
            assert_eq!(&parse_job(&json, false).expect("json"), job);
            let toml = toml::to_string(job).expect("toml");
            assert_eq!(&parse_job(&toml, true).expect("toml"), job, "{toml}");
            let out = job.run(None, &Cancel).expect("runs");
            results.push(serde_json::to_value(&out).expect("json"));
        }
        assert_eq!(
            results[0]["summary"]["user"], 2000,
            "max_writes page writes"
        );
        let first_log = std::fs::read(&log).expect("log");
        let again = parse_job(&results[0].to_string(), false).expect("a result is a job");
        again.run(None, &Cancel).expect("runs again");
        assert_eq!(std::fs::read(&log).expect("log"), first_log, "the same log");
        let Ok(JobOutcome::FrozenStats(s)) = jobs[1].run(None, &Cancel) else {
            panic!("stats")
        };
        assert_eq!(s.result.kinds[0].count, 2000);
        assert_eq!(results[2]["frozen"].as_u64().map(|_| ()), Some(()));
        let bad = results[2]
            .to_string()
            .replace("\"pages\":256", "\"pages\":0");
        let e = parse_job(&bad, false).expect_err("pages 0");
        assert!(e.to_string().starts_with("pages: 0"), "{e}");
    }
}
