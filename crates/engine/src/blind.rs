//! Blind updates (`Config::blind_update_bytes`, docs/design.md 14.12): an upsert into a leaf
//! that is not in the buffer pool does not read the leaf. Its WAL record (a Put naming the
//! leaf, with no previous LSN) is its durable form; the change waits here, in memory, and is
//! applied when the leaf is next loaded (by a read, a write, a drain). So a miss on a key
//! that is updated but seldom read costs no device read, and the leaf's next write-back (a
//! delta with `--deltas`) carries every change that waited for it.
//!
//! Why a change always applies: a leaf gets its *room* (free bytes) and a *summary* (a
//! 64-bit hash of each record's key and value length, sorted) recorded when it is evicted.
//! A change of a key the summary holds with the same value length overwrites in place and
//! needs no room (the YCSB update: leaves loaded in key order are full); any other change
//! reserves the most a put can take (record + slot) from the room, once per key (the largest
//! of that key's changes). The leaf cannot change in between without being loaded, which
//! consumes the room, the summary and the changes together. Recovery replays the records in
//! LSN order on the same content, so they fit there too. The summary's hashes are the one
//! assumption (as the grain fingerprints of sub-page deltas): two keys of one leaf with one
//! hash (odds about 2^-64 per key pair) would make an insert look like an overwrite.
//!
//! Memory (`Config::blind_update_bytes`): summaries take at most half of it (a leaf evicted
//! beyond that gets its room only), pending changes the other half (beyond it the oldest
//! leaves are loaded: a *drain*).
//!
//! Locking: one mutex. A blind put checks that the leaf is unmapped, appends its record and
//! keeps the change under it; a load takes the leaf's changes under it after claiming the
//! frame: either the put saw the frame mapped (and took the ordinary path) or the load sees
//! the change. Lock order: frame latch, then this mutex, then the WAL's.

use crate::error::{Pid, Result};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Bytes a pending change costs beside its key and value (map entries, bookkeeping).
const OVERHEAD: u64 = 96;

/// One pending change: the latest value of its key for its leaf.
struct Change {
    lsn: u64,
    value: Vec<u8>,
    /// Room reserved for the key (the most any of its changes needs).
    reserved: u32,
    /// CRC32C of key and value when kept (checked again when applied).
    crc: u32,
}

/// The pending changes of one leaf.
#[derive(Default)]
struct Leaf {
    /// LSN of its oldest pending change (its place in `State::order`).
    first: u64,
    changes: BTreeMap<Vec<u8>, Change>,
}

#[derive(Default)]
struct State {
    /// Room left in each leaf evicted since it was last mapped (free bytes at eviction less
    /// what its pending changes reserve). A leaf without an entry takes no blind change.
    room: HashMap<Pid, u32>,
    /// Sorted [`key_hash`]es of the records of an evicted leaf (see the module), with the
    /// number of the eviction that recorded them.
    summary: HashMap<Pid, (u64, Box<[u64]>)>,
    /// (eviction number, pid) of the summaries, oldest first; entries whose summary was
    /// dropped or replaced since are skipped when met.
    summary_fifo: std::collections::VecDeque<(u64, Pid)>,
    /// Evictions recorded so far (numbers the summaries).
    evictions: u64,
    /// Memory the summaries take.
    summary_bytes: u64,
    leaves: HashMap<Pid, Leaf>,
    /// (first LSN, pid) of every leaf with pending changes, oldest first.
    order: BTreeSet<(u64, Pid)>,
    /// Memory the pending changes take.
    bytes: u64,
}

/// A change taken for its leaf's load, in LSN order: (LSN, key, value).
pub(crate) type Taken = (u64, Vec<u8>, Vec<u8>);

/// The pending changes (see the module).
pub(crate) struct Blind {
    limit: u64,
    state: Mutex<State>,
}

fn crc(key: &[u8], value: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(key), value)
}

/// The hash of a record's key and value length kept in a leaf's summary.
pub(crate) fn key_hash(key: &[u8], value_len: usize) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    value_len.hash(&mut h);
    h.finish()
}

/// The summary of leaf `p`: its records' [`key_hash`]es, sorted.
pub(crate) fn summary_of(p: &[u8]) -> Box<[u64]> {
    use crate::page;
    let mut v: Vec<u64> = (0..page::nkeys(p))
        .map(|i| key_hash(page::key(p, i), page::leaf_value(p, i).len()))
        .collect();
    v.sort_unstable();
    v.into_boxed_slice()
}

