//! One log-structured space, used by two layers.
//!
//! An SSD's FTL garbage-collects superblocks; an out-of-place database engine garbage-collects
//! its zones. Both are the same mechanism: fixed-size *units* that are written append-only,
//! hold a *valid amount* that only decreases once the unit is sealed, and are reclaimed by
//! copying their valid data elsewhere and erasing them. This crate holds that mechanism once:
//!
//! - [`Space`]: unit states, valid amounts, erase counts, the free list, seal order, the class
//!   of every unit and per-class statistics ([`ClassStats`]);
//! - [`VictimPolicy`]: which sealed unit(s) to reclaim next (greedy, cost-benefit, FIFO, the
//!   SSD-iq reference's 2R policies, ...);
//! - [`Placement`]: which class (open unit) a write goes to: `classify(is_gc, page, ctx)` with
//!   hooks on user write, GC write, invalidate, seal and collect, modeled on SepBIT's
//!   `Separator` (NoSep, SepGC, DAC, SFR, MultiQueue, WARCIP, SepBIT, FK, MiDAS, and
//!   SepFrozenBIT/SepFrozenDAC around a frozen-page model);
//! - [`VictimHistogram`]: the valid ratio of every victim, the quantity WAF is made of;
//! - [`hotness`]: SepFrozen's hotness records (HR, 16 bytes; a page's HR_current + HR_last,
//!   32 bytes) and the per-buffer-frame tracker: plain types shared by the engine (which keeps
//!   them in its page header and frames) and `nowa-frozen` (which learns from them).
//!
//! What a unit's valid amount counts is up to the user: 4 KiB pages for the FTL, bytes for the
//! engine's compressed pages. The *class* of a unit is the placement class of the open unit it
//! was (the FTL's frontier index, the engine's zone group).

pub mod hotness;
pub mod hugepage;
mod placement;
mod policy;
pub mod prefetch;
mod stats;

pub use placement::{
    Ctx, Dac, DacPaper, FkOracle, FrozenOracle, Geometry, HintOracle, KMeansFk, MiDas, MultiQueue,
    NoSep, Placement, PlacementError, PlacementKind, Placer, SepBit, SepFrozen, SepFrozenBit,
    SepFrozenDac, SepGc, Sfr, UnitInfo, Victim, Warcip, FRESH, MAX_CLASSES, NEVER,
};
pub use policy::{
    Benefit, CostBenefit, Dormant, Fifo, Greedy, GreedyUntilUnit, GroupGreedy, KGreedy, PolicyKind,
    PolicyParseError, RandomPolicy, SecondChanceFifo, TwoRFifo, TwoRGreedy, WindowedGreedy,
};
pub use stats::{
    class_rows, class_table, lambert_victim_ratio, lambert_waf, ClassReport, ClassRow, ClassStats,
    VictimHistogram,
};

/// Index of a unit (superblock, erase block or zone).
pub type UnitId = u32;

/// Lifecycle of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
    /// Valid amount of unit `u`.
    fn valid(&self, u: UnitId) -> u32;
    /// Logical time (the space's write clock) when the unit was sealed.
    fn sealed_at(&self, u: UnitId) -> u64;
    /// Logical time when the unit was opened (SepBIT's `createdAccessId`).
    fn created_at(&self, u: UnitId) -> u64;
    /// The current write clock.
    fn now(&self) -> u64;
    /// Placement class of the unit.
    fn class(&self, u: UnitId) -> u16;
    /// Victims must hold at most this valid amount (the garbage-proportion trigger's filter:
    /// SepBIT collects only units with GP >= its threshold). Equal to the capacity when no
    /// filter is set. Honored by the greedy and cost-benefit policies.
    fn max_victim_valid(&self) -> u32;
    /// Free units (erased, not open): bounds batch policies that must fit their victims'
    /// valid data into free space.
    fn free_units(&self) -> u32;
    /// The group of unit `u`: units opened together (NoWA's active group, written in
    /// parallel and multiplexed into the same SSD superblocks). A unit the writer put in no
    /// group is a group of its own ([`ungrouped`]).
    fn group(&self, u: UnitId) -> u64 {
        ungrouped(u)
    }
    /// Whether `u` is open (being appended to).
    fn is_open(&self, _u: UnitId) -> bool {
        false
    }
    /// Every unit's valid amount, indexed by unit id, when the view holds them as one table
    /// (a scan over many units then reads the table instead of calling
    /// [`valid`](Self::valid) per unit). Default: `None`.
    fn valid_table(&self) -> Option<&[u32]> {
        None
    }
}

