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
