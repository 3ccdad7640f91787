//! nowa-lab: experiments as typed specs, between the faces (the `nowa` CLI, the Python
//! module) and the crates that do the work (nowa-bench's drivers and below).
//!
//! Each command is a spec (serde, unknown keys refused, every default and every auto-sized
//! value resolved before the run) and a `run(spec, progress, cancel)` returning its result
//! under an [`Identity`]. A [`Job`] is a command and its spec: what a job file holds and what
//! a result's `nowa` object names, so `nowa run RESULT.json` runs that run again.

pub mod capture;
pub mod ckpt;
pub mod compare;
pub mod devices;
pub mod engine;
pub mod engine_flags;
pub mod flags;
pub mod frozen;
pub mod gcunit;
mod identity;
mod job;
pub mod placement;
pub mod plan;
pub mod reproduce;
pub mod resources;
pub mod sim;
pub mod ssdiq;
pub mod table1;
pub mod text;
pub mod tpcc;
pub mod trace;
pub mod ycsb;

pub use identity::{is_machine_key, source_dirty, Identity, MACHINE_KEYS, MACHINE_SUFFIXES};
pub use job::{load_job, parse_job, Job, JobOutcome};

use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Progress callback: `(done, total)` in the driver's units of work.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// A result under its run's identity: `{"nowa": {...}, ...result}` in JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Report<R> {
    /// Which run this is.
    pub nowa: Identity,
    /// What it measured.
    #[serde(flatten)]
    pub result: R,
}

/// Ctrl-C: the process-wide stop flag every driver polls between units of work (a stopped
/// run returns what it measured so far).
#[derive(Debug, Clone, Copy, Default)]
pub struct Cancel;

impl Cancel {
    /// Asks the running drivers to stop.
    pub fn request(self) {
        nowa_bench::interrupt::request();
    }
    /// True once a stop was asked.
    #[must_use]
    pub fn requested(self) -> bool {
        nowa_bench::interrupt::requested()
    }
    /// Forgets a stop asked earlier, before the next run (the Python module, where one
    /// interpreter runs many).
    pub fn clear(self) {
        nowa_bench::interrupt::STOP.store(false, std::sync::atomic::Ordering::Relaxed);
    }
    /// Stops the drivers on Ctrl-C (SIGINT); a second Ctrl-C kills the process.
    pub fn on_sigint(self) {
        nowa_bench::interrupt::install_sigint_handler();
    }
}

/// The errors of an experiment.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Bad input (a flag, a spec's field, a job file): one line naming it. Exit code 2 in
    /// the CLI, `ValueError` in Python.
    #[error("{0}")]
    Usage(String),
    /// A failure while running.
    #[error("{what}: {source}")]
    Failed {
        /// What failed.
        what: &'static str,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file the run writes.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    fn failed(what: &'static str, e: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Failed {
            what,
            source: Box::new(e),
        }
    }
    fn io(path: &Path, e: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Io {
            path: path.to_owned(),
            source: Box::new(e),
        }
    }
    /// Whether the user's input caused it.
    #[must_use]
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Usage(_))
    }
}

/// A CSV file whose first line is the run's identity (`# nowa {...}`).
///
/// # Errors
/// The file cannot be created or written.
pub fn csv_file(path: &Path, id: &Identity) -> Result<std::io::BufWriter<std::fs::File>, Error> {
    let f = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    let mut w = std::io::BufWriter::new(f);
    w.write_all(id.csv_comment().as_bytes())
        .map_err(|e| Error::io(path, e))?;
    Ok(w)
}

/// clap's message on one line: the error and its details (argument names, "did you mean"
/// tips), without the usage block and the `error: ` prefix (the CLI's, a job file's flags and
/// a Python keyword argument's: one rendering).
///
/// # Panics
/// Never: the lines are joined with no newline.
#[must_use]
pub fn clap_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut out = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !out.is_empty() {
            out.push_str(if out.ends_with(':') { " " } else { "; " });
        }
        out.push_str(line.trim_start_matches("error: "));
    }
    assert!(!out.contains('\n'), "one line");
    out
}

/// `args` (without the command name) parsed by the clap command `P` (built with
/// `no_binary_name`), as the CLI parses them: the one parse of `sim`, `ycsb` and `tpcc`'s
/// flags for job files and the Python module.
pub(crate) fn parse_args<P: clap::Parser, S: AsRef<str>>(args: &[S]) -> Result<P, Error> {
    P::try_parse_from(args.iter().map(|a| a.as_ref().to_owned()))
        .map_err(|e| Error::Usage(clap_line(&e)))
}

/// A spec's integer fields against their flags' ranges, `(field, value, lo, hi)` inclusive:
/// the first one outside is a usage error naming the field (as a job file's bad value is).
pub(crate) fn check_ranges(ranges: &[(&str, u64, u64, u64)]) -> Result<(), Error> {
    match ranges.iter().find(|(_, v, lo, hi)| !(lo..=hi).contains(&v)) {
        Some((field, v, lo, hi)) => {
            Err(Error::Usage(format!("{field}: {v} is not in [{lo}, {hi}]")))
        }
        None => Ok(()),
    }
}

/// A size in bytes that must be whole 4 KiB blocks (a device capacity).
pub(crate) fn check_blocks(field: &str, bytes: u64) -> Result<(), Error> {
    if bytes % 4096 == 0 {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "{field}: {bytes} is not a multiple of 4 KiB"
    )))
}

/// The reasons that hold, joined (`None` when none does): why a run may write other bytes
/// than the one it repeats.
pub(crate) fn named_reasons(reasons: &[(bool, &str)]) -> Option<String> {
    let why: Vec<&str> = reasons
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, w)| *w)
        .collect();
    (!why.is_empty()).then(|| why.join(", "))
}
