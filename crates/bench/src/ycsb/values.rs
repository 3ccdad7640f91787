//! Keys and values of the YCSB driver: record ids as big-endian keys, pattern (compressible)
//! or random values carrying their version, and the key-popularity generators.

use super::driver::worker_seed;
use super::{KeyOrder, ValueKind, YcsbError};
use nowa_workload::{Uniform, Zipfian};

/// Key of record `id`: 8 bytes, big-endian so the B+-tree order is the numeric order.
#[must_use]
pub fn key_of(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

/// The version a pattern value carries (see [`make_value`]); None if the value is too short.
#[must_use]
pub fn pattern_version(value: &[u8], id: u64) -> Option<u64> {
    let tag = u64::from_le_bytes(value.get(..8)?.try_into().ok()?);
    Some((tag ^ id).rotate_right(32))
}

/// Random bytes after the counter of a [`ValueKind::Paper`] value (the rest is the pattern):
/// calibrated so that LZ4 leaves 0.41 of a full leaf of 120-byte values, the paper's YCSB
/// ratio (tests below).
pub const PAPER_RANDOM: usize = 40;

/// Fill `buf` with random bytes from `rng`.
fn fill_random(buf: &mut [u8], rng: &mut u64) {
    for chunk in buf.chunks_mut(8) {
        let b = nowa_units::splitmix64(rng).to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
}

/// Fill `buf` with a value for record `id`, version `ver`.
pub fn make_value(buf: &mut [u8], kind: ValueKind, id: u64, ver: u64, rng: &mut u64) {
    match kind {
        ValueKind::Random => fill_random(buf, rng),
        ValueKind::Paper => {
            make_value(buf, ValueKind::Pattern, id, ver, rng);
            let end = buf.len().min(8 + PAPER_RANDOM);
            if end > 8 {
                fill_random(&mut buf[8..end], rng);
            }
        }
        ValueKind::Pattern => {
            const PAT: &[u8] = b"nowa-ycsb-value-";
            for (i, b) in buf.iter_mut().enumerate() {
                *b = PAT[i % PAT.len()];
            }
            let tag = (id ^ ver.rotate_left(32)).to_le_bytes();
            let n = buf.len().min(8);
            buf[..n].copy_from_slice(&tag[..n]);
            debug_assert!(n < 8 || pattern_version(buf, id) == Some(ver));
        }
    }
}

/// Which record an operation touches.
pub(crate) enum KeyGen {
    Uniform(Uniform),
    Zipf(Zipfian),
}

impl KeyGen {
    /// Worker `worker`'s keys of a run seeded `seed`: draws of its own, one popularity order
    /// for the whole run (every worker's hottest key is the same record, as in YCSB).
    pub(crate) fn new(
        records: u64,
        theta: f64,
        order: KeyOrder,
        seed: u64,
        worker: usize,
    ) -> Result<KeyGen, YcsbError> {
        let draws = worker_seed(seed, worker);
        // Worker 0's seed for the layout keeps single-thread runs as they were.
        let layout = worker_seed(seed, 0);
        Ok(match (theta == 0.0, order) {
            (true, _) => KeyGen::Uniform(Uniform::new(records, draws)?),
            (false, KeyOrder::Scrambled) => {
                KeyGen::Zipf(Zipfian::with_layout(records, theta, layout, draws)?)
            }
            (false, KeyOrder::Ranked) => KeyGen::Zipf(Zipfian::ranked(records, theta, draws)?),
        })
    }

    pub(crate) fn next(&mut self) -> u64 {
        match self {
            KeyGen::Uniform(u) => u.next_write(),
            KeyGen::Zipf(z) => z.next_write(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_values_carry_their_version() {
        let mut buf = vec![0u8; 120];
        let mut rng = 1;
        for (id, ver) in [(0u64, 0u64), (7, 1), (u64::MAX, 12345)] {
            make_value(&mut buf, ValueKind::Pattern, id, ver, &mut rng);
            assert_eq!(pattern_version(&buf, id), Some(ver));
        }
        assert_eq!(pattern_version(&buf[..4], 0), None);
    }

    /// LZ4 bytes / 4096 of a full leaf of 120-byte `kind` values (records 0..).
    fn leaf_ratio(kind: ValueKind) -> f64 {
        use nowa_engine::{oop::compress_page, page, Compression};
        let (mut p, mut v, mut rng) = (vec![0u8; page::PAGE_SIZE], vec![0u8; 120], 42);
        page::init(&mut p, page::KIND_LEAF, 1);
        let mut id = 0;
        loop {
            make_value(&mut v, kind, id, 3, &mut rng);
            if !page::leaf_append(&mut p, &key_of(id), &v) {
                break;
            }
            id += 1;
        }
        assert_eq!(id, nowa_engine::leaf_records_per_page(8, 120) as u64);
        page::seal(&mut p);
        compress_page(&p, Compression::Lz4, 0).1.len() as f64 / page::PAGE_SIZE as f64
    }

    #[test]
    fn paper_values_compress_like_the_papers_ycsb_data() {
        // how-to-write-to-ssds.md section 3.1: LZ4 leaves 41.2% of its YCSB data.
        let paper = leaf_ratio(ValueKind::Paper);
        assert!((0.38..=0.45).contains(&paper), "paper values: {paper}");
        let pattern = leaf_ratio(ValueKind::Pattern);
        assert!(pattern < 0.25, "pattern values: {pattern}");
        let random = leaf_ratio(ValueKind::Random);
        assert!(random > 0.85, "random values: {random}");
        eprintln!("LZ4 of a full leaf: paper {paper:.3}, pattern {pattern:.3}, random {random:.3}");
        let mut buf = vec![0u8; 120];
        make_value(&mut buf, ValueKind::Paper, 9, 77, &mut 1);
        assert_eq!(
            pattern_version(&buf, 9),
            Some(77),
            "the counter stays in front"
        );
    }

    #[test]
    fn keys_stay_in_range() {
        for theta in [0.0, 0.8] {
            let mut g = KeyGen::new(1000, theta, KeyOrder::Scrambled, 5, 0).unwrap();
            assert!((0..10_000).all(|_| g.next() < 1000));
        }
    }

    /// The workers of one run share the hot keys (one popularity order) but not the draws.
    /// Each worker once had its own scrambled order: with 2 threads the run's keys were a
    /// mixture of two Zipfs, much flatter than theta says.
    #[test]
    fn workers_share_the_hot_keys_and_draw_apart() {
        let draws = |worker| {
            let mut g = KeyGen::new(100_000, 0.99, KeyOrder::Scrambled, 7, worker).unwrap();
            (0..20_000).map(|_| g.next()).collect::<Vec<_>>()
        };
        let hottest = |keys: &[u64]| {
            let mut counts = std::collections::HashMap::new();
            for &k in keys {
                *counts.entry(k).or_insert(0u32) += 1;
            }
            counts.into_iter().max_by_key(|&(k, c)| (c, k)).unwrap().0
        };
        let (a, b) = (draws(0), draws(1));
        assert_ne!(a, b, "each worker draws its own sequence");
        assert_eq!(hottest(&a), hottest(&b), "one hottest record for the run");
        let KeyGen::Zipf(z) = KeyGen::new(100_000, 0.99, KeyOrder::Scrambled, 7, 3).unwrap() else {
            panic!("theta > 0 is Zipf");
        };
        assert_eq!(z.lba_of_rank(1), hottest(&a), "rank 1 is the hottest key");
    }
}
