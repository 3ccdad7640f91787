//! Line parsers of the text formats. Each turns one line into zero, one or two records (a
//! blkparse write with a pre-flush is a flush and a write).

use crate::{Format, LineProblem, Op, Record};
use std::collections::HashMap;

/// What one line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A header, comment, blank line or an event the format's replay ignores.
    Skip,
    One(Record),
    /// A flush, then the request it preceded.
    Two(Record, Record),
}

type Res<T> = Result<T, LineProblem>;

/// An unsigned decimal integer.
fn uint(s: &str, field: &'static str) -> Res<u64> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 20 {
        return Err(LineProblem::Number { field });
    }
    let mut v: u64 = 0;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return Err(LineProblem::Number { field });
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or(LineProblem::Number { field })?;
    }
    Ok(v)
}

/// A non-negative decimal "123.456" scaled by 10^`digits` (extra fraction digits are cut):
/// seconds with `digits` = 9 give nanoseconds.
fn fixed(s: &str, digits: u32, field: &'static str) -> Res<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let int = if int.is_empty() && !frac.is_empty() {
        0
    } else {
        uint(int, field)?
    };
    let mut v = int
        .checked_mul(10u64.pow(digits))
        .ok_or(LineProblem::Overflow { field })?;
    let mut scale = 10u64.pow(digits);
    for c in frac.bytes() {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return Err(LineProblem::Number { field });
        }
        scale /= 10;
        debug_assert!(
            scale < 10u64.pow(digits),
            "each digit is worth less than the last"
        );
        if scale == 0 {
            continue;
        }
        v += u64::from(d) * scale;
    }
    Ok(v)
}

fn times(v: u64, k: u64, field: &'static str) -> Res<u64> {
    v.checked_mul(k).ok_or(LineProblem::Overflow { field })
}

fn vol(s: &str, field: &'static str) -> Res<u32> {
    u32::try_from(uint(s, field)?).map_err(|_| LineProblem::Overflow { field })
}

/// Exactly `N` fields from `it`, or the count found.
fn fields<'a, const N: usize>(mut it: impl Iterator<Item = &'a str>) -> Res<[&'a str; N]> {
    let mut out = [""; N];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = it.next().ok_or(LineProblem::FieldCount {
            expected: N,
            found: i,
        })?;
    }
    let extra = it.count();
    if extra > 0 {
        return Err(LineProblem::FieldCount {
            expected: N,
            found: N + extra,
        });
    }
    Ok(out)
}

fn rec(ts_ns: u64, volume: u32, op: Op, offset: u64, len: u64) -> Res<Parsed> {
    let (offset, len) = if op == Op::Flush {
        (0, 0)
    } else {
        (offset, len)
    };
    // Every consumer computes the request's end.
    if offset.checked_add(len).is_none() {
        return Err(LineProblem::Overflow {
            field: "offset + length",
        });
    }
    Ok(Parsed::One(Record {
        ts_ns,
        volume,
        op,
        offset,
        len,
    }))
}

/// The kernel's `rwbs` string (blkparse, block tracepoints): whether the request carries a
/// pre-flush, and its operation (None for "N", an operation without data).
#[must_use]
pub fn parse_rwbs(rwbs: &str) -> (bool, Option<Op>) {
    let b = rwbs.as_bytes();
    let preflush = b.len() > 1 && b[0] == b'F' && matches!(b[1], b'W' | b'R' | b'D' | b'F' | b'N');
    let op = match b.get(usize::from(preflush)) {
        Some(b'W') => Some(Op::Write),
        Some(b'R') => Some(Op::Read),
        Some(b'D') => Some(Op::Discard),
        Some(b'F') => Some(Op::Flush),
        _ => None,
    };
    (preflush, op)
}

/// Records of one request given its rwbs: a pre-flush becomes its own flush record. A data
/// operation keeps its record even with no data (the device counts it as an I/O); "N" with
/// data (write-zeroes) is a write, as the kernel's disk statistics count it.
pub(crate) fn rwbs_records(rwbs: &str, ts_ns: u64, volume: u32, offset: u64, len: u64) -> Parsed {
    let (preflush, op) = parse_rwbs(rwbs);
    let flush = Record {
        ts_ns,
        volume,
        op: Op::Flush,
        offset: 0,
        len: 0,
    };
    let op = match op {
        Some(Op::Flush) => return Parsed::One(flush),
        None if len > 0 => Op::Write,
        None if preflush => return Parsed::One(flush),
        None => return Parsed::Skip,
        // An empty pre-flush request: only the flush reaches the device.
        Some(_) if preflush && len == 0 => return Parsed::One(flush),
        Some(op) => op,
    };
    let data = Record {
        ts_ns,
        volume,
        op,
        offset,
        len,
    };
    debug_assert!(data.op != Op::Flush, "flushes returned above");
    if preflush {
        Parsed::Two(flush, data)
    } else {
        Parsed::One(data)
    }
}

