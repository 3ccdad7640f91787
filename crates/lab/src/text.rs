//! The spec's values as a user writes them: option enums as the CLI's text (`"greedy"`,
//! `"zipf:0.9"`, `"gp:0.15"`, `"superblock"`), never a Rust encoding; sizes and fractions as
//! numbers or as the CLI's text (`"16GiB"`, `"10%"`). One parser each: the same `FromStr` (or
//! the same function) the flags use.

use nowa_flash::{GcFrontier, GcTrigger, GcUnit};
use serde::de::{self, Deserializer, Visitor};
use serde::Serializer;
use std::fmt;

/// A value with one text form that parses back to an equal value.
pub trait Text: Sized {
    /// The canonical text (what `--flag` takes).
    fn to_text(&self) -> String;
    /// Parses the text; the error says what was expected.
    ///
    /// # Errors
    /// Text that names no value.
    fn from_text(s: &str) -> Result<Self, String>;
}

macro_rules! text_by_display {
    ($($t:ty),*) => {$(
        impl Text for $t {
            fn to_text(&self) -> String {
                self.to_string()
            }
            fn from_text(s: &str) -> Result<Self, String> {
                s.trim().parse::<$t>().map_err(|e| e.to_string())
            }
        }
    )*};
}
text_by_display!(
    nowa_logspace::PolicyKind,
    nowa_workload::WorkloadSpec,
    nowa_trace::Format
);

/// An option enum's text is its clap value name (the flag's), and only that parses.
macro_rules! text_by_value_enum {
    ($($t:ty),*) => {$(
        impl Text for $t {
            fn to_text(&self) -> String {
                clap::ValueEnum::to_possible_value(self)
                    .expect("no variant of an option enum is skipped")
                    .get_name()
                    .to_owned()
            }
            fn from_text(s: &str) -> Result<Self, String> {
                <$t as clap::ValueEnum>::from_str(s.trim(), false).map_err(|_| {
                    let names: Vec<String> = <$t as clap::ValueEnum>::value_variants()
                        .iter()
                        .map(Text::to_text)
                        .collect();
                    format!("'{}' is not one of: {}", s.trim(), names.join(", "))
                })
            }
        }
    )*};
}
text_by_value_enum!(
    nowa_bench::sim::StreamAssign,
    nowa_bench::replay::VolumeMode
);

impl Text for nowa_logspace::PlacementKind {
    fn to_text(&self) -> String {
        self.to_string()
    }
    fn from_text(s: &str) -> Result<Self, String> {
        s.trim().parse::<Self>().map_err(|e| e.to_string())
    }
}

/// No placement scheme (host streams only) is written `"none"`, so the spec names it.
impl Text for Option<nowa_logspace::PlacementKind> {
    fn to_text(&self) -> String {
        self.as_ref()
            .map_or_else(|| "none".to_owned(), Text::to_text)
    }
    fn from_text(s: &str) -> Result<Self, String> {
        if s.trim() == "none" {
            return Ok(None);
        }
        Text::from_text(s).map(Some)
    }
}

impl Text for GcFrontier {
    fn to_text(&self) -> String {
        match self {
            GcFrontier::Shared => "shared",
            GcFrontier::Separate => "separate",
            _ => "per-stream",
        }
        .to_owned()
    }
    fn from_text(s: &str) -> Result<Self, String> {
        s.trim().parse::<Self>().map_err(|e| e.to_string())
    }
}

impl Text for GcUnit {
    fn to_text(&self) -> String {
        match self {
            GcUnit::Superblock => "superblock",
            _ => "block",
        }
        .to_owned()
    }
    fn from_text(s: &str) -> Result<Self, String> {
        match s.trim() {
            "superblock" => Ok(GcUnit::Superblock),
            "block" => Ok(GcUnit::Block),
            o => Err(format!(
                "unknown GC unit '{o}' (expected superblock or block)"
            )),
        }
    }
}

