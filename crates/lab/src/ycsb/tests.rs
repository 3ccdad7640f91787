use super::*;
use crate::engine::EngineSpec;
use crate::{parse_job, Job};

/// A small repeatable run: one worker, no background threads, an operation-count stop.
fn small() -> Spec {
    Spec {
        device: "sim".into(),
        capacity: 8 << 20,
        op: 0.07,
        sim_mode: "cns".into(),
        records: 5_000,
        value_size: 120,
        values: ValueKind::Pattern,
        workload: Mix::A,
        theta: 0.8,
        key_order: KeyOrder::Scrambled,
        threads: 1,
        stop: Stop::Ops(5_000),
        durable_every: None,
        seed: 7,
        interval: 1.0,
        engine: EngineSpec {
            pool: 1 << 20,
            wal_limit: None,
            durability: "async".into(),
            doublewrite: true,
            page_cleaner: false,
            max_checkpoint_count: 0,
            max_redo_bytes: None,
            flushing: None,
            separate_wal: false,
            pacing: Some(nowa_bench::ycsb::Pacing::default()),
            write_path: Path::InPlace,
            record_cache: 0,
            blind_updates: 0,
        },
    }
}

fn with_path(s: Spec, write_path: Path) -> Spec {
    Spec {
        engine: EngineSpec {
            write_path,
            ..s.engine
        },
        ..s
    }
}

fn oop() -> Spec {
    let s = with_path(
        small(),
        Path::Oop(Oop {
            zone_size: 1 << 20,
            open_zones: 4,
            compression: "lz4".into(),
            packing: true,
            background_gc: false,
            nowa: false,
            gdt: false,
            deltas: true,
            delta_chain: Some(4),
            // Resolved as the driver resolves them (every default in the spec).
            delta_merge: Some(OopConfig::default().delta_merge),
            delta_cache: Some(0),
            trim_dead_zones: false,
            defer_compensation: false,
            space_limit: None,
            shared_wal_free: None,
            placement: Some("sepbit:4".into()),
            gc_victim: Some("greedy".into()),
            gc_garbage_proportion: Some(0.15),
            frozen_model: None,
            frozen_threshold: None,
            record_writes: None,
        }),
    );
    Spec {
        capacity: 16 << 20,
        ..s
    }
}

#[test]
fn a_spec_round_trips_through_json_and_toml() {
    for spec in [small(), oop()] {
        let job = Job::Ycsb(Box::new(spec.clone()));
        let json = serde_json::to_string(&job).expect("serializes");
        assert_eq!(parse_job(&json, false).expect("json parses"), job);
        let toml = toml::to_string(&job).expect("toml serializes");
        assert_eq!(parse_job(&toml, true).expect("toml parses"), job, "{toml}");
    }
}

#[test]
fn the_driver_spec_converts_back_to_the_same_spec() {
    for spec in [small(), oop()] {
        let b = spec.to_bench().expect("valid");
        let mode = spec.mode().expect("valid mode");
        let back = Spec::from_bench(&b, &spec.device, spec.capacity, spec.op, mode);
        assert_eq!(back, spec);
    }
}

#[test]
fn bad_fields_are_named() {
    let json = serde_json::to_value(Job::Ycsb(Box::new(small()))).expect("serializes");
    let cases: [(&str, serde_json::Value, &str); 4] = [
        ("threads", serde_json::json!(0), "threads:"),
        ("sim_mode", serde_json::json!("fdp:0"), "sim_mode:"),
        ("capacity", serde_json::json!("8 GiBs"), "spec.capacity:"),
        ("bogus", serde_json::json!(1), "unknown field `bogus`"),
    ];
    for (key, value, want) in cases {
        let mut j = json.clone();
        j["spec"][key] = value;
        let e = parse_job(&j.to_string(), false).expect_err(key);
        assert!(e.is_usage() && e.to_string().contains(want), "{key}: {e}");
    }
    let engine = [
        (
            "durability",
            serde_json::json!("fast"),
            "engine.durability:",
        ),
        ("pool", serde_json::json!(4096), "engine.pool:"),
    ];
    for (key, value, want) in engine {
        let mut j = json.clone();
        j["spec"]["engine"][key] = value;
        let e = parse_job(&j.to_string(), false).expect_err(key);
        assert!(e.is_usage() && e.to_string().contains(want), "{key}: {e}");
    }
    let mut j = serde_json::to_value(Job::Ycsb(Box::new(oop()))).expect("serializes");
    j["spec"]["engine"]["write_path"]["oop"]["placement"] = serde_json::json!("nonsense");
    let e = parse_job(&j.to_string(), false).expect_err("placement");
    assert!(e.to_string().contains("write_path.oop.placement"), "{e}");
}

