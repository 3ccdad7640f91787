//! `nowa run`: job files, and results that run again bit for bit.
mod common;
use common::{assert_usage_errors, nowa, nowa_json};
use serde_json::Value;

/// What a run measures of the machine, not of the simulation: its start time, wall or CPU
/// speeds, resident memory and what bound it. Everything else of a result must repeat bit
/// for bit.
fn without_wall_clock(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !nowa_lab::is_machine_key(k))
                .map(|(k, v)| (k.clone(), without_wall_clock(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_wall_clock).collect()),
        o => o.clone(),
    }
}

/// No key or text value is a Rust encoding (`"Ops"`, `"OutOfPlace"`, `Fdp { handles: 8 }`).
fn assert_no_rust_encodings(v: &Value, at: &str) {
    let rusty = |s: &str| {
        let head: String = s.chars().take_while(char::is_ascii_alphanumeric).collect();
        let rest = &s[head.len()..];
        head.len() > 1
            && head.starts_with(|c: char| c.is_ascii_uppercase())
            && head.chars().any(|c| c.is_ascii_lowercase())
            && (rest.is_empty() || rest.starts_with('(') || rest.starts_with(" {"))
    };
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                assert!(!rusty(k), "{at}.{k}: a Rust enum key");
                assert_no_rust_encodings(x, &format!("{at}.{k}"));
            }
        }
        Value::Array(a) => a.iter().for_each(|x| assert_no_rust_encodings(x, at)),
        Value::String(s) => assert!(!rusty(s), "{at}: a Rust encoding '{s}'"),
        _ => {}
    }
}

fn rerun(dir: &std::path::Path, result: &Value) -> Value {
    let path = dir.join("result.json");
    let text = serde_json::to_string_pretty(result).expect("a result serializes");
    std::fs::write(&path, text).expect("write the result");
    nowa_json(&["run", "-q", "--json", path.to_str().expect("a UTF-8 path")])
}

const SIM: &[&str] = &[
    "sim",
    "-q",
    "--json",
    "--capacity",
    "256MiB",
    "--workload",
    "zipf:0.9",
    "--op-physical",
    "10%",
    "--placement",
    "sepbit",
    "--warmup",
    "0.5",
    "--volume",
    "1",
    "--interval",
    "0.25",
    "--seed",
    "7",
    "--pages-per-block",
    "64",
    "--blocks-per-superblock",
    "2",
];

#[test]
fn a_sim_result_runs_again_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let first = nowa_json(SIM);
    assert_eq!(first["nowa"]["command"], "sim");
    assert_eq!(first["nowa"]["seed"], 7);
    assert_eq!(
        first["nowa"]["spec"]["op"],
        0.1 / 0.9,
        "--op-physical resolved"
    );
    assert!(first["nowa"]["version"].is_string() && first["nowa"]["commit"].is_string());
    assert_no_rust_encodings(&first, "sim");
    let again = rerun(dir.path(), &first);
    assert_eq!(without_wall_clock(&again), without_wall_clock(&first));
    // The comparison sees the simulation: another seed differs.
    let mut other = first.clone();
    other["nowa"]["spec"]["seed"] = 8.into();
    assert_ne!(
        without_wall_clock(&rerun(dir.path(), &other)),
        without_wall_clock(&first)
    );
}

#[test]
fn a_trace_replay_result_runs_again_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.csv");
    let t = trace.to_str().unwrap();
    let gen = nowa(&[
        "trace",
        "gen",
        t,
        "--capacity",
        "64MiB",
        "--workload",
        "zipf:0.8",
    ]);
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );
    let args = [
        "sim",
        "-q",
        "--json",
        "--trace",
        t,
        "--fill",
        "0.8",
        "--pages-per-block",
        "64",
        "--blocks-per-superblock",
        "2",
        "--warmup",
        "1",
        "--volume",
        "1",
    ];
    let first = nowa_json(&args);
    assert_eq!(first["nowa"]["spec"]["trace"]["path"], t);
    assert_no_rust_encodings(&first, "replay");
    let again = rerun(dir.path(), &first);
    assert_eq!(without_wall_clock(&again), without_wall_clock(&first));
}

