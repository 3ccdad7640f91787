//! Variable-length input: WAL payloads of every tag, the metadata record, compressed pages.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nowa_engine::format::fuzzing;

fuzz_target!(|data: &[u8]| {
    let _ = fuzzing::decode_bytes(data);
});
