//! The delta cache (issue 31 item 1, docs/design.md section 14.10): for chained pages, the
//! *cumulative* change since the chain's base (the union of every delta's ranges and the
//! page's current bytes there), so a miss on a chained page can read the base alone and
//! apply it, instead of reading one block per delta. Bounded in bytes (`OopConfig::
//! delta_cache_bytes`, memory beside the buffer pool; docs/engine-writes.md compares it at
//! equal total memory), least recently used entries dropped first.
//!
//! An entry holds the cumulative ranges always (a few descriptors: the next delta write of
//! the page extends them) and their bytes only while the page is out of the pool: bytes are
//! kept when an eviction writes the delta, and dropped when a miss uses them (the page is in
//! the pool again; its next write-back brings them back). An entry is valid for one state of
//! the chain: its base copy (block and generation) and the LSN check bits of the newest
//! delta. DB GC moving deltas changes neither; a consolidation or a GC copy of the base ends
//! the chain and drops the entry. The cache is a hint: the page rebuilt from it must pass its
//! own checksum and carry the newest delta's LSN bits, else the miss reads the chain.

use super::Loc;
use crate::error::Pid;
use crate::format::delta::{self, Spans};
use crate::num::u64_of;
use std::collections::{BTreeMap, HashMap};

/// The chain state an entry describes: the base's block and generation, the newest copy's
/// LSN check bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Key {
    base_block: u64,
    base_gen: u32,
    head_ver: u32,
}

impl Key {
    /// The key of a chain with base `base` whose newest copy is `head`.
    pub(super) fn of(base: &Loc, head: &Loc) -> Key {
        Key {
            base_block: base.block,
            base_gen: base.gen.get(),
            head_ver: head.ver,
        }
    }
}

struct Entry {
    key: Key,
    spans: Spans,
    /// The page's bytes at `spans`, in order (None: the page is in the pool).
    bytes: Option<Vec<u8>>,
    /// LRU stamp (the key of this entry in `Cache::lru`).
    stamp: u64,
}

impl Entry {
    /// Memory charged to the cache: the bytes, the range descriptors and a fixed overhead
    /// for the entry and the two index slots.
    fn cost(&self) -> u64 {
        let bytes = self.bytes.as_ref().map_or(0, Vec::len);
        u64_of(bytes + self.spans.len() * 16) + ENTRY_OVERHEAD
    }
}

/// Bytes charged per entry beyond its ranges and bytes (hash map slot, LRU slot, vectors).
const ENTRY_OVERHEAD: u64 = 96;

/// The cache.
pub(super) struct Cache {
    limit: u64,
    used: u64,
    next: u64,
    map: HashMap<Pid, Entry>,
    lru: BTreeMap<u64, Pid>,
}

impl Cache {
    pub(super) fn new(limit: u64) -> Cache {
        Cache {
            limit,
            used: 0,
            next: 0,
            map: HashMap::new(),
            lru: BTreeMap::new(),
        }
    }

    pub(super) fn enabled(&self) -> bool {
        self.limit > 0
    }

    /// The cumulative ranges of `pid`'s chain in state `key` (None: unknown).
    pub(super) fn spans(&self, pid: Pid, key: Key) -> Option<&Spans> {
        self.map
            .get(&pid)
            .filter(|e| e.key == key)
            .map(|e| &e.spans)
    }

    /// Take the cumulative change of `pid`'s chain in state `key` for a miss: its ranges
    /// and bytes (the entry keeps its ranges: the page is in the pool now).
    pub(super) fn take(&mut self, pid: Pid, key: Key) -> Option<(Spans, Vec<u8>)> {
        let e = self.map.get_mut(&pid).filter(|e| e.key == key)?;
        let bytes = e.bytes.take()?;
        self.used -= u64_of(bytes.len());
        let spans = e.spans.clone();
        self.touch(pid);
        Some((spans, bytes))
    }

