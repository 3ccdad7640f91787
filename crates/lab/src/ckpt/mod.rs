//! `nowa ckpt figures`: Park & Lee's hot-page-aware checkpointing experiments on TPC-C
//! (docs/checkpointing.md) with InnoDB's page cleaner (`--flushing innodb`): Figures 1-5,
//! Tables I and II, and the adaptive deferral under a redo bound, as one [`Spec`] and one
//! [`run`]. Every point is one `nowa tpcc` child process (the same binary, [`Host::exe`]),
//! so a run frees its memory and a crash is a real `kill -9`; a child's results are its
//! JSON report read as typed fields ([`report::TpccReport`]; a field missing or renamed is
//! an error naming the file, never a NaN), kept under `work` and reused when the command is
//! run again with the same parameters. A crashed database is recovered and checked by
//! [`Host::check`] (in the CLI's process: typed results, no output parsed).

mod figures;
pub mod report;
mod runs;

pub use figures::{Outcome, Point, Recovery, Row};
pub use report::TpccReport;
pub use runs::tpcc_report;

use crate::{Cancel, Error};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One `nowa ckpt figures` experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Directory of the figures (CSV, PNG).
    pub out: PathBuf,
    /// Directory of the per-run JSON (reused when present) and the crash images.
    pub work: PathBuf,
    /// Warehouses.
    pub warehouses: u32,
    /// Seconds of each run phase (after the load).
    pub seconds: f64,
    /// Buffer pool sizes, percent of the database after the load.
    pub buffers: Vec<u32>,
    /// max_checkpoint_count values.
    pub counts: Vec<u32>,
    /// Write paths: inplace, oop.
    pub paths: Vec<String>,
    /// Counts of the crash-and-recovery runs (Table II), at the largest buffer.
    pub recovery_counts: Vec<u32>,
    /// Adaptive deferral's redo bounds, run at the largest buffer, each crashed too.
    pub redo_bounds: Vec<u64>,
    /// WAL limit of every run.
    pub wal_limit: u64,
    /// innodb_io_capacity (pages per second).
    pub io_capacity: u64,
    /// innodb_io_capacity_max.
    pub io_capacity_max: u64,
    /// Simulated SSD timing model of the paced runs (bandwidth, femu, mqsim).
    pub sim_timing: String,
    /// Simulated SSD media write bandwidth, bytes per second.
    pub media_bandwidth: u64,
    /// Simulated SSD read bandwidth, bytes per second.
    pub read_bandwidth: u64,
    /// Worker threads of each run.
    pub threads: usize,
    /// Seed of the first repetition.
    pub seed: u64,
    /// Repetitions of every paced point, with seeds `seed`, `seed + 1`, ...: the spread.
    pub seeds: u32,
}

impl Spec {
    /// The defaults of `nowa ckpt figures` (the whole grid, one seed).
    #[must_use]
    pub fn new(out: PathBuf, work: PathBuf) -> Spec {
        Spec {
            out,
            work,
            warehouses: 1,
            seconds: 30.0,
            buffers: vec![10, 20, 30, 40, 50],
            counts: vec![0, 3, 4, 6, 8, 10],
            paths: vec!["inplace".into(), "oop".into()],
            recovery_counts: vec![0, 3, 8],
            redo_bounds: Vec::new(),
            wal_limit: 128 << 20,
            io_capacity: 1000,
            io_capacity_max: 10_000,
            sim_timing: "bandwidth".into(),
            media_bandwidth: 10_000_000,
            read_bandwidth: 30_000_000,
            threads: 2,
            seed: 42,
            seeds: 1,
        }
    }

    /// The quick scale (`--quick`, what `nowa reproduce --quick` runs): 1 warehouse, buffers
    /// 20 and 50%, counts 0, 3 and 8 in place, 40 s runs, 3 seeds, a WAL of 32 MiB, crashes
    /// at counts 0 and 3 for each seed. The WAL sets how long the checkpoint age takes to settle: with
    /// 128 MiB a 40 s run is all warm-up and vanilla's TPS varies 1.4x between seeds; with
    /// 32 MiB the seeds agree within 5% (docs/checkpointing.md section 1).
    #[must_use]
    pub fn quick(self) -> Spec {
        Spec {
            warehouses: 1,
            seconds: 40.0,
            buffers: vec![20, 50],
            counts: vec![0, 3, 8],
            paths: vec!["inplace".into()],
            recovery_counts: vec![0, 3],
            wal_limit: 32 << 20,
            seeds: 3,
            ..self
        }
    }