/// Per-file state of the parsers that need it.
#[derive(Debug, Default)]
pub(crate) struct LineParser {
    /// Volume ids of named volumes (MSR host+disk, blkparse device, fio file), first seen first.
    names: HashMap<String, u32>,
    /// fio iolog version (2 or 3) once the header was read.
    fio_version: u8,
    /// fio v2: microseconds of `wait` actions so far (v2 lines carry no timestamp).
    fio_clock_ns: u64,
    /// blkparse: inside the summary blkparse prints after the events ("CPU0 (8,0):",
    /// "Total (8,0):"), whose lines are skipped; an event line ends it (concatenated runs).
    blk_summary: bool,
}

impl LineParser {
    fn volume_of(&mut self, name: &str) -> u32 {
        let next = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        *self.names.entry(name.to_owned()).or_insert(next)
    }

    /// Parse one line (without its newline) of `format`.
    pub(crate) fn parse(&mut self, format: Format, line: &str) -> Res<Parsed> {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(Parsed::Skip);
        }
        match format {
            Format::NowaCsv => nowa_csv(line),
            Format::Alibaba => alibaba(line),
            Format::Tencent => tencent(line),
            Format::Msr => self.msr(line),
            Format::DiskSim => disksim(line),
            Format::Blkparse => self.blkparse(line),
            Format::Fio => self.fio(line),
            Format::Midas => midas(line),
            Format::Binary => Err(LineProblem::FieldCount {
                expected: 0,
                found: 0,
            }),
        }
    }

    fn msr(&mut self, line: &str) -> Res<Parsed> {
        let [ts, host, disk, ty, off, size, _resp] = fields::<7>(line.split(','))?;
        let op = match ty.trim() {
            "Read" => Op::Read,
            "Write" => Op::Write,
            _ => return Err(LineProblem::OpCode { field: "Type" }),
        };
        uint(disk.trim(), "DiskNumber")?;
        let volume = self.volume_of(&format!("{}/{}", host.trim(), disk.trim()));
        let ts = times(uint(ts.trim(), "Timestamp")?, 100, "Timestamp")?;
        rec(
            ts,
            volume,
            op,
            uint(off.trim(), "Offset")?,
            uint(size.trim(), "Size")?,
        )
    }

    fn blkparse(&mut self, line: &str) -> Res<Parsed> {
        let t: Vec<&str> = line.split_ascii_whitespace().take(10).collect();
        let is_dev = t
            .first()
            .and_then(|d| d.split_once(','))
            .is_some_and(|(a, b)| uint(a, "device").is_ok() && uint(b, "device").is_ok());
        let summary_start = t.first().is_some_and(|w| {
            *w == "Total"
                || w.strip_prefix("CPU")
                    .is_some_and(|n| uint(n, "cpu").is_ok())
        });
        self.blk_summary = (self.blk_summary || summary_start) && !is_dev;
        if !is_dev {
            // The summary's lines are ASCII "Name: values" (" Reads Queued: 0, 0KiB",
            // "Events (8,0): 9 entries", "Skips: 0 forward (0 - 0.0%)").
            let text = line
                .bytes()
                .all(|b| b.is_ascii_graphic() || b == b' ' || b == b'\t');
            return if self.blk_summary && text && line.contains(':') {
                Ok(Parsed::Skip)
            } else {
                Err(LineProblem::Unrecognized)
            };
        }
        if t.len() < 7 {
            return Err(LineProblem::FieldCount {
                expected: 7,
                found: t.len(),
            });
        }
        // Events other than issue.
        if t[5] != "D" {
            return Ok(Parsed::Skip);
        }
        let ts = fixed(t[3], 9, "time")?;
        let volume = self.volume_of(t[0]);
        let (sector, sectors) = match (t.get(7), t.get(8), t.get(9)) {
            (Some(s), Some(&"+"), Some(n)) => (uint(s, "sector")?, uint(n, "sectors")?),
            _ => (0, 0),
        };
        let (offset, len) = (
            times(sector, 512, "sector")?,
            times(sectors, 512, "sectors")?,
        );
        if offset.checked_add(len).is_none() {
            return Err(LineProblem::Overflow {
                field: "offset + length",
            });
        }
        Ok(rwbs_records(t[6], ts, volume, offset, len))
    }

    fn fio(&mut self, line: &str) -> Res<Parsed> {
        if let Some(rest) = line.strip_prefix("fio version ") {
            self.fio_version = match rest.split_whitespace().next() {
                Some("2") => 2,
                Some("3") => 3,
                _ => return Err(LineProblem::Number { field: "version" }),
            };
            return Ok(Parsed::Skip);
        }
        let mut t = line.split_ascii_whitespace();
        let ts = if self.fio_version == 3 {
            times(
                uint(t.next().unwrap_or(""), "timestamp")?,
                1_000_000,
                "timestamp",
            )?
        } else {
            self.fio_clock_ns
        };
        let (Some(file), Some(action)) = (t.next(), t.next()) else {
            return Err(LineProblem::FieldCount {
                expected: 2,
                found: 1,
            });
        };
        let (off, len) = (t.next(), t.next());
        let volume = self.volume_of(file);
        let op = match action {
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Discard,
            "sync" | "datasync" => Op::Flush,
            "wait" => {
                let us = uint(off.unwrap_or(""), "wait")?;
                self.fio_clock_ns = self.fio_clock_ns.saturating_add(times(us, 1000, "wait")?);
                return Ok(Parsed::Skip);
            }
            "add" | "open" | "close" => return Ok(Parsed::Skip),
            _ => return Err(LineProblem::OpCode { field: "action" }),
        };
        if op == Op::Flush {
            return rec(ts, volume, op, 0, 0);
        }
        let off = uint(off.unwrap_or(""), "offset")?;
        rec(ts, volume, op, off, uint(len.unwrap_or(""), "length")?)
    }
}

