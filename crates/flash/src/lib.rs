//! A page-mapped FTL model of an SSD, fast enough to simulate many drive writes per second.
//!
//! - Mapping: `l2p[lba] = ppn + 1` (0 = unmapped) and `p2l[ppn] = lba`. A physical page is valid
//!   iff `l2p[p2l[ppn]] == ppn + 1`, so an overwrite touches one random cache line only; GC
//!   checks validity while it scans the victim. Memory: 4 B per logical page + 4 B per physical
//!   page + a few dozen bytes per unit (well under the 12 B per physical page budget).
//! - Units (superblocks, erase blocks or zones), valid counts, the free list and victim
//!   selection live in [`nowa_logspace::Space`], shared with the engine's zone GC.
//! - Streams: each host stream has its own open unit (multi-stream / FDP handles); GC copies go
//!   to the frontier [`GcFrontier`] says.
//! - Optional LRU write buffer that absorbs rewrites (ssd-iq.md 4.3).
//! - Zoned mode: units are zones, writes must hit the write pointer, the host resets zones.
//! - Counters like an OCP log page: host pages, media pages, GC copies, erases, victim valid
//!   ratio histogram.

mod buffer;
mod config;
mod hugepage;

pub use config::{FtlConfig, GcFrontier, GcUnit, Layout, Mode, PAGE_SIZE};
pub use nowa_logspace::{PolicyKind, PolicyParseError, VictimHistogram};

use buffer::WriteBuffer;
use nowa_logspace::{Space, SpaceError, UnitState};
use serde::Serialize;

/// Errors of the FTL model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FlashError {
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("LBA {lba} out of range (device has {logical} pages)")]
    LbaOutOfRange { lba: u64, logical: u64 },
    #[error("stream {stream} out of range (device has {streams} streams)")]
    BadStream { stream: u16, streams: u16 },
    #[error("zone {zone}: write at page {got} but the write pointer is at {expected}")]
    ZoneViolation { zone: u64, expected: u64, got: u64 },
    #[error("zone {zone}: would exceed the limit of {max} open zones")]
    TooManyOpenZones { zone: u64, max: u32 },
    #[error("operation not supported in this mode: {0}")]
    Unsupported(&'static str),
    #[error("device full: GC found no unit with reclaimable space")]
    DeviceFull,
}

impl From<SpaceError> for FlashError {
    fn from(_: SpaceError) -> Self {
        FlashError::DeviceFull
    }
}

/// Counters in pages, as an OCP SMART / extended log page would report them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Pages the host asked to write.
    pub host_pages: u64,
    /// Pages programmed on flash: host programs + GC copies.
    pub media_pages: u64,
    /// Pages relocated by GC.
    pub gc_pages: u64,
    /// Host writes absorbed by the write buffer (never reached flash).
    pub buffer_absorbed: u64,
    pub trimmed_pages: u64,
    pub erases: u64,
    pub gc_rounds: u64,
}

impl Counters {
    /// Write amplification = media / host (1.0 before any write).
    pub fn waf(&self) -> f64 {
        if self.host_pages == 0 {
            1.0
        } else {
            self.media_pages as f64 / self.host_pages as f64
        }
    }
    /// Counters accumulated since `earlier`.
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            host_pages: self.host_pages - earlier.host_pages,
            media_pages: self.media_pages - earlier.media_pages,
            gc_pages: self.gc_pages - earlier.gc_pages,
            buffer_absorbed: self.buffer_absorbed - earlier.buffer_absorbed,
            trimmed_pages: self.trimmed_pages - earlier.trimmed_pages,
            erases: self.erases - earlier.erases,
            gc_rounds: self.gc_rounds - earlier.gc_rounds,
        }
    }
}

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Frontier {
    unit: u32,
    wp: u32,
}

/// Per-zone host state in zoned mode.
#[derive(Debug, Clone, Copy)]
struct Zone {
    unit: u32,
    wp: u32,
}

/// The FTL model.
pub struct Ftl {
    cfg: FtlConfig,
    layout: Layout,
    unit_pages: u32,
    /// log2(unit_pages) when it is a power of two, to avoid a division per write.
    unit_shift: Option<u32>,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    space: Space,
    frontiers: Vec<Frontier>,
    in_gc: bool,
    buffer: Option<WriteBuffer>,
    zones: Vec<Zone>,
    open_zones: u32,
    c: Counters,
    /// Host pages programmed to flash (host writes minus what the buffer absorbed or holds).
    host_programs: u64,
    /// Buffered pages dropped by a trim before reaching flash.
    buffer_trimmed: u64,
}

