//! Small shared primitives every nowa crate may use (no dependencies on other nowa crates):
//!
//! - the one way nowa reads sizes, counts, fractions and plain numbers (this page);
//! - [`waf`]: the one write-amplification formula (and what the WAF of nothing is);
//! - [`splitmix64`] / [`mix64`]: the one seed mixer and integer hash;
//! - [`cpu`]: the one CPU clock (process and thread CPU seconds);
//! - [`latency`]: the one latency summary (histogram of ns -> mean and percentiles in us).
//!
//! Every subcommand and config file goes through these parsers, so `1GB` means the same thing
//! everywhere:
//!
//! | written | means |
//! |---|---|
//! | `4096`, `4096B` | bytes |
//! | `4k`, `4K`, `4KiB` | 4 x 1024 (binary: `K M G T P`, with or without `iB`, as fio and dd read them) |
//! | `4KB`, `4MB`, `1GB` | 4 x 1000, 4 x 1000^2, 10^9 (decimal: the `B` after the letter makes it SI, as nvme-cli and fio's `kb_base=1000`) |
//! | `7%`, `0.07` | the fraction 0.07 (a ratio flag refuses values above 1 with a hint) |
//! | `1M`, `2.5k` (counts) | 10^6, 2500 (counts are decimal: `k M G`) |
//!
//! Parsers return [`UnitError`], whose message names the value and says what was expected; the
//! CLI prefixes it with the flag (clap does that for `value_parser`s).

pub mod cpu;
pub mod latency;
pub mod num;

use std::fmt;

/// Why a value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnitError {
    /// The text is not a number with a known suffix.
    #[error("'{text}' is not a {what} (examples: {examples})")]
    Syntax {
        /// The text given.
        text: String,
        /// What was expected ("size", "fraction", ...).
        what: &'static str,
        /// Valid examples.
        examples: &'static str,
    },
    /// A number outside the accepted range.
    #[error("'{text}' is out of range: {why}")]
    Range {
        /// The text given.
        text: String,
        /// The range and, where useful, a hint.
        why: String,
    },
}

fn syntax(text: &str, what: &'static str, examples: &'static str) -> UnitError {
    UnitError::Syntax {
        text: text.to_owned(),
        what,
        examples,
    }
}

fn range(text: &str, why: impl Into<String>) -> UnitError {
    UnitError::Range {
        text: text.to_owned(),
        why: why.into(),
    }
}

const SIZE_EXAMPLES: &str = "4096, 4k, 64MiB, 8GiB, 1GB = 10^9";

/// Splits "12.5MiB" into ("12.5", "MiB").
fn split_number(t: &str) -> (&str, &str) {
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    t.split_at(end)
}

/// Parses a finite, non-negative decimal number ("12", "12.5", "1_000"); no exponents, no signs.
fn parse_plain(num: &str) -> Option<f64> {
    if !num
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == '_')
    {
        return None;
    }
    let cleaned: String = num.chars().filter(|&c| c != '_').collect();
    if !cleaned.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let v: f64 = cleaned.parse().ok()?;
    v.is_finite().then_some(v)
}

/// Multiplier of a size suffix: binary for `K`, `KiB`; decimal for `KB`.
fn size_multiplier(unit: &str) -> Option<f64> {
    let u = unit.trim();
    if u.is_empty() || u == "B" || u == "b" {
        return Some(1.0);
    }
    let (letter, rest) = u.split_at(u.chars().next()?.len_utf8());
    let exp = match letter.to_ascii_uppercase().as_str() {
        "K" => 1,
        "M" => 2,
        "G" => 3,
        "T" => 4,
        "P" => 5,
        _ => return None,
    };
    let base: f64 = match rest {
        "" | "iB" | "ib" | "IB" | "i" => 1024.0,
        "B" => 1000.0,
        _ => return None,
    };
    Some(base.powi(exp))
}

