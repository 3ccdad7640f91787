//! Per-paper provenance and merging: the committed report is merged per paper from runs at
//! different commits, so each paper's entries, tables and figures name the run that measured
//! them ([`Provenance`]), and `nowa reproduce merge --into FILE RUN_DIR` replaces one run's
//! papers in a report ([`merge_into`]).

use super::report::{self, Entry, Reproduction};
use super::values::{self, PAPER_VALUES};
use super::{Paper, Scale};
use crate::Error;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Which run measured one paper's entries, tables and figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The paper.
    pub paper: String,
    /// The git commit the binary was built from ("unknown" when not recorded).
    pub commit: String,
    /// Whether the binary's source differed from `commit` (None: unknown).
    pub dirty: Option<bool>,
    /// When the paper's runs started, UTC, RFC 3339 ("unknown" when not recorded).
    pub started: String,
    /// The seed of its runs (None: unknown).
    pub seed: Option<u64>,
    /// Its scale.
    pub scale: Scale,
    /// The command that ran it.
    pub command: String,
    /// How the provenance was established when the run did not record it (from git history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Provenance {
    /// The provenance of `paper` run now by this binary with `command`.
    ///
    /// # Panics
    /// If the commit or the command is empty.
    #[must_use]
    pub fn now(paper: Paper, scale: Scale, seed: u64, command: &str) -> Provenance {
        let id = crate::Identity::now("reproduce", &serde_json::json!({}), seed);
        assert!(
            !id.commit.is_empty() && !command.is_empty(),
            "a provenance names a commit and a command"
        );
        Provenance {
            paper: paper.name().to_owned(),
            commit: id.commit,
            dirty: crate::source_dirty(),
            started: id.started,
            seed: Some(seed),
            scale,
            command: command.to_owned(),
            note: None,
        }
    }

    /// One line for the docs: `command` (commit, tree state, seed, started; note).
    #[must_use]
    pub fn describe(&self) -> String {
        let note = self
            .note
            .as_deref()
            .map_or_else(String::new, |n| format!("; {n}"));
        format!("`{}` ({}{note})", self.command, self.short())
    }

    /// Commit, tree state, seed and start, for a table's footer.
    #[must_use]
    pub fn short(&self) -> String {
        let commit = &self.commit[..self.commit.len().min(7)];
        let tree = match self.dirty {
            Some(true) => "uncommitted changes",
            Some(false) => "clean tree",
            None => "tree state unknown",
        };
        let seed = self
            .seed
            .map_or_else(|| "seed unknown".to_owned(), |s| format!("seed {s}"));
        format!("commit {commit}, {tree}, {seed}, {}", self.started)
    }
}

/// The papers `r` holds entries or tables of, in the report's order.
#[must_use]
pub fn papers_of(r: &Reproduction) -> Vec<Paper> {
    Paper::ALL
        .into_iter()
        .filter(|p| {
            r.entries.iter().any(|e| e.paper == p.name())
                || r.tables.iter().any(|t| t.paper == p.name())
        })
        .collect()
}

/// The provenance of `paper` in `r`.
#[must_use]
pub fn of(r: &Reproduction, paper: &str) -> Option<Provenance> {
    r.provenance.iter().find(|p| p.paper == paper).cloned()
}

/// The invariant of a report: one provenance per paper it holds, of its scale, and none of a
/// paper it does not hold.
///
/// # Errors
/// What is wrong, naming the paper.
pub fn check(r: &Reproduction) -> Result<(), String> {
    let held = papers_of(r);
    for p in &held {
        let n = r.provenance.iter().filter(|x| x.paper == p.name()).count();
        if n != 1 {
            return Err(format!("{n} provenance records of {p} (one expected)"));
        }
    }
    for x in &r.provenance {
        if !held.iter().any(|p| p.name() == x.paper) {
            return Err(format!(
                "a provenance of {}, which it holds nothing of",
                x.paper
            ));
        }
        if x.scale != r.scale {
            return Err(format!("the provenance of {} is of another scale", x.paper));
        }
    }
    Ok(())
}

/// A report read from a run written before per-paper provenance: when it is one run (its
/// command line names no earlier run), its identity is every paper's provenance; else none is
/// made up (the check then refuses it).
pub(super) fn fill_from_identity(r: &mut Reproduction) {
    if !r.provenance.is_empty() || r.command.contains("; then ") {
        return;
    }
    for p in papers_of(r) {
        r.provenance.push(Provenance {
            paper: p.name().to_owned(),
            commit: r.nowa.commit.clone(),
            dirty: None,
            started: r.nowa.started.clone(),
            seed: Some(r.nowa.seed),
            scale: r.scale,
            command: r.command.clone(),
            note: Some("from the run's identity (written before per-paper provenance)".into()),
        });
    }
}

