//! NoWA's DB GC victims (how-to-write-to-ssds.md section 5): whole groups of units written
//! together, so that every unit multiplexed into the same SSD superblocks is invalidated
//! together and the SSD never copies.

use crate::{UnitId, UnitView, VictimPolicy};
use std::collections::{HashMap, VecDeque};

/// Greedy over groups ([`UnitView::group`]): the group with the least valid data per sealed
/// unit wins; groups with an open unit (not fully written) are skipped, and so are groups
/// whose siblings wait for deferred compensation. A round's batch is the whole group, least
/// valid unit first: that one is the GC victim proper, the others are compensation writes
/// (the writer tells them apart by position). With `defer` only the first is taken now; the
/// siblings wait ([`VictimPolicy::take_deferred`]) until the writer decides the SSD's free
/// space runs short.
#[derive(Debug, Default)]
pub struct GroupGreedy {
    defer: bool,
    sealed: Vec<bool>,
    /// Groups waiting for their compensation, oldest first, with their sibling units.
    pending: VecDeque<(u64, Vec<UnitId>)>,
}

impl GroupGreedy {
    /// Whole groups per round (`defer` false), or the least valid unit now and its siblings
    /// later (`defer` true).
    #[must_use]
    pub fn new(defer: bool) -> Self {
        GroupGreedy {
            defer,
            ..GroupGreedy::default()
        }
    }

    fn take(&mut self, u: UnitId) {
        let s = &mut self.sealed[u as usize];
        assert!(*s, "unit {u} taken but not a candidate");
        *s = false;
    }

    /// The best group's sealed units, least valid first (ties: lower unit first).
    fn best_group(&self, view: &dyn UnitView) -> Option<(u64, Vec<UnitId>)> {
        // Group -> (valid sum of its sealed units, those units, has an open unit).
        let mut groups: HashMap<u64, (u64, Vec<UnitId>, bool)> = HashMap::new();
        for (u, &sealed) in (0u32..).zip(&self.sealed) {
            let g = view.group(u);
            if self.pending.iter().any(|p| p.0 == g) {
                continue;
            }
            if sealed {
                let e = groups.entry(g).or_default();
                e.0 += u64::from(view.valid(u));
                e.1.push(u);
            } else if view.is_open(u) {
                groups.entry(g).or_default().2 = true;
            }
        }
        let cap = u64::from(view.unit_capacity());
        let n = |zs: &Vec<UnitId>| u64::try_from(zs.len()).expect("unit counts fit u64");
        let (g, (_, mut zs, _)) = groups
            .into_iter()
            .filter(|(_, (v, zs, open))| !open && !zs.is_empty() && *v < cap * n(zs))
            .min_by_key(|(g, (v, zs, _))| (*v * 1024 / n(zs), *g))?;
        zs.sort_by_key(|&u| view.valid(u));
        debug_assert!(
            zs.iter().all(|&u| view.group(u) == g && !view.is_open(u)),
            "a group's sealed units"
        );
        Some((g, zs))
    }
}

impl VictimPolicy for GroupGreedy {
    fn name(&self) -> String {
        if self.defer {
            "group-greedy-deferred".into()
        } else {
            "group-greedy".into()
        }
    }
    fn init(&mut self, units: u32, _capacity: u32) {
        self.sealed = vec![false; units as usize];
        self.pending.clear();
    }
    fn on_seal(&mut self, u: UnitId, _view: &dyn UnitView) {
        self.sealed[u as usize] = true;
    }
    fn on_valid_change(&mut self, _u: UnitId, _old: u32, _new: u32) {}
    fn on_remove(&mut self, u: UnitId, _view: &dyn UnitView) {
        self.sealed[u as usize] = false;
    }
    /// The GC victim proper of the best group; its siblings stay candidates (a single pick
    /// has no room for compensation: use [`VictimPolicy::select_batch`]).
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId> {
        let (_, zs) = self.best_group(view)?;
        self.take(zs[0]);
        Some(zs[0])
    }
    fn select_batch(&mut self, view: &dyn UnitView, out: &mut Vec<UnitId>) {
        let Some((g, mut zs)) = self.best_group(view) else {
            return;
        };
        assert!(
            self.pending.iter().all(|p| p.0 != g),
            "group {g} chosen while its siblings wait"
        );
        if self.defer && zs.len() > 1 {
            let v = zs.remove(0);
            self.take(v);
            out.push(v);
            self.pending.push_back((g, zs));
            return;
        }
        for z in zs {
            self.take(z);
            out.push(z);
        }
    }
    fn take_deferred(&mut self, view: &dyn UnitView, out: &mut Vec<UnitId>) {
        let Some((g, zs)) = self.pending.pop_front() else {
            return;
        };
        for z in zs {
            // Still a sealed unit of that group (always, unless the writer reset it).
            if self.sealed[z as usize] && view.group(z) == g {
                self.take(z);
                out.push(z);
            }
        }
    }
    fn deferred(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Space, SpaceError, UnitState};

