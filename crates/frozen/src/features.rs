//! Model inputs: which HR fields ([`FeatureSet`]), how many past records ([`Twl`]), the
//! record window of one sample ([`HrWindow`]), and z-score [`Standardization`].
//!
//! A sample's feature vector lists, for each record of the window in order (current, last,
//! the one before, ...), the chosen fields in the fixed order WT, VD, AI, MI, AC, MC, as raw
//! values (WT in ticks, VD in bytes, AI/MI decoded mean intervals in ticks, AC/MC counts).
//! Missing records (a page's first writes) are [`HotnessRecord::NONE`]: all zeros, as in the
//! paper. With all six fields and TWL 2 that is the paper's 12 features.
//!
//! [`Feature::Ag`] (`ag`, not one of the paper's) is not a record field: it is the window's
//! age, judgement time - WT of HR_current on the DB-written-page timer ([`HrWindow::age`]),
//! 0 at a user write, and enters once, after the records' fields, as [`age_input`].

use crate::hotness::HotnessRecord;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The most records a window holds (the paper sweeps TWL 1..4).
pub const MAX_TWL: usize = 4;
/// The most features a sample has (6 fields x 4 records, and the age).
pub const MAX_FEATURES: usize = 6 * MAX_TWL + 1;

/// One HR field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Feature {
    /// Write time.
    Wt,
    /// Valid bytes.
    Vd,
    /// Mean access interval.
    Ai,
    /// Mean modification interval.
    Mi,
    /// Access count.
    Ac,
    /// Modification count.
    Mc,
    /// The window's age at judgement (not a record field; see the module docs).
    Ag,
}

impl Feature {
    /// The six HR fields (the paper's), in feature-vector order.
    pub const ALL: [Feature; 6] = [
        Feature::Wt,
        Feature::Vd,
        Feature::Ai,
        Feature::Mi,
        Feature::Ac,
        Feature::Mc,
    ];

    /// Every feature: the six HR fields, then the age.
    pub const NAMED: [Feature; 7] = {
        let f = Self::ALL;
        [f[0], f[1], f[2], f[3], f[4], f[5], Feature::Ag]
    };

    /// Lower-case name (`wt`, `vd`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Feature::Wt => "wt",
            Feature::Vd => "vd",
            Feature::Ai => "ai",
            Feature::Mi => "mi",
            Feature::Ac => "ac",
            Feature::Mc => "mc",
            Feature::Ag => "ag",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Feature::Wt => 1,
            Feature::Vd => 2,
            Feature::Ai => 4,
            Feature::Mi => 8,
            Feature::Ac => 16,
            Feature::Mc => 32,
            Feature::Ag => 64,
        }
    }

    /// True for the six HR fields, false for the age.
    #[must_use]
    pub fn is_record_field(self) -> bool {
        self != Feature::Ag
    }

    /// This field of `r`, as a model input.
    ///
    /// # Panics
    /// For [`Feature::Ag`], which is not a record field (see [`age_input`]).
    #[must_use]
    pub fn value(self, r: &HotnessRecord) -> f64 {
        match self {
            #[expect(
                clippy::cast_precision_loss,
                reason = "WT < 2^48 ticks: exact in an f64"
            )]
            Feature::Wt => r.wt() as f64,
            Feature::Vd => f64::from(r.vd()),
            Feature::Ai => r.ai(),
            Feature::Mi => r.mi(),
            Feature::Ac => f64::from(r.ac()),
            Feature::Mc => f64::from(r.mc()),
            Feature::Ag => unreachable!("the age is the window's, not a record field"),
        }
    }
}

/// The model input of an age of `age` ticks: `ln(1 + age)` (docs/sepfrozen.md, "Age at GC
/// and the decision threshold": the logarithm spreads ages over five decades that the raw
/// tick count squeezes into a few standardized values).
#[must_use]
pub fn age_input(age: u64) -> f64 {
    #[expect(
        clippy::cast_precision_loss,
        reason = "ages < 2^48 ticks: exact in an f64"
    )]
    let a = age as f64;
    a.ln_1p()
}

/// A non-empty set of HR fields (the feature ablations of the paper's Figure 21), and
/// optionally the age.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "Vec<Feature>", into = "Vec<Feature>")]
pub struct FeatureSet(u8);

impl FeatureSet {
    /// All six HR fields (the paper's; not the age).
    pub const ALL: FeatureSet = FeatureSet(63);

    /// The set of `fs`, or `None` if empty.
    #[must_use]
    pub fn of(fs: &[Feature]) -> Option<Self> {
        let bits = fs.iter().fold(0u8, |b, f| b | f.bit());
        (bits != 0).then_some(Self(bits))
    }

