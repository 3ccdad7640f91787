//! A synthetic write log with frozen pages, for timing, tests and trying the pipeline before
//! the engine writes real logs (`nowa frozen synth`). It is a toy, not a TPC-C stand-in:
//! accuracy figures for the paper's comparison come from engine logs.
//!
//! Two kinds of pages, one DB page write per timer tick:
//! - *append* pages (a growing table's insertion point, like ORDER-LINE or HISTORY): the
//!   current one takes `append_share` of the writes; each write adds records, so VD grows
//!   until the page is full after `fill_writes` writes; then the next page id starts.
//!   A full page freezes, except that with probability `late_update` it gets one more update
//!   later, and with probability `free_share` it is freed later (a delete);
//! - *hot* pages (STOCK, CUSTOMER): `hot_pages` pages updated forever, chosen by a Zipf law of
//!   skew `zipf`; their VD wanders around 3/4 of the page.
//!
//! Each write's hotness record comes from a [`HotnessTracker`] fed with accesses and
//! modifications at random times of the page's pool window: append pages see about
//! `records per write` modifications, hot pages a few, hotter pages more reads.
//! Records carry no placement (`zone` = `class` = "none").

use crate::features::HrWindow;
use crate::hotness::{HotnessTracker, PageHotness};
use crate::writelog::{WriteKind, WriteRecord};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Zipf};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Generator settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthConfig {
    /// DB page writes (timer ticks) to generate.
    pub writes: u64,
    /// Pages updated forever.
    pub hot_pages: u64,
    /// Zipf skew of the hot pages.
    pub zipf: f64,
    /// Share of writes to the current append page.
    pub append_share: f64,
    /// Writes that fill an append page.
    pub fill_writes: u32,
    /// Probability that a full append page is updated once more later.
    pub late_update: f64,
    /// Probability that a full append page is freed later.
    pub free_share: f64,
    /// Page size in bytes.
    pub page_size: u32,
    /// Seed.
    pub seed: u64,
}

impl Default for SynthConfig {
    fn default() -> Self {
        Self {
            writes: 1_000_000,
            hot_pages: 50_000,
            zipf: 0.9,
            append_share: 0.4,
            fill_writes: 8,
            late_update: 0.1,
            free_share: 0.05,
            page_size: 4096,
            seed: 42,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Later {
    Update,
    Free,
}

#[derive(Clone, Copy, Debug, Default)]
struct Page {
    hr: PageHotness,
    last_write: u64,
    writes: u32,
    vd: u64,
}

/// The generator: an iterator of records (user writes and frees, in timer order).
#[derive(Debug)]
pub struct Synth {
    cfg: SynthConfig,
    rng: SmallRng,
    zipf: Zipf<f64>,
    pages: HashMap<u64, Page>,
    later: BinaryHeap<Reverse<(u64, u64, Later)>>,
    timer: u64,
    append_page: u64,
    events: Vec<u64>,
}

impl Synth {
    /// A generator.
    ///
    /// # Panics
    /// If a share is outside [0, 1], `hot_pages` or `fill_writes` is 0, or `zipf` is
    /// negative.
    #[must_use]
    pub fn new(cfg: SynthConfig) -> Self {
        for p in [cfg.append_share, cfg.late_update, cfg.free_share] {
            assert!((0.0..=1.0).contains(&p), "a probability");
        }
        assert!(cfg.hot_pages > 0 && cfg.fill_writes > 0 && cfg.zipf >= 0.0);
        #[expect(clippy::cast_precision_loss, reason = "a page count as Zipf's n")]
        let zipf = Zipf::new(cfg.hot_pages as f64, cfg.zipf).expect("n >= 1, s >= 0");
        Self {
            rng: SmallRng::seed_from_u64(cfg.seed),
            zipf,
            pages: HashMap::new(),
            later: BinaryHeap::new(),
            timer: 0,
            append_page: cfg.hot_pages,
            events: Vec::new(),
            cfg,
        }
    }

    /// The window (records) a page would show at GC now, for tests.
    #[must_use]
    pub fn window_of(&self, page: u64) -> Option<HrWindow> {
        self.pages
            .get(&page)
            .map(|p| HrWindow::from_pair(p.hr.current, p.hr.last))
    }

    /// Writes `page` at the next tick with the given activity; returns its record.
    fn write(&mut self, page: u64, reads: u32, modifies: u32, vd: u64) -> WriteRecord {
        self.timer += 1;
        let now = self.timer;
        let mut st = self.pages.get(&page).copied().unwrap_or_default();
        // The pool window: since the last write, or a short stay for a page read back in.
        let stay = self.rng.random_range(1..=64u64);
        let start = if st.writes == 0 {
            now.saturating_sub(stay)
        } else {
            st.last_write.max(now.saturating_sub(stay * 16))
        };
        let mut tr = HotnessTracker::new(start);
        self.events.clear();
        for i in 0..reads + modifies {
            let at = self.rng.random_range(start..=now);
            self.events.push(at << 1 | u64::from(i < modifies));
        }
        self.events.sort_unstable();
        for &e in &self.events {
            if e & 1 == 1 {
                tr.on_modify(e >> 1);
            } else {
                tr.on_access(e >> 1);
            }
        }
        let hr = tr.snapshot_at_write(now, vd);
        st.hr = st.hr.after_write(hr);
        st.last_write = now;
        st.writes += 1;
        st.vd = vd;
        self.pages.insert(page, st);
        WriteRecord::unplaced(now, page, WriteKind::User, st.hr.current, st.hr.last)
    }

    fn append_write(&mut self) -> WriteRecord {
        let page = self.append_page;
        let n = self.pages.get(&page).map_or(0, |p| p.writes) + 1;
        let full = u64::from(self.cfg.page_size);
        let noise = self.rng.random_range(0..=full / 32);
        let vd = (full * u64::from(n) / u64::from(self.cfg.fill_writes)).saturating_sub(noise);
        let inserts = self.rng.random_range(2..=8);
        let reads = self.rng.random_range(0..=4);
        let r = self.write(page, reads, inserts, vd.min(full));
        if n >= self.cfg.fill_writes {
            self.append_page += 1;
            let horizon = self.cfg.writes.max(2);
            if self.rng.random_bool(self.cfg.late_update) {
                let at = self.timer + self.rng.random_range(1..horizon);
                self.later.push(Reverse((at, page, Later::Update)));
            } else if self.rng.random_bool(self.cfg.free_share) {
                let at = self.timer + self.rng.random_range(1..horizon / 2 + 1);
                self.later.push(Reverse((at, page, Later::Free)));
            }
        }
        r
    }

    fn hot_write(&mut self) -> WriteRecord {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "Zipf returns a rank in 1..=hot_pages"
        )]
        let rank = self.zipf.sample(&mut self.rng) as u64;
        let page = rank.clamp(1, self.cfg.hot_pages) - 1;
        let full = u64::from(self.cfg.page_size);
        let vd = self.pages.get(&page).map_or(full * 3 / 4, |p| p.vd);
        let step = self.rng.random_range(0..=full / 16);
        let vd = (vd + step).saturating_sub(full / 32).clamp(full / 4, full);
        // Hotter (lower rank) pages are read more often while in the pool.
        let reads = self.rng.random_range(0..=2 + 40 / (1 + rank.ilog2()));
        let modifies = self.rng.random_range(1..=3);
        self.write(page, reads, modifies, vd)
    }
}

impl Iterator for Synth {
    type Item = WriteRecord;

