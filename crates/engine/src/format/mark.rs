//! Flush marks (format version 5): the durable end of the last completed log flush, kept in
//! [`BLOCKS`] blocks at the end of the WAL region, outside the circular log. Byte table:
//! docs/design.md section 4.
//!
//! Why outside the log: a mark vouches that the log was durable up to its `end`, so media
//! damage below `end` reads as damage, not as a torn tail (`crate::wal::analyze`). Format 4
//! wrote the mark in the log, in the block after the tail; the next flush overwrote it with
//! data, and a torn overwrite left nothing vouching for the acknowledged tail (vopr seed
//! 2501). Here no mark write ever overwrites the newest valid mark: an epoch (salt) owns a
//! pair of slots, `salt % 2`, and its marks alternate inside the pair (`seq % 2`), so a torn
//! mark write leaves the previous mark, which vouches for the last acknowledged flush.
//! The next epoch writes the other pair: while its recovery runs (the superblock still
//! names the older epoch) the older epoch's marks stay intact. An epoch zeroes its pair
//! before its first mark (`Wal::start_epoch`), so marks of an earlier attempt at the same
//! epoch (a crash during recovery) never vouch for bytes this attempt did not write.

use super::{block_crc, Field, BLOCK, VAR};
use crate::error::FlushMarkDamage;
use crate::num::u32_from_u64;

/// Blocks of the mark area: two pairs of slots.
pub const BLOCKS: u64 = 4;
/// "NWFM" little endian.
pub const MAGIC: u32 = u32::from_le_bytes(*b"NWFM");

/// crc32c of bytes [4, 4096).
pub const CRC: Field = Field::new(0, 4, "crc32c");
/// Magic.
pub const MAGIC_F: Field = Field::new(4, 4, "magic");
/// Salt of the log epoch that wrote the mark.
pub const SALT: Field = Field::new(8, 4, "salt");
/// The slot the mark was written to (checked against where it is read).
pub const SLOT: Field = Field::new(12, 4, "slot");
/// Marks of this epoch written before this one.
pub const SEQ: Field = Field::new(16, 8, "seq");
/// The log was durable below this LSN when the mark was written.
pub const END: Field = Field::new(24, 8, "durable end");
/// Zero up to the end of the block.
pub const ZERO: Field = Field::new(32, VAR, "zero");

/// The mark's fields, in order.
pub const FIELDS: &[Field] = &[CRC, MAGIC_F, SALT, SLOT, SEQ, END, ZERO];
const _: () = assert!(super::well_formed(FIELDS, BLOCK));

/// One flush mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// Salt of the epoch.
    pub salt: u32,
    /// Marks of the epoch before this one.
    pub seq: u64,
    /// Durable end of the log vouched for.
    pub end: u64,
}

/// Blocks of the circular log in a WAL region of `wal_blocks` (the mark area is its end).
#[must_use]
pub fn log_blocks(wal_blocks: u64) -> u64 {
    wal_blocks.saturating_sub(BLOCKS)
}

/// First slot of the pair of epoch `salt`.
#[must_use]
pub fn pair(salt: u32) -> u64 {
    u64::from(salt % 2) * 2
}

impl Mark {
    /// The slot (0..[`BLOCKS`]) this mark is written to.
    #[must_use]
    pub fn slot(&self) -> u64 {
        pair(self.salt) + self.seq % 2
    }

    /// One block.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        MAGIC_F.put_u32(&mut b, MAGIC);
        SALT.put_u32(&mut b, self.salt);
        SLOT.put_u32(&mut b, u32_from_u64(self.slot()));
        SEQ.put_u64(&mut b, self.seq);
        END.put_u64(&mut b, self.end);
        let c = block_crc(&b);
        CRC.put_u32(&mut b, c);
        b
    }

    /// The mark in the block read from `slot`: `Ok(None)` if the block holds no mark (never
    /// written, zeroed, or a torn write: not evidence of anything).
    ///
    /// # Errors
    /// A block with a valid checksum that breaks the format's invariants (written to
    /// another slot than it claims, non-zero padding): a bug or a misdirected write, never
    /// a crash.
    ///
    /// # Panics
    /// If `b` is not one block.
    pub fn decode(b: &[u8], slot: u64) -> Result<Option<Mark>, FlushMarkDamage> {
        assert_eq!(b.len(), BLOCK, "a flush mark is one block");
        if CRC.u32(b) != block_crc(b) || MAGIC_F.u32(b) != MAGIC {
            return Ok(None);
        }
        let m = Mark {
            salt: SALT.u32(b),
            seq: SEQ.u64(b),
            end: END.u64(b),
        };
        let stored = u64::from(SLOT.u32(b));
        if stored != slot || m.slot() != slot {
            return Err(FlushMarkDamage::WrongSlot {
                stored,
                computed: m.slot(),
            });
        }
        if b[ZERO.offset..].iter().any(|&x| x != 0) {
            return Err(FlushMarkDamage::Padding);
        }
        Ok(Some(m))
    }
}

