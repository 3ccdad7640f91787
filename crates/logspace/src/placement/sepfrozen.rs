//! SepFrozen (Tan et al.): a rule-based scheme plus a frozen-page model consulted at GC.
//!
//! - [`FrozenOracle`]: the model's side of the contract. It sees every user write (to keep the
//!   per-page hotness records a page header would hold) and answers, for the valid pages of a
//!   victim, which are frozen. The model code lives outside this crate (`nowa-frozen`), so the
//!   rules here are tested with scripted oracles.
//! - [`SepFrozen`]: wraps a base scheme. Before GC moves a victim's pages, the writer lists
//!   them ([`Placement::on_victim_pages`]) and the oracle judges them in one batch. A GC write
//!   of a page judged frozen goes to the frozen class and skips the base scheme's GC hook (so
//!   DAC's temperature does not drop); every other write is the base scheme's.
//! - SepFrozenBIT = [`SepBit`] + frozen class `n - 1`, shared with SepBIT's oldest class
//!   (the paper's class 6: "frozen zone" and "age >= 16ℓ" are one open unit).
//! - SepFrozenDAC = [`DacPaper`] + frozen class 0, shared with the coldest temperature (the
//!   paper's class 1).
//!
//! A writer that does not list the victim's pages still works: each GC write is then judged
//! alone (a batch of one, counted in [`SepFrozen::unbatched`]).

use super::{idx, Ctx, Geometry, Placement, SepBit, UnitInfo};
use crate::{UnitView, Victim};

/// The frozen-page model as the placement sees it.
pub trait FrozenOracle: Send {
    /// Name as printed in results.
    fn name(&self) -> String;
    /// Called once, before any write.
    fn init(&mut self, _geo: &Geometry) {}
    /// A user write of `page` (its hotness records shift).
    fn on_user_write(&mut self, _page: u64, _ctx: &Ctx) {}
    /// GC moved `page`, which the oracle judged `frozen` (online learners track outcomes).
    fn on_gc_move(&mut self, _page: u64, _frozen: bool, _ctx: &Ctx) {}
    /// Clear `out`, then push one verdict per page of `pages`, in order (true = frozen).
    fn predict(&mut self, pages: &[u64], ctx: &Ctx, out: &mut Vec<bool>);
    /// Oracle state worth printing (one line, may be empty).
    fn report(&self) -> String {
        String::new()
    }
    /// Bytes of memory the oracle's state holds (0 unless it says).
    fn memory_bytes(&self) -> u64 {
        0
    }
    /// `page` will be written soon: bring its per-page state towards the core (a hint, as
    /// [`Placement::prefetch`]).
    fn prefetch(&self, _page: u64) {}
    /// Whether it reads each user write's next-overwrite distance (`Ctx::next_write_in`):
    /// the writer must then give it ([`Placement::needs_future`]).
    fn needs_future(&self) -> bool {
        false
    }
    /// When the verdict on a page is one bit, set at each user write of the page from that
    /// write's [`Ctx`] alone, and nothing else of the oracle's state matters: the function
    /// that computes it. A wrapper whose base scheme lends a bit per page
    /// ([`Placement::has_page_bit`]) then keeps the bit there, beside the base's own state
    /// (one random line per user write fewer), and calls none of [`FrozenOracle::init`],
    /// [`FrozenOracle::on_user_write`], [`FrozenOracle::prefetch`], [`FrozenOracle::predict`].
    /// `None` (the default): the oracle keeps its own state.
    fn user_write_bit(&self) -> Option<fn(&Ctx) -> bool> {
        None
    }
}

/// [`HintOracle`]'s verdict on the version a user write creates: frozen when no later write
/// of the page follows.
fn written_for_good(ctx: &Ctx) -> bool {
    ctx.next_write_in == super::NEVER
}

