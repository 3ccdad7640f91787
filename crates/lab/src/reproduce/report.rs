//! The report: `reproduction.json` (the identity, the scale, one [`Entry`] per paper value)
//! and `REPRODUCTION.md` (the same as tables, one per paper, with each row's command).

use super::merge::{self, Provenance};
use super::values::{PaperValue, PAPER_VALUES};
use super::{Measured, Paper, Scale, Verdict};
use crate::{Error, Identity};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// One paper number against nowa's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The paper (docs/papers.md's name).
    pub paper: String,
    /// What is compared.
    pub item: String,
    /// Where the paper states it.
    pub source: String,
    /// The paper's value.
    pub paper_value: f64,
    /// nowa's value (null: missing).
    pub nowa_value: Option<f64>,
    /// The unit of both.
    pub unit: String,
    /// The scale nowa's value was measured at.
    pub scale: String,
    /// The judgement.
    pub verdict: Verdict,
    /// What "reproduced" and "shape" mean for this entry.
    pub criterion: String,
    /// The command that measures nowa's value.
    pub command: String,
    /// Why the value is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The relative tolerance within which CI's re-measurement must find `nowa_value`
    /// (`crates/lab/tests/committed_values.rs`); absent: CI does not re-measure the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_tolerance: Option<f64>,
}

/// The whole report (`reproduction.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reproduction {
    /// The run.
    pub nowa: Identity,
    /// Its command line.
    pub command: String,
    /// Its scale.
    pub scale: Scale,
    /// One entry per paper value of the papers run.
    pub entries: Vec<Entry>,
    /// Ctrl-C stopped the run: which papers finished (the others' entries are `missing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// The measured tables the docs quote beside the entries (absolute values at nowa's
    /// scale, with their spread), rendered into the docs' blocks `PAPER:NAME`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<DocTable>,
    /// Which run measured each paper's entries, tables and figures (the report is merged per
    /// paper from runs at different commits): one per paper it holds.
    #[serde(default)]
    pub provenance: Vec<Provenance>,
}

/// A table of measurements a doc quotes (generated block `<!-- reproduction:begin
/// PAPER:NAME ... -->`): the cells as the runner formatted them, so the doc and the report
/// cannot disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocTable {
    /// The paper.
    pub paper: String,
    /// The table's name within the paper (the block's `:NAME`).
    pub name: String,
    /// The column headers.
    pub columns: Vec<String>,
    /// The rows, one cell per column.
    pub rows: Vec<Vec<String>>,
    /// What the cells are (scale, means and ranges), printed under the table.
    pub note: String,
}

impl DocTable {
    /// A table of `paper`.
    ///
    /// # Panics
    /// If a row has not one cell per column.
    #[must_use]
    pub fn new(
        paper: Paper,
        name: &str,
        columns: Vec<String>,
        rows: Vec<Vec<String>>,
        note: String,
    ) -> DocTable {
        assert!(
            rows.iter().all(|r| r.len() == columns.len()),
            "{name}: one cell per column"
        );
        assert!(!name.contains(char::is_whitespace), "{name}: one word");
        DocTable {
            paper: paper.name().to_owned(),
            name: name.to_owned(),
            columns,
            rows,
            note,
        }
    }

    /// The table as Markdown (a cell's `|` and line breaks replaced), then its note.
    ///
    /// # Panics
    /// Never: one line per row (asserted).
    #[must_use]
    pub fn markdown(&self) -> String {
        let cell = |c: &str| c.replace('|', "/").replace('\n', " ");
        let mut s = String::from("|");
        for c in &self.columns {
            let _ = write!(s, " {} |", cell(c));
        }
        s.push_str("\n|");
        for i in 0..self.columns.len() {
            s.push_str(if i == 0 { "---|" } else { "---:|" });
        }
        s.push('\n');
        for r in &self.rows {
            s.push('|');
            for c in r {
                let _ = write!(s, " {} |", cell(c));
            }
            s.push('\n');
        }
        assert_eq!(
            s.lines().count(),
            self.rows.len() + 2,
            "{}: a header, a rule and one line per row",
            self.name
        );
        if !self.note.is_empty() {
            let _ = writeln!(s, "\n{}", self.note);
        }
        s
    }
}

