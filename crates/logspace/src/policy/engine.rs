//! Victim policies of the engine's DB GC (the zones of the out-of-place store are units of a
//! `Space` like the FTL's superblocks): one mechanism for both layers.

use super::basic::Greedy;
use crate::{UnitId, UnitView, VictimPolicy};

/// GDT's DB GC (how-to-write-to-ssds.md section 4.2): greedy victims, gathered until their
/// garbage adds up to one unit, so that their valid pages (relocated together in EDT order)
/// fill whole units. Bounded so that the victims' valid data, with the next victim counted as
/// fully valid, fits the free units but one.
#[derive(Default)]
pub struct GreedyUntilUnit {
    greedy: Greedy,
}

impl VictimPolicy for GreedyUntilUnit {
    fn name(&self) -> String {
        "greedy-unit".into()
    }
    fn init(&mut self, units: u32, capacity: u32) {
        self.greedy.init(units, capacity);
    }
    fn on_seal(&mut self, u: UnitId, view: &dyn UnitView) {
        self.greedy.on_seal(u, view);
    }
    fn on_valid_change(&mut self, u: UnitId, old: u32, new: u32) {
        self.greedy.on_valid_change(u, old, new);
    }
    fn on_remove(&mut self, u: UnitId, view: &dyn UnitView) {
        self.greedy.on_remove(u, view);
    }
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        self.greedy.select(view)
    }
    fn select_batch(&mut self, view: &dyn UnitView, out: &mut Vec<UnitId>) {
        let Some(first) = self.greedy.select(view) else {
            return;
        };
        let start = out.len();
        out.push(first);
        let cap = u64::from(view.unit_capacity());
        let budget = u64::from(view.free_units()).saturating_sub(1) * cap;
        let mut valid = u64::from(view.valid(first));
        let mut n = 1u64;
        while n * cap - valid < cap && valid + cap <= budget {
            let Some(next) = self.greedy.select(view) else {
                break;
            };
            valid += u64::from(view.valid(next));
            n += 1;
            out.push(next);
        }
        debug_assert!(
            out[start..]
                .iter()
                .map(|&u| u64::from(view.valid(u)))
                .sum::<u64>()
                == valid,
            "batch valid amount"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Space;

    fn sealed(s: &mut Space, valid: u32) -> UnitId {
        let u = s.open_unit(0).unwrap();
        s.add_valid(u, valid);
        s.seal(u);
        u
    }

    #[test]
    fn gathers_victims_until_one_unit_of_garbage() {
        let mut s = Space::new(16, 100, Box::new(GreedyUntilUnit::default()));
        let a = sealed(&mut s, 70);
        let b = sealed(&mut s, 60);
        let c = sealed(&mut s, 90);
        let full = sealed(&mut s, 100);
        let mut out = Vec::new();
        s.pick_victims(&mut out).unwrap();
        // Garbage 40 + 30 + 10 + 0 never reaches one unit: every sealed unit goes.
        assert_eq!(out, vec![b, a, c, full]);
        // The budget: with 2 free units only one unit's valid data may move.
        let mut s = Space::new(6, 100, Box::new(GreedyUntilUnit::default()));
        let a = sealed(&mut s, 70);
        let _b = sealed(&mut s, 80);
        let _c = sealed(&mut s, 80);
        let _d = sealed(&mut s, 80);
        let mut out = Vec::new();
        s.pick_victims(&mut out).unwrap();
        assert_eq!(out, vec![a]);
    }
}
