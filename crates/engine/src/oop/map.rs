//! The pid -> location mapping, sized by the pages that were written, not by the device
//! (issue 16 item 4; the SepFrozen paper's two-level table): a directory of pointers, one per
//! [`LEAF`] pids, and a leaf of 12-byte entries allocated when a pid in its range is first
//! mapped. B-tree pids are allocated densely from the low end, so the leaves hold the live
//! pages and the directory costs 8 bytes per 1,024 pids of capacity (0.008 bytes per page).
//!
//! An entry is 12 bytes (`Packed`): the block relative to the zone area (u32; `u32::MAX`:
//! unmapped) and 64 bits of `len:12 | whole:1 | codec:2 | gen:24 | ver:25`. The payload
//! offset in a packed slot is not kept: a read finds its entry in the slot header by pid and
//! generation (which also checks the slot's incarnation). `ver` is the low 25 bits of the
//! page LSN, a version check against the page image (the full LSN is in the page and the
//! slot entry). Each leaf has two dirty bits per pid, one per snapshot copy: the incremental
//! mapping snapshot into a copy writes only the entries changed since that copy's previous
//! snapshot.

use super::{Gen, Loc, NO_BLOCK};
use crate::error::Pid;
use crate::format::zone::GEN_MASK;
use crate::num::{u64_of, usize_of};

/// Pids per leaf.
pub(super) const LEAF: usize = 1024;
const LEAF_WORDS: usize = LEAF / 64;
/// Bits of the page LSN kept as a version check.
pub(super) const VER_BITS: u32 = 25;
const VER_MASK: u64 = (1 << VER_BITS) - 1;
/// Largest compressed length an entry holds (12 bits; a packed payload is smaller than a
/// slot).
const LEN_MAX: u16 = 0x0FFF;
const NO_REL: u32 = u32::MAX;

/// One mapping entry, 12 bytes (alignment 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Packed {
    rel: u32,
    word: [u32; 2],
}

const _: () = assert!(
    std::mem::size_of::<Packed>() == 12,
    "12 bytes per mapped pid"
);

impl Packed {
    const NONE: Packed = Packed {
        rel: NO_REL,
        word: [0, 0],
    };

    /// The 12 on-disk bytes (little endian: rel, then the 64-bit word).
    pub(super) fn to_bytes(self) -> [u8; 12] {
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(&self.rel.to_le_bytes());
        b[4..8].copy_from_slice(&self.word[0].to_le_bytes());
        b[8..].copy_from_slice(&self.word[1].to_le_bytes());
        b
    }

    /// From [`Packed::to_bytes`].
    pub(super) fn from_bytes(b: &[u8; 12]) -> Packed {
        let u = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Packed {
            rel: u(0),
            word: [u(4), u(8)],
        }
    }

    fn word(self) -> u64 {
        u64::from(self.word[0]) | (u64::from(self.word[1]) << 32)
    }
}

/// The low [`VER_BITS`] bits of an LSN (the version check a mapping entry keeps).
#[must_use]
pub(super) fn ver_of(lsn: u64) -> u32 {
    crate::num::u32_from_u64(lsn & VER_MASK)
}

/// Encode a location relative to the zone area starting at block `first`.
///
/// # Panics
/// A location outside the 32-bit zone area or a field beyond its width (the writer checks
/// these; the decoder checks them again when read).
pub(super) fn pack(l: &Loc, first: u64) -> Packed {
    if l.block == NO_BLOCK {
        let mut p = Packed::NONE;
        p.word = split(u64::from(l.gen.get()) << 15);
        return p;
    }
    let rel = u32::try_from(l.block - first).expect("zone area within 32-bit blocks");
    assert!(rel != NO_REL, "block {} is the unmapped marker", l.block);
    assert!(
        l.len <= LEN_MAX && l.codec < 4,
        "entry fields in range: {l:?}"
    );
    assert!(
        u64::from(l.ver) <= VER_MASK,
        "version check is {VER_BITS} bits"
    );
    let w = u64::from(l.len)
        | (u64::from(l.whole) << 12)
        | (u64::from(l.codec) << 13)
        | (u64::from(l.gen.get() & GEN_MASK) << 15)
        | (u64::from(l.ver) << 39);
    Packed {
        rel,
        word: split(w),
    }
}

fn split(w: u64) -> [u32; 2] {
    [
        crate::num::u32_from_u64(w & 0xFFFF_FFFF),
        crate::num::u32_from_u64(w >> 32),
    ]
}

