//! `nowa reproduce`: regenerate every table and figure docs/ cites from the five papers,
//! judge each number against the paper's ([`values::PAPER_VALUES`]) and write
//! `DIR/reproduction.json` (a list of [`Entry`]) and `DIR/REPRODUCTION.md` (the same as a
//! table, with the command of each row), the figures under `DIR/<paper>/`.
//!
//! The simulator papers (ssd-iq, PLAN), how-to-write-to-ssds' Table 1 and SepFrozen's replay
//! run here, on the crates below. The TPC-C runs (checkpointing, the TPC-C comparison) are
//! `nowa tpcc` child processes of the binary the [`Host`] names, read as typed reports.

mod ckpt;
mod frozen;
pub mod merge;
mod plan;
mod report;
mod ssdiq;
pub mod stale;
mod table1;
mod tpcc;
pub mod values;
pub mod verdict;

pub use ckpt::{CkptCrash, CkptResult, CkptRun};
pub use merge::{merge_into, render, Command, Provenance};
pub use report::{
    doc_block, read_json, regenerate_blocks, report_dir, sync_docs, table_block, write_markdown,
    DocTable, Entry, Reproduction, BLOCK_BEGIN, BLOCK_END, FULL_SUFFIX,
};
pub use tpcc::TpccOutcome;
pub use values::{PaperValue, PAPER_VALUES};
pub use verdict::{Criterion, Verdict};

use crate::ckpt::Host;
use crate::{Cancel, Error, Identity};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The five papers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
pub enum Paper {
    /// how-to-write-to-ssds (ZLeanStore): Table 1 and the TPC-C comparison.
    #[serde(rename = "how-to-write-to-ssds")]
    #[value(name = "how-to-write-to-ssds")]
    HowToWrite,
    /// ssd-iq: the simulator's figures.
    #[serde(rename = "ssd-iq")]
    #[value(name = "ssd-iq")]
    SsdIq,
    /// SepFrozen.
    #[serde(rename = "sepfrozen")]
    #[value(name = "sepfrozen")]
    SepFrozen,
    /// Hot-page-aware checkpointing.
    #[serde(rename = "hot-page-aware-checkpointing")]
    #[value(name = "hot-page-aware-checkpointing")]
    Checkpointing,
    /// PLAN: SSD parallelism.
    #[serde(rename = "plan-ssd-parallelism")]
    #[value(name = "plan-ssd-parallelism")]
    Plan,
}

impl Paper {
    /// All five, in the report's order.
    pub const ALL: [Paper; 5] = [
        Paper::HowToWrite,
        Paper::SsdIq,
        Paper::SepFrozen,
        Paper::Checkpointing,
        Paper::Plan,
    ];
    /// The paper's name (its file name under the papers, docs/papers.md).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Paper::HowToWrite => "how-to-write-to-ssds",
            Paper::SsdIq => "ssd-iq",
            Paper::SepFrozen => "sepfrozen",
            Paper::Checkpointing => "hot-page-aware-checkpointing",
            Paper::Plan => "plan-ssd-parallelism",
        }
    }
    /// Estimated seconds of its runs at `scale` (release build, 2 cores): the weights of the
    /// progress bar's ETA.
    fn weight(self, scale: Scale) -> u64 {
        let quick = match self {
            Paper::HowToWrite => 150,
            Paper::SsdIq => 40,
            Paper::SepFrozen => 40,
            // 18 runs of 40 s + 2 crashes, each after a 1-warehouse load (~35 s).
            Paper::Checkpointing => 1600,
            Paper::Plan => 60,
        };
        match (scale, self) {
            (Scale::Quick, _) => quick,
            // 18 runs of 300 s + 2 crashes after 20-warehouse loads (~10 min each).
            (Scale::Full, Paper::Checkpointing) => 18_000,
            (Scale::Full, _) => quick * 6,
        }
    }
}

impl std::fmt::Display for Paper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How large the runs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// A few CPU minutes in all (what CI runs; the committed report's scale).
    Quick,
    /// The docs' scales (tens of minutes).
    Full,
}

