//! [`open`]: the one entry point that reads any supported trace as a stream of records.

use crate::text::{LineParser, Parsed};
use crate::{binary, decompress, excerpt, Format, Record, TraceError};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// A streaming reader over one trace file (constant memory: one line or one buffer at a time).
pub struct TraceReader {
    path: PathBuf,
    format: Format,
    inner: Inner,
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

/// Open `path` as a trace of `format` (None: recognized from its first line).
///
/// # Errors
/// [`TraceError::Io`] if it cannot be read, [`TraceError::UnknownFormat`] if no format was given
/// and none matches, [`TraceError::Corrupt`] for a damaged binary header.
pub fn open(path: &Path, format: Option<Format>) -> Result<TraceReader, TraceError> {
    let format = match format {
        Some(f) => f,
        None => Format::detect(path)?,
    };
    let src = decompress::open_decompressed(path)?;
    let inner = if format == Format::Binary {
        Inner::Binary(Box::new(binary::Reader::new(path, Box::new(src))?))
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
    })
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

    /// The next record, `None` at the end of the trace.
    ///
    /// # Errors
    /// [`TraceError::Io`], [`TraceError::Line`] (with file and line) or [`TraceError::Corrupt`].
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        let format = self.format;
        let (src, line, lineno, parser, pending) = match &mut self.inner {
            Inner::Binary(b) => return b.next_record(),
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
                .map_err(|e| TraceError::io(&self.path, e))?;
            if n == 0 {
                return Ok(None);
            }
            *lineno += 1;
            let text = String::from_utf8_lossy(line);
            let parsed = parser
                .parse(format, &text)
                .map_err(|problem| TraceError::Line {
                    path: self.path.clone(),
                    line: *lineno,
                    problem,
                    text: excerpt(&text),
                })?;
            match parsed {
                Parsed::Skip => continue,
                Parsed::One(r) => return Ok(Some(r)),
                Parsed::Two(a, b) => {
                    debug_assert!(pending.is_none(), "taken at the top");
                    *pending = Some(b);
                    return Ok(Some(a));
                }
            }
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<Record, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}
