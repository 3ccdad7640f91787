//! Hotness records (SepFrozen §4.1) and the per-frame tracker that produces them.
//!
//! A [`HotnessRecord`] HR = (WT, VD, AI, MI, AC, MC) describes one DB write of a page:
//!
//! | field | meaning | unit | stored as |
//! |---|---|---|---|
//! | WT | write time | DB-written-page timer | u48, saturating at 2^48 - 1 |
//! | VD | valid bytes in the page | bytes | u16, saturating at 65,535 |
//! | AI | mean access interval in the pool window | timer ticks | u16 log code (see [`IntervalCode`]) |
//! | MI | mean modification interval in the window | timer ticks | u16 log code |
//! | AC | accesses in the window | count | u16, saturating at 65,535 |
//! | MC | modifications in the window | count | u16, saturating at 65,535 |
//!
//! The encoding is exactly 16 bytes, little endian: `WT[0..6] VD[6..8] AC[8..10] MC[10..12]
//! AI[12..14] MI[14..16]`. Every 16-byte string decodes to a record, and a decoded record
//! encodes to the same bytes. The all-zero record is [`HotnessRecord::NONE`]: "no earlier
//! write" (the paper's all-zero HR_last of a page's first write).
//!
//! The *window* of a record is the page's stay in the buffer pool that ends with this write:
//! from its read into the pool (or from its previous write, if it stayed in the pool after
//! it) to this write. See [`HotnessTracker`].

use std::sync::OnceLock;

/// Encoded size of one hotness record.
pub const HR_BYTES: usize = 16;
/// Encoded size of a page's two records (HR_current, HR_last), as kept in the page header.
pub const PAGE_HR_BYTES: usize = 2 * HR_BYTES;
const _: () = assert!(
    HR_BYTES == 6 + 2 * 5,
    "WT is 6 bytes, the five others 2 each"
);
const _: () = assert!(PAGE_HR_BYTES == 32, "the paper's 32 bytes per page");

/// Largest storable write time (48 bits: 2^48 4-KiB page writes = 1 EiB written).
pub const WT_MAX: u64 = (1 << 48) - 1;

/// Code steps per doubling of `1 + interval` (resolution of [`IntervalCode`]).
const CODE_STEPS_PER_OCTAVE: f64 = 1024.0;

/// A mean interval (in timer ticks, fractional) quantized to 16 bits on a log scale:
/// `code = round(1024 * log2(1 + interval))`, `interval = 2^(code / 1024) - 1`.
///
/// Code 0 is exactly 0; the largest code (65,535) stands for about 1.8e19 ticks, beyond any
/// u64 timer difference, so the code never saturates in practice. The relative quantization
/// error is below 0.034% (half a step of 2^(1/1024)); below one tick the absolute error is
/// below 0.00034 ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IntervalCode(pub u16);

impl IntervalCode {
    /// The code of a mean interval.
    ///
    /// # Panics
    /// If `ticks` is negative or not finite (a tracker bug: means of non-negative time
    /// differences are finite and non-negative).
    #[must_use]
    pub fn from_ticks(ticks: f64) -> Self {
        assert!(
            ticks.is_finite() && ticks >= 0.0,
            "a mean interval is finite and >= 0, got {ticks}"
        );
        let code = (CODE_STEPS_PER_OCTAVE * ticks.ln_1p() / std::f64::consts::LN_2).round();
        let code = code.min(f64::from(u16::MAX));
        assert!((0.0..=f64::from(u16::MAX)).contains(&code));
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "code is rounded and within 0..=65535 (clamped and asserted above)"
        )]
        Self(code as u16)
    }

    /// The mean interval this code stands for, in timer ticks: `2^(code / 1024) - 1`,
    /// computed as `2^(code >> 10) * 2^((code & 1023) / 1024) - 1` from a 1024-entry table
    /// (8 KiB; inference decodes four codes per page).
    ///
    /// # Panics
    /// Never (a u16 code spans 63 octaves).
    #[must_use]
    pub fn ticks(self) -> f64 {
        static FRACTIONS: OnceLock<[f64; 1024]> = OnceLock::new();
        let table = FRACTIONS.get_or_init(|| {
            std::array::from_fn(|i| {
                let i = u16::try_from(i).expect("i < 1024");
                (f64::from(i) / CODE_STEPS_PER_OCTAVE).exp2()
            })
        });
        let octave = u64::from(self.0 >> 10);
        assert!(octave < 64, "a u16 code has at most 63 octaves");
        // 2^octave exactly: the biased exponent, a zero mantissa.
        let scale = f64::from_bits((1023 + octave) << 52);
        table[usize::from(self.0 & 1023)] * scale - 1.0
    }
}

