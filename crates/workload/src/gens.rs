//! Write-only generators: uniform, two-zone, zipf, read-only area, sequential.

use crate::zipf::ZipfSampler;
use crate::{below, Op, Scrambler, Workload, WorkloadError};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, SeedableRng};

fn rng_for(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// Implements [`Workload`] for a type with an inherent `next_write()`.
macro_rules! write_only_workload {
    ($t:ty) => {
        impl Workload for $t {
            #[inline]
            fn next_op(&mut self) -> Op {
                Op::Write(self.next_write())
            }

            fn fill_batch(&mut self, out: &mut Vec<Op>, n: usize) {
                out.reserve(n);
                for _ in 0..n {
                    out.push(Op::Write(self.next_write()));
                }
            }

            fn is_write_only(&self) -> bool {
                true
            }

            fn fill_writes(&mut self, out: &mut [u64]) {
                for slot in out {
                    *slot = self.next_write();
                }
            }

            fn name(&self) -> String {
                self.label()
            }

            fn in_use_pages(&self) -> u64 {
                self.in_use
            }
        }
    };
}

/// Uniform random writes over `[0, in_use)`: the baseline with a known analytic WAF.
#[derive(Clone, Debug)]
pub struct Uniform {
    rng: Xoshiro256PlusPlus,
    in_use: u64,
}

impl Uniform {
    /// Uniform over `in_use >= 1` pages.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn new(in_use: u64, seed: u64) -> Result<Self, WorkloadError> {
        if in_use == 0 {
            return Err(WorkloadError::ZeroPages);
        }
        Ok(Uniform {
            rng: rng_for(seed),
            in_use,
        })
    }

    /// Next LBA.
    #[inline]
    pub fn next_write(&mut self) -> u64 {
        below(self.rng.next_u64(), self.in_use)
    }

    fn label(&self) -> String {
        "uniform".to_string()
    }
}
write_only_workload!(Uniform);

/// SSD-iq's two-zone workload (4.2): `X`% of writes go to a hot zone holding `Y`% of the pages,
/// uniform within each zone. Zone membership is scattered over the LBA range by a
/// [`Scrambler`]: hot pages are the images of `[0, hot_pages)`.
#[derive(Clone, Debug)]
pub struct TwoZone {
    rng: Xoshiro256PlusPlus,
    in_use: u64,
    hot_pages: u64,
    /// A draw below this goes to the hot zone (`X/100 * 2^64`).
    hot_threshold: u64,
    scrambler: Scrambler,
    write_pct: f64,
    space_pct: f64,
}

impl TwoZone {
    /// `write_pct` (X) and `space_pct` (Y) are percentages in (0, 100). The hot zone holds
    /// `round(Y% * in_use)` pages, clamped so both zones have at least one page.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn new(
        in_use: u64,
        write_pct: f64,
        space_pct: f64,
        seed: u64,
    ) -> Result<Self, WorkloadError> {
        let ok = |v: f64| v > 0.0 && v < 100.0;
        if !(ok(write_pct) && ok(space_pct)) {
            return Err(WorkloadError::BadTwoZone {
                x: write_pct,
                y: space_pct,
            });
        }
        if in_use < 2 {
            return Err(WorkloadError::TooFewPages {
                workload: "two-zone",
                need: 2,
                got: in_use,
            });
        }
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a non-negative page count or threshold below 2^64, rounded on purpose"
        )]
        let hot_pages = ((space_pct / 100.0 * in_use as f64).round() as u64).clamp(1, in_use - 1);
        // 2^64 * p, saturating at u64::MAX for p -> 1 (write_pct < 100 keeps it below).
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a non-negative page count or threshold below 2^64, rounded on purpose"
        )]
        let hot_threshold = (write_pct / 100.0 * 18_446_744_073_709_551_616.0) as u64;
        Ok(TwoZone {
            rng: rng_for(seed),
            in_use,
            hot_pages,
            hot_threshold,
            scrambler: Scrambler::new(in_use, seed),
            write_pct,
            space_pct,
        })
    }

    /// Next LBA.
    #[inline]
    pub fn next_write(&mut self) -> u64 {
        let coin = self.rng.next_u64();
        let r = self.rng.next_u64();
        let i = if coin < self.hot_threshold {
            below(r, self.hot_pages)
        } else {
            self.hot_pages + below(r, self.in_use - self.hot_pages)
        };
        self.scrambler.permute(i)
    }

    /// Number of pages in the hot zone.
    #[must_use]
    pub fn hot_pages(&self) -> u64 {
        self.hot_pages
    }

    /// Whether `lba` (< in_use) is in the hot zone (an oracle for placement experiments).
    #[must_use]
    pub fn is_hot(&self, lba: u64) -> bool {
        self.scrambler.invert(lba) < self.hot_pages
    }

    fn label(&self) -> String {
        format!("two-zone {}/{}", self.write_pct, self.space_pct)
    }
}
write_only_workload!(TwoZone);

