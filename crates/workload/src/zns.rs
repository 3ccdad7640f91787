//! ZNS-like workload (ssd-iq 4.5) on a conventional device.

use crate::{below, Op, Workload, WorkloadError};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, SeedableRng};

/// Default interleaving chunk: 1 page, i.e. the fronts take turns page by page. That is the
/// finest interleaving and the hardest case for an FTL that does not separate streams; use 128
/// pages to mimic SSD-iq's 512 KiB writes per front.
pub const DEFAULT_ZNS_CHUNK_PAGES: u64 = 1;

const NO_ZONE: u64 = u64::MAX;

#[derive(Clone, Debug)]
struct Front {
    zone: u64,
    offset: u64,
}

/// ZNS-like writes: `[0, in_use)` is cut into `zones = in_use / zone_pages` zones (a remainder
/// of `in_use % zone_pages` pages at the end belongs to no zone and is never rewritten).
/// Each of `fronts` write fronts repeatedly picks a random zone that no other front is writing,
/// emits an [`Op::Trim`] of the whole zone, then writes the zone sequentially. Fronts take
/// turns round-robin, `chunk_pages` writes per turn; a turn also ends at the end of a zone. A
/// trim does not use up a turn's writes.
///
/// With `fronts = 1` this is SSD-iq's single-write-front experiment (Figure 6a); more fronts
/// give Figure 6b. Zones start unopened: the first op of each front is its first trim.
#[derive(Clone, Debug)]
pub struct ZnsLike {
    rng: Xoshiro256PlusPlus,
    in_use: u64,
    zone_pages: u64,
    chunk_pages: u64,
    fronts: Vec<Front>,
    /// Zones no front is writing; picked by index and swap-removed, O(1) per zone change.
    free: Vec<u64>,
    current: usize,
    written_in_turn: u64,
}

impl ZnsLike {
    /// See the type docs. Requires `1 <= zone_pages <= in_use`, `1 <= fronts <= zones`,
    /// `chunk_pages >= 1`.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the parameter that is out of range.
    pub fn new(
        in_use: u64,
        zone_pages: u64,
        fronts: u32,
        chunk_pages: u64,
        seed: u64,
    ) -> Result<Self, WorkloadError> {
        if in_use == 0 {
            return Err(WorkloadError::ZeroPages);
        }
        if zone_pages == 0 {
            return Err(WorkloadError::BadZns(
                "zone size must be at least 1 page".into(),
            ));
        }
        if zone_pages > in_use {
            return Err(WorkloadError::ZoneTooLarge { zone_pages, in_use });
        }
        if chunk_pages == 0 {
            return Err(WorkloadError::BadZns(
                "chunk must be at least 1 page".into(),
            ));
        }
        let zones = in_use / zone_pages;
        if fronts == 0 || u64::from(fronts) > zones {
            return Err(WorkloadError::BadZns(format!(
                "need 1 <= fronts <= zones, got {fronts} fronts for {zones} zones of {zone_pages} pages"
            )));
        }
        Ok(ZnsLike {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            in_use,
            zone_pages,
            chunk_pages,
            fronts: vec![
                Front {
                    zone: NO_ZONE,
                    offset: 0,
                };
                fronts as usize
            ],
            free: (0..zones).collect(),
            current: 0,
            written_in_turn: 0,
        })
    }

    /// Pages per zone.
    #[must_use]
    pub fn zone_pages(&self) -> u64 {
        self.zone_pages
    }

    /// Number of zones.
    #[must_use]
    pub fn zones(&self) -> u64 {
        self.in_use / self.zone_pages
    }

    /// Number of write fronts.
    #[must_use]
    pub fn fronts(&self) -> usize {
        self.fronts.len()
    }

    /// Writes per front turn.
    #[must_use]
    pub fn chunk_pages(&self) -> u64 {
        self.chunk_pages
    }
}

