//! The cost of every scheme: one run per placement scheme and victim policy on the same
//! device and workload, page writes per CPU second of one core (`nowa sim --bench-schemes`).
//!
//! Each row is measured by [`run_row`] in a process of its own (the CLI runs itself once per
//! row): a run's resident memory is only its own when no earlier run in the process left
//! freed heap behind (an earlier row's tables, freed but kept by the allocator, were reused
//! or counted by the next row: fk:6 read 14.6 B per page after the other rows, 11.6 alone).

use super::{run, SimError, SimSpec};
use nowa_flash::{GcTrigger, PlacementKind, PolicyKind};
use serde::{Deserialize, Serialize};

/// One row of the table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SchemeRow {
    /// What ran.
    pub scheme: String,
    /// Measured-phase WAF.
    pub waf: f64,
    /// FAR of the measured phase.
    pub far: f64,
    /// Host page writes per CPU second (one core).
    pub writes_per_cpu_sec: f64,
    /// Host page writes per wall second.
    pub writes_per_sec: f64,
    /// Relative to the first row (the native streams path; [`relative_to_first`] sets it,
    /// 1 until then).
    pub relative: f64,
    /// Model memory per physical page (mapping, FAR counts, units, placement state).
    pub bytes_per_page: f64,
    /// Resident memory the run added per physical page, as the kernel counts it (0: not
    /// measured; see `SimResult::rss_bytes`).
    pub rss_bytes_per_page: f64,
}

/// The configurations of the table, built on `base`.
#[must_use]
pub fn scheme_specs(base: &SimSpec) -> Vec<(String, SimSpec)> {
    let mut out = vec![("streams (native), greedy".to_owned(), base.clone())];
    let frozen = PlacementKind::SepFrozenBit(6);
    for p in PlacementKind::all().into_iter().chain([frozen]) {
        let mut s = base.clone();
        s.ftl.placement = Some(p);
        s.ftl.policy = PolicyKind::Greedy;
        out.push((format!("{p}, greedy"), s));
    }
    for policy in [
        PolicyKind::CostBenefit,
        PolicyKind::CostBenefitSepBit,
        PolicyKind::Fifo,
        PolicyKind::ScFifo,
        PolicyKind::TwoRGreedy,
        PolicyKind::TwoRFifo,
    ] {
        let mut s = base.clone();
        s.ftl.policy = policy.clone();
        out.push((format!("streams (native), {policy}"), s));
    }
    let mut s = base.clone();
    s.ftl.placement = Some(PlacementKind::SepBit(6));
    s.ftl.policy = PolicyKind::CostBenefitSepBit;
    s.ftl.gc_trigger = GcTrigger::GarbageProportion(0.15);
    out.push(("sepbit:6, cb-sepbit, GP trigger 0.15".to_owned(), s));
    out
}

/// Runs row `index` of [`scheme_specs`] on this thread (in a process of its own, for its
/// resident memory to be its own: the module documentation). `None` when there is no such
/// row.
///
/// # Errors
/// The run's.
pub fn run_row(base: &SimSpec, index: usize) -> Option<Result<SchemeRow, SimError>> {
    let (name, spec) = scheme_specs(base).into_iter().nth(index)?;
    Some(run(&spec, None).map(|r| {
        let pages = super::f(r.layout.physical_pages.max(1));
        SchemeRow {
            scheme: name,
            waf: r.waf,
            far: r.far.far,
            writes_per_cpu_sec: r.sim_writes_per_cpu_sec,
            writes_per_sec: r.sim_writes_per_sec,
            relative: 1.0,
            bytes_per_page: super::f(r.memory_bytes) / pages,
            rss_bytes_per_page: super::f(r.rss_bytes) / pages,
        }
    }))
}

/// Sets every row's speed relative to the first row's.
pub fn relative_to_first(rows: &mut [SchemeRow]) {
    let Some(first) = rows.first().map(|r| r.writes_per_cpu_sec) else {
        return;
    };
    for r in rows {
        r.relative = r.writes_per_cpu_sec / first;
    }
}

/// The table as text.
#[must_use]
pub fn table(rows: &[SchemeRow]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<40} {:>7} {:>6} {:>14} {:>9} {:>7} {:>10}",
        "scheme (placement, victim policy)",
        "WAF",
        "FAR",
        "M writes/CPU s",
        "relative",
        "B/page",
        "RSS B/page"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<40} {:>7.3} {:>6.3} {:>14.2} {:>9.2} {:>7.2} {:>10.2}",
            r.scheme,
            r.waf,
            r.far,
            r.writes_per_cpu_sec / 1e6,
            r.relative,
            r.bytes_per_page,
            r.rss_bytes_per_page
        );
    }
    s
}
