//! clap value parsers for the flags of every subcommand (the CLI's and the Python module's:
//! one parser, so a job file, a keyword argument and a flag are checked alike): `nowa-units` underneath, so a size, a
//! fraction, a count or a duration means the same everywhere (the README's "Numbers and
//! sizes"), and a bad value is refused while parsing, in one line naming the flag (clap adds
//! `for '--flag <FLAG>'` to the message).

use nowa_units as units;
use std::fmt::Display;
use std::str::FromStr;

/// The largest worker-thread count any subcommand accepts.
pub const MAX_THREADS: u64 = 1024;

/// A size in bytes within `[min, max]` (`4096`, `64KiB`, `1GB` = 10^9).
///
/// # Panics
/// If `min > max` (a flag's bounds are constants).
pub fn size(min: u64, max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync {
    assert!(min <= max);
    move |s| units::parse_size_in(s, min, max).map_err(|e| e.to_string())
}

/// A size within `[min, max]` that is a multiple of 4 KiB.
///
/// # Panics
/// If `min > max`.
pub fn size_4k(min: u64, max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync {
    assert!(min <= max);
    move |s| {
        let v = units::parse_size_in(s, min, max).map_err(|e| e.to_string())?;
        if v % 4096 != 0 {
            return Err(format!("'{s}' is not a multiple of 4 KiB"));
        }
        Ok(v)
    }
}

/// A fraction (`0.07` or `7%`) in `[lo, hi]`; `lo_open` / `hi_open` exclude the bound.
pub fn fraction(
    lo: f64,
    lo_open: bool,
    hi: f64,
    hi_open: bool,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |s| {
        let v = units::parse_fraction(s).map_err(|e| e.to_string())?;
        check_range(s, v, (lo, lo_open), (hi, hi_open))
    }
}

/// A plain finite number (no exponent, no nan, no inf) in `[lo, hi]`, `lo_open` excluding `lo`.
pub fn number(
    lo: f64,
    lo_open: bool,
    hi: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |s| {
        let v = units::parse_number_in(s, f64::MIN, f64::MAX).map_err(|e| e.to_string())?;
        check_range(s, v, (lo, lo_open), (hi, false))
    }
}

/// A duration (`30`, `30s`, `500ms`, `2m`, `1h`) in seconds, in `[min, max]` (`min > 0`).
///
/// # Panics
/// If the range is empty or starts at 0 or below.
pub fn seconds(min: f64, max: f64) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    assert!(min > 0.0 && min <= max, "a duration range starts above 0");
    move |s| {
        let v = units::parse_seconds(s).map_err(|e| e.to_string())?;
        check_range(s, v, (min, false), (max, false))
    }
}

fn check_range(s: &str, v: f64, lo: (f64, bool), hi: (f64, bool)) -> Result<f64, String> {
    assert!(lo.0 <= hi.0, "an empty range [{}, {}]", lo.0, hi.0);
    let below = if lo.1 { v <= lo.0 } else { v < lo.0 };
    let above = if hi.1 { v >= hi.0 } else { v > hi.0 };
    if below || above || !v.is_finite() {
        let l = if lo.1 { '(' } else { '[' };
        let h = if hi.1 { ')' } else { ']' };
        return Err(format!("'{s}' must be in {l}{}, {}{h}", lo.0, hi.0));
    }
    Ok(v)
}

/// A count (`5000000`, `5M`, `2.5k`) in `[min, max]`, as the flag's integer type.
///
/// # Panics
/// If `min > max`.
pub fn count<T>(min: u64, max: u64) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: TryFrom<u64>,
{
    assert!(min <= max);
    move |s| {
        let v = units::parse_count_in(s, min, max).map_err(|e| e.to_string())?;
        T::try_from(v).map_err(|_| format!("'{s}' does not fit this flag"))
    }
}

/// `on` / `off` (also `true` / `false`, `yes` / `no`).
///
/// # Errors
/// Any other word.
pub fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        o => Err(format!("expected on or off, got '{o}'")),
    }
}

/// Any type with a `FromStr` whose error says what was expected (policies, workloads, mixes).
pub fn parsed<T>() -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: FromStr,
    T::Err: Display,
{
    |s| s.parse::<T>().map_err(|e| e.to_string())
}

/// `--sim-timing`: how the simulated SSD is timed, one timing model for every command
/// (`nowa ssdiq`, `nowa ycsb`, `nowa table1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimTiming {
    /// One media server at the command's write and read bandwidths (the default).
    Bandwidth,
    /// FEMU's chips: 8 channels x 8 chips of 4 KiB pages, read 40 us, program 200 us.
    Femu,
    /// MQSim's chips: 8 channels x 8 chips of 4 KiB pages with MQSim's latencies.
    Mqsim,
}

impl SimTiming {
    /// The chips of a preset (None: the bandwidth model).
    #[must_use]
    pub fn chips(self) -> Option<nowa_device::timing::ChipParams> {
        use nowa_device::timing::ChipParams;
        match self {
            SimTiming::Bandwidth => None,
            SimTiming::Femu => Some(ChipParams::femu(8, 8, 4096)),
            SimTiming::Mqsim => Some(ChipParams::mqsim(8, 8, 4096)),
        }
    }
}

/// `--timing` of a vssd (`nowa vssd serve`, `nowa compare`): replies at memory speed, or
/// waiting for the one timing model over a chip preset.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum VssdTiming {
    /// No delay: replies as soon as the FTL model has run.
    #[default]
    None,
    /// FEMU's chips: 8 channels x 8 chips, read 40 us, program 200 us.
    Femu,
    /// MQSim's chips: 8 channels x 8 chips with MQSim's latencies.
    Mqsim,
}

impl VssdTiming {
    /// The timing model (None: no delay).
    #[must_use]
    pub fn model(self) -> Option<nowa_device::timing::TimingModel> {
        let chips = match self {
            VssdTiming::None => None,
            VssdTiming::Femu => SimTiming::Femu.chips(),
            VssdTiming::Mqsim => SimTiming::Mqsim.chips(),
        };
        chips.map(nowa_device::timing::TimingModel::with_chips)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_checked_with_open_ends() {
        let fill = fraction(0.0, true, 1.0, false);
        assert_eq!(fill("1"), Ok(1.0));
        assert_eq!(fill("50%"), Ok(0.5));
        assert!(fill("0").is_err());
        assert!(fill("7").unwrap_err().contains("did you mean 7%"));
        let vol = number(0.0, true, 1e4);
        assert_eq!(vol("2"), Ok(2.0));
        for bad in ["0", "1e300", "nan", "inf", "10001", "-1"] {
            assert!(vol(bad).is_err(), "{bad}");
        }
        let secs = seconds(0.001, 60.0);
        assert_eq!(secs("500ms"), Ok(0.5));
        assert!(secs("0").is_err() && secs("nan").is_err() && secs("2m").is_err());
        let c = count::<u32>(1, 1 << 40);
        assert!(c("5000000000").is_err(), "does not fit a u32");
        assert_eq!(c("5M"), Ok(5_000_000));
        assert!(size_4k(0, 1 << 30)("5000").is_err());
        assert_eq!(size(1, 1 << 40)("1GB"), Ok(1_000_000_000));
    }
}
