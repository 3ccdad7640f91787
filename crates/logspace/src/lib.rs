//! One log-structured space, used by two layers.
//!
//! An SSD's FTL garbage-collects superblocks; an out-of-place database engine garbage-collects
//! its zones. Both are the same mechanism: fixed-size *units* that are written append-only,
//! hold a *valid amount* that only decreases once the unit is sealed, and are reclaimed by
//! copying their valid data elsewhere and erasing them. This crate holds that mechanism once:
//!
//! - [`Space`]: unit states, valid amounts, erase counts, the free list, seal order;
//! - [`VictimPolicy`]: which sealed unit to reclaim next (greedy, cost-benefit, FIFO, ...);
//! - [`VictimHistogram`]: the valid ratio of every victim, the quantity WAF is made of.
//!
//! What a unit's valid amount counts is up to the user: 4 KiB pages for the FTL, bytes for the
//! engine's compressed pages. Placement (which open unit a write goes to) stays with the user,
//! identified here only by a `class` number stored per unit.

mod policy;
pub use policy::{
    CostBenefit, Fifo, Greedy, KGreedy, PolicyKind, PolicyParseError, RandomPolicy,
    SecondChanceFifo, WindowedGreedy,
};

/// Index of a unit (superblock, erase block or zone).
pub type UnitId = u32;

/// Lifecycle of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitState {
    /// Erased, on the free list.
    Free,
    /// Being appended to.
    Open,
    /// Full (or closed): a GC candidate.
    Sealed,
    /// Chosen as a victim; its valid data is being moved out.
    InGc,
}

/// What a victim policy may look at.
pub trait UnitView {
    /// Capacity of every unit, in valid-amount units (pages or bytes).
    fn unit_capacity(&self) -> u32;
    fn valid(&self, u: UnitId) -> u32;
    /// Logical time (the space's write clock) when the unit was sealed.
    fn sealed_at(&self, u: UnitId) -> u64;
    /// The current write clock.
    fn now(&self) -> u64;
    fn class(&self, u: UnitId) -> u16;
}

/// Victim selection. Sealed units are handed to the policy with [`on_seal`](Self::on_seal); every
/// change of a sealed unit's valid amount is reported; [`select`](Self::select) picks one and
/// forgets it.
pub trait VictimPolicy: Send {
    fn name(&self) -> String;
    /// Called once when the space is created, with the number of units.
    fn init(&mut self, units: u32, capacity: u32);
    fn on_seal(&mut self, u: UnitId, view: &dyn UnitView);
    /// A sealed unit's valid amount went from `old` to `new`.
    fn on_valid_change(&mut self, u: UnitId, old: u32, new: u32);
    /// A sealed unit leaves candidacy without being selected (e.g. a host zone reset).
    fn on_remove(&mut self, u: UnitId, view: &dyn UnitView);
    /// Pick a victim among the sealed units and remove it from candidacy.
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId>;
}

/// Errors of the space.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpaceError {
    #[error("no free unit left (the space is full)")]
    NoFreeUnit,
    #[error("GC found no victim with reclaimable space (all sealed units fully valid)")]
    NoVictim,
}

/// Histogram of victim valid ratios, in 1% buckets (bucket 100 = fully valid).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VictimHistogram {
    pub buckets: Vec<u64>,
}

impl Default for VictimHistogram {
    fn default() -> Self {
        VictimHistogram {
            buckets: vec![0; 101],
        }
    }
}

impl VictimHistogram {
    pub fn record(&mut self, valid: u32, capacity: u32) {
        let pct = (valid as u64 * 100 / capacity.max(1) as u64).min(100) as usize;
        self.buckets[pct] += 1;
    }
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }
    /// Mean valid ratio of victims (bucket midpoints), 0 if none.
    pub fn mean_ratio(&self) -> f64 {
        let n = self.count();
        if n == 0 {
            return 0.0;
        }
        let s: f64 = self
            .buckets
            .iter()
            .enumerate()
            .map(|(i, c)| (i as f64 + 0.5).min(100.0) * *c as f64)
            .sum();
        s / n as f64 / 100.0
    }
}

/// Unit metadata and the free list of one log-structured space.
pub struct Space {
    capacity: u32,
    valid: Vec<u32>,
    state: Vec<UnitState>,
    class: Vec<u16>,
    sealed_at: Vec<u64>,
    erases: Vec<u32>,
    /// LIFO free list: a just-erased unit is reused first (wear leveling is out of scope).
    free: Vec<UnitId>,
    policy: Box<dyn VictimPolicy>,
    clock: u64,
    pub victims: VictimHistogram,
}

