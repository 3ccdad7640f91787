//! The committed quick report (docs/reproduction/reproduction.json) against the library's
//! paper-value table: every paper covered (>= 3 entries, none missing), every paper value
//! and every verdict what the table and its criterion give today. A change to a paper value
//! or a criterion fails here until the report is regenerated (`nowa reproduce --quick --out
//! docs/reproduction --force`).

use nowa_lab::reproduce::{read_json, values, Paper, Scale, Verdict};
use std::path::Path;

fn committed() -> nowa_lab::reproduce::Reproduction {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reproduction/reproduction.json");
    read_json(&p).expect("docs/reproduction/reproduction.json is a reproduction")
}

#[test]
fn the_committed_report_covers_every_paper_without_missing_entries() {
    let r = committed();
    assert_eq!(r.scale, Scale::Quick);
    for p in Paper::ALL {
        let es: Vec<_> = r.entries.iter().filter(|e| e.paper == p.name()).collect();
        assert!(es.len() >= 3, "{p}: {} entries", es.len());
        for e in es {
            assert_ne!(e.verdict, Verdict::Missing, "{p}: {}", e.item);
        }
    }
}

#[test]
fn the_committed_report_agrees_with_the_paper_value_table() {
    let r = committed();
    assert_eq!(
        r.entries.len(),
        values::PAPER_VALUES.len(),
        "one entry per paper value"
    );
    for e in &r.entries {
        let v = values::lookup(&e.item).unwrap_or_else(|| panic!("{}: not in the table", e.item));
        assert_eq!(e.paper, v.paper.name());
        assert!(
            (e.paper_value - v.value).abs() < 1e-12,
            "{}: paper value",
            e.item
        );
        assert_eq!(e.unit, v.unit, "{}", e.item);
        assert_eq!(
            e.verdict,
            v.criterion.judge(v.value, e.nowa_value),
            "{}: verdict",
            e.item
        );
    }
}

fn docs() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

/// REPRODUCTION.md is the JSON's rendering (no hand edit of either).
#[test]
fn the_committed_markdown_is_the_json_rendered() {
    let r = committed();
    let md = std::fs::read_to_string(docs().join("reproduction/REPRODUCTION.md")).expect("md");
    assert!(
        md == nowa_lab::reproduce::write_markdown(&r),
        "docs/reproduction/REPRODUCTION.md is not reproduction.json rendered (regenerate: nowa reproduce --quick --paper NAME --out docs/reproduction --force)"
    );
}

/// Every paper's doc carries its numbers as a block generated from the committed report,
/// and every block in docs/ is today's rendering of it: a doc cannot quote a paper number
/// the report does not hold.
#[test]
fn every_papers_doc_carries_the_reports_table() {
    let r = committed();
    let stale = nowa_lab::reproduce::sync_docs(&r, &docs(), false).expect("docs parse");
    assert!(
        stale.is_empty(),
        "generated blocks differ from docs/reproduction/reproduction.json in {stale:?} (regenerate: nowa reproduce --quick --paper NAME --out docs/reproduction --force)"
    );
    let doc_of = [
        (Paper::HowToWrite, "table1.md"),
        (Paper::SsdIq, "ssdiq.md"),
        (Paper::SepFrozen, "sepfrozen.md"),
        (Paper::Checkpointing, "checkpointing.md"),
        (Paper::Plan, "plan.md"),
    ];
    for (p, f) in doc_of {
        let text = std::fs::read_to_string(docs().join(f)).expect(f);
        let begin = format!("{}{p} ", nowa_lab::reproduce::BLOCK_BEGIN);
        assert!(text.contains(&begin), "docs/{f}: no generated block of {p}");
        if p == Paper::Plan {
            // docs/plan.md's claims table is generated too (both baselines, every claim).
            let claims = format!("{begin}claims ");
            assert!(
                text.contains(&claims),
                "docs/{f}: no generated claims table"
            );
        }
        for e in r.entries.iter().filter(|e| e.paper == p.name()) {
            assert!(
                text.contains(&format!("| {} |", e.item)),
                "docs/{f}: {}",
                e.item
            );
        }
    }
}

/// docs/checkpointing.md's absolute tables (Table I, Figure 4, Table II with the crashes'
/// spread, Figures 1-2's shares) are blocks generated from the report's tables, which the
/// test above keeps equal to the report: no hand-copied measurement can go stale there.
#[test]
fn the_checkpointing_tables_are_generated_from_the_report() {
    let r = committed();
    let text = std::fs::read_to_string(docs().join("checkpointing.md")).expect("checkpointing.md");
    let paper = Paper::Checkpointing.name();
    for name in ["table-1", "fig-4", "table-2", "figures-1-2"] {
        let t = r
            .tables
            .iter()
            .find(|t| t.paper == paper && t.name == name)
            .unwrap_or_else(|| panic!("the report has no table {name} of {paper}"));
        assert!(!t.rows.is_empty(), "{name}: rows");
        let begin = format!("{}{paper}:{name} ", nowa_lab::reproduce::BLOCK_BEGIN);
        assert!(
            text.contains(&begin),
            "docs/checkpointing.md: no generated block {name}"
        );
    }
    let t2 = r
        .tables
        .iter()
        .find(|t| t.name == "table-2")
        .expect("table-2");
    assert!(
        t2.rows
            .iter()
            .any(|row| row.iter().any(|c| c.contains('['))),
        "Table II shows the crashes' min-max"
    );
}

/// The full report (docs/reproduction-full: `nowa reproduce --full --paper
/// how-to-write-to-ssds`) renders the docs' `@full` blocks: docs/tpcc.md's 20-warehouse
/// comparison is generated from it as the 2-warehouse one is from the quick report.
#[test]
fn the_tpcc_comparison_tables_are_generated_from_both_reports() {
    let quick = committed();
    let p = docs().join("reproduction-full/reproduction.json");
    let full = read_json(&p).expect("docs/reproduction-full/reproduction.json is a reproduction");
    assert_eq!(full.scale, Scale::Full);
    let stale = nowa_lab::reproduce::sync_docs(&full, &docs(), false).expect("docs parse");
    assert!(
        stale.is_empty(),
        "@full blocks differ from docs/reproduction-full/reproduction.json in {stale:?} (regenerate: nowa reproduce --full --paper how-to-write-to-ssds --out docs/reproduction-full --force)"
    );
    let text = std::fs::read_to_string(docs().join("tpcc.md")).expect("tpcc.md");
    let paper = Paper::HowToWrite.name();
    for (r, suffix) in [(&quick, ""), (&full, nowa_lab::reproduce::FULL_SUFFIX)] {
        for name in ["tpcc", "tpcc-ratios"] {
            assert!(
                r.tables.iter().any(|t| t.paper == paper && t.name == name),
                "the {:?} report has no table {name}",
                r.scale
            );
            let begin = format!(
                "{}{paper}:{name}{suffix} ",
                nowa_lab::reproduce::BLOCK_BEGIN
            );
            assert!(
                text.contains(&begin),
                "docs/tpcc.md: no block {name}{suffix}"
            );
        }
    }
    for e in full.entries.iter().filter(|e| e.item.starts_with("TPC-C")) {
        assert_ne!(e.verdict, Verdict::Missing, "full: {}", e.item);
        assert!(e.scale.contains("20 warehouses"), "{}: {}", e.item, e.scale);
    }
}
