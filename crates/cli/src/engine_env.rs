//! The CLI's [`Env`] for the engine commands (`nowa ycsb`, `nowa tpcc`, and the recovery checks
//! of `nowa ckpt figures`): a `--device` path opened with the user's consent
//! ([`open_database`]), the memory check and the pool from the memory this run may use.

use crate::device_open::open_database;
use crate::resources::{check_memory, pool_from_memory, sim_device_bytes};
use nowa_device::BlockDevice;
use nowa_lab::ckpt::{Checked, Host};
use nowa_lab::engine_flags::Env;
use nowa_lab::Error;
use std::path::PathBuf;
use std::sync::Arc;

/// The CLI's environment of one command (`--force` as the command's flag gave it).
pub struct CliEnv {
    /// The command, prefixing what it announces (`nowa ycsb`).
    pub command: &'static str,
    /// `--force PATH`.
    pub force: Option<PathBuf>,
}

/// An anyhow error of the CLI's helpers as a lab error (a usage error stays one).
fn lab(e: &anyhow::Error) -> Error {
    assert!(!e.to_string().is_empty(), "an error says what failed");
    if e.downcast_ref::<crate::UsageError>().is_some() {
        Error::Usage(e.to_string())
    } else {
        Error::Failed {
            what: "the device",
            source: format!("{e:#}").into(),
        }
    }
}

impl Env for CliEnv {
    fn open_path(
        &self,
        path: &str,
        capacity: u64,
        step: String,
    ) -> Result<Arc<dyn BlockDevice>, Error> {
        open_database(self.command, path, self.force.as_deref(), capacity, step)
            .map_err(|e| lab(&e))
    }

    fn check_memory(&self, needs: &[(&str, &str, u64)]) -> Result<(), Error> {
        check_memory(needs).map_err(|e| lab(&e))
    }

    fn pool_from_memory(&self, min: u64) -> (u64, String) {
        pool_from_memory(min)
    }

    fn sim_device_bytes(&self, capacity: u64) -> u64 {
        sim_device_bytes(capacity)
    }
}

/// `nowa tpcc --check-only ARGS` as a library (`nowa ckpt figures`' recovery runs), with the
/// CLI's device opening: a typed outcome, nothing parsed from output.
///
/// # Errors
/// As [`nowa_lab::tpcc::flags::check_database`].
pub fn check_database(args: &[String]) -> Result<nowa_lab::tpcc::CheckOutcome, Error> {
    let flags = nowa_lab::tpcc::flags::parse_flags(args)?;
    let env = CliEnv {
        command: "nowa tpcc",
        force: flags.device_force(None)?,
    };
    nowa_lab::tpcc::flags::check_database(args, &env)
}

/// The binary itself runs the `nowa tpcc` children; recovery is checked in this process
/// (`nowa tpcc --check-only` as a library: typed results, no output parsed).
pub(crate) struct CliHost;

impl Host for CliHost {
    fn exe(&self) -> Result<PathBuf, nowa_lab::Error> {
        std::env::current_exe().map_err(|e| nowa_lab::Error::Failed {
            what: "locating the nowa binary",
            source: e.into(),
        })
    }

    fn check(&self, args: &[String]) -> Result<Checked, nowa_lab::Error> {
        let c = check_database(args)?;
        Ok(Checked {
            open_secs: c.open_secs,
            work: c.open_work,
            recovery: c.recovery,
            consistent: c.consistency.is_consistent(),
        })
    }
}