/// One reproduction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Scale of every run.
    pub scale: Scale,
    /// The papers (empty: all five).
    #[serde(default)]
    pub papers: Vec<Paper>,
    /// Output directory.
    pub out: PathBuf,
    /// Overwrite what `out` holds.
    #[serde(default)]
    pub force: bool,
    /// Seed of every run.
    #[serde(default = "seed42")]
    pub seed: u64,
    /// how-to-write-to-ssds: only the TPC-C comparison (Table 1's entries missing; `nowa
    /// table1` makes its table), for the full scale's 20-warehouse runs on a busy machine.
    #[serde(default)]
    pub tpcc_only: bool,
    /// Checkpointing: paced points run at once (None: `nowa ckpt figures`' default from the
    /// memory available, at most 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<usize>,
    /// Checkpointing: the directory of the per-point results, kept, and its points of the
    /// same parameters reused (a run cut short, or `nowa ckpt figures --work` of the same
    /// grid, resumes); None: a scratch directory under `out`, emptied before and removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<PathBuf>,
}

fn seed42() -> u64 {
    42
}

impl Spec {
    /// The command line of this reproduction.
    #[must_use]
    pub fn command_line(&self) -> String {
        let mut s = format!(
            "nowa reproduce --{}",
            match self.scale {
                Scale::Quick => "quick",
                Scale::Full => "full",
            }
        );
        for p in &self.papers {
            let _ = write!(s, " --paper {p}");
        }
        if self.seed != 42 {
            let _ = write!(s, " --seed {}", self.seed);
        }
        if self.tpcc_only {
            s.push_str(" --tpcc-only");
        }
        if let Some(j) = self.jobs {
            let _ = write!(s, " --jobs {j}");
        }
        if let Some(w) = &self.work {
            let _ = write!(s, " --work {}", w.display());
        }
        let _ = write!(s, " --out {}", self.out.display());
        s
    }

    /// The provenance of `paper` run now by this spec.
    #[must_use]
    pub fn provenance(&self, paper: Paper) -> Provenance {
        Provenance::now(paper, self.scale, self.seed, &self.command_line())
    }

    /// Flags that do not go together, each naming its flag.
    ///
    /// # Errors
    /// [`Error::Usage`].
    pub fn check(&self) -> Result<(), Error> {
        if self.tpcc_only && !self.papers().contains(&Paper::HowToWrite) {
            return Err(Error::Usage(
                "--tpcc-only: the TPC-C comparison is how-to-write-to-ssds' (add --paper how-to-write-to-ssds)".into(),
            ));
        }
        Ok(())
    }

    /// The papers to run, in the report's order.
    #[must_use]
    pub fn papers(&self) -> Vec<Paper> {
        Paper::ALL
            .into_iter()
            .filter(|p| self.papers.is_empty() || self.papers.contains(p))
            .collect()
    }
}

/// What a runner measured for one item.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The paper value's item.
    pub item: &'static str,
    /// nowa's value.
    pub value: f64,
    /// The scale it was measured at.
    pub scale: String,
    /// The command that measures it.
    pub command: String,
}

impl Measured {
    fn new(item: &'static str, value: f64, scale: &str, command: &str) -> Measured {
        assert!(
            values::lookup(item).is_some(),
            "{item}: a measured item has a paper value"
        );
        Measured {
            item,
            value,
            scale: scale.to_owned(),
            command: command.to_owned(),
        }
    }
}

/// Progress: `(done, total, what)`, in estimated seconds of work.
pub type Observer<'a> = &'a (dyn Fn(u64, u64, &str) + Sync);

/// Refuses an `out` that holds something without `force`; creates it (not its parents).
///
/// # Errors
/// [`Error::Usage`] naming `--out`.
pub fn prepare_out(out: &Path, force: bool) -> Result<(), Error> {
    crate::resources::prepare_out_dir("--out", out, force)
}

