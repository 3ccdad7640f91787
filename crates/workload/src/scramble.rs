//! Seeded bijective scrambling of `[0, n)` in O(1) memory.
//!
//! SSD-iq (section 4.2) scatters the hot zone of its two-zone workload, the zipf ranks and the
//! read-only area over the whole LBA range so that hot pages do not sit in one contiguous LBA
//! run. A lookup table would cost 8 bytes per page (GBs for a 2 TB device), so we use a keyed
//! permutation of the next power of two `2^k >= n`, made of invertible steps (xor with a key,
//! multiply by an odd constant mod `2^k`, xorshift right), and *cycle-walk*: re-apply it until
//! the value falls back into `[0, n)`. Cycle walking restricts a permutation of a superset to a
//! permutation of the subset, so the result is a true bijection; since `2^k < 2n` the expected
//! number of walks is below 2. Keys come from the seed through [`nowa_units::splitmix64`].

/// Odd multipliers (from SplitMix64 / Murmur3 finalizers); odd means invertible mod `2^k`.
const MULS: [u64; ROUNDS] = [
    0x9E37_79B9_7F4A_7C15,
    0xBF58_476D_1CE4_E5B9,
    0x94D0_49BB_1331_11EB,
];
const ROUNDS: usize = 3;

/// Multiplicative inverse of an odd `a` modulo `2^64` (Newton iteration, 6 steps suffice).
const fn mul_inverse(a: u64) -> u64 {
    let mut inv = a; // correct to 3 bits for odd a
    let mut i = 0;
    while i < 6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(inv)));
        i += 1;
    }
    inv
}

const MULS_INV: [u64; ROUNDS] = [
    mul_inverse(MULS[0]),
    mul_inverse(MULS[1]),
    mul_inverse(MULS[2]),
];

/// A seeded bijection of `[0, n)`; [`Scrambler::permute`] and [`Scrambler::invert`] are
/// inverse to each other. Costs a few ns per call and 48 bytes of state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scrambler {
    n: u64,
    mask: u64,
    shift: u32,
    bits: u32,
    keys: [u64; ROUNDS],
}

impl Scrambler {
    /// Permutation of `[0, n)` determined by `seed`. `n = 0` gives an empty domain (every call
    /// to `permute` would be out of range); `n = 1` is the identity.
    #[must_use]
    pub fn new(n: u64, seed: u64) -> Self {
        // bits = ceil(log2(n)), at least 1 so that the shift below is meaningful.
        let bits = if n <= 2 {
            1
        } else {
            64 - (n - 1).leading_zeros()
        };
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let shift = bits.div_ceil(2).max(1);
        // Domain separation from the workload RNG, which is seeded from the same user seed.
        let mut st = seed ^ 0x5CA3_B1E5_0000_0001;
        let keys = [
            nowa_units::splitmix64(&mut st) & mask,
            nowa_units::splitmix64(&mut st) & mask,
            nowa_units::splitmix64(&mut st) & mask,
        ];
        Scrambler {
            n,
            mask,
            shift,
            bits,
            keys,
        }
    }