fn entry(v: &PaperValue, m: Option<&Measured>, note: Option<String>) -> Entry {
    let nowa = m.map(|m| m.value);
    let verdict = v.criterion.judge(v.value, nowa);
    Entry {
        paper: v.paper.name().to_owned(),
        item: v.item.to_owned(),
        source: v.source.to_owned(),
        paper_value: v.value,
        nowa_value: nowa.filter(|x| x.is_finite()),
        unit: v.unit.to_owned(),
        scale: m.map_or_else(String::new, |m| m.scale.clone()),
        verdict,
        criterion: v.criterion.describe(),
        command: m.map_or_else(String::new, |m| m.command.clone()),
        note: if verdict == Verdict::Missing {
            note.or_else(|| Some("not measured".into()))
        } else {
            None
        },
        ci_tolerance: super::stale::tolerance(v.paper, v.item),
    }
}

/// `e` judged again by the table's value and criterion `v` (its measurement kept).
pub(super) fn rejudge(v: &PaperValue, e: Entry) -> Entry {
    assert_eq!(v.item, e.item, "the entry's paper value");
    let m = e.nowa_value.map(|x| Measured {
        item: v.item,
        value: x,
        scale: e.scale.clone(),
        command: e.command.clone(),
    });
    entry(v, m.as_ref(), e.note)
}

/// The entries of `paper`: every paper value of it, judged against what was measured (all
/// missing, with the error, when its runs failed).
pub(super) fn entries(paper: Paper, measured: Result<Vec<Measured>, Error>) -> Vec<Entry> {
    let (ms, err) = match measured {
        Ok(m) => (m, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    let out: Vec<Entry> = PAPER_VALUES
        .iter()
        .filter(|v| v.paper == paper)
        .map(|v| entry(v, ms.iter().find(|m| m.item == v.item), err.clone()))
        .collect();
    assert!(
        ms.iter().all(|m| out.iter().any(|e| e.item == m.item)),
        "every measured item is one of the paper's"
    );
    out
}

pub(super) fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// The CI column: the recheck's relative tolerance, "-" when CI does not re-measure.
fn ci(t: Option<f64>) -> String {
    match t {
        None => "-".into(),
        Some(t) if t < 1e-6 => format!("{t:.0e} (deterministic)"),
        Some(t) => format!("{:.0}%", t * 100.0),
    }
}

/// `REPRODUCTION.md`: a summary of the verdicts, then one table per paper.
#[must_use]
pub fn write_markdown(r: &Reproduction) -> String {
    let mut s = String::from("# Reproduction of the five papers' numbers\n\n");
    let _ = writeln!(
        s,
        "Generated by `nowa reproduce` (nowa {}), merged per paper from the runs `{}`: each \
         paper's section names the run that measured it (commit, tree, seed, start; \"+\" after \
         a commit: built with uncommitted changes). Every \
         number docs/ cites from the papers, beside nowa's, judged by the entry's criterion: \
         **reproduced** (within the stated tolerance), **shape** (same direction as the paper, \
         not its size, at the stated scale), **off**, **missing**. Ratios are new / old; \"pp\" \
         are percentage points. The same as JSON: `reproduction.json`; the figures: one \
         directory per paper. \"CI\": the relative tolerance within which CI measures the \
         entry again at this scale (`crates/lab/tests/committed_values.rs`), \"-\" where it \
         does not.\n",
        r.nowa.version, r.command
    );
    if let Some(w) = &r.interrupted {
        let _ = writeln!(s, "**Interrupted (Ctrl-C)**: {w}.\n");
    }
    summary(r, &mut s);
    for p in Paper::ALL {
        let es: Vec<&Entry> = r.entries.iter().filter(|e| e.paper == p.name()).collect();
        if es.is_empty() {
            continue;
        }
        let _ = writeln!(s, "\n## {p}\n\nMeasured by {}.\n\n| item | source | paper | nowa | unit | verdict | criterion | CI | scale | command |\n|---|---|---:|---:|---|---|---|---|---|---|", provenance_line(r, p.name()));
        for e in es {
            let nowa = e.nowa_value.map_or_else(
                || format!("- ({})", e.note.as_deref().unwrap_or("missing")),
                num,
            );
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | **{}** | {} | {} | {} | `{}` |",
                e.item,
                e.source,
                num(e.paper_value),
                nowa.replace('|', "/"),
                e.unit,
                e.verdict,
                e.criterion,
                ci(e.ci_tolerance),
                e.scale,
                e.command
            );
        }
        for t in r.tables.iter().filter(|t| t.paper == p.name()) {
            let _ = write!(s, "\n### {p}: {}\n\n{}", t.name, t.markdown());
        }
    }
    s
}

/// REPRODUCTION.md's summary: the verdicts of each paper and the run that measured them.
fn summary(r: &Reproduction, s: &mut String) {
    s.push_str("| paper | entries | reproduced | shape | off | missing | commit | run started |\n|---|---:|---:|---:|---:|---:|---|---|\n");
    for p in Paper::ALL {
        let es: Vec<&Entry> = r.entries.iter().filter(|e| e.paper == p.name()).collect();
        if es.is_empty() {
            continue;
        }
        let n = |v: Verdict| es.iter().filter(|e| e.verdict == v).count();
        let (commit, started) = merge::of(r, p.name()).map_or_else(
            || ("unknown".to_owned(), "unknown".to_owned()),
            |x| {
                let c = x.commit[..x.commit.len().min(7)].to_owned();
                (if x.dirty == Some(true) { c + "+" } else { c }, x.started)
            },
        );
        let _ = writeln!(
            s,
            "| {p} | {} | {} | {} | {} | {} | {commit} | {started} |",
            es.len(),
            n(Verdict::Reproduced),
            n(Verdict::Shape),
            n(Verdict::Off),
            n(Verdict::Missing)
        );
    }
}

/// The first line of a generated block in a doc: `BLOCK_BEGIN`, the paper's name (`@full`
/// after it for a block of the full report, [`FULL_SUFFIX`]), then the note naming the report
/// ([`block_note`]).
pub const BLOCK_BEGIN: &str = "<!-- reproduction:begin ";
/// The last line of a generated block.
pub const BLOCK_END: &str = "<!-- reproduction:end -->";
/// The suffix of a block's name that takes it from the full report (docs/reproduction-full):
/// the quick report (docs/reproduction, what CI checks) leaves such blocks alone, and the
/// full report leaves the others.
pub const FULL_SUFFIX: &str = "@full";

/// The directory under docs/ of the report of `scale`.
#[must_use]
pub fn report_dir(scale: Scale) -> &'static str {
    match scale {
        Scale::Quick => "reproduction",
        Scale::Full => "reproduction-full",
    }
}

