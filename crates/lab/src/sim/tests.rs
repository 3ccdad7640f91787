use super::*;
use crate::{parse_job, Job};

fn spec_of(args: &[&str]) -> Spec {
    Spec::from_flags(&parse_flags(args).expect("flags parse")).expect("a valid run")
}

#[test]
fn every_default_and_derived_value_is_resolved_into_the_spec() {
    let s = spec_of(&[
        "--op-physical",
        "10%",
        "--channels",
        "4",
        "--chips",
        "2",
        "--policy",
        "2r-fifo",
    ]);
    assert_eq!(s.op, 0.1 / 0.9);
    assert_eq!(s.blocks_per_superblock, 8);
    assert_eq!(s.gc_frontier, GcFrontier::Separate, "2R's own GC frontier");
    assert_eq!(Spec::default(), spec_of(&[]));
}

#[test]
fn specs_round_trip_through_toml_and_json() {
    let specs = [
        spec_of(&[]),
        spec_of(&[
            "--workload",
            "zipf:0.9",
            "--capacity",
            "16GiB",
            "--op-physical",
            "60%",
        ]),
        spec_of(&[
            "--placement",
            "sepbit",
            "--gc-trigger",
            "gp:0.2",
            "--policy",
            "cost-benefit",
        ]),
        spec_of(&[
            "--trace",
            "t.csv",
            "--trace-volumes",
            "shared",
            "--trace-capacity",
            "1GiB",
        ]),
        spec_of(&["--zns", "--workload", "zns:2048:4", "--gc-unit", "block"]),
    ];
    for s in specs {
        let job = Job::Sim(s);
        let json = serde_json::to_string(&job).expect("serializes");
        assert_eq!(parse_job(&json, false).expect("json parses"), job, "{json}");
        let toml = toml::to_string(&job).expect("serializes");
        assert_eq!(parse_job(&toml, true).expect("toml parses"), job, "{toml}");
    }
}

#[test]
fn enums_are_written_as_the_flags_text() {
    let s = spec_of(&[
        "--placement",
        "dac:4",
        "--gc-trigger",
        "gp:0.2",
        "--policy",
        "cost-benefit",
    ]);
    let v = serde_json::to_value(&s).expect("serializes");
    assert_eq!(v["placement"], "dac:4");
    assert_eq!(v["gc_trigger"], "gp:0.2");
    assert_eq!(v["policy"], "cost-benefit");
    let k = serde_json::to_value(spec_of(&["--policy", "k-greedy:4"])).expect("ok");
    assert_eq!(k["policy"], "k-greedy:4");
    assert_eq!(v["gc_unit"], "superblock");
    assert_eq!(v["workload"], "uniform");
    assert_eq!(v["placement"].as_str(), Some("dac:4"));
    assert_eq!(
        serde_json::to_value(spec_of(&[])).expect("ok")["placement"],
        "none"
    );
}

#[test]
fn bad_specs_name_the_field_in_one_line() {
    let cases = [
        ("command = \"sim\"\n[spec]\nfrobnicate = 1\n", "frobnicate"),
        (
            "command = \"sim\"\n[spec]\npages_per_block = \"many\"\n",
            "spec.pages_per_block",
        ),
        (
            "command = \"sim\"\n[spec]\ncapacity = \"12 parsecs\"\n",
            "spec.capacity",
        ),
        ("command = \"sim\"\n[spec]\nfill = 2\n", "spec.fill"),
        (
            "command = \"sim\"\n[spec]\ngc_unit = \"Superblock\"\n",
            "spec.gc_unit",
        ),
        ("command = \"bake\"\n", "bake"),
    ];
    for (text, field) in cases {
        let e = parse_job(text, true).expect_err(text);
        let m = e.to_string();
        assert!(e.is_usage(), "{m}");
        assert!(m.contains(field), "{field} not in: {m}");
        assert!(!m.contains('\n'), "one line: {m}");
    }
}

#[test]
fn a_job_file_may_leave_out_what_it_does_not_change() {
    let job = parse_job(
        "command = \"sim\"\n[spec]\ncapacity = \"1GiB\"\nop = \"10%\"\n",
        true,
    )
    .expect("parses");
    let Job::Sim(s) = job else {
        panic!("a sim job")
    };
    assert_eq!(s.capacity, 1 << 30);
    assert_eq!(s.op, 0.1);
    assert_eq!(s.seed, spec_of(&[]).seed);
}