/// Decode a [`pack`]ed entry.
pub(super) fn unpack(p: Packed, first: u64) -> Loc {
    let w = p.word();
    let field = |shift: u32, bits: u32| (w >> shift) & ((1u64 << bits) - 1);
    let gen = Gen::new(crate::num::u32_from_u64(field(15, 24)));
    if p.rel == NO_REL {
        return Loc { gen, ..Loc::NONE };
    }
    Loc {
        block: first + u64::from(p.rel),
        ver: crate::num::u32_from_u64(field(39, VER_BITS)),
        len: u16::try_from(field(0, 12)).expect("12 bits"),
        whole: field(12, 1) == 1,
        codec: u8::try_from(field(13, 2)).expect("2 bits"),
        gen,
    }
}

struct Leaf {
    e: [Packed; LEAF],
    /// Per snapshot copy.
    dirty: [[u64; LEAF_WORDS]; 2],
    /// Entries with a block (mapped pids).
    mapped: u16,
}

/// The two-level pid -> location table.
pub(super) struct PageMap {
    dir: Vec<Option<Box<Leaf>>>,
    first: u64,
    capacity: u64,
    mapped: u64,
    /// Per snapshot copy: leaves with dirty bits (indexes into `dir`, each once).
    dirty_leaves: [Vec<u32>; 2],
}

impl PageMap {
    /// An empty table for pids `0..capacity` of a zone area starting at block `first`.
    pub(super) fn new(capacity: u64, first: u64) -> PageMap {
        let leaves = usize_of(capacity.div_ceil(u64_of(LEAF)));
        let mut dir = Vec::with_capacity(leaves);
        dir.resize_with(leaves, || None);
        PageMap {
            dir,
            first,
            capacity,
            mapped: 0,
            dirty_leaves: [Vec::new(), Vec::new()],
        }
    }

    fn split_pid(pid: Pid) -> (usize, usize) {
        let p = usize_of(pid);
        (p / LEAF, p % LEAF)
    }

    /// The location of `pid` ([`Loc::NONE`] if never written).
    pub(super) fn get(&self, pid: Pid) -> Loc {
        assert!(pid < self.capacity, "pid {pid} beyond {}", self.capacity);
        let (l, i) = Self::split_pid(pid);
        self.dir[l]
            .as_ref()
            .map_or(Loc::NONE, |leaf| unpack(leaf.e[i], self.first))
    }

    /// Map `pid` to `loc` and mark it dirty for the next incremental snapshot of each copy.
    pub(super) fn set(&mut self, pid: Pid, loc: Loc) {
        self.set_clean(pid, loc);
        let (l, i) = Self::split_pid(pid);
        let leaf = self.dir[l].as_mut().expect("leaf allocated by set_clean");
        for c in 0..2 {
            if leaf.dirty[c].iter().all(|&w| w == 0) {
                self.dirty_leaves[c].push(u32::try_from(l).expect("leaves fit u32"));
            }
            leaf.dirty[c][i / 64] |= 1 << (i % 64);
        }
    }

    /// Map `pid` to `loc` without marking it dirty (loading a snapshot, recovery).
    pub(super) fn set_clean(&mut self, pid: Pid, loc: Loc) {
        assert!(pid < self.capacity, "pid {pid} beyond {}", self.capacity);
        let (l, i) = Self::split_pid(pid);
        let leaf = self.dir[l].get_or_insert_with(|| {
            Box::new(Leaf {
                e: [Packed::NONE; LEAF],
                dirty: [[0; LEAF_WORDS]; 2],
                mapped: 0,
            })
        });
        let was = leaf.e[i].rel != NO_REL;
        leaf.e[i] = pack(&loc, self.first);
        let now = loc.block != NO_BLOCK;
        match (was, now) {
            (false, true) => {
                leaf.mapped += 1;
                self.mapped += 1;
            }
            (true, false) => {
                leaf.mapped -= 1;
                self.mapped -= 1;
            }
            _ => {}
        }
        debug_assert!(usize::from(leaf.mapped) <= LEAF, "leaf mapped count");
    }

    /// Pids with a block.
    pub(super) fn mapped(&self) -> u64 {
        self.mapped
    }

    /// Capacity in pids.
    pub(super) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// RAM the table holds (directory and leaves).
    pub(super) fn ram_bytes(&self) -> u64 {
        let leaves = u64_of(self.dir.iter().filter(|l| l.is_some()).count());
        u64_of(self.dir.capacity() * std::mem::size_of::<Option<Box<Leaf>>>())
            + leaves * u64_of(std::mem::size_of::<Leaf>())
            + u64_of((self.dirty_leaves[0].capacity() + self.dirty_leaves[1].capacity()) * 4)
    }

