use super::*;
use crate::{parse_job, Job, JobOutcome};
use clap::Parser;
use proptest::prelude::*;

#[derive(Parser)]
struct Flags {
    #[command(flatten)]
    dev: DeviceFlags,
    #[command(flatten)]
    run: RunFlags,
}

#[derive(Parser)]
struct Figs {
    #[command(flatten)]
    dev: DeviceFlags,
    #[command(flatten)]
    f: FigureFlags,
}

fn flags(args: &str) -> Result<Flags, clap::Error> {
    Flags::try_parse_from(std::iter::once("t").chain(args.split_whitespace()))
}

const SMALL: &str = "--channels 4 --chips-per-channel 4 --blocks-per-chip 64 --pages-per-block 8 --page-size 4KiB --drive-writes 0.2";

/// The geometry flags of `nowa plan run`, small values: refused as bad input, or the run
/// completes; never a panic or a failure of another kind. Issue 26: 64 blocks of 1 page
/// panicked in the workload generator.
fn check(args: &[String], scheme: &str) -> Result<(), TestCaseError> {
    let f = Flags::try_parse_from(
        std::iter::once("t".to_owned())
            .chain(args.iter().cloned())
            .chain(["--scheme".to_owned(), scheme.to_owned()]),
    );
    let Ok(f) = f else { return Ok(()) };
    match run_from_flags(&f.dev, &f.run) {
        Err(e) => prop_assert!(e.is_usage(), "{e}"),
        Ok(spec) => {
            if let Err(e) = run(&spec, None, &Cancel) {
                prop_assert!(e.is_usage(), "{args:?}: {e}");
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn small_geometries_are_refused_or_run(
        channels in 0u32..5,
        chips in 0u32..5,
        blocks in 0u32..300,
        pages in 0u32..24,
        op in prop::sample::select(vec!["0.01", "0.0625", "0.5"]),
        reserve in prop::sample::select(vec!["0", "0.05", "0.5"]),
        scheme in prop::sample::select(vec!["baseline", "plan-pred-1/4", "partial-gc", "multi-stream"]),
    ) {
        let args: Vec<String> = [
            ("--channels", channels.to_string()),
            ("--chips-per-channel", chips.to_string()),
            ("--blocks-per-chip", blocks.to_string()),
            ("--pages-per-block", pages.to_string()),
            ("--op", op.to_owned()),
            ("--gc-reserve", reserve.to_owned()),
            ("--drive-writes", "0.01".to_owned()),
        ]
        .into_iter()
        .flat_map(|(k, v)| [k.to_owned(), v])
        .collect();
        check(&args, scheme)?;
    }
}

/// `--op` is spare/logical as everywhere else (was spare/physical: `--op 7%` gave 7%
/// spare/physical = 7.53% spare/logical); `--op-physical` takes the paper's form.
#[test]
fn op_is_spare_over_logical() {
    let dev = |a: &str| device_from_flags(&flags(a).expect("flags").dev, false).expect("valid");
    let p = dev("--op 7%").op_physical;
    assert!((p - 0.07 / 1.07).abs() < 1e-12, "{p}");
    assert!((dev("").op_physical - 0.0625).abs() < 1e-12);
    assert!((dev("--op-physical 0.0625").op_physical - 0.0625).abs() < 1e-12);
    let o = opts(&dev("--op 7%")).expect("valid");
    assert!((o.geometry.op_logical() - 0.07).abs() < 1e-3);
    assert!(
        flags("--op 7% --op-physical 6%").is_err(),
        "one form at a time"
    );
    assert!(flags("-q").expect("flags").dev.quiet);
}

#[test]
fn the_issue_26_geometry_is_refused_naming_the_flags() {
    let f = flags("--blocks-per-chip 64 --pages-per-block 1 --drive-writes 0.01").expect("flags");
    let e = run_from_flags(&f.dev, &f.run).expect_err("64 blocks of 1 page accepted");
    assert!(
        e.is_usage() && e.to_string().contains("--pages-per-block"),
        "{e}"
    );
}

/// `plan figures` writes into a new directory by default and refuses to overwrite plan-*
/// files without --force, before any run (it used to write over docs/figures).
#[test]
fn figures_refuse_to_overwrite_without_force() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("figs");
    std::fs::create_dir(&out).expect("dir");
    std::fs::write(out.join("plan-fig1.csv"), "old").expect("file");
    let o = out.to_str().expect("utf-8");
    let f = Figs::try_parse_from(["t", "--out", o, "--fig1-only", "-q"]).expect("flags");
    let e = figures_from_flags(&f.dev, &f.f).expect_err("refused");
    assert!(e.is_usage(), "{e}");
    assert!(
        e.to_string().contains("plan-fig1.csv") && e.to_string().contains("--force"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("plan-fig1.csv")).expect("kept"),
        "old"
    );
    let d = Figs::try_parse_from(["t"]).expect("flags").f;
    assert_eq!(d.out, PathBuf::from("plan-figures"), "not docs/figures");
}

#[test]
fn a_run_spec_round_trips_and_a_result_runs_again_bit_for_bit() {
    let f = flags(&format!("{SMALL} --scheme plan-pred-1/4 --workload tpcc")).expect("flags");
    let spec = run_from_flags(&f.dev, &f.run).expect("valid");
    let job = Job::PlanRun(Box::new(spec.clone()));
    let json = serde_json::to_string(&job).expect("serializes");
    assert!(
        json.contains(r#""workload":"tpcc""#) && json.contains(r#""timing":"femu""#),
        "{json}"
    );
    assert_eq!(parse_job(&json, false).expect("json parses"), job);
    let toml = toml::to_string(&job).expect("toml");
    assert_eq!(parse_job(&toml, true).expect("toml parses"), job, "{toml}");
    let first = run(&spec, None, &Cancel).expect("runs");
    let text = serde_json::to_string(&first).expect("serializes");
    let again = parse_job(&text, false).expect("a result is a job");
    let Ok(JobOutcome::PlanRun(mut again)) = again.run(None, &Cancel) else {
        panic!("a plan-run outcome")
    };
    again.result.cpu_secs = first.result.cpu_secs;
    assert_eq!(
        serde_json::to_value(&again.result).expect("json"),
        serde_json::to_value(&first.result).expect("json"),
        "every number but the CPU time repeats"
    );
    let mut v: serde_json::Value = serde_json::from_str(&json).expect("json");
    v["spec"]["device"]["fill"] = 2.0.into();
    let e = parse_job(&v.to_string(), false).expect_err("fill 2");
    assert!(e.is_usage() && e.to_string().starts_with("fill: "), "{e}");
    v["spec"]["device"]["timing"] = "Femu".into();
    let e = parse_job(&v.to_string(), false).expect_err("capitalized");
    assert!(e.to_string().starts_with("spec.device.timing: "), "{e}");
}

#[test]
fn a_figures_spec_round_trips() {
    let tmp = tempfile::tempdir().expect("tmp");
    let o = tmp.path().join("f");
    let args = format!("t {SMALL} --out {} --workloads fio,gcc", o.display());
    let f = Figs::try_parse_from(args.split_whitespace()).expect("flags");
    let spec = figures_from_flags(&f.dev, &f.f).expect("valid");
    assert_eq!(spec.workloads, [WorkloadKind::Fio, WorkloadKind::Gcc]);
    let job = Job::PlanFigures(Box::new(spec));
    let toml = toml::to_string(&job).expect("toml");
    assert_eq!(parse_job(&toml, true).expect("toml parses"), job, "{toml}");
    let json = serde_json::to_string(&job).expect("json");
    assert_eq!(parse_job(&json, false).expect("json parses"), job);
}

/// `plan figures` reports progress inside its runs (units between two runs' ends), rising to
/// the planned total: a bar's rate and ETA move during a run of minutes. Each run used to
/// report only when it ended.
#[test]
fn figures_report_progress_inside_each_run() {
    let tmp = tempfile::tempdir().expect("tmp");
    let o = tmp.path().join("f");
    // 8 chips per channel (Figure 1 runs at 1/8), small blocks, half full (room for 18 open
    // superblocks): ~120k requests a run.
    let small =
        "--blocks-per-chip 128 --pages-per-block 4 --page-size 4KiB --fill 0.5 --drive-writes 2";
    let args = format!("t {small} --out {} --fig1-only", o.display());
    let f = Figs::try_parse_from(args.split_whitespace()).expect("flags");
    let spec = figures_from_flags(&f.dev, &f.f).expect("valid");
    let seen = std::sync::Mutex::new(Vec::new());
    let progress = |d: u64, t: u64| seen.lock().expect("lock").push((d, t));
    let out = figures(&spec, Some(&progress), &Cancel).expect("runs");
    let seen = seen.into_inner().expect("lock");
    let total = figure_runs(&spec).expect("runs") * RUN_UNITS;
    // Figure 1's 8 rows of its 12 runs (it used to panic here: "every planned run ran").
    assert_eq!((out.result.runs.len(), total), (8, 12 * RUN_UNITS));
    assert!(seen.iter().all(|&(d, t)| t == total && d <= t), "{seen:?}");
    assert!(
        seen.windows(2).all(|w| w[0].0 <= w[1].0),
        "rising: {seen:?}"
    );
    assert_eq!(seen.last(), Some(&(total, total)), "all done at the end");
    let inside = seen.iter().filter(|&&(d, _)| d % RUN_UNITS != 0).count();
    assert!(inside >= 12, "{inside} reports inside runs: {seen:?}");
}

/// Progress over two runs: a run's share of its host page writes moves the units inside it,
/// never past its end before it ends.
#[test]
fn run_progress_counts_runs_and_the_share_of_the_current_one() {
    use nowa_bench::plan::Observer as _;
    let mut seen = Vec::new();
    let mut report = |d: u64, t: u64, r: Option<&RunResult>| seen.push((d, t, r.is_some()));
    let mut p = RunProgress::new(2, &mut report);
    p.tick(250, 1000);
    p.tick(1000, 1000);
    let r = run(
        &run_from_flags(
            &flags(SMALL).expect("flags").dev,
            &flags(SMALL).expect("flags").run,
        )
        .expect("valid"),
        None,
        &Cancel,
    )
    .expect("runs")
    .result;
    p.ran(&r);
    p.tick(1, 2);
    p.ran(&r);
    assert_eq!(
        seen,
        [
            (250, 2000, false),
            (999, 2000, false),
            (1000, 2000, true),
            (1500, 2000, false),
            (2000, 2000, true)
        ]
    );
}
