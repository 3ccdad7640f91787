//! PLAN's per-chunk lifetime predictor (plan-ssd-parallelism.md 3.2): the logical space in
//! chunks of 32 flash pages, 4 bytes per chunk. On an overwrite or a TRIM of a chunk the new
//! history is `0.1 x old + 0.9 x (now - last write)`; it is the expected lifetime of the write
//! and picks an exponential lifetime class: class k holds lifetimes in [2^k - 1, 2^(k+1) - 1)
//! seconds (S < 1 s, M 1-3 s, L 3-7 s, ...), the last class everything above.
//!
//! The 4-byte record (docs/plan.md): bits 0-11 the history lifetime in 1/16 s (0xFFF: no
//! history yet; saturates at 0xFFE = 255.9 s, past the last class's bound of 127 s), bits
//! 12-30 the last write time in 1/16 s modulo 2^19 (32768 s; intervals are taken modulo
//! that), bit 31 the previous operation (1: a write, 0: a TRIM or never written).

/// Ticks per second of the packed times.
pub const TICKS_PER_SEC: f64 = 16.0;
const NO_HIST: u32 = 0xFFF;
const HIST_MAX: u32 = 0xFFE;
const TIME_BITS: u32 = 19;
const TIME_MASK: u32 = (1 << TIME_BITS) - 1;
const WRITE_BIT: u32 = 1 << 31;
/// Weight of the old history (the paper's 0.1).
pub const OLD_WEIGHT: f64 = 0.1;

/// One chunk's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record(u32);

impl Record {
    /// A chunk never written.
    pub const EMPTY: Record = Record(NO_HIST);

    /// The history lifetime in seconds (None before the first overwrite or TRIM).
    #[must_use]
    pub fn history_secs(self) -> Option<f64> {
        let h = self.0 & 0xFFF;
        (h != NO_HIST).then(|| f64::from(h) / TICKS_PER_SEC)
    }
    fn last(self) -> u32 {
        (self.0 >> 12) & TIME_MASK
    }
    fn wrote(self) -> bool {
        self.0 & WRITE_BIT != 0
    }
    fn pack(hist: u32, last: u32, wrote: bool) -> Record {
        assert!(hist <= NO_HIST, "history fits 12 bits");
        Record(hist | ((last & TIME_MASK) << 12) | if wrote { WRITE_BIT } else { 0 })
    }
}

/// Seconds to ticks, wrapped to the 19-bit clock.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "non-negative seconds; the packed clock wraps by design"
)]
fn ticks(secs: f64) -> u32 {
    ((secs.max(0.0) * TICKS_PER_SEC) as u64 & u64::from(TIME_MASK)) as u32
}

/// The lifetime class of an expected lifetime: k with 2^k - 1 <= secs < 2^(k+1) - 1, at most
/// `classes - 1`.
///
/// # Panics
/// If `classes` is 0.
#[must_use]
pub fn class_of(secs: f64, classes: u16) -> u16 {
    assert!(classes >= 1, "at least one class");
    let mut k = 0u16;
    while k + 1 < classes && secs >= f64::from((2u32 << k) - 1) {
        k += 1;
    }
    k
}

/// The predictor: one record per chunk.
#[derive(Debug, Clone)]
pub struct Predictor {
    records: Vec<Record>,
    chunk_pages: u64,
}

impl Predictor {
    /// Records for `logical_pages` in chunks of `chunk_pages`.
    ///
    /// # Panics
    /// If `chunk_pages` is 0 or the records do not fit memory.
    #[must_use]
    pub fn new(logical_pages: u64, chunk_pages: u64) -> Self {
        assert!(chunk_pages > 0, "chunks hold pages");
        let n = usize::try_from(logical_pages.div_ceil(chunk_pages)).expect("fits memory");
        Predictor {
            records: vec![Record::EMPTY; n],
            chunk_pages,
        }
    }

    /// Bytes of records (4 per chunk).
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        4 * self.records.len() as u64
    }

    /// The record of the chunk holding `page`.
    #[must_use]
    pub fn record(&self, page: u64) -> Record {
        self.records[self.chunk(page)]
    }

    fn chunk(&self, page: u64) -> usize {
        usize::try_from(page / self.chunk_pages).expect("page in range")
    }

    /// The new history after an overwrite or TRIM at `now` (None: no observation).
    fn observe(r: Record, now: u32) -> Option<u32> {
        if !r.wrote() {
            return None;
        }
        let obs = f64::from(now.wrapping_sub(r.last()) & TIME_MASK);
        let new = match r.history_secs() {
            Some(_) => OLD_WEIGHT * f64::from(r.0 & 0xFFF) + (1.0 - OLD_WEIGHT) * obs,
            None => obs,
        };
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "rounded, non-negative and clamped below 0xFFF"
        )]
        Some((new.round() as u32).min(HIST_MAX))
    }

    /// A write of `page` at `now` seconds: updates the chunk and returns its expected lifetime
    /// in seconds (None: no history, the write goes to a default superblock).
    pub fn on_write(&mut self, page: u64, now: f64) -> Option<f64> {
        let i = self.chunk(page);
        let (r, t) = (self.records[i], ticks(now));
        let hist = Self::observe(r, t).unwrap_or(r.0 & 0xFFF);
        let next = Record::pack(hist, t, true);
        self.records[i] = next;
        debug_assert_eq!(next.last(), t);
        next.history_secs()
    }

    /// A TRIM of `page` at `now`: the chunk's data died; the interval since its last write
    /// updates the history.
    pub fn on_trim(&mut self, page: u64, now: f64) {
        let i = self.chunk(page);
        let (r, t) = (self.records[i], ticks(now));
        if let Some(h) = Self::observe(r, t) {
            self.records[i] = Record::pack(h, t, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_chunk_history() {
        let mut p = Predictor::new(64, 32);
        assert_eq!(p.memory_bytes(), 8);
        // First write: no history.
        assert_eq!(p.on_write(3, 10.0), None);
        // Overwrite 4 s later: history = 4 s (first observation taken as is).
        assert_eq!(p.on_write(5, 14.0), Some(4.0));
        // 2 s later: 0.1 x 4 + 0.9 x 2 = 2.2 s (in 1/16 s: 0.1 x 64 + 0.9 x 32 = 35.2 -> 35).
        assert_eq!(p.on_write(0, 16.0), Some(35.0 / 16.0));
        // The other chunk is untouched.
        assert_eq!(p.record(40), Record::EMPTY);
        // TRIM 10 s later: 0.1 x 35 + 0.9 x 160 = 147.5 -> 148 ticks; no write since.
        p.on_trim(1, 26.0);
        assert_eq!(p.record(1).history_secs(), Some(148.0 / 16.0));
        // A write after a TRIM observes nothing new: expected = the history.
        assert_eq!(p.on_write(1, 100.0), Some(148.0 / 16.0));
        // Saturation far past the last class.
        assert_eq!(p.on_write(1, 2000.0), Some(f64::from(HIST_MAX) / 16.0));
    }

    #[test]
    fn exponential_classes() {
        let c = |s| class_of(s, 8);
        assert_eq!(
            (c(0.0), c(0.99), c(1.0), c(2.9), c(3.0), c(6.9)),
            (0, 0, 1, 1, 2, 2)
        );
        assert_eq!((c(7.0), c(126.9), c(127.0), c(1e9)), (3, 6, 7, 7));
        assert_eq!(class_of(100.0, 1), 0);
    }
}
