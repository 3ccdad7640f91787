//! Samples from a write log: which records are samples, their record windows and labels,
//! the seeded train/test split.
//!
//! The window of a record is `[hr_current, hr_last, older...]`: the record's own two HRs,
//! then (TWL 3 and 4) the `hr_last` of the page's previous user writes in the log, newest
//! first. A free forgets the page's history (its id may be reused by a new page).

use crate::error::FrozenError;
use crate::features::{
    extract_encoded, feature_count, vd_diff, wt_diff, Encoding, Feature, FeatureSet, HrWindow, Twl,
    MAX_TWL,
};
use crate::hotness::HotnessRecord;
use crate::label::Labels;
use crate::metrics::Pearson;
use crate::writelog::{LogReader, WriteKind, WriteRecord};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// Which records are samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SampleKinds {
    /// DB (user) writes: the paper's data.
    User,
    /// GC moves: the pages the model judges at GC time.
    Gc,
    /// Both.
    All,
}

impl SampleKinds {
    fn takes(self, k: WriteKind) -> bool {
        match self {
            Self::User => k == WriteKind::User,
            Self::Gc => k == WriteKind::Gc,
            Self::All => k != WriteKind::Free,
        }
    }
}

/// How to turn a log into samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleSpec {
    /// HR fields used.
    pub features: FeatureSet,
    /// Records per sample.
    pub twl: Twl,
    /// Which records are samples.
    pub kinds: SampleKinds,
    /// Leave out records in the last `exclude_tail` fraction of the log's timer range (their
    /// labels are mostly "frozen" only because the log ends). 0 = the paper's exact labels.
    pub exclude_tail: f64,
    /// How records become inputs ([`Encoding::Diff`] by default).
    pub encoding: Encoding,
}

impl SampleSpec {
    /// Checks that the samples can carry the features: the age is 0 at every user write, so
    /// a model with [`Feature::Ag`] must learn from GC moves (`gc` or `all`).
    ///
    /// # Errors
    /// [`FrozenError::AgeNeedsGcSamples`].
    pub fn check(&self) -> Result<(), FrozenError> {
        if self.features.has_age() && self.kinds == SampleKinds::User {
            return Err(FrozenError::AgeNeedsGcSamples);
        }
        Ok(())
    }
}

impl Default for SampleSpec {
    fn default() -> Self {
        Self {
            features: FeatureSet::ALL,
            twl: Twl::PAPER,
            kinds: SampleKinds::User,
            exclude_tail: 0.0,
            encoding: Encoding::Diff,
        }
    }
}

/// Samples: a row-major feature matrix (raw, not standardized) and labels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dataset {
    /// Features, `len() * d` values.
    pub x: Vec<f64>,
    /// Labels: true = frozen.
    pub y: Vec<bool>,
    /// Features per sample.
    pub d: usize,
}

impl Dataset {
    /// An empty dataset of `d` features.
    ///
    /// # Panics
    /// If `d` is 0.
    #[must_use]
    pub fn new(d: usize) -> Self {
        assert!(d > 0, "at least one feature");
        Self {
            x: Vec::new(),
            y: Vec::new(),
            d,
        }
    }

    /// Samples.
    #[must_use]
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// True without samples.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Row `i`.
    #[must_use]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }

    /// Frozen samples.
    #[must_use]
    pub fn positives(&self) -> u64 {
        self.y.iter().filter(|&&y| y).count() as u64
    }

    /// Appends the sample of `w` labeled `frozen`.
    ///
    /// # Panics
    /// If the dataset's width is not `feature_count(features, twl)`.
    pub fn push(&mut self, w: &HrWindow, frozen: bool, features: FeatureSet, twl: Twl) {
        self.push_encoded(w, frozen, features, twl, Encoding::Raw);
    }

