//! [`Placer`]: a [`Placement`] driven over a [`Space`] in the writer's call order (module docs
//! of `placement`), for a writer that keeps its own mapping (the FTL model, the engine's zone
//! writer and DB GC). It advances the user-write clock, keeps the live-page count the context needs, counts
//! per-class writes, and turns the placement's victim choice into units taken from the space.

use super::{Ctx, Geometry, Placement, Victim, NEVER};
use crate::{Space, SpaceError, UnitId};

/// A placement scheme bound to a space (see the module docs).
pub struct Placer {
    place: Box<dyn Placement>,
    /// Pages mapped (written and not released).
    live: u64,
    wants_invalidate: bool,
    /// [`Placement::wants_requests`], asked once.
    wants_requests: bool,
    /// The scheme's class count (asked once: it is checked on every write).
    classes: u16,
}

impl std::fmt::Debug for Placer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Placer")
            .field("place", &self.place.name())
            .field("live", &self.live)
            .finish()
    }
}

impl Placer {
    /// Initialize `place` for `geo` and bind it.
    ///
    /// # Panics
    /// If the scheme has no class.
    #[must_use]
    pub fn new(mut place: Box<dyn Placement>, geo: &Geometry) -> Self {
        place.init(geo);
        assert!(place.classes() >= 1, "{} has no class", place.name());
        let wants_invalidate = place.wants_invalidate();
        let wants_requests = place.wants_requests();
        let classes = place.classes();
        Placer {
            place,
            live: 0,
            wants_invalidate,
            wants_requests,
            classes,
        }
    }

    /// The scheme.
    #[must_use]
    pub fn placement(&self) -> &dyn Placement {
        &*self.place
    }

    /// Classes (open units) of the scheme.
    #[must_use]
    pub fn classes(&self) -> u16 {
        self.classes
    }

    /// Live pages as counted so far.
    #[must_use]
    pub fn live(&self) -> u64 {
        self.live
    }

    /// `page` holds data written before this placer existed (a writer that rebuilt its
    /// mapping at open): the scheme sees it as a user write now, so schemes that track every
    /// written page (SepBIT, DAC, WARCIP) know it when GC moves it. Advances the clock, not
    /// the per-class write counts.
    ///
    /// # Panics
    /// If the scheme answers a class out of its range.
    pub fn adopt(&mut self, space: &mut Space, page: u64) {
        let ctx = self.ctx(space, NEVER);
        self.place.on_request(page, 1, &ctx);
        space.tick(1);
        self.live += 1;
        let ctx = self.ctx(space, NEVER);
        self.place.on_user_write(page, &ctx);
        let class = self.place.classify(false, page, &ctx);
        assert!(class < self.classes(), "adopted class {class} out of range");
    }

    /// The context of a hook now.
    #[must_use]
    pub fn ctx(&self, space: &Space, next_write_in: u64) -> Ctx {
        Ctx {
            now: space.now(),
            live: self.live,
            next_write_in,
        }
    }

    /// A batch of `pages` is about to be classified (`hints`: see [`Placement::on_batch`]).
    ///
    /// # Panics
    /// If `hints` is not as long as `pages`.
    pub fn begin_batch(&mut self, space: &Space, is_gc: bool, pages: &[u64], hints: &[u64]) {
        assert_eq!(pages.len(), hints.len(), "one hint per page");
        let ctx = self.ctx(space, NEVER);
        self.place.on_batch(is_gc, pages, hints, &ctx);
    }

    /// A user request of `len` pages from `start` begins (a trace record): the scheme sees one
    /// request (SFR's sequentiality, MultiQueue's chunk counts); its pages follow as
    /// [`Placer::user_write_in_request`].
    pub fn request(&mut self, space: &Space, start: u64, len: u64) {
        if self.wants_requests {
            let ctx = self.ctx(space, NEVER);
            self.place.on_request(start, len, &ctx);
        }
    }

