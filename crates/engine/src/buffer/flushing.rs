//! InnoDB's adaptive flushing, as the page cleaner of the hot-page paper's MySQL runs it
//! (mysql-server `storage/innobase/buf/buf0flu.cc`, `page_cleaner_flush_pages_recommendation`,
//! `af_get_pct_for_dirty`, `af_get_pct_for_lsn`; docs/checkpointing.md section "The page
//! cleaner"). Once per second of the engine's flush clock a batch writes the oldest-modified
//! dirty pages (flush-list order: smallest `rec_lsn` first) until `n_pages` were written:
//!
//! - `pct_for_dirty` = dirty% x 100 / (max_dirty_pages_pct + 1) once dirty% >= the lwm;
//! - `pct_for_lsn` = (io_capacity_max / io_capacity) x f x sqrt(f) / 7.5 with
//!   f = age x 100 / (7/8 of the log capacity), once the checkpoint age reaches
//!   adaptive_flushing_lwm % of the capacity;
//! - `pages_for_lsn` = dirty pages with `rec_lsn` <= oldest + 3 s of the average redo rate,
//!   divided by 3 (buf_flush_lsn_scan_factor), at least 1, at most 2 x io_capacity_max;
//! - `n_pages` = (io_capacity x max(pct_for_dirty, pct_for_lsn) / 100 + avg_page_rate +
//!   pages_for_lsn) / 3, at most io_capacity_max;
//! - the two rates are averaged as InnoDB does: every `flushing_avg_loops` batches (or
//!   seconds), `avg = (avg + rate over the window) / 2`.
//!
//! Deferred pages do not count towards `n_pages` (the batch walks on to younger pages, as
//! `buf_do_flush_list_batch` counts only pages it flushed).

/// The adaptive-flushing knobs (InnoDB's defaults in [`Flushing::default`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Flushing {
    /// Seconds of the flush clock between two batches (InnoDB: 1 s).
    pub period_secs: f64,
    /// `innodb_io_capacity`, pages per second.
    pub io_capacity: u64,
    /// `innodb_io_capacity_max`, pages per second (the cap of one batch).
    pub io_capacity_max: u64,
    /// `innodb_max_dirty_pages_pct`.
    pub max_dirty_pages_pct: f64,
    /// `innodb_max_dirty_pages_pct_lwm`.
    pub max_dirty_pages_pct_lwm: f64,
    /// `innodb_adaptive_flushing_lwm`, percent of the log capacity.
    pub adaptive_flushing_lwm: f64,
    /// `innodb_flushing_avg_loops`.
    pub flushing_avg_loops: u32,
}

impl Default for Flushing {
    /// MySQL 8.0's defaults.
    fn default() -> Self {
        Flushing {
            period_secs: 1.0,
            io_capacity: 200,
            io_capacity_max: 2000,
            max_dirty_pages_pct: 90.0,
            max_dirty_pages_pct_lwm: 10.0,
            adaptive_flushing_lwm: 10.0,
            flushing_avg_loops: 30,
        }
    }
}

/// `buf_flush_lsn_scan_factor`.
const LSN_SCAN_FACTOR: u64 = 3;

/// What one recommendation looks at.
#[derive(Debug, Clone, Copy)]
pub struct Inputs {
    /// Flush-clock time, seconds.
    pub now: f64,
    /// Current end of the log.
    pub cur_lsn: u64,
    /// Oldest modification still in memory (the checkpoint LSN InnoDB would take).
    pub oldest_lsn: u64,
    /// Log capacity (the WAL limit).
    pub capacity: u64,
    /// Dirty frames and all frames.
    pub dirty: usize,
    pub frames: usize,
    /// Pages the flush-list batches wrote so far (a running total).
    pub flushed_total: u64,
}

/// The page cleaner's averages between batches.
#[derive(Debug, Clone, Default)]
pub struct FlushState {
    /// Flush-clock time of the next batch (0 until the first tick).
    pub next_tick: f64,
    period: f64,
    started: bool,
    prev_lsn: u64,
    prev_time: f64,
    prev_flushed: u64,
    iterations: u32,
    avg_page_rate: f64,
    lsn_avg_rate: f64,
}

impl Flushing {
    /// `af_get_pct_for_dirty`.
    #[must_use]
    pub fn pct_for_dirty(&self, dirty_pct: f64) -> f64 {
        if dirty_pct <= 0.0 {
            return 0.0;
        }
        if self.max_dirty_pages_pct_lwm <= 0.0 {
            return if dirty_pct >= self.max_dirty_pages_pct {
                100.0
            } else {
                0.0
            };
        }
        if dirty_pct >= self.max_dirty_pages_pct_lwm {
            return (dirty_pct * 100.0 / (self.max_dirty_pages_pct + 1.0)).floor();
        }
        0.0
    }

