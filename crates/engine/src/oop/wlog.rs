//! The write log's hook (`--record-writes`, docs/sepfrozen.md): every mapping update (user
//! write, GC move, compensation) and every release goes to the attached
//! [`WriteObserver`](crate::buffer::hotness::WriteObserver) with its zones, class and the
//! version's hotness records, under the store's state lock, in the order the mapping changes.

use super::{Item, OutOfPlaceStore, State};
use crate::buffer::hotness::{PageWrite, PageWriteKind};
use crate::error::Pid;
use crate::store::WriteKind;

impl OutOfPlaceStore {
    /// `it` was mapped into zone `z`, replacing (or moving) a copy in `from`.
    pub(super) fn log_write(
        &self,
        st: &mut State,
        it: &Item,
        from: Option<u32>,
        z: u32,
        kind: WriteKind,
    ) {
        let Some(obs) = self.wlog.get() else {
            return;
        };
        assert!(
            kind.is_user() || from.is_some(),
            "page {}: a GC move has a source zone",
            it.pid
        );
        obs.page_write(&PageWrite {
            pid: it.pid,
            kind: if kind.is_user() {
                PageWriteKind::User
            } else {
                PageWriteKind::Gc
            },
            zone: Some(z),
            from_zone: from,
            class: Some(st.space.get_mut().class(z)),
            records: it.hot,
        });
    }

    /// `pid`'s copy in zone `z` was released.
    pub(super) fn log_free(&self, pid: Pid, z: u32) {
        if let Some(obs) = self.wlog.get() {
            obs.page_write(&PageWrite {
                pid,
                kind: PageWriteKind::Free,
                zone: None,
                from_zone: Some(z),
                class: None,
                records: Default::default(),
            });
        }
    }
}