/// Runs every paper of `spec`, writes the report; a paper whose runs fail has its entries
/// `missing` with the error as their note (the others still run).
///
/// # Errors
/// `--out` refused, or the report cannot be written.
///
/// # Panics
/// If a runner measures an item of another paper (a bug in the runners).
pub fn run(spec: &Spec, host: &dyn Host, observe: Observer<'_>) -> Result<Reproduction, Error> {
    spec.check()?;
    prepare_out(&spec.out, spec.force)?;
    let papers = spec.papers();
    let total: u64 = papers.iter().map(|p| p.weight(spec.scale)).sum();
    let mut done = 0;
    let mut entries = Vec::new();
    let mut tables = Vec::new();
    let mut finished = Vec::new();
    let mut provenance = Vec::new();
    for p in papers {
        let w = p.weight(spec.scale);
        provenance.push(spec.provenance(p));
        if Cancel.requested() {
            entries.extend(report::entries(p, Err(stopped())));
            continue;
        }
        let dir = spec.out.join(p.name());
        let sub = |d: u64, t: u64, what: &str| {
            observe(
                done + w * d.min(t) / t.max(1),
                total,
                &format!("{p}: {what}"),
            );
        };
        let measured = std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(&dir, e))
            .and_then(|()| run_paper(p, spec, &dir, host, &sub));
        done += w;
        assert!(done <= total, "progress within its total");
        observe(done, total, p.name());
        // A paper whose runs Ctrl-C cut short measured part of its grid: not judged.
        let measured = if Cancel.requested() {
            Err(stopped())
        } else {
            measured
        };
        let measured = measured.map(|(m, t)| {
            tables.extend(t);
            m
        });
        if measured.is_ok() {
            finished.push(p.name());
        }
        entries.extend(report::entries(p, measured));
    }
    let interrupted = Cancel.requested().then(|| interrupted_note(&finished));
    let mut rep = Reproduction {
        nowa: Identity::now("reproduce", spec, spec.seed),
        command: spec.command_line(),
        scale: spec.scale,
        entries,
        interrupted,
        tables,
        provenance,
    };
    assert!(
        rep.entries
            .iter()
            .all(|e| spec.papers().iter().any(|p| p.name() == e.paper)),
        "entries only of the papers run"
    );
    keep_other_papers(&mut rep, &spec.out.join("reproduction.json"));
    write_report(&rep, &spec.out, &|what: &str| observe(total, total, what))?;
    Ok(rep)
}

/// What `nowa reproduce` prints after a run: the verdicts' line (stdout), and one line per
/// missing entry (stderr).
///
/// # Panics
/// If the report has no entry, or an entry has none of the four verdicts.
#[must_use]
pub fn summary(r: &Reproduction, secs: f64, out: &Path) -> (String, Vec<String>) {
    let n = |v: Verdict| r.entries.iter().filter(|e| e.verdict == v).count();
    assert_eq!(
        n(Verdict::Reproduced) + n(Verdict::Shape) + n(Verdict::Off) + n(Verdict::Missing),
        r.entries.len(),
        "every entry has one of the four verdicts"
    );
    assert!(!r.entries.is_empty(), "every paper has entries");
    let line = format!(
        "{} entries: {} reproduced, {} shape, {} off, {} missing ({secs:.0} s); wrote {}/REPRODUCTION.md and reproduction.json",
        r.entries.len(),
        n(Verdict::Reproduced),
        n(Verdict::Shape),
        n(Verdict::Off),
        n(Verdict::Missing),
        out.display()
    );
    let missing = r
        .entries
        .iter()
        .filter(|e| e.verdict == Verdict::Missing)
        .map(|e| {
            format!(
                "{} / {}: {}",
                e.paper,
                e.item,
                e.note.as_deref().unwrap_or("")
            )
        })
        .collect();
    (line, missing)
}

/// What an interrupted report says: the papers that finished.
fn interrupted_note(finished: &[&str]) -> String {
    format!(
        "papers finished: {}; the others' entries are missing and their figures cover the runs that finished",
        if finished.is_empty() { "none".into() } else { finished.join(", ") }
    )
}

/// Writes the report into `out`. The docs beside it (docs/*.md for --out docs/reproduction)
/// carry its tables as generated blocks: regenerated here, so no doc quotes a number the
/// report does not hold (not from an interrupted report: its missing entries would replace
/// the docs' numbers).
fn write_report(rep: &Reproduction, out: &Path, said: &dyn Fn(&str)) -> Result<(), Error> {
    report::write(rep, out)?;
    let docs = out.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(docs) = docs.filter(|_| rep.interrupted.is_none()) {
        for f in report::sync_docs(rep, docs, true)? {
            said(&format!("regenerated the tables of {}", f.display()));
        }
    }
    Ok(())
}

