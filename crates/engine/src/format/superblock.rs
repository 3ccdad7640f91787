//! Superblock (blocks 0 and 1 of the device holding the WAL): the device layout, the write
//! path the database was created with, the salvage record, and the checkpoint record. Two
//! copies, written alternately (copy = seq % 2), so a torn write leaves the previous intact.
//! Byte table: docs/design.md section 2.

use super::{block_crc, wal, Field, BLOCK, VAR};
use crate::error::{ConfigError, EngineError, SuperblockDamage, WritePathKind};
use crate::format::zone::Compression;
use crate::num::{u32_of, u64_of, usize_of};

/// "NOWA" little endian.
pub const MAGIC: u32 = 0x4157_4F4E;
/// Format version this build writes and reads (3: the page header holds the hotness
/// records, so the node body starts at 104, not 72; 4: the WAL has TxnWrite records, a
/// commit group's writes no longer log their keys and values twice; 5: the flush marks
/// live in four blocks at the end of the WAL region, outside the circular log, which is
/// four blocks shorter: a format-4 log would be read at the wrong positions, so format 4
/// is refused with `SuperblockDamage::Version`; 6: compact WAL records: the record header
/// stores no LSN or salt (a position check word and a checksum seeded with both instead,
/// 17 bytes instead of 25) and Put / Delete payloads use varints; a format-5 log would not
/// decode, so format 5 is refused the same way; 7: WAL groups: one header and one
/// checksum per group of entries (docs/design.md section 4), update keys share their
/// prefix with the group's previous key, and the superblock names where the log scan
/// starts (the group holding the redo LSN); a format-6 log would not decode).
pub const VERSION: u32 = 7;

/// crc32c of bytes [4, 4096).
pub const CRC: Field = Field::new(0, 4, "crc32c");
/// Magic.
pub const MAGIC_F: Field = Field::new(4, 4, "magic");
/// Format version.
pub const VERSION_F: Field = Field::new(8, 4, "format version");
/// Page size.
pub const PAGE_SIZE_F: Field = Field::new(12, 4, "page size");
/// Write sequence number (the valid copy with the highest wins).
pub const SEQ: Field = Field::new(16, 8, "seq");
/// Doublewrite area: first block.
pub const DW_START: Field = Field::new(24, 8, "dw start");
/// Doublewrite area: slots.
pub const DW_PAGES: Field = Field::new(32, 8, "dw pages");
/// WAL region: first block.
pub const WAL_START: Field = Field::new(40, 8, "wal start");
/// WAL region: blocks.
pub const WAL_BLOCKS: Field = Field::new(48, 8, "wal blocks");
/// Data region: first block.
pub const DATA_START: Field = Field::new(56, 8, "data start");
/// Data region: pages.
pub const DATA_PAGES: Field = Field::new(64, 8, "data pages");
/// Doublewrite was on when written (informational).
pub const DOUBLEWRITE: Field = Field::new(72, 1, "doublewrite");
/// Clean shutdown.
pub const CLEAN: Field = Field::new(73, 1, "clean");
/// WAL on a separate log device.
pub const WAL_SEPARATE: Field = Field::new(74, 1, "wal separate");
/// Write path: 1 in place, 2 out of place.
pub const WRITE_PATH: Field = Field::new(75, 1, "write path");
/// Out of place: open zones.
pub const OPEN_ZONES: Field = Field::new(76, 4, "open zones");
/// Out of place: zone size in bytes.
pub const ZONE_BYTES: Field = Field::new(80, 8, "zone bytes");
/// Out of place: compression (0 off, 1 LZ4, 2 ZSTD).
pub const COMPRESSION: Field = Field::new(88, 1, "compression");
/// Out of place: bit 0 NoWA, bit 1 GDT, bit 2 packing.
pub const OOP_FLAGS: Field = Field::new(89, 1, "oop flags");
/// Checkpoint: redo LSN minus the LSN the log scan starts at (the start of the WAL group
/// holding the redo LSN; 0 when the redo LSN starts a group or lies between groups).
pub const SCAN_BACK: Field = Field::new(90, 4, "scan back-distance");
/// Reserved, zero.
pub const RESERVED1: Field = Field::new(94, 2, "reserved");
/// Opens that salvaged a damaged WAL (lost records), ever.
pub const SALVAGE_COUNT: Field = Field::new(96, 8, "salvage count");
/// The last salvage: first lost LSN.
pub const SALVAGE_FROM: Field = Field::new(104, 8, "salvage from");
/// The last salvage: end of the lost range.
pub const SALVAGE_TO: Field = Field::new(112, 8, "salvage to");
/// Checkpoint: the buffer pool's DB-written-page timer (hotness records; 0 in databases
/// written before it was kept: the timer then starts at 1).
pub const HR_TIMER: Field = Field::new(120, 8, "hr timer");
/// Checkpoint: redo LSN.
pub const REDO_LSN: Field = Field::new(128, 8, "redo lsn");
/// Checkpoint: root pid.
pub const ROOT: Field = Field::new(136, 8, "root");
/// Checkpoint: allocation high-water mark.
pub const NEXT_PID: Field = Field::new(144, 8, "next pid");
/// Checkpoint: WAL salt of the log epoch.
pub const WAL_SALT: Field = Field::new(152, 4, "wal salt");
/// Checkpoint: page-store metadata length.
pub const META_LEN: Field = Field::new(156, 4, "meta length");
/// Checkpoint: page-store metadata.
pub const META: Field = Field::new(160, VAR, "store metadata");

