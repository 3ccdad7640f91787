//! DB GC of delta chains (docs/design.md section 14.10). A victim holding a copy of a
//! chained pid either holds its base, and the page is moved as one consolidated whole page
//! (the usual relocation: the chain ends, its deltas elsewhere become garbage), or holds
//! only deltas, and these move as deltas: merging them into whole pages would write a page
//! per delta (a zone of deltas would grow into a dozen zones of pages and GC would run out
//! of room). Moving a delta that is not the newest copy changes a location the newest delta
//! names, so the move takes two flushes: first the older deltas are copied (each keeps its
//! generation, so recovery never takes it for the newest copy), then the newest delta is
//! rewritten with the new refs as an ordinary GC copy (generation + 1). A crash before the
//! second flush leaves the old newest delta naming the old copies, still in the untrimmed
//! victim; after it, the new newest delta names durable copies.

use super::gc::VictimPage;
use super::{Item, Loc, OutOfPlaceStore, CODEC_DELTA};
use crate::error::{Corruption, Pid, Result, SlotDamage};
use crate::format::delta;
use crate::num::usize_of;
use crate::page::PAGE_SIZE;
use crate::store::WriteKind;

/// A chained pid whose base is not in the victims: its deltas there move as deltas.
pub(super) struct DeltaMove {
    pid: Pid,
    /// Older deltas (not the newest copy) in the victims, with their victim's write kind.
    elems: Vec<(Loc, WriteKind)>,
    /// Write kind of the newest delta's rewrite.
    head_kind: WriteKind,
    /// A victim the pid moves out of (placement hooks).
    from: u32,
}

impl OutOfPlaceStore {
    /// Split the victims' valid pages: pages moved whole (including chained pids whose base
    /// is in a victim: consolidated) and chains whose deltas move as deltas. SepFrozen's
    /// stash judges page images: there every chain is consolidated.
    pub(super) fn split_delta_moves(
        &self,
        victims: &[(u32, WriteKind)],
        valid: Vec<VictimPage>,
    ) -> (Vec<VictimPage>, Vec<DeltaMove>) {
        let st = self.st.read();
        if st.chains.is_empty() || st.stash.is_some() {
            return (valid, Vec::new());
        }
        let kind_of = |l: &Loc| {
            let z = self.zone_of(l.block)?;
            victims.iter().find(|v| v.0 == z).map(|v| v.1)
        };
        let mut pages = Vec::with_capacity(valid.len());
        let mut moves = Vec::new();
        for vp in valid {
            let (pid, loc, kind, _) = vp;
            match st.chains.get(&pid) {
                Some(chain) if kind_of(&chain[0]).is_none() => {
                    let main = st.map.get(pid);
                    moves.push(DeltaMove {
                        pid,
                        elems: chain[1..]
                            .iter()
                            .filter_map(|l| kind_of(l).map(|k| (*l, k)))
                            .collect(),
                        head_kind: kind_of(&main).unwrap_or(kind),
                        from: self.zone_of(loc.block).expect("victim copy in a zone"),
                    });
                }
                _ => pages.push(vp),
            }
        }
        (pages, moves)
    }

    /// Move the deltas of `moves` (caller holds `io`; every victim was announced to the
    /// placement already): older deltas first, then the newest deltas with new refs.
    pub(super) fn move_deltas(&self, moves: &[DeltaMove]) -> Result<()> {
        let mut tmp = vec![0u8; PAGE_SIZE];
        let mut older: Vec<(Item, WriteKind)> = Vec::new();
        for mv in moves {
            for &(l, kind) in &mv.elems {
                let seq = self.seq_of(&l);
                let (lsn, r) = self.read_entry(mv.pid, l, seq, &mut tmp)?;
                let mut it = self.raw_item(mv.pid, lsn, tmp[r].to_vec(), self.zone_of(l.block));
                it.keep_gen = Some(l.gen.get());
                older.push((it, kind));
            }
        }
        let older_n = older.len();
        self.write_moved(older)?;
        let mut heads: Vec<(Item, WriteKind)> = Vec::with_capacity(moves.len());
        for mv in moves {
            let (chain, main) = self.locate_chain(mv.pid);
            let (lsn, r) = self.read_entry(mv.pid, main, chain[chain.len() - 1].1, &mut tmp)?;
            let d = delta::decode(&tmp[r]).map_err(|error| Corruption::Slot {
                block: main.block,
                pid: mv.pid,
                damage: SlotDamage::Delta { error },
            })?;
            // The same ranges over the chain as it is now (the moved copies).
            let mut page = vec![0u8; PAGE_SIZE];
            d.apply(&mut page);
            let refs: Vec<delta::Ref> = chain[..chain.len() - 1]
                .iter()
                .map(|(l, _)| self.ref_of(l))
                .collect();
            let data = delta::encode(&page, &d.spans, &refs, self.delta_lz4());
            heads.push((
                self.raw_item(mv.pid, lsn, data, Some(mv.from)),
                mv.head_kind,
            ));
        }
        let moved = older_n + heads.len();
        self.write_moved(heads)?;
        crate::stats::EngineCounters::add(&self.counters.delta_gc_moves, crate::num::u64_of(moved));
        Ok(())
    }

    /// The incarnation of the zone holding `l`.
    fn seq_of(&self, l: &Loc) -> u64 {
        let st = self.st.read();
        self.zone_of(l.block)
            .map_or(0, |z| st.zone_seq[usize_of(u64::from(z))])
    }

    /// A GC item carrying a delta payload as it is.
    fn raw_item(&self, pid: Pid, lsn: u64, data: Vec<u8>, from: Option<u32>) -> Item {
        Item {
            pid,
            lsn,
            codec: CODEC_DELTA,
            data,
            edt: u64::MAX,
            index: None,
            hot: nowa_logspace::hotness::PageHotness::default(),
            class: 0,
            from,
            delta: None,
            keep_gen: None,
            delta_spans: Vec::new(),
            replaces_head: false,
            cum: None,
        }
    }

    /// Classify (a GC write each) and write moved deltas, GC and compensation separately.
    fn write_moved(&self, items: Vec<(Item, WriteKind)>) -> Result<()> {
        let (gc, comp): (Vec<_>, Vec<_>) =
            items.into_iter().partition(|(_, k)| *k == WriteKind::Gc);
        for (part, kind) in [(gc, WriteKind::Gc), (comp, WriteKind::Compensation)] {
            let mut part: Vec<Item> = part.into_iter().map(|(it, _)| it).collect();
            if part.is_empty() {
                continue;
            }
            {
                let mut guard = self.st.write();
                let st: &mut super::State = &mut guard;
                let (space, placer) = (st.space.get_mut(), st.placer.get_mut());
                for it in &mut part {
                    it.class = placer.gc_write(space, it.pid);
                }
            }
            self.write_items(part, kind)?;
        }
        Ok(())
    }
}
