//! The committed quick report is not stale: the entries cheap enough for CI are measured
//! again with today's code, at the report's scale and seed, and must equal the committed
//! values within the tolerance each entry records (`ci_tolerance`: deterministic runs 1e-9,
//! Table 1's two-thread rows 5%; `nowa_lab::reproduce::stale`), with the same scale and
//! command. A change that moves one of these paper numbers, or an edit of
//! docs/reproduction/reproduction.json, fails here until the report is regenerated in the
//! same commit: `nowa reproduce --quick --paper NAME --out docs/reproduction --force`.
//!
//! One test per paper (they run in parallel). The checkpointing entries and the TPC-C
//! comparison are not re-measured here (paced TPC-C runs of minutes each): their `ci_tolerance`
//! is absent and REPRODUCTION.md's CI column says "-".

use nowa_lab::reproduce::{read_json, stale, Paper, Reproduction};
use std::path::Path;

fn committed() -> Reproduction {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reproduction/reproduction.json");
    read_json(&p).expect("docs/reproduction/reproduction.json is a reproduction")
}

fn check(paper: Paper, at_least: usize) {
    let committed = committed();
    let measured = stale::measure(paper, committed.nowa.seed).expect("the cheap entries run");
    assert!(
        measured.len() >= at_least,
        "{paper}: {} re-measured entries",
        measured.len()
    );
    let st = stale::compare(&committed, &measured);
    assert!(
        st.is_empty(),
        "docs/reproduction is stale (regenerate it: nowa reproduce --quick --paper {paper} --out docs/reproduction --force):\n{}",
        st.iter()
            .map(|s| format!("  {}: {}", s.item, s.why))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn ssd_iq_entries_are_what_todays_code_measures() {
    check(Paper::SsdIq, 6);
}

#[test]
fn table1_entries_are_what_todays_code_measures() {
    // Table 1's items but "+ NoWA SSD WAF" (not stable between runs: `stale::tolerance`).
    check(Paper::HowToWrite, 7);
}

#[test]
fn sepfrozen_entries_are_what_todays_code_measures() {
    check(Paper::SepFrozen, 5);
}

#[test]
fn plan_entries_are_what_todays_code_measures() {
    check(Paper::Plan, 10);
}

/// Every re-measured entry records its tolerance, and only those: the report says which
/// numbers CI guards.
#[test]
fn the_report_records_which_entries_ci_re_measures() {
    let r = committed();
    for e in &r.entries {
        let paper = Paper::ALL
            .into_iter()
            .find(|p| p.name() == e.paper)
            .expect("a known paper");
        assert_eq!(
            e.ci_tolerance,
            stale::tolerance(paper, &e.item),
            "{}: ci_tolerance (regenerate the report)",
            e.item
        );
    }
    let guarded = r
        .entries
        .iter()
        .filter(|e| e.ci_tolerance.is_some())
        .count();
    assert!(guarded >= 28, "{guarded} entries re-measured by CI");
}
