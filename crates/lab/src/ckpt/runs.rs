//! The child processes: one paced `nowa tpcc` run per point, and the crash runs (killed
//! with SIGKILL `seconds` after their load, then recovered by [`Host::check`]). Both reuse
//! their result from `work` when present. Both poll Ctrl-C ([`Cancel`]): a stop kills the
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

/// One paced run on the simulated SSD (reused from `work`); `None`: stopped by Ctrl-C.
pub(super) fn paced(spec: &Spec, host: &dyn Host, p: &Point) -> Result<Option<TpccReport>, Error> {
    let file = spec
        .work
        .join(format!("run-{}-{}s.json", p.name(), spec.seconds));
    if let Ok(r) = TpccReport::read(&file) {
        return Ok(Some(r));
    }
    let mut args = spec.tpcc_args(p);
    args.push(format!("--duration={}", spec.seconds));
    args.push(format!("--sim-timing={}", spec.sim_timing));
    args.push(format!("--media-bandwidth={}", spec.media_bandwidth));
    args.push(format!("--read-bandwidth={}", spec.read_bandwidth));
    tpcc_report(host, &args, &file)
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

/// Table II's row of a recovery.
fn recovery_of(c: &super::Checked, name: &str) -> Result<Recovery, Error> {
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
    Ok(Recovery {
        open_secs: c.open_secs,
        analysis_us: r.analysis_micros,
        redo_us: r.redo_micros,
        records: r.records_replayed,
        redo_bytes: r.end_lsn.saturating_sub(r.redo_lsn),
    })
}

/// Runs the crash point on a file until `seconds` after its load, kills it (SIGKILL).
fn crash_child(spec: &Spec, host: &dyn Host, p: &Point, img: &Path) -> Result<(), Error> {
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
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed("running nowa tpcc", e.to_string()))?;
    let loaded = wait_loaded(&mut child, &ready);
    if loaded.is_ok() {
        let run = Instant::now();
        while run.elapsed().as_secs_f64() < spec.seconds && !Cancel.requested() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // kill -9 whatever happened (a failed load leaves no child behind either).
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_file(&ready);
    loaded
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

/// A run on a file killed `seconds` into its run phase, then recovered and checked
/// (reused from `work`); `None`: stopped by Ctrl-C before the kill (nothing recovered).
pub(super) fn crash(spec: &Spec, host: &dyn Host, p: &Point) -> Result<Option<Recovery>, Error> {
    let file = spec
        .work
        .join(format!("crash-{}-{}s.json", p.name(), spec.seconds));
    if let Some(r) = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str::<Recovery>(&t).ok())
    {
        return Ok(Some(r));
    }
    let img = spec.work.join(format!("crash-{}.img", p.name()));
    crash_child(spec, host, p, &img)?;
    if Cancel.requested() {
        let _ = std::fs::remove_file(&img);
        return Ok(None);
    }
    let checked = host.check(&check_args(spec, p, &img));
    let _ = std::fs::remove_file(&img);
    let r = recovery_of(&checked?, &p.name())?;
    #[expect(clippy::cast_precision_loss, reason = "microseconds far below 2^52")]
    let phases = (r.analysis_us + r.redo_us) as f64;
    assert!(
        r.open_secs * 1e6 >= phases * 0.99,
        "recovery phases within the open time"
    );
    let json = serde_json::to_string(&r).map_err(|e| Error::io(&file, e))?;
    std::fs::write(&file, json).map_err(|e| Error::io(&file, e))?;
    Ok(Some(r))
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