/// The superblock's fields, in order.
pub const FIELDS: &[Field] = &[
    CRC,
    MAGIC_F,
    VERSION_F,
    PAGE_SIZE_F,
    SEQ,
    DW_START,
    DW_PAGES,
    WAL_START,
    WAL_BLOCKS,
    DATA_START,
    DATA_PAGES,
    DOUBLEWRITE,
    CLEAN,
    WAL_SEPARATE,
    WRITE_PATH,
    OPEN_ZONES,
    ZONE_BYTES,
    COMPRESSION,
    OOP_FLAGS,
    SCAN_BACK,
    RESERVED1,
    SALVAGE_COUNT,
    SALVAGE_FROM,
    SALVAGE_TO,
    HR_TIMER,
    REDO_LSN,
    ROOT,
    NEXT_PID,
    WAL_SALT,
    META_LEN,
    META,
];

/// Largest page-store metadata the superblock holds.
pub const MAX_META: usize = BLOCK - META.offset;

const _: () = assert!(super::well_formed(FIELDS, BLOCK));
const _: () = assert!(META.offset == 160 && MAX_META == 3936);

const PATH_IN_PLACE: u8 = 1;
const PATH_OUT_OF_PLACE: u8 = 2;
const FLAG_NOWA: u8 = 1;
const FLAG_GDT: u8 = 2;
const FLAG_PACKING: u8 = 4;

/// Where the regions are, in blocks (fixed at create).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DiskLayout {
    /// Doublewrite area: first block (on the main device).
    pub dw_start: u64,
    /// Doublewrite area: slots.
    pub dw_pages: u64,
    /// WAL region: first block (on the log device when the WAL is separate).
    pub wal_start: u64,
    /// WAL region: blocks.
    pub wal_blocks: u64,
    /// Data region: first block (pid p lives at block data_start + p in place).
    pub data_start: u64,
    /// Data region: pages.
    pub data_pages: u64,
}

impl DiskLayout {
    /// Blocks of the circular log: the WAL region less the flush-mark area at its end.
    #[must_use]
    pub fn log_blocks(&self) -> u64 {
        super::mark::log_blocks(self.wal_blocks)
    }
}

/// The write path a database was created with, and its parameters (recorded at create and
/// at every checkpoint; checked at open before anything is written).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritePath {
    /// Fixed home per page (doublewrite is a runtime switch, not part of the identity).
    InPlace,
    /// Zones, DB GC, compression and packing.
    OutOfPlace {
        /// Zone size in bytes (must match at open).
        zone_bytes: u64,
        /// Open zones (steers new writes).
        open_zones: u32,
        /// Compression of new writes.
        compression: Compression,
        /// NoWA active groups.
        nowa: bool,
        /// GDT deathtime grouping.
        gdt: bool,
        /// 4 KiB page packing.
        packing: bool,
    },
}

impl WritePath {
    /// The write path without its parameters.
    #[must_use]
    pub fn kind(&self) -> WritePathKind {
        match self {
            WritePath::InPlace => WritePathKind::InPlace,
            WritePath::OutOfPlace { .. } => WritePathKind::OutOfPlace,
        }
    }
}

