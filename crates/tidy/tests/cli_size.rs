//! The CLI stays a thin face (issue 28: "the CLI crate under 3,000 non-test lines"): flags
//! -> spec -> run -> print, the experiments in nowa-lab. Counted by [`code_lines`]: every
//! line of crates/cli/src outside test files and test modules that is not blank or only a
//! comment (lines of multi-line strings count). Print the table with
//! `cargo test -p nowa-tidy --test cli_size -- --nocapture`.

use nowa_tidy::{code_lines, non_test_sources};
use std::path::Path;

/// Non-test code lines crates/cli/src may hold.
const LIMIT: usize = 3000;

#[test]
fn the_cli_stays_under_its_line_limit() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/src");
    let files = non_test_sources(&src).expect("crates/cli/src is readable UTF-8");
    assert!(files.len() > 10, "the CLI's sources were found");
    let mut total = 0;
    for (path, text) in &files {
        let n = code_lines(text);
        println!("{n:>6} {}", path.display());
        total += n;
    }
    println!("{total:>6} total (limit {LIMIT})");
    assert!(
        total <= LIMIT,
        "crates/cli/src has {total} non-test code lines, over {LIMIT}: move experiment logic into nowa-lab"
    );
}

/// No subcommand module imports another's (`tpcc_cmd` using `ycsb_cmd::...`): what two
/// commands share lives in nowa-lab or in the CLI's common modules.
#[test]
fn no_subcommand_module_imports_another() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/src");
    let mut errors = Vec::new();
    for (path, text) in non_test_sources(&src).expect("readable") {
        let rel = path
            .strip_prefix(&src)
            .expect("below src")
            .to_string_lossy()
            .into_owned();
        let Some(own) = rel.split(['/', '.']).next().filter(|m| m.ends_with("_cmd")) else {
            continue;
        };
        let code = String::from_utf8_lossy(&nowa_tidy::blank_non_code(&text)).into_owned();
        for (i, _) in code.match_indices("_cmd::") {
            let start = code[..i]
                .rfind(|c: char| !c.is_alphanumeric() && c != '_')
                .map_or(0, |p| p + 1);
            let module = format!("{}_cmd", &code[start..i]);
            if module != own {
                errors.push(format!("{rel} uses {module}"));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
