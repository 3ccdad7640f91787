//! Ctrl-C in a PLAN job: `nowa_lab::plan::run` polls the process-wide stop flag (its own
//! test binary, so raising the flag stops no other test) and returns what it measured.

use nowa_bench::plan::WorkloadKind;
use nowa_lab::plan::{self, ChipTiming, DeviceSpec, RunSpec};
use nowa_lab::Cancel;

fn spec() -> RunSpec {
    RunSpec {
        device: DeviceSpec {
            channels: 8,
            chips_per_channel: 8,
            blocks_per_chip: 512,
            pages_per_block: 4,
            page_bytes: 16384,
            op_physical: 0.0625,
            timing: ChipTiming::Femu,
            drive_writes: 0.5,
            seed: 1,
            gc_reserve: 0.05,
            background_gc: 0.25,
            fill: 0.9,
            time_scale: 16.0,
        },
        scheme: "plan-pred-1/4".into(),
        workload: WorkloadKind::Fio,
        trace: None,
        trace_limit: None,
        skip_bad: false,
    }
}

#[test]
fn a_cancelled_plan_job_returns_early_with_what_it_measured() {
    let s = spec();
    Cancel.clear();
    let whole = plan::run(&s, None, &Cancel).unwrap().result;
    assert!(!whole.interrupted);
    Cancel.request();
    let cut = plan::run(&s, None, &Cancel).unwrap().result;
    Cancel.clear();
    println!("cut {:?} whole {:?}", cut.counters, whole.counters);
    assert!(cut.interrupted, "the stop was seen");
    assert_eq!(
        cut.requests,
        nowa_bench::plan::TICK_REQUESTS,
        "stopped at the first poll"
    );
    assert!(cut.counters.host_pages > 0, "what it measured is returned");
    assert!(cut.counters.host_pages * 4 < whole.counters.host_pages);
}
