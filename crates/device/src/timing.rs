//! The one timing model of a simulated SSD: how long the flash chips are busy with each host
//! request, and when the request completes. Used by the simulated target of `nowa ssdiq`
//! (virtual time, [`crate::SimDevice::timed_queue`]), by [`crate::Paced`], which makes the
//! engine's simulated SSD I/O-bound in real time (`nowa ycsb`, `nowa table1`), and by the
//! chip-addressed FTL of `nowa plan` ([`Chips`] directly).
//!
//! The core is [`Chips`]: per flash chip (LUN) the time it is next free, as FEMU's bbssd
//! (`next_lun_avail_time`): a read, program or erase on a chip starts when the chip is free and
//! the command has arrived, and occupies the chip for its latency (FEMU: 40 us / 200 us / 2 ms;
//! MQSim: 75 us / 750 us / 3.8 ms). An optional channel transfer time per page occupies the
//! chip's channel (before a program, after a read). So reads wait behind the programs, erases
//! and GC copies queued on their chip, and host I/O competes with GC for the same chips.
//!
//! [`Timing`] serves host requests on top of it:
//! - requests are served first come first served; the flash pages a request programs (host
//!   pages plus every GC copy it triggered) go round-robin over the chips (the striping of a
//!   superblock), its reads to chips spread by a hash, each erased unit to one chip in turn (a
//!   1 MiB unit is one FEMU block of 256 x 4 KiB pages);
//! - it completes a fixed controller latency (`read_base_us` / `write_base_us`) after its last
//!   chip operation; that latency does not occupy the media;
//! - optionally at most `queue_depth` requests are accepted at once; a later one waits for the
//!   earliest to complete.
//!
//! Without [`TimingModel::chips`] the device is one chip whose page times come from the
//! bandwidths (`4 KiB / media_write_mb_s` per programmed page, `erase_us` per erased unit): a
//! single FIFO media server, so steady host write bandwidth = media bandwidth / WAF. With
//! chips, sequential write bandwidth = channels x chips x page size / program time and random
//! read IOPS at queue depth 1 = 1 / read latency (tests below). Not modelled: planes,
//! program/erase suspension, a write cache.
//!
//! Time is in picoseconds ([`Ps`]): a `u64` holds 213 days.

use crate::error::{DeviceError, Result};
use crate::BLOCK_SIZE_U64;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Picoseconds of (virtual or paced) time.
pub type Ps = u64;

/// Picoseconds per microsecond.
pub const PS_PER_US: f64 = 1e6;

/// Parameters of the timing model (see the module documentation). Field names are those of
/// `nowa ssdiq`'s JSON results.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimingModel {
    /// Media program bandwidth in MB/s (10^6 bytes/s).
    pub media_write_mb_s: f64,
    /// Media read bandwidth in MB/s.
    pub read_mb_s: f64,
    /// Fixed controller latency of a read, microseconds.
    pub read_base_us: f64,
    /// Fixed controller latency of a write, microseconds.
    pub write_base_us: f64,
    /// Media busy time per erased unit, microseconds (0: erases are free).
    #[serde(default)]
    pub erase_us: f64,
    /// Requests the device accepts at once (None: unbounded; the host's queue depth rules).
    #[serde(default)]
    pub queue_depth: Option<u32>,
    /// Flash chips with their own latencies (None: one chip timed by the bandwidths above).
    #[serde(default)]
    pub chips: Option<ChipParams>,
}

impl Default for TimingModel {
    fn default() -> Self {
        TimingModel {
            media_write_mb_s: 2000.0,
            read_mb_s: 3200.0,
            read_base_us: 70.0,
            write_base_us: 12.0,
            erase_us: 0.0,
            queue_depth: None,
            chips: None,
        }
    }
}

