//! `nowa tpcc --check-only` on a database written by a steady run: HISTORY is trimmed there,
//! the database says so, and the check skips exactly clauses 3.3.2.8-9 (before, it reported
//! a HistoryYtd violation per district and failed).

mod common;

use common::nowa;

#[test]
fn check_only_of_a_steady_database_is_consistent() {
    let dir = tempfile::tempdir().expect("test step");
    let img = dir.path().join("steady.db");
    let img = img.to_str().expect("UTF-8 temp path");
    let common = [
        "--device",
        img,
        "--capacity",
        "600MiB",
        "--warehouses",
        "1",
        "--pool",
        "16MiB",
    ];
    let run = nowa(
        &[
            "tpcc",
            "-q",
            "--steady",
            "--threads",
            "1",
            "--transactions",
            "1500",
        ]
        .iter()
        .copied()
        .chain(common)
        .chain(["--seed", "5"])
        .collect::<Vec<_>>(),
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = nowa(
        &["tpcc", "--check-only"]
            .iter()
            .copied()
            .chain(common)
            .collect::<Vec<_>>(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}{stderr}");
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("consistent: clause 3.3.2.1-3.3.2.7 hold"),
        "{stdout}"
    );
    assert!(
        !stdout.contains(".8-.9"),
        "history clauses skipped: {stdout}"
    );
    assert!(stderr.contains("HISTORY is trimmed"), "{stderr}");
}