    /// Appends the sample of `w` in `encoding`, labeled `frozen`.
    ///
    /// # Panics
    /// If the dataset's width is not `feature_count(features, twl)`.
    pub fn push_encoded(
        &mut self,
        w: &HrWindow,
        frozen: bool,
        features: FeatureSet,
        twl: Twl,
        encoding: Encoding,
    ) {
        assert_eq!(feature_count(features, twl), self.d, "dataset width");
        let at = self.x.len();
        self.x.resize(at + self.d, 0.0);
        extract_encoded(w, features, twl, encoding, &mut self.x[at..]);
        self.y.push(frozen);
        assert_eq!(self.x.len(), self.y.len() * self.d);
    }

    /// The samples of the log at `path` (reads it twice: labels, then features).
    ///
    /// # Errors
    /// [`SampleSpec::check`]'s, the reader's errors.
    ///
    /// # Panics
    /// Never, unless the file changes between the two passes.
    pub fn from_log(path: &Path, spec: &SampleSpec) -> Result<(Self, Labels), FrozenError> {
        spec.check()?;
        let labels = Labels::from_log(path)?;
        let mut b = Builder::new(spec, &labels);
        let mut reader = LogReader::open(path)?;
        while let Some(r) = reader.next_record()? {
            b.push(&r);
        }
        assert_eq!(b.index, labels.len(), "both passes read the same records");
        Ok((b.data, labels))
    }

    /// The samples of records held in memory.
    #[must_use]
    pub fn from_records(records: &[WriteRecord], spec: &SampleSpec) -> (Self, Labels) {
        let labels = Labels::from_records(records);
        let mut b = Builder::new(spec, &labels);
        for r in records {
            b.push(r);
        }
        (b.data, labels)
    }

    /// A dataset of the rows `rows` (in that order).
    #[must_use]
    pub fn select(&self, rows: &[usize]) -> Self {
        let mut out = Self::new(self.d);
        out.x.reserve(rows.len() * self.d);
        for &r in rows {
            out.x.extend_from_slice(self.row(r));
            out.y.push(self.y[r]);
        }
        out
    }
}

/// Streams records into samples.
struct Builder<'a> {
    spec: SampleSpec,
    labels: &'a Labels,
    /// Pages' older records (TWL > 2 only).
    history: HashMap<u64, PageHistory>,
    tail_from: u64,
    index: usize,
    data: Dataset,
}

impl<'a> Builder<'a> {
    fn new(spec: &SampleSpec, labels: &'a Labels) -> Self {
        assert!((0.0..=1.0).contains(&spec.exclude_tail), "a fraction");
        let s = labels.summary();
        #[expect(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a fraction of a timer range, rounded down, within the range"
        )]
        let cut = ((s.last_timer - s.first_timer) as f64 * spec.exclude_tail) as u64;
        Self {
            spec: *spec,
            labels,
            history: HashMap::new(),
            tail_from: if spec.exclude_tail > 0.0 {
                s.last_timer - cut
            } else {
                u64::MAX
            },
            index: 0,
            data: Dataset::new(feature_count(spec.features, spec.twl)),
        }
    }

    fn push(&mut self, r: &WriteRecord) {
        let i = self.index;
        self.index += 1;
        let deep = self.spec.twl.get() > 2;
        let hist = if deep {
            self.history.get(&r.page).copied().unwrap_or_default()
        } else {
            PageHistory::default()
        };
        // A user write starts a version whose older records are its predecessor's window
        // tail, shifted by one; a GC move keeps its version's window.
        let tail = match r.kind {
            WriteKind::User => [hist.last, hist.tail[0]],
            _ => hist.tail,
        };
        if self.spec.kinds.takes(r.kind) && r.timer <= self.tail_from {
            let w = HrWindow([r.hr_current, r.hr_last, tail[0], tail[1]], sample_age(r));
            let (f, t, e) = (self.spec.features, self.spec.twl, self.spec.encoding);
            self.data.push_encoded(&w, self.labels.frozen(i), f, t, e);
        }
        if deep {
            match r.kind {
                WriteKind::User => {
                    let h = PageHistory {
                        tail,
                        last: r.hr_last,
                    };
                    self.history.insert(r.page, h);
                }
                WriteKind::Free => {
                    self.history.remove(&r.page);
                }
                _ => {}
            }
        }
    }
}