    /// Every pid with a mapped block, ascending.
    pub(super) fn iter_mapped(&self) -> impl Iterator<Item = (Pid, Loc)> + '_ {
        self.dir.iter().enumerate().flat_map(move |(l, leaf)| {
            leaf.iter().flat_map(move |leaf| {
                leaf.e
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.rel != NO_REL)
                    .map(move |(i, p)| (u64_of(l * LEAF + i), unpack(*p, self.first)))
            })
        })
    }

    /// Every entry worth persisting (mapped, or unmapped with a generation to keep), as
    /// (pid, 12 bytes), ascending; clears copy `c`'s dirty bits (a full snapshot covers
    /// them).
    pub(super) fn full_entries(&mut self, c: usize) -> Vec<(Pid, [u8; 12])> {
        self.clear_dirty(c);
        let mut out = Vec::with_capacity(usize_of(self.mapped));
        for (l, leaf) in self.dir.iter().enumerate() {
            let Some(leaf) = leaf else { continue };
            for (i, p) in leaf.e.iter().enumerate() {
                if *p != Packed::NONE {
                    out.push((u64_of(l * LEAF + i), p.to_bytes()));
                }
            }
        }
        out
    }

    /// The entries changed since copy `c`'s last snapshot, as (pid, 12 bytes), ascending,
    /// and clear them.
    pub(super) fn take_dirty(&mut self, c: usize) -> Vec<(Pid, [u8; 12])> {
        let mut leaves = std::mem::take(&mut self.dirty_leaves[c]);
        leaves.sort_unstable();
        let mut out = Vec::new();
        for l in leaves {
            let l = usize_of(u64::from(l));
            let leaf = self.dir[l].as_mut().expect("a dirty leaf exists");
            for (w, word) in leaf.dirty[c].iter_mut().enumerate() {
                let mut bits = std::mem::take(word);
                while bits != 0 {
                    let b = usize_of(u64::from(bits.trailing_zeros()));
                    bits &= bits - 1;
                    let i = w * 64 + b;
                    out.push((u64_of(l * LEAF + i), leaf.e[i].to_bytes()));
                }
            }
        }
        out
    }

    /// Pids changed since copy `c`'s last snapshot.
    pub(super) fn dirty_count(&self, c: usize) -> u64 {
        self.dirty_leaves[c]
            .iter()
            .filter_map(|&l| self.dir[usize_of(u64::from(l))].as_ref())
            .map(|leaf| {
                leaf.dirty[c]
                    .iter()
                    .map(|w| u64::from(w.count_ones()))
                    .sum::<u64>()
            })
            .sum()
    }

    fn clear_dirty(&mut self, c: usize) {
        for l in std::mem::take(&mut self.dirty_leaves[c]) {
            if let Some(leaf) = self.dir[usize_of(u64::from(l))].as_mut() {
                leaf.dirty[c] = [0; LEAF_WORDS];
            }
        }
    }

    /// Apply one snapshot entry (load: full snapshot, then the deltas in order).
    pub(super) fn apply(&mut self, pid: Pid, bytes: &[u8; 12]) {
        let loc = unpack(Packed::from_bytes(bytes), self.first);
        self.set_clean(pid, loc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(block: u64, gen: u32) -> Loc {
        Loc {
            block,
            ver: ver_of(0x1234_5678_9ABC),
            len: 900,
            whole: false,
            codec: 1,
            gen: Gen::new(gen),
        }
    }

    #[test]
    fn entries_round_trip_and_count() {
        let mut m = PageMap::new(1000, 512);
        assert_eq!(m.get(7), Loc::NONE);
        m.set(7, loc(600, 0xAB_CDEF));
        m.set(300, loc(512, 1));
        assert_eq!(m.get(7), loc(600, 0xAB_CDEF));
        assert_eq!(m.mapped(), 2);
        assert_eq!(m.dirty_count(0), 2);
        let d = m.take_dirty(0);
        assert_eq!(d.iter().map(|e| e.0).collect::<Vec<_>>(), vec![7, 300]);
        assert_eq!(m.dirty_count(0), 0);
        assert_eq!(m.dirty_count(1), 2, "the other copy's dirty bits stay");
        // Unmapping keeps the generation.
        m.set(
            7,
            Loc {
                gen: Gen::new(5),
                ..Loc::NONE
            },
        );
        assert_eq!(m.mapped(), 1);
        assert_eq!(m.get(7).gen.get(), 5);
        assert_eq!(m.get(7).block, NO_BLOCK);
        let mut n = PageMap::new(1000, 512);
        for (pid, b) in m.full_entries(1) {
            n.apply(pid, &b);
        }
        assert_eq!(n.get(7), m.get(7));
        assert_eq!(n.get(300), m.get(300));
        assert_eq!(n.mapped(), 1);
        assert_eq!(m.iter_mapped().count(), 1);
    }

    #[test]
    fn ram_is_per_written_page() {
        let mut m = PageMap::new(1 << 20, 0);
        for pid in 0..10_000u64 {
            m.set(pid, loc(pid + 1, 1));
        }
        let per = crate::num::f64_of(m.ram_bytes()) / 10_000.0;
        assert!(per < 13.5, "{per} bytes per mapped page");
    }
}
