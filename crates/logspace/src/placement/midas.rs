//! MiDAS (Oh et al., FAST'24), after its simulator (`sungkyun123/MiDAS-Simulation`:
//! `ssdsimul.cpp`, `model.cpp`, `hf.cpp`). Written from the paper's design and the simulator's
//! behavior; the parts simplified here are listed under "Choices".
//!
//! - **Groups.** Class 0 is the HOT group; classes 1..=G form a migration chain. User writes go
//!   to HOT if the hot filter says so, else to group 1. GC moves the valid pages of a group-g
//!   victim to group g+1 (HOT victims to group 1; the last group G back into itself).
//! - **Victims.** Every group but the last has a designated size in units and is a FIFO: GC
//!   collects the oldest unit of the first group (HOT, 1, 2, ...) holding more units than its
//!   size, else the least valid unit of the last group (greedy).
//! - **UID** (update-interval distribution): every 100th page is sampled; over a time window its
//!   rewrite intervals are counted in units of a quarter GC unit of user writes.
//! - **MCAM** (the Markov-chain model): a page written to group 1 survives the group if its
//!   interval exceeds the group's FIFO cycle `T_1 = size_1 x unit / rate_1`, group 2 if it
//!   exceeds `T_1 + T_2`, and so on, so the valid ratio of group g at collection is
//!   `S(T_1+..+T_g) / S(T_1+..+T_(g-1))` with `S` the interval survival function from the UID;
//!   the traffic into group g+1 is the traffic into g times that ratio. The last group, holding
//!   the remaining data in the remaining units, is modeled as a greedy-cleaned space
//!   (Desnoyers' `x = exp(-alpha (1 - x))`). WAF = 1 + all copies per user write.
//! - **GCS** (group configuration search): for G = 1..=6 groups, size each non-last group in
//!   turn (a geometric grid of unit counts) to minimize the model's WAF with the later groups
//!   merged into the last; keep the G with the lowest WAF (a group must save 2%).
//! - **Hot filter** (`hf.cpp`): a 2-bit counter per page, up when the page is rewritten while
//!   its old copy is in HOT, or in group 1 and younger than the mean age of collected HOT units;
//!   down otherwise for group 1 and when GC moves it out of HOT or group 1 (twice out of HOT).
//!   A page with counter 3 is hot.
//!
//! Choices: the model runs at the end of every time window of `logical pages` user writes,
//! after skipping the first `logical pages` (the sequential fill); the reference waits 2x and
//! uses 4x-capacity windows with a doubling rule, its error check ("irregular pattern") and
//! group merging on recursive GC are left out; the HOT group's size is `max(2, 10% of its
//! traffic share of the units)` instead of its measured queue length; before the first model
//! run there are 2 groups with group 1 at 10% of the units.

use super::{idx, Ctx, Geometry, Placement, UnitInfo, Victim};
use crate::stats::as_f64;
use crate::{UnitId, UnitView};
use std::collections::VecDeque;

const SAMPLE: u64 = 100;
const MAX_GROUPS: usize = 6;
const NOT_QUEUED: u16 = u16::MAX;
const NO_STAMP: u64 = u64::MAX;

/// Interval survival function from the UID: a Kaplan-Meier estimate over interval bins, where
/// a page's last write in the window is censored at the window's end (its next write, if any,
/// is not seen). Counting censored writes as "survives forever" would overstate survival.
struct Survival {
    /// `s[t]` = P(interval >= t bins).
    s: Vec<f64>,
    unit: f64,
}

