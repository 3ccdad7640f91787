//! Engine errors: one variant per kind of failure, typed fields, the damaged structure named.

use crate::format::superblock::WritePath;
use nowa_device::DeviceError;

/// Page identifier: index of a page in the data region (in place: its fixed home slot).
pub type Pid = u64;

/// Every fallible engine operation returns this.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The device failed an I/O.
    #[error("device error: {0}")]
    Device(#[from] DeviceError),
    /// A bulk load needs an empty tree.
    #[error(
        "bulk load into a tree that is not empty (height {height}, {root_keys} keys in the root)"
    )]
    BulkNotEmpty {
        /// Tree height.
        height: usize,
        /// Keys in the root.
        root_keys: usize,
    },
    /// Bulk-load input not strictly ascending by key (nothing was installed).
    #[error("bulk load: record {index} is not above the previous key")]
    BulkUnsorted {
        /// Position of the offending record (0-based).
        index: u64,
    },
    /// On-disk data failed validation: never read silently.
    #[error("corrupt {0}")]
    Corrupt(#[from] Corruption),
    /// No valid superblock copy: not a nowa database (or both copies are damaged).
    #[error(
        "not a nowa database (or both superblock copies are damaged, or the database keeps its \
         WAL on a separate device that was not given): copy A: {a}; copy B: {b}"
    )]
    NoSuperblock {
        /// Why copy A (block 0) was rejected.
        a: SuperblockDamage,
        /// Why copy B (block 1) was rejected.
        b: SuperblockDamage,
    },
    /// The database was created with another write path than the one it is opened with.
    #[error(
        "this database was created with the {} write path{}; open it with that write path, \
         not the {requested} one",
        .created.kind(),
        .created.details()
    )]
    WrongWritePath {
        /// What the superblock records.
        created: WritePath,
        /// What the opener asked for.
        requested: WritePathKind,
    },
    /// Damage in the middle of the live WAL (media, not a crash): records that were durable
    /// are unreadable. Refused unless `Config::wal_damage` is `Salvage`.
    #[error(
        "WAL damaged in the middle of the live log: records in LSNs [{from}, {to}) are unreadable \
         ({damage}); acknowledged writes would be lost. Open with Config::wal_damage = Salvage \
         to keep only what precedes LSN {from}"
    )]
    WalDamaged {
        /// LSN of the first unreadable record.
        from: u64,
        /// End of the last record found after the damage.
        to: u64,
        /// What is wrong at `from`.
        damage: RecordDamage,
    },
    /// `Config::wal_damage = Salvage` could not give a consistent tree holding exactly the
    /// writes before the damaged range: pages on disk already hold changes of the lost
    /// records (written after the damaged LSN), or the tree redone to the damage is broken.
    /// The log and the superblocks are left as they were.
    #[error(
        "WAL salvage refused: records in LSNs [{from}, {to}) are lost and {reason}, so the \
         tree cut at LSN {from} would not be consistent; export what is readable with \
         Engine::export_readable"
    )]
    SalvageRefused {
        /// First lost LSN.
        from: u64,
        /// End of the last record found after the damage.
        to: u64,
        /// Why the salvaged tree would be inconsistent.
        reason: SalvageRefusal,
    },
    /// A region, the store, the WAL or the buffer pool is exhausted.
    #[error("out of space: {0}")]
    Full(#[from] Exhausted),
    /// The configuration does not fit the device or the database.
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    /// Key or value exceeds the size limits.
    #[error("key/value too large: key {key_len} bytes, value {value_len} bytes")]
    TooLarge {
        /// Key length asked for.
        key_len: usize,
        /// Value length asked for.
        value_len: usize,
    },
    /// `close()` was called.
    #[error("engine is closed")]
    Closed,
    /// A transaction's validation found a read that changed: nothing was applied; the
    /// transaction may be retried.
    #[error("transaction conflict: a read changed before commit; retry it")]
    Conflict,
    /// A table handle this engine's catalog does not hold.
    #[error("unknown table #{id}")]
    UnknownTable {
        /// The table number.
        id: u16,
    },
    /// A catalog row does not decode (the table list is unreadable).
    #[error("catalog row under key {key:02x?} is damaged")]
    CatalogDamaged {
        /// The row's key.
        key: Vec<u8>,
    },
    /// Every table number is in use.
    #[error("too many tables")]
    TooManyTables,
    /// A transaction's write set does not fit one WAL record.
    #[error("transaction too large: {bytes} bytes of writes (at most {max} per commit)")]
    TxnTooLarge {
        /// Encoded size of the write set.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// An earlier failure left memory ahead of the log (a structure modification failed
    /// half way): no further work is accepted; reopen the database.
    #[error("engine is poisoned by an earlier failure: reopen the database")]
    Poisoned,
}

/// Which write path (without its parameters).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum WritePathKind {
    /// Fixed home per page, optional doublewrite area.
    InPlace,
    /// Zones, DB GC, compression and packing.
    OutOfPlace,
}