    /// The features, in feature-vector order (the age last).
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::NAMED
            .into_iter()
            .filter(move |f| self.0 & f.bit() != 0)
    }

    /// The HR fields (every feature but the age), in feature-vector order.
    pub fn record_fields(self) -> impl Iterator<Item = Feature> {
        self.iter().filter(|f| f.is_record_field())
    }

    /// Whether the set holds the age.
    #[must_use]
    pub fn has_age(self) -> bool {
        self.0 & Feature::Ag.bit() != 0
    }

    /// Number of features (1..=7).
    ///
    /// # Panics
    /// Never (sets are built non-empty).
    #[must_use]
    pub fn len(self) -> usize {
        let n = self.0.count_ones() as usize;
        assert!((1..=7).contains(&n), "a feature set is non-empty");
        n
    }

    /// Never true (sets are non-empty); for clippy's `len_without_is_empty`.
    #[must_use]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The figure-21 ablation ladder: VD, VD+WT, +AI, +MI, +AC, +MC (= all six).
    ///
    /// # Panics
    /// Never (each prefix is non-empty).
    #[must_use]
    pub fn ladder() -> [FeatureSet; 6] {
        let order = [
            Feature::Vd,
            Feature::Wt,
            Feature::Ai,
            Feature::Mi,
            Feature::Ac,
            Feature::Mc,
        ];
        std::array::from_fn(|i| Self::of(&order[..=i]).expect("non-empty prefix"))
    }
}

impl fmt::Debug for FeatureSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for FeatureSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Feature::name).collect();
        f.write_str(&names.join(","))
    }
}

/// A feature list that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FeatureSetError {
    /// An unknown name.
    #[error("unknown feature '{0}' (features: wt, vd, ai, mi, ac, mc, ag, or all)")]
    Unknown(String),
    /// No feature at all.
    #[error("the feature list is empty")]
    Empty,
}

impl FromStr for FeatureSet {
    type Err = FeatureSetError;

    /// `all` (the six HR fields), or names joined by `,` or `+` (`vd`, `vd+wt`, `wt,vd,ai`,
    /// `all+ag`), case-insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut fs = Vec::new();
        for part in s.split([',', '+']).map(str::trim).filter(|p| !p.is_empty()) {
            let p = part.to_ascii_lowercase();
            if p == "all" {
                fs.extend(Feature::ALL);
                continue;
            }
            let f = Feature::NAMED
                .into_iter()
                .find(|f| f.name() == p)
                .ok_or_else(|| FeatureSetError::Unknown(part.to_owned()))?;
            fs.push(f);
        }
        Self::of(&fs).ok_or(FeatureSetError::Empty)
    }
}

impl TryFrom<Vec<Feature>> for FeatureSet {
    type Error = FeatureSetError;
    fn try_from(v: Vec<Feature>) -> Result<Self, Self::Error> {
        Self::of(&v).ok_or(FeatureSetError::Empty)
    }
}

impl From<FeatureSet> for Vec<Feature> {
    fn from(s: FeatureSet) -> Self {
        s.iter().collect()
    }
}

/// How a window's records become model inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Encoding {
    /// Every field as recorded: WT is the absolute DB-written-page timer. The only form of
    /// model-file format 1; its weights on WT tie a model to runs of the same length.
    Raw,
    /// The paper's WT-diff and VD-diff (§4.1): the WT slot of record `i` is
    /// `WT_i - WT_(i+1)` (the page's update interval; 0 for the window's oldest record and
    /// when the older record is missing); the current record's VD slot is its VD (the level
    /// a frozen page keeps), an older record's is the growth from it to the next newer one,
    /// `VD_(i-1) - VD_i`; AI, MI, AC, MC as recorded. Nothing depends on when the run
    /// started, so a model transfers across run lengths, and a version's inputs are the same
    /// at its write and at any later GC.
    Diff,
}

impl Encoding {
    /// The encoding of model files without one (format 1).
    #[must_use]
    pub fn format1() -> Self {
        Self::Raw
    }

    /// Lower-case name (`raw`, `diff`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Raw => "raw",
            Self::Diff => "diff",
        }
    }
}

/// The time window length: records per sample, 1..=4 (the paper's default is 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct Twl(u8);

impl Twl {
    /// TWL 2: HR_current and HR_last, what a page header holds.
    pub const PAPER: Twl = Twl(2);

    /// `n` records, if `1 <= n <= 4`.
    #[must_use]
    pub fn new(n: u8) -> Option<Self> {
        (1..=4).contains(&n).then_some(Self(n))
    }

