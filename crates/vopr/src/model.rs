//! The model: what the engine acknowledged, and what a crash may take back.
//!
//! docs/design.md section 10: the WAL is one ordered stream and pages reach the device only
//! after the log is durable up to their LSN, so a crash loses a *suffix* of the acknowledged
//! writes, never one in the middle, and nothing before the last durability point (a `Sync`
//! write, `sync()`, `checkpoint()`, `close()`). The operation in flight when the device died
//! (not acknowledged) may be present or absent. So after a crash the database must equal the
//! state after some prefix of the history that includes every durable write.

use std::collections::{BTreeMap, HashSet};

/// A key or a value.
pub type Bytes = Vec<u8>;

/// One acknowledged change since the last durability point: key, value before, value after.
type Change = (Bytes, Option<Bytes>, Option<Bytes>);

/// Acknowledged state, the changes a crash may undo, and every value ever written.
#[derive(Default)]
pub struct Model {
    current: BTreeMap<Bytes, Bytes>,
    undo: Vec<Change>,
    inflight: Option<(Bytes, Option<Bytes>)>,
    /// Hashes of every (key, value) ever handed to the engine.
    ever: HashSet<u64>,
}

/// Hash of a (key, value) pair.
fn pair_hash(k: &[u8], v: &[u8]) -> u64 {
    let mut h = nowa_units::mix64(k.len() as u64 ^ 0x6b65_7973);
    for c in k.chunks(8).chain([&[0xffu8][..]]).chain(v.chunks(8)) {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        h = nowa_units::mix64(h ^ u64::from_le_bytes(w)).wrapping_add(c.len() as u64);
    }
    h
}

impl Model {
    /// The value the engine must return now.
    #[must_use]
    pub fn get(&self, k: &[u8]) -> Option<&Bytes> {
        self.current.get(k)
    }

    /// Pairs with `start <= key < end`, at most `limit`.
    #[must_use]
    pub fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Vec<(Bytes, Bytes)> {
        let upper = end.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        self.current
            .range::<[u8], _>((std::ops::Bound::Included(start), upper))
            .take(limit)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Keys in the model.
    #[must_use]
    pub fn len(&self) -> usize {
        self.current.len()
    }

    /// No key.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.current.is_empty()
    }

    /// An operation is about to be issued (None = delete).
    ///
    /// # Panics
    /// If another one is in flight.
    pub fn issue(&mut self, k: &[u8], v: Option<&[u8]>) {
        assert!(self.inflight.is_none(), "one operation in flight at a time");
        if let Some(v) = v {
            self.ever.insert(pair_hash(k, v));
        }
        self.inflight = Some((k.to_vec(), v.map(<[u8]>::to_vec)));
    }

    /// The operation in flight was acknowledged; `durable`: it and everything before it.
    ///
    /// # Panics
    /// If none is in flight.
    pub fn ack(&mut self, durable: bool) {
        let (k, v) = self.inflight.take().expect("an operation was issued");
        let before = match &v {
            Some(v) => self.current.insert(k.clone(), v.clone()),
            None => self.current.remove(&k),
        };
        assert_eq!(
            self.current.get(&k),
            v.as_ref(),
            "the model holds the acknowledged value"
        );
        self.undo.push((k, before, v));
        if durable {
            self.durable();
        }
    }

    /// The operation in flight failed without a crash: it had no effect.
    ///
    /// # Panics
    /// If none is in flight.
    pub fn failed(&mut self) {
        assert!(self.inflight.take().is_some(), "an operation was issued");
    }

    /// A durability point: nothing acknowledged so far can be lost.
    pub fn durable(&mut self) {
        self.undo.clear();
    }

    /// After a crash: is `db` the state after some prefix of the history that contains
    /// every durable write (the in-flight operation may count or not)? On success the model
    /// becomes `db` and the number of acknowledged changes lost is returned.
    ///
    /// # Errors
    /// What does not match, for the failure report.
    ///
    /// # Panics
    /// If the model's own bookkeeping is inconsistent (a harness bug).
    pub fn recover(&mut self, db: BTreeMap<Bytes, Bytes>) -> Result<usize, String> {
        let lost = self.matching_prefix(&db)?;
        assert!(
            lost <= self.undo.len() + 1,
            "at most the changes since the durable point"
        );
        self.reset(db);
        Ok(lost)
    }

    /// After media faults (documented to lose or age data): accept `db` if every pair in it
    /// was written at some point; the model becomes `db`.
    ///
    /// # Errors
    /// The first pair that was never written.
    pub fn recover_weak(&mut self, db: BTreeMap<Bytes, Bytes>) -> Result<(), String> {
        if let Some((k, v)) = db
            .iter()
            .find(|(k, v)| !self.ever.contains(&pair_hash(k, v)))
        {
            return Err(format!(
                "key {} holds a value of {} bytes that was never written",
                show(k),
                v.len()
            ));
        }
        self.reset(db);
        Ok(())
    }

