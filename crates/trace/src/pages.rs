//! From byte requests to 4 KiB pages: page ranges, the set of written pages, dense page ids
//! (so a sparse trace replays on a device the size of its footprint), and next-overwrite times
//! (the future an oracle placement needs).

use nowa_units::Mix;
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

/// A set of page numbers: 64 pages per hash entry, so its memory follows the pages inserted
/// (about 0.4 B per page of a dense range, 24 B per page of a scattered one), never the
/// highest page.
#[derive(Debug, Clone, Default)]
pub struct PageSet {
    words: HashMap<u64, u64, Mix>,
}

impl PageSet {
    /// Insert `page`; true if it was not in the set.
    pub fn insert(&mut self, page: u64) -> bool {
        let w = self.words.entry(page / 64).or_insert(0);
        let mask = 1u64 << (page % 64);
        let fresh = *w & mask == 0;
        *w |= mask;
        debug_assert!(self.contains(page));
        fresh
    }

    /// Whether `page` is in the set.
    #[must_use]
    pub fn contains(&self, page: u64) -> bool {
        self.words
            .get(&(page / 64))
            .is_some_and(|w| w & (1u64 << (page % 64)) != 0)
    }
}

/// Pages per chunk of the map (log2): 64 slots of 8 B, 512 B.
const CHUNK_SHIFT: u32 = 6;
const CHUNK: usize = 1 << CHUNK_SHIFT;

/// A page's slot within its chunk.
#[inline]
fn in_chunk(page: u64) -> usize {
    usize::try_from(page & ((1 << CHUNK_SHIFT) - 1)).expect("below 64")
}

/// Volumes below this share one chunk index keyed by `volume << 46 | page / 64` (a byte offset
/// below 2^64 is a page below 2^52); the rest, rare, an index keyed by the pair.
const PACKED_VOLUMES: u32 = 1 << 18;

/// Volumes with a direct chunk table; the others use the hash index only.
const DENSE_VOLUMES: u32 = 1 << 12;

/// "Not mapped": an address written before and discarded since ([`Slot::id`]).
const UNMAPPED: u32 = u32::MAX;
/// "Never written": a slot of a chunk no write has reached ([`Slot::addr`]).
const UNWRITTEN: u32 = u32::MAX;

/// One address of the map: its device page (or unmapped) and its stable index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The device page (logical page of the simulated SSD) the address is mapped to now.
    pub id: u32,
    /// The address's index in first-write order: never reused, the same in every pass.
    pub addr: u32,
}

const EMPTY: Slot = Slot {
    id: UNMAPPED,
    addr: UNWRITTEN,
};

/// The compact address map of a replay: (volume, page) of the trace -> device page.
///
/// - Device pages are handed out on first touch (0, 1, 2, ...), so a sparse trace replays on
///   a device the size of its live data, whatever its addresses.
/// - A discard unmaps the address and frees its device page; the next first touch reuses the
///   most recently freed one before a new one, so [`CompactMap::high_water`] (device pages
///   ever handed out) is the peak of the live pages: the smallest device the trace fits.
/// - Memory grows with the addresses written, never with the highest one: slots live in
///   chunks of 64 consecutive pages (512 B), allocated when a write first reaches them and
///   found through a hash index of the chunks (small: one entry per 64 pages, so it stays in
///   cache and a lookup costs about one miss, as a direct table would). Dense traces cost about
///   8 B per page, the most scattered 512 B per page.
/// - Every address also keeps its index in first-write order ([`Slot::addr`], never
///   reused): the identity next-overwrite times need, stable across passes.
#[derive(Debug, Clone, Default)]
pub struct CompactMap {
    /// Per volume (below [`DENSE_VOLUMES`]): chunk number -> chunk + 1 (0: not here), a direct
    /// table while it stays small beside the chunks ([`CompactMap::dense_room`]).
    dense: Vec<Vec<u32>>,
    index: HashMap<u64, u32, Mix>,
    wide: HashMap<(u32, u64), u32, Mix>,
    slots: Vec<Slot>,
    /// The last chunk found: (key, first slot). Consecutive pages of a request share it.
    last: Option<(u32, u64, usize)>,
    /// [`CompactMap::write_many`]'s slot indices.
    scratch: Vec<usize>,
    addresses: u32,
    ids: Ids,
}

