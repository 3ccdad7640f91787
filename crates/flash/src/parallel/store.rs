//! The chip-addressed FTL: mapping, superblocks, routing, GC.

use super::geometry::{ChipGeometry, GeometryError, Scheme};
use super::predictor::{class_of, Predictor};
use super::sfr::Sfr;
use super::streams::{StreamStats, Tracker};
use super::victims::{BlockBuckets, Slotted, Victims};
use super::{BIG_REQUEST_PAGES, CHUNK_PAGES, HOST_OPEN, LIFETIME_CLASSES};
use crate::live::LiveBits;
use crate::prefetch::GC_AHEAD;
use crate::FlashError;

/// Free blocks a chip keeps for GC at least: a host superblock opens only on chips with more.
pub const RESERVE: usize = 2;
/// FEMU's foreground GC threshold (`gc_thres_pcent_high` = 0.95: GC blocks host writes while
/// at most 5% of the lines are free), the default of [`ParallelFtl::set_gc_reserve`].
pub const FEMU_GC_RESERVE: f64 = 0.05;
/// FEMU's background GC threshold (`gc_thres_pcent` = 0.75: after every request its FTL
/// thread collects one line, `do_gc(ssd, false)`, while at most 25% of the lines are free,
/// skipping a victim with fewer than 1/8 of its pages invalid), the default of
/// [`ParallelFtl::set_background_gc`] in `nowa plan`.
pub const FEMU_BACKGROUND_GC: f64 = 0.25;
const NONE: u32 = u32::MAX;

/// What a flash operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// Page read.
    Read,
    /// Page program.
    Program,
    /// Block erase.
    Erase,
}

/// One flash operation on one chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlashOp {
    /// The chip.
    pub chip: u32,
    /// What it does.
    pub kind: OpKind,
}

/// Counters in flash pages and blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ParallelCounters {
    /// Pages the host wrote.
    pub host_pages: u64,
    /// Pages the host read (mapped ones).
    pub read_pages: u64,
    /// Pages GC relocated.
    pub gc_pages: u64,
    /// Blocks erased.
    pub erased_blocks: u64,
    /// Victims collected (superblocks, or blocks for Partial GC).
    pub victims: u64,
    /// Pages trimmed (mapped ones).
    pub trimmed_pages: u64,
    /// Host superblocks opened in the GC reserve because nothing was reclaimable.
    pub reserve_dips: u64,
    /// Victims collected by background GC ([`ParallelFtl::background_gc`]; also in `victims`).
    pub background_victims: u64,
}

impl ParallelCounters {
    /// WAF = (host + GC pages) / host pages (1.0 before any write).
    #[must_use]
    pub fn waf(&self) -> f64 {
        nowa_units::waf(self.host_pages + self.gc_pages, self.host_pages).unwrap_or(1.0)
    }
    /// Counters accumulated since `e`.
    #[must_use]
    pub fn since(&self, e: &ParallelCounters) -> ParallelCounters {
        ParallelCounters {
            host_pages: self.host_pages - e.host_pages,
            read_pages: self.read_pages - e.read_pages,
            gc_pages: self.gc_pages - e.gc_pages,
            erased_blocks: self.erased_blocks - e.erased_blocks,
            victims: self.victims - e.victims,
            trimmed_pages: self.trimmed_pages - e.trimmed_pages,
            reserve_dips: self.reserve_dips - e.reserve_dips,
            background_victims: self.background_victims - e.background_victims,
        }
    }
}

/// Which chips an open slot's superblocks take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Span {
    /// Every chip.
    All,
    /// `k` chips per channel, group `Some(g)`, or the next group round-robin.
    Group { k: u32, fixed: Option<u32> },
}

#[derive(Debug, Clone)]
struct Slot {
    sb: u32,
    span: Span,
}

#[derive(Debug, Clone, Default)]
struct Sb {
    chips: Vec<u32>,
    blocks: Vec<u32>,
    mask: u128,
    wp: u32,
    /// Where page `wp` goes: chip index `col` in `chips`, page `row` of its block (kept
    /// instead of dividing `wp` by the chip count on every program).
    col: u32,
    row: u32,
    valid: u32,
    cap: u32,
    /// Blocks not yet erased (Partial GC erases them one by one).
    live_blocks: u32,
    /// Chip set: 0 every chip, 1 + g chip group g.
    class: u32,
    /// Place in the victim buckets (out while open / free).
    at: Slotted,
    /// Sealing order: among equally good victims the oldest goes first.
    sealed_seq: u64,
}

impl Default for Slotted {
    fn default() -> Self {
        Slotted::OUT
    }
}

/// Victim rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Greedy,
    Ratio,
    Block,
}

