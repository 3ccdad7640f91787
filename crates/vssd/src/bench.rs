//! `nowa vssd serve --bench`: the CPU cost of one 4 KiB write through the whole virtual SSD
//! (the program's system call, the kernel's FUSE round trip, the daemon, the FTL and the data
//! copy), as process CPU time (user + system, every thread) per write.

use crate::{Disk, Result, VssdError, PAGE};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

/// What the benchmark measured.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct BenchResult {
    /// Writes timed.
    pub writes: u64,
    /// Process CPU time per write through the mount, in microseconds.
    pub cpu_us_per_write: f64,
    /// CPU time per write of the daemon's I/O path alone (no kernel, no FUSE), in microseconds.
    pub path_cpu_us_per_write: f64,
    /// Wall time per write through the mount, in microseconds.
    pub wall_us_per_write: f64,
    /// SSD write amplification of the writes through the mount (flash pages programmed, GC
    /// copies included, per page written): above 1 when GC ran while they were timed.
    pub waf: f64,
}

/// A page-aligned buffer of `pages` pages (O_DIRECT needs aligned memory).
fn aligned(pages: usize) -> nowa_device::AlignedBuf {
    nowa_device::AlignedBuf::zeroed(pages * nowa_device::BLOCK_SIZE, nowa_device::BLOCK_SIZE)
}

/// Pseudo-random page numbers (xorshift): the benchmark needs no statistical quality.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Mounts `disk` at `dir` with its daemon on a thread of this process, writes `writes`
/// uniform random 4 KiB pages with O_DIRECT to its first disk file, then the same number to
/// `disk` directly, and divides the CPU time of each by the writes; unmounts.
///
/// # Errors
/// The mount fails, or the file cannot be opened or written.
pub fn bench(disk: &Arc<Disk>, dir: &Path, writes: u64, seed: u64) -> Result<BenchResult> {
    let mut m = crate::mount(disk.clone(), dir)?;
    let mut unmounter = m.unmounter();
    let daemon = std::thread::spawn(move || m.run());
    let name = if disk.files() == 1 { "disk" } else { "disk0" };
    let r = bench_file(disk, &dir.join(name), writes, seed);
    let u = unmounter.unmount().map_err(|source| VssdError::Io {
        path: dir.to_path_buf(),
        source,
    });
    let _ = daemon.join();
    u?;
    r
}

fn bench_file(disk: &Arc<Disk>, file: &Path, writes: u64, seed: u64) -> Result<BenchResult> {
    let io = |source| VssdError::Io {
        path: file.to_path_buf(),
        source,
    };
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(file)
        .map_err(io)?;
    let pages = disk.file_bytes() / PAGE;
    assert!(pages > 0 && writes > 0, "a benchmark writes something");
    let mut buf = aligned(1);
    let mut x = seed | 1;
    let s0 = disk.snapshot();
    let (c0, t0) = (
        nowa_units::cpu::process_cpu_secs(),
        std::time::Instant::now(),
    );
    for i in 0..writes {
        buf[..8].copy_from_slice(&i.to_le_bytes());
        f.write_all_at(&buf[..], next(&mut x) % pages * PAGE)
            .map_err(io)?;
    }
    let (cpu, wall) = (
        nowa_units::cpu::process_cpu_secs() - c0,
        t0.elapsed().as_secs_f64(),
    );
    let s1 = disk.snapshot();
    let host = s1.host_write_bytes - s0.host_write_bytes;
    assert_eq!(host, writes * PAGE, "every timed write reached the disk");
    #[expect(clippy::cast_precision_loss, reason = "byte counts")]
    let waf = (s1.media_write_bytes - s0.media_write_bytes) as f64 / host as f64;
    let c1 = nowa_units::cpu::process_cpu_secs();
    for _ in 0..writes {
        disk.write(0, next(&mut x) % pages * PAGE, &buf[..])?;
    }
    let path = nowa_units::cpu::process_cpu_secs() - c1;
    #[expect(clippy::cast_precision_loss, reason = "a count of writes")]
    let n = writes as f64;
    Ok(BenchResult {
        writes,
        cpu_us_per_write: cpu / n * 1e6,
        path_cpu_us_per_write: path / n * 1e6,
        wall_us_per_write: wall / n * 1e6,
        waf,
    })
}
