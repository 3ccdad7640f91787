//! Replay of a synthetic write log with known frozen pages through the placement simulator:
//! SepFrozen separates the frozen pages (lower FAR, lower WAF than SepBIT and DAC), every
//! scheme conserves every live page, and the replay is deterministic.

use nowa_frozen::replay::{run, OracleKind, ReplayConfig, ReplayLog, Scheme, SchemeRun};
use nowa_frozen::{
    train, Dataset, Model, SampleSpec, Synth, SynthConfig, TrainConfig, WriteRecord,
};
use nowa_logspace::PlacementKind;

const SEED: u64 = 7;

fn log() -> Vec<WriteRecord> {
    Synth::new(SynthConfig {
        writes: 300_000,
        hot_pages: 10_000,
        seed: SEED,
        ..SynthConfig::default()
    })
    .collect()
}

fn model(records: &[WriteRecord]) -> Model {
    let spec = SampleSpec::default();
    let (data, labels) = Dataset::from_records(records, &spec);
    let cfg = TrainConfig {
        seed: SEED,
        ..TrainConfig::default()
    };
    train(&data, &spec, &cfg, labels.len() as u64).expect("the synthetic log has both labels")
}

/// A clock that does not move: the replay is timed by the caller in real runs.
fn no_clock() -> f64 {
    0.0
}

fn cfg() -> ReplayConfig {
    ReplayConfig {
        unit_pages: 256,
        seed: SEED,
        ..ReplayConfig::default()
    }
}

fn frozen(dac: bool, oracle: OracleKind) -> Scheme {
    Scheme::Frozen {
        dac,
        classes: 6,
        oracle,
    }
}

fn go(log: &ReplayLog, s: Scheme, m: &Model) -> SchemeRun {
    let r = run(log, s, Some(m), &cfg(), no_clock).expect("replay");
    println!(
        "seed {SEED}: {:<26} WAF {:.3} FAR {:.3} GC {} victims {} GP {:.3}",
        r.scheme, r.waf, r.far, r.gc_pages, r.victims, r.victim_gp
    );
    assert_eq!(r.user_pages, log.user_writes());
    assert!(r.waf >= 1.0 && (0.0..=1.0).contains(&r.far));
    let placed: u64 = r.classes.iter().map(|c| c.stats.user_writes).sum();
    assert_eq!(placed, r.user_pages, "every user write placed in a class");
    let moved: u64 = r.classes.iter().map(|c| c.stats.gc_writes).sum();
    assert_eq!(moved, r.gc_pages, "every GC move placed in a class");
    r
}

#[test]
fn sepfrozen_separates_the_frozen_pages_of_a_synthetic_log() {
    let records = log();
    let m = model(&records);
    let log = ReplayLog::from_records(&records);
    assert!(log.frozen_share() > 0.02, "the log has frozen versions");
    let sepbit = go(&log, Scheme::Plain(PlacementKind::SepBit(6)), &m);
    let sfb = go(&log, frozen(false, OracleKind::Model), &m);
    let truth = go(&log, frozen(false, OracleKind::Truth), &m);
    let dac = go(&log, Scheme::Plain(PlacementKind::DacPaper(6)), &m);
    let sfd = go(&log, frozen(true, OracleKind::Model), &m);
    assert!(sepbit.gc_pages > 0, "the replay collects garbage");
    // The exact labels: SepFrozen's upper bound separates best.
    assert!(truth.far < sepbit.far, "{} vs {}", truth.far, sepbit.far);
    assert!(truth.waf < sepbit.waf, "{} vs {}", truth.waf, sepbit.waf);
    // The trained model.
    assert!(
        sfb.far < sepbit.far,
        "SepFrozenBIT FAR {} vs SepBIT {}",
        sfb.far,
        sepbit.far
    );
    assert!(
        sfb.waf < sepbit.waf,
        "SepFrozenBIT WAF {} vs SepBIT {}",
        sfb.waf,
        sepbit.waf
    );
    assert!(
        sfd.far < dac.far,
        "SepFrozenDAC FAR {} vs DAC {}",
        sfd.far,
        dac.far
    );
    assert!(
        sfd.waf < dac.waf,
        "SepFrozenDAC WAF {} vs DAC {}",
        sfd.waf,
        dac.waf
    );
    assert!(sfb.report.contains("judged frozen"), "{}", sfb.report);
}

#[test]
fn every_scheme_replays_deterministically() {
    let records: Vec<_> = log().into_iter().take(60_000).collect();
    let m = model(&records);
    let log = ReplayLog::from_records(&records);
    let mut all = Scheme::paper();
    all.push(frozen(false, OracleKind::Online));
    all.push(frozen(true, OracleKind::Truth));
    for s in all {
        let a = go(&log, s, &m);
        let b = go(&log, s, &m);
        assert_eq!(
            (a.waf, a.far, a.gc_pages),
            (b.waf, b.far, b.gc_pages),
            "{s}"
        );
    }
}

#[test]
fn scheme_names_round_trip() {
    for s in Scheme::paper() {
        assert_eq!(s.to_string().parse::<Scheme>(), Ok(s));
    }
    for t in [
        "sepfrozen-bit-truth:6",
        "sepfrozen-dac-online:4",
        "sepfrozen-bit:8",
    ] {
        assert_eq!(t.parse::<Scheme>().map(|s| s.to_string()), Ok(t.to_owned()));
    }
    for bad in [
        "sepfrozen-bit:3",
        "sepfrozen-foo",
        "sepfrozen-bit-magic",
        "bogus",
    ] {
        assert!(bad.parse::<Scheme>().is_err(), "{bad}");
    }
}