/// The FTL; see the module documentation of `parallel`.
pub struct ParallelFtl {
    g: ChipGeometry,
    scheme: Scheme,
    rule: Rule,
    l2p: Vec<u32>,
    /// Reverse map: the LPN last programmed into each page (stale once the page is dead).
    p2l: Vec<u32>,
    /// Which pages hold their LPN's newest copy (`crate::live`): what GC scans.
    live: LiveBits,
    /// Valid pages per global block (chip x blocks per chip + block).
    bvalid: Vec<u32>,
    /// Superblock of each global block (NONE: free).
    bsb: Vec<u32>,
    free: Vec<Vec<u32>>,
    sbs: Vec<Sb>,
    free_ids: Vec<u32>,
    victims: Victims,
    /// Partial GC: blocks of sealed superblocks by valid pages.
    blocks: Option<BlockBuckets>,
    /// Superblocks sealed so far.
    seals: u64,
    /// Chips per channel of the chip groups (0: superblocks span every chip).
    group_k: u32,
    slots: Vec<Slot>,
    gc_slot: usize,
    next_group: u32,
    rr: usize,
    in_gc: bool,
    predictor: Option<Predictor>,
    sfr: Option<Sfr>,
    c: ParallelCounters,
    /// Victim valid ratios in percent (101 bins).
    victim_hist: Vec<u64>,
    ops: Vec<FlashOp>,
    /// Writes per slot (placement statistics).
    slot_writes: Vec<u64>,
    /// Per-stream accounting, once [`ParallelFtl::track_streams`] turned it on.
    tracker: Option<Tracker>,
    /// Free blocks per chip GC keeps (host superblocks open only on chips with more).
    reserve: usize,
    /// Background GC runs while a chip has at most this many free blocks (0: off).
    background: usize,
    /// The chip with the fewest free blocks (the first such), valid while `free_moved` is
    /// false: background GC asks after every request, free lists change only when a
    /// superblock opens or a block is erased.
    shortest: u32,
    free_moved: bool,
    /// LPNs of the live pages GC is moving (kept to reuse its allocation).
    scratch: Vec<u32>,
    /// Live pages per block of the victim GC is moving (its allocation reused).
    scratch_counts: Vec<usize>,
    /// Page number -> block, -> chip.
    per_block: Divisor,
    per_chip: Divisor,
}

/// Division by a fixed divisor, a shift when it is a power of two (the usual geometry): the
/// page-to-block and page-to-chip divisions run on every flash operation.
#[derive(Debug, Clone, Copy)]
struct Divisor {
    d: u32,
    shift: Option<u32>,
}

impl Divisor {
    fn new(d: u32) -> Divisor {
        assert!(d > 0, "a divisor");
        Divisor {
            d,
            shift: d.is_power_of_two().then(|| d.trailing_zeros()),
        }
    }
    #[inline]
    fn of(self, x: u32) -> u32 {
        match self.shift {
            Some(s) => x >> s,
            None => x / self.d,
        }
    }
}

impl Rule {
    fn of(scheme: Scheme) -> Rule {
        match scheme {
            Scheme::PartialGc => Rule::Block,
            Scheme::Plan { .. } => Rule::Ratio,
            _ => Rule::Greedy,
        }
    }
}

/// Pages of a superblock of each class: every chip, then each group of `group_k` chips per
/// channel (none when 0).
fn class_caps(g: &ChipGeometry, group_k: u32) -> Vec<u32> {
    let mut caps = vec![g.chips() * g.pages_per_block];
    if let Some(n) = g.chips_per_channel.checked_div(group_k) {
        caps.extend((0..n).map(|_| group_k * g.channels * g.pages_per_block));
    }
    caps
}

/// The slots of a scheme (host slots first, the GC slot last).
fn slots_of(g: &ChipGeometry, scheme: Scheme) -> Result<Vec<Span>, GeometryError> {
    let cpc = g.chips_per_channel;
    let group = |k: u32, what| {
        if k == 0 || k > cpc || cpc % k != 0 {
            Err(GeometryError(what))
        } else {
            Ok(k)
        }
    };
    Ok(match scheme {
        Scheme::Baseline {
            chips_per_channel,
            open,
        } => {
            let k = group(
                chips_per_channel,
                "baseline chips per channel must divide it",
            )?;
            if open == 0 {
                return Err(GeometryError("baseline needs >= 1 open superblock"));
            }
            let groups = cpc / k;
            let mut v: Vec<Span> = (0..u32::from(open))
                .map(|i| {
                    if k == cpc {
                        Span::All
                    } else {
                        let fixed = (u32::from(open) % groups == 0).then_some(i % groups);
                        Span::Group { k, fixed }
                    }
                })
                .collect();
            v.push(if k == cpc {
                Span::All
            } else {
                Span::Group { k, fixed: None }
            });
            v
        }
        Scheme::PartialGc => vec![Span::All; usize::from(HOST_OPEN) + 1],
        Scheme::MultiStream { streams } | Scheme::AutoStream { streams } => {
            if streams == 0 {
                return Err(GeometryError("streams must be >= 1"));
            }
            vec![Span::All; usize::from(streams) + 1]
        }
        Scheme::Plan { small_chips, .. } => {
            let k = group(
                small_chips,
                "small superblock chips per channel must divide it",
            )?;
            let n = usize::from(LIFETIME_CLASSES) + 1;
            let mut v = vec![Span::All; n];
            v.extend(std::iter::repeat_n(Span::Group { k, fixed: None }, n));
            v.push(Span::All);
            v
        }
    })
}

/// AutoStream's SFR table (its example: 2 MiB chunks, 10 s decay); none for other schemes.
fn autostream_sfr(scheme: Scheme, logical: u64, g: &ChipGeometry) -> Option<Sfr> {
    match scheme {
        Scheme::AutoStream { streams } => Some(Sfr::new(
            logical,
            (2u64 << 20) / u64::from(g.page_bytes),
            10.0,
            streams,
        )),
        _ => None,
    }
}