/// `into` with the papers `run` holds replaced by `run`'s (entries, tables, provenance); the
/// other papers kept, their entries judged again by today's paper-value table. The report's
/// identity becomes `run`'s (the latest run), its command line the history of both.
///
/// # Errors
/// The two reports are of different scales, or `run` was interrupted or holds no paper.
pub fn merge(into: Reproduction, run: Reproduction) -> Result<Reproduction, String> {
    if into.scale != run.scale {
        return Err(format!(
            "a {:?} run cannot merge into a {:?} report",
            run.scale, into.scale
        ));
    }
    if let Some(w) = &run.interrupted {
        return Err(format!("the run was interrupted ({w})"));
    }
    if papers_of(&run).is_empty() {
        return Err("the run holds no paper's entries".into());
    }
    let out = combine(into, run);
    check(&out)?;
    Ok(out)
}

/// [`merge`] without its refusals (a run into its own `--out`, interrupted or not, keeps the
/// papers it did not run).
pub(super) fn combine(into: Reproduction, run: Reproduction) -> Reproduction {
    assert_eq!(into.scale, run.scale, "reports of one scale");
    let ran: Vec<String> = papers_of(&run)
        .iter()
        .map(|p| p.name().to_owned())
        .collect();
    let kept = |paper: &String| !ran.contains(paper);
    let mut out = run;
    out.command = super::command_history(&into.command, &out.command);
    out.entries.extend(
        into.entries
            .into_iter()
            .filter(|e| kept(&e.paper))
            .filter_map(|e| values::lookup(&e.item).map(|v| report::rejudge(v, e))),
    );
    out.tables
        .extend(into.tables.into_iter().filter(|t| kept(&t.paper)));
    out.provenance
        .extend(into.provenance.into_iter().filter(|p| kept(&p.paper)));
    // The report's order: by paper, then the table's order within a paper.
    let rank = |e: &Entry| {
        PAPER_VALUES
            .iter()
            .position(|v| v.item == e.item)
            .unwrap_or(usize::MAX)
    };
    out.entries.sort_by_key(rank);
    let order = |paper: &str| Paper::ALL.iter().position(|p| p.name() == paper);
    out.provenance.sort_by_key(|p| order(&p.paper));
    out.tables.sort_by_key(|t| order(&t.paper));
    assert!(
        out.entries.windows(2).all(|w| w[0].item != w[1].item),
        "one entry per paper value"
    );
    assert!(
        ran.iter()
            .all(|p| out.entries.iter().any(|e| &e.paper == p)),
        "the run's papers are in the merged report"
    );
    out
}

/// `nowa reproduce merge` and `nowa reproduce render` (the CLI prints [`Command::run`]'s line).
#[derive(clap::Subcommand, Debug, Clone)]
pub enum Command {
    /// Merge one run (`nowa reproduce --paper X --out RUN_DIR`) into a report: its papers'
    /// entries, tables, provenance and figures replace theirs; REPRODUCTION.md beside the
    /// report and the docs' generated blocks (the report's parent directory) are rendered again.
    Merge {
        /// The report to merge into (a reproduction.json, e.g. docs/reproduction/reproduction.json).
        #[arg(long, value_name = "FILE")]
        into: PathBuf,
        /// The run's output directory (its reproduction.json and one directory of figures
        /// per paper).
        #[arg(value_name = "RUN_DIR")]
        run: PathBuf,
    },
    /// Render a report again: REPRODUCTION.md beside it and the docs' generated blocks (the
    /// report's parent directory), from its reproduction.json.
    Render {
        /// The report (a reproduction.json).
        #[arg(value_name = "FILE")]
        report: PathBuf,
    },
}

impl Command {
    /// Runs the command; the line to print.
    ///
    /// # Errors
    /// As [`merge_into`] and [`render`].
    pub fn run(&self) -> Result<String, Error> {
        match self {
            Command::Merge { into, run } => merge_into(into, run).map(|(r, papers)| {
                let names: Vec<&str> = papers.iter().map(|p| p.name()).collect();
                format!(
                    "merged {} from {} into {} ({} entries); REPRODUCTION.md and the docs' blocks rendered again",
                    names.join(", "),
                    run.display(),
                    into.display(),
                    r.entries.len()
                )
            }),
            Command::Render { report } => render(report).map(|r| {
                format!(
                    "rendered {} ({} entries): REPRODUCTION.md and the docs' blocks",
                    report.display(),
                    r.entries.len()
                )
            }),
        }
    }
}

