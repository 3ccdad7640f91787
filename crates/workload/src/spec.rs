//! Textual workload specification, e.g. `zipf:0.8`, parsed from the command line and stored in
//! result files.

use crate::gens::{ReadOnlyArea, Sequential, ShiftingZipf, TwoZone, Uniform, Zipfian};
use crate::zns::{ZnsLike, DEFAULT_ZNS_CHUNK_PAGES};
use crate::{Workload, WorkloadError, WorkloadParams};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The accepted forms, quoted in parse errors.
pub const VALID_FORMS: &str = "uniform | two-zone:X/Y (e.g. two-zone:90/10) | zipf:THETA (e.g. zipf:0.8) | zipf-shift:THETA[:PERIOD] (e.g. zipf-shift:0.9:0.5) | read-only:F (e.g. read-only:0.4) | sequential | zns:ZONE_PAGES:FRONTS[:CHUNK_PAGES] (e.g. zns:262144:4)";

/// A workload and its shape parameters, independent of device size and seed. Parses from and
/// displays as the compact string form (see [`VALID_FORMS`]); serde uses the same string, so
/// result files say `"zipf:0.8"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
#[non_exhaustive]
pub enum WorkloadSpec {
    /// `uniform`
    Uniform,
    /// `two-zone:X/Y`: X% of writes to a scattered hot zone of Y% of the pages.
    TwoZone {
        /// X.
        write_pct: f64,
        /// Y.
        space_pct: f64,
    },
    /// `zipf:THETA`
    Zipf {
        /// The exponent.
        theta: f64,
    },
    /// `zipf-shift:THETA[:PERIOD]`: zipf whose hot set moves by a tenth of the pages every
    /// PERIOD x in-use writes (default 1).
    ZipfShift {
        /// The exponent.
        theta: f64,
        /// Writes between shifts, in multiples of the in-use pages.
        period: f64,
    },
    /// `read-only:F`: fraction F of pages never rewritten.
    ReadOnly {
        /// F.
        fraction: f64,
    },
    /// `sequential`
    Sequential,
    /// `zns:ZONE_PAGES:FRONTS[:CHUNK_PAGES]` (chunk defaults to [`DEFAULT_ZNS_CHUNK_PAGES`]).
    Zns {
        /// Pages per zone.
        zone_pages: u64,
        /// Write fronts.
        fronts: u32,
        /// Pages per turn.
        chunk_pages: u64,
    },
}

