//! nowa-lab's checks of what a run needs (memory, output paths) with the CLI's errors: bad
//! input exits 2 naming the flag.

use crate::lab_error;
pub use nowa_lab::resources::{pool_from_memory, sim_device_bytes, Need};
use std::path::Path;

/// [`nowa_lab::resources::check_memory`].
pub fn check_memory(needs: &[Need<'_>]) -> anyhow::Result<()> {
    nowa_lab::resources::check_memory(needs).map_err(lab_error)
}

/// [`nowa_lab::resources::check_output_file`].
pub fn check_output_file(flag: &str, path: Option<&Path>) -> anyhow::Result<()> {
    nowa_lab::resources::check_output_file(flag, path).map_err(lab_error)
}

/// [`nowa_lab::resources::check_device_path`].
pub fn check_device_path(device: &str) -> anyhow::Result<()> {
    nowa_lab::resources::check_device_path(device).map_err(lab_error)
}

/// [`nowa_lab::resources::check_new_output`].
pub fn check_new_output(flag: &str, path: &Path, force: bool) -> anyhow::Result<()> {
    nowa_lab::resources::check_new_output(flag, path, force).map_err(lab_error)
}

/// [`nowa_lab::resources::create_output_dir`].
pub fn create_output_dir(flag: &str, dir: &Path) -> anyhow::Result<()> {
    nowa_lab::resources::create_output_dir(flag, dir).map_err(lab_error)
}