/// The block name's suffix of `scale`.
fn suffix(scale: Scale) -> &'static str {
    match scale {
        Scale::Quick => "",
        Scale::Full => FULL_SUFFIX,
    }
}

/// The rest of a block's first line: which report it comes from.
fn block_note(scale: Scale) -> String {
    let flag = match scale {
        Scale::Quick => "",
        Scale::Full => " --full",
    };
    format!(
        " (generated by `nowa reproduce{flag}` from docs/{}/reproduction.json: do not edit) -->",
        report_dir(scale)
    )
}

fn scale_word(scale: Scale) -> &'static str {
    match scale {
        Scale::Quick => "quick",
        Scale::Full => "full",
    }
}

/// A doc's table of `paper`'s numbers from the report: item, paper, nowa, unit, verdict, and
/// the scale and command once below (they are the same for a paper's runs but for the
/// TPC-C rows, which name theirs).
#[must_use]
pub fn doc_block(r: &Reproduction, paper: Paper) -> String {
    let es: Vec<&Entry> = r
        .entries
        .iter()
        .filter(|e| e.paper == paper.name())
        .collect();
    let mut s = format!(
        "{BLOCK_BEGIN}{paper}{}{}\n",
        suffix(r.scale),
        block_note(r.scale)
    );
    s.push_str("| item | paper | nowa | unit | verdict |\n|---|---:|---:|---|---|\n");
    for e in &es {
        let nowa = e.nowa_value.map_or_else(|| "-".into(), num);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | **{}** |",
            e.item,
            num(e.paper_value),
            nowa,
            e.unit,
            e.verdict
        );
    }
    let mut scales: Vec<(&str, &str)> = es
        .iter()
        .map(|e| (e.scale.as_str(), e.command.as_str()))
        .collect();
    scales.dedup();
    for (scale, cmd) in scales {
        let _ = writeln!(s, "\nScale: {scale}; `{cmd}`.");
    }
    let _ = writeln!(
        s,
        "\nFrom the {} report of nowa {}, measured by {}; criteria and the other papers in \
         [REPRODUCTION.md]({}/REPRODUCTION.md#{paper}).",
        scale_word(r.scale),
        r.nowa.version,
        provenance_line(r, paper.name()),
        report_dir(r.scale)
    );
    s.push_str(BLOCK_END);
    s
}

