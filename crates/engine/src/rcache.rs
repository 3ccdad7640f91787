//! The record cache (`Config::record_cache_bytes`, docs/engine-writes.md "Session 4"): hot
//! records (key -> value) in memory beside the buffer pool, so a read of a hot record
//! touches no page. Why: on a hashed-key zipf stream (YCSB) the hot records are spread over
//! nearly every leaf, so a page pool holds one hot record per 4 KiB frame, while this cache
//! holds one per ~250 B (the Bf-tree / TreeLine observation: cache records, not pages).
//! Fewer reads reach the pool, fewer misses happen, and with out-of-place deltas each miss
//! saved is a chain of reads saved.
//!
//! Coherence (the one invariant): an entry's value is the tree's value of its key. It holds
//! because every fill and every change of a cached key happens under the latch of the leaf
//! that holds the key: a read fills an entry while it holds the leaf's shared latch, and a
//! put / delete updates or removes the entry while it holds the leaf's exclusive latch, so
//! the two are ordered by that latch; a split moves a key between leaves only under the
//! exclusive tree lock, which no reader or fast-path writer holds then. The cache is not
//! durable: it starts empty at every open, so no crash case touches it.
//!
//! Every entry carries a CRC32C of its key and value, set when written and checked on every
//! hit (a corrupted entry is a defect, never served); `Engine::record_cache_stale` checks
//! every entry against the tree (tests and the simulation).

use crate::num::u64_of;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};

/// Bytes charged per entry beyond its key (twice: map and LRU slot) and value: the hash map
/// slot, the LRU slot, two boxed slices and the checksum.
const ENTRY_OVERHEAD: u64 = 96;

struct Entry {
    value: Box<[u8]>,
    crc: u32,
    /// LRU stamp (this entry's key in `Lru::order`).
    stamp: u64,
}

fn crc(key: &[u8], value: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(key), value)
}

fn cost(key: &[u8], value: &[u8]) -> u64 {
    u64_of(2 * key.len() + value.len()) + ENTRY_OVERHEAD
}

#[derive(Default)]
struct Lru {
    used: u64,
    next: u64,
    map: HashMap<Box<[u8]>, Entry>,
    order: BTreeMap<u64, Box<[u8]>>,
}

impl Lru {
    fn stamp(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    fn remove(&mut self, key: &[u8]) {
        if let Some(e) = self.map.remove(key) {
            self.used -= cost(key, &e.value);
            let named = self.order.remove(&e.stamp);
            assert!(
                named.as_deref() == Some(key),
                "the entry's LRU slot names it"
            );
        }
    }

    fn insert(&mut self, key: &[u8], value: &[u8], limit: u64) {
        self.remove(key);
        let stamp = self.stamp();
        let e = Entry {
            value: value.into(),
            crc: crc(key, value),
            stamp,
        };
        self.used += cost(key, value);
        self.map.insert(key.into(), e);
        self.order.insert(stamp, key.into());
        while self.used > limit {
            let Some((_, victim)) = self.order.pop_first() else {
                break;
            };
            let e = self
                .map
                .remove(&victim)
                .expect("an LRU slot names an entry");
            self.used -= cost(&victim, &e.value);
        }
        assert_eq!(self.map.len(), self.order.len(), "one LRU slot per entry");
        assert!(self.used <= limit, "the cache within its bytes");
    }
}

/// The cache: bounded in bytes, least recently used entries dropped first.
pub(crate) struct RecordCache {
    limit: u64,
    lru: Mutex<Lru>,
}

impl RecordCache {
    /// A cache of at most `limit` bytes (None for 0: off).
    pub(crate) fn new(limit: u64) -> Option<RecordCache> {
        (limit > 0).then(|| RecordCache {
            limit,
            lru: Mutex::new(Lru::default()),
        })
    }

    /// The value of `key` if cached (a copy: the caller's closure runs outside the lock).
    ///
    /// # Panics
    /// If the entry fails its checksum (memory corruption or an engine bug).
    pub(crate) fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut l = self.lru.lock();
        let stamp = l.stamp();
        let e = l.map.get_mut(key)?;
        assert_eq!(
            e.crc,
            crc(key, &e.value),
            "record cache: an entry failed its checksum"
        );
        let old = std::mem::replace(&mut e.stamp, stamp);
        let v = e.value.to_vec();
        let k = l.order.remove(&old).expect("the entry's LRU slot");
        l.order.insert(stamp, k);
        Some(v)
    }

