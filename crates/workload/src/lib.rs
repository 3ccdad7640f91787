//! Seeded LBA stream generators: uniform, two-zone, zipf (rejection-inversion), read-only area,
//! sequential, ZNS-like.
//!
//! These are the synthetic write workloads of SSD-iq (Haas et al., sections 3.1 and 4.2-4.5),
//! chosen over traces because they scale with device capacity and have one knob for skew.
//! Addresses are logical page numbers (4 KiB pages). Only the first `in_use` pages
//! (`floor(fill * logical_pages)`, see [`in_use_pages`]) are ever touched, which is how SSD-iq
//! runs at a given fill level after the sequential precondition ([`sequential_fill`]).
//!
//! Every generator is deterministic for a given seed: the same seed gives the same stream on
//! every run (we use `Xoshiro256PlusPlus`, which rand documents as portable, not `SmallRng`,
//! which is not). Only the zipf sampler uses floating point (`ln_1p`, `exp`), so across
//! different libm implementations a zipf stream could differ in rare rounding cases.
//!
//! The FTL simulator consumes tens of millions of LBAs per second, so write-only generators
//! expose an inlined inherent `next_write()` and override [`Workload::fill_writes`]; the
//! object-safe [`Workload`] trait is meant to be called in batches.
//!
//! ```
//! use nowa_workload::{sequential_fill, Op, WorkloadParams, WorkloadSpec};
//!
//! let params = WorkloadParams::new(1 << 16, 0.9, 42).unwrap(); // 256 MiB device, 90% full
//! let spec: WorkloadSpec = "two-zone:90/10".parse().unwrap();
//! let mut workload = spec.build(&params).unwrap();
//! let in_use = params.in_use_pages().unwrap();
//! assert_eq!(sequential_fill(in_use).count() as u64, in_use); // precondition
//! let writes = params.writes_for_volume(4.0).unwrap(); // 4x the logical capacity
//! let mut batch = Vec::with_capacity(4096);
//! let mut done = 0;
//! while done < writes {
//!     batch.clear();
//!     workload.fill_batch(&mut batch, 4096.min((writes - done) as usize));
//!     for op in &batch {
//!         match *op {
//!             Op::Write(lba) => assert!(lba < in_use),
//!             Op::Trim { .. } => unreachable!("two-zone only writes"),
//!         }
//!     }
//!     done += batch.len() as u64;
//! }
//! assert_eq!(workload.name(), "two-zone 90/10");
//! ```

mod gens;
mod scramble;
mod spec;
mod zipf;
mod zns;

pub use gens::{ReadOnlyArea, Sequential, ShiftingZipf, TwoZone, Uniform, Zipfian};
pub use scramble::Scrambler;
pub use spec::{WorkloadSpec, VALID_FORMS};
pub use zipf::{zipf_pmf, ZipfSampler};
pub use zns::{ZnsLike, DEFAULT_ZNS_CHUNK_PAGES};

use serde::{Deserialize, Serialize};

/// One host operation, in page units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    /// Write (overwrite) one logical page.
    Write(u64),
    /// Discard `len` pages starting at `start` (BLKDISCARD of a whole zone in the ZNS-like
    /// workload). Trimming never-written pages must be a no-op for the consumer.
    Trim {
        /// First page.
        start: u64,
        /// Pages.
        len: u64,
    },
}

/// A seeded stream of host operations.
///
/// Object safe so that a [`WorkloadSpec`] can be built into a `Box<dyn Workload>`; call it in
/// batches ([`Workload::fill_batch`], [`Workload::fill_writes`]) to amortize dynamic dispatch.
pub trait Workload: Send {
    /// Next operation.
    fn next_op(&mut self) -> Op;

    /// Appends `n` operations to `out` (does not clear it).
    fn fill_batch(&mut self, out: &mut Vec<Op>, n: usize) {
        out.reserve(n);
        for _ in 0..n {
            out.push(self.next_op());
        }
    }

    /// True if this workload only ever emits [`Op::Write`], so [`Workload::fill_writes`] is safe.
    fn is_write_only(&self) -> bool {
        false
    }