impl std::fmt::Display for WritePathKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WritePathKind::InPlace => "in-place",
            WritePathKind::OutOfPlace => "out-of-place",
        })
    }
}

/// Why a WAL salvage was refused ([`EngineError::SalvageRefused`]).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum SalvageRefusal {
    /// A page of the tree on disk was written after the damaged LSN: it holds changes of
    /// lost records (possibly half of a structure change).
    #[error("page {pid} of the tree holds changes up to LSN {lsn}, past the damage")]
    PageAfterDamage {
        /// The page.
        pid: Pid,
        /// Its LSN.
        lsn: u64,
    },
    /// Redo up to the damage, or the walk of the resulting tree, found damage.
    #[error("the tree redone to the damage is broken ({0})")]
    Tree(Box<Corruption>),
}

/// On-disk damage, naming the structure that is damaged.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum Corruption {
    /// A data page (or a page image) failed validation.
    #[error("page {pid}: {damage}")]
    Page {
        /// The page.
        pid: Pid,
        /// What is wrong.
        damage: PageDamage,
    },
    /// A page on the device is older than the WAL says it was written: a lost write.
    #[error(
        "page {pid}: lost write: the device holds the version of LSN {found}, but the log says \
         the page was at LSN {expected}"
    )]
    LostWrite {
        /// The page.
        pid: Pid,
        /// Page LSN the log knows the page had (found by this process: the LSN it last
        /// wrote there, whose low 32 bits it keeps, completed with the high bits found).
        expected: u64,
        /// Page LSN found on the device.
        found: u64,
    },
    /// The B+-tree structure is inconsistent.
    #[error("B+-tree at page {pid}: {damage}")]
    Tree {
        /// Where the inconsistency was found.
        pid: Pid,
        /// What is wrong.
        damage: TreeDamage,
    },
    /// A flush mark (`format::mark`) with a valid checksum breaks the format's invariants.
    #[error("WAL flush mark in slot {slot}: {damage}")]
    FlushMark {
        /// Slot of the mark area (0 to 3; the first of the pair when the pair disagrees).
        slot: u64,
        /// What is wrong.
        damage: FlushMarkDamage,
    },
    /// The superblock holds values outside the device or inconsistent with each other.
    #[error("superblock: {0}")]
    Superblock(SuperblockDamage),
    /// The out-of-place metadata record in the superblock.
    #[error("out-of-place metadata record: {0}")]
    StoreMeta(MetaDamage),
    /// A mapping-table snapshot copy (out of place).
    #[error("mapping snapshot copy {copy}: checksum {found:#010x}, expected {expected:#010x}")]
    MappingSnapshot {
        /// Snapshot copy (0 or 1).
        copy: u8,
        /// Checksum recorded in the superblock.
        expected: u32,
        /// Checksum of the bytes read.
        found: u32,
    },
    /// A mapping-snapshot copy could not be read (out of place).
    #[error("mapping snapshot copy {copy}: unreadable ({kind})")]
    MappingSnapshotUnreadable {
        /// Snapshot copy (0 or 1).
        copy: u8,
        /// What failed.
        kind: &'static str,
    },
    /// Both mapping snapshots are unusable (out of place).
    #[error("both mapping snapshots are unusable: current: {current}; older: {older}")]
    MappingSnapshots {
        /// Why the current snapshot was rejected.
        current: Box<Corruption>,
        /// Why the older snapshot (of the other superblock copy) was rejected.
        older: Box<Corruption>,
    },
    /// The page mapping (out of place) is inconsistent with the zones.
    #[error("page mapping: {0}")]
    Mapping(MappingDamage),
    /// A slot (out of place) holding page `pid` at device block `block`.
    #[error("slot at block {block} holding page {pid}: {damage}")]
    Slot {
        /// Device block of the slot.
        block: u64,
        /// The page looked for.
        pid: Pid,
        /// What is wrong.
        damage: SlotDamage,
    },
    /// A WAL record whose redo does not apply to its page.
    #[error("WAL record at LSN {lsn} on page {pid}: {damage}")]
    Redo {
        /// LSN of the record.
        lsn: u64,
        /// Its page.
        pid: Pid,
        /// What is wrong.
        damage: RedoDamage,
    },
}

