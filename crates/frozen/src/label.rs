//! The labeling pass: for every record of a write log, when the version it carries is next
//! invalidated (by the page's next user write or its free), from the log's future.
//!
//! - `frozen` (the paper's label) = never invalidated before the end of the log;
//! - the *lifespan* of a user write (the paper's definition, in DB-written pages) is
//!   `next_invalidation - timer`; for a GC move it is the *remaining* lifespan, which is what
//!   FK oracles place by.
//!
//! A GC move carries the version it moves: its next invalidation is the same as that of the
//! user write that produced the version. A free record carries no version (its label is
//! [`NEVER`] and it is never a sample).

use crate::error::FrozenError;
use crate::metrics::Confusion;
use crate::writelog::{LogReader, LogSummary, WriteKind, WriteRecord};
use std::collections::HashMap;
use std::path::Path;

/// "Never invalidated before the end of the log".
pub const NEVER: u64 = u64::MAX;

/// The next-invalidation timer of every record of a log, by record index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    next: Vec<u64>,
    summary: LogSummary,
    counts: LabelCounts,
}

/// Frozen counts by record kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LabelCounts {
    /// User writes.
    pub user: u64,
    /// User writes whose version is never invalidated.
    pub user_frozen: u64,
    /// GC moves.
    pub gc: u64,
    /// GC moves of versions never invalidated afterwards.
    pub gc_frozen: u64,
}

impl LabelCounts {
    /// FAR of the run that wrote the log: the frozen share of the pages GC moved (`None`
    /// without GC moves).
    #[must_use]
    pub fn far(&self) -> Option<f64> {
        #[expect(clippy::cast_precision_loss, reason = "counts as a share")]
        (self.gc > 0).then(|| self.gc_frozen as f64 / self.gc as f64)
    }

    /// 2R's rule (GC-written = frozen, DB-written = normal) scored on all user writes and
    /// GC moves of the log.
    ///
    /// # Panics
    /// If frozen counts exceed their totals (not built by [`Labels`]).
    #[must_use]
    pub fn rule_2r(&self) -> Confusion {
        assert!(self.user_frozen <= self.user && self.gc_frozen <= self.gc);
        Confusion {
            tp: self.gc_frozen,
            fp: self.gc - self.gc_frozen,
            tn: self.user - self.user_frozen,
            fn_: self.user_frozen,
        }
    }
}

impl Labels {
    /// Labels from the events' (page, kind, timer), in log order.
    ///
    /// # Panics
    /// If timers decrease along the events (the log writer and reader refuse such logs).
    #[must_use]
    pub fn from_events(events: &[(u64, WriteKind, u64)]) -> Self {
        let mut next = vec![NEVER; events.len()];
        let mut later: HashMap<u64, u64> = HashMap::new();
        let mut summary = LogSummary::default();
        for (i, &(page, kind, timer)) in events.iter().enumerate().rev() {
            if let Some(&t) = later.get(&page) {
                assert!(t >= timer, "record {i}: the log's timers decrease");
                if kind != WriteKind::Free {
                    next[i] = t;
                }
            }
            if kind.invalidates() {
                later.insert(page, timer);
            }
        }
        let mut counts = LabelCounts::default();
        for (&(_, kind, timer), &n) in events.iter().zip(&next) {
            summary.count_event(kind, timer);
            let frozen = u64::from(n == NEVER);
            match kind {
                WriteKind::User => {
                    (counts.user, counts.user_frozen) =
                        (counts.user + 1, counts.user_frozen + frozen)
                }
                WriteKind::Gc => {
                    (counts.gc, counts.gc_frozen) = (counts.gc + 1, counts.gc_frozen + frozen)
                }
                WriteKind::Free => {}
            }
        }
        Self {
            next,
            summary,
            counts,
        }
    }

    /// Labels of the records of the log at `path` (one streaming pass; 25 bytes of memory
    /// per record).
    ///
    /// # Errors
    /// The reader's errors (damage, truncation, I/O).
    ///
    /// # Panics
    /// Never, unless the reader's and the labeler's counts disagree (a bug).
    pub fn from_log(path: &Path) -> Result<Self, FrozenError> {
        let mut events = Vec::new();
        let mut reader = LogReader::open(path)?;
        while let Some(r) = reader.next_record()? {
            events.push((r.page, r.kind, r.timer));
        }
        let labels = Self::from_events(&events);
        assert_eq!(labels.summary.records, reader.summary().records);
        Ok(Self {
            summary: reader.summary(),
            ..labels
        })
    }