impl Ftl {
    pub fn new(cfg: FtlConfig) -> Result<Ftl, FlashError> {
        let layout = cfg.layout()?;
        let unit_pages = layout.unit_pages;
        let streams = cfg.streams as usize;
        let nfront = match layout.gc_frontier {
            GcFrontier::Shared => streams,
            GcFrontier::Separate => streams + 1,
            GcFrontier::PerStream => streams * 2,
        };
        let zoned = matches!(cfg.mode, Mode::Zoned { .. });
        let buffer =
            (cfg.write_buffer_pages > 0).then(|| WriteBuffer::new(cfg.write_buffer_pages as usize));
        // vec![0; n] comes from calloc: untouched pages cost nothing until written. The tables
        // are hit at random, so ask for huge pages before the first touch (fewer TLB misses).
        let mut l2p = vec![0u32; layout.logical_pages as usize];
        let mut p2l = vec![0u32; layout.physical_pages as usize];
        hugepage::advise(&mut l2p);
        hugepage::advise(&mut p2l);
        Ok(Ftl {
            unit_shift: unit_pages
                .is_power_of_two()
                .then(|| unit_pages.trailing_zeros()),
            unit_pages,
            l2p,
            p2l,
            space: Space::new(layout.units, unit_pages, cfg.policy.build(cfg.seed)),
            frontiers: vec![Frontier { unit: NONE, wp: 0 }; nfront],
            in_gc: false,
            buffer,
            zones: if zoned {
                vec![Zone { unit: NONE, wp: 0 }; layout.units as usize]
            } else {
                Vec::new()
            },
            open_zones: 0,
            c: Counters::default(),
            host_programs: 0,
            buffer_trimmed: 0,
            layout,
            cfg,
        })
    }

    pub fn config(&self) -> &FtlConfig {
        &self.cfg
    }
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    pub fn logical_pages(&self) -> u64 {
        self.layout.logical_pages
    }
    pub fn counters(&self) -> Counters {
        let mut c = self.c;
        c.erases = self.space.total_erases();
        c
    }
    pub fn victim_histogram(&self) -> &VictimHistogram {
        &self.space.victims
    }
    pub fn erase_counts(&self) -> &[u32] {
        self.space.erase_counts()
    }
    pub fn policy_name(&self) -> String {
        self.space.policy_name()
    }
    /// Bytes of memory the model holds (mapping tables and unit metadata).
    pub fn memory_bytes(&self) -> u64 {
        let units = self.layout.units as u64;
        (self.l2p.capacity() + self.p2l.capacity()) as u64 * 4
            + units * 48
            + self.buffer.as_ref().map_or(0, |b| b.memory_bytes())
    }

    #[inline]
    fn unit_of(&self, ppn: u32) -> u32 {
        match self.unit_shift {
            Some(s) => ppn >> s,
            None => ppn / self.unit_pages,
        }
    }

    #[inline]
    fn check_lba(&self, lba: u64) -> Result<(), FlashError> {
        if lba >= self.layout.logical_pages {
            return Err(FlashError::LbaOutOfRange {
                lba,
                logical: self.layout.logical_pages,
            });
        }
        Ok(())
    }

    #[inline]
    fn check_stream(&self, stream: u16) -> Result<(), FlashError> {
        if stream >= self.cfg.streams {
            return Err(FlashError::BadStream {
                stream,
                streams: self.cfg.streams,
            });
        }
        Ok(())
    }

    /// Host write of one page to `lba` on `stream` (0 on a conventional SSD).
    pub fn write(&mut self, lba: u64, stream: u16) -> Result<(), FlashError> {
        self.check_lba(lba)?;
        self.check_stream(stream)?;
        if !self.zones.is_empty() {
            return self.zone_write(lba);
        }
        self.host_write(lba as u32, stream)
    }

    /// Host writes of many pages on one stream: the fast path. Looks the batch's mapping entries
    /// up before applying the writes so their cache misses overlap.
    pub fn write_batch(&mut self, lbas: &[u32], stream: u16) -> Result<(), FlashError> {
        self.check_stream(stream)?;
        if !self.zones.is_empty() {
            for &l in lbas {
                self.zone_write(l as u64)?;
            }
            return Ok(());
        }
        let n = self.layout.logical_pages;
        for chunk in lbas.chunks(16) {
            let mut acc = 0u32;
            for &l in chunk {
                if l as u64 >= n {
                    return Err(FlashError::LbaOutOfRange {
                        lba: l as u64,
                        logical: n,
                    });
                }
                // Independent loads: the CPU overlaps their misses.
                acc ^= self.l2p[l as usize];
            }
            std::hint::black_box(acc);
            for &l in chunk {
                self.host_write(l, stream)?;
            }
        }
        Ok(())
    }