impl ParallelFtl {
    /// A fresh device: every page unmapped, every block free.
    ///
    /// # Errors
    /// [`FlashError::Config`]-like geometry errors as [`GeometryError`].
    ///
    /// # Panics
    /// Never for a validated geometry.
    pub fn new(g: ChipGeometry, scheme: Scheme) -> Result<ParallelFtl, GeometryError> {
        g.validate()?;
        if g.chips() > 128 {
            return Err(GeometryError("at most 128 chips"));
        }
        let spans = slots_of(&g, scheme)?;
        let group_k = spans
            .iter()
            .find_map(|s| match s {
                Span::Group { k, .. } => Some(*k),
                Span::All => None,
            })
            .unwrap_or(0);
        let blocks = g.chips() as usize * g.blocks_per_chip as usize;
        let logical = g.logical_pages();
        let free = (0..g.chips())
            .map(|_| (0..g.blocks_per_chip).rev().collect())
            .collect();
        let rule = Rule::of(scheme);
        Ok(ParallelFtl {
            l2p: vec![0; usize::try_from(logical).expect("validated below 2^32")],
            p2l: vec![NONE; usize::try_from(g.physical_pages()).expect("validated")],
            live: LiveBits::new(g.physical_pages()),
            bvalid: vec![0; blocks],
            bsb: vec![NONE; blocks],
            free,
            sbs: Vec::new(),
            free_ids: Vec::new(),
            victims: Victims::new(&class_caps(&g, group_k)),
            blocks: (rule == Rule::Block)
                .then(|| BlockBuckets::new(g.chips(), g.blocks_per_chip, g.pages_per_block)),
            seals: 0,
            group_k,
            gc_slot: spans.len() - 1,
            slots: spans
                .into_iter()
                .map(|span| Slot { sb: NONE, span })
                .collect(),
            next_group: 0,
            rr: 0,
            in_gc: false,
            predictor: matches!(scheme, Scheme::Plan { predict: true, .. })
                .then(|| Predictor::new(logical, CHUNK_PAGES)),
            sfr: autostream_sfr(scheme, logical, &g),
            c: ParallelCounters::default(),
            victim_hist: vec![0; 101],
            ops: Vec::new(),
            slot_writes: Vec::new(),
            tracker: None,
            reserve: RESERVE,
            background: 0,
            shortest: 0,
            free_moved: true,
            scratch: Vec::new(),
            scratch_counts: Vec::new(),
            per_block: Divisor::new(g.pages_per_block),
            per_chip: Divisor::new(g.pages_per_block * g.blocks_per_chip),
            rule,
            scheme,
            g,
        })
    }