impl TimingModel {
    /// Bandwidths only (no controller latency): the model [`crate::Paced`] uses.
    #[must_use]
    pub fn bandwidth_only(write_bytes_per_sec: f64, read_bytes_per_sec: f64) -> Self {
        TimingModel {
            media_write_mb_s: write_bytes_per_sec / 1e6,
            read_mb_s: read_bytes_per_sec / 1e6,
            read_base_us: 0.0,
            write_base_us: 0.0,
            erase_us: 0.0,
            queue_depth: None,
            chips: None,
        }
    }

    /// A chip-level model: `chips` with no controller latency.
    #[must_use]
    pub fn with_chips(chips: ChipParams) -> Self {
        TimingModel {
            chips: Some(chips),
            read_base_us: 0.0,
            write_base_us: 0.0,
            ..TimingModel::default()
        }
    }

    /// One line naming what times the media: the chip preset, or the bandwidths.
    #[must_use]
    pub fn describe(&self) -> String {
        match self.chips {
            Some(c) => format!(
                "{} channels x {} chips of {} KiB pages, read {} us / program {} us / erase {} us \
                 / transfer {:.1} us (sequential writes {:.0} MB/s)",
                c.channels,
                c.chips_per_channel,
                c.page_bytes / 1024,
                c.read_us,
                c.program_us,
                c.erase_us,
                c.xfer_us,
                c.seq_write_bytes_per_sec() / 1e6
            ),
            None => format!(
                "media writes {} MB/s, reads {} MB/s",
                self.media_write_mb_s, self.read_mb_s
            ),
        }
    }

    /// The chips this model times: its own, or one chip whose page times come from the
    /// bandwidths (4 KiB pages; an erase of a unit takes `erase_us`).
    #[must_use]
    pub fn chip_params(&self) -> ChipParams {
        self.chips.unwrap_or(ChipParams {
            channels: 1,
            chips_per_channel: 1,
            page_bytes: 4096,
            read_us: 4096.0 / self.read_mb_s,
            program_us: 4096.0 / self.media_write_mb_s,
            erase_us: self.erase_us,
            xfer_us: 0.0,
        })
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`DeviceError::SimConfig`] for a bandwidth that is not positive and finite, a negative
    /// or non-finite latency, or a queue depth of 0.
    pub fn validate(&self) -> Result<()> {
        let bw = |v: f64| v.is_finite() && v > 0.0;
        let lat = |v: f64| v.is_finite() && v >= 0.0;
        if !bw(self.media_write_mb_s) || !bw(self.read_mb_s) {
            return Err(DeviceError::SimConfig {
                what: "timing model: bandwidths must be finite and > 0",
            });
        }
        if !lat(self.read_base_us) || !lat(self.write_base_us) || !lat(self.erase_us) {
            return Err(DeviceError::SimConfig {
                what: "timing model: latencies must be finite and >= 0",
            });
        }
        if self.queue_depth == Some(0) {
            return Err(DeviceError::SimConfig {
                what: "timing model: queue depth must be >= 1",
            });
        }
        self.chip_params().validate()
    }
}

/// Flash chip (LUN) parameters of the chip-level timing model.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChipParams {
    /// Channels.
    pub channels: u32,
    /// Chips (LUNs) per channel.
    pub chips_per_channel: u32,
    /// Bytes per flash page (the unit of a read or program).
    pub page_bytes: u32,
    /// Page read latency, microseconds.
    pub read_us: f64,
    /// Page program latency, microseconds.
    pub program_us: f64,
    /// Block erase latency, microseconds.
    pub erase_us: f64,
    /// Channel transfer time of one page, microseconds (0: not modelled, FEMU's default).
    pub xfer_us: f64,
}

impl ChipParams {
    /// FEMU bbssd's latencies (`NAND_READ/PROG/ERASE_LATENCY` = 40 us / 200 us / 2 ms, channel
    /// transfer off) on the given geometry.
    #[must_use]
    pub fn femu(channels: u32, chips_per_channel: u32, page_bytes: u32) -> Self {
        ChipParams {
            channels,
            chips_per_channel,
            page_bytes,
            read_us: 40.0,
            program_us: 200.0,
            erase_us: 2000.0,
            xfer_us: 0.0,
        }
    }

