//! `nowa`: SSD simulation, SSD benchmarking and write-amplification-aware storage.
//!
//! Exit codes: 0 success; 1 a failure while running; 2 bad input (flags, configuration: one
//! line naming the flag); 130 interrupted by Ctrl-C after printing and writing what was
//! measured.

mod capture_cmd;
mod ckpt_cmd;
mod compare_cmd;
mod device_open;
mod engine_env;
mod flags;
mod frozen_cmd;
mod gcunit_cmd;
mod plan_cmd;
mod progress;
mod reproduce_cmd;
mod resources;
mod run_cmd;
mod sim_cmd;
mod ssdiq_cmd;
mod sweep_cmd;
mod table1_cmd;
mod tpcc_cmd;
mod trace_cmd;
mod vssd_cmd;
mod ycsb_cmd;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "nowa",
    version,
    about = "Measure and minimize write amplification, from the database to the flash",
    after_help = "Sizes: 4096, 4k = 4KiB = 4096, 4KB = 4000, 1GB = 10^9, 1GiB = 2^30. \
                  Fractions: 0.07 or 7%. Counts: 5000000 or 5M."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate an SSD (FTL model) under a workload and report write amplification.
    Sim(sim_cmd::SimArgs),
    /// Run the SSD-iq benchmark suite on a device, a file or a simulated SSD.
    Ssdiq(ssdiq_cmd::SsdiqArgs),
    /// Run TPC-C (standard or steady) on the storage engine, with WAF and consistency checks.
    Tpcc(tpcc_cmd::TpccArgs),
    /// Run YCSB on the storage engine (on a simulated SSD by default) with the write drill-down.
    Ycsb(ycsb_cmd::YcsbArgs),
    /// Infer an SSD's GC unit with the ZNS-like zone-size sweep (how-to-write-to-ssds 5.3).
    InferGcUnit(gcunit_cmd::GcUnitArgs),
    /// Reproduce Table 1 of Lee, Ziegler, Leis, "How to Write to SSDs" (PVLDB): in place vs out of place + optimizations.
    Table1(table1_cmd::Table1Args),
    /// SepFrozen's frozen-page model: train on a write log, synthetic logs, inference timing.
    Frozen(frozen_cmd::FrozenArgs),
    /// Block I/O traces: convert to the binary form, statistics, synthetic generation.
    Trace(trace_cmd::TraceArgs),
    /// Run a program on a fresh loop device and record its block requests (needs root).
    Capture(capture_cmd::CaptureArgs),
    /// PLAN: flexible superblocks and a lifetime predictor on a chip-level SSD model.
    Plan(plan_cmd::PlanArgs),
    /// Hot-page-aware checkpointing on TPC-C: the paper's tables and figures (docs/checkpointing.md).
    Ckpt(ckpt_cmd::CkptArgs),
    /// A virtual SSD on FUSE any program can use: mount, stats, stop, attach (docs/vssd.md).
    Vssd(vssd_cmd::VssdArgs),
    /// Real engines and nowa's, each on a fresh virtual SSD, one operation stream (docs/compare.md).
    Compare(compare_cmd::CompareArgs),
    /// Run a job file (TOML/JSON), or run again the run a JSON result names.
    Run(run_cmd::RunArgs),
    /// A grid of runs around a job into a Parquet store, locally or on Ray (Python module).
    Sweep(sweep_cmd::SweepArgs),
    /// Regenerate every paper number docs/ cites and judge it against the paper
    /// (reproduction.json, REPRODUCTION.md, figures).
    Reproduce(reproduce_cmd::ReproduceArgs),
}

/// Every argument that takes a value accepts a leading '-', so `--seed -1` reaches the flag's
/// parser (which names the flag in its error) instead of being taken for an unknown flag.
fn negative_numbers_reach_parsers(cmd: clap::Command) -> clap::Command {
    let cmd = cmd.mut_args(|a| {
        let valued = matches!(
            a.get_action(),
            clap::ArgAction::Set | clap::ArgAction::Append
        );
        if valued && !a.is_positional() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    });
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    names.iter().fold(cmd, |c, n| {
        c.mut_subcommand(n, negative_numbers_reach_parsers)
    })
}