/// The group id of a unit in no group ([`UnitView::group`]): from the top of the range, so
/// it meets no group id a writer counts up from 0.
#[must_use]
pub fn ungrouped(u: UnitId) -> u64 {
    u64::MAX - u64::from(u)
}

/// Victim selection. Sealed units are handed to the policy with [`on_seal`](Self::on_seal); every
/// change of a sealed unit's valid amount is reported; [`select`](Self::select) picks one and
/// forgets it.
pub trait VictimPolicy: Send {
    /// Name as printed in results.
    fn name(&self) -> String;
    /// Called once when the space is created, with the number of units.
    fn init(&mut self, units: u32, capacity: u32);
    /// A unit was sealed and becomes a candidate.
    fn on_seal(&mut self, u: UnitId, view: &dyn UnitView);
    /// A sealed unit's valid amount went from `old` to `new`.
    fn on_valid_change(&mut self, u: UnitId, old: u32, new: u32);
    /// A sealed unit leaves candidacy without being selected (e.g. a host zone reset).
    fn on_remove(&mut self, u: UnitId, view: &dyn UnitView);
    /// Pick a victim among the sealed units and remove it from candidacy.
    fn select(&mut self, view: &dyn UnitView) -> Option<UnitId>;
    /// The victims of one GC round, appended to `out` in the order they were chosen and
    /// removed from candidacy. The default is one [`select`](Self::select); the SSD-iq
    /// reference's 2R policies gather victims until their garbage adds up to one unit.
    fn select_batch(&mut self, view: &dyn UnitView, out: &mut Vec<UnitId>) {
        if let Some(u) = self.select(view) {
            out.push(u);
        }
    }
    /// Victims an earlier round chose but deferred (NoWA's compensation of a group's
    /// siblings): the oldest deferred set still sealed, appended to `out` and removed from
    /// candidacy. Default: none.
    fn take_deferred(&mut self, _view: &dyn UnitView, _out: &mut Vec<UnitId>) {}
    /// Deferred victim sets waiting ([`take_deferred`](Self::take_deferred)). Default: 0.
    fn deferred(&self) -> usize {
        0
    }
}

/// Errors of the space.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpaceError {
    /// Every unit is in use.
    #[error("no free unit left (the space is full)")]
    NoFreeUnit,
    /// The policy found nothing to reclaim.
    #[error("GC found no victim with reclaimable space (all sealed units fully valid)")]
    NoVictim,
    /// A unit named by the caller is not in the state the operation needs.
    #[error("unit {unit} is {state:?}, not {wanted:?}")]
    WrongState {
        /// The unit.
        unit: UnitId,
        /// Its state.
        state: UnitState,
        /// The state the operation needs.
        wanted: UnitState,
    },
}

/// Unit metadata and the free list of one log-structured space.
pub struct Space {
    capacity: u32,
    valid: Vec<u32>,
    state: Vec<UnitState>,
    class: Vec<u16>,
    /// Group of every unit ([`UnitView::group`]).
    group: Vec<u64>,
    sealed_at: Vec<u64>,
    created_at: Vec<u64>,
    erases: Vec<u32>,
    /// LIFO free list: a just-erased unit is reused first (wear leveling is out of scope).
    free: Vec<UnitId>,
    policy: Box<dyn VictimPolicy>,
    clock: u64,
    /// Sealed units and the sum of their valid amounts (the garbage-proportion trigger).
    sealed_units: u32,
    sealed_valid: u64,
    max_victim_valid: u32,
    /// Valid ratio of every victim.
    pub victims: VictimHistogram,
    /// Per-class statistics (index = class).
    pub classes: Vec<ClassStats>,
}