impl Survival {
    fn new(intervals: &[u64], censored: &[u64], unit: u64) -> Survival {
        assert_eq!(intervals.len(), censored.len(), "one bin scale");
        let mut at_risk: u64 = intervals.iter().sum::<u64>() + censored.iter().sum::<u64>();
        let mut s = vec![1.0; intervals.len() + 1];
        for t in 0..intervals.len() {
            let deaths = intervals[t];
            s[t + 1] = if at_risk == 0 {
                s[t]
            } else {
                s[t] * (1.0 - as_f64(deaths) / as_f64(at_risk))
            };
            at_risk -= deaths + censored[t];
            debug_assert!(s[t + 1] <= s[t] && s[t + 1] >= 0.0, "survival never rises");
        }
        Survival {
            s,
            unit: as_f64(unit),
        }
    }
    /// P(interval > x user writes).
    fn at(&self, x: f64) -> f64 {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a non-negative bucket index, clamped below"
        )]
        let t = ((x / self.unit).floor().max(0.0) as usize + 1).min(self.s.len() - 1);
        self.s[t]
    }
}

/// The model's inputs for one window.
struct Model {
    s: Survival,
    /// The UID window: cycles beyond it are not observed.
    window: f64,
    unit_pages: f64,
    units: f64,
    live: f64,
    hot_share: f64,
    hot_units: f64,
}

impl Model {
    /// Predicted WAF of non-last group sizes `sizes` (units), the last group taking the rest.
    fn waf(&self, sizes: &[u32]) -> f64 {
        self.eval(sizes).0
    }

    /// Predicted WAF and the valid ratio of every non-last group at collection. A
    /// configuration whose FIFO cycles add up beyond the UID window is not predictable (its
    /// survival function is unknown there): infinite WAF.
    fn eval(&self, sizes: &[u32]) -> (f64, Vec<f64>) {
        let mut rate = 1.0 - self.hot_share;
        let (mut cum, mut copies, mut data, mut used) = (0.0, 0.0, 0.0, 0.0);
        let mut ratios = Vec::with_capacity(sizes.len());
        for &s in sizes {
            let s = f64::from(s);
            let cycle = s * self.unit_pages / rate.max(1e-12);
            let before = self.s.at(cum);
            cum += cycle;
            if cum > self.window {
                return (f64::INFINITY, ratios);
            }
            let v = if before > 0.0 {
                self.s.at(cum) / before
            } else {
                0.0
            };
            debug_assert!((0.0..=1.0 + 1e-9).contains(&v), "a valid ratio, got {v}");
            ratios.push(v);
            copies += rate * v;
            data += s * self.unit_pages * (1.0 + v) / 2.0;
            used += s;
            rate *= v;
        }
        let last_units = self.units - used - self.hot_units;
        let last_data = self.live - data - self.hot_units * self.unit_pages / 2.0;
        if last_units <= 1.0 {
            return (f64::INFINITY, ratios);
        }
        let x = if last_data > 0.0 {
            crate::lambert_victim_ratio(last_units * self.unit_pages / last_data)
        } else {
            0.0
        };
        if x >= 1.0 {
            return (f64::INFINITY, ratios);
        }
        copies += rate * x / (1.0 - x);
        ratios.push(x);
        (1.0 + copies, ratios)
    }

    /// Group configuration search: the non-last sizes and their predicted WAF.
    fn search(&self) -> (Vec<u32>, f64) {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "half the unit count, positive"
        )]
        let max = (self.units / 2.0) as u32;
        let mut grid: Vec<u32> = Vec::new();
        let mut s = 1u32;
        while s <= max {
            grid.push(s);
            s = (s + 1).max(s + s / 4);
        }
        let mut best = (Vec::new(), self.waf(&[]));
        let mut sizes: Vec<u32> = Vec::new();
        for _ in 1..MAX_GROUPS {
            let pick = grid
                .iter()
                .map(|&g| {
                    let mut t = sizes.clone();
                    t.push(g);
                    (g, self.waf(&t))
                })
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let Some((g, w)) = pick else { break };
            sizes.push(g);
            if w < best.1 * 0.98 {
                best = (sizes.clone(), w);
            } else {
                break;
            }
        }
        best
    }
}

