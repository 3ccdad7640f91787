use super::*;
use crate::{parse_job, Job, JobOutcome};
use clap::Parser;

#[derive(Parser)]
struct Cmd {
    #[command(flatten)]
    f: SsdiqFlags,
}

fn flags(args: &[&str]) -> SsdiqFlags {
    Cmd::try_parse_from(std::iter::once("ssdiq").chain(args.iter().copied()))
        .expect("valid flags")
        .f
}

/// A small, fast suite on a simulated SSD.
fn small() -> Spec {
    let f = flags(&[
        "--workloads",
        "uniform",
        "--warmup",
        "0.5",
        "--volume",
        "0.5",
        "--read-time",
        "0.05",
        "--lat-time",
        "0.05",
        "--sweep",
        "0.5",
        "--sweep-time",
        "0.05",
    ]);
    from_flags(&f, "sim:16MiB", &mut |_| {}).expect("a valid spec")
}

#[test]
fn a_spec_round_trips_and_bad_fields_are_named() {
    let spec = small();
    assert_eq!(spec.target, "sim");
    assert_eq!(spec.sim.as_ref().map(|s| s.capacity), Some(16 << 20));
    assert!(spec.suite.interval > 0.0, "auto interval resolved");
    let job = Job::Ssdiq(Box::new(spec.clone()));
    let json = serde_json::to_string(&job).expect("serializes");
    assert_eq!(parse_job(&json, false).expect("json parses"), job);
    let toml = toml::to_string(&job).expect("toml serializes");
    assert_eq!(parse_job(&toml, true).expect("toml parses"), job, "{toml}");
    let mut v: serde_json::Value = serde_json::from_str(&json).expect("json");
    v["spec"]["suite"]["qd"] = 0.into();
    let e = parse_job(&v.to_string(), false).expect_err("qd 0");
    assert!(
        e.is_usage() && e.to_string().starts_with("suite.qd: "),
        "{e}"
    );
    v["spec"]["suite"]["qd"] = "many".into();
    let e = parse_job(&v.to_string(), false).expect_err("qd a string");
    assert!(e.to_string().starts_with("spec.suite.qd: "), "{e}");
    v["spec"]["suite"]["qd"] = 8.into();
    v["spec"]["suite"]["qdd"] = 8.into();
    let e = parse_job(&v.to_string(), false).expect_err("unknown key");
    assert!(e.to_string().contains("qdd"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&json).expect("json");
    v["spec"]["sim"]["capacity"] = 4097.into();
    let e = parse_job(&v.to_string(), false).expect_err("not whole blocks");
    assert!(e.to_string().starts_with("sim.capacity: "), "{e}");
}

#[test]
fn a_result_runs_again_bit_for_bit_on_the_simulated_ssd() {
    let spec = small();
    let first = run(&spec, None, &Cancel).expect("runs");
    assert!(!first.result.interrupted && first.result.error.is_none());
    assert_eq!(first.nowa.command, "ssdiq");
    let text = serde_json::to_string(&first).expect("serializes");
    let job = parse_job(&text, false).expect("a result is a job");
    assert_eq!(job, Job::Ssdiq(Box::new(spec)));
    let Ok(JobOutcome::Ssdiq(again)) = job.run(None, &Cancel) else {
        panic!("an ssdiq outcome")
    };
    assert_eq!(again.result, first.result, "the same run, every number");
    assert!(first.result.summary.rand_write[0].waf_measured.is_some());
}

#[test]
fn progress_counts_the_planned_runs_and_phases_tick() {
    let spec = small();
    // seq-write, seq-read, rand-read, warm-up + measured, latency x2, sweep x2.
    assert_eq!(planned_runs(&spec.suite), 9);
    let seen = std::sync::Mutex::new(Vec::new());
    let progress = |d: u64, t: u64| seen.lock().expect("not poisoned").push((d, t));
    run(&spec, Some(&progress), &Cancel).expect("runs");
    let seen = seen.into_inner().expect("not poisoned");
    assert!(seen.len() > 10, "ticks inside the phases: {}", seen.len());
    assert!(seen.iter().all(|&(d, t)| t == 9000 && d <= t));
    assert!(seen.last().is_some_and(|&(d, _)| d > 7000), "{seen:?}");
}

#[test]
fn a_real_target_in_a_missing_directory_is_refused_naming_it() {
    let f = flags(&[]);
    let e = from_flags(&f, "/nonexistent-dir/x.img", &mut |_| {}).expect_err("no directory");
    assert!(
        e.is_usage() && e.to_string().contains("/nonexistent-dir"),
        "{e}"
    );
}