/// One hotness record HR = (WT, VD, AI, MI, AC, MC); see the module docs for units and the
/// 16-byte encoding. Fields hold exactly what is stored: constructors saturate and quantize.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HotnessRecord {
    wt: u64,
    vd: u16,
    ac: u16,
    mc: u16,
    ai: IntervalCode,
    mi: IntervalCode,
}

fn sat_u16(v: u64) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX)
}

impl HotnessRecord {
    /// "No record": the HR_last of a page's first write (all bytes zero).
    pub const NONE: Self = Self {
        wt: 0,
        vd: 0,
        ac: 0,
        mc: 0,
        ai: IntervalCode(0),
        mi: IntervalCode(0),
    };

    /// A record from raw values: `wt` saturates at [`WT_MAX`], `vd`, `ac`, `mc` at 65,535,
    /// and `ai`, `mi` (mean intervals in ticks) are quantized by [`IntervalCode`].
    ///
    /// # Panics
    /// If `ai` or `mi` is negative or not finite.
    #[must_use]
    pub fn new(wt: u64, vd: u64, ai: f64, mi: f64, ac: u64, mc: u64) -> Self {
        Self {
            wt: wt.min(WT_MAX),
            vd: sat_u16(vd),
            ac: sat_u16(ac),
            mc: sat_u16(mc),
            ai: IntervalCode::from_ticks(ai),
            mi: IntervalCode::from_ticks(mi),
        }
    }

    /// WT: the timer value when the page was written.
    #[must_use]
    pub fn wt(&self) -> u64 {
        self.wt
    }
    /// VD: valid bytes in the page.
    #[must_use]
    pub fn vd(&self) -> u16 {
        self.vd
    }
    /// AI: mean access interval of the window, in ticks (decoded).
    #[must_use]
    pub fn ai(&self) -> f64 {
        self.ai.ticks()
    }
    /// MI: mean modification interval of the window, in ticks (decoded).
    #[must_use]
    pub fn mi(&self) -> f64 {
        self.mi.ticks()
    }
    /// AI's stored code.
    #[must_use]
    pub fn ai_code(&self) -> IntervalCode {
        self.ai
    }
    /// MI's stored code.
    #[must_use]
    pub fn mi_code(&self) -> IntervalCode {
        self.mi
    }
    /// AC: accesses in the window.
    #[must_use]
    pub fn ac(&self) -> u16 {
        self.ac
    }
    /// MC: modifications in the window.
    #[must_use]
    pub fn mc(&self) -> u16 {
        self.mc
    }
    /// True for [`HotnessRecord::NONE`].
    #[must_use]
    pub fn is_none(&self) -> bool {
        *self == Self::NONE
    }

    /// The 16-byte little-endian encoding (module docs).
    ///
    /// # Panics
    /// Never (constructors keep WT within 48 bits).
    #[must_use]
    pub fn encode(&self) -> [u8; HR_BYTES] {
        assert!(self.wt <= WT_MAX, "constructors keep WT within 48 bits");
        let mut b = [0u8; HR_BYTES];
        b[0..6].copy_from_slice(&self.wt.to_le_bytes()[0..6]);
        b[6..8].copy_from_slice(&self.vd.to_le_bytes());
        b[8..10].copy_from_slice(&self.ac.to_le_bytes());
        b[10..12].copy_from_slice(&self.mc.to_le_bytes());
        b[12..14].copy_from_slice(&self.ai.0.to_le_bytes());
        b[14..16].copy_from_slice(&self.mi.0.to_le_bytes());
        b
    }