/// The exact frozen label from the writer's hints: a version is frozen when the user write
/// that created it is never followed by another write of its page (`next_write_in` is
/// [`super::NEVER`]). The label `nowa-frozen`'s `TruthOracle` reads from a write log, here
/// from the hints the FTL model takes for FK (`nowa sim --placement sepfrozen-bit`), so
/// SepFrozen runs on `nowa sim`'s workloads with a perfect model: its placement's cost
/// without a model's inference. One bit per logical page.
#[derive(Default)]
pub struct HintOracle {
    frozen: Vec<u64>,
}

impl FrozenOracle for HintOracle {
    fn name(&self) -> String {
        "future".into()
    }
    fn init(&mut self, geo: &Geometry) {
        self.frozen = crate::hugepage::filled(idx(geo.logical_pages.div_ceil(64)), 0);
    }
    fn on_user_write(&mut self, page: u64, ctx: &Ctx) {
        let (w, bit) = (&mut self.frozen[idx(page / 64)], 1u64 << (page % 64));
        if written_for_good(ctx) {
            *w |= bit;
        } else {
            *w &= !bit;
        }
    }
    fn predict(&mut self, pages: &[u64], _ctx: &Ctx, out: &mut Vec<bool>) {
        out.clear();
        out.extend(
            pages
                .iter()
                .map(|&p| self.frozen[idx(p / 64)] & (1 << (p % 64)) != 0),
        );
        assert_eq!(out.len(), pages.len(), "one verdict per page");
    }
    fn memory_bytes(&self) -> u64 {
        super::bytes_of(&self.frozen)
    }
    fn needs_future(&self) -> bool {
        true
    }
    fn user_write_bit(&self) -> Option<fn(&Ctx) -> bool> {
        Some(written_for_good)
    }
    fn prefetch(&self, page: u64) {
        // Every user write sets or clears the page's bit: a random line of the bitset.
        crate::prefetch::line(&self.frozen, idx(page / 64));
    }
}

/// The verdicts of the current victim, consumed in the order GC moves its pages.
#[derive(Default)]
struct Verdicts {
    pages: Vec<u64>,
    frozen: Vec<bool>,
    next: usize,
}

/// A base scheme with frozen-page separation at GC (see the module docs).
pub struct SepFrozen<B: Placement> {
    base: B,
    label: &'static str,
    frozen_class: u16,
    oracle: Box<dyn FrozenOracle>,
    /// The oracle's per-page bit, kept in the base's lent bit (set by `init`; see
    /// [`FrozenOracle::user_write_bit`]).
    bit: Option<fn(&Ctx) -> bool>,
    v: Verdicts,
    /// The verdict of the GC write in progress (set by `on_gc_write`).
    current: bool,
    one: Vec<bool>,
    gc_moves: u64,
    frozen_moves: u64,
    unbatched: u64,
    batches: u64,
}

/// SepFrozenBIT: SepBIT's rules, frozen GC writes to the last class.
pub type SepFrozenBit = SepFrozen<SepBit>;
/// SepFrozenDAC: the paper's DAC rules, frozen GC writes to class 0.
pub type SepFrozenDac = SepFrozen<DacPaper>;

impl SepFrozen<SepBit> {
    /// SepFrozenBIT with `n` classes (4..=16; the paper uses 6).
    ///
    /// # Panics
    /// If `n` is out of range.
    #[must_use]
    pub fn bit(n: u16, oracle: Box<dyn FrozenOracle>) -> Self {
        SepFrozen::wrap(SepBit::new(n), "sepfrozen-bit", n - 1, oracle)
    }
}

impl SepFrozen<DacPaper> {
    /// SepFrozenDAC with `n` classes (2..=16; the paper uses 6).
    ///
    /// # Panics
    /// If `n` is out of range.
    #[must_use]
    pub fn dac(n: u16, oracle: Box<dyn FrozenOracle>) -> Self {
        SepFrozen::wrap(DacPaper::new(n), "sepfrozen-dac", 0, oracle)
    }
}

