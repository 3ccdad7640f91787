//! What `capture` creates in the kernel, each as a guard whose `Drop` undoes it: the scratch
//! directory, the loop device, the file system mount, tracefs (when we mount it), the trace
//! instance and the memory cgroup; the disk statistics the trace is checked against, and the
//! reader of the trace pipe.

use anyhow::{anyhow, bail, Context, Result};
use nowa_trace::{parse_rq_issue, CsvWriter, Op, Record};
use serde::Serialize;
use std::fs;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs a setup command; its stderr becomes the error.
pub(super) fn sh(prog: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {prog}"))?;
    if !out.status.success() {
        bail!(
            "{prog} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Best-effort cleanup step: a failure is printed, never hidden.
fn undo(what: &str, res: Result<()>) {
    if let Err(e) = res {
        eprintln!("nowa capture: cleanup: {what}: {e:#}");
    }
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).with_context(|| format!("writing '{text}' to {}", path.display()))
}

/// The scratch directory (image, mount point, tracefs mount point).
pub(super) struct Scratch(pub(super) PathBuf);
impl Drop for Scratch {
    fn drop(&mut self) {
        // Entry by entry, never recursively: a mount point that failed to unmount keeps its
        // files.
        let _ = fs::remove_file(self.0.join("device.img"));
        let _ = fs::remove_dir(self.0.join("mnt"));
        let _ = fs::remove_dir(self.0.join("tracefs"));
        undo(
            "removing the scratch directory",
            fs::remove_dir(&self.0).map_err(Into::into),
        );
    }
}

/// A loop device over the image, direct I/O on.
pub(super) struct LoopDev {
    pub(super) dev: String,
}
impl LoopDev {
    pub(super) fn attach(image: &Path) -> Result<LoopDev> {
        let img = image.to_str().context("image path is not UTF-8")?;
        let dev = sh("losetup", &["--find", "--show", "--direct-io=on", img])?;
        assert!(dev.starts_with("/dev/"), "losetup prints the device path");
        Ok(LoopDev { dev })
    }
    pub(super) fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }
    pub(super) fn sysfs(&self, file: &str) -> PathBuf {
        Path::new("/sys/block").join(self.name()).join(file)
    }
    /// The device's (major, minor).
    pub(super) fn majmin(&self) -> Result<(u32, u32)> {
        let text = fs::read_to_string(self.sysfs("dev"))?;
        let (a, b) = text
            .trim()
            .split_once(':')
            .ok_or_else(|| anyhow!("bad {}/dev", self.name()))?;
        Ok((a.parse()?, b.parse()?))
    }
}
impl Drop for LoopDev {
    fn drop(&mut self) {
        undo(
            "detaching the loop device",
            sh("losetup", &["-d", &self.dev]).map(|_| ()),
        );
    }
}

/// A mounted file system.
pub(super) struct Mount(pub(super) PathBuf);
impl Drop for Mount {
    fn drop(&mut self) {
        let dir = self.0.to_string_lossy().into_owned();
        if sh("umount", &[&dir]).is_err() {
            // Busy (a leftover process): detach it lazily rather than leave it behind.
            undo("unmounting", sh("umount", &["-l", &dir]).map(|_| ()));
        }
    }
}

/// tracefs: the system's at /sys/kernel/tracing, or one we mounted (and unmount).
pub(super) struct Tracefs {
    root: PathBuf,
    ours: bool,
}
impl Tracefs {
    pub(super) fn find(scratch: &Path) -> Result<Tracefs> {
        for root in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
            if Path::new(root).join("events/block").is_dir() {
                return Ok(Tracefs {
                    root: root.into(),
                    ours: false,
                });
            }
        }
        let root = scratch.join("tracefs");
        fs::create_dir(&root)?;
        let r = root.to_string_lossy().into_owned();
        sh("mount", &["-t", "tracefs", "nodev", &r])
            .context("tracefs is not mounted and cannot be mounted")?;
        let t = Tracefs { root, ours: true };
        if !t.root.join("events/block/block_rq_issue").is_dir() {
            bail!("tracefs has no block:block_rq_issue event (kernel without block tracepoints)");
        }
        Ok(t)
    }
}
impl Drop for Tracefs {
    fn drop(&mut self) {
        if self.ours {
            undo(
                "unmounting tracefs",
                sh("umount", &[&self.root.to_string_lossy()]).map(|_| ()),
            );
        }
    }
}

