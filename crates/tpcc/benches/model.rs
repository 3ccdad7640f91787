//! TPC-C on the in-memory model: load rate and transactions/s, and the driver's own CPU cost
//! per transaction (time outside the store's calls, measured with `Timed` on one thread).
//!
//! `cargo bench -p nowa-tpcc --bench model` (env: `TPCC_WAREHOUSES` default 2, `TPCC_SECONDS`
//! default 10, `TPCC_SEED` default 42, `TPCC_STEADY` default 0).

use nowa_tpcc::report::process_cpu_seconds;
use nowa_tpcc::{
    load, run, LoadConfig, MemStore, NoObserver, Report, RunConfig, Stop, Tables, Timed,
};

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
    let cpu = process_cpu_seconds();
    let r = load(&store, &tables, &cfg, &|_| {}).expect("load");
    let rows: u64 = r.rows.values().sum();
    println!(
        "load: {warehouses} warehouses, 2 threads, {rows} rows in {:.2} s = {:.1} warehouses/min, {:.0} rows/s ({:.2} CPU s)",
        r.seconds,
        r.warehouses_per_minute,
        r.rows_per_second,
        process_cpu_seconds() - cpu
    );
    (store, tables)
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
        let mut cfg = RunConfig::new(warehouses, threads);
        cfg.seed = seed;
        cfg.steady_window = steady;
        cfg.stop = Stop::Seconds(secs);
        let inside0 = store.store_seconds();
        let r = run(&store, &tables, &cfg, &NoObserver).expect("run");
        print(&format!("run, {threads} thread(s)"), &r);
        let inside = store.store_seconds() - inside0;
        #[expect(clippy::cast_precision_loss, reason = "counts")]
        let per = |s: f64| 1e6 * s / r.transactions.max(1) as f64;
        println!(
            "  time inside the store {:.1} us/txn, outside (driver) {:.1} us/txn of wall time per thread{}",
            per(inside),
            per(r.seconds * threads as f64 - inside),
            if threads > 1 { " (store time includes waiting for MemStore's global lock)" } else { "" }
        );
    }
}
