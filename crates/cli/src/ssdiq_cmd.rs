//! `nowa ssdiq`: flags -> `nowa_lab::ssdiq::Spec` -> run -> print; `nowa ssdiq report` puts
//! several results side by side. Progress inside every phase goes to stderr (`-q`: none).
use crate::{interrupted, lab_error, usage};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use nowa_bench::plot::render_bar;
use nowa_bench::ssdiq::{self, report, PhaseTick, SsdiqResult};
use nowa_lab::ssdiq::{Hooks, Outcome, SsdiqFlags};
use nowa_lab::Cancel;
use std::path::PathBuf;

/// Plot file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PlotFormat {
    Png,
    Svg,
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SsdiqArgs {
    #[command(subcommand)]
    sub: Option<SsdiqSub>,
    /// Target: a block device (/dev/nvme1n1), a regular file (created with --size if missing),
    /// or a simulated SSD: sim or sim:SIZE (e.g. sim:1GiB).
    target: Option<String>,
    #[command(flatten)]
    flags: SsdiqFlags,
    /// List the steps (destructive ones marked) and exit without touching the target.
    #[arg(long)]
    dry_run: bool,
    /// Print the full result as JSON on stdout instead of the text report.
    #[arg(long)]
    json: bool,
    /// Directory for ssdiq.json, intervals.csv and the plots.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Plot formats, comma-separated: png, svg.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "png,svg")]
    plot_format: Vec<PlotFormat>,
    /// No progress lines or bars on stderr.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum SsdiqSub {
    /// Put the results of several devices side by side (Table 2/3 style).
    Report(ReportArgs),
}

#[derive(Args, Debug)]
struct ReportArgs {
    /// Result files written by `nowa ssdiq --json` or --out (ssdiq.json).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Also write a grouped bar chart of random-write IOPS per workload (.png or .svg).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

/// The bar of the phase running: its share, the device's rate (virtual time on a simulated
/// SSD) and the ETA of the phase.
fn phase_bar(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(1000);
    pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("  [{bar:30}] {percent:>3}% {msg} elapsed {elapsed} eta {eta}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}

pub fn run(a: SsdiqArgs) -> anyhow::Result<()> {
    if let Some(SsdiqSub::Report(r)) = &a.sub {
        return run_report(r);
    }
    let Some(target) = a.target.clone() else {
        return Err(usage(
            "missing target: a block device, a file, or sim[:SIZE] (see nowa ssdiq --help)",
        ));
    };
    let pb = phase_bar(a.quiet);
    let quiet = a.quiet;
    let mut log = |m: &str| {
        if !quiet {
            pb.suspend(|| eprintln!("ssdiq: {m}"));
            if !m.starts_with(' ') {
                pb.reset();
            }
        }
    };
    let spec = nowa_lab::ssdiq::from_flags(&a.flags, &target, &mut log).map_err(lab_error)?;
    let dry = if a.dry_run {
        " (dry run: nothing will be done)"
    } else {
        ""
    };
    eprintln!("ssdiq: plan for {target}{dry}:");
    if a.dry_run {
        let cap = nowa_lab::ssdiq::capacity(&spec, &mut |_| {}).map_err(lab_error)?;
        let plan = nowa_lab::ssdiq::plan_lines(&ssdiq::plan(&spec.suite, cap));
        plan.iter().for_each(|l| eprintln!("{l}"));
        return Ok(());
    }
    if let Some(dir) = &a.out {
        crate::resources::create_output_dir("--out", dir)?;
    }
    Cancel.on_sigint();
    let tick = |t: PhaseTick| {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a share in [0, 1]"
        )]
        pb.set_position((t.done * 1000.0) as u64);
        #[expect(clippy::cast_precision_loss, reason = "a rate for the eye")]
        let mb_s = t.bytes as f64 / t.secs.max(1e-9) / 1e6;
        pb.set_message(format!("{mb_s:.1} MB/s"));
    };
    let mut hooks = Hooks {
        log: &mut log,
        announce: &mut |l| eprintln!("{l}"),
        tick: Some(&tick),
    };
    let out = nowa_lab::ssdiq::run_with(&spec, &mut hooks, &Cancel).map_err(lab_error)?;
    pb.finish_and_clear();
    output(&a, &out)
}

/// Report, files, and the exit status of a run.
fn output(a: &SsdiqArgs, out: &Outcome) -> anyhow::Result<()> {
    let res = &out.result;
    if a.json {
        println!("{}", serde_json::to_string_pretty(out)?);
    } else {
        print!("{}", report::text_report(res));
    }
    if let Some(dir) = &a.out {
        let exts: Vec<&str> = a
            .plot_format
            .iter()
            .map(|f| match f {
                PlotFormat::Png => "png",
                PlotFormat::Svg => "svg",
            })
            .collect();
        let files = nowa_lab::ssdiq::write_outputs(out, dir, &exts).map_err(lab_error)?;
        for f in files.iter().filter(|_| !a.quiet) {
            eprintln!("ssdiq: wrote {}", f.display());
        }
    }
    if let Some(e) = &res.error {
        anyhow::bail!("{e}");
    }
    if res.interrupted {
        // Ctrl-C (an error stops the run too, but sets `error`): 130, as every command.
        return Err(interrupted(report::interrupted_line(res)));
    }
    Ok(())
}

fn run_report(r: &ReportArgs) -> anyhow::Result<()> {
    let results: Vec<SsdiqResult> = r
        .files
        .iter()
        .map(|p| nowa_lab::ssdiq::load_result(p).map_err(lab_error))
        .collect::<anyhow::Result<_>>()?;
    let refs: Vec<&SsdiqResult> = results.iter().collect();
    for res in &results {
        for n in &res.target.notes {
            println!("NOTE {}: {n}", res.target.path);
        }
    }
    print!("{}", report::summary_table(&refs));
    if let Some(p) = &r.plot {
        let chart = nowa_lab::ssdiq::iops_chart(&results);
        render_bar(&chart, p).map_err(|e| usage(format!("--plot: {e}")))?;
        eprintln!("ssdiq: wrote {}", p.display());
    }
    Ok(())
}
