//! What the machine can give a run: memory available (the kernel's MemAvailable, lowered to
//! the cgroup's limit minus its usage when the process runs in a limited cgroup), checked
//! before anything large is allocated, so `--pool 10TiB` is refused in one line instead of
//! aborting on a failed allocation.

use crate::Error;
use nowa_units::Bytes;
use std::path::{Path, PathBuf};

/// A cgroup limit at or above this is "no limit" (cgroup v1 reports ~2^63).
const NO_LIMIT: u64 = 1 << 60;

fn read_u64(p: &Path) -> Option<u64> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// MemAvailable from /proc/meminfo, in bytes.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The directories holding this process's memory cgroup files (v2 unified, v1 memory
/// controller), most specific first.
fn cgroup_dirs() -> Vec<(PathBuf, &'static str, &'static str)> {
    let mut dirs = Vec::new();
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(ctrl), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let rel = path.trim_start_matches('/');
        if ctrl.is_empty() {
            dirs.push((
                Path::new("/sys/fs/cgroup").join(rel),
                "memory.max",
                "memory.current",
            ));
        } else if ctrl.split(',').any(|c| c == "memory") {
            let v1 = Path::new("/sys/fs/cgroup/memory");
            dirs.push((
                v1.join(rel),
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            ));
            dirs.push((
                v1.to_path_buf(),
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            ));
        }
    }
    dirs.push((
        PathBuf::from("/sys/fs/cgroup"),
        "memory.max",
        "memory.current",
    ));
    dirs
}

/// This process's cgroup memory limit, if it has one: (limit, usage, limit file).
fn cgroup_limit() -> Option<(u64, u64, PathBuf)> {
    cgroup_dirs().into_iter().find_map(|(dir, limit, used)| {
        let file = dir.join(limit);
        let l = read_u64(&file)?; // "max" (no limit) does not parse: skipped
        if l >= NO_LIMIT {
            return None;
        }
        Some((l, read_u64(&dir.join(used)).unwrap_or(0), file))
    })
}

/// Room left under this process's cgroup memory limit, if it has one.
fn cgroup_room() -> Option<u64> {
    cgroup_limit().map(|(l, used, _)| l.saturating_sub(used))
}

