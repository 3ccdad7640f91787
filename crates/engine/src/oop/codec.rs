//! Per-page compression (LZ4 / ZSTD) before packing.

use super::{Compression, CODEC_LZ4, CODEC_RAW, CODEC_ZSTD, SLOT_ENTRY, SLOT_HDR};
use crate::page::PAGE_SIZE;

/// Compress one sealed page. Falls back to raw when the result does not fit a slot.
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

/// Decompress `src` (codec) into the 4 KiB `dst`.
pub fn decompress_page(codec: u8, src: &[u8], dst: &mut [u8]) -> std::result::Result<(), String> {
    let n = match codec {
        CODEC_LZ4 => lz4_flex::block::decompress_into(src, dst).map_err(|e| e.to_string())?,
        CODEC_ZSTD => zstd::bulk::decompress_to_buffer(src, dst).map_err(|e| e.to_string())?,
        c => return Err(format!("unknown codec {c}")),
    };
    if n != PAGE_SIZE {
        return Err(format!("decompressed to {n} bytes, expected {PAGE_SIZE}"));
    }
    Ok(())
}
