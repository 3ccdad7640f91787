//! SepFrozen experiments (docs/sepfrozen.md): the scheme lists every SepFrozen figure and the
//! reproduction share, the synthetic logs and models they start from, the replay settings,
//! and the figures that need no engine ([`figures`]).

pub mod engine;
pub mod engine_figures;
pub mod figures;
pub mod from_trace;
pub mod record;
pub mod replay;
pub mod tools;
pub mod training;

use crate::Error;
use nowa_frozen::replay::{OracleKind, ReplayConfig, Scheme, SchemeRun};
use nowa_frozen::{
    train, Dataset, FrozenError, Model, SampleSpec, Synth, SynthConfig, TrainConfig, WriteRecord,
};
use nowa_logspace::{PlacementKind, PolicyKind};
use std::path::Path;

/// A SepFrozen scheme with six classes: BIT or DAC based, judged by `oracle`.
#[must_use]
pub fn frozen(dac: bool, oracle: OracleKind) -> Scheme {
    Scheme::Frozen {
        dac,
        classes: 6,
        oracle,
    }
}

/// The paper's schemes (Figures 3, 4, 11, 12: NoSep, 2R, WARCIP, DAC, DAC as the paper states
/// it, SepFrozenDAC, SepBIT, SepFrozenBIT, FK, FK-kmeans) and SepFrozenBIT/DAC with the exact
/// labels (a perfect model: what recognition at GC can gain at most).
#[must_use]
pub fn paper_and_truth() -> Vec<Scheme> {
    let mut v = Scheme::paper();
    v.push(frozen(false, OracleKind::Truth));
    v.push(frozen(true, OracleKind::Truth));
    v
}

/// The seven schemes of the paper's configuration sweeps (Figures 15 to 17).
#[must_use]
pub fn seven() -> Vec<Scheme> {
    vec![
        Scheme::Plain(PlacementKind::NoSep),
        Scheme::Plain(PlacementKind::SepGc),
        Scheme::Plain(PlacementKind::Warcip(6)),
        Scheme::Plain(PlacementKind::DacPaper(6)),
        frozen(true, OracleKind::Model),
        Scheme::Plain(PlacementKind::SepBit(6)),
        frozen(false, OracleKind::Model),
    ]
}

/// The pairs the paper compares and FK (the reproduction's items), in this order: DAC as
/// the paper states it, SepFrozenDAC, SepBIT, SepFrozenBIT, FK.
#[must_use]
pub fn compared() -> [Scheme; 5] {
    [
        Scheme::Plain(PlacementKind::DacPaper(6)),
        frozen(true, OracleKind::Model),
        Scheme::Plain(PlacementKind::SepBit(6)),
        frozen(false, OracleKind::Model),
        Scheme::Plain(PlacementKind::Fk(6)),
    ]
}

/// A scheme's name in figures and tables: the replay's name without the default class count
/// (`sepfrozen-bit-truth`, not `sepfrozen-bit-truth:6`).
#[must_use]
pub fn scheme_name(name: &str) -> String {
    name.strip_suffix(":6").unwrap_or(name).to_owned()
}

/// The synthetic write log of `writes` user writes (the default log of the figures).
#[must_use]
pub fn synth(writes: u64, seed: u64) -> Vec<WriteRecord> {
    Synth::new(SynthConfig {
        writes,
        seed,
        ..SynthConfig::default()
    })
    .collect()
}

/// A SepFrozen failure as a run failure.
/// Whether `e` is the fault of an input file (a damaged, cut or foreign write log or model):
/// the CLI exits with 2 on these.
#[must_use]
pub fn is_bad_input(e: &FrozenError) -> bool {
    use std::io::ErrorKind as K;
    use FrozenError as E;
    match e {
        E::Io { source, .. } => matches!(
            source.kind(),
            K::NotFound | K::PermissionDenied | K::InvalidInput | K::IsADirectory
        ),
        E::Read(_)
        | E::Truncated { .. }
        | E::Corrupt { .. }
        | E::Version { .. }
        | E::BadRecord { .. }
        | E::OutOfOrder { .. }
        | E::Exists { .. }
        | E::ModelJson(_)
        | E::BadModel { .. } => true,
        _ => false,
    }
}

pub(crate) fn failed(e: FrozenError) -> Error {
    Error::failed("sepfrozen", e)
}

/// The model trained on `records` with `spec` and `cfg`.
///
/// # Errors
/// Training fails (no sample of a class, a solver error).
pub fn fit(records: &[WriteRecord], spec: &SampleSpec, cfg: &TrainConfig) -> Result<Model, Error> {
    let (data, labels) = Dataset::from_records(records, spec);
    train(&data, spec, cfg, labels.len() as u64).map_err(failed)
}

/// The paper's model (SGD, TWL 2, all six fields) trained on `records` with `seed`.
///
/// # Errors
/// As [`fit`].
pub fn sgd_model(records: &[WriteRecord], seed: u64) -> Result<Model, Error> {
    let cfg = TrainConfig {
        seed,
        ..TrainConfig::default()
    };
    fit(records, &SampleSpec::default(), &cfg)
}

