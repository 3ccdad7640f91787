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
    /// Crash images per crash run (Table II): the run is stopped (SIGSTOP) and its file
    /// copied at `crash_points - 1` moments spread over the second half of the run, then
    /// killed (SIGKILL) at its end ([`Spec::crash_times`]).
    #[serde(default = "one")]
    pub crash_points: u32,
}

fn one() -> u32 {
    1
}

/// How the points run (not what they measure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exec {
    /// Paced points run at once (each a `nowa tpcc` child paced by its own simulated SSD);
    /// the crash runs (on a file, paced by the same timing model), one at a time.
    pub jobs: usize,
    /// Run again the points whose result in `work` is of other parameters (else refused).
    pub force: bool,
}

impl Exec {
    /// At most this many paced points at once by default.
    pub const MAX_DEFAULT_JOBS: usize = 4;

    /// `--jobs` (None: [`Exec::default_jobs`]) and `--force`, and where the count came from.
    #[must_use]
    pub fn new(spec: &Spec, jobs: Option<usize>, force: bool) -> (Exec, String) {
        let (jobs, why) = match jobs {
            Some(j) => (j, "--jobs".to_owned()),
            None => Self::default_jobs(spec),
        };
        (Exec { jobs, force }, why)
    }

    /// The default `--jobs` for `spec`, and why: as many paced points as 80% of the memory
    /// available holds (each child holds its simulated SSD's pages, [`Spec::child_bytes`]),
    /// at most [`Exec::MAX_DEFAULT_JOBS`] (the loads are CPU-bound; the paced runs use a few
    /// hundredths of a core each).
    #[must_use]
    pub fn default_jobs(spec: &Spec) -> (usize, String) {
        let per = spec.child_bytes();
        let Some(avail) = crate::resources::available_memory() else {
            return (1, "MemAvailable unknown".into());
        };
        let fit = usize::try_from(avail / 10 * 8 / per.max(1)).unwrap_or(usize::MAX);
        let jobs = fit.clamp(1, Self::MAX_DEFAULT_JOBS);
        (
            jobs,
            format!(
                "default: 80% of MemAvailable {} MiB / ~{} MiB per run, at most {}",
                avail >> 20,
                per >> 20,
                Self::MAX_DEFAULT_JOBS
            ),
        )
    }
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
            crash_points: 1,
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
            crash_points: 4,
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
            crash_points: 4,
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
        if !(1..=100).contains(&self.crash_points) {
            return bad(&format!(
                "--crash-points: {} is not in 1..=100",
                self.crash_points
            ));
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

    /// Memory of one paced child, bytes: its simulated SSD's pages (the device is sized so
    /// the loaded data fills half of it, `nowa tpcc --dataset-fill 0.5`) and the largest pool.
    #[must_use]
    pub fn child_bytes(&self) -> u64 {
        crate::resources::sim_device_bytes(self.db_bytes() * 2) + self.pool_bytes(self.big())
    }

    /// Seconds after the load at which a crash run leaves a crash image: `crash_points`
    /// moments evenly spread over the second half of the run (the checkpoint age has
    /// settled by then at the quick scale, docs/checkpointing.md section 1), the last at its
    /// end (the kill).
    ///
    /// # Panics
    /// Never: increasing moments, the last the run's end (asserted).
    #[must_use]
    pub fn crash_times(&self) -> Vec<f64> {
        let k = self.crash_points.max(1);
        let v: Vec<f64> = (1..k)
            .map(|i| self.seconds * f64::from(k + i) / f64::from(2 * k))
            .chain([self.seconds])
            .collect();
        assert!(
            v.windows(2).all(|w| w[0] < w[1]) && v.last() == Some(&self.seconds),
            "increasing crash moments ending at the run's end: {v:?}"
        );
        v
    }

    /// `--crash-points` over the scale's own count.
    #[must_use]
    pub fn with_crash_points(self, k: Option<u32>) -> Spec {
        Spec {
            crash_points: k.unwrap_or(self.crash_points),
            ..self
        }
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

    /// The `nowa tpcc` flags of the simulated SSD's timing model (every paced run's, and the
    /// crash runs' on a file: their page cleaner then keeps the model's clock too).
    #[must_use]
    pub fn timing_args(&self) -> [String; 3] {
        [
            format!("--sim-timing={}", self.sim_timing),
            format!("--media-bandwidth={}", self.media_bandwidth),
            format!("--read-bandwidth={}", self.read_bandwidth),
        ]
    }

    /// The timing model of [`Spec::timing_args`], to time a recovery's I/O by it.
    ///
    /// # Errors
    /// [`Error::Usage`]: `sim_timing` names no timing model.
    pub fn pacing(&self) -> Result<nowa_bench::ycsb::Pacing, Error> {
        use clap::ValueEnum as _;
        let t = crate::flags::SimTiming::from_str(&self.sim_timing, true)
            .map_err(|e| Error::Usage(format!("--sim-timing {}: {e}", self.sim_timing)))?;
        #[expect(clippy::cast_precision_loss, reason = "bandwidths below 2^50 bytes/s")]
        let bw = |b: u64| b as f64;
        Ok(nowa_bench::ycsb::Pacing {
            paced: true,
            media_bytes_per_sec: bw(self.media_bandwidth),
            read_bytes_per_sec: bw(self.read_bandwidth),
            chips: t.chips(),
        })
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
    /// The open's CPU time and I/O (by the machine's load unchanged, unlike `open_secs`).
    pub work: crate::tpcc::OpenWork,
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

/// Every paced run and crash of `spec` (`exec.jobs` paced points at once, the crashes one
/// at a time), then the figures under `spec.out`. A point whose result `work` holds for the
/// same parameters is reused ([`finished`]).
///
/// # Errors
/// Bad spec ([`Error::Usage`]), a run or a recovery fails, a file cannot be written.
///
/// # Panics
/// Never: every point runs once (asserted).
pub fn run(
    spec: &Spec,
    exec: Exec,
    host: &dyn Host,
    observe: Observer<'_>,
) -> Result<Outcome, Error> {
    prepare(spec, exec)?;
    let crash_points = crash_points(spec);
    let n_paced = spec.points().len();
    let total = (n_paced + crash_points.len()) as u64;
    let runs = paced_all(spec, exec, host, observe, total)?;
    let mut crashes = Vec::new();
    let mut crash_runs = 0;
    for p in crash_points.iter().take_while(|_| !Cancel.requested()) {
        observe(
            (runs.len() + crash_runs) as u64,
            total,
            &format!("crash {}", p.name()),
        );
        match runs::crash(spec, host, p)? {
            Some(rs) => crashes.extend(rs.into_iter().map(|r| (p.clone(), r))),
            None => break,
        }
        crash_runs += 1;
    }
    let ran = (runs.len() + crash_runs) as u64;
    // Ctrl-C: the figures and tables of the runs that finished, and what was left.
    let stop = Cancel.requested().then(|| {
        format!(
            "{} of {} paced runs and {} of {} crashes finished; the figures and tables cover them",
            runs.len(),
            n_paced,
            crash_runs,
            crash_points.len()
        )
    });
    assert!(stop.is_some() || ran == total, "every run ran");
    observe(ran, total, "figures");
    let mut o = figures::write_all(spec, &runs, &crashes, "png")?;
    o.interrupted = stop;
    Ok(o)
}

/// The paced points, `exec.jobs` at once (each worker takes the next point), in the order
/// of [`Spec::points`]; on Ctrl-C the ones that finished.
fn paced_all(
    spec: &Spec,
    exec: Exec,
    host: &dyn Host,
    observe: Observer<'_>,
    total: u64,
) -> Result<Vec<(Point, TpccReport)>, Error> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    type Slot = Option<Result<Option<TpccReport>, Error>>;
    let points = spec.points();
    let slots: std::sync::Mutex<Vec<Slot>> =
        std::sync::Mutex::new(points.iter().map(|_| None).collect());
    let (next, done, stop) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicBool::new(false),
    );
    let worker = || loop {
        let i = next.fetch_add(1, SeqCst);
        if i >= points.len() || Cancel.requested() || stop.load(SeqCst) {
            break;
        }
        observe(done.load(SeqCst) as u64, total, &points[i].name());
        let r = runs::paced(spec, host, &points[i]);
        // A failure stops the other workers taking points (theirs finish).
        stop.fetch_or(!matches!(r, Ok(Some(_))), SeqCst);
        done.fetch_add(1, SeqCst);
        slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)[i] = Some(r);
    };
    std::thread::scope(|s| {
        for _ in 0..exec.jobs.clamp(1, points.len().max(1)) {
            s.spawn(worker);
        }
    });
    let slots = slots
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut runs = Vec::new();
    for (p, slot) in points.into_iter().zip(slots) {
        match slot {
            Some(Err(e)) => return Err(e),
            Some(Ok(Some(r))) => runs.push((p, r)),
            Some(Ok(None)) | None => {}
        }
    }
    assert!(
        Cancel.requested() || stop.load(SeqCst) || runs.len() == spec.points().len(),
        "every paced point ran"
    );
    Ok(runs)
}

/// Checks the spec and creates `out` and `work` (before any work: a bad path is refused
/// first), and refuses a `work` whose results are of other parameters unless `exec.force`.
///
/// # Errors
/// [`Error::Usage`] naming the flag.
pub fn prepare(spec: &Spec, exec: Exec) -> Result<(), Error> {
    spec.check()?;
    if exec.jobs == 0 {
        return Err(Error::Usage("--jobs: at least 1".into()));
    }
    for (flag, d) in [("--out", &spec.out), ("--work", &spec.work)] {
        create_dir(flag, d)?;
    }
    let f = finished(spec);
    match f.other.first() {
        Some(file) if !exec.force => Err(Error::Usage(format!(
            "--work {}: {} holds a result of other parameters (pass --force to run its point again)",
            spec.work.display(),
            file.display()
        ))),
        _ => Ok(()),
    }
}

/// What `work` holds of `spec`'s points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finished {
    /// Points (paced and crash runs) whose result is there for the same parameters: reused.
    pub same: usize,
    /// Results there for the same point name but other parameters: run again only with
    /// `--force`.
    pub other: Vec<PathBuf>,
}

