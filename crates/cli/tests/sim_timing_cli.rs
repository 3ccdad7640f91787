//! `--sim-timing`: `nowa ycsb` and `nowa table1` time the simulated SSD by the one timing model,
//! bandwidths by default or a chip preset (FEMU's here), with the same work.

mod common;
use common::{assert_usage_errors, nowa_json};

fn run(timing: &str) -> serde_json::Value {
    nowa_json(&[
        "ycsb",
        "-q",
        "--json",
        "--records",
        "20000",
        "--ops",
        "50000",
        "--seed",
        "4",
        "--threads",
        "1",
        "--pacing",
        "off",
        // The background page cleaner's timing would change which pages are written when.
        "--page-cleaner",
        "off",
        "--sim-timing",
        timing,
    ])
}

/// The same run (one thread, seed 4, no background cleaner) has the same media work under both models; its
/// device-bound time is the bandwidth formula under `bandwidth` (1 GB/s media writes, 3 GB/s
/// reads) and FEMU's closed form under `femu` (4 KiB pages, 200 us program / 40 us read,
/// spread over 64 chips).
#[test]
fn ycsb_device_bound_follows_the_chip_preset() {
    let bw = run("bandwidth");
    let femu = run("femu");
    let secs = |v: &serde_json::Value| v["bound"]["device_busy_secs"].as_f64().unwrap();
    let media = bw["drilldown"]["media_bytes"].as_f64().unwrap();
    assert_eq!(media, femu["drilldown"]["media_bytes"].as_f64().unwrap());
    assert!(
        bw["spec"]["pacing"].get("chips").is_none(),
        "default: bandwidths"
    );
    assert_eq!(femu["spec"]["pacing"]["chips"]["program_us"], 200.0);
    let read = (secs(&bw) - media / 1e9) * 3e9;
    assert!(read >= 0.0 && media > 0.0, "reads {read} media {media}");
    let expect = (media / 4096.0 * 200e-6 + read / 4096.0 * 40e-6) / 64.0;
    let got = secs(&femu);
    println!(
        "bandwidth {} s, femu {got} s, closed form {expect} s",
        secs(&bw)
    );
    assert!(
        (got - expect).abs() <= expect * 0.01,
        "femu {got} vs {expect}"
    );
    let ops = |v: &serde_json::Value| v["bound"]["device_bound_ops_per_sec"].as_f64().unwrap();
    assert!((ops(&femu) - 50000.0 / got).abs() <= ops(&femu) * 0.01);
}

#[test]
fn bad_presets_exit_2() {
    assert_usage_errors(&[
        vec!["ycsb", "--sim-timing", "fast"],
        vec!["table1", "--sim-timing", "ssd"],
        vec!["ssdiq", "sim:1G", "--sim-timing", "zns"],
    ]);
}