/// What is wrong with a page.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum PageDamage {
    /// Checksum mismatch: a torn or corrupted page.
    #[error("checksum mismatch (torn or corrupted page): stored {stored:#010x}, computed {computed:#010x}")]
    Checksum {
        /// Checksum in the page header.
        stored: u32,
        /// Checksum of the bytes.
        computed: u32,
    },
    /// Bad magic.
    #[error("bad magic {found:#06x}")]
    Magic {
        /// What was found.
        found: u16,
    },
    /// The page names another pid (a misdirected write or a stale copy).
    #[error("page claims pid {found}")]
    Pid {
        /// The pid in the header.
        found: Pid,
    },
    /// Unknown node kind.
    #[error("bad kind {found}")]
    Kind {
        /// The kind byte.
        found: u8,
    },
    /// The slot array overlaps the heap or the heap start is out of the page.
    #[error("slot array of {nkeys} slots overlaps the heap starting at {heap_start}")]
    SlotArray {
        /// Slot count.
        nkeys: u16,
        /// Heap start.
        heap_start: u16,
    },
    /// A slot points outside the heap.
    #[error("slot {slot} points outside the heap")]
    SlotOffset {
        /// Slot index.
        slot: u16,
    },
    /// A record extends past the page end.
    #[error("record of slot {slot} exceeds the page")]
    RecordBounds {
        /// Slot index.
        slot: u16,
    },
    /// The key head cached in a slot differs from the key.
    #[error("key head of slot {slot} does not match its key")]
    KeyHead {
        /// Slot index.
        slot: u16,
    },
    /// The live byte count differs from the records.
    #[error("live byte count {stored}, records hold {counted}")]
    LiveBytes {
        /// Count in the header.
        stored: u16,
        /// Sum of the records.
        counted: usize,
    },
    /// The pid lies beyond the data region or the store's capacity.
    #[error("pid beyond the store's {capacity} pages")]
    BeyondCapacity {
        /// The store's capacity in pages.
        capacity: u64,
    },
    /// A page the engine creates was already cached (an allocation mark gone backwards).
    #[error("new page already cached")]
    AlreadyCached,
    /// The hotness records in the header break their rules (HR_last without HR_current,
    /// HR_last not before HR_current, more modifications than accesses, or valid bytes that
    /// differ from the page's live bytes).
    #[error("hotness records inconsistent: HR_current written at {current_wt} with {current_vd} valid bytes, HR_last at {last_wt}")]
    Hotness {
        /// HR_current's write time.
        current_wt: u64,
        /// HR_current's valid bytes.
        current_vd: u16,
        /// HR_last's write time.
        last_wt: u64,
    },
}