    /// MQSim's defaults (`src/exec/Device_Parameter_Set.cpp`: read 75 us, program 750 us, erase
    /// 3.8 ms, ONFI NV-DDR2 at 333 MT/s x 1 byte, so a page crosses its channel in
    /// `page_bytes / 333` us).
    #[must_use]
    pub fn mqsim(channels: u32, chips_per_channel: u32, page_bytes: u32) -> Self {
        ChipParams {
            channels,
            chips_per_channel,
            page_bytes,
            read_us: 75.0,
            program_us: 750.0,
            erase_us: 3800.0,
            xfer_us: f64::from(page_bytes) / 333.0,
        }
    }

    /// Chips in all.
    #[must_use]
    pub fn chips(&self) -> u32 {
        self.channels * self.chips_per_channel
    }

    /// Closed form of the sequential write bandwidth, bytes/s: every chip programs a page per
    /// program time (channels x chips x page size / program time), or the channels' transfer
    /// bound when that is lower.
    #[must_use]
    pub fn seq_write_bytes_per_sec(&self) -> f64 {
        let page = f64::from(self.page_bytes);
        let chips = f64::from(self.chips()) * page / (self.program_us * 1e-6);
        if self.xfer_us > 0.0 {
            chips.min(f64::from(self.channels) * page / (self.xfer_us * 1e-6))
        } else {
            chips
        }
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`DeviceError::SimConfig`] for zero channels, chips or page size, a non-positive
    /// program or read time, or a negative erase or transfer time.
    pub fn validate(&self) -> Result<()> {
        if self.channels == 0 || self.chips_per_channel == 0 || self.page_bytes == 0 {
            return Err(DeviceError::SimConfig {
                what: "chip timing: channels, chips per channel and page size must be >= 1",
            });
        }
        let pos = |v: f64| v.is_finite() && v > 0.0;
        let nonneg = |v: f64| v.is_finite() && v >= 0.0;
        if !pos(self.read_us) || !pos(self.program_us) || !nonneg(self.erase_us) {
            return Err(DeviceError::SimConfig {
                what: "chip timing: read and program times must be > 0, erase >= 0",
            });
        }
        if !nonneg(self.xfer_us) {
            return Err(DeviceError::SimConfig {
                what: "chip timing: channel transfer time must be >= 0",
            });
        }
        Ok(())
    }
}

/// A flash operation on one chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChipOp {
    /// Read a page (then transfer it out on the channel).
    Read,
    /// Program a page (transferred in on the channel first).
    Program,
    /// Erase a block.
    Erase,
}

/// Per-chip busy time (FEMU's `next_lun_avail_time`) and per-channel transfer time: the core
/// of the one timing model (module documentation).
#[derive(Debug, Clone)]
pub struct Chips {
    params: ChipParams,
    read: Ps,
    program: Ps,
    erase: Ps,
    xfer: Ps,
    /// When each chip is free again.
    chip_free: Vec<Ps>,
    /// When each channel is free again.
    chan_free: Vec<Ps>,
    /// Sum of every chip's busy time.
    busy: Ps,
}

impl Chips {
    /// Idle chips at time 0.
    ///
    /// # Errors
    /// The parameters are invalid ([`ChipParams::validate`]).
    ///
    /// # Panics
    /// Never for validated parameters.
    pub fn new(params: ChipParams) -> Result<Chips> {
        params.validate()?;
        assert!(
            params.chips() >= params.channels,
            "every channel has a chip"
        );
        Ok(Chips {
            read: us_to_ps(params.read_us),
            program: us_to_ps(params.program_us),
            erase: us_to_ps(params.erase_us),
            xfer: us_to_ps(params.xfer_us),
            chip_free: vec![0; params.chips() as usize],
            chan_free: vec![0; params.channels as usize],
            busy: 0,
            params,
        })
    }