    #[inline]
    fn host_write(&mut self, lba: u32, stream: u16) -> Result<(), FlashError> {
        self.c.host_pages += 1;
        self.space.tick(1);
        if let Some(buf) = self.buffer.as_mut() {
            if buf.touch(lba, stream) {
                self.c.buffer_absorbed += 1;
                return Ok(());
            }
            // The buffered copy is now the newest: the flash copy is garbage.
            self.invalidate(lba);
            let evicted = self.buffer.as_mut().unwrap().insert(lba, stream);
            if let Some((l, s)) = evicted {
                self.host_programs += 1;
                self.program(l, s as usize)?;
            }
            return Ok(());
        }
        self.host_programs += 1;
        self.program(lba, stream as usize)
    }

    #[inline]
    fn invalidate(&mut self, lba: u32) {
        let old = self.l2p[lba as usize];
        if old != 0 {
            let u = self.unit_of(old - 1);
            self.space.sub_valid(u, 1);
            self.l2p[lba as usize] = 0;
        }
    }

    /// Write the newest version of `lba` into frontier `f`.
    #[inline]
    fn program(&mut self, lba: u32, f: usize) -> Result<(), FlashError> {
        // Unmap first: a GC round triggered below must not relocate the stale copy.
        self.invalidate(lba);
        self.append(lba, f)
    }

    #[inline]
    fn append(&mut self, lba: u32, f: usize) -> Result<(), FlashError> {
        let mut fr = self.frontiers[f];
        if fr.unit == NONE || fr.wp == self.unit_pages {
            self.make_room(f)?;
            fr = self.frontiers[f];
        }
        let ppn = fr.unit * self.unit_pages + fr.wp;
        self.p2l[ppn as usize] = lba;
        self.l2p[lba as usize] = ppn + 1;
        self.space.add_valid(fr.unit, 1);
        self.frontiers[f].wp = fr.wp + 1;
        self.c.media_pages += 1;
        Ok(())
    }

    /// Frontier `f` is full or has no unit: seal it, collect garbage if free units ran low,
    /// and open a fresh unit.
    #[cold]
    fn make_room(&mut self, f: usize) -> Result<(), FlashError> {
        let mut rounds = 0u32;
        loop {
            let fr = self.frontiers[f];
            if fr.unit != NONE && fr.wp < self.unit_pages {
                return Ok(());
            }
            if fr.unit != NONE {
                self.space.seal(fr.unit);
                self.frontiers[f].unit = NONE;
            }
            if !self.in_gc && self.space.free_units() <= self.cfg.min_free_units {
                rounds += 1;
                if rounds > 2 * self.layout.units {
                    return Err(FlashError::DeviceFull);
                }
                self.gc_round()?;
                // In shared mode the GC may have opened a unit for this very frontier.
                continue;
            }
            let u = self.space.open_unit(f as u16)?;
            self.frontiers[f] = Frontier { unit: u, wp: 0 };
            return Ok(());
        }
    }

    /// The frontier that receives pages relocated out of a unit written by frontier `class`.
    fn gc_destination(&self, class: u16) -> usize {
        let s = self.cfg.streams as usize;
        // Host frontiers are classes 0..s, GC frontiers s.. (per-stream: s + stream).
        let stream = class as usize % s;
        match self.layout.gc_frontier {
            GcFrontier::Shared => stream,
            GcFrontier::Separate => s,
            GcFrontier::PerStream => s + stream,
        }
    }