    /// Labels of records held in memory.
    #[must_use]
    pub fn from_records(records: &[WriteRecord]) -> Self {
        let ev: Vec<_> = records.iter().map(|r| (r.page, r.kind, r.timer)).collect();
        Self::from_events(&ev)
    }

    /// Frozen counts by kind (FAR of the recording run, 2R's rule).
    #[must_use]
    pub fn counts(&self) -> LabelCounts {
        self.counts
    }

    /// Records labeled.
    #[must_use]
    pub fn len(&self) -> usize {
        self.next.len()
    }

    /// True for an empty log.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.next.is_empty()
    }

    /// Counts of the labeled log.
    #[must_use]
    pub fn summary(&self) -> LogSummary {
        self.summary
    }

    /// The timer at which record `i`'s version is next invalidated, or [`NEVER`].
    #[must_use]
    pub fn next_invalidation(&self, i: usize) -> u64 {
        self.next[i]
    }

    /// Record `i`'s version stays valid to the end of the log (the frozen label).
    #[must_use]
    pub fn frozen(&self, i: usize) -> bool {
        self.next[i] == NEVER
    }

    /// All next-invalidation timers, by record index.
    #[must_use]
    pub fn as_slice(&self) -> &[u64] {
        &self.next
    }
}

/// Lifespan (or remaining lifespan) of a record at `timer` invalidated at `next`, in
/// DB-written pages; `None` for [`NEVER`].
///
/// # Panics
/// If `next` is before `timer`.
#[must_use]
pub fn lifespan(timer: u64, next: u64) -> Option<u64> {
    (next != NEVER).then(|| {
        assert!(next >= timer, "a version dies after it is written");
        next - timer
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use WriteKind::{Free, Gc, User};

    #[test]
    fn scripted_log() {
        // timer: 1 A, 2 B, GC moves A, 3 A (kills A@1), GC moves B, 4 C, free C (at 4),
        // 5 A (kills A@3), GC moves A@5; end.
        let ev = [
            (10, User, 1), // 0: A, next 3
            (20, User, 2), // 1: B, never
            (10, Gc, 2),   // 2: A@1 moved, next 3
            (10, User, 3), // 3: A, next 5
            (20, Gc, 3),   // 4: B moved, never
            (30, User, 4), // 5: C, freed at 4
            (30, Free, 4), // 6: free: no version
            (10, User, 5), // 7: A, never
            (10, Gc, 5),   // 8: A@5 moved, never
        ];
        let l = Labels::from_events(&ev);
        assert_eq!(
            l.as_slice(),
            &[3, NEVER, 3, 5, NEVER, 4, NEVER, NEVER, NEVER]
        );
        let frozen: Vec<bool> = (0..l.len()).map(|i| l.frozen(i)).collect();
        assert_eq!(
            frozen,
            [false, true, false, false, true, false, true, true, true]
        );
        assert_eq!(lifespan(1, l.next_invalidation(0)), Some(2));
        assert_eq!(lifespan(2, l.next_invalidation(2)), Some(1), "remaining");
        assert_eq!(
            lifespan(4, l.next_invalidation(5)),
            Some(0),
            "freed at once"
        );
        assert_eq!(lifespan(2, l.next_invalidation(1)), None);
        let s = l.summary();
        assert_eq!((s.records, s.user, s.gc, s.free), (9, 5, 3, 1));
        assert_eq!((s.first_timer, s.last_timer), (1, 5));
        let c = l.counts();
        assert_eq!((c.user, c.user_frozen, c.gc, c.gc_frozen), (5, 2, 3, 2));
        assert_eq!(c.far(), Some(2.0 / 3.0));
        let r = c.rule_2r();
        assert_eq!((r.tp, r.fp, r.tn, r.fn_), (2, 1, 3, 2));
    }

    #[test]
    fn a_page_id_reused_after_a_free_starts_a_new_life() {
        let ev = [(7, User, 1), (7, Free, 2), (7, User, 3), (7, User, 9)];
        let l = Labels::from_events(&ev);
        assert_eq!(l.as_slice(), &[2, NEVER, 9, NEVER]);
    }
}
