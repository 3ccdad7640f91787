//! Sub-page persistence (issue 31 item 1, docs/design.md section 14.10): a user write-back
//! of a page whose changed chunks are few is stored as a delta (`crate::format::delta`)
//! packed with other pages and deltas into the same slots and zones, instead of a whole
//! page. A pid's mapping entry names its newest copy; when that is a delta, the store keeps
//! the rest of its chain in memory (`State::chains`: the base first, then the older deltas)
//! and every delta names that chain on disk, so recovery rebuilds it from the newest delta.
//! A whole-page write of the pid (user consolidation or a DB GC copy) ends the chain.

use super::dcache::Key;
use super::Gen;
use super::BS;
use super::{Loc, OutOfPlaceStore, State, CODEC_DELTA, NO_BLOCK};
use crate::error::{Corruption, Pid, Result, SlotDamage};
use crate::format::delta::{self, Ref};
use crate::num::{u64_of, usize_of};
use crate::page::{self, PAGE_SIZE};
use crate::stats::EngineCounters;

/// Most payload bytes one delta may take; a larger change is written as a whole page.
pub(super) const DELTA_MAX_BYTES: usize = 1024;
/// Default of `OopConfig::delta_merge`.
pub(super) const DELTA_MERGE_BYTES: u32 = 768;

/// A pid's chain as read under the state lock: the copies to read, base first, each with
/// the incarnation of its zone.
pub(super) type ChainLocs = Vec<(Loc, u64)>;

impl OutOfPlaceStore {
    /// A chain element as a delta names it.
    pub(super) fn ref_of(&self, l: &Loc) -> Ref {
        Ref {
            rel: u32::try_from(l.block - self.geo.zone_first).expect("zone area within u32"),
            gen: l.gen.get(),
            codec: l.codec,
            whole: l.whole,
            len: l.len,
        }
    }

    /// The location a ref names (the version check bits are not kept for chain elements).
    fn loc_of(&self, r: &Ref) -> Loc {
        Loc {
            block: self.geo.zone_first + u64::from(r.rel),
            ver: 0,
            len: r.len,
            whole: r.whole,
            codec: r.codec,
            gen: Gen::new(r.gen),
        }
    }

    /// Deltas are written only with packing on (a delta alone in its slot would take a whole
    /// block while counting its payload as valid data; GC could not compact a zone of them:
    /// nowa-vopr seed 24 ran out of zones). The store refuses the pair when it is built
    /// (`ConfigError::DeltasWithoutPacking`); this re-checks it where it is relied on.
    pub(super) fn deltas_on(&self) -> bool {
        assert!(
            !self.cfg.deltas || self.cfg.packing,
            "deltas without packing"
        );
        self.cfg.deltas
    }

    /// Compress delta bytes (any `--compression`: LZ4, fast on a few hundred bytes)?
    pub(super) fn delta_lz4(&self) -> bool {
        self.cfg.compression != crate::Compression::Off
    }

    /// `OopConfig::delta_merge` in bytes.
    fn merge_limit(&self) -> usize {
        usize_of(u64::from(self.cfg.delta_merge))
    }

