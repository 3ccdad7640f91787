//! RocksDB and LMDB: libraries without an interactive client, linked into a small Python
//! program (kv_driver.py, the rocksdict and lmdb wheels from PyPI: each carries the engine's
//! own library, so nothing is compiled here) that reads key-value commands on its standard
//! input, the same pipe protocol as the SQL clients (client.rs, `Dialect::Kv`).

use super::bed::Target;
use super::client::{Client, Dialect};
use super::engines::{fs_dir, ClientDriver};
use super::{EngineName, Spec};
use crate::Error;
use std::path::Path;
use std::process::Command;

/// The driver program, written next to the run's logs.
const DRIVER: &str = include_str!("kv_driver.py");

/// The Python module each engine needs.
fn module(engine: EngineName) -> &'static str {
    match engine {
        EngineName::Rocksdb => "rocksdict",
        _ => "lmdb",
    }
}

/// Whether python3 and the engine's module are installed; what is missing when not.
///
/// # Errors
/// What is missing.
pub fn available(engine: EngineName) -> Result<(), String> {
    let m = module(engine);
    match Command::new("python3")
        .args(["-c", &format!("import {m}")])
        .output()
    {
        Err(_) => Err("no python3".to_owned()),
        Ok(o) if !o.status.success() => Err(format!("no Python module {m}")),
        Ok(_) => Ok(()),
    }
}

/// Starts kv_driver.py on a directory of the target's file system.
///
/// # Errors
/// The script cannot be written or started, or the engine cannot open its directory.
///
/// # Panics
/// On a broken invariant (a bug): the assertions state them.
pub(super) fn open(
    engine: EngineName,
    target: &Target,
    spec: &Spec,
    scratch: &Path,
) -> Result<ClientDriver, Error> {
    assert!(
        matches!(engine, EngineName::Rocksdb | EngineName::Lmdb),
        "a key-value engine"
    );
    let dir = fs_dir(target, engine)?.join(engine.name());
    assert!(!dir.exists(), "a fresh file system");
    std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
    let script = scratch.join("kv_driver.py");
    assert!(!script.starts_with(&dir), "the driver stays off the vssd");
    std::fs::write(&script, DRIVER).map_err(|e| Error::io(&script, e))?;
    // LMDB's map (the largest its file may grow): the space the file system has, less a tenth
    // for its metadata, as nowa's file.
    let free = match target {
        Target::Dir(_, free) => *free,
        Target::Raw(..) => 0,
    };
    let map = free / 10 * 9 / 4096 * 4096;
    assert!(map > 0, "a file system with free space");
    assert!(
        map % 4096 == 0 && map < free,
        "LMDB's map: whole pages that fit"
    );
    let mut c = Command::new("python3");
    c.arg(&script)
        .arg(engine.name())
        .arg(&dir)
        .arg(spec.memory.to_string())
        .arg(map.to_string());
    let mut client = Client::start(c, Dialect::Kv, scratch.join("kv_driver.err"))?;
    // The first answer tells that the engine opened its directory.
    client.exec("C")?;
    Ok(ClientDriver {
        client,
        server: None,
        after_load: Some("F"),
    })
}