/// What is wrong with the B+-tree.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum TreeDamage {
    /// An inner node was expected on the path.
    #[error("expected an inner node, found kind {kind}")]
    ExpectedInner {
        /// Kind found.
        kind: u8,
    },
    /// A leaf was expected.
    #[error("expected a leaf, found kind {kind}")]
    ExpectedLeaf {
        /// Kind found.
        kind: u8,
    },
    /// The leaf chain loops.
    #[error("leaf chain loops")]
    LeafChainLoops,
    /// Deeper than the height limit.
    #[error("tree deeper than {max} levels")]
    TooDeep {
        /// The limit.
        max: usize,
    },
    /// Root or allocation mark out of range after redo.
    #[error("root {root} / next pid {next_pid} out of range ({pages} pages)")]
    RootOutOfRange {
        /// Root pid.
        root: Pid,
        /// Allocation mark.
        next_pid: Pid,
        /// Data pages.
        pages: u64,
    },
    /// A leaf to split holds fewer than two records.
    #[error("leaf split with {records} records")]
    SplitTooSmall {
        /// Records found.
        records: usize,
    },
    /// A page is referenced twice in the tree, or beyond the allocation mark (free-list
    /// rebuild at open).
    #[error("page {child} referenced twice or beyond the allocation mark {next_pid}")]
    BadChild {
        /// The child.
        child: Pid,
        /// Allocation mark.
        next_pid: Pid,
    },
    /// A page on the free list, to be reused by a split, is in the pool as a page in use.
    #[error("free page in use: kind {kind} with {records} records")]
    FreePageInUse {
        /// Kind found.
        kind: u8,
        /// Records found.
        records: usize,
    },
}

/// Why a superblock copy was rejected.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum SuperblockDamage {
    /// The block is shorter than a page.
    #[error("short block of {len} bytes")]
    Short {
        /// Bytes given.
        len: usize,
    },
    /// Checksum mismatch.
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum {
        /// Stored checksum.
        stored: u32,
        /// Computed checksum.
        computed: u32,
    },
    /// Not the nowa magic.
    #[error("bad magic {found:#010x}")]
    Magic {
        /// What was found.
        found: u32,
    },
    /// A format version this build does not read.
    #[error("format version {found}, this build reads version {supported}")]
    Version {
        /// Version found.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// Another page size.
    #[error("page size {found}")]
    PageSize {
        /// Page size found.
        found: u32,
    },
    /// Store metadata length beyond the block.
    #[error("store metadata length {len} > {max}")]
    MetaLength {
        /// Length found.
        len: u32,
        /// Maximum.
        max: usize,
    },
    /// Unknown write path code.
    #[error("unknown write path code {code}")]
    WritePath {
        /// Code found.
        code: u8,
    },
    /// Regions out of range of the device(s) or overlapping.
    #[error("layout out of range: {what}")]
    Layout {
        /// Which check failed.
        what: &'static str,
    },
}

/// What is wrong with the out-of-place metadata record.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum MetaDamage {
    /// Shorter than the record.
    #[error("{len} bytes, expected {expected}")]
    Length {
        /// Bytes found.
        len: usize,
        /// Record size.
        expected: usize,
    },
    /// Bad magic or version.
    #[error("bad magic {magic:#010x} or version {version}")]
    Magic {
        /// Magic found.
        magic: u32,
        /// Version found.
        version: u32,
    },
    /// Zone geometry out of the device.
    #[error(
        "zone geometry out of range ({zones} zones of {zone_pages} blocks from block {first})"
    )]
    Geometry {
        /// Zones.
        zones: u32,
        /// Blocks per zone.
        zone_pages: u64,
        /// First zone block.
        first: u64,
    },
    /// Snapshot copy or length out of range.
    #[error("snapshot copy {copy} / {entries} entries out of range (capacity {capacity})")]
    Snapshot {
        /// Copy index.
        copy: u8,
        /// Entries recorded.
        entries: u64,
        /// Capacity.
        capacity: u64,
    },
    /// The snapshots are on the log device but none was given (or the reverse).
    #[error("mapping snapshots on the log device: {on_log}, log device given: {given}")]
    MetaDevice {
        /// Where the record says they are.
        on_log: bool,
        /// Whether a log device was given.
        given: bool,
    },
}