    /// `af_get_pct_for_lsn` (adaptive flushing on).
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        reason = "log bytes far below 2^52 and a capacity ratio"
    )]
    pub fn pct_for_lsn(&self, age: u64, capacity: u64) -> f64 {
        let lwm = self.adaptive_flushing_lwm / 100.0 * capacity as f64;
        if (age as f64) < lwm {
            return 0.0;
        }
        // log_get_max_modified_age_async: 7/8 of the capacity.
        let max_async = (capacity - capacity / 8).max(1);
        let f = (age * 100 / max_async) as f64;
        // Integer division in InnoDB: io_capacity_max / io_capacity.
        let ratio = (self.io_capacity_max / self.io_capacity.max(1)) as f64;
        (ratio * f * f.sqrt() / 7.5).floor()
    }
}

impl FlushState {
    /// Whether a batch is due at flush-clock time `now`.
    #[must_use]
    pub fn due(&self, now: f64) -> bool {
        // A clock restarted (a paced device's timeline after the load) is due at once.
        now >= self.next_tick || now + 2.0 * self.period < self.next_tick
    }

    /// `page_cleaner_flush_pages_recommendation`: pages the batch at `inp.now` should write.
    /// `pages_older_than(lsn)` counts dirty pages whose `rec_lsn` is at most `lsn`.
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "page counts and rates, non-negative and far below 2^52"
    )]
    pub fn recommend(
        &mut self,
        cfg: &Flushing,
        inp: &Inputs,
        pages_older_than: impl FnOnce(u64) -> usize,
    ) -> usize {
        assert!(
            inp.oldest_lsn <= inp.cur_lsn,
            "oldest modification past the log end"
        );
        assert!(
            cfg.period_secs > 0.0,
            "a flush period of {} s",
            cfg.period_secs
        );
        self.next_tick = inp.now + cfg.period_secs;
        self.period = cfg.period_secs;
        if !self.started {
            self.started = true;
            self.prev_lsn = inp.cur_lsn;
            self.prev_time = inp.now;
            self.prev_flushed = inp.flushed_total;
        }
        self.iterations += 1;
        let elapsed = inp.now - self.prev_time;
        let loops = f64::from(cfg.flushing_avg_loops.max(1));
        if self.iterations >= cfg.flushing_avg_loops.max(1) || elapsed >= loops {
            let secs = elapsed.max(1.0);
            let pages = inp.flushed_total.saturating_sub(self.prev_flushed) as f64;
            self.avg_page_rate = (pages / secs + self.avg_page_rate) / 2.0;
            let lsn_rate = inp.cur_lsn.saturating_sub(self.prev_lsn) as f64 / secs;
            self.lsn_avg_rate = (self.lsn_avg_rate + lsn_rate) / 2.0;
            self.prev_lsn = inp.cur_lsn;
            self.prev_time = inp.now;
            self.prev_flushed = inp.flushed_total;
            self.iterations = 0;
        }
        let age = inp.cur_lsn - inp.oldest_lsn;
        let dirty_pct = inp.dirty as f64 * 100.0 / inp.frames.max(1) as f64;
        let pct = cfg
            .pct_for_dirty(dirty_pct)
            .max(cfg.pct_for_lsn(age, inp.capacity));
        let target = inp
            .oldest_lsn
            .saturating_add((self.lsn_avg_rate as u64).saturating_mul(LSN_SCAN_FACTOR));
        let for_lsn = (pages_older_than(target) as u64 / LSN_SCAN_FACTOR)
            .max(1)
            .min(cfg.io_capacity_max * 2);
        let by_pct = (cfg.io_capacity as f64 * pct / 100.0) as u64;
        let n = (by_pct + self.avg_page_rate as u64 + for_lsn) / 3;
        let n = n.min(cfg.io_capacity_max);
        usize::try_from(n).unwrap_or(usize::MAX)
    }
}

/// The flush clock: seconds since some origin (the timing model's clock on a simulated SSD,
/// a deterministic clock in the whole-engine simulation; wall clock by default).
pub type FlushClock = std::sync::Arc<dyn Fn() -> f64 + Send + Sync>;

impl super::BufferPool {
    /// Replace the flush clock (`None`: wall clock since the pool was made).
    pub fn set_flush_clock(&self, clock: Option<FlushClock>) {
        *self.clock.write() = clock;
    }

    /// Seconds on the flush clock.
    pub fn flush_now(&self) -> f64 {
        match self.clock.read().as_ref() {
            Some(c) => c(),
            None => self.t0.elapsed().as_secs_f64(),
        }
    }

    /// Whether the page cleaner's next batch is due.
    pub fn flush_tick_due(&self) -> bool {
        self.flush.lock().due(self.flush_now())
    }

