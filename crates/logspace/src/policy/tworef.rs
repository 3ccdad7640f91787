//! The 2R policies of the SSD-iq reference simulator (`gabriel-haas/ssdiq`, `sim/TwoR.hpp`),
//! reimplemented from its behavior:
//!
//! - **2R-FIFO**: one FIFO of full units (host-written ones appended when they fill, GC-written
//!   ones re-appended after compaction). A persistent cursor scans it; a unit whose valid ratio
//!   is below `BLK_UTIL` joins the batch, others are skipped *and left in place*; after
//!   `0.7 x len` steps since the last reset the cursor returns to the head and `BLK_UTIL` rises
//!   by 0.05. The batch is complete when its garbage reaches one unit. `BLK_UTIL` starts at 0.5
//!   and is set to 0.7 after every GC round (so every round but the first starts at 0.7).
//!   In the reference, relocated blocks are inserted after a "cold block pointer" that starts
//!   at `end()`; inserting there and stepping past the new element leaves it at `end()`, so
//!   every relocated block goes to the tail. We do the same (append at the tail).
//! - **2R-Greedy**: two regions, normal (class 0: units the host filled) and cold (units filled
//!   by GC). The region to clean: normal if the cold region holds less than one unit of
//!   garbage, cold if the normal region does, else the region whose least valid unit is less
//!   valid (ties: cold). Victims: the least valid units of that region until their garbage
//!   reaches one unit. Among units of equal valid count we take the one that joined its region
//!   first, as the reference's `min_element` over its region vectors does.

use super::basic::Buckets;
use super::NONE;
use crate::{UnitId, UnitView, VictimPolicy};

/// SSD-iq reference 2R-FIFO victim batches (see the module docs).
pub struct TwoRFifo {
    prev: Vec<u32>,
    next: Vec<u32>,
    linked: Vec<bool>,
    head: u32,
    tail: u32,
    len: usize,
    /// Next unit the scan looks at; `NONE` = the end of the list.
    cursor: u32,
    /// Steps since the cursor last returned to the head (the reference's static counter).
    steps: usize,
    util: f64,
    depth: f64,
}

impl Default for TwoRFifo {
    fn default() -> Self {
        TwoRFifo {
            prev: Vec::new(),
            next: Vec::new(),
            linked: Vec::new(),
            head: NONE,
            tail: NONE,
            len: 0,
            cursor: NONE,
            steps: 0,
            util: 0.5,
            depth: 0.7,
        }
    }
}

impl TwoRFifo {
    fn push_back(&mut self, u: UnitId) {
        assert!(!self.linked[u as usize], "unit {u} queued twice");
        self.linked[u as usize] = true;
        self.prev[u as usize] = self.tail;
        self.next[u as usize] = NONE;
        if self.tail == NONE {
            self.head = u;
        } else {
            self.next[self.tail as usize] = u;
        }
        self.tail = u;
        self.len += 1;
    }

    fn unlink(&mut self, u: UnitId) {
        assert!(self.linked[u as usize], "unit {u} is not queued");
        let (p, n) = (self.prev[u as usize], self.next[u as usize]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        if self.cursor == u {
            self.cursor = n;
        }
        self.linked[u as usize] = false;
        self.len -= 1;
    }

    /// Units in queue order (tests).
    #[cfg(test)]
    pub(crate) fn order(&self) -> Vec<UnitId> {
        let mut v = Vec::new();
        let mut u = self.head;
        while u != NONE {
            v.push(u);
            u = self.next[u as usize];
        }
        v
    }
}

/// Garbage held by the units already in `out`.
fn garbage_of(view: &dyn UnitView, out: &[UnitId]) -> u64 {
    let cap = view.unit_capacity();
    out.iter().map(|&u| u64::from(cap - view.valid(u))).sum()
}

impl VictimPolicy for TwoRFifo {
    fn name(&self) -> String {
        "2r-fifo".into()
    }
    fn init(&mut self, units: u32, _capacity: u32) {
        let n = units as usize;
        self.prev = vec![NONE; n];
        self.next = vec![NONE; n];
        self.linked = vec![false; n];
    }
    fn on_seal(&mut self, u: UnitId, _view: &dyn UnitView) {
        self.push_back(u);
    }
    fn on_valid_change(&mut self, _u: UnitId, _old: u32, _new: u32) {}
    fn on_remove(&mut self, u: UnitId, _view: &dyn UnitView) {
        self.unlink(u);
    }
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        let mut out = Vec::new();
        self.select_batch(view, &mut out);
        // Single-victim callers get the first; the rest go back to the tail.
        let first = out.first().copied();
        for &u in out.iter().skip(1) {
            self.push_back(u);
        }
        first
    }
    fn select_batch(&mut self, view: &dyn UnitView, out: &mut Vec<UnitId>) {
        let cap = view.unit_capacity();
        let mut garbage = garbage_of(view, out);
        let start = out.len();
        if self.cursor == NONE {
            self.cursor = self.head;
            self.steps = 0;
        }
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "the reference's static_cast<size_t>(0.7 * size): non-negative, below len"
        )]
        let threshold = ((self.depth * self.len as f64) as usize).max(1);
        while garbage < u64::from(cap) && self.cursor != NONE {
            let v = self.cursor;
            let valid = view.valid(v);
            if !out.contains(&v) && f64::from(valid) / f64::from(cap) < self.util {
                out.push(v);
                garbage += u64::from(cap - valid);
            }
            self.cursor = self.next[v as usize];
            self.steps += 1;
            if self.steps >= threshold {
                self.cursor = self.head;
                self.steps = 0;
                self.util += 0.05;
                if self.util > 2.0 {
                    // Nothing reclaimable anywhere (the reference would loop forever).
                    break;
                }
            }
        }
        self.util = 0.7;
        for &u in &out[start..] {
            self.unlink(u);
        }
        debug_assert!(
            self.cursor == NONE || self.linked[self.cursor as usize],
            "cursor on a queued unit"
        );
    }
}

