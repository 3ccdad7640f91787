//! The progress bar of the figure commands (`nowa frozen figures`, `nowa ckpt figures`,
//! `nowa reproduce`): rate and ETA, hidden with `--quiet`.

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar with rate and ETA (hidden with `quiet`).
pub fn bar(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(1);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} eta {eta} {wide_msg}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}
