//! `nowa._nowa`: the Rust side of the Python module (python/nowa wraps it). Keyword arguments
//! arrive as the CLI's flags and go through nowa-lab's parsers; runs release the GIL; Ctrl-C
//! stops a run the way it stops the CLI's (the drivers' stop flag), keeping what it measured.

use nowa_lab::engine_flags::InMemory;
use nowa_lab::{Cancel, Error};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::time::Duration;

/// The commands with a function.
const COMMANDS: &str = "sim, table1, ycsb or tpcc";

/// How often a waiting call looks for Ctrl-C (Python runs signal handlers only in the main
/// thread, with the GIL: the wait takes it back this often, for a moment).
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// A flag's name (underscores), help, default and whether it takes a value.
type FlagHelp = (String, String, Option<String>, bool);
/// A flag's name and its value (None: a switch that is on).
type FlagValue = (String, Option<String>);

fn py_error(e: &Error) -> PyErr {
    if e.is_usage() {
        PyValueError::new_err(e.to_string())
    } else {
        PyRuntimeError::new_err(e.to_string())
    }
}

/// Runs `work` on a thread of its own with the GIL released; a KeyboardInterrupt meanwhile
/// asks the drivers to stop, and the result (partial) comes back with `true`.
fn run_released<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> PyResult<(T, bool)> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    Cancel.clear();
    let mut interrupted = false;
    let out = std::thread::scope(|s| {
        let (tx, rx) = channel();
        s.spawn(move || {
            // The receiver outlives the scope's threads: a send cannot fail.
            let _ = tx.send(work());
        });
        let mut rx = rx;
        loop {
            // The receiver is Send, not Sync: it moves into the GIL-free closure and back.
            let (got, back) = py.allow_threads(move || (rx.recv_timeout(SIGNAL_POLL), rx));
            rx = back;
            match got {
                Ok(v) => break Some(v),
                Err(RecvTimeoutError::Disconnected) => break None,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if !interrupted && py.check_signals().is_err() {
                interrupted = true;
                Cancel.request();
            }
        }
    });
    Cancel.clear();
    out.map(|v| (v, interrupted))
        .ok_or_else(|| PyRuntimeError::new_err("the run panicked (see stderr)"))
}

fn to_json<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// `nowa sim` with these flags (as the CLI takes them); returns the JSON `nowa sim --json`
/// prints and whether Ctrl-C stopped the run.
#[pyfunction]
fn sim(py: Python<'_>, args: Vec<String>) -> PyResult<(String, bool)> {
    let flags = nowa_lab::sim::parse_flags(&args).map_err(|e| py_error(&e))?;
    let spec = nowa_lab::sim::Spec::from_flags(&flags).map_err(|e| py_error(&e))?;
    let (out, stopped) = run_released(py, || nowa_lab::sim::run(&spec, None, &Cancel))?;
    Ok((to_json(&out.map_err(|e| py_error(&e))?)?, stopped))
}

/// `nowa table1` with these flags; returns the JSON `nowa table1 --json` prints and whether
/// Ctrl-C stopped the table.
#[pyfunction]
fn table1(py: Python<'_>, args: Vec<String>) -> PyResult<(String, bool)> {
    let flags = nowa_lab::table1::parse_flags(&args).map_err(|e| py_error(&e))?;
    let spec = nowa_lab::table1::from_flags(&flags);
    nowa_lab::table1::check(&spec).map_err(|e| py_error(&e))?;
    let (out, stopped) = run_released(py, || nowa_lab::table1::run(&spec, None, &Cancel))?;
    Ok((to_json(&out.map_err(|e| py_error(&e))?)?, stopped))
}

/// A run's result as JSON; a run that Ctrl-C stopped before it measured anything (during
/// an engine's load) raises KeyboardInterrupt, as the CLI exits 130.
fn finish_run<T: serde::Serialize>(
    out: Result<T, Error>,
    stopped: bool,
    what: &str,
) -> PyResult<(String, bool)> {
    match out {
        Ok(v) => Ok((to_json(&v)?, stopped)),
        Err(_) if stopped => Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(format!(
            "{what} interrupted (Ctrl-C) during the load: nothing was measured"
        ))),
        Err(e) => Err(py_error(&e)),
    }
}