#[test]
fn a_toml_job_runs_as_the_same_flags_do() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.toml");
    std::fs::write(
        &job,
        "command = \"sim\"\n[spec]\ncapacity = \"256MiB\"\nworkload = \"zipf:0.9\"\nop = 0.1111111111111111\nplacement = \"sepbit\"\nwarmup = 0.5\nvolume = 1\ninterval = 0.25\nseed = 7\npages_per_block = 64\nblocks_per_superblock = 2\n",
    )
    .unwrap();
    let from_job = nowa_json(&["run", "-q", "--json", job.to_str().unwrap()]);
    let mut flags = SIM.to_vec();
    flags.splice(7..9, ["--op", "0.1111111111111111"]);
    let from_flags = nowa_json(&flags);
    assert_eq!(
        without_wall_clock(&from_job),
        without_wall_clock(&from_flags)
    );
}

#[test]
fn bad_jobs_are_one_line_naming_the_field_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "unknown.toml",
            "command = \"sim\"\n[spec]\ncapacityy = 1\n",
            "capacityy",
        ),
        (
            "type.toml",
            "command = \"sim\"\n[spec]\nseed = \"seven\"\n",
            "spec.seed",
        ),
        (
            "size.toml",
            "command = \"sim\"\n[spec]\ncapacity = \"8 GiBs\"\n",
            "spec.capacity",
        ),
        (
            "range.json",
            "{\"command\": \"sim\", \"spec\": {\"fill\": 1.5}}",
            "for 'spec.fill'",
        ),
        ("cmd.json", "{\"command\": \"bake\", \"spec\": {}}", "bake"),
        (
            "tpcc.toml",
            "command = \"tpcc\"\n[spec]\nwarehouses = \"many\"\n",
            "spec.warehouses",
        ),
        ("broken.toml", "command = \n", "broken.toml"),
        // A geometry checked as flags names the job's fields, not flags the file never had.
        (
            "geometry.toml",
            "command = \"sim\"\n[spec]\ncapacity = \"64MiB\"\nop = 0.07\npages_per_block = 256\nblocks_per_superblock = 8\n",
            "geometry (spec.capacity, spec.op, spec.pages_per_block, spec.blocks_per_superblock)",
        ),
        (
            "plan-geometry.toml",
            "command = \"plan-run\"\n[spec]\nscheme = \"baseline\"\nworkload = \"fio\"\nskip_bad = false\n[spec.device]\nchannels = 1\nchips_per_channel = 1\nblocks_per_chip = 4\npages_per_block = 4\npage_bytes = 4096\nop_physical = 0.07\ntiming = \"femu\"\ndrive_writes = 1.0\nseed = 1\ngc_reserve = 0.05\nfill = 0.9\ntime_scale = 1.0\n",
            "spec.device.blocks_per_chip",
        ),
    ];
    let mut argvs = Vec::new();
    for (name, text, field) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let out = nowa(&["run", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(field), "{name}: {field} not in {err}");
        argvs.push(p.to_str().unwrap().to_owned());
    }
    let cases: Vec<Vec<&str>> = argvs.iter().map(|p| vec!["run", p.as_str()]).collect();
    assert_usage_errors(&cases);
}

#[test]
fn ycsb_json_writes_option_values_as_text() {
    let v = nowa_json(&[
        "ycsb",
        "-q",
        "--json",
        "--records",
        "20k",
        "--ops",
        "20k",
        "--threads",
        "1",
        "--write-path",
        "oop",
        "--placement",
        "sepbit",
        "--gc-victim",
        "k-greedy:4",
        "--compression",
        "lz4",
    ]);
    assert_no_rust_encodings(&v, "ycsb");
    assert_eq!(v["spec"]["stop"]["ops"], 20_000);
    let oop = &v["spec"]["store"]["oop"];
    assert_eq!(oop["placement"], "sepbit:6");
    assert_eq!(oop["gc_victim"], "k-greedy:4");
    assert_eq!(oop["compression"], "lz4");
    assert_eq!(v["spec"]["durability"], "async");
    // The identity names the resolved engine spec and the device.
    let id = &v["nowa"];
    assert_eq!(id["command"], "ycsb");
    assert_eq!(id["spec"]["sim_mode"], "cns");
    assert_eq!(id["spec"]["capacity"], v["device_capacity"]);
    assert_eq!(
        id["spec"]["engine"]["pool"], v["spec"]["engine"]["pool_bytes"],
        "the pool as sized"
    );
    assert_eq!(
        id["spec"]["engine"]["write_path"]["oop"]["placement"],
        "sepbit:6"
    );
}

