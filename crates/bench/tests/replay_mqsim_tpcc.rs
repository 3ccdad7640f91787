//! MQSim's bundled TPC-C trace (`traces/tpcc-small.trace` of CMU-SAFARI/MQSim, MIT license):
//! 16 volumes whose requests reach sector 454,518,359 (217 GiB), 8-sector-aligned and not.
//! The fixture is its last 169 requests (crates/trace/tests/fixtures/README.md). The issue
//! measured 4.2 GB to replay the whole 195 KB trace with a direct page table per volume (4 B per
//! page below each volume's highest address: 56.8 M pages for volume 8); the replay must take
//! memory for the pages it uses. One test in its own file: the process's peak RSS is this
//! replay's.
use nowa_bench::replay::{self, ReplaySpec, VolumeMode};
use nowa_bench::ycsb::measure::process_peak_rss_bytes;
use nowa_flash::FtlConfig;
use std::path::PathBuf;

#[test]
fn mqsim_tpcc_trace_replays_in_memory_for_its_pages() {
    let trace = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../trace/tests/fixtures/mqsim-tpcc-small-tail.trace");
    let spec = ReplaySpec {
        trace,
        format: None,
        ftl: FtlConfig {
            pages_per_block: 4,
            blocks_per_superblock: 1,
            op: 0.5,
            ..FtlConfig::default()
        },
        capacity_pages: None,
        fill: 0.9,
        warmup: 0.5,
        volume: 1.0,
        interval: 0.5,
        precondition: true,
        volumes: VolumeMode::Shared,
        only_volume: None,
        seed: 1,
    };
    // Volume 8 alone, the one with the highest address (page 56,814,797): 14 pages.
    let v8 = replay::run(
        &ReplaySpec {
            volumes: VolumeMode::PerVolume,
            only_volume: Some(8),
            // 16 logical pages: enough spare units for GC's open and reserved units.
            ftl: FtlConfig {
                op: 1.0,
                ..spec.ftl.clone()
            },
            ..spec.clone()
        },
        None,
    )
    .unwrap();
    assert_eq!(v8.devices.len(), 1);
    assert_eq!(v8.devices[0].footprint_pages, 14);
    let r = replay::run(&spec, None).unwrap();
    assert_eq!(r.format, "disksim", "MQSim's ASCII format is disksim's");
    assert_eq!(r.counts.writes, 70, "{:?}", r.counts);
    assert_eq!(r.devices.len(), 1);
    let d = &r.devices[0];
    // 70 writes of 1 to 39 sectors, most of 16 sectors at odd sectors (three pages each):
    // 201 distinct (volume, page) pairs, counted independently from the file.
    assert_eq!(d.footprint_pages, 201);
    assert!(r.waf >= 1.0, "{}", r.waf);
    let rss = process_peak_rss_bytes();
    assert!(rss > 0, "/proc/self/status has VmHWM");
    println!(
        "mqsim tpcc tail: {} pages written, device {} pages, WAF {:.3}, peak RSS {} MiB",
        d.footprint_pages,
        d.sim.layout.logical_pages,
        r.waf,
        rss >> 20
    );
    assert!(rss < 100 << 20, "peak RSS {} MiB", rss >> 20);
}