/// Parses a size in bytes. See the crate docs for the suffixes. Fractions of a byte round to
/// the nearest byte. Zero is allowed (callers that need a positive size use [`parse_size_min`]).
///
/// # Errors
/// [`UnitError::Syntax`] for anything but a number with a known suffix;
/// [`UnitError::Range`] above 2^64 - 1 bytes.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let (num, unit) = split_number(t);
    let v = parse_plain(num).ok_or_else(|| syntax(text, "size", SIZE_EXAMPLES))?;
    let mult = size_multiplier(unit).ok_or_else(|| syntax(text, "size", SIZE_EXAMPLES))?;
    let bytes = (v * mult).round();
    // 2^64 as f64 is exact; anything at or above it does not fit.
    if bytes >= 18_446_744_073_709_551_616.0 {
        return Err(range(text, "above 16 EiB"));
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "bytes is finite, rounded, >= 0 and < 2^64 (checked above)"
    )]
    Ok(bytes as u64)
}

/// [`parse_size`], then checks `min <= size <= max`.
///
/// # Errors
/// As [`parse_size`], and [`UnitError::Range`] outside the bounds.
pub fn parse_size_in(text: &str, min: u64, max: u64) -> Result<u64, UnitError> {
    let v = parse_size(text)?;
    if v < min || v > max {
        return Err(range(
            text,
            format!("must be between {} and {}", Bytes(min), Bytes(max)),
        ));
    }
    Ok(v)
}

/// [`parse_size`], at least `min` bytes.
///
/// # Errors
/// As [`parse_size_in`].
pub fn parse_size_min(text: &str, min: u64) -> Result<u64, UnitError> {
    parse_size_in(text, min, u64::MAX)
}

/// Parses a fraction in `[0, 1]`: "0.07" or "7%". A value above 1 is refused with a hint
/// ("did you mean 7%?"), because `--op 7` meaning 700% has surprised users before.
///
/// # Errors
/// [`UnitError::Syntax`] for non-numbers (including nan and inf), [`UnitError::Range`]
/// outside `[0, 1]`.
pub fn parse_fraction(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let (body, pct) = match t.strip_suffix('%') {
        Some(b) => (b.trim(), true),
        None => (t, false),
    };
    let v = parse_plain(body).ok_or_else(|| syntax(text, "fraction", "0.07, 7%"))?;
    let v = if pct { v / 100.0 } else { v };
    if v > 1.0 {
        let hint = if pct {
            "a fraction is at most 100%".to_owned()
        } else {
            format!("a fraction is at most 1; did you mean {t}%?")
        };
        return Err(range(text, hint));
    }
    Ok(v)
}

/// [`parse_fraction`] with bounds (`lo <= v <= hi`, or `lo <= v < hi` when `hi_open`).
///
/// # Errors
/// As [`parse_fraction`], and [`UnitError::Range`] outside the bounds.
pub fn parse_fraction_in(text: &str, lo: f64, hi: f64, hi_open: bool) -> Result<f64, UnitError> {
    let v = parse_fraction(text)?;
    let above = if hi_open { v >= hi } else { v > hi };
    if v < lo || above {
        let close = if hi_open { ')' } else { ']' };
        return Err(range(text, format!("must be in [{lo}, {hi}{close}")));
    }
    Ok(v)
}

/// Parses a count: a whole number with an optional decimal suffix `k`, `M`, `G` (10^3, 10^6,
/// 10^9), e.g. "5000000", "5M", "2.5k".
///
/// # Errors
/// [`UnitError::Syntax`] for anything else or a count that is not whole;
/// [`UnitError::Range`] above 2^63.
pub fn parse_count(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let (num, unit) = split_number(t);
    let v = parse_plain(num).ok_or_else(|| syntax(text, "count", "1000, 5M, 2.5k"))?;
    let mult = match unit {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" | "m" => 1e6,
        "G" | "g" => 1e9,
        _ => return Err(syntax(text, "count", "1000, 5M, 2.5k")),
    };
    let n = v * mult;
    if n.fract() != 0.0 {
        return Err(range(text, "a count must be a whole number"));
    }
    if n > 9_223_372_036_854_775_808.0 {
        return Err(range(text, "above 2^63"));
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "n is whole, finite, >= 0 and <= 2^63 (checked above)"
    )]
    Ok(n as u64)
}