/// The age of a sample (see [`HrWindow`]): 0 at a user write (the version is judged as it is
/// written); at a GC move the log's timer (the DB-written-page timer of the last user write)
/// minus the version's WT, what the engine's oracle computes at GC.
fn sample_age(r: &WriteRecord) -> u64 {
    match r.kind {
        WriteKind::User => 0,
        _ => r.timer.saturating_sub(r.hr_current.wt()),
    }
}

/// The records of a page's current version beyond its own two (TWL > 2).
#[derive(Clone, Copy, Debug, Default)]
struct PageHistory {
    /// Records 3 and 4 of the version's window.
    tail: [HotnessRecord; MAX_TWL - 2],
    /// The version's `hr_last`.
    last: HotnessRecord,
}

/// One column of [`FeatureStats`]: a name, the paper's Pearson correlation with the frozen
/// label where it states one, and how to compute it from a record.
struct StatColumn {
    name: &'static str,
    paper: Option<f64>,
    value: fn(&WriteRecord) -> f64,
}

const STAT_COLUMNS: [StatColumn; 16] = [
    StatColumn {
        name: "wt",
        paper: None,
        value: |r| Feature::Wt.value(&r.hr_current),
    },
    StatColumn {
        name: "vd",
        paper: None,
        value: |r| Feature::Vd.value(&r.hr_current),
    },
    StatColumn {
        name: "ai",
        paper: Some(0.5021),
        value: |r| Feature::Ai.value(&r.hr_current),
    },
    StatColumn {
        name: "mi",
        paper: Some(0.4937),
        value: |r| Feature::Mi.value(&r.hr_current),
    },
    StatColumn {
        name: "ac",
        paper: Some(0.6374),
        value: |r| Feature::Ac.value(&r.hr_current),
    },
    StatColumn {
        name: "mc",
        paper: Some(0.5695),
        value: |r| Feature::Mc.value(&r.hr_current),
    },
    StatColumn {
        name: "wt_last",
        paper: None,
        value: |r| Feature::Wt.value(&r.hr_last),
    },
    StatColumn {
        name: "vd_last",
        paper: None,
        value: |r| Feature::Vd.value(&r.hr_last),
    },
    StatColumn {
        name: "ai_last",
        paper: None,
        value: |r| Feature::Ai.value(&r.hr_last),
    },
    StatColumn {
        name: "mi_last",
        paper: None,
        value: |r| Feature::Mi.value(&r.hr_last),
    },
    StatColumn {
        name: "ac_last",
        paper: None,
        value: |r| Feature::Ac.value(&r.hr_last),
    },
    StatColumn {
        name: "mc_last",
        paper: None,
        value: |r| Feature::Mc.value(&r.hr_last),
    },
    StatColumn {
        name: "wt_diff",
        paper: Some(0.7369),
        value: |r| wt_diff(&r.hr_current, &r.hr_last),
    },
    StatColumn {
        name: "vd_diff",
        paper: Some(0.7948),
        value: |r| vd_diff(&r.hr_current, &r.hr_last),
    },
    StatColumn {
        name: "first_write",
        paper: None,
        value: |r| if r.hr_last.is_none() { 1.0 } else { 0.0 },
    },
    StatColumn {
        name: "age",
        paper: None,
        #[expect(clippy::cast_precision_loss, reason = "ticks < 2^48")]
        value: |r| r.timer.saturating_sub(r.hr_current.wt()) as f64,
    },
];

/// One row of [`FeatureStats::rows`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StatRow {
    /// Column name (`wt`, `vd_diff`, `age`, ...).
    pub name: &'static str,
    /// Pearson correlation with the frozen label (`None`: constant column).
    pub r: Option<f64>,
    /// The column's mean.
    pub mean: Option<f64>,
    /// The paper's correlation, where it gives one.
    pub paper: Option<f64>,
}

