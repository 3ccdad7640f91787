//! The whole of MQSim's bundled TPC-C trace (`traces/tpcc-small.trace` of CMU-SAFARI/MQSim, MIT
//! license, crates/trace/tests/fixtures/LICENSE-MQSim): 6,999 requests on 16 volumes whose
//! addresses reach sector 454,518,359 (217 GiB). The issue measured 4.2 GB to replay it with a
//! direct page table per volume; memory must grow with the pages the trace uses (7,879 here).
//! One test in its own file: the process's peak RSS is this replay's.
use nowa_bench::replay::{self, ReplaySpec, VolumeMode};
use nowa_bench::ycsb::measure::process_peak_rss_bytes;
use nowa_flash::FtlConfig;
use std::path::PathBuf;

#[test]
fn the_whole_mqsim_tpcc_trace_replays_in_memory_for_its_pages() {
    let trace = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../trace/tests/fixtures/mqsim-tpcc-small.trace");
    let spec = ReplaySpec {
        trace,
        format: None,
        ftl: FtlConfig {
            pages_per_block: 16,
            blocks_per_superblock: 1,
            op: 0.25,
            ..FtlConfig::default()
        },
        capacity_pages: None,
        fill: 0.9,
        warmup: 1.0,
        volume: 2.0,
        interval: 0.5,
        precondition: true,
        volumes: VolumeMode::Shared,
        only_volume: None,
        seed: 1,
    };
    let r = replay::run(&spec, None).unwrap();
    assert_eq!(r.format, "disksim", "MQSim's ASCII format is disksim's");
    // Counted independently from the file with awk (fixtures/README.md): 2,618 write requests
    // of 45,710 sectors, 7,995 page writes to 7,879 distinct (volume, 4 KiB page) pairs.
    assert_eq!(r.counts.writes, 2618, "{:?}", r.counts);
    assert_eq!(r.devices.len(), 1);
    let d = &r.devices[0];
    assert_eq!(d.footprint_pages, 7879);
    // Looped (1 drive write of warm-up, 2 measured) on a device sized from the live pages at
    // fill 0.9. A pass writes 7,995 pages to 7,879 addresses, nearly each once, and every pass
    // writes them in the same order: the blocks of one pass are invalidated whole by the next,
    // so greedy GC finds victims with no valid page and WAF is 1 (measured: 1.000).
    assert!(r.waf >= 1.0 && r.waf < 1.01, "{}", r.waf);
    assert!(r.passes > 2.0, "the trace was looped: {} passes", r.passes);
    let rss = process_peak_rss_bytes();
    assert!(rss > 0, "/proc/self/status has VmHWM");
    println!(
        "mqsim tpcc whole trace: {} pages, device {} pages, WAF {:.3}, peak RSS {} MiB",
        d.footprint_pages,
        d.sim.layout.logical_pages,
        r.waf,
        rss >> 20
    );
    // A direct table per volume below its highest address would take 2.8 GB and more.
    assert!(rss < 100 << 20, "peak RSS {} MiB", rss >> 20);
}
