//! The engine commands' side of nowa-device's one opening path ([`nowa_device::open_target`]):
//! a nowa database expected on an existing target, the step announced before writing, and
//! refusals as exit code 2 (the benchmarks' targets are opened by nowa-lab).

use crate::usage;
use nowa_device::{open_target, BlockDevice, Expect, FileOptions, Identity, OpenError};
use std::path::Path;
use std::sync::Arc;

/// A refusal of the opening path is bad input (exit 2); busy or I/O errors are failures.
pub fn open_error(e: OpenError) -> anyhow::Error {
    if e.is_refusal() {
        usage(e.to_string())
    } else {
        anyhow::Error::new(e)
    }
}

/// A nowa database: the engine's own recognizer ([`nowa_engine::identify`]) on block 0 or
/// block 1 (the two superblock copies).
fn nowa_database(head: &[u8]) -> Option<Identity> {
    let copy = |b: usize| nowa_engine::identify(head.get(b * 4096..(b + 1) * 4096)?);
    let id = copy(0).or_else(|| copy(1))?;
    let what = match id.write_path {
        Some(w) => format!("nowa database ({} write path)", w.kind()),
        None => format!("nowa database (format version {})", id.format_version),
    };
    Some(Identity { what })
}

/// What `nowa ycsb` expects on an existing --device path.
const DATABASE: Expect<'static> = Expect {
    what: "a nowa database",
    recognize: &nowa_database,
};

/// Opens a command's --device path for a database: a new file of `capacity` bytes, or an
/// existing nowa database (anything else only with `--force` naming it), locked. `step` (what
/// the command will do to it) is announced on stderr, prefixed with `command`, before
/// anything is written.
///
/// # Errors
/// The refusal (exit 2), busy, or an I/O error.
pub fn open_database(
    command: &str,
    path: &str,
    force: Option<&Path>,
    capacity: u64,
    step: String,
) -> anyhow::Result<Arc<dyn BlockDevice>> {
    let steps = [step];
    let opened = open_target(
        Path::new(path),
        force,
        DATABASE,
        Some(capacity),
        &FileOptions::default(),
        &steps,
        &mut |l| eprintln!("{command}: {l}"),
    )
    .map_err(open_error)?;
    Ok(Arc::new(opened.device))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_recognizer() {
        let dev = Arc::new(nowa_device::MemDevice::new(8 << 20));
        let cfg = nowa_engine::Config {
            pool_bytes: 64 * 4096,
            wal_limit_bytes: Some(256 << 10),
            ..nowa_engine::Config::default()
        };
        nowa_engine::Engine::create(dev.clone(), cfg)
            .unwrap()
            .close()
            .unwrap();
        let mut head = vec![0u8; 8192];
        dev.read_at(0, &mut head).unwrap();
        let id = nowa_database(&head).expect("a fresh database is recognized");
        assert_eq!(id.what, "nowa database (in-place write path)");
        // Only the second copy intact: still recognized.
        head[..4096].fill(0);
        assert!(nowa_database(&head).is_some(), "the second copy is enough");
        // A header that only looks like one (magic, no checksum) is not a database.
        let mut fake = vec![0u8; 8192];
        fake[4..8].copy_from_slice(b"NOWA");
        assert!(nowa_database(&fake).is_none());
        assert!(nowa_database(&head[..100]).is_none());
    }
}