/// What is wrong with the page mapping (out of place).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum MappingDamage {
    /// A pid maps outside the zone area.
    #[error("page {pid} maps to block {block}, outside the zones")]
    OutsideZones {
        /// The page.
        pid: Pid,
        /// The block.
        block: u64,
    },
    /// A pid maps to a slot entry outside its slot.
    #[error("page {pid}: slot entry at {off} + {len} bytes exceeds the slot")]
    SlotEntry {
        /// The page.
        pid: Pid,
        /// Offset in the slot.
        off: u16,
        /// Length.
        len: u16,
    },
    /// More valid bytes mapped into a zone than it holds.
    #[error("zone {zone}: {valid} valid bytes > capacity {capacity}")]
    ZoneOverfull {
        /// The zone.
        zone: u32,
        /// Valid bytes mapped.
        valid: u64,
        /// Zone capacity.
        capacity: u64,
    },
    /// A zone's valid byte count disagrees with the mapping.
    #[error("zone {zone}: the space counts {counted} valid bytes, the mapping {mapped}")]
    ValidCount {
        /// The zone.
        zone: u32,
        /// Valid bytes the space counts.
        counted: u64,
        /// Valid bytes the mapping puts there.
        mapped: u64,
    },
    /// A free zone holds valid pages.
    #[error("free zone {zone} holds {mapped} valid bytes")]
    FreeZoneHoldsData {
        /// The zone.
        zone: u32,
        /// Valid bytes mapped into it.
        mapped: u64,
    },
    /// A GC victim still holds valid data after relocation.
    #[error("zone {zone} keeps {valid} valid bytes after GC")]
    VictimNotEmpty {
        /// The zone.
        zone: u32,
        /// Valid bytes left.
        valid: u32,
    },
}

/// What is wrong with a slot (out of place).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum SlotDamage {
    /// The mapped entry lies outside the slot.
    #[error("entry at {off} + {len} bytes lies outside the slot")]
    EntryBounds {
        /// Offset.
        off: u16,
        /// Length.
        len: u16,
    },
    /// The compressed bytes do not decode to a page.
    #[error("codec {codec}: {error}")]
    Codec {
        /// Codec id.
        codec: u8,
        /// What failed.
        error: CodecError,
    },
    /// The slot holds another version of the page than the mapping says.
    #[error("holds the page at LSN {found}, the mapping says {expected}")]
    Version {
        /// LSN the mapping records.
        expected: u64,
        /// LSN found.
        found: u64,
    },
    /// A raw slot's checksum does not match its zone incarnation.
    #[error("raw slot checksum does not match zone incarnation {seq}")]
    Incarnation {
        /// Zone sequence number expected.
        seq: u64,
    },
    /// A page delta (issue 31) does not decode.
    #[error("page delta: {error}")]
    Delta {
        /// What failed.
        error: DeltaError,
    },
    /// A page rebuilt from its base and deltas fails its checksum.
    #[error("page rebuilt from its base and {deltas} deltas fails its checksum")]
    Rebuilt {
        /// Deltas applied.
        deltas: usize,
    },
}

/// A malformed page delta (`crate::format::delta`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum DeltaError {
    /// Shorter than its header.
    #[error("{len} bytes: shorter than the 12-byte header")]
    Short {
        /// Bytes given.
        len: usize,
    },
    /// Checksum mismatch.
    #[error("crc32c {stored:#010x} stored, {computed:#010x} computed")]
    Crc {
        /// Stored.
        stored: u32,
        /// Computed.
        computed: u32,
    },
    /// Unknown format version.
    #[error("unknown version {found}")]
    Version {
        /// Found.
        found: u8,
    },
    /// Ref count, range count or flags out of range.
    #[error("bad header: {refs} refs, {ranges} ranges, flags {flags:#04x}")]
    Header {
        /// Refs named.
        refs: u8,
        /// Ranges named.
        ranges: u16,
        /// Flags.
        flags: u8,
    },
    /// Length disagrees with the header.
    #[error("{found} bytes, the header implies {expected}")]
    Length {
        /// Implied by the header.
        expected: usize,
        /// Given.
        found: usize,
    },
    /// A range that is empty, beyond the page, out of order, or a first range without the
    /// page crc.
    #[error("bad range at {off}, {len} bytes")]
    Range {
        /// First byte.
        off: usize,
        /// Length.
        len: usize,
    },
    /// The compressed bytes do not decode to the ranges' length.
    #[error("lz4 bytes do not decode to the {covered} bytes of the ranges")]
    Lz4 {
        /// Bytes the ranges cover.
        covered: usize,
    },
}

