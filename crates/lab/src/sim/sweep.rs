//! `sim sweep`: the ssd-iq figures the simulator reproduces (Fig. 3b, 4b, 7a) as grids of
//! simulations run in parallel around a base [`Spec`], each point over several seeds (mean and
//! min-max band), one CSV and one plot (PNG + SVG) per figure. Nothing already written is
//! overwritten without `force`.

use super::{sim_error, Spec};
use crate::{Cancel, Error, Identity, Progress, Report};
use nowa_bench::sim::sweep::{self, Figure, Row};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The most seeds per point (each seed is a full copy of the grid).
pub const MAX_SEEDS: u32 = 64;

/// A sweep, resolved: what ran (a result's `nowa.spec`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// The figures, in order (`["fig3b", "fig4b", "fig7a"]`).
    pub figures: Vec<Figure>,
    /// The simulation every point varies (its seed is the first seed).
    pub base: Spec,
    /// Runs per point: seeds `base.seed`, `base.seed + 1`, ...
    pub seeds: u32,
    /// Worker threads.
    pub threads: usize,
    /// The directory of `sim-<figure>.csv|png|svg`.
    pub out: PathBuf,
    /// Overwrite files already in `out`.
    pub force: bool,
}

/// One figure's result.
#[derive(Debug, Clone, Serialize)]
pub struct FigureResult {
    /// `fig3b`, `fig4b`, `fig7a`.
    pub figure: Figure,
    /// The chart's title.
    pub title: String,
    /// One row per run (every seed).
    pub rows: Vec<Row>,
    /// The files written (CSV, PNG, SVG).
    pub files: Vec<PathBuf>,
}

/// What a sweep produced.
#[derive(Debug, Clone, Serialize)]
pub struct SweepResult {
    /// One entry per figure that ran.
    pub figures: Vec<FigureResult>,
    /// Ctrl-C stopped the sweep before these figures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<Figure>,
}

/// A sweep's outcome under its identity.
pub type SweepOutcome = Report<SweepResult>;

/// The files a figure writes under `out`.
#[must_use]
pub fn files(out: &Path, fig: Figure) -> [PathBuf; 3] {
    ["csv", "png", "svg"].map(|ext| out.join(format!("sim-{fig}.{ext}")))
}

impl SweepSpec {
    /// The sweep's first line (without the command): seeds, device, OP, threads.
    #[must_use]
    pub fn announce(&self) -> String {
        format!(
            "seeds {}..{}, device {}, OP {:.2}% spare/logical, {} threads",
            self.base.seed,
            self.base.seed + u64::from(self.seeds) - 1,
            nowa_units::Bytes(self.base.capacity),
            self.base.op * 100.0,
            self.threads
        )
    }

    /// Checks what the flags' parsers cannot: the base spec, the seeds, the threads, and (without
    /// `force`) that no output exists yet.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field or flag.
    pub fn check(&self) -> Result<(), Error> {
        self.base.check()?;
        if self.figures.is_empty() {
            return Err(Error::Usage("--figure: no figure given".into()));
        }
        if !(1..=MAX_SEEDS).contains(&self.seeds) {
            return Err(Error::Usage(format!(
                "--seeds {}: between 1 and {MAX_SEEDS}",
                self.seeds
            )));
        }
        if !(1..=1024).contains(&self.threads) {
            return Err(Error::Usage(format!(
                "--threads {}: between 1 and 1024",
                self.threads
            )));
        }
        if self.base.trace.is_some() {
            return Err(Error::Usage(
                "--trace: a sweep varies the synthetic workload, not a trace".into(),
            ));
        }
        self.check_outputs()
    }

    /// Without `force`, refuses an `out` that holds any file the sweep would write.
    fn check_outputs(&self) -> Result<(), Error> {
        if self.force {
            return Ok(());
        }
        let taken = self.figures.iter().flat_map(|&f| files(&self.out, f));
        match taken.into_iter().find(|p| p.exists()) {
            Some(p) => Err(Error::Usage(format!(
                "--out {}: {} exists (pass --force to overwrite)",
                self.out.display(),
                p.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            ))),
            None => Ok(()),
        }
    }

