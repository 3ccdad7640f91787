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

/// SplitMix64's finalizer ([`nowa_units::mix64`]) as the hash of the map's keys: the std
/// SipHash would cost more than the FTL write behind each lookup.
#[derive(Default)]
struct MixHasher(u64);

impl std::hash::Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = nowa_units::mix64(self.0 ^ u64::from(b));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = nowa_units::mix64(self.0 ^ u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = nowa_units::mix64(self.0 ^ v);
    }
}

type Mix = std::hash::BuildHasherDefault<MixHasher>;

/// Volumes below this share one map keyed by `volume << 52 | page` (a byte offset below 2^64
/// is a page below 2^52); the rest, rare, a map keyed by the pair.
const PACKED_VOLUMES: u32 = 1 << 12;

/// "Not mapped": an address written before and discarded since.
const UNMAPPED: u32 = u32::MAX;

/// One address of the map: its device page (or [`UNMAPPED`]) and its stable index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The device page (logical page of the simulated SSD) the address is mapped to now.
    pub id: u32,
    /// The address's index in first-write order: never reused, the same in every pass.
    pub addr: u32,
}

/// The compact address map of a replay: (volume, page) of the trace -> device page.
///
/// - Device pages are handed out on first touch (0, 1, 2, ...), so a sparse trace replays on
///   a device the size of its live data, whatever its addresses.
/// - A discard unmaps the address and frees its device page; the next first touch reuses the
///   most recently freed one before a new one, so [`CompactMap::high_water`] (device pages
///   ever handed out) is the peak of the live pages: the smallest device the trace fits.
/// - Memory grows with the distinct addresses written (one hash entry each, about 16-32 B),
///   never with the highest address.
/// - Every address also keeps its index in first-write order ([`Slot::addr`], never
///   reused): the identity next-overwrite times need, stable across passes.
#[derive(Debug, Clone, Default)]
pub struct CompactMap {
    packed: HashMap<u64, Slot, Mix>,
    wide: HashMap<(u32, u64), Slot, Mix>,
    ids: Ids,
}

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

/// A write in one of the map's tables: the slot, mapped.
#[inline]
fn write_in<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, Slot, Mix>,
    key: K,
    addresses: u64,
    ids: &mut Ids,
) -> Result<Slot, TooManyPages> {
    use std::collections::hash_map::Entry;
    match map.entry(key) {
        Entry::Occupied(mut o) => {
            let s = o.get_mut();
            if s.id == UNMAPPED {
                s.id = ids.take()?;
            }
            Ok(*s)
        }
        Entry::Vacant(v) => {
            let addr = u32::try_from(addresses)
                .ok()
                .filter(|&a| a < u32::MAX - 1)
                .ok_or(TOO_MANY)?;
            Ok(*v.insert(Slot {
                id: ids.take()?,
                addr,
            }))
        }
    }
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

impl CompactMap {
    /// Distinct addresses ever written (the footprint).
    #[must_use]
    pub fn addresses(&self) -> u64 {
        (self.packed.len() + self.wide.len()) as u64
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
        self.addresses() == 0
    }

    /// Bytes the map holds (its tables' capacity and the free list): what a trace costs in
    /// memory.
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        let entry = |cap: usize, size: usize| (cap * (size + 1)) as u64;
        entry(self.packed.capacity(), size_of::<(u64, Slot)>())
            + entry(self.wide.capacity(), size_of::<((u32, u64), Slot)>())
            + (self.ids.free.capacity() * 4) as u64
    }

    #[inline]
    fn slot(&self, volume: u32, page: u64) -> Option<&Slot> {
        if volume < PACKED_VOLUMES {
            self.packed.get(&(u64::from(volume) << 52 | page))
        } else {
            self.wide.get(&(volume, page))
        }
    }

    /// The address's slot, if it was ever written.
    #[inline]
    #[must_use]
    pub fn get(&self, volume: u32, page: u64) -> Option<Slot> {
        self.slot(volume, page).copied()
    }

    /// The device page the address is mapped to now, if it is.
    #[inline]
    #[must_use]
    pub fn device_page(&self, volume: u32, page: u64) -> Option<u32> {
        self.slot(volume, page)
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
        let addresses = self.addresses();
        let s = if volume < PACKED_VOLUMES {
            let key = u64::from(volume) << 52 | page;
            write_in(&mut self.packed, key, addresses, &mut self.ids)?
        } else {
            write_in(&mut self.wide, (volume, page), addresses, &mut self.ids)?
        };
        debug_assert_eq!(self.device_page(volume, page), Some(s.id));
        Ok(s)
    }

    fn slot_mut(&mut self, volume: u32, page: u64) -> Option<&mut Slot> {
        if volume < PACKED_VOLUMES {
            self.packed.get_mut(&(u64::from(volume) << 52 | page))
        } else {
            self.wide.get_mut(&(volume, page))
        }
    }

    /// A discard of the address: unmaps it and frees its device page. Returns the slot as it
    /// was (with the freed device page) if it was mapped; an address never written or already
    /// discarded is a no-op (None).
    ///
    /// # Panics
    /// If the live count disagrees with the slots (a bug of this map).
    #[inline]
    pub fn discard(&mut self, volume: u32, page: u64) -> Option<Slot> {
        let s = self.slot_mut(volume, page)?;
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

    /// Writes of many pages of one volume: their device pages appended to `out` (the
    /// replay's fast path, one lookup each).
    ///
    /// # Errors
    /// As [`CompactMap::write`]; `out` then holds the pages mapped before the error.
    pub fn write_many(
        &mut self,
        volume: u32,
        pages: &[u64],
        out: &mut Vec<u32>,
    ) -> Result<(), TooManyPages> {
        out.reserve(pages.len());
        for &p in pages {
            out.push(self.write(volume, p)?.id);
        }
        Ok(())
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
            m.write(5000, 7).unwrap(),
            Slot { id: 3, addr: 3 },
            "wide volume"
        );
        assert_eq!((m.live(), m.high_water(), m.addresses()), (4, 4, 4));
        assert_eq!(m.discard(0, 1000), Some(Slot { id: 0, addr: 0 }));
        assert_eq!(m.discard(0, 1000), None, "already discarded");
        assert_eq!(m.discard(0, 5), None, "never written");
        assert_eq!(m.device_page(0, 1000), None);
        assert_eq!(m.discard(5000, 7), Some(Slot { id: 3, addr: 3 }));
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
        assert!(m.memory_bytes() < 1000 * 64, "{} B", m.memory_bytes());
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
