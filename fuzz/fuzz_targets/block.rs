//! One 4096-byte block through every block decoder: superblock, zone header, packed and raw
//! slots (and their payloads), page / node, metadata record, snapshot entries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nowa_engine::format::{fuzzing, BLOCK};

fuzz_target!(|data: &[u8]| {
    let mut b = vec![0u8; BLOCK];
    let n = data.len().min(BLOCK);
    b[..n].copy_from_slice(&data[..n]);
    let _ = fuzzing::decode_block(&b);
});
