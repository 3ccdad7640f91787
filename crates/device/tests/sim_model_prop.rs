//! Property: a SimDevice (CNS or FDP) returns exactly what a plain MemDevice returns for any
//! sequence of writes, trims and reads, while the FTL keeps its invariants and
//! media >= host pages.

use nowa_device::{BlockDevice, MemDevice, SimDevice, SimMode};
use proptest::prelude::*;

const CAP: u64 = 4 << 20;
const PAGES: u64 = CAP / 4096;

#[derive(Debug, Clone)]
enum Op {
    Write {
        lba: u64,
        n: u64,
        fill: u8,
        handle: u16,
    },
    Trim {
        lba: u64,
        n: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..PAGES, 1..16u64, any::<u8>(), 0..3u16).prop_map(|(lba, n, fill, handle)| Op::Write {
            lba,
            n: n.min(PAGES - lba),
            fill,
            handle
        }),
        1 => (0..PAGES, 1..64u64).prop_map(|(lba, n)| Op::Trim { lba, n: n.min(PAGES - lba) }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn sim_matches_reference(ops in prop::collection::vec(op(), 1..400), fdp in any::<bool>()) {
        let mode = if fdp { SimMode::Fdp { handles: 3 } } else { SimMode::Conventional };
        let sim = SimDevice::with_capacity(CAP, 0.2, mode).unwrap();
        let reference = MemDevice::new(CAP);
        for op in &ops {
            match *op {
                Op::Write { lba, n, fill, handle } => {
                    let buf = vec![fill; usize::try_from(n * 4096).unwrap()];
                    sim.write_at_hinted(lba * 4096, &buf, Some(handle)).unwrap();
                    reference.write_at(lba * 4096, &buf).unwrap();
                }
                Op::Trim { lba, n } => {
                    sim.trim(lba * 4096, n * 4096).unwrap();
                    // Trimmed blocks read as zeroes on the simulator.
                    reference.write_at(lba * 4096, &vec![0u8; usize::try_from(n * 4096).unwrap()]).unwrap();
                }
            }
        }
        let (mut a, mut b) = (vec![0u8; usize::try_from(CAP).unwrap()], vec![0u8; usize::try_from(CAP).unwrap()]);
        sim.read_at(0, &mut a).unwrap();
        reference.read_at(0, &mut b).unwrap();
        prop_assert!(a == b, "contents differ");
        sim.with_ftl(|f| f.check_invariants()).unwrap();
        let c = sim.counters();
        prop_assert!(c.media_bytes_written.unwrap() >= c.host_bytes_written);
    }
}