    /// Records per sample.
    #[must_use]
    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

impl TryFrom<u8> for Twl {
    type Error = String;
    fn try_from(n: u8) -> Result<Self, String> {
        Self::new(n).ok_or_else(|| format!("TWL {n} is outside 1..=4"))
    }
}

impl From<Twl> for u8 {
    fn from(t: Twl) -> u8 {
        t.0
    }
}

/// The records of one sample, newest first: `[current, last, the one before, ...]`;
/// [`HotnessRecord::NONE`] where a page has fewer writes; then the window's age in ticks of
/// the DB-written-page timer: judgement time - WT of HR_current (0 at a user write; read
/// only by models with [`Feature::Ag`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HrWindow(pub [HotnessRecord; MAX_TWL], pub u64);

impl HrWindow {
    /// The window of a page at GC: the two records of its header (age 0: see
    /// [`HrWindow::at`]).
    #[must_use]
    pub fn from_pair(current: HotnessRecord, last: HotnessRecord) -> Self {
        let mut w = [HotnessRecord::NONE; MAX_TWL];
        w[0] = current;
        w[1] = last;
        Self(w, 0)
    }

    /// The same records judged at `now` (the DB-written-page timer): the age is `now` - WT
    /// of HR_current, 0 if `now` is not later (or the page has no record).
    #[must_use]
    pub fn at(self, now: u64) -> Self {
        let wt = self.0[0].wt();
        Self(self.0, now.saturating_sub(wt))
    }

    /// The age in ticks.
    #[must_use]
    pub fn age(&self) -> u64 {
        self.1
    }
}

/// Number of model inputs for `features` and `twl`: the HR fields of each record, and the
/// age once.
#[must_use]
pub fn feature_count(features: FeatureSet, twl: Twl) -> usize {
    features.record_fields().count() * twl.get() + usize::from(features.has_age())
}

/// Writes the raw feature vector of `w` into `out` (length [`feature_count`]).
///
/// # Panics
/// If `out` has another length.
pub fn extract(w: &HrWindow, features: FeatureSet, twl: Twl, out: &mut [f64]) {
    assert_eq!(
        out.len(),
        feature_count(features, twl),
        "feature buffer length"
    );
    let mut k = 0;
    for r in &w.0[..twl.get()] {
        for f in features.record_fields() {
            out[k] = f.value(r);
            k += 1;
        }
    }
    if features.has_age() {
        out[k] = age_input(w.age());
        k += 1;
    }
    assert_eq!(k, out.len());
}

/// WT_current - WT_last in ticks (the page's last update interval; 0 on a first write,
/// which has no HR_last). The paper's "WT-diff".
#[must_use]
pub fn wt_diff(current: &HotnessRecord, last: &HotnessRecord) -> f64 {
    if last.is_none() {
        return 0.0;
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "WT < 2^48 ticks: exact in an f64"
    )]
    let d = current.wt().saturating_sub(last.wt()) as f64;
    d
}

/// VD_current - VD_last in bytes (growth of the page's valid data since its last write;
/// VD_current on a first write). The paper's "VD-diff".
#[must_use]
pub fn vd_diff(current: &HotnessRecord, last: &HotnessRecord) -> f64 {
    f64::from(current.vd()) - f64::from(last.vd())
}

/// Writes the feature vector of `w` in `encoding` into `out` (length [`feature_count`]);
/// [`Encoding::Raw`] is [`extract`].
///
/// # Panics
/// If `out` has another length.
pub fn extract_encoded(
    w: &HrWindow,
    features: FeatureSet,
    twl: Twl,
    encoding: Encoding,
    out: &mut [f64],
) {
    if encoding == Encoding::Raw {
        return extract(w, features, twl, out);
    }
    assert!(
        twl.get() <= MAX_TWL,
        "a window holds at most MAX_TWL records"
    );
    assert_eq!(
        out.len(),
        feature_count(features, twl),
        "feature buffer length"
    );
    let n = twl.get();
    let mut k = 0;
    for i in 0..n {
        let r = &w.0[i];
        let older = (i + 1 < n).then(|| &w.0[i + 1]);
        for f in features.record_fields() {
            out[k] = match (f, older) {
                (Feature::Wt, Some(o)) if !r.is_none() => wt_diff(r, o),
                (Feature::Wt, _) => 0.0,
                (Feature::Vd, _) if i > 0 => vd_diff(&w.0[i - 1], r),
                _ => f.value(r),
            };
            k += 1;
        }
    }
    if features.has_age() {
        out[k] = age_input(w.age());
        k += 1;
    }
    assert_eq!(k, out.len());
}