    /// The geometry.
    #[must_use]
    pub fn geometry(&self) -> &ChipGeometry {
        &self.g
    }
    /// The scheme.
    #[must_use]
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }
    /// Logical pages.
    #[must_use]
    pub fn logical_pages(&self) -> u64 {
        self.l2p.len() as u64
    }
    /// Counters so far.
    #[must_use]
    pub fn counters(&self) -> ParallelCounters {
        self.c
    }
    /// Victims by valid ratio in percent (index 0..=100).
    #[must_use]
    pub fn victim_histogram(&self) -> &[u64] {
        &self.victim_hist
    }
    /// Host pages written per open slot (host slots, then GC).
    #[must_use]
    pub fn slot_writes(&self) -> &[u64] {
        &self.slot_writes
    }
    /// Keeps `fraction` of every chip's blocks free (at least [`RESERVE`]): GC runs before a
    /// host superblock opens while a chip has that few free blocks, as FEMU's foreground GC
    /// keeps its free lines above 5% ([`FEMU_GC_RESERVE`]). Space kept free is space garbage
    /// cannot use: with the paper's 6.25% OP, 5% leaves 1.25% for garbage and the open
    /// superblocks (docs/plan.md, Figure 1). Returns the blocks per chip kept.
    ///
    /// # Panics
    /// If `fraction` is not in [0, 0.5].
    pub fn set_gc_reserve(&mut self, fraction: f64) -> usize {
        assert!(
            (0.0..=0.5).contains(&fraction),
            "a GC reserve fraction in [0, 0.5]"
        );
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a fraction <= 0.5 of a u32 block count"
        )]
        let blocks = (fraction * f64::from(self.g.blocks_per_chip)).floor() as usize;
        self.reserve = blocks.max(RESERVE);
        assert!(
            self.reserve < self.g.blocks_per_chip as usize / 2 + RESERVE,
            "the reserve leaves room for data"
        );
        self.reserve
    }
    /// Free blocks per chip GC keeps.
    #[must_use]
    pub fn gc_reserve_blocks(&self) -> usize {
        self.reserve
    }
    /// Turns on FEMU's background GC ([`FEMU_BACKGROUND_GC`]): [`ParallelFtl::background_gc`]
    /// collects while a chip has at most `fraction` of its blocks free (0: off). Returns the
    /// blocks per chip of the threshold.
    ///
    /// # Panics
    /// If `fraction` is not in [0, 0.5].
    pub fn set_background_gc(&mut self, fraction: f64) -> usize {
        assert!(
            (0.0..=0.5).contains(&fraction),
            "a background GC fraction in [0, 0.5]"
        );
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a fraction <= 0.5 of a u32 block count"
        )]
        let blocks = (fraction * f64::from(self.g.blocks_per_chip)).floor() as usize;
        self.background = blocks;
        blocks
    }
    /// One step of FEMU's background GC, run after every request (its FTL thread's
    /// `if (should_gc(ssd)) do_gc(ssd, false)`): while the chip with the fewest free blocks
    /// has at most the background threshold free, collect that chip's best victim, unless
    /// fewer than 1/8 of its pages are invalid (FEMU's `select_victim_line` without force).
    /// Foreground GC, at the reserve ([`ParallelFtl::set_gc_reserve`]), ignores that rule.
    /// The operations are recorded as any GC's. Returns whether a victim was collected.
    ///
    /// # Errors
    /// [`FlashError::DeviceFull`] if the GC superblock cannot open.
    ///
    /// # Panics
    /// Never: a validated device has chips.
    pub fn background_gc(&mut self) -> Result<bool, FlashError> {
        if self.background == 0 {
            return Ok(false);
        }
        if self.free_moved {
            self.shortest = (0..self.g.chips())
                .min_by_key(|&c| self.free[c as usize].len())
                .expect("a device has chips");
            self.free_moved = false;
        }
        let short = self.shortest;
        debug_assert_eq!(
            Some(short),
            (0..self.g.chips()).min_by_key(|&c| self.free[c as usize].len()),
            "the cached shortest chip is the scan's"
        );
        if self.free[short as usize].len() > self.background {
            return Ok(false);
        }
        let done = self.gc_step(short, false)?;
        if done {
            self.c.background_victims += 1;
        }
        Ok(done)
    }
    /// Starts per-stream accounting (after the fill: what was written before counts as aged
    /// data).
    pub fn track_streams(&mut self) {
        self.tracker = Some(Tracker::new(self.l2p.len(), self.slots.len()));
    }
    /// Per-stream accounting (None unless [`ParallelFtl::track_streams`] ran).
    #[must_use]
    pub fn stream_stats(&self) -> Option<&StreamStats> {
        self.tracker.as_ref().map(|t| &t.stats)
    }
    /// Open slots (host and GC).
    #[must_use]
    pub fn open_slots(&self) -> usize {
        self.slots.len()
    }
    /// Predictor memory, bytes (0 without it).
    #[must_use]
    pub fn predictor_bytes(&self) -> u64 {
        self.predictor.as_ref().map_or(0, Predictor::memory_bytes)
    }
    /// Flash operations recorded since the last [`ParallelFtl::clear_ops`].
    #[must_use]
    pub fn ops(&self) -> &[FlashOp] {
        &self.ops
    }
    /// Forget the recorded operations.
    pub fn clear_ops(&mut self) {
        self.ops.clear();
    }

    #[inline]
    fn chip_of(&self, ppn: u32) -> u32 {
        self.per_chip.of(ppn)
    }

    /// `len` pages from `start` will be read or written next: bring their mapping lines
    /// towards the core so the misses overlap with the work before (a hint: it changes
    /// nothing the model sees). Pages beyond the logical space are ignored.
    #[inline]
    pub fn prefetch(&self, start: u64, len: u64) {
        // One line holds 16 entries: a long request is prefetched line by line, its first
        // few lines only (the rest follow the hardware prefetcher).
        let end = start.saturating_add(len.min(64));
        let mut l = start;
        while l < end {
            crate::prefetch::line(&self.l2p, usize::try_from(l).unwrap_or(usize::MAX));
            l = (l | 15) + 1;
        }
    }

    /// Read `len` pages from `start`: a read operation on the chip of every mapped page.
    ///
    /// # Errors
    /// Pages beyond the logical capacity.
    pub fn read(&mut self, start: u64, len: u64) -> Result<(), FlashError> {
        self.check(start, len)?;
        for l in start..start + len {
            let p = self.l2p[to_usize(l)];
            if p != 0 {
                let chip = self.chip_of(p - 1);
                self.ops.push(FlashOp {
                    chip,
                    kind: OpKind::Read,
                });
                self.c.read_pages += 1;
            }
        }
        Ok(())
    }

    fn check(&self, start: u64, len: u64) -> Result<(), FlashError> {
        let n = self.logical_pages();
        if start.saturating_add(len) > n {
            return Err(FlashError::LbaOutOfRange {
                lba: start.saturating_add(len).saturating_sub(1),
                logical: n,
            });
        }
        Ok(())
    }

    /// The host slot of a request (or of one chunk of it with the predictor).
    fn route(&mut self, start: u64, len: u64, stream: u16, now: f64) -> usize {
        let host = self.gc_slot;
        match self.scheme {
            Scheme::Baseline { .. } | Scheme::PartialGc => {
                self.rr = (self.rr + 1) % host;
                self.rr
            }
            Scheme::MultiStream { streams } => usize::from(stream % streams),
            Scheme::AutoStream { .. } => {
                let sfr = self.sfr.as_mut().expect("AutoStream keeps SFR state");
                usize::from(sfr.classify(start, len, now))
            }
            Scheme::Plan { .. } => {
                let n = usize::from(LIFETIME_CLASSES) + 1;
                let base = if len >= BIG_REQUEST_PAGES { 0 } else { n };
                let class = self
                    .predictor
                    .as_mut()
                    .and_then(|p| p.on_write(start, now))
                    .map_or(n - 1, |secs| usize::from(class_of(secs, LIFETIME_CLASSES)));
                base + class
            }
        }
    }

    /// A host write request of `len` pages from `start` on `stream` at `now` seconds (the
    /// predictor's and SFR's clock). With the predictor each chunk the request touches is
    /// classified once.
    ///
    /// # Errors
    /// Pages beyond the logical capacity; [`FlashError::DeviceFull`] when GC finds nothing.
    pub fn write(&mut self, start: u64, len: u64, stream: u16, now: f64) -> Result<(), FlashError> {
        self.check(start, len)?;
        let mut l = start;
        while l < start + len {
            let end = if self.predictor.is_some() {
                ((l / CHUNK_PAGES + 1) * CHUNK_PAGES).min(start + len)
            } else {
                start + len
            };
            // The size rule looks at the whole request, the predictor at this chunk.
            let slot = self.route(l, len, stream, now);
            for p in l..end {
                self.host_page(p, slot, stream)?;
            }
            l = end;
        }
        Ok(())
    }

    fn host_page(&mut self, lpn: u64, slot: usize, stream: u16) -> Result<(), FlashError> {
        self.c.host_pages += 1;
        if self.slot_writes.len() < self.slots.len() {
            self.slot_writes.resize(self.slots.len(), 0);
        }
        self.slot_writes[slot] += 1;
        let lpn32 = u32::try_from(lpn).expect("checked against the logical capacity");
        if let Some(t) = self.tracker.as_mut() {
            t.host(lpn32, stream, slot);
        }
        self.invalidate(lpn32);
        let ppn = self.next_page(slot)?;
        self.map(lpn32, ppn);
        Ok(())
    }

    #[inline]
    fn invalidate(&mut self, lpn: u32) -> bool {
        let old = self.l2p[lpn as usize];
        if old == 0 {
            return false;
        }
        let gb = self.per_block.of(old - 1) as usize;
        self.bvalid[gb] -= 1;
        if let Some(bb) = self.blocks.as_mut() {
            let gb32 = u32::try_from(gb).expect("fewer than 2^32 blocks");
            bb.lost_one(gb32, gb32 / self.g.blocks_per_chip, self.bvalid[gb]);
        }
        // GC tells live pages from dead ones by these bits (a table 1/32 of the reverse
        // map's, mostly in cache): no l2p line per copied page, no reverse-map line here.
        self.live.kill(old - 1);
        let sb = self.bsb[gb];
        self.sb_lost(sb, 1);
        self.l2p[lpn as usize] = 0;
        true
    }

    /// Superblock `sb` lost `n` valid pages: moves it to its new victim bucket if sealed.
    #[inline]
    fn sb_lost(&mut self, sb: u32, n: u32) {
        let s = &mut self.sbs[sb as usize];
        s.valid -= n;
        let (at, valid) = (s.at, s.valid);
        if at.sealed() && !self.victims.same_bucket(at, valid) {
            self.unseal(sb);
            self.slot_in(sb);
        }
    }

    #[inline]
    fn map(&mut self, lpn: u32, ppn: u32) {
        self.l2p[lpn as usize] = ppn + 1;
        self.p2l[ppn as usize] = lpn;
        self.live.set(ppn);
        let gb = self.per_block.of(ppn) as usize;
        self.bvalid[gb] += 1;
        let sb = self.bsb[gb] as usize;
        self.sbs[sb].valid += 1;
        debug_assert!(
            self.sbs[sb].valid <= self.sbs[sb].wp && !self.sbs[sb].at.sealed(),
            "valid within written, into an open superblock"
        );
    }

    /// TRIM `len` pages from `start` at `now` seconds.
    ///
    /// # Errors
    /// Pages beyond the logical capacity.
    ///
    /// # Panics
    /// Never: the range is checked first.
    pub fn trim(&mut self, start: u64, len: u64, now: f64) -> Result<(), FlashError> {
        self.check(start, len)?;
        let mut last_chunk = u64::MAX;
        for l in start..start + len {
            let lpn = u32::try_from(l).expect("checked");
            if self.invalidate(lpn) {
                self.c.trimmed_pages += 1;
                if let Some(p) = self.predictor.as_mut() {
                    if l / CHUNK_PAGES != last_chunk {
                        last_chunk = l / CHUNK_PAGES;
                        p.on_trim(l, now);
                    }
                }
            }
        }
        Ok(())
    }

    /// The next free page of `slot`'s open superblock (opening one, and collecting garbage,
    /// as needed); records the program.
    fn next_page(&mut self, slot: usize) -> Result<u32, FlashError> {
        let mut sb = self.slots[slot].sb;
        if sb == NONE || self.sbs[sb as usize].wp == self.sbs[sb as usize].cap {
            if sb != NONE {
                self.seal(sb);
                if slot != self.gc_slot {
                    if let Some(t) = self.tracker.as_mut() {
                        t.sealed(slot);
                    }
                }
            }
            self.slots[slot].sb = NONE;
            sb = self.open(slot)?;
        }
        let s = &mut self.sbs[sb as usize];
        let (i, pib) = (s.col as usize, s.row);
        debug_assert_eq!(
            (s.wp as usize % s.chips.len(), s.wp as usize / s.chips.len()),
            (i, pib as usize),
            "page k goes to chip k mod n, page k / n of its block"
        );
        let (chip, block) = (s.chips[i], s.blocks[i]);
        s.wp += 1;
        s.col += 1;
        if s.col as usize == s.chips.len() {
            (s.col, s.row) = (0, s.row + 1);
        }
        let ppn = (chip * self.g.blocks_per_chip + block) * self.g.pages_per_block + pib;
        debug_assert!(!self.live.is_live(ppn), "programs go to erased pages");
        self.ops.push(FlashOp {
            chip,
            kind: OpKind::Program,
        });
        Ok(ppn)
    }

    fn seal(&mut self, sb: u32) {
        let s = &self.sbs[sb as usize];
        assert_eq!(s.wp, s.cap, "only full superblocks are sealed");
        assert!(!s.at.sealed(), "sealed once");
        self.sbs[sb as usize].sealed_seq = self.seals;
        self.seals += 1;
        self.slot_in(sb);
        if let Some(bb) = self.blocks.as_mut() {
            let s = &self.sbs[sb as usize];
            for (&c, &b) in s.chips.iter().zip(&s.blocks) {
                let gb = c * self.g.blocks_per_chip + b;
                bb.insert(gb, c, self.bvalid[gb as usize]);
            }
        }
    }

    /// Puts sealed superblock `sb` in the bucket of its valid pages.
    fn slot_in(&mut self, sb: u32) {
        let s = &self.sbs[sb as usize];
        let at = self.victims.insert(sb, s.class, s.valid);
        self.sbs[sb as usize].at = at;
    }

    /// The chips of a new superblock for `slot`, and its class.
    fn chips_for(&mut self, slot: usize) -> (Vec<u32>, u32) {
        let (ch, cpc) = (self.g.channels, self.g.chips_per_channel);
        match self.slots[slot].span {
            Span::All => ((0..ch * cpc).collect(), 0),
            Span::Group { k, fixed } => {
                let g = fixed.unwrap_or_else(|| {
                    let g = self.next_group;
                    self.next_group = (g + 1) % (cpc / k);
                    g
                });
                let chips = (g * k..g * k + k)
                    .flat_map(|way| (0..ch).map(move |c| way * ch + c))
                    .collect();
                (chips, 1 + g)
            }
        }
    }

    /// Open a superblock for `slot`: collect garbage until every chip has a spare block beyond
    /// the reserve (GC itself may dip into the reserve), then take one block on each chip of
    /// the slot's set.
    fn open(&mut self, slot: usize) -> Result<u32, FlashError> {
        let (chips, class) = self.chips_for(slot);
        let need = if self.in_gc { 0 } else { self.reserve };
        let mut rounds = 0usize;
        // The GC superblock spans every chip, so the reserve must hold on every chip, not only
        // on this superblock's.
        let all = self.g.chips();
        // Always the chip with the fewest free blocks, so no chip runs dry while GC serves
        // another.
        while let Some(short) = (0..all)
            .min_by_key(|&c| self.free[c as usize].len())
            .filter(|&c| self.free[c as usize].len() <= need)
        {
            if self.in_gc {
                return Err(FlashError::DeviceFull);
            }
            rounds += 1;
            if rounds > self.sbs.len() + self.bvalid.len() || !self.gc_for(short)? {
                // Nothing reclaimable on that chip now (its garbage sits in open superblocks):
                // dip into the reserve rather than stop, while it lasts.
                if self.free.iter().any(Vec::is_empty) {
                    return Err(FlashError::DeviceFull);
                }
                self.c.reserve_dips += 1;
                break;
            }
        }
        let blocks: Vec<u32> = chips
            .iter()
            .map(|&c| self.free[c as usize].pop().expect("checked above"))
            .collect();
        self.free_moved = true;
        let id = self.free_ids.pop().unwrap_or_else(|| {
            self.sbs.push(Sb::default());
            u32::try_from(self.sbs.len() - 1).expect("fewer than 2^32 superblocks")
        });
        let mut mask = 0u128;
        for (&c, &b) in chips.iter().zip(&blocks) {
            mask |= 1 << c;
            let gb = (c * self.g.blocks_per_chip + b) as usize;
            assert_eq!(self.bsb[gb], NONE, "a free block belongs to no superblock");
            assert_eq!(self.bvalid[gb], 0, "a free block holds no valid page");
            self.bsb[gb] = id;
        }
        let n = u32::try_from(chips.len()).expect("at most 128 chips");
        self.sbs[id as usize] = Sb {
            cap: n * self.g.pages_per_block,
            live_blocks: n,
            chips,
            blocks,
            mask,
            wp: 0,
            col: 0,
            row: 0,
            valid: 0,
            class,
            at: Slotted::OUT,
            sealed_seq: 0,
        };
        self.slots[slot].sb = id;
        Ok(id)
    }

    /// One foreground GC step that frees a block on `chip`. Returns false when nothing
    /// qualifies.
    pub(super) fn gc_for(&mut self, chip: u32) -> Result<bool, FlashError> {
        self.gc_step(chip, true)
    }

    /// One GC step on `chip`; without `force` a victim with fewer than 1/8 of its pages
    /// invalid is left alone (FEMU's background rule).
    fn gc_step(&mut self, chip: u32, force: bool) -> Result<bool, FlashError> {
        self.in_gc = true;
        let r = if self.rule == Rule::Block {
            self.collect_block_on(chip, force)
        } else {
            self.collect_sb_on(chip, force)
        };
        self.in_gc = false;
        r
    }

    fn better(&self, a: &Sb, b: &Sb) -> bool {
        match self.rule {
            Rule::Ratio => {
                u64::from(a.valid) * u64::from(b.cap) < u64::from(b.valid) * u64::from(a.cap)
            }
            _ => a.valid < b.valid,
        }
    }

    fn note_victim(&mut self, valid: u32, cap: u32) {
        let pct = (u64::from(valid) * 100 + u64::from(cap) / 2) / u64::from(cap);
        self.victim_hist[usize::try_from(pct).expect("<= 100")] += 1;
        self.c.victims += 1;
    }

    /// The best sealed superblock with a block on `chip`: the minimum of each class holding
    /// one (every chip, and the chip's group), compared by the rule.
    fn victim_on(&mut self, chip: u32) -> Option<u32> {
        let group = (self.group_k > 0).then(|| 1 + chip / self.g.channels / self.group_k);
        let mut best: Option<u32> = None;
        for class in std::iter::once(0).chain(group) {
            let Some(&m) = self.victims.lowest(class).iter().min_by_key(|&&id| {
                let s = &self.sbs[id as usize];
                (s.valid, s.sealed_seq)
            }) else {
                continue;
            };
            let s = &self.sbs[m as usize];
            debug_assert!(s.mask & (1u128 << chip) != 0, "the class holds the chip");
            let wins =
                |b: &Sb| self.better(s, b) || (!self.better(b, s) && s.sealed_seq < b.sealed_seq);
            if best.is_none_or(|b| wins(&self.sbs[b as usize])) {
                best = Some(m);
            }
        }
        best
    }

    /// Collect the best sealed superblock with a block on `chip`.
    fn collect_sb_on(&mut self, chip: u32, force: bool) -> Result<bool, FlashError> {
        let Some(v) = self.victim_on(chip) else {
            return Ok(false);
        };
        let (valid, cap) = (self.sbs[v as usize].valid, self.sbs[v as usize].cap);
        if valid == cap || (!force && cap - valid < cap / 8) {
            return Ok(false);
        }
        self.note_victim(valid, cap);
        self.unseal(v);
        let blocks: Vec<(u32, u32)> = {
            let s = &self.sbs[v as usize];
            s.chips
                .iter()
                .copied()
                .zip(s.blocks.iter().copied())
                .collect()
        };
        // Every live page of the victim first (live bits, reverse entries: independent lines
        // whose misses overlap), then the moves, block by block as before, asking for the
        // forward entry of the page GC_AHEAD pages on across the whole victim (a block holds a
        // dozen live pages: too few to overlap their misses within it).
        let mut lpns = std::mem::take(&mut self.scratch);
        let mut counts = std::mem::take(&mut self.scratch_counts);
        lpns.clear();
        counts.clear();
        for &(c, b) in &blocks {
            let before = lpns.len();
            self.live_lpns(c, b, &mut lpns);
            counts.push(lpns.len() - before);
        }
        let mut r = Ok(());
        let mut at = 0;
        for (&(c, b), &n) in blocks.iter().zip(&counts) {
            r = self.move_block(c, b, &lpns, at..at + n);
            if r.is_err() {
                break;
            }
            at += n;
        }
        (self.scratch, self.scratch_counts) = (lpns, counts);
        r.map(|()| true)
    }

    fn unseal(&mut self, id: u32) {
        let at = self.sbs[id as usize].at;
        assert!(at.sealed(), "only sealed superblocks are unsealed");
        if let Some((moved, place)) = self.victims.remove(id, at) {
            self.sbs[moved as usize].at = place;
        }
        self.sbs[id as usize].at = Slotted::OUT;
    }

    /// Partial GC: the block with least valid pages on `chip` among sealed superblocks.
    fn collect_block_on(&mut self, chip: u32, force: bool) -> Result<bool, FlashError> {
        let bpc = self.g.blocks_per_chip;
        let best = self
            .blocks
            .as_ref()
            .expect("Partial GC keeps block buckets")
            .best(chip)
            .map(|(gb, valid)| (gb - chip * bpc, valid));
        debug_assert_eq!(best, self.scan_block_on(chip), "buckets agree with a scan");
        let Some((b, valid)) = best else {
            return Ok(false);
        };
        let ppb = self.g.pages_per_block;
        if valid == ppb || (!force && ppb - valid < ppb / 8) {
            return Ok(false);
        }
        self.note_victim(valid, self.g.pages_per_block);
        let gb = chip * bpc + b;
        self.blocks
            .as_mut()
            .expect("Partial GC keeps block buckets")
            .remove(gb, chip, valid);
        self.relocate_block(chip, b)?;
        Ok(true)
    }

    /// The block with least valid pages on `chip` among sealed superblocks, by a scan of the
    /// chip's blocks (the reference the buckets are checked against).
    fn scan_block_on(&self, chip: u32) -> Option<(u32, u32)> {
        let bpc = self.g.blocks_per_chip;
        let mut best: Option<(u32, u32)> = None;
        for b in 0..bpc {
            let gb = (chip * bpc + b) as usize;
            let sb = self.bsb[gb];
            if sb == NONE || !self.sbs[sb as usize].at.sealed() {
                continue;
            }
            if best.is_none_or(|(_, v)| self.bvalid[gb] < v) {
                best = Some((b, self.bvalid[gb]));
            }
        }
        best
    }

    /// Copy the valid pages of block `b` on `chip` to the GC superblock and erase the block;
    /// when it was its superblock's last block, free the superblock (Partial GC's victim).
    fn relocate_block(&mut self, chip: u32, b: u32) -> Result<(), FlashError> {
        let mut lpns = std::mem::take(&mut self.scratch);
        lpns.clear();
        self.live_lpns(chip, b, &mut lpns);
        let n = lpns.len();
        let r = self.move_block(chip, b, &lpns, 0..n);
        self.scratch = lpns;
        r
    }

    /// The LPNs of block `b` on `chip`'s live pages, in page order, appended to `out`.
    ///
    /// A page is live iff its live bit is set (invalidation clears it): only the block's bits
    /// and its live pages' reverse entries are read.
    fn live_lpns(&self, chip: u32, b: u32, out: &mut Vec<u32>) {
        let ppb = self.g.pages_per_block;
        let gb = chip * self.g.blocks_per_chip + b;
        let first = out.len();
        self.live.pages(gb * ppb, ppb, out);
        assert_eq!(
            out.len() - first,
            self.bvalid[gb as usize] as usize,
            "every valid page of block {gb} found"
        );
        for l in &mut out[first..] {
            let ppn = *l;
            *l = self.p2l[ppn as usize];
            debug_assert_eq!(self.l2p[*l as usize], ppn + 1, "live page {ppn} is mapped");
        }
    }

    /// Move the pages `lpns[range]` (block `b` on `chip`'s live pages) to the GC superblock,
    /// then erase the block; when it was its superblock's last block, free the superblock.
    ///
    /// The hot path of a run (GC copies outnumber host writes several times): the forward
    /// entry of the page [`GC_AHEAD`] on in `lpns` is asked for (into L2) while this one
    /// moves; the block's and superblock's counts drop once, not per page.
    fn move_block(
        &mut self,
        chip: u32,
        b: u32,
        lpns: &[u32],
        range: std::ops::Range<usize>,
    ) -> Result<(), FlashError> {
        let ppb = self.g.pages_per_block;
        let gb = chip * self.g.blocks_per_chip + b;
        let base = gb * ppb;
        let live = self.bvalid[gb as usize];
        assert_eq!(range.len(), live as usize, "every valid page moves");
        if range.start == 0 {
            for &l in lpns.iter().take(GC_AHEAD) {
                crate::prefetch::line_l2(&self.l2p, l as usize);
            }
        }
        for k in range {
            // Into L2, as the FTL model's GC loop does (more misses in flight than L1 holds).
            if let Some(&next) = lpns.get(k + GC_AHEAD) {
                crate::prefetch::line_l2(&self.l2p, next as usize);
            }
            let lpn = lpns[k];
            self.ops.push(FlashOp {
                chip,
                kind: OpKind::Read,
            });
            if let Some(t) = self.tracker.as_mut() {
                t.moved(lpn);
            }
            let new = self.next_page(self.gc_slot)?;
            self.map(lpn, new);
        }
        self.bvalid[gb as usize] -= live;
        let src = self.bsb[gb as usize];
        self.sb_lost(src, live);
        self.c.gc_pages += u64::from(live);
        assert_eq!(self.bvalid[gb as usize], 0, "every valid page moved");
        self.live.clear(base, ppb);
        self.ops.push(FlashOp {
            chip,
            kind: OpKind::Erase,
        });
        self.c.erased_blocks += 1;
        let sb = self.bsb[gb as usize];
        self.bsb[gb as usize] = NONE;
        self.free[chip as usize].push(b);
        self.free_moved = true;
        let s = &mut self.sbs[sb as usize];
        s.live_blocks -= 1;
        if s.live_blocks == 0 {
            assert_eq!(s.valid, 0, "an erased superblock holds nothing");
            if s.at.sealed() {
                self.unseal(sb);
            }
            self.free_ids.push(sb);
        }
        Ok(())
    }

    /// Fills logical pages `0..pages` sequentially in requests of `req_pages`: the aged SSD
    /// (the paper fills it "using valid data to certain levels"; `pages` = the level x the
    /// logical pages, the rest stays unmapped and its blocks count as free space).
    ///
    /// # Errors
    /// As [`ParallelFtl::write`].
    ///
    /// # Panics
    /// If `pages` exceeds the logical space or `req_pages` is 0.
    pub fn fill(&mut self, req_pages: u64, pages: u64) -> Result<(), FlashError> {
        let n = self.logical_pages();
        assert!(
            pages <= n && req_pages > 0,
            "a fill within the logical space"
        );
        let mut l = 0;
        while l < pages {
            let len = req_pages.min(pages - l);
            self.write(l, len, 0, 0.0)?;
            self.ops.clear();
            l += len;
        }
        Ok(())
    }

    /// Mapped (valid) logical pages.
    #[must_use]
    pub fn valid_pages(&self) -> u64 {
        self.l2p.iter().filter(|&&p| p != 0).count() as u64
    }

    /// Checks every invariant the model relies on (O(physical pages)): the mapping is a
    /// bijection onto valid pages, and block and superblock valid counts match it.
    ///
    /// # Panics
    /// On any inconsistency.
    pub fn check_invariants(&self) {
        let mut bvalid = vec![0u32; self.bvalid.len()];
        for (lpn, &p) in self.l2p.iter().enumerate() {
            if p != 0 {
                assert_eq!(self.p2l[(p - 1) as usize] as usize, lpn, "reverse map");
                bvalid[((p - 1) / self.g.pages_per_block) as usize] += 1;
            }
        }
        assert_eq!(bvalid, self.bvalid, "block valid counts");
        let mut sbvalid = vec![0u32; self.sbs.len()];
        for (gb, &sb) in self.bsb.iter().enumerate() {
            if sb != NONE {
                sbvalid[sb as usize] += bvalid[gb];
            } else {
                assert_eq!(bvalid[gb], 0, "a free block holds nothing");
            }
        }
        let free_ids: std::collections::HashSet<_> = self.free_ids.iter().collect();
        for (id, s) in self.sbs.iter().enumerate() {
            if !free_ids.contains(&u32::try_from(id).expect("fits")) {
                assert_eq!(s.valid, sbvalid[id], "superblock {id} valid count");
            }
        }
        let sealed = self.sbs.iter().filter(|s| s.at.sealed()).count();
        assert_eq!(
            sealed,
            self.victims.len(),
            "every sealed superblock in the buckets"
        );
        let used = self.bsb.iter().filter(|&&s| s != NONE).count();
        let free: usize = self.free.iter().map(Vec::len).sum();
        assert_eq!(used + free, self.bsb.len(), "every block used or free");
        let mapped = self.l2p.iter().filter(|&&p| p != 0).count() as u64;
        assert!(mapped <= self.logical_pages(), "mapped within capacity");
        // GC takes a live bit for a live page without checking the forward map.
        for &p in self.l2p.iter().filter(|&&p| p != 0) {
            assert!(self.live.is_live(p - 1), "mapped page {} is live", p - 1);
        }
        assert_eq!(self.live.count(), mapped, "live bits for mapped pages only");
    }

    /// Checks that the bucketed victim choice finds, for every chip, a superblock as good as a
    /// scan of every sealed superblock would (same valid pages, or same ratio for PLAN).
    ///
    /// # Panics
    /// On a mismatch.
    pub fn check_victims(&mut self) {
        for chip in 0..self.g.chips() {
            let bit = 1u128 << chip;
            let scan = (0..self.sbs.len())
                .filter(|&i| self.sbs[i].at.sealed() && self.sbs[i].mask & bit != 0)
                .reduce(|b, i| {
                    if self.better(&self.sbs[i], &self.sbs[b]) {
                        i
                    } else {
                        b
                    }
                });
            let got = self.victim_on(chip);
            assert_eq!(
                scan.is_some(),
                got.is_some(),
                "chip {chip}: a victim iff one is sealed"
            );
            if let (Some(a), Some(b)) = (scan, got) {
                let (a, b) = (&self.sbs[a], &self.sbs[b as usize]);
                assert!(
                    !self.better(a, b),
                    "chip {chip}: the buckets miss a better victim"
                );
            }
        }
    }

    /// Mapped logical pages.
    #[must_use]
    pub fn mapped_pages(&self) -> u64 {
        self.l2p.iter().filter(|&&p| p != 0).count() as u64
    }
}

fn to_usize(x: u64) -> usize {
    usize::try_from(x).expect("page numbers fit the address space")
}

#[cfg(test)]
mod divisor_tests {
    use super::Divisor;

    #[test]
    fn divisor_matches_division_for_powers_of_two_and_others() {
        for d in [1u32, 2, 3, 16, 24, 1000, 1024, 16 * 1024] {
            let div = Divisor::new(d);
            for x in [0u32, 1, d - 1, d, d + 1, 12_345, u32::MAX - 1, u32::MAX] {
                assert_eq!(div.of(x), x / d, "{x} / {d}");
            }
        }
    }
}
