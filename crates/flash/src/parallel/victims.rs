//! Sealed superblocks in buckets by valid pages, per chip set: the victim choice without a
//! scan of every sealed superblock (logspace's bucketed greedy, over units of two sizes).
//!
//! A superblock's chip set is its *class*: class 0 spans every chip, class `1 + g` the chip
//! group `g` (all channels x `k` chips per channel). Within a class every superblock has the
//! same capacity, so fewest valid pages is also least valid ratio; across the (at most two)
//! classes holding a block on a chip, the caller compares the two class minima by its rule.
//! Buckets are `valid >> shift` wide (~64 per class); the lowest non-empty bucket holds the
//! class minimum and is scanned for it.

const NONE: u32 = u32::MAX;

/// Where a sealed superblock sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Slotted {
    class: u32,
    bucket: u32,
    pos: u32,
}

impl Slotted {
    /// Not sealed.
    pub(super) const OUT: Slotted = Slotted {
        class: NONE,
        bucket: NONE,
        pos: NONE,
    };
    /// Whether the superblock is sealed (in the buckets).
    pub(super) fn sealed(self) -> bool {
        self.pos != NONE
    }
}

#[derive(Debug, Clone)]
struct Class {
    shift: u32,
    buckets: Vec<Vec<u32>>,
    /// No bucket below this one holds anything.
    low: usize,
    len: usize,
}

/// The buckets of every class.
#[derive(Debug, Clone)]
pub(super) struct Victims {
    classes: Vec<Class>,
}

impl Victims {
    /// Classes with these capacities (pages).
    pub(super) fn new(caps: &[u32]) -> Victims {
        let classes = caps
            .iter()
            .map(|&cap| {
                assert!(cap > 0, "a superblock holds pages");
                let shift = (32 - cap.leading_zeros()).saturating_sub(6);
                Class {
                    shift,
                    buckets: vec![Vec::new(); (cap >> shift) as usize + 1],
                    low: 0,
                    len: 0,
                }
            })
            .collect();
        Victims { classes }
    }

    /// Seals superblock `id` of `class` holding `valid` pages.
    pub(super) fn insert(&mut self, id: u32, class: u32, valid: u32) -> Slotted {
        let c = &mut self.classes[class as usize];
        let b = (valid >> c.shift) as usize;
        c.buckets[b].push(id);
        c.low = c.low.min(b);
        c.len += 1;
        Slotted {
            class,
            bucket: u32::try_from(b).expect("a few buckets"),
            pos: u32::try_from(c.buckets[b].len() - 1).expect("fewer than 2^32 superblocks"),
        }
    }

    /// Takes `at` (superblock `id`) out; returns the superblock that moved into its place and
    /// its new place (to re-point).
    pub(super) fn remove(&mut self, id: u32, at: Slotted) -> Option<(u32, Slotted)> {
        assert!(at.sealed(), "only sealed superblocks are in the buckets");
        let c = &mut self.classes[at.class as usize];
        let v = &mut c.buckets[at.bucket as usize];
        assert_eq!(v[at.pos as usize], id, "bucket position");
        v.swap_remove(at.pos as usize);
        c.len -= 1;
        v.get(at.pos as usize).map(|&moved| (moved, at))
    }

    /// The bucket `valid` pages fall in, for a superblock at `at`: moves are needed only when
    /// it differs from `at`'s.
    #[inline]
    pub(super) fn same_bucket(&self, at: Slotted, valid: u32) -> bool {
        valid >> self.classes[at.class as usize].shift == at.bucket
    }

    /// The superblocks of `class`'s lowest non-empty bucket (the class minimum is among them).
    pub(super) fn lowest(&mut self, class: u32) -> &[u32] {
        let c = &mut self.classes[class as usize];
        if c.len == 0 {
            return &[];
        }
        while c.buckets[c.low].is_empty() {
            c.low += 1;
        }
        &c.buckets[c.low]
    }

    /// Sealed superblocks in all.
    pub(super) fn len(&self) -> usize {
        self.classes.iter().map(|c| c.len).sum()
    }
}

/// Partial GC's victim index: per chip, the blocks of sealed superblocks bucketed by their
/// valid pages (0 ..= pages per block), so a GC step finds the chip's block with least valid
/// pages without scanning every block of the chip.
#[derive(Debug, Clone)]
pub(super) struct BlockBuckets {
    /// Buckets per chip (pages per block + 1).
    per_chip: usize,
    /// Bucket `chip * per_chip + valid`: global block numbers.
    buckets: Vec<Vec<u32>>,
    /// Position of each global block in its bucket (NONE: not in any).
    pos: Vec<u32>,
}

impl BlockBuckets {
    /// Empty buckets for `chips` chips of `blocks_per_chip` blocks of `pages_per_block`.
    pub(super) fn new(chips: u32, blocks_per_chip: u32, pages_per_block: u32) -> BlockBuckets {
        let per_chip = pages_per_block as usize + 1;
        BlockBuckets {
            per_chip,
            buckets: vec![Vec::new(); chips as usize * per_chip],
            pos: vec![NONE; chips as usize * blocks_per_chip as usize],
        }
    }

    /// Whether global block `gb` is in the buckets.
    #[inline]
    pub(super) fn contains(&self, gb: u32) -> bool {
        self.pos[gb as usize] != NONE
    }

    /// Puts block `gb` of `chip`, holding `valid` pages, in its bucket.
    pub(super) fn insert(&mut self, gb: u32, chip: u32, valid: u32) {
        assert!(!self.contains(gb), "a block is bucketed once");
        let b = &mut self.buckets[chip as usize * self.per_chip + valid as usize];
        self.pos[gb as usize] = u32::try_from(b.len()).expect("fewer than 2^32 blocks");
        b.push(gb);
    }

    /// Takes block `gb` of `chip`, holding `valid` pages, out.
    pub(super) fn remove(&mut self, gb: u32, chip: u32, valid: u32) {
        let at = self.pos[gb as usize];
        assert_ne!(at, NONE, "only bucketed blocks are removed");
        let b = &mut self.buckets[chip as usize * self.per_chip + valid as usize];
        assert_eq!(b[at as usize], gb, "bucket position");
        b.swap_remove(at as usize);
        if let Some(&moved) = b.get(at as usize) {
            self.pos[moved as usize] = at;
        }
        self.pos[gb as usize] = NONE;
    }

    /// Block `gb` of `chip` lost a valid page (it held `valid` + 1).
    #[inline]
    pub(super) fn lost_one(&mut self, gb: u32, chip: u32, valid: u32) {
        if self.contains(gb) {
            self.remove(gb, chip, valid + 1);
            self.insert(gb, chip, valid);
        }
    }

    /// The block of `chip` with least valid pages (the lowest-numbered among equals, as a
    /// scan in block order finds), and its valid pages.
    pub(super) fn best(&self, chip: u32) -> Option<(u32, u32)> {
        let first = chip as usize * self.per_chip;
        (0..self.per_chip).find_map(|v| {
            let b = &self.buckets[first + v];
            let valid = u32::try_from(v).expect("pages per block fit");
            b.iter().copied().min().map(|gb| (gb, valid))
        })
    }
}
