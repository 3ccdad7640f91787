//! Is the committed report stale? The quick entries cheap enough for CI are measured again
//! with today's code and compared with the committed report's values, each within the
//! tolerance the report records for it (`ci_tolerance`, from [`tolerance`]):
//! `crates/lab/tests/committed_values.rs`, one test per paper. A change that moves one of
//! these paper numbers, or a hand edit of the report, fails until the report is regenerated
//! (`nowa reproduce --quick --paper NAME --out docs/reproduction --force`).
//!
//! What CI re-measures, at the committed report's own (quick) scale:
//! - ssd-iq: the 10 simulation points the items read (of the figures' 46), seconds each;
//! - how-to-write-to-ssds: Table 1 (`nowa table1 --quick`, ~30 s of a release build); not
//!   the TPC-C comparison (three paced runs of minutes);
//! - SepFrozen: the five replays and the model on the 300,000-write log;
//! - PLAN: the 21 runs the items read (of the figures' 57);
//! - not the checkpointing entries (18 paced TPC-C runs of 40 s and 2 crashes: ~30 min).

use super::{Measured, Paper, Reproduction, Scale, Spec};
use crate::Error;
use std::path::PathBuf;

/// Relative tolerance of a deterministic re-measured entry: the same seed and the same
/// single-threaded simulation give the same value, up to a last-digit float difference of
/// another libm (the report prints 3 significant digits).
pub const TOLERANCE: f64 = 1e-9;

/// Relative tolerance of Table 1's entries: its rows run 2 worker threads on a simulated SSD
/// paced by its timing model, so the interleaving of the threads (and with it which page a
/// checkpoint or eviction writes when) differs between runs of the same seed. Measured: a
/// `nowa table1 --quick --seed 42` of 2026-11-29 (load ~15 on 2 cores,
/// docs/sessions/table1-quick.log) against the committed report: every item within 0.6%
/// (in-place SSD WAF 4.35 vs 4.358, - comp. DB WAF 6.15 vs 6.177, device-bound OPS ratio
/// 6.026 vs 6.028); 5% leaves room for a busier machine and still fails a change that moves
/// a row (the paper criteria are 5-15%).
pub const TABLE1_TOLERANCE: f64 = 0.05;

/// Table 1's NoWA row's SSD WAF: measured, not re-measured by CI ([`tolerance`]).
const NOWA_SSD_WAF: &str = "Table 1: + NoWA SSD WAF";

/// The relative tolerance CI re-measures `item` of `paper` with, None when CI does not
/// re-measure it (the report records it as the entry's `ci_tolerance`).
#[must_use]
pub fn tolerance(paper: Paper, item: &str) -> Option<f64> {
    match paper {
        Paper::SsdIq | Paper::SepFrozen | Paper::Plan => Some(TOLERANCE),
        // Not re-measured: at the quick scale the NoWA row's SSD WAF depends on when the
        // background DB GC thread runs against the 2 writers (measured with the same seed
        // and code: 1.01 committed, then 1.17, 1.27 and 1.30 on 2026-11-29 at load 4-10):
        // no tolerance both passes every run and fails a change that moves the row.
        Paper::HowToWrite if item == NOWA_SSD_WAF => None,
        Paper::HowToWrite if item.starts_with("Table 1") => Some(TABLE1_TOLERANCE),
        Paper::HowToWrite | Paper::Checkpointing => None,
    }
}

/// One disagreement between the committed report and today's code.
#[derive(Debug, Clone, PartialEq)]
pub struct Stale {
    /// The entry.
    pub item: String,
    /// What differs.
    pub why: String,
}

/// The entries of `paper` CI re-measures, at the quick scale and `seed` (the committed
/// report's); empty for a paper CI does not re-measure.
///
/// # Errors
/// A run fails.
///
/// # Panics
/// Never: every measured item has a tolerance (asserted).
pub fn measure(paper: Paper, seed: u64) -> Result<Vec<Measured>, Error> {
    let spec = Spec {
        scale: Scale::Quick,
        papers: vec![paper],
        out: PathBuf::new(),
        force: false,
        seed,
        tpcc_only: false,
        jobs: None,
        work: None,
    };
    let mut ms = match paper {
        Paper::SsdIq => super::ssdiq::entries_only(&spec)?,
        Paper::HowToWrite => super::table1::entries_only(&spec)?,
        Paper::SepFrozen => super::frozen::entries_only(&spec)?,
        Paper::Plan => super::plan::entries_only(&spec)?,
        Paper::Checkpointing => Vec::new(),
    };
    // A run measures every item of its rows; the items without a tolerance are not checked.
    ms.retain(|m| tolerance(paper, m.item).is_some());
    assert!(
        ms.iter().all(|m| tolerance(paper, m.item).is_some()),
        "CI re-measures only entries with a tolerance"
    );
    Ok(ms)
}