    /// Fills `out` with the next `out.len()` written LBAs: the fast path for write-only
    /// workloads (no `Op` tag, 8 bytes per entry).
    ///
    /// # Panics
    /// If the workload emits a trim ([`Workload::is_write_only`] is false); use
    /// [`Workload::fill_batch`] for those.
    fn fill_writes(&mut self, out: &mut [u64]) {
        for slot in out {
            match self.next_op() {
                Op::Write(lba) => *slot = lba,
                Op::Trim { .. } => panic!(
                    "workload '{}' emits trims; use fill_batch instead of fill_writes",
                    self.name()
                ),
            }
        }
    }

    /// Human-readable name for reports, e.g. `"two-zone 90/10"`.
    fn name(&self) -> String;

    /// Number of pages the workload addresses: all LBAs are in `[0, in_use_pages())`.
    fn in_use_pages(&self) -> u64;
}

/// Invalid workload parameters; each message is one line saying what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// `fill` not in (0, 1].
    #[error("fill must be in (0, 1], got {0}")]
    BadFill(f64),
    /// No page to write (zero logical pages or fill too small).
    #[error("workload needs at least one in-use page, got 0 (logical pages or fill too small)")]
    ZeroPages,
    /// Workload needs more pages than available to make sense.
    #[error("{workload} needs at least {need} in-use pages, got {got}")]
    TooFewPages {
        /// The workload.
        workload: &'static str,
        /// Pages it needs.
        need: u64,
        /// Pages in use.
        got: u64,
    },
    /// Zipf exponent not finite and > 0.
    #[error("zipf theta must be a finite number > 0, got {0}")]
    BadTheta(f64),
    /// Two-zone percentages out of range.
    #[error("two-zone X/Y needs 0 < X < 100 (% of writes to the hot zone) and 0 < Y < 100 (% of pages in it), got {x}/{y}")]
    BadTwoZone {
        /// Percent of writes to the hot zone.
        x: f64,
        /// Percent of pages in it.
        y: f64,
    },
    /// Read-only fraction out of range.
    #[error("read-only fraction must be in [0, 1), got {0}")]
    BadReadOnly(f64),
    /// ZNS zone larger than the in-use range.
    #[error("zns zone of {zone_pages} pages is larger than the {in_use} in-use pages")]
    ZoneTooLarge {
        /// Pages per zone.
        zone_pages: u64,
        /// Pages in use.
        in_use: u64,
    },
    /// Other ZNS parameter problem (zero sizes, more fronts than zones).
    #[error("zns: {0}")]
    BadZns(String),
    /// Write volume not finite and >= 0.
    #[error(
        "write volume must be a finite number >= 0 (multiples of the device capacity), got {0}"
    )]
    BadVolume(f64),
    /// Workload string could not be parsed.
    #[error("{0}")]
    Parse(String),
}

/// In-use pages for a device of `logical_pages` at fill level `fill`: `floor(fill * logical)`,
/// i.e. the LBA range `[0, in_use)`. SSD-iq fills a prefix sequentially and then writes only
/// there; the rest stays unwritten (and acts as extra spare space for the FTL).
///
/// # Errors
/// A [`WorkloadError`] naming the parameter that is out of range.
pub fn in_use_pages(logical_pages: u64, fill: f64) -> Result<u64, WorkloadError> {
    if !(fill > 0.0 && fill <= 1.0) {
        return Err(WorkloadError::BadFill(fill));
    }
    let in_use = if fill == 1.0 {
        logical_pages
    } else {
        to_count((fill * logical_pages as f64).floor())
    };
    if in_use == 0 {
        return Err(WorkloadError::ZeroPages);
    }
    Ok(in_use)
}

/// Number of page writes for a write volume given in multiples of the device's logical
/// capacity (SSD-iq reports "4x capacity" etc.): `round(volume * logical_pages)`. Trims are not
/// writes and are not counted.
///
/// # Errors
/// A [`WorkloadError`] naming the parameter that is out of range.
pub fn writes_for_volume(logical_pages: u64, volume: f64) -> Result<u64, WorkloadError> {
    if !(volume.is_finite() && volume >= 0.0) {
        return Err(WorkloadError::BadVolume(volume));
    }
    Ok(to_count((volume * logical_pages as f64).round()))
}

/// Preconditioning stream (ssd-iq 3.1): write `[0, in_use)` once, in order, so the FTL starts
/// from a known full state and converges quickly.
pub fn sequential_fill(in_use: u64) -> impl Iterator<Item = u64> + Clone + Send {
    0..in_use
}