    /// The spec of one of its figures (the identity of that figure's files).
    #[must_use]
    pub fn of_figure(&self, fig: Figure) -> SweepSpec {
        SweepSpec {
            figures: vec![fig],
            ..self.clone()
        }
    }
}

/// Runs every figure of `spec` (after [`SweepSpec::check`]); `progress` counts simulations.
/// Ctrl-C ([`Cancel`]) stops before the next figure; the figures done are written and
/// returned, the rest named in `not_run`.
///
/// # Errors
/// [`Error::Usage`] for a spec that cannot run, [`Error::Failed`] for a failing simulation,
/// [`Error::Io`] for an output that cannot be written.
///
/// # Panics
/// If more simulations ran than were planned (a bug).
pub fn run(
    spec: &SweepSpec,
    progress: Option<Progress<'_>>,
    cancel: &Cancel,
) -> Result<SweepOutcome, Error> {
    spec.check()?;
    let nowa = Identity::now("sim-sweep", spec, spec.base.seed);
    let base = spec.base.bench()?;
    let grids: Vec<(Figure, Vec<sweep::Point>)> = spec
        .figures
        .iter()
        .map(|&f| (f, sweep::seeded_points(f, &base, spec.seeds)))
        .collect();
    for (f, pts) in &grids {
        for p in pts {
            p.spec.ftl.layout().map_err(|e| {
                Error::Usage(format!(
                    "device geometry of a {f} point (--capacity, --pages-per-block, --blocks-per-superblock): {e}"
                ))
            })?;
        }
    }
    std::fs::create_dir_all(&spec.out).map_err(|e| Error::io(&spec.out, e))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(spec.threads)
        .build()
        .map_err(|e| Error::failed("starting the worker threads", e))?;
    let total: u64 = grids.iter().map(|g| g.1.len() as u64).sum();
    let mut done = 0u64;
    let mut result = SweepResult {
        figures: Vec::new(),
        not_run: Vec::new(),
    };
    for (fig, points) in grids {
        if cancel.requested() {
            result.not_run.push(fig);
            continue;
        }
        let tick = |d: usize, _: usize| {
            if let Some(p) = progress {
                p(done + d as u64, total);
            }
        };
        let results = pool
            .install(|| sweep::run_points(&points, &tick))
            .map_err(sim_error)?;
        done += points.len() as u64;
        result
            .figures
            .push(write_figure(spec, fig, &points, &results)?);
    }
    assert!(done <= total, "no more runs than planned");
    let ran = result.figures.len() + result.not_run.len();
    assert_eq!(
        ran,
        spec.figures.len(),
        "every figure ran or is named as not run"
    );
    Ok(Report { nowa, result })
}

/// The CSV (under the figure's identity line) and the plots of one figure.
fn write_figure(
    spec: &SweepSpec,
    fig: Figure,
    points: &[sweep::Point],
    results: &[nowa_bench::sim::SimResult],
) -> Result<FigureResult, Error> {
    let sw = sweep::figure_sweep(fig, points, results);
    assert_eq!(sw.rows.len(), points.len(), "one row per run");
    // WAF >= 1 without a write buffer; a buffer absorbs overwrites before the FTL, so a
    // buffered point at high skew writes less flash than the host asked (ssd-iq Fig. 4b:
    // seed 43 or 44 at zipf 1.4 on 8 GiB comes out below 1).
    assert!(
        sw.rows
            .iter()
            .all(|r| r.waf >= 1.0 - 1e-9 || (r.write_buffer_pages > 0 && r.waf > 0.0)),
        "WAF >= 1 (> 0 with a write buffer)"
    );
    let [csv, png, svg] = files(&spec.out, fig);
    let id = Identity::now("sim-sweep", &spec.of_figure(fig), spec.base.seed);
    let file = crate::csv_file(&csv, &id)?;
    sweep::write_csv(&sw.rows, file).map_err(|e| Error::io(&csv, e))?;
    for p in [&png, &svg] {
        sweep::write_plot(&sw, p).map_err(|e| Error::io(p, std::io::Error::other(e)))?;
    }
    Ok(FigureResult {
        figure: fig,
        title: sw.chart.title.clone(),
        rows: sw.rows,
        files: vec![csv, png, svg],
    })
}