    /// Size of the permuted domain.
    #[inline]
    #[must_use]
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True for the empty domain.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    #[inline(always)]
    fn forward(&self, mut x: u64) -> u64 {
        for (key, mul) in self.keys.iter().zip(MULS) {
            x ^= key;
            x = x.wrapping_mul(mul) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    #[inline]
    fn backward(&self, mut y: u64) -> u64 {
        for i in (0..ROUNDS).rev() {
            // Undo x ^= x >> shift: fixed-point iteration, exact after ceil(bits/shift) steps.
            let mut x = y;
            let mut done = self.shift;
            while done < self.bits {
                x = y ^ (x >> self.shift);
                done += self.shift;
            }
            y = x;
            y = y.wrapping_mul(MULS_INV[i]) & self.mask;
            y ^= self.keys[i];
        }
        y
    }

    /// Image of `i` (must be `< len()`): a value in `[0, len())`.
    #[inline]
    #[must_use]
    pub fn permute(&self, i: u64) -> u64 {
        debug_assert!(i < self.n, "scrambler input {i} out of range {}", self.n);
        let mut x = self.forward(i);
        while x >= self.n {
            x = self.forward(x);
        }
        x
    }

    /// Preimage of `j` (must be `< len()`): `invert(permute(i)) == i`.
    #[inline]
    #[must_use]
    pub fn invert(&self, j: u64) -> u64 {
        debug_assert!(j < self.n, "scrambler input {j} out of range {}", self.n);
        let mut x = self.backward(j);
        while x >= self.n {
            x = self.backward(x);
        }
        x
    }
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "test arithmetic on small page counts and indices"
)]
#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check_bijection(n: u64, seed: u64) {
        let s = Scrambler::new(n, seed);
        let mut seen = vec![false; n as usize];
        for i in 0..n {
            let j = s.permute(i);
            assert!(j < n, "n={n} seed={seed}: permute({i}) = {j} out of range");
            assert!(!seen[j as usize], "n={n} seed={seed}: {j} hit twice");
            seen[j as usize] = true;
            assert_eq!(s.invert(j), i, "n={n} seed={seed}: invert(permute({i}))");
        }
    }

    #[test]
    fn mul_inverses_are_correct() {
        for (m, inv) in MULS.iter().zip(MULS_INV) {
            assert_eq!(m.wrapping_mul(inv), 1);
        }
    }

    #[test]
    fn small_and_edge_sizes_are_bijections() {
        for n in 1..=70 {
            for seed in 0..4 {
                check_bijection(n, seed);
            }
        }
        for n in [
            127,
            128,
            129,
            255,
            256,
            257,
            1 << 12,
            (1 << 12) + 1,
            100_000,
        ] {
            check_bijection(n, 42);
        }
    }

    #[test]
    fn huge_domain_roundtrip() {
        // 2^32 + 5 and 2^63 + 1: spot checks (a full check is too long).
        for n in [(1u64 << 32) + 5, (1u64 << 63) + 1, u64::MAX] {
            let s = Scrambler::new(n, 7);
            let mut st = 99u64;
            for _ in 0..2000 {
                let i = nowa_units::splitmix64(&mut st) % n;
                let j = s.permute(i);
                assert!(j < n);
                assert_eq!(s.invert(j), i);
            }
        }
    }

    #[test]
    fn seeds_give_different_permutations() {
        let a = Scrambler::new(10_000, 1);
        let b = Scrambler::new(10_000, 2);
        let same = (0..10_000)
            .filter(|&i| a.permute(i) == b.permute(i))
            .count();
        assert!(same < 50, "{same} fixed agreements");
    }

    #[test]
    fn prefix_is_scattered_over_the_range() {
        // The image of the first 10% must spread over all deciles of the range (ssd-iq 4.2).
        for &n in &[1_000_000u64, (1 << 20) + 1, 3 << 19] {
            let s = Scrambler::new(n, 3);
            let hot = n / 10;
            let mut per_decile = [0u64; 10];
            for i in 0..hot {
                per_decile[(s.permute(i) * 10 / n) as usize] += 1;
            }
            for (d, &c) in per_decile.iter().enumerate() {
                let frac = c as f64 / hot as f64;
                assert!((frac - 0.1).abs() < 0.01, "n={n} decile {d}: {frac}");
            }
            // And consecutive inputs do not map to consecutive outputs.
            let adjacent = (0..hot - 1)
                .filter(|&i| s.permute(i).abs_diff(s.permute(i + 1)) == 1)
                .count();
            assert!(
                adjacent < (hot / 100) as usize,
                "n={n}: {adjacent} adjacent pairs"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn prop_bijection(n in 1u64..5000, seed in any::<u64>()) {
            check_bijection(n, seed);
        }

        #[test]
        fn prop_roundtrip_large(n in 1u64..=u64::MAX, seed in any::<u64>(), x in any::<u64>()) {
            let s = Scrambler::new(n, seed);
            let i = x % n;
            let j = s.permute(i);
            prop_assert!(j < n);
            prop_assert_eq!(s.invert(j), i);
        }
    }
}
