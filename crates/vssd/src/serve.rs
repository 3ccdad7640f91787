//! `nowa vssd serve` as a library call: a typed [`ServeSpec`] in, a [`Served`] out. The CLI
//! turns flags into the spec, installs its Ctrl-C handler on the [`Stop`] handle it is given
//! once the mount is up, and prints what comes back.

use crate::{BenchResult, Disk, DiskSpec, Result, Snapshot};
use std::path::PathBuf;
use std::sync::Arc;

/// What to serve, and how.
#[derive(Debug, Clone)]
pub struct ServeSpec {
    /// The virtual SSD.
    pub disk: DiskSpec,
    /// The mount point (checked empty, or allowed with --force, by the caller).
    pub dir: PathBuf,
    /// Append the counters to this CSV file every second.
    pub csv: Option<PathBuf>,
    /// `Some(n)`: time `n` writes through the mount (the CPU cost per write), then unmount.
    pub bench_writes: Option<u64>,
    /// Seed of the benchmark's addresses (the FTL's seed is in `disk.sim`).
    pub seed: u64,
}

/// Unmounts a served vssd from another thread (Ctrl-C): the serve loop then ends and
/// [`serve`] returns its summary.
pub struct Stop(fuser::SessionUnmounter);

impl Stop {
    /// Unmount now.
    ///
    /// # Errors
    /// The unmount call failed (the mount stays; `nowa vssd stop DIR` retries it).
    pub fn stop(&mut self) -> std::io::Result<()> {
        self.0.unmount()
    }
}

/// What [`serve`] tells its caller once the mount answers.
#[derive(Debug, Clone)]
pub struct Serving {
    /// The disk files: `disk`, or `disk0 .. diskN-1`.
    pub files: String,
    /// The mount point.
    pub dir: PathBuf,
    /// This process (the daemon).
    pub pid: u32,
}

/// How the serve ended.
#[derive(Debug)]
pub enum Served {
    /// `bench_writes` was set: what the benchmark measured.
    Bench(BenchResult),
    /// The vssd was unmounted (Ctrl-C, `nowa vssd stop`, `umount`).
    Unmounted {
        /// The counters at the end.
        last: Box<Snapshot>,
        /// The per-second CSV, complete with its last row.
        csv: Option<PathBuf>,
        /// The session loop's end: an error reading /dev/fuse, or Ok.
        session: std::io::Result<()>,
    },
}

/// One line describing a disk's configuration: printed at start and served in the stats.
#[must_use]
pub fn describe(
    sim: &nowa_device::SimConfig,
    files: u16,
    backing: &crate::Backing,
    timing: &str,
    seed: u64,
) -> String {
    let ftl = sim.resolved_ftl();
    let mode = format!("{:?}", sim.mode);
    let backing = match backing {
        crate::Backing::Mem => "mem".to_owned(),
        crate::Backing::File(p) => p.display().to_string(),
    };
    format!(
        "{} {mode}, OP {:.2}% spare/logical, policy {}, placement {}, {files} file(s), backing {backing}, timing {timing}, seed {seed}",
        nowa_units::Bytes(ftl.logical_pages * 4096),
        ftl.op * 100.0,
        ftl.policy,
        ftl.placement.map_or_else(|| "streams".to_owned(), |p| p.to_string()),
    )
}

/// Opens the disk and mounts it at `spec.dir`; with `bench_writes`, measures and unmounts,
/// otherwise calls `on_serving` (with the handle that unmounts it) and serves until the file
/// system is unmounted, writing the CSV meanwhile.
///
/// # Errors
/// The disk cannot be built (configuration, backing file), the mount or the CSV fails.
///
/// # Panics
/// On `bench_writes: Some(0)` (the CLI's flag parser refuses it).
pub fn serve(spec: ServeSpec, on_serving: impl FnOnce(Stop, &Serving)) -> Result<Served> {
    let disk = Arc::new(Disk::open(spec.disk)?);
    if let Some(writes) = spec.bench_writes {
        assert!(writes > 0, "the benchmark times at least one write");
        return crate::bench(&disk, &spec.dir, writes, spec.seed).map(Served::Bench);
    }
    let mut m = crate::mount(disk.clone(), &spec.dir)?;
    let csv = match &spec.csv {
        Some(p) => Some(crate::CsvLog::start(disk.clone(), p)?),
        None => None,
    };
    let files = if disk.files() == 1 {
        "disk".to_owned()
    } else {
        format!("disk0 .. disk{}", disk.files() - 1)
    };
    let serving = Serving {
        files,
        dir: spec.dir.clone(),
        pid: std::process::id(),
    };
    on_serving(Stop(m.unmounter()), &serving);
    let session = m.run();
    let csv = csv.map(crate::CsvLog::finish).transpose()?;
    Ok(Served::Unmounted {
        last: Box::new(disk.snapshot()),
        csv,
        session,
    })
}
