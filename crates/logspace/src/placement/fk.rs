//! Future-knowledge oracles: they are told, at every user write, how many user writes remain
//! until the page is overwritten ([`Ctx::next_write_in`]), and place every write (user or GC)
//! by the page's *remaining* lifespan `death - now`.
//!
//! - [`FkOracle`] (SepBIT's `FK.java`): class = remaining / unit length, capped at
//!   `classes - 1` (never-overwritten pages land in the last class).
//! - [`KMeansFk`] (SepFrozen's "FK": K-means over lifespans, after MiDAS): class = the nearest of
//!   K centroids of log2(1 + lifespan). The centroids are fitted on the lifespans seen so far
//!   (a histogram of 1/8-octave bins, never-overwritten pages in a bin above every finite one)
//!   and refitted every `logical_pages` user writes; until the first fit it places like
//!   [`FkOracle`]. SepFrozen fits once on a previous run of the same benchmark; with a
//!   deterministic stream the lifespans seen online are a sample of the same distribution.

use super::{cap_class, idx, Ctx, Geometry, Placement};
use crate::stats::as_f64;

/// Per-page death time (user-write clock) from the hints.
#[derive(Default)]
struct Deaths {
    death: super::times::Times,
}

impl Deaths {
    fn init(&mut self, logical_pages: u64) {
        self.death = super::times::Times::new(idx(logical_pages), super::times::NONE);
    }
    fn set(&mut self, page: u64, ctx: &Ctx) {
        self.death
            .set(idx(page), ctx.now.saturating_add(ctx.next_write_in));
    }
    fn remaining(&self, page: u64, now: u64) -> u64 {
        self.death.get(idx(page)).saturating_sub(now)
    }
}

/// SepBIT's FK oracle (see the module docs).
pub struct FkOracle {
    n: u16,
    unit_pages: u64,
    d: Deaths,
}

impl FkOracle {
    /// FK with `n` classes (2..=16).
    ///
    /// # Panics
    /// If `n` is out of range.
    #[must_use]
    pub fn new(n: u16) -> Self {
        assert!(
            (2..=super::MAX_CLASSES).contains(&n),
            "FK needs 2..=16 classes"
        );
        FkOracle {
            n,
            unit_pages: 1,
            d: Deaths::default(),
        }
    }
}

impl Placement for FkOracle {
    fn wants_requests(&self) -> bool {
        false
    }
    fn prefetch(&self, page: u64) {
        self.d.death.prefetch(idx(page));
    }
    fn memory_bytes(&self) -> u64 {
        self.d.death.memory_bytes()
    }
    fn name(&self) -> String {
        format!("fk:{}", self.n)
    }
    fn classes(&self) -> u16 {
        self.n
    }
    fn needs_future(&self) -> bool {
        true
    }
    fn init(&mut self, geo: &Geometry) {
        self.unit_pages = u64::from(geo.unit_pages.max(1));
        self.d.init(geo.logical_pages);
    }
    fn on_user_write(&mut self, page: u64, ctx: &Ctx) {
        self.d.set(page, ctx);
    }
    fn classify(&mut self, _is_gc: bool, page: u64, ctx: &Ctx) -> u16 {
        let c = cap_class(self.d.remaining(page, ctx.now) / self.unit_pages, self.n);
        debug_assert!(c < self.n);
        c
    }
}

/// Bins per octave of the lifespan histogram.
const PER_OCTAVE: f64 = 8.0;
/// Finite lifespans use bins below this; never-overwritten pages use this bin.
const NEVER_BIN: usize = 8 * 64 + 1;

fn log_bin(lifespan: u64) -> usize {
    if lifespan == u64::MAX {
        return NEVER_BIN;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "8 log2(1 + x) of a u64 is in [0, 512]"
    )]
    let b = (PER_OCTAVE * (as_f64(lifespan) + 1.0).log2()) as usize;
    b.min(NEVER_BIN - 1)
}

/// Position of a bin on the log axis (bin center; the never bin sits one octave above the
/// largest finite one).
fn bin_x(b: usize) -> f64 {
    let b = u32::try_from(b).expect("small bin index");
    if b as usize == NEVER_BIN {
        return 66.0;
    }
    (f64::from(b) + 0.5) / PER_OCTAVE
}