/// A negative value clap took for an unknown flag (`--op -7%`: `-7` is not a number, so
/// [`negative_numbers_reach_parsers`] cannot help): the message names the flag before it.
fn negative_value(e: &clap::Error, argv: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(bad)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let rest = bad.strip_prefix('-')?;
    if !rest.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let i = argv.iter().position(|x| x.starts_with(bad.as_str()))?;
    let flag = argv.get(i.checked_sub(1)?)?;
    flag.starts_with("--").then(|| {
        format!(
            "error: invalid value '{}' for '{flag}': negative values are not accepted (see --help)",
            argv[i]
        )
    })
}

/// clap's message on one line: the error and its details (argument names, "did you mean"
/// tips), without the usage block.
fn one_line(e: &clap::Error) -> String {
    let argv: Vec<String> = std::env::args().collect();
    if let Some(m) = negative_value(e, &argv) {
        return m;
    }
    if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .filter(|n| n != "help")
            .collect();
        return format!(
            "error: a subcommand is required: {} (see --help)",
            names.join(", ")
        );
    }
    let out = nowa_lab::clap_line(e);
    let out = if out.is_empty() {
        "invalid arguments"
    } else {
        &out
    };
    assert!(!out.contains('\n'), "one line");
    format!("error: {out} (see --help)")
}

/// Output into a closed pipe (`nowa ... | head`) ends the process quietly, as it does for
/// other Unix tools. Rust starts programs with SIGPIPE ignored, so a write into a closed
/// pipe returns EPIPE and `println!` panics on it ("failed printing to stdout").
fn default_sigpipe() {
    // SAFETY: called first thing in main, before any thread exists; signal() with SIG_DFL
    // only resets the disposition of SIGPIPE (no handler code runs in the signal context).
    // Test: tests/closed_pipe.rs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() {
    default_sigpipe();
    // The engine reports what its background threads hit (a page-cleaner write error, the DB
    // GC thread stopping or panicking) through `tracing`: without a subscriber no one sees it.
    let _ = tracing::subscriber::set_global_default(log_subscriber(std::io::stderr));
    let matches = negative_numbers_reach_parsers(Cli::command()).try_get_matches();
    let cli = match matches.and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            eprintln!("nowa: {}", one_line(&e));
            std::process::exit(2);
        }
        Err(e) => {
            // --help and --version.
            let _ = e.print();
            std::process::exit(0);
        }
    };
    let res = match cli.cmd {
        Cmd::Sim(a) => sim_cmd::run(a),
        Cmd::Ssdiq(a) => ssdiq_cmd::run(a),
        Cmd::Ycsb(a) => ycsb_cmd::run(a),
        Cmd::Tpcc(a) => tpcc_cmd::run_cmd(a),
        Cmd::InferGcUnit(a) => gcunit_cmd::run(a),
        Cmd::Table1(a) => table1_cmd::run(a),
        Cmd::Trace(a) => trace_cmd::run(a),
        Cmd::Capture(a) => capture_cmd::run(a),
        Cmd::Frozen(a) => frozen_cmd::run(a),
        Cmd::Plan(a) => plan_cmd::run(a),
        Cmd::Ckpt(a) => ckpt_cmd::run_cmd(a),
        Cmd::Vssd(a) => vssd_cmd::run(a),
        Cmd::Compare(a) => compare_cmd::run(&a),
        Cmd::Run(a) => run_cmd::run(a),
        Cmd::Sweep(a) => sweep_cmd::run(a),
        Cmd::Reproduce(a) => reproduce_cmd::run(a),
    };
    if let Err(e) = res {
        std::process::exit(report(&e));
    }
}