struct View<'a> {
    capacity: u32,
    valid: &'a [u32],
    sealed_at: &'a [u64],
    class: &'a [u16],
    clock: u64,
}

impl UnitView for View<'_> {
    fn unit_capacity(&self) -> u32 {
        self.capacity
    }
    fn valid(&self, u: UnitId) -> u32 {
        self.valid[u as usize]
    }
    fn sealed_at(&self, u: UnitId) -> u64 {
        self.sealed_at[u as usize]
    }
    fn now(&self) -> u64 {
        self.clock
    }
    fn class(&self, u: UnitId) -> u16 {
        self.class[u as usize]
    }
}

impl Space {
    /// `units` units of `capacity` each, all free, reclaimed by `policy`.
    pub fn new(units: u32, capacity: u32, mut policy: Box<dyn VictimPolicy>) -> Self {
        policy.init(units, capacity);
        Space {
            capacity,
            valid: vec![0; units as usize],
            state: vec![UnitState::Free; units as usize],
            class: vec![0; units as usize],
            sealed_at: vec![0; units as usize],
            erases: vec![0; units as usize],
            free: (0..units).rev().collect(),
            policy,
            clock: 0,
            victims: VictimHistogram::default(),
        }
    }

    fn split(&mut self) -> (View<'_>, &mut dyn VictimPolicy) {
        (
            View {
                capacity: self.capacity,
                valid: &self.valid,
                sealed_at: &self.sealed_at,
                class: &self.class,
                clock: self.clock,
            },
            &mut *self.policy,
        )
    }

    pub fn policy_name(&self) -> String {
        self.policy.name()
    }
    pub fn units(&self) -> u32 {
        self.valid.len() as u32
    }
    pub fn unit_capacity(&self) -> u32 {
        self.capacity
    }
    pub fn free_units(&self) -> u32 {
        self.free.len() as u32
    }
    #[inline]
    pub fn valid(&self, u: UnitId) -> u32 {
        self.valid[u as usize]
    }
    #[inline]
    pub fn state(&self, u: UnitId) -> UnitState {
        self.state[u as usize]
    }
    pub fn class(&self, u: UnitId) -> u16 {
        self.class[u as usize]
    }
    pub fn erase_count(&self, u: UnitId) -> u32 {
        self.erases[u as usize]
    }
    pub fn erase_counts(&self) -> &[u32] {
        &self.erases
    }
    pub fn total_erases(&self) -> u64 {
        self.erases.iter().map(|&e| e as u64).sum()
    }
    /// The write clock: advanced by the user (e.g. once per host write) for age-aware policies.
    #[inline]
    pub fn tick(&mut self, n: u64) {
        self.clock += n;
    }
    pub fn now(&self) -> u64 {
        self.clock
    }
    pub fn sum_valid(&self) -> u64 {
        self.valid.iter().map(|&v| v as u64).sum()
    }

    /// Take a free unit and open it for `class`.
    pub fn open_unit(&mut self, class: u16) -> Result<UnitId, SpaceError> {
        let u = self.free.pop().ok_or(SpaceError::NoFreeUnit)?;
        debug_assert_eq!(self.state[u as usize], UnitState::Free);
        debug_assert_eq!(self.valid[u as usize], 0);
        self.state[u as usize] = UnitState::Open;
        self.class[u as usize] = class;
        Ok(u)
    }

    /// The unit [`Space::open_unit`] would open next, without opening it.
    pub fn peek_free(&self) -> Option<UnitId> {
        self.free.last().copied()
    }

    /// Open a specific free unit (ZNS: the host names the zone).
    pub fn open_specific(&mut self, u: UnitId, class: u16) -> Result<(), SpaceError> {
        let pos = self
            .free
            .iter()
            .rposition(|&f| f == u)
            .ok_or(SpaceError::NoFreeUnit)?;
        self.free.swap_remove(pos);
        self.state[u as usize] = UnitState::Open;
        self.class[u as usize] = class;
        Ok(())
    }

    /// A full (or closed) open unit becomes a GC candidate.
    pub fn seal(&mut self, u: UnitId) {
        assert_eq!(
            self.state[u as usize],
            UnitState::Open,
            "sealing unit {u} that is not open"
        );
        self.state[u as usize] = UnitState::Sealed;
        self.sealed_at[u as usize] = self.clock;
        let (view, policy) = self.split();
        policy.on_seal(u, &view);
    }

    #[inline]
    pub fn add_valid(&mut self, u: UnitId, n: u32) {
        let v = &mut self.valid[u as usize];
        *v += n;
        debug_assert!(
            *v <= self.capacity,
            "unit {u} valid {} > capacity {}",
            *v,
            self.capacity
        );
        if self.state[u as usize] == UnitState::Sealed {
            let new = *v;
            self.policy.on_valid_change(u, new - n, new);
        }
    }

