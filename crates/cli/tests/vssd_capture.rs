//! A program run on a vssd gives the SSD WAF that `nowa sim --trace` gives for the same
//! program captured outside the vssd (`nowa capture` on a loop device over a plain file),
//! within 1%, on the same FTL configuration. The program is deterministic (a seeded write
//! pattern with a discard in the middle), so both runs send the same block requests; the test
//! checks that too (the same bytes written). Runs as root where /dev/fuse, loop devices,
//! tracefs and python3 exist, and prints `SKIPPED ...: why` elsewhere.

mod common;
mod vssd_common;
use std::path::Path;
use std::process::Command;
use vssd_common::{fuse_available, loop_tools, on_path, replay_waf, run, Daemon};

const NAME: &str = "a_program_on_the_vssd_has_the_waf_of_its_capture_replayed";
const PAGE: u64 = 4096;
/// The device: small enough for seconds of writes, 2 blocks per superblock so GC has many
/// units to choose from (as the vssd tests that reproduce `nowa sim`).
const CAPACITY: u64 = 64 << 20;
const DEV: [&str; 2] = ["--blocks-per-superblock", "2"];

/// The program, the same in both runs: `python3 -c WORKLOAD DEVICE SEED`. On the raw block
/// device with O_DIRECT (so nothing is cached or merged): a sequential fill in 1 MiB writes,
/// 2 capacities of uniform random 4 KiB writes, a discard (BLKDISCARD) of the upper half, one
/// capacity of random writes into the lower half, fsync. Every choice comes from the seed.
const WORKLOAD: &str = r#"
import fcntl, mmap, os, random, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_DIRECT)
size = os.lseek(fd, 0, os.SEEK_END)
pages = size // 4096
big = mmap.mmap(-1, 1 << 20); big.write(b"\x01" * (1 << 20))
for i in range(size >> 20):
    os.pwrite(fd, big, i << 20)
page = mmap.mmap(-1, 4096); page.write(b"\x5a" * 4096)
r = random.Random(int(sys.argv[2]))
for _ in range(2 * pages):
    os.pwrite(fd, page, r.randrange(pages) * 4096)
BLKDISCARD = 0x1277
fcntl.ioctl(fd, BLKDISCARD, struct.pack("QQ", size // 2, size // 2))
for _ in range(pages):
    os.pwrite(fd, page, r.randrange(pages // 2) * 4096)
os.fsync(fd)
os.close(fd)
"#;

/// Why the capture side cannot run here, if it cannot.
fn capture_unavailable() -> Option<String> {
    if let Err(why) = loop_tools(&["python3"]) {
        return Some(why);
    }
    if !Path::new("/sys/kernel/tracing").exists() && !Path::new("/sys/kernel/debug").exists() {
        return Some("no tracefs (nowa capture reads the block tracepoints)".into());
    }
    None
}

/// `nowa capture --fs none` of the workload: the captured trace's path. The image goes to
/// /dev/shm where there is one: on a disk, every O_DIRECT write of the loop device waits for
/// the disk (ten times slower here), and the trace is the same.
fn capture(tmp: &Path) -> std::path::PathBuf {
    let out = tmp.join("cap");
    let shm = tempfile::tempdir_in("/dev/shm").ok();
    let images = shm
        .as_ref()
        .map_or_else(|| tmp.join("images"), |d| d.path().to_owned());
    if shm.is_none() {
        std::fs::create_dir(&images).expect("mkdir");
    }
    let size = CAPACITY.to_string();
    let out_s = out.to_str().expect("utf-8");
    let args = [
        "capture",
        "--fs",
        "none",
        "--size",
        &size,
        "--image-dir",
        images.to_str().expect("utf-8"),
        "-q",
        "--out",
        out_s,
        "--",
        "python3",
        "-c",
        WORKLOAD,
        "{dev}",
        "42",
    ];
    let o = common::nowa(&args);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "capture: {stdout}\n{stderr}");
    assert!(stdout.contains("check     OK"), "{stdout}");
    out.join("trace.csv")
}

/// The workload on a loop device over a fresh vssd's disk: the vssd's counters at the end.
fn on_the_vssd(tmp: &Path) -> serde_json::Value {
    let dir = tmp.join("mnt");
    let size = CAPACITY.to_string();
    let d = Daemon::start(&dir, &[&["--capacity", &size][..], &DEV[..]].concat());
    let dev = run(Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args(["vssd", "attach"])
        .arg(&dir))
    .trim()
    .to_owned();
    run(Command::new("python3").args(["-c", WORKLOAD, &dev, "42"]));
    let s = d.stats();
    let summary = d.stop();
    assert!(summary.contains("WAF"), "{summary}");
    s
}

#[test]
fn a_program_on_the_vssd_has_the_waf_of_its_capture_replayed() {
    if !fuse_available(NAME) {
        return;
    }
    if !on_path("python3") {
        println!("SKIPPED {NAME}: no python3 (it runs the workload)");
        return;
    }
    if let Some(why) = capture_unavailable() {
        println!("SKIPPED {NAME}: {why}");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let trace = capture(tmp.path());
    let st = common::nowa_json(&["trace", "stats", trace.to_str().expect("utf-8"), "--json"]);
    let captured = st["total"]["write_bytes"].as_u64().expect("write_bytes");
    assert!(
        st["total"]["discards"].as_u64().expect("discards") >= 1,
        "{st}"
    );
    let s = on_the_vssd(tmp.path());
    let host = s["host_write_bytes"].as_u64().expect("host");
    let pages = CAPACITY / PAGE;
    assert_eq!(host, (1 + 2 + 1) * pages * PAGE, "the workload's bytes");
    assert_eq!(captured, host, "the capture holds the bytes the vssd got");
    assert_eq!(s["trim_bytes"].as_u64(), Some(CAPACITY / 2), "the discard");
    let vssd_waf = s["media_write_bytes"].as_u64().expect("media") as f64 / host as f64;
    let replay = replay_waf(&trace, CAPACITY, &DEV, host / PAGE);
    println!("{NAME}: vssd WAF {vssd_waf:.4}, nowa sim --trace of the capture {replay:.4}");
    assert!(vssd_waf > 1.5, "GC ran: {vssd_waf}");
    assert!(
        (replay / vssd_waf - 1.0).abs() < 0.01,
        "vssd {vssd_waf:.4} vs the capture replayed {replay:.4}"
    );
}