/// MiDAS placement (see the module docs).
pub struct MiDas {
    geo: Geometry,
    /// Chain groups: classes 1..=groups, the last is `groups`.
    groups: u16,
    /// Designated sizes (units) of HOT (index 0) and the non-last groups.
    size: Vec<u32>,
    queue: Vec<VecDeque<UnitId>>,
    qclass: Vec<u16>,
    count: Vec<u32>,
    victim_class: u16,
    hf: Vec<u8>,
    hot_age: f64,
    hot_age_sum: f64,
    hot_age_n: u64,
    hot_writes: u64,
    user_writes: u64,
    stamp: Vec<u64>,
    hist: Vec<u64>,
    window_end: u64,
    predicted: f64,
    /// The model's valid ratio per class at collection (index = class; HOT = 0).
    expected: Vec<f64>,
    /// Observed (sum of victim valid ratios, victims) per class since the last window.
    observed: Vec<(f64, u64)>,
    runs: u32,
    merges: u32,
}

impl Default for MiDas {
    fn default() -> Self {
        MiDas::new()
    }
}

impl MiDas {
    /// MiDAS with up to 6 chain groups plus HOT (7 classes).
    #[must_use]
    pub fn new() -> Self {
        MiDas {
            geo: Geometry::default(),
            groups: 2,
            size: Vec::new(),
            queue: Vec::new(),
            qclass: Vec::new(),
            count: Vec::new(),
            victim_class: 0,
            hf: Vec::new(),
            hot_age: 0.0,
            hot_age_sum: 0.0,
            hot_age_n: 0,
            hot_writes: 0,
            user_writes: 0,
            stamp: Vec::new(),
            hist: Vec::new(),
            window_end: 0,
            predicted: f64::NAN,
            expected: Vec::new(),
            observed: Vec::new(),
            runs: 0,
            merges: 0,
        }
    }

    fn unit_interval(&self) -> u64 {
        u64::from(self.geo.unit_pages / 4).max(1)
    }

    fn window(&self) -> u64 {
        self.geo.logical_pages.max(1)
    }

    /// Units that hold data: all but one open unit per class and as many reserved free ones
    /// (the FTL keeps a free unit per class for GC).
    fn usable_units(&self) -> u32 {
        self.geo
            .units
            .saturating_sub(2 * u32::from(self.classes()))
            .max(4)
    }

    fn pop_fifo(&mut self, c: usize) -> Option<UnitId> {
        let class = u16::try_from(c).expect("few classes");
        while let Some(u) = self.queue[c].pop_front() {
            if self.qclass[u as usize] == class {
                return Some(u);
            }
        }
        None
    }

    /// The least valid unit of the last group (the first in queue order among equals).
    fn least_valid_last(&self, view: &dyn UnitView) -> Option<UnitId> {
        // One GC round scans the whole last group (most units): read the view's table when it
        // has one rather than make a virtual call per unit.
        match view.valid_table() {
            Some(t) => self.least_valid_last_by(|u| t[u as usize]),
            None => self.least_valid_last_by(|u| view.valid(u)),
        }
        .filter(|&u| view.valid(u) < view.unit_capacity())
    }

    fn least_valid_last_by(&self, valid: impl Fn(UnitId) -> u32) -> Option<UnitId> {
        let last = usize::from(self.groups);
        let mut best: Option<(UnitId, u32)> = None;
        for c in last..self.queue.len() {
            let class = u16::try_from(c).expect("few classes");
            for &u in &self.queue[c] {
                if self.qclass[u as usize] != class {
                    continue;
                }
                let v = valid(u);
                if best.is_none_or(|(_, bv)| v < bv) {
                    best = Some((u, v));
                }
            }
        }
        best.map(|(u, _)| u)
    }

