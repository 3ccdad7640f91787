//! TPC-C's random inputs from one seeded stream per worker or per loaded warehouse.
//!
//! The generator is SplitMix64 ([`nowa_units::splitmix64`], nowa's one seed mixer): stable
//! across Rust and crate versions, so a seed names the same database and the same transaction
//! stream forever. Ranges use the multiply-shift reduction (bias below 2^-40 for TPC-C's ranges).

use nowa_units::{mix64, splitmix64};

/// NURand constant C for C_LAST at load time (LeanStore's C_LAST_LOAD_C).
pub const C_LAST_LOAD_C: i32 = 157;
/// NURand constant C for C_LAST at run time (|run - load| = 66, within TPC-C 2.1.6.1's [65, 119]).
pub const C_LAST_RUN_C: i32 = 223;
/// NURand constant C for C_ID.
pub const C_ID_C: i32 = 259;
/// NURand constant C for OL_I_ID.
pub const OL_I_ID_C: i32 = 7911;

/// The ten syllables of TPC-C last names (clause 4.3.2.3).
pub const NAME_PARTS: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A seeded random stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// The stream for `seed` and a stream identifier (`(seed, [warehouse, table])` etc.):
    /// different identifiers give independent streams.
    #[must_use]
    pub fn derive(seed: u64, stream: &[u64]) -> Rng {
        let mut state = mix64(seed);
        for &s in stream {
            state = mix64(state ^ mix64(s.wrapping_add(0x5851_F42D_4C95_7F2D)));
        }
        Rng { state }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.state)
    }

    /// Uniform in `0..n`.
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "an empty range has no element");
        let wide = u128::from(self.next_u64()) * u128::from(n);
        u64::try_from(wide >> 64).expect("the high half of a u64 x u64 product fits a u64")
    }

    /// Uniform in `lo..=hi`.
    ///
    /// # Panics
    /// If `lo > hi`.
    pub fn int(&mut self, lo: i32, hi: i32) -> i32 {
        assert!(lo <= hi, "empty range {lo}..={hi}");
        let span = u64::try_from(i64::from(hi) - i64::from(lo) + 1).expect("hi >= lo");
        let off = i64::try_from(self.below(span)).expect("below a u32 span");
        i32::try_from(i64::from(lo) + off).expect("inside lo..=hi")
    }

    /// Uniform in `lo..=hi` without `except` (which must lie in the range, and the range must
    /// hold another value).
    ///
    /// # Panics
    /// If `except` is outside `lo..=hi` or the range holds one value.
    pub fn int_except(&mut self, lo: i32, hi: i32, except: i32) -> i32 {
        assert!(lo < hi && (lo..=hi).contains(&except));
        let x = self.int(lo, hi - 1);
        if x >= except {
            x + 1
        } else {
            x
        }
    }

    /// True with probability `percent / 100`.
    pub fn percent(&mut self, percent: i32) -> bool {
        self.int(1, 100) <= percent
    }

    /// TPC-C's NURand(A, x, y) with constant `c` (clause 2.1.6).
    pub fn nurand(&mut self, a: i32, x: i32, y: i32, c: i32) -> i32 {
        let r = ((self.int(0, a) | self.int(x, y)) + c) % (y - x + 1) + x;
        debug_assert!((x..=y).contains(&r));
        r
    }

    /// A customer id 1..=3000 by NURand(1023).
    pub fn customer_id(&mut self) -> i32 {
        self.nurand(1023, 1, 3000, C_ID_C)
    }

    /// An item id 1..=100,000 by NURand(8191).
    pub fn item_id(&mut self) -> i32 {
        self.nurand(8191, 1, 100_000, OL_I_ID_C)
    }

    /// Appends a random alphanumeric string of `lo..=hi` characters.
    pub fn alnum(&mut self, out: &mut Vec<u8>, lo: usize, hi: usize) {
        let n = self.len_in(lo, hi);
        out.extend((0..n).map(|_| ALNUM[self.index(ALNUM.len())]));
    }

    /// Appends a random string of `lo..=hi` decimal digits.
    pub fn digits(&mut self, out: &mut Vec<u8>, lo: usize, hi: usize) {
        let n = self.len_in(lo, hi);
        out.extend((0..n).map(|_| ALNUM[self.index(10)]));
    }

    /// Appends a TPC-C zip code: 4 random digits then "11111".
    pub fn zip(&mut self, out: &mut Vec<u8>) {
        self.digits(out, 4, 4);
        out.extend_from_slice(b"11111");
    }

    /// An alphanumeric string of `lo..=hi` characters of which 10% hold "ORIGINAL" at a random
    /// position (I_DATA and S_DATA, clause 4.3.3.1).
    pub fn data_with_original(&mut self, lo: usize, hi: usize) -> Vec<u8> {
        let mut s = Vec::with_capacity(hi);
        self.alnum(&mut s, lo, hi);
        if self.below(10) == 0 {
            let at = self.index(s.len() - 8 + 1);
            s[at..at + 8].copy_from_slice(b"ORIGINAL");
        }
        s
    }

    fn index(&mut self, n: usize) -> usize {
        let i = self.below(n as u64);
        usize::try_from(i).expect("below a usize bound")
    }

    fn len_in(&mut self, lo: usize, hi: usize) -> usize {
        assert!(lo <= hi);
        lo + self.index(hi - lo + 1)
    }
}

/// The TPC-C last name for a number 0..=999 (three syllables).
///
/// # Panics
/// If `num` is outside 0..=999.
#[must_use]
pub fn last_name(num: i32) -> Vec<u8> {
    assert!((0..=999).contains(&num), "last-name numbers are 0..=999");
    let digit = |d: i32| NAME_PARTS[usize::try_from(d).expect("a decimal digit")];
    let mut s = Vec::with_capacity(15);
    s.extend_from_slice(digit(num / 100).as_bytes());
    s.extend_from_slice(digit(num / 10 % 10).as_bytes());
    s.extend_from_slice(digit(num % 10).as_bytes());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_nurand_stay_inside() {
        let mut r = Rng::derive(1, &[2]);
        for _ in 0..10_000 {
            assert!((1..=3000).contains(&r.customer_id()));
            assert!((1..=100_000).contains(&r.item_id()));
            let x = r.int_except(1, 3, 2);
            assert!(x == 1 || x == 3);
        }
        let mut s = Vec::new();
        r.alnum(&mut s, 8, 16);
        assert!((8..=16).contains(&s.len()) && s.iter().all(u8::is_ascii_alphanumeric));
    }

    #[test]
    fn streams_are_seeded_and_independent() {
        let a: Vec<u64> = (0..4).map(|_| Rng::derive(5, &[1]).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            Rng::derive(5, &[1]).next_u64(),
            Rng::derive(5, &[2]).next_u64()
        );
        assert_ne!(
            Rng::derive(5, &[1]).next_u64(),
            Rng::derive(6, &[1]).next_u64()
        );
    }

    #[test]
    fn last_names_are_the_spec_syllables() {
        assert_eq!(last_name(0), b"BARBARBAR");
        assert_eq!(last_name(371), b"PRICALLYOUGHT");
    }

    #[test]
    fn nurand_is_skewed() {
        let mut r = Rng::derive(3, &[]);
        let mut hits = vec![0u32; 3001];
        for _ in 0..300_000 {
            hits[usize::try_from(r.customer_id()).unwrap()] += 1;
        }
        let max = *hits.iter().max().unwrap();
        // Uniform would give ~100 per id; NURand's OR makes some ids several times hotter.
        assert!(max > 250, "max hits {max}");
    }
}