impl<B: Placement> SepFrozen<B> {
    fn wrap(
        base: B,
        label: &'static str,
        frozen_class: u16,
        oracle: Box<dyn FrozenOracle>,
    ) -> Self {
        assert!(
            frozen_class < base.classes(),
            "the frozen class is one of the base's"
        );
        SepFrozen {
            base,
            label,
            frozen_class,
            oracle,
            bit: None,
            v: Verdicts::default(),
            current: false,
            one: Vec::with_capacity(1),
            gc_moves: 0,
            frozen_moves: 0,
            unbatched: 0,
            batches: 0,
        }
    }

    /// The class frozen pages go to.
    #[must_use]
    pub fn frozen_class(&self) -> u16 {
        self.frozen_class
    }
    /// The base scheme.
    #[must_use]
    pub fn base(&self) -> &B {
        &self.base
    }
    /// GC moves so far and how many of them the oracle judged frozen.
    #[must_use]
    pub fn moves(&self) -> (u64, u64) {
        (self.gc_moves, self.frozen_moves)
    }
    /// GC writes judged alone (the writer did not list the victim's pages).
    #[must_use]
    pub fn unbatched(&self) -> u64 {
        self.unbatched
    }

    /// The verdict on `page`, next in the victim's list or judged alone.
    fn verdict(&mut self, page: u64, ctx: &Ctx) -> bool {
        let v = &mut self.v;
        if v.next < v.pages.len() && v.pages[v.next] == page {
            v.next += 1;
            // The lent bit is read at the move, where the writer's GC prefetch brought its
            // line: a pass of its own over the victim waited for every line (11.7% of a
            // run, `perf`).
            return match self.bit {
                Some(_) => self.base.page_bit(page),
                None => v.frozen[v.next - 1],
            };
        }
        self.unbatched += 1;
        if self.bit.is_some() {
            return self.base.page_bit(page);
        }
        self.oracle.predict(&[page], ctx, &mut self.one);
        assert_eq!(self.one.len(), 1, "one verdict per page");
        self.one[0]
    }
}