/// The replay settings: zones of `zone_size` bytes, GC at garbage proportion `gp`, victims by
/// `policy`, the online variant's `horizon`.
///
/// # Errors
/// [`Error::Usage`]: a policy the GP trigger cannot drive, a zone too large.
///
/// # Panics
/// Never: a zone holds whole pages by construction (asserted).
pub fn replay_config(
    zone_size: u64,
    gp: f64,
    policy: &PolicyKind,
    horizon: Option<u64>,
    seed: u64,
) -> Result<ReplayConfig, Error> {
    if !matches!(
        policy,
        PolicyKind::Greedy | PolicyKind::CostBenefit | PolicyKind::CostBenefitSepBit
    ) {
        return Err(Error::Usage(format!(
            "--policy {policy}: the GP trigger needs greedy, cost-benefit or cb-sepbit"
        )));
    }
    let unit_pages = u32::try_from(zone_size / 4096)
        .map_err(|_| Error::Usage(format!("--zone-size {zone_size}: too large")))?;
    assert!(
        u64::from(unit_pages) * 4096 <= zone_size,
        "whole pages per zone"
    );
    Ok(ReplayConfig {
        unit_pages,
        gp,
        policy: policy.clone(),
        seed,
        horizon,
        ..ReplayConfig::default()
    })
}

/// A write log read whole; a missing, damaged or foreign file is the user's input.
///
/// # Errors
/// [`Error::Usage`] naming `flag` and the file.
pub fn read_log(flag: &str, p: &Path) -> Result<Vec<WriteRecord>, Error> {
    let bad = |e: FrozenError| Error::Usage(format!("{flag} {}: {e}", p.display()));
    let mut r = nowa_frozen::LogReader::open(p).map_err(bad)?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().map_err(bad)? {
        out.push(rec);
    }
    Ok(out)
}

/// The replay results as a table (and the per-class tables when `classes`).
#[must_use]
pub fn table(runs: &[SchemeRun], classes: bool) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<26} {:>7} {:>7} {:>11} {:>11} {:>8} {:>9} {:>13} {:>8}",
        "scheme",
        "WAF",
        "FAR",
        "GC moves",
        "frozen",
        "victims",
        "victim GP",
        "infer/256MiB",
        "CPU s"
    );
    for r in runs {
        let inf = r.inference.map_or_else(
            || "-".to_owned(),
            |c| format!("{:.3} ms", 1e3 * c.secs_per_256mib()),
        );
        let _ = writeln!(
            s,
            "{:<26} {:>7.3} {:>7.3} {:>11} {:>11} {:>8} {:>9.3} {:>13} {:>8.2}",
            r.scheme,
            r.waf,
            r.far,
            r.gc_pages,
            r.frozen_moves,
            r.victims,
            r.victim_gp,
            inf,
            r.cpu_secs
        );
    }
    if classes {
        for r in runs {
            class_table(&mut s, r);
        }
    }
    s
}

fn class_table(s: &mut String, r: &SchemeRun) {
    use std::fmt::Write;
    let _ = writeln!(s, "\n{} — {}", r.scheme, r.report);
    let _ = writeln!(
        s,
        "class  user writes  GC writes  victims  avg GP  % writes  % valid  avg lifespan"
    );
    for c in &r.classes {
        let st = &c.stats;
        let _ = writeln!(
            s,
            "{:>5}  {:>11}  {:>9}  {:>7}  {:>6.3}  {:>8.2}  {:>7.2}  {:>12.0}",
            c.class,
            st.user_writes,
            st.gc_writes,
            st.units_collected,
            st.mean_gp(),
            100.0 * c.write_share,
            100.0 * c.valid_share,
            st.mean_lifespan()
        );
    }
}

/// A share as a percentage with two decimals, `n/a` when undefined.
#[must_use]
pub fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |x| format!("{:.2}%", 100.0 * x))
}

/// Rows of one CSV file, written with the csv crate under the run's identity line.
pub struct Rows {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Rows {
    /// An empty table with these columns.
    #[must_use]
    pub fn new(header: &[&'static str]) -> Self {
        Rows {
            header: header.to_vec(),
            rows: Vec::new(),
        }
    }

    /// One row.
    ///
    /// # Panics
    /// If the row has another number of cells than the header (a bug).
    pub fn row(&mut self, cells: Vec<String>) {
        assert_eq!(cells.len(), self.header.len(), "one cell per column");
        self.rows.push(cells);
    }

    /// Writes the table to `path`, its first line the identity `id`.
    ///
    /// # Errors
    /// [`Error::Io`].
    ///
    /// # Panics
    /// If the table has no columns (a bug).
    pub fn save(&self, path: &Path, id: &crate::Identity) -> Result<(), Error> {
        assert!(!self.header.is_empty(), "a table has columns");
        let f = crate::csv_file(path, id)?;
        let mut w = csv::Writer::from_writer(f);
        w.write_record(&self.header)
            .map_err(|e| Error::io(path, e))?;
        for r in &self.rows {
            w.write_record(r).map_err(|e| Error::io(path, e))?;
        }
        w.flush().map_err(|e| Error::io(path, e))
    }
}

/// `x` with four decimals (CSV cells).
#[must_use]
pub fn f4(x: f64) -> String {
    format!("{x:.4}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists the figures and the reproduction use hold the schemes the paper compares,
    /// each once, and the figures' names drop only the default class count.
    #[test]
    fn scheme_lists_are_the_papers() {
        let all = paper_and_truth();
        let names: Vec<String> = all.iter().map(|s| scheme_name(&s.to_string())).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert!(
            names.contains(&"sepfrozen-bit-truth".to_owned()),
            "{names:?}"
        );
        for s in seven().iter().chain(&compared()) {
            assert!(all.contains(s), "{s} is among the paper's schemes");
        }
        assert_eq!(scheme_name("sepbit:4"), "sepbit:4");
    }

    #[test]
    fn replay_config_refuses_policies_the_gp_trigger_cannot_drive() {
        let c = replay_config(1 << 20, 0.15, &PolicyKind::Greedy, None, 1).unwrap();
        assert_eq!(c.unit_pages, 256);
        let e = replay_config(1 << 20, 0.15, &PolicyKind::Fifo, None, 1).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("--policy"), "{e}");
    }
}