impl WritePath {
    /// The parameters, as " (...)" (empty in place).
    #[must_use]
    pub fn details(&self) -> String {
        match self {
            WritePath::InPlace => String::new(),
            WritePath::OutOfPlace {
                zone_bytes,
                open_zones,
                compression,
                nowa,
                gdt,
                packing,
            } => format!(
                " (zones of {zone_bytes} bytes, {open_zones} open, compression {compression:?}, \
                 NoWA {nowa}, GDT {gdt}, packing {packing})"
            ),
        }
    }
}

impl std::fmt::Display for WritePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.kind(), self.details())
    }
}

/// The durable record of WAL salvages (a user asked to open past mid-log damage).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct SalvageRecord {
    /// Opens that lost records to salvage, over the database's life.
    pub count: u64,
    /// The last loss: first lost LSN.
    pub from: u64,
    /// The last loss: end of the lost range.
    pub to: u64,
}

/// A decoded superblock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superblock {
    /// Write sequence number.
    pub seq: u64,
    /// Regions.
    pub layout: DiskLayout,
    /// Doublewrite on when written (informational).
    pub doublewrite: bool,
    /// Written by `close()`.
    pub clean: bool,
    /// WAL on a separate log device.
    pub wal_separate: bool,
    /// Write path and parameters.
    pub write_path: WritePath,
    /// WAL salvages.
    pub salvage: SalvageRecord,
    /// Redo LSN of the checkpoint.
    pub redo_lsn: u64,
    /// Where recovery's log scan starts: the start of the WAL group holding the redo LSN
    /// (at most one group before it), or the redo LSN itself.
    pub scan_lsn: u64,
    /// Root pid.
    pub root: u64,
    /// Allocation high-water mark.
    pub next_pid: u64,
    /// WAL salt of the log epoch.
    pub wal_salt: u32,
    /// The pool's DB-written-page timer at the checkpoint (resumed at open, so write times
    /// keep growing across restarts).
    pub hr_timer: u64,
    /// Page-store metadata (out of place: the metadata record).
    pub store_meta: Vec<u8>,
}

/// What a block 0 says about the database on a device (for tools deciding whether a target
/// may be reused).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DbIdentity {
    /// Format version of the superblock.
    pub format_version: u32,
    /// The write path (None: a format version that did not record it).
    pub write_path: Option<WritePath>,
    /// The WAL (and this superblock) live on a separate log device.
    pub wal_separate: bool,
    /// Closed cleanly.
    pub clean: bool,
    /// Regions (None for other format versions).
    pub layout: Option<DiskLayout>,
}

/// Recognize a nowa superblock block (block 0 or 1 of the device holding the WAL). None if
/// the block is not a valid nowa superblock of any version.
#[must_use]
pub fn identify(block: &[u8]) -> Option<DbIdentity> {
    if block.len() < BLOCK || CRC.u32(block) != block_crc(&block[..BLOCK]) {
        return None;
    }
    if MAGIC_F.u32(block) != MAGIC {
        return None;
    }
    match Superblock::decode(&block[..BLOCK]) {
        Ok(sb) => Some(DbIdentity {
            format_version: VERSION,
            write_path: Some(sb.write_path),
            wal_separate: sb.wal_separate,
            clean: sb.clean,
            layout: Some(sb.layout),
        }),
        Err(_) => Some(DbIdentity {
            format_version: VERSION_F.u32(block),
            write_path: None,
            wal_separate: WAL_SEPARATE.u8(block) != 0,
            clean: CLEAN.u8(block) != 0,
            layout: None,
        }),
    }
}

fn compression_code(c: Compression) -> u8 {
    match c {
        Compression::Off => 0,
        Compression::Lz4 => 1,
        Compression::Zstd => 2,
    }
}

fn encode_write_path(p: &mut [u8], w: WritePath) {
    match w {
        WritePath::InPlace => WRITE_PATH.put_u8(p, PATH_IN_PLACE),
        WritePath::OutOfPlace {
            zone_bytes,
            open_zones,
            compression,
            nowa,
            gdt,
            packing,
        } => {
            WRITE_PATH.put_u8(p, PATH_OUT_OF_PLACE);
            OPEN_ZONES.put_u32(p, open_zones);
            ZONE_BYTES.put_u64(p, zone_bytes);
            COMPRESSION.put_u8(p, compression_code(compression));
            let flags = (u8::from(nowa) * FLAG_NOWA)
                | (u8::from(gdt) * FLAG_GDT)
                | (u8::from(packing) * FLAG_PACKING);
            OOP_FLAGS.put_u8(p, flags);
        }
    }
}