/// More than 2^32 - 1 distinct pages: the FTL model's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("more than {max} distinct pages written (the FTL model addresses 2^32 - 1 pages)")]
pub struct TooManyPages {
    /// The limit.
    pub max: u64,
}

const TOO_MANY: TooManyPages = TooManyPages {
    max: (u32::MAX - 1) as u64,
};

/// The device pages: freed ones, and how many were handed out.
#[derive(Debug, Clone, Default)]
struct Ids {
    free: Vec<u32>,
    /// Device pages handed out so far (the high-water mark of live pages).
    high: u32,
    live: u64,
}

impl Ids {
    /// A device page for an address being mapped: the most recently freed, or a new one.
    fn take(&mut self) -> Result<u32, TooManyPages> {
        let id = match self.free.pop() {
            Some(id) => id,
            None if self.high >= u32::MAX - 1 => return Err(TOO_MANY),
            None => {
                self.high += 1;
                self.high - 1
            }
        };
        self.live += 1;
        debug_assert!(self.live <= u64::from(self.high));
        Ok(id)
    }
}

impl CompactMap {
    /// Distinct addresses ever written (the footprint).
    #[must_use]
    pub fn addresses(&self) -> u64 {
        u64::from(self.addresses)
    }

    /// Addresses mapped now (written and not discarded since).
    #[must_use]
    pub fn live(&self) -> u64 {
        self.ids.live
    }

    /// Device pages handed out: the peak of [`CompactMap::live`] so far. Every device page
    /// is below it.
    #[must_use]
    pub fn high_water(&self) -> u64 {
        u64::from(self.ids.high)
    }