#[test]
fn only_background_threads_and_clocks_make_runs_vary() {
    assert_eq!(small().nondeterminism(), None);
    assert_eq!(oop().nondeterminism(), None);
    let mut s = Spec {
        threads: 2,
        ..small()
    };
    s.engine.page_cleaner = true;
    let why = s.nondeterminism().expect("two reasons");
    assert!(
        why.contains("worker") && why.contains("page-cleaner"),
        "{why}"
    );
}

/// The bytes a run wrote, as JSON (what two runs of a repeatable spec must agree on).
fn written(o: &Outcome) -> serde_json::Value {
    let v = serde_json::to_value(o).expect("serializes");
    assert!(v["nowa"]["spec"].is_object());
    for k in ["drilldown", "stats", "hit_ratio", "ops"] {
        assert!(!v[k].is_null(), "{k} in the result");
    }
    let keys = [
        "drilldown",
        "stats",
        "hit_ratio",
        "ops",
        "db_waf",
        "ssd_waf",
    ];
    serde_json::json!(keys.map(|k| &v[k]))
}

#[test]
fn two_runs_of_a_repeatable_spec_write_the_same_bytes() {
    for spec in [small(), oop()] {
        let a = run(&spec, None, &Cancel).expect("runs");
        let b = run(&spec, None, &Cancel).expect("runs again");
        assert!(a.result.result.ops == 5_000, "{}", a.result.result.ops);
        assert_eq!(written(&a), written(&b));
    }
}

#[test]
fn a_real_device_or_a_model_is_not_run_from_a_spec() {
    let s = Spec {
        device: "/tmp/x.img".into(),
        ..small()
    };
    let e = run(&s, None, &Cancel).expect_err("refused");
    assert!(e.is_usage() && e.to_string().starts_with("device:"), "{e}");
}

/// SepFrozen from a spec (issue 28: the engine figures run their runs as typed specs): the
/// online model judges victims at GC, the write log holds exactly the engine's page writes,
/// and the spec (placement, model, log file) survives the round trip of a job file.
#[test]
fn a_sepfrozen_spec_runs_and_records_its_writes() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("w.log");
    let mut spec = oop();
    spec.stop = Stop::Ops(20_000);
    if let Path::Oop(o) = &mut spec.engine.write_path {
        o.placement = Some("sepfrozen-bit:6".into());
        o.frozen_model = Some("online:2k:64".into());
        o.record_writes = Some(log.clone());
        o.compression = "off".into();
        o.deltas = false;
        o.delta_chain = None;
    }
    let job = Job::Ycsb(Box::new(spec.clone()));
    let json = serde_json::to_string(&job).expect("serializes");
    assert_eq!(parse_job(&json, false).expect("parses"), job);
    let out = run(&spec, None, &Cancel).expect("runs");
    let f = out.result.frozen.as_ref().expect("SepFrozen's report");
    assert_eq!(f.model_file, "online");
    assert!(f.inference.pages >= f.inference.frozen, "{f:?}");
    let w = out.result.write_log.expect("the log's summary");
    assert!(w.user > 0 && log.exists(), "{w:?}");
    let v = serde_json::to_value(&out).expect("serializes");
    assert_eq!(
        v["nowa"]["spec"]["engine"]["write_path"]["oop"]["placement"],
        "sepfrozen-bit:6"
    );
    let again = run(&spec, None, &Cancel).expect_err("the log exists");
    assert!(
        again.is_usage() && again.to_string().contains("exists"),
        "{again}"
    );
}