    /// A user write of `page` whose previous copy is in `old` (None: not mapped), a request
    /// of its own: announce the request, advance the clock, report the invalidation, run the
    /// `append` hook, classify (the FTL model's order for a single write, SepBIT's
    /// `Log.append`). `next_write_in`: the future (FK), [`NEVER`] when unknown. The scheme
    /// sees `old` as the caller left it: the FTL model has taken the old copy off it, the
    /// engine's zone writer (which classifies a batch before writing it) not yet; no scheme
    /// reads its valid amount.
    ///
    /// # Panics
    /// If the scheme answers a class out of its range.
    #[inline]
    pub fn user_write(
        &mut self,
        space: &mut Space,
        page: u64,
        old: Option<UnitId>,
        next_write_in: u64,
    ) -> u16 {
        if self.wants_requests {
            let ctx = self.ctx(space, next_write_in);
            self.place.on_request(page, 1, &ctx);
        }
        self.user_write_in_request(space, page, old, next_write_in)
    }

    /// [`Placer::user_write`] of a page of the request announced by [`Placer::request`].
    ///
    /// # Panics
    /// If the scheme answers a class out of its range.
    #[inline]
    pub fn user_write_in_request(
        &mut self,
        space: &mut Space,
        page: u64,
        old: Option<UnitId>,
        next_write_in: u64,
    ) -> u16 {
        space.tick(1);
        match old {
            None => self.live += 1,
            Some(u) if self.wants_invalidate => {
                let (info, ctx) = (space.info(u), self.ctx(space, next_write_in));
                self.place.on_invalidate(page, &info, &ctx);
            }
            Some(_) => {}
        }
        let ctx = self.ctx(space, next_write_in);
        let class = self.place.user_write(page, &ctx);
        assert!(class < self.classes, "user class {class} out of range");
        space.note_writes(class, false, 1);
        class
    }

    /// A GC rewrite of `page` (after [`Placer::collect`] announced its victim).
    ///
    /// # Panics
    /// If the scheme answers a class out of its range.
    #[inline]
    pub fn gc_write(&mut self, space: &mut Space, page: u64) -> u16 {
        let ctx = self.ctx(space, NEVER);
        let class = self.place.gc_write(page, &ctx);
        assert!(class < self.classes, "GC class {class} out of range");
        space.note_writes(class, true, 1);
        class
    }

    /// The class of every GC rewrite of the victim just collected, when the scheme's per-page
    /// GC hooks would do nothing else ([`Placement::gc_class`]); the writer then counts the
    /// writes with [`Placer::note_gc_writes`] instead of calling [`Placer::gc_write`].
    ///
    /// # Panics
    /// If the scheme answers a class out of its range.
    #[must_use]
    pub fn gc_class(&self) -> Option<u16> {
        let class = self.place.gc_class();
        assert!(
            class.is_none_or(|c| c < self.classes),
            "GC class {class:?} out of range"
        );
        class
    }

    /// `n` GC rewrites to `class` (what `n` calls of [`Placer::gc_write`] would have counted
    /// for a victim with a [`Placer::gc_class`]).
    ///
    /// # Panics
    /// If the class is out of range.
    pub fn note_gc_writes(&mut self, space: &mut Space, class: u16, n: u64) {
        assert!(class < self.classes, "GC class {class} out of range");
        space.note_writes(class, true, n);
    }

    /// `page`, mapped in `old`, was released (trim; the caller has taken its valid amount
    /// off `old`).
    ///
    /// # Panics
    /// If no page is live.
    pub fn release(&mut self, space: &Space, page: u64, old: UnitId) {
        assert!(self.live > 0, "release of page {page} with no live page");
        self.live -= 1;
        if self.wants_invalidate {
            let (info, ctx) = (space.info(old), self.ctx(space, NEVER));
            self.place.on_invalidate(page, &info, &ctx);
        }
    }

    /// Unit `u` was opened for its class.
    pub fn opened(&mut self, space: &Space, u: UnitId) {
        let (info, ctx) = (space.info(u), self.ctx(space, NEVER));
        self.place.on_open(&info, &ctx);
    }

