//! Parsers of the out-of-place engine's placement flags (`--placement`, `--gc-victim`,
//! `--gc-trigger` in [`crate::engine_flags::OopFlags`], shared by `nowa ycsb` and `nowa tpcc`
//! and the specs' `write_path.oop.placement`): the schemes and victim
//! policies of `nowa_logspace`, refused here when the engine cannot run them.

use crate::flags;
use nowa_logspace::{PlacementKind, PolicyKind};

/// `--placement`: a scheme of `nowa_logspace` the engine can run (FK needs the future).
///
/// # Errors
/// The flag's message: an unknown or refused value.
pub fn placement(s: &str) -> Result<PlacementKind, String> {
    let k: PlacementKind = s
        .parse()
        .map_err(|e: nowa_logspace::PlacementError| e.to_string())?;
    if k.needs_future() {
        return Err(format!(
            "'{s}' needs each write's future, which the engine does not know: record the \
             writes (--record-writes) and replay the log with `nowa frozen replay`"
        ));
    }
    Ok(k)
}

/// `--placement` of the engine: a scheme of `nowa_logspace`, or SepFrozen over a trained
/// model (`--frozen-model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnginePlacement {
    /// A scheme of `nowa_logspace` ([`placement`]).
    Scheme(PlacementKind),
    /// SepFrozenBIT / SepFrozenDAC with this many classes (open zones).
    Frozen(nowa_engine::FrozenBase, u16),
}

impl EnginePlacement {
    /// The scheme as the flag spells it.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            EnginePlacement::Scheme(k) => k.to_string(),
            EnginePlacement::Frozen(nowa_engine::FrozenBase::Bit, n) => {
                format!("sepfrozen-bit:{n}")
            }
            EnginePlacement::Frozen(_, n) => format!("sepfrozen-dac:{n}"),
        }
    }
}

/// `--placement`: `sepfrozen-bit[:N]` / `sepfrozen-dac[:N]` (N classes, 6 by default as the
/// paper; BIT needs 4, DAC 2), else [`placement`].
///
/// # Errors
/// The flag's message: an unknown or refused value.
///
/// # Panics
/// Never: the count parser bounds the classes.
pub fn engine_placement(s: &str) -> Result<EnginePlacement, String> {
    let (name, n) = match s.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let base = match name {
        "sepfrozen-bit" | "sepfrozenbit" => nowa_engine::FrozenBase::Bit,
        "sepfrozen-dac" | "sepfrozendac" => nowa_engine::FrozenBase::Dac,
        _ => return placement(s).map(EnginePlacement::Scheme),
    };
    let min = if base == nowa_engine::FrozenBase::Bit {
        4
    } else {
        2
    };
    let classes = match n {
        None => 6,
        Some(n) => flags::count::<u16>(min, u64::from(nowa_logspace::MAX_CLASSES))(n)?,
    };
    assert!(
        (min..=u64::from(nowa_logspace::MAX_CLASSES)).contains(&u64::from(classes)),
        "the classes the count parser allows"
    );
    Ok(EnginePlacement::Frozen(base, classes))
}

/// `--gc-victim`: a victim policy of `nowa_logspace` (the SSD-iq reference's 2R policies
/// compact inside the FTL model and are refused).
///
/// # Errors
/// The flag's message: an unknown or refused value.
pub fn gc_victim(s: &str) -> Result<PolicyKind, String> {
    let k: PolicyKind = s
        .parse()
        .map_err(|e: nowa_logspace::PolicyParseError| e.to_string())?;
    if matches!(k, PolicyKind::TwoRGreedy | PolicyKind::TwoRFifo) {
        return Err(format!(
            "'{s}' compacts inside the FTL model; the DB GC takes greedy, cost-benefit, \
             cb-sepbit, fifo, sc-fifo, random, k-greedy:K or window:W"
        ));
    }
    Ok(k)
}

/// `--gc-trigger`: the garbage-proportion threshold, None for the free-zone watermark alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GcTrigger(pub Option<f64>);

/// `--gc-trigger`: `free` (the free-zone watermark alone) or `gp[:THETA]` (also when the
/// sealed zones' garbage proportion exceeds THETA, default 0.15 as SepBIT's log).
///
/// # Errors
/// The flag's message: an unknown or refused value.
pub fn gc_trigger(s: &str) -> Result<GcTrigger, String> {
    match s.split_once(':') {
        None if s == "free" => Ok(GcTrigger(None)),
        None if s == "gp" => Ok(GcTrigger(Some(0.15))),
        Some(("gp", t)) => flags::fraction(0.0, true, 1.0, true)(t).map(|v| GcTrigger(Some(v))),
        _ => Err(format!(
            "unknown GC trigger '{s}' (expected free, gp or gp:THETA)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers_accept_the_engine_schemes_and_refuse_the_rest() {
        assert_eq!(placement("sepbit"), Ok(PlacementKind::SepBit(6)));
        assert_eq!(placement("2r"), Ok(PlacementKind::SepGc));
        assert!(placement("fk").unwrap_err().contains("future"));
        assert_eq!(placement("midas"), Ok(PlacementKind::MiDas));
        assert!(placement("bogus").is_err());
        assert_eq!(gc_victim("greedy"), Ok(PolicyKind::Greedy));
        assert!(gc_victim("2r-fifo").is_err());
        assert_eq!(gc_trigger("free"), Ok(GcTrigger(None)));
        assert_eq!(gc_trigger("gp"), Ok(GcTrigger(Some(0.15))));
        assert_eq!(gc_trigger("gp:0.2"), Ok(GcTrigger(Some(0.2))));
        assert!(gc_trigger("gp:1.5").is_err());
        assert!(gc_trigger("later").is_err());
        use nowa_engine::FrozenBase;
        assert_eq!(
            engine_placement("sepfrozen-bit"),
            Ok(EnginePlacement::Frozen(FrozenBase::Bit, 6))
        );
        assert_eq!(
            engine_placement("sepfrozen-dac:3"),
            Ok(EnginePlacement::Frozen(FrozenBase::Dac, 3))
        );
        assert!(
            engine_placement("sepfrozen-bit:3").is_err(),
            "BIT needs 4 classes"
        );
        assert_eq!(
            engine_placement("sepbit"),
            Ok(EnginePlacement::Scheme(PlacementKind::SepBit(6)))
        );
        assert!(engine_placement("fk").is_err());
        assert_eq!(
            engine_placement("sepfrozen-dac").unwrap().name(),
            "sepfrozen-dac:6"
        );
    }
}