/// z-score standardization (scikit-learn's `StandardScaler`): `z = (x - mean) / scale`, with
/// the population standard deviation as `scale`, and 1 where it is 0 (a constant feature).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standardization {
    /// Per-feature mean of the training set.
    pub mean: Vec<f64>,
    /// Per-feature scale (standard deviation, or 1).
    pub scale: Vec<f64>,
}

impl Standardization {
    /// Fits means and scales to the rows of `x` (row-major, `d` columns) chosen by `rows`.
    ///
    /// # Panics
    /// If `rows` is empty or a row index is out of range.
    #[must_use]
    pub fn fit(x: &[f64], d: usize, rows: &[usize]) -> Self {
        assert!(!rows.is_empty() && d > 0, "fit on at least one row");
        #[expect(clippy::cast_precision_loss, reason = "a row count as a divisor")]
        let n = rows.len() as f64;
        let mut mean = vec![0.0; d];
        for &r in rows {
            for (m, v) in mean.iter_mut().zip(&x[r * d..(r + 1) * d]) {
                *m += v;
            }
        }
        mean.iter_mut().for_each(|m| *m /= n);
        let mut var = vec![0.0; d];
        for &r in rows {
            for ((s, v), m) in var.iter_mut().zip(&x[r * d..(r + 1) * d]).zip(&mean) {
                *s += (v - m) * (v - m);
            }
        }
        let scale = var
            .iter()
            .map(|s| {
                let sd = (s / n).sqrt();
                if sd > 0.0 && sd.is_finite() {
                    sd
                } else {
                    1.0
                }
            })
            .collect();
        Self { mean, scale }
    }

    /// Features per row.
    #[must_use]
    pub fn len(&self) -> usize {
        self.mean.len()
    }