    /// The parameters.
    #[must_use]
    pub fn params(&self) -> &ChipParams {
        &self.params
    }

    /// Chips in all.
    #[must_use]
    pub fn count(&self) -> u32 {
        self.params.chips()
    }

    /// Latency of one operation on its chip (without queueing or transfer).
    #[must_use]
    pub fn latency(&self, op: ChipOp) -> Ps {
        match op {
            ChipOp::Read => self.read,
            ChipOp::Program => self.program,
            ChipOp::Erase => self.erase,
        }
    }

    /// `n` operations `op` on `chip` (chip `c` is on channel `c % channels`: consecutive chips
    /// on consecutive channels), the commands arriving at `at`; returns when the last is done.
    ///
    /// # Panics
    /// If `chip` is out of range.
    #[inline]
    pub fn ops(&mut self, chip: u32, at: Ps, op: ChipOp, n: u64) -> Ps {
        let c = chip as usize;
        assert!(c < self.chip_free.len(), "chip {chip} out of range");
        if n == 0 {
            return at;
        }
        let lat = self.latency(op);
        self.busy += lat * n;
        if self.xfer == 0 || op == ChipOp::Erase {
            let start = at.max(self.chip_free[c]);
            self.chip_free[c] = start + lat * n;
            assert!(
                self.chip_free[c] >= at,
                "an operation ends after it arrives"
            );
            return self.chip_free[c];
        }
        let ch = c % self.chan_free.len();
        for _ in 0..n {
            self.one_with_transfer(c, ch, at, op, lat);
        }
        assert!(
            self.chip_free[c] >= at + lat && self.chan_free[ch] >= at + self.xfer,
            "chip and channel are busy after a transfer"
        );
        match op {
            ChipOp::Read => self.chan_free[ch],
            _ => self.chip_free[c],
        }
    }

    /// One read or program with its channel transfer (FEMU's `ssd_advance_status` order).
    fn one_with_transfer(&mut self, c: usize, ch: usize, at: Ps, op: ChipOp, lat: Ps) {
        if op == ChipOp::Read {
            let start = at.max(self.chip_free[c]);
            self.chip_free[c] = start + lat;
            let x = self.chip_free[c].max(self.chan_free[ch]);
            self.chan_free[ch] = x + self.xfer;
        } else {
            let x = at.max(self.chan_free[ch]);
            self.chan_free[ch] = x + self.xfer;
            let start = self.chan_free[ch].max(self.chip_free[c]);
            self.chip_free[c] = start + lat;
        }
    }

    /// When `chip` is free again.
    #[must_use]
    pub fn free_at(&self, chip: u32) -> Ps {
        self.chip_free[chip as usize]
    }

    /// When every chip and channel is free again.
    #[must_use]
    pub fn all_free_at(&self) -> Ps {
        let chips = self.chip_free.iter().copied().max().unwrap_or(0);
        chips.max(self.chan_free.iter().copied().max().unwrap_or(0))
    }

    /// Sum of every chip's busy time so far.
    #[must_use]
    pub fn busy_sum(&self) -> Ps {
        self.busy
    }

    /// Back to time 0, every chip idle.
    pub fn restart(&mut self) {
        self.chip_free.fill(0);
        self.chan_free.fill(0);
        self.busy = 0;
    }
}

/// The media work one host request caused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// A write (else a read, trim or flush): selects the controller latency.
    pub write: bool,
    /// 4 KiB pages programmed (host pages + GC copies).
    pub programmed_pages: u64,
    /// 4 KiB pages read.
    pub read_pages: u64,
    /// Units (superblocks / zones) erased.
    pub erased_units: u64,
}

