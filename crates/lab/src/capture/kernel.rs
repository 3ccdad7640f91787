//! `nowa capture`: run a program on a fresh loop device and record every block request it
//! causes, from the kernel's `block:block_rq_issue` tracepoint (tracefs, filtered to the
//! device), in the nowa trace CSV. Needs root. Everything it creates (image, loop device, file
//! system mount, memory cgroup, trace instance, tracefs mount) is removed on exit and on
//! Ctrl-C, in reverse order of creation, by the guards below.

use crate::usage;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use nowa_trace::{parse_rq_issue, CsvWriter, Op, Record};
use std::fs;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// File system on the device: ext4, xfs, or none (the command gets the raw device).
    #[arg(long, default_value = "ext4")]
    fs: String,
    /// Size of the (sparse) device image.
    #[arg(long, default_value = "1GiB", value_parser = size_arg)]
    size: u64,
    /// Run the command in a cgroup v1 memory cgroup with this limit, so its page cache
    /// cannot hide writes.
    #[arg(long, value_name = "LIMIT", value_parser = size_arg)]
    memory: Option<u64>,
    /// The trace CSV to write.
    #[arg(long, default_value = "capture.csv")]
    out: PathBuf,
    /// Overwrite --out if it exists.
    #[arg(long)]
    force: bool,
    /// Existing directory for the sparse image (default: the system's temporary directory).
    #[arg(long)]
    image_dir: Option<PathBuf>,
    /// The command and its arguments (after `--`). `{dir}` and `{dev}` in them become the
    /// mount directory and the device; they are also in $NOWA_CAPTURE_DIR and
    /// $NOWA_CAPTURE_DEV. With a file system the command runs in the mount directory.
    #[arg(last = true, required = true, value_name = "CMD")]
    cmd: Vec<String>,
}

fn size_arg(s: &str) -> Result<u64, String> {
    nowa_units::parse_size_min(s, 1 << 20).map_err(|e| e.to_string())
}

/// Set by the Ctrl-C handler; a second Ctrl-C kills the command.
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);

fn interrupted() -> bool {
    INTERRUPTS.load(SeqCst) > 0
}

fn check_interrupt() -> Result<()> {
    if interrupted() {
        bail!("interrupted");
    }
    Ok(())
}

