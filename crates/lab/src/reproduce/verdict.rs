//! How a nowa value is judged against the paper's: a [`Criterion`] per paper value, a
//! [`Verdict`] per entry.

use serde::{Deserialize, Serialize};

/// The smallest share of the paper's effect (distance from the neutral value) that counts
/// as its shape.
pub const MIN_SHAPE: f64 = 0.1;

/// The judgement of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Within the stated tolerance of the paper's value (or on the paper's side of its bound).
    Reproduced,
    /// Not within tolerance, but on the same side of the neutral value as the paper's (the
    /// same direction: faster, fewer writes, ...) at the stated scale.
    Shape,
    /// Neither.
    Off,
    /// No value measured (the run failed or did not produce it).
    Missing,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Shape => "shape",
            Verdict::Off => "off",
            Verdict::Missing => "missing",
        })
    }
}

/// What "reproduced" means for one paper value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Criterion {
    /// Within `tolerance` (relative: 0.15 = 15%) of the paper's value; `shape` when on the
    /// paper's side of `neutral` (1 for a ratio "new / old", 0 for a difference), else off.
    Near {
        /// Relative tolerance.
        tolerance: f64,
        /// The value of "no effect" (None: there is no direction, only near or off).
        neutral: Option<f64>,
    },
    /// The paper states only a bound: reproduced when the value is at most the paper's.
    AtMost,
    /// The paper states only a bound: reproduced when the value is at least the paper's.
    AtLeast,
}

impl Criterion {
    /// A ratio "new / old" (neutral 1) within `tolerance`.
    #[must_use]
    pub const fn ratio(tolerance: f64) -> Criterion {
        Criterion::Near {
            tolerance,
            neutral: Some(1.0),
        }
    }
    /// A difference "new - old" (neutral 0) within `tolerance`.
    #[must_use]
    pub const fn difference(tolerance: f64) -> Criterion {
        Criterion::Near {
            tolerance,
            neutral: Some(0.0),
        }
    }
    /// A value without direction within `tolerance`.
    #[must_use]
    pub const fn near(tolerance: f64) -> Criterion {
        Criterion::Near {
            tolerance,
            neutral: None,
        }
    }

    /// The verdict on `nowa` against the paper's `paper`.
    ///
    /// # Panics
    /// If `paper` is not finite or a tolerance negative (the table's values are checked by
    /// `values::tests`).
    #[must_use]
    pub fn judge(self, paper: f64, nowa: Option<f64>) -> Verdict {
        assert!(paper.is_finite(), "a paper value is a number");
        let Some(v) = nowa.filter(|v| v.is_finite()) else {
            return Verdict::Missing;
        };
        let hit = |ok: bool| {
            if ok {
                Verdict::Reproduced
            } else {
                Verdict::Off
            }
        };
        match self {
            Criterion::AtMost => hit(v <= paper),
            Criterion::AtLeast => hit(v >= paper),
            Criterion::Near { tolerance, neutral } => {
                assert!(tolerance >= 0.0, "a tolerance is not negative");
                if (v - paper).abs() <= tolerance * paper.abs() {
                    return Verdict::Reproduced;
                }
                // Shape: the paper's direction, with at least a tenth of its effect (a 1%
                // change against the paper's 40% is no effect, not the paper's shape).
                match neutral {
                    Some(n)
                        if paper != n
                            && (v - n).signum() == (paper - n).signum()
                            && (v - n).abs() >= MIN_SHAPE * (paper - n).abs() =>
                    {
                        Verdict::Shape
                    }
                    _ => Verdict::Off,
                }
            }
        }
    }

    /// The criterion in words, for the report ("within 15%, direction vs 1").
    #[must_use]
    pub fn describe(self) -> String {
        match self {
            Criterion::AtMost => "at most the paper's".into(),
            Criterion::AtLeast => "at least the paper's".into(),
            Criterion::Near { tolerance, neutral } => {
                let t = format!("within {:.0}%", 100.0 * tolerance);
                match neutral {
                    Some(n) => format!(
                        "{t}; shape: same side of {n}, >= {:.0}% of the paper's effect",
                        100.0 * MIN_SHAPE
                    ),
                    None => t,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_within_tolerance_is_reproduced_and_outside_is_shape_or_off() {
        let c = Criterion::ratio(0.15);
        assert_eq!(c.judge(2.45, Some(2.2)), Verdict::Reproduced);
        assert_eq!(c.judge(2.45, Some(2.8)), Verdict::Reproduced);
        // Faster, but by much less than the paper: the direction holds.
        assert_eq!(c.judge(2.45, Some(1.2)), Verdict::Shape);
        assert_eq!(c.judge(2.45, Some(5.0)), Verdict::Shape);
        // Slower: the opposite direction.
        assert_eq!(c.judge(2.45, Some(0.9)), Verdict::Off);
        // No effect at all is not the paper's direction.
        assert_eq!(c.judge(2.45, Some(1.0)), Verdict::Off);
        // A reduction (paper 0.70) and its opposite.
        assert_eq!(c.judge(0.70, Some(0.95)), Verdict::Shape);
        // The paper's direction with less than a tenth of its effect: no effect.
        assert_eq!(c.judge(0.58, Some(0.992)), Verdict::Off);
        assert_eq!(c.judge(2.3, Some(1.02)), Verdict::Off);
        assert_eq!(c.judge(0.70, Some(1.05)), Verdict::Off);
    }

    #[test]
    fn a_difference_takes_its_direction_from_zero() {
        let c = Criterion::difference(0.15);
        assert_eq!(c.judge(-81.1, Some(-75.0)), Verdict::Reproduced);
        assert_eq!(c.judge(-81.1, Some(-20.0)), Verdict::Shape);
        assert_eq!(c.judge(-81.1, Some(3.0)), Verdict::Off);
    }

    #[test]
    fn without_a_neutral_value_only_near_counts() {
        let c = Criterion::near(0.05);
        assert_eq!(c.judge(2.0, Some(2.09)), Verdict::Reproduced);
        assert_eq!(c.judge(2.0, Some(2.11)), Verdict::Off);
        assert_eq!(c.judge(2.0, Some(1.0)), Verdict::Off);
    }

    #[test]
    fn bounds_and_missing_values() {
        assert_eq!(Criterion::AtMost.judge(1.0, Some(0.8)), Verdict::Reproduced);
        assert_eq!(Criterion::AtMost.judge(1.0, Some(1.2)), Verdict::Off);
        assert_eq!(
            Criterion::AtLeast.judge(1.0, Some(1.2)),
            Verdict::Reproduced
        );
        assert_eq!(Criterion::AtLeast.judge(1.0, Some(0.8)), Verdict::Off);
        for c in [Criterion::ratio(0.1), Criterion::AtMost, Criterion::AtLeast] {
            assert_eq!(c.judge(1.0, None), Verdict::Missing);
            assert_eq!(c.judge(1.0, Some(f64::NAN)), Verdict::Missing);
        }
    }

    #[test]
    fn verdicts_serialize_as_the_schemas_words() {
        let words: Vec<String> = [
            Verdict::Reproduced,
            Verdict::Shape,
            Verdict::Off,
            Verdict::Missing,
        ]
        .iter()
        .map(|v| serde_json::to_string(v).expect("serializes"))
        .collect();
        assert_eq!(
            words,
            ["\"reproduced\"", "\"shape\"", "\"off\"", "\"missing\""]
        );
    }
}