    /// True for a standardization of no features.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.mean.is_empty()
    }

    /// Standardizes one row in place.
    ///
    /// # Panics
    /// If the row length differs from the standardization's.
    pub fn apply(&self, row: &mut [f64]) {
        assert_eq!(row.len(), self.mean.len(), "row length");
        for ((v, m), s) in row.iter_mut().zip(&self.mean).zip(&self.scale) {
            *v = (*v - m) / s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_sets_parse_and_print() {
        assert_eq!("all".parse::<FeatureSet>().unwrap(), FeatureSet::ALL);
        let s: FeatureSet = "VD+wt".parse().unwrap();
        assert_eq!(s.to_string(), "wt,vd");
        assert_eq!(s.len(), 2);
        assert!(
            matches!("vd,xx".parse::<FeatureSet>(), Err(FeatureSetError::Unknown(x)) if x == "xx")
        );
        assert_eq!("".parse::<FeatureSet>(), Err(FeatureSetError::Empty));
        let ladder = FeatureSet::ladder();
        assert_eq!(ladder[0].to_string(), "vd");
        assert_eq!(ladder[1].to_string(), "wt,vd");
        assert_eq!(ladder[5], FeatureSet::ALL);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"["wt","vd"]"#);
        assert_eq!(serde_json::from_str::<FeatureSet>(&json).unwrap(), s);
        assert!(serde_json::from_str::<FeatureSet>("[]").is_err());
        assert!(serde_json::from_str::<Twl>("5").is_err());
    }

    #[test]
    fn extraction_order_is_records_then_fields() {
        let cur = HotnessRecord::new(100, 4000, 0.0, 3.0, 7, 2);
        let last = HotnessRecord::new(40, 3000, 1.0, 0.0, 5, 1);
        let w = HrWindow::from_pair(cur, last);
        let fs: FeatureSet = "wt,vd,mc".parse().unwrap();
        let mut out = vec![0.0; 9];
        extract(&w, fs, Twl::new(3).unwrap(), &mut out);
        assert_eq!(out, [100.0, 4000.0, 2.0, 40.0, 3000.0, 1.0, 0.0, 0.0, 0.0]);
        let mut all = vec![0.0; 12];
        extract(&w, FeatureSet::ALL, Twl::PAPER, &mut all);
        assert!((all[3] - 3.0).abs() < 1e-3 && (all[8] - 1.0).abs() < 1e-3);
    }

    /// The age enters once, after every record's fields, as ln(1 + age), in both encodings;
    /// `ag` parses, prints and round-trips; `all` stays the paper's six.
    #[test]
    fn age_feature_by_hand() {
        let cur = HotnessRecord::new(100, 4000, 0.0, 3.0, 7, 2);
        let last = HotnessRecord::new(40, 3000, 1.0, 0.0, 5, 1);
        let w = HrWindow::from_pair(cur, last);
        assert_eq!(w.age(), 0, "a window from a header is judged at its write");
        let w = w.at(163);
        assert_eq!(w.age(), 63, "judged at timer 163, written at 100");
        assert_eq!(w.at(90).age(), 0, "never negative");
        let fs: FeatureSet = "wt+vd+ag".parse().unwrap();
        assert!(fs.has_age() && fs.len() == 3);
        assert_eq!(fs.to_string(), "wt,vd,ag");
        assert_eq!(feature_count(fs, Twl::PAPER), 5);
        let mut raw = vec![0.0; 5];
        extract(&w, fs, Twl::PAPER, &mut raw);
        assert_eq!(raw, [100.0, 4000.0, 40.0, 3000.0, 64f64.ln()]);
        let mut diff = vec![0.0; 5];
        extract_encoded(&w, fs, Twl::PAPER, Encoding::Diff, &mut diff);
        assert_eq!(diff, [60.0, 4000.0, 0.0, 1000.0, 64f64.ln()]);
        let all: FeatureSet = "all+ag".parse().unwrap();
        assert_eq!(feature_count(all, Twl::new(4).unwrap()), MAX_FEATURES);
        assert!(!FeatureSet::ALL.has_age());
        let json = serde_json::to_string(&fs).unwrap();
        assert_eq!(json, r#"["wt","vd","ag"]"#);
        assert_eq!(serde_json::from_str::<FeatureSet>(&json).unwrap(), fs);
        let only: FeatureSet = "ag".parse().unwrap();
        let mut one = [0.0];
        extract(&w, only, Twl::new(1).unwrap(), &mut one);
        assert_eq!(one, [64f64.ln()]);
        assert_eq!(age_input(0), 0.0);
    }

    #[test]
    fn standardization_matches_population_statistics() {
        // Two columns: [1, 2, 3, 4] and a constant 5.
        let x = [1.0, 5.0, 2.0, 5.0, 3.0, 5.0, 4.0, 5.0];
        let s = Standardization::fit(&x, 2, &[0, 1, 2, 3]);
        assert_eq!(s.mean, [2.5, 5.0]);
        assert_eq!(s.scale, [1.25f64.sqrt(), 1.0]);
        let mut row = [4.0, 5.0];
        s.apply(&mut row);
        assert_eq!(row, [1.5 / 1.25f64.sqrt(), 0.0]);
        let only_two = Standardization::fit(&x, 2, &[1, 3]);
        assert_eq!(only_two.mean, [3.0, 5.0]);
    }

    #[test]
    fn diff_encoding_by_hand() {
        let cur = HotnessRecord::new(100, 4000, 0.0, 3.0, 7, 2);
        let last = HotnessRecord::new(40, 3000, 1.0, 0.0, 5, 1);
        let w = HrWindow::from_pair(cur, last);
        let mut out = vec![0.0; 12];
        extract_encoded(&w, FeatureSet::ALL, Twl::PAPER, Encoding::Diff, &mut out);
        let want_cur = [60.0, 4000.0, cur.ai(), cur.mi(), 7.0, 2.0];
        let want_last = [0.0, 1000.0, last.ai(), last.mi(), 5.0, 1.0];
        assert_eq!(out[..6], want_cur, "WT-diff, VD, the rest as recorded");
        assert_eq!(out[6..], want_last, "the oldest record: no WT, VD-diff");
        let first = HrWindow::from_pair(cur, HotnessRecord::NONE);
        let mut one = vec![0.0; 2];
        let wt_vd: FeatureSet = "wt,vd".parse().unwrap();
        extract_encoded(
            &first,
            wt_vd,
            Twl::new(1).unwrap(),
            Encoding::Diff,
            &mut one,
        );
        assert_eq!(one, [0.0, 4000.0], "TWL 1 has no interval");
        extract_encoded(&first, wt_vd, Twl::PAPER, Encoding::Diff, &mut out[..4]);
        assert_eq!(out[..4], [0.0, 4000.0, 0.0, 4000.0], "a first write");
        let mut raw = vec![0.0; 12];
        extract_encoded(&w, FeatureSet::ALL, Twl::PAPER, Encoding::Raw, &mut raw);
        let mut plain = vec![0.0; 12];
        extract(&w, FeatureSet::ALL, Twl::PAPER, &mut plain);
        assert_eq!(raw, plain);
        use clap::ValueEnum as _;
        assert_eq!(Encoding::from_str("diff", false), Ok(Encoding::Diff));
        assert!(Encoding::from_str("abs", false).is_err());
    }
}