/// `nowa ycsb` with these flags on the simulated SSD or in memory (the resolution as the
/// CLI's: pool, device size, zone size); returns the JSON `nowa ycsb --json` prints and
/// whether Ctrl-C stopped the run.
#[pyfunction]
fn ycsb(py: Python<'_>, args: Vec<String>) -> PyResult<(String, bool)> {
    use nowa_lab::ycsb::{flags, run_with, Hooks};
    let f = flags::parse_flags(&args).map_err(|e| py_error(&e))?;
    let (out, stopped) = run_released(py, || {
        let r = flags::resolve(&f, &InMemory)?;
        let hooks = Hooks {
            device: Some(r.device),
            ack_log: f.ack_log.clone(),
            record_trace: f.record_trace.as_deref(),
            ..Hooks::default()
        };
        run_with(&r.spec, hooks, &Cancel)
    })?;
    finish_run(out, stopped, "nowa.ycsb")
}

/// `nowa tpcc` with these flags on the simulated SSD or in memory; returns the JSON
/// `nowa tpcc --json` prints and whether Ctrl-C stopped the run.
#[pyfunction]
fn tpcc(py: Python<'_>, args: Vec<String>) -> PyResult<(String, bool)> {
    use nowa_lab::tpcc::{flags, run_with, Hooks};
    let f = flags::parse_flags(&args).map_err(|e| py_error(&e))?;
    assert!(f.warehouses >= 1, "the flag's floor");
    if f.check_only {
        return Err(PyValueError::new_err(
            "check_only: checks a database on a device path; run `nowa tpcc --check-only`",
        ));
    }
    let (out, stopped) = run_released(py, || {
        let r = flags::resolve(&f, &InMemory)?;
        let hooks = Hooks {
            device: Some(r.device),
            record_trace: f.record_trace.as_deref(),
            ..Hooks::default()
        };
        run_with(&r.spec, hooks, &Cancel)
    })?;
    finish_run(out, stopped, "nowa.tpcc")
}

/// The spec these engine flags resolve to (the device they size is built and dropped).
fn engine_job(command: &str, args: &[String]) -> Result<nowa_lab::Job, Error> {
    assert!(matches!(command, "ycsb" | "tpcc"), "an engine command");
    Ok(if command == "ycsb" {
        let f = nowa_lab::ycsb::flags::parse_flags(args)?;
        nowa_lab::Job::Ycsb(Box::new(
            nowa_lab::ycsb::flags::resolve(&f, &InMemory)?.spec,
        ))
    } else {
        let f = nowa_lab::tpcc::flags::parse_flags(args)?;
        nowa_lab::Job::Tpcc(Box::new(
            nowa_lab::tpcc::flags::resolve(&f, &InMemory)?.spec,
        ))
    })
}

/// Runs a job or a result again: `text` is TOML (`toml`) or JSON.
#[pyfunction]
fn run(py: Python<'_>, text: &str, toml: bool) -> PyResult<(String, bool)> {
    let job = nowa_lab::parse_job(text, toml).map_err(|e| py_error(&e))?;
    let (out, stopped) = run_released(py, || job.run(None, &Cancel))?;
    Ok((to_json(&out.map_err(|e| py_error(&e))?)?, stopped))
}

/// The job (`{"command", "spec"}`, every default resolved) these flags of `command` give.
#[pyfunction]
fn resolve(command: &str, args: Vec<String>) -> PyResult<String> {
    let job = match command {
        "sim" => {
            let flags = nowa_lab::sim::parse_flags(&args).map_err(|e| py_error(&e))?;
            nowa_lab::Job::Sim(nowa_lab::sim::Spec::from_flags(&flags).map_err(|e| py_error(&e))?)
        }
        "table1" => {
            let flags = nowa_lab::table1::parse_flags(&args).map_err(|e| py_error(&e))?;
            let spec = nowa_lab::table1::from_flags(&flags);
            nowa_lab::table1::check(&spec).map_err(|e| py_error(&e))?;
            nowa_lab::Job::Table1(Box::new(spec))
        }
        "ycsb" | "tpcc" => engine_job(command, &args).map_err(|e| py_error(&e))?,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown command '{other}' (expected {COMMANDS})"
            )))
        }
    };
    to_json(&job)
}

