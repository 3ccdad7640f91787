//! [`open`]: the one entry point that reads any supported trace as a stream of records.

use crate::text::{LineParser, Parsed};
use crate::{binary, decompress, excerpt, Format, LineProblem, Record, TraceError};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The share of unreadable lines a trace may hold before it is refused: 1%. A real trace
/// with a few broken lines (a capture cut mid-line, a stray log message) still replays; a
/// file that is mostly not a trace of its format (the wrong `--format`, binary garbage, a
/// damaged download) is refused instead of being replayed as a small fraction of itself.
pub const DEFAULT_BAD_SHARE: f64 = 0.01;

/// `--skip-bad` for the whole process: readers opened with [`open`] accept any share.
static SKIP_BAD: AtomicBool = AtomicBool::new(false);

/// Make every reader opened with [`open`] from now on accept any share of unreadable lines
/// (the CLI's `--skip-bad`; readers deep inside experiments open their traces themselves).
pub fn set_skip_bad(on: bool) {
    SKIP_BAD.store(on, Ordering::Relaxed);
}

/// What a reader accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadPolicy {
    /// Unreadable lines allowed, as a share of the lines that hold a record or are unreadable
    /// (in 0..=1; 1 accepts any number). A file with no record is refused whatever the share.
    pub max_bad_share: f64,
}

impl Default for ReadPolicy {
    fn default() -> ReadPolicy {
        ReadPolicy {
            max_bad_share: if SKIP_BAD.load(Ordering::Relaxed) {
                1.0
            } else {
                DEFAULT_BAD_SHARE
            },
        }
    }
}

/// The unreadable lines a text reader skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// How many.
    pub bad: u64,
    /// 1-based number of the first.
    pub first_line: u64,
    /// What is wrong with it.
    pub problem: LineProblem,
    /// That line (cut to 120 characters).
    pub text: String,
}

/// A streaming reader over one trace file (constant memory: one line or one buffer at a time).
pub struct TraceReader {
    path: PathBuf,
    format: Format,
    inner: Inner,
    policy: ReadPolicy,
    /// Records returned so far.
    records: u64,
    /// Lines that held a record (text formats).
    good_lines: u64,
    skipped: Option<Skipped>,
    /// The end was reached (or an error returned): later calls return `None`.
    done: bool,
}

enum Inner {
    Text {
        src: Box<dyn BufRead + Send>,
        line: Vec<u8>,
        lineno: u64,
        parser: Box<LineParser>,
        pending: Option<Record>,
    },
    Binary(Box<binary::Reader>),
}

/// Open `path` as a trace of `format` (None: recognized from its first line), with the
/// process's [`ReadPolicy`] (1% unreadable lines, any share after [`set_skip_bad`]).
///
/// # Errors
/// As [`open_with`].
pub fn open(path: &Path, format: Option<Format>) -> Result<TraceReader, TraceError> {
    open_with(path, format, ReadPolicy::default())
}

/// Open `path` as a trace of `format` (None: recognized from its first line).
///
/// # Errors
/// [`TraceError::Io`] if it cannot be read, [`TraceError::UnknownFormat`] if no format was given
/// and none matches, [`TraceError::Corrupt`] or [`TraceError::Damaged`] for a damaged binary
/// header.
///
/// # Panics
/// If `policy.max_bad_share` is outside 0..=1.
pub fn open_with(
    path: &Path,
    format: Option<Format>,
    policy: ReadPolicy,
) -> Result<TraceReader, TraceError> {
    assert!(
        (0.0..=1.0).contains(&policy.max_bad_share),
        "a share is in 0..=1"
    );
    let format = match format {
        Some(f) => f,
        None => Format::detect(path)?,
    };
    let src = decompress::open_decompressed(path)?;
    let inner = if format == Format::Binary {
        // The body's checksum is only known at its end: a damaged body would hand out
        // records with wild offsets first (a footprint of 2^49 pages). One pass checks its
        // length and checksum before any record is used, without decoding it (a replay
        // reopens its trace every pass: a decoding pass cost as much as the replay's own).
        binary::Reader::new(path, Box::new(src))
            .and_then(binary::Reader::verify)
            .map_err(|e| damaged(e, 0))?;
        let src = decompress::open_decompressed(path)?;
        let r = binary::Reader::new(path, Box::new(src)).map_err(|e| damaged(e, 0))?;
        Inner::Binary(Box::new(r))
    } else {
        Inner::Text {
            src,
            line: Vec::with_capacity(256),
            lineno: 0,
            parser: Box::default(),
            pending: None,
        }
    };
    Ok(TraceReader {
        path: path.to_path_buf(),
        format,
        inner,
        policy,
        records: 0,
        good_lines: 0,
        skipped: None,
        done: false,
    })
}

/// A read error in the middle of a stream is damage to the file (a truncated or corrupt
/// compressed stream, a short binary header), not a failure of the machine.
fn damaged(e: TraceError, line: u64) -> TraceError {
    match e {
        TraceError::Io { path, source } => TraceError::Damaged { path, line, source },
        e => e,
    }
}

