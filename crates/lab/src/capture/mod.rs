//! `capture`: runs a program on a fresh loop device and records every block request it
//! causes, from the kernel's `block:block_rq_issue` tracepoint (tracefs, filtered to the
//! device), in the nowa trace CSV (`OUT/trace.csv`, the run's identity `# nowa {...}` as its
//! first line), then checks the trace against the device's disk statistics. Needs root. Everything it creates (image, loop device, file
//! system mount, memory cgroup, trace instance, tracefs mount) is removed on return and on
//! Ctrl-C, in reverse order of creation, by the guards of [`kernel`].

mod kernel;

use crate::{Cancel, Error, Identity, Progress, Report};
use anyhow::Context as _;
use clap::{Args, ValueEnum};
pub use kernel::Sums;
use kernel::{Cgroup, Collected, Instance, LoopDev, Mount, Reader, Scratch, Tracefs};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The file system the command gets on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Fs {
    /// ext4 (4 KiB blocks, inode tables and journal initialized at mkfs, mounted with discard).
    Ext4,
    /// xfs (mounted with discard).
    Xfs,
    /// No file system: the command gets the raw device.
    None,
}

/// `nowa capture`'s flags.
#[derive(Args, Debug, Clone)]
pub struct Flags {
    /// File system on the device (none: the command gets the raw device).
    #[arg(long, value_enum, default_value = "ext4")]
    pub fs: Fs,
    /// Size of the (sparse) device image.
    #[arg(long, default_value = "1GiB", value_parser = crate::flags::size(1 << 20, 1 << 50))]
    pub size: u64,
    /// Run the command in a cgroup v1 memory cgroup with this limit, so its page cache
    /// cannot hide writes.
    #[arg(long, value_name = "LIMIT", value_parser = crate::flags::size(1 << 20, u64::MAX))]
    pub memory: Option<u64>,
    /// Output directory: the trace goes to OUT/trace.csv (created; a directory that holds
    /// something needs --force).
    #[arg(long, value_name = "DIR", default_value = "capture")]
    pub out: PathBuf,
    /// Write into a non-empty --out (its trace.csv is overwritten).
    #[arg(long)]
    pub force: bool,
    /// Existing directory for the sparse image (default: the system's temporary directory).
    #[arg(long, value_name = "DIR")]
    pub image_dir: Option<PathBuf>,
    /// The command and its arguments (after `--`). `{dir}` and `{dev}` in them become the
    /// mount directory and the device; they are also in $NOWA_CAPTURE_DIR and
    /// $NOWA_CAPTURE_DEV. With a file system the command runs in the mount directory.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

/// A capture: the flags, as they are (nothing is sized automatically).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// File system on the device.
    pub fs: Fs,
    /// Bytes of the device image.
    pub size: u64,
    /// Memory limit of the command's cgroup, bytes.
    pub memory: Option<u64>,
    /// Output directory (`trace.csv` inside).
    pub out: PathBuf,
    /// Write into a non-empty `out`.
    pub force: bool,
    /// Directory for the image (None: the system's temporary directory).
    pub image_dir: Option<PathBuf>,
    /// The command and its arguments.
    pub cmd: Vec<String>,
}

impl Spec {
    /// The spec of the flags.
    #[must_use]
    pub fn from_flags(f: &Flags) -> Spec {
        Spec {
            fs: f.fs,
            size: f.size,
            memory: f.memory,
            out: f.out.clone(),
            force: f.force,
            image_dir: f.image_dir.clone(),
            cmd: f.cmd.clone(),
        }
    }

    /// The trace file.
    #[must_use]
    pub fn trace(&self) -> PathBuf {
        self.out.join("trace.csv")
    }

    /// Checks the fields as the flags are checked.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field.
    pub fn check(&self) -> Result<(), Error> {
        crate::check_ranges(&[
            ("size", self.size, 1 << 20, 1 << 50),
            ("memory", self.memory.unwrap_or(1 << 20), 1 << 20, u64::MAX),
        ])?;
        if self.cmd.first().is_none_or(String::is_empty) {
            return Err(Error::Usage("cmd: no command to run".into()));
        }
        Ok(())
    }
}

