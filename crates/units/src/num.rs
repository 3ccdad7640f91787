//! The integer-to-float and `u64`-to-`usize` conversions every crate needs, once, with the
//! reason each is lossless (or loses only what statistics do not see).

// nowa indexes in-memory tables by page and block numbers (u64): it needs a 64-bit `usize`.
const _: () = assert!(usize::BITS == 64, "nowa needs a 64-bit target");

/// `u64` -> `usize`: lossless, `usize` is 64 bits (asserted at compile time above).
#[inline]
#[must_use]
#[expect(
    clippy::cast_possible_truncation,
    reason = "usize is 64 bits on every target nowa builds for (compile-time assert)"
)]
pub const fn usize_of(x: u64) -> usize {
    x as usize
}

/// A count as a float, for statistics and estimates: exact below 2^53, and counts of pages,
/// units, operations or bytes of one run stay far below.
#[inline]
#[must_use]
#[expect(clippy::cast_precision_loss, reason = "counts stay far below 2^53")]
pub const fn f64_of(x: u64) -> f64 {
    x as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_keep_their_values() {
        assert_eq!(usize_of(u64::MAX), usize::MAX);
        assert_eq!(f64_of(1 << 53), 9_007_199_254_740_992.0);
        assert_eq!(f64_of(0), 0.0);
    }
}