impl Workload for ZnsLike {
    fn next_op(&mut self) -> Op {
        let zp = self.zone_pages;
        let front = &mut self.fronts[self.current];
        if front.zone == NO_ZONE || front.offset == zp {
            if front.zone != NO_ZONE {
                self.free.push(front.zone);
            }
            #[expect(
                clippy::cast_possible_truncation,
                reason = "an index below free.len(), a usize"
            )]
            let i = below(self.rng.next_u64(), self.free.len() as u64) as usize;
            front.zone = self.free.swap_remove(i);
            front.offset = 0;
            return Op::Trim {
                start: front.zone * zp,
                len: zp,
            };
        }
        let lba = front.zone * zp + front.offset;
        front.offset += 1;
        self.written_in_turn += 1;
        if self.written_in_turn == self.chunk_pages || front.offset == zp {
            self.written_in_turn = 0;
            self.current += 1;
            if self.current == self.fronts.len() {
                self.current = 0;
            }
        }
        Op::Write(lba)
    }

    fn name(&self) -> String {
        format!(
            "zns {}p x{} front{} (chunk {}p)",
            self.zone_pages,
            self.fronts.len(),
            if self.fronts.len() == 1 { "" } else { "s" },
            self.chunk_pages
        )
    }

    fn in_use_pages(&self) -> u64 {
        self.in_use
    }
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "test arithmetic on small page counts and indices"
)]
#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Replays ops and checks the ZNS discipline: writes only into a zone opened by a trim, in
    /// order from its start, at most `fronts` zones open, no two fronts in one zone, turns of
    /// `chunk` writes (shorter only at a zone end).
    fn check(in_use: u64, zp: u64, fronts: u32, chunk: u64, seed: u64, ops: usize) {
        let mut w = ZnsLike::new(in_use, zp, fronts, chunk, seed).unwrap();
        let zones = in_use / zp;
        // zone -> next expected offset, for zones currently open.
        let mut open: HashMap<u64, u64> = HashMap::new();
        let mut trims = 0;
        let mut last_zone = None;
        let mut run = 0u64;
        let mut writes_per_zone = vec![0u64; zones as usize];
        for _ in 0..ops {
            match w.next_op() {
                Op::Trim { start, len } => {
                    assert_eq!(len, zp);
                    assert_eq!(start % zp, 0);
                    let z = start / zp;
                    assert!(z < zones);
                    // The front's previous zone must have been completed before.
                    open.retain(|_, off| *off != zp);
                    assert!(!open.contains_key(&z), "zone {z} trimmed while open");
                    open.insert(z, 0);
                    assert!(open.len() <= fronts as usize);
                    trims += 1;
                }
                Op::Write(lba) => {
                    assert!(lba < zones * zp, "write {lba} outside the zoned range");
                    let z = lba / zp;
                    let off = open.get_mut(&z).expect("write to a zone without a trim");
                    assert_eq!(lba % zp, *off, "zone {z} not written sequentially");
                    *off += 1;
                    writes_per_zone[z as usize] += 1;
                    if last_zone == Some(z) {
                        run += 1;
                    } else {
                        run = 1;
                        last_zone = Some(z);
                    }
                    if fronts > 1 {
                        assert!(run <= chunk, "turn longer than the chunk");
                    }
                }
            }
        }
        assert!(trims > 0);
        // Random zone choice reaches every zone eventually for these sizes.
        assert!(
            writes_per_zone.iter().all(|&c| c > 0),
            "{writes_per_zone:?}"
        );
    }

    #[test]
    fn single_front_discipline() {
        check(1000, 100, 1, 1, 1, 20_000);
        check(1050, 100, 1, 1, 2, 20_000); // remainder pages never written
    }

    #[test]
    fn multi_front_discipline() {
        check(4096, 64, 4, 1, 3, 50_000);
        check(4096, 64, 4, 16, 4, 50_000);
        check(4096, 64, 3, 7, 5, 50_000); // zone size not a multiple of the chunk
        check(1000, 100, 10, 1, 6, 20_000); // fronts == zones
    }

    #[test]
    fn each_zone_pass_starts_with_trim_then_round_robin() {
        let mut w = ZnsLike::new(64, 8, 2, 2, 7).unwrap();
        let ops: Vec<Op> = (0..8).map(|_| w.next_op()).collect();
        // Front 0 trims its zone then writes 2; front 1 trims then writes 2; back to front 0.
        let (Op::Trim { start: a, .. }, Op::Trim { start: b, .. }) = (ops[0], ops[3]) else {
            panic!("{ops:?}");
        };
        assert_ne!(a, b);
        assert_eq!(&ops[1..3], &[Op::Write(a), Op::Write(a + 1)]);
        assert_eq!(&ops[4..6], &[Op::Write(b), Op::Write(b + 1)]);
        assert_eq!(&ops[6..8], &[Op::Write(a + 2), Op::Write(a + 3)]);
        assert!(!w.is_write_only());
        assert_eq!(w.name(), "zns 8p x2 fronts (chunk 2p)");
    }

    #[test]
    fn rejects_bad_params() {
        assert!(matches!(
            ZnsLike::new(100, 101, 1, 1, 1),
            Err(WorkloadError::ZoneTooLarge { .. })
        ));
        assert!(ZnsLike::new(100, 0, 1, 1, 1).is_err());
        assert!(ZnsLike::new(100, 10, 0, 1, 1).is_err());
        assert!(ZnsLike::new(100, 10, 11, 1, 1).is_err());
        assert!(ZnsLike::new(100, 10, 1, 0, 1).is_err());
        assert!(ZnsLike::new(0, 10, 1, 1, 1).is_err());
    }

    #[test]
    #[should_panic(expected = "emits trims")]
    fn fill_writes_panics_on_trims() {
        let mut w = ZnsLike::new(100, 10, 1, 1, 1).unwrap();
        let mut buf = [0u64; 4];
        w.fill_writes(&mut buf);
    }
}