/// What a capture measured.
#[derive(Debug, Clone, Serialize)]
pub struct CaptureResult {
    /// The loop device (`/dev/loop3`).
    pub device: String,
    /// The trace written.
    pub trace: PathBuf,
    /// Records in it.
    pub records: u64,
    /// Wall-clock seconds the command ran.
    pub secs: f64,
    /// The trace's sums.
    pub traced: Sums,
    /// The disk statistics' sums over the same time.
    pub stat: Sums,
    /// Write I/Os the kernel counted beyond the trace's, with no bytes (empty pre-flush
    /// writes); None when the trace and the statistics disagree.
    pub extra_writes: Option<u64>,
    /// Events the ring buffer lost.
    pub lost_events: u64,
    /// Events of the device that did not parse.
    pub unparsed: u64,
    /// The trace matches the statistics, nothing lost, nothing unparsed.
    pub check_ok: bool,
    /// The command's exit code (None: killed by a signal).
    pub exit_code: Option<i32>,
    /// The command succeeded.
    pub command_ok: bool,
    /// Ctrl-C stopped the command: the trace covers what ran until then.
    pub interrupted: bool,
}

/// A capture's result under its identity.
pub type Outcome = Report<CaptureResult>;

/// Ctrl-Cs seen: the first stops the command (forwarded as SIGINT), the second kills it; the
/// process itself never dies of one (the guards must undo what the capture created).
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);

/// Counts Ctrl-Cs into [`INTERRUPTS`] and asks the drivers to stop ([`Cancel`]), replacing
/// the handler that kills the process on a second Ctrl-C. Once per process.
fn count_interrupts() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, SeqCst) {
        return;
    }
    if let Err(e) = ctrlc::set_handler(|| {
        INTERRUPTS.fetch_add(1, SeqCst);
        Cancel.request();
    }) {
        eprintln!(
            "nowa capture: warning: no Ctrl-C handler ({e}); cleanup on Ctrl-C is not guaranteed"
        );
    }
}

fn failed(e: anyhow::Error) -> Error {
    Error::Failed {
        what: "capture",
        source: e.into(),
    }
}

/// Checks what the capture needs before any work: the spec, `image_dir`, root, and `out` (a
/// new or empty directory, or `force`), which it creates.
///
/// # Errors
/// [`Error::Usage`] naming the field or flag and the path.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn prepare(spec: &Spec) -> Result<(), Error> {
    spec.check()?;
    crate::resources::check_out_dir("--out", &spec.out, spec.force)?;
    if let Some(d) = &spec.image_dir {
        crate::resources::check_existing_dir("--image-dir", d)?;
    }
    if !kernel::is_root() {
        return Err(Error::Usage(
            "nowa capture needs root (loop device, mount, tracefs): run it as root or with sudo"
                .into(),
        ));
    }
    crate::resources::create_output_dir("--out", &spec.out)?;
    assert!(spec.out.is_dir(), "--out is a directory now");
    Ok(())
}

/// Runs the capture; `progress` gets the requests traced so far (total 0: unknown). A
/// failure before the command ran leaves no trace file behind; after, the trace is kept and
/// the result says what went wrong (`check_ok`, `command_ok`, `interrupted`).
///
/// # Errors
/// [`Error::Usage`]: what [`prepare`] refuses, `--memory` without a cgroup v1 memory
/// controller; [`Error::Failed`]: the device, file system or tracing could not be set up.
///
/// # Panics
/// On a broken invariant (a bug): the assertions name it.
pub fn run(spec: &Spec, progress: Option<Progress<'_>>, cancel: &Cancel) -> Result<Outcome, Error> {
    prepare(spec)?;
    let id = Identity::now("capture", spec, 0);
    let trace = spec.trace();
    // The run's identity first, as every result CSV (`#` lines: the trace readers skip them).
    let out = nowa_trace::CsvWriter::create_commented(&trace, spec.force, false, &id.csv_comment())
        .map_err(crate::trace::trace_error)?;
    count_interrupts();
    let res = capture(spec, out, progress, cancel);
    if res.is_err() {
        let _ = std::fs::remove_file(&trace);
    }
    let result = res?;
    assert_eq!(result.trace, trace, "the trace where the spec puts it");
    assert!(
        !result.check_ok || result.extra_writes.is_some(),
        "a passed check matched the statistics"
    );
    Ok(Report { nowa: id, result })
}

