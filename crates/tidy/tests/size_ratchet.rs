//! The function-size ratchet: no function in the library and CLI sources is longer than
//! [`LIMIT`] lines, except the ones listed in [`EXCEPTIONS`], which may only shrink. When an
//! exception shrinks, lower its number here; when it fits the limit, delete its line. Adding a
//! line is for code that is split soon after, with the reason in the commit.

use nowa_tidy::{functions, non_test_sources};
use std::path::Path;

/// Lines from `fn` to its closing brace (TigerBeetle's limit, TIGER_STYLE.md).
const LIMIT: usize = 70;

/// (file relative to the workspace root, function name, its length today).
const EXCEPTIONS: &[(&str, &str, usize)] = &[("crates/bench/src/sim/sweep.rs", "figure_sweep", 85)];

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("crates/tidy is two levels below the workspace root")
}

/// Every non-test function over the limit, as (file, name, lines).
fn long_functions() -> Vec<(String, String, usize)> {
    let root = workspace_root();
    let mut out = Vec::new();
    let crates = std::fs::read_dir(root.join("crates")).expect("crates/ is readable");
    let mut dirs: Vec<_> = crates.map(|e| e.expect("dir entry").path()).collect();
    dirs.sort();
    for dir in dirs {
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        for (file, text) in non_test_sources(&src).expect("src/ is readable UTF-8") {
            let rel = file
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .into_owned();
            for f in functions(&text) {
                if !f.in_test && f.lines > LIMIT {
                    out.push((rel.clone(), f.name, f.lines));
                }
            }
        }
    }
    out
}

#[test]
fn no_function_grows_past_the_limit() {
    let mut errors = Vec::new();
    let found = long_functions();
    for (file, name, lines) in &found {
        match EXCEPTIONS.iter().find(|(f, n, _)| f == file && n == name) {
            None => errors.push(format!(
                "{file}: fn {name} is {lines} lines (limit {LIMIT}): split it"
            )),
            Some((_, _, max)) if lines > max => errors.push(format!(
                "{file}: fn {name} grew to {lines} lines (its ratchet is {max}): split it"
            )),
            Some((_, _, max)) if lines < max => errors.push(format!(
                "{file}: fn {name} shrank to {lines} lines: lower its ratchet from {max} to {lines}"
            )),
            Some(_) => {}
        }
    }
    for (file, name, max) in EXCEPTIONS {
        if !found.iter().any(|(f, n, _)| f == file && n == name) {
            errors.push(format!(
                "{file}: fn {name} (ratchet {max}) is now within the limit or gone: delete its line"
            ));
        }
    }
    assert!(errors.is_empty(), "size ratchet:\n{}", errors.join("\n"));
}