    /// Start of a flush-list batch: InnoDB's recommendation for this second, turned into the
    /// LSN limit of the batch: the `rec_lsn` of the `n_pages`-th oldest dirty page the batch
    /// would write (deferrable pages are passed over and not counted). `u64::MAX`: every dirty
    /// page is selected.
    ///
    /// The checkpoint age is `cur` less the oldest place on the flush list (0 when nothing
    /// is dirty), as InnoDB's `buf_pool_get_oldest_modification_approx` over its lists.
    pub fn flush_batch_limit(&self, cfg: &Flushing, cur: u64, capacity: u64) -> u64 {
        let mcc = self
            .max_ckpt_count
            .load(std::sync::atomic::Ordering::Relaxed);
        // (rec_lsn, the batch would write it): an unlatched snapshot of the flush list.
        let mut list: Vec<(u64, bool)> = Vec::new();
        for f in self.frames.iter() {
            if !f.dirty.load(std::sync::atomic::Ordering::Acquire) {
                continue;
            }
            // Its place on the flush list (`Frame::list_lsn`), not its rec_lsn: a deferred
            // page went back to the young end.
            let rec = f.list_lsn.load(std::sync::atomic::Ordering::Relaxed);
            let count = f.ckpt_count.load(std::sync::atomic::Ordering::Relaxed);
            let fresh = f.fresh.load(std::sync::atomic::Ordering::Relaxed);
            // A page being changed right now (rec_lsn not set yet) is the youngest.
            let rec = if rec == super::NO_LSN { u64::MAX } else { rec };
            list.push((rec, fresh || count >= mcc));
        }
        list.sort_unstable_by_key(|x| x.0);
        let oldest = list.first().map_or(cur, |x| x.0.min(cur));
        let flushed = self
            .counters
            .checkpoint_page_writes
            .load(std::sync::atomic::Ordering::Relaxed);
        let inp = Inputs {
            now: self.flush_now(),
            cur_lsn: cur,
            oldest_lsn: oldest,
            capacity,
            dirty: list.len(),
            frames: self.frames.len(),
            flushed_total: flushed,
        };
        let n = self
            .flush
            .lock()
            .recommend(cfg, &inp, |t| list.partition_point(|x| x.0 <= t));
        super::EngineCounters::add(&self.counters.flush_batches, 1);
        if n == 0 {
            return 0;
        }
        let mut taken = 0usize;
        for &(rec, writes) in &list {
            if writes {
                taken += 1;
                if taken >= n {
                    return rec;
                }
            }
        }
        u64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_percentages_follow_innodb() {
        let f = Flushing::default();
        assert_eq!(f.pct_for_dirty(0.0), 0.0);
        assert_eq!(f.pct_for_dirty(5.0), 0.0);
        // 50 x 100 / 91 = 54.9 -> 54.
        assert_eq!(f.pct_for_dirty(50.0), 54.0);
        let cap = 8 << 20;
        assert_eq!(f.pct_for_lsn(cap / 20, cap), 0.0, "below the 10% lwm");
        // age = 7/8 capacity: f = 100 -> 10 x 100 x 10 / 7.5 = 1333.
        assert_eq!(f.pct_for_lsn(cap - cap / 8, cap), 1333.0);
    }

    #[test]
    fn a_batch_recommendation_tracks_the_redo_rate_and_is_capped() {
        let cfg = Flushing {
            flushing_avg_loops: 1,
            ..Flushing::default()
        };
        let mut s = FlushState::default();
        let base = Inputs {
            now: 0.0,
            cur_lsn: 1 << 20,
            oldest_lsn: 1 << 20,
            capacity: 64 << 20,
            dirty: 0,
            frames: 1000,
            flushed_total: 0,
        };
        assert_eq!(s.recommend(&cfg, &base, |_| 0), 0, "idle: nothing");
        assert!(!s.due(0.5) && s.due(1.0), "one batch per second");
        // 1 s later 4 MiB of redo, 300 dirty pages all within 3 s of redo: 300/3 = 100,
        // 30% dirty -> pct 32 -> 64 pages; (64 + 0 + 100) / 3 = 54.
        let mut seen = 0;
        let inp = Inputs {
            now: 1.0,
            cur_lsn: 5 << 20,
            dirty: 300,
            ..base
        };
        let n = s.recommend(&cfg, &inp, |t| {
            seen = t;
            300
        });
        // The average redo rate: (0 + 4 MiB/s) / 2.
        assert_eq!(
            seen,
            (1 << 20) + 3 * (2 << 20),
            "3 s of the average redo rate"
        );
        assert_eq!(n, 54);
        let full = Inputs {
            now: 2.0,
            cur_lsn: 60 << 20,
            dirty: 1000,
            ..base
        };
        assert_eq!(
            s.recommend(&cfg, &full, |_| 100_000),
            2000,
            "capped at io_capacity_max"
        );
    }
}
