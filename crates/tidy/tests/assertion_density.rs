//! Assertion density per crate (assertions per 1000 lines of non-test code), with a floor per
//! crate that may only rise. Print the table with
//! `cargo test -p nowa-tidy --test assertion_density -- --nocapture`.

use nowa_tidy::{density, rust_files, Density};
use std::path::Path;

/// (crate directory, minimum assertions per kLOC). Raise a floor when a crate gains
/// assertions; never lower one. Issue 15 asks >= 10 in logspace, flash, engine and device.
const FLOORS: &[(&str, f64)] = &[
    ("logspace", 25.0),
    ("flash", 24.0),
    ("device", 14.0),
    ("engine", 16.0),
    ("workload", 2.0),
    ("bench", 4.0),
    ("cli", 5.0),
    ("units", 9.0),
    ("tpcc", 11.0),
    ("trace", 10.0),
    ("frozen", 22.0),
    ("vopr", 16.0),
    ("lab", 25.0),
    ("python", 10.0),
];

fn crate_density(dir: &Path) -> Density {
    let mut d = Density::default();
    for file in rust_files(&dir.join("src")).expect("src/ is readable") {
        let text = std::fs::read_to_string(&file).expect("source is UTF-8");
        d = d.plus(density(&text));
    }
    d
}

#[test]
fn assertion_density_never_falls() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/")
        .to_path_buf();
    let mut errors = Vec::new();
    println!(
        "{:<10} {:>10} {:>10} {:>9}",
        "crate", "asserts", "code lines", "per kLOC"
    );
    for (name, floor) in FLOORS {
        let d = crate_density(&root.join(name));
        println!(
            "{name:<10} {:>10} {:>10} {:>9.1}",
            d.assertions,
            d.code_lines,
            d.per_kloc()
        );
        if d.per_kloc() < *floor {
            errors.push(format!(
                "crates/{name}: {:.1} assertions per kLOC, below its floor {floor}",
                d.per_kloc()
            ));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
