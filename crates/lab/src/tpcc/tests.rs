use super::*;
use crate::ycsb::Oop;
use crate::{parse_job, Job};

/// A small repeatable run: one worker, no background threads, a transaction-count stop.
fn small() -> Spec {
    let engine = EngineSpec {
        pool: 16 << 20,
        wal_limit: Some(16 << 20),
        durability: "async".into(),
        doublewrite: true,
        page_cleaner: false,
        max_checkpoint_count: 0,
        max_redo_bytes: None,
        flushing: None,
        separate_wal: false,
        pacing: Some(Pacing::default()),
        write_path: Path::InPlace,
        record_cache: 0,
        blind_updates: 0,
    };
    Spec {
        device: "sim".into(),
        capacity: 256 << 20,
        op: 0.07,
        sim_mode: "cns".into(),
        warehouses: 1,
        threads: 1,
        stop: Stop::Transactions(300),
        steady: false,
        seed: 7,
        interval: 1.0,
        check: true,
        engine,
    }
}

fn oop() -> Spec {
    let mut s = small();
    s.engine.write_path = Path::Oop(Oop {
        zone_size: 1 << 20,
        open_zones: 4,
        compression: "lz4".into(),
        packing: true,
        background_gc: false,
        nowa: true,
        gdt: false,
        deltas: false,
        delta_chain: None,
        delta_merge: None,
        delta_cache: None,
        trim_dead_zones: false,
        defer_compensation: false,
        space_limit: None,
        shared_wal_free: None,
        placement: None,
        gc_victim: None,
        gc_garbage_proportion: None,
        frozen_model: None,
        frozen_threshold: None,
        record_writes: None,
    });
    s.stop = Stop::DeviceWrites(0.5);
    s
}

#[test]
fn a_spec_round_trips_through_json_and_toml() {
    for spec in [small(), oop()] {
        let job = Job::Tpcc(Box::new(spec.clone()));
        let json = serde_json::to_string(&job).expect("serializes");
        assert!(json.contains("\"command\":\"tpcc\""), "{json}");
        assert_eq!(parse_job(&json, false).expect("json parses"), job);
        let toml = toml::to_string(&job).expect("toml serializes");
        assert_eq!(parse_job(&toml, true).expect("toml parses"), job, "{toml}");
    }
    let json = serde_json::to_value(oop()).expect("serializes");
    assert_eq!(json["stop"], serde_json::json!({"device_writes": 0.5}));
    assert_eq!(json["engine"]["write_path"]["oop"]["compression"], "lz4");
}

#[test]
fn bad_fields_are_named() {
    let job = serde_json::to_value(Job::Tpcc(Box::new(small()))).expect("serializes");
    let cases = [
        ("/spec/warehouses", serde_json::json!(0), "warehouses: "),
        (
            "/spec/capacity",
            serde_json::json!("12 parsecs"),
            "spec.capacity: ",
        ),
        (
            "/spec/engine/pool",
            serde_json::json!(4096),
            "engine.pool: ",
        ),
        (
            "/spec/engine/durability",
            serde_json::json!("eventual"),
            "engine.durability: ",
        ),
        (
            "/spec/stop",
            serde_json::json!({"transactions": 0}),
            "stop: ",
        ),
        ("/spec/sim_mode", serde_json::json!("fdp:0"), "sim_mode: "),
    ];
    for (at, value, named) in cases {
        let mut bad = job.clone();
        *bad.pointer_mut(at).expect("a field of the spec") = value;
        let e = parse_job(&bad.to_string(), false).expect_err(at);
        assert!(
            e.is_usage() && e.to_string().starts_with(named),
            "{at}: {e}"
        );
        assert!(!e.to_string().contains('\n'), "one line: {e}");
    }
    let mut unknown = job.clone();
    unknown["spec"]["engine"]["poool"] = 1.into();
    let e = parse_job(&unknown.to_string(), false).expect_err("unknown key");
    assert!(e.to_string().contains("poool"), "{e}");
}

#[test]
fn nondeterminism_names_what_varies() {
    assert_eq!(small().nondeterminism(), None);
    let mut s = small();
    s.threads = 2;
    s.engine.page_cleaner = true;
    let why = s.nondeterminism().expect("varies");
    assert!(
        why.contains("--threads 1") && why.contains("--page-cleaner off"),
        "{why}"
    );
}

/// The deterministic part of a result: what the engine and the SSD wrote and what the
/// transactions did (the samples and speeds are the wall clock's).
fn written(o: &Outcome) -> serde_json::Value {
    let r = &o.result;
    serde_json::json!({
        "drilldown": r.drilldown,
        "waf": [r.db_waf, r.ssd_waf, r.total_waf],
        "per_txn": [r.logical_bytes_per_txn, r.host_bytes_per_txn, r.wal_bytes_per_txn],
        "txns": [r.run.transactions, r.run.new_orders, r.run.rollbacks],
        "committed": r.run.kinds.iter().map(|k| k.committed).collect::<Vec<_>>(),
        "rows": r.load.as_ref().map(|l| l.rows.values().sum::<u64>()),
        "db": r.db,
    })
}

#[test]
fn a_repeatable_spec_writes_the_same_bytes_twice() {
    let spec = small();
    let a = run(&spec, None, &Cancel).expect("runs");
    let b = run(&spec, None, &Cancel).expect("runs");
    assert_eq!(a.nowa.command, "tpcc");
    assert_eq!(
        serde_json::to_value(&a.nowa.spec).expect("json"),
        serde_json::to_value(&spec).expect("json")
    );
    assert!(a
        .result
        .consistency
        .as_ref()
        .is_some_and(Consistency::is_consistent));
    assert!(a.result.run.transactions > 0 && a.result.drilldown.device_host_bytes > 0);
    assert_eq!(written(&a), written(&b));
    let mut other = small();
    other.seed = 8;
    let c = run(&other, None, &Cancel).expect("runs");
    assert_ne!(written(&a), written(&c), "the comparison sees the run");
}