    /// Decodes [`HotnessRecord::encode`]'s bytes. Every byte string is a valid record.
    ///
    /// # Panics
    /// Never (six bytes of WT are below 2^48).
    #[must_use]
    pub fn decode(b: &[u8; HR_BYTES]) -> Self {
        let mut wt = [0u8; 8];
        wt[0..6].copy_from_slice(&b[0..6]);
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let r = Self {
            wt: u64::from_le_bytes(wt),
            vd: u16_at(6),
            ac: u16_at(8),
            mc: u16_at(10),
            ai: IntervalCode(u16_at(12)),
            mi: IntervalCode(u16_at(14)),
        };
        assert!(r.wt <= WT_MAX);
        r
    }
}

/// A page's two records as kept in its header: HR_current (this version's write) and
/// HR_last (the previous write's), 32 bytes encoded (`current ++ last`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PageHotness {
    /// The record of the write that produced this version.
    pub current: HotnessRecord,
    /// The record of the write before it ([`HotnessRecord::NONE`] for a page's first write).
    pub last: HotnessRecord,
}

impl PageHotness {
    /// The records after one more DB write: `current` moves to `last`.
    #[must_use]
    pub fn after_write(self, new: HotnessRecord) -> Self {
        Self {
            current: new,
            last: self.current,
        }
    }

    /// `current ++ last`, 32 bytes.
    #[must_use]
    pub fn encode(&self) -> [u8; PAGE_HR_BYTES] {
        let mut b = [0u8; PAGE_HR_BYTES];
        b[..HR_BYTES].copy_from_slice(&self.current.encode());
        b[HR_BYTES..].copy_from_slice(&self.last.encode());
        b
    }

    /// Decodes [`PageHotness::encode`]'s bytes.
    ///
    /// # Panics
    /// Never (six bytes of WT are below 2^48).
    #[must_use]
    pub fn decode(b: &[u8; PAGE_HR_BYTES]) -> Self {
        let (cur, last) = b.split_at(HR_BYTES);
        let cur: &[u8; HR_BYTES] = cur.try_into().expect("split at HR_BYTES of 32");
        let last: &[u8; HR_BYTES] = last.try_into().expect("32 - HR_BYTES = HR_BYTES");
        Self {
            current: HotnessRecord::decode(cur),
            last: HotnessRecord::decode(last),
        }
    }
}

/// Per-buffer-frame bookkeeping of one page's window (from its read into the pool, or from
/// its last write, to its next write): access and modification counts and their mean
/// intervals, in the ticks of the clock the engine passes (the DB-written-page timer).
///
/// Rules (docs/sepfrozen.md):
/// - every access and every modification is one event; a modification is also an access
///   (call [`HotnessTracker::on_access`] for a read-only fix, [`HotnessTracker::on_modify`]
///   for a modifying one, never both for one fix);
/// - the n-th interval runs from the previous event (or the window's start, for the first)
///   to the n-th event, so the mean interval of `n` events is
///   `(time of the last event - window start) / n`, and 0 when `n = 0`;
/// - a time earlier than one already seen (two threads racing on the timer) counts as the
///   latest time seen: intervals are never negative;
/// - [`HotnessTracker::snapshot_at_write`] ends the window and starts the next one at the
///   write (a page that stays in the pool after being written counts from its write).
///
/// 28 bytes per frame; no allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HotnessTracker {
    start: u64,
    last_access: u64,
    last_modify: u64,
    accesses: u32,
    modifications: u32,
}

impl HotnessTracker {
    /// A tracker whose window starts at `now`.
    #[must_use]
    pub fn new(now: u64) -> Self {
        let mut t = Self::default();
        t.on_read_into_pool(now);
        t
    }

    /// The page was read into this frame at `now`: a new window starts.
    pub fn on_read_into_pool(&mut self, now: u64) {
        *self = Self {
            start: now,
            last_access: now,
            last_modify: now,
            accesses: 0,
            modifications: 0,
        };
    }

