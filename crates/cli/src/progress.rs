//! The progress bar of the commands that count units of work (stderr; `-q`: none).

use indicatif::{ProgressBar, ProgressStyle};

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