/// Compression codec failures.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum CodecError {
    /// Unknown codec id.
    #[error("unknown codec")]
    Unknown,
    /// The decoder rejected the input.
    #[error("undecodable input")]
    Undecodable,
    /// Decoded to a wrong size.
    #[error("decoded to {len} bytes, not one page")]
    Size {
        /// Bytes decoded.
        len: usize,
    },
}

/// What is wrong with a flush mark whose checksum is valid (a torn mark is no mark).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum FlushMarkDamage {
    /// Read from another slot than the one it was written to.
    #[error("written for slot {stored} (its salt and seq say {computed})")]
    WrongSlot {
        /// Slot field.
        stored: u64,
        /// Slot its salt and seq select.
        computed: u64,
    },
    /// Bytes after the fields are not zero.
    #[error("non-zero padding")]
    Padding,
    /// The pair holds two marks of the epoch whose ends do not grow with their seqs.
    #[error("marks (seq, end) {older:?} and {newer:?}: the newer vouches for no more")]
    Order {
        /// (seq, end) of the mark with the lower seq.
        older: (u64, u64),
        /// (seq, end) of the mark with the higher seq.
        newer: (u64, u64),
    },
    /// The mark vouches for an LSN the epoch's log cannot reach from the redo point.
    #[error("vouches for LSN {end}, beyond the log's limit {limit}")]
    BeyondLog {
        /// Durable end of the mark.
        end: u64,
        /// Highest LSN the epoch's records can reach.
        limit: u64,
    },
}

/// What is wrong with a WAL record (torn tail or damage).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum RecordDamage {
    /// Length field out of range.
    #[error("bad record length {len}")]
    Length {
        /// Length found.
        len: u32,
    },
    /// Checksum mismatch.
    #[error("checksum mismatch")]
    Checksum,
    /// Checksum fine, payload does not decode.
    #[error("undecodable payload of type {tag}")]
    Payload {
        /// Type tag.
        tag: u8,
    },
    /// Checksum fine, but an entry of the group does not decode (its length runs past the
    /// group or is 0, or its payload has the wrong shape).
    #[error("undecodable entry of type {tag} at byte {offset} of a group's entries")]
    Entry {
        /// Offset of the entry in the group's body.
        offset: u32,
        /// Its type tag (0 when its length is bad).
        tag: u8,
    },
    /// The block could not be read.
    #[error("unreadable block (I/O error)")]
    Unreadable,
    /// No record where the log must continue (a zeroed or stale block).
    #[error("no record where the log continues (zeroed or stale block)")]
    Missing,
    /// The log ends here, but a page (or delta) on disk holds a change logged at or after
    /// this point: those records were durable (the WAL rule) and are lost.
    #[error("page {pid} on disk holds LSN {lsn}, past the end of the log")]
    PageAhead {
        /// The page.
        pid: Pid,
        /// Its LSN.
        lsn: u64,
    },
}