    /// A tracker rebuilt from counters kept elsewhere (e.g. atomics in a buffer frame that
    /// several readers update at once): the window started at `start`, the last access and
    /// modification happened at `last_access` / `last_modify`, with `accesses` and
    /// `modifications` events. Times before `start` count as `start`, and `accesses` is
    /// raised to `modifications` (a modification is an access): counters updated without a
    /// common lock may disagree by the events of a race, never more.
    ///
    /// # Panics
    /// Never (the clamps above establish what the asserts check).
    #[must_use]
    pub fn resume(
        start: u64,
        last_access: u64,
        last_modify: u64,
        accesses: u32,
        modifications: u32,
    ) -> Self {
        let t = Self {
            start,
            last_access: last_access.max(start),
            last_modify: last_modify.max(start),
            accesses: accesses.max(modifications),
            modifications,
        };
        assert!(t.last_access >= t.start && t.last_modify >= t.start);
        assert!(t.modifications <= t.accesses, "a modification is an access");
        t
    }

    fn clamp(&self, now: u64) -> u64 {
        now.max(self.last_access).max(self.last_modify)
    }

    /// A read-only access (fix) at `now`.
    pub fn on_access(&mut self, now: u64) {
        let now = self.clamp(now);
        self.accesses = self.accesses.saturating_add(1);
        self.last_access = now;
    }

    /// A modification at `now` (counts as an access too).
    pub fn on_modify(&mut self, now: u64) {
        let now = self.clamp(now);
        self.accesses = self.accesses.saturating_add(1);
        self.last_access = now;
        self.modifications = self.modifications.saturating_add(1);
        self.last_modify = now;
    }

    /// Accesses in the current window (modifications included).
    #[must_use]
    pub fn accesses(&self) -> u32 {
        self.accesses
    }

    /// Modifications in the current window.
    #[must_use]
    pub fn modifications(&self) -> u32 {
        self.modifications
    }

    /// Mean access interval of the current window, in ticks (0 without accesses).
    #[must_use]
    pub fn mean_access_interval(&self) -> f64 {
        mean(self.last_access - self.start, self.accesses)
    }

    /// Mean modification interval of the current window, in ticks (0 without any).
    #[must_use]
    pub fn mean_modify_interval(&self) -> f64 {
        mean(self.last_modify - self.start, self.modifications)
    }

    /// The page is written at `now` with `valid_bytes` of valid records: returns its hotness
    /// record (WT = `now`) and starts the next window at `now`.
    ///
    /// # Panics
    /// Never (the counters' invariants are kept by the methods above).
    pub fn snapshot_at_write(&mut self, now: u64, valid_bytes: u64) -> HotnessRecord {
        let now = self.clamp(now);
        assert!(self.last_access >= self.start && self.last_modify >= self.start);
        assert!(
            self.modifications <= self.accesses,
            "a modification is an access"
        );
        let hr = HotnessRecord::new(
            now,
            valid_bytes,
            self.mean_access_interval(),
            self.mean_modify_interval(),
            u64::from(self.accesses),
            u64::from(self.modifications),
        );
        self.on_read_into_pool(now);
        hr
    }
}

