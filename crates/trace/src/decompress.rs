//! Transparent decompression: gzip, xz and zstd are recognized by their magic bytes (so a
//! renamed file still works), anything else is read as is.

use crate::TraceError;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

const GZIP: &[u8] = &[0x1f, 0x8b];
const XZ: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];
const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// Buffer size of the readers: large enough that refills cost little per line.
const BUF: usize = 1 << 20;

/// The compression of a stream, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Codec {
    Plain,
    Gzip,
    Xz,
    Zstd,
}

fn sniff(head: &[u8]) -> Codec {
    if head.starts_with(GZIP) {
        Codec::Gzip
    } else if head.starts_with(XZ) {
        Codec::Xz
    } else if head.starts_with(ZSTD) {
        Codec::Zstd
    } else {
        Codec::Plain
    }
}

/// Open `path` for buffered reading, decompressing gzip / xz / zstd on the fly.
///
/// # Errors
/// [`TraceError::Io`] naming the file when it cannot be opened or its first bytes read.
pub fn open_decompressed(path: &Path) -> Result<Box<dyn BufRead + Send>, TraceError> {
    let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        let e = std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory");
        return Err(TraceError::io(path, e));
    }
    let mut raw = BufReader::with_capacity(BUF, file);
    let codec = sniff(raw.fill_buf().map_err(|e| TraceError::io(path, e))?);
    let reader: Box<dyn BufRead + Send> = match codec {
        Codec::Plain => Box::new(raw),
        Codec::Gzip => Box::new(BufReader::with_capacity(
            BUF,
            flate2::bufread::MultiGzDecoder::new(raw),
        )),
        Codec::Xz => Box::new(BufReader::with_capacity(
            BUF,
            xz2::bufread::XzDecoder::new_multi_decoder(raw),
        )),
        Codec::Zstd => {
            let dec = zstd::stream::read::Decoder::with_buffer(raw)
                .map_err(|e| TraceError::io(path, e))?;
            Box::new(BufReader::with_capacity(BUF, dec))
        }
    };
    Ok(reader)
}

/// The first `n` bytes of the (decompressed) file, fewer if it is shorter.
pub(crate) fn head(path: &Path, n: usize) -> Result<Vec<u8>, TraceError> {
    let r = open_decompressed(path)?;
    let mut out = Vec::with_capacity(n);
    // A read error past the opening is damage to the file (a cut .gz), not the machine's.
    r.take(n as u64)
        .read_to_end(&mut out)
        .map_err(|source| TraceError::Damaged {
            path: path.to_path_buf(),
            line: 0,
            source,
        })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn roundtrip(codec: &str) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("t.{codec}"));
        let text = b"hello trace\nline two\n".repeat(100);
        let f = File::create(&path).unwrap();
        match codec {
            "gz" => {
                let mut w = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
                w.write_all(&text).unwrap();
                w.finish().unwrap();
            }
            "xz" => {
                let mut w = xz2::write::XzEncoder::new(f, 1);
                w.write_all(&text).unwrap();
                w.finish().unwrap();
            }
            "zst" => {
                let mut w = zstd::stream::write::Encoder::new(f, 1).unwrap();
                w.write_all(&text).unwrap();
                w.finish().unwrap();
            }
            _ => {
                let mut f = f;
                f.write_all(&text).unwrap();
            }
        }
        let mut out = Vec::new();
        open_decompressed(&path)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, text, "codec {codec}");
    }

    #[test]
    fn every_codec_decompresses_by_magic() {
        for c in ["gz", "xz", "zst", "txt"] {
            roundtrip(c);
        }
    }

    #[test]
    fn missing_file_names_the_path() {
        let e = open_decompressed(Path::new("/nonexistent/trace.csv"))
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/trace.csv"), "{e}");
    }
}
