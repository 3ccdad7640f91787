//! Every on-disk decoder against arbitrary bytes and against mutated valid encodings (with
//! the checksum fixed up afterwards, so the mutation reaches the checks behind it): it never
//! panics, and either decodes or returns its typed error / None. Bounded proptests for CI;
//! the same bodies run unbounded under cargo-fuzz (`fuzz/`, see docs/testing.md).
//!
//! The bodies are `nowa_engine::format::fuzzing` (page / node, WAL record, zone header,
//! packed and raw slots with their payloads, superblock + `identify`, the out-of-place
//! metadata record and snapshot entries).

use nowa_device::{BlockDevice, MemDevice};
use nowa_engine::format::fuzzing::{
    decode_block, decode_bytes, decode_wal, fix_wal_crc, WAL_LSN, WAL_SALT,
};
use nowa_engine::format::{block_crc, wal, BLOCK};
use nowa_engine::{
    out_of_place_store, page, Compression, Config, Durability, Engine, OopConfig, RecordDamage,
};
use proptest::prelude::*;
use std::sync::{Arc, OnceLock};

/// Blocks of real databases: an in-place one and an out-of-place one (LZ4, packing).
fn images() -> &'static [Vec<u8>] {
    static IMAGES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    IMAGES.get_or_init(|| {
        let cfg = Config {
            pool_bytes: 64 * 4096,
            wal_limit_bytes: Some(256 << 10),
            durability: Durability::Async,
            ..Config::default()
        };
        let mut out = Vec::new();
        for oop in [false, true] {
            let dev = Arc::new(MemDevice::new(16 << 20));
            let e = if oop {
                let b = out_of_place_store(OopConfig {
                    zone_bytes: Some(64 << 10),
                    compression: Compression::Lz4,
                    background_gc: false,
                    ..OopConfig::default()
                });
                Engine::create_with_store(dev.clone(), cfg.clone(), &b).expect("create")
            } else {
                Engine::create(dev.clone(), cfg.clone()).expect("create")
            };
            for k in 0..3000u32 {
                let v = format!(
                    "value {k} {}",
                    "x".repeat(usize::try_from(k % 90).expect("small"))
                );
                e.put(&k.to_be_bytes(), v.as_bytes()).expect("put");
            }
            e.close().expect("close");
            let mut b = vec![0u8; BLOCK];
            for i in 0..dev.geometry().capacity / 4096 {
                dev.read_at(i * 4096, &mut b).expect("read");
                if b.iter().any(|&x| x != 0) {
                    out.push(b.clone());
                }
            }
        }
        out
    })
}

/// Valid WAL units: a group of each record kind, a group of updates whose keys share
/// prefixes, and pads (padded group flushes are on).
fn records() -> Vec<Vec<u8>> {
    let mut img = vec![0u8; BLOCK];
    page::init(&mut img, page::KIND_LEAF, 3);
    page::seal(&mut img);
    let pages = [(3u64, &img[..])];
    let recs = [
        wal::RecordRef::Put {
            pid: 3,
            prev_lsn: 4096,
            key: b"key",
            value: b"value",
        },
        wal::RecordRef::Delete {
            pid: 3,
            prev_lsn: 0,
            key: b"key",
        },
        // Varints of every width: a large pid, a previous LSN far back, a long key.
        wal::RecordRef::Put {
            pid: 1 << 40,
            prev_lsn: 1,
            key: &[b'k'; 200],
            value: &[],
        },
        wal::RecordRef::Delete {
            pid: 300,
            prev_lsn: (1 << 20) - 1,
            key: b"",
        },
        wal::RecordRef::Smo {
            root: 3,
            next_pid: 4,
            pages: &pages,
        },
    ];
    let mut out: Vec<Vec<u8>> = recs
        .iter()
        .map(|r| wal::encode_group(std::slice::from_ref(r), WAL_LSN, WAL_SALT, 4096))
        .collect();
    out.push(wal::encode_group(&recs[..4], WAL_LSN, WAL_SALT, 4096));
    // A group flush's pad to its block's end: the shortest, and one of most of a block.
    for len in [wal::HEADER, 4000] {
        let mut pad = vec![0u8; len];
        wal::encode_pad(&mut pad, WAL_LSN, WAL_SALT, 4096);
        out.push(pad);
    }
    out
}

/// A Put or Delete of (key, value or None) in leaf `pid`.
fn update<'a>(pid: u64, key: &'a [u8], value: Option<&'a [u8]>) -> wal::RecordRef<'a> {
    match value {
        Some(value) => wal::RecordRef::Put {
            pid,
            prev_lsn: WAL_LSN - 1 - pid % 1000,
            key,
            value,
        },
        None => wal::RecordRef::Delete {
            pid,
            prev_lsn: 0,
            key,
        },
    }
}