    /// Was `v` ever written to `k` (None, absent, is always plausible)?
    #[must_use]
    pub fn plausible(&self, k: &[u8], v: Option<&[u8]>) -> bool {
        v.is_none_or(|v| self.ever.contains(&pair_hash(k, v)))
    }

    fn reset(&mut self, db: BTreeMap<Bytes, Bytes>) {
        assert!(
            db.iter().all(|(k, v)| self.plausible(k, Some(v))),
            "a recovered state holds only values that were written"
        );
        self.current = db;
        self.undo.clear();
        self.inflight = None;
    }

    /// The candidate states are S_j = durable + first j changes (j = 0..=n), and S_n + the
    /// in-flight operation. Only touched keys differ between them: track the mismatches on
    /// those while stepping j forward. Returns n - j of the first match.
    fn matching_prefix(&self, db: &BTreeMap<Bytes, Bytes>) -> Result<usize, String> {
        let mut touched: BTreeMap<&[u8], Option<&Bytes>> = BTreeMap::new();
        for (k, before, _) in self.undo.iter().rev() {
            touched.insert(k, before.as_ref());
        }
        if let Some((k, _)) = &self.inflight {
            touched.entry(k).or_insert_with(|| self.current.get(k));
        }
        // Untouched keys: equal in every candidate.
        for k in self.current.keys().chain(db.keys()) {
            if !touched.contains_key(k.as_slice()) && self.current.get(k) != db.get(k) {
                return Err(format!(
                    "key {} (not written since the last durability point): expected {}, found {}",
                    show(k),
                    show_val(self.current.get(k)),
                    show_val(db.get(k))
                ));
            }
        }
        let mut state = touched;
        let bad = |k: &[u8], v: Option<&Bytes>| db.get(k) != v;
        let mut mismatches = state.iter().filter(|(k, v)| bad(k, **v)).count();
        let n = self.undo.len();
        if mismatches == 0 {
            return Ok(n);
        }
        let steps = self.undo.iter().map(|(k, _, v)| (k, v.as_ref()));
        let inflight = self.inflight.iter().map(|(k, v)| (k, v.as_ref()));
        for (j, (k, v)) in steps.chain(inflight).enumerate() {
            let old = state.insert(k, v).expect("a touched key");
            assert!(
                mismatches >= usize::from(bad(k, old)),
                "mismatches are counted"
            );
            mismatches = mismatches + usize::from(bad(k, v)) - usize::from(bad(k, old));
            if mismatches == 0 {
                return Ok(n.saturating_sub(j + 1));
            }
        }
        let (k, v) = state.iter().find(|(k, v)| bad(k, **v)).expect("a mismatch");
        Err(format!(
            "no prefix of the {n} changes since the last durability point (+ the one in flight) \
             explains the recovered state: {mismatches} keys differ from the newest candidate, \
             e.g. key {}: expected {}, found {}",
            show(k),
            show_val(*v),
            show_val(db.get(*k))
        ))
    }
}

/// A key for messages.
#[must_use]
pub fn show(k: &[u8]) -> String {
    let id = k
        .get(..4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, u32::from_be_bytes);
    format!("#{id} ({} bytes)", k.len())
}

fn show_val(v: Option<&Bytes>) -> String {
    v.map_or_else(
        || "absent".to_string(),
        |v| format!("{} bytes {:016x}", v.len(), pair_hash(b"", v)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(m: &mut Model, k: u8, v: u8, durable: bool) {
        m.issue(&[0, 0, 0, k], Some(&[v]));
        m.ack(durable);
    }

    fn db(pairs: &[(u8, u8)]) -> BTreeMap<Bytes, Bytes> {
        pairs
            .iter()
            .map(|&(k, v)| (vec![0, 0, 0, k], vec![v]))
            .collect()
    }

    #[test]
    fn prefixes_are_accepted_and_holes_are_not() {
        let mut m = Model::default();
        put(&mut m, 1, 1, true);
        put(&mut m, 2, 2, false);
        put(&mut m, 1, 3, false);
        let base = m.current.clone();
        assert_eq!(Model::matching_prefix(&m, &db(&[(1, 1)])), Ok(2));
        assert_eq!(Model::matching_prefix(&m, &db(&[(1, 1), (2, 2)])), Ok(1));
        assert_eq!(Model::matching_prefix(&m, &db(&[(1, 3), (2, 2)])), Ok(0));
        // A hole: the later change without the earlier one.
        assert!(Model::matching_prefix(&m, &db(&[(1, 3)])).is_err());
        // The durable write lost.
        assert!(Model::matching_prefix(&m, &db(&[])).is_err());
        // In flight: may count.
        m.issue(&[0, 0, 0, 9], Some(&[9]));
        assert_eq!(
            Model::matching_prefix(&m, &db(&[(1, 3), (2, 2), (9, 9)])),
            Ok(0)
        );
        assert_eq!(m.current, base);
        assert!(m.recover_weak(db(&[(1, 7)])).is_err(), "never written");
        assert!(m.recover_weak(db(&[(2, 2)])).is_ok());
        assert_eq!(m.len(), 1);
    }
}