/// The [`View`] of a space, borrowing only the fields it reads (so the policy can be borrowed
/// mutably beside it).
macro_rules! view_of {
    ($s:expr) => {
        View {
            capacity: $s.capacity,
            valid: &$s.valid,
            sealed_at: &$s.sealed_at,
            created_at: &$s.created_at,
            class: &$s.class,
            group: &$s.group,
            state: &$s.state,
            clock: $s.clock,
            max_victim_valid: $s.max_victim_valid,
            free_units: u32::try_from($s.free.len()).unwrap_or(u32::MAX),
        }
    };
}

struct View<'a> {
    capacity: u32,
    valid: &'a [u32],
    sealed_at: &'a [u64],
    created_at: &'a [u64],
    class: &'a [u16],
    group: &'a [u64],
    state: &'a [UnitState],
    clock: u64,
    max_victim_valid: u32,
    free_units: u32,
}

impl UnitView for View<'_> {
    fn unit_capacity(&self) -> u32 {
        self.capacity
    }
    fn valid(&self, u: UnitId) -> u32 {
        self.valid[u as usize]
    }
    fn valid_table(&self) -> Option<&[u32]> {
        Some(self.valid)
    }
    fn sealed_at(&self, u: UnitId) -> u64 {
        self.sealed_at[u as usize]
    }
    fn created_at(&self, u: UnitId) -> u64 {
        self.created_at[u as usize]
    }
    fn now(&self) -> u64 {
        self.clock
    }
    fn class(&self, u: UnitId) -> u16 {
        self.class[u as usize]
    }
    fn max_victim_valid(&self) -> u32 {
        self.max_victim_valid
    }
    fn free_units(&self) -> u32 {
        self.free_units
    }
    fn group(&self, u: UnitId) -> u64 {
        self.group[u as usize]
    }
    fn is_open(&self, u: UnitId) -> bool {
        self.state[u as usize] == UnitState::Open
    }
}

impl Space {
    /// `units` units of `capacity` each, all free, reclaimed by `policy`.
    ///
    /// # Panics
    /// If `capacity` is 0.
    #[must_use]
    pub fn new(units: u32, capacity: u32, mut policy: Box<dyn VictimPolicy>) -> Self {
        assert!(capacity > 0, "a unit must hold something");
        policy.init(units, capacity);
        let n = units as usize;
        Space {
            capacity,
            valid: vec![0; n],
            state: vec![UnitState::Free; n],
            class: vec![0; n],
            group: (0..units).map(ungrouped).collect(),
            sealed_at: vec![0; n],
            created_at: vec![0; n],
            erases: vec![0; n],
            free: (0..units).rev().collect(),
            policy,
            clock: 0,
            sealed_units: 0,
            sealed_valid: 0,
            max_victim_valid: capacity,
            victims: VictimHistogram::default(),
            classes: Vec::new(),
        }
    }

    fn split(&mut self) -> (View<'_>, &mut dyn VictimPolicy) {
        (view_of!(self), &mut *self.policy)
    }