/// Every measured entry against the committed one of the same item: value within the
/// tolerance the committed entry records (its `ci_tolerance`, which must be today's
/// [`tolerance`]), same scale and command; an item the report lacks is stale too.
///
/// # Panics
/// Never: at most four reasons per entry (asserted).
#[must_use]
pub fn compare(committed: &Reproduction, measured: &[Measured]) -> Vec<Stale> {
    let mut out = Vec::new();
    let mut stale = |item: &str, why: String| {
        out.push(Stale {
            item: item.to_owned(),
            why,
        });
    };
    if committed.scale != Scale::Quick {
        stale(
            "(report)",
            format!("scale {:?}, not quick", committed.scale),
        );
    }
    for m in measured {
        let Some(e) = committed.entries.iter().find(|e| e.item == m.item) else {
            stale(m.item, "not in the committed report".into());
            continue;
        };
        let tol = e.ci_tolerance.unwrap_or(0.0);
        match e.nowa_value {
            Some(c) if (c - m.value).abs() <= tol * c.abs().max(1e-300) => {}
            c => stale(
                m.item,
                format!(
                    "committed {c:?}, measured now {} (tolerance {tol:e} relative)",
                    m.value
                ),
            ),
        }
        let want = super::values::lookup(m.item).and_then(|v| tolerance(v.paper, m.item));
        if e.ci_tolerance != want {
            let why = format!("tolerance {:?} recorded, {want:?} today", e.ci_tolerance);
            stale(m.item, why);
        }
        if e.scale != m.scale {
            stale(m.item, format!("scale '{}' vs now '{}'", e.scale, m.scale));
        }
        if e.command != m.command {
            let why = format!("command '{}' vs now '{}'", e.command, m.command);
            stale(m.item, why);
        }
    }
    assert!(
        out.len() <= 4 * measured.len() + 1,
        "at most four reasons per entry"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::{report, Paper};

    fn report_of(ms: &[Measured]) -> Reproduction {
        Reproduction {
            nowa: crate::Identity::now("reproduce", &serde_json::json!({}), 42),
            command: "nowa reproduce --quick --out DIR".into(),
            scale: Scale::Quick,
            entries: report::entries(Paper::SsdIq, Ok(ms.to_vec())),
            interrupted: None,
            tables: Vec::new(),
            provenance: vec![crate::reproduce::Provenance::now(
                Paper::SsdIq,
                Scale::Quick,
                42,
                "nowa reproduce --quick --out DIR",
            )],
        }
    }

    fn measured() -> Vec<Measured> {
        vec![
            Measured::new(
                "Fig. 7a: greedy WAF at OP 5% (spare/physical)",
                11.3,
                "s",
                "c",
            ),
            Measured::new(
                "Fig. 7a: greedy WAF at OP 10% (spare/physical)",
                5.27,
                "s",
                "c",
            ),
        ]
    }

    #[test]
    fn an_edited_committed_value_is_stale() {
        let ms = measured();
        let mut rep = report_of(&ms);
        assert!(compare(&rep, &ms).is_empty(), "the same values agree");
        let e = rep
            .entries
            .iter_mut()
            .find(|e| e.item == ms[1].item)
            .expect("entry");
        e.nowa_value = Some(5.2700001);
        let st = compare(&rep, &ms);
        assert_eq!(st.len(), 1, "{st:?}");
        assert_eq!(st[0].item, ms[1].item);
    }

    #[test]
    fn a_changed_scale_or_a_missing_entry_is_stale() {
        let ms = measured();
        let mut rep = report_of(&ms);
        let e = rep.entries.iter_mut().find(|e| e.item == ms[0].item);
        e.expect("entry").scale = "8GiB logical".into();
        rep.entries.retain(|e| e.item != ms[1].item);
        let st = compare(&rep, &ms);
        assert_eq!(st.len(), 2, "{st:?}");
        assert!(st.iter().any(|s| s.why.contains("not in the committed")));
        assert!(st.iter().any(|s| s.why.starts_with("scale")));
    }
}
