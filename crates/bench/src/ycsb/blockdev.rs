//! The kernel's own counters of the block device under a file or device target
//! (/sys/dev/block/MAJ:MIN/stat): what really reached the device, the file system's journal
//! and metadata included, as opposed to the engine's "physical B/op" (its own bytes only).

use super::measure::BlockDevStat;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A reading of one block device's stat file.
#[derive(Debug, Clone)]
pub struct BlockDevReading {
    name: String,
    stat: PathBuf,
    fields: Vec<u64>,
}

fn major_minor(dev: u64) -> (u64, u64) {
    // glibc's gnu_dev_major / gnu_dev_minor.
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0fff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x00ff);
    (major, minor)
}

fn read_fields(stat: &Path) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(stat).ok()?;
    let f: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    (f.len() >= 11).then_some(f)
}

impl BlockDevReading {
    /// The counters of the block device holding `path` (a block device node: that device;
    /// a file: the device of its file system). None when /sys does not know it (overlay
    /// and network file systems, containers without /sys/dev/block).
    #[must_use]
    pub fn of(path: &Path) -> Option<BlockDevReading> {
        let md = std::fs::metadata(path).ok()?;
        let dev = if is_block(&md) { md.rdev() } else { md.dev() };
        let (major, minor) = major_minor(dev);
        let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
        let dir = std::fs::canonicalize(&link).ok()?;
        let name = dir.file_name()?.to_string_lossy().into_owned();
        let stat = dir.join("stat");
        let fields = read_fields(&stat)?;
        Some(BlockDevReading { name, stat, fields })
    }

    /// Read the same device again.
    #[must_use]
    pub fn again(&self) -> Option<BlockDevReading> {
        Some(BlockDevReading {
            fields: read_fields(&self.stat)?,
            ..self.clone()
        })
    }

    /// The differences from `self` to `later`, per operation over `ops` operations.
    #[must_use]
    pub fn since(&self, later: &BlockDevReading, ops: u64) -> BlockDevStat {
        let d = |i: usize| {
            later
                .fields
                .get(i)
                .copied()
                .unwrap_or(0)
                .saturating_sub(self.fields.get(i).copied().unwrap_or(0))
        };
        // Fields: reads, merged, sectors read, ms, writes, merged, sectors written, ms,
        // in flight, io ms, weighted ms, discards (4), flushes, flush ms.
        let written = d(6) * 512;
        BlockDevStat {
            name: self.name.clone(),
            bytes_written: written,
            bytes_read: d(2) * 512,
            writes: d(4),
            flushes: d(15),
            bytes_written_per_op: written as f64 / ops.max(1) as f64,
        }
    }
}

fn is_block(md: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    md.file_type().is_block_device()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_split_as_glibc_does() {
        assert_eq!(major_minor(0x0803), (8, 3));
        assert_eq!(major_minor((259 << 8) | 1), (259, 1));
    }

    #[test]
    fn a_reading_of_nothing_is_zero_per_op() {
        let r = BlockDevReading {
            name: "x".into(),
            stat: PathBuf::from("/nonexistent"),
            fields: vec![0; 17],
        };
        let mut later = r.clone();
        later.fields[6] = 8;
        later.fields[15] = 2;
        let s = r.since(&later, 4);
        assert_eq!((s.bytes_written, s.flushes), (4096, 2));
        assert!((s.bytes_written_per_op - 1024.0).abs() < 1e-9);
        assert!(r.again().is_none());
    }
}