impl<B: Placement> Placement for SepFrozen<B> {
    fn prefetch(&self, page: u64) {
        self.base.prefetch(page);
        if self.bit.is_none() {
            self.oracle.prefetch(page);
        }
    }
    fn prefetch_gc(&self, page: u64) {
        // The oracle judged the victim's pages before the moves (`on_victim_pages`): a GC
        // move reads only the base scheme's state.
        self.base.prefetch_gc(page);
    }
    fn gc_reads_state(&self) -> bool {
        // With the lent bit, every move reads the page's bit in the base's state. Else what
        // the base reads for this victim (SepBIT: nothing for a class-0 victim; a page
        // judged frozen reads nothing either, but the hint is per victim).
        self.bit.is_some() || self.base.gc_reads_state()
    }
    fn memory_bytes(&self) -> u64 {
        self.base.memory_bytes()
            + super::bytes_of(&self.one)
            + super::bytes_of(&self.v.pages)
            + super::bytes_of(&self.v.frozen)
            + self.oracle.memory_bytes()
    }
    fn needs_future(&self) -> bool {
        self.base.needs_future() || self.oracle.needs_future()
    }
    fn name(&self) -> String {
        format!(
            "{}:{}({})",
            self.label,
            self.base.classes(),
            self.oracle.name()
        )
    }
    fn classes(&self) -> u16 {
        self.base.classes()
    }
    fn init(&mut self, geo: &Geometry) {
        self.base.init(geo);
        self.bit = self
            .oracle
            .user_write_bit()
            .filter(|_| self.base.has_page_bit());
        if self.bit.is_none() {
            self.oracle.init(geo);
        }
    }
    fn on_request(&mut self, start: u64, len: u64, ctx: &Ctx) {
        self.base.on_request(start, len, ctx);
    }
    fn wants_requests(&self) -> bool {
        self.base.wants_requests()
    }
    fn on_user_write(&mut self, page: u64, ctx: &Ctx) {
        match self.bit {
            Some(frozen) => self.base.set_page_bit(page, frozen(ctx)),
            None => self.oracle.on_user_write(page, ctx),
        }
        self.base.on_user_write(page, ctx);
    }
    fn on_gc_write(&mut self, page: u64, ctx: &Ctx) {
        self.current = self.verdict(page, ctx);
        self.gc_moves += 1;
        self.oracle.on_gc_move(page, self.current, ctx);
        if self.current {
            self.frozen_moves += 1;
        } else {
            self.base.on_gc_write(page, ctx);
        }
    }
    fn classify(&mut self, is_gc: bool, page: u64, ctx: &Ctx) -> u16 {
        if is_gc && self.current {
            self.current = false;
            return self.frozen_class;
        }
        self.current = false;
        let c = self.base.classify(is_gc, page, ctx);
        debug_assert!(c < self.base.classes(), "base class in range");
        c
    }
    fn wants_invalidate(&self) -> bool {
        self.base.wants_invalidate()
    }
    fn on_invalidate(&mut self, page: u64, unit: &UnitInfo, ctx: &Ctx) {
        self.base.on_invalidate(page, unit, ctx);
    }
    fn on_batch(&mut self, is_gc: bool, pages: &[u64], hints: &[u64], ctx: &Ctx) {
        self.base.on_batch(is_gc, pages, hints, ctx);
    }
    fn on_open(&mut self, unit: &UnitInfo, ctx: &Ctx) {
        self.base.on_open(unit, ctx);
    }
    fn on_seal(&mut self, unit: &UnitInfo, ctx: &Ctx) {
        self.base.on_seal(unit, ctx);
    }
    fn on_collect(&mut self, unit: &UnitInfo, ctx: &Ctx) {
        assert!(
            self.v.next == self.v.pages.len(),
            "the previous victim's pages were not all moved ({} of {})",
            self.v.next,
            self.v.pages.len()
        );
        self.v.pages.clear();
        self.v.frozen.clear();
        self.v.next = 0;
        self.base.on_collect(unit, ctx);
    }
    fn wants_victim_pages(&self) -> bool {
        true
    }
    fn on_victim_pages(&mut self, pages: &[u64], ctx: &Ctx) {
        self.v.pages.clear();
        self.v.pages.extend_from_slice(pages);
        self.v.next = 0;
        if self.bit.is_none() {
            self.oracle.predict(pages, ctx, &mut self.v.frozen);
        }
        self.batches += 1;
        assert!(
            self.bit.is_some() || self.v.frozen.len() == pages.len(),
            "the oracle gave one verdict per page"
        );
    }
    fn victim(&mut self, view: &dyn UnitView) -> Victim {
        self.base.victim(view)
    }
    fn report(&self) -> String {
        let share = if self.gc_moves == 0 {
            0.0
        } else {
            crate::stats::as_f64(self.frozen_moves) / crate::stats::as_f64(self.gc_moves)
        };
        format!(
            "{}; frozen class {}: {} of {} GC moves judged frozen ({:.1}%), {} victim batches, {} unbatched; {}",
            self.base.report(),
            self.frozen_class,
            self.frozen_moves,
            self.gc_moves,
            100.0 * share,
            self.batches,
            self.unbatched,
            self.oracle.report()
        )
    }
}

const UNSEEN: u8 = u8::MAX;

/// DAC as SepFrozen's paper states it (Fig. 9): a page's temperature starts at class 1 (the
/// paper's "2") on its first write; a user write goes to the class of its temperature, *then*
/// raises it; a GC write goes to the class of its temperature, then lowers it; the
/// temperature stays in `0..n` (the paper is silent on bounds). Class `n - 1` is the hottest.
/// [`super::Dac`] is SepBIT's code instead (start at 0, update before classifying).
pub struct DacPaper {
    n: u16,
    temp: Vec<u8>,
    /// The class of the write in progress (set by the write hooks).
    current: u16,
}

impl DacPaper {
    /// The paper's DAC with `n` classes (2..=16).
    ///
    /// # Panics
    /// If `n` is out of range.
    #[must_use]
    pub fn new(n: u16) -> Self {
        assert!(
            (2..=super::MAX_CLASSES).contains(&n),
            "DAC needs 2..=16 classes"
        );
        DacPaper {
            n,
            temp: Vec::new(),
            current: 0,
        }
    }

