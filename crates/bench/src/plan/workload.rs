//! Workloads of `nowa plan`: closed-loop request generators over a chip-addressed FTL's
//! logical pages (flash pages). Each stands for one of the paper's workloads at this scale
//! (docs/plan.md says what each keeps and what it drops):
//! - `fio`: the paper's FIO (4 processes, files sized 1:10:30:64 over half the device, the
//!   other half cold aged data; uniform random one-page I/O, 50% reads, queue depth 32 each,
//!   stream id = process);
//! - `tpcc`: an OLTP engine's device stream: 4 KiB data pages with 80/20 skew over 90% of the
//!   device plus sequential log appends (stream 0 data, 1 log), 50% reads;
//! - `ycsb`: an LSM tree's stream: 256 KiB sequential SST writes to three circular level regions
//!   (4%, 16%, 64% of the device, a third of the writes each; stream = level), 50% reads;
//! - `fileserver`: Filebench fileserver: 16 threads over files of 128 KiB (half the device):
//!   create (one 8-page write), append (1 page), read whole, delete (TRIM);
//! - `gcc`: a build loop in 10% of the device: copy sources (small files), compile (small
//!   objects, reads of sources), link (large outputs), delete everything (TRIM); streams =
//!   phase (the issuing program).

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Read pages.
    Read,
    /// Write pages.
    Write,
    /// TRIM pages.
    Trim,
}

/// One host request in flash pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Req {
    /// What it does.
    pub kind: Kind,
    /// First page.
    pub start: u64,
    /// Pages.
    pub len: u64,
    /// Stream id (application or process).
    pub stream: u16,
}

/// The workloads (a flag's values: clap's `ValueEnum`; lowercase in specs and results).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum WorkloadKind {
    /// FIO, 4 processes.
    Fio,
    /// OLTP-like (TPC-C stand-in).
    Tpcc,
    /// LSM-like (YCSB-A on RocksDB stand-in).
    Ycsb,
    /// Filebench fileserver stand-in.
    Fileserver,
    /// Kernel-build loop stand-in.
    Gcc,
}

impl WorkloadKind {
    /// All of them, in the paper's order.
    pub const ALL: [WorkloadKind; 5] = [
        WorkloadKind::Fio,
        WorkloadKind::Tpcc,
        WorkloadKind::Ycsb,
        WorkloadKind::Fileserver,
        WorkloadKind::Gcc,
    ];
    /// The name used on the command line and in CSV files.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Fio => "fio",
            WorkloadKind::Tpcc => "tpcc",
            WorkloadKind::Ycsb => "ycsb",
            WorkloadKind::Fileserver => "fileserver",
            WorkloadKind::Gcc => "gcc",
        }
    }
}

