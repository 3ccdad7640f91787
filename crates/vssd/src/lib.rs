//! A virtual SSD any program can use: a FUSE file system whose files (`disk`, or `disk0` ..
//! `diskN-1`) are the logical space of one simulated SSD. Every write, read, hole punch
//! (= TRIM) and fsync goes through the FTL model of `nowa-flash` (the one `nowa sim` runs,
//! wrapped by `nowa-device`'s [`SimDevice`](nowa_device::SimDevice)), the data is kept
//! (a sparse backing file or memory), and replies wait for the one timing model
//! ([`nowa_device::Paced`]) when one is set. A loop device over `disk` makes it a block
//! device for mkfs, a file system and a database on top (docs/vssd.md).
//!
//! Live counters are served as the virtual file `.stats` (JSON) inside the mount, so the
//! daemon writes nothing outside its directory and its backing file.

mod bench;
pub mod control;
mod disk;
mod fs;
mod serve;
mod stats;

pub use bench::{bench, BenchResult};
pub use disk::{Backing, Disk, DiskSpec};
pub use fs::{mount, Mounted, STATS_FILE};
pub use serve::{describe, serve, ServeSpec, Served, Serving, Stop};
pub use stats::{CsvLog, Latency, Snapshot, STALL};

use std::path::PathBuf;

/// Errors of the virtual SSD.
#[derive(Debug, thiserror::Error)]
pub enum VssdError {
    /// The simulated SSD refused the configuration or an I/O.
    #[error(transparent)]
    Device(#[from] nowa_device::DeviceError),
    /// The backing file is larger than the virtual SSD (its tail would be ignored).
    #[error("{path}: holds {len} bytes, more than the {capacity}-byte virtual SSD")]
    BackingTooLarge {
        /// The backing file.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// The virtual SSD's capacity.
        capacity: u64,
    },
    /// An operating-system call on a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// No vssd is mounted at the directory.
    #[error("{}: no vssd is mounted there", dir.display())]
    NotMounted {
        /// The directory.
        dir: PathBuf,
    },
    /// A vssd is already mounted at the directory a new one should use.
    #[error("{}: a vssd is mounted there (nowa vssd stop {0})", dir.display())]
    AlreadyMounted {
        /// The directory.
        dir: PathBuf,
    },
    /// The mount point is not empty (its files would be hidden).
    #[error("{}: not empty (pass --force to mount over it; its files are hidden, not touched)", dir.display())]
    NotEmpty {
        /// The directory.
        dir: PathBuf,
    },
    /// A loop device over one of the vssd's disks still has a file system mounted.
    #[error("{}: {} over {file} is mounted at {}: unmount it first", dir.display(), dev.display(), at.display())]
    LoopInUse {
        /// The vssd's directory.
        dir: PathBuf,
        /// The disk file's name.
        file: String,
        /// The loop device.
        dev: PathBuf,
        /// Where it is mounted.
        at: PathBuf,
    },
    /// The name is not one of the vssd's disk files.
    #[error("{file}: not a disk of this vssd")]
    NotADisk {
        /// The name asked for.
        file: String,
    },
    /// `--files N` does not divide the capacity into whole pages.
    #[error("{files} files do not split {capacity} bytes into whole 4 KiB pages")]
    Split {
        /// Files asked for.
        files: u16,
        /// Logical capacity.
        capacity: u64,
    },
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, VssdError>;

/// Page size of the virtual SSD (the FTL's page).
pub const PAGE: u64 = nowa_device::BLOCK_SIZE_U64;