impl Work {
    /// The media work between two counter snapshots of a device: media bytes written (host
    /// writes plus the device's GC copies; host bytes when the device cannot tell) and bytes
    /// read, in whole 4 KiB pages.
    #[must_use]
    pub fn between(from: &crate::DeviceCounters, to: &crate::DeviceCounters) -> Work {
        let media =
            |c: &crate::DeviceCounters| c.media_bytes_written.unwrap_or(c.host_bytes_written);
        Work {
            write: true,
            programmed_pages: media(to).saturating_sub(media(from)) / crate::BLOCK_SIZE_U64,
            read_pages: to.host_bytes_read.saturating_sub(from.host_bytes_read)
                / crate::BLOCK_SIZE_U64,
            erased_units: 0,
        }
    }
}

/// Seconds the media of `model` is busy for the I/O between two counter snapshots: the
/// device-bound duration of a run, as [`crate::Paced`] would pace it.
///
/// # Errors
/// The model is invalid ([`TimingModel::validate`]).
pub fn busy_secs_between(
    model: &TimingModel,
    from: &crate::DeviceCounters,
    to: &crate::DeviceCounters,
) -> Result<f64> {
    let t = Timing::new(*model)?;
    // The work spread evenly over the chips, as `Timing::busy_total` counts it.
    let busy = t.busy(&Work::between(from, to)) / u64::from(t.chips.count());
    #[expect(
        clippy::cast_precision_loss,
        reason = "picoseconds to seconds: 52 bits are ~52 days of picoseconds, far beyond a run"
    )]
    Ok(busy as f64 / 1e12)
}

/// Converts microseconds to picoseconds (truncating; inputs are validated non-negative).
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "validated finite and >= 0; sub-picosecond parts are dropped"
)]
fn us_to_ps(us: f64) -> Ps {
    (us * PS_PER_US) as Ps
}

/// The timing model with its clock: the chips and the requests they accepted.
#[derive(Debug, Clone)]
pub struct Timing {
    model: TimingModel,
    chips: Chips,
    read_base: Ps,
    write_base: Ps,
    /// Next chip a programmed page goes to (round-robin striping).
    write_cursor: u32,
    /// Next chip a unit erase goes to.
    erase_cursor: u32,
    /// Reads served so far (their chips are spread by a hash of this count).
    reads: u64,
    /// Time now: the latest arrival or explicit advance seen.
    clock: Ps,
    /// Latest completion time handed out.
    last_done: Ps,
    /// Completion times of accepted requests (only with a device queue depth).
    outstanding: BinaryHeap<Reverse<Ps>>,
}

impl Timing {
    /// A model at time 0 with idle chips.
    ///
    /// # Errors
    /// The parameters are invalid ([`TimingModel::validate`]).
    pub fn new(model: TimingModel) -> Result<Timing> {
        model.validate()?;
        Ok(Timing {
            chips: Chips::new(model.chip_params())?,
            read_base: us_to_ps(model.read_base_us),
            write_base: us_to_ps(model.write_base_us),
            model,
            write_cursor: 0,
            erase_cursor: 0,
            reads: 0,
            clock: 0,
            last_done: 0,
            outstanding: BinaryHeap::new(),
        })
    }

    /// The parameters.
    #[must_use]
    pub fn model(&self) -> &TimingModel {
        &self.model
    }

    /// The chips (for callers that know which chip each operation goes to).
    pub fn chips_mut(&mut self) -> &mut Chips {
        &mut self.chips
    }

    /// Flash pages holding `pages` 4 KiB pages (rounded up).
    fn flash_pages(&self, pages: u64) -> u64 {
        (pages * BLOCK_SIZE_U64).div_ceil(u64::from(self.chips.params().page_bytes))
    }

    /// Chip time of programming `pages` 4 KiB pages on one chip.
    #[must_use]
    pub fn program_busy(&self, pages: u64) -> Ps {
        self.chips.latency(ChipOp::Program) * self.flash_pages(pages)
    }

    /// Chip time of reading `pages` 4 KiB pages on one chip.
    #[must_use]
    pub fn read_busy(&self, pages: u64) -> Ps {
        self.chips.latency(ChipOp::Read) * self.flash_pages(pages)
    }