/// Creates the scratch directory, image and loop device, then the file system.
fn setup_device(spec: &Spec, cancel: &Cancel) -> anyhow::Result<(Scratch, LoopDev, Option<Mount>)> {
    let base = spec.image_dir.clone().unwrap_or_else(std::env::temp_dir);
    let scratch = Scratch(base.join(format!("nowa-capture-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0)
        .with_context(|| format!("creating {}", scratch.0.display()))?;
    let image = scratch.0.join("device.img");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(spec.size))
        .with_context(|| format!("creating the image {}", image.display()))?;
    let dev = LoopDev::attach(&image)?;
    if !std::fs::read_to_string(dev.sysfs("loop/dio")).is_ok_and(|s| s.trim() == "1") {
        eprintln!("nowa capture: warning: {} runs without direct I/O (the image's file system refused it)", dev.dev);
    }
    anyhow::ensure!(!cancel.requested(), "interrupted before the command ran");
    let mkfs: &[&str] = match spec.fs {
        Fs::None => return Ok((scratch, dev, None)),
        Fs::Xfs => &["-q", "-f"],
        Fs::Ext4 => &[
            "-q",
            "-F",
            "-b",
            "4096",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0,nodiscard",
        ],
    };
    let mut args = mkfs.to_vec();
    args.push(&dev.dev);
    kernel::sh(&format!("mkfs.{}", fs_name(spec.fs)), &args)?;
    let dir = scratch.0.join("mnt");
    std::fs::create_dir(&dir)?;
    let d = dir.to_string_lossy().into_owned();
    kernel::sh("mount", &["-o", "discard", &dev.dev, &d])?;
    anyhow::ensure!(!cancel.requested(), "interrupted before the command ran");
    Ok((scratch, dev, Some(Mount(dir))))
}

fn fs_name(fs: Fs) -> &'static str {
    match fs {
        Fs::Ext4 => "ext4",
        Fs::Xfs => "xfs",
        Fs::None => "none",
    }
}

/// The command, `{dir}` and `{dev}` replaced, run in the cgroup if there is one.
fn command(spec: &Spec, dev: &LoopDev, dir: Option<&str>, cg: Option<&Cgroup>) -> Command {
    let subst = |s: &String| {
        s.replace("{dir}", dir.unwrap_or(""))
            .replace("{dev}", &dev.dev)
    };
    let args: Vec<String> = spec.cmd.iter().map(subst).collect();
    assert!(!args.is_empty(), "a checked spec has a command");
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
    if let Some(d) = dir {
        cmd.env("NOWA_CAPTURE_DIR", d).current_dir(d);
    }
    cmd
}

/// Runs the command, waiting for it: the first Ctrl-C is forwarded to it, a second kills it;
/// `progress` gets the requests traced so far.
fn run_command(
    mut cmd: Command,
    seen: &AtomicU64,
    progress: Option<Progress<'_>>,
    cancel: &Cancel,
) -> anyhow::Result<ExitStatus> {
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", cmd.get_program().to_string_lossy()))?;
    let mut forwarded = false;
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(st);
        }
        if cancel.requested() && !forwarded {
            // A terminal's Ctrl-C reached the command too; a `kill -INT` of nowa did not.
            let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
            // SAFETY: kill has no memory effects; pid is our child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGINT) };
            forwarded = true;
        }
        if INTERRUPTS.load(SeqCst) > 1 {
            let _ = child.kill();
        }
        if let Some(p) = progress {
            p(seen.load(SeqCst), 0);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The command's memory cgroup, when the spec limits its memory.
fn cgroup(spec: &Spec) -> Result<Option<Cgroup>, Error> {
    let Some(limit) = spec.memory else {
        return Ok(None);
    };
    match Cgroup::create(limit).map_err(failed)? {
        None => Err(Error::Usage(
            "--memory needs the cgroup v1 memory controller (none in /proc/self/cgroup)".into(),
        )),
        some => Ok(some),
    }
}

/// The tracing around the command: set up, trace, settle, check.
fn capture(
    spec: &Spec,
    out: nowa_trace::CsvWriter,
    progress: Option<Progress<'_>>,
    cancel: &Cancel,
) -> Result<CaptureResult, Error> {
    let (scratch, dev, mount) = setup_device(spec, cancel).map_err(failed)?;
    let tracefs = Tracefs::find(&scratch.0).map_err(failed)?;
    let mm = dev.majmin().map_err(failed)?;
    let inst = Instance::create(&tracefs, mm).map_err(failed)?;
    let cg = cgroup(spec)?;
    if cancel.requested() {
        return Err(failed(anyhow::anyhow!(
            "interrupted before the command ran"
        )));
    }
    let (stop, seen) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let reader = Reader {
        pipe: inst.pipe(),
        dev: mm,
        t0: kernel::monotonic_ns(),
        seen: seen.clone(),
        stop: stop.clone(),
    };
    let reader = std::thread::spawn(move || reader.run(out));
    Sums::settle(&dev).map_err(failed)?;
    inst.enable(true).map_err(failed)?;
    let before = Sums::quiet(&dev).map_err(failed)?;
    let t = Instant::now();
    let dir = mount.as_ref().map(|m| m.0.to_string_lossy().into_owned());
    let status = run_command(
        command(spec, &dev, dir.as_deref(), cg.as_ref()),
        &seen,
        progress,
        cancel,
    );
    let secs = t.elapsed().as_secs_f64();
    // Write back what the command left dirty, so it is in the trace.
    let synced = kernel::sh("sync", &["-f", dir.as_deref().unwrap_or(&dev.dev)]);
    // Let the file system's deferred work (journal commits, discards) finish while traced.
    Sums::settle(&dev).map_err(failed)?;
    inst.enable(false).map_err(failed)?;
    let stat = Sums::quiet(&dev).map_err(failed)?.since(&before);
    stop.store(true, SeqCst);
    let got = reader
        .join()
        .map_err(|_| failed(anyhow::anyhow!("the trace reader panicked")))?
        .map_err(failed)?;
    let lost = inst.lost_events();
    drop(cg);
    synced.map_err(failed)?;
    let status = status.map_err(failed)?;
    let mut r = result(spec, &dev, got, stat, lost)?;
    (r.secs, r.exit_code, r.command_ok) = (secs, status.code(), status.success());
    r.interrupted = cancel.requested();
    Ok(r)
}

/// The result of a trace collected against the statistics `stat` (the command's fields are
/// filled by the caller).
fn result(
    spec: &Spec,
    dev: &LoopDev,
    got: Collected,
    stat: Sums,
    lost: u64,
) -> Result<CaptureResult, Error> {
    let traced = got.sums;
    let records = got.out.finish().map_err(crate::trace::trace_error)?;
    // A request of several segments is one record per segment: at least one each.
    assert!(
        records >= traced.requests(),
        "every request traced is in the file"
    );
    let extra_writes = traced.matches(&stat);
    Ok(CaptureResult {
        device: dev.dev.clone(),
        trace: spec.trace(),
        records,
        secs: 0.0,
        traced,
        stat,
        extra_writes,
        lost_events: lost,
        unparsed: got.unparsed,
        check_ok: extra_writes.is_some() && lost == 0 && got.unparsed == 0,
        exit_code: None,
        command_ok: false,
        interrupted: false,
    })
}

/// The report: what ran, the trace against the disk statistics (requests and bytes), the
/// check's verdict, and an `interrupted` line when Ctrl-C stopped the command.
///
/// # Panics
/// If `out` is not a capture's result (its spec is not a capture spec).
#[must_use]
pub fn summary(out: &Outcome) -> String {
    use std::fmt::Write as _;
    let r = &out.result;
    let spec: Spec = serde_json::from_value(out.nowa.spec.clone()).expect("a capture's spec");
    let mut s = format!(
        "nowa capture: {} on {} ({}, {} MiB image), {:.2} s\ntrace     {} ({} records)\n",
        spec.cmd.join(" "),
        r.device,
        fs_name(spec.fs),
        spec.size >> 20,
        r.secs,
        r.trace.display(),
        r.records
    );
    s += &table(&r.traced, &r.stat);
    let dev = Path::new(&r.device)
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    match r.extra_writes {
        Some(extra) if r.check_ok => {
            if extra > 0 {
                let _ = writeln!(s, "note      the kernel counted {extra} more write I/Os than were issued, with no bytes: empty pre-flush writes (fsync, sync), sent to the device as the flushes above");
            }
            let _ = writeln!(s, "check     OK: the trace's byte sums and read/discard/flush counts equal /sys/block/{dev}/stat");
        }
        _ => {
            let _ = writeln!(s, "check     FAILED: the trace disagrees with /sys/block/{dev}/stat ({} events lost by the ring buffer, {} unparsed lines)", r.lost_events, r.unparsed);
        }
    }
    if r.interrupted {
        let _ = writeln!(
            s,
            "interrupted (Ctrl-C): the trace covers the command until it stopped"
        );
    }
    s
}

/// Trace against disk statistics, request counts and bytes.
fn table(t: &Sums, stat: &Sums) -> String {
    let mut s = format!(
        "{:<10} {:>10} {:>14} {:>10} {:>14}\n",
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
        s += &format!(
            "{name:<10} {a_n:>10} {:>14} {b_n:>10} {:>14}\n",
            a_s * 512,
            b_s * 512
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(out: &Path) -> Spec {
        Spec {
            fs: Fs::None,
            size: 64 << 20,
            memory: None,
            out: out.to_owned(),
            force: false,
            image_dir: None,
            cmd: vec!["true".into()],
        }
    }

    #[test]
    fn a_capture_spec_round_trips_and_bad_fields_are_named() {
        let dir = tempfile::tempdir().expect("tmp");
        let job = crate::Job::Capture(Box::new(spec(&dir.path().join("c"))));
        let json = serde_json::to_string(&job).expect("serializes");
        assert!(json.contains("\"fs\":\"none\""), "{json}");
        assert_eq!(crate::parse_job(&json, false).expect("json"), job);
        let toml = toml::to_string(&job).expect("toml");
        assert_eq!(crate::parse_job(&toml, true).expect("toml"), job);
        let bad = json.replace("\"size\":67108864", "\"size\":4096");
        let e = crate::parse_job(&bad, false).expect_err("too small");
        assert!(e.to_string().starts_with("size: 4096"), "{e}");
    }

    #[test]
    fn a_non_empty_out_is_refused_before_any_work() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("keep"), "x").expect("write");
        let e = prepare(&spec(dir.path())).expect_err("not empty");
        assert!(e.is_usage(), "{e}");
        let msg = e.to_string();
        assert!(
            msg.starts_with("--out ") && msg.contains("not empty"),
            "{msg}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("keep")).expect("kept"),
            "x"
        );
    }

    #[test]
    fn the_trace_must_match_the_statistics() {
        let t = Sums {
            writes: 3,
            write_sectors: 24,
            flushes: 2,
            ..Sums::default()
        };
        assert_eq!(t.matches(&t), Some(0));
        let more = Sums { writes: 5, ..t };
        assert_eq!(t.matches(&more), Some(2), "empty pre-flush writes");
        let bytes = Sums {
            write_sectors: 32,
            ..t
        };
        assert_eq!(t.matches(&bytes), None);
        assert_eq!(t.requests(), 5);
    }
}