impl WorkloadSpec {
    /// Checks the parameters that do not depend on the device size.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        match *self {
            WorkloadSpec::Uniform | WorkloadSpec::Sequential => Ok(()),
            WorkloadSpec::TwoZone {
                write_pct,
                space_pct,
            } => {
                let ok = |v: f64| v > 0.0 && v < 100.0;
                if ok(write_pct) && ok(space_pct) {
                    Ok(())
                } else {
                    Err(WorkloadError::BadTwoZone {
                        x: write_pct,
                        y: space_pct,
                    })
                }
            }
            WorkloadSpec::Zipf { theta } => {
                if theta.is_finite() && theta > 0.0 {
                    Ok(())
                } else {
                    Err(WorkloadError::BadTheta(theta))
                }
            }
            WorkloadSpec::ZipfShift { theta, period } => {
                if !(theta.is_finite() && theta > 0.0) {
                    Err(WorkloadError::BadTheta(theta))
                } else if !(period.is_finite() && period > 0.0) {
                    Err(WorkloadError::BadVolume(period))
                } else {
                    Ok(())
                }
            }
            WorkloadSpec::ReadOnly { fraction } => {
                if (0.0..1.0).contains(&fraction) {
                    Ok(())
                } else {
                    Err(WorkloadError::BadReadOnly(fraction))
                }
            }
            WorkloadSpec::Zns {
                zone_pages,
                fronts,
                chunk_pages,
            } => {
                if zone_pages == 0 || fronts == 0 || chunk_pages == 0 {
                    Err(WorkloadError::BadZns(format!(
                        "zone pages, fronts and chunk pages must be >= 1, got {zone_pages}:{fronts}:{chunk_pages}"
                    )))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Builds the generator over the in-use pages of `params`.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn build(&self, params: &WorkloadParams) -> Result<Box<dyn Workload>, WorkloadError> {
        self.build_in_use(params.in_use_pages()?, params.seed)
    }

    /// Builds the generator over `[0, in_use)`.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn build_in_use(&self, in_use: u64, seed: u64) -> Result<Box<dyn Workload>, WorkloadError> {
        self.validate()?;
        Ok(match *self {
            WorkloadSpec::Uniform => Box::new(Uniform::new(in_use, seed)?),
            WorkloadSpec::TwoZone {
                write_pct,
                space_pct,
            } => Box::new(TwoZone::new(in_use, write_pct, space_pct, seed)?),
            WorkloadSpec::Zipf { theta } => Box::new(Zipfian::new(in_use, theta, seed)?),
            WorkloadSpec::ZipfShift { theta, period } => {
                Box::new(ShiftingZipf::new(in_use, theta, period, seed)?)
            }
            WorkloadSpec::ReadOnly { fraction } => {
                Box::new(ReadOnlyArea::new(in_use, fraction, seed)?)
            }
            WorkloadSpec::Sequential => Box::new(Sequential::new(in_use)?),
            WorkloadSpec::Zns {
                zone_pages,
                fronts,
                chunk_pages,
            } => Box::new(ZnsLike::new(in_use, zone_pages, fronts, chunk_pages, seed)?),
        })
    }
}

impl fmt::Display for WorkloadSpec {
    /// Canonical string form; parses back to an equal spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadSpec::Uniform => write!(f, "uniform"),
            WorkloadSpec::TwoZone {
                write_pct,
                space_pct,
            } => write!(f, "two-zone:{write_pct}/{space_pct}"),
            WorkloadSpec::Zipf { theta } => write!(f, "zipf:{theta}"),
            WorkloadSpec::ZipfShift { theta, period } => write!(f, "zipf-shift:{theta}:{period}"),
            WorkloadSpec::ReadOnly { fraction } => write!(f, "read-only:{fraction}"),
            WorkloadSpec::Sequential => write!(f, "sequential"),
            WorkloadSpec::Zns {
                zone_pages,
                fronts,
                chunk_pages,
            } => {
                write!(f, "zns:{zone_pages}:{fronts}")?;
                if *chunk_pages != DEFAULT_ZNS_CHUNK_PAGES {
                    write!(f, ":{chunk_pages}")?;
                }
                Ok(())
            }
        }
    }
}

fn parse_err(msg: String) -> WorkloadError {
    WorkloadError::Parse(msg)
}

fn num<T: FromStr>(text: &str, what: &str, form: &str) -> Result<T, WorkloadError> {
    text.trim().parse().map_err(|_| {
        parse_err(format!(
            "cannot parse {what} '{text}' in workload '{form}' (expected {})",
            form_of(form)
        ))
    })
}

fn form_of(spec: &str) -> &'static str {
    match spec.split(':').next().unwrap_or("") {
        "two-zone" | "two-zones" | "twozone" => "two-zone:X/Y, e.g. two-zone:90/10",
        "zipf" => "zipf:THETA, e.g. zipf:0.8",
        "zipf-shift" => "zipf-shift:THETA[:PERIOD], e.g. zipf-shift:0.9:0.5",
        "read-only" | "readonly" => "read-only:F with 0 <= F < 1, e.g. read-only:0.4",
        "zns" => "zns:ZONE_PAGES:FRONTS[:CHUNK_PAGES], e.g. zns:262144:4",
        _ => VALID_FORMS,
    }
}

fn zipf_shift(a: &str, lower: &str) -> Result<WorkloadSpec, WorkloadError> {
    let (t, p) = a.split_once(':').unwrap_or((a, "1"));
    Ok(WorkloadSpec::ZipfShift {
        theta: num(t, "theta", lower)?,
        period: num(p, "PERIOD", lower)?,
    })
}

fn zns(a: &str, lower: &str) -> Result<WorkloadSpec, WorkloadError> {
    let fields: Vec<&str> = a.split(':').collect();
    if !(2..=3).contains(&fields.len()) {
        return Err(parse_err(format!(
            "zns needs 2 or 3 parameters, got '{a}' (expected {})",
            form_of(lower)
        )));
    }
    Ok(WorkloadSpec::Zns {
        zone_pages: num(fields[0], "ZONE_PAGES", lower)?,
        fronts: num(fields[1], "FRONTS", lower)?,
        chunk_pages: match fields.get(2) {
            Some(c) => num(c, "CHUNK_PAGES", lower)?,
            None => DEFAULT_ZNS_CHUNK_PAGES,
        },
    })
}