fn decode_write_path(p: &[u8]) -> Result<WritePath, SuperblockDamage> {
    match WRITE_PATH.u8(p) {
        PATH_IN_PLACE => Ok(WritePath::InPlace),
        PATH_OUT_OF_PLACE => {
            let flags = OOP_FLAGS.u8(p);
            let compression = match COMPRESSION.u8(p) {
                0 => Compression::Off,
                1 => Compression::Lz4,
                2 => Compression::Zstd,
                code => return Err(SuperblockDamage::WritePath { code }),
            };
            Ok(WritePath::OutOfPlace {
                zone_bytes: ZONE_BYTES.u64(p),
                open_zones: OPEN_ZONES.u32(p),
                compression,
                nowa: flags & FLAG_NOWA != 0,
                gdt: flags & FLAG_GDT != 0,
                packing: flags & FLAG_PACKING != 0,
            })
        }
        code => Err(SuperblockDamage::WritePath { code }),
    }
}

impl Superblock {
    /// Serialize into one block.
    ///
    /// # Errors
    /// `Config(StoreMetaTooLong)` if the store metadata does not fit (never truncated).
    ///
    /// # Panics
    /// If the superblock breaks an invariant the engine relies on (root below the allocation
    /// mark, allocation mark inside the data region, doublewrite area at block 2 or later):
    /// written state is checked here and again by [`Self::check`] when read.
    pub fn encode(&self) -> Result<Vec<u8>, EngineError> {
        if self.store_meta.len() > MAX_META {
            return Err(EngineError::Config(ConfigError::StoreMetaTooLong {
                len: self.store_meta.len(),
                max: MAX_META,
            }));
        }
        assert!(
            self.root < self.next_pid && self.next_pid <= self.layout.data_pages,
            "superblock: root {} / next pid {} / {} data pages",
            self.root,
            self.next_pid,
            self.layout.data_pages
        );
        assert!(
            self.layout.dw_start >= 2,
            "superblock: doublewrite area over the superblocks"
        );
        let mut p = vec![0u8; BLOCK];
        MAGIC_F.put_u32(&mut p, MAGIC);
        VERSION_F.put_u32(&mut p, VERSION);
        PAGE_SIZE_F.put_u32(&mut p, u32_of(BLOCK));
        SEQ.put_u64(&mut p, self.seq);
        let l = &self.layout;
        DW_START.put_u64(&mut p, l.dw_start);
        DW_PAGES.put_u64(&mut p, l.dw_pages);
        WAL_START.put_u64(&mut p, l.wal_start);
        WAL_BLOCKS.put_u64(&mut p, l.wal_blocks);
        DATA_START.put_u64(&mut p, l.data_start);
        DATA_PAGES.put_u64(&mut p, l.data_pages);
        DOUBLEWRITE.put_u8(&mut p, u8::from(self.doublewrite));
        CLEAN.put_u8(&mut p, u8::from(self.clean));
        WAL_SEPARATE.put_u8(&mut p, u8::from(self.wal_separate));
        encode_write_path(&mut p, self.write_path);
        SALVAGE_COUNT.put_u64(&mut p, self.salvage.count);
        SALVAGE_FROM.put_u64(&mut p, self.salvage.from);
        SALVAGE_TO.put_u64(&mut p, self.salvage.to);
        REDO_LSN.put_u64(&mut p, self.redo_lsn);
        let back = self.redo_lsn - self.scan_lsn;
        assert!(
            usize_of(back) <= wal::MAX_RECORD,
            "superblock: log scan {back} bytes before the redo LSN"
        );
        SCAN_BACK.put_u32(&mut p, u32_of(usize_of(back)));
        ROOT.put_u64(&mut p, self.root);
        NEXT_PID.put_u64(&mut p, self.next_pid);
        WAL_SALT.put_u32(&mut p, self.wal_salt);
        HR_TIMER.put_u64(&mut p, self.hr_timer);
        META_LEN.put_u32(&mut p, u32_of(self.store_meta.len()));
        p[META.offset..META.offset + self.store_meta.len()].copy_from_slice(&self.store_meta);
        let c = block_crc(&p);
        CRC.put_u32(&mut p, c);
        Ok(p)
    }