    /// The paper's setup, scaled (`--full`): 20 warehouses (1.7 GiB of pages after the
    /// load), buffers 10, 20 and 50%, the paper's counts 0, 3, 4, 6, 8, 10 in place, 300 s
    /// runs, crashes at 0 and 3, a WAL of 256 MiB (the quick scale's 32 MiB per 98 MiB of
    /// data, scaled to the run's redo rate; the paper's 15 GB redo log on 54 GB).
    #[must_use]
    pub fn full(self) -> Spec {
        Spec {
            warehouses: 20,
            seconds: 300.0,
            buffers: vec![10, 20, 50],
            counts: vec![0, 3, 4, 6, 8, 10],
            paths: vec!["inplace".into()],
            recovery_counts: vec![0, 3],
            wal_limit: 256 << 20,
            seeds: 1,
            ..self
        }
    }

    /// Bad values, each naming its flag.
    ///
    /// # Errors
    /// [`Error::Usage`].
    pub fn check(&self) -> Result<(), Error> {
        let bad = |m: &str| Err(Error::Usage(m.to_owned()));
        if self.buffers.is_empty() || self.counts.is_empty() || self.paths.is_empty() {
            return bad("--buffers, --counts, --paths: at least one value each");
        }
        if let Some(b) = self.buffers.iter().find(|b| !(1..=100).contains(*b)) {
            return bad(&format!("--buffers: {b} is not a percent in 1..=100"));
        }
        if let Some(p) = self.paths.iter().find(|p| *p != "inplace" && *p != "oop") {
            return bad(&format!("--paths: {p} (expected inplace or oop)"));
        }
        if self.seeds == 0 || self.warehouses == 0 || self.seconds <= 0.0 {
            return bad("--seeds, --warehouses, --seconds: at least 1");
        }
        Ok(())
    }

    /// The database after the load, bytes (`nowa_tpcc::load::loaded_bytes`: 98 MiB at 1
    /// warehouse, measured 98.2): the base of the buffer fractions.
    #[must_use]
    pub fn db_bytes(&self) -> u64 {
        nowa_tpcc::load::loaded_bytes(self.warehouses)
    }

    /// The buffer pool of `pct` percent of the database after the load, bytes (at least
    /// 1 MiB).
    ///
    /// # Panics
    /// If `pct` is not a percent (checked by [`Spec::check`]).
    #[must_use]
    pub fn pool_bytes(&self, pct: u32) -> u64 {
        assert!((1..=100).contains(&pct), "buffer {pct}% of the database");
        let pool = (self.db_bytes() * u64::from(pct) / 100).max(1 << 20);
        assert!(
            pool <= self.db_bytes().max(1 << 20),
            "a pool within the database"
        );
        pool
    }

    /// The largest buffer (Table I's, the crashes').
    #[must_use]
    pub fn big(&self) -> u32 {
        self.buffers.iter().copied().max().unwrap_or(50)
    }

    /// Every paced point: the grid for each seed, then the adaptive bounds at the largest
    /// buffer.
    ///
    /// # Panics
    /// Never: one point per grid cell, bound and seed (asserted).
    #[must_use]
    pub fn points(&self) -> Vec<Point> {
        let mut v = Vec::new();
        for s in 0..u64::from(self.seeds) {
            for path in &self.paths {
                for &b in &self.buffers {
                    for &m in &self.counts {
                        v.push(Point::new(path, b, m, None, self.seed + s));
                    }
                }
            }
            for &r in &self.redo_bounds {
                v.push(Point::new("inplace", self.big(), 0, Some(r), self.seed + s));
            }
        }
        let grid = self.paths.len() * self.buffers.len() * self.counts.len();
        assert_eq!(
            v.len(),
            (grid + self.redo_bounds.len()) * self.seeds as usize,
            "one point per grid cell, bound and seed"
        );
        v
    }

