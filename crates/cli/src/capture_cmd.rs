//! `nowa capture`: flags -> `nowa_lab::capture::Spec` -> run (nowa-lab) -> the report.

use crate::{interrupted, lab_error};
use anyhow::{bail, Result};
use clap::Args;
use nowa_lab::capture::{self, Flags, Spec};
use nowa_lab::Cancel;

#[derive(Args, Debug)]
pub struct CaptureArgs {
    #[command(flatten)]
    flags: Flags,
    /// Print the result as JSON (stdout) instead of the report.
    #[arg(long)]
    json: bool,
    /// No progress line.
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(a: CaptureArgs) -> Result<()> {
    let spec = Spec::from_flags(&a.flags);
    capture::prepare(&spec).map_err(lab_error)?;
    let pb = crate::progress::spinner(a.quiet, "capturing: requests traced");
    let progress = |done: u64, _| pb.set_position(done);
    let out = capture::run(&spec, Some(&progress), &Cancel).map_err(lab_error)?;
    pb.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", capture::summary(&out));
    }
    let (r, trace) = (&out.result, spec.trace());
    if r.interrupted {
        return Err(interrupted(format!(
            "the trace up to then is in {}",
            trace.display()
        )));
    }
    if !r.check_ok {
        bail!(
            "the trace disagrees with the disk statistics; it is in {}",
            trace.display()
        );
    }
    if !r.command_ok {
        bail!(
            "the command failed (exit code {:?}); its trace is in {}",
            r.exit_code,
            trace.display()
        );
    }
    Ok(())
}
