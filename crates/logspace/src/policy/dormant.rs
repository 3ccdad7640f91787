//! A policy kept for its name only, for spaces whose victims someone else chooses.

use crate::{UnitId, UnitView, VictimPolicy};

/// The configured policy, never asked: a placement that chooses every victim itself
/// ([`crate::Placement::chooses_victims`], MiDAS) makes the space's policy dead weight, yet
/// greedy's bucket lists would still move a unit on every overwrite of one of its pages (a
/// virtual call and two list splices per host write, ~5% of a MiDAS run). The name stays the
/// configured one (results print it); selecting is refused, so a caller that did ask after all
/// gets no victim rather than a wrong one.
pub struct Dormant {
    name: String,
}

impl Dormant {
    /// `policy`, dormant.
    #[must_use]
    pub fn new(policy: &dyn VictimPolicy) -> Self {
        Dormant {
            name: policy.name(),
        }
    }
}

impl VictimPolicy for Dormant {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn init(&mut self, _units: u32, _capacity: u32) {}
    fn on_seal(&mut self, _u: UnitId, _view: &dyn UnitView) {}
    fn on_valid_change(&mut self, _u: UnitId, _old: u32, _new: u32) {}
    fn on_remove(&mut self, _u: UnitId, _view: &dyn UnitView) {}
    fn select(&mut self, _view: &dyn UnitView) -> Option<UnitId> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::Dormant;
    use crate::{Greedy, Space, SpaceError, VictimPolicy};

    /// A dormant greedy keeps greedy's name, follows every event without a structure, and
    /// never picks: the space answers "no victim" where greedy would pick the emptiest unit.
    #[test]
    fn dormant_keeps_the_name_and_never_picks() {
        let d = Dormant::new(&Greedy::default());
        assert_eq!(d.name(), "greedy");
        let mut space = Space::new(4, 8, Box::new(d));
        for valid in [8, 2] {
            let u = space.open_unit(0).unwrap();
            space.add_valid(u, valid);
            space.seal(u);
        }
        space.sub_valid(0, 3);
        assert_eq!(space.pick_victim(), Err(SpaceError::NoVictim));
        space.take_victim(1).unwrap();
        assert_eq!(space.policy_name(), "greedy");
    }
}