/// A doc's block of the report's table `name` of `paper` (`PAPER:NAME`).
#[must_use]
pub fn table_block(r: &Reproduction, t: &DocTable) -> String {
    format!(
        "{BLOCK_BEGIN}{}:{}{}{}\n{}\nFrom the {} report of nowa {}, measured by {}.\n{BLOCK_END}",
        t.paper,
        t.name,
        suffix(r.scale),
        block_note(r.scale),
        t.markdown(),
        scale_word(r.scale),
        r.nowa.version,
        provenance_line(r, &t.paper)
    )
}

/// The run that measured `paper`'s numbers in `r`, as one line.
fn provenance_line(r: &Reproduction, paper: &str) -> String {
    merge::of(r, paper).map_or_else(|| "a run not recorded".to_owned(), |p| p.describe())
}

/// The block that replaces the generated block named `name` (`PAPER`, `PAPER:TABLE`, or
/// `PAPER` with the kind word `claims`: PLAN's claims table; `@full` after the name: of the
/// full report), or None to keep it (a block of the other scale's report, or the report has
/// no entry of the paper).
fn block_for(r: &Reproduction, name: &str, kind: Option<&str>) -> Result<Option<String>, String> {
    let (name, scale) = match name.strip_suffix(FULL_SUFFIX) {
        Some(n) => (n, Scale::Full),
        None => (name, Scale::Quick),
    };
    if scale != r.scale {
        return Ok(None);
    }
    let (paper_name, table) = match name.split_once(':') {
        Some((p, t)) => (p, Some(t)),
        None => (name, None),
    };
    let paper = Paper::ALL
        .into_iter()
        .find(|p| p.name() == paper_name)
        .ok_or_else(|| format!("a generated block of an unknown paper '{paper_name}'"))?;
    if !r.entries.iter().any(|e| e.paper == paper_name) {
        return Ok(None);
    }
    match (table, kind) {
        (None, None) => Ok(Some(doc_block(r, paper))),
        (None, Some("claims")) if paper == Paper::Plan => Ok(Some(format!(
            "{BLOCK_BEGIN}{paper}{} claims{}\n{}{BLOCK_END}",
            suffix(r.scale),
            block_note(r.scale),
            super::plan::claims_table(r)
        ))),
        (None, Some(k)) => Err(format!(
            "a generated block of an unknown kind '{paper} {k}'"
        )),
        (Some(table), _) => {
            assert!(!table.is_empty(), "a table block names its table");
            r.tables
                .iter()
                .find(|t| t.paper == paper_name && t.name == table)
                .map(|t| Some(table_block(r, t)))
                .ok_or_else(|| format!("a generated block of a table the report lacks: '{name}'"))
        }
    }
}

