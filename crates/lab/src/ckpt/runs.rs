//! The child processes: one paced `nowa tpcc` run per point, and the
//! crash runs (on a file paced by the same timing model, stopped and copied at [`Spec::crash_times`], killed with SIGKILL
//! `seconds` after their load, each image then recovered by [`Host::check`]). Both reuse
//! their result from `work` when it is of the same parameters (the `.args` file beside it). Both poll Ctrl-C ([`Cancel`]): a stop kills the
//! child and returns `None`; the point's part-run is not kept (a reused `work` would take it
//! for a whole run).

use super::{Host, Point, Recovery, Spec, TpccReport};
use crate::{Cancel, Error};
use std::io::{Read as _, Seek as _};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

fn failed(what: &'static str, msg: String) -> Error {
    Error::Failed {
        what,
        source: msg.into(),
    }
}

/// Polls `child` every 50 ms until it exits (`Some`) or Ctrl-C is asked (`None`: the child
/// is killed and reaped; in a terminal it had the SIGINT too).
fn wait_or_stop(child: &mut Child) -> Result<Option<ExitStatus>, Error> {
    loop {
        if Cancel.requested() {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        let st = child
            .try_wait()
            .map_err(|e| failed("running nowa tpcc", e.to_string()))?;
        if st.is_some() {
            return Ok(st);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One `nowa tpcc ARGS --out=DIR` child process: its typed report, moved from DIR to `file`,
/// or `None` when Ctrl-C stopped it (`file`, a part-run, removed).
///
/// # Errors
/// The child cannot start or fails (its stderr is the message), or its report is unreadable.
///
/// # Panics
/// If the report is not where it was moved (a bug).
pub fn tpcc_report(
    host: &dyn Host,
    args: &[String],
    file: &Path,
) -> Result<Option<TpccReport>, Error> {
    // Its stderr goes to a file, not a pipe, so a long message cannot block the child while
    // this process polls it.
    let mut err = tempfile::tempfile().map_err(|e| failed("running nowa tpcc", e.to_string()))?;
    // The child's --out directory beside `file`, ours: a killed earlier run's is replaced.
    let dir = file.with_extension("out");
    if dir.is_dir() {
        std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    }
    let mut child = Command::new(host.exe()?)
        .arg("tpcc")
        .args(args)
        .arg(format!("--out={}", dir.display()))
        .stdout(Stdio::null())
        .stderr(
            err.try_clone()
                .map_err(|e| failed("running nowa tpcc", e.to_string()))?,
        )
        .spawn()
        .map_err(|e| failed("running nowa tpcc", e.to_string()))?;
    let status = wait_or_stop(&mut child)?;
    let Some(status) = status.filter(|_| !Cancel.requested()) else {
        let _ = std::fs::remove_file(file);
        let _ = std::fs::remove_dir_all(&dir);
        return Ok(None);
    };
    if !status.success() {
        let mut msg = String::new();
        let _ = err.rewind().and_then(|()| err.read_to_string(&mut msg));
        return Err(failed(
            "nowa tpcc",
            format!("{} failed: {}", args.join(" "), msg.trim()),
        ));
    }
    let result = dir.join(crate::tpcc::RESULT_FILE);
    std::fs::rename(&result, file).map_err(|e| Error::io(&result, e))?;
    std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    assert!(
        file.is_file() && !dir.exists(),
        "the report moved out of --out"
    );
    TpccReport::read(file).map(Some)
}

/// What `work` holds for a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reuse {
    /// No result.
    Absent,
    /// A result of the same parameters (its `.args` file names them): reused.
    Same,
    /// A result of other parameters, or one that does not say (a part-run is removed, so it
    /// is a whole run of something else): run again only with `--force`.
    Other,
}

/// The parameters file beside a result in `work`.
fn args_file(file: &Path) -> std::path::PathBuf {
    file.with_extension("args")
}

/// Whether `file` is a result of the parameters `key`.
pub(super) fn reusable(file: &Path, key: &str) -> Reuse {
    if !file.exists() {
        return Reuse::Absent;
    }
    match std::fs::read_to_string(args_file(file)) {
        Ok(k) if k == key => Reuse::Same,
        _ => Reuse::Other,
    }
}

/// Records that `file` is the result of `key` (after the result is written).
fn keep(file: &Path, key: &str) -> Result<(), Error> {
    assert!(
        file.is_file(),
        "the result is written before its parameters"
    );
    let a = args_file(file);
    std::fs::write(&a, key).map_err(|e| Error::io(&a, e))
}

/// The `nowa tpcc` flags of a paced point (its load paced too: a load left unpaced changed
/// the run after it, docs/checkpointing.md section 4).
fn paced_args(spec: &Spec, p: &Point) -> Vec<String> {
    let mut args = spec.tpcc_args(p);
    args.push(format!("--duration={}", spec.seconds));
    args.extend(spec.timing_args());
    args
}

/// A paced point's result file in `work` and its parameters.
pub(super) fn paced_result(spec: &Spec, p: &Point) -> (std::path::PathBuf, String) {
    let file = spec
        .work
        .join(format!("run-{}-{}s.json", p.name(), spec.seconds));
    (file, paced_args(spec, p).join("\n"))
}

/// One paced run on the simulated SSD (reused from `work`); `None`: stopped by Ctrl-C.
pub(super) fn paced(spec: &Spec, host: &dyn Host, p: &Point) -> Result<Option<TpccReport>, Error> {
    let (file, key) = paced_result(spec, p);
    if reusable(&file, &key) == Reuse::Same {
        return TpccReport::read(&file).map(Some);
    }
    let _ = std::fs::remove_file(args_file(&file));
    let r = tpcc_report(host, &paced_args(spec, p), &file)?;
    if r.is_some() {
        keep(&file, &key)?;
    }
    Ok(r)
}

/// Polls for the child's `--ready-file` (written once its load is done); fails if the child
/// exits first. Returns at once when Ctrl-C is asked (the caller kills the child).
fn wait_loaded(child: &mut Child, ready: &Path) -> Result<(), Error> {
    let t = Instant::now();
    while !ready.exists() && !Cancel.requested() {
        let st = child
            .try_wait()
            .map_err(|e| failed("the crash run", e.to_string()))?;
        if let Some(st) = st {
            return Err(failed(
                "the crash run",
                format!("exited during its load ({st})"),
            ));
        }
        if t.elapsed() > Duration::from_secs(3600) {
            return Err(failed("the crash run", "its load took over 1 h".into()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// Table II's row of a recovery of the image taken `secs` after the load; its I/O timed by
/// the paced runs' timing model (`pacing`).
fn recovery_of(
    c: &super::Checked,
    pacing: &nowa_bench::ycsb::Pacing,
    name: &str,
    secs: f64,
) -> Result<Recovery, Error> {
    let r = c
        .recovery
        .as_ref()
        .ok_or_else(|| failed("recovery", format!("{name}: opened without recovery")))?;
    if r.clean_shutdown {
        return Err(failed("recovery", format!("{name}: shut down cleanly")));
    }
    if !c.consistent {
        return Err(failed(
            "recovery",
            format!("{name}: inconsistent after recovery"),
        ));
    }
    #[expect(clippy::cast_precision_loss, reason = "microseconds far below 2^52")]
    let phases = (r.analysis_micros + r.redo_micros) as f64;
    assert!(
        c.open_secs * 1e6 >= phases * 0.99,
        "recovery phases within the open time"
    );
    let rec = Recovery {
        crash_secs: secs,
        open_secs: c.open_secs,
        analysis_us: r.analysis_micros,
        redo_us: r.redo_micros,
        records: r.records_replayed,
        redo_bytes: r.end_lsn.saturating_sub(r.redo_lsn),
        cpu_secs: c.work.cpu_secs,
        read_bytes: c.work.read_bytes(),
        written_bytes: c.work.written_bytes(),
        pages_read: c.work.pages_read,
        device_secs: pacing.busy_secs(&c.work.device.0, &c.work.device.1),
    };
    // The pages the engine read (4 KiB each, in place) are among the device's reads.
    assert!(
        rec.device_secs >= 0.0 && rec.read_bytes >= rec.pages_read * 4096,
        "a recovery's I/O: {rec:?}"
    );
    Ok(rec)
}

/// Sends `sig` (`-STOP`, `-CONT`) to the child with `kill(1)`.
fn signal(child: &Child, sig: &str) -> Result<(), Error> {
    let st = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .map_err(|e| failed("the crash run", format!("kill {sig}: {e}")))?;
    if st.success() {
        Ok(())
    } else {
        Err(failed("the crash run", format!("kill {sig} failed ({st})")))
    }
}

/// Whether the process `pid` is stopped (`T` in /proc/PID/stat).
fn is_stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            // The state follows the command name's closing parenthesis.
            let rest = &s[s.rfind(')')? + 1..];
            rest.split_whitespace()
                .next()
                .map(|st| st == "T" || st == "t")
        })
        .unwrap_or(false)
}

/// A crash image of the running child: it is stopped (SIGSTOP: every write it made is in
/// `img`, as at a SIGKILL at that moment), `img` is copied to `snap` (`cp --sparse=always`),
/// and it goes on (SIGCONT). Returns the seconds it stood still.
fn snapshot(child: &Child, img: &Path, snap: &Path) -> Result<f64, Error> {
    let t = Instant::now();
    signal(child, "-STOP")?;
    while !is_stopped(child.id()) {
        if t.elapsed() > Duration::from_secs(10) {
            let _ = signal(child, "-CONT");
            return Err(failed("the crash run", "did not stop within 10 s".into()));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let copied = Command::new("cp")
        .arg("--sparse=always")
        .arg(img)
        .arg(snap)
        .status();
    signal(child, "-CONT")?;
    match copied {
        Ok(st) if st.success() => Ok(t.elapsed().as_secs_f64()),
        Ok(st) => Err(failed("the crash image", format!("cp failed ({st})"))),
        Err(e) => Err(failed("the crash image", format!("cp: {e}"))),
    }
}

/// Waits until `secs` after `start`; false when Ctrl-C came first. Fails if the child exited.
fn wait_until(child: &mut Child, start: Instant, secs: f64) -> Result<bool, Error> {
    while start.elapsed().as_secs_f64() < secs {
        if Cancel.requested() {
            return Ok(false);
        }
        if let Some(st) = child
            .try_wait()
            .map_err(|e| failed("the crash run", e.to_string()))?
        {
            return Err(failed(
                "the crash run",
                format!("exited during its run ({st})"),
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(!Cancel.requested())
}

/// Runs the crash point on a file, leaves a crash image at each of [`Spec::crash_times`]
/// (a copy while stopped, the last by SIGKILL) and returns them with their moments (seconds
/// after the load); empty when Ctrl-C came first.
fn crash_child(
    spec: &Spec,
    host: &dyn Host,
    p: &Point,
    img: &Path,
) -> Result<Vec<(std::path::PathBuf, f64)>, Error> {
    let img_s = img.display().to_string();
    let ready = spec.work.join(format!("crash-{}.ready", p.name()));
    let _ = std::fs::remove_file(&ready);
    let mut child = Command::new(host.exe()?)
        .arg("tpcc")
        .args(spec.tpcc_args(p))
        .args([
            format!("--device={img_s}"),
            format!("--force={img_s}"),
            format!("--duration={}", spec.seconds * 10.0 + 60.0),
            format!("--ready-file={}", ready.display()),
        ])
        .args(spec.timing_args())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed("running nowa tpcc", e.to_string()))?;
    let mut images = Vec::new();
    let taken = wait_loaded(&mut child, &ready).and_then(|()| {
        let start = Instant::now();
        let times = spec.crash_times();
        for (i, &t) in times.iter().enumerate() {
            if !wait_until(&mut child, start, t)? {
                return Ok(false);
            }
            if i + 1 < times.len() {
                let snap = img.with_extension(format!("{i}.img"));
                snapshot(&child, img, &snap)?;
                images.push((snap, t));
            }
        }
        Ok(true)
    });
    // kill -9 whatever happened (a failed load leaves no child behind either).
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_file(&ready);
    let whole = taken.inspect_err(|_| {
        for (f, _) in &images {
            let _ = std::fs::remove_file(f);
        }
    })?;
    if !whole {
        for (f, _) in images.drain(..) {
            let _ = std::fs::remove_file(f);
        }
        return Ok(images);
    }
    images.push((img.to_path_buf(), spec.seconds));
    assert_eq!(
        images.len(),
        spec.crash_times().len(),
        "one image per crash moment"
    );
    Ok(images)
}

/// The `nowa tpcc --check-only` flags that recover and check the crash image `img`.
fn check_args(spec: &Spec, p: &Point, img: &Path) -> Vec<String> {
    let mut check = spec.tpcc_args(p);
    // `-q` is the top-level CLI's flag, not one of `nowa tpcc`'s own: the check parses
    // only the latter (`tpcc::flags::parse_flags`).
    check.retain(|s| !s.starts_with("--seed") && s != "-q");
    check.extend([format!("--device={}", img.display()), "--check-only".into()]);
    check
}

/// A crash point's result file in `work` (its recoveries, one per crash image) and its
/// parameters.
pub(super) fn crash_result(spec: &Spec, p: &Point) -> (std::path::PathBuf, String) {
    let file = spec
        .work
        .join(format!("crash-{}-{}s.json", p.name(), spec.seconds));
    let times: Vec<String> = spec.crash_times().iter().map(f64::to_string).collect();
    let key = format!(
        "{}\n{}\ncrash at {} s after the load",
        spec.tpcc_args(p).join("\n"),
        spec.timing_args().join("\n"),
        times.join(", ")
    );
    (file, key)
}

/// A run on a file crashed at each of [`Spec::crash_times`], each image then recovered and
/// checked (reused from `work`); `None`: stopped by Ctrl-C before the kill (nothing
/// recovered).
pub(super) fn crash(
    spec: &Spec,
    host: &dyn Host,
    p: &Point,
) -> Result<Option<Vec<Recovery>>, Error> {
    let (file, key) = crash_result(spec, p);
    if reusable(&file, &key) == Reuse::Same {
        let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
        return serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::io(&file, e));
    }
    let _ = std::fs::remove_file(args_file(&file));
    let img = spec.work.join(format!("crash-{}.img", p.name()));
    let images = crash_child(spec, host, p, &img)?;
    if images.is_empty() || Cancel.requested() {
        for (f, _) in &images {
            let _ = std::fs::remove_file(f);
        }
        return Ok(None);
    }
    let pacing = spec.pacing()?;
    let mut out = Vec::new();
    for (i, (f, secs)) in images.iter().enumerate() {
        let checked = host.check(&check_args(spec, p, f));
        let _ = std::fs::remove_file(f);
        let r = checked.and_then(|c| recovery_of(&c, &pacing, &p.name(), *secs));
        if r.is_err() {
            for (g, _) in &images[i + 1..] {
                let _ = std::fs::remove_file(g);
            }
        }
        out.push(r?);
    }
    let json = serde_json::to_string(&out).map_err(|e| Error::io(&file, e))?;
    std::fs::write(&file, json).map_err(|e| Error::io(&file, e))?;
    keep(&file, &key)?;
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crash check's flags parse as `nowa tpcc`'s own (the `-q` of the paced runs made
    /// every crash run fail once the check parsed them strictly).
    #[test]
    fn the_crash_check_flags_parse() {
        let spec = Spec::new("o".into(), "w".into()).quick();
        let p = Point::new("inplace", 50, 3, Some(2 << 20), 43);
        let args = check_args(&spec, &p, Path::new("/tmp/x.img"));
        let parsed = crate::tpcc::flags::parse_flags(&args);
        assert!(parsed.is_ok(), "{args:?}: {:?}", parsed.err());
        assert!(args.iter().any(|a| a == "--check-only"), "{args:?}");
    }
}