    /// Parse one block.
    ///
    /// # Errors
    /// What is wrong with it (checksum, magic, version, page size, metadata length, write
    /// path). Layout ranges are checked against the devices by [`Self::check`].
    pub fn decode(p: &[u8]) -> Result<Superblock, SuperblockDamage> {
        if p.len() != BLOCK {
            return Err(SuperblockDamage::Short { len: p.len() });
        }
        let (stored, computed) = (CRC.u32(p), block_crc(p));
        if stored != computed {
            return Err(SuperblockDamage::Checksum { stored, computed });
        }
        if MAGIC_F.u32(p) != MAGIC {
            return Err(SuperblockDamage::Magic {
                found: MAGIC_F.u32(p),
            });
        }
        if VERSION_F.u32(p) != VERSION {
            return Err(SuperblockDamage::Version {
                found: VERSION_F.u32(p),
                supported: VERSION,
            });
        }
        if usize_of(u64::from(PAGE_SIZE_F.u32(p))) != BLOCK {
            return Err(SuperblockDamage::PageSize {
                found: PAGE_SIZE_F.u32(p),
            });
        }
        let m = META_LEN.u32(p);
        if usize_of(u64::from(m)) > MAX_META {
            return Err(SuperblockDamage::MetaLength {
                len: m,
                max: MAX_META,
            });
        }
        let redo_lsn = REDO_LSN.u64(p);
        let Some(scan_lsn) = redo_lsn.checked_sub(u64::from(SCAN_BACK.u32(p))) else {
            return Err(SuperblockDamage::Layout {
                what: "log scan start before LSN 0",
            });
        };
        Ok(Superblock {
            seq: SEQ.u64(p),
            layout: DiskLayout {
                dw_start: DW_START.u64(p),
                dw_pages: DW_PAGES.u64(p),
                wal_start: WAL_START.u64(p),
                wal_blocks: WAL_BLOCKS.u64(p),
                data_start: DATA_START.u64(p),
                data_pages: DATA_PAGES.u64(p),
            },
            doublewrite: DOUBLEWRITE.u8(p) != 0,
            clean: CLEAN.u8(p) != 0,
            wal_separate: WAL_SEPARATE.u8(p) != 0,
            write_path: decode_write_path(p)?,
            salvage: SalvageRecord {
                count: SALVAGE_COUNT.u64(p),
                from: SALVAGE_FROM.u64(p),
                to: SALVAGE_TO.u64(p),
            },
            redo_lsn,
            scan_lsn,
            root: ROOT.u64(p),
            next_pid: NEXT_PID.u64(p),
            wal_salt: WAL_SALT.u32(p),
            hr_timer: HR_TIMER.u64(p),
            store_meta: p[META.offset..META.offset + usize_of(u64::from(m))].to_vec(),
        })
    }

