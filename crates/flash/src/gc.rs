//! Garbage collection: one round collects up to `victims_per_round` victims, copying their
//! valid pages to the GC destination (streams) or to the class the placement scheme picks.
//! The garbage-proportion trigger runs a round after a user write when the log's GP exceeds
//! its threshold.

use crate::config::as_f64;
use crate::{prefetch, FlashError, Ftl, GcFrontier, NONE};
use nowa_logspace::UnitState;

/// A prefetch distance (a small constant) as a page-number offset; evaluated in constants,
/// so a distance that does not fit fails the build.
const fn pages_ahead(n: usize) -> u32 {
    assert!(
        n <= u32::MAX as usize,
        "a prefetch distance fits a page number"
    );
    #[expect(clippy::cast_possible_truncation, reason = "checked on the line above")]
    let pages = n as u32;
    pages
}

/// [`prefetch::GC_AHEAD`] in page numbers (the native copy loop's distance).
const GC_AHEAD: u32 = pages_ahead(prefetch::GC_AHEAD);

/// [`prefetch::AHEAD`] in page numbers.
const AHEAD: u32 = pages_ahead(prefetch::AHEAD);

impl Ftl {
    /// Reclaim up to `victims_per_round` units. Returns the victims collected (0: nothing
    /// qualified).
    pub(crate) fn gc_round(&mut self) -> Result<u32, FlashError> {
        if self.compact.is_some() {
            return self.compact_gc().map(|()| 1);
        }
        self.in_gc = true;
        let mut done = 0;
        let r = (|| {
            while done < self.cfg.victims_per_round {
                let Some(v) = self.next_victim() else { break };
                if self.placer.is_some() {
                    self.collect_placed(v)?;
                } else {
                    let dest = self.gc_destination(self.space.class(v));
                    self.collect_to(v, dest)?;
                }
                done += 1;
            }
            Ok(())
        })();
        self.in_gc = false;
        if done > 0 {
            self.c.gc_rounds += 1;
        }
        r.map(|()| done)
    }

    fn next_victim(&mut self) -> Option<u32> {
        match self.placer.as_mut() {
            Some(p) => p.victim(&mut self.space).ok(),
            None => self.space.pick_victim().ok(),
        }
    }

    /// The frontier that receives pages relocated out of a unit written by frontier `class`.
    fn gc_destination(&self, class: u16) -> usize {
        let s = usize::from(self.cfg.streams);
        // Host frontiers are classes 0..s, GC frontiers s.. (per-stream: s + stream).
        let stream = usize::from(class) % s;
        let f = match self.layout.gc_frontier {
            GcFrontier::Separate => s,
            GcFrontier::PerStream => s + stream,
            _ => stream,
        };
        debug_assert!(f < self.frontiers.len(), "GC frontier {f} out of range");
        f
    }

    /// [`Ftl::collect_native`] with or without FAR's move counts.
    fn collect_to(&mut self, victim: u32, dest: usize) -> Result<(), FlashError> {
        if self.cfg.track_far {
            self.collect_native::<true>(victim, dest)
        } else {
            self.collect_native::<false>(victim, dest)
        }
    }