/// Bytes a summary of `n` hashes costs (the hashes and the map entry).
fn summary_cost(n: usize) -> u64 {
    crate::num::u64_of(n * 8) + 48
}

fn cost(key: &[u8], value: &[u8]) -> u64 {
    crate::num::u64_of(key.len() + value.len()) + OVERHEAD
}

impl Blind {
    /// None when `limit` is 0 (off).
    pub(crate) fn new(limit: u64) -> Option<Blind> {
        (limit > 0).then(|| Blind {
            limit,
            state: Mutex::new(State::default()),
        })
    }

    /// Keep `key -> value` for leaf `pid` as a blind change if the leaf is unmapped (`mapped`
    /// false, asked under the lock) and has the room; `log` appends its record (called under
    /// the lock, so a load of the leaf cannot fall between the record and the change) and
    /// returns its LSN. None: not taken, nothing logged (the ordinary path runs).
    ///
    /// # Errors
    /// `log`'s.
    pub(crate) fn try_add(
        &self,
        pid: Pid,
        (key, value): (&[u8], &[u8]),
        mapped: impl FnOnce() -> bool,
        log: impl FnOnce() -> Result<u64>,
    ) -> Result<Option<u64>> {
        let need = u32::try_from(crate::page::leaf_record_size(key, value) + crate::page::SLOT)
            .expect("a record is smaller than a page");
        let mut s = self.state.lock();
        let Some(&room) = s.room.get(&pid) else {
            return Ok(None);
        };
        if mapped() {
            return Ok(None);
        }
        let held = s
            .leaves
            .get(&pid)
            .and_then(|l| l.changes.get(key))
            .map_or(0, |c| c.reserved);
        // An overwrite of a record the leaf held at eviction with this value length.
        let overwrite = s
            .summary
            .get(&pid)
            .is_some_and(|(_, h)| h.binary_search(&key_hash(key, value.len())).is_ok());
        let need = if overwrite { 0 } else { need };
        let extra = need.saturating_sub(held);
        if extra > room {
            return Ok(None);
        }
        let lsn = log()?;
        let st = &mut *s;
        st.room.insert(pid, room - extra);
        let leaf = st.leaves.entry(pid).or_default();
        if leaf.changes.is_empty() {
            leaf.first = lsn;
            st.order.insert((lsn, pid));
        }
        let c = Change {
            lsn,
            value: value.to_vec(),
            reserved: held.max(need),
            crc: crc(key, value),
        };
        if let Some(old) = leaf.changes.insert(key.to_vec(), c) {
            assert!(old.lsn < lsn, "page {pid}: blind LSN {} -> {lsn}", old.lsn);
            st.bytes -= cost(key, &old.value);
        }
        st.bytes += cost(key, value);
        Ok(Some(lsn))
    }

    /// Leaf `pid` left the pool with `room` free bytes: it may take blind changes. It has
    /// none pending (a mapped leaf never has).
    ///
    /// # Panics
    /// If it has pending changes (they would be lost: an engine bug).
    pub(crate) fn evicted(&self, pid: Pid, room: usize, summary: Box<[u64]>) {
        let mut s = self.state.lock();
        assert!(
            !s.leaves.contains_key(&pid),
            "page {pid} evicted with blind changes pending"
        );
        s.room
            .insert(pid, u32::try_from(room).expect("room within a page"));
        assert!(
            summary.windows(2).all(|w| w[0] <= w[1]),
            "page {pid}: summary not sorted"
        );
        let c = summary_cost(summary.len());
        let st = &mut *s;
        if let Some((_, old)) = st.summary.remove(&pid) {
            st.summary_bytes -= summary_cost(old.len());
        }
        // The most recently evicted leaves keep theirs (the warm ones a stream comes back
        // to): the oldest summaries make room.
        while st.summary_bytes + c > self.limit / 2 {
            let Some((n, old_pid)) = st.summary_fifo.pop_front() else {
                break;
            };
            if st.summary.get(&old_pid).is_some_and(|(m, _)| *m == n) {
                let (_, h) = st.summary.remove(&old_pid).expect("just seen");
                st.summary_bytes -= summary_cost(h.len());
            }
        }
        if st.summary_fifo.len() > 2 * st.summary.len() + 64 {
            // Drop the entries of summaries gone since (taken by loads): the queue stays
            // within twice the summaries kept.
            let live = &st.summary;
            st.summary_fifo
                .retain(|(n, p)| live.get(p).is_some_and(|(m, _)| m == n));
        }
        if st.summary_bytes + c <= self.limit / 2 {
            st.evictions += 1;
            st.summary.insert(pid, (st.evictions, summary));
            st.summary_fifo.push_back((st.evictions, pid));
            st.summary_bytes += c;
        }
    }