    /// A read found `value` for `key` (None: absent) under the leaf's shared latch: cache it.
    /// Records too large for a sixteenth of the cache are not cached (one would evict many).
    pub(crate) fn fill(&self, key: &[u8], value: Option<&[u8]>) {
        if let Some(v) = value {
            if cost(key, v) <= self.limit / 16 {
                self.lru.lock().insert(key, v, self.limit);
            }
        }
    }

    /// A put wrote `value` for `key` under the leaf's exclusive latch: a cached entry takes
    /// the new value (a key not cached stays out: reads decide what is hot).
    pub(crate) fn update(&self, key: &[u8], value: &[u8]) {
        let mut l = self.lru.lock();
        if l.map.contains_key(key) {
            if cost(key, value) <= self.limit / 16 {
                l.insert(key, value, self.limit);
            } else {
                l.remove(key);
            }
        }
    }

    /// A delete removed `key` under the leaf's exclusive latch.
    pub(crate) fn remove(&self, key: &[u8]) {
        self.lru.lock().remove(key);
    }

    /// Every cached record (for the coherence check).
    pub(crate) fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let l = self.lru.lock();
        l.map
            .iter()
            .map(|(k, e)| (k.to_vec(), e.value.to_vec()))
            .collect()
    }

    /// Bytes charged now.
    pub(crate) fn used(&self) -> u64 {
        self.lru.lock().used
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap as Model;

    #[test]
    fn a_cache_of_zero_bytes_is_off() {
        assert!(RecordCache::new(0).is_none());
        assert!(RecordCache::new(1).is_some());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Fill(u8, Option<Vec<u8>>),
        Update(u8, Vec<u8>),
        Remove(u8),
        Get(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        let v = proptest::collection::vec(any::<u8>(), 0..200);
        prop_oneof![
            (any::<u8>(), proptest::option::of(v.clone())).prop_map(|(k, v)| Op::Fill(k, v)),
            (any::<u8>(), v).prop_map(|(k, v)| Op::Update(k, v)),
            any::<u8>().prop_map(Op::Remove),
            any::<u8>().prop_map(Op::Get),
        ]
    }

    proptest! {
        /// Against a model of the tree (fills and updates are what the tree holds): a hit is
        /// always the model's value, the cache stays within its bytes, and its byte count is
        /// the sum of its entries' costs.
        #[test]
        fn hits_are_the_latest_value_and_bytes_stay_bounded(
            limit in 2_000u64..20_000,
            ops in proptest::collection::vec(op(), 1..400),
        ) {
            let c = RecordCache::new(limit).expect("on");
            let mut tree: Model<u8, Vec<u8>> = Model::new();
            for o in ops {
                match o {
                    Op::Fill(k, v) => {
                        // A read fills with the tree's value: make the model hold it first.
                        match &v {
                            Some(v) => tree.insert(k, v.clone()),
                            None => tree.remove(&k),
                        };
                        c.remove(&[k]);
                        c.fill(&[k], v.as_deref());
                    }
                    Op::Update(k, v) => {
                        tree.insert(k, v.clone());
                        c.update(&[k], &v);
                    }
                    Op::Remove(k) => {
                        tree.remove(&k);
                        c.remove(&[k]);
                    }
                    Op::Get(k) => {
                        if let Some(v) = c.get(&[k]) {
                            prop_assert_eq!(Some(&v), tree.get(&k));
                        }
                    }
                }
                prop_assert!(c.used() <= limit);
                let sum: u64 = c.entries().iter().map(|(k, v)| cost(k, v)).sum();
                prop_assert_eq!(sum, c.used());
            }
            for (k, v) in c.entries() {
                prop_assert_eq!(Some(&v), tree.get(&k[0]));
            }
        }
    }

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let each = cost(&[0], &[0; 100]);
        let c = RecordCache::new(3 * each).expect("on");
        // Entries of a third of the cache are above the 1/16 admission bound: use 32 of them.
        let c2 = RecordCache::new(32 * each).expect("on");
        for k in 0..32u8 {
            c2.fill(&[k], Some(&[k; 100]));
        }
        assert!(c2.get(&[0]).is_some(), "key 0 touched: now the newest");
        c2.fill(&[100], Some(&[1; 100]));
        assert!(c2.get(&[1]).is_none(), "key 1, the oldest, evicted");
        assert!(c2.get(&[0]).is_some());
        c.fill(&[0], Some(&[0; 100]));
        assert!(
            c.get(&[0]).is_none(),
            "over a sixteenth of the cache: not cached"
        );
    }
}