/// Why a redo does not apply.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum RedoDamage {
    /// A Put or Delete names a page that is not a leaf.
    #[error("target is not a leaf (kind {kind})")]
    NotLeaf {
        /// Kind found.
        kind: u8,
    },
    /// A Put does not fit its page.
    #[error("put does not fit")]
    DoesNotFit,
    /// A structure operation (`format::structop`) does not apply to its page.
    #[error("structure operation {op} does not apply")]
    StructOp {
        /// Operation kind.
        op: u8,
    },
    /// A TxnWrite names an op of a TxnCommit that redo has not met (or an op it does not
    /// have).
    #[error("no op {index} of a commit at {commit_lsn} before this write")]
    NoTxnOp {
        /// LSN of the TxnCommit named.
        commit_lsn: u64,
        /// The op's index.
        index: u32,
    },
    /// The page's LSN is neither the one the record says it had before the change nor
    /// newer than the record.
    #[error("page LSN {found}, the record expects {expected}")]
    PageLsn {
        /// LSN the record says the page had.
        expected: u64,
        /// LSN found.
        found: u64,
    },
}

/// What ran out.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum Exhausted {
    /// The data region (or the store's capacity) cannot hold the pages a split needs.
    #[error("data region full ({pages} pages)")]
    DataRegion {
        /// Pages the store holds.
        pages: u64,
    },
    /// The WAL region cannot take another record.
    #[error("WAL region full ({live} bytes live)")]
    WalRegion {
        /// Live WAL bytes.
        live: u64,
    },
    /// The WAL limit is reached even after a checkpoint.
    #[error("WAL limit of {limit} bytes reached even after a checkpoint ({used} used)")]
    WalLimit {
        /// Bytes used.
        used: u64,
        /// The limit.
        limit: u64,
    },
    /// A pid beyond the out-of-place capacity.
    #[error("pid {pid} beyond the out-of-place capacity {capacity}")]
    StoreCapacity {
        /// The pid.
        pid: Pid,
        /// The capacity.
        capacity: u64,
    },
    /// No free zone to open.
    #[error("out-of-place: no free zone left")]
    NoFreeZone,
    /// GC found no victim (every zone or group fully valid).
    #[error("out-of-place: no GC victim (every zone or group fully valid)")]
    NoGcVictim,
    /// GC could not free a zone within its round budget.
    #[error("out-of-place: GC cannot free a zone (data does not fit)")]
    GcNoProgress,
    /// Every buffer pool frame is latched.
    #[error("buffer pool: every frame is latched")]
    PoolLatched,
}

/// Why the out-of-place store refuses a placement scheme.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum PlacementRefusal {
    /// FK needs each write's future; the engine does not know it.
    #[error("needs the future (record the writes with --record-writes and replay the log in the placement simulator)")]
    NeedsFuture,
    /// GDT and NoWA are placements themselves.
    #[error("cannot be combined with GDT or NoWA (they are placements themselves)")]
    WithGdtOrNowa,
    /// More classes than the device lets the store keep open.
    #[error("needs {classes} open zones but the device allows {open_limit}")]
    TooManyClasses {
        /// Classes of the scheme.
        classes: u16,
        /// Open zones the device allows.
        open_limit: u32,
    },
}