    /// The `nowa tpcc` flags of a point (device and duration left to the caller).
    #[must_use]
    pub fn tpcc_args(&self, p: &Point) -> Vec<String> {
        let mut v: Vec<String> = vec![
            "-q".into(),
            format!("--warehouses={}", self.warehouses),
            format!("--threads={}", self.threads),
            format!("--seed={}", p.seed),
            format!("--pool={}", self.pool_bytes(p.buffer_pct)),
            format!("--wal-limit={}", self.wal_limit),
            format!("--max-checkpoint-count={}", p.mcc),
            format!("--write-path={}", p.path),
            "--flushing=innodb".into(),
            format!("--io-capacity={}", self.io_capacity),
            format!("--io-capacity-max={}", self.io_capacity_max),
        ];
        if let Some(b) = p.redo_bound {
            v.push(format!("--max-redo-bytes={b}"));
        }
        v
    }

    /// The setup line of the figures' subtitles.
    #[must_use]
    pub fn setup(&self) -> String {
        format!(
            "TPC-C {} wh (~{} MiB), {} thr, {:.0} s runs, {} seed(s) from {}, WAL {} MiB, simulated SSD {} MB/s, io_capacity {}/{}; paper: 500 wh, 1 h",
            self.warehouses,
            self.db_bytes() >> 20,
            self.threads,
            self.seconds,
            self.seeds,
            self.seed,
            self.wal_limit >> 20,
            self.media_bandwidth / 1_000_000,
            self.io_capacity,
            self.io_capacity_max
        )
    }
}

/// What a crash run's recovery found (`nowa tpcc --check-only` as a library).
#[derive(Debug, Clone)]
pub struct Checked {
    /// Seconds to open (recover) the database.
    pub open_secs: f64,
    /// The recovery's report (None: opened without recovery).
    pub recovery: Option<nowa_engine::RecoveryReport>,
    /// The TPC-C consistency conditions hold.
    pub consistent: bool,
}

/// What the experiment needs from the program it runs in.
pub trait Host: Sync {
    /// The nowa binary whose `tpcc` subcommand runs each point.
    ///
    /// # Errors
    /// It cannot be located.
    fn exe(&self) -> Result<PathBuf, Error>;
    /// `nowa tpcc --check-only ARGS`: open (recover) and check the database.
    ///
    /// # Errors
    /// Opening or checking fails.
    fn check(&self, args: &[String]) -> Result<Checked, Error>;
}

/// Progress: `(done, total, what)` in runs.
pub type Observer<'a> = &'a (dyn Fn(u64, u64, &str) + Sync);

/// Every paced run and crash of `spec`, then the figures under `spec.out`.
///
/// # Errors
/// Bad spec ([`Error::Usage`]), a run or a recovery fails, a file cannot be written.
///
/// # Panics
/// Never: every point runs once (asserted).
pub fn run(spec: &Spec, host: &dyn Host, observe: Observer<'_>) -> Result<Outcome, Error> {
    prepare(spec)?;
    let points = spec.points();
    let crash_points = crash_points(spec);
    let total = (points.len() + crash_points.len()) as u64;
    let mut runs = Vec::new();
    for (i, p) in points.into_iter().enumerate() {
        if Cancel.requested() {
            break;
        }
        observe(i as u64, total, &p.name());
        match runs::paced(spec, host, &p)? {
            Some(r) => runs.push((p, r)),
            None => break,
        }
    }
    let mut crashes = Vec::new();
    for p in crash_points.into_iter().take_while(|_| !Cancel.requested()) {
        observe(
            (runs.len() + crashes.len()) as u64,
            total,
            &format!("crash {}", p.name()),
        );
        match runs::crash(spec, host, &p)? {
            Some(r) => crashes.push((p, r)),
            None => break,
        }
    }
    let ran = (runs.len() + crashes.len()) as u64;
    // Ctrl-C: the figures and tables of the runs that finished, and what was left.
    let stop = Cancel.requested().then(|| {
        format!(
            "{} of {} paced runs and {} of {} crashes finished; the figures and tables cover them",
            runs.len(),
            spec.points().len(),
            crashes.len(),
            total - spec.points().len() as u64
        )
    });
    assert!(stop.is_some() || ran == total, "every run ran");
    observe(ran, total, "figures");
    let mut o = figures::write_all(spec, &runs, &crashes, "png")?;
    o.interrupted = stop;
    Ok(o)
}

