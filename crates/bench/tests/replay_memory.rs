//! Trace replay's memory grows with the pages a trace uses, not with its highest address: a
//! trace in MQSim's format whose requests are scattered over 1 TiB per volume replays in a
//! few MiB (the old direct page table took 4 B per page below the highest address, about
//! 1 GiB per volume here). One test in its own file: the process's peak RSS is this replay's.
use nowa_bench::replay::{self, ReplaySpec, VolumeMode};
use nowa_bench::ycsb::measure::process_peak_rss_bytes;
use nowa_flash::FtlConfig;
use std::fmt::Write as _;

#[test]
fn sparse_addresses_replay_in_small_memory() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("sparse.trace");
    // disksim / MQSim ASCII: arrival_ns device lba_sector size_sectors type (0 = write).
    let mut s = String::new();
    let mut ts = 0u64;
    for i in 0..4000u64 {
        for dev in 0..4u64 {
            // 4000 distinct 4 KiB pages per device, spread over 2^31 sectors (1 TiB).
            let lba = ((i * 2_654_435_761) % (1 << 28)) * 8;
            ts += 1000;
            writeln!(s, "{ts} {dev} {lba} 8 0").unwrap();
        }
    }
    std::fs::write(&t, s).unwrap();
    let spec = ReplaySpec {
        trace: t,
        format: None,
        ftl: FtlConfig {
            pages_per_block: 16,
            blocks_per_superblock: 1,
            op: 0.25,
            ..FtlConfig::default()
        },
        capacity_pages: None,
        fill: 0.9,
        warmup: 0.5,
        volume: 1.0,
        interval: 0.5,
        precondition: true,
        volumes: VolumeMode::PerVolume,
        only_volume: None,
        seed: 1,
    };
    let r = replay::run(&spec, None).unwrap();
    assert_eq!(r.devices.len(), 4);
    for d in &r.devices {
        assert_eq!(d.footprint_pages, 4000);
        assert_eq!(d.sim.layout.logical_pages, 4445, "ceil(4000 / 0.9)");
    }
    let rss = process_peak_rss_bytes();
    assert!(rss > 0, "/proc/self/status has VmHWM");
    assert!(
        rss < 200 << 20,
        "peak RSS {} MiB for 16,000 pages",
        rss >> 20
    );
}