    /// Chip time of erasing `units` units (one block erase each).
    #[must_use]
    pub fn erase_busy(&self, units: u64) -> Ps {
        self.chips.latency(ChipOp::Erase) * units
    }

    /// Fixed controller latency of a host request (does not occupy the media).
    #[must_use]
    pub fn request_latency(&self, write: bool) -> Ps {
        if write {
            self.write_base
        } else {
            self.read_base
        }
    }

    /// Chip time of one request's work on one chip (the device-bound time of a one-chip model).
    #[must_use]
    pub fn busy(&self, w: &Work) -> Ps {
        self.program_busy(w.programmed_pages)
            + self.read_busy(w.read_pages)
            + self.erase_busy(w.erased_units)
    }

    /// Time now.
    #[must_use]
    pub fn now(&self) -> Ps {
        self.clock
    }

    /// When every chip is free again.
    #[must_use]
    pub fn busy_until(&self) -> Ps {
        self.chips.all_free_at()
    }

    /// Chip busy time since the model was created (or [`Timing::restart`]ed), averaged over
    /// the chips: the device-bound duration of the work when it is spread evenly.
    #[must_use]
    pub fn busy_total(&self) -> Ps {
        self.chips.busy_sum() / u64::from(self.chips.count())
    }

    /// When everything served so far has completed (and the clock has reached): the start
    /// of a new, idle phase.
    #[must_use]
    pub fn idle_at(&self) -> Ps {
        self.clock.max(self.busy_until()).max(self.last_done)
    }

    /// Moves the clock forward to `t` (never backward).
    pub fn advance_to(&mut self, t: Ps) {
        self.clock = self.clock.max(t);
    }

    /// Back to time 0 with idle chips (a paced run's timeline restarting).
    pub fn restart(&mut self) {
        self.chips.restart();
        self.clock = 0;
        self.last_done = 0;
        self.write_cursor = 0;
        self.erase_cursor = 0;
        self.reads = 0;
        self.outstanding.clear();
    }

    /// Puts `work` on the chips from `start`; returns when its last operation is done.
    fn place(&mut self, start: Ps, work: &Work) -> Ps {
        let n = self.chips.count();
        let mut done = start;
        // Erases first (GC frees a unit before its space is reused), then reads, then programs.
        // An erased unit is one block erase (the simulated SSD's 1 MiB unit is FEMU's block of
        // 256 x 4 KiB pages), on the chips in turn.
        for _ in 0..work.erased_units {
            let c = self.erase_cursor;
            self.erase_cursor = (c + 1) % n;
            done = done.max(self.chips.ops(c, start, ChipOp::Erase, 1));
        }
        for _ in 0..self.flash_pages(work.read_pages) {
            self.reads += 1;
            let c = u32::try_from(mix(self.reads) % u64::from(n)).expect("below the chip count");
            done = done.max(self.chips.ops(c, start, ChipOp::Read, 1));
        }
        let pages = self.flash_pages(work.programmed_pages);
        let (per, extra) = (pages / u64::from(n), pages % u64::from(n));
        for k in 0..n.min(u32::try_from(pages).unwrap_or(u32::MAX)) {
            let c = (self.write_cursor + k) % n;
            let count = per + u64::from(u64::from(k) < extra);
            done = done.max(self.chips.ops(c, start, ChipOp::Program, count));
        }
        let extra32 = u32::try_from(extra).expect("below the chip count");
        self.write_cursor = (self.write_cursor + extra32) % n;
        assert!(self.write_cursor < n, "cursor on a chip");
        assert!(done >= start, "work ends after it starts");
        done
    }

