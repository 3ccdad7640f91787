//! The model's memory accounting (`Ftl::memory_bytes`, printed per physical page by
//! `nowa sim` and `--bench-schemes`) against the resident memory a run adds as the kernel
//! counts it (`SimResult::rss_bytes`). One file, one test: the resident set is the process's,
//! so no other test may allocate beside it.

use nowa_bench::sim::{run, SimSpec};
use nowa_flash::{FtlConfig, PlacementKind};

fn spec(placement: Option<PlacementKind>) -> SimSpec {
    SimSpec {
        ftl: FtlConfig {
            // 8 GiB logical: tables of tens of MiB, far above the run's other allocations.
            logical_pages: 2 << 20,
            placement,
            track_far: true,
            ..FtlConfig::default()
        },
        fill: 0.9,
        warmup: 0.0,
        volume: 0.05,
        interval: 0.05,
        ..SimSpec::default()
    }
}

/// Plain with FAR, SepBIT's per-page time and FK's (its future stream excluded): what the
/// run adds is the model's count to within 10% plus 4 MiB (huge-page rounding, the
/// workload's and the report's buffers), and the plain path stays within 8 B per physical
/// page by both counts.
#[test]
fn the_resident_memory_of_a_run_is_the_models_accounting() {
    if std::fs::read_to_string("/proc/self/status").is_err() {
        return; // Not Linux: nothing to compare with.
    }
    for p in [
        None,
        Some(PlacementKind::SepBit(6)),
        Some(PlacementKind::Fk(6)),
    ] {
        let r = run(&spec(p), None).expect("run");
        let (model, rss) = (r.memory_bytes as f64, r.rss_bytes as f64);
        assert!(r.rss_bytes > 0, "{p:?}: resident memory measured");
        assert!(
            (rss - model).abs() <= 0.1 * model + f64::from(4u32 << 20),
            "{p:?}: model {model} B, resident {rss} B"
        );
        if p.is_none() {
            let pages = r.layout.physical_pages as f64;
            assert!(model / pages <= 8.0, "model {} B/page", model / pages);
            assert!(rss / pages <= 8.0 + 4.0 * f64::from(1u32 << 20) / pages);
        }
    }
}
