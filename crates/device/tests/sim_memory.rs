//! A fully written 1 GiB SimDevice stays under ~1.1 GiB of memory (ignored by default: it
//! allocates 1 GiB; run with `cargo test -p nowa-device --test sim_memory -- --ignored`).

use nowa_device::{BlockDevice, SimDevice, SimMode};

fn rss_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = s
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS line");
    line.split_whitespace()
        .nth(1)
        .expect("a value")
        .parse::<u64>()
        .expect("a number")
        * 1024
}

#[test]
#[ignore = "allocates 1 GiB"]
fn one_gib_device_fits_in_1_1_gib() {
    let before = rss_bytes();
    let d = SimDevice::with_capacity(1 << 30, 0.07, SimMode::Conventional).unwrap();
    let cap = d.geometry().capacity;
    let chunk = vec![0x77u8; 1 << 20];
    for off in (0..cap).step_by(chunk.len()) {
        d.write_at(off, &chunk).unwrap();
    }
    let used = rss_bytes() - before;
    println!(
        "1 GiB SimDevice: RSS +{:.3} GiB, modelled {:.3} GiB (data {:.3} GiB)",
        used as f64 / (1u64 << 30) as f64,
        d.memory_bytes() as f64 / (1u64 << 30) as f64,
        d.data_memory_bytes() as f64 / (1u64 << 30) as f64
    );
    assert!(
        used as f64 <= 1.1 * (1u64 << 30) as f64,
        "RSS grew by {used} bytes"
    );
}