fn csv_op(s: &str) -> Res<Op> {
    match s.trim() {
        "W" | "w" => Ok(Op::Write),
        "R" | "r" => Ok(Op::Read),
        "D" | "d" => Ok(Op::Discard),
        "F" | "f" => Ok(Op::Flush),
        _ => Err(LineProblem::OpCode { field: "op" }),
    }
}

fn nowa_csv(line: &str) -> Res<Parsed> {
    if line.starts_with("ts_sec") {
        return Ok(Parsed::Skip);
    }
    let mut it = line.split(',');
    let [ts, op, off, len] = [it.next(), it.next(), it.next(), it.next()].map(|f| f.unwrap_or(""));
    let volume = match it.next() {
        Some(v) => vol(v.trim(), "volume")?,
        None => 0,
    };
    if len.is_empty() || it.next().is_some() {
        let found = line.split(',').count();
        return Err(LineProblem::FieldCount { expected: 4, found });
    }
    let ts = fixed(ts.trim(), 9, "ts_sec")?;
    rec(
        ts,
        volume,
        csv_op(op)?,
        uint(off.trim(), "offset_bytes")?,
        uint(len.trim(), "len_bytes")?,
    )
}

fn alibaba(line: &str) -> Res<Parsed> {
    let [dev, op, off, len, ts] = fields::<5>(line.split(','))?;
    let op = match op.trim() {
        "W" | "w" => Op::Write,
        "R" | "r" => Op::Read,
        _ => return Err(LineProblem::OpCode { field: "opcode" }),
    };
    let ts = times(uint(ts.trim(), "timestamp")?, 1000, "timestamp")?;
    rec(
        ts,
        vol(dev.trim(), "device_id")?,
        op,
        uint(off.trim(), "offset")?,
        uint(len.trim(), "length")?,
    )
}

fn tencent(line: &str) -> Res<Parsed> {
    let [ts, off, size, ty, volume] = fields::<5>(line.split(','))?;
    let op = match ty.trim() {
        "1" => Op::Write,
        "0" => Op::Read,
        _ => return Err(LineProblem::OpCode { field: "IOType" }),
    };
    let ts = times(uint(ts.trim(), "Timestamp")?, 1_000_000_000, "Timestamp")?;
    let off = times(uint(off.trim(), "Offset")?, 512, "Offset")?;
    let len = times(uint(size.trim(), "Size")?, 512, "Size")?;
    rec(ts, vol(volume.trim(), "VolumeID")?, op, off, len)
}

fn disksim(line: &str) -> Res<Parsed> {
    let [ts, dev, lba, size, ty] = fields::<5>(line.split_ascii_whitespace())?;
    let op = match ty {
        "0" => Op::Write,
        "1" => Op::Read,
        _ => return Err(LineProblem::OpCode { field: "type" }),
    };
    let off = times(uint(lba, "lba")?, 512, "lba")?;
    let len = times(uint(size, "size")?, 512, "size")?;
    rec(fixed(ts, 0, "arrival")?, vol(dev, "device")?, op, off, len)
}

