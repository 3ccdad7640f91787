//! Is the committed report stale? The quick entries cheap enough for a test (the ssd-iq
//! simulations: seeded, deterministic, seconds each) are measured again and compared with
//! the committed report's values (`crates/lab/tests/committed_values.rs`, run by CI), so a
//! change that moves one of them, or a hand edit of the report, fails until the report is
//! regenerated (`nowa reproduce --quick --paper ssd-iq --out docs/reproduction --force`).

use super::{Measured, Reproduction, Scale, Spec};
use crate::Error;
use std::path::PathBuf;

/// Relative tolerance of a re-measured cheap entry: the runs are deterministic simulations
/// (same seed, same points), so any difference beyond a last-digit float difference of
/// another libm is a change (the report prints 3 significant digits).
pub const TOLERANCE: f64 = 1e-12;

/// One disagreement between the committed report and today's code.
#[derive(Debug, Clone, PartialEq)]
pub struct Stale {
    /// The entry.
    pub item: String,
    /// What differs.
    pub why: String,
}

/// The cheap entries of the quick report, measured now at `seed` (the committed report's).
///
/// # Errors
/// A simulation fails.
pub fn measure(seed: u64) -> Result<Vec<Measured>, Error> {
    let spec = Spec {
        scale: Scale::Quick,
        papers: Vec::new(),
        out: PathBuf::new(),
        force: false,
        seed,
    };
    super::ssdiq::entries_only(&spec)
}

/// Every measured entry against the committed one of the same item: value within
/// [`TOLERANCE`], same scale and command; an item the report lacks is stale too.
///
/// # Panics
/// Never: at most three reasons per entry (asserted).
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
        match e.nowa_value {
            Some(c) if (c - m.value).abs() <= TOLERANCE * c.abs().max(1e-300) => {}
            c => stale(m.item, format!("committed {c:?}, measured now {}", m.value)),
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
        out.len() <= 3 * measured.len() + 1,
        "at most three reasons per entry"
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