    /// MiDAS's error check ("irregular pattern"): a chain group whose observed valid ratio at
    /// collection exceeds the model's by 0.1 or more is merged, with every later group, into
    /// the last group. Returns whether it merged.
    fn error_check(&mut self) -> bool {
        for g in 1..=usize::from(self.groups) {
            if g == usize::from(self.groups) && g == 1 {
                break;
            }
            let (sum, n) = self.observed[g];
            if n > 0
                && self
                    .expected
                    .get(g)
                    .is_some_and(|&e| sum / as_f64(n) - e >= 0.1)
            {
                // A mispredicted last group: merge the group before it.
                let g = g.min(usize::from(self.groups) - 1).max(1);
                self.groups = u16::try_from(g).expect("few groups");
                self.size.truncate(g);
                self.expected.truncate(g);
                self.merges += 1;
                return true;
            }
        }
        false
    }

    fn run_model(&mut self, ctx: &Ctx) {
        let usable = self.usable_units();
        let hot_share = if self.user_writes == 0 {
            0.0
        } else {
            as_f64(self.hot_writes) / as_f64(self.user_writes)
        };
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a small positive unit count"
        )]
        let hot_units = ((f64::from(usable) * hot_share * 0.1).round() as u32).max(2);
        let model = Model {
            s: self.survival(ctx.now),
            window: as_f64(self.window()),
            unit_pages: f64::from(self.geo.unit_pages),
            units: f64::from(usable),
            live: as_f64(ctx.live),
            hot_share,
            hot_units: f64::from(hot_units),
        };
        let (sizes, waf) = model.search();
        if waf.is_finite() {
            let (_, ratios) = model.eval(&sizes);
            assert_eq!(
                ratios.len(),
                sizes.len() + 1,
                "a ratio per group and the last"
            );
            self.groups = u16::try_from(sizes.len() + 1).expect("at most 6 groups");
            self.size = std::iter::once(hot_units).chain(sizes).collect();
            self.expected = std::iter::once(0.0).chain(ratios).collect();
            self.predicted = waf;
        }
        self.runs += 1;
    }

    /// The survival function of this window: intervals seen, and each sampled page's last
    /// write censored at `now`.
    fn survival(&self, now: u64) -> Survival {
        let mut censored = vec![0u64; self.hist.len()];
        let last = censored.len() - 1;
        for &st in self.stamp.iter().filter(|&&st| st != NO_STAMP) {
            let t = usize::try_from((now - st) / self.unit_interval()).unwrap_or(last);
            censored[t.min(last)] += 1;
        }
        Survival::new(&self.hist, &censored, self.unit_interval())
    }

    fn end_window(&mut self, ctx: &Ctx) {
        if !self.error_check() {
            self.run_model(ctx);
        }
        self.observed.iter_mut().for_each(|o| *o = (0.0, 0));
        if self.hot_age_n > 0 {
            let new = self.hot_age_sum / as_f64(self.hot_age_n);
            self.hot_age = if new >= 2.0 * self.hot_age {
                1.5 * self.hot_age
            } else {
                f64::midpoint(new, self.hot_age)
            };
        }
        self.hot_age_sum = 0.0;
        self.hot_age_n = 0;
        self.hot_writes = 0;
        self.user_writes = 0;
        self.hist.iter_mut().for_each(|h| *h = 0);
        self.stamp.iter_mut().for_each(|s| *s = NO_STAMP);
        self.window_end = ctx.now + self.window();
    }

    fn sample(&mut self, page: u64, now: u64) {
        if page % SAMPLE != 0 || now <= self.window_end - self.window() {
            return;
        }
        let i = idx(page / SAMPLE);
        if self.stamp[i] != NO_STAMP {
            let t = (now - self.stamp[i]) / self.unit_interval();
            let b = usize::try_from(t)
                .unwrap_or(usize::MAX)
                .min(self.hist.len() - 1);
            self.hist[b] += 1;
        }
        self.stamp[i] = now;
    }

    /// Chain groups in use and the designated sizes (HOT first), for reports and tests.
    #[must_use]
    pub fn configuration(&self) -> (u16, Vec<u32>) {
        (self.groups, self.size.clone())
    }
}

