//! One WAL record image through the record decoders; the checksum is fixed up first so the
//! payload decoder sees every input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nowa_engine::format::fuzzing;

fuzz_target!(|data: &[u8]| {
    let mut r = data.to_vec();
    fuzzing::fix_wal_crc(&mut r);
    let _ = fuzzing::decode_wal(&r);
});
