//! Samples from a write log: which records are samples, their record windows and labels,
//! the seeded train/test split.
//!
//! The window of a record is `[hr_current, hr_last, older...]`: the record's own two HRs,
//! then (TWL 3 and 4) the `hr_last` of the page's previous user writes in the log, newest
//! first. A free forgets the page's history (its id may be reused by a new page).

use crate::error::FrozenError;
use crate::features::{extract, feature_count, FeatureSet, HrWindow, Twl, MAX_TWL};
use crate::hotness::HotnessRecord;
use crate::label::Labels;
use crate::writelog::{LogReader, WriteKind, WriteRecord};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

/// Which records are samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

impl FromStr for SampleKinds {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "user" => Ok(Self::User),
            "gc" => Ok(Self::Gc),
            "all" => Ok(Self::All),
            o => Err(format!("'{o}' is not user, gc or all")),
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
}

impl Default for SampleSpec {
    fn default() -> Self {
        Self {
            features: FeatureSet::ALL,
            twl: Twl::PAPER,
            kinds: SampleKinds::User,
            exclude_tail: 0.0,
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
        assert_eq!(feature_count(features, twl), self.d, "dataset width");
        let at = self.x.len();
        self.x.resize(at + self.d, 0.0);
        extract(w, features, twl, &mut self.x[at..]);
        self.y.push(frozen);
        assert_eq!(self.x.len(), self.y.len() * self.d);
    }

    /// The samples of the log at `path` (reads it twice: labels, then features).
    ///
    /// # Errors
    /// The reader's errors.
    ///
    /// # Panics
    /// Never, unless the file changes between the two passes.
    pub fn from_log(path: &Path, spec: &SampleSpec) -> Result<(Self, Labels), FrozenError> {
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
            let w = HrWindow([r.hr_current, r.hr_last, tail[0], tail[1]]);
            self.data
                .push(&w, self.labels.frozen(i), self.spec.features, self.spec.twl);
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

/// The records of a page's current version beyond its own two (TWL > 2).
#[derive(Clone, Copy, Debug, Default)]
struct PageHistory {
    /// Records 3 and 4 of the version's window.
    tail: [HotnessRecord; MAX_TWL - 2],
    /// The version's `hr_last`.
    last: HotnessRecord,
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
            ..SampleSpec::default()
        };
        let (d, _) = Dataset::from_records(&log, &spec);
        assert_eq!(d.len(), 4, "user writes only");
        assert_eq!(d.row(0), [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(d.row(1), [2.0, 1.0, 0.0, 0.0]);
        assert_eq!(d.row(2), [3.0, 2.0, 1.0, 0.0]);
        assert_eq!(d.row(3), [4.0, 0.0, 0.0, 0.0]);
        assert_eq!(d.y, [false, false, true, false], "page 6 was freed");
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
}