    /// Copy the valid pages of `victim` to frontier `dest` and erase it (the fast path: one
    /// destination, mapping lookups batched so their misses overlap).
    /// `FAR`: whether GC-move counts are kept (a const so the copy loop has no branch for it).
    fn collect_native<const FAR: bool>(
        &mut self,
        victim: u32,
        dest: usize,
    ) -> Result<(), FlashError> {
        // A fully valid victim (random, FIFO...) costs a unit's worth of copies and frees
        // nothing; make_room bounds how long that may go on.
        let valid = self.space.valid(victim);
        assert_eq!(
            self.space.state(victim),
            UnitState::InGc,
            "collecting unit {victim} that the policy did not hand over"
        );
        let base = victim * self.unit_pages;
        let mut moved = 0u32;
        // The destination unit's new valid pages, added in bulk when it fills or GC ends.
        let mut fr = self.frontiers[dest];
        let mut pending = 0u32;
        let (end, ahead_by) = (base + self.unit_pages, GC_AHEAD);
        for i in base..(base + ahead_by).min(end) {
            prefetch::line_l2(&self.l2p, self.p2l.lba(i) as usize);
        }
        for ppn in base..base + self.unit_pages {
            if moved == valid {
                break;
            }
            // The victim's pages are read in order; the mapping line of the page GC_AHEAD
            // from here is fetched into L2 while this one is checked and copied.
            let ahead = ppn + ahead_by;
            if ahead < end {
                prefetch::line_l2(&self.l2p, self.p2l.lba(ahead) as usize);
            }
            let raw = self.p2l.raw(ppn);
            let lba = self.p2l.lba_of(raw);
            if self.l2p[lba as usize] != ppn + 1 {
                continue;
            }
            if fr.unit == NONE || fr.wp == self.unit_pages {
                if fr.unit != NONE {
                    self.space.add_valid(fr.unit, pending);
                }
                pending = 0;
                self.frontiers[dest] = fr;
                self.make_room(dest)?;
                fr = self.frontiers[dest];
            }
            debug_assert_ne!(fr.unit, victim, "GC copies into its own victim");
            let new = fr.unit * self.unit_pages + fr.wp;
            if FAR {
                self.p2l.copy_moved(ppn, new, raw);
            } else {
                self.p2l.set(new, lba);
            }
            self.l2p[lba as usize] = new + 1;
            fr.wp += 1;
            pending += 1;
            moved += 1;
        }
        if fr.unit != NONE {
            self.space.add_valid(fr.unit, pending);
        }
        self.frontiers[dest] = fr;
        assert_eq!(
            moved, valid,
            "GC moved {moved} pages but unit {victim} held {valid}"
        );
        self.finish_victim(victim, moved);
        Ok(())
    }

    fn finish_victim(&mut self, victim: u32, moved: u32) {
        self.space.sub_valid(victim, moved);
        self.c.media_pages += u64::from(moved);
        self.c.gc_pages += u64::from(moved);
        self.erase_unit(victim);
    }

    /// Copy the valid pages of `victim` to the classes the placement picks, then erase it.
    ///
    /// Two passes: the first scans the victim as the native loop does (its mapping lines
    /// asked for [`AHEAD`] pages on, so their misses overlap) and lists the valid pages; the
    /// second classifies and appends them in that order, asking for the placement's state
    /// [`AHEAD`] pages on (when the scheme reads it for this victim), their mapping lines
    /// already in cache. One pass did both, with the placement's calls between two lookups.
    /// The pages, their order and the calls to the placement are as in one pass: moving a
    /// page never changes another page's validity.
    fn collect_placed(&mut self, victim: u32) -> Result<(), FlashError> {
        let valid = self.space.valid(victim);
        assert_eq!(
            self.space.state(victim),
            UnitState::InGc,
            "collecting unit {victim} that the placement did not hand over"
        );
        let p = self
            .placer
            .as_mut()
            .expect("collect_placed needs a placement");
        if !p.wants_victim_pages() {
            p.collect(&self.space, victim, None);
            if let Some(class) = p.gc_class() {
                // One class for the whole victim and nothing per page: the native loop.
                p.note_gc_writes(&mut self.space, class, u64::from(valid));
                let f = usize::from(class);
                assert!(f < self.frontiers.len(), "GC class {class} out of range");
                return self.collect_to(victim, f);
            }
            return self.move_victim(victim, valid);
        }
        let mut moving = std::mem::take(&mut self.moving);
        self.valid_pages_of(victim, valid, &mut moving);
        let p = self.placer.as_mut().expect("checked above");
        let pages: Vec<u64> = moving
            .iter()
            .map(|&ppn| u64::from(self.p2l.lba(ppn)))
            .collect();
        p.collect(&self.space, victim, Some(&pages));
        let r = self.move_placed(&moving);
        self.moving = moving;
        r?;
        self.finish_victim(victim, valid);
        Ok(())
    }