/// `text` with every generated block replaced by today's rendering from `r` (blocks of papers
/// the report lacks kept as they are).
///
/// # Errors
/// A block without its end line, of an unknown paper, or of a table the report lacks (of a
/// paper it has): the message names the block.
pub fn regenerate_blocks(r: &Reproduction, text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(BLOCK_BEGIN) {
        out.push_str(&rest[..i]);
        let block = &rest[i..];
        let end = block
            .find(BLOCK_END)
            .ok_or_else(|| format!("'{BLOCK_BEGIN}...' without '{BLOCK_END}'"))?;
        let mut words = block[BLOCK_BEGIN.len()..].split_whitespace();
        let name = words.next().unwrap_or("");
        // A second word names another kind of block than the paper's numbers.
        let kind = words.next().filter(|w| !w.starts_with('('));
        match block_for(r, name, kind)? {
            Some(b) => out.push_str(&b),
            None => out.push_str(&block[..end + BLOCK_END.len()]),
        }
        rest = &block[end + BLOCK_END.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The docs under `dir` (`*.md`) whose generated blocks differ from `r`'s rendering, with
/// their new text; each doc is rewritten when `write`.
///
/// # Errors
/// A doc cannot be read or written, or has a malformed block ([`Error::Usage`] naming it).
pub fn sync_docs(
    r: &Reproduction,
    dir: &Path,
    write: bool,
) -> Result<Vec<std::path::PathBuf>, Error> {
    let mut changed = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(changed);
    };
    let mut files: Vec<_> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| Error::io(&f, e))?;
        if !text.contains(BLOCK_BEGIN) {
            continue;
        }
        let new = regenerate_blocks(r, &text)
            .map_err(|m| Error::Usage(format!("{}: {m}", f.display())))?;
        if new != text {
            if write {
                std::fs::write(&f, &new).map_err(|e| Error::io(&f, e))?;
            }
            changed.push(f);
        }
    }
    Ok(changed)
}

/// Writes `reproduction.json` and `REPRODUCTION.md` into `dir`.
pub(super) fn write(r: &Reproduction, dir: &Path) -> Result<(), Error> {
    if let Err(m) = merge::check(r) {
        panic!("a report's provenance: {m}");
    }
    let json = dir.join("reproduction.json");
    let text = serde_json::to_string_pretty(r).map_err(|e| Error::io(&json, e))?;
    std::fs::write(&json, text + "\n").map_err(|e| Error::io(&json, e))?;
    let md = dir.join("REPRODUCTION.md");
    std::fs::write(&md, write_markdown(r)).map_err(|e| Error::io(&md, e))
}

