//! The committed quick report is not stale: its cheap entries (ssd-iq's simulations, ~10
//! seeded runs of 1 GiB, seconds each) are measured again with today's code and must equal
//! the committed values within `stale::TOLERANCE` (deterministic runs), with the same scale
//! and command. A change that moves one of these paper numbers, or an edit of
//! docs/reproduction/reproduction.json, fails here until the report is regenerated in the
//! same commit: `nowa reproduce --quick --paper ssd-iq --out docs/reproduction --force`.

use nowa_lab::reproduce::{read_json, stale};
use std::path::Path;

#[test]
fn the_committed_cheap_entries_are_what_todays_code_measures() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reproduction/reproduction.json");
    let committed = read_json(&p).expect("docs/reproduction/reproduction.json is a reproduction");
    let measured = stale::measure(committed.nowa.seed).expect("the cheap entries run");
    assert!(measured.len() >= 6, "{} cheap entries", measured.len());
    let st = stale::compare(&committed, &measured);
    assert!(
        st.is_empty(),
        "docs/reproduction is stale (regenerate it: nowa reproduce --quick --paper ssd-iq --out docs/reproduction --force):\n{}",
        st.iter()
            .map(|s| format!("  {}: {}", s.item, s.why))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