    /// The temperature (class of the next user write) of `page`, None if never written.
    #[must_use]
    pub fn temperature(&self, page: u64) -> Option<u16> {
        let t = self.temp[idx(page)];
        (t != UNSEEN).then_some(u16::from(t))
    }
}

impl Placement for DacPaper {
    fn wants_requests(&self) -> bool {
        false
    }
    fn prefetch(&self, page: u64) {
        crate::prefetch::line(&self.temp, idx(page));
    }
    fn memory_bytes(&self) -> u64 {
        super::bytes_of(&self.temp)
    }
    fn name(&self) -> String {
        format!("dac-paper:{}", self.n)
    }
    fn classes(&self) -> u16 {
        self.n
    }
    fn init(&mut self, geo: &Geometry) {
        self.temp = crate::hugepage::filled(idx(geo.logical_pages), UNSEEN);
    }
    fn on_user_write(&mut self, page: u64, _ctx: &Ctx) {
        let top = u8::try_from(self.n - 1).expect("n <= 16");
        let t = &mut self.temp[idx(page)];
        if *t == UNSEEN {
            *t = 1;
        }
        self.current = u16::from(*t);
        *t = (*t + 1).min(top);
    }
    fn on_gc_write(&mut self, page: u64, _ctx: &Ctx) {
        let t = &mut self.temp[idx(page)];
        assert_ne!(*t, UNSEEN, "GC moved page {page} that was never written");
        self.current = u16::from(*t);
        *t = t.saturating_sub(1);
    }
    fn classify(&mut self, _is_gc: bool, _page: u64, _ctx: &Ctx) -> u16 {
        debug_assert!(self.current < self.n);
        self.current
    }
}

#[cfg(test)]
mod tests {
    //! The paper's Figures 8 and 9 as class walks, with scripted oracles.

    use super::*;
    use crate::NEVER;
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// Frozen iff the page is in the set.
    struct SetOracle(HashSet<u64>);

    impl FrozenOracle for SetOracle {
        fn name(&self) -> String {
            "set".into()
        }
        fn predict(&mut self, pages: &[u64], _ctx: &Ctx, out: &mut Vec<bool>) {
            out.clear();
            out.extend(pages.iter().map(|p| self.0.contains(p)));
        }
    }

    /// `sepfrozen-bit:N` is SepFrozenBIT over the hints' future: it asks for the hints, and
    /// its oracle calls a version frozen exactly when its write had no next write (page 65
    /// rewritten later is not; page 3 written last is; a page rewritten with NEVER turns
    /// frozen).
    #[test]
    fn sepfrozen_bit_reads_the_hints() {
        let kind: crate::PlacementKind = "sepfrozen-bit:6".parse().unwrap();
        assert_eq!(kind, crate::PlacementKind::SepFrozenBit(6));
        assert_eq!(kind.to_string(), "sepfrozen-bit:6");
        assert!(kind.needs_future() && kind.build().needs_future());
        assert!(!crate::PlacementKind::all().contains(&kind));
        let mut o = HintOracle::default();
        o.init(&Geometry {
            logical_pages: 130,
            unit_pages: 16,
            units: 16,
            gc_in_order: false,
        });
        let hinted = |next| Ctx {
            next_write_in: next,
            ..ctx(1)
        };
        o.on_user_write(65, &hinted(10));
        o.on_user_write(3, &hinted(NEVER));
        o.on_user_write(129, &hinted(5));
        o.on_user_write(129, &hinted(NEVER));
        let mut out = Vec::new();
        o.predict(&[65, 3, 129, 0], &ctx(2), &mut out);
        assert_eq!(out, vec![false, true, true, false]);
        assert_eq!(o.memory_bytes(), 3 * 8);
    }

    fn oracle(frozen: &[u64]) -> Box<dyn FrozenOracle> {
        Box::new(SetOracle(frozen.iter().copied().collect()))
    }