/// The durable end the pair of epoch `salt` vouches for: the end of its newest mark (None:
/// no mark of the epoch). `slots` holds what was read from the pair's two slots.
///
/// # Errors
/// Two marks of the epoch whose order contradicts the epoch's: the one with the higher seq
/// vouches for no more than the other (ends grow strictly with seq). Seqs that are not
/// consecutive are no error: a lost mark write (media) leaves an older mark in its slot,
/// and the newer mark in the other slot was still written after its data was durable.
pub fn vouched(salt: u32, slots: [Option<Mark>; 2]) -> Result<Option<u64>, FlushMarkDamage> {
    let mut ours = slots.into_iter().flatten().filter(|m| m.salt == salt);
    let (a, b) = (ours.next(), ours.next());
    Ok(match (a, b) {
        (None, _) => None,
        (Some(m), None) => Some(m.end),
        (Some(x), Some(y)) => {
            let (old, new) = if x.seq < y.seq { (x, y) } else { (y, x) };
            if new.end <= old.end {
                return Err(FlushMarkDamage::Order {
                    older: (old.seq, old.end),
                    newer: (new.seq, new.end),
                });
            }
            Some(new.end)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_mark_reads_back_only_from_its_own_slot() {
        let m = Mark {
            salt: 7,
            seq: 4,
            end: 123_456,
        };
        assert_eq!(m.slot(), 2);
        let b = m.encode();
        assert_eq!(Mark::decode(&b, 2), Ok(Some(m)));
        assert_eq!(
            Mark::decode(&b, 3),
            Err(FlushMarkDamage::WrongSlot {
                stored: 2,
                computed: 2
            })
        );
        let mut torn = b.clone();
        torn[BLOCK - 1] ^= 1;
        assert_eq!(Mark::decode(&torn, 2), Ok(None), "a torn mark is no mark");
        assert_eq!(Mark::decode(&[0u8; BLOCK], 0), Ok(None));
    }

    #[test]
    fn inconsistent_pairs_are_damage() {
        let m = |seq, end| Some(Mark { salt: 3, seq, end });
        assert_eq!(vouched(3, [m(4, 100), m(5, 200)]), Ok(Some(200)));
        assert_eq!(vouched(3, [m(4, 100), None]), Ok(Some(100)));
        assert_eq!(vouched(4, [m(4, 100), m(5, 200)]), Ok(None), "other epoch");
        assert!(
            vouched(3, [m(4, 300), m(5, 200)]).is_err(),
            "newer vouches less"
        );
        assert_eq!(
            vouched(3, [m(4, 100), m(7, 200)]),
            Ok(Some(200)),
            "a lost mark write between them"
        );
    }

    /// What a crash can leave in one slot while a mark is written to it.
    #[derive(Debug, Clone, Copy)]
    enum Tear {
        /// The write did not happen.
        Old,
        /// Half of it: an invalid block.
        Torn,
        /// It completed (but the flush that wrote it did not return).
        New,
    }

    fn tear() -> impl Strategy<Value = Tear> {
        prop_oneof![Just(Tear::Old), Just(Tear::Torn), Just(Tear::New)]
    }

    proptest! {
        /// The invariant recovery relies on: after a crash at any point of any sequence of
        /// flushes, the pair vouches for at least the last acknowledged end (a flush returns
        /// after its mark is durable) and for no more than the durable end (a mark is
        /// written after its data's device flush), whatever the torn mark write left.
        #[test]
        fn the_pair_vouches_for_the_last_acknowledged_flush(
            salt in any::<u32>(),
            steps in proptest::collection::vec(1u64..100_000, 1..40),
            crash_in_mark in any::<bool>(),
            t in tear(),
        ) {
            let mut slots: [Vec<u8>; 4] = std::array::from_fn(|_| vec![0u8; BLOCK]);
            // Marks of the other epochs (stale) in every slot of the other pair.
            for s in 0..2u64 {
                let stale = Mark { salt: salt.wrapping_add(1), seq: s, end: u64::MAX / 2 + s };
                slots[usize::try_from(stale.slot()).unwrap()] = stale.encode();
            }
            let (mut end, mut acked) = (4096u64, None);
            let n = steps.len();
            for (i, d) in steps.iter().enumerate() {
                end += d;
                let m = Mark { salt, seq: u64::try_from(i).unwrap(), end };
                let at = usize::try_from(m.slot()).unwrap();
                let last = i + 1 == n;
                if last && crash_in_mark {
                    // The data of this flush is durable; its mark write is cut by a crash.
                    match t {
                        Tear::Old => {}
                        Tear::Torn => slots[at][100..].fill(0xAB),
                        Tear::New => slots[at] = m.encode(),
                    }
                    break;
                }
                slots[at] = m.encode();
                acked = Some(end);
            }
            let p = usize::try_from(pair(salt)).unwrap();
            let read = [
                Mark::decode(&slots[p], pair(salt)).unwrap(),
                Mark::decode(&slots[p + 1], pair(salt) + 1).unwrap(),
            ];
            let v = vouched(salt, read).unwrap();
            prop_assert!(v >= acked, "vouched {v:?} below the acknowledged end {acked:?}");
            prop_assert!(v.is_none_or(|v| v <= end), "vouched {v:?} beyond the durable end {end}");
        }
    }
}
