//! The nowa trace CSV: `ts_sec,op,offset_bytes,len_bytes` (and `,volume` for multi-volume
//! traces), `ts_sec` with nanosecond precision, op W/D/F/R.

use crate::{Record, TraceError};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The header line without a volume column.
pub const HEADER: &str = "ts_sec,op,offset_bytes,len_bytes";

/// Writes the nowa trace CSV.
pub struct CsvWriter {
    path: PathBuf,
    out: BufWriter<File>,
    with_volume: bool,
    records: u64,
}

/// Create `path` for writing; refuse an existing file unless `overwrite`.
pub(crate) fn create_output(path: &Path, overwrite: bool) -> Result<File, TraceError> {
    let mut o = OpenOptions::new();
    o.write(true);
    if overwrite {
        o.create(true).truncate(true);
    } else {
        o.create_new(true);
    }
    o.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            TraceError::Exists {
                path: path.to_path_buf(),
            }
        } else {
            TraceError::io(path, e)
        }
    })
}

impl CsvWriter {
    /// Create `path` and write the header. An existing file is an error unless `overwrite`.
    /// `with_volume` adds the `volume` column.
    ///
    /// # Errors
    /// [`TraceError::Exists`] or [`TraceError::Io`] naming the file.
    pub fn create(
        path: &Path,
        overwrite: bool,
        with_volume: bool,
    ) -> Result<CsvWriter, TraceError> {
        CsvWriter::create_commented(path, overwrite, with_volume, "")
    }

    /// [`CsvWriter::create`], with `comment` (lines that each start with `#`, e.g. a run's
    /// identity `# nowa {...}`) before the header: every reader skips `#` lines, so such a
    /// file reads as one without them.
    ///
    /// # Errors
    /// [`TraceError::Exists`] or [`TraceError::Io`] naming the file.
    ///
    /// # Panics
    /// If a line of `comment` does not start with `#` (the readers would take it for data).
    pub fn create_commented(
        path: &Path,
        overwrite: bool,
        with_volume: bool,
        comment: &str,
    ) -> Result<CsvWriter, TraceError> {
        assert!(
            comment.lines().all(|l| l.starts_with('#')),
            "a comment line starts with #: {comment:?}"
        );
        let file = create_output(path, overwrite)?;
        let mut w = CsvWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 20, file),
            with_volume,
            records: 0,
        };
        let mut header = comment.to_owned();
        if !header.is_empty() && !header.ends_with('\n') {
            header.push('\n');
        }
        header.push_str(HEADER);
        header.push_str(if with_volume { ",volume\n" } else { "\n" });
        w.out
            .write_all(header.as_bytes())
            .map_err(|e| TraceError::io(path, e))?;
        Ok(w)
    }

    /// Append one record.
    ///
    /// # Errors
    /// [`TraceError::Io`] naming the file.
    ///
    /// # Panics
    /// If the record has a volume and the CSV has no volume column.
    pub fn push(&mut self, r: &Record) -> Result<(), TraceError> {
        debug_assert!(
            r.op != crate::Op::Flush || (r.offset == 0 && r.len == 0),
            "flushes carry no range"
        );
        assert!(
            self.with_volume || r.volume == 0,
            "volume {} in a CSV without a volume column",
            r.volume
        );
        let (s, ns) = (r.ts_ns / 1_000_000_000, r.ts_ns % 1_000_000_000);
        let res = if self.with_volume {
            writeln!(
                self.out,
                "{s}.{ns:09},{},{},{},{}",
                r.op.letter(),
                r.offset,
                r.len,
                r.volume
            )
        } else {
            writeln!(
                self.out,
                "{s}.{ns:09},{},{},{}",
                r.op.letter(),
                r.offset,
                r.len
            )
        };
        res.map_err(|e| TraceError::io(&self.path, e))?;
        self.records += 1;
        Ok(())
    }

    /// Records written so far.
    #[must_use]
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Push buffered lines to the file (not a sync).
    ///
    /// # Errors
    /// [`TraceError::Io`] naming the file.
    pub fn flush(&mut self) -> Result<(), TraceError> {
        self.out.flush().map_err(|e| TraceError::io(&self.path, e))
    }

    /// Flush and sync the file; returns the records written.
    ///
    /// # Errors
    /// [`TraceError::Io`] naming the file.
    pub fn finish(mut self) -> Result<u64, TraceError> {
        self.flush()?;
        self.out
            .get_ref()
            .sync_all()
            .map_err(|e| TraceError::io(&self.path, e))?;
        Ok(self.records)
    }
}