impl FromStr for WorkloadSpec {
    type Err = WorkloadError;

    /// Parses the forms in [`VALID_FORMS`] (case-insensitive; aliases `two-zones`, `readonly`,
    /// `seq`), then validates the parameters.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let mut parts = lower.splitn(2, ':');
        let name = parts.next().unwrap_or("").trim();
        let arg = parts.next();
        let no_arg = |spec: WorkloadSpec| match arg {
            None => Ok(spec),
            Some(a) => Err(parse_err(format!(
                "workload '{name}' takes no parameter, got ':{a}'"
            ))),
        };
        let need_arg = || {
            arg.ok_or_else(|| {
                parse_err(format!(
                    "workload '{name}' needs a parameter (expected {})",
                    form_of(&lower)
                ))
            })
        };
        let spec = match name {
            "uniform" => no_arg(WorkloadSpec::Uniform)?,
            "sequential" | "seq" => no_arg(WorkloadSpec::Sequential)?,
            "two-zone" | "two-zones" | "twozone" => {
                let a = need_arg()?;
                let (x, y) = a.split_once('/').ok_or_else(|| {
                    parse_err(format!(
                        "two-zone needs X/Y, got '{a}' (expected {})",
                        form_of(&lower)
                    ))
                })?;
                WorkloadSpec::TwoZone {
                    write_pct: num(x, "X", &lower)?,
                    space_pct: num(y, "Y", &lower)?,
                }
            }
            "zipf" => WorkloadSpec::Zipf {
                theta: num(need_arg()?, "theta", &lower)?,
            },
            "zipf-shift" => zipf_shift(need_arg()?, &lower)?,
            "read-only" | "readonly" => WorkloadSpec::ReadOnly {
                fraction: num(need_arg()?, "fraction", &lower)?,
            },
            "zns" => zns(need_arg()?, &lower)?,
            _ => {
                return Err(parse_err(format!(
                    "unknown workload '{}'; valid forms: {VALID_FORMS}",
                    s.trim()
                )))
            }
        };
        spec.validate()?;
        Ok(spec)
    }
}

