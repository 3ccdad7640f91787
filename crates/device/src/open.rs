//! The one way nowa opens a path for writing: [`check_target`] decides, [`open_target`] opens.
//! Every command that writes to a file or block device (`ycsb`, `infer-gc-unit`, `ssdiq`, and
//! every later one) goes through here. The rules:
//!
//! 1. A path that does not exist becomes a new regular file, if the caller gives a size and
//!    the path is not directly in `/dev` (a mistyped device name must not create a file there).
//! 2. An existing target that is mounted, partitioned, carries a file-system / partition /
//!    volume signature, is swap, is held by stacked devices, backs a loop device or is the
//!    system disk is refused unless `--force` names that same target ([`crate::safety_check`]).
//! 3. An existing target that is not a nowa target of the kind the command expects (the
//!    caller's recognizer, [`Expect`], reads its first blocks) is refused unless forced: it may
//!    hold anybody's data.
//! 4. The target is opened with the exclusive lock ([`crate::FileDevice::open`]): a second
//!    open, by this or another process, fails with [`DeviceError::Busy`] naming the holder.
//! 5. The destructive steps the command will run are announced (one line each) once every
//!    check passed and the lock is held, before anything is created or written.

use crate::error::DeviceError;
use crate::file::{in_dev, FileDevice, FileOptions, TargetKind};
use crate::safety::{read_head, safety_check, SafetyIssue};
use crate::BlockDevice;
use std::path::{Path, PathBuf};

/// What a recognizer found on a target.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Identity {
    /// Human description, e.g. "nowa database (format 1)".
    pub what: String,
}

/// A recognizer over the first bytes of a target (at least 8 KiB when the target is that
/// large, up to 68 KiB): `Some` if it holds a nowa target of the expected kind.
pub type Recognizer<'a> = &'a dyn Fn(&[u8]) -> Option<Identity>;

/// What the command expects to find on an existing target.
#[derive(Clone, Copy)]
pub struct Expect<'a> {
    /// What it is called in messages ("a nowa database", "a nowa scratch target").
    pub what: &'static str,
    /// The recognizer.
    pub recognize: Recognizer<'a>,
}

impl std::fmt::Debug for Expect<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expect")
            .field("what", &self.what)
            .finish_non_exhaustive()
    }
}

/// Why a target may not be written (or could not be opened).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// In use or holding data that [`crate::safety_check`] recognizes.
    #[error("refusing to write to {kind} {}: {}. Repeat the path with --force {} to overwrite it anyway", path.display(), issues_text(issues), path.display())]
    Unsafe {
        /// The canonical path.
        path: PathBuf,
        /// File or block device.
        kind: TargetKind,
        /// Every problem found.
        issues: Vec<SafetyIssue>,
    },
    /// Not a nowa target of the expected kind.
    #[error("refusing to write to {kind} {}: it is not {expected}, so its contents would be destroyed. Repeat the path with --force {} to overwrite it", path.display(), path.display())]
    NotExpected {
        /// The canonical path.
        path: PathBuf,
        /// File or block device.
        kind: TargetKind,
        /// What was expected.
        expected: &'static str,
    },
    /// `--force` names another path than the target.
    #[error("--force names {}, not the target {}", force.display(), path.display())]
    ForceMismatch {
        /// The target.
        path: PathBuf,
        /// The path given with --force.
        force: PathBuf,
    },
    /// The path does not exist and no size was given to create it.
    #[error("{} does not exist (give a size to create a file)", path.display())]
    Missing {
        /// The path.
        path: PathBuf,
    },
    /// Opening or inspecting failed ([`DeviceError::Busy`] when another open holds it,
    /// [`DeviceError::CreateInDev`] for a new file in /dev, I/O errors).
    #[error(transparent)]
    Device(#[from] DeviceError),
}

impl OpenError {
    /// True for a refusal caused by the user's input (the CLI's exit code 2); false for a
    /// failure while opening (busy, I/O).
    #[must_use]
    pub fn is_refusal(&self) -> bool {
        !matches!(self, OpenError::Device(e) if !matches!(
            e,
            DeviceError::CreateInDev { .. }
                | DeviceError::Exists { .. }
                | DeviceError::NotFileOrBlockDevice { .. }
        ))
    }
}

fn issues_text(issues: &[SafetyIssue]) -> String {
    let v: Vec<String> = issues.iter().map(ToString::to_string).collect();
    v.join("; ")
}

