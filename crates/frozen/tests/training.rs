//! Training end to end: toy sets with known answers, determinism per seed, every classifier
//! and window length on a synthetic log written to and read from a file.

use nowa_frozen::{
    train, ClassifierKind, Dataset, FeatureSet, HotnessRecord, LogWriter, Model, Params,
    SampleSpec, Synth, SynthConfig, TrainConfig, Twl, WriteKind, WriteRecord, NO_CLASS, NO_ZONE,
};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Normal};

fn user(timer: u64, page: u64, cur: HotnessRecord, last: HotnessRecord) -> WriteRecord {
    WriteRecord {
        timer,
        page,
        zone: NO_ZONE,
        from_zone: NO_ZONE,
        kind: WriteKind::User,
        class: NO_CLASS,
        hr_current: cur,
        hr_last: last,
    }
}

/// A separable log: each page is filled by a few writes (VD below 3 KiB) and its last write
/// fills it (VD 4096): the last version, and only it, is never rewritten.
fn separable_log(pages: u64, seed: u64) -> Vec<WriteRecord> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut log = Vec::new();
    let mut timer = 0;
    let mut live: Vec<(u64, u32, HotnessRecord)> =
        (0..pages).map(|p| (p, 0, HotnessRecord::NONE)).collect();
    while !live.is_empty() {
        let i = rng.random_range(0..live.len());
        let (page, n, last) = live[i];
        timer += 1;
        let full = n + 1 == 4;
        let vd = if full {
            4096
        } else {
            rng.random_range(100..3000)
        };
        let cur = HotnessRecord::new(timer, vd, rng.random_range(0.0..5.0), 1.0, 3, 1);
        log.push(user(timer, page, cur, last));
        if full {
            live.swap_remove(i);
        } else {
            live[i] = (page, n + 1, cur);
        }
    }
    log
}

fn linear(m: &Model) -> (&[f64], f64) {
    match &m.params {
        Params::Linear { weights, intercept } => (weights, *intercept),
        Params::Tree { .. } => panic!("a linear model"),
    }
}

#[test]
fn a_separable_log_is_learned_exactly_through_the_file_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sep.log");
    let mut w = LogWriter::create(&path, false, 4096).unwrap();
    for r in separable_log(3000, 1) {
        w.append(&r).unwrap();
    }
    assert_eq!(w.finish().unwrap().records, 12_000);
    let spec = SampleSpec::default();
    let (data, labels) = Dataset::from_log(&path, &spec).unwrap();
    assert_eq!((data.len(), data.positives()), (12_000, 3000));
    assert_eq!(labels.counts().user_frozen, 3000);
    for classifier in [
        ClassifierKind::Sgd,
        ClassifierKind::Logreg,
        ClassifierKind::Tree,
    ] {
        let cfg = TrainConfig {
            classifier,
            ..TrainConfig::default()
        };
        let m = train(&data, &spec, &cfg, labels.len() as u64).unwrap();
        let acc = m.metrics.test.accuracy.unwrap();
        assert!(acc > 0.999, "{classifier:?}: test accuracy {acc}");
        assert_eq!(m.training.test, 3000, "a quarter held out");
        let saved = dir.path().join(format!("{}.json", classifier.name()));
        m.save(&saved, false).unwrap();
        assert_eq!(Model::load(&saved).unwrap(), m, "JSON keeps every bit");
    }
}

#[test]
fn same_seed_same_weights_other_seed_other_shuffles() {
    let log = separable_log(800, 2);
    let spec = SampleSpec::default();
    let (data, labels) = Dataset::from_records(&log, &spec);
    let n = labels.len() as u64;
    let cfg = TrainConfig::default();
    let a = train(&data, &spec, &cfg, n).unwrap();
    let b = train(&data, &spec, &cfg, n).unwrap();
    assert_eq!(a, b, "bit-identical per seed");
    let bits = |m: &Model| linear(m).0.iter().map(|w| w.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a), bits(&b));
    let c = train(&data, &spec, &TrainConfig { seed: 43, ..cfg }, n).unwrap();
    assert_ne!(bits(&a), bits(&c), "another seed shuffles differently");
}

/// Two Gaussian classes N(-1, 1) and N(+1, 1), equal priors: logistic regression is the right
/// model and the Bayes accuracy is Phi(1) = 0.841345.
#[test]
fn gaussian_classes_reach_the_bayes_accuracy() {
    let mut rng = SmallRng::seed_from_u64(11);
    let noise = Normal::new(0.0, 1.0).unwrap();
    let spec = SampleSpec {
        features: "vd".parse().unwrap(),
        twl: Twl::new(1).unwrap(),
        ..SampleSpec::default()
    };
    let mut data = Dataset::new(1);
    for _ in 0..40_000 {
        let frozen = rng.random_bool(0.5);
        let mean = if frozen { 1.0 } else { -1.0 };
        data.x.push(mean + noise.sample(&mut rng));
        data.y.push(frozen);
    }
    for classifier in [ClassifierKind::Sgd, ClassifierKind::Logreg] {
        let cfg = TrainConfig {
            classifier,
            ..TrainConfig::default()
        };
        let m = train(&data, &spec, &cfg, 0).unwrap();
        let acc = m.metrics.test.accuracy.unwrap();
        // 10,000 test samples: standard error 0.0037; 4 of them.
        assert!((acc - 0.841_345).abs() < 0.015, "{classifier:?}: {acc}");
        let (w, b) = linear(&m);
        // The decision boundary sits at x = 0 (in raw units: -b / w * scale + mean).
        let s = &m.standardization;
        let boundary = -b / w[0] * s.scale[0] + s.mean[0];
        assert!(boundary.abs() < 0.05, "{classifier:?}: boundary {boundary}");
    }
}

#[test]
fn every_window_length_and_feature_set_trains_on_a_synthetic_log() {
    let cfg = SynthConfig {
        writes: 40_000,
        hot_pages: 2000,
        ..SynthConfig::default()
    };
    let log: Vec<_> = Synth::new(cfg).collect();
    let mut accuracies = Vec::new();
    for twl in 1..=4 {
        let spec = SampleSpec {
            twl: Twl::new(twl).unwrap(),
            ..SampleSpec::default()
        };
        let (data, labels) = Dataset::from_records(&log, &spec);
        assert_eq!(data.d, 6 * usize::from(twl));
        let m = train(&data, &spec, &TrainConfig::default(), labels.len() as u64).unwrap();
        accuracies.push(m.metrics.test.accuracy.unwrap());
    }
    // The synthetic freeze is visible in VD and its growth: more history helps.
    assert!(accuracies[1] >= accuracies[0], "{accuracies:?}");
    assert!(accuracies.iter().all(|&a| a > 0.8), "{accuracies:?}");
    for fs in FeatureSet::ladder() {
        let spec = SampleSpec {
            features: fs,
            ..SampleSpec::default()
        };
        let (data, labels) = Dataset::from_records(&log, &spec);
        let m = train(&data, &spec, &TrainConfig::default(), labels.len() as u64).unwrap();
        assert_eq!(m.feature_count(), fs.len() * 2);
        assert!(m.metrics.test.accuracy.unwrap() > 0.6, "{fs}");
    }
}