    fn geo() -> Geometry {
        Geometry {
            logical_pages: 64,
            unit_pages: 16,
            units: 64,
            gc_in_order: false,
        }
    }

    fn ctx(now: u64) -> Ctx {
        Ctx {
            now,
            live: 64,
            next_write_in: NEVER,
        }
    }

    fn unit(class: u16) -> UnitInfo {
        UnitInfo {
            unit: 0,
            class,
            created_at: 0,
            sealed_at: 0,
            valid: 1,
            capacity: 16,
            sealed: true,
        }
    }

    fn user(p: &mut dyn Placement, page: u64, now: u64) -> u16 {
        let c = ctx(now);
        p.on_user_write(page, &c);
        p.classify(false, page, &c)
    }

    /// GC of a victim of `class` holding `pages`, listed first when `batched`.
    fn gc(p: &mut dyn Placement, pages: &[u64], now: u64, class: u16, batched: bool) -> Vec<u16> {
        let c = ctx(now);
        p.on_collect(&unit(class), &c);
        if batched && p.wants_victim_pages() {
            p.on_victim_pages(pages, &c);
        }
        pages
            .iter()
            .map(|&pg| {
                p.on_gc_write(pg, &c);
                p.classify(true, pg, &c)
            })
            .collect()
    }

    #[test]
    fn sepfrozen_bit_sends_frozen_pages_straight_to_the_last_class() {
        // Fig. 8: page 2 is hot (class 0), then frozen: GC sends it to class 5 at once,
        // where SepBIT walks it 2 -> 3 -> 4 -> 5 (Fig. 5). Page 3 is judged normal: SepBIT's walk.
        let mut s = SepFrozen::bit(6, oracle(&[2]));
        s.init(&geo());
        assert_eq!(user(&mut s, 3, 1), 1, "first write: infinite interval");
        assert_eq!(user(&mut s, 2, 2), 1);
        assert_eq!(user(&mut s, 3, 3), 1, "interval 2, FIFO of 2: not inside");
        assert_eq!(user(&mut s, 2, 4), 0, "interval 2 < FIFO of 3");
        assert_eq!(gc(&mut s, &[2, 3], 4, 0, true), vec![5, 2]);
        assert_eq!(s.moves(), (2, 1));
        assert_eq!(s.unbatched(), 0);
        assert_eq!(s.frozen_class(), 5);
        // A writer that does not list the pages: judged one by one, same classes.
        assert_eq!(gc(&mut s, &[2, 3], 5, 0, false), vec![5, 2]);
        assert_eq!(s.unbatched(), 2);
        // A false positive leaves the frozen class at its next user write.
        assert_eq!(user(&mut s, 2, 6), 0, "interval 2 < FIFO of 5");
        assert!(s.name().starts_with("sepfrozen-bit:6(set)"), "{}", s.name());
        assert!(s.report().contains("1 victim batches"), "{}", s.report());
    }

    #[test]
    fn dac_paper_walk_and_sepfrozen_dac() {
        // Fig. 9 without a model: start at class 1, up per user write, down per GC.
        let mut d = DacPaper::new(6);
        d.init(&geo());
        let up: Vec<u16> = (1..=6).map(|t| user(&mut d, 7, t)).collect();
        assert_eq!(up, vec![1, 2, 3, 4, 5, 5], "write then raise, capped at 5");
        let down: Vec<u16> = (0..7).flat_map(|_| gc(&mut d, &[7], 9, 5, true)).collect();
        assert_eq!(down, vec![5, 4, 3, 2, 1, 0, 0], "write then lower, floor 0");
        assert_eq!(d.temperature(7), Some(0));
        assert_eq!(d.temperature(8), None);
        // SepFrozenDAC: a frozen page goes to class 0 and keeps its temperature.
        let mut s = SepFrozen::dac(6, oracle(&[7]));
        s.init(&geo());
        for t in 1..=4 {
            user(&mut s, 7, t);
            user(&mut s, 8, t);
        }
        assert_eq!(gc(&mut s, &[7, 8], 5, 4, true), vec![0, 5]);
        assert_eq!(s.base().temperature(7), Some(5), "frozen: temperature kept");
        assert_eq!(s.base().temperature(8), Some(4), "normal: lowered");
        assert_eq!(user(&mut s, 7, 6), 5, "rewritten: back to its temperature");
    }

