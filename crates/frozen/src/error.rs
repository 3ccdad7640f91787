//! The crate's error type.

use std::path::{Path, PathBuf};

/// Why a write log, a model or a training run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrozenError {
    /// A SepFrozen scheme with the model oracle needs a model.
    #[error("SepFrozen with a model needs --model FILE (or use -truth or -online)")]
    NeedsModel,
    /// The placement simulator refused during a replay.
    #[error("replay with {scheme}: {source}")]
    Replay {
        /// The scheme.
        scheme: String,
        /// The FTL model's error.
        source: nowa_flash::FlashError,
    },
    /// Opening or creating a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Reading failed.
    #[error("reading the write log: {0}")]
    Read(std::io::Error),
    /// Writing failed.
    #[error("writing: {0}")]
    Write(std::io::Error),
    /// The output exists and overwriting was not asked for.
    #[error("{path} exists (use --force to overwrite it)")]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The log ends early (the writer did not finish, or the file was cut).
    #[error("the write log is truncated after {records} records (no trailer: the writer did not finish)")]
    Truncated {
        /// Records read before the end.
        records: u64,
    },
    /// A checksum, magic or count does not match.
    #[error("the write log is damaged: bad {what} near record {record} (block {block})")]
    Corrupt {
        /// What did not match.
        what: &'static str,
        /// Records read before it.
        record: u64,
        /// Blocks read before it.
        block: u64,
    },
    /// An unsupported format version.
    #[error("write log version {found} is not supported (this build reads version {supported})")]
    Version {
        /// Version in the file.
        found: u16,
        /// Version this build reads.
        supported: u16,
    },
    /// A record field holds an impossible value.
    #[error("write log record {index}: bad {field} {value}")]
    BadRecord {
        /// Record index in the file.
        index: u64,
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// A record's timer is below the previous one's.
    #[error("write log record {index}: timer {timer} is below the previous record's {previous}")]
    OutOfOrder {
        /// Record index.
        index: u64,
        /// Its timer.
        timer: u64,
        /// The previous record's timer.
        previous: u64,
    },
    /// A model with the age input asked to learn from user writes only (their age is 0).
    #[error("the age (ag) is 0 at every user write: train a model with ag on --samples gc or all")]
    AgeNeedsGcSamples,
    /// Training needs samples of both labels.
    #[error("training needs frozen and non-frozen samples: {positives} frozen of {samples}")]
    OneClass {
        /// Frozen samples.
        positives: u64,
        /// All samples.
        samples: u64,
    },
    /// Too few samples to split into a training and a test set.
    #[error("{samples} samples are too few to train and test (need at least {needed})")]
    TooFewSamples {
        /// Samples available.
        samples: u64,
        /// Samples needed.
        needed: u64,
    },
    /// SGD weights or intercept became infinite or NaN.
    #[error("SGD diverged (non-finite weights) at epoch {epoch}: scale the features")]
    Diverged {
        /// The epoch (1-based).
        epoch: u32,
    },
    /// A classifier crate refused the data.
    #[error("{classifier} training failed: {source}")]
    Classifier {
        /// Which classifier.
        classifier: &'static str,
        /// The crate's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A model file is not valid JSON of a model, or is inconsistent.
    #[error("model: {0}")]
    ModelJson(#[from] serde_json::Error),
    /// A model's parts do not fit together.
    #[error("model is inconsistent: {what} (expected {expected}, found {found})")]
    BadModel {
        /// What is wrong.
        what: &'static str,
        /// The expected value.
        expected: u64,
        /// The value found.
        found: u64,
    },
}

impl FrozenError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