/// SSD-iq reference 2R-Greedy victim batches (see the module docs).
#[derive(Default)]
pub struct TwoRGreedy {
    regions: [Buckets; 2],
    region: Vec<u8>,
    count: [u64; 2],
    valid: [u64; 2],
    /// When each unit joined its region: the reference keeps regions as vectors in that
    /// order and `min_element` takes the first of equal units.
    seq: Vec<u64>,
    next_seq: u64,
}

impl TwoRGreedy {
    fn garbage(&self, r: usize, cap: u32) -> u64 {
        self.count[r] * u64::from(cap) - self.valid[r]
    }

    /// The region the reference's `garbageCollectColdRegion` picks: 1 = cold, 0 = normal.
    fn region_to_clean(&mut self, view: &dyn UnitView) -> usize {
        let cap = u64::from(view.unit_capacity());
        let c = view.unit_capacity();
        if self.garbage(1, c) < cap {
            return 0;
        }
        if self.garbage(0, c) < cap {
            return 1;
        }
        let min = |b: &mut Buckets| b.peek_min().map_or(u32::MAX, |u| view.valid(u));
        let (hot, cold) = (min(&mut self.regions[0]), min(&mut self.regions[1]));
        usize::from(hot >= cold)
    }

    fn take(&mut self, u: UnitId, view: &dyn UnitView) {
        let r = usize::from(self.region[u as usize]);
        assert!(self.count[r] > 0, "region {r} is empty");
        self.regions[r].unlink(u);
        self.count[r] -= 1;
        self.valid[r] -= u64::from(view.valid(u));
    }
}

impl VictimPolicy for TwoRGreedy {
    fn name(&self) -> String {
        "2r-greedy".into()
    }
    fn init(&mut self, units: u32, capacity: u32) {
        for b in &mut self.regions {
            b.init(units, capacity);
        }
        self.region = vec![0; units as usize];
        self.seq = vec![0; units as usize];
    }
    fn on_seal(&mut self, u: UnitId, view: &dyn UnitView) {
        let r = usize::from(view.class(u) != 0);
        self.region[u as usize] = u8::from(r == 1);
        debug_assert!(view.valid(u) <= view.unit_capacity());
        let v = view.valid(u);
        self.seq[u as usize] = self.next_seq;
        self.next_seq += 1;
        self.regions[r].link(u, v);
        self.count[r] += 1;
        self.valid[r] += u64::from(v);
    }
    fn on_valid_change(&mut self, u: UnitId, old: u32, new: u32) {
        let r = usize::from(self.region[u as usize]);
        self.regions[r].change(u, old, new);
        self.valid[r] = self.valid[r] + u64::from(new) - u64::from(old);
    }
    fn on_remove(&mut self, u: UnitId, view: &dyn UnitView) {
        self.take(u, view);
    }
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        let r = self.region_to_clean(view);
        let u = self.regions[r]
            .peek_min()
            .or_else(|| self.regions[1 - r].peek_min())?;
        self.take(u, view);
        Some(u)
    }
    fn select_batch(&mut self, view: &dyn UnitView, out: &mut Vec<UnitId>) {
        let cap = u64::from(view.unit_capacity());
        let mut garbage = garbage_of(view, out);
        let r = self.region_to_clean(view);
        while garbage < cap {
            let seq = &self.seq;
            let Some(u) = self.regions[r].min_by_key(|x| seq[x as usize]) else {
                break;
            };
            self.take(u, view);
            garbage += cap - u64::from(view.valid(u));
            out.push(u);
        }
    }
}