    /// True before the first write.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.addresses == 0
    }

    /// Bytes the map holds (chunks, their index, the free list): what a trace costs in memory.
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        let entry = |cap: usize, size: usize| (cap * (size + 1)) as u64;
        let dense: usize = self.dense.iter().map(Vec::capacity).sum();
        (dense * 4) as u64
            + entry(self.index.capacity(), size_of::<(u64, u32)>())
            + entry(self.wide.capacity(), size_of::<((u32, u64), u32)>())
            + (self.slots.capacity() * size_of::<Slot>()) as u64
            + (self.ids.free.capacity() * 4) as u64
    }

    /// The first slot of the chunk holding (volume, page), if a write reached it.
    #[inline]
    fn find_chunk(&self, volume: u32, page: u64) -> Option<usize> {
        let c = page >> CHUNK_SHIFT;
        if let Some((v, k, first)) = self.last {
            if v == volume && k == c {
                return Some(first);
            }
        }
        let d = self
            .dense
            .get(volume as usize)
            .and_then(|t| t.get(usize::try_from(c).ok()?))
            .and_then(|&i| i.checked_sub(1));
        if let Some(i) = d {
            return Some(i as usize * CHUNK);
        }
        let i = if volume < PACKED_VOLUMES {
            if self.index.is_empty() {
                return None;
            }
            self.index.get(&(u64::from(volume) << 46 | c))
        } else {
            self.wide.get(&(volume, c))
        };
        i.map(|&i| i as usize * CHUNK)
    }

    /// How long a volume's direct chunk table may grow: 4 B per 64 pages of address space, kept
    /// below 64 entries per chunk allocated (256 B beside each 512 B chunk) and at least 2^16,
    /// so memory stays proportional to the pages written.
    fn dense_room(&self) -> u64 {
        ((self.slots.len() / CHUNK) as u64 * 64).max(1 << 16)
    }

    /// The first slot of the chunk holding (volume, page), allocated if no write reached it.
    #[inline]
    fn chunk(&mut self, volume: u32, page: u64) -> Result<usize, TooManyPages> {
        let c = page >> CHUNK_SHIFT;
        let first = match self.find_chunk(volume, page) {
            Some(f) => f,
            None => {
                let n = u32::try_from(self.slots.len() / CHUNK)
                    .ok()
                    .filter(|&n| n < u32::MAX)
                    .ok_or(TOO_MANY)?;
                if volume < DENSE_VOLUMES && c < self.dense_room() {
                    let v = volume as usize;
                    if v >= self.dense.len() {
                        self.dense.resize(v + 1, Vec::new());
                    }
                    let t = &mut self.dense[v];
                    let ci = usize::try_from(c).expect("below the room");
                    if ci >= t.len() {
                        t.resize((ci + 1).next_power_of_two().max(64), 0);
                    }
                    t[ci] = n + 1;
                } else if volume < PACKED_VOLUMES {
                    self.index.insert(u64::from(volume) << 46 | c, n);
                } else {
                    self.wide.insert((volume, c), n);
                }
                self.slots.resize(self.slots.len() + CHUNK, EMPTY);
                n as usize * CHUNK
            }
        };
        self.last = Some((volume, c, first));
        Ok(first)
    }

    /// The address's slot, if it was ever written.
    #[inline]
    #[must_use]
    pub fn get(&self, volume: u32, page: u64) -> Option<Slot> {
        let first = self.find_chunk(volume, page)?;
        Some(self.slots[first + in_chunk(page)]).filter(|s| s.addr != UNWRITTEN)
    }

    /// The device page the address is mapped to now, if it is.
    #[inline]
    #[must_use]
    pub fn device_page(&self, volume: u32, page: u64) -> Option<u32> {
        self.get(volume, page)
            .map(|s| s.id)
            .filter(|&id| id != UNMAPPED)
    }

    /// A write of the address: its slot, mapping it (to a freed device page, or the next new
    /// one) if it is not mapped.
    ///
    /// # Errors
    /// [`TooManyPages`] past 2^32 - 2 addresses or device pages.
    #[inline]
    pub fn write(&mut self, volume: u32, page: u64) -> Result<Slot, TooManyPages> {
        debug_assert!(
            page < 1 << 52,
            "a byte offset below 2^64 is a page below 2^52"
        );
        let i = self.chunk(volume, page)? + in_chunk(page);
        self.write_slot(i)
    }

    #[inline]
    fn write_slot(&mut self, i: usize) -> Result<Slot, TooManyPages> {
        let s = &mut self.slots[i];
        if s.id == UNMAPPED {
            if s.addr == UNWRITTEN {
                if self.addresses >= u32::MAX - 1 {
                    return Err(TOO_MANY);
                }
                s.addr = self.addresses;
                self.addresses += 1;
            }
            s.id = self.ids.take()?;
        }
        Ok(*s)
    }

    /// A discard of the address: unmaps it and frees its device page. Returns the slot as it
    /// was (with the freed device page) if it was mapped; an address never written or already
    /// discarded is a no-op (None).
    ///
    /// # Panics
    /// If the live count disagrees with the slots (a bug of this map).
    #[inline]
    pub fn discard(&mut self, volume: u32, page: u64) -> Option<Slot> {
        let i = self.find_chunk(volume, page)? + in_chunk(page);
        let s = &mut self.slots[i];
        if s.id == UNMAPPED {
            return None;
        }
        let was = *s;
        s.id = UNMAPPED;
        assert!(self.ids.live > 0, "a mapped address is live");
        self.ids.live -= 1;
        self.ids.free.push(was.id);
        Some(was)
    }

    /// Writes of many pages of one volume, in order: their device pages appended to `out`
    /// (the scan's and the replay's fast path).
    ///
    /// A slot is a random memory access (a cache miss for any trace larger than the cache);
    /// one at a time, with a record's decoding between them, the misses would not overlap. So
    /// the slots are found first (the chunk index is small and stays in cache), then loaded in
    /// a tight loop of independent loads, whose misses overlap (a software gather: the batch's
    /// lines, 64 B each, stay in L2), then written.
    ///
    /// # Errors
    /// As [`CompactMap::write`]; `out` then holds the pages mapped before the error.
    pub fn write_many(
        &mut self,
        volume: u32,
        pages: &[u64],
        out: &mut Vec<u32>,
    ) -> Result<(), TooManyPages> {
        let mut idx = std::mem::take(&mut self.scratch);
        idx.clear();
        for &p in pages {
            idx.push(self.chunk(volume, p)? + in_chunk(p));
        }
        let gathered = idx.iter().fold(0u32, |x, &i| x ^ self.slots[i].id);
        std::hint::black_box(gathered);
        out.reserve(pages.len());
        let done = idx.iter().try_for_each(|&i| {
            out.push(self.write_slot(i)?.id);
            Ok(())
        });
        self.scratch = idx;
        done
    }
}