    /// Serves a request arriving at `arrival` that causes `work`; returns its completion time.
    /// Requests are served in the order this is called (FIFO): callers pass arrivals in
    /// non-decreasing order (a smaller one is treated as arriving now).
    ///
    /// # Panics
    /// Never in practice: the queue-depth bookkeeping is internally consistent.
    pub fn serve(&mut self, arrival: Ps, work: &Work) -> Ps {
        let mut arrival = arrival.max(self.clock);
        if let Some(qd) = self.model.queue_depth {
            while self.outstanding.peek().is_some_and(|r| r.0 <= arrival) {
                self.outstanding.pop();
            }
            if self.outstanding.len() >= qd as usize {
                let Reverse(first) = self.outstanding.pop().expect("len >= qd >= 1");
                arrival = arrival.max(first);
            }
        }
        assert!(arrival >= self.clock, "time never runs backward");
        self.clock = arrival;
        let media_done = self.place(arrival, work);
        let done = media_done + self.request_latency(work.write);
        if self.model.queue_depth.is_some() {
            self.outstanding.push(Reverse(done));
        }
        self.last_done = self.last_done.max(done);
        debug_assert!(done >= arrival);
        done
    }
}

/// A 64-bit mix (splitmix64's finalizer): spreads reads over the chips.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(pages: u64) -> Work {
        Work {
            write: true,
            programmed_pages: pages,
            ..Work::default()
        }
    }

    #[test]
    fn fifo_server_and_latencies() {
        let mut t = Timing::new(TimingModel::default()).unwrap();
        // 4 KiB at 2000 MB/s = 2048 ns; + 12 us controller latency.
        assert_eq!(t.program_busy(1), 2_048_000);
        assert_eq!(t.read_busy(1), 1_280_000);
        let a = t.serve(0, &write(1));
        assert_eq!(a, 2_048_000 + 12_000_000);
        // A second write at time 0 queues behind the first.
        let b = t.serve(0, &write(2));
        assert_eq!(b, 3 * 2_048_000 + 12_000_000);
        // A read arriving after the media went idle starts at once.
        let r = t.serve(1_000_000_000, &Work::default());
        assert_eq!(r, 1_000_000_000 + 70_000_000);
        assert_eq!(t.busy_total(), 3 * 2_048_000);
        assert_eq!(t.now(), 1_000_000_000);
        t.restart();
        assert_eq!((t.now(), t.busy_until(), t.busy_total()), (0, 0, 0));
    }

    #[test]
    fn device_queue_depth_delays_arrivals() {
        let m = TimingModel {
            queue_depth: Some(1),
            ..TimingModel::bandwidth_only(4096e6, 4096e6)
        };
        let mut t = Timing::new(m).unwrap();
        assert_eq!(t.serve(0, &write(1)), 1_000_000);
        // With room for one request, the second arrives when the first completes.
        assert_eq!(t.serve(0, &write(1)), 2_000_000);
        assert_eq!(t.now(), 1_000_000);
    }

    #[test]
    fn bad_models_are_refused() {
        for m in [
            TimingModel {
                media_write_mb_s: 0.0,
                ..TimingModel::default()
            },
            TimingModel {
                read_base_us: f64::NAN,
                ..TimingModel::default()
            },
            TimingModel {
                queue_depth: Some(0),
                ..TimingModel::default()
            },
        ] {
            assert!(Timing::new(m).is_err(), "{m:?}");
        }
    }
}

#[cfg(test)]
mod chip_tests {
    use super::*;

    fn femu_model() -> TimingModel {
        TimingModel::with_chips(ChipParams::femu(8, 8, 16384))
    }

    #[test]
    fn sequential_write_bandwidth_matches_the_closed_form() {
        let mut t = Timing::new(femu_model()).unwrap();
        let p = t.model().chip_params();
        // 64 MiB in 128 KiB requests, all queued at once: the chips pipeline them.
        let pages_per_req = 32; // 4 KiB pages: 128 KiB = 8 flash pages
        let reqs = 512u64;
        let mut done = 0;
        for _ in 0..reqs {
            let w = Work {
                write: true,
                programmed_pages: pages_per_req,
                ..Work::default()
            };
            done = done.max(t.serve(0, &w));
        }
        let bytes = reqs * pages_per_req * 4096;
        #[expect(clippy::cast_precision_loss, reason = "small test values")]
        let bw = bytes as f64 / (done as f64 / 1e12);
        let closed = p.seq_write_bytes_per_sec();
        // 8 x 8 x 16 KiB / 200 us = 5.24 GB/s.
        assert!((closed - 5_242_880_000.0).abs() < 1.0, "{closed}");
        assert!((bw - closed).abs() / closed < 1e-9, "{bw} vs {closed}");
    }

