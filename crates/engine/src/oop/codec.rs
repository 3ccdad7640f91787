//! Per-page compression (LZ4 / ZSTD) before packing; decompression is in
//! `crate::format::zone` with the slot formats.

use super::{Compression, CODEC_LZ4, CODEC_RAW, CODEC_ZSTD, SLOT_ENTRY, SLOT_HDR};
use crate::page::PAGE_SIZE;

pub use crate::format::zone::decompress as decompress_page;

/// Compress one sealed page: (codec, bytes). Falls back to raw when the result does not fit
/// a slot (or compression is off).
#[must_use]
pub fn compress_page(page: &[u8], c: Compression, level: i32) -> (u8, Vec<u8>) {
    let max = PAGE_SIZE - SLOT_HDR - SLOT_ENTRY;
    let out = match c {
        Compression::Off => None,
        Compression::Lz4 => {
            let mut out = vec![0u8; lz4_flex::block::get_maximum_output_size(page.len())];
            lz4_flex::block::compress_into(page, &mut out)
                .ok()
                .map(|n| {
                    out.truncate(n);
                    (CODEC_LZ4, out)
                })
        }
        Compression::Zstd => zstd::bulk::compress(page, level)
            .ok()
            .map(|v| (CODEC_ZSTD, v)),
    };
    match out {
        Some((codec, v)) if v.len() <= max => (codec, v),
        _ => (CODEC_RAW, page.to_vec()),
    }
}
