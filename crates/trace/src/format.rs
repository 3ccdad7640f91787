//! Trace formats and their recognition from the first line.

use crate::{binary, decompress, excerpt, TraceError};
use std::path::Path;

/// A trace format. Column layouts: `docs/traces.md` (and `shared/specs/traces.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[non_exhaustive]
pub enum Format {
    /// `ts_sec,op,offset_bytes,len_bytes[,volume]`, op W/D/F/R: what `nowa capture` writes.
    NowaCsv,
    /// Alibaba Cloud block traces: `device_id,opcode(R/W),offset,length,timestamp_us`.
    Alibaba,
    /// Tencent CBS: `timestamp_s,offset_sectors,size_sectors,io_type(0 R/1 W),volume_id`.
    Tencent,
    /// MSR Cambridge: `filetime,hostname,disk,Read|Write,offset,size,response`.
    Msr,
    /// DiskSim / MQSim ASCII: `arrival_ns device lba_sector size_sectors type(1 R/0 W)`.
    DiskSim,
    /// blkparse default text output; only issue (`D`) events are kept.
    Blkparse,
    /// fio iolog version 2 or 3.
    Fio,
    /// MiDAS: `ts_s type(0 R/1 W/2 -/3 TRIM) lba_4k size_bytes`.
    Midas,
    /// The compact binary form of [`crate::binary`].
    Binary,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 9] = [
        Format::NowaCsv,
        Format::Alibaba,
        Format::Tencent,
        Format::Msr,
        Format::DiskSim,
        Format::Blkparse,
        Format::Fio,
        Format::Midas,
        Format::Binary,
    ];

    /// The name used on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Format::NowaCsv => "csv",
            Format::Alibaba => "alibaba",
            Format::Tencent => "tencent",
            Format::Msr => "msr",
            Format::DiskSim => "disksim",
            Format::Blkparse => "blkparse",
            Format::Fio => "fio",
            Format::Midas => "midas",
            Format::Binary => "binary",
        }
    }

    /// Recognize the format of `path` from its (decompressed) first bytes.
    ///
    /// # Errors
    /// [`TraceError::Io`] if the file cannot be read, [`TraceError::UnknownFormat`] if no format
    /// matches its first non-empty line.
    pub fn detect(path: &Path) -> Result<Format, TraceError> {
        let head = decompress::head(path, 4096)?;
        if head.starts_with(binary::MAGIC) {
            return Ok(Format::Binary);
        }
        let text = String::from_utf8_lossy(&head);
        let first = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or("");
        guess(first).ok_or_else(|| TraceError::UnknownFormat {
            path: path.to_path_buf(),
            first_line: excerpt(first),
        })
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        let s = s.trim().to_ascii_lowercase();
        let alias = match s.as_str() {
            "nowa" | "nowa-csv" => "csv",
            "mqsim" => "disksim",
            "iolog" => "fio",
            "nwt" | "bin" => "binary",
            o => o,
        };
        Format::ALL
            .into_iter()
            .find(|f| f.name() == alias)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                format!("unknown trace format '{s}' (expected {})", names.join(", "))
            })
    }
}

fn is_uint(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_number(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && s.bytes().any(|b| b.is_ascii_digit())
}

/// The format a first line looks like.
fn guess(first: &str) -> Option<Format> {
    if first.starts_with("fio version") {
        return Some(Format::Fio);
    }
    if first.starts_with("ts_sec,") {
        return Some(Format::NowaCsv);
    }
    if first.contains(',') && !first.contains(' ') {
        let f: Vec<&str> = first.split(',').map(str::trim).collect();
        return match f.len() {
            7 if matches!(f[3], "Read" | "Write") => Some(Format::Msr),
            5 if matches!(f[1], "R" | "W") => Some(Format::Alibaba),
            5 if matches!(f[3], "0" | "1") => Some(Format::Tencent),
            4 | 5 if matches!(f[1], "R" | "W" | "D" | "F") => Some(Format::NowaCsv),
            _ => None,
        };
    }
    let t: Vec<&str> = first.split_whitespace().collect();
    let devno = |s: &str| {
        s.split_once(',')
            .is_some_and(|(a, b)| is_uint(a) && is_uint(b))
    };
    if t.len() >= 7 && devno(t[0]) {
        return Some(Format::Blkparse);
    }
    match t.len() {
        5 if t.iter().all(|s| is_number(s)) => Some(Format::DiskSim),
        4 if t.iter().all(|s| is_number(s)) => Some(Format::Midas),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_lines_are_recognized() {
        let cases = [
            ("ts_sec,op,offset_bytes,len_bytes", Format::NowaCsv),
            ("0.000001000,W,4096,8192", Format::NowaCsv),
            ("3,W,126703616,4096,1577808000000000", Format::Alibaba),
            ("1538323200,1048576,8,1,1283", Format::Tencent),
            (
                "128166372003061629,hm,1,Read,3154305024,4096,1658",
                Format::Msr,
            ),
            ("0 0 1436 8 0", Format::DiskSim),
            (
                "8,0    3        7     0.000012345   697  D  WS 223490 + 8 [kjournald]",
                Format::Blkparse,
            ),
            ("fio version 2 iolog", Format::Fio),
            ("0.146559796 1 0 4096", Format::Midas),
        ];
        for (line, want) in cases {
            assert_eq!(guess(line), Some(want), "{line}");
        }
        assert_eq!(guess("hello world"), None);
    }

    #[test]
    fn names_parse_back() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
        }
        assert!("nope".parse::<Format>().unwrap_err().contains("alibaba"));
    }
}