/// Pearson correlations of HR fields and derived columns with the frozen label, over the
/// records of one kind: the current record's six fields, HR_last's six, WT-diff and
/// VD-diff (the paper's §4.1 analysis), whether the write is the page's first, and the age
/// (timer - WT_current: 0 for user writes; how long the version has lived, for GC moves).
#[derive(Clone, Debug)]
pub struct FeatureStats {
    kinds: SampleKinds,
    acc: [Pearson; STAT_COLUMNS.len()],
    frozen: u64,
}

impl FeatureStats {
    /// Empty statistics over records of `kinds`.
    #[must_use]
    pub fn new(kinds: SampleKinds) -> Self {
        Self {
            kinds,
            acc: [Pearson::default(); STAT_COLUMNS.len()],
            frozen: 0,
        }
    }

    /// Counts record `r` labeled `frozen` (ignored if not of the chosen kind).
    ///
    /// # Panics
    /// Never (the counts only grow together).
    pub fn add(&mut self, r: &WriteRecord, frozen: bool) {
        if !self.kinds.takes(r.kind) {
            return;
        }
        let y = if frozen { 1.0 } else { 0.0 };
        self.frozen += u64::from(frozen);
        for (a, c) in self.acc.iter_mut().zip(&STAT_COLUMNS) {
            a.add((c.value)(r), y);
        }
        assert!(self.frozen <= self.samples(), "frozen samples are samples");
    }

    /// Samples counted.
    #[must_use]
    pub fn samples(&self) -> u64 {
        self.acc[0].count()
    }

    /// Frozen samples counted.
    #[must_use]
    pub fn frozen(&self) -> u64 {
        self.frozen
    }

    /// One row per column, in a fixed order.
    #[must_use]
    pub fn rows(&self) -> Vec<StatRow> {
        self.acc
            .iter()
            .zip(&STAT_COLUMNS)
            .map(|(a, c)| StatRow {
                name: c.name,
                r: a.r(),
                mean: a.mean_x(),
                paper: c.paper,
            })
            .collect()
    }

    /// The statistics of the log at `path`, for user writes and for GC moves (reads it
    /// twice: labels, then records).
    ///
    /// # Errors
    /// The reader's errors.
    ///
    /// # Panics
    /// Never, unless the file changes between the two passes.
    pub fn from_log(path: &Path) -> Result<[Self; 2], FrozenError> {
        let labels = Labels::from_log(path)?;
        let mut out = [Self::new(SampleKinds::User), Self::new(SampleKinds::Gc)];
        let mut reader = LogReader::open(path)?;
        let mut i = 0;
        while let Some(r) = reader.next_record()? {
            out.iter_mut().for_each(|s| s.add(&r, labels.frozen(i)));
            i += 1;
        }
        assert_eq!(i, labels.len(), "both passes read the same records");
        assert!(
            out[0].samples() + out[1].samples() <= i as u64,
            "one kind per record"
        );
        Ok(out)
    }
}

