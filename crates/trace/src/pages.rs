//! From byte requests to 4 KiB pages: page ranges, the set of written pages, dense page ids
//! (so a sparse trace replays on a device the size of its footprint), and next-overwrite times
//! (the future an oracle placement needs).

use std::collections::HashMap;
use std::ops::Range;

/// Bytes per page (the FTL's page and the replay's unit).
pub const PAGE: u64 = 4096;

/// "Never invalidated again" in [`next_overwrite`]'s output.
pub const NEVER: u64 = u64::MAX;

/// Pages of a request as SepBIT converts them: first = offset / 4096, end = ceil((offset +
/// len) / 4096). A partial page counts whole; a zero-length request covers no page.
#[must_use]
pub fn page_range(offset: u64, len: u64) -> Range<u64> {
    if len == 0 {
        let p = offset / PAGE;
        return p..p;
    }
    let end = offset.saturating_add(len).div_ceil(PAGE);
    debug_assert!(offset / PAGE < end, "a request with data covers a page");
    offset / PAGE..end
}

/// A growable set of page numbers (one bit per page up to the highest one inserted).
#[derive(Debug, Clone, Default)]
pub struct PageSet {
    bits: Vec<u64>,
}

impl PageSet {
    /// Insert `page`; true if it was not in the set.
    ///
    /// # Panics
    /// If `page / 64` does not fit `usize` (not on 64-bit targets).
    pub fn insert(&mut self, page: u64) -> bool {
        let word = usize::try_from(page / 64).expect("page number fits the address space");
        if word >= self.bits.len() {
            self.bits.resize((word + 1).next_power_of_two(), 0);
        }
        let mask = 1u64 << (page % 64);
        let fresh = self.bits[word] & mask == 0;
        self.bits[word] |= mask;
        debug_assert!(self.contains(page));
        fresh
    }

    /// Whether `page` is in the set.
    #[must_use]
    pub fn contains(&self, page: u64) -> bool {
        usize::try_from(page / 64)
            .ok()
            .and_then(|w| self.bits.get(w))
            .is_some_and(|w| w & (1u64 << (page % 64)) != 0)
    }
}

/// Pages below this use a direct table (4 B per page of address space); above it, a hash map.
const TABLE_PAGES: u64 = 1 << 28;

/// Dense page ids, given in first-write order: (volume, page) -> 0, 1, 2, ... Pages that were
/// never written have no id (a discard or read of them is a no-op for the replay).
#[derive(Debug, Clone, Default)]
pub struct DenseMap {
    /// Per volume: id + 1 of each page (0 = none).
    tables: Vec<Vec<u32>>,
    far: HashMap<(u32, u64), u32>,
    next: u32,
}

/// More than 2^32 - 1 distinct pages: the FTL model's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("more than {max} distinct pages written (the FTL model addresses 2^32 - 1 pages)")]
pub struct TooManyPages {
    /// The limit.
    pub max: u64,
}

impl DenseMap {
    /// Distinct pages with an id.
    #[must_use]
    pub fn len(&self) -> u64 {
        u64::from(self.next)
    }