/// Zipf-distributed writes (ssd-iq 4.3): page rank `k` in `[1, in_use]` has probability
/// `k^-theta / H`, sampled by rejection-inversion ([`ZipfSampler`]); rank `k` is written at
/// LBA `scrambler.permute(k - 1)` so the hot pages are scattered, not clustered at LBA 0.
#[derive(Clone, Debug)]
pub struct Zipfian {
    rng: Xoshiro256PlusPlus,
    in_use: u64,
    sampler: ZipfSampler,
    /// None: rank `k` at LBA `k - 1` (the hot pages clustered at LBA 0, [`Zipfian::ranked`]).
    scrambler: Option<Scrambler>,
}

impl Zipfian {
    /// Zipf with exponent `theta` (finite, > 0) over `in_use >= 1` pages.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn new(in_use: u64, theta: f64, seed: u64) -> Result<Self, WorkloadError> {
        Self::with_layout(in_use, theta, seed, seed)
    }

    /// As [`Zipfian::new`], with the rank-to-LBA layout seeded by `layout_seed` and the draws
    /// by `draw_seed`: several generators sharing `layout_seed` (one per worker thread) draw
    /// independently from one popularity order, so they agree on which LBAs are hot.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn with_layout(
        in_use: u64,
        theta: f64,
        layout_seed: u64,
        draw_seed: u64,
    ) -> Result<Self, WorkloadError> {
        Self::build(in_use, theta, draw_seed, Some(layout_seed))
    }

    /// As [`Zipfian::new`] without the scrambling: rank `k` is LBA `k - 1`, so popularity
    /// falls with the LBA and neighbouring LBAs have similar rates (YCSB's plain
    /// `ZipfianGenerator`, as opposed to its `ScrambledZipfianGenerator`).
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn ranked(in_use: u64, theta: f64, seed: u64) -> Result<Self, WorkloadError> {
        Self::build(in_use, theta, seed, None)
    }

    /// The parameters are checked (by the sampler) before a layout is built over `in_use`.
    fn build(
        in_use: u64,
        theta: f64,
        draw_seed: u64,
        layout_seed: Option<u64>,
    ) -> Result<Self, WorkloadError> {
        let sampler = ZipfSampler::new(in_use, theta)?;
        Ok(Zipfian {
            rng: rng_for(draw_seed),
            in_use,
            sampler,
            scrambler: layout_seed.map(|s| Scrambler::new(in_use, s)),
        })
    }

    /// Next LBA.
    #[inline]
    pub fn next_write(&mut self) -> u64 {
        let k = self.sampler.sample(&mut self.rng);
        self.lba_of_rank(k)
    }

    /// Popularity rank (1 = hottest) of `lba` (< in_use).
    #[must_use]
    pub fn rank_of(&self, lba: u64) -> u64 {
        debug_assert!(lba < self.in_use);
        self.scrambler.as_ref().map_or(lba, |s| s.invert(lba)) + 1
    }

    /// LBA of popularity rank `k` in `[1, in_use]`.
    #[must_use]
    pub fn lba_of_rank(&self, k: u64) -> u64 {
        debug_assert!((1..=self.in_use).contains(&k));
        self.scrambler.as_ref().map_or(k - 1, |s| s.permute(k - 1))
    }

    fn label(&self) -> String {
        format!("zipf {}", self.sampler.exponent())
    }
}
write_only_workload!(Zipfian);