impl TryFrom<String> for WorkloadSpec {
    type Error = WorkloadError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<WorkloadSpec> for String {
    fn from(s: WorkloadSpec) -> String {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Op;

    fn all_specs() -> Vec<WorkloadSpec> {
        [
            "uniform",
            "two-zone:90/10",
            "two-zone:95/5",
            "zipf:0.8",
            "zipf:1",
            "zipf-shift:0.9:0.5",
            "read-only:0.4",
            "sequential",
            "zns:64:1",
            "zns:64:4",
            "zns:64:4:16",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect()
    }

    #[test]
    fn parse_forms() {
        assert_eq!("uniform".parse(), Ok(WorkloadSpec::Uniform));
        assert_eq!(" Uniform ".parse(), Ok(WorkloadSpec::Uniform));
        assert_eq!("seq".parse(), Ok(WorkloadSpec::Sequential));
        assert_eq!(
            "two-zone:90/10".parse(),
            Ok(WorkloadSpec::TwoZone {
                write_pct: 90.0,
                space_pct: 10.0
            })
        );
        assert_eq!(
            "two-zones:70.5/29.5".parse(),
            Ok(WorkloadSpec::TwoZone {
                write_pct: 70.5,
                space_pct: 29.5
            })
        );
        assert_eq!("zipf:0.8".parse(), Ok(WorkloadSpec::Zipf { theta: 0.8 }));
        assert_eq!(
            "read-only:0.4".parse(),
            Ok(WorkloadSpec::ReadOnly { fraction: 0.4 })
        );
        assert_eq!(
            "zns:262144:4".parse(),
            Ok(WorkloadSpec::Zns {
                zone_pages: 262144,
                fronts: 4,
                chunk_pages: 1
            })
        );
        assert_eq!(
            "zns:262144:4:128".parse(),
            Ok(WorkloadSpec::Zns {
                zone_pages: 262144,
                fronts: 4,
                chunk_pages: 128
            })
        );
    }

    #[test]
    fn parse_errors_are_clear() {
        let err = |s: &str| s.parse::<WorkloadSpec>().unwrap_err().to_string();
        let e = err("zipfian:0.8");
        assert!(
            e.contains("unknown workload 'zipfian:0.8'") && e.contains("two-zone:X/Y"),
            "{e}"
        );
        assert!(err("zipf").contains("needs a parameter"));
        assert!(err("zipf:abc").contains("cannot parse theta 'abc'"));
        assert!(err("zipf:0").contains("theta must be"));
        assert!(err("zipf:-1").contains("theta must be"));
        assert!(err("two-zone:90").contains("two-zone needs X/Y"));
        assert!(err("two-zone:100/10").contains("0 < X < 100"));
        assert!(err("two-zone:90/0").contains("0 < Y < 100"));
        assert!(err("read-only:1").contains("[0, 1)"));
        assert!(err("uniform:3").contains("takes no parameter"));
        assert!(err("zns:64").contains("2 or 3 parameters"));
        assert!(err("zns:64:0").contains(">= 1"));
        assert!(err("zns:64:x").contains("cannot parse FRONTS"));
        for s in ["", "foo", "zipf:", "zns:1:2:3:4"] {
            let e = err(s);
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn display_roundtrips_and_serde_uses_strings() {
        use serde::de::value::{Error as DeError, StrDeserializer};
        use serde::de::IntoDeserializer;
        for spec in all_specs() {
            let s = spec.to_string();
            assert_eq!(s.parse::<WorkloadSpec>().as_ref(), Ok(&spec), "{s}");
            let de: StrDeserializer<DeError> = s.as_str().into_deserializer();
            assert_eq!(WorkloadSpec::deserialize(de).unwrap(), spec);
        }
        assert_eq!(
            WorkloadSpec::Zns {
                zone_pages: 8,
                fronts: 2,
                chunk_pages: 1
            }
            .to_string(),
            "zns:8:2"
        );
        let de: StrDeserializer<DeError> = "zipf:-3".into_deserializer();
        assert!(WorkloadSpec::deserialize(de).is_err());
    }

    #[test]
    fn build_checks_sizes() {
        let p = WorkloadParams::new(1000, 0.5, 1).unwrap();
        let zns: WorkloadSpec = "zns:501:1".parse().unwrap();
        assert_eq!(
            zns.build(&p).err(),
            Some(WorkloadError::ZoneTooLarge {
                zone_pages: 501,
                in_use: 500
            })
        );
        let bad_fill = WorkloadParams {
            logical_pages: 1000,
            fill: 1.5,
            seed: 1,
        };
        assert_eq!(
            WorkloadSpec::Uniform.build(&bad_fill).err(),
            Some(WorkloadError::BadFill(1.5))
        );
        // A spec constructed directly (not parsed) is still validated.
        assert!(WorkloadSpec::Zipf { theta: 0.0 }.build(&p).is_err());
    }

    #[test]
    fn determinism_and_seed_sensitivity() {
        let n = 10_000;
        let run = |spec: &WorkloadSpec, seed: u64| {
            let p = WorkloadParams::new(n, 0.9, seed).unwrap();
            let mut w = spec.build(&p).unwrap();
            let mut ops = Vec::new();
            w.fill_batch(&mut ops, 20_000);
            ops
        };
        for spec in all_specs() {
            let a = run(&spec, 42);
            assert_eq!(a, run(&spec, 42), "{spec}: same seed, different stream");
            let in_use = 9_000;
            for op in &a {
                match *op {
                    Op::Write(l) => assert!(l < in_use, "{spec}: {l}"),
                    Op::Trim { start, len } => assert!(start + len <= in_use, "{spec}"),
                }
            }
            if spec != WorkloadSpec::Sequential {
                assert_ne!(a, run(&spec, 43), "{spec}: seed ignored");
            }
        }
    }

    #[test]
    fn names() {
        let p = WorkloadParams::new(1 << 12, 1.0, 1).unwrap();
        let names: Vec<String> = all_specs()
            .iter()
            .map(|s| s.build(&p).unwrap().name())
            .collect();
        assert_eq!(names[0], "uniform");
        assert_eq!(names[1], "two-zone 90/10");
        assert_eq!(names[3], "zipf 0.8");
        assert_eq!(names[5], "zipf-shift 0.9 every 0.5x");
        assert_eq!(names[6], "read-only 0.4");
        assert_eq!(names[7], "sequential");
        assert_eq!(names[8], "zns 64p x1 front (chunk 1p)");
    }
}