/// Device-level parameters shared by all workloads.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadParams {
    /// Logical capacity of the device in pages.
    pub logical_pages: u64,
    /// Fraction of the logical space in use, in (0, 1].
    pub fill: f64,
    /// RNG seed; the same seed gives the same stream.
    pub seed: u64,
}

impl WorkloadParams {
    /// Validated parameters.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn new(logical_pages: u64, fill: f64, seed: u64) -> Result<Self, WorkloadError> {
        in_use_pages(logical_pages, fill)?;
        Ok(WorkloadParams {
            logical_pages,
            fill,
            seed,
        })
    }

    /// See [`in_use_pages`].
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn in_use_pages(&self) -> Result<u64, WorkloadError> {
        in_use_pages(self.logical_pages, self.fill)
    }

    /// See [`writes_for_volume`].
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn writes_for_volume(&self, volume: f64) -> Result<u64, WorkloadError> {
        writes_for_volume(self.logical_pages, volume)
    }
}

/// A non-negative float count (already rounded as the caller wants) as an integer; saturates
/// at the ends (NaN gives 0).
#[inline]
#[must_use]
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "float-to-int `as` saturates: negative and NaN give 0, huge values u64::MAX"
)]
pub(crate) fn to_count(x: f64) -> u64 {
    x as u64
}

/// Uniform integer in `[0, n)` from a 64-bit draw by multiply-high (Lemire), no division.
/// The bias is at most `n / 2^64` (< 1e-9 for any realistic device), far below sampling noise.
#[inline(always)]
pub(crate) fn below(r: u64, n: u64) -> u64 {
    u64::try_from((u128::from(r) * u128::from(n)) >> 64).expect("(r * n) >> 64 < n")
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "test arithmetic on small page counts and indices"
)]
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_use_and_volume() {
        assert_eq!(in_use_pages(1000, 1.0), Ok(1000));
        assert_eq!(in_use_pages(1000, 0.5), Ok(500));
        assert_eq!(in_use_pages(1000, 0.9), Ok(900));
        assert_eq!(in_use_pages(1001, 0.5), Ok(500));
        for bad in [0.0, -0.1, 1.01, f64::NAN] {
            assert!(matches!(
                in_use_pages(1000, bad),
                Err(WorkloadError::BadFill(_))
            ));
        }
        assert_eq!(in_use_pages(0, 1.0), Err(WorkloadError::ZeroPages));
        assert_eq!(in_use_pages(10, 0.01), Err(WorkloadError::ZeroPages));
        assert_eq!(writes_for_volume(1000, 4.0), Ok(4000));
        assert_eq!(writes_for_volume(1000, 0.0015), Ok(2));
        assert!(writes_for_volume(1000, -1.0).is_err());
        assert!(writes_for_volume(1000, f64::INFINITY).is_err());
        let p = WorkloadParams::new(1 << 20, 0.75, 1).unwrap();
        assert_eq!(p.in_use_pages(), Ok(3 << 18));
        assert_eq!(p.writes_for_volume(2.5), Ok(5 << 19));
        assert!(WorkloadParams::new(100, 0.0, 1).is_err());
    }

    #[test]
    fn sequential_fill_covers_range_in_order() {
        let v: Vec<u64> = sequential_fill(5).collect();
        assert_eq!(v, vec![0, 1, 2, 3, 4]);
        assert_eq!(sequential_fill(0).count(), 0);
    }

    #[test]
    fn below_is_in_range_and_unbiased_enough() {
        assert_eq!(below(u64::MAX, 10), 9);
        assert_eq!(below(0, 10), 0);
        let mut counts = [0u32; 3];
        let mut st = 1u64;
        for _ in 0..30_000 {
            counts[below(nowa_units::splitmix64(&mut st), 3) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn error_messages_are_one_line() {
        let errs = [
            WorkloadError::BadFill(2.0),
            WorkloadError::ZeroPages,
            WorkloadError::BadTheta(-1.0),
            WorkloadError::BadTwoZone { x: 0.0, y: 100.0 },
            WorkloadError::BadReadOnly(1.0),
            WorkloadError::ZoneTooLarge {
                zone_pages: 10,
                in_use: 5,
            },
            WorkloadError::BadVolume(f64::NAN),
        ];
        for e in errs {
            let m = e.to_string();
            assert!(!m.is_empty() && !m.contains('\n'), "{m}");
        }
    }
}