/// [`CompactMap`]'s mapping (first-touch device pages, freed ones reused most recent first)
/// on a direct table of one `u32` per page below `pages`: for a replay whose written pages
/// are dense under a bound (one key), where 4 B per page of the range is no more than the
/// compact map's chunks. A write costs one table entry (4 B, at a fixed place) instead of a
/// chunk lookup and an 8 B slot, and the table is half the size, so more of it stays in the
/// caches. It keeps no first-write index ([`Slot::addr`]): the replay needs only the device
/// page.
#[derive(Debug, Clone)]
pub struct DirectMap {
    /// Per page: its device page, or [`UNMAPPED`].
    ids: Vec<u32>,
    ids_out: Ids,
}

impl DirectMap {
    /// A map of pages `0..pages`, none mapped.
    ///
    /// # Errors
    /// [`TooManyPages`] if `pages` exceeds what a device page can number.
    pub fn new(pages: u64) -> Result<DirectMap, TooManyPages> {
        let n = u32::try_from(pages)
            .ok()
            .filter(|&n| n < u32::MAX)
            .ok_or(TOO_MANY)?;
        Ok(DirectMap {
            ids: vec![UNMAPPED; n as usize],
            ids_out: Ids::default(),
        })
    }

    /// Addresses mapped now.
    #[must_use]
    pub fn live(&self) -> u64 {
        self.ids_out.live
    }

    /// Device pages handed out: as [`CompactMap::high_water`].
    #[must_use]
    pub fn high_water(&self) -> u64 {
        u64::from(self.ids_out.high)
    }

