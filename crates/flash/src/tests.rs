use super::*;

fn small(policy: PolicyKind) -> FtlConfig {
    FtlConfig {
        logical_pages: 64 * 64,
        op: 0.25,
        pages_per_block: 16,
        blocks_per_superblock: 4,
        policy,
        ..FtlConfig::default()
    }
}

#[test]
fn overwrite_keeps_mapping_consistent() {
    let mut f = Ftl::new(small(PolicyKind::Greedy)).unwrap();
    let n = f.logical_pages();
    f.precondition_sequential(n).unwrap();
    let mut x = 12345u64;
    for _ in 0..50_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        f.write((x >> 33) % n, 0).unwrap();
    }
    f.check_invariants().unwrap();
    assert_eq!(f.mapped_pages(), n);
    assert!(f.counters().gc_pages > 0);
}

/// 12 bytes per physical page at most, so a 2 TiB device (2^29 pages) fits in 24 GiB. The
/// tables come from calloc, so building the model touches almost none of it.
#[test]
fn memory_budget_two_tib() {
    let cfg = FtlConfig {
        logical_pages: 1 << 29,
        op: 0.07,
        ..FtlConfig::default()
    };
    let f = Ftl::new(cfg).unwrap();
    let per_page = f.memory_bytes() as f64 / f.layout().physical_pages as f64;
    assert!(per_page <= 12.0, "{per_page:.2} bytes per physical page");
}

/// `nowa sim --bench`'s device (2^24 logical pages, 7% OP): at most 8 B per physical page
/// with FAR's move counts on (they ride in the reverse map's spare bits), and the placement
/// scheme's per-page state is counted (SepBIT keeps one time per logical page).
#[test]
fn memory_per_page_counts_everything_and_far_fits_in_eight_bytes() {
    let cfg = FtlConfig {
        logical_pages: 1 << 24,
        op: 0.07,
        ..FtlConfig::default()
    };
    assert!(cfg.track_far, "FAR is on by default");
    let plain = Ftl::new(cfg.clone()).unwrap();
    let physical = plain.layout().physical_pages as f64;
    let per_page = plain.memory_bytes() as f64 / physical;
    assert!(
        per_page <= 8.0,
        "{per_page:.2} bytes per physical page with FAR"
    );
    let sepbit = Ftl::new(FtlConfig {
        placement: Some(PlacementKind::SepBit(6)),
        ..cfg
    })
    .unwrap();
    let extra = sepbit.memory_bytes() - plain.memory_bytes();
    assert!(
        extra >= 4 * (1 << 24),
        "SepBIT's per-page state ({extra} B) is not counted"
    );
}

/// FAR's move counts survive the packed field: with a 2-bit field (counts 0..=2 packed, the
/// rest in the side table) FAR and the counters equal those of the 16-bit field, on a device
/// whose cold pages FIFO moves at every pass (counts far above 2).
#[test]
fn far_counts_exact_when_packed() {
    let run = |bits: u32| {
        let mut f = Ftl::new(small(PolicyKind::Fifo)).unwrap();
        let l = f.layout().clone();
        f.p2l = reverse::Reverse::with_field(
            l.physical_pages,
            l.logical_pages,
            l.unit_pages,
            true,
            bits,
        );
        let n = f.logical_pages();
        f.precondition_sequential(n).unwrap();
        f.reset_far();
        for i in 0..200_000u64 {
            f.write(i % 64, 0).unwrap();
        }
        f.check_invariants().unwrap();
        (f.far(), f.counters(), f.p2l.overflow_len())
    };
    let (wide, narrow) = (run(16), run(2));
    assert_eq!(wide.2, 0, "16 bits hold every count here");
    assert!(narrow.2 > 0, "the 2-bit field spills into the side table");
    assert_eq!(wide.0, narrow.0, "FAR");
    assert_eq!(wide.1, narrow.1, "counters");
    assert!(
        wide.0.frozen_moves > 3 * (wide.0.moves / 4),
        "{:?}: mostly cold pages moved, many times each",
        wide.0
    );
}

#[test]
fn trim_of_unwritten_pages_is_a_no_op() {
    let mut f = Ftl::new(small(PolicyKind::Greedy)).unwrap();
    f.trim(0, 100).unwrap();
    assert_eq!(f.counters(), Counters::default());
    f.write(5, 0).unwrap();
    f.trim(0, 100).unwrap();
    assert_eq!(f.counters().trimmed_pages, 1);
    assert_eq!(f.mapped_pages(), 0);
    f.check_invariants().unwrap();
}

#[test]
fn bad_configs_are_errors() {
    let bad = [
        FtlConfig {
            logical_pages: 0,
            ..FtlConfig::default()
        },
        FtlConfig {
            op: -0.1,
            ..FtlConfig::default()
        },
        FtlConfig {
            op: f64::NAN,
            ..FtlConfig::default()
        },
        FtlConfig {
            op: 0.0,
            ..FtlConfig::default()
        },
        FtlConfig {
            streams: 0,
            ..FtlConfig::default()
        },
        FtlConfig {
            pages_per_block: 0,
            ..FtlConfig::default()
        },
        FtlConfig {
            logical_pages: 100,
            ..FtlConfig::default()
        },
        FtlConfig {
            min_free_units: 0,
            ..FtlConfig::default()
        },
    ];
    for cfg in bad {
        assert!(
            matches!(Ftl::new(cfg.clone()), Err(FlashError::Config(_))),
            "{cfg:?}"
        );
    }
    let mut f = Ftl::new(small(PolicyKind::Greedy)).unwrap();
    assert!(matches!(
        f.write(1 << 40, 0),
        Err(FlashError::LbaOutOfRange { .. })
    ));
    assert!(matches!(f.write(0, 9), Err(FlashError::BadStream { .. })));
}

#[test]
fn partial_gc_uses_erase_blocks_as_units() {
    let cfg = FtlConfig {
        gc_unit: GcUnit::Block,
        ..small(PolicyKind::Greedy)
    };
    let f = Ftl::new(cfg).unwrap();
    assert_eq!(f.layout().unit_pages, 16);
}