    /// Reclaim one victim unit.
    fn gc_round(&mut self) -> Result<(), FlashError> {
        self.in_gc = true;
        let victim = self.space.pick_victim()?;
        // A fully valid victim (random, FIFO...) costs a unit's worth of copies and frees
        // nothing; make_room bounds how long that may go on.
        let valid = self.space.valid(victim);
        let dest = self.gc_destination(self.space.class(victim));
        let base = victim * self.unit_pages;
        let mut moved = 0u32;
        // The destination unit's new valid pages, added in bulk when it fills or GC ends.
        let mut fr = self.frontiers[dest];
        let mut pending = 0u32;
        const CHUNK: u32 = 64;
        let mut chunk = [0u32; CHUNK as usize];
        let mut p = 0u32;
        while p < self.unit_pages && moved < valid {
            let n = (self.unit_pages - p).min(CHUNK) as usize;
            // Gather the mapping entries first so the random lookups overlap.
            let mut acc = 0u32;
            for (i, slot) in chunk.iter_mut().enumerate().take(n) {
                *slot = self.p2l[(base + p) as usize + i];
                acc ^= self.l2p[*slot as usize];
            }
            std::hint::black_box(acc);
            for (i, &lba) in chunk.iter().enumerate().take(n) {
                let ppn = base + p + i as u32;
                if self.l2p[lba as usize] != ppn + 1 {
                    continue;
                }
                if fr.unit == NONE || fr.wp == self.unit_pages {
                    if fr.unit != NONE {
                        self.space.add_valid(fr.unit, pending);
                    }
                    pending = 0;
                    self.frontiers[dest] = fr;
                    self.make_room(dest)?;
                    fr = self.frontiers[dest];
                }
                let new = fr.unit * self.unit_pages + fr.wp;
                self.p2l[new as usize] = lba;
                self.l2p[lba as usize] = new + 1;
                fr.wp += 1;
                pending += 1;
                moved += 1;
            }
            p += n as u32;
        }
        if fr.unit != NONE {
            self.space.add_valid(fr.unit, pending);
        }
        self.frontiers[dest] = fr;
        self.space.sub_valid(victim, moved);
        self.c.media_pages += moved as u64;
        debug_assert_eq!(
            moved, valid,
            "GC moved {moved} pages but the unit held {valid}"
        );
        self.c.gc_pages += moved as u64;
        self.c.gc_rounds += 1;
        self.space.erase(victim);
        self.in_gc = false;
        Ok(())
    }

    /// Deallocate `len` pages from `start`. Unmapped pages are a no-op. In zoned mode only whole
    /// zones can be trimmed (= reset).
    pub fn trim(&mut self, start: u64, len: u64) -> Result<(), FlashError> {
        if len == 0 {
            return Ok(());
        }
        let end = start.saturating_add(len);
        if end > self.layout.logical_pages {
            return Err(FlashError::LbaOutOfRange {
                lba: end - 1,
                logical: self.layout.logical_pages,
            });
        }
        if !self.zones.is_empty() {
            let zp = self.unit_pages as u64;
            if start % zp != 0 || len % zp != 0 {
                return Err(FlashError::Unsupported(
                    "partial-zone trim on a zoned device (reset whole zones)",
                ));
            }
            for z in start / zp..end / zp {
                self.zone_reset(z)?;
            }
            return Ok(());
        }
        for lba in start..end {
            let lba = lba as u32;
            if let Some(b) = self.buffer.as_mut() {
                if b.remove(lba) {
                    self.c.trimmed_pages += 1;
                    self.buffer_trimmed += 1;
                    continue;
                }
            }
            if self.l2p[lba as usize] != 0 {
                self.invalidate(lba);
                self.c.trimmed_pages += 1;
            }
        }
        Ok(())
    }

    /// Write the first `pages` LBAs sequentially once (ssd-iq.md 3.1 preconditioning).
    pub fn precondition_sequential(&mut self, pages: u64) -> Result<(), FlashError> {
        let pages = pages.min(self.layout.logical_pages);
        let mut batch = Vec::with_capacity(4096);
        let mut lba = 0u64;
        while lba < pages {
            batch.clear();
            let end = (lba + 4096).min(pages);
            batch.extend(lba as u32..end as u32);
            self.write_batch(&batch, 0)?;
            lba = end;
        }
        Ok(())
    }

    // ---- zoned mode ----

    pub fn zone_pages(&self) -> u64 {
        self.unit_pages as u64
    }
    pub fn zone_count(&self) -> u64 {
        self.zones.len() as u64
    }
    /// Zone write pointer (pages into the zone).
    pub fn zone_write_pointer(&self, zone: u64) -> Option<u64> {
        self.zones.get(zone as usize).map(|z| z.wp as u64)
    }