/// Warnings and errors as `nowa: WARN ...` lines on `w` (stderr).
fn log_subscriber<W>(w: W) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'a> tracing_subscriber::fmt::MakeWriter<'a> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_writer(w)
        .with_max_level(tracing::Level::WARN)
        .with_target(false)
        .with_ansi(false)
        .without_time()
        .finish()
}

/// Prints `e` on one line and returns the exit code: 2 bad input, 130 interrupted, 1 failure.
fn report(e: &anyhow::Error) -> i32 {
    let line = one_line_chain(e);
    if e.downcast_ref::<Interrupted>().is_some() {
        eprintln!("nowa: {line}");
        return 130;
    }
    eprintln!("nowa: error: {line}");
    if e.downcast_ref::<UsageError>().is_some() || damaged_input(e) {
        2
    } else {
        1
    }
}

/// A damaged, empty or missing input file (a trace replayed deep in an experiment, a write
/// log) anywhere in `e`'s chain: bad input, not a failure of the run.
fn damaged_input(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<nowa_trace::TraceError>()
            .is_some_and(nowa_trace::TraceError::is_bad_input)
            || c.downcast_ref::<nowa_frozen::FrozenError>()
                .is_some_and(frozen_cmd::is_bad_input)
    })
}

/// `e` and its causes on one line, "outer: cause: ...", leaving out a cause whose text the
/// previous one already shows (library errors that print their source, as `out of space:
/// {0}` with `#[from]`, would otherwise repeat it).
fn one_line_chain(e: &anyhow::Error) -> String {
    let mut line = String::new();
    let mut previous = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !previous.is_empty() && previous.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
        previous = text;
    }
    line.replace('\n', " ")
}

/// An error caused by the user's input (flags, config): exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);
impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

/// Shorthand: a usage error as anyhow::Error.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// A nowa-lab error at the CLI: bad input exits 2, the rest 1.
#[must_use]
pub fn lab_error(e: nowa_lab::Error) -> anyhow::Error {
    if e.is_usage() {
        usage(e.to_string())
    } else {
        anyhow::Error::new(e)
    }
}

/// Ctrl-C stopped the run after its partial results were printed and written: exit code 130
/// (128 + SIGINT, as a shell reports a process killed by it).
#[derive(Debug)]
pub struct Interrupted(pub String);
impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted (Ctrl-C): {}", self.0)
    }
}
impl std::error::Error for Interrupted {}

/// Shorthand: an interruption as anyhow::Error.
pub fn interrupted(what: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Interrupted(what.into()))
}

/// After a run's results were printed: Ctrl-C's "interrupted" line on stdout, then exit 130.
///
/// # Errors
/// [`Interrupted`] when `what` says the run was stopped (main exits 130 on it).
pub fn stop_if(what: Option<String>) -> anyhow::Result<()> {
    what.map_or(Ok(()), |w| {
        println!("interrupted (Ctrl-C): {w}");
        Err(interrupted(w))
    })
}

#[cfg(test)]
mod tests {
    use super::one_line_chain;
    use clap::CommandFactory as _;