    /// Layout sanity against the device sizes (in blocks), so later arithmetic cannot go out
    /// of range. `wal_blocks_dev`: the log device, if the WAL is separate.
    ///
    /// # Errors
    /// `Layout { what }` naming the first check that failed.
    pub fn check(
        &self,
        main_blocks: u64,
        wal_blocks_dev: Option<u64>,
    ) -> Result<(), SuperblockDamage> {
        let l = &self.layout;
        let bad = |what| Err(SuperblockDamage::Layout { what });
        let end = |a: u64, b: u64| a.checked_add(b);
        if l.dw_start < 2 || l.wal_blocks < super::mark::BLOCKS + 2 {
            return bad("doublewrite area or WAL region too small or over the superblocks");
        }
        let regions_ok = match wal_blocks_dev {
            None => {
                end(l.dw_start, l.dw_pages).is_some_and(|e| e <= l.wal_start)
                    && end(l.wal_start, l.wal_blocks).is_some_and(|e| e <= l.data_start)
            }
            Some(log) => {
                end(l.dw_start, l.dw_pages).is_some_and(|e| e <= l.data_start)
                    && end(l.wal_start, l.wal_blocks).is_some_and(|e| e <= log)
            }
        };
        if !regions_ok {
            return bad("regions overlap or exceed the log device");
        }
        if end(l.data_start, l.data_pages).is_none_or(|e| e > main_blocks) {
            return bad("data region beyond the device");
        }
        if self.next_pid > l.data_pages || self.root >= self.next_pid {
            return bad("root or allocation mark outside the data region");
        }
        if self.redo_lsn < u64_of(BLOCK) {
            return bad("redo LSN below the first block of the log");
        }
        if self.scan_lsn < u64_of(BLOCK) || self.redo_lsn - self.scan_lsn > u64_of(wal::MAX_RECORD)
        {
            return bad(
                "log scan start below the first block or more than a group before the redo LSN",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(meta: usize) -> Superblock {
        Superblock {
            seq: 7,
            layout: DiskLayout {
                dw_start: 2,
                dw_pages: 8,
                wal_start: 10,
                wal_blocks: 100,
                data_start: 110,
                data_pages: 1000,
            },
            doublewrite: true,
            clean: false,
            wal_separate: false,
            write_path: WritePath::OutOfPlace {
                zone_bytes: 1 << 20,
                open_zones: 4,
                compression: Compression::Lz4,
                nowa: true,
                gdt: false,
                packing: true,
            },
            salvage: SalvageRecord {
                count: 1,
                from: 9000,
                to: 9100,
            },
            redo_lsn: 4096,
            scan_lsn: 4096,
            root: 3,
            next_pid: 9,
            wal_salt: 0xDEAD_BEEF,
            hr_timer: 123_456_789,
            store_meta: vec![0xAB; meta],
        }
    }

    #[test]
    fn round_trip_and_identify() {
        let sb = sample(96);
        let b = sb.encode().unwrap();
        assert_eq!(Superblock::decode(&b).unwrap(), sb);
        assert!(sb.check(2000, None).is_ok());
        let id = identify(&b).unwrap();
        assert_eq!(id.write_path, Some(sb.write_path));
        assert!(identify(&[0u8; BLOCK]).is_none());
        let mut old = b.clone();
        VERSION_F.put_u32(&mut old, 1);
        let c = block_crc(&old);
        CRC.put_u32(&mut old, c);
        assert_eq!(identify(&old).unwrap().format_version, 1);
        assert!(matches!(
            Superblock::decode(&old),
            Err(SuperblockDamage::Version { found: 1, .. })
        ));
    }

    #[test]
    fn the_log_scan_start_round_trips_and_is_checked() {
        let mut sb = sample(0);
        sb.redo_lsn = 100_000;
        sb.scan_lsn = 90_000;
        let b = sb.encode().unwrap();
        assert_eq!(SCAN_BACK.u32(&b), 10_000);
        assert_eq!(Superblock::decode(&b).unwrap(), sb);
        assert!(sb.check(1110, None).is_ok());
        // A scan start before LSN 0, below the first block, or more than a group back.
        let mut bad = b.clone();
        SCAN_BACK.put_u32(&mut bad, 100_001);
        let c = block_crc(&bad);
        CRC.put_u32(&mut bad, c);
        assert_eq!(
            Superblock::decode(&bad),
            Err(SuperblockDamage::Layout {
                what: "log scan start before LSN 0"
            })
        );
        for (redo, scan) in [(100_000, 4_095), (4_000_000, 4_000_000 - (1 << 20) - 1)] {
            sb.redo_lsn = redo;
            sb.scan_lsn = scan;
            assert!(matches!(
                sb.check(1110, None),
                Err(SuperblockDamage::Layout { .. })
            ));
        }
    }

    #[test]
    fn oversized_metadata_is_an_error_not_truncated() {
        assert!(sample(MAX_META).encode().is_ok());
        assert!(matches!(
            sample(MAX_META + 1).encode(),
            Err(EngineError::Config(ConfigError::StoreMetaTooLong { .. }))
        ));
    }

    #[test]
    fn layout_checks() {
        let mut sb = sample(0);
        assert!(sb.check(1110, None).is_ok());
        assert!(
            sb.check(1109, None).is_err(),
            "data region beyond the device"
        );
        sb.layout.wal_start = 5;
        assert!(
            sb.check(2000, None).is_err(),
            "WAL overlaps the doublewrite area"
        );
    }
}