impl Text for GcTrigger {
    fn to_text(&self) -> String {
        match self {
            GcTrigger::GarbageProportion(t) => format!("gp:{t}"),
            _ => "free".to_owned(),
        }
    }
    fn from_text(s: &str) -> Result<Self, String> {
        match s.trim().split_once(':') {
            _ if s.trim() == "free" => Ok(GcTrigger::FreeUnits),
            _ if s.trim() == "gp" => Ok(GcTrigger::GarbageProportion(0.15)),
            Some(("gp", t)) => nowa_units::parse_fraction_in(t, 0.0, 1.0, true)
                .map_err(|e| e.to_string())
                .and_then(|t| {
                    (t > 0.0)
                        .then_some(GcTrigger::GarbageProportion(t))
                        .ok_or_else(|| format!("'{s}': the threshold must be > 0"))
                }),
            _ => Err(format!(
                "'{s}' is not a GC trigger (expected free, gp or gp:THETA)"
            )),
        }
    }
}

/// A clap value parser from [`Text`]: the flag and the spec share the parser.
pub fn parser<T: Text>() -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync {
    |s| T::from_text(s)
}

/// `#[serde(with = "as_text")]`: a [`Text`] value as a string.
pub mod as_text {
    use super::{de, Deserializer, Serializer, Text};
    use serde::Deserialize;

    /// Serializes the canonical text.
    ///
    /// # Errors
    /// The serializer's.
    pub fn serialize<T: Text, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_text())
    }

    /// Parses the text.
    ///
    /// # Errors
    /// Not a string, or a string that names no value.
    pub fn deserialize<'de, T: Text, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let s = String::deserialize(d)?;
        T::from_text(&s).map_err(de::Error::custom)
    }
}

/// A number given as a number or as the CLI's text, parsed by `parse`.
struct NumberOrText<T> {
    expecting: &'static str,
    parse: fn(&str) -> Result<T, String>,
    from_u64: fn(u64) -> Option<T>,
    from_f64: fn(f64) -> Option<T>,
}

impl<T> Visitor<'_> for NumberOrText<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        (self.from_u64)(v).ok_or_else(|| E::custom(format!("{v} is not {}", self.expecting)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        let u = u64::try_from(v)
            .map_err(|_| E::custom(format!("{v} is negative: expected {}", self.expecting)))?;
        self.visit_u64(u)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        (self.from_f64)(v).ok_or_else(|| E::custom(format!("{v} is not {}", self.expecting)))
    }
}

/// `#[serde(with = "size")]`: bytes, as an integer or a size (`"16GiB"`, `"4k"`); written as
/// an integer.
pub mod size {
    use super::{Deserializer, NumberOrText, Serializer};

    /// Serializes the bytes.
    ///
    /// # Errors
    /// The serializer's.
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(*v)
    }

    /// Parses bytes or a size.
    ///
    /// # Errors
    /// Neither an integer nor a size.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(NumberOrText {
            expecting: "a size in bytes (4096, \"64KiB\", \"16GiB\")",
            parse: |s| nowa_units::parse_size(s).map_err(|e| e.to_string()),
            from_u64: Some,
            from_f64: |_| None,
        })
    }
}

/// `#[serde(with = "fraction")]`: a number, or a fraction's text (`"7%"`); written as a number.
pub mod fraction {
    use super::{Deserializer, NumberOrText, Serializer};

    /// Serializes the number.
    ///
    /// # Errors
    /// The serializer's.
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(*v)
    }

    /// Parses a number or a fraction's text.
    ///
    /// # Errors
    /// Neither a number nor a fraction.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        d.deserialize_any(NumberOrText {
            expecting: "a number or a fraction (0.07, \"7%\")",
            parse: |s| nowa_units::parse_fraction(s).map_err(|e| e.to_string()),
            #[expect(
                clippy::cast_precision_loss,
                reason = "a fraction written as an integer is 0 or 1"
            )]
            from_u64: |v| Some(v as f64),
            from_f64: Some,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_text_parses_back_to_the_same_value() {
        for t in ["free", "gp:0.15", "gp:0.3"] {
            let v = GcTrigger::from_text(t).expect("parses");
            assert_eq!(v.to_text(), t);
        }
        for t in ["superblock", "block"] {
            assert_eq!(GcUnit::from_text(t).expect("parses").to_text(), t);
        }
        for t in ["shared", "separate", "per-stream"] {
            assert_eq!(GcFrontier::from_text(t).expect("parses").to_text(), t);
        }
        for t in ["none", "dac:6", "sepbit:4", "midas"] {
            let v = <Option<nowa_logspace::PlacementKind>>::from_text(t).expect("parses");
            assert_eq!(v.to_text(), t);
        }
        assert!(GcUnit::from_text("Superblock").is_err(), "no Rust spelling");
        assert!(GcTrigger::from_text("gp:0").is_err());
    }
}
