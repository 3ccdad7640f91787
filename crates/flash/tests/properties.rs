//! Invariants under arbitrary operation sequences: mapped LBAs = valid pages, media writes =
//! host programs + GC copies, no LBA maps to an erased or unwritten page.
use nowa_flash::{Ftl, FtlConfig, GcFrontier, GcUnit, PolicyKind};
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
    prop_oneof![
        Just(PolicyKind::Greedy),
        Just(PolicyKind::TwoRGreedy),
        Just(PolicyKind::TwoRFifo),
        Just(PolicyKind::CostBenefit),
        Just(PolicyKind::Fifo),
        Just(PolicyKind::Random),
        Just(PolicyKind::KGreedy(3)),
        Just(PolicyKind::Window(4)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn mapping_and_accounting_invariants(
        policy in policies(),
        frontier in prop_oneof![Just(None), Just(Some(GcFrontier::Shared)), Just(Some(GcFrontier::Separate)), Just(Some(GcFrontier::PerStream))],
        buffer in prop_oneof![Just(0u64), 1u64..50],
        block_gc in any::<bool>(),
        steps in proptest::collection::vec(step(2048), 1..80),
    ) {
        let cfg = FtlConfig {
            logical_pages: 2048,
            op: 0.3,
            pages_per_block: 16,
            blocks_per_superblock: 4,
            gc_unit: if block_gc { GcUnit::Block } else { GcUnit::Superblock },
            policy,
            gc_frontier: frontier,
            streams: 3,
            write_buffer_pages: buffer,
            seed: 3,
            ..FtlConfig::default()
        };
        let mut f = Ftl::new(cfg).unwrap();
        let mut live = std::collections::HashSet::new();
        for s in steps {
            match s {
                Step::Write { lba, stream } => { f.write(lba, stream).unwrap(); live.insert(lba); }
                Step::Trim { start, len } => {
                    let len = len.min(2048 - start);
                    f.trim(start, len).unwrap();
                    for l in start..start + len { live.remove(&l); }
                }
                Step::Burst { seed, n, hot } => {
                    let mut x = seed;
                    for i in 0..n {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let range = if hot { 200 } else { 2048 };
                        let lba = (x >> 33) % range;
                        f.write(lba, (i % 3) as u16).unwrap();
                        live.insert(lba);
                    }
                }
            }
            if let Err(e) = f.check_invariants() { prop_assert!(false, "{}", e); }
            // Every live LBA is either on flash or in the write buffer; trimmed ones nowhere.
            prop_assert_eq!(f.mapped_pages() + f.buffered_pages(), live.len() as u64);
        }
    }
}