/// Checks the spec and creates `out` and `work` (before any work: a bad path is refused
/// first).
///
/// # Errors
/// [`Error::Usage`] naming the flag.
pub fn prepare(spec: &Spec) -> Result<(), Error> {
    spec.check()?;
    for (flag, d) in [("--out", &spec.out), ("--work", &spec.work)] {
        create_dir(flag, d)?;
    }
    Ok(())
}

/// The crash-and-recovery points at the largest buffer: every count for every seed (one
/// crash lands at an arbitrary moment of the flush cycle, so Table II's ratio of one crash
/// per count swung from 1.30x to 2.63x between two runs: the report takes the mean over the
/// seeds), then the bounds at the first seed.
fn crash_points(spec: &Spec) -> Vec<Point> {
    let mut v = Vec::new();
    for s in 0..u64::from(spec.seeds) {
        for &m in &spec.recovery_counts {
            v.push(Point::new("inplace", spec.big(), m, None, spec.seed + s));
        }
    }
    for &b in &spec.redo_bounds {
        v.push(Point::new("inplace", spec.big(), 0, Some(b), spec.seed));
    }
    assert_eq!(
        v.len(),
        spec.recovery_counts.len() * spec.seeds as usize + spec.redo_bounds.len(),
        "one crash per count and seed, one per bound"
    );
    v
}

/// Creates an output directory (not its parents: a typo is not silently created).
fn create_dir(flag: &str, d: &Path) -> Result<(), Error> {
    if d.is_dir() {
        return Ok(());
    }
    let parent = d.parent().filter(|p| !p.as_os_str().is_empty());
    if parent.is_some_and(|p| !p.is_dir()) {
        return Err(Error::Usage(format!(
            "{flag} {}: its parent directory does not exist",
            d.display()
        )));
    }
    std::fs::create_dir(d).map_err(|e| Error::Usage(format!("{flag} {}: {e}", d.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_uses_the_innodb_page_cleaner_and_its_seed() {
        let s = Spec::new("o".into(), "w".into()).quick();
        assert!(s.seconds >= 10.0, "runs span several cleaner seconds");
        let ps = s.points();
        assert_eq!(ps.len(), 2 * 3 * 3, "buffers x counts x seeds");
        let crashes = crash_points(&s);
        assert_eq!(
            crashes.len(),
            2 * 3,
            "counts 0 and 3 crashed at each of the 3 seeds"
        );
        assert_eq!(crashes[5].seed, 44, "{:?}", crashes[5]);
        let args = s.tpcc_args(&ps[ps.len() - 1]);
        assert!(args.iter().any(|a| a == "--flushing=innodb"), "{args:?}");
        assert!(args.iter().any(|a| a == "--io-capacity=1000"), "{args:?}");
        assert!(args.iter().any(|a| a == "--seed=44"), "{args:?}");
    }

    #[test]
    fn full_is_the_twenty_warehouse_setup() {
        let s = Spec::new("o".into(), "w".into()).full();
        assert_eq!(s.warehouses, 20);
        assert_eq!(
            s.pool_bytes(50),
            (20 * 88 + 10) << 19,
            "half of 20 x 88 MiB + 10 MiB"
        );
        let args = s.tpcc_args(&s.points()[0]);
        assert!(args.iter().any(|a| a == "--warehouses=20"), "{args:?}");
    }

    #[test]
    fn bad_values_name_their_flag() {
        let mut s = Spec::new("o".into(), "w".into());
        s.paths = vec!["sideways".into()];
        let e = s.check().expect_err("bad path");
        assert!(e.to_string().starts_with("--paths"), "{e}");
        s.paths = vec!["inplace".into()];
        s.buffers = vec![0];
        let e = s.check().expect_err("bad buffer");
        assert!(e.to_string().starts_with("--buffers"), "{e}");
    }
}
