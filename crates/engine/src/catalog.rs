//! Named tables (docs/design.md, "Tables and transactions"): each table is its own ordered
//! keyspace inside the engine's B+-tree, the key range `0xFF | id (u16 BE) | key`. The catalog
//! is table 0: one row per table, `0xFF 00 00 | name -> id (u16 LE) | flags (u8)`, written by a
//! transaction, so creating a table is as durable and atomic as any commit, and recovery
//! restores every table with the tree. The unprefixed API (`Engine::put`/`get`/...) is the
//! default table: every key not starting with 0xFF (keys starting with 0xFF belong to named
//! tables once any is created).

use crate::error::{EngineError, Result};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// First byte of every named table's keys.
pub const TABLE_BYTE: u8 = 0xFF;
/// Bytes a named table adds in front of each key.
pub const PREFIX_LEN: usize = 3;
/// Largest table id (ids 1..=MAX_TABLE; 0 is the catalog).
pub const MAX_TABLE: u16 = u16::MAX - 1;
/// Catalog row flag: append-biased splits.
const FLAG_APPEND_BIASED: u8 = 1;

/// Handle of a named table (valid for the engine that returned it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(pub(crate) u16);

impl TableId {
    /// The handle of table number `n` (checked against the catalog when used).
    #[must_use]
    pub fn new(n: u16) -> TableId {
        TableId(n)
    }

    /// The catalog itself.
    pub(crate) const CATALOG: TableId = TableId(0);

    /// The table's number in the catalog.
    #[must_use]
    pub fn number(self) -> u16 {
        self.0
    }

    /// The table's key prefix.
    #[must_use]
    pub(crate) fn prefix(self) -> [u8; PREFIX_LEN] {
        let [a, b] = self.0.to_be_bytes();
        [TABLE_BYTE, a, b]
    }

    /// `prefix | key`.
    #[must_use]
    pub(crate) fn key(self, key: &[u8]) -> Vec<u8> {
        let mut k = Vec::with_capacity(PREFIX_LEN + key.len());
        k.extend_from_slice(&self.prefix());
        k.extend_from_slice(key);
        k
    }

    /// The first key above the table's range.
    #[must_use]
    pub(crate) fn end(self) -> Vec<u8> {
        assert!(self.0 <= MAX_TABLE, "table id {} out of range", self.0);
        TableId(self.0 + 1).prefix().to_vec()
    }
}

/// Per-tree options, stored in the catalog at creation and read by the tree's structure
/// modifications (`Engine::tree_options`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct TreeOptions {
    /// New keys mostly arrive in ascending order: split full leaves at the right edge.
    pub append_biased: bool,
}

impl TreeOptions {
    fn flags(self) -> u8 {
        if self.append_biased {
            FLAG_APPEND_BIASED
        } else {
            0
        }
    }
}

/// One catalog row's value: (id, options).
pub(crate) fn encode_row(id: TableId, opts: TreeOptions) -> [u8; 3] {
    let [a, b] = id.0.to_le_bytes();
    [a, b, opts.flags()]
}

/// Decode a catalog row's value.
pub(crate) fn decode_row(v: &[u8]) -> Option<(TableId, TreeOptions)> {
    match *v {
        [a, b, f] if f & !FLAG_APPEND_BIASED == 0 => {
            let id = u16::from_le_bytes([a, b]);
            (1..=MAX_TABLE).contains(&id).then_some((
                TableId(id),
                TreeOptions {
                    append_biased: f & FLAG_APPEND_BIASED != 0,
                },
            ))
        }
        _ => None,
    }
}

#[derive(Default)]
struct State {
    by_name: HashMap<String, TableId>,
    /// Options by table id (None: no such table).
    by_id: Vec<Option<TreeOptions>>,
}

/// One bit per table id: set once the table exists (tables are never dropped). Every
/// transactional operation checks its table: a plain load of this bitmap, where the state's
/// shared lock would be an atomic write on one cache line shared by every core.
struct KnownIds(Box<[AtomicU64]>);

impl Default for KnownIds {
    fn default() -> Self {
        let words = (usize::from(MAX_TABLE) + 1).div_ceil(64);
        KnownIds((0..words).map(|_| AtomicU64::new(0)).collect())
    }
}

impl KnownIds {
    fn set(&self, id: TableId) {
        let i = usize::from(id.0);
        self.0[i / 64].fetch_or(1 << (i % 64), Ordering::Release);
    }