    /// Unit `u` was filled and sealed.
    pub fn sealed(&mut self, space: &Space, u: UnitId) {
        let (info, ctx) = (space.info(u), self.ctx(space, NEVER));
        self.place.on_seal(&info, &ctx);
    }

    /// Whether [`Placer::collect`] wants the victim's valid pages.
    #[must_use]
    pub fn wants_victim_pages(&self) -> bool {
        self.place.wants_victim_pages()
    }

    /// GC is about to move the valid data of `victim`; `pages` are its valid pages in the
    /// order GC moves them (given when [`Placer::wants_victim_pages`]).
    pub fn collect(&mut self, space: &Space, victim: UnitId, pages: Option<&[u64]>) {
        let (info, ctx) = (space.info(victim), self.ctx(space, NEVER));
        self.place.on_collect(&info, &ctx);
        if let Some(p) = pages {
            self.place.on_victim_pages(p, &ctx);
        }
    }

    /// The victims of one GC round, taken from the space (now in GC): the placement's own
    /// choice, else the space's victim policy (which may gather a batch).
    ///
    /// # Errors
    /// [`SpaceError::NoVictim`] when nothing qualifies.
    pub fn victims(&mut self, space: &mut Space, out: &mut Vec<UnitId>) -> Result<(), SpaceError> {
        let choice = self.place.victim(&space.view());
        match choice {
            Victim::Unit(u) => {
                space.take_victim(u)?;
                debug_assert_eq!(space.state(u), crate::UnitState::InGc, "a victim is in GC");
                out.push(u);
                Ok(())
            }
            Victim::Policy => space.pick_victims(out),
            _ => Err(SpaceError::NoVictim),
        }
    }

    /// The next victim, taken from the space (now in GC): the placement's own choice, else
    /// one pick of the space's victim policy (the FTL model's rounds collect victims one at
    /// a time; [`Placer::victims`] takes a policy's whole batch).
    ///
    /// # Errors
    /// [`SpaceError::NoVictim`] when nothing qualifies.
    pub fn victim(&mut self, space: &mut Space) -> Result<UnitId, SpaceError> {
        let choice = self.place.victim(&space.view());
        let v = match choice {
            Victim::Unit(u) => space.take_victim(u).map(|()| u),
            Victim::Policy => space.pick_victim(),
            _ => Err(SpaceError::NoVictim),
        };
        if let Ok(u) = v {
            debug_assert_eq!(space.state(u), crate::UnitState::InGc, "a victim is in GC");
        }
        v
    }

    /// Scheme state worth printing (one line, may be empty).
    #[must_use]
    pub fn report(&self) -> String {
        self.place.report()
    }

    /// `page` will be written soon ([`Placement::prefetch`]).
    #[inline]
    pub fn prefetch(&self, page: u64) {
        self.place.prefetch(page);
    }

    /// `page` of the victim just collected will be moved soon ([`Placement::prefetch_gc`]).
    #[inline]
    pub fn prefetch_gc(&self, page: u64) {
        self.place.prefetch_gc(page);
    }

    /// Whether GC rewrites of the victim just collected read the scheme's per-page state
    /// ([`Placement::gc_reads_state`]).
    #[must_use]
    pub fn gc_reads_state(&self) -> bool {
        self.place.gc_reads_state()
    }

    /// Bytes of memory the scheme's state holds ([`Placement::memory_bytes`]).
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        self.place.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{Dac, SepGc};
    use crate::{Greedy, UnitState, UnitView};

    fn geo() -> Geometry {
        Geometry {
            logical_pages: 64,
            unit_pages: 4,
            units: 8,
            gc_in_order: false,
        }
    }

    #[test]
    fn user_and_gc_writes_follow_the_scheme_and_count_per_class() {
        let mut space = Space::new(8, 4, Box::new(Greedy::default()));
        let mut p = Placer::new(Box::new(SepGc), &geo());
        assert_eq!(p.user_write(&mut space, 1, None, NEVER), 0);
        assert_eq!((space.now(), p.live()), (1, 1));
        let u = space.open_unit(0).unwrap();
        p.opened(&space, u);
        space.add_valid(u, 1);
        assert_eq!(p.user_write(&mut space, 1, Some(u), NEVER), 0);
        assert_eq!(p.live(), 1, "an overwrite is not a new live page");
        p.collect(&space, u, None);
        assert_eq!(p.gc_write(&mut space, 1), 1);
        assert_eq!(space.now(), 2, "GC writes do not advance the clock");
        assert_eq!(
            (space.classes[0].user_writes, space.classes[1].gc_writes),
            (2, 1)
        );
        p.release(&space, 1, u);
        assert_eq!(p.live(), 0);
    }

