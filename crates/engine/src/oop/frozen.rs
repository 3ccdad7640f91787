//! The engine's hook for SepFrozenBIT / SepFrozenDAC (`nowa_logspace::SepFrozen`): at GC time
//! the frozen-page oracle judges the valid pages of each victim zone in one batch, from their
//! page images (the page header holds the hotness records HR_current / HR_last), before the
//! first of them moves.
//!
//! Wiring: build an [`OopConfig`](super::OopConfig) with `frozen: Some(FrozenHook { .. })`
//! whose `oracle` makes a [`PageOracle`] (e.g. the trained model of `nowa-frozen` decoding
//! the HRs from each image's header). The DB GC then reads all valid pages of its victims
//! first, hands the images of each victim to the oracle through `on_victim_pages`, and moves
//! the pages judged frozen to the frozen class.
//!
//! An online learner (the CLI's `--frozen-model online`, no offline model) is a
//! [`PageOracle`] too: it learns from the store's write observer
//! ([`WriteObserver`](crate::WriteObserver): every user write with its header records, every
//! free, in mapping order) and refits inside `predict`, i.e. at GC, off the write path.

use nowa_logspace::{Ctx, FrozenOracle, Placement, SepFrozen};
use parking_lot::Mutex;
use std::sync::Arc;

/// A frozen-page model that judges page images (the engine side of `FrozenOracle`).
pub trait PageOracle: Send {
    /// Name as printed in results.
    fn name(&self) -> String;
    /// Clear `out`, then push one verdict per page (true = frozen): `pages[i]` is a valid
    /// page of the victim, as (pid, its current image), in the order GC moves them.
    fn predict(&mut self, pages: &[(u64, &[u8])], out: &mut Vec<bool>);
    /// [`PageOracle::predict`] at `now`, the DB-written-page timer: the largest HR_current
    /// write time among the store's user writes since it opened (the buffer pool's timer as
    /// of the store's last user write; GC does not advance it; the write log's timer too).
    /// A model with an age input (now - WT of HR_current) uses it; by default `predict`.
    /// (The placement's `Ctx::now` is the log space's own user-write clock: it restarts with
    /// the store, counts adopted pages at open and only this store's writes, so it is not
    /// the timer the headers' write times are on.)
    fn predict_at(&mut self, pages: &[(u64, &[u8])], now: u64, out: &mut Vec<bool>) {
        let _ = now;
        self.predict(pages, out);
    }
    /// A user write of `pid` (online learners; the HRs themselves are in the page header).
    fn on_user_write(&mut self, _pid: u64) {}
    /// GC moved `pid`, judged `frozen`.
    fn on_gc_move(&mut self, _pid: u64, _frozen: bool) {}
}

/// The base scheme of SepFrozen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub enum FrozenBase {
    /// SepFrozenBIT: SepBIT, frozen pages to the oldest class.
    Bit,
    /// SepFrozenDAC: the paper's DAC, frozen pages to the coldest class.
    Dac,
}

/// Makes the oracle of a store (once per store built: create and every open).
pub type OracleFactory = Arc<dyn Fn() -> Box<dyn PageOracle> + Send + Sync>;

/// SepFrozen in the engine (see the module docs).
#[derive(Clone)]
pub struct FrozenHook {
    /// The base scheme.
    pub base: FrozenBase,
    /// Classes (open zones): 6 in the paper.
    pub classes: u16,
    /// The oracle.
    pub oracle: OracleFactory,
}

impl std::fmt::Debug for FrozenHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrozenHook")
            .field("base", &self.base)
            .field("classes", &self.classes)
            .finish_non_exhaustive()
    }
}

impl serde::Serialize for FrozenHook {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("FrozenHook", 2)?;
        st.serialize_field("base", &self.base)?;
        st.serialize_field("classes", &self.classes)?;
        st.end()
    }
}

/// The victim being announced, filled by the DB GC before `on_victim_pages`: its valid
/// pages' images and the DB-written-page timer now (see [`PageOracle::predict_at`]).
/// Shared images (`Arc`): the GC keeps them to move the pages, the stash only points at them
/// (copying 4 KiB per moved page into the stash cost more CPU than the inference).
#[derive(Debug, Default)]
pub(super) struct Victim {
    pub(super) images: Vec<(u64, Arc<[u8]>)>,
    pub(super) now: u64,
}

/// Where the DB GC leaves the [`Victim`] it announces.
pub(super) type Stash = Arc<Mutex<Victim>>;

/// The `FrozenOracle` of the placement: reads the stashed images of the pages it is asked
/// about and asks the [`PageOracle`].
struct ImageOracle {
    inner: Box<dyn PageOracle>,
    stash: Stash,
}

impl FrozenOracle for ImageOracle {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn on_user_write(&mut self, page: u64, _ctx: &Ctx) {
        self.inner.on_user_write(page);
    }
    fn on_gc_move(&mut self, page: u64, frozen: bool, _ctx: &Ctx) {
        self.inner.on_gc_move(page, frozen);
    }
    fn predict(&mut self, pages: &[u64], _ctx: &Ctx, out: &mut Vec<bool>) {
        let stash = self.stash.lock();
        let images = &stash.images;
        assert!(
            images.len() == pages.len() && images.iter().zip(pages).all(|(s, &p)| s.0 == p),
            "the stash holds the images of exactly the victim's valid pages"
        );
        let batch: Vec<(u64, &[u8])> = images.iter().map(|(p, img)| (*p, &img[..])).collect();
        self.inner.predict_at(&batch, stash.now, out);
        assert_eq!(out.len(), pages.len(), "one verdict per page");
    }
}

/// The SepFrozen placement of `hook` and the stash the DB GC fills.
pub(super) fn build(hook: &FrozenHook) -> (Box<dyn Placement>, Stash) {
    let stash: Stash = Arc::default();
    let oracle = Box::new(ImageOracle {
        inner: (hook.oracle)(),
        stash: stash.clone(),
    });
    let place: Box<dyn Placement> = match hook.base {
        FrozenBase::Bit => Box::new(SepFrozen::bit(hook.classes, oracle)),
        FrozenBase::Dac => Box::new(SepFrozen::dac(hook.classes, oracle)),
    };
    (place, stash)
}