/// Seeded split: shuffles `0..n` and returns (train, test) with
/// `test = ceil(test_fraction * n)` (scikit-learn's `train_test_split` rounding).
///
/// # Errors
/// [`FrozenError::TooFewSamples`] if either side would be empty.
///
/// # Panics
/// If `test_fraction` is not in (0, 1).
pub fn split(
    n: usize,
    test_fraction: f64,
    seed: u64,
) -> Result<(Vec<usize>, Vec<usize>), FrozenError> {
    assert!(
        test_fraction > 0.0 && test_fraction < 1.0,
        "a test fraction in (0, 1)"
    );
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "ceil of a fraction of n is within 0..=n"
    )]
    let n_test = ((n as f64) * test_fraction).ceil() as usize;
    if n_test == 0 || n_test >= n {
        return Err(FrozenError::TooFewSamples {
            samples: n as u64,
            needed: 2,
        });
    }
    let mut idx: Vec<usize> = (0..n).collect();
    let mut rng = SmallRng::seed_from_u64(seed);
    idx.shuffle(&mut rng);
    let test = idx.split_off(n - n_test);
    assert_eq!(idx.len() + test.len(), n);
    Ok((idx, test))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writelog::NO_ZONE;

    fn rec(timer: u64, page: u64, kind: WriteKind, cur: u64, last: u64) -> WriteRecord {
        let hr = |wt: u64| {
            if wt == 0 {
                HotnessRecord::NONE
            } else {
                HotnessRecord::new(wt, wt * 10, 0.0, 0.0, 1, 1)
            }
        };
        WriteRecord {
            timer,
            page,
            zone: 0,
            from_zone: NO_ZONE,
            kind,
            class: 0,
            hr_current: hr(cur),
            hr_last: hr(last),
        }
    }

    #[test]
    fn windows_labels_and_sample_kinds() {
        use WriteKind::{Free, Gc, User};
        let log = [
            rec(1, 5, User, 1, 0),
            rec(2, 5, User, 2, 1),
            rec(2, 5, Gc, 2, 1),
            rec(3, 5, User, 3, 2),
            rec(4, 6, User, 4, 0),
            rec(4, 6, Free, 0, 0),
        ];
        let spec = SampleSpec {
            features: "wt".parse().unwrap(),
            twl: Twl::new(4).unwrap(),
            encoding: Encoding::Raw,
            ..SampleSpec::default()
        };
        let (d, _) = Dataset::from_records(&log, &spec);
        assert_eq!(d.len(), 4, "user writes only");
        assert_eq!(d.row(0), [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(d.row(1), [2.0, 1.0, 0.0, 0.0]);
        assert_eq!(d.row(2), [3.0, 2.0, 1.0, 0.0]);
        assert_eq!(d.row(3), [4.0, 0.0, 0.0, 0.0]);
        assert_eq!(d.y, [false, false, true, false], "page 6 was freed");
        let diff = SampleSpec {
            encoding: Encoding::Diff,
            ..spec
        };
        let (dd, _) = Dataset::from_records(&log, &diff);
        assert_eq!(dd.row(0), [0.0; 4], "a first write has no interval");
        assert_eq!(dd.row(1), [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(dd.row(2), [1.0, 1.0, 0.0, 0.0], "intervals, oldest slot 0");
        assert_eq!(dd.row(3), [0.0; 4]);
        let gc = SampleSpec {
            kinds: SampleKinds::Gc,
            ..spec
        };
        let (g, _) = Dataset::from_records(&log, &gc);
        assert_eq!(
            (g.len(), g.row(0), g.y[0]),
            (1, &[2.0, 1.0, 0.0, 0.0][..], false)
        );
        let tail = SampleSpec {
            exclude_tail: 0.5,
            ..spec
        };
        let (t, _) = Dataset::from_records(&log, &tail);
        assert_eq!(
            t.len(),
            3,
            "timers 1..=3: the cut is floor(0.5 x 3) = 1 tick"
        );
    }

    /// The age of a sample by hand: 0 at a user write, the log's timer - WT_current at a GC
    /// move (page 5 written at 2, moved at timer 9: age 7; ln(1 + 7) as the input); a model
    /// with `ag` on user writes only is refused.
    #[test]
    fn age_samples_by_hand_and_user_only_refused() {
        use WriteKind::{Gc, User};
        let log = [
            rec(1, 5, User, 1, 0),
            rec(2, 5, User, 2, 1),
            rec(9, 5, Gc, 2, 1),
            rec(9, 6, User, 9, 0),
        ];
        let spec = SampleSpec {
            features: "wt,ag".parse().unwrap(),
            twl: Twl::PAPER,
            kinds: SampleKinds::All,
            encoding: Encoding::Raw,
            ..SampleSpec::default()
        };
        spec.check().unwrap();
        let (d, _) = Dataset::from_records(&log, &spec);
        assert_eq!(d.d, 3, "WT of two records, the age once");
        assert_eq!(d.row(0), [1.0, 0.0, 0.0]);
        assert_eq!(d.row(1), [2.0, 1.0, 0.0], "a user write is judged now");
        assert_eq!(
            d.row(2),
            [2.0, 1.0, 8f64.ln()],
            "moved 7 ticks after its write"
        );
        assert_eq!(d.row(3), [9.0, 0.0, 0.0]);
        let user = SampleSpec {
            kinds: SampleKinds::User,
            ..spec
        };
        assert!(matches!(user.check(), Err(FrozenError::AgeNeedsGcSamples)));
        let cfg = crate::train::TrainConfig::default();
        let r = crate::train::train(&d, &user, &cfg, 4);
        assert!(matches!(r, Err(FrozenError::AgeNeedsGcSamples)), "{r:?}");
        let no_age = SampleSpec {
            features: "wt".parse().unwrap(),
            ..user
        };
        no_age.check().unwrap();
    }

    #[test]
    fn split_is_seeded_and_complete() {
        let (a, b) = split(100, 0.25, 7).unwrap();
        assert_eq!((a.len(), b.len()), (75, 25));
        let (a2, b2) = split(100, 0.25, 7).unwrap();
        assert_eq!((&a, &b), (&a2, &b2));
        let (a3, _) = split(100, 0.25, 8).unwrap();
        assert_ne!(a, a3, "another seed, another split");
        let mut all: Vec<usize> = a.iter().chain(&b).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());
        assert_eq!(split(10, 0.25, 1).unwrap().1.len(), 3, "ceil(2.5)");
        assert!(split(1, 0.25, 1).is_err());
    }

    #[test]
    fn feature_stats_on_a_toy_set_with_known_correlation() {
        // Frozen iff i % 4 == 0. VD is 3000 for frozen versions, 1000 otherwise: r(vd) = 1.
        // WT-diff is 500 or 100 plus a known disturbance, checked against the formula.
        let mut st = FeatureStats::new(SampleKinds::User);
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for i in 0..1000u64 {
            let frozen = i % 4 == 0;
            let wt = 10_000 + 7 * i;
            let gap = if frozen { 500 } else { 100 } + (i * 37) % 300;
            let mut r = rec(wt, i, WriteKind::User, 0, 0);
            r.hr_current = HotnessRecord::new(wt, if frozen { 3000 } else { 1000 }, 0.0, 0.0, 1, 1);
            r.hr_last = HotnessRecord::new(wt - gap, 500, 0.0, 0.0, 1, 1);
            st.add(&r, frozen);
            let mut moved = r;
            moved.kind = WriteKind::Gc;
            st.add(&moved, !frozen);
            xs.push(gap as f64);
            ys.push(if frozen { 1.0 } else { 0.0 });
        }
        assert_eq!(
            (st.samples(), st.frozen()),
            (1000, 250),
            "GC moves left out"
        );
        let rows = st.rows();
        let get = |n: &str| rows.iter().find(|r| r.name == n).unwrap();
        assert!((get("vd").r.unwrap() - 1.0).abs() < 1e-12);
        assert!(
            (get("vd_diff").r.unwrap() - 1.0).abs() < 1e-12,
            "VD_last is constant"
        );
        assert_eq!(get("vd_last").r, None, "a constant column");
        assert_eq!(get("vd_diff").paper, Some(0.7948));
        let n = 1000.0;
        let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
        let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
        let syy: f64 = ys.iter().map(|y| (y - my) * (y - my)).sum();
        let want = sxy / (sxx * syy).sqrt();
        assert!(want > 0.5 && want < 0.99, "a partial correlation: {want}");
        assert!((get("wt_diff").r.unwrap() - want).abs() < 1e-12);
        assert_eq!(get("age").r, None, "user writes are written now");
        let mut first = rec(5, 1, WriteKind::User, 5, 0);
        first.hr_current = HotnessRecord::new(5, 100, 0.0, 0.0, 1, 1);
        assert_eq!(
            wt_diff(&first.hr_current, &first.hr_last),
            0.0,
            "no last record"
        );
    }
}