/// The finished points of `spec` in its `work` directory.
#[must_use]
pub fn finished(spec: &Spec) -> Finished {
    let mut f = Finished::default();
    let files = spec
        .points()
        .iter()
        .map(|p| runs::paced_result(spec, p))
        .chain(
            crash_points(spec)
                .iter()
                .map(|p| runs::crash_result(spec, p)),
        )
        .collect::<Vec<_>>();
    for (file, key) in files {
        match runs::reusable(&file, &key) {
            runs::Reuse::Same => f.same += 1,
            runs::Reuse::Other => f.other.push(file),
            runs::Reuse::Absent => {}
        }
    }
    f
}

/// What the command will run, for its banner: the paced runs and how many at once, the
/// crash runs and their images, the points reused from `work`.
#[must_use]
pub fn plan_lines(spec: &Spec, exec: Exec, why: &str) -> Vec<String> {
    let crashes = crash_points(spec).len();
    let mut v = vec![format!(
        "{} paced runs, {} at a time ({why}); {crashes} crash runs one at a time, {} crash images each (at {} s after the load)",
        spec.points().len(),
        exec.jobs,
        spec.crash_points,
        spec.crash_times()
            .iter()
            .map(|t| format!("{t:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    let f = finished(spec);
    if f.same > 0 {
        v.push(format!(
            "{} finished points in --work {} are reused (same parameters)",
            f.same,
            spec.work.display()
        ));
    }
    if !f.other.is_empty() {
        v.push(format!(
            "{} points in --work {} of other parameters run again (--force)",
            f.other.len(),
            spec.work.display()
        ));
    }
    v
}

/// The crash runs at the largest buffer: every count for every seed, each leaving
/// [`Spec::crash_times`] crash images (one crash lands at an arbitrary moment of the flush
/// cycle, so Table II's ratio of one crash per count swung from 1.30x to 2.63x between two
/// runs: the report takes the mean over the images), then the bounds at the first seed.
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

    /// Table II at the quick scale: at least 8 crash images per count (4 per run, 3 seeds),
    /// spread over the run's second half, the last at its end (the kill).
    #[test]
    fn the_quick_table_two_has_eight_crash_images_per_count() {
        let s = Spec::new("o".into(), "w".into()).quick();
        let t = s.crash_times();
        assert_eq!(t, vec![25.0, 30.0, 35.0, 40.0]);
        let per_count = crash_points(&s).iter().filter(|p| p.mcc == 3).count() * t.len();
        assert!(per_count >= 8, "{per_count} crash images per count");
        let one = Spec::new("o".into(), "w".into());
        assert_eq!(
            one.crash_times(),
            vec![one.seconds],
            "one crash: the kill at the end"
        );
        let lines = plan_lines(
            &s,
            Exec {
                jobs: 3,
                force: false,
            },
            "--jobs",
        );
        assert!(lines[0].contains("3 at a time (--jobs)"), "{lines:?}");
        assert!(
            lines[0].contains("4 crash images each (at 25.0, 30.0, 35.0, 40.0 s"),
            "{lines:?}"
        );
    }

    struct NoRun;
    impl Host for NoRun {
        fn exe(&self) -> Result<PathBuf, Error> {
            Err(Error::Usage("this test runs nothing".into()))
        }
        fn check(&self, _: &[String]) -> Result<Checked, Error> {
            Err(Error::Usage("this test runs nothing".into()))
        }
    }

    /// A grid cut short resumes: a point whose result `work` holds for the same parameters
    /// is reused (nothing runs), one of other parameters is refused naming --work unless
    /// --force, which runs it again (the old code reused any result of the point's name).
    #[test]
    fn a_finished_point_is_reused_and_one_of_other_parameters_needs_force() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut s = Spec::new(dir.path().join("o"), dir.path().join("w")).quick();
        let exec = Exec {
            jobs: 2,
            force: false,
        };
        prepare(&s, exec).expect("empty work");
        assert_eq!(finished(&s), Finished::default());
        let p = s.points()[0].clone();
        let (file, key) = runs::paced_result(&s, &p);
        std::fs::write(&file, report::tests::sample_json(100, 1.0, 1, 9)).expect("write");
        assert_eq!(
            finished(&s).other,
            vec![file.clone()],
            "a result without parameters"
        );
        std::fs::write(file.with_extension("args"), &key).expect("write");
        assert_eq!(finished(&s).same, 1);
        let r = runs::paced(&s, &NoRun, &p).expect("reused, not run");
        assert_eq!(r.map(|r| r.run.transactions), Some(100));
        assert!(plan_lines(&s, exec, "x")[1].starts_with("1 finished points in --work"));
        s.wal_limit = 64 << 20;
        let e = prepare(&s, exec).expect_err("other parameters");
        assert!(
            e.to_string().starts_with("--work ") && e.to_string().contains("--force"),
            "{e}"
        );
        prepare(
            &s,
            Exec {
                jobs: 2,
                force: true,
            },
        )
        .expect("--force");
        let e = runs::paced(&s, &NoRun, &p).expect_err("run again");
        assert!(e.to_string().contains("runs nothing"), "{e}");
        let e = prepare(
            &s,
            Exec {
                jobs: 0,
                force: true,
            },
        )
        .expect_err("no jobs");
        assert!(e.to_string().starts_with("--jobs"), "{e}");
    }

    /// A recovery's I/O is timed by the paced runs' model: 30 MB read at 30 MB/s and 10 MB
    /// written at 10 MB/s take 2 s, whatever the machine's load; the crash runs carry the same
    /// timing flags as the paced runs (the old code ran them unpaced).
    #[test]
    fn a_recovery_is_timed_by_the_paced_runs_model() {
        let s = Spec::new("o".into(), "w".into()).quick();
        let pacing = s.pacing().expect("bandwidth");
        let io = nowa_device::DeviceCounters {
            host_bytes_read: 30_000_000 / 4096 * 4096,
            host_bytes_written: 10_000_000 / 4096 * 4096,
            ..Default::default()
        };
        let secs = pacing.busy_secs(&nowa_device::DeviceCounters::default(), &io);
        assert!((secs - 2.0).abs() < 1e-3, "{secs}");
        let (file, key) = runs::crash_result(&s, &s.points()[0]);
        assert!(file.starts_with("w"), "{file:?}");
        for a in s.timing_args() {
            assert!(key.lines().any(|l| l == a), "{a} in {key}");
        }
        let mut bad = s;
        bad.sim_timing = "nand".into();
        let e = bad.pacing().expect_err("no such model");
        assert!(e.to_string().starts_with("--sim-timing"), "{e}");
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
