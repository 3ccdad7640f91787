//! Property: after any sequence of writes and flushes, a power loss that keeps nothing
//! (keep_prob 0, no tearing) leaves exactly the state of the last flush, and one that keeps
//! everything (keep_prob 1) leaves the latest state.

use nowa_device::{BlockDevice, FaultConfig, FaultyDevice, MemDevice};
use proptest::prelude::*;

const CAP: u64 = 1 << 20;
const PAGES: u64 = CAP / 4096;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn power_loss_extremes(
        ops in prop::collection::vec((0..PAGES, 1..8u64, any::<u8>(), prop::bool::weighted(0.1)), 1..200),
        keep in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let d = FaultyDevice::new(MemDevice::new(CAP), FaultConfig { seed, torn_write_prob: 0.0, bit_flip_read_prob: 0.0 });
        d.set_keep_prob(if keep { 1.0 } else { 0.0 });
        let mut latest = vec![0u8; usize::try_from(CAP).unwrap()];
        let mut durable = latest.clone();
        for &(lba, n, fill, flush) in &ops {
            let n = n.min(PAGES - lba);
            let range = usize::try_from(lba * 4096).unwrap()..usize::try_from((lba + n) * 4096).unwrap();
            d.write_at(lba * 4096, &vec![fill; range.len()]).unwrap();
            latest[range].fill(fill);
            if flush {
                d.flush().unwrap();
                durable.copy_from_slice(&latest);
            }
        }
        let mut now = vec![0u8; usize::try_from(CAP).unwrap()];
        d.read_at(0, &mut now).unwrap();
        prop_assert!(now == latest);
        d.power_loss();
        d.restart();
        d.read_at(0, &mut now).unwrap();
        let want = if keep { &latest } else { &durable };
        prop_assert!(&now == want);
        prop_assert_eq!(d.writes_issued(), ops.len() as u64);
    }
}