/// [`parse_count`] with bounds.
///
/// # Errors
/// As [`parse_count`], and [`UnitError::Range`] outside `[min, max]`.
pub fn parse_count_in(text: &str, min: u64, max: u64) -> Result<u64, UnitError> {
    let v = parse_count(text)?;
    if v < min || v > max {
        return Err(range(text, format!("must be between {min} and {max}")));
    }
    Ok(v)
}

/// Parses a finite number in `[min, max]` ("2", "0.5"; no nan, no inf, no exponent).
///
/// # Errors
/// [`UnitError::Syntax`] for non-numbers, [`UnitError::Range`] outside the bounds.
pub fn parse_number_in(text: &str, min: f64, max: f64) -> Result<f64, UnitError> {
    let t = text.trim();
    let v = parse_plain(t).ok_or_else(|| {
        let what = if t.parse::<f64>().is_ok_and(f64::is_finite) {
            "plain number (scientific notation is not read)"
        } else {
            "number"
        };
        syntax(text, what, "2, 0.5, 1000")
    })?;
    if v < min || v > max {
        return Err(range(text, format!("must be between {min} and {max}")));
    }
    Ok(v)
}

/// Parses a duration in seconds: "30", "30s", "1.5s", "500ms", "2m", "1h".
///
/// # Errors
/// [`UnitError::Syntax`] for anything else (including nan and inf).
pub fn parse_seconds(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let (num, unit) = split_number(t);
    let v = parse_plain(num).ok_or_else(|| syntax(text, "duration", "30, 30s, 500ms, 2m, 1h"))?;
    let mult = match unit {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(syntax(text, "duration", "30, 30s, 500ms, 2m, 1h")),
    };
    Ok(v * mult)
}

/// Write amplification: bytes written below a layer per byte asked of it. `None` when nothing
/// was asked (`requested == 0`): the WAF of nothing is unknown, not 1. Every WAF nowa prints
/// (DB, SSD, total) goes through this function.
#[must_use]
pub fn waf(written: u64, requested: u64) -> Option<f64> {
    if requested == 0 {
        return None;
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "a ratio: 52 bits of mantissa are far more than any WAF needs"
    )]
    Some(written as f64 / requested as f64)
}

/// One SplitMix64 step: advances `state` and returns the next well-mixed value. The seed
/// mixer behind every derived seed and hand-rolled stream in nowa.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mix64(*state)
}

/// SplitMix64's finalizer: a bijective, avalanching hash of a `u64`.
#[inline]
#[must_use]
pub fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// [`mix64`] as a `Hasher` for integer keys (page numbers, LBAs): std's SipHash costs more than
/// the FTL write behind each lookup. A key written once hashes to `mix64(key)`.
#[derive(Debug, Default, Clone, Copy)]
pub struct MixHasher(u64);

impl std::hash::Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ u64::from(b));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = mix64(self.0 ^ u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = mix64(self.0 ^ v);
    }
}

/// The `BuildHasher` of [`MixHasher`] for `HashMap<K, V, Mix>`.
pub type Mix = std::hash::BuildHasherDefault<MixHasher>;