/// Configuration errors.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub enum ConfigError {
    /// Pool, WAL limit or doublewrite area too small.
    #[error("pool must be >= 64 pages (is {pool_bytes} bytes), WAL limit >= 16 pages (is {wal_limit} bytes), dw_pages >= 1 (is {dw_pages})")]
    Sizes {
        /// Pool bytes.
        pool_bytes: u64,
        /// WAL limit bytes.
        wal_limit: u64,
        /// Doublewrite slots.
        dw_pages: u64,
    },
    /// `Config::wal_region_bytes` below the circular log's two blocks plus the flush-mark
    /// area.
    #[error("WAL region of {bytes} bytes is too small: it needs at least {need}")]
    WalRegionTooSmall {
        /// Region bytes asked for.
        bytes: u64,
        /// Least region bytes.
        need: u64,
    },
    /// The device cannot hold the layout.
    #[error("device too small: {blocks} blocks, need more than {need}")]
    DeviceTooSmall {
        /// Blocks the device has.
        blocks: u64,
        /// Blocks needed.
        need: u64,
    },
    /// The log device cannot hold the superblocks, the WAL region (and the snapshots).
    #[error("log device too small: {bytes} bytes, need {need}")]
    LogDeviceTooSmall {
        /// Bytes it has.
        bytes: u64,
        /// Bytes needed.
        need: u64,
    },
    /// The database keeps its WAL on a separate device, but none was given.
    #[error("this database keeps its WAL on a separate device: open it with that device")]
    LogDeviceMissing,
    /// The database keeps its WAL on the main device, but a log device was given.
    #[error("this database keeps its WAL on the main device, but a WAL device was given")]
    LogDeviceUnexpected,
    /// Bad zone size.
    #[error("zone size {bytes} must be a multiple of 4096, >= 32 KiB and < 4 GiB")]
    ZoneSize {
        /// Bytes asked for.
        bytes: u64,
    },
    /// Zoned device without a log device.
    #[error(
        "out-of-place on a zoned device needs a separate (conventional) log device for the \
         superblock, WAL and mapping snapshots: use Engine::create_with_wal"
    )]
    ZonedNeedsLogDevice,
    /// Zone size differs from the device's or the database's.
    #[error("zone size must be {required} bytes ({why}), not {requested}")]
    ZoneSizeMismatch {
        /// What is required.
        required: u64,
        /// What was asked.
        requested: u64,
        /// Whose size it is.
        why: &'static str,
    },
    /// Too few zones for the open zones and the GC reserve.
    #[error("device too small for out-of-place: {zones} zones of {zone_bytes} bytes, need more than {need}")]
    TooFewZones {
        /// Zones that fit.
        zones: u64,
        /// Zone size.
        zone_bytes: u64,
        /// Zones needed.
        need: u64,
    },
    /// A SepFrozen hook the out-of-place store cannot run.
    #[error("SepFrozen placement with {classes} classes: BIT needs 4..=16, DAC 2..=16, and no other placement, GDT or NoWA beside it")]
    FrozenPlacement {
        /// Classes asked for.
        classes: u16,
    },
    /// A placement scheme the out-of-place store cannot run.
    #[error("out-of-place placement {placement}: {why}")]
    Placement {
        /// The scheme.
        placement: nowa_logspace::PlacementKind,
        /// Why not.
        why: PlacementRefusal,
    },
    /// The garbage-proportion trigger with victims it cannot filter by their garbage.
    #[error(
        "the garbage-proportion GC trigger needs victims filtered by their garbage (greedy, \
         cost-benefit, cb-sepbit, GDT's greedy batches), not {victims} victims"
    )]
    GcTriggerVictims {
        /// The victim chooser.
        victims: String,
    },
    /// Sub-page deltas without page packing: a delta alone in its slot would take a whole
    /// block while counting only its payload as valid data (nowa-vopr seeds 24 and
    /// 50,002,476: GC could not compact a zone of them).
    #[error("sub-page deltas need page packing (packing off writes every page and delta to a whole block)")]
    DeltasWithoutPacking,
    /// `OopConfig::shared_wal_free` outside [0, 1).
    #[error("shared_wal_free {0} is not a share of the zones in [0, 1)")]
    SharedWalFree(String),
    /// Unknown compression name.
    #[error("unknown compression '{0}' (expected off, lz4 or zstd)")]
    Compression(String),
    /// The page store's checkpoint metadata does not fit the superblock.
    #[error("page-store metadata of {len} bytes exceeds the superblock's {max}")]
    StoreMetaTooLong {
        /// Bytes.
        len: usize,
        /// Maximum.
        max: usize,
    },
}

impl From<ConfigError> for String {
    /// The message (for callers that report configuration errors as text, e.g. a CLI).
    fn from(e: ConfigError) -> String {
        e.to_string()
    }
}

/// Shorthand for engine results.
pub type Result<T> = std::result::Result<T, EngineError>;

/// A page-damage error.
pub(crate) fn page_damage(pid: Pid, damage: PageDamage) -> EngineError {
    EngineError::Corrupt(Corruption::Page { pid, damage })
}

/// A tree-damage error.
pub(crate) fn tree_damage(pid: Pid, damage: TreeDamage) -> EngineError {
    EngineError::Corrupt(Corruption::Tree { pid, damage })
}
