use super::*;

fn small_geometry() -> ChipGeometry {
    ChipGeometry {
        channels: 4,
        chips_per_channel: 4,
        blocks_per_chip: 128,
        pages_per_block: 8,
        page_bytes: 16384,
        op_physical: 0.25,
    }
}

/// A tiny xorshift so the tests need no RNG crate state.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn churn(ftl: &mut ParallelFtl, seed: u64, writes: u64) {
    let n = ftl.logical_pages();
    let mut x = seed | 1;
    for i in 0..writes {
        let r = next(&mut x);
        // Mixed sizes: a few large sequential requests among small random ones.
        let len = if r % 16 == 0 { 8 } else { 1 };
        let hot = r % 4 != 0;
        let span = if hot { n / 8 } else { n - 8 };
        let start = (next(&mut x) % span).min(n - len);
        #[expect(clippy::cast_precision_loss, reason = "test clock")]
        let now = i as f64 / 1000.0;
        ftl.write(start, len, u16::from(hot), now).unwrap();
        if r % 97 == 0 {
            ftl.trim(start, len, now).unwrap();
        }
        ftl.clear_ops();
    }
}

#[test]
fn every_page_conserved_under_gc_with_mixed_superblock_sizes() {
    let schemes = [
        Scheme::Plan {
            small_chips: 1,
            predict: true,
        },
        Scheme::Plan {
            small_chips: 2,
            predict: false,
        },
        Scheme::Baseline {
            chips_per_channel: 4,
            open: HOST_OPEN,
        },
        Scheme::Baseline {
            chips_per_channel: 1,
            open: HOST_OPEN,
        },
        Scheme::Baseline {
            chips_per_channel: 1,
            open: 4,
        },
        Scheme::PartialGc,
        Scheme::MultiStream { streams: 2 },
        Scheme::AutoStream { streams: 4 },
    ];
    let seed = 7;
    println!("seed {seed}");
    for s in schemes {
        let mut f = ParallelFtl::new(small_geometry(), s).unwrap();
        let n = f.logical_pages();
        f.fill(8, n).unwrap();
        assert_eq!(f.mapped_pages(), f.logical_pages());
        churn(&mut f, seed, 60_000);
        f.check_invariants();
        f.check_victims();
        let c = f.counters();
        assert!(c.victims > 0 && c.gc_pages > 0, "{s}: GC ran: {c:?}");
        assert!(c.erased_blocks > 0);
        assert!(f.mapped_pages() <= f.logical_pages());
        assert!(c.waf() >= 1.0, "{s}");
    }
}

#[test]
fn deterministic_per_seed() {
    let run = |seed| {
        let mut f = ParallelFtl::new(
            small_geometry(),
            Scheme::Plan {
                small_chips: 1,
                predict: true,
            },
        )
        .unwrap();
        let n = f.logical_pages();
        f.fill(8, n).unwrap();
        churn(&mut f, seed, 10_000);
        (f.counters(), f.victim_histogram().to_vec())
    };
    assert_eq!(run(3), run(3));
    assert_ne!(run(3).0, run(5).0);
}

#[test]
fn routing_by_request_size_and_chip_groups() {
    let g = small_geometry();
    let mut f = ParallelFtl::new(
        g,
        Scheme::Plan {
            small_chips: 1,
            predict: false,
        },
    )
    .unwrap();
    // 8 pages -> the default big superblock: one program on 8 different chips.
    f.write(0, 8, 0, 0.0).unwrap();
    let chips: std::collections::BTreeSet<u32> = f.ops().iter().map(|o| o.chip).collect();
    assert_eq!(chips.len(), 8);
    assert!(f.ops().iter().all(|o| o.kind == OpKind::Program));
    f.clear_ops();
    // 7 pages -> the default small superblock: group 0 = way 0 of every channel = chips 0..4.
    f.write(100, 7, 0, 0.0).unwrap();
    let chips: Vec<u32> = f.ops().iter().map(|o| o.chip).collect();
    assert_eq!(chips, vec![0, 1, 2, 3, 0, 1, 2]);
    let n = usize::from(LIFETIME_CLASSES) + 1;
    assert_eq!(f.slot_writes()[n - 1], 8, "default big");
    assert_eq!(f.slot_writes()[2 * n - 1], 7, "default small");
    assert_eq!(
        f.open_slots(),
        2 * n + 1,
        "8 + 8 lifetime, 2 defaults, 1 GC"
    );
    // Reads go to the chip that holds the page.
    f.clear_ops();
    f.read(100, 1).unwrap();
    assert_eq!(
        f.ops(),
        &[FlashOp {
            chip: 0,
            kind: OpKind::Read
        }]
    );
}