/// Bytes printed with a binary unit ("64 MiB", "1.50 KiB"); the inverse of [`parse_size`] for
/// round values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
        let mut i = 0;
        let mut whole = self.0;
        while whole >= 1024 && i + 1 < UNITS.len() {
            whole /= 1024;
            i += 1;
        }
        #[expect(
            clippy::cast_precision_loss,
            reason = "display only: two decimals are shown"
        )]
        let v = self.0 as f64 / 1024f64.powi(i32::try_from(i).unwrap_or(0));
        if i == 0 || v.fract() == 0.0 {
            write!(f, "{v:.0} {}", UNITS[i])
        } else {
            write!(f, "{v:.2} {}", UNITS[i])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_binary_and_decimal() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4096B"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4KB"), Ok(4000));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("8G"), Ok(8 << 30));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size(" 2TiB "), Ok(2 << 40));
        assert_eq!(parse_size("1_000"), Ok(1000));
        assert_eq!(parse_size("0"), Ok(0));
    }

    #[test]
    fn sizes_refused() {
        for bad in [
            "",
            "x",
            "12x",
            "-1",
            "nan",
            "inf",
            "1e9",
            "GiB",
            ".",
            "4 k b",
            "1000000000EiB",
            "4kB5",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} accepted");
        }
        assert!(matches!(
            parse_size("1000000TiB"),
            Ok(v) if v == 1_000_000u64 << 40
        ));
        assert!(matches!(
            parse_size("100000000PiB"),
            Err(UnitError::Range { .. })
        ));
        assert!(parse_size_min("0", 1).is_err());
        assert!(parse_size_in("2GiB", 0, 1 << 30).is_err());
    }

    #[test]
    fn fractions() {
        assert_eq!(parse_fraction("0.07"), Ok(0.07));
        assert!((parse_fraction("7%").unwrap_or(0.0) - 0.07).abs() < 1e-12);
        assert_eq!(parse_fraction("1"), Ok(1.0));
        assert_eq!(parse_fraction("0"), Ok(0.0));
        let e = parse_fraction("7").unwrap_err().to_string();
        assert!(e.contains("did you mean 7%"), "{e}");
        for bad in ["nan", "inf", "-0.1", "101%", "", "%", "7%%"] {
            assert!(parse_fraction(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_fraction_in("1", 0.0, 1.0, true).is_err());
        assert!(parse_fraction_in("0.99", 0.0, 1.0, true).is_ok());
    }

    #[test]
    fn counts_numbers_durations() {
        assert_eq!(parse_count("5M"), Ok(5_000_000));
        assert_eq!(parse_count("2.5k"), Ok(2500));
        assert_eq!(parse_count("1000"), Ok(1000));
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("1e6").is_err());
        assert!(parse_count_in("0", 1, 10).is_err());
        assert_eq!(parse_number_in("0.5", 0.0, 1.0), Ok(0.5));
        assert!(parse_number_in("nan", 0.0, 1.0).is_err());
        assert!(parse_number_in("inf", 0.0, f64::MAX).is_err());
        assert!(parse_number_in("1e300", 0.0, f64::MAX).is_err());
        assert_eq!(parse_seconds("30"), Ok(30.0));
        assert_eq!(parse_seconds("500ms"), Ok(0.5));
        assert_eq!(parse_seconds("2m"), Ok(120.0));
        assert!(parse_seconds("nan").is_err());
    }

    #[test]
    fn waf_and_mixer() {
        assert_eq!(waf(0, 0), None);
        assert_eq!(waf(5, 0), None);
        assert_eq!(waf(3, 2), Some(1.5));
        let mut s = 42;
        let (a, b) = (splitmix64(&mut s), splitmix64(&mut s));
        assert_ne!(a, b);
        // Reference values of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        let mut z = 0;
        assert_eq!(splitmix64(&mut z), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut z), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn display() {
        assert_eq!(Bytes(64 << 20).to_string(), "64 MiB");
        assert_eq!(Bytes(4096).to_string(), "4 KiB");
        assert_eq!(Bytes(1536).to_string(), "1.50 KiB");
        assert_eq!(Bytes(17).to_string(), "17 B");
    }

    proptest::proptest! {
        #[test]
        fn binary_sizes_round_trip(n in 0u64..1 << 40, e in 0usize..4) {
            let suffix = ["", "KiB", "MiB", "GiB"][e];
            let mult = 1u64 << (10 * e);
            if let Some(bytes) = n.checked_mul(mult) {
                proptest::prop_assert_eq!(parse_size(&format!("{n}{suffix}")), Ok(bytes));
            }
        }

        #[test]
        fn never_panics(s in "\\PC{0,12}") {
            let _ = parse_size(&s);
            let _ = parse_fraction(&s);
            let _ = parse_count(&s);
            let _ = parse_seconds(&s);
        }
    }
}