/// `nowa reproduce merge --into FILE RUN_DIR`: the papers of `RUN_DIR/reproduction.json` (a
/// `nowa reproduce --paper X --out RUN_DIR` run) replace theirs in the report `into` (its
/// entries, tables, provenance, and its figures `DIR/<paper>/`), then `REPRODUCTION.md` beside
/// it and the docs' generated blocks are rendered again. Returns the report and the papers
/// merged.
///
/// # Errors
/// [`Error::Usage`] naming the file: `into` is not a `reproduction.json`, either report is
/// missing or malformed, or they do not merge ([`merge`]); an I/O error copying the figures.
///
/// # Panics
/// If the report was not written (a bug).
pub fn merge_into(into: &Path, run_dir: &Path) -> Result<(Reproduction, Vec<Paper>), Error> {
    let usage = |p: &Path, m: &str| Error::Usage(format!("{}: {m}", p.display()));
    if into.file_name().is_none_or(|n| n != "reproduction.json") {
        return Err(usage(into, "--into names a reproduction.json"));
    }
    let run_json = run_dir.join("reproduction.json");
    let old = report::read_json(into)?;
    let run = report::read_json(&run_json)?;
    let dir = into.parent().unwrap_or(Path::new("."));
    if same_dir(dir, run_dir) {
        return Err(usage(run_dir, "is the report's own directory"));
    }
    let papers = papers_of(&run);
    let merged = merge(old, run).map_err(|m| usage(&run_json, &m))?;
    for p in &papers {
        replace_dir(&run_dir.join(p.name()), &dir.join(p.name()))?;
    }
    super::write_report(&merged, dir, &|_| {})?;
    assert!(
        into.is_file() && dir.join("REPRODUCTION.md").is_file(),
        "the merged report is written"
    );
    Ok((merged, papers))
}