/// The table the CLI prints for one figure: a row per series and x, the mean over seeds and,
/// with several seeds, the min and max.
///
/// # Panics
/// If the figure has no runs (a bug: a figure has points).
#[must_use]
pub fn table(f: &FigureResult) -> String {
    use std::fmt::Write as _;
    assert!(!f.rows.is_empty(), "a figure has runs");
    let mut s = format!("{}\n", f.title);
    let mut cells: Vec<(&str, f64, Vec<&Row>)> = Vec::new();
    for r in &f.rows {
        match cells.iter_mut().find(|c| c.0 == r.series && c.1 == r.x) {
            Some(c) => c.2.push(r),
            None => cells.push((&r.series, r.x, vec![r])),
        }
    }
    let seeds = cells.iter().map(|c| c.2.len()).max().unwrap_or(1);
    let _ = write!(s, "{:<28} {:>8} {:>8} {:>8}", "series", "x", "WAF", "y");
    if seeds > 1 {
        let _ = write!(s, " {:>8} {:>8}  (mean of {seeds} seeds)", "y min", "y max");
    }
    s.push('\n');
    for (series, x, rows) in &cells {
        assert!(!rows.is_empty(), "a cell has a run");
        let n = rows.len() as f64;
        let waf = rows.iter().map(|r| r.waf).sum::<f64>() / n;
        let y = rows.iter().map(|r| r.y).sum::<f64>() / n;
        let _ = write!(s, "{series:<28} {x:>8.3} {waf:>8.3} {y:>8.3}");
        if seeds > 1 {
            let lo = rows.iter().map(|r| r.y).fold(f64::INFINITY, f64::min);
            let hi = rows.iter().map(|r| r.y).fold(f64::NEG_INFINITY, f64::max);
            let _ = write!(s, " {lo:>8.3} {hi:>8.3}");
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(out: &Path) -> SweepSpec {
        let flags = super::super::parse_flags(&[
            "--capacity",
            "16MiB",
            "--pages-per-block",
            "32",
            "--blocks-per-superblock",
            "1",
            "--warmup",
            "0.3",
            "--volume",
            "0.3",
        ])
        .unwrap();
        SweepSpec {
            figures: vec![Figure::Fig7a],
            base: Spec::from_flags(&flags).unwrap(),
            seeds: 2,
            threads: 1,
            out: out.to_owned(),
            force: false,
        }
    }

    /// A second sweep into the same directory is refused without force, before any run, and
    /// the first sweep's files stay as they were; with force it runs.
    #[test]
    fn existing_figures_are_not_overwritten_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let spec = tiny(dir.path());
        run(&spec, None, &Cancel).unwrap();
        let csv = dir.path().join("sim-fig7a.csv");
        let before = std::fs::read(&csv).unwrap();
        let e = run(&spec, None, &Cancel).unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert!(e.to_string().contains("--force"), "{e}");
        assert_eq!(std::fs::read(&csv).unwrap(), before, "nothing overwritten");
        let forced = SweepSpec {
            force: true,
            ..spec
        };
        run(&forced, None, &Cancel).unwrap();
    }

    /// Two seeds: every point runs twice (one row per seed), the table and the CSV show both,
    /// and the spec round-trips through JSON and TOML.
    #[test]
    fn several_seeds_give_a_row_each_and_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let spec = tiny(dir.path());
        let out = run(&spec, None, &Cancel).unwrap();
        let f = &out.result.figures[0];
        let seeds: std::collections::BTreeSet<u64> = f.rows.iter().map(|r| r.seed).collect();
        assert_eq!(seeds.into_iter().collect::<Vec<_>>(), [42, 43]);
        assert_eq!(f.rows.len(), 2 * 8, "8 OP points x 2 seeds");
        assert!(table(f).contains("mean of 2 seeds"), "{}", table(f));
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(serde_json::from_str::<SweepSpec>(&json).unwrap(), spec);
        let toml = toml::to_string(&spec).unwrap();
        assert_eq!(toml::from_str::<SweepSpec>(&toml).unwrap(), spec);
        let bad = json.replace("\"seeds\"", "\"seedz\"");
        assert!(
            serde_json::from_str::<SweepSpec>(&bad).is_err(),
            "unknown keys refused"
        );
    }
}