    /// True before the first write.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.next == 0
    }

    /// The id of a page, if it was written.
    #[inline]
    #[must_use]
    pub fn get(&self, volume: u32, page: u64) -> Option<u32> {
        if page < TABLE_PAGES {
            let t = self.tables.get(volume as usize)?;
            let v = *t.get(usize::try_from(page).ok()?)?;
            v.checked_sub(1)
        } else {
            self.far.get(&(volume, page)).copied()
        }
    }

    /// The ids of many pages of one volume, appended to `out`: the replay's fast path. The
    /// lookups do not depend on each other, so their cache misses overlap. Returns false (and
    /// leaves `out` as it was) if a page has no id.
    pub fn get_many(&self, volume: u32, pages: &[u64], out: &mut Vec<u32>) -> bool {
        let start = out.len();
        let table = self
            .tables
            .get(volume as usize)
            .map_or(&[][..], Vec::as_slice);
        let mut missing = false;
        for &p in pages {
            let id = match usize::try_from(p).ok().filter(|_| p < TABLE_PAGES) {
                Some(i) => table.get(i).map_or(u32::MAX, |v| v.wrapping_sub(1)),
                None => self.far.get(&(volume, p)).copied().unwrap_or(u32::MAX),
            };
            missing |= id == u32::MAX;
            out.push(id);
        }
        if missing {
            out.truncate(start);
        }
        !missing
    }

    /// The id of a page, giving it the next one on its first write.
    ///
    /// # Errors
    /// [`TooManyPages`] past 2^32 - 2 ids.
    ///
    /// # Panics
    /// Never: table pages are below 2^28.
    #[inline]
    pub fn get_or_insert(&mut self, volume: u32, page: u64) -> Result<u32, TooManyPages> {
        if let Some(id) = self.get(volume, page) {
            return Ok(id);
        }
        let id = self.next;
        if id >= u32::MAX - 1 {
            return Err(TooManyPages {
                max: u64::from(u32::MAX - 1),
            });
        }
        self.next += 1;
        if page < TABLE_PAGES {
            let v = volume as usize;
            if v >= self.tables.len() {
                self.tables.resize(v + 1, Vec::new());
            }
            let t = &mut self.tables[v];
            let p = usize::try_from(page).expect("below TABLE_PAGES");
            if p >= t.len() {
                t.resize((p + 1).next_power_of_two().max(1024), 0);
            }
            t[p] = id + 1;
        } else {
            self.far.insert((volume, page), id);
        }
        debug_assert_eq!(self.get(volume, page), Some(id));
        Ok(id)
    }
}

/// One page-level event of a device, in trace order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageEvent {
    /// A host write of dense page id.
    Write(u32),
    /// A discard of dense page id (a discard of an unwritten page is not an event).
    Discard(u32),
}

/// Builds next-overwrite times in one forward pass: memory 8 B per page write plus 16 B per
/// page.
#[derive(Debug, Clone, Default)]
pub struct NextOverwrite {
    next: Vec<u64>,
    /// Per page: writes clock of its current (latest) write + 1, 0 = not valid.
    last: Vec<u64>,
    /// Per page: writes clock of its first event (write or discard) + 1, 0 = none yet.
    first: Vec<u64>,
}

impl NextOverwrite {
    /// An empty builder.
    #[must_use]
    pub fn new() -> NextOverwrite {
        NextOverwrite::default()
    }

    fn grow(&mut self, page: u32) -> usize {
        let p = page as usize;
        if p >= self.last.len() {
            let n = (p + 1).next_power_of_two();
            self.last.resize(n, 0);
            self.first.resize(n, 0);
        }
        p
    }

    /// The writes clock: page writes so far.
    #[must_use]
    pub fn clock(&self) -> u64 {
        self.next.len() as u64
    }

    /// Apply one event.
    ///
    /// # Panics
    /// If a page write is invalidated twice (a bug of this builder).
    pub fn push(&mut self, ev: PageEvent) {
        let now = self.clock();
        let (page, write) = match ev {
            PageEvent::Write(p) => (p, true),
            PageEvent::Discard(p) => (p, false),
        };
        let p = self.grow(page);
        if self.first[p] == 0 {
            self.first[p] = now + 1;
        }
        if let Some(prev) = self.last[p].checked_sub(1) {
            let slot = usize::try_from(prev).expect("clock indexes next");
            debug_assert_eq!(self.next[slot], NEVER, "a write is invalidated once");
            self.next[slot] = now;
        }
        if write {
            self.last[p] = now + 1;
            self.next.push(NEVER);
        } else {
            self.last[p] = 0;
        }
    }