/// `nowa reproduce render FILE`: the report `FILE` (a `reproduction.json`) written again as
/// the schema serializes it, `REPRODUCTION.md` beside it and the docs' generated blocks (its
/// parent directory) rendered from it (after a hand merge or a backfill of its provenance).
///
/// # Errors
/// [`Error::Usage`] naming the file: not a `reproduction.json`, missing or malformed.
pub fn render(report_json: &Path) -> Result<Reproduction, Error> {
    if report_json
        .file_name()
        .is_none_or(|n| n != "reproduction.json")
    {
        return Err(Error::Usage(format!(
            "{}: not a reproduction.json",
            report_json.display()
        )));
    }
    let r = report::read_json(report_json)?;
    super::write_report(&r, report_json.parent().unwrap_or(Path::new(".")), &|_| {})?;
    Ok(r)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `to` becomes a copy of `from` (a paper's figures); nothing when `from` does not exist.
fn replace_dir(from: &Path, to: &Path) -> Result<(), Error> {
    if !from.is_dir() {
        return Ok(());
    }
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| Error::io(to, e))?;
    }
    copy_tree(from, to)?;
    assert!(to.is_dir(), "the paper's figures are copied");
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    let rd = std::fs::read_dir(from).map_err(|e| Error::io(from, e))?;
    for e in rd {
        let e = e.map_err(|e| Error::io(from, e))?;
        let (src, dst): (PathBuf, PathBuf) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| Error::io(&src, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::{doc_block, report::DocTable, write_markdown, Measured};
    use crate::Identity;

    /// A one-run report of `papers`, each measured (one entry) at `commit`, with a table each.
    fn run_of(papers: &[Paper], commit: &str, value: f64) -> Reproduction {
        let item = |p: Paper| values::PAPER_VALUES.iter().find(|v| v.paper == p).unwrap();
        let mut entries = Vec::new();
        let mut tables = Vec::new();
        let mut provenance = Vec::new();
        for &p in papers {
            let m = Measured::new(item(p).item, value, "tiny", "nowa x");
            entries.extend(report::entries(p, Ok(vec![m])));
            tables.push(DocTable::new(
                p,
                "t",
                vec!["a".into()],
                vec![vec![format!("{value}")]],
                String::new(),
            ));
            let mut pr =
                Provenance::now(p, Scale::Quick, 42, &format!("nowa reproduce --paper {p}"));
            pr.commit = commit.to_owned();
            pr.dirty = Some(commit.contains('d'));
            provenance.push(pr);
        }
        Reproduction {
            nowa: Identity::now("reproduce", &serde_json::json!({}), 42),
            command: format!("nowa reproduce --at {commit}"),
            scale: Scale::Quick,
            entries,
            interrupted: None,
            tables,
            provenance,
        }
    }

    /// Each paper's provenance survives the JSON and is what its doc block and REPRODUCTION.md
    /// section say (the old rendering named the report's one identity for every paper).
    #[test]
    fn provenance_per_paper_round_trips_through_json_and_rendering() {
        let a = run_of(&[Paper::SsdIq], "aaaaaaa1111", 1.0);
        let b = run_of(&[Paper::Plan], "bbbbbbbd222", 2.0);
        let r = merge(a, b).expect("merges");
        let text = serde_json::to_string(&r).expect("json");
        let back: Reproduction = serde_json::from_str(&text).expect("parses");
        assert_eq!(back.provenance, r.provenance);
        assert!(check(&back).is_ok());
        let ssd = doc_block(&back, Paper::SsdIq);
        assert!(ssd.contains("commit aaaaaaa, clean tree, seed 42"), "{ssd}");
        assert!(!ssd.contains("bbbbbbb"), "{ssd}");
        let plan = doc_block(&back, Paper::Plan);
        assert!(
            plan.contains("commit bbbbbbb, uncommitted changes"),
            "{plan}"
        );
        let md = write_markdown(&back);
        assert!(
            md.contains("| aaaaaaa |") && md.contains("| bbbbbbb+ |"),
            "{md}"
        );
        assert!(
            md.contains("## plan-ssd-parallelism\n\nMeasured by `nowa reproduce --paper plan-ssd-parallelism` (commit bbbbbbb"),
            "{md}"
        );
        let t = back
            .tables
            .iter()
            .find(|t| t.paper == "ssd-iq")
            .expect("table");
        assert!(report::table_block(&back, t).contains("commit aaaaaaa"));
    }

    /// A run of one paper replaces exactly that paper's entries, tables and provenance; the
    /// others stay as they were.
    #[test]
    fn merge_replaces_exactly_the_runs_papers() {
        let old = run_of(
            &[Paper::SsdIq, Paper::Plan, Paper::SepFrozen],
            "old0000",
            1.0,
        );
        let new = run_of(&[Paper::Plan], "new0000", 5.0);
        let r = merge(old.clone(), new).expect("merges");
        for p in [Paper::SsdIq, Paper::SepFrozen] {
            let was: Vec<&Entry> = old.entries.iter().filter(|e| e.paper == p.name()).collect();
            let now: Vec<&Entry> = r.entries.iter().filter(|e| e.paper == p.name()).collect();
            assert_eq!(was, now, "{p} kept");
            assert_eq!(of(&r, p.name()), of(&old, p.name()));
        }
        let plan: Vec<&Entry> = r
            .entries
            .iter()
            .filter(|e| e.paper == "plan-ssd-parallelism")
            .collect();
        assert!(plan.iter().any(|e| e.nowa_value == Some(5.0)), "{plan:?}");
        assert!(plan.iter().all(|e| e.nowa_value != Some(1.0)));
        assert_eq!(
            of(&r, "plan-ssd-parallelism").map(|p| p.commit),
            Some("new0000".into())
        );
        assert_eq!(r.tables.len(), 3);
        assert_eq!(r.provenance.len(), 3);
        assert_eq!(
            r.command,
            "nowa reproduce --at old0000; then nowa reproduce --at new0000"
        );
    }

    /// Refusals: another scale, an interrupted run, a report whose provenance is missing or
    /// doubled; a run written before provenance takes its identity only if it is one run.
    #[test]
    fn bad_merges_and_bad_provenance_are_refused() {
        let old = run_of(&[Paper::SsdIq], "a", 1.0);
        let mut full = run_of(&[Paper::Plan], "b", 1.0);
        full.scale = Scale::Full;
        full.provenance
            .iter_mut()
            .for_each(|p| p.scale = Scale::Full);
        assert!(merge(old.clone(), full).unwrap_err().contains("Full"));
        let mut cut = run_of(&[Paper::Plan], "b", 1.0);
        cut.interrupted = Some("ctrl-c".into());
        assert!(merge(old.clone(), cut).unwrap_err().contains("interrupted"));
        let mut twice = old.clone();
        twice.provenance.push(twice.provenance[0].clone());
        assert!(check(&twice)
            .unwrap_err()
            .contains("2 provenance records of ssd-iq"));
        let mut none = old.clone();
        none.provenance.clear();
        assert!(check(&none).is_err());
        fill_from_identity(&mut none);
        assert_eq!(
            of(&none, "ssd-iq").map(|p| p.commit),
            Some(none.nowa.commit.clone())
        );
        let mut merged = old;
        merged.provenance.clear();
        merged.command = "a; then b".into();
        fill_from_identity(&mut merged);
        assert!(
            check(&merged).is_err(),
            "a merged report's identity is no paper's"
        );
    }
}