    /// Merge the delta of `it` (ranges `spans`) into the pid's newest delta (its ranges
    /// known: written since open, or read by recovery) while the union stays small: the
    /// chain it then extends (older elements, newest) is one element shorter.
    fn merge_head<'a>(
        &self,
        st: &State,
        it: &mut super::Item,
        spans: &mut delta::Spans,
        older: &'a [Loc],
        main: Loc,
    ) -> (&'a [Loc], Loc) {
        if let Some(h) = st.head_spans.get(&it.pid) {
            let merged = delta::union(h, spans);
            if main.codec == CODEC_DELTA && delta::size(&merged, older.len()) <= self.merge_limit()
            {
                *spans = merged;
                it.replaces_head = true;
                let (last, rest) = older.split_last().expect("a delta has a chain");
                return (rest, *last);
            }
        }
        (older, main)
    }

    /// Under `io`, just before placement: turn each delta candidate of a user batch into a
    /// delta over its pid's current chain, or leave it a whole page when the pid has no
    /// durable copy, its chain is at the bound (`OopConfig::delta_chain` deltas), or the
    /// chain's deltas would exceed one page in bytes (consolidation).
    pub(super) fn finalize_deltas(&self, items: &mut [super::Item]) {
        let st = self.st.read();
        // The store's room guarantee is one uncompressed page per pid of its capacity
        // (GC can always make progress): live bytes, deltas included, stay a zone below it.
        let room = (self.geo.capacity * BS).saturating_sub(self.geo.zone_pages * BS);
        let mut live = st.space.lock().sum_valid();
        for it in items.iter_mut() {
            let Some((mut spans, image)) = it.delta.take() else {
                continue;
            };
            let main = st.map.get(it.pid);
            if main.block == NO_BLOCK {
                continue;
            }
            let older = st.chains.get(&it.pid).map_or(&[][..], |c| &c[..]);
            let (older, main) = self.merge_head(&st, it, &mut spans, older, main);
            let deltas = older.len() + usize::from(main.codec == CODEC_DELTA);
            if self.cfg.gdt && deltas == 0 {
                // The first delta over a base: the base's history is GDT's stamp, the
                // buffer's image has the one it loaded (`prepare_batch`).
                let h = crate::format::page::HISTORY;
                spans = delta::union(&spans, std::slice::from_ref(&(h.offset..h.end())));
            }
            let chain_bytes: usize = older
                .iter()
                .chain(std::iter::once(&main))
                .filter(|l| l.codec == CODEC_DELTA)
                .map(|l| usize::from(l.len))
                .sum();
            let refs: Vec<Ref> = older
                .iter()
                .chain(std::iter::once(&main))
                .map(|l| self.ref_of(l))
                .collect();
            // (A delta names at most MAX_REFS elements: the bound is clamped to it.)
            let at_bound = deltas >= usize_of(u64::from(self.cfg.delta_chain)).min(delta::MAX_REFS)
                && !it.replaces_head;
            let data = (!at_bound && delta::size(&spans, refs.len()) <= 2 * DELTA_MAX_BYTES)
                .then(|| delta::encode(&image, &spans, &refs, self.delta_lz4()));
            let Some(data) = data.filter(|d| {
                d.len() <= DELTA_MAX_BYTES
                    && chain_bytes + d.len() <= PAGE_SIZE
                    && live + u64_of(d.len() + super::SLOT_ENTRY) <= room
            }) else {
                it.replaces_head = false;
                continue;
            };
            live += u64_of(data.len() + super::SLOT_ENTRY);
            it.cum = self.cum_of(&st, it.pid, &spans, &image);
            assert!(
                data.len() <= delta::size(&spans, refs.len()),
                "page {}: delta larger than its raw size",
                it.pid
            );
            it.delta_spans = spans;
            it.data = data;
            it.codec = CODEC_DELTA;
        }
    }

    /// The cumulative change of `pid`'s chain once a delta with ranges `spans` of `image`
    /// extends it (or replaces its newest delta): the union of the ranges known for the
    /// chain as it is (none over a base; else the delta cache's, when it knows them) and
    /// `spans`, with `image`'s bytes there. None: unknown, or the cache is off.
    fn cum_of(
        &self,
        st: &State,
        pid: Pid,
        spans: &delta::Spans,
        image: &[u8],
    ) -> Option<(delta::Spans, Vec<u8>)> {
        let cache = self.dcache.lock();
        if !cache.enabled() {
            return None;
        }
        let head = st.map.get(pid);
        let known = if head.codec == CODEC_DELTA {
            let base = st.chains.get(&pid).and_then(|c| c.first())?;
            delta::union(cache.spans(pid, Key::of(base, &head))?, spans)
        } else {
            spans.clone()
        };
        let bytes = delta::gather(image, &known);
        Some((known, bytes))
    }

    /// The copies `pid` is read from: its chain (base first) and its newest copy, each with
    /// its zone's incarnation, and the newest copy alone (the retry check of a read).
    pub(super) fn locate_chain(&self, pid: Pid) -> (ChainLocs, Loc) {
        let st = self.st.read();
        let main = st.map.get(pid);
        let seq = |l: &Loc| {
            self.zone_of(l.block)
                .map_or(0, |z| st.zone_seq[usize_of(u64::from(z))])
        };
        let mut out: ChainLocs = st
            .chains
            .get(&pid)
            .map(|c| c.iter().map(|l| (*l, seq(l))).collect())
            .unwrap_or_default();
        out.push((main, seq(&main)));
        (out, main)
    }

    /// Read `pid` from its chain: the base, then every delta applied oldest first; the
    /// rebuilt page must pass its own checksum and carry the newest delta's LSN.
    pub(super) fn read_chain(
        &self,
        pid: Pid,
        chain: &ChainLocs,
        buf: &mut [u8],
    ) -> Result<delta::Spans> {
        let (base, seq) = chain[0];
        assert_ne!(
            base.codec, CODEC_DELTA,
            "page {pid}: a chain starts at a whole page"
        );
        let mut tmp = vec![0u8; PAGE_SIZE];
        self.read_loc(pid, base, seq, buf, &mut tmp)?;
        let mut lsn = page::lsn(buf);
        let mut cum = delta::Spans::new();
        for &(l, seq) in &chain[1..] {
            let (at, spans) = self.apply_delta(pid, l, seq, buf, &mut tmp)?;
            lsn = at;
            cum = delta::union(&cum, &spans);
        }
        let (last, _) = chain[chain.len() - 1];
        if !page::checksum_ok(buf) || page::lsn(buf) != lsn {
            return Err(Corruption::Slot {
                block: last.block,
                pid,
                damage: SlotDamage::Rebuilt {
                    deltas: chain.len() - 1,
                },
            }
            .into());
        }
        Ok(cum)
    }

    /// Apply the delta at `l` to `buf`; returns its LSN and ranges.
    fn apply_delta(
        &self,
        pid: Pid,
        l: Loc,
        seq: u64,
        buf: &mut [u8],
        tmp: &mut [u8],
    ) -> Result<(u64, delta::Spans)> {
        let (lsn, r) = self.read_entry(pid, l, seq, tmp)?;
        let d = delta::decode(&tmp[r]).map_err(|error| Corruption::Slot {
            block: l.block,
            pid,
            damage: SlotDamage::Delta { error },
        })?;
        d.apply(buf);
        Ok((lsn, d.spans))
    }

    /// Recovery: the chain of every pid whose newest copy is a delta, from that delta's
    /// refs (one read per chained pid). Every element must lie in a zone holding data of
    /// this database: a chain element is live, so its zone was never reclaimed.
    pub(super) fn rebuild_chains(&self, st: &mut State) -> Result<()> {
        st.chains.clear();
        st.head_spans.clear();
        let heads: Vec<(Pid, Loc)> = st
            .map
            .iter_mapped()
            .filter(|(_, l)| l.codec == CODEC_DELTA)
            .collect();
        let mut tmp = vec![0u8; PAGE_SIZE];
        for (pid, l) in heads {
            let z = self.zone_of(l.block).ok_or(Corruption::Slot {
                block: l.block,
                pid,
                damage: SlotDamage::Incarnation { seq: 0 },
            })?;
            let seq = st.zone_seq[usize_of(u64::from(z))];
            let (_, r) = self.read_entry(pid, l, seq, &mut tmp)?;
            let d = delta::decode(&tmp[r]).map_err(|error| Corruption::Slot {
                block: l.block,
                pid,
                damage: SlotDamage::Delta { error },
            })?;
            let chain: Vec<Loc> = d.refs.iter().map(|r| self.loc_of(r)).collect();
            let outside = chain.iter().find(|c| self.zone_of(c.block).is_none());
            if let Some(c) = outside {
                return Err(Corruption::Slot {
                    block: c.block,
                    pid,
                    damage: SlotDamage::Incarnation { seq: 0 },
                }
                .into());
            }
            assert_ne!(
                chain[0].codec, CODEC_DELTA,
                "page {pid}: chain base is a page"
            );
            st.chains.insert(pid, chain);
            st.head_spans.insert(pid, d.spans);
        }
        Ok(())
    }

    /// Is `l` (a copy found in a zone) an element of `pid`'s chain (not its newest copy)?
    pub(super) fn in_chain(st: &State, pid: Pid, l: &Loc) -> bool {
        st.chains
            .get(&pid)
            .is_some_and(|c| c.iter().any(|e| e.block == l.block && e.gen == l.gen))
    }

    /// Drop `pid`'s chain (a whole page replaced it, or the pid was released): its elements'
    /// bytes leave their zones' valid amounts.
    pub(super) fn drop_chain(&self, st: &mut State, pid: Pid) {
        st.head_spans.remove(&pid);
        self.dcache.lock().remove(pid);
        for e in st.chains.remove(&pid).unwrap_or_default() {
            let z = self.zone_of(e.block).expect("chain inside the zone area");
            st.space.get_mut().sub_valid(z, e.bytes());
        }
    }

    /// Commit of a new copy `loc` of `pid` (replacing `old`, the mapped copy): a user delta
    /// keeps `old` live in the chain; a GC move of the newest delta keeps the chain; a whole
    /// page ends it (user consolidation, or a GC copy that merged the chain).
    pub(super) fn chain_on_commit(
        &self,
        st: &mut State,
        pid: Pid,
        old: Loc,
        loc: &Loc,
        kind: crate::store::WriteKind,
        it: &super::Item,
    ) {
        if loc.codec == CODEC_DELTA && kind.is_user() {
            assert!(
                old.block != NO_BLOCK,
                "page {pid}: delta {loc:?} without a durable copy"
            );
            st.head_spans.insert(pid, it.delta_spans.clone());
            self.cache_on_commit(st, pid, old, loc, it);
            if it.replaces_head {
                // A merged delta: the newest delta it replaces is garbage.
                assert_eq!(old.codec, CODEC_DELTA, "page {pid}: merged over a delta");
                let oz = self
                    .zone_of(old.block)
                    .expect("mapped inside the zone area");
                st.space.get_mut().sub_valid(oz, old.bytes());
                EngineCounters::add(&self.counters.delta_merges, 1);
            } else {
                st.chains
                    .entry(pid)
                    .or_default()
                    .push(Loc { ver: 0, ..old });
            }
            EngineCounters::add(&self.counters.delta_writes, 1);
            EngineCounters::add(&self.counters.delta_bytes, u64::from(loc.len));
            return;
        }
        if old.block != NO_BLOCK {
            let oz = self
                .zone_of(old.block)
                .expect("mapped inside the zone area");
            st.space.get_mut().sub_valid(oz, old.bytes());
        }
        if loc.codec == CODEC_DELTA {
            assert!(
                old.codec == CODEC_DELTA && st.chains.contains_key(&pid),
                "page {pid}: GC moved a delta {loc:?} that was not the newest copy {old:?}"
            );
            return;
        }
        if st.chains.contains_key(&pid) {
            let c = if kind.is_user() {
                &self.counters.delta_consolidations
            } else {
                &self.counters.delta_gc_merges
            };
            EngineCounters::add(c, 1);
        }
        self.drop_chain(st, pid);
    }

    /// A user delta `loc` of `pid` (over `old`) is durable: the delta cache learns the
    /// chain's cumulative change (or forgets the pid when it is unknown).
    fn cache_on_commit(&self, st: &State, pid: Pid, old: Loc, loc: &Loc, it: &super::Item) {
        let mut cache = self.dcache.lock();
        if !cache.enabled() {
            return;
        }
        // The chain's base: the first element kept, or `old` when this delta starts it.
        let base = st.chains.get(&pid).and_then(|c| c.first()).unwrap_or(&old);
        match &it.cum {
            Some((spans, bytes)) => {
                cache.put(pid, Key::of(base, loc), spans.clone(), Some(bytes.clone()));
            }
            None => cache.remove(pid),
        }
    }

    /// The delta cache's entry of a chained `pid` at a miss, read and applied to `buf`
    /// over the base (`chain[0]`): Ok(false) when there is none or the rebuilt page is not
    /// the newest version (its checksum or LSN bits): the caller reads the chain.
    pub(super) fn read_cached(
        &self,
        pid: Pid,
        chain: &ChainLocs,
        main: &Loc,
        buf: &mut [u8],
    ) -> Result<bool> {
        let key = Key::of(&chain[0].0, main);
        let Some((spans, bytes)) = self.dcache.lock().take(pid, key) else {
            return Ok(false);
        };
        let (base, seq) = chain[0];
        let mut tmp = vec![0u8; PAGE_SIZE];
        self.read_loc(pid, base, seq, buf, &mut tmp)?;
        delta::Delta {
            refs: Vec::new(),
            spans,
            bytes,
        }
        .apply(buf);
        Ok(page::checksum_ok(buf) && main.holds_lsn(page::lsn(buf)))
    }

    /// A miss read `pid`'s whole chain (base `chain[0]`, newest copy `main`): the delta
    /// cache learns the chain's cumulative ranges (the page is in the pool now: no bytes).
    pub(super) fn cache_chain_read(
        &self,
        pid: Pid,
        chain: &ChainLocs,
        main: &Loc,
        cum: delta::Spans,
    ) {
        let mut cache = self.dcache.lock();
        if cache.enabled() {
            cache.put(pid, Key::of(&chain[0].0, main), cum, None);
        }
    }

    /// GC moved an older element of `pid`'s chain (generation `gen`, kept by the copy) to
    /// `loc` in zone `z`: the chain names the copy. The newest delta, rewritten next with the
    /// new refs, makes it durable for recovery.
    pub(super) fn commit_element(&self, st: &mut State, pid: Pid, gen: u32, loc: Loc, z: u32) {
        assert_eq!(
            loc.gen.get(),
            gen,
            "page {pid}: a moved element keeps its generation"
        );
        let e = st
            .chains
            .get_mut(&pid)
            .and_then(|c| c.iter_mut().find(|e| e.gen.get() == gen))
            .map(|e| std::mem::replace(e, Loc { ver: 0, ..loc }))
            .unwrap_or_else(|| panic!("page {pid}: chain element of generation {gen} moved"));
        let oz = self.zone_of(e.block).expect("chain inside the zone area");
        st.space.get_mut().sub_valid(oz, e.bytes());
        st.space.get_mut().add_valid(z, loc.bytes());
    }

    /// Chained pids and their delta count (reports and tests).
    #[must_use]
    pub fn delta_chains(&self) -> (u64, u64) {
        let st = self.st.read();
        let pids = u64_of(st.chains.len());
        let deltas = st
            .map
            .iter_mapped()
            .filter(|(_, l)| l.codec == CODEC_DELTA)
            .map(|(p, _)| u64_of(st.chains.get(&p).map_or(0, |c| c.len().saturating_sub(1))) + 1)
            .sum();
        (pids, deltas)
    }
}
