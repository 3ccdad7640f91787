//! The learning half of SepFrozen (Tan et al., docs/sepfrozen.md): recognizing *frozen*
//! pages (written often for a while, then never again but still valid) from per-page
//! hotness records, so that DB GC can move them to a frozen zone.
//!
//! Independent of the engine; it uses these contracts:
//!
//! - [`hotness`]: [`HotnessRecord`] (16 bytes encoded), [`PageHotness`] (HR_current +
//!   HR_last, the 32 header bytes) and the per-buffer-frame [`HotnessTracker`];
//! - [`writelog`]: the write log (`--record-writes FILE`): [`WriteRecord`], [`LogWriter`],
//!   [`LogReader`] (block checksums, trailer);
//! - [`label`]: frozen labels and next-invalidation times from the log's future
//!   (FK oracles, FAR);
//! - [`features`], [`dataset`], [`train`]: samples, the seeded split, z-score
//!   standardization, and training ([`sgd`]: scikit-learn's `SGDClassifier(loss="log_loss")`
//!   operation for operation; [`classifiers`]: linfa's logistic regression and decision tree);
//! - [`model`]: the [`Model`] (JSON) with batched, allocation-free inference;
//! - [`online`]: retraining during a run from observed outcomes;
//! - [`synth`]: a synthetic log generator;
//! - [`oracle`], [`replay`]: SepFrozen's frozen-page oracles and the replay of a write log
//!   through the placement simulator (`nowa-flash`) with every scheme.

pub mod classifiers;
pub mod dataset;
pub mod error;
pub mod features;
/// Hotness records and the per-frame tracker (the plain types live in `nowa-logspace`, the
/// lowest crate the engine and this crate share, so the engine keeps them in its pages).
pub mod hotness {
    pub use nowa_logspace::hotness::*;
}
pub mod label;
pub mod metrics;
pub mod model;
pub mod online;
pub mod oracle;
pub mod replay;
pub mod sgd;
pub mod synth;
pub mod train;
pub mod writelog;

pub use dataset::{Dataset, FeatureStats, SampleKinds, SampleSpec};
pub use error::FrozenError;
pub use features::{Encoding, Feature, FeatureSet, HrWindow, Standardization, Twl, MAX_TWL};
pub use hotness::{
    HotnessRecord, HotnessTracker, IntervalCode, PageHotness, HR_BYTES, PAGE_HR_BYTES,
};
pub use label::{LabelCounts, Labels, NEVER};
pub use metrics::{Confusion, Metrics, Pearson};
pub use model::{valid_threshold, ClassifierKind, Model, Params, DEFAULT_THRESHOLD};
pub use online::{OnlineConfig, OnlineMode, OnlineTrainer, OutcomeTracker};
pub use sgd::SgdParams;
pub use synth::{Synth, SynthConfig};
pub use train::{train, TrainConfig, TREE_SAMPLE_CAP};
pub use writelog::{LogReader, LogSummary, LogWriter, WriteKind, WriteRecord, NO_CLASS, NO_ZONE};

use std::io::{ErrorKind, Write};
use std::path::Path;

/// Opens a new file at `path` for writing (truncating an existing one only if `force`).
///
/// # Errors
/// [`FrozenError::Exists`], I/O errors.
pub(crate) fn open_new(path: &Path, force: bool) -> Result<std::fs::File, FrozenError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    if force {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    opts.open(path).map_err(|e| {
        if e.kind() == ErrorKind::AlreadyExists {
            FrozenError::Exists {
                path: path.to_path_buf(),
            }
        } else {
            FrozenError::io(path, e)
        }
    })
}

/// Writes `bytes` to a new file at `path` (replacing an existing one only if `force`).
///
/// # Errors
/// [`FrozenError::Exists`], I/O errors.
pub(crate) fn write_new_file(path: &Path, force: bool, bytes: &[u8]) -> Result<(), FrozenError> {
    let mut f = open_new(path, force)?;
    f.write_all(bytes).map_err(|e| FrozenError::io(path, e))?;
    f.sync_all().map_err(|e| FrozenError::io(path, e))
}