/// Zipf writes whose hot set moves (the SepBIT paper's "Zipf with shifting hotness"): every
/// `period` x in-use writes, the rank-to-LBA mapping rotates by a tenth of the pages, so the
/// pages that were hottest turn cold at once and a new set turns hot.
#[derive(Clone, Debug)]
pub struct ShiftingZipf {
    z: Zipfian,
    in_use: u64,
    period: u64,
    left: u64,
    shift: u64,
    period_drives: f64,
}

impl ShiftingZipf {
    /// Zipf with exponent `theta` over `in_use` pages, shifting every `period` x `in_use` writes.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn new(in_use: u64, theta: f64, period: f64, seed: u64) -> Result<Self, WorkloadError> {
        if !(period.is_finite() && period > 0.0) {
            return Err(WorkloadError::BadVolume(period));
        }
        let p = crate::to_count((period * in_use as f64).round()).max(1);
        Ok(ShiftingZipf {
            z: Zipfian::new(in_use, theta, seed)?,
            in_use,
            period: p,
            left: p,
            shift: 0,
            period_drives: period,
        })
    }

    /// Next LBA.
    #[inline]
    pub fn next_write(&mut self) -> u64 {
        if self.left == 0 {
            self.left = self.period;
            self.shift = (self.shift + (self.z.in_use / 10).max(1)) % self.z.in_use;
        }
        self.left -= 1;
        let k = self.z.sampler.sample(&mut self.z.rng);
        let i = (k - 1 + self.shift) % self.z.in_use;
        debug_assert!(i < self.z.in_use);
        self.z.lba_of_rank(i + 1)
    }

    fn label(&self) -> String {
        format!(
            "zipf-shift {} every {}x",
            self.z.sampler.exponent(),
            self.period_drives
        )
    }
}

write_only_workload!(ShiftingZipf);

/// Read-only area workload (ssd-iq 4.4): a scattered fraction `F` of the in-use pages is
/// written only by the precondition and never again; the rest receive uniform writes.
#[derive(Clone, Debug)]
pub struct ReadOnlyArea {
    rng: Xoshiro256PlusPlus,
    in_use: u64,
    read_only_pages: u64,
    scrambler: Scrambler,
    fraction: f64,
}

impl ReadOnlyArea {
    /// `fraction` in [0, 1) of `in_use` pages (`floor(F * in_use)` of them) is read-only;
    /// at least one page must remain writable.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn new(in_use: u64, fraction: f64, seed: u64) -> Result<Self, WorkloadError> {
        if !(0.0..1.0).contains(&fraction) {
            return Err(WorkloadError::BadReadOnly(fraction));
        }
        if in_use == 0 {
            return Err(WorkloadError::ZeroPages);
        }
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a non-negative page count or threshold below 2^64, rounded on purpose"
        )]
        let read_only_pages = (fraction * in_use as f64).floor() as u64;
        if read_only_pages >= in_use {
            return Err(WorkloadError::TooFewPages {
                workload: "read-only",
                need: read_only_pages + 1,
                got: in_use,
            });
        }
        Ok(ReadOnlyArea {
            rng: rng_for(seed),
            in_use,
            read_only_pages,
            scrambler: Scrambler::new(in_use, seed),
            fraction,
        })
    }

    /// Next LBA (never a read-only page).
    #[inline]
    pub fn next_write(&mut self) -> u64 {
        let i =
            self.read_only_pages + below(self.rng.next_u64(), self.in_use - self.read_only_pages);
        self.scrambler.permute(i)
    }

    /// Number of read-only pages.
    #[must_use]
    pub fn read_only_pages(&self) -> u64 {
        self.read_only_pages
    }

    /// Whether `lba` (< in_use) is in the read-only area.
    #[must_use]
    pub fn is_read_only(&self, lba: u64) -> bool {
        self.scrambler.invert(lba) < self.read_only_pages
    }

    fn label(&self) -> String {
        format!("read-only {}", self.fraction)
    }
}
write_only_workload!(ReadOnlyArea);

/// Sequential overwrite of `[0, in_use)`, wrapping around: the best case (WAF 1 for any sane
/// FTL). Ignores the seed.
#[derive(Clone, Debug)]
pub struct Sequential {
    in_use: u64,
    next: u64,
}