    #[test]
    fn adopted_pages_are_known_to_the_scheme() {
        let mut space = Space::new(8, 4, Box::new(Greedy::default()));
        let mut p = Placer::new(Box::new(crate::placement::SepBit::new(6)), &geo());
        p.adopt(&mut space, 3);
        assert_eq!((p.live(), space.now()), (1, 1));
        assert!(space.classes.is_empty(), "adoption is not a counted write");
        let u = space.open_unit(0).unwrap();
        space.add_valid(u, 1);
        space.seal(u);
        p.collect(&space, u, None);
        // SepBIT would panic on a GC move of a page it never saw written.
        assert_eq!(
            p.gc_write(&mut space, 3),
            2,
            "a class-0 victim's pages go to class 2"
        );
    }

    /// The GC prefetch hint follows the victim: SepBIT reads no per-page state for a class-0
    /// victim (all its pages go to class 2) and does for others; MiDAS only for HOT and
    /// group 1; a scheme that says nothing is read for every victim.
    #[test]
    fn gc_reads_state_follows_the_victim() {
        let mut space = Space::new(8, 4, Box::new(Greedy::default()));
        let mut sep = Placer::new(Box::new(crate::placement::SepBit::new(6)), &geo());
        let mut midas = Placer::new(Box::new(crate::placement::MiDas::new()), &geo());
        let dac = Placer::new(Box::new(Dac::new(3)), &geo());
        let mut sealed = |class: u16| {
            let u = space.open_unit(class).unwrap();
            space.add_valid(u, 1);
            space.seal(u);
            u
        };
        let (u0, u1, u2) = (sealed(0), sealed(1), sealed(2));
        sep.collect(&space, u0, None);
        assert!(!sep.gc_reads_state(), "SepBIT: class-0 victim");
        assert_eq!(
            sep.gc_class(),
            Some(2),
            "SepBIT: a class-0 victim moves in bulk"
        );
        sep.collect(&space, u1, None);
        assert!(sep.gc_reads_state(), "SepBIT: class-1 victim");
        assert_eq!(
            sep.gc_class(),
            None,
            "SepBIT: a class-1 victim's pages by age"
        );
        for (u, reads) in [(u0, true), (u1, true), (u2, false)] {
            midas.collect(&space, u, None);
            assert_eq!(midas.gc_reads_state(), reads, "MiDAS victim of unit {u}");
        }
        assert!(dac.gc_reads_state(), "the default");
        // SepFrozenBIT with an oracle of its own state reads what SepBIT reads: nothing for
        // a class-0 victim; with the hints' oracle, whose bit SepBIT holds, every move reads
        // its page's bit.
        struct OwnState;
        impl crate::placement::FrozenOracle for OwnState {
            fn name(&self) -> String {
                "own".into()
            }
            fn predict(&mut self, pages: &[u64], _ctx: &Ctx, out: &mut Vec<bool>) {
                out.clear();
                out.resize(pages.len(), false);
            }
        }
        let own = |o: Box<dyn crate::placement::FrozenOracle>| {
            Placer::new(Box::new(crate::placement::SepFrozen::bit(6, o)), &geo())
        };
        let (mut frozen, mut lent) = (
            own(Box::new(OwnState)),
            own(Box::<crate::placement::HintOracle>::default()),
        );
        frozen.collect(&space, u0, None);
        lent.collect(&space, u0, None);
        assert!(!frozen.gc_reads_state(), "SepFrozenBIT: class-0 victim");
        assert!(lent.gc_reads_state(), "the lent bit: class-0 victim");
        frozen.collect(&space, u1, None);
        lent.collect(&space, u1, None);
        assert!(frozen.gc_reads_state(), "SepFrozenBIT: class-1 victim");
        assert!(lent.gc_reads_state(), "the lent bit: class-1 victim");
    }