    /// Bytes the map holds.
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        (self.ids.capacity() * 4 + self.ids_out.free.capacity() * 4) as u64
    }

    /// Writes of `pages`, in order: their device pages appended to `out`, as
    /// [`CompactMap::write_many`] would give them. The entries are loaded first in a tight
    /// loop of independent loads (their misses overlap), then written.
    ///
    /// # Errors
    /// [`TooManyPages`] past 2^32 - 2 device pages; `out` then holds the pages mapped before.
    ///
    /// # Panics
    /// If a page is not below the table's bound (the caller sized it from every page written).
    pub fn write_many(&mut self, pages: &[u64], out: &mut Vec<u32>) -> Result<(), TooManyPages> {
        let n = self.ids.len();
        let at = |p: u64| usize::try_from(p).ok().filter(|&i| i < n);
        if let Some(&p) = pages.iter().find(|&&p| at(p).is_none()) {
            panic!("page {p} beyond the direct map's {n} pages");
        }
        let gathered = pages
            .iter()
            .fold(0u32, |x, &p| x ^ self.ids[at(p).unwrap_or(0)]);
        std::hint::black_box(gathered);
        out.reserve(pages.len());
        for &p in pages {
            let e = &mut self.ids[at(p).unwrap_or(0)];
            if *e == UNMAPPED {
                *e = self.ids_out.take()?;
            }
            out.push(*e);
        }
        Ok(())
    }

    /// A discard of `page`: unmaps it and frees its device page, returned if it was mapped
    /// (as [`CompactMap::discard`]).
    ///
    /// # Panics
    /// If the live count disagrees with the table (a bug of this map).
    pub fn discard(&mut self, page: u64) -> Option<u32> {
        let e = self.ids.get_mut(usize::try_from(page).ok()?)?;
        if *e == UNMAPPED {
            return None;
        }
        let id = std::mem::replace(e, UNMAPPED);
        assert!(self.ids_out.live > 0, "a mapped address is live");
        self.ids_out.live -= 1;
        self.ids_out.free.push(id);
        Some(id)
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
    fn compact_map_hands_out_pages_on_first_touch_and_reuses_freed_ones() {
        let mut m = CompactMap::default();
        assert_eq!(m.write(0, 1000).unwrap(), Slot { id: 0, addr: 0 });
        assert_eq!(m.write(1, 1000).unwrap(), Slot { id: 1, addr: 1 });
        assert_eq!(m.write(0, 1000).unwrap(), Slot { id: 0, addr: 0 });
        assert_eq!(m.write(0, 1 << 40).unwrap(), Slot { id: 2, addr: 2 });
        assert_eq!(
            m.write(1 << 20, 7).unwrap(),
            Slot { id: 3, addr: 3 },
            "wide volume"
        );
        assert_eq!((m.live(), m.high_water(), m.addresses()), (4, 4, 4));
        assert_eq!(m.discard(0, 1000), Some(Slot { id: 0, addr: 0 }));
        assert_eq!(m.discard(0, 1000), None, "already discarded");
        assert_eq!(m.discard(0, 5), None, "never written");
        assert_eq!(m.device_page(0, 1000), None);
        assert_eq!(m.get(1 << 20, 7), Some(Slot { id: 3, addr: 3 }));
        assert_eq!(m.get(1 << 20, 8), None, "same chunk, never written");
        assert_eq!(m.discard(1 << 20, 7), Some(Slot { id: 3, addr: 3 }));
        // The most recently freed device page first; the address keeps its index.
        assert_eq!(m.write(0, 9).unwrap(), Slot { id: 3, addr: 4 });
        assert_eq!(m.write(0, 1000).unwrap(), Slot { id: 0, addr: 0 });
        assert_eq!((m.live(), m.high_water(), m.addresses()), (4, 4, 5));
        let mut out = vec![9];
        m.write_many(0, &[1000, 1 << 40, 11], &mut out).unwrap();
        assert_eq!(out, vec![9, 0, 2, 4]);
        assert_eq!(m.high_water(), 5);
    }

    #[test]
    fn compact_map_memory_follows_the_pages_not_the_addresses() {
        let mut m = CompactMap::default();
        for i in 0..1000u64 {
            m.write(0, i << 40).unwrap();
        }
        assert_eq!(m.high_water(), 1000);
        // One 512 B chunk per scattered page: bounded by the pages, not the 2^50 range.
        assert!(m.memory_bytes() < 1000 * 600, "{} B", m.memory_bytes());
        let mut dense = CompactMap::default();
        for i in 0..64_000u64 {
            dense.write(3, i).unwrap();
        }
        assert!(
            dense.memory_bytes() < 64_000 * 10,
            "{} B",
            dense.memory_bytes()
        );
    }

    /// The direct table hands out the compact map's device pages for any sequence of
    /// writes and discards (first touch, freed pages reused most recent first).
    #[test]
    fn direct_map_gives_the_compact_maps_pages() {
        let (mut c, mut d) = (CompactMap::default(), DirectMap::new(5000).unwrap());
        let mut x = 12_345u64;
        let (mut oc, mut od, mut batch) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..200 {
            batch.clear();
            for _ in 0..50 {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                batch.push((x >> 33) % 5000);
            }
            c.write_many(0, &batch, &mut oc).unwrap();
            d.write_many(&batch, &mut od).unwrap();
            for &p in batch.iter().take(round % 20) {
                assert_eq!(c.discard(0, p).map(|s| s.id), d.discard(p));
            }
            assert_eq!(d.discard(7000), None, "beyond the table: never written");
        }
        assert_eq!(oc, od);
        assert_eq!((c.live(), c.high_water()), (d.live(), d.high_water()));
        assert!(c.live() < c.high_water(), "discards freed pages");
        assert!(DirectMap::new(1 << 33).is_err());
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
        assert!(s.insert(1 << 50), "a page far out costs one entry");
        assert!(s.contains(1 << 20) && s.contains(5) && !s.contains(6));
        assert!(s.contains(1 << 50) && !s.contains((1 << 50) + 1));
        assert_eq!(s.words.len(), 3);
    }
}