/// Re-running some papers into a report of the same scale (`--paper X --force`) updates
/// their entries and keeps the other papers' (the command line says both runs): the merge
/// of `nowa reproduce merge` ([`merge::merge`]).
fn keep_other_papers(rep: &mut Reproduction, json: &Path) {
    let Ok(old) = report::read_json(json) else {
        return;
    };
    if old.scale != rep.scale {
        return;
    }
    *rep = merge::combine(old, rep.clone());
}

/// The report's command line after `new` ran into a report made by `old`: the runs in order,
/// each command once (at its last run), so re-running one paper does not lengthen the line.
fn command_history(old: &str, new: &str) -> String {
    let mut runs: Vec<&str> = old.split("; then ").filter(|c| *c != new).collect();
    let mut seen = Vec::new();
    runs.reverse();
    runs.retain(|c| {
        let first = !seen.contains(c);
        seen.push(*c);
        first
    });
    runs.reverse();
    runs.push(new);
    let line = runs.join("; then ");
    assert!(line.ends_with(new), "the latest run last");
    line
}

/// A paper's runs cut short by Ctrl-C.
fn stopped() -> Error {
    Error::Failed {
        what: "its runs",
        source: "interrupted (Ctrl-C)".into(),
    }
}

fn run_paper(
    p: Paper,
    spec: &Spec,
    dir: &Path,
    host: &dyn Host,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<(Vec<Measured>, Vec<DocTable>), Error> {
    let none = |m: Vec<Measured>| (m, Vec::new());
    match p {
        Paper::HowToWrite => {
            let mut m = if spec.tpcc_only {
                Vec::new()
            } else {
                table1::run(spec, dir, sub)?
            };
            let (t, tables) = tpcc::run(spec, dir, host, sub)?;
            m.extend(t);
            Ok((m, tables))
        }
        Paper::SsdIq => ssdiq::run(spec, dir, sub).map(none),
        Paper::SepFrozen => frozen::run(spec, dir, sub).map(none),
        Paper::Checkpointing => ckpt::run(spec, dir, host, sub),
        Paper::Plan => plan::run(spec, dir, sub).map(none),
    }
}

#[cfg(test)]
mod tests {
    use super::{Paper, Scale, Spec};

    /// `--tpcc-only` is said in the report's command line and refused without
    /// how-to-write-to-ssds, naming the flag.
    #[test]
    fn tpcc_only_names_itself_and_needs_its_paper() {
        let mut s = Spec {
            scale: Scale::Full,
            papers: vec![Paper::HowToWrite],
            out: "d".into(),
            force: false,
            seed: 42,
            tpcc_only: true,
            jobs: None,
            work: None,
        };
        assert!(s.check().is_ok());
        assert_eq!(
            s.command_line(),
            "nowa reproduce --full --paper how-to-write-to-ssds --tpcc-only --out d"
        );
        s.papers = vec![Paper::SsdIq];
        let e = s.check().expect_err("no TPC-C comparison in ssd-iq");
        assert!(e.to_string().starts_with("--tpcc-only"), "{e}");
    }

    /// `--work` is said in the report's command line (the provenance of a resumed run).
    #[test]
    fn work_names_itself() {
        let s = Spec {
            scale: Scale::Full,
            papers: vec![Paper::Checkpointing],
            out: "d".into(),
            force: false,
            seed: 42,
            tpcc_only: false,
            jobs: Some(2),
            work: Some("w".into()),
        };
        assert_eq!(
            s.command_line(),
            "nowa reproduce --full --paper hot-page-aware-checkpointing --jobs 2 --work w --out d"
        );
    }

    #[test]
    fn the_command_history_names_each_run_once() {
        let h = super::command_history("a; then b; then b; then c", "b");
        assert_eq!(h, "a; then c; then b");
        assert_eq!(super::command_history("a", "a"), "a");
    }
}