fn midas(line: &str) -> Res<Parsed> {
    if line == "LOAD_END" {
        return Ok(Parsed::Skip);
    }
    let [ts, ty, lba, size] = fields::<4>(line.split_ascii_whitespace())?;
    let op = match ty {
        "0" => Op::Read,
        "1" => Op::Write,
        "2" => return Ok(Parsed::Skip),
        "3" => Op::Discard,
        _ => return Err(LineProblem::OpCode { field: "type" }),
    };
    let off = times(uint(lba, "lba")?, 4096, "lba")?;
    rec(fixed(ts, 9, "timestamp")?, 0, op, off, uint(size, "size")?)
}

/// One `block_rq_issue` event of tracefs's `trace_pipe`, as `nowa capture` reads it:
/// `comm-pid [cpu] flags ts: block_rq_issue: maj,min rwbs bytes (cmd) sector + nr [comm]`.
/// Returns the device (maj, min), the timestamp in ns, and the records.
#[must_use]
pub fn parse_rq_issue(line: &str) -> Option<((u32, u32), u64, Vec<Record>)> {
    let (head, ev) = line.split_once(" block_rq_issue: ")?;
    let ts = head.trim_end().strip_suffix(':')?.rsplit(' ').next()?;
    let ts = fixed(ts, 9, "ts").ok()?;
    let mut t = ev.split_ascii_whitespace();
    let (maj, min) = t.next()?.split_once(',')?;
    let dev = (maj.parse().ok()?, min.parse().ok()?);
    let rwbs = t.next()?;
    let _bytes = t.next()?;
    // "(cmd)": empty "()" for file-system requests; skip to the sector.
    let rest: Vec<&str> = t
        .skip_while(|s| !s.ends_with(')'))
        .skip(1)
        .take(3)
        .collect();
    let (sector, sectors) = match rest.as_slice() {
        [s, "+", n] => (s.parse::<u64>().ok()?, n.parse::<u64>().ok()?),
        _ => (0, 0),
    };
    let recs = match rwbs_records(
        rwbs,
        ts,
        0,
        sector.checked_mul(512)?,
        sectors.checked_mul(512)?,
    ) {
        Parsed::Skip => Vec::new(),
        Parsed::One(r) => vec![r],
        Parsed::Two(a, b) => vec![a, b],
    };
    Some((dev, ts, recs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_scales_and_truncates() {
        assert_eq!(fixed("1.5", 9, "t").unwrap(), 1_500_000_000);
        assert_eq!(fixed("0.000000001", 9, "t").unwrap(), 1);
        assert_eq!(fixed("2", 3, "t").unwrap(), 2000);
        assert_eq!(fixed("1.23456", 3, "t").unwrap(), 1234);
        assert_eq!(fixed(".5", 1, "t").unwrap(), 5);
        assert!(fixed("1.x", 3, "t").is_err());
        assert!(fixed("99999999999999999999", 9, "t").is_err());
    }

    #[test]
    fn rwbs_covers_flush_forms() {
        assert_eq!(parse_rwbs("WS"), (false, Some(Op::Write)));
        assert_eq!(parse_rwbs("FWS"), (true, Some(Op::Write)));
        assert_eq!(parse_rwbs("WFS"), (false, Some(Op::Write)));
        assert_eq!(parse_rwbs("F"), (false, Some(Op::Flush)));
        assert_eq!(parse_rwbs("FF"), (true, Some(Op::Flush)));
        assert_eq!(parse_rwbs("D"), (false, Some(Op::Discard)));
        assert_eq!(parse_rwbs("RA"), (false, Some(Op::Read)));
        assert_eq!(parse_rwbs("N"), (false, None));
        let two = rwbs_records("FWS", 7, 0, 4096, 4096);
        assert!(
            matches!(two, Parsed::Two(f, w) if f.op == Op::Flush && w.op == Op::Write && w.len == 4096)
        );
    }

    #[test]
    fn tracepoint_lines_parse() {
        let l = "  kworker/u8:2-123 [001] ..... 5012.123456789: block_rq_issue: 7,0 WS 8192 () 2048 + 16 be,0,4 [kworker/u8:2]";
        let (dev, ts, recs) = parse_rq_issue(l).unwrap();
        assert_eq!(dev, (7, 0));
        assert_eq!(ts, 5_012_123_456_789);
        assert_eq!(recs.len(), 1);
        assert_eq!(
            (recs[0].op, recs[0].offset, recs[0].len),
            (Op::Write, 2048 * 512, 8192)
        );
        let f = "  jbd2/loop0-8-99 [000] ..... 1.000000001: block_rq_issue: 7,0 FF 0 () 0 + 0 none,0,0 [jbd2/loop0-8]";
        let (_, _, recs) = parse_rq_issue(f).unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].op, Op::Flush);
        assert!(parse_rq_issue("garbage").is_none());
    }
}