#[test]
fn predictor_routes_by_lifetime_class() {
    let mut f = ParallelFtl::new(
        small_geometry(),
        Scheme::Plan {
            small_chips: 1,
            predict: true,
        },
    )
    .unwrap();
    let n = usize::from(LIFETIME_CLASSES) + 1;
    f.write(0, 1, 0, 0.0).unwrap(); // no history: default small
    f.write(0, 1, 0, 0.5).unwrap(); // lifetime 0.5 s: class S (small 0)
    f.write(0, 1, 0, 5.5).unwrap(); // 0.1 x 0.5 + 0.9 x 5 = 4.55 s: class L (2)
    f.write(32, 8, 0, 0.0).unwrap(); // big, no history
    f.write(32, 8, 0, 2.0).unwrap(); // big, 2 s: class M (1)
    let w = f.slot_writes();
    assert_eq!((w[2 * n - 1], w[n], w[n + 2]), (1, 1, 1));
    assert_eq!((w[n - 1], w[1]), (8, 8));
    assert_eq!(f.predictor_bytes(), f.logical_pages().div_ceil(32) * 4);
}

#[test]
fn victim_by_least_valid_ratio_not_pages() {
    // One full big superblock (64 pages on 8 chips... here 16 chips x 8 = 128 pages) with 50%
    // valid and one small (4 chips x 8 = 32 pages) with 25 valid (78%): greedy by pages would
    // pick the small one (25 < 64), ratio picks the big one.
    let g = ChipGeometry {
        blocks_per_chip: 8,
        ..small_geometry()
    };
    let mut f = ParallelFtl::new(
        g,
        Scheme::Plan {
            small_chips: 1,
            predict: false,
        },
    )
    .unwrap();
    f.write(0, 128, 0, 0.0).unwrap(); // big superblock 1, full
    for l in 200..232 {
        f.write(l, 1, 0, 0.0).unwrap(); // small superblock, full
    }
    f.write(300, 1, 0, 0.0).unwrap(); // seals the small one
    f.write(0, 64, 0, 0.0).unwrap(); // seals the big one, invalidates half of it
    f.trim(200, 7, 0.0).unwrap(); // small one: 25 of 32 valid
    f.clear_ops();
    let before = f.counters();
    assert!(f.gc_for(0).unwrap());
    let c = f.counters();
    assert_eq!(
        (c.victims - before.victims, c.gc_pages - before.gc_pages),
        (1, 64),
        "the big victim (64 valid) was collected"
    );
    assert_eq!(f.victim_histogram()[50], 1);
    f.check_invariants();
}

/// Uniform random one-page writes over the first half of the logical space (the rest stays
/// cold), four streams: Figure 1's FIO in small.
fn fio_like(ftl: &mut ParallelFtl, seed: u64, writes: u64) {
    let n = ftl.logical_pages() / 2;
    let mut x = seed | 1;
    for _ in 0..writes {
        let lpn = next(&mut x) % n;
        // A random stream: a fixed rotation would line up with the slots' rotation.
        let stream = u16::try_from(next(&mut x) % 4).expect("< 4");
        ftl.write(lpn, 1, stream, 0.0).unwrap();
        ftl.clear_ops();
    }
}

/// Figure 1's mechanism: with a GC reserve and the same number of open superblocks, bigger
/// superblocks tie up more of the spare space in open superblocks, and WAF rises; with one
/// open superblock, or without the reserve, size hardly matters.
#[test]
fn open_superblocks_and_the_gc_reserve_make_waf_grow_with_superblock_size() {
    let g = ChipGeometry {
        blocks_per_chip: 256,
        op_physical: 0.125,
        ..small_geometry()
    };
    let seed = 11;
    println!("seed {seed}");
    let waf = |chips_per_channel, open, reserve| {
        let mut f = ParallelFtl::new(
            g,
            Scheme::Baseline {
                chips_per_channel,
                open,
            },
        )
        .unwrap();
        assert_eq!(f.open_slots(), usize::from(open) + 1);
        let kept = f.set_gc_reserve(reserve);
        let n = f.logical_pages();
        f.fill(8, n).unwrap();
        f.track_streams();
        let writes = 3 * f.logical_pages();
        fio_like(&mut f, seed, writes);
        f.check_invariants();
        let s = f.stream_stats().unwrap();
        assert_eq!(s.host_pages[..4].iter().sum::<u64>(), 3 * f.logical_pages());
        assert!(s.dominant_share() < 0.5, "rotation mixes the four streams");
        assert!(kept >= RESERVE && f.gc_reserve_blocks() == kept);
        f.counters().waf()
    };
    let (small, big) = (waf(1, 8, 0.08), waf(4, 8, 0.08));
    let (small1, big1) = (waf(1, 1, 0.08), waf(4, 1, 0.08));
    let (small0, big0) = (waf(1, 8, 0.0), waf(4, 8, 0.0));
    println!("reserve+8 open: {small:.3} -> {big:.3}; 1 open: {small1:.3} -> {big1:.3}; no reserve: {small0:.3} -> {big0:.3}");
    assert!(big > 1.3 * small, "open superblocks eat the usable spare");
    assert!(
        big1 < 1.15 * small1,
        "one open superblock: size hardly matters"
    );
    assert!(big0 < 1.15 * small0, "ample spare: size hardly matters");
}