/// splitmix64: a seeded, deterministic generator.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// Next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n.
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "an empty range");
        self.next_u64() % n
    }
    /// True with probability `pct`/100.
    pub fn pct(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

/// FIO's next request for `proc`: read or write (50%), one uniform page of its file.
fn fio_req(regions: &[(u64, u64)], rng: &mut Rng, proc: usize) -> Req {
    let (s, len) = regions[proc % 4];
    let kind = if rng.pct(50) { Kind::Read } else { Kind::Write };
    let stream = u16::try_from(proc % 4).expect("< 4");
    Generator::one(kind, s + rng.below(len), stream)
}

/// The smallest device (logical pages) the workloads' regions fit on; callers validate their
/// geometry against it before any work.
pub const MIN_LOGICAL_PAGES: u64 = 4096;

/// A request generator.
pub struct Generator {
    kind: WorkloadKind,
    n: u64,
    rng: Rng,
    /// Per-region write heads (circular logs) or file lengths.
    heads: Vec<u64>,
    regions: Vec<(u64, u64)>,
    files: Vec<u8>,
    /// gcc: phase and position in the build area.
    phase: u16,
    pos: u64,
}

impl Generator {
    /// A generator over `logical_pages`.
    ///
    /// # Panics
    /// If the device is too small for the workload's regions (< [`MIN_LOGICAL_PAGES`]).
    #[must_use]
    pub fn new(kind: WorkloadKind, logical_pages: u64, seed: u64) -> Self {
        let n = logical_pages;
        assert!(n >= MIN_LOGICAL_PAGES, "workloads need >= 4096 pages");
        let frac = |a: u64, b: u64| n * a / b;
        let regions = match kind {
            WorkloadKind::Fio => {
                // The files take half the device; the rest is the aged SSD's cold user data.
                let parts = [1u64, 10, 30, 64];
                let mut at = 0;
                parts
                    .iter()
                    .map(|&p| {
                        let len = n / 2 * p / 105;
                        at += len;
                        (at - len, len)
                    })
                    .collect()
            }
            WorkloadKind::Tpcc => vec![(0, frac(90, 100)), (frac(94, 100), frac(5, 100))],
            WorkloadKind::Ycsb => vec![
                (0, frac(4, 100)),
                (frac(4, 100), frac(16, 100)),
                (frac(20, 100), frac(64, 100)),
            ],
            WorkloadKind::Fileserver => vec![(0, frac(1, 2) / 16 * 16)],
            WorkloadKind::Gcc => vec![(frac(90, 100), frac(10, 100))],
        };
        let files = if kind == WorkloadKind::Fileserver {
            vec![8; usize::try_from(regions[0].1 / 16).expect("fits")]
        } else {
            Vec::new()
        };
        Generator {
            kind,
            n,
            rng: Rng::new(seed),
            heads: vec![0; regions.len()],
            regions,
            files,
            phase: 0,
            pos: 0,
        }
    }

    /// Processes and queue depth per process.
    #[must_use]
    pub fn procs_and_depth(&self) -> (usize, usize) {
        match self.kind {
            WorkloadKind::Fio => (4, 32),
            WorkloadKind::Tpcc | WorkloadKind::Ycsb => (4, 8),
            WorkloadKind::Fileserver => (16, 1),
            WorkloadKind::Gcc => (4, 1),
        }
    }

    /// The workload.
    #[must_use]
    pub fn kind(&self) -> WorkloadKind {
        self.kind
    }

    /// The next request of process `proc`.
    pub fn next(&mut self, proc: usize) -> Req {
        match self.kind {
            WorkloadKind::Fio => self.fio(proc),
            WorkloadKind::Tpcc => self.tpcc(),
            WorkloadKind::Ycsb => self.ycsb(),
            WorkloadKind::Fileserver => self.fileserver(proc),
            WorkloadKind::Gcc => self.gcc(),
        }
    }

    fn one(kind: Kind, start: u64, stream: u16) -> Req {
        Req {
            kind,
            start,
            len: 1,
            stream,
        }
    }

    fn rw(&mut self) -> Kind {
        if self.rng.pct(50) {
            Kind::Read
        } else {
            Kind::Write
        }
    }

    fn fio(&mut self, proc: usize) -> Req {
        fio_req(&self.regions, &mut self.rng, proc)
    }

    /// The request [`Generator::next`]`(proc)` would return now, without drawing it (so a
    /// runner can prefetch its pages); `None` for the workloads where telling it is not cheap.
    #[must_use]
    pub fn peek(&self, proc: usize) -> Option<Req> {
        match self.kind {
            WorkloadKind::Fio => Some(fio_req(&self.regions, &mut self.rng.clone(), proc)),
            _ => None,
        }
    }

    fn tpcc(&mut self) -> Req {
        let kind = self.rw();
        if kind == Kind::Write && self.rng.pct(10) {
            let (s, len) = self.regions[1];
            self.heads[1] = (self.heads[1] + 1) % len;
            return Self::one(Kind::Write, s + self.heads[1], 1);
        }
        let (s, len) = self.regions[0];
        let hot = len / 5;
        let off = if self.rng.pct(80) {
            self.rng.below(hot)
        } else {
            hot + self.rng.below(len - hot)
        };
        Self::one(kind, s + off, 0)
    }

    fn ycsb(&mut self) -> Req {
        if self.rng.pct(50) {
            return Self::one(Kind::Read, self.rng.below(self.n), 0);
        }
        let level = usize::try_from(self.rng.below(3)).expect("< 3");
        let (s, len) = self.regions[level];
        let sst = 16u64;
        let at = self.heads[level];
        self.heads[level] = (at + sst) % (len / sst * sst);
        Req {
            kind: Kind::Write,
            start: s + at,
            len: sst,
            stream: u16::try_from(level).expect("< 3"),
        }
    }

    fn fileserver(&mut self, proc: usize) -> Req {
        let stream = u16::try_from(proc % 16).expect("< 16");
        let f = self.rng.below(self.files.len() as u64);
        let fi = usize::try_from(f).expect("fits");
        let base = self.regions[0].0 + f * 16;
        let len = u64::from(self.files[fi]);
        let op = self.rng.below(4);
        match (op, len) {
            (0, 0) | (1, 0) => {
                self.files[fi] = 8;
                Req {
                    kind: Kind::Write,
                    start: base,
                    len: 8,
                    stream,
                }
            }
            (1, l) if l < 16 => {
                self.files[fi] += 1;
                Self::one(Kind::Write, base + l, stream)
            }
            (2, l) if l > 0 => Req {
                kind: Kind::Read,
                start: base,
                len: l,
                stream,
            },
            (3, l) if l > 0 => {
                self.files[fi] = 0;
                Req {
                    kind: Kind::Trim,
                    start: base,
                    len: l,
                    stream,
                }
            }
            _ => Self::one(Kind::Read, base, stream),
        }
    }

    fn gcc(&mut self) -> Req {
        let (s, len) = self.regions[0];
        // Copy to 60% of the area, compile to 90%, link to the end, then delete all.
        let (copy_end, cc_end) = (len * 6 / 10, len * 9 / 10);
        if self.pos >= len - 32 {
            self.pos = 0;
            self.phase = 0;
            return Req {
                kind: Kind::Trim,
                start: s,
                len,
                stream: 0,
            };
        }
        self.phase = if self.pos < copy_end {
            0
        } else if self.pos < cc_end {
            1
        } else {
            2
        };
        if self.phase == 1 && self.rng.pct(30) {
            return Self::one(Kind::Read, s + self.rng.below(copy_end), 1);
        }
        let want = match self.phase {
            0 => 1 + self.rng.below(6),
            1 => 1 + self.rng.below(3),
            _ => 32,
        };
        let l = want.min(len - self.pos);
        let at = s + self.pos;
        self.pos += l;
        Req {
            kind: Kind::Write,
            start: at,
            len: l,
            stream: self.phase,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_stay_in_range_and_are_deterministic() {
        for w in WorkloadKind::ALL {
            let mut a = Generator::new(w, 100_000, 9);
            let mut b = Generator::new(w, 100_000, 9);
            let (procs, _) = a.procs_and_depth();
            for i in 0..20_000 {
                let r = a.next(i % procs);
                assert_eq!(r, b.next(i % procs));
                assert!(r.len >= 1 && r.start + r.len <= 100_000, "{w:?} {r:?}");
            }
        }
        use clap::ValueEnum as _;
        for w in WorkloadKind::ALL {
            assert_eq!(
                WorkloadKind::from_str(w.name(), false),
                Ok(w),
                "flag value = name"
            );
            let json = serde_json::to_string(&w).expect("serializes");
            assert_eq!(json, format!("\"{}\"", w.name()), "lowercase in specs");
        }
        assert!(WorkloadKind::from_str("x", false).is_err());
    }

    /// `peek` is what `next` then returns, and draws nothing (the run is unchanged).
    #[test]
    fn peek_tells_the_next_request_without_drawing_it() {
        let mut g = Generator::new(WorkloadKind::Fio, 100_000, 3);
        let mut h = Generator::new(WorkloadKind::Fio, 100_000, 3);
        for i in 0..1000 {
            let p = i % 4;
            let seen = g.peek(p).expect("FIO can be peeked");
            assert_eq!(
                g.peek((p + 1) % 4).map(|r| r.stream),
                u16::try_from((p + 1) % 4).ok()
            );
            assert_eq!(seen, g.next(p));
            assert_eq!(seen, h.next(p), "peeking draws nothing");
        }
        assert_eq!(Generator::new(WorkloadKind::Gcc, 100_000, 3).peek(0), None);
    }

    #[test]
    fn fio_files_are_sized_1_10_30_64() {
        let g = Generator::new(WorkloadKind::Fio, 210_000, 1);
        let lens: Vec<u64> = g.regions.iter().map(|r| r.1).collect();
        assert_eq!(lens, vec![1000, 10_000, 30_000, 64_000]);
    }
}