/// The flags of `command`: (name, help, default, takes a value), for docstrings and stubs.
#[pyfunction]
fn flags(command: &str) -> PyResult<Vec<FlagHelp>> {
    let cmd = command_of(command)?;
    Ok(cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_long().is_some())
        .map(|a| {
            let help = a
                .get_long_help()
                .or(a.get_help())
                .map(ToString::to_string)
                .unwrap_or_default();
            let default = a
                .get_default_values()
                .first()
                .map(|d| d.to_string_lossy().into_owned());
            let long = a.get_long().unwrap_or_default().replace('-', "_");
            assert!(!long.is_empty(), "only flags with a long name are listed");
            (
                long,
                help.replace('\n', " "),
                default,
                a.get_action().takes_values(),
            )
        })
        .collect())
}

fn command_of(command: &str) -> PyResult<clap::Command> {
    match command {
        "sim" => Ok(nowa_lab::sim::command()),
        "table1" => Ok(nowa_lab::table1::command()),
        "ycsb" => Ok(nowa_lab::ycsb::flags::command()),
        "tpcc" => Ok(nowa_lab::tpcc::flags::command()),
        other => Err(PyValueError::new_err(format!(
            "unknown command '{other}' (expected {COMMANDS})"
        ))),
    }
}

/// Each flag of `command` and the flags it excludes (`op` and `op_physical`): a sweep that
/// sets one drops the other from its base.
#[pyfunction]
fn conflicts(command: &str) -> PyResult<Vec<(String, Vec<String>)>> {
    let mut cmd = command_of(command)?;
    // Conflicts are resolved both ways only in a built command.
    cmd.build();
    let name = |a: &clap::Arg| a.get_long().unwrap_or_default().replace('-', "_");
    Ok(cmd
        .get_arguments()
        .filter(|a| a.get_long().is_some())
        .map(|a| {
            let c = cmd
                .get_arg_conflicts_with(a)
                .into_iter()
                .map(name)
                .collect();
            (name(a), c)
        })
        .collect())
}

/// A job file's (or a result's) command and spec as flags (name, value; None for a switch):
/// the base of a sweep.
#[pyfunction]
fn job_flags(text: &str, toml: bool) -> PyResult<(String, Vec<FlagValue>)> {
    let job = nowa_lab::parse_job(text, toml).map_err(|e| py_error(&e))?;
    let nowa_lab::Job::Sim(spec) = &job else {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "a sweep's base is a sim job; this is a {} job (run it with nowa.run)",
            job.command()
        )));
    };
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for a in spec.to_args() {
        if let Some(flag) = a.strip_prefix("--") {
            out.push((flag.replace('-', "_"), None));
        } else if let Some(last) = out.last_mut() {
            assert!(last.1.is_none(), "to_args gives one value per flag");
            last.1 = Some(a);
        }
    }
    Ok((job.command().to_owned(), out))
}

/// nowa's version and the commit it was built from.
#[pyfunction]
fn version() -> (String, String) {
    let id = nowa_lab::Identity::now("version", &serde_json::json!({}), 0);
    (id.version, id.commit)
}

/// True for a result key (or a flattened column) that measures the machine, not the run
/// (`nowa_lab::is_machine_key`: the one rule, shared with the Rust tests).
#[pyfunction]
fn is_machine(key: &str) -> bool {
    nowa_lab::is_machine_key(key)
}

/// The native part of the `nowa` package.
#[pymodule]
fn _nowa(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim, m)?)?;
    m.add_function(wrap_pyfunction!(table1, m)?)?;
    m.add_function(wrap_pyfunction!(ycsb, m)?)?;
    m.add_function(wrap_pyfunction!(tpcc, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(flags, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(conflicts, m)?)?;
    m.add_function(wrap_pyfunction!(job_flags, m)?)?;
    m.add_function(wrap_pyfunction!(is_machine, m)?)?;
    Ok(())
}