/// Flip `n` seeded bytes of `b`; `fix`: recompute the block checksum (bytes 0..4) so the
/// decoders' later checks see the mutation.
fn mutate(b: &mut [u8], seed: u64, n: usize, fix: bool) {
    let mut x = seed | 1;
    for _ in 0..n {
        x = nowa_units::mix64(x);
        let i = usize::try_from(x % b.len() as u64).expect("an index");
        b[i] ^= u8::try_from((x >> 32) & 0xff).expect("a byte") | 1;
    }
    if fix {
        let c = block_crc(b);
        b[..4].copy_from_slice(&c.to_le_bytes());
    }
}

#[test]
fn valid_images_decode() {
    let imgs = images();
    assert!(imgs.len() > 100, "{} blocks", imgs.len());
    let accepted: usize = imgs.iter().map(|b| decode_block(b)).sum();
    // Superblocks, zone headers, packed slots, pages (WAL blocks and raw slots are not
    // decoded as blocks here).
    assert!(
        accepted > imgs.len() / 5,
        "{accepted} of {} blocks",
        imgs.len()
    );
    for r in records() {
        assert!(decode_wal(&r), "a valid record decodes");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_blocks_never_panic(b in proptest::collection::vec(any::<u8>(), BLOCK)) {
        let _ = decode_block(&b);
    }

    #[test]
    fn arbitrary_bytes_never_panic(r in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = decode_bytes(&r);
    }

    #[test]
    fn mutated_images_never_panic(i in any::<usize>(), seed in any::<u64>(), n in 1usize..16, fix in any::<bool>()) {
        let imgs = images();
        let mut b = imgs[i % imgs.len()].clone();
        mutate(&mut b, seed, n, fix);
        let _ = decode_block(&b);
    }

    #[test]
    fn mutated_records_never_panic(i in any::<usize>(), seed in any::<u64>(), n in 1usize..8, cut in any::<bool>()) {
        let mut all = records();
        let mut r = all.swap_remove(i % all.len());
        mutate(&mut r, seed, n, false);
        if cut {
            let at = nowa_units::mix64(seed) % r.len() as u64;
            r.truncate(usize::try_from(at).expect("an index"));
        }
        // Fix the checksum so the payload decoder sees the mutation.
        fix_wal_crc(&mut r);
        let _ = decode_wal(&r);
    }

    /// Any group of updates (keys sharing prefixes or not) decodes to the records it was
    /// encoded from, each at its position, and encodes back to the same bytes.
    #[test]
    fn groups_of_updates_round_trip(ups in proptest::collection::vec(
        (0u64..100_000, proptest::collection::vec(0u8..3, 0..12), proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40))),
        1..20,
    )) {
        let recs: Vec<wal::RecordRef<'_>> =
            ups.iter().map(|(pid, k, v)| update(*pid, k, v.as_deref())).collect();
        let g = wal::encode_group(&recs, WAL_LSN, WAL_SALT, 4096);
        prop_assert!(decode_wal(&g));
        let (_, got) = wal::decode_unit(&g, WAL_LSN, WAL_SALT).expect("a valid group");
        prop_assert_eq!(got.len(), recs.len());
        for ((lsn, rec), (pid, k, v)) in got.iter().zip(&ups) {
            prop_assert!(*lsn > WAL_LSN && *lsn < WAL_LSN + g.len() as u64);
            let want = match v {
                Some(v) => wal::Record::Put {
                    pid: *pid,
                    prev_lsn: Some(WAL_LSN - 1 - pid % 1000),
                    key: k.clone(),
                    value: v.clone(),
                },
                None => wal::Record::Delete { pid: *pid, prev_lsn: None, key: k.clone() },
            };
            prop_assert_eq!(rec, &want);
        }
    }

    /// A group cut short at any byte (a torn write that kept its header's length) is a
    /// typed error: Length when cut, Checksum once the length is made to fit; never a
    /// panic, never records.
    #[test]
    fn a_group_cut_at_any_byte_is_a_typed_error(n in 1usize..12, seed in any::<u64>()) {
        let keys: Vec<[u8; 8]> = (0..n as u64).map(|i| (seed ^ i).to_be_bytes()).collect();
        let recs: Vec<wal::RecordRef<'_>> = (0u64..)
            .zip(&keys)
            .map(|(i, k)| update(i, k, Some(&[7; 30])))
            .collect();
        let g = wal::encode_group(&recs, WAL_LSN, WAL_SALT, 4096);
        for cut in 0..g.len() {
            let r = wal::decode_unit(&g[..cut], WAL_LSN, WAL_SALT);
            prop_assert!(matches!(r, Err(RecordDamage::Length { .. })), "cut at {}: {:?}", cut, r);
            if cut >= wal::HEADER {
                let mut short = g[..cut].to_vec();
                wal::LEN.put_u32(&mut short, u32::try_from(cut).expect("small"));
                let r = wal::decode_unit(&short, WAL_LSN, WAL_SALT);
                prop_assert_eq!(r.map(|_| ()), Err(RecordDamage::Checksum), "cut at {}", cut);
            }
        }
    }
}