    /// A read-only view for victim choices made outside the policy (a placement's own).
    #[must_use]
    pub fn view(&self) -> impl UnitView + '_ {
        view_of!(self)
    }

    /// Name of the victim policy.
    #[must_use]
    pub fn policy_name(&self) -> String {
        self.policy.name()
    }
    /// Number of units.
    #[must_use]
    pub fn units(&self) -> u32 {
        u32::try_from(self.valid.len()).unwrap_or(u32::MAX)
    }
    /// Capacity of every unit.
    #[must_use]
    pub fn unit_capacity(&self) -> u32 {
        self.capacity
    }
    /// Units on the free list.
    #[must_use]
    pub fn free_units(&self) -> u32 {
        u32::try_from(self.free.len()).unwrap_or(u32::MAX)
    }
    /// Valid amount of `u`.
    #[inline]
    #[must_use]
    pub fn valid(&self, u: UnitId) -> u32 {
        self.valid[u as usize]
    }
    /// State of `u`.
    #[inline]
    #[must_use]
    pub fn state(&self, u: UnitId) -> UnitState {
        self.state[u as usize]
    }
    /// Placement class of `u`.
    #[must_use]
    pub fn class(&self, u: UnitId) -> u16 {
        self.class[u as usize]
    }
    /// Times `u` was erased.
    #[must_use]
    pub fn erase_count(&self, u: UnitId) -> u32 {
        self.erases[u as usize]
    }
    /// Erase count of every unit.
    #[must_use]
    pub fn erase_counts(&self) -> &[u32] {
        &self.erases
    }
    /// Sum of all erase counts.
    #[must_use]
    pub fn total_erases(&self) -> u64 {
        self.erases.iter().map(|&e| u64::from(e)).sum()
    }
    /// The write clock: advanced by the user (e.g. once per host write) for age-aware policies.
    #[inline]
    pub fn tick(&mut self, n: u64) {
        self.clock += n;
    }
    /// The write clock.
    #[must_use]
    pub fn now(&self) -> u64 {
        self.clock
    }
    /// Sum of every unit's valid amount.
    #[must_use]
    pub fn sum_valid(&self) -> u64 {
        self.valid.iter().map(|&v| u64::from(v)).sum()
    }
    /// Number of sealed units and their summed valid amount (O(1)).
    #[must_use]
    pub fn sealed(&self) -> (u32, u64) {
        (self.sealed_units, self.sealed_valid)
    }
    /// Garbage in sealed units: `sealed x capacity - sealed valid` (O(1)).
    #[must_use]
    pub fn sealed_garbage(&self) -> u64 {
        u64::from(self.sealed_units) * u64::from(self.capacity) - self.sealed_valid
    }
    /// Restrict victims to units holding at most `max` (see [`UnitView::max_victim_valid`]).
    pub fn set_max_victim_valid(&mut self, max: u32) {
        self.max_victim_valid = max.min(self.capacity);
        debug_assert!(self.max_victim_valid <= self.capacity);
    }
    /// What hooks learn about unit `u`.
    #[must_use]
    pub fn info(&self, u: UnitId) -> UnitInfo {
        let i = u as usize;
        UnitInfo {
            unit: u,
            class: self.class[i],
            created_at: self.created_at[i],
            sealed_at: self.sealed_at[i],
            valid: self.valid[i],
            capacity: self.capacity,
            sealed: matches!(self.state[i], UnitState::Sealed | UnitState::InGc),
        }
    }

    /// Called per placed write (user and GC): the lookup inlined, the first write of a class
    /// (which grows the table) out of line.
    #[inline]
    fn class_stats(&mut self, class: u16) -> &mut ClassStats {
        let c = usize::from(class);
        if self.classes.len() <= c {
            self.grow_classes(c + 1);
        }
        &mut self.classes[c]
    }

    #[cold]
    fn grow_classes(&mut self, n: usize) {
        self.classes.resize(n, ClassStats::default());
    }

    /// Count `n` pages (or bytes) written to `class`, by the user or by GC.
    #[inline]
    pub fn note_writes(&mut self, class: u16, gc: bool, n: u64) {
        let s = self.class_stats(class);
        if gc {
            s.gc_writes += n;
        } else {
            s.user_writes += n;
        }
    }

    /// Take a free unit and open it for `class`.
    ///
    /// # Errors
    /// [`SpaceError::NoFreeUnit`] when the free list is empty.
    pub fn open_unit(&mut self, class: u16) -> Result<UnitId, SpaceError> {
        let u = self.free.pop().ok_or(SpaceError::NoFreeUnit)?;
        self.mark_open(u, class);
        Ok(u)
    }

    fn mark_open(&mut self, u: UnitId, class: u16) {
        let i = u as usize;
        assert_eq!(self.state[i], UnitState::Free, "opening unit {u}");
        debug_assert_eq!(self.valid[i], 0);
        self.state[i] = UnitState::Open;
        self.class[i] = class;
        self.group[i] = ungrouped(u);
        self.created_at[i] = self.clock;
    }

    /// The unit [`Space::open_unit`] would open next, without opening it.
    #[must_use]
    pub fn peek_free(&self) -> Option<UnitId> {
        self.free.last().copied()
    }

    /// Open a specific free unit (ZNS: the host names the zone).
    ///
    /// # Errors
    /// [`SpaceError::NoFreeUnit`] when `u` is not on the free list.
    pub fn open_specific(&mut self, u: UnitId, class: u16) -> Result<(), SpaceError> {
        let pos = self
            .free
            .iter()
            .rposition(|&f| f == u)
            .ok_or(SpaceError::NoFreeUnit)?;
        self.free.swap_remove(pos);
        self.mark_open(u, class);
        Ok(())
    }

    /// Change the class of an open unit (a unit opened by GC and handed to the host writer,
    /// as the SSD-iq reference's compaction does with partly filled victims).
    ///
    /// # Panics
    /// If `u` is not open.
    pub fn set_class(&mut self, u: UnitId, class: u16) {
        assert_eq!(
            self.state[u as usize],
            UnitState::Open,
            "reclassing unit {u}"
        );
        self.class[u as usize] = class;
    }

    /// Put `u` in group `g` ([`UnitView::group`]): after opening it, or when a writer
    /// rebuilds its units at open (any state). Opening a unit puts it in no group.
    ///
    /// # Panics
    /// If `g` is the unit's own ungrouped id (a writer's ids must stay out of that range).
    pub fn set_group(&mut self, u: UnitId, g: u64) {
        assert!(
            g != ungrouped(u) || self.state[u as usize] == UnitState::Open,
            "unit {u}: a writer's group id from the ungrouped range"
        );
        self.group[u as usize] = g;
    }

    /// Group of `u`.
    #[must_use]
    pub fn group(&self, u: UnitId) -> u64 {
        self.group[u as usize]
    }

    /// A full (or closed) open unit becomes a GC candidate.
    ///
    /// # Panics
    /// If `u` is not open.
    pub fn seal(&mut self, u: UnitId) {
        let i = u as usize;
        assert_eq!(
            self.state[i],
            UnitState::Open,
            "sealing unit {u} that is not open"
        );
        self.state[i] = UnitState::Sealed;
        self.sealed_at[i] = self.clock;
        self.sealed_units += 1;
        self.sealed_valid += u64::from(self.valid[i]);
        let (view, policy) = self.split();
        policy.on_seal(u, &view);
    }

    /// Add `n` to the valid amount of `u`.
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
            self.sealed_valid += u64::from(n);
            self.policy.on_valid_change(u, new - n, new);
        }
    }

    /// Subtract `n` from the valid amount of `u`.
    ///
    /// # Panics
    /// If the valid amount would go below zero.
    #[inline]
    pub fn sub_valid(&mut self, u: UnitId, n: u32) {
        let v = &mut self.valid[u as usize];
        assert!(*v >= n, "unit {u}: valid underflow ({} - {n})", *v);
        *v -= n;
        if self.state[u as usize] == UnitState::Sealed {
            let new = *v;
            self.sealed_valid -= u64::from(n);
            self.policy.on_valid_change(u, new + n, new);
        }
    }

    fn enter_gc(&mut self, u: UnitId) {
        let i = u as usize;
        assert_eq!(
            self.state[i],
            UnitState::Sealed,
            "policy picked unit {u} that is not sealed"
        );
        self.state[i] = UnitState::InGc;
        self.sealed_units -= 1;
        self.sealed_valid -= u64::from(self.valid[i]);
        self.victims.record(self.valid[i], self.capacity);
        let (cap, valid, class) = (self.capacity, self.valid[i], self.class[i]);
        let life = self.clock - self.created_at[i];
        let s = self.class_stats(class);
        s.units_collected += 1;
        s.collected += u64::from(cap);
        s.collected_valid += u64::from(valid);
        s.lifespan_sum += life;
    }

    /// Choose the next victim and mark it in GC. Records its valid ratio.
    ///
    /// # Errors
    /// [`SpaceError::NoVictim`] when the policy finds none.
    pub fn pick_victim(&mut self) -> Result<UnitId, SpaceError> {
        let (view, policy) = self.split();
        let u = policy.select(&view).ok_or(SpaceError::NoVictim)?;
        self.enter_gc(u);
        Ok(u)
    }

    /// The victims of one GC round ([`VictimPolicy::select_batch`]), each marked in GC and
    /// recorded, appended to `out`.
    ///
    /// # Errors
    /// [`SpaceError::NoVictim`] when the policy finds none.
    pub fn pick_victims(&mut self, out: &mut Vec<UnitId>) -> Result<(), SpaceError> {
        let first = out.len();
        let (view, policy) = self.split();
        policy.select_batch(&view, out);
        if out.len() == first {
            return Err(SpaceError::NoVictim);
        }
        for (k, &u) in out.iter().enumerate().skip(first) {
            debug_assert!(!out[..k].contains(&u), "unit {u} picked twice in one round");
            self.enter_gc(u);
        }
        Ok(())
    }

    /// The victims the policy deferred in an earlier round, oldest set first
    /// ([`VictimPolicy::take_deferred`]), each marked in GC and recorded, appended to `out`.
    ///
    /// # Errors
    /// [`SpaceError::NoVictim`] when none is waiting (or none of the set is still sealed).
    pub fn pick_deferred(&mut self, out: &mut Vec<UnitId>) -> Result<(), SpaceError> {
        let first = out.len();
        let (view, policy) = self.split();
        policy.take_deferred(&view, out);
        if out.len() == first {
            return Err(SpaceError::NoVictim);
        }
        debug_assert!(
            out[first..]
                .iter()
                .all(|&u| self.state[u as usize] == UnitState::Sealed),
            "deferred victims are sealed units"
        );
        for &u in &out[first..].to_vec() {
            self.enter_gc(u);
        }
        Ok(())
    }

    /// Deferred victim sets waiting in the policy ([`VictimPolicy::deferred`]).
    #[must_use]
    pub fn deferred(&self) -> usize {
        self.policy.deferred()
    }

    /// Take a specific sealed unit into GC (the caller chose the victim, e.g. NoWA's group
    /// GC in the engine, or a placement that selects its own victims). The policy forgets it;
    /// the victim histogram records it.
    ///
    /// # Errors
    /// [`SpaceError::NoVictim`] when `u` is not sealed.
    pub fn take_victim(&mut self, u: UnitId) -> Result<(), SpaceError> {
        if self.state[u as usize] != UnitState::Sealed {
            return Err(SpaceError::NoVictim);
        }
        let (view, policy) = self.split();
        policy.on_remove(u, &view);
        self.enter_gc(u);
        Ok(())
    }

    /// The unit's data is gone (GC moved it out, or the host reset it): erase it and free it.
    ///
    /// # Panics
    /// If `u` is free or still holds valid data.
    pub fn erase(&mut self, u: UnitId) {
        let i = u as usize;
        let st = self.state[i];
        assert!(st != UnitState::Free, "erasing free unit {u}");
        assert_eq!(
            self.valid[i], 0,
            "erasing unit {u} that still holds valid data"
        );
        if st == UnitState::Sealed {
            self.sealed_units -= 1;
            let (view, policy) = self.split();
            policy.on_remove(u, &view);
        }
        self.state[i] = UnitState::Free;
        self.erases[i] += 1;
        self.free.push(u);
    }

    /// Valid amount per class, summed over units (O(units)).
    #[must_use]
    pub fn valid_per_class(&self) -> Vec<u64> {
        let mut out = vec![0u64; self.classes.len()];
        for (i, &v) in self.valid.iter().enumerate() {
            if v == 0 {
                continue;
            }
            let c = usize::from(self.class[i]);
            if out.len() <= c {
                out.resize(c + 1, 0);
            }
            out[c] += u64::from(v);
        }
        out
    }

    /// The per-class table's rows: [`ClassStats`] with the valid amount per class and the
    /// shares (O(units)).
    #[must_use]
    pub fn class_rows(&self) -> Vec<ClassRow> {
        class_rows(&self.classes, &self.valid_per_class())
    }

    /// Check the space's own invariants (tests, debug builds).
    ///
    /// # Panics
    /// On the first broken invariant.
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
        let sealed: Vec<usize> = (0..self.state.len())
            .filter(|&i| self.state[i] == UnitState::Sealed)
            .collect();
        assert_eq!(sealed.len(), self.sealed_units as usize, "sealed count");
        let sv: u64 = sealed.iter().map(|&i| u64::from(self.valid[i])).sum();
        assert_eq!(sv, self.sealed_valid, "sealed valid sum");
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
