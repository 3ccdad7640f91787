//! Integer conversions with the reason each cannot lose information (the lint wall forbids
//! silent `as` casts in code that writes integers at fixed offsets).

// Pids, block numbers and LSNs are u64 and index in-memory tables: the engine needs a 64-bit
// `usize` (nowa-units asserts it at compile time).
pub(crate) use nowa_units::num::usize_of;

/// `usize` -> `u64`: lossless on 64-bit targets.
#[inline]
#[must_use]
pub(crate) const fn u64_of(x: usize) -> u64 {
    x as u64
}

/// `usize` -> `u16` for values bounded by a page (offsets, lengths, counts in a 4 KiB page).
///
/// # Panics
/// If `x` does not fit: a broken page-size invariant, never input data.
#[inline]
#[must_use]
pub(crate) fn u16_of(x: usize) -> u16 {
    assert!(
        x <= usize::from(u16::MAX),
        "{x} does not fit a u16 page field"
    );
    #[expect(clippy::cast_possible_truncation, reason = "range asserted above")]
    let v = x as u16;
    v
}

/// `usize` -> `u32` for values bounded by a record or a region of < 4 GiB.
///
/// # Panics
/// If `x` does not fit: a broken size invariant, never input data.
#[inline]
#[must_use]
pub(crate) fn u32_of(x: usize) -> u32 {
    assert!(
        u64_of(x) <= u64::from(u32::MAX),
        "{x} does not fit a u32 field"
    );
    #[expect(clippy::cast_possible_truncation, reason = "range asserted above")]
    let v = x as u32;
    v
}

/// `u64` -> `u32`, saturating (distances recorded as hints: saturation only weakens them).
#[inline]
#[must_use]
pub(crate) fn u32_saturating(x: u64) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// `u64` -> `u32` for counts the caller has bounded (zone indices, zone counts).
///
/// # Panics
/// If `x` does not fit: a broken invariant, never input data.
#[inline]
#[must_use]
pub(crate) fn u32_from_u64(x: u64) -> u32 {
    assert!(x <= u64::from(u32::MAX), "{x} does not fit a u32");
    #[expect(clippy::cast_possible_truncation, reason = "range asserted above")]
    let v = x as u32;
    v
}

/// Ratio of two counters as f64 (statistics only: precision loss above 2^53 is irrelevant).
#[inline]
#[must_use]
pub(crate) fn ratio(num: u64, den: u64) -> f64 {
    num as f64 / den as f64
}

/// u64 as f64 for statistics and estimates (precision loss above 2^53 is irrelevant).
#[inline]
#[must_use]
pub(crate) fn f64_of(x: u64) -> f64 {
    x as f64
}
