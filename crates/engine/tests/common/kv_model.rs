//! The model-based tests' shared pieces (record_cache.rs, blind_updates.rs): the delta-mode
//! out-of-place configuration, two-byte keys and values derived from (key, version).
#![allow(dead_code)]

use nowa_engine::{Compression, OopConfig};
use std::collections::BTreeMap;

/// The expected contents: key -> value.
pub type Model = BTreeMap<u16, Vec<u8>>;

/// Out of place with deltas, small zones and LZ4: splits, delta chains and consolidation
/// happen within a few thousand puts.
pub fn delta_ocfg() -> OopConfig {
    OopConfig {
        deltas: true,
        delta_chain: 2,
        delta_merge: 256,
        zone_bytes: Some(64 << 10),
        open_zones: 2,
        compression: Compression::Lz4,
        ..OopConfig::default()
    }
}

/// Key `k` as bytes that sort as `k` does.
pub fn key(k: u16) -> [u8; 2] {
    k.to_be_bytes()
}

/// A value of `len` bytes that differs for each (key, version) and does not compress.
pub fn val(k: u16, v: u64, len: usize) -> Vec<u8> {
    let mut x = u64::from(k).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ v | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}
