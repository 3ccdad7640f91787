//! The commit a result names (`nowa.commit`): `NOWA_COMMIT` if set (a build outside the
//! repository), else `git rev-parse HEAD` of the source tree, else "unknown"; and whether
//! the binary's source differs from it (`NOWA_DIRTY`: true / false / unknown): `git status`
//! of the workspace's `crates/` and `Cargo.*` (tracked files).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=NOWA_COMMIT");
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_owned())
    };
    // Rebuild when HEAD moves (a commit or a checkout), so the commit never goes stale.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
    }
    let commit = std::env::var("NOWA_COMMIT")
        .ok()
        .or_else(|| git(&["rev-parse", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=NOWA_COMMIT={commit}");
    println!("cargo:rerun-if-env-changed=NOWA_DIRTY");
    let top = git(&["rev-parse", "--show-toplevel"]);
    if let Some(top) = &top {
        // Any source edit can change the answer: rerun when the sources change.
        println!("cargo:rerun-if-changed={top}/crates");
        println!("cargo:rerun-if-changed={top}/Cargo.toml");
        println!("cargo:rerun-if-changed={top}/Cargo.lock");
    }
    let dirty = std::env::var("NOWA_DIRTY").ok().or_else(|| {
        let top = top?;
        let args = [
            "-C",
            top.as_str(),
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            "crates",
            "Cargo.toml",
            "Cargo.lock",
        ];
        git(&args).map(|s| (!s.is_empty()).to_string())
    });
    let dirty = dirty.unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=NOWA_DIRTY={dirty}");
}