    /// Record `pid`'s chain in state `key`: cumulative ranges `spans` and, when the page
    /// leaves the pool, its bytes there.
    pub(super) fn put(&mut self, pid: Pid, key: Key, spans: Spans, bytes: Option<Vec<u8>>) {
        if !self.enabled() {
            return;
        }
        if let Some(b) = &bytes {
            assert_eq!(
                b.len(),
                delta::covered(&spans),
                "page {pid}: cached bytes cover the ranges"
            );
        }
        self.remove(pid);
        let stamp = self.next;
        self.next += 1;
        let e = Entry {
            key,
            spans,
            bytes,
            stamp,
        };
        self.used += e.cost();
        self.map.insert(pid, e);
        self.lru.insert(stamp, pid);
        while self.used > self.limit {
            let Some((_, victim)) = self.lru.pop_first() else {
                break;
            };
            let e = self
                .map
                .remove(&victim)
                .expect("an LRU slot names an entry");
            self.used -= e.cost();
        }
        assert_eq!(self.map.len(), self.lru.len(), "one LRU slot per entry");
    }

    /// Forget `pid` (its chain ended, or its state is unknown).
    pub(super) fn remove(&mut self, pid: Pid) {
        if let Some(e) = self.map.remove(&pid) {
            self.used -= e.cost();
            let named = self.lru.remove(&e.stamp);
            assert_eq!(named, Some(pid), "the entry's LRU slot");
        }
    }

    /// Move `pid` to the young end.
    fn touch(&mut self, pid: Pid) {
        let stamp = self.next;
        self.next += 1;
        let e = self.map.get_mut(&pid).expect("touched entry exists");
        let old = std::mem::replace(&mut e.stamp, stamp);
        self.lru.remove(&old);
        self.lru.insert(stamp, pid);
    }

    /// Bytes charged now (tests).
    #[cfg(test)]
    fn used(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::{Cache, Key};

    fn key(v: u32) -> Key {
        Key {
            base_block: 7,
            base_gen: 1,
            head_ver: v,
        }
    }

    #[test]
    fn an_entry_serves_one_chain_state_once_with_bytes() {
        let mut c = Cache::new(1 << 20);
        c.put(3, key(5), vec![0..4, 100..108], Some(vec![1; 12]));
        assert!(c.take(3, key(6)).is_none(), "another head: stale");
        let (spans, bytes) = c.take(3, key(5)).expect("cached");
        assert_eq!((spans, bytes.len()), (vec![0..4, 100..108], 12));
        assert!(c.take(3, key(5)).is_none(), "bytes are taken once");
        assert_eq!(c.spans(3, key(5)), Some(&vec![0..4, 100..108]));
        c.remove(3);
        assert!(c.spans(3, key(5)).is_none());
        assert_eq!(c.used(), 0);
    }

    #[test]
    fn the_least_recently_used_entry_goes_first_within_the_limit() {
        let mut c = Cache::new(3 * (96 + 16 + 100));
        for pid in 0..3 {
            c.put(
                pid,
                key(1),
                std::iter::once(0..100).collect(),
                Some(vec![0; 100]),
            );
        }
        // Using page 0 makes page 1 the oldest.
        c.take(0, key(1)).expect("cached");
        c.put(
            0,
            key(2),
            std::iter::once(0..100).collect(),
            Some(vec![0; 100]),
        );
        c.put(
            9,
            key(1),
            std::iter::once(0..100).collect(),
            Some(vec![0; 100]),
        );
        assert!(c.spans(1, key(1)).is_none(), "the oldest was dropped");
        assert!(c.spans(0, key(2)).is_some() && c.spans(2, key(1)).is_some());
        assert!(c.used() <= 3 * (96 + 16 + 100));
    }

    #[test]
    fn a_disabled_cache_keeps_nothing() {
        let mut c = Cache::new(0);
        c.put(1, key(1), std::iter::once(0..4).collect(), Some(vec![0; 4]));
        assert!(c.spans(1, key(1)).is_none() && c.take(1, key(1)).is_none());
    }
}