/// The decision about a target, before anything is opened for writing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// A new regular file will be created.
    Create {
        /// The path.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
    },
    /// An existing target may be written.
    Existing {
        /// The canonical path.
        path: PathBuf,
        /// File or block device.
        kind: TargetKind,
        /// What the recognizer found (None: forced although unrecognized).
        identity: Option<Identity>,
        /// Problems overridden by `--force` (print them as warnings).
        overridden: Vec<SafetyIssue>,
    },
}

impl Verdict {
    /// Warning lines for what `--force` overrode.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        match self {
            Verdict::Create { .. } => Vec::new(),
            Verdict::Existing {
                path,
                identity,
                overridden,
                ..
            } => {
                let mut w: Vec<String> = overridden
                    .iter()
                    .map(|i| format!("WARNING (overridden by --force): {} {i}", path.display()))
                    .collect();
                if identity.is_none() {
                    w.push(format!(
                        "WARNING (overridden by --force): {} is not a nowa target; its contents will be destroyed",
                        path.display()
                    ));
                }
                w
            }
        }
    }
}

/// True if `force` names the same target as `path` (both canonicalized when they exist).
#[must_use]
pub fn same_target(path: &Path, force: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(path) == canon(force)
}

/// Decides whether `path` may be written, reading nothing but its metadata, sysfs, /proc and
/// its first blocks. `create_size`: the size of the file to create when the path does not
/// exist (None: it must exist).
///
/// # Errors
/// [`OpenError::Unsafe`], [`OpenError::NotExpected`], [`OpenError::ForceMismatch`],
/// [`OpenError::Missing`], [`DeviceError::CreateInDev`]; I/O errors inspecting the target.
pub fn check_target(
    path: &Path,
    force: Option<&Path>,
    expect: Expect<'_>,
    create_size: Option<u64>,
) -> Result<Verdict, OpenError> {
    if let Some(f) = force {
        if !same_target(path, f) {
            return Err(OpenError::ForceMismatch {
                path: path.to_path_buf(),
                force: f.to_path_buf(),
            });
        }
    }
    if std::fs::symlink_metadata(path).is_err() {
        if in_dev(path) {
            return Err(DeviceError::CreateInDev {
                path: path.to_path_buf(),
            }
            .into());
        }
        let size = create_size.ok_or_else(|| OpenError::Missing {
            path: path.to_path_buf(),
        })?;
        return Ok(Verdict::Create {
            path: path.to_path_buf(),
            size,
        });
    }
    let report = safety_check(path)?;
    let forced = force.is_some();
    if !report.issues.is_empty() && !forced {
        return Err(OpenError::Unsafe {
            path: report.path,
            kind: report.kind,
            issues: report.issues,
        });
    }
    let identity = read_head(&report.path)
        .ok()
        .and_then(|head| (expect.recognize)(&head));
    if identity.is_none() && !forced {
        return Err(OpenError::NotExpected {
            path: report.path,
            kind: report.kind,
            expected: expect.what,
        });
    }
    Ok(Verdict::Existing {
        path: report.path,
        kind: report.kind,
        identity,
        overridden: report.issues,
    })
}

/// A target opened for writing.
#[derive(Debug)]
pub struct Opened {
    /// The device, locked.
    pub device: FileDevice,
    /// The decision it was opened on.
    pub verdict: Verdict,
}

/// Checks `path` ([`check_target`]), then creates or opens it with `options` (exclusive lock
/// included) and announces `steps` through `announce`: an existing target is opened (and
/// locked) first, so a busy target fails before anything is announced; a new file is announced
/// before it is created. Nothing is written here: the caller runs the steps after this returns.
///
/// # Errors
/// Every refusal of [`check_target`]; [`DeviceError::Busy`] if another open holds the target;
/// I/O errors.
///
/// # Panics
/// If a created file does not have the size asked for (a broken invariant).
pub fn open_target(
    path: &Path,
    force: Option<&Path>,
    expect: Expect<'_>,
    create_size: Option<u64>,
    options: &FileOptions,
    steps: &[String],
    announce: &mut dyn FnMut(&str),
) -> Result<Opened, OpenError> {
    let verdict = check_target(path, force, expect, create_size)?;
    let device = match &verdict {
        Verdict::Create { path, size } => {
            announce(&format!("create {} ({size} bytes)", path.display()));
            for s in steps {
                announce(s);
            }
            let d = FileDevice::create(path, *size, options)?;
            assert_eq!(
                d.geometry().capacity,
                *size / 4096 * 4096,
                "created at its size"
            );
            d
        }
        Verdict::Existing { path, .. } => {
            let d = FileDevice::open(path, options)?;
            for w in verdict.warnings() {
                announce(&w);
            }
            for s in steps {
                announce(s);
            }
            d
        }
    };
    Ok(Opened { device, verdict })
}