/// Reads a `reproduction.json`.
///
/// # Errors
/// [`Error::Usage`] naming the file: unreadable, or not a reproduction.
pub fn read_json(path: &Path) -> Result<Reproduction, Error> {
    let bad = |m: String| Error::Usage(format!("{}: {m}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let mut r: Reproduction = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    merge::fill_from_identity(&mut r);
    merge::check(&r).map_err(bad)?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Reproduction {
        let ms = vec![Measured::new(
            "Table 1: in-place DB WAF",
            2.01,
            "1.5 M records",
            "nowa table1 --quick",
        )];
        let mut entries = super::entries(Paper::HowToWrite, Ok(ms));
        entries.extend(super::entries(
            Paper::Plan,
            Err(Error::Usage("plan broke".into())),
        ));
        Reproduction {
            nowa: Identity::now("reproduce", &serde_json::json!({}), 42),
            command: "nowa reproduce --quick --out DIR".into(),
            scale: Scale::Quick,
            entries,
            interrupted: None,
            tables: Vec::new(),
            provenance: [Paper::HowToWrite, Paper::Plan]
                .map(|p| Provenance::now(p, Scale::Quick, 42, "nowa reproduce --quick --out DIR"))
                .to_vec(),
        }
    }

    #[test]
    fn every_paper_value_gets_an_entry_and_unmeasured_ones_are_missing() {
        let r = sample();
        let h: Vec<&Entry> = r
            .entries
            .iter()
            .filter(|e| e.paper == "how-to-write-to-ssds")
            .collect();
        assert_eq!(
            h.len(),
            PAPER_VALUES
                .iter()
                .filter(|v| v.paper == Paper::HowToWrite)
                .count()
        );
        assert_eq!(h[0].verdict, Verdict::Reproduced);
        assert_eq!(h[0].nowa_value, Some(2.01));
        assert!(h[1..].iter().all(|e| e.verdict == Verdict::Missing));
        let plan: Vec<&Entry> = r
            .entries
            .iter()
            .filter(|e| e.paper == "plan-ssd-parallelism")
            .collect();
        assert!(plan
            .iter()
            .all(|e| e.verdict == Verdict::Missing && e.note.as_deref() == Some("plan broke")));
    }

    /// A table block (`PAPER:NAME`) is the report's table rendered: a hand edit of a cell is
    /// replaced, and a block naming a table the report lacks is refused by name.
    #[test]
    fn a_table_block_is_the_reports_table_rendered() {
        let mut r = sample();
        r.tables.push(DocTable::new(
            Paper::HowToWrite,
            "table-1",
            vec!["run".into(), "WAF".into()],
            vec![vec!["in place".into(), "2.01 [1.9-2.1]".into()]],
            "mean [min-max] over 3 seeds".into(),
        ));
        let block = table_block(&r, &r.tables[0]);
        assert!(block.contains("| in place | 2.01 [1.9-2.1] |"), "{block}");
        let doc = format!("text\n{}\nmore", block.replace("2.01 [", "1.50 ["));
        let again = regenerate_blocks(&r, &doc).expect("regenerated");
        assert_eq!(again, format!("text\n{block}\nmore"));
        let other = doc.replace(":table-1", ":table-9");
        let e = regenerate_blocks(&r, &other).expect_err("no such table");
        assert!(e.contains("how-to-write-to-ssds:table-9"), "{e}");
        assert!(write_markdown(&r).contains("### how-to-write-to-ssds: table-1"));
    }

    /// A block named `PAPER:NAME@full` is the full report's (docs/reproduction-full): the
    /// quick report leaves it as it is, the full report renders it and leaves the quick
    /// report's blocks as they are.
    #[test]
    fn a_full_scale_block_is_left_to_the_full_report() {
        let t = DocTable::new(
            Paper::HowToWrite,
            "tpcc",
            vec!["run".into(), "flash bytes/txn".into()],
            vec![vec!["in place".into(), "100".into()]],
            String::new(),
        );
        let mut quick = sample();
        quick.tables.push(t.clone());
        let mut full = sample();
        full.scale = Scale::Full;
        full.tables.push(DocTable {
            rows: vec![vec!["in place".into(), "900".into()]],
            ..t
        });
        let qb = table_block(&quick, &quick.tables[0]);
        let fb = table_block(&full, &full.tables[0]);
        assert!(
            fb.starts_with(&format!(
                "{BLOCK_BEGIN}how-to-write-to-ssds:tpcc@full (generated by `nowa reproduce --full` from docs/reproduction-full/reproduction.json"
            )),
            "{fb}"
        );
        let doc = format!("a\n{qb}\nb\n{}\nc", fb.replace("| 900 |", "| 1 |"));
        assert_eq!(
            regenerate_blocks(&quick, &doc).expect("quick"),
            doc,
            "the quick report keeps the full report's block"
        );
        assert_eq!(
            regenerate_blocks(&full, &doc).expect("full"),
            format!("a\n{qb}\nb\n{fb}\nc"),
            "the full report renders its block and keeps the quick one"
        );
    }

    /// The schema: these keys, verdicts as words, null for a missing value.
    #[test]
    fn json_schema_round_trips() {
        let r = sample();
        let v = serde_json::to_value(&r).expect("serializes");
        assert!(v["nowa"]["version"].is_string() && v["scale"] == "quick");
        let e = &v["entries"][0];
        for k in [
            "paper",
            "item",
            "source",
            "paper_value",
            "nowa_value",
            "unit",
            "scale",
            "verdict",
            "criterion",
            "command",
        ] {
            assert!(e.get(k).is_some(), "entry key {k}");
        }
        assert_eq!(e["verdict"], "reproduced");
        assert!(v["entries"][1]["nowa_value"].is_null());
        let back: Reproduction = serde_json::from_value(v).expect("deserializes");
        assert_eq!(back.entries, r.entries);
        let md = write_markdown(&r);
        assert!(
            md.contains(
                "| Table 1: in-place DB WAF | Table 1 | 2.00 | 2.01 | WAF | **reproduced** | within 5% | 5% |"
            ),
            "{md}"
        );
        assert!(md.contains("`nowa table1 --quick`"));
    }
}