/// Run a setup command; its stderr becomes the error.
fn sh(prog: &str, args: &[&str]) -> Result<String> {
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
struct Scratch(PathBuf);
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
struct LoopDev {
    dev: String,
}
impl LoopDev {
    fn attach(image: &Path) -> Result<LoopDev> {
        let img = image.to_str().context("image path is not UTF-8")?;
        let dev = sh("losetup", &["--find", "--show", "--direct-io=on", img])?;
        Ok(LoopDev { dev })
    }
    fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }
    fn sysfs(&self, file: &str) -> PathBuf {
        Path::new("/sys/block").join(self.name()).join(file)
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
struct Mount(PathBuf);
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
struct Tracefs {
    root: PathBuf,
    ours: bool,
}
impl Tracefs {
    fn find(scratch: &Path) -> Result<Tracefs> {
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
struct Instance(PathBuf);
impl Instance {
    fn create(t: &Tracefs, majmin: (u32, u32)) -> Result<Instance> {
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
        let dev = (majmin.0 << 20) | majmin.1;
        write_file(&ev.join("filter"), &format!("dev == {dev}"))?;
        Ok(inst)
    }
    fn enable(&self, on: bool) -> Result<()> {
        write_file(
            &self.0.join("events/block/block_rq_issue/enable"),
            if on { "1" } else { "0" },
        )
    }
    /// Events the ring buffer lost (per-CPU "overrun" and "dropped events").
    fn lost_events(&self) -> u64 {
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
struct Cgroup(PathBuf);
impl Cgroup {
    fn create(limit: u64) -> Result<Cgroup> {
        let own = fs::read_to_string("/proc/self/cgroup")?;
        let rel = own
            .lines()
            .filter_map(|l| l.splitn(3, ':').nth(2).zip(l.split(':').nth(1)))
            .find(|(_, ctl)| ctl.split(',').any(|c| c == "memory"))
            .map(|(path, _)| path.trim_start_matches('/').to_string())
            .ok_or_else(|| {
                usage("--memory needs the cgroup v1 memory controller (none in /proc/self/cgroup)")
            })?;
        let base = Path::new("/sys/fs/cgroup/memory").join(rel);
        let dir = base.join(format!("nowa-capture-{}", std::process::id()));
        fs::create_dir(&dir)
            .with_context(|| format!("creating memory cgroup {}", dir.display()))?;
        let cg = Cgroup(dir);
        write_file(&cg.0.join("memory.limit_in_bytes"), &limit.to_string())?;
        Ok(cg)
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

/// Fields of /sys/block/<dev>/stat that the trace must reproduce.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sums {
    reads: u64,
    read_sectors: u64,
    writes: u64,
    write_sectors: u64,
    discards: u64,
    discard_sectors: u64,
    flushes: u64,
    in_flight: u64,
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
    fn matches(&self, stat: &Sums) -> Option<u64> {
        let bytes = self.read_sectors == stat.read_sectors
            && self.write_sectors == stat.write_sectors
            && self.discard_sectors == stat.discard_sectors;
        let counts = self.reads == stat.reads
            && self.discards == stat.discards
            && self.flushes == stat.flushes;
        let extra = stat.writes.checked_sub(self.writes)?;
        (bytes && counts && extra <= stat.flushes).then_some(extra)
    }
    fn since(&self, e: &Sums) -> Sums {
        Sums {
            reads: self.reads - e.reads,
            read_sectors: self.read_sectors - e.read_sectors,
            writes: self.writes - e.writes,
            write_sectors: self.write_sectors - e.write_sectors,
            discards: self.discards - e.discards,
            discard_sectors: self.discard_sectors - e.discard_sectors,
            flushes: self.flushes - e.flushes,
            in_flight: 0,
        }
    }
    fn add(&mut self, r: &Record) {
        let sectors = r.len / 512;
        match r.op {
            Op::Read => {
                (self.reads, self.read_sectors) = (self.reads + 1, self.read_sectors + sectors)
            }
            Op::Write => {
                (self.writes, self.write_sectors) = (self.writes + 1, self.write_sectors + sectors)
            }
            Op::Discard => {
                (self.discards, self.discard_sectors) =
                    (self.discards + 1, self.discard_sectors + sectors)
            }
            Op::Flush => self.flushes += 1,
        }
    }
    /// Wait (up to 10 s) until the counters stop moving for 300 ms with nothing in flight.
    fn settle(dev: &LoopDev) -> Result<Sums> {
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
    /// Wait (up to 5 s) until no request is in flight, then read.
    fn quiet(dev: &LoopDev) -> Result<Sums> {
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
struct Collected {
    out: CsvWriter,
    sums: Sums,
    unparsed: u64,
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the struct we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

/// Read `trace_pipe` (non-blocking) until `stop` is set and the pipe is empty.
fn read_pipe(
    pipe: PathBuf,
    dev: (u32, u32),
    t0: u64,
    mut out: CsvWriter,
    stop: Arc<AtomicBool>,
) -> Result<Collected> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&pipe)?;
    let (mut sums, mut unparsed) = (Sums::default(), 0u64);
    let (mut buf, mut carry) = (vec![0u8; 1 << 16], Vec::<u8>::new());
    loop {
        match f.read(&mut buf) {
            Ok(n) if n > 0 => carry.extend_from_slice(&buf[..n]),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if stop.load(SeqCst) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
        while let Some(nl) = carry.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = carry.drain(..=nl).collect();
            let text = String::from_utf8_lossy(&line);
            match parse_rq_issue(&text) {
                Some((d, _, recs)) if d == dev => {
                    for mut r in recs {
                        r.ts_ns = r.ts_ns.saturating_sub(t0);
                        sums.add(&r);
                        out.push(&r)?;
                    }
                }
                Some(_) => {}
                None => unparsed += u64::from(text.contains("block_rq_issue")),
            }
        }
    }
    Ok(Collected {
        out,
        sums,
        unparsed,
    })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn run(a: CaptureArgs) -> Result<()> {
    if !matches!(a.fs.as_str(), "ext4" | "xfs" | "none") {
        return Err(usage(format!(
            "--fs: unknown file system '{}' (expected ext4, xfs or none)",
            a.fs
        )));
    }
    if let Some(d) = &a.image_dir {
        crate::resources::check_existing_dir("--image-dir", d)?;
    }
    if !is_root() {
        return Err(usage(
            "nowa capture needs root (loop device, mount, tracefs): run it as root or with sudo",
        ));
    }
    crate::resources::check_new_output("--out", &a.out, a.force)?;
    let out = CsvWriter::create(&a.out, a.force, false).map_err(|e| usage(e.to_string()))?;
    if let Err(e) = ctrlc::set_handler(|| {
        INTERRUPTS.fetch_add(1, SeqCst);
    }) {
        eprintln!(
            "nowa capture: warning: no Ctrl-C handler ({e}); cleanup on Ctrl-C is not guaranteed"
        );
    }
    let res = capture(&a, out);
    if let Err(e) = &res {
        // A capture that failed before the command ran leaves no trace file behind; one
        // whose command or check failed keeps it (the report says why).
        if e.downcast_ref::<Kept>().is_none() {
            let _ = fs::remove_file(&a.out);
        }
    }
    res
}

/// An error after the trace was written: the file is kept.
#[derive(Debug)]
struct Kept(String);
impl std::fmt::Display for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Kept {}

/// Create the scratch directory, image and loop device, then the file system.
fn setup_device(a: &CaptureArgs) -> Result<(Scratch, LoopDev, Option<Mount>)> {
    let base = a.image_dir.clone().unwrap_or_else(std::env::temp_dir);
    let scratch = Scratch(base.join(format!("nowa-capture-{}", std::process::id())));
    fs::create_dir_all(&scratch.0).with_context(|| format!("creating {}", scratch.0.display()))?;
    let image = scratch.0.join("device.img");
    fs::File::create(&image)
        .and_then(|f| f.set_len(a.size))
        .with_context(|| format!("creating the image {}", image.display()))?;
    let dev = LoopDev::attach(&image)?;
    if !fs::read_to_string(dev.sysfs("loop/dio")).is_ok_and(|s| s.trim() == "1") {
        eprintln!("nowa capture: warning: {} runs without direct I/O (the image's file system refused it)", dev.dev);
    }
    check_interrupt()?;
    let mount = match a.fs.as_str() {
        "none" => None,
        fs_name => {
            let mkfs: &[&str] = if fs_name == "xfs" {
                &["-q", "-f"]
            } else {
                &[
                    "-q",
                    "-F",
                    "-b",
                    "4096",
                    "-E",
                    "lazy_itable_init=0,lazy_journal_init=0,nodiscard",
                ]
            };
            let mut args = mkfs.to_vec();
            args.push(&dev.dev);
            sh(&format!("mkfs.{fs_name}"), &args)?;
            let dir = scratch.0.join("mnt");
            fs::create_dir(&dir)?;
            sh(
                "mount",
                &["-o", "discard", &dev.dev, &dir.to_string_lossy()],
            )?;
            Some(Mount(dir))
        }
    };
    check_interrupt()?;
    Ok((scratch, dev, mount))
}

fn majmin(dev: &LoopDev) -> Result<(u32, u32)> {
    let text = fs::read_to_string(dev.sysfs("dev"))?;
    let (a, b) = text
        .trim()
        .split_once(':')
        .ok_or_else(|| anyhow!("bad {}/dev", dev.name()))?;
    Ok((a.parse()?, b.parse()?))
}

/// Run the command, waiting for it; a second Ctrl-C kills it.
fn run_command(
    a: &CaptureArgs,
    dev: &LoopDev,
    mount: Option<&Mount>,
    cg: Option<&Cgroup>,
) -> Result<ExitStatus> {
    let dir = mount.map(|m| m.0.to_string_lossy().into_owned());
    let subst = |s: &String| {
        s.replace("{dir}", dir.as_deref().unwrap_or(""))
            .replace("{dev}", &dev.dev)
    };
    let args: Vec<String> = a.cmd.iter().map(subst).collect();
    let mut cmd = match cg {
        // The shell moves itself into the cgroup, then becomes the command.
        Some(cg) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg("echo $$ > \"$0\" && exec \"$@\"")
                .arg(cg.0.join("cgroup.procs"))
                .args(&args);
            c
        }
        None => {
            let mut c = Command::new(&args[0]);
            c.args(&args[1..]);
            c
        }
    };
    cmd.env("NOWA_CAPTURE_DEV", &dev.dev);
    if let Some(d) = &dir {
        cmd.env("NOWA_CAPTURE_DIR", d).current_dir(d);
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", args[0]))?;
    let mut forwarded = false;
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(st);
        }
        let n = INTERRUPTS.load(SeqCst);
        if n == 1 && !forwarded {
            // A terminal's Ctrl-C reached the command too; a `kill -INT` of nowa did not.
            let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
            // SAFETY: kill has no memory effects; pid is our child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGINT) };
            forwarded = true;
        }
        if n > 1 {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn capture(a: &CaptureArgs, out: CsvWriter) -> Result<()> {
    let (scratch, dev, mount) = setup_device(a)?;
    let tracefs = Tracefs::find(&scratch.0)?;
    let mm = majmin(&dev)?;
    let inst = Instance::create(&tracefs, mm)?;
    let cg = a.memory.map(Cgroup::create).transpose()?;
    check_interrupt()?;
    let stop = Arc::new(AtomicBool::new(false));
    let t0 = monotonic_ns();
    let reader = {
        let (pipe, stop) = (inst.0.join("trace_pipe"), stop.clone());
        std::thread::spawn(move || read_pipe(pipe, mm, t0, out, stop))
    };
    Sums::settle(&dev)?;
    inst.enable(true)?;
    let before = Sums::quiet(&dev)?;
    let t = Instant::now();
    let status = run_command(a, &dev, mount.as_ref(), cg.as_ref());
    let secs = t.elapsed().as_secs_f64();
    // Write back what the command left dirty, so it is in the trace.
    let target = mount
        .as_ref()
        .map_or(dev.dev.clone(), |m| m.0.to_string_lossy().into_owned());
    let synced = sh("sync", &["-f", &target]);
    // Let the file system's deferred work (journal commits, discards) finish while traced.
    Sums::settle(&dev)?;
    inst.enable(false)?;
    let after = Sums::quiet(&dev)?;
    stop.store(true, SeqCst);
    let got = reader
        .join()
        .map_err(|_| anyhow!("the trace reader panicked"))??;
    let lost = inst.lost_events();
    drop(cg);
    report(a, &dev, &after.since(&before), got, lost, secs)?;
    synced?;
    let status = status?;
    if interrupted() {
        let msg = format!(
            "interrupted; the trace up to then is in {}",
            a.out.display()
        );
        return Err(Kept(msg).into());
    }
    if !status.success() {
        bail!(
            "the command failed ({status}); its trace is in {}",
            a.out.display()
        );
    }
    Ok(())
}

/// Trace against disk statistics, request counts and bytes.
fn print_table(t: &Sums, stat: &Sums) {
    println!(
        "{:<10} {:>10} {:>14} {:>10} {:>14}",
        "", "trace I/Os", "trace bytes", "stat I/Os", "stat bytes"
    );
    let rows = [
        (
            "reads",
            t.reads,
            t.read_sectors,
            stat.reads,
            stat.read_sectors,
        ),
        (
            "writes",
            t.writes,
            t.write_sectors,
            stat.writes,
            stat.write_sectors,
        ),
        (
            "discards",
            t.discards,
            t.discard_sectors,
            stat.discards,
            stat.discard_sectors,
        ),
        ("flushes", t.flushes, 0, stat.flushes, 0),
    ];
    for (name, a_n, a_s, b_n, b_s) in rows {
        println!(
            "{name:<10} {a_n:>10} {:>14} {b_n:>10} {:>14}",
            a_s * 512,
            b_s * 512
        );
    }
}

fn report(
    a: &CaptureArgs,
    dev: &LoopDev,
    stat: &Sums,
    got: Collected,
    lost: u64,
    secs: f64,
) -> Result<()> {
    let t = got.sums;
    let records = got.out.finish()?;
    println!(
        "nowa capture: {} on {} ({}, {} MiB image), {secs:.2} s",
        a.cmd.join(" "),
        dev.dev,
        a.fs,
        a.size >> 20
    );
    println!("trace     {} ({records} records)", a.out.display());
    print_table(&t, stat);
    let verdict = t.matches(stat);
    if let (Some(extra), 0, 0) = (verdict, lost, got.unparsed) {
        if extra > 0 {
            println!(
                "note      the kernel counted {extra} more write I/Os than were issued, with no bytes: \
                 empty pre-flush writes (fsync, sync), sent to the device as the flushes above"
            );
        }
        println!(
            "check     OK: the trace's byte sums and read/discard/flush counts equal /sys/block/{}/stat",
            dev.name()
        );
        return Ok(());
    }
    Err(Kept(format!(
        "check FAILED: the trace disagrees with /sys/block/{}/stat ({lost} events lost by the ring buffer, {} unparsed lines)",
        dev.name(),
        got.unparsed
    ))
    .into())
}