impl Sequential {
    /// Starts at LBA 0.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn new(in_use: u64) -> Result<Self, WorkloadError> {
        if in_use == 0 {
            return Err(WorkloadError::ZeroPages);
        }
        Ok(Sequential { in_use, next: 0 })
    }

    /// Next LBA.
    #[inline]
    pub fn next_write(&mut self) -> u64 {
        let lba = self.next;
        self.next += 1;
        if self.next == self.in_use {
            self.next = 0;
        }
        lba
    }

    fn label(&self) -> String {
        "sequential".to_string()
    }
}
write_only_workload!(Sequential);

#[expect(
    clippy::cast_lossless,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "test arithmetic on small page counts and indices"
)]
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_covers_range_evenly() {
        let n = 1000;
        let mut w = Uniform::new(n, 1).unwrap();
        let mut counts = vec![0u32; n as usize];
        for _ in 0..1_000_000 {
            counts[w.next_write() as usize] += 1;
        }
        // Each expects 1000, sd ~31.6: 6 sigma bounds.
        assert!(counts.iter().all(|&c| (810..1190).contains(&c)));
        assert!(Uniform::new(0, 1).is_err());
    }

    #[test]
    fn two_zone_hit_fractions() {
        let n = 100_000;
        for &(x, y) in &[(90.0, 10.0), (70.0, 30.0), (50.0, 50.0), (95.0, 5.0)] {
            let mut w = TwoZone::new(n, x, y, 11).unwrap();
            let hot_total = (0..n).filter(|&l| w.is_hot(l)).count() as u64;
            assert_eq!(hot_total, w.hot_pages());
            assert_eq!(w.hot_pages(), (y / 100.0 * n as f64).round() as u64);
            let m = 1_000_000;
            let mut hot_hits = 0u64;
            let mut hot_seen = vec![0u32; n as usize];
            for _ in 0..m {
                let l = w.next_write();
                assert!(l < n);
                if w.is_hot(l) {
                    hot_hits += 1;
                    hot_seen[l as usize] += 1;
                }
            }
            let frac = hot_hits as f64 / m as f64;
            // sd = sqrt(p(1-p)/m) <= 0.0005: 0.003 is 6 sigma.
            assert!(
                (frac - x / 100.0).abs() < 0.003,
                "{x}/{y}: hot fraction {frac}"
            );
            // Uniform within the hot zone: per-page mean matches, max not crazy.
            let per_page = hot_hits as f64 / w.hot_pages() as f64;
            let max = *hot_seen.iter().max().unwrap() as f64;
            assert!(
                max < per_page + 7.0 * per_page.sqrt() + 5.0,
                "{x}/{y}: max {max}"
            );
            // Hot pages scattered: each tenth of the LBA range holds ~Y% hot pages.
            for d in 0..10 {
                let lo = n * d / 10;
                let hi = n * (d + 1) / 10;
                let h = (lo..hi).filter(|&l| w.is_hot(l)).count() as f64 / (hi - lo) as f64;
                assert!((h - y / 100.0).abs() < 0.02, "{x}/{y} decile {d}: {h}");
            }
        }
    }

    #[test]
    fn two_zone_rejects_bad_params() {
        for (x, y) in [
            (0.0, 10.0),
            (100.0, 10.0),
            (90.0, 0.0),
            (90.0, 100.0),
            (f64::NAN, 1.0),
        ] {
            assert!(matches!(
                TwoZone::new(100, x, y, 1),
                Err(WorkloadError::BadTwoZone { .. })
            ));
        }
        assert!(matches!(
            TwoZone::new(1, 90.0, 10.0, 1),
            Err(WorkloadError::TooFewPages { .. })
        ));
        // Tiny device: zones are clamped to be non-empty.
        let w = TwoZone::new(2, 99.0, 1.0, 1).unwrap();
        assert_eq!(w.hot_pages(), 1);
    }

    #[test]
    fn read_only_area_never_written() {
        let n = 20_000;
        for &f in &[0.0, 0.4, 0.8, 0.99] {
            let mut w = ReadOnlyArea::new(n, f, 5).unwrap();
            let ro = (0..n).filter(|&l| w.is_read_only(l)).count() as u64;
            assert_eq!(ro, (f * n as f64).floor() as u64);
            assert_eq!(ro, w.read_only_pages());
            let mut written = vec![false; n as usize];
            for _ in 0..400_000 {
                let l = w.next_write();
                assert!(!w.is_read_only(l), "f={f}: wrote read-only page {l}");
                written[l as usize] = true;
            }
            // Coupon collector: every writable page got written (>= 20 expected each).
            let writable = (0..n).filter(|&l| !w.is_read_only(l)).count();
            assert_eq!(written.iter().filter(|&&b| b).count(), writable, "f={f}");
        }
        assert!(ReadOnlyArea::new(100, 1.0, 1).is_err());
        assert!(ReadOnlyArea::new(100, -0.1, 1).is_err());
        assert!(matches!(
            ReadOnlyArea::new(10, 0.95, 1),
            Ok(w) if w.read_only_pages() == 9
        ));
    }

    #[test]
    fn zipf_workload_is_scattered_and_ranked() {
        let n = 1 << 16;
        let mut w = Zipfian::new(n, 1.0, 9).unwrap();
        for k in [1, 2, 100, n] {
            assert_eq!(w.rank_of(w.lba_of_rank(k)), k);
        }
        let mut counts = vec![0u32; n as usize];
        for _ in 0..500_000 {
            counts[w.next_write() as usize] += 1;
        }
        // The hottest page is rank 1, wherever it landed.
        let hottest = (0..n).max_by_key(|&l| counts[l as usize]).unwrap();
        assert_eq!(w.rank_of(hottest), 1);
        // The 100 hottest ranks are not clustered in one LBA region.
        let lbas: Vec<u64> = (1..=100).map(|k| w.lba_of_rank(k)).collect();
        let spread = lbas.iter().max().unwrap() - lbas.iter().min().unwrap();
        assert!(spread > n / 2, "spread {spread}");
    }

    #[test]
    fn ranked_zipf_puts_rank_k_at_lba_k_minus_1() {
        let n = 1 << 16;
        let mut w = Zipfian::ranked(n, 1.0, 9).unwrap();
        for k in [1, 2, 100, n] {
            assert_eq!(w.lba_of_rank(k), k - 1);
            assert_eq!(w.rank_of(k - 1), k);
        }
        let mut counts = vec![0u32; n as usize];
        for _ in 0..500_000 {
            counts[w.next_write() as usize] += 1;
        }
        // Popularity falls with the LBA: the first 1% of LBAs take most writes (theta 1:
        // H(655) / H(65536) = 0.61), the last half few (0.06).
        let head: u32 = counts[..(n / 100) as usize].iter().sum();
        let tail: u32 = counts[(n / 2) as usize..].iter().sum();
        assert!(head > 290_000 && tail < 40_000, "head {head}, tail {tail}");
        assert_eq!((0..n).max_by_key(|&l| counts[l as usize]), Some(0));
        assert!(Zipfian::ranked(0, 1.0, 1).is_err());
    }

    #[test]
    fn sequential_wraps() {
        let mut w = Sequential::new(3).unwrap();
        let v: Vec<u64> = (0..7).map(|_| w.next_write()).collect();
        assert_eq!(v, vec![0, 1, 2, 0, 1, 2, 0]);
        assert!(Sequential::new(0).is_err());
    }

    #[test]
    fn trait_paths_agree_with_next_write() {
        let mut a = TwoZone::new(1000, 80.0, 20.0, 3).unwrap();
        let mut b = a.clone();
        let mut c = a.clone();
        let mut ops = Vec::new();
        b.fill_batch(&mut ops, 100);
        let mut lbas = vec![0u64; 100];
        c.fill_writes(&mut lbas);
        for i in 0..100 {
            let l = a.next_write();
            assert_eq!(ops[i], Op::Write(l));
            assert_eq!(lbas[i], l);
        }
        assert!(a.is_write_only());
        assert_eq!(a.name(), "two-zone 80/20");
        assert_eq!(a.in_use_pages(), 1000);
    }
}
