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
