//! `nowa ycsb --record-writes FILE`: a short out-of-place run records the engine's write log;
//! its counts match the engine's page-write counters, its records keep the hotness rules, and
//! `nowa frozen train` and `nowa frozen replay` accept it unchanged.
mod common;
use common::{assert_usage_errors, nowa_json, nowa_ok as ok};
use nowa_frozen::{LogReader, WriteKind, NO_ZONE};
use std::collections::HashSet;

const YCSB: &[&str] = &[
    "ycsb",
    "--records",
    "20k",
    "--workload",
    "A",
    "--threads",
    "1",
    "--ops",
    "60k",
    "--seed",
    "7",
    "--write-path",
    "oop",
    "--zone-size",
    "256KiB",
    "--device",
    "mem",
    "--capacity",
    "16MiB",
    "--pool",
    "1MiB",
    "--separate-wal",
    "-q",
    "--json",
];

#[test]
fn a_ycsb_write_log_matches_the_engine_and_trains_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("w.log");
    let log = log.to_str().unwrap();
    let mut args = YCSB.to_vec();
    args.extend(["--record-writes", log]);
    // The command itself checks the log's user/GC counts against the engine's counters
    // since the log was attached (it fails otherwise).
    let r = nowa_json(&args);
    let stat = |k: &str| r["stats"][k].as_u64().unwrap();
    let (run_user, run_gc) = (
        stat("eviction_page_writes") + stat("checkpoint_page_writes"),
        stat("gc_page_writes"),
    );
    let mut rd = LogReader::open(std::path::Path::new(log)).unwrap();
    let (mut user, mut gc, mut prev_timer) = (0u64, 0u64, 0u64);
    let mut written: HashSet<u64> = HashSet::new();
    let capacity = 16u64 << 20 >> 12;
    while let Some(w) = rd.next_record().unwrap() {
        assert!(w.timer >= prev_timer, "the timer never decreases");
        prev_timer = w.timer;
        assert!(w.page < capacity, "page {} beyond the device", w.page);
        match w.kind {
            WriteKind::User => {
                user += 1;
                written.insert(w.page);
                let (c, l) = (w.hr_current, w.hr_last);
                assert!(c.wt() >= 1 && c.wt() <= w.timer, "{w:?}");
                assert!(
                    l.is_none() || l.wt() < c.wt(),
                    "HR_last before HR_current: {w:?}"
                );
                assert!(c.mc() <= c.ac(), "{w:?}");
                assert_ne!(w.zone, NO_ZONE);
            }
            WriteKind::Gc => {
                gc += 1;
                assert!(written.contains(&w.page), "GC moves a page written before");
                assert_ne!(w.from_zone, NO_ZONE);
                assert_ne!(w.from_zone, w.zone, "a GC move leaves its zone");
            }
            _ => {}
        }
    }
    // The run's counters exclude the load phase and the close, the log includes them.
    assert!(user >= run_user && user > 10_000, "{user} vs {run_user}");
    assert!(gc >= run_gc && gc > 0, "DB GC ran: {gc} vs {run_gc}");
    assert!(written.len() > 500, "{} distinct pages", written.len());

    let model_dir = dir.path().join("m");
    let t = ok(&[
        "frozen",
        "train",
        "--writes",
        log,
        "--out",
        model_dir.to_str().unwrap(),
    ]);
    let model = model_dir.join("model.json");
    let model = model.to_str().unwrap();
    assert!(t.contains("test:  accuracy"), "{t}");
    let p = ok(&[
        "frozen",
        "replay",
        "--writes",
        log,
        "--model",
        model,
        "--zone-size",
        "256KiB",
        "--schemes",
        "nosep,sepbit,sepfrozen-bit,fk-kmeans",
    ]);
    for s in ["nosep", "sepbit:6", "sepfrozen-bit:6", "fk-kmeans:6"] {
        assert!(p.contains(s), "{s} missing:\n{p}");
    }
}

#[test]
fn record_writes_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let exists = dir.path().join("exists.log");
    std::fs::write(&exists, b"x").unwrap();
    let exists = exists.to_str().unwrap();
    let inplace = dir.path().join("inplace.log");
    let inplace = inplace.to_str().unwrap();
    let mut in_place: Vec<&str> = YCSB
        .iter()
        .copied()
        .filter(|a| *a != "oop" && *a != "--write-path")
        .collect();
    in_place.extend(["--record-writes", inplace]);
    let mut existing = YCSB.to_vec();
    existing.extend(["--record-writes", exists]);
    assert_usage_errors(&[in_place, existing]);
    assert!(!std::path::Path::new(inplace).exists(), "nothing created");
    assert_eq!(std::fs::read(exists).unwrap(), b"x", "nothing overwritten");
}