    fn zone_write(&mut self, lba: u64) -> Result<(), FlashError> {
        self.check_lba(lba)?;
        let zp = self.unit_pages as u64;
        let (z, off) = (lba / zp, lba % zp);
        let zone = self.zones[z as usize];
        if off != zone.wp as u64 {
            return Err(FlashError::ZoneViolation {
                zone: z,
                expected: zone.wp as u64,
                got: off,
            });
        }
        let unit = if zone.unit == NONE {
            let Mode::Zoned { max_open_zones } = self.cfg.mode else {
                unreachable!()
            };
            if self.open_zones >= max_open_zones {
                return Err(FlashError::TooManyOpenZones {
                    zone: z,
                    max: max_open_zones,
                });
            }
            // A zone's data lives in a physical unit of its own, picked from the free list.
            let u = self.space.open_unit(0)?;
            self.open_zones += 1;
            self.zones[z as usize].unit = u;
            u
        } else {
            zone.unit
        };
        let ppn = unit * self.unit_pages + zone.wp;
        self.p2l[ppn as usize] = lba as u32;
        self.l2p[lba as usize] = ppn + 1;
        self.space.add_valid(unit, 1);
        self.c.host_pages += 1;
        self.c.media_pages += 1;
        self.host_programs += 1;
        self.space.tick(1);
        let wp = zone.wp + 1;
        self.zones[z as usize].wp = wp;
        if wp == self.unit_pages {
            self.space.seal(unit);
            self.open_zones -= 1;
        }
        Ok(())
    }

    /// Reset a zone: its data is gone and its write pointer returns to the start.
    pub fn zone_reset(&mut self, zone: u64) -> Result<(), FlashError> {
        if self.zones.is_empty() {
            return Err(FlashError::Unsupported(
                "zone reset on a conventional device",
            ));
        }
        let Some(&z) = self.zones.get(zone as usize) else {
            return Err(FlashError::LbaOutOfRange {
                lba: zone * self.unit_pages as u64,
                logical: self.layout.logical_pages,
            });
        };
        if z.unit == NONE {
            return Ok(());
        }
        let base_lba = zone * self.unit_pages as u64;
        for i in 0..z.wp as u64 {
            self.l2p[(base_lba + i) as usize] = 0;
        }
        let v = self.space.valid(z.unit);
        self.space.sub_valid(z.unit, v);
        if self.space.state(z.unit) == UnitState::Open {
            self.open_zones -= 1;
        }
        self.c.trimmed_pages += z.wp as u64;
        self.space.erase(z.unit);
        self.zones[zone as usize] = Zone { unit: NONE, wp: 0 };
        Ok(())
    }

    // ---- invariants ----

    /// Number of mapped LBAs (the host's live data on flash, excluding the write buffer).
    pub fn mapped_pages(&self) -> u64 {
        self.l2p.iter().filter(|&&p| p != 0).count() as u64
    }

    /// Pages held by the write buffer.
    pub fn buffered_pages(&self) -> u64 {
        self.buffer.as_ref().map_or(0, |b| b.len() as u64)
    }

    /// Full consistency check (O(device)): every mapped LBA points to a programmed page of a
    /// non-free unit whose reverse entry names it; valid counts equal mapped pages per unit;
    /// media = host - absorbed + GC copies.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.space.check_invariants();
        let mut per_unit = vec![0u32; self.layout.units as usize];
        for (lba, &p) in self.l2p.iter().enumerate() {
            if p == 0 {
                continue;
            }
            let ppn = p - 1;
            let u = self.unit_of(ppn);
            let st = self.space.state(u);
            if st == UnitState::Free {
                return Err(format!("LBA {lba} maps to page {ppn} in erased unit {u}"));
            }
            if self.p2l[ppn as usize] as usize != lba {
                return Err(format!(
                    "LBA {lba} -> page {ppn} but page {ppn} -> LBA {}",
                    self.p2l[ppn as usize]
                ));
            }
            let off = ppn % self.unit_pages;
            // Sealed and in-GC units are full; open ones are written up to their pointer.
            let written = self
                .frontiers
                .iter()
                .map(|f| (f.unit, f.wp))
                .chain(self.zones.iter().map(|z| (z.unit, z.wp)))
                .find(|&(unit, _)| unit == u)
                .map_or(self.unit_pages, |(_, wp)| wp);
            if off >= written {
                return Err(format!(
                    "LBA {lba} maps to unwritten page {ppn} (unit {u} written up to {written})"
                ));
            }
            per_unit[u as usize] += 1;
        }
        for (u, &n) in per_unit.iter().enumerate() {
            if self.space.valid(u as u32) != n {
                return Err(format!(
                    "unit {u}: valid count {} but {n} LBAs map to it",
                    self.space.valid(u as u32)
                ));
            }
        }
        let c = self.counters();
        if c.media_pages != self.host_programs + c.gc_pages {
            return Err(format!(
                "media pages {} != host programs {} + GC copies {}",
                c.media_pages, self.host_programs, c.gc_pages
            ));
        }
        let accounted =
            self.host_programs + c.buffer_absorbed + self.buffer_trimmed + self.buffered_pages();
        if c.host_pages != accounted {
            return Err(format!("host pages {} != programmed + absorbed + trimmed in buffer + buffered = {accounted}", c.host_pages));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