    /// A background thread's warning (the DB GC thread stopping) reaches the user's stderr.
    #[test]
    fn engine_warnings_reach_the_log_writer() {
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Buf(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().expect("not poisoned").extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Buf::default();
        let b = buf.clone();
        let sub = super::log_subscriber(move || b.clone());
        tracing::subscriber::with_default(sub, || {
            tracing::warn!(error = "disk gone", "background DB GC stopped");
            tracing::info!("not shown");
        });
        let text = String::from_utf8(buf.0.lock().expect("not poisoned").clone()).expect("utf-8");
        assert!(
            text.contains("WARN") && text.contains("background DB GC stopped"),
            "{text}"
        );
        assert!(
            text.contains("disk gone") && !text.contains("not shown"),
            "{text}"
        );
    }

    /// Every command of the tree by its path ("frozen replay"), parents that run themselves
    /// (`sim`, `ssdiq`) included; clap's generated `help` left out.
    fn commands() -> Vec<(String, clap::Command)> {
        fn walk(c: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
            for s in c.get_subcommands().filter(|s| s.get_name() != "help") {
                let p = format!("{path} {}", s.get_name()).trim().to_owned();
                out.push((p.clone(), s.clone()));
                walk(s, &p, out);
            }
        }
        let mut out = Vec::new();
        walk(&super::Cli::command(), "", &mut out);
        assert!(out.len() > 30, "the whole tree: {}", out.len());
        out
    }

    fn arg<'a>(c: &'a clap::Command, long: &str) -> Option<&'a clap::Arg> {
        c.get_arguments().find(|a| a.get_long() == Some(long))
    }

    fn help(a: &clap::Arg) -> String {
        a.get_long_help()
            .or_else(|| a.get_help())
            .map(ToString::to_string)
            .unwrap_or_default()
    }

    /// Every `--seed` says what it seeds (ssdiq, trace gen, frozen synth/bench/replay had none).
    #[test]
    fn every_seed_flag_says_what_it_seeds() {
        let mut seen = 0;
        for (path, c) in commands() {
            if let Some(a) = arg(&c, "seed") {
                seen += 1;
                let h = help(a).to_lowercase();
                assert!(h.contains("seed"), "nowa {path} --seed without help: {h:?}");
            }
        }
        assert!(seen >= 15, "{seen} commands take --seed");
    }

    /// `--op` is spare/logical on every command and `--op-physical` spare/physical (`nowa plan
    /// --op` meant spare/physical, so `plan run --op 7%` was another device than `sim --op 7%`).
    #[test]
    fn every_op_flag_is_spare_over_logical() {
        let mut seen = 0;
        for (path, c) in commands() {
            for (long, form) in [("op", "spare/logical"), ("op-physical", "spare/physical")] {
                if let Some(a) = arg(&c, long) {
                    seen += 1;
                    let h = help(a);
                    assert!(h.contains(form), "nowa {path} --{long}: {h:?}");
                }
            }
        }
        assert!(seen >= 12, "{seen} --op flags");
    }

    /// Commands that print no progress (each runs in about a second, or is a server or a
    /// query): the only ones without `-q`.
    const NO_PROGRESS: &[&str] = &[
        "ssdiq report",      // reads result files
        "frozen train",      // one fit, its summary
        "frozen stats",      // one pass over a log
        "frozen synth",      // writes a log, one line
        "frozen bench",      // its output is the timing
        "frozen from-trace", // one pass over a trace
        "trace convert",
        "trace stats",
        "trace gen",
        "capture", // the program's own output
        "vssd",
        "vssd serve", // a server: its log is its output
        "vssd stats",
        "vssd stop",
        "vssd attach",
        "sweep", // the Python module's progress
        "frozen",
        "trace",
        "plan",
        "ckpt",
        "reproduce merge", // re-renders a report: no run, nothing to wait for
        "reproduce render",
    ];

    /// Every command that shows progress takes `-q`/`--quiet` (missing in table1,
    /// infer-gc-unit, plan, frozen, ckpt, compare and frozen replay).
    #[test]
    fn every_command_with_progress_takes_quiet() {
        let all = commands();
        for n in NO_PROGRESS {
            assert!(all.iter().any(|(p, _)| p == n), "{n}: no such command");
        }
        for (path, c) in all
            .iter()
            .filter(|(p, _)| !NO_PROGRESS.contains(&p.as_str()))
        {
            let q = arg(c, "quiet").unwrap_or_else(|| panic!("nowa {path}: no --quiet"));
            assert_eq!(q.get_short(), Some('q'), "nowa {path}: --quiet without -q");
        }
    }

    /// `--out` names a directory on every command (its help says so, and files are named
    /// inside it: `tpcc` and `frozen train|synth|from-trace` named one file); no default
    /// under docs/.
    #[test]
    fn out_names_a_directory_and_never_defaults_into_docs() {
        let mut dirs = 0;
        for (path, c) in commands() {
            let Some(a) = arg(&c, "out") else { continue };
            let h = help(a);
            for d in a.get_default_values() {
                assert!(
                    !d.to_string_lossy().starts_with("docs"),
                    "nowa {path} --out {d:?}"
                );
            }
            assert!(
                !h.contains("docs/figures") || h.contains("never docs/"),
                "nowa {path} --out defaults into docs/: {h}"
            );
            dirs += 1;
            assert!(
                h.to_lowercase().contains("director"),
                "nowa {path} --out: {h:?}"
            );
        }
        assert!(dirs >= 12, "{dirs} directory --out flags");
    }

    /// A shell line's words: quotes grouped and removed, a `#` comment dropped.
    fn words(line: &str) -> Vec<String> {
        let (mut out, mut w, mut quote, mut any) = (Vec::new(), String::new(), None, false);
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => w.push(c),
                (None, '\'' | '"') => (quote, any) = (Some(c), true),
                (None, '#') if w.is_empty() && !any => break,
                (None, c) if c.is_whitespace() => {
                    if any || !w.is_empty() {
                        out.push(std::mem::take(&mut w));
                    }
                    any = false;
                }
                (None, c) => w.push(c),
            }
        }
        if any || !w.is_empty() {
            out.push(w);
        }
        assert!(quote.is_none(), "unclosed quote: {line}");
        out
    }

    /// Every `nowa` command of the README's shell examples is accepted by the parser as
    /// written (a renamed or removed flag fails here, not in a reader's terminal). Running
    /// them at their scale is the README's own check (`nowa ...` lines, docs say how long).
    #[test]
    fn every_readme_command_parses() {
        let readme = include_str!("../../../README.md");
        let mut n = 0;
        let mut in_sh = false;
        for line in readme.lines() {
            if line.starts_with("```") {
                in_sh = line == "```sh";
                continue;
            }
            if !in_sh {
                continue;
            }
            for part in line.split("&&") {
                let w = words(part.trim());
                let args: Vec<&str> = match w.iter().position(|x| x == "--") {
                    Some(i) if w.iter().any(|p| p == "nowa-cli") => {
                        w[i + 1..].iter().map(String::as_str).collect()
                    }
                    _ if w.first().is_some_and(|x| x == "nowa") => {
                        w[1..].iter().map(String::as_str).collect()
                    }
                    _ => continue,
                };
                n += 1;
                let argv = std::iter::once("nowa").chain(args.iter().copied());
                let m = super::negative_numbers_reach_parsers(super::Cli::command())
                    .try_get_matches_from(argv);
                if let Err(e) =
                    m.and_then(|m| <super::Cli as clap::FromArgMatches>::from_arg_matches(&m))
                {
                    panic!("README: nowa {}: {}", args.join(" "), super::one_line(&e));
                }
            }
        }
        assert!(n >= 20, "{n} README commands");
    }

    #[derive(Debug, thiserror::Error)]
    #[error("data region full (7 pages)")]
    struct Inner;

    #[derive(Debug, thiserror::Error)]
    #[error("out of space: {0}")]
    struct Outer(#[from] Inner);

    #[test]
    fn a_cause_the_outer_error_already_prints_is_not_repeated() {
        let e = anyhow::Error::new(Outer(Inner)).context("load");
        assert_eq!(
            one_line_chain(&e),
            "load: out of space: data region full (7 pages)"
        );
    }

    #[test]
    fn distinct_causes_are_all_shown_on_one_line() {
        let e = anyhow::anyhow!("bad\nthing").context("--trace");
        assert_eq!(one_line_chain(&e), "--trace: bad thing");
    }
}