    #[inline]
    pub fn sub_valid(&mut self, u: UnitId, n: u32) {
        let v = &mut self.valid[u as usize];
        assert!(*v >= n, "unit {u}: valid underflow ({} - {n})", *v);
        *v -= n;
        if self.state[u as usize] == UnitState::Sealed {
            let new = *v;
            self.policy.on_valid_change(u, new + n, new);
        }
    }

    /// Choose the next victim and mark it in GC. Records its valid ratio.
    pub fn pick_victim(&mut self) -> Result<UnitId, SpaceError> {
        let (view, policy) = self.split();
        let u = policy.select(&view).ok_or(SpaceError::NoVictim)?;
        assert_eq!(
            self.state[u as usize],
            UnitState::Sealed,
            "policy picked unit {u} that is not sealed"
        );
        self.state[u as usize] = UnitState::InGc;
        self.victims.record(self.valid[u as usize], self.capacity);
        Ok(u)
    }

    /// The unit's data is gone (GC moved it out, or the host reset it): erase it and free it.
    /// Take a specific sealed unit into GC (the caller chose the victim, e.g. NoWA's group
    /// GC in the engine). The policy forgets it; the victim histogram records it.
    pub fn take_victim(&mut self, u: UnitId) -> Result<(), SpaceError> {
        if self.state[u as usize] != UnitState::Sealed {
            return Err(SpaceError::NoVictim);
        }
        let (view, policy) = self.split();
        policy.on_remove(u, &view);
        self.state[u as usize] = UnitState::InGc;
        self.victims.record(self.valid[u as usize], self.capacity);
        Ok(())
    }

    pub fn erase(&mut self, u: UnitId) {
        let st = self.state[u as usize];
        if st == UnitState::Sealed {
            let (view, policy) = self.split();
            policy.on_remove(u, &view);
        }
        assert!(st != UnitState::Free, "erasing free unit {u}");
        assert_eq!(
            self.valid[u as usize], 0,
            "erasing unit {u} that still holds valid data"
        );
        self.state[u as usize] = UnitState::Free;
        self.erases[u as usize] += 1;
        self.free.push(u);
    }

    /// Check the space's own invariants (tests, debug builds).
    pub fn check_invariants(&self) {
        let nfree = self.state.iter().filter(|s| **s == UnitState::Free).count();
        assert_eq!(
            nfree,
            self.free.len(),
            "free list out of sync with unit states"
        );
        for &u in &self.free {
            assert_eq!(self.valid[u as usize], 0, "free unit {u} has valid data");
        }
        for (u, &v) in self.valid.iter().enumerate() {
            assert!(v <= self.capacity, "unit {u} over capacity");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_and_greedy_pick() {
        let mut s = Space::new(4, 10, Box::new(Greedy::default()));
        let a = s.open_unit(0).unwrap();
        s.add_valid(a, 10);
        s.seal(a);
        let b = s.open_unit(0).unwrap();
        s.add_valid(b, 10);
        s.seal(b);
        s.sub_valid(a, 3);
        s.sub_valid(b, 7);
        assert_eq!(s.pick_victim().unwrap(), b);
        s.sub_valid(b, 3);
        s.erase(b);
        assert_eq!(s.free_units(), 3);
        assert_eq!(s.erase_count(b), 1);
        assert_eq!(s.victims.count(), 1);
        s.check_invariants();
    }

    #[test]
    fn no_victim_when_nothing_sealed() {
        let mut s = Space::new(2, 10, Box::new(Greedy::default()));
        assert_eq!(s.pick_victim(), Err(SpaceError::NoVictim));
    }

    #[test]
    fn take_victim_removes_the_unit_from_the_policy() {
        let mut s = Space::new(4, 10, Box::new(Greedy::default()));
        for _ in 0..3 {
            let u = s.open_unit(0).unwrap();
            s.add_valid(u, 5);
            s.seal(u);
        }
        // Units 0..3 sealed with 5 valid each (open_unit pops from the end: 0, 1, 2).
        s.take_victim(1).unwrap();
        assert_eq!(s.state(1), UnitState::InGc);
        assert!(s.take_victim(1).is_err(), "already in GC");
        assert!(s.take_victim(3).is_err(), "free unit");
        s.sub_valid(1, 5);
        s.erase(1);
        let a = s.pick_victim().unwrap();
        let b = s.pick_victim().unwrap();
        assert!(a != 1 && b != 1 && a != b);
        assert!(s.pick_victim().is_err());
        s.check_invariants();
    }
}
