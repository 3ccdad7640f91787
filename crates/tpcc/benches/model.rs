//! TPC-C on the in-memory model: load rate and transactions/s, and the driver's own CPU cost
//! per transaction (time outside the store's calls, measured with `Timed` on one thread).
//!
//! `cargo bench -p nowa-tpcc --bench model` (env: `TPCC_WAREHOUSES` default 2, `TPCC_SECONDS`
//! default 10, `TPCC_SEED` default 42, `TPCC_STEADY` default 0).

use nowa_tpcc::{
    load, run, LoadConfig, MemStore, NoObserver, Report, RunConfig, Stop, Tables, Timed,
};
use nowa_units::cpu::process_cpu_secs;
use std::time::Instant;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn loaded(warehouses: u32, seed: u64) -> (Timed<MemStore>, Tables) {
    let store = Timed::new(MemStore::new());
    let tables = Tables::open(&store).expect("open tables");
    let cfg = LoadConfig {
        warehouses,
        threads: 2,
        seed,
    };
    let cpu = process_cpu_secs();
    let r = load(&store, &tables, &cfg, &|_| {}).expect("load");
    let rows: u64 = r.rows.values().sum();
    println!(
        "load: {warehouses} warehouses, 2 threads, {rows} rows in {:.2} s = {:.1} warehouses/min, {:.0} rows/s ({:.2} CPU s)",
        r.seconds,
        r.warehouses_per_minute,
        r.rows_per_second,
        process_cpu_secs() - cpu
    );
    (store, tables)
}

/// Rows and average key + value bytes per table, and the total per warehouse.
fn print_sizes(store: &MemStore, warehouses: u32) {
    let mut total = 0u64;
    for t in store.stats() {
        let bytes = t.key_bytes + t.value_bytes;
        total += bytes;
        #[expect(clippy::cast_precision_loss, reason = "sizes")]
        let avg = bytes as f64 / t.rows.max(1) as f64;
        println!(
            "  {:<13} {:>9} rows  {:>6.1} B/row (key + value)",
            t.name, t.rows, avg
        );
    }
    #[expect(clippy::cast_precision_loss, reason = "sizes")]
    let mib = total as f64 / f64::from(warehouses) / f64::from(1u32 << 20);
    println!("  total {mib:.1} MiB of keys + values per warehouse (ITEM shared)");
}

fn print(label: &str, r: &Report) {
    println!(
        "{label}: {} txns in {:.2} s = {:.0} txn/s, tpmC {:.0}, CPU {:.1} us/txn, rollbacks {:.2}%, conflicts {}",
        r.transactions,
        r.seconds,
        r.txn_per_s,
        r.tpmc,
        r.cpu_us_per_txn,
        100.0 * r.rollback_rate,
        r.conflicts
    );
    for k in &r.kinds {
        if k.committed > 0 {
            println!(
                "  {:<13} {:>8} p50 {:>7.1} us  p99 {:>8.1} us  p99.9 {:>8.1} us",
                k.kind.name(),
                k.committed,
                k.latency.p50_us,
                k.latency.p99_us,
                k.latency.p999_us
            );
        }
    }
}

fn main() {
    let warehouses = u32::try_from(env("TPCC_WAREHOUSES", 2)).expect("a small number");
    let seconds = env("TPCC_SECONDS", 10);
    let seed = env("TPCC_SEED", 42);
    let steady = u32::try_from(env("TPCC_STEADY", 0)).expect("a window");
    #[expect(clippy::cast_precision_loss, reason = "seconds")]
    let secs = seconds as f64;
    println!("TPC-C on MemStore: {warehouses} warehouses, {seconds} s per run, seed {seed}, steady window {steady}");
    for threads in [1usize, 2] {
        let (store, tables) = loaded(warehouses, seed);
        if threads == 1 {
            print_sizes(store.inner(), warehouses);
        }
        let mut cfg = RunConfig::new(warehouses, threads);
        cfg.seed = seed;
        cfg.steady_window = steady;
        cfg.stop = Stop::Seconds(secs);
        let (inside0, calls0) = (store.store_seconds(), store.calls());
        let r = run(&store, &tables, &cfg, &NoObserver).expect("run");
        print(&format!("run, {threads} thread(s)"), &r);
        if threads == 1 {
            driver_cost(&r, store.store_seconds() - inside0, store.calls() - calls0);
        }
    }
}

/// Nanoseconds of one `Instant::now()` pair (the timing overhead `Timed` adds per store call).
fn timer_pair_ns() -> f64 {
    let n = 1_000_000u32;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(Instant::now());
        std::hint::black_box(Instant::now());
    }
    t.elapsed().as_secs_f64() * 1e9 / f64::from(n)
}

/// The driver's own CPU per transaction on one thread: the process CPU per transaction times
/// the share of wall time spent outside the store's calls (minus the timing overhead).
fn driver_cost(r: &Report, inside_s: f64, calls: u64) {
    #[expect(clippy::cast_precision_loss, reason = "counts")]
    let (txns, calls) = (r.transactions.max(1) as f64, calls as f64);
    let wall_us = 1e6 * r.seconds / txns;
    let inside_us = 1e6 * inside_s / txns;
    let overhead_us = calls / txns * timer_pair_ns() / 1e3;
    let outside_us = (wall_us - inside_us - overhead_us).max(0.0);
    let driver_cpu_us = r.cpu_us_per_txn * outside_us / wall_us;
    println!(
        "  per txn: wall {wall_us:.1} us = store {inside_us:.1} + timing overhead {overhead_us:.1} \
         ({:.0} store calls) + driver {outside_us:.1}; driver CPU ~ {driver_cpu_us:.1} us/txn \
         ({:.0}% of the process CPU)",
        calls / txns,
        100.0 * driver_cpu_us / r.cpu_us_per_txn.max(1e-9)
    );
}
