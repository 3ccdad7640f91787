//! `-q` on every command that shows progress (issue 29): table1's per-row lines and
//! infer-gc-unit's per-zone lines go, the seed line and the result stay.
mod common;
use common::nowa;

#[test]
fn infer_gc_unit_quiet_prints_the_result_only() {
    let args = [
        "infer-gc-unit",
        "--capacity",
        "64MiB",
        "--pages-per-block",
        "16",
        "--blocks-per-superblock",
        "2",
        "--max-zone",
        "512KiB",
        "--volume",
        "1",
    ];
    let loud = nowa(&args);
    assert!(
        loud.status.success(),
        "{}",
        String::from_utf8_lossy(&loud.stderr)
    );
    let loud = String::from_utf8_lossy(&loud.stdout).into_owned();
    assert!(loud.lines().any(|l| l.starts_with("zone ")), "{loud}");
    let mut q = args.to_vec();
    q.push("-q");
    let out = nowa(&q);
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{err}");
    assert!(!text.lines().any(|l| l.starts_with("zone ")), "{text}");
    assert!(
        text.contains("GC unit") || text.contains("no zone size"),
        "{text}"
    );
    assert!(err.contains("seed 42"), "the seed is printed: {err}");
}

#[test]
fn table1_takes_quiet() {
    let out = nowa(&[
        "table1",
        "-q",
        "--quick",
        "--out",
        "/nonexistent-nowa-dir/t",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--out") && !err.contains("'-q'"),
        "-q parsed: {err}"
    );
}