/// Bytes of memory a run may use: MemAvailable, or less under a cgroup limit. None when the
/// machine does not say (then nothing is refused).
#[must_use]
pub fn available_memory() -> Option<u64> {
    match (mem_available(), cgroup_room()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Memory kept for everything but the buffer pool (the process, the allocator, the page
/// cache the WAL and the run's files need) when the pool is sized from memory.
const POOL_RESERVE: u64 = 16 << 20;
/// Share of the memory left after [`POOL_RESERVE`] the pool may take, in percent.
const POOL_SHARE_PCT: u64 = 80;

/// A buffer pool size chosen from the memory this run may use (issue 16 item 5): 80% of
/// what is available after a 16 MiB reserve, less the pool's own 1/16 bookkeeping, at least
/// `min`. Returns the size and why (which limit it came from).
#[must_use]
pub fn pool_from_memory(min: u64) -> (u64, String) {
    let (avail, why) = match (mem_available(), cgroup_limit()) {
        (Some(a), Some((l, used, file))) if l.saturating_sub(used) < a => (
            l.saturating_sub(used),
            format!(
                "cgroup limit {} ({}) minus its usage {}",
                Bytes(l),
                file.display(),
                Bytes(used)
            ),
        ),
        (Some(a), _) => (a, format!("MemAvailable {}", Bytes(a))),
        (None, Some((l, used, file))) => (
            l.saturating_sub(used),
            format!("cgroup limit {} ({})", Bytes(l), file.display()),
        ),
        (None, None) => return (min, "the machine reports no memory figure".into()),
    };
    // The pool's bookkeeping is 1/16 of it: pool x 17/16 fits the share.
    let room = avail.saturating_sub(POOL_RESERVE) / 100 * POOL_SHARE_PCT;
    let pool = (room / 17 * 16 / 4096 * 4096).max(min);
    let why = format!(
        "{POOL_SHARE_PCT}% of the memory left after a {} reserve: {why}",
        Bytes(POOL_RESERVE)
    );
    (pool, why)
}

/// What a run would hold in memory: (flag that sets it, what it is, bytes).
pub type Need<'a> = (&'a str, &'a str, u64);

/// The share of the available memory a run may plan to hold (the rest: the process, the
/// allocator's slack, the page cache a run's files need).
const USABLE_SHARE: f64 = 0.9;

/// Refuses a run whose memory (the sum of `needs`) exceeds [`USABLE_SHARE`] of what is
/// available, naming the flag behind the largest part.
///
/// # Errors
/// [`Error::Usage`] (exit 2).
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn check_memory(needs: &[Need<'_>]) -> Result<(), Error> {
    assert!(!needs.is_empty(), "a memory check of nothing");
    let total = needs.iter().fold(0u64, |t, n| t.saturating_add(n.2));
    let Some(avail) = available_memory() else {
        return Ok(());
    };
    if total as f64 <= avail as f64 * USABLE_SHARE {
        return Ok(());
    }
    let parts: Vec<String> = needs
        .iter()
        .filter(|n| n.2 > 0)
        .map(|n| format!("{} {}", n.1, Bytes(n.2)))
        .collect();
    let (flag, _, _) = needs
        .iter()
        .max_by_key(|n| n.2)
        .copied()
        .unwrap_or(("", "", 0));
    Err(Error::Usage(format!(
        "{flag}: the run would hold about {} in memory ({}), but {} is available (MemAvailable, cgroup limit; a run may plan for 90% of it)",
        Bytes(total),
        parts.join(", "),
        Bytes(avail)
    )))
}

/// Refuses an output file whose directory does not exist, before the run (not after it, when
/// the results would be lost).
///
/// # Errors
/// [`Error::Usage`] naming `flag`.
pub fn check_output_file(flag: &str, path: Option<&Path>) -> Result<(), Error> {
    let Some(path) = path else {
        return Ok(());
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    check_dir(flag, path, dir)?;
    if path.is_dir() {
        return Err(Error::Usage(format!(
            "{flag} {}: is a directory",
            path.display()
        )));
    }
    Ok(())
}

/// Whether this process may create files in `dir` (access(2) W_OK: mode bits, ACLs and a
/// read-only file system).
fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated path that outlives the call; access() only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// `--device` of the engine benchmarks: `sim` and `mem` are in memory; a path is checked
/// before any work as an output file is (its directory exists and is writable), so a typo
/// is one line naming it, not an I/O error after the plan.
///
/// # Errors
/// [`Error::Usage`] naming `--device` and the path.
pub fn check_device_path(device: &str) -> Result<(), Error> {
    if matches!(device, "sim" | "mem") {
        return Ok(());
    }
    let path = Path::new(device);
    if path.exists() {
        return Ok(());
    }
    check_output_file("--device", Some(path))
}

/// Refuses a directory flag (`--image-dir`) naming no existing directory: the command
/// creates its files inside, never the directory itself (as root it would create any path).
///
/// # Errors
/// [`Error::Usage`] naming `flag`.
pub fn check_existing_dir(flag: &str, dir: &Path) -> Result<(), Error> {
    check_dir(flag, dir, dir)
}

fn check_dir(flag: &str, path: &Path, dir: &Path) -> Result<(), Error> {
    if !dir.is_dir() {
        return Err(Error::Usage(format!(
            "{flag} {}: the directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    if !writable(dir) {
        return Err(Error::Usage(format!(
            "{flag} {}: the directory {} is not writable",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// Checks an output file the command creates before any work: its directory exists, it is
/// not a directory, and it does not exist unless `force` (nothing is overwritten without
/// `--force`).
///
/// # Errors
/// [`Error::Usage`] naming `flag`.
pub fn check_new_output(flag: &str, path: &Path, force: bool) -> Result<(), Error> {
    check_output_file(flag, Some(path))?;
    if path.exists() && !force {
        return Err(Error::Usage(format!(
            "{flag} {}: exists (pass --force to overwrite)",
            path.display()
        )));
    }
    Ok(())
}

/// Creates an output directory before the run: the directory itself, never its parents (a
/// mistyped path run as root would create it anywhere, `/nonexistent/x` included).
///
/// # Errors
/// [`Error::Usage`] naming `flag` when the parent does not exist or the directory cannot be
/// created.
pub fn create_output_dir(flag: &str, dir: &Path) -> Result<(), Error> {
    if dir.is_dir() {
        return Ok(());
    }
    check_output_file(flag, Some(dir))?;
    std::fs::create_dir(dir)
        .map_err(|e| Error::Usage(format!("{flag} {}: cannot create it: {e}", dir.display())))
}

/// Checks an output directory before any work, without creating it: a path that is not a
/// directory is refused, and a directory that holds something without `force` (nothing is
/// overwritten without consent); a missing one needs an existing, writable parent.
///
/// # Errors
/// [`Error::Usage`] naming `flag` and the path.
pub fn check_out_dir(flag: &str, out: &Path, force: bool) -> Result<(), Error> {
    if !out.exists() {
        return check_output_file(flag, Some(out));
    }
    if !out.is_dir() {
        return Err(Error::Usage(format!(
            "{flag} {}: exists and is not a directory",
            out.display()
        )));
    }
    let empty = std::fs::read_dir(out)
        .map_err(|e| Error::Usage(format!("{flag} {}: {e}", out.display())))?
        .next()
        .is_none();
    if !empty && !force {
        return Err(Error::Usage(format!(
            "{flag} {}: exists and is not empty (pass --force to overwrite)",
            out.display()
        )));
    }
    check_dir(flag, out, out)
}

/// [`check_out_dir`], then creates the directory when missing (not its parents).
///
/// # Errors
/// As [`check_out_dir`] and [`create_output_dir`].
pub fn prepare_out_dir(flag: &str, out: &Path, force: bool) -> Result<(), Error> {
    check_out_dir(flag, out, force)?;
    create_output_dir(flag, out)
}

/// Memory of the FTL model of a device with `logical` and `physical` pages in `units` units:
/// the page maps (4 bytes per logical and per physical page) and 48 bytes per unit, as
/// `nowa_flash::Ftl::memory_bytes` counts them.
#[must_use]
pub fn ftl_bytes(logical: u64, physical: u64, units: u64) -> u64 {
    logical
        .saturating_add(physical)
        .saturating_mul(4)
        .saturating_add(units.saturating_mul(48))
}

/// Memory of a simulated SSD that stores data, with `capacity` bytes: every page written is
/// kept (4 KiB + an 8-byte slot), plus the FTL with 7% spare.
#[must_use]
pub fn sim_device_bytes(capacity: u64) -> u64 {
    let pages = capacity / 4096;
    let physical = pages.saturating_add(pages / 14);
    pages
        .saturating_mul(4096 + 8)
        .saturating_add(ftl_bytes(pages, physical, physical / 256))
}

/// `nowa vssd serve`: memory for the FTL (and the data, with `Backing::Mem`), disk space for a
/// backing file (it may grow to the capacity), before anything is mounted.
///
/// # Errors
/// [`Error::Usage`] naming `--capacity`.
pub fn check_vssd(cfg: &nowa_device::SimConfig, back: &nowa_vssd::Backing) -> Result<(), Error> {
    use nowa_vssd::{control, Backing};
    let l = cfg
        .resolved_ftl()
        .layout()
        .map_err(|e| Error::Usage(format!("device geometry: {e}")))?;
    let capacity = l.logical_pages * 4096;
    let maps = ftl_bytes(l.logical_pages, l.physical_pages, u64::from(l.units));
    let Backing::File(p) = back else {
        let data = capacity.saturating_add(capacity / 512);
        return check_memory(&[
            ("--capacity", "data", data),
            ("--capacity", "page maps", maps),
        ]);
    };
    check_memory(&[("--capacity", "page maps", maps)])?;
    let used = std::fs::metadata(p).map_or(0, |m| {
        std::os::unix::fs::MetadataExt::blocks(&m).saturating_mul(512)
    });
    let dir = control::absolute(p)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    match control::free_bytes(&dir) {
        Some(free) if free.saturating_add(used) < capacity => Err(Error::Usage(format!(
            "--capacity {}: the backing file may grow to it, but {} has {} free",
            Bytes(capacity),
            dir.display(),
            Bytes(free)
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_reports_memory_and_huge_runs_are_refused() {
        let avail = available_memory().expect("Linux reports MemAvailable");
        assert!(avail > 1 << 20);
        assert!(check_memory(&[("--pool", "buffer pool", 1 << 20)]).is_ok());
        let e = check_memory(&[
            ("--pool", "buffer pool", u64::MAX / 2),
            ("--capacity", "device", 1 << 30),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("--pool: the run would hold"), "{e}");
        assert!(
            e.contains("buffer pool") && e.contains("device 1 GiB"),
            "{e}"
        );
    }

    #[test]
    fn a_pool_from_memory_fits_what_is_available() {
        let (pool, why) = pool_from_memory(1 << 20);
        assert!(pool >= 1 << 20 && pool % 4096 == 0, "{pool}");
        assert!(check_memory(&[("--pool", "buffer pool", pool + pool / 16)]).is_ok());
        assert!(why.contains("reserve"), "{why}");
    }

    #[test]
    fn model_sizes() {
        assert_eq!(ftl_bytes(10, 20, 1), 168);
        assert!(sim_device_bytes(1 << 30) > 1 << 30);
        assert_eq!(sim_device_bytes(u64::MAX), u64::MAX, "saturates");
    }
}
