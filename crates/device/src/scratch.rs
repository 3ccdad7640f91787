//! The nowa scratch label: block 0 of a benchmark target (`nowa ssdiq`, `nowa infer-gc-unit`)
//! after a run, so that the next benchmark run recognizes the target as scratch space and
//! needs no `--force` to overwrite it again. A benchmark overwrites the whole target, label
//! included, and writes the label back when it finishes (also when interrupted); a run killed
//! half-way leaves no label, and the next run asks for `--force` again (the safe side).
//!
//! ```text
//! offset size field
//!   0   16   magic "nowa-scratch\0\0\0\0"
//!  16    4   version (1), little endian
//!  20    4   crc32c of the 4096-byte block with this field zeroed
//!  24    8   capacity in bytes when the label was written
//!  32   32   owner command, ASCII, NUL-padded ("ssdiq")
//!  64 4032   zero
//! ```
//!
//! The label cannot be mistaken for a nowa database (whose magic "NOWA" sits at bytes 4..8 of
//! blocks 0 and 1) nor for any signature [`crate::signatures`] knows.

use crate::open::Identity;
use crate::BLOCK_SIZE;

/// Magic at the start of block 0.
pub const SCRATCH_MAGIC: &[u8; 16] = b"nowa-scratch\0\0\0\0";
const VERSION: u32 = 1;
const OWNER_LEN: usize = 32;

const _: () = assert!(64 <= BLOCK_SIZE && 32 + OWNER_LEN == 64);

/// A decoded scratch label.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ScratchLabel {
    /// The command that wrote it.
    pub owner: String,
    /// The target's capacity then, in bytes.
    pub capacity: u64,
}

fn crc(block: &[u8]) -> u32 {
    let mut b = block[..BLOCK_SIZE].to_vec();
    b[20..24].fill(0);
    crc32c::crc32c(&b)
}

impl ScratchLabel {
    /// The label block (4096 bytes). The owner is cut to 32 bytes.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK_SIZE];
        b[..16].copy_from_slice(SCRATCH_MAGIC);
        b[16..20].copy_from_slice(&VERSION.to_le_bytes());
        b[24..32].copy_from_slice(&self.capacity.to_le_bytes());
        let owner = self.owner.as_bytes();
        let n = owner.len().min(OWNER_LEN);
        b[32..32 + n].copy_from_slice(&owner[..n]);
        let c = crc(&b);
        b[20..24].copy_from_slice(&c.to_le_bytes());
        debug_assert_eq!(Self::decode(&b).map(|l| l.capacity), Some(self.capacity));
        b
    }

    /// The label in the first bytes of a target, if they hold a valid one.
    #[must_use]
    pub fn decode(head: &[u8]) -> Option<ScratchLabel> {
        let b = head.get(..BLOCK_SIZE)?;
        if &b[..16] != SCRATCH_MAGIC || b[16..20] != VERSION.to_le_bytes() {
            return None;
        }
        if b[20..24] != crc(b).to_le_bytes() {
            return None;
        }
        let owner = &b[32..64];
        let end = owner.iter().position(|&c| c == 0).unwrap_or(OWNER_LEN);
        Some(ScratchLabel {
            owner: String::from_utf8_lossy(&owner[..end]).into_owned(),
            capacity: u64::from_le_bytes(b[24..32].try_into().ok()?),
        })
    }
}

/// A recognizer for [`crate::Expect`]: a target holding a scratch label.
#[must_use]
pub fn recognize_scratch(head: &[u8]) -> Option<Identity> {
    ScratchLabel::decode(head).map(|l| Identity {
        what: format!("nowa scratch target (last written by {})", l.owner),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_roundtrip_and_corruption() {
        let l = ScratchLabel {
            owner: "ssdiq".into(),
            capacity: 64 << 20,
        };
        let mut b = l.encode();
        assert_eq!(ScratchLabel::decode(&b), Some(l));
        assert!(recognize_scratch(&b).is_some());
        assert!(
            crate::signatures(&b).is_empty(),
            "looks like no file system"
        );
        assert_ne!(&b[4..8], b"NOWA", "not a nowa database");
        b[100] ^= 1;
        assert_eq!(ScratchLabel::decode(&b), None, "checksum");
        assert_eq!(ScratchLabel::decode(&b[..100]), None, "short");
        assert_eq!(ScratchLabel::decode(&[0u8; 4096]), None);
        let long = ScratchLabel {
            owner: "x".repeat(100),
            capacity: 1,
        };
        assert_eq!(
            ScratchLabel::decode(&long.encode()).unwrap().owner.len(),
            32
        );
    }
}
