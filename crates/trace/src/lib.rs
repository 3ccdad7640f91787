//! Block I/O traces for nowa: read them, store them compactly, describe them, record them.
//!
//! - [`open`]: one streaming reader for every supported format (see [`Format`]), `.gz`, `.xz`
//!   and `.zst` decompressed transparently (recognized by their magic bytes), constant memory.
//!   Every record becomes one [`Record`] (timestamp, op, byte offset, byte length, volume).
//! - [`binary`]: the compact binary form (`nowa trace convert`): a checksummed header with
//!   counts, then delta/varint-coded records; it round-trips every record exactly.
//! - [`CsvWriter`]: the CSV that `nowa capture` and `nowa ycsb --record-trace` write.
//! - [`TraceStats`]: footprint, volumes written, request sizes, discards, flushes, per volume.
//! - [`pages`]: 4 KiB page ranges, dense page ids, and [`pages::next_overwrite`] (the future
//!   each write's oracle placement needs).
//! - [`RecordingDevice`]: a [`nowa_device::BlockDevice`] wrapper that records every request.

pub mod binary;
mod csv_out;
mod decompress;
mod format;
pub mod pages;
mod reader;
mod record_dev;
mod stats;
mod text;

pub use csv_out::CsvWriter;
pub use decompress::open_decompressed;
pub use format::Format;
pub use reader::{
    open, open_with, set_skip_bad, ReadPolicy, Skipped, TraceReader, DEFAULT_BAD_SHARE,
};
pub use record_dev::RecordingDevice;
pub use stats::{TraceStats, VolumeStats, SIZE_BUCKETS};
pub use text::{parse_rq_issue, parse_rwbs};

use std::path::PathBuf;

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[repr(u8)]
pub enum Op {
    /// Read `len` bytes.
    Read = 0,
    /// Write `len` bytes.
    Write = 1,
    /// Discard (TRIM / UNMAP) `len` bytes.
    Discard = 2,
    /// Cache flush (offset and length 0 by convention).
    Flush = 3,
}

impl Op {
    /// The op of a two-bit code (the binary form's tag).
    #[must_use]
    pub fn from_code(code: u8) -> Op {
        match code & 3 {
            0 => Op::Read,
            1 => Op::Write,
            2 => Op::Discard,
            _ => Op::Flush,
        }
    }

    /// The letter of the nowa CSV: R, W, D, F.
    #[must_use]
    pub fn letter(self) -> char {
        match self {
            Op::Read => 'R',
            Op::Write => 'W',
            Op::Discard => 'D',
            Op::Flush => 'F',
        }
    }
}

/// One block request of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Record {
    /// Nanoseconds in the trace's own time base (each reader documents its origin).
    pub ts_ns: u64,
    /// Volume (virtual disk, device, file) the request belongs to; 0 in single-volume traces.
    pub volume: u32,
    /// What the request does.
    pub op: Op,
    /// First byte.
    pub offset: u64,
    /// Bytes.
    pub len: u64,
}

/// Why a trace line could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineProblem {
    /// Fewer or more fields than the format has.
    FieldCount {
        /// Fields the format has.
        expected: usize,
        /// Fields the line has.
        found: usize,
    },
    /// A field that must be a number is not one (or does not fit 64 bits).
    Number {
        /// The field's name.
        field: &'static str,
    },
    /// An operation code the format does not define.
    OpCode {
        /// The field's name.
        field: &'static str,
    },
    /// A byte offset or length that overflows 64 bits once converted.
    Overflow {
        /// The field's name.
        field: &'static str,
    },
    /// Not a line of the format at all (blkparse: neither an event nor its summary).
    Unrecognized,
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineProblem::FieldCount { expected, found } => {
                write!(f, "expected {expected} fields, found {found}")
            }
            LineProblem::Number { field } => write!(f, "field '{field}' is not a number"),
            LineProblem::OpCode { field } => write!(f, "field '{field}' is not a known operation"),
            LineProblem::Overflow { field } => write!(f, "field '{field}' overflows 64 bits"),
            LineProblem::Unrecognized => f.write_str("not a line of this format"),
        }
    }
}

/// Errors of this crate. Every variant names the file; line errors name the line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened, read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line of a text trace is malformed.
    #[error("{}:{line}: {problem} in '{text}'", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        problem: LineProblem,
        /// The line (cut to 120 characters).
        text: String,
    },
    /// The format of the file could not be recognized from its first line.
    #[error("{}: unrecognized trace format (first line '{first_line}'); name it with --format", path.display())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// The first non-empty line (cut to 120 characters).
        first_line: String,
    },
    /// A binary trace is damaged or was not finished.
    #[error("{}: binary trace {what}: expected {expected}, found {found}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What disagrees.
        what: &'static str,
        /// The value it should have.
        expected: u64,
        /// The value it has.
        found: u64,
    },
    /// More than the allowed share of the lines could not be read ([`ReadPolicy`]).
    #[error("{}:{first_line}: {bad} of {lines} lines unreadable, more than the {:.1}% allowed (first: {problem} in '{text}')", path.display(), share * 100.0)]
    TooManyBad {
        /// The file.
        path: PathBuf,
        /// 1-based number of the first unreadable line.
        first_line: u64,
        /// What is wrong with it.
        problem: LineProblem,
        /// That line (cut to 120 characters).
        text: String,
        /// Unreadable lines.
        bad: u64,
        /// Lines holding a record or an unreadable line (headers, comments and blanks aside).
        lines: u64,
        /// The share allowed.
        share: f64,
    },
    /// The file holds no record (empty, header only, comments only).
    #[error("{}: no records in {lines} lines (empty, header-only or not a trace)", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
        /// Lines read (records for the binary form: 0).
        lines: u64,
    },
    /// The stream broke off or is damaged (a truncated or corrupt .gz/.xz/.zst, a short binary
    /// header): nothing after `line` can be read.
    #[error("{}: damaged after line {line}: {source}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Lines (records for the binary form) read before the damage.
        line: u64,
        /// What the decompressor or reader said.
        source: std::io::Error,
    },
    /// The output exists and overwriting was not allowed.
    #[error("{}: exists (pass --force to overwrite)", path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
}

impl TraceError {
    /// Whether the error is the input's fault (a damaged, empty or unrecognized file, a
    /// missing or unreadable one, an output that exists): the CLI exits with 2 on these. An
    /// I/O error on a file being written (disk full) is not.
    #[must_use]
    pub fn is_bad_input(&self) -> bool {
        use std::io::ErrorKind as K;
        match self {
            TraceError::Io { source, .. } => matches!(
                source.kind(),
                K::NotFound | K::PermissionDenied | K::InvalidInput | K::IsADirectory
            ),
            TraceError::Line { .. }
            | TraceError::UnknownFormat { .. }
            | TraceError::Corrupt { .. }
            | TraceError::Exists { .. }
            | TraceError::TooManyBad { .. }
            | TraceError::Empty { .. }
            | TraceError::Damaged { .. } => true,
        }
    }

    /// An I/O error on `path`.
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Cut `s` to at most 120 characters for an error message.
pub(crate) fn excerpt(s: &str) -> String {
    s.trim_end().chars().take(120).collect()
}