    #[test]
    fn random_read_iops_at_qd1_is_one_over_read_latency() {
        for preset in [
            ChipParams::femu(8, 8, 16384),
            ChipParams::mqsim(8, 4, 16384),
        ] {
            let mut t = Timing::new(TimingModel::with_chips(preset)).unwrap();
            let mut now = 0;
            let n = 1000u64;
            for _ in 0..n {
                let r = Work {
                    write: false,
                    read_pages: 1,
                    ..Work::default()
                };
                now = t.serve(now, &r);
            }
            let per = now / n;
            let expect = us_to_ps(preset.read_us) + us_to_ps(preset.xfer_us);
            assert_eq!(per, expect, "{preset:?}");
        }
    }

    #[test]
    fn reads_wait_behind_programs_and_erases_on_their_chip() {
        let mut c = Chips::new(ChipParams::femu(2, 1, 4096)).unwrap();
        let p = us_to_ps(200.0);
        // GC on chip 0: 3 copies (read + program) and an erase.
        let mut t = c.ops(0, 0, ChipOp::Read, 3);
        t = t.max(c.ops(0, 0, ChipOp::Program, 3));
        t = t.max(c.ops(0, 0, ChipOp::Erase, 1));
        assert_eq!(t, 3 * us_to_ps(40.0) + 3 * p + us_to_ps(2000.0));
        // A host read on chip 0 waits for all of it; one on chip 1 does not.
        assert_eq!(c.ops(0, 0, ChipOp::Read, 1), t + us_to_ps(40.0));
        assert_eq!(c.ops(1, 0, ChipOp::Read, 1), us_to_ps(40.0));
        assert_eq!(c.busy_sum(), 5 * us_to_ps(40.0) + 3 * p + us_to_ps(2000.0));
        c.restart();
        assert_eq!(c.all_free_at(), 0);
    }

    #[test]
    fn channel_transfer_serializes_chips_of_a_channel() {
        let mut params = ChipParams::femu(1, 2, 4096);
        params.xfer_us = 10.0;
        let mut c = Chips::new(params).unwrap();
        // Two programs on the two chips of one channel: the second transfer waits.
        assert_eq!(c.ops(0, 0, ChipOp::Program, 1), us_to_ps(210.0));
        assert_eq!(c.ops(1, 0, ChipOp::Program, 1), us_to_ps(220.0));
        // A read: the chip first, then the channel.
        assert_eq!(c.ops(0, 0, ChipOp::Read, 1), us_to_ps(260.0));
        let chip_bound = 2.0 * 4096.0 / 200e-6;
        assert!((params.seq_write_bytes_per_sec() - chip_bound).abs() < 1e-3);
        params.xfer_us = 150.0;
        assert!((params.seq_write_bytes_per_sec() - 4096.0 / 150e-6).abs() < 1e-3);
    }

    #[test]
    fn one_chip_model_is_the_bandwidth_server() {
        let m = TimingModel::default();
        let p = m.chip_params();
        assert_eq!(
            (p.channels, p.chips_per_channel, p.page_bytes),
            (1, 1, 4096)
        );
        assert!((p.program_us - 2.048).abs() < 1e-12);
        assert!(Timing::new(TimingModel {
            chips: Some(ChipParams {
                channels: 0,
                ..ChipParams::femu(1, 1, 4096)
            }),
            ..m
        })
        .is_err());
    }
}