    /// The space's view hands out its valid table, entry for entry what `valid` answers.
    #[test]
    fn the_view_valid_table_is_the_valid_amounts() {
        let mut space = Space::new(8, 4, Box::new(Greedy::default()));
        let u = space.open_unit(0).unwrap();
        space.add_valid(u, 3);
        let view = space.view();
        let t = view.valid_table().expect("the space's view has its table");
        assert_eq!(t.len(), 8);
        assert!((0..8u32).all(|i| t[i as usize] == view.valid(i)));
        assert_eq!(t[u as usize], 3);
    }

    /// Counts its request hooks; says whether it wants them.
    struct Requests(std::sync::Arc<std::sync::atomic::AtomicU32>, bool);

    impl Placement for Requests {
        fn name(&self) -> String {
            "requests".into()
        }
        fn classes(&self) -> u16 {
            1
        }
        fn init(&mut self, _geo: &Geometry) {}
        fn on_request(&mut self, _start: u64, _len: u64, _ctx: &super::Ctx) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        fn wants_requests(&self) -> bool {
            self.1
        }
        fn classify(&mut self, _is_gc: bool, _page: u64, _ctx: &super::Ctx) -> u16 {
            0
        }
    }

    /// The request hook reaches a scheme that wants it (per single write and per announced
    /// request) and not one that says it does nothing; the schemes that read requests (SFR,
    /// MultiQueue) say so, SepBIT does not, SepFrozen answers for its base.
    #[test]
    fn request_hooks_reach_only_the_schemes_that_want_them() {
        use std::sync::{atomic::AtomicU32, atomic::Ordering, Arc};
        for wants in [true, false] {
            let mut space = Space::new(8, 4, Box::new(Greedy::default()));
            let n = Arc::new(AtomicU32::new(0));
            let mut p = Placer::new(Box::new(Requests(Arc::clone(&n), wants)), &geo());
            p.user_write(&mut space, 1, None, NEVER);
            p.request(&space, 2, 3);
            assert_eq!(n.load(Ordering::Relaxed), if wants { 2 } else { 0 });
            assert_eq!(space.now(), 1, "the write happened either way");
        }
        assert!(crate::placement::Sfr::new(6).wants_requests());
        assert!(crate::placement::MultiQueue::new(6).wants_requests());
        assert!(!crate::placement::SepBit::new(6).wants_requests());
        let oracle = Box::new(crate::placement::HintOracle::default());
        assert!(!crate::placement::SepFrozen::bit(6, oracle).wants_requests());
    }

    #[test]
    fn dac_walks_through_the_driver() {
        let mut space = Space::new(8, 4, Box::new(Greedy::default()));
        let mut p = Placer::new(Box::new(Dac::new(3)), &geo());
        let u = space.open_unit(0).unwrap();
        let walk: Vec<u16> = (0..4)
            .map(|i| p.user_write(&mut space, 7, (i > 0).then_some(u), NEVER))
            .collect();
        assert_eq!(walk, vec![0, 1, 2, 2]);
        assert_eq!(p.gc_write(&mut space, 7), 1, "GC demotes");
    }

    #[test]
    fn victims_come_from_the_policy_and_enter_gc() {
        let mut space = Space::new(8, 4, Box::new(Greedy::default()));
        let mut p = Placer::new(Box::new(SepGc), &geo());
        let mut out = Vec::new();
        assert_eq!(p.victims(&mut space, &mut out), Err(SpaceError::NoVictim));
        for valid in [4, 1] {
            let u = space.open_unit(0).unwrap();
            space.add_valid(u, valid);
            space.seal(u);
            p.sealed(&space, u);
        }
        p.victims(&mut space, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(space.valid(out[0]), 1, "greedy: the least valid unit");
        assert_eq!(space.state(out[0]), UnitState::InGc);
    }
}