    /// The times. `looped`: the trace repeats (a replay that loops it), so a page's last
    /// write of a pass is invalidated by the page's first event of the next pass, at
    /// `clock + first`; otherwise it stays [`NEVER`].
    ///
    /// # Panics
    /// If a time is not after its write (a bug of this builder).
    #[must_use]
    pub fn finish(mut self, looped: bool) -> Vec<u64> {
        let pass = self.clock();
        if looped {
            for (p, &last) in self.last.iter().enumerate() {
                if let (Some(i), Some(f)) = (last.checked_sub(1), self.first[p].checked_sub(1)) {
                    let slot = usize::try_from(i).expect("clock indexes next");
                    self.next[slot] = pass + f;
                }
            }
        }
        for (i, &n) in self.next.iter().enumerate() {
            assert!(
                n > i as u64,
                "write {i} is invalidated at {n}, not after it"
            );
        }
        self.next
    }
}

/// The next-overwrite time of every page write, in writes-clock units (the clock is the
/// number of page writes before; write i happens at clock i). Entry i is the clock at which
/// the page written by write i is next invalidated: overwritten (the clock of that write) or
/// discarded (the clock when the discard comes, i.e. the page writes before it); [`NEVER`] if
/// it stays valid to the end. `looped`: see [`NextOverwrite::finish`]. With a looped trace of
/// `n` page writes, write i of pass k (clock k n + i) is invalidated at k n + next[i].
#[must_use]
pub fn next_overwrite(events: impl IntoIterator<Item = PageEvent>, looped: bool) -> Vec<u64> {
    let mut b = NextOverwrite::new();
    for ev in events {
        b.push(ev);
    }
    b.finish(looped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use PageEvent::{Discard, Write};

    #[test]
    fn page_ranges_follow_sepbit() {
        assert_eq!(page_range(0, 4096), 0..1);
        assert_eq!(page_range(4095, 2), 0..2);
        assert_eq!(page_range(8192, 1), 2..3);
        assert_eq!(page_range(4096 * 3, 0), 3..3);
        assert_eq!(page_range(100, 0), 0..0);
    }

    #[test]
    fn dense_ids_in_first_write_order() {
        let mut m = DenseMap::default();
        assert_eq!(m.get_or_insert(0, 1000).unwrap(), 0);
        assert_eq!(m.get_or_insert(1, 1000).unwrap(), 1);
        assert_eq!(m.get_or_insert(0, 1000).unwrap(), 0);
        assert_eq!(m.get_or_insert(0, 1 << 40).unwrap(), 2);
        assert_eq!(m.get(0, 1 << 40), Some(2));
        assert_eq!(m.get(0, 5), None);
        assert_eq!(m.get(7, 5), None);
        assert_eq!(m.len(), 3);
        let mut out = vec![9];
        assert!(m.get_many(0, &[1000, 1 << 40, 1000], &mut out));
        assert_eq!(out, vec![9, 0, 2, 0]);
        assert!(
            !m.get_many(0, &[1000, 5], &mut out),
            "page 5 was never written"
        );
        assert_eq!(out, vec![9, 0, 2, 0]);
    }

    #[test]
    fn next_overwrite_by_hand() {
        // clocks: w0 p0, w1 p1, w2 p0, discard p1 (at clock 3), w3 p2, w4 p1
        let ev = [Write(0), Write(1), Write(0), Discard(1), Write(2), Write(1)];
        assert_eq!(next_overwrite(ev, false), vec![2, 3, NEVER, NEVER, NEVER]);
        // Looped (pass of 5): p0 first event at 0 -> 5; p2 first at 3 -> 8; p1 first at 1 -> 6.
        assert_eq!(next_overwrite(ev, true), vec![2, 3, 5, 8, 6]);
    }

    #[test]
    fn discard_before_first_write_ends_the_loop_lifespan() {
        // p0: discard at clock 0, then written at clock 0: in the next pass the discard
        // (clock 1 + 0) kills it.
        let ev = [Discard(0), Write(0)];
        assert_eq!(next_overwrite(ev, true), vec![1]);
    }

    #[test]
    fn page_set_grows() {
        let mut s = PageSet::default();
        assert!(s.insert(5));
        assert!(!s.insert(5));
        assert!(s.insert(1 << 20));
        assert!(s.contains(1 << 20) && s.contains(5) && !s.contains(6));
    }
}