    #[test]
    #[should_panic(expected = "were not all moved")]
    fn a_victim_left_half_moved_is_caught() {
        let mut s = SepFrozen::bit(6, oracle(&[]));
        s.init(&geo());
        user(&mut s, 1, 1);
        user(&mut s, 2, 2);
        let c = ctx(3);
        s.on_collect(&unit(1), &c);
        s.on_victim_pages(&[1, 2], &c);
        s.on_gc_write(1, &c);
        s.classify(true, 1, &c);
        s.on_collect(&unit(1), &c);
    }

    /// A random stream: user writes (page) and GC rounds (victim class, pages).
    fn stream() -> impl Strategy<Value = Vec<(bool, u16, Vec<u64>)>> {
        prop::collection::vec(
            (
                any::<bool>(),
                0u16..6,
                prop::collection::vec(0u64..64, 1..8),
            ),
            1..80,
        )
    }

    /// [`HintOracle`] keeping its own bitset: every hook forwarded except
    /// `user_write_bit`, so the wrapper cannot lend it SepBIT's bit.
    #[derive(Default)]
    struct OwnBits(HintOracle);

    impl FrozenOracle for OwnBits {
        fn name(&self) -> String {
            self.0.name()
        }
        fn init(&mut self, geo: &Geometry) {
            self.0.init(geo);
        }
        fn on_user_write(&mut self, page: u64, ctx: &Ctx) {
            self.0.on_user_write(page, ctx);
        }
        fn predict(&mut self, pages: &[u64], ctx: &Ctx, out: &mut Vec<bool>) {
            self.0.predict(pages, ctx, out);
        }
        fn memory_bytes(&self) -> u64 {
            self.0.memory_bytes()
        }
        fn needs_future(&self) -> bool {
            true
        }
    }

    /// SepFrozenBIT over the hints keeps the frozen bit in SepBIT's last write times: no
    /// bitset of its own (memory = SepBIT's), and the verdicts of the bitset.
    #[test]
    fn the_frozen_bit_rides_in_sepbits_times() {
        let g = Geometry {
            logical_pages: 640,
            unit_pages: 16,
            units: 64,
            gc_in_order: false,
        };
        let mut shared = SepFrozen::bit(6, Box::new(HintOracle::default()));
        let mut own = SepFrozen::bit(6, Box::new(OwnBits::default()));
        let mut bit = SepBit::new(6);
        for p in [&mut shared as &mut dyn Placement, &mut own, &mut bit] {
            p.init(&g);
        }
        assert_eq!(shared.memory_bytes(), bit.memory_bytes(), "no bitset");
        assert_eq!(
            own.memory_bytes(),
            bit.memory_bytes() + 80,
            "its own bitset"
        );
        for (now, (page, next)) in [(3, NEVER), (4, 2), (600, NEVER), (3, 9)]
            .into_iter()
            .enumerate()
        {
            let c = Ctx {
                next_write_in: next,
                ..ctx(now as u64 + 1)
            };
            assert_eq!(shared.user_write(page, &c), own.user_write(page, &c));
        }
        assert_eq!(gc(&mut shared, &[4, 600, 3], 9, 1, true), vec![3, 5, 3]);
        assert_eq!(gc(&mut own, &[4, 600, 3], 9, 1, true), vec![3, 5, 3]);
        for s in [&mut shared, &mut own] {
            assert_eq!(gc(s, &[600], 9, 1, false), vec![5], "judged alone");
        }
        assert_eq!((shared.moves(), own.moves()), ((4, 2), (4, 2)));
        assert_eq!((shared.unbatched(), own.unbatched()), (1, 1));
    }

