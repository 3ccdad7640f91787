//! Trace replay's speed against the built-in generator on the same model, in one run:
//! a uniform random 4 KiB write trace in the binary form, replayed (`nowa sim --trace`) and
//! simulated (`nowa sim`, uniform) on the same device, greedy, NoSep, FAR off. Prints page
//! writes per CPU second (this thread) of the measured phase and of the whole replay, the scan
//! rate, and the ratio generator / replay.
//!
//! `cargo bench -p nowa-bench --bench replay` (env: `REPLAY_GIB` logical GiB, default 8;
//! `REPLAY_WRITES` page writes in the trace, default 8,000,000; `REPLAY_SEED`, default 42).

use nowa_bench::replay::{self, ReplaySpec, VolumeMode};
use nowa_bench::sim::{self, SimSpec, StreamAssign};
use nowa_flash::FtlConfig;
use nowa_trace::{binary, Op, Record};
use nowa_workload::{WorkloadParams, WorkloadSpec};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const FILL: f64 = 0.9;

/// A binary trace of `writes` uniform random page writes over `FILL` of `logical` pages.
fn uniform_trace(path: &std::path::Path, logical: u64, writes: u64, seed: u64) {
    let params = WorkloadParams::new(logical, FILL, seed).expect("valid parameters");
    let mut w = WorkloadSpec::Uniform
        .build(&params)
        .expect("uniform builds");
    let mut out = binary::Writer::create(path, false).expect("a fresh temporary file");
    let mut buf = vec![0u64; 4096];
    let mut done = 0u64;
    while done < writes {
        let n = usize::try_from((writes - done).min(4096)).expect("<= 4096");
        w.fill_writes(&mut buf[..n]);
        for &l in &buf[..n] {
            let r = Record {
                ts_ns: done,
                volume: 0,
                op: Op::Write,
                offset: l * 4096,
                len: 4096,
            };
            out.push(&r)
                .expect("the temporary directory takes the trace");
            done += 1;
        }
    }
    out.finish().expect("the trace is finished");
}

fn main() {
    let logical = env("REPLAY_GIB", 8) << 18;
    let writes = env("REPLAY_WRITES", 8_000_000);
    let seed = env("REPLAY_SEED", 42);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("uniform.nwt");
    uniform_trace(&path, logical, writes, seed);
    let ftl = FtlConfig {
        logical_pages: logical,
        track_far: false,
        seed,
        ..FtlConfig::default()
    };
    let rs = ReplaySpec {
        trace: path,
        format: None,
        ftl: ftl.clone(),
        capacity_pages: None,
        fill: FILL,
        warmup: 1.0,
        volume: 2.0,
        interval: 0.5,
        precondition: true,
        volumes: VolumeMode::PerVolume,
        only_volume: None,
        seed,
    };
    let r = replay::run(&rs, None).expect("the replay runs");
    let d = &r.devices[0];
    let ss = SimSpec {
        ftl: FtlConfig {
            logical_pages: d.sim.layout.logical_pages,
            ..ftl
        },
        workload: WorkloadSpec::Uniform,
        fill: FILL,
        warmup: 1.0,
        volume: 2.0,
        interval: 0.5,
        precondition: true,
        streams: StreamAssign::Single,
        seed,
    };
    let s = sim::run(&ss, None).expect("the simulation runs");
    let (rm, sm) = (d.sim.sim_writes_per_cpu_sec, s.sim_writes_per_cpu_sec);
    println!(
        "model: {} logical pages, fill {FILL}, 7% OP, greedy, 8 MiB units, FAR off; trace of {writes} uniform page writes (binary), seed {seed}",
        d.sim.layout.logical_pages
    );
    println!(
        "replay:    scan {:.2} M records/s ({:.2} CPU s); replay {:.2} M page writes/CPU s over all phases ({} page writes, {:.2} CPU s); measured phase {rm_m:.2} M/CPU s, WAF {:.3}",
        r.scan_records_per_sec / 1e6,
        r.scan_cpu_secs,
        r.replay_pages_per_sec / 1e6,
        d.sim.total.host_pages,
        r.replay_cpu_secs,
        r.waf,
        rm_m = rm / 1e6
    );
    println!(
        "generator: measured phase {:.2} M page writes/CPU s, WAF {:.3}",
        sm / 1e6,
        s.waf
    );
    println!(
        "ratio generator / replay (measured phase): {:.2}",
        sm / rm.max(1e-9)
    );
}