/// One-dimensional weighted K-means (Lloyd) on a histogram; centroids sorted ascending.
fn kmeans(hist: &[u64], k: usize) -> Vec<f64> {
    let total: u64 = hist.iter().sum();
    assert!(total > 0 && k > 0, "K-means needs data and k >= 1");
    // Initial centroids at the k equal-weight quantile midpoints.
    let mut c = Vec::with_capacity(k);
    let mut acc = 0u64;
    let mut next = 0usize;
    for (b, &w) in hist.iter().enumerate() {
        acc += w;
        while next < k
            && as_f64(acc) >= as_f64(total) * (as_f64(next as u64) + 0.5) / as_f64(k as u64)
        {
            c.push(bin_x(b));
            next += 1;
        }
    }
    for _ in 0..100 {
        let mut sum = vec![0.0; k];
        let mut wsum = vec![0.0; k];
        for (b, &w) in hist.iter().enumerate().filter(|(_, &w)| w > 0) {
            let j = nearest(&c, bin_x(b));
            sum[j] += as_f64(w) * bin_x(b);
            wsum[j] += as_f64(w);
        }
        let mut moved = false;
        for j in 0..k {
            if wsum[j] > 0.0 {
                let m = sum[j] / wsum[j];
                moved |= (m - c[j]).abs() > 1e-9;
                c[j] = m;
            }
        }
        if !moved {
            break;
        }
    }
    c.sort_by(f64::total_cmp);
    assert_eq!(c.len(), k, "one centroid per cluster");
    c
}

fn nearest(c: &[f64], x: f64) -> usize {
    let mut best = 0;
    for (j, &m) in c.iter().enumerate() {
        if (m - x).abs() < (c[best] - x).abs() {
            best = j;
        }
    }
    best
}

/// SepFrozen's K-means FK oracle (see the module docs).
pub struct KMeansFk {
    n: u16,
    fk: FkOracle,
    hist: Vec<u64>,
    centroids: Vec<f64>,
    refit_every: u64,
    since_fit: u64,
}

impl KMeansFk {
    /// K-means FK with `n` clusters (2..=16).
    ///
    /// # Panics
    /// If `n` is out of range.
    #[must_use]
    pub fn new(n: u16) -> Self {
        KMeansFk {
            n,
            fk: FkOracle::new(n),
            hist: vec![0; NEVER_BIN + 1],
            centroids: Vec::new(),
            refit_every: 1,
            since_fit: 0,
        }
    }

    /// The fitted centroids in log2(1 + user writes), ascending (empty before the first fit).
    #[must_use]
    pub fn centroids(&self) -> &[f64] {
        &self.centroids
    }
}

impl Placement for KMeansFk {
    fn wants_requests(&self) -> bool {
        false
    }
    fn prefetch(&self, page: u64) {
        self.fk.prefetch(page);
    }
    fn memory_bytes(&self) -> u64 {
        self.fk.memory_bytes() + super::bytes_of(&self.hist) + super::bytes_of(&self.centroids)
    }
    fn name(&self) -> String {
        format!("fk-kmeans:{}", self.n)
    }
    fn classes(&self) -> u16 {
        self.n
    }
    fn needs_future(&self) -> bool {
        true
    }
    fn init(&mut self, geo: &Geometry) {
        self.fk.init(geo);
        self.refit_every = geo.logical_pages.max(1);
    }
    fn on_user_write(&mut self, page: u64, ctx: &Ctx) {
        self.fk.on_user_write(page, ctx);
        self.hist[log_bin(ctx.next_write_in)] += 1;
        self.since_fit += 1;
        if self.since_fit >= self.refit_every {
            self.since_fit = 0;
            self.centroids = kmeans(&self.hist, usize::from(self.n));
        }
    }
    fn classify(&mut self, is_gc: bool, page: u64, ctx: &Ctx) -> u16 {
        if self.centroids.is_empty() {
            return self.fk.classify(is_gc, page, ctx);
        }
        let rem = self.fk.d.remaining(page, ctx.now);
        let x = bin_x(log_bin(rem));
        u16::try_from(nearest(&self.centroids, x)).expect("at most 16 centroids")
    }
    fn report(&self) -> String {
        let c: Vec<String> = self
            .centroids
            .iter()
            .map(|x| format!("{:.0}", x.exp2()))
            .collect();
        format!(
            "fk-kmeans centroids (lifespan, user writes): [{}]",
            c.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmeans_separates_two_modes() {
        let mut h = vec![0u64; NEVER_BIN + 1];
        h[log_bin(10)] = 1000;
        h[log_bin(100_000)] = 1000;
        let c = kmeans(&h, 2);
        assert!((c[0] - bin_x(log_bin(10))).abs() < 1e-9, "{c:?}");
        assert!((c[1] - bin_x(log_bin(100_000))).abs() < 1e-9, "{c:?}");
        assert_eq!(log_bin(u64::MAX), NEVER_BIN);
        assert!(log_bin(u64::MAX - 1) < NEVER_BIN);
    }
}