    fn next(&mut self) -> Option<WriteRecord> {
        if let Some(&Reverse((at, page, what))) = self.later.peek() {
            if at <= self.timer + 1 && self.timer < self.cfg.writes {
                self.later.pop();
                return Some(match what {
                    Later::Free => {
                        let st = self.pages.remove(&page).expect("a freed page was written");
                        WriteRecord::unplaced(
                            self.timer,
                            page,
                            WriteKind::Free,
                            st.hr.current,
                            st.hr.last,
                        )
                    }
                    Later::Update => {
                        let vd = self.pages.get(&page).map_or(0, |p| p.vd);
                        self.write(page, 2, 1, vd)
                    }
                });
            }
        }
        if self.timer >= self.cfg.writes {
            return None;
        }
        let r = if self.rng.random_bool(self.cfg.append_share) {
            self.append_write()
        } else {
            self.hot_write()
        };
        assert_eq!(r.timer, self.timer);
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hotness::HotnessRecord;
    use crate::label::Labels;

    fn small() -> SynthConfig {
        SynthConfig {
            writes: 20_000,
            hot_pages: 500,
            ..SynthConfig::default()
        }
    }

    #[test]
    fn deterministic_ordered_and_mixed() {
        let a: Vec<_> = Synth::new(small()).collect();
        let b: Vec<_> = Synth::new(small()).collect();
        assert_eq!(a, b, "same seed, same log");
        let c: Vec<_> = Synth::new(SynthConfig { seed: 1, ..small() }).collect();
        assert_ne!(a, c);
        assert!(a.windows(2).all(|w| w[0].timer <= w[1].timer));
        let users = a.iter().filter(|r| r.kind == WriteKind::User).count();
        assert_eq!(users, 20_000, "one user write per tick");
        assert!(a.iter().any(|r| r.kind == WriteKind::Free));
        let l = Labels::from_records(&a);
        let c = l.counts();
        #[expect(clippy::cast_precision_loss, reason = "a share")]
        let share = c.user_frozen as f64 / c.user as f64;
        assert!(
            (0.02..0.5).contains(&share),
            "some, not most, versions freeze: {share}"
        );
    }

    #[test]
    fn hr_last_is_the_previous_hr_current() {
        let log: Vec<_> = Synth::new(small()).collect();
        let mut prev: HashMap<u64, HotnessRecord> = HashMap::new();
        for r in log.iter().filter(|r| r.kind == WriteKind::User) {
            let expect = prev.get(&r.page).copied().unwrap_or(HotnessRecord::NONE);
            assert_eq!(r.hr_last, expect, "page {}", r.page);
            assert_eq!(r.hr_current.wt(), r.timer);
            prev.insert(r.page, r.hr_current);
        }
    }
}