    fn has(&self, id: TableId) -> bool {
        let i = usize::from(id.0);
        self.0
            .get(i / 64)
            .is_some_and(|w| w.load(Ordering::Acquire) & (1 << (i % 64)) != 0)
    }
}

/// The in-memory catalog: loaded from table 0 on first use, extended by `open_table`.
#[derive(Default)]
pub(crate) struct Catalog {
    state: RwLock<State>,
    known: KnownIds,
    loaded: AtomicBool,
    /// Serializes table creation (id allocation).
    pub(crate) create: parking_lot::Mutex<()>,
}

impl Catalog {
    pub(crate) fn is_loaded(&self) -> bool {
        self.loaded.load(Ordering::Acquire)
    }

    /// Install the rows read from table 0.
    pub(crate) fn install(&self, rows: Vec<(String, TableId, TreeOptions)>) {
        let mut s = self.state.write();
        for (name, id, opts) in rows {
            self.insert(&mut s, name, id, opts);
        }
        self.loaded.store(true, Ordering::Release);
    }

    fn insert(&self, s: &mut State, name: String, id: TableId, opts: TreeOptions) {
        let i = usize::from(id.0);
        if s.by_id.len() <= i {
            s.by_id.resize(i + 1, None);
        }
        assert!(s.by_id[i].is_none(), "table id {i} used twice");
        s.by_id[i] = Some(opts);
        let old = s.by_name.insert(name, id);
        assert!(old.is_none(), "table name used twice");
        self.known.set(id);
    }

    /// Record a table just created.
    pub(crate) fn add(&self, name: &str, id: TableId, opts: TreeOptions) {
        self.insert(&mut self.state.write(), name.to_string(), id, opts);
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<(TableId, TreeOptions)> {
        let s = self.state.read();
        let id = *s.by_name.get(name)?;
        Some((id, s.by_id[usize::from(id.0)]?))
    }

    /// The next free id.
    pub(crate) fn next_id(&self) -> Result<TableId> {
        let n = self.state.read().by_id.len().max(1);
        u16::try_from(n)
            .ok()
            .filter(|&id| id <= MAX_TABLE)
            .map(TableId)
            .ok_or(EngineError::TooManyTables)
    }

    /// Is `id` a table of this catalog?
    pub(crate) fn check(&self, id: TableId) -> Result<()> {
        if self.known.has(id) {
            return Ok(());
        }
        let s = self.state.read();
        match s.by_id.get(usize::from(id.0)) {
            Some(Some(_)) => Ok(()),
            _ => Err(EngineError::UnknownTable { id: id.0 }),
        }
    }

    /// Options of the tree holding `key` (defaults for the default table).
    pub(crate) fn options_for(&self, key: &[u8]) -> TreeOptions {
        match *key {
            [TABLE_BYTE, a, b, ..] => self
                .state
                .read()
                .by_id
                .get(usize::from(u16::from_be_bytes([a, b])))
                .copied()
                .flatten()
                .unwrap_or_default(),
            _ => TreeOptions::default(),
        }
    }

    /// Every table: (name, id, options), by id.
    pub(crate) fn list(&self) -> Vec<(String, TableId, TreeOptions)> {
        let s = self.state.read();
        let mut v: Vec<_> = s
            .by_name
            .iter()
            .filter_map(|(n, id)| Some((n.clone(), *id, s.by_id[usize::from(id.0)]?)))
            .collect();
        v.sort_by_key(|(_, id, _)| *id);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_reject_damage() {
        let o = TreeOptions {
            append_biased: true,
        };
        assert_eq!(
            decode_row(&encode_row(TableId(7), o)),
            Some((TableId(7), o))
        );
        assert_eq!(decode_row(&[0, 0, 0]), None, "id 0 is the catalog");
        assert_eq!(decode_row(&[1, 0, 4]), None, "unknown flag");
        assert_eq!(decode_row(&[1, 0]), None);
    }

    #[test]
    fn prefixes_order_tables_and_bound_them() {
        let (a, b) = (TableId(1), TableId(2));
        assert!(a.key(b"\xff\xff") < b.key(b""));
        assert_eq!(a.end(), b.prefix().to_vec());
        let c = Catalog::default();
        c.install(vec![("t".into(), a, TreeOptions::default())]);
        c.add(
            "u",
            b,
            TreeOptions {
                append_biased: true,
            },
        );
        assert!(c.options_for(&b.key(b"x")).append_biased);
        assert!(!c.options_for(b"x").append_biased);
        assert_eq!(c.next_id().unwrap(), TableId(3));
        assert!(c.check(TableId(5)).is_err());
        assert_eq!(c.list().len(), 2);
    }
}