    /// A group of sealed units with the given valid amounts.
    fn group(s: &mut Space, g: u64, valid: &[u32]) -> Vec<UnitId> {
        valid
            .iter()
            .map(|&v| {
                let u = s.open_unit(0).unwrap();
                s.set_group(u, g);
                s.add_valid(u, v);
                s.seal(u);
                u
            })
            .collect()
    }

    #[test]
    fn whole_groups_least_valid_per_unit_first() {
        let mut s = Space::new(16, 100, Box::new(GroupGreedy::new(false)));
        let a = group(&mut s, 1, &[50, 10, 60]); // 40 per unit
        let b = group(&mut s, 2, &[30, 80]); // 55 per unit
        let _full = group(&mut s, 3, &[100, 100]);
        // An open unit keeps its group out.
        let o = group(&mut s, 4, &[0, 0]);
        let open = s.open_unit(0).unwrap();
        s.set_group(open, 4);
        let mut out = Vec::new();
        s.pick_victims(&mut out).unwrap();
        assert_eq!(
            out,
            vec![a[1], a[0], a[2]],
            "group 1, least valid unit first"
        );
        assert!(out.iter().all(|&u| s.state(u) == UnitState::InGc));
        out.clear();
        s.pick_victims(&mut out).unwrap();
        assert_eq!(out, vec![b[0], b[1]]);
        out.clear();
        assert_eq!(s.pick_victims(&mut out), Err(SpaceError::NoVictim), "{o:?}");
        s.check_invariants();
    }

    #[test]
    fn deferred_siblings_wait_and_come_back_oldest_first() {
        let mut s = Space::new(16, 100, Box::new(GroupGreedy::new(true)));
        let a = group(&mut s, 7, &[20, 5, 40]);
        let b = group(&mut s, 8, &[30, 35]);
        let mut out = Vec::new();
        s.pick_victims(&mut out).unwrap();
        assert_eq!(out, vec![a[1]], "only the least valid unit now");
        assert_eq!(s.deferred(), 1);
        out.clear();
        s.pick_victims(&mut out).unwrap();
        assert_eq!(out, vec![b[0]], "group 7 waits: not a candidate again");
        // A sibling reset by the writer (erased) drops out of its set.
        s.sub_valid(b[1], 35);
        s.erase(b[1]);
        out.clear();
        s.pick_deferred(&mut out).unwrap();
        assert_eq!(out, vec![a[0], a[2]], "oldest set first, least valid first");
        out.clear();
        assert_eq!(
            s.pick_deferred(&mut out),
            Err(SpaceError::NoVictim),
            "b's sibling is gone"
        );
        assert_eq!(s.deferred(), 0);
        s.check_invariants();
    }

    #[test]
    fn ungrouped_units_are_groups_of_one() {
        let mut s = Space::new(8, 10, Box::new(GroupGreedy::new(false)));
        for v in [7, 3, 9] {
            let u = s.open_unit(0).unwrap();
            s.add_valid(u, v);
            s.seal(u);
        }
        let mut out = Vec::new();
        s.pick_victims(&mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(s.valid(out[0]), 3, "greedy over single units");
    }
}