    /// Page `pid` is being mapped (loaded, or created in a frame): its pending changes, in
    /// LSN order, each checked against the CRC kept with it; it takes no more until evicted.
    /// `claim` runs under the lock when there are changes (the loader marks its frame dirty
    /// there: a checkpoint never sees the changes neither pending nor in a dirty frame).
    ///
    /// # Panics
    /// If a change fails its CRC (memory corruption: never applied).
    pub(crate) fn take(&self, pid: Pid, claim: impl FnOnce()) -> Vec<Taken> {
        let mut s = self.state.lock();
        s.room.remove(&pid);
        if let Some((_, old)) = s.summary.remove(&pid) {
            s.summary_bytes -= summary_cost(old.len());
        }
        let Some(leaf) = s.leaves.remove(&pid) else {
            return Vec::new();
        };
        claim();
        let removed = s.order.remove(&(leaf.first, pid));
        assert!(removed, "page {pid}: pending leaf not in the order");
        let mut out: Vec<Taken> = Vec::with_capacity(leaf.changes.len());
        for (k, c) in leaf.changes {
            assert_eq!(
                crc(&k, &c.value),
                c.crc,
                "page {pid}: a blind change failed its CRC"
            );
            s.bytes -= cost(&k, &c.value);
            out.push((c.lsn, k, c.value));
        }
        out.sort_unstable_by_key(|t| t.0);
        // A key's change replaced by a later one leaves `first` older than every change kept.
        assert!(
            out.first().is_some_and(|t| t.0 >= leaf.first),
            "page {pid}: a blind change older than the leaf's first"
        );
        out
    }

    /// Up to `max` leaves whose oldest pending change is below `below`, oldest first.
    pub(crate) fn oldest(&self, below: u64, max: usize) -> Vec<Pid> {
        let s = self.state.lock();
        s.order
            .iter()
            .take_while(|(lsn, _)| *lsn < below)
            .take(max)
            .map(|&(_, pid)| pid)
            .collect()
    }

    /// The pending changes take more than their half of the memory.
    pub(crate) fn over_limit(&self) -> bool {
        self.state.lock().bytes > self.limit / 2
    }

    /// LSN of the oldest pending change (None: none pending).
    pub(crate) fn min_lsn(&self) -> Option<u64> {
        self.state.lock().order.first().map(|&(lsn, _)| lsn)
    }

