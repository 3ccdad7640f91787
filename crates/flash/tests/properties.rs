//! Invariants under arbitrary operation sequences, for every victim policy, GC frontier,
//! placement scheme and GC trigger: GC conserves every live page (mapped LBAs = the live set),
//! mapped LBAs = valid pages per unit, media writes = host programs + GC copies, no LBA maps
//! to an erased or unwritten page.
use nowa_flash::{Ftl, FtlConfig, GcFrontier, GcTrigger, GcUnit, PlacementKind, PolicyKind};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Step {
    Write { lba: u64, stream: u16 },
    Trim { start: u64, len: u64 },
    Burst { seed: u64, n: u32, hot: bool },
}

fn step(logical: u64) -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..logical, 0u16..3).prop_map(|(lba, stream)| Step::Write { lba, stream }),
        1 => (0..logical, 1u64..40).prop_map(|(start, len)| Step::Trim { start, len }),
        2 => (any::<u64>(), 1u32..3000, any::<bool>()).prop_map(|(seed, n, hot)| Step::Burst { seed, n, hot }),
    ]
}

fn policies() -> impl Strategy<Value = PolicyKind> {
    prop::sample::select(PolicyKind::all())
}

fn frontiers() -> impl Strategy<Value = Option<GcFrontier>> {
    prop_oneof![
        Just(None),
        Just(Some(GcFrontier::Shared)),
        Just(Some(GcFrontier::Separate)),
        Just(Some(GcFrontier::PerStream))
    ]
}

const PAGES: u64 = 2048;

fn base(block_gc: bool, seed: u64) -> FtlConfig {
    FtlConfig {
        logical_pages: PAGES,
        op: 0.3,
        pages_per_block: 16,
        blocks_per_superblock: 4,
        gc_unit: if block_gc {
            GcUnit::Block
        } else {
            GcUnit::Superblock
        },
        seed,
        ..FtlConfig::default()
    }
}

/// Streams, frontiers, buffers and every policy (the 2R reference ones on one stream); or a
/// placement scheme with a filtering policy and either trigger.
fn configs() -> impl Strategy<Value = FtlConfig> {
    let streams = (
        policies(),
        frontiers(),
        prop_oneof![Just(0u64), 1u64..50],
        any::<bool>(),
        1u32..3,
    )
        .prop_map(|(policy, gc_frontier, buffer, block_gc, k)| FtlConfig {
            streams: if policy.compacts_victims() { 1 } else { 3 },
            policy,
            gc_frontier,
            write_buffer_pages: buffer,
            victims_per_round: k,
            ..base(block_gc, 3)
        });
    let placed = (
        prop::sample::select(PlacementKind::all()),
        prop::sample::select(vec![
            PolicyKind::Greedy,
            PolicyKind::CostBenefit,
            PolicyKind::CostBenefitSepBit,
        ]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(p, policy, gp, block_gc)| FtlConfig {
            placement: Some(p),
            policy,
            gc_trigger: if gp && p != PlacementKind::MiDas {
                GcTrigger::GarbageProportion(0.15)
            } else {
                GcTrigger::FreeUnits
            },
            op: 1.0,
            ..base(block_gc, 5)
        });
    prop_oneof![streams, placed]
}

fn write(f: &mut Ftl, lba: u64, stream: u16, x: u64) {
    let stream = stream % f.config().streams;
    if f.config().placement.is_some_and(|p| p.needs_future()) {
        f.write_hinted(lba, stream, x % 5000).expect("write");
    } else {
        f.write(lba, stream).expect("write");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn mapping_and_accounting_invariants(
        cfg in configs(),
        steps in proptest::collection::vec(step(PAGES), 1..80),
    ) {
        let mut f = Ftl::new(cfg).unwrap();
        let mut live = std::collections::HashSet::new();
        for s in steps {
            match s {
                Step::Write { lba, stream } => { write(&mut f, lba, stream, lba); live.insert(lba); }
                Step::Trim { start, len } => {
                    let len = len.min(PAGES - start);
                    f.trim(start, len).unwrap();
                    for l in start..start + len { live.remove(&l); }
                }
                Step::Burst { seed, n, hot } => {
                    let mut x = seed;
                    for i in 0..n {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let range = if hot { 200 } else { PAGES };
                        let lba = (x >> 33) % range;
                        write(&mut f, lba, u16::try_from(i % 3).unwrap(), x >> 20);
                        live.insert(lba);
                    }
                }
            }
            if let Err(e) = f.check_invariants() { prop_assert!(false, "{}", e); }
            // Every live LBA is either on flash or in the write buffer; trimmed ones nowhere.
            prop_assert_eq!(f.mapped_pages() + f.buffered_pages(), live.len() as u64);
            let far = f.far();
            prop_assert!(far.frozen_moves <= far.moves);
        }
    }
}
