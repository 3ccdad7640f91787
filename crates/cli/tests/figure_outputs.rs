//! Figure commands write where `--out` says, never into docs/ unless told: `nowa frozen
//! figures` defaulted to `docs/figures` of the working directory (and `--engine` to
//! `docs/figures/sepfrozen-engine`), where the shipped figures live.
use std::process::Command;

#[test]
fn frozen_figures_default_to_a_new_directory_not_docs() {
    let cwd = tempfile::tempdir().unwrap();
    let docs = cwd.path().join("docs").join("figures");
    std::fs::create_dir_all(&docs).unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_nowa"))
            .args([
                "frozen",
                "figures",
                "--synth-writes",
                "10k",
                "--max-samples",
                "1000",
                "-q",
            ])
            .current_dir(cwd.path())
            .output()
            .unwrap()
    };
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        std::fs::read_dir(&docs).unwrap().count(),
        0,
        "wrote into docs/"
    );
    let made = cwd.path().join("sepfrozen-figures");
    assert!(made.join("sepfrozen-waf.png").is_file(), "{err}");
    // A second run keeps the first one's figures unless --force.
    let again = run();
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{err}");
    assert!(err.contains("--force"), "{err}");
}
