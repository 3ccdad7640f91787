//! The Table 2 / 3 numbers from the recorded phases (matched by [`PhaseKind`]).

use super::steps::PhaseKind;
use super::{estimate_op, OpEstimate, Phase, SsdiqResult, Summary, SweepPoint, WorkloadRow};

/// The first phase of `kind` that ran jobs.
fn first(res: &SsdiqResult, kind: PhaseKind) -> Option<&Phase> {
    res.phases
        .iter()
        .find(|p| p.step == kind && !p.jobs.is_empty())
}

/// A latency phase of `kind` (background job + probe) at `load`, if any.
fn probe(res: &SsdiqResult, kind: PhaseKind, load: Option<f64>) -> Option<&Phase> {
    res.phases
        .iter()
        .find(|p| p.step == kind && p.jobs.len() == 2 && load.is_none_or(|l| p.load == Some(l)))
}

/// Random-write rows: per workload, measured bandwidth and WAFs.
fn rand_write_rows(res: &SsdiqResult, seq_write_mb_s: Option<f64>) -> Vec<WorkloadRow> {
    res.phases
        .iter()
        .filter(|p| p.step == PhaseKind::RandWrite && !p.jobs.is_empty())
        .map(|p| {
            let j = &p.jobs[0];
            WorkloadRow {
                workload: p.workload.clone().unwrap_or_default(),
                kiops: j.iops / 1e3,
                mb_s: j.mb_s,
                waf_implied: seq_write_mb_s
                    .filter(|_| j.mb_s > 0.0)
                    .map(|sw| sw / j.mb_s),
                waf_measured: p.waf_measured,
            }
        })
        .collect()
}

/// Sweep points: read and write probes paired by load.
fn sweep_points(res: &SsdiqResult) -> Vec<SweepPoint> {
    let mut loads: Vec<f64> = res
        .phases
        .iter()
        .filter(|p| matches!(p.step, PhaseKind::SweepRead | PhaseKind::SweepWrite))
        .filter_map(|p| p.load)
        .collect();
    loads.dedup();
    loads
        .into_iter()
        .filter_map(|load| {
            let r = probe(res, PhaseKind::SweepRead, Some(load))?;
            let w = probe(res, PhaseKind::SweepWrite, Some(load))?;
            Some(SweepPoint {
                load,
                write_mb_s_target: r.jobs[0].rate_mb_s.unwrap_or(0.0),
                write_mb_s: (r.jobs[0].mb_s + w.jobs[0].mb_s) / 2.0,
                read: r.jobs[1].lat,
                write: w.jobs[1].lat,
            })
        })
        .collect()
}

/// OP from the uniform workload: from the measured WAF when there is one, else the implied.
fn op_estimate(rows: &[WorkloadRow]) -> Option<OpEstimate> {
    let row = rows.iter().find(|r| r.workload == "uniform")?;
    let (from, waf) = match (row.waf_measured, row.waf_implied) {
        (Some(w), _) => ("measured", w),
        (None, Some(w)) => ("implied", w),
        _ => return None,
    };
    Some(OpEstimate {
        from: from.into(),
        waf,
        op: estimate_op(waf),
    })
}

/// Computes the Table 2 / 3 numbers from the phases.
#[must_use]
pub fn summarize(res: &SsdiqResult) -> Summary {
    let seq_write_mb_s = first(res, PhaseKind::SeqWrite).map(|p| p.jobs[0].mb_s);
    let rand_write = rand_write_rows(res, seq_write_mb_s);
    let lat_read = probe(res, PhaseKind::LatencyRead, None);
    Summary {
        capacity: res.target.capacity,
        seq_write_mb_s,
        seq_read_mb_s: first(res, PhaseKind::SeqRead).map(|p| p.jobs[0].mb_s),
        rand_read_kiops: first(res, PhaseKind::RandRead).map(|p| p.jobs[0].iops / 1e3),
        bg_mb_s: lat_read.map(|p| (p.jobs[0].rate_mb_s.unwrap_or(0.0), p.jobs[0].mb_s)),
        read_lat: lat_read.map(|p| p.jobs[1].lat),
        write_lat: probe(res, PhaseKind::LatencyWrite, None).map(|p| p.jobs[1].lat),
        est_op: op_estimate(&rand_write),
        sweep: sweep_points(res),
        rand_write,
    }
}