/// A tracefs instance with `block_rq_issue` filtered to one device.
pub(super) struct Instance(PathBuf);
impl Instance {
    pub(super) fn create(t: &Tracefs, majmin: (u32, u32)) -> Result<Instance> {
        let dir = t
            .root
            .join("instances")
            .join(format!("nowa-capture-{}", std::process::id()));
        fs::create_dir(&dir)
            .with_context(|| format!("creating trace instance {}", dir.display()))?;
        let inst = Instance(dir);
        write_file(&inst.0.join("buffer_size_kb"), "16384")?;
        write_file(&inst.0.join("trace_clock"), "mono")?;
        let ev = inst.0.join("events/block/block_rq_issue");
        // The kernel's dev_t: major in the bits above 20.
        assert!(majmin.1 < 1 << 20, "a minor number fits 20 bits");
        let dev = (majmin.0 << 20) | majmin.1;
        write_file(&ev.join("filter"), &format!("dev == {dev}"))?;
        Ok(inst)
    }
    pub(super) fn pipe(&self) -> PathBuf {
        self.0.join("trace_pipe")
    }
    pub(super) fn enable(&self, on: bool) -> Result<()> {
        write_file(
            &self.0.join("events/block/block_rq_issue/enable"),
            if on { "1" } else { "0" },
        )
    }
    /// Events the ring buffer lost (per-CPU "overrun" and "dropped events").
    pub(super) fn lost_events(&self) -> u64 {
        let Ok(cpus) = fs::read_dir(self.0.join("per_cpu")) else {
            return 0;
        };
        let mut lost = 0;
        for cpu in cpus.flatten() {
            let text = fs::read_to_string(cpu.path().join("stats")).unwrap_or_default();
            for l in text.lines() {
                if let Some(v) = l
                    .strip_prefix("overrun:")
                    .or_else(|| l.strip_prefix("dropped events:"))
                {
                    lost += v.trim().parse::<u64>().unwrap_or(0);
                }
            }
        }
        lost
    }
}
impl Drop for Instance {
    fn drop(&mut self) {
        undo("disabling the tracepoint", self.enable(false));
        undo(
            "removing the trace instance",
            fs::remove_dir(&self.0).map_err(Into::into),
        );
    }
}

