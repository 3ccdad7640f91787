//! WARCIP pinned to the last digit: seed-fixed runs whose counters and cluster centers were
//! recorded from the two-table WARCIP (a `last` and a `penalty` time per page) before its
//! per-page state was packed. A center is the running mean of every rewrite interval its
//! cluster took, so a single interval (or penalty) read differently changes the printed
//! centers, not only the WAF. Trims and several victims per round are among the runs.
mod common;
use common::*;
use nowa_flash::{Ftl, FtlConfig, PlacementKind, PolicyKind};
use nowa_workload::{WorkloadParams, WorkloadSpec};

/// One run: media pages, GC copies, erases of the measured phase, and the centers report.
fn pinned(spec: &str, cfg: FtlConfig, seed: u64, trim_every: u64) -> String {
    let mut f = Ftl::new(FtlConfig { seed, ..cfg }).expect("valid config");
    let n = f.logical_pages();
    let mut w = spec
        .parse::<WorkloadSpec>()
        .expect("valid workload")
        .build(&WorkloadParams::new(n, 1.0, seed).expect("valid params"))
        .expect("workload builds");
    let mut buf = vec![0u64; 1];
    let mut rng = Rng(seed);
    f.precondition_sequential(n).expect("precondition");
    let mut phase = |f: &mut Ftl| {
        for i in 0..2 * n {
            w.fill_writes(&mut buf);
            f.write(buf[0], 0).expect("write");
            if trim_every > 0 && i % trim_every == 0 {
                let start = rng.below(n - 8);
                f.trim(start, 1 + rng.below(8)).expect("trim");
            }
        }
    };
    phase(&mut f);
    let c0 = f.counters();
    phase(&mut f);
    let c = f.counters().since(&c0);
    format!(
        "{}: ({}, {}, {}, {}) {}",
        f.placement_name(),
        c.media_pages,
        c.gc_pages,
        c.erases,
        c.trimmed_pages,
        f.placement_report()
    )
}

fn placed(p: PlacementKind, policy: PolicyKind, unit_pages: u32) -> FtlConfig {
    FtlConfig {
        placement: Some(p),
        op: 0.25,
        ..config(1 << 14, 0.25, unit_pages, policy)
    }
}

#[test]
fn warcip_runs_match_their_golden_outputs() {
    let runs = [
        pinned(
            "zipf-shift:0.9:0.5",
            placed(PlacementKind::Warcip(6), PolicyKind::Greedy, 64),
            7,
            0,
        ),
        pinned(
            "uniform",
            placed(PlacementKind::Warcip(2), PolicyKind::Greedy, 32),
            11,
            0,
        ),
        pinned(
            "zipf:0.99",
            placed(PlacementKind::Warcip(16), PolicyKind::CostBenefit, 64),
            3,
            97,
        ),
        pinned(
            "zipf:0.8",
            FtlConfig {
                victims_per_round: 3,
                ..placed(PlacementKind::Warcip(4), PolicyKind::Greedy, 128)
            },
            5,
            31,
        ),
    ];
    let text: String = runs.iter().map(|r| format!("{r}\n")).collect();
    assert_eq!(
        text, GOLDEN,
        "a seed-fixed WARCIP result changed; got:\n{text}"
    );
}

/// Recorded from the two-table WARCIP (see the module docs).
const GOLDEN: &str = "\
warcip:6: (101128, 68360, 1580, 0) warcip centers (user writes): [1711, 25437, 54303, 90472, 139178]
warcip:2: (83941, 51173, 2623, 0) warcip centers (user writes): [19881]
warcip:16: (67333, 34565, 1051, 1344) warcip centers (user writes): [200, 1789, 3579, 8341, 10801, 16117, 22369, 29046, 38334, 53578, 66550, 84901, 115309, 136422]
warcip:4: (62000, 29232, 483, 3750) warcip centers (user writes): [6343, 58588, 126699]
";