    /// One step of a replayed [`stream`]: a user write of a page at a time, or a GC round
    /// of a victim of a class holding pages written so far (each once), at a time.
    enum Step<'a> {
        User(u64, u64),
        Gc(u16, &'a [u64], u64),
    }

    /// Replay `ops` through `step`, on the user-write clock.
    fn replay(
        ops: &[(bool, u16, Vec<u64>)],
        mut step: impl FnMut(Step) -> Result<(), TestCaseError>,
    ) -> Result<(), TestCaseError> {
        let mut written = HashSet::new();
        let mut now = 0;
        for (is_user, class, pages) in ops {
            if *is_user {
                for &p in pages {
                    now += 1;
                    written.insert(p);
                    step(Step::User(p, now))?;
                }
                continue;
            }
            let mut victim: Vec<u64> = pages
                .iter()
                .copied()
                .filter(|p| written.contains(p))
                .collect();
            victim.dedup();
            step(Step::Gc(*class, &victim, now))?;
        }
        Ok(())
    }

    proptest! {
        /// SepFrozenBIT over the hints places every write as with the oracle's own bitset
        /// (the bit lent by SepBIT changes no decision), user writes with and without a
        /// next write, victims listed or not.
        #[test]
        fn the_lent_bit_places_as_the_bitset(
            ops in stream(),
            never in prop::collection::vec(any::<bool>(), 64),
        ) {
            let mut shared = SepFrozen::bit(6, Box::new(HintOracle::default()));
            let mut own = SepFrozen::bit(6, Box::new(OwnBits::default()));
            shared.init(&geo());
            own.init(&geo());
            replay(&ops, |step| {
                match step {
                    Step::User(p, now) => {
                        let next = if never[usize::try_from(p).unwrap()] { NEVER } else { 3 };
                        let c = Ctx { next_write_in: next, ..ctx(now) };
                        prop_assert_eq!(shared.user_write(p, &c), own.user_write(p, &c));
                    }
                    Step::Gc(class, victim, now) => {
                        let batched = class % 2 == 0;
                        prop_assert_eq!(
                            gc(&mut shared, victim, now, class, batched),
                            gc(&mut own, victim, now, class, batched)
                        );
                    }
                }
                Ok(())
            })?;
            prop_assert_eq!(shared.moves(), own.moves());
        }

        /// SepFrozen = the base scheme on every write the oracle does not claim, the frozen
        /// class on every one it does; classes always in range.
        #[test]
        fn sepfrozen_is_the_base_scheme_plus_the_frozen_class(
            ops in stream(),
            frozen in prop::collection::hash_set(0u64..64, 0..32),
            dac in any::<bool>(),
        ) {
            let mut base: Box<dyn Placement> =
                if dac { Box::new(DacPaper::new(6)) } else { Box::new(SepBit::new(6)) };
            let orc: Box<dyn FrozenOracle> = Box::new(SetOracle(frozen.clone()));
            let mut sf: Box<dyn Placement> =
                if dac { Box::new(SepFrozen::dac(6, orc)) } else { Box::new(SepFrozen::bit(6, orc)) };
            let fclass = if dac { 0 } else { 5 };
            base.init(&geo());
            sf.init(&geo());
            replay(&ops, |step| {
                match step {
                    Step::User(p, now) => {
                        prop_assert_eq!(user(&mut *sf, p, now), user(&mut *base, p, now));
                    }
                    // GC moves each written page once; the base sees only the unclaimed ones.
                    Step::Gc(class, victim, now) => {
                        let got = gc(&mut *sf, victim, now, class, true);
                        let normal: Vec<u64> = victim.iter().copied().filter(|p| !frozen.contains(p)).collect();
                        let want = gc(&mut *base, &normal, now, class, true);
                        let mut w = want.iter();
                        for (&p, &c) in victim.iter().zip(&got) {
                            prop_assert!(c < 6);
                            if frozen.contains(&p) {
                                prop_assert_eq!(c, fclass);
                            } else {
                                prop_assert_eq!(Some(&c), w.next());
                            }
                        }
                    }
                }
                Ok(())
            })?;
        }
    }
}