/// FEMU's background GC on a hand-computed device: one chip of 16 blocks of 16 pages, 12
/// blocks of logical space, the background threshold at 25% = 4 free blocks. A step collects
/// only while the chip has <= 4 blocks free and only a victim with >= 1/8 (2 of 16) of its
/// pages invalid; foreground GC collects the best victim whatever it holds.
#[test]
fn background_gc_follows_femu_thresholds_on_a_hand_computed_device() {
    let g = ChipGeometry {
        channels: 1,
        chips_per_channel: 1,
        blocks_per_chip: 16,
        pages_per_block: 16,
        page_bytes: 16384,
        op_physical: 0.25,
    };
    let base = Scheme::Baseline {
        chips_per_channel: 1,
        open: 1,
    };
    let mut f = ParallelFtl::new(g, base).unwrap();
    assert_eq!(f.logical_pages(), 192, "12 blocks of logical space");
    assert_eq!(f.set_gc_reserve(0.0), RESERVE);
    assert_eq!(f.set_background_gc(FEMU_BACKGROUND_GC), 4);
    // 12 blocks written: 11 sealed (block i holds pages 16i..16i+15), the 12th open and
    // full; 4 blocks free, at the threshold.
    f.fill(16, 192).unwrap();
    let c0 = f.counters();
    assert!(!f.background_gc().unwrap(), "every victim is all valid");
    f.trim(48, 1, 0.0).unwrap(); // block 3: 15 valid, 1 invalid < 2
    assert!(
        !f.background_gc().unwrap(),
        "1 invalid page of 16 is below 1/8"
    );
    f.trim(80, 2, 0.0).unwrap(); // block 5: 14 valid, 2 invalid = 1/8
    f.clear_ops();
    assert!(f.background_gc().unwrap(), "block 5 qualifies");
    let c = f.counters().since(&c0);
    assert_eq!(
        (c.victims, c.background_victims, c.gc_pages, c.erased_blocks),
        (1, 1, 14, 1),
        "block 5's 14 valid pages moved, the block erased"
    );
    let count = |k: OpKind| f.ops().iter().filter(|o| o.kind == k).count();
    assert_eq!(
        (
            count(OpKind::Read),
            count(OpKind::Program),
            count(OpKind::Erase)
        ),
        (14, 14, 1)
    );
    assert!(
        !f.background_gc().unwrap(),
        "4 free again (the GC block opened, block 5 freed), block 3 still below 1/8"
    );
    // Above the threshold nothing runs, whatever the garbage: 3 blocks (floor of 3.2).
    f.trim(112, 8, 0.0).unwrap(); // block 7: 8 valid
    assert_eq!(f.set_background_gc(0.2), 3);
    assert!(!f.background_gc().unwrap(), "4 free blocks > 3");
    assert_eq!(f.set_background_gc(0.0), 0);
    assert!(!f.background_gc().unwrap(), "off");
    f.set_background_gc(FEMU_BACKGROUND_GC);
    assert!(f.background_gc().unwrap(), "block 7 (8 valid) at 4 free");
    let c = f.counters().since(&c0);
    assert_eq!((c.background_victims, c.gc_pages), (2, 22));
    // Foreground GC (forced) takes block 3 with its single invalid page.
    assert!(f.gc_for(0).unwrap());
    let c = f.counters().since(&c0);
    assert_eq!((c.victims, c.background_victims, c.gc_pages), (3, 2, 37));
    f.check_invariants();
}
