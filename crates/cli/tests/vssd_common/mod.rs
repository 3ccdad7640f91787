//! Helpers of the tests that run a vssd (`vssd_cli.rs`, `vssd_capture.rs`): whether FUSE and
//! loop devices are available (saying why not), a `nowa vssd serve` daemon, and running tools.
#![allow(dead_code)]

use crate::common::nowa;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether FUSE tests can run here (/dev/fuse, and root or fusermount3 to mount); prints
/// why not when they cannot.
pub fn fuse_available(test: &str) -> bool {
    // SAFETY: geteuid takes no arguments and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let why = if !Path::new("/dev/fuse").exists() {
        Some("no /dev/fuse on this machine")
    } else if !root && !on_path("fusermount3") {
        Some("not root and no fusermount3 (apt-get install fuse3)")
    } else {
        None
    };
    if let Some(why) = why {
        println!("SKIPPED {test}: {why}");
    }
    why.is_none()
}

/// Whether `tool` is a file in a PATH directory (the one in tests/common).
pub use crate::common::on_path;

/// A `nowa vssd serve` daemon; dropping it stops it.
pub struct Daemon {
    pub dir: PathBuf,
    pub child: Child,
}

impl Daemon {
    pub fn start(dir: &Path, extra: &[&str]) -> Daemon {
        let d = dir.to_str().expect("utf-8 path");
        let child = Command::new(env!("CARGO_BIN_EXE_nowa"))
            .args(["vssd", "serve", "--dir", d])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start nowa vssd serve");
        let mut daemon = Daemon {
            dir: dir.to_path_buf(),
            child,
        };
        let t = Instant::now();
        while std::fs::read_to_string(dir.join(".stats")).is_err() {
            if let Ok(Some(st)) = daemon.child.try_wait() {
                panic!("vssd serve exited with {st} before mounting");
            }
            assert!(t.elapsed() < Duration::from_secs(20), "no mount after 20 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        daemon
    }

    pub fn stats(&self) -> serde_json::Value {
        let out = nowa(&["vssd", "stats", self.dir.to_str().expect("utf-8"), "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("stats JSON")
    }

    pub fn stat(&self, key: &str) -> u64 {
        self.stats()[key]
            .as_u64()
            .unwrap_or_else(|| panic!("no {key}"))
    }

    pub fn disk(&self) -> std::fs::File {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(self.dir.join("disk"))
            .expect("open DIR/disk")
    }

    /// `nowa vssd stop`, then the daemon's own summary.
    pub fn stop(mut self) -> String {
        let out = nowa(&["vssd", "stop", self.dir.to_str().expect("utf-8")]);
        assert!(
            out.status.success(),
            "stop: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let st = self.child.wait().expect("daemon exit");
        assert!(st.success(), "daemon exited with {st}");
        let mut s = String::new();
        if let Some(mut o) = self.child.stdout.take() {
            std::io::Read::read_to_string(&mut o, &mut s).expect("daemon stdout");
        }
        s
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = nowa(&["vssd", "stop", self.dir.to_str().unwrap_or("")]);
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A page-aligned buffer for O_DIRECT.
pub fn aligned(bytes: usize, fill: u8) -> (Vec<u8>, usize) {
    let v = vec![fill; bytes + 4096];
    let off = v.as_ptr().align_offset(4096);
    (v, off)
}

/// The tools a loop-device test needs, or the one that is missing.
pub fn loop_tools(extra: &[&str]) -> Result<(), String> {
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root (losetup and mount need it)".into());
    }
    for &t in ["losetup", "mkfs.ext4", "mount", "umount"]
        .iter()
        .chain(extra)
    {
        if !on_path(t) {
            return Err(format!("{t} is not installed"));
        }
    }
    Ok(())
}

/// A file system mounted at a directory; dropped without [`Mounted::unmount`] (a test that
/// failed on it), it is unmounted all the same, so that the daemon's stop can detach the loop
/// device below and the test leaves no mount behind.
pub struct Mounted(Option<PathBuf>);

impl Mounted {
    /// Mounts `dev` at `dir`.
    pub fn mount(dev: &str, dir: &Path) -> Mounted {
        run(Command::new("mount").arg(dev).arg(dir));
        Mounted(Some(dir.to_path_buf()))
    }

    /// Unmounts it, asserting success.
    pub fn unmount(mut self) {
        let dir = self.0.take().expect("mounted");
        run(Command::new("umount").arg(dir));
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let _ = Command::new("umount").arg("-l").arg(dir).status();
        }
    }
}

/// Runs `c`, asserting success; its stdout.
pub fn run(c: &mut Command) -> String {
    let o = c.output().expect("run");
    assert!(
        o.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// WAF of `nowa sim --trace TRACE` replayed once through from an empty device of `capacity`
/// bytes and the device flags `dev` (all but --capacity), checking that the replay's device
/// has that capacity and that it issued exactly `host_pages` page writes.
pub fn replay_waf(trace: &Path, capacity: u64, dev: &[&str], host_pages: u64) -> f64 {
    let logical = capacity / 4096;
    // The measured volume in drive writes: exactly the pages the trace holds, so the replay
    // stops at the trace's end instead of looping it.
    let volume = format!("{:.9}", host_pages as f64 / logical as f64);
    let cap = capacity.to_string();
    let trace = trace.to_str().expect("utf-8");
    let args = [
        &[
            "sim",
            "--json",
            "-q",
            "--trace",
            trace,
            "--trace-capacity",
            &cap,
        ][..],
        &["--no-precondition", "--warmup", "0", "--volume", &volume][..],
        dev,
    ]
    .concat();
    let r = crate::common::nowa_json(&args);
    assert_eq!(
        r["devices"][0]["sim"]["layout"]["logical_pages"], logical,
        "the replay device has the vssd's capacity"
    );
    assert_eq!(
        r["measured"]["host_pages"], host_pages,
        "the same page writes"
    );
    r["waf"].as_f64().expect("replay waf")
}