impl TraceReader {
    /// The format being read.
    #[must_use]
    pub fn format(&self) -> Format {
        self.format
    }

    /// The file being read.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lines read so far (text formats; records for the binary form).
    #[must_use]
    pub fn lines(&self) -> u64 {
        match &self.inner {
            Inner::Text { lineno, .. } => *lineno,
            Inner::Binary(_) => 0,
        }
    }

    /// The unreadable lines skipped so far, if any.
    #[must_use]
    pub fn skipped(&self) -> Option<&Skipped> {
        self.skipped.as_ref()
    }

    /// The next record, `None` at the end of the trace. Unreadable lines are skipped and
    /// counted; at the end, a trace without records or with more unreadable lines than the
    /// policy allows is refused, and one with fewer says on stderr how many it skipped.
    ///
    /// # Errors
    /// [`TraceError::Io`], [`TraceError::Damaged`], [`TraceError::Corrupt`],
    /// [`TraceError::TooManyBad`] (naming the first bad line) or [`TraceError::Empty`].
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if self.done {
            return Ok(None);
        }
        let next = match self.next_inner() {
            Ok(r) => r,
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        if next.is_some() {
            self.records += 1;
            return Ok(next);
        }
        self.done = true;
        self.check_end()?;
        Ok(None)
    }

    /// Up to `max` more records appended to `out`: what as many [`TraceReader::next_record`]
    /// calls would return, fewer only at the end of the trace (0 there). The binary form
    /// decodes them in one loop, without a call per record.
    ///
    /// # Errors
    /// As [`TraceReader::next_record`]; `out` then holds the records before the error.
    pub fn next_records(&mut self, out: &mut Vec<Record>, max: usize) -> Result<usize, TraceError> {
        let start = out.len();
        while out.len() - start < max {
            if let (Inner::Binary(b), false) = (&mut self.inner, self.done) {
                let n = b.decode_buffered(out, max - (out.len() - start));
                self.records += n as u64;
                if out.len() - start == max {
                    break;
                }
            }
            match self.next_record()? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out.len() - start)
    }

    /// At the end: refuse an empty trace or one with too many unreadable lines, report the
    /// skipped ones.
    fn check_end(&self) -> Result<(), TraceError> {
        let path = self.path.clone();
        let Some(s) = &self.skipped else {
            if self.records == 0 {
                return Err(TraceError::Empty {
                    path,
                    lines: self.lines(),
                });
            }
            return Ok(());
        };
        let lines = s.bad + self.good_lines;
        #[expect(clippy::cast_precision_loss, reason = "a share of a line count")]
        let share = s.bad as f64 / lines as f64;
        if share > self.policy.max_bad_share || self.records == 0 {
            return Err(TraceError::TooManyBad {
                path,
                first_line: s.first_line,
                problem: s.problem,
                text: s.text.clone(),
                bad: s.bad,
                lines,
                share: self.policy.max_bad_share,
            });
        }
        report_skipped(&self.path, s, lines);
        Ok(())
    }

    fn next_inner(&mut self) -> Result<Option<Record>, TraceError> {
        let format = self.format;
        let (src, line, lineno, parser, pending) = match &mut self.inner {
            Inner::Binary(b) => return b.next_record().map_err(|e| damaged(e, self.records)),
            Inner::Text {
                src,
                line,
                lineno,
                parser,
                pending,
            } => (src, line, lineno, parser, pending),
        };
        if let Some(r) = pending.take() {
            return Ok(Some(r));
        }
        loop {
            line.clear();
            let n = src
                .read_until(b'\n', line)
                .map_err(|source| TraceError::Damaged {
                    path: self.path.clone(),
                    line: *lineno,
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            *lineno += 1;
            let text = String::from_utf8_lossy(line);
            let parsed = match parser.parse(format, &text) {
                Ok(p) => p,
                Err(problem) => {
                    let s = self.skipped.get_or_insert_with(|| Skipped {
                        bad: 0,
                        first_line: *lineno,
                        problem,
                        text: excerpt(&text),
                    });
                    s.bad += 1;
                    continue;
                }
            };
            match parsed {
                Parsed::Skip => continue,
                Parsed::One(r) => {
                    self.good_lines += 1;
                    return Ok(Some(r));
                }
                Parsed::Two(a, b) => {
                    debug_assert!(pending.is_none(), "taken at the top");
                    self.good_lines += 1;
                    *pending = Some(b);
                    return Ok(Some(a));
                }
            }
        }
    }
}

/// One line on stderr, once per file and process (a replay reopens its trace every pass):
/// every consumer of a trace must say it skipped lines, and several open theirs deep inside
/// an experiment, so the reader says it itself.
fn report_skipped(path: &Path, s: &Skipped, lines: u64) {
    static SAID: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if said.iter().any(|p| p == path) {
        return;
    }
    said.push(path.to_path_buf());
    eprintln!(
        "nowa: warning: {}: skipped {} unreadable of {lines} lines (first: line {}: {} in '{}')",
        path.display(),
        s.bad,
        s.first_line,
        s.problem,
        s.text
    );
}

impl Iterator for TraceReader {
    type Item = Result<Record, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}
