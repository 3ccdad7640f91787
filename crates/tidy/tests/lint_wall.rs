//! The lint wall holds everywhere: every crate opts into the workspace `[lints]`, library and
//! CLI sources carry no `allow` (exceptions are local `expect`s), and every `expect` argues
//! itself with a `reason`.

use nowa_tidy::rust_files;
use std::path::{Path, PathBuf};

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("crates/tidy is two levels below the workspace root")
}

fn crate_dirs() -> Vec<PathBuf> {
    let crates = std::fs::read_dir(workspace_root().join("crates")).expect("crates/ is readable");
    let mut dirs: Vec<PathBuf> = crates
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "found only {} crates", dirs.len());
    dirs
}

#[test]
fn every_crate_opts_into_the_workspace_lints() {
    for dir in crate_dirs() {
        let toml = std::fs::read_to_string(dir.join("Cargo.toml")).expect("readable");
        assert!(
            toml.contains("[lints]\nworkspace = true"),
            "{}: add `[lints]\\nworkspace = true`",
            dir.display()
        );
    }
}

/// Every attribute `#[NAME(` or `#![NAME(` in `text`, as (line number, attribute text).
fn attributes(text: &str, name: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for pat in [format!("#[{name}("), format!("#![{name}(")] {
        let mut from = 0;
        while let Some(i) = text[from..].find(&pat) {
            let start = from + i;
            let end = text[start..]
                .find(")]")
                .map_or(text.len(), |e| start + e + 2);
            let line = text[..start].lines().count() + 1;
            out.push((line, text[start..end].to_string()));
            from = end;
        }
    }
    out
}

#[test]
fn sources_use_argued_expects_not_allows() {
    let root = workspace_root();
    let mut bad = Vec::new();
    for dir in crate_dirs() {
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        for file in rust_files(&src).expect("src/ is readable") {
            let text = std::fs::read_to_string(&file).expect("source is UTF-8");
            let rel = file
                .strip_prefix(root)
                .expect("under the root")
                .display()
                .to_string();
            for (line, a) in attributes(&text, "allow") {
                bad.push(format!(
                    "{rel}:{line}: `allow` (use `expect` with a reason): {a}"
                ));
            }
            for (line, a) in attributes(&text, "expect") {
                if !a.contains("reason") {
                    bad.push(format!("{rel}:{line}: `expect` without a reason: {a}"));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_scanner_sees_attributes() {
    let text = "a\n#[allow(dead_code)]\nfn f() {}\n#![expect(x, reason = \"y\")]\n";
    assert_eq!(
        attributes(text, "allow"),
        vec![(2, "#[allow(dead_code)]".to_string())]
    );
    let e = attributes(text, "expect");
    assert_eq!(e.len(), 1);
    assert!(e[0].1.contains("reason"));
}