/// A cgroup v1 memory cgroup below ours.
pub(super) struct Cgroup(pub(super) PathBuf);
impl Cgroup {
    /// `Ok(None)`: this process has no cgroup v1 memory controller (a usage error upstream).
    pub(super) fn create(limit: u64) -> Result<Option<Cgroup>> {
        let own = fs::read_to_string("/proc/self/cgroup")?;
        let Some(rel) = own
            .lines()
            .filter_map(|l| l.splitn(3, ':').nth(2).zip(l.split(':').nth(1)))
            .find(|(_, ctl)| ctl.split(',').any(|c| c == "memory"))
            .map(|(path, _)| path.trim_start_matches('/').to_string())
        else {
            return Ok(None);
        };
        let base = Path::new("/sys/fs/cgroup/memory").join(rel);
        let dir = base.join(format!("nowa-capture-{}", std::process::id()));
        fs::create_dir(&dir)
            .with_context(|| format!("creating memory cgroup {}", dir.display()))?;
        let cg = Cgroup(dir);
        write_file(&cg.0.join("memory.limit_in_bytes"), &limit.to_string())?;
        Ok(Some(cg))
    }
}
impl Drop for Cgroup {
    fn drop(&mut self) {
        // Leftover processes of the command keep the cgroup busy: end them first.
        let procs = fs::read_to_string(self.0.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.lines().filter_map(|p| p.trim().parse::<i32>().ok()) {
            // SAFETY: kill has no memory effects; pid is a process of our own cgroup.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while fs::remove_dir(&self.0).is_err() {
            if Instant::now() > deadline {
                eprintln!(
                    "nowa capture: cleanup: could not remove cgroup {}",
                    self.0.display()
                );
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Requests and 512-byte sectors per kind: the fields of /sys/block/<dev>/stat that the
/// trace must reproduce, or the same sums over the trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Sums {
    /// Read requests.
    pub reads: u64,
    /// Sectors read.
    pub read_sectors: u64,
    /// Write requests.
    pub writes: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Discard requests.
    pub discards: u64,
    /// Sectors discarded.
    pub discard_sectors: u64,
    /// Flush requests.
    pub flushes: u64,
    /// Requests in flight (the disk statistics only).
    #[serde(skip)]
    pub(super) in_flight: u64,
}

impl Sums {
    fn read(dev: &LoopDev) -> Result<Sums> {
        let text = fs::read_to_string(dev.sysfs("stat"))?;
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|v| v.parse().unwrap_or(0))
            .collect();
        let at = |i: usize| f.get(i).copied().unwrap_or(0);
        Ok(Sums {
            reads: at(0),
            read_sectors: at(2),
            writes: at(4),
            write_sectors: at(6),
            in_flight: at(8),
            discards: at(11),
            discard_sectors: at(13),
            flushes: at(15),
        })
    }

    /// The trace (`self`) matches the disk statistics `stat`: every byte sum and the read,
    /// discard and flush counts are equal; the kernel may count more write I/Os, with no
    /// bytes, than were issued: empty pre-flush writes (fsync, sync) reach the device as the
    /// flush requests already counted, and are never issued as data. Returns those extra
    /// writes, or None on a mismatch.
    #[must_use]
    pub fn matches(&self, stat: &Sums) -> Option<u64> {
        let bytes = self.read_sectors == stat.read_sectors
            && self.write_sectors == stat.write_sectors
            && self.discard_sectors == stat.discard_sectors;
        let counts = self.reads == stat.reads
            && self.discards == stat.discards
            && self.flushes == stat.flushes;
        let extra = stat.writes.checked_sub(self.writes)?;
        (bytes && counts && extra <= stat.flushes).then_some(extra)
    }

    /// The counters moved from `e` to `self` (both read from the same device).
    pub(super) fn since(&self, e: &Sums) -> Sums {
        let d = |a: u64, b: u64| {
            assert!(a >= b, "disk statistics only grow");
            a - b
        };
        Sums {
            reads: d(self.reads, e.reads),
            read_sectors: d(self.read_sectors, e.read_sectors),
            writes: d(self.writes, e.writes),
            write_sectors: d(self.write_sectors, e.write_sectors),
            discards: d(self.discards, e.discards),
            discard_sectors: d(self.discard_sectors, e.discard_sectors),
            flushes: d(self.flushes, e.flushes),
            in_flight: 0,
        }
    }

    fn add(&mut self, r: &Record) {
        let sectors = r.len / 512;
        match r.op {
            Op::Read => {
                (self.reads, self.read_sectors) = (self.reads + 1, self.read_sectors + sectors);
            }
            Op::Write => {
                (self.writes, self.write_sectors) = (self.writes + 1, self.write_sectors + sectors);
            }
            Op::Discard => {
                (self.discards, self.discard_sectors) =
                    (self.discards + 1, self.discard_sectors + sectors);
            }
            Op::Flush => self.flushes += 1,
        }
    }

    /// Requests of every kind.
    #[must_use]
    pub fn requests(&self) -> u64 {
        self.reads + self.writes + self.discards + self.flushes
    }

    /// Waits (up to 10 s) until the counters stop moving for 300 ms with nothing in flight.
    pub(super) fn settle(dev: &LoopDev) -> Result<Sums> {
        let mut last = Sums::quiet(dev)?;
        for _ in 0..30 {
            std::thread::sleep(Duration::from_millis(300));
            let now = Sums::quiet(dev)?;
            if now == last {
                return Ok(now);
            }
            last = now;
        }
        Ok(last)
    }

    /// Waits (up to 5 s) until no request is in flight, then reads.
    pub(super) fn quiet(dev: &LoopDev) -> Result<Sums> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let s = Sums::read(dev)?;
            if s.in_flight == 0 || Instant::now() > deadline {
                return Ok(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// What the reader thread collected.
pub(super) struct Collected {
    pub(super) out: CsvWriter,
    pub(super) sums: Sums,
    pub(super) unparsed: u64,
}

/// The clock the trace instance stamps events with (`trace_clock` mono), in nanoseconds.
pub(super) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the struct we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

/// The trace pipe's reader: where to read, which device, the start time, the records seen so
/// far (for progress) and when to stop.
pub(super) struct Reader {
    pub(super) pipe: PathBuf,
    pub(super) dev: (u32, u32),
    pub(super) t0: u64,
    pub(super) seen: Arc<AtomicU64>,
    pub(super) stop: Arc<AtomicBool>,
}

impl Reader {
    /// Reads `trace_pipe` (non-blocking) until `stop` is set and the pipe is empty.
    pub(super) fn run(self, mut out: CsvWriter) -> Result<Collected> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&self.pipe)?;
        let (mut sums, mut unparsed) = (Sums::default(), 0u64);
        let (mut buf, mut carry) = (vec![0u8; 1 << 16], Vec::<u8>::new());
        loop {
            match f.read(&mut buf) {
                Ok(n) if n > 0 => carry.extend_from_slice(&buf[..n]),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if self.stop.load(SeqCst) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
            while let Some(nl) = carry.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = carry.drain(..=nl).collect();
                unparsed += self.line(&String::from_utf8_lossy(&line), &mut sums, &mut out)?;
            }
            self.seen.store(sums.requests(), SeqCst);
        }
        Ok(Collected {
            out,
            sums,
            unparsed,
        })
    }

    /// One line of the pipe: its records written and summed; 1 when it is an event of ours
    /// that does not parse.
    fn line(&self, text: &str, sums: &mut Sums, out: &mut CsvWriter) -> Result<u64> {
        match parse_rq_issue(text) {
            Some((d, _, recs)) if d == self.dev => {
                for mut r in recs {
                    // The sums count sectors: block requests are whole sectors.
                    assert_eq!(r.len % 512, 0, "a block request of whole sectors");
                    r.ts_ns = r.ts_ns.saturating_sub(self.t0);
                    sums.add(&r);
                    out.push(&r)?;
                }
                Ok(0)
            }
            Some(_) => Ok(0),
            None => Ok(u64::from(text.contains("block_rq_issue"))),
        }
    }
}

/// Whether this process runs as root.
#[must_use]
pub(super) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