/// What a ycsb run measures of the machine besides [`without_wall_clock`]'s: latencies,
/// CPU, memory, and the per-interval ticks (cut by the wall clock).
fn without_machine(v: &Value) -> Value {
    match without_wall_clock(v) {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, _)| {
                    !(k.ends_with("_us")
                        || k.ends_with("_mb_s")
                        || k.starts_with("cpu_")
                        || k.ends_with("_utilization")
                        || k == "peak_rss_bytes"
                        || k == "ticks")
                })
                .map(|(k, v)| (k, without_machine(&v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_machine).collect()),
        o => o,
    }
}

#[test]
fn a_ycsb_result_runs_again_bit_for_bit_on_the_simulated_ssd() {
    let dir = tempfile::tempdir().unwrap();
    for path in [
        &["--write-path", "inplace"][..],
        &[
            "--write-path",
            "oop",
            "--background-gc",
            "off",
            "--compression",
            "lz4",
        ],
    ] {
        let mut args = vec![
            "ycsb",
            "-q",
            "--json",
            "--records",
            "20k",
            "--ops",
            "20k",
            "--threads",
            "1",
            "--page-cleaner",
            "off",
            "--seed",
            "9",
        ];
        args.extend_from_slice(path);
        let first = nowa_json(&args);
        assert_eq!(first["nowa"]["seed"], 9);
        let again = rerun(dir.path(), &first);
        assert!(
            first["stats"]["evictions"].as_u64().unwrap() > 0,
            "the pool evicts"
        );
        assert_eq!(without_machine(&again), without_machine(&first), "{path:?}");
        // The comparison sees the run: another seed differs.
        let mut other = first.clone();
        other["nowa"]["spec"]["seed"] = 10.into();
        assert_ne!(
            without_machine(&rerun(dir.path(), &other)),
            without_machine(&first)
        );
    }
}

#[test]
fn a_ycsb_result_from_a_file_device_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let v = nowa_json(&["ycsb", "-q", "--json", "--records", "2k", "--ops", "1k"]);
    let mut v = v;
    v["nowa"]["spec"]["device"] = "/dev/null".into();
    let path = dir.path().join("y.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let out = nowa(&["run", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("device: /dev/null"), "{err}");
}

/// What a tpcc run wrote and did, without what the wall clock cuts (samples, speeds,
/// latencies, the engine's timers): the part of a repeatable run that repeats bit for bit.
fn tpcc_written(v: &Value) -> Value {
    let r = &v["run"];
    let committed: Vec<&Value> = r["kinds"]
        .as_array()
        .expect("kinds")
        .iter()
        .map(|k| &k["committed"])
        .collect();
    serde_json::json!({
        "spec": v["nowa"]["spec"],
        "drilldown": v["drilldown"],
        "waf": [v["db_waf"], v["ssd_waf"], v["total_waf"]],
        "per_txn": [v["logical_bytes_per_txn"], v["host_bytes_per_txn"], v["wal_bytes_per_txn"], v["flash_bytes_per_txn"]],
        "txns": [r["transactions"], r["new_orders"], r["rollbacks"]],
        "committed": committed,
        "rows": v["load"]["rows"],
        "db": v["db"],
        "consistency": v["consistency"],
        "zone_bytes": v["zone_bytes"],
    })
}

#[test]
fn a_tpcc_result_runs_again_bit_for_bit_on_the_simulated_ssd() {
    let dir = tempfile::tempdir().unwrap();
    for path in [
        &["--write-path", "inplace"][..],
        &["--write-path", "oop", "--background-gc", "off"],
    ] {
        let mut args = vec![
            "tpcc",
            "-q",
            "--json",
            "--warehouses",
            "1",
            "--transactions",
            "400",
            "--threads",
            "1",
            "--page-cleaner",
            "off",
            "--check",
            "--seed",
            "9",
        ];
        args.extend_from_slice(path);
        let first = nowa_json(&args);
        assert_no_rust_encodings(&first, "tpcc");
        let id = &first["nowa"];
        assert_eq!(
            (id["command"].as_str(), id["seed"].as_u64()),
            (Some("tpcc"), Some(9))
        );
        assert_eq!(id["spec"]["stop"]["transactions"], 400);
        assert!(id["spec"]["capacity"].as_u64().unwrap() > 88 << 20, "sized");
        assert!(first["run"]["transactions"].as_u64().unwrap() > 0);
        let again = rerun(dir.path(), &first);
        assert_eq!(tpcc_written(&again), tpcc_written(&first), "{path:?}");
        // The comparison sees the run: another seed differs.
        let mut other = first.clone();
        other["nowa"]["spec"]["seed"] = 10.into();
        assert_ne!(
            tpcc_written(&rerun(dir.path(), &other)),
            tpcc_written(&first)
        );
    }
}