    /// (leaves with pending changes, changes, bytes), for tests and counters.
    pub(crate) fn pending(&self) -> (usize, usize, u64) {
        let s = self.state.lock();
        let n = s.leaves.values().map(|l| l.changes.len()).sum();
        (s.leaves.len(), n, s.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::Blind;

    #[test]
    fn a_leaf_takes_blind_changes_only_after_its_eviction_and_within_its_room() {
        let b = Blind::new(1 << 20).expect("on");
        let log = |l: u64| move || Ok(l);
        // Never evicted: no room known.
        assert_eq!(b.try_add(7, (b"k", b"v"), || false, log(10)).unwrap(), None);
        b.evicted(7, 40, Box::new([]));
        // Mapped again meanwhile (the load has not taken it yet): not taken.
        assert_eq!(b.try_add(7, (b"k", b"v"), || true, log(11)).unwrap(), None);
        let need = crate::page::leaf_record_size(b"k", b"v") + crate::page::SLOT;
        assert_eq!(need, 16);
        assert_eq!(
            b.try_add(7, (b"k", b"v"), || false, log(12)).unwrap(),
            Some(12)
        );
        // The same key again reserves nothing more; a new key reserves its own.
        assert_eq!(
            b.try_add(7, (b"k", b"w"), || false, log(13)).unwrap(),
            Some(13)
        );
        assert_eq!(
            b.try_add(7, (b"j", b"v"), || false, log(14)).unwrap(),
            Some(14)
        );
        // 40 - 16 - 16 = 8 left: a third key does not fit.
        assert_eq!(b.try_add(7, (b"i", b"v"), || false, log(15)).unwrap(), None);
        assert_eq!(b.min_lsn(), Some(12));
        assert_eq!(b.oldest(13, 8), vec![7]);
        assert_eq!(b.oldest(12, 8), Vec::<u64>::new());
        let t = b.take(7, || {});
        assert_eq!(
            t,
            vec![
                (13, b"k".to_vec(), b"w".to_vec()),
                (14, b"j".to_vec(), b"v".to_vec())
            ]
        );
        assert_eq!(b.pending(), (0, 0, 0));
        assert_eq!(b.min_lsn(), None);
        // Mapped: no more blind changes until evicted again.
        assert_eq!(b.try_add(7, (b"k", b"v"), || false, log(16)).unwrap(), None);
    }

    #[test]
    #[should_panic(expected = "evicted with blind changes pending")]
    fn an_eviction_with_changes_pending_is_a_bug() {
        let b = Blind::new(1 << 20).expect("on");
        b.evicted(3, 4000, Box::new([]));
        b.try_add(3, (b"k", b"v"), || false, || Ok(9)).unwrap();
        b.evicted(3, 4000, Box::new([]));
    }

    #[test]
    fn the_limit_counts_the_latest_value_of_each_key() {
        let b = Blind::new(400).expect("on");
        b.evicted(1, 4000, Box::new([]));
        for l in 1..=5 {
            b.try_add(1, (b"key", &[0u8; 50]), || false, || Ok(l))
                .unwrap();
        }
        assert_eq!(b.pending(), (1, 1, 3 + 50 + super::OVERHEAD));
        assert!(!b.over_limit());
        b.try_add(1, (b"other", &[0u8; 50]), || false, || Ok(6))
            .unwrap();
        assert!(b.over_limit());
        assert!(Blind::new(0).is_none());
    }
}

#[cfg(test)]
mod summary_tests {
    use super::{key_hash, Blind};

    /// A full leaf (no room) takes overwrites of the records its summary holds with their
    /// value length, and nothing else.
    #[test]
    fn a_full_leaf_takes_same_size_overwrites_of_its_records_only() {
        let b = Blind::new(1 << 20).expect("on");
        let mut s = vec![key_hash(b"a", 3), key_hash(b"b", 3)];
        s.sort_unstable();
        b.evicted(5, 0, s.into_boxed_slice());
        let ok = |l: u64| move || Ok(l);
        assert_eq!(
            b.try_add(5, (b"a", b"xyz"), || false, ok(1)).unwrap(),
            Some(1)
        );
        assert_eq!(
            b.try_add(5, (b"b", b"xyz"), || false, ok(2)).unwrap(),
            Some(2)
        );
        // Another length, another key: they would need room.
        assert_eq!(b.try_add(5, (b"a", b"xy"), || false, ok(3)).unwrap(), None);
        assert_eq!(b.try_add(5, (b"c", b"xyz"), || false, ok(4)).unwrap(), None);
        assert_eq!(b.take(5, || {}).len(), 2);
    }

    /// Past half the memory the oldest summary makes room for the newest.
    #[test]
    fn the_newest_evictions_keep_their_summaries() {
        // Half of 128 B holds one summary of two hashes (2 x 8 + 48 B).
        let b = Blind::new(128).expect("on");
        let two = |k: &[u8]| {
            let mut s = vec![key_hash(k, 1), key_hash(b"z", 1)];
            s.sort_unstable();
            s.into_boxed_slice()
        };
        b.evicted(1, 0, two(b"a"));
        assert_eq!(
            b.try_add(1, (b"a", b"x"), || false, || Ok(1)).unwrap(),
            Some(1)
        );
        b.take(1, || {});
        b.evicted(1, 0, two(b"a"));
        b.evicted(2, 0, two(b"b"));
        assert_eq!(
            b.try_add(1, (b"a", b"x"), || false, || Ok(2)).unwrap(),
            None
        );
        assert_eq!(
            b.try_add(2, (b"b", b"x"), || false, || Ok(3)).unwrap(),
            Some(3)
        );
    }
}