    /// The second half of [`Ftl::collect_placed`] for a victim already announced (without
    /// its pages): list the valid pages, move them through the placement, erase.
    fn move_victim(&mut self, victim: u32, valid: u32) -> Result<(), FlashError> {
        let mut moving = std::mem::take(&mut self.moving);
        self.valid_pages_of(victim, valid, &mut moving);
        let r = self.move_placed(&moving);
        self.moving = moving;
        r?;
        self.finish_victim(victim, valid);
        Ok(())
    }

    /// The valid pages of `victim` (`valid` of them) into `out`, in page order.
    fn valid_pages_of(&self, victim: u32, valid: u32, out: &mut Vec<u32>) {
        out.clear();
        let base = victim * self.unit_pages;
        let end = base + self.unit_pages;
        for i in base..(base + AHEAD).min(end) {
            prefetch::line(&self.l2p, self.p2l.lba(i) as usize);
        }
        for ppn in base..end {
            if out.len() == valid as usize {
                break;
            }
            if ppn + AHEAD < end {
                prefetch::line(&self.l2p, self.p2l.lba(ppn + AHEAD) as usize);
            }
            if self.l2p[self.p2l.lba(ppn) as usize] == ppn + 1 {
                out.push(ppn);
            }
        }
        assert_eq!(
            out.len(),
            valid as usize,
            "unit {victim} holds {valid} valid pages"
        );
    }

    /// Classify and append the pages at `moving` (valid, in the victim's order).
    fn move_placed(&mut self, moving: &[u32]) -> Result<(), FlashError> {
        let p = self.placer.as_ref().expect("placed GC has a placement");
        let state = p.gc_reads_state();
        if state {
            for &ppn in moving.iter().take(prefetch::AHEAD) {
                p.prefetch_gc(u64::from(self.p2l.lba(ppn)));
            }
        }
        for (i, &ppn) in moving.iter().enumerate() {
            if state {
                if let Some(&next) = moving.get(i + prefetch::AHEAD) {
                    let p = self.placer.as_ref().expect("checked above");
                    p.prefetch_gc(u64::from(self.p2l.lba(next)));
                }
            }
            let lba = self.p2l.lba(ppn);
            let p = self.placer.as_mut().expect("checked above");
            let class = p.gc_write(&mut self.space, u64::from(lba));
            assert!(
                usize::from(class) < self.frontiers.len(),
                "GC class {class} out of range"
            );
            self.gc_append(lba, ppn, usize::from(class))?;
        }
        Ok(())
    }

    /// Relocate `lba` from physical page `old` to frontier `f`.
    fn gc_append(&mut self, lba: u32, old: u32, f: usize) -> Result<(), FlashError> {
        let mut fr = self.frontiers[f];
        if fr.unit == NONE || fr.wp == self.unit_pages {
            self.make_room(f)?;
            fr = self.frontiers[f];
        }
        debug_assert!(fr.wp < self.unit_pages, "room made in frontier {f}");
        debug_assert_eq!(
            self.l2p[lba as usize],
            old + 1,
            "relocating a stale copy of {lba}"
        );
        let new = fr.unit * self.unit_pages + fr.wp;
        if self.cfg.track_far {
            self.p2l.copy_moved(old, new, self.p2l.raw(old));
        } else {
            self.p2l.set(new, lba);
        }
        self.l2p[lba as usize] = new + 1;
        self.space.add_valid(fr.unit, 1);
        self.frontiers[f].wp = fr.wp + 1;
        Ok(())
    }

    /// SepBIT's trigger: after a user write, if the log's garbage proportion (garbage in sealed
    /// units over all pages written to units not yet erased) exceeds `t`, run one GC round.
    #[inline(never)]
    pub(crate) fn gp_check(&mut self, t: f64) -> Result<(), FlashError> {
        if self.in_gc {
            return Ok(());
        }
        let (sealed, sealed_valid) = self.space.sealed();
        let sealed_pages = u64::from(sealed) * u64::from(self.unit_pages);
        let written = sealed_pages + self.open_pages();
        debug_assert!(
            sealed_valid <= sealed_pages,
            "sealed units hold at most their capacity"
        );
        if written > 0 && as_f64(sealed_pages - sealed_valid) > t * as_f64(written) {
            self.gc_round()?;
        }
        Ok(())
    }
}