impl Placement for MiDas {
    fn wants_requests(&self) -> bool {
        false
    }
    fn prefetch(&self, page: u64) {
        crate::prefetch::line(&self.hf, idx(page));
    }
    fn gc_reads_state(&self) -> bool {
        // Only moves out of HOT and group 1 touch the hot filter (`on_gc_write`).
        self.victim_class <= 1
    }
    fn chooses_victims(&self) -> bool {
        // `victim` answers a unit or nothing, never the policy.
        true
    }
    fn gc_class(&self) -> Option<u16> {
        // Past group 1 `on_gc_write` leaves the hot filter alone and `classify` depends on
        // the victim's class only.
        let c = self.victim_class;
        (c >= 2).then(|| (c + 1).min(self.groups))
    }
    fn memory_bytes(&self) -> u64 {
        [
            super::bytes_of(&self.hf),
            super::bytes_of(&self.stamp),
            super::bytes_of(&self.hist),
            super::bytes_of(&self.count),
            super::bytes_of(&self.qclass),
            self.queue
                .iter()
                .map(|q| (q.capacity() * std::mem::size_of::<UnitId>()) as u64)
                .sum(),
        ]
        .iter()
        .sum()
    }
    fn name(&self) -> String {
        "midas".into()
    }
    fn classes(&self) -> u16 {
        1 + u16::try_from(MAX_GROUPS).expect("6")
    }
    fn init(&mut self, geo: &Geometry) {
        self.geo = *geo;
        let classes = usize::from(self.classes());
        self.queue = vec![VecDeque::new(); classes];
        self.count = vec![0; classes];
        self.observed = vec![(0.0, 0); classes];
        self.qclass = vec![NOT_QUEUED; geo.units as usize];
        self.hf = crate::hugepage::filled(idx(geo.logical_pages), 0);
        self.hot_age = as_f64(geo.logical_pages);
        self.stamp = vec![NO_STAMP; idx(geo.logical_pages / SAMPLE + 1)];
        let entries = self.window() / self.unit_interval() + 2;
        self.hist = vec![0; idx(entries)];
        self.groups = 2;
        self.size = vec![2, (self.usable_units() / 10).max(2)];
        // The first window starts after the sequential fill.
        self.window_end = geo.logical_pages + self.window();
    }
    fn on_user_write(&mut self, page: u64, ctx: &Ctx) {
        self.sample(page, ctx.now);
        if ctx.now >= self.window_end {
            self.end_window(ctx);
        }
    }
    fn on_gc_write(&mut self, page: u64, _ctx: &Ctx) {
        let h = &mut self.hf[idx(page)];
        match self.victim_class {
            0 => *h = h.saturating_sub(2),
            1 => *h = h.saturating_sub(1),
            _ => {}
        }
    }
    fn classify(&mut self, is_gc: bool, page: u64, _ctx: &Ctx) -> u16 {
        if is_gc {
            let c = self.victim_class;
            return if c == 0 { 1 } else { (c + 1).min(self.groups) };
        }
        self.user_writes += 1;
        if self.hf[idx(page)] >= 3 {
            self.hot_writes += 1;
            0
        } else {
            1
        }
    }
    fn wants_invalidate(&self) -> bool {
        true
    }
    fn on_invalidate(&mut self, page: u64, unit: &UnitInfo, ctx: &Ctx) {
        let h = &mut self.hf[idx(page)];
        match unit.class {
            0 => *h = (*h + 1).min(3),
            1 => {
                let age = if unit.sealed {
                    ctx.now - unit.sealed_at
                } else {
                    0
                };
                if as_f64(age) <= self.hot_age {
                    *h = (*h + 1).min(3);
                } else {
                    *h = h.saturating_sub(1);
                }
            }
            _ => {}
        }
    }
    fn on_seal(&mut self, unit: &UnitInfo, _ctx: &Ctx) {
        let c = unit.class;
        assert_eq!(
            self.qclass[unit.unit as usize], NOT_QUEUED,
            "unit sealed twice"
        );
        self.qclass[unit.unit as usize] = c;
        self.queue[usize::from(c)].push_back(unit.unit);
        self.count[usize::from(c)] += 1;
    }
    fn on_collect(&mut self, unit: &UnitInfo, ctx: &Ctx) {
        self.victim_class = unit.class;
        let o = &mut self.observed[usize::from(unit.class)];
        o.0 += f64::from(unit.valid) / f64::from(unit.capacity.max(1));
        o.1 += 1;
        let q = &mut self.qclass[unit.unit as usize];
        if *q != NOT_QUEUED {
            assert!(self.count[usize::from(*q)] > 0, "queued count underflow");
            self.count[usize::from(*q)] -= 1;
            *q = NOT_QUEUED;
        }
        if unit.class == 0 {
            self.hot_age_sum += as_f64(ctx.now - unit.sealed_at);
            self.hot_age_n += 1;
        }
    }
    fn victim(&mut self, view: &dyn UnitView) -> Victim {
        assert_eq!(
            self.size.len(),
            usize::from(self.groups),
            "a size for HOT and each FIFO group"
        );
        for c in 0..usize::from(self.groups) {
            if self.count[c] > self.size[c] {
                if let Some(u) = self.pop_fifo(c) {
                    return Victim::Unit(u);
                }
            }
        }
        match self.least_valid_last(view) {
            Some(u) => Victim::Unit(u),
            // Nothing reclaimable in the last group: the oldest unit of any group.
            None => (0..self.queue.len())
                .find_map(|c| self.pop_fifo(c))
                .map_or(Victim::Nothing, Victim::Unit),
        }
    }
    fn report(&self) -> String {
        let sizes: Vec<String> = self.size.iter().map(u32::to_string).collect();
        // NaN until a model run predicts a finite WAF (the initial configuration is kept).
        let model = if self.predicted.is_finite() {
            format!("{:.3}", self.predicted)
        } else {
            "none finite yet".into()
        };
        format!(
            "midas: {} groups, designated sizes (HOT, G1..) [{}] + last, model WAF {model}, {} model runs, {} merges",
            self.groups,
            sizes.join(", "),
            self.runs,
            self.merges
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_prefers_a_group_for_hot_data() {
        // Half the writes rewrite within 1000 user writes, half never (within the window).
        let mut hist = vec![0u64; 100];
        hist[3] = 5000;
        let mut censored = vec![0u64; 100];
        censored[99] = 5000;
        let s = Survival::new(&hist, &censored, 256);
        assert!((s.at(0.0) - 1.0).abs() < 1e-9);
        assert!((s.at(10_000.0) - 0.5).abs() < 1e-9);
        // Censoring early (half the pages last written 2 bins before the end) is not survival.
        let mut early = vec![0u64; 100];
        early[1] = 5000;
        let k = Survival::new(&hist, &early, 256);
        assert!(
            k.at(256.0 * 5.0) < 1e-9,
            "everyone still at risk died in bin 3"
        );
        let m = Model {
            s,
            window: 25_600.0,
            unit_pages: 1024.0,
            units: 1000.0,
            live: 800_000.0,
            hot_share: 0.0,
            hot_units: 2.0,
        };
        let (sizes, waf) = m.search();
        assert!(
            !sizes.is_empty(),
            "a FIFO group for the short intervals pays off"
        );
        assert!(waf < m.waf(&[]), "{waf} vs {}", m.waf(&[]));
        assert!((crate::lambert_victim_ratio(1.0) - 1.0).abs() < 1e-12);
        assert!(crate::lambert_victim_ratio(2.0) < 0.21);
    }
}