fn mean(span: u64, n: u32) -> f64 {
    if n == 0 {
        return 0.0;
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "a span in ticks as f64: exact below 2^53 ticks, a mean needs no more"
    )]
    let span = span as f64;
    span / f64::from(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tracker_matches_a_hand_computed_history() {
        // Read into the pool at 10; accesses at 12, 15; a modification at 16; an access at
        // 20; written at 25 with 3000 valid bytes.
        let mut t = HotnessTracker::new(10);
        t.on_access(12);
        t.on_access(15);
        t.on_modify(16);
        t.on_access(20);
        let hr = t.snapshot_at_write(25, 3000);
        assert_eq!((hr.wt(), hr.vd(), hr.ac(), hr.mc()), (25, 3000, 4, 1));
        // AI = (20 - 10) / 4 intervals (10->12->15->16->20); MI = (16 - 10) / 1.
        assert!((hr.ai() - 2.5).abs() < 2.5 * 4e-4, "{}", hr.ai());
        assert!((hr.mi() - 6.0).abs() < 6.0 * 4e-4, "{}", hr.mi());
        // Stays in the pool: the next window starts at the write (25). Modifications at 30
        // and 34, an access at 33; written at 40.
        t.on_modify(30);
        t.on_access(33);
        t.on_modify(34);
        let hr2 = t.snapshot_at_write(40, 4096);
        assert_eq!((hr2.wt(), hr2.ac(), hr2.mc()), (40, 3, 2));
        assert!((hr2.ai() - 3.0).abs() < 3.0 * 4e-4, "(34 - 25) / 3");
        assert!((hr2.mi() - 4.5).abs() < 4.5 * 4e-4, "(34 - 25) / 2");
        // Evicted and read again at 100; written at 130 without any access in between.
        t.on_read_into_pool(100);
        let hr3 = t.snapshot_at_write(130, 10);
        assert_eq!((hr3.ac(), hr3.mc(), hr3.ai(), hr3.mi()), (0, 0, 0.0, 0.0));
        let page = PageHotness::default().after_write(hr).after_write(hr2);
        assert_eq!((page.current, page.last), (hr2, hr));
    }

    #[test]
    fn tracker_never_goes_back_in_time() {
        let mut t = HotnessTracker::new(50);
        t.on_access(60);
        t.on_modify(55); // raced: counts at 60
        assert_eq!(t.mean_modify_interval(), 10.0);
        let hr = t.snapshot_at_write(40, 0);
        assert_eq!(hr.wt(), 60, "the write is not before the events it ends");
    }

    #[test]
    fn saturation_and_none() {
        let hr = HotnessRecord::new(u64::MAX, 1 << 20, 1e30, 0.0, 1 << 40, 70_000);
        assert_eq!(
            (hr.wt(), hr.vd(), hr.ac(), hr.mc()),
            (WT_MAX, 65_535, 65_535, 65_535)
        );
        assert_eq!(hr.ai_code(), IntervalCode(u16::MAX));
        assert_eq!(HotnessRecord::NONE.encode(), [0u8; 16]);
        assert!(HotnessRecord::decode(&[0; 16]).is_none());
        assert!(!HotnessRecord::new(1, 0, 0.0, 0.0, 0, 0).is_none());
    }

    #[test]
    fn the_decode_table_agrees_with_exp2() {
        for c in (0..=u16::MAX).step_by(7).chain([1023, 1024, 65_535]) {
            let direct = (f64::from(c) / 1024.0).exp2() - 1.0;
            let t = IntervalCode(c).ticks();
            assert!(
                (t - direct).abs() <= direct.abs() * 1e-15,
                "code {c}: {t} vs {direct}"
            );
        }
    }

    #[test]
    fn interval_codes_are_monotone_and_exact_at_zero() {
        assert_eq!(IntervalCode::from_ticks(0.0), IntervalCode(0));
        assert_eq!(IntervalCode(0).ticks(), 0.0);
        let mut prev = IntervalCode(0);
        for i in 1..2000 {
            let c = IntervalCode::from_ticks(f64::from(i) * 0.37);
            assert!(c >= prev, "codes never fall as the interval grows");
            if i < 100 {
                assert!(c > prev, "below 37 ticks a step of 0.37 changes the code");
            }
            prev = c;
        }
    }

    proptest! {
        #[test]
        fn encode_decode_round_trips(bytes in proptest::array::uniform16(any::<u8>())) {
            let hr = HotnessRecord::decode(&bytes);
            prop_assert_eq!(hr.encode(), bytes);
            prop_assert_eq!(HotnessRecord::decode(&hr.encode()), hr);
        }

        #[test]
        fn constructed_records_round_trip(wt in 0u64..(1 << 50), vd in 0u64..100_000,
                ai in 0.0f64..1e15, mi in 0.0f64..1e6, ac in 0u64..100_000, mc in 0u64..100_000) {
            let hr = HotnessRecord::new(wt, vd, ai, mi, ac, mc);
            prop_assert_eq!(HotnessRecord::decode(&hr.encode()), hr);
            let again = HotnessRecord::new(hr.wt(), u64::from(hr.vd()), hr.ai(), hr.mi(),
                u64::from(hr.ac()), u64::from(hr.mc()));
            prop_assert_eq!(again, hr, "decoded values encode to the same codes");
            prop_assert!((hr.ai() - ai).abs() <= ai * 4e-4 + 4e-4, "ai {} vs {}", hr.ai(), ai);
            let page = PageHotness { current: hr, last: HotnessRecord::new(wt / 2, 1, 0.5, 0.5, 1, 1) };
            prop_assert_eq!(PageHotness::decode(&page.encode()), page);
        }
    }
}
