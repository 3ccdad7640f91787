//! The progress bar of the commands that count units of work (stderr; `-q`: none).

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use std::fmt::Write as _;

/// A bar of `total` units of `what`, with the rate, the time elapsed and the ETA; hidden when
/// `quiet`.
pub(crate) fn bar(total: u64, quiet: bool, what: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} {msg} [{bar:30}] {pos}/{len} ({per_sec}, {elapsed} elapsed) eta {eta}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}

/// A bar of `total` units of which `per` make one `unit` (a run, a row): it moves inside a
/// unit, and reads as units done with the current one's fraction ("3.4/102 runs"), units
/// per minute, the time elapsed and the ETA (not thousandths per second); hidden when `quiet`.
pub(crate) fn bar_of(
    total: u64,
    per: u64,
    quiet: bool,
    what: &str,
    unit: &'static str,
) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    let style = ProgressStyle::with_template(
        "{spinner} {msg} [{bar:30}] {done} ({rate}, {elapsed} elapsed) eta {eta}",
    )
    .map(|s| {
        s.progress_chars("=> ")
            .with_key(
                "done",
                move |st: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&done_text(st.pos(), st.len().unwrap_or(0), per, unit));
                },
            )
            .with_key(
                "rate",
                move |st: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&rate_text(st.per_sec(), per, unit));
                },
            )
    });
    if let Ok(style) = style {
        pb.set_style(style);
    }
    // After the style: setting the message draws the bar (in the shared style, it did).
    pb.set_message(what.to_string());
    pb
}

/// "3.4/102 runs": `pos` of `len` units, `per` to a `unit`.
#[expect(clippy::cast_precision_loss, reason = "unit counts far below 2^53")]
fn done_text(pos: u64, len: u64, per: u64, unit: &str) -> String {
    let per = per.max(1) as f64;
    let mut s = String::new();
    let _ = write!(s, "{:.1}/{:.0} {unit}", pos as f64 / per, len as f64 / per);
    s
}

/// "12.5 runs/min": a rate in units per second, `per` to a `unit`.
#[expect(clippy::cast_precision_loss, reason = "a rate for the eye")]
fn rate_text(units_per_sec: f64, per: u64, unit: &str) -> String {
    format!("{:.1} {unit}/min", units_per_sec * 60.0 / per.max(1) as f64)
}

/// A counter of `what` without a total (the rate and the time elapsed); hidden when `quiet`.
pub(crate) fn spinner(quiet: bool, what: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {pos} ({per_sec}, {elapsed})")
    {
        pb.set_style(style);
    }
    pb.set_message(what.to_string());
    pb
}

#[cfg(test)]
mod tests {
    use super::{done_text, rate_text};

    /// Thousandths of runs read as runs with the current one's fraction, and runs per minute
    /// (the bar showed "3400/102000 (8.3333/s)").
    #[test]
    fn units_read_as_runs_and_runs_per_minute() {
        assert_eq!(done_text(3_400, 102_000, 1000, "runs"), "3.4/102 runs");
        assert_eq!(done_text(0, 7_000, 1000, "rows"), "0.0/7 rows");
        assert_eq!(rate_text(1000.0 / 6.0, 1000, "runs"), "10.0 runs/min");
    }
}
