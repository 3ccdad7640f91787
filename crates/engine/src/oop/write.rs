//! The write path: zone opening, FDP handle / ZNS placement, GDT zone choice, slot packing
//! and writes, mapping updates, reads of a mapped location.

use super::map::ver_of;
use super::{compress_page, edt, pack};
use super::{
    Gen, Item, Loc, OutOfPlaceStore, Slot, State, BS, CODEC_RAW, NO_BLOCK, SLOT_ENTRY, SLOT_HDR,
};
use crate::error::{Corruption, EngineError, Exhausted, Pid, Result, SlotDamage};
use crate::format::zone::{self, Incarnation, SlotEntry, ZoneHeader};
use crate::num::{u16_of, u64_of, usize_of};
use crate::page::{self, PAGE_SIZE};
use crate::stats::EngineCounters;
use crate::store::WriteKind;
use nowa_device::DeviceError;
use nowa_logspace::UnitState;

/// Where each item of a batch goes: (item index, location).
type Placed = Vec<(usize, Loc)>;

/// Slots placed in one zone, to be written with one device write.
struct Run {
    first: u64,
    data: Vec<u8>,
    zone: u32,
    /// The zone's FDP placement id ([`OutOfPlaceStore::hint`] of its class).
    hint: Option<u16>,
}

impl OutOfPlaceStore {
    /// The FDP placement id of placement class `class`: 1 + class (handle 0 carries the WAL
    /// and metadata). Classes are below h - 1 (`placement_limits` clamps the open zones, and a
    /// scheme with more classes is refused; asserted here) and each has at most one open
    /// zone, so open zones never share a handle: two zones on one handle would interleave
    /// their pages in one reclaim unit, and the SSD would copy when either is reclaimed. A
    /// zone's id once depended on its number, and a class whose zone filled could open a free
    /// zone only if one had a handle no open zone used: it mostly wrote into another class's
    /// zone instead (MiDAS's FIFO groups then copied full zones in circles, nowa-vopr seed
    /// 1,096,505).
    pub(super) fn hint(&self, class: u16) -> Option<u16> {
        self.handles.map(|h| {
            if h >= 2 {
                assert!(
                    class < h - 1,
                    "class {class} beyond the {} data handles",
                    h - 1
                );
                1 + class
            } else {
                0
            }
        })
    }

    /// The FDP placement id of zone `z`: its class's.
    pub(super) fn zone_hint(&self, st: &mut State, z: u32) -> Option<u16> {
        self.hint(st.space.get_mut().class(z))
    }

    /// The free zone to open next.
    pub(super) fn next_free_zone(st: &mut State) -> Option<u32> {
        st.space.get_mut().peek_free()
    }

    /// Open free zone `z` (from [`Self::next_free_zone`]) for placement class `class`: write
    /// and flush its header before any data goes in, so a zone whose header is invalid holds
    /// no data of its current incarnation.
    pub(super) fn open_zone(
        &self,
        st: &mut State,
        kind: WriteKind,
        (group, class): (u64, u16),
        z: u32,
    ) -> Result<u32> {
        let space = st.space.get_mut();
        assert!(
            self.handles.is_none_or(|h| h < 2)
                || st
                    .open
                    .iter()
                    .all(|&o| self.hint(space.class(o)) != self.hint(class)),
            "two open zones would share an FDP handle"
        );
        assert_eq!(
            st.space.get_mut().state(z),
            UnitState::Free,
            "opening zone {z}"
        );
        st.space
            .get_mut()
            .open_specific(z, class)
            .map_err(|_| EngineError::Full(Exhausted::NoFreeZone))?;
        let seq = st.next_seq;
        st.next_seq += 1;
        let zi = usize_of(u64::from(z));
        assert!(
            seq > st.zone_seq[zi],
            "zone {z}: incarnation {seq} not above {}",
            st.zone_seq[zi]
        );
        st.zone_seq[zi] = seq;
        st.space.get_mut().set_group(z, group);
        st.zone_wp[zi] = 1;
        let h = ZoneHeader {
            db_id: self.db_id,
            zone: z,
            seq,
            group,
            open_zones: self.open_limit,
            class,
        }
        .encode();
        if self.zoned {
            // Zone reset (no-op for an empty zone), then zone append of the header.
            self.dev.zone_reset(self.zone_block(z) * BS)?;
            self.dev.zone_append(self.zone_block(z) * BS, &h)?;
        } else {
            self.dev
                .write_at_hinted(self.zone_block(z) * BS, &h, self.hint(class))?;
        }
        self.flush_store(kind)?;
        kind.count_bytes(&self.counters, BS);
        EngineCounters::add(&self.counters.zone_header_bytes, BS);
        st.open.push(z);
        st.placer.get_mut().opened(st.space.get_mut(), z);
        Ok(z)
    }

    /// The open zone of placement class `class`, if any.
    fn zone_of_class(st: &mut State, class: u16) -> Option<u32> {
        let space = st.space.get_mut();
        st.open.iter().copied().find(|&z| space.class(z) == class)
    }

    /// Open zones as the policy allows: NoWA opens a whole active group (one zone per class)
    /// when none is open (rule 1: a new group only when the whole group is written); the
    /// others keep a zone open for every class while free zones last.
    fn refill_open(&self, st: &mut State, kind: WriteKind) -> Result<()> {
        let classes = st.placer.get_mut().classes();
        if self.cfg.nowa && self.cfg.placement.is_none() {
            if st.open.is_empty() {
                let g = st.next_group;
                st.next_group += 1;
                for c in 0..classes {
                    let Some(z) = Self::next_free_zone(st) else {
                        break;
                    };
                    self.open_zone(st, kind, (g, c), z)?;
                }
            }
            return Ok(());
        }
        for c in 0..classes {
            if Self::zone_of_class(st, c).is_some() {
                continue;
            }
            let Some(z) = Self::next_free_zone(st) else {
                break;
            };
            let g = st.next_group;
            st.next_group += 1;
            self.open_zone(st, kind, (g, c), z)?;
        }
        Ok(())
    }

    /// The open zone for the next slots of class `class` (opening zones as the policy
    /// allows). When the class has no zone (no free zone was left to open one, or NoWA's
    /// group has sealed it), a random open zone takes the slots.
    pub(super) fn target_zone(&self, st: &mut State, kind: WriteKind, class: u16) -> Result<u32> {
        self.refill_open(st, kind)?;
        if st.open.is_empty() {
            return Err(Exhausted::NoFreeZone.into());
        }
        if let Some(z) = Self::zone_of_class(st, class) {
            return Ok(z);
        }
        let i = st.cursor % st.open.len();
        Ok(st.open[i])
    }

    /// Classify a user batch through the placement (victim pages are classified in
    /// `relocate_zones`, as their victims are announced), then write each class's pages into
    /// its zone. Caller holds `io` (one writer at a time); the state lock is held only to
    /// classify, place the slots and update the mapping, not during the data I/O, so readers
    /// proceed meanwhile.
    pub(super) fn write_items(&self, mut items: Vec<Item>, kind: WriteKind) -> Result<()> {
        debug_assert!(
            {
                // (Older chain elements moved by GC keep their own generations: several
                // of one pid may move together.)
                let mut pids: Vec<Pid> = items
                    .iter()
                    .filter(|i| i.keep_gen.is_none())
                    .map(|i| i.pid)
                    .collect();
                pids.sort_unstable();
                pids.windows(2).all(|w| w[0] != w[1])
            },
            "a pid twice in one write batch"
        );
        if items.is_empty() {
            return Ok(());
        }
        if kind.is_user() {
            self.classify_user(&mut items);
        }
        // One group per class, in the order the classes first appear.
        let mut order: Vec<u16> = Vec::new();
        for it in &items {
            if !order.contains(&it.class) {
                order.push(it.class);
            }
        }
        let mut slots: Vec<Option<Item>> = items.into_iter().map(Some).collect();
        // Every class is placed first, then the whole batch is made durable with one device
        // flush (issue 31: a flush per class gave 10-14 page writes per flush).
        let mut groups: Vec<(Vec<Item>, Placed)> = Vec::with_capacity(order.len());
        let mut runs: Vec<Run> = Vec::new();
        for c in order {
            let part: Vec<Item> = slots
                .iter_mut()
                .filter(|s| s.as_ref().is_some_and(|it| it.class == c))
                .filter_map(Option::take)
                .collect();
            let plan = self.plan_slots(&part);
            let locs = self.place(&part, &plan, kind, c, &mut runs)?;
            groups.push((part, locs));
        }
        assert!(slots.iter().all(Option::is_none), "every item written once");
        for r in &runs {
            self.write_run(r, kind)?;
        }
        // The new versions are durable before the mapping points at them.
        self.flush_store(kind)?;
        for (part, locs) in groups {
            assert_eq!(part.len(), locs.len(), "every item of a group placed once");
            self.commit(&part, locs, kind);
        }
        if kind.is_user() {
            self.trim_dead_zones()?;
        }
        Ok(())
    }

    /// Flush the data device for a write of `kind`; user writes (eviction, checkpoint) count
    /// as store flushes (`page_writes_per_store_flush`), GC's do not.
    pub(super) fn flush_store(&self, kind: WriteKind) -> Result<()> {
        self.dev.flush()?;
        if kind.is_user() {
            EngineCounters::add(&self.counters.store_flushes, 1);
        }
        Ok(())
    }

    /// The batch hints of the placement: the page's estimated deathtime (GDT), `FRESH` for a
    /// first write.
    pub(super) fn hints(items: &[Item]) -> (Vec<u64>, Vec<u64>) {
        let pages = items.iter().map(|i| i.pid).collect();
        let hints = items
            .iter()
            .map(|i| {
                if i.index.is_some() {
                    nowa_logspace::FRESH
                } else {
                    i.edt
                }
            })
            .collect();
        (pages, hints)
    }

    /// The class of every page of a user batch (the placement's user-write hooks, in the
    /// writer's order: batch, then per page invalidate, append, classify).
    fn classify_user(&self, items: &mut [Item]) {
        let (pages, hints) = Self::hints(items);
        let mut guard = self.st.write();
        let st: &mut State = &mut guard;
        let space = st.space.get_mut();
        st.placer
            .get_mut()
            .begin_batch(space, false, &pages, &hints);
        for it in items.iter_mut() {
            let old = st.map.get(it.pid);
            let old_zone = (old.block != NO_BLOCK).then(|| {
                self.zone_of(old.block)
                    .expect("mapped inside the zone area")
            });
            it.class =
                st.placer
                    .get_mut()
                    .user_write(space, it.pid, old_zone, nowa_logspace::NEVER);
        }
    }

    /// Best-fit packing, or (packing off) every page in a slot of its own.
    fn plan_slots(&self, items: &[Item]) -> Vec<Slot> {
        let sizes: Vec<(usize, bool)> = items
            .iter()
            .map(|it| (it.size(), it.codec == CODEC_RAW))
            .collect();
        let packed = if self.cfg.packing {
            pack(&sizes)
        } else {
            sizes
                .iter()
                .enumerate()
                .map(|(i, &(_, raw))| (raw, vec![i]))
                .collect()
        };
        packed
            .into_iter()
            .map(|(raw, members)| Slot { raw, members })
            .collect()
    }

    /// Place the slots into open zones (opening and sealing zones as they fill) and encode
    /// them: the runs to write and where each item goes. Under the state lock.
    fn place(
        &self,
        items: &[Item],
        slots: &[Slot],
        kind: WriteKind,
        class: u16,
        runs: &mut Vec<Run>,
    ) -> Result<Placed> {
        let mut guard = self.st.write();
        let st: &mut State = &mut guard;
        // The fallback zone of a class without one: random among the open zones, per group.
        st.rng ^= st.rng << 13;
        st.rng ^= st.rng >> 7;
        st.rng ^= st.rng << 17;
        st.cursor = usize_of(st.rng >> 16);
        let mut locs = Vec::with_capacity(items.len());
        let mut i = 0;
        while i < slots.len() {
            let z = self.target_zone(st, kind, class)?;
            let run = self.fill_run(st, z, items, &slots[i..], &mut locs);
            i += run.data.len() / PAGE_SIZE;
            runs.push(run);
            let zi = usize_of(u64::from(z));
            if st.zone_wp[zi] >= self.geo.zone_pages {
                // Sealed before its data lands: safe, GC only runs under `io` (this thread).
                assert_eq!(
                    st.space.get_mut().state(z),
                    UnitState::Open,
                    "sealing zone {z}"
                );
                st.open.retain(|&o| o != z);
                st.space.get_mut().seal(z);
                st.placer.get_mut().sealed(st.space.get_mut(), z);
                // The full zone's data must reach the device before the next zone's header
                // (opened by this class's next slots or by the batch's next class): ZNS would
                // see one open zone too many, and on a conventional SSD the header would land
                // inside the previous group's stream and shift every later active group
                // against the SSD superblocks (NoWA alignment). Written, not flushed: the
                // batch's one flush makes them durable.
                for r in runs.drain(..) {
                    self.write_run(&r, kind)?;
                }
            }
        }
        Ok(locs)
    }

    /// Encode as many of `slots` as zone `z` has room for, advancing its write pointer.
    fn fill_run(
        &self,
        st: &mut State,
        z: u32,
        items: &[Item],
        slots: &[Slot],
        locs: &mut Vec<(usize, Loc)>,
    ) -> Run {
        let zi = usize_of(u64::from(z));
        let base = self.zone_block(z);
        let inc = Incarnation {
            db_id: self.db_id,
            zone: z,
            seq: st.zone_seq[zi],
        };
        let first = base + st.zone_wp[zi];
        let n = usize_of(self.geo.zone_pages - st.zone_wp[zi]).min(slots.len());
        assert!(n > 0, "zone {z} is open but full");
        let mut data = vec![0u8; n * PAGE_SIZE];
        for (k, s) in slots[..n].iter().enumerate() {
            let block = first + u64_of(k);
            let buf = &mut data[k * PAGE_SIZE..(k + 1) * PAGE_SIZE];
            if s.raw {
                let it = &items[s.members[0]];
                assert!(
                    it.keep_gen.is_none(),
                    "page {}: chain elements moved are deltas",
                    it.pid
                );
                let gen = st.map.get(it.pid).next_gen();
                buf.copy_from_slice(&it.data);
                zone::seal_raw(buf, inc, gen);
                locs.push((
                    s.members[0],
                    Loc {
                        block,
                        ver: ver_of(it.lsn),
                        len: 0,
                        whole: true,
                        codec: CODEC_RAW,
                        gen: Gen::new(gen),
                    },
                ));
            } else {
                self.encode_packed(st, buf, inc, block, items, &s.members, locs);
            }
        }
        st.zone_wp[zi] += u64_of(n);
        assert!(
            st.zone_wp[zi] <= self.geo.zone_pages,
            "zone {z} written past its end"
        );
        Run {
            first,
            data,
            zone: z,
            hint: self.zone_hint(st, z),
        }
    }

    /// One packed slot: entries, payloads, header.
    #[expect(
        clippy::too_many_arguments,
        reason = "one slot's encoding needs all of them"
    )]
    fn encode_packed(
        &self,
        st: &State,
        buf: &mut [u8],
        inc: Incarnation,
        block: u64,
        items: &[Item],
        members: &[usize],
        locs: &mut Vec<(usize, Loc)>,
    ) {
        let mut off = SLOT_HDR + members.len() * SLOT_ENTRY;
        let mut pages = Vec::with_capacity(members.len());
        for &m in members {
            let it = &items[m];
            let e = SlotEntry {
                pid: it.pid,
                lsn: it.lsn,
                off: u16_of(off),
                len: u16_of(it.data.len()),
                codec: it.codec,
                gen: it.keep_gen.unwrap_or_else(|| st.map.get(it.pid).next_gen()),
            };
            locs.push((
                m,
                Loc {
                    block,
                    ver: ver_of(e.lsn),
                    len: e.len,
                    whole: members.len() == 1,
                    codec: e.codec,
                    gen: Gen::new(e.gen),
                },
            ));
            pages.push((e, &it.data[..]));
            off += it.data.len();
        }
        zone::build_packed(buf, inc, &pages);
    }

    /// Point the mapping at the new copies (they are durable), move valid bytes.
    fn commit(&self, items: &[Item], locs: Vec<(usize, Loc)>, kind: WriteKind) {
        let mut guard = self.st.write();
        let st: &mut State = &mut guard;
        for (m, loc) in locs {
            let pid = items[m].pid;
            let z = self
                .zone_of(loc.block)
                .expect("placed inside the zone area");
            if let Some(g) = items[m].keep_gen {
                self.commit_element(st, pid, g, loc, z);
                continue;
            }
            let old = st.map.get(pid);
            // A GC copy is the mapped version, moved. (A user write may carry a lower LSN
            // than the mapped copy: recovery rebuilds pages allocated after the checkpoint
            // from the log, whatever newer copy the zone scan found.)
            assert!(
                kind.is_user()
                    || (old.block != NO_BLOCK
                        && loc.ver == old.ver
                        && loc.gen.get() == old.next_gen()),
                "page {pid}: GC copy {loc:?} is not the mapped version {old:?} moved"
            );
            self.chain_on_commit(st, pid, old, &loc, kind, &items[m]);
            assert!(
                matches!(
                    st.space.get_mut().state(z),
                    UnitState::Open | UnitState::Sealed
                ),
                "page {pid} mapped into zone {z} that is neither open nor sealed"
            );
            st.space.get_mut().add_valid(z, loc.bytes());
            st.map.set(pid, loc);
            if kind.is_user() {
                st.hot_now = st.hot_now.max(items[m].hot.current.wt());
            }
            self.log_write(st, &items[m], self.zone_of(old.block), z, kind);
            assert_eq!(st.map.get(pid), loc, "page {pid}: mapping entry reads back");
        }
        kind.count(&self.counters, u64_of(items.len()), 0);
    }

    /// Write one placed run of slots (ZNS: zone append; writers are serialized by `io`, so
    /// the append lands where the run was placed).
    fn write_run(&self, r: &Run, kind: WriteKind) -> Result<()> {
        if self.zoned {
            let at = self
                .dev
                .zone_append(self.zone_block(r.zone) * BS, &r.data)?;
            if at != r.first * BS {
                return Err(EngineError::Device(DeviceError::AppendMisplaced {
                    at,
                    expected: r.first * BS,
                }));
            }
        } else {
            self.dev.write_at_hinted(r.first * BS, &r.data, r.hint)?;
        }
        kind.count_bytes(&self.counters, u64_of(r.data.len()));
        Ok(())
    }

    /// Compress a chunk of pages for writing. GDT (user writes only): append this write's
    /// timestamp to each page's write history, compute its EDT, and stamp the history into
    /// the page header copy.
    pub(super) fn prepare_batch(
        &self,
        part: &[(Pid, &[u8])],
        changed: Option<&[Option<crate::format::delta::Spans>]>,
        kind: WriteKind,
    ) -> Vec<Item> {
        let mut items = self.prepare_pages(part, kind);
        // Delta candidates: few bytes changed (whether each becomes a delta depends on its
        // chain, decided under `io`).
        if let (true, true, Some(sets)) = (self.deltas_on(), kind.is_user(), changed) {
            for ((it, &(_, d)), spans) in items.iter_mut().zip(part).zip(sets) {
                let Some(spans) = spans else {
                    continue;
                };
                // The store generation is in every delta: a raw slot stamps it, so a base
                // read back carries it while the buffer's image does not. The delta is of the
                // buffer's image, not of GDT's stamped copy: deltas do not persist the write
                // history (32 bytes each); the first delta over a base carries the buffer's
                // (`finalize_deltas`), since the base may hold a history the buffer never saw.
                use crate::format::page::{GEN_HI, GEN_LO};
                let stamped = [GEN_HI.offset..GEN_HI.end(), GEN_LO.offset..GEN_LO.end()];
                let spans = crate::format::delta::union(spans, &stamped);
                if crate::format::delta::size(&spans, 1) <= super::chain::DELTA_MAX_BYTES {
                    it.delta = Some((spans, d.to_vec()));
                }
            }
        }
        items
    }

    /// Compress a chunk of pages (GDT stamps first, see [`Self::prepare_batch`]).
    fn prepare_pages(&self, part: &[(Pid, &[u8])], kind: WriteKind) -> Vec<Item> {
        if !(self.cfg.gdt && kind.is_user()) {
            return part
                .iter()
                .map(|(p, d)| self.prepare(*p, d, u64::MAX))
                .collect();
        }
        let stamps: Vec<([u64; 4], u64, bool)> = {
            let mut st = self.st.write();
            part.iter()
                .map(|(p, d)| Self::stamp(&mut st, *p, d))
                .collect()
        };
        part.iter()
            .zip(stamps)
            .map(|((p, d), (wh, e, initial))| {
                let mut c = d.to_vec();
                page::set_history(&mut c, &wh);
                page::seal(&mut c);
                let mut it = self.prepare(*p, &c, e);
                // The engine has one B+-tree: index id 0 for every page.
                it.index = initial.then_some(0);
                it
            })
            .collect()
    }

    /// GDT: the page's new write history, its EDT, and whether this is its initial write.
    fn stamp(st: &mut State, pid: Pid, d: &[u8]) -> ([u64; 4], u64, bool) {
        let now = st.clock;
        st.clock += 1;
        let mut wh = st.wh[usize_of(pid)];
        if wh == [0; 4] {
            // First write since open: the history stored in the page header. Timestamps of
            // an earlier run are from another clock: keep only the number of writes, not
            // their spacing.
            wh = page::history(d);
            if wh.iter().any(|&x| x >= now) {
                wh = [0; 4];
            }
        }
        // Initial write: the page was never written before (no history).
        let initial = wh == [0; 4];
        wh.rotate_left(1);
        wh[3] = now;
        st.wh[usize_of(pid)] = wh;
        (wh, edt(&wh, now), initial)
    }

    pub(super) fn prepare(&self, pid: Pid, pg: &[u8], edt: u64) -> Item {
        let (codec, data) = compress_page(pg, self.cfg.compression, self.cfg.zstd_level);
        Item {
            pid,
            lsn: page::lsn(pg),
            codec,
            data,
            edt,
            index: None,
            hot: page::hotness(pg),
            class: 0,
            from: None,
            delta: None,
            keep_gen: None,
            delta_spans: Vec::new(),
            replaces_head: false,
            cum: None,
        }
    }

    /// The mapped copy of `pid` and the incarnation of its zone, read together.
    pub(super) fn locate(&self, pid: Pid) -> (Loc, u64) {
        let st = self.st.read();
        let loc = st.map.get(pid);
        let seq = self
            .zone_of(loc.block)
            .map_or(0, |z| st.zone_seq[usize_of(u64::from(z))]);
        (loc, seq)
    }

    /// Read the durable image of `pid` at `loc` (in a zone of incarnation `seq`) into `buf`
    /// (decompressing; a raw slot is checked against its incarnation and turned back into a
    /// sealed page).
    pub(super) fn read_loc(
        &self,
        pid: Pid,
        loc: Loc,
        seq: u64,
        buf: &mut [u8],
        tmp: &mut [u8],
    ) -> Result<()> {
        let inc = self.incarnation_of(pid, &loc, seq)?;
        if loc.len == 0 {
            self.dev.read_at(loc.block * BS, buf)?;
            if !zone::open_raw(buf, inc) {
                return Err(slot_damage(pid, &loc, SlotDamage::Incarnation { seq }));
            }
            return Ok(());
        }
        let (_, r) = self.read_entry(pid, loc, seq, tmp)?;
        super::decompress_page(loc.codec, &tmp[r], buf).map_err(|error| {
            slot_damage(
                pid,
                &loc,
                SlotDamage::Codec {
                    codec: loc.codec,
                    error,
                },
            )
        })
    }

    /// The incarnation a copy of `pid` at `loc` must carry: its zone's (`seq`).
    fn incarnation_of(&self, pid: Pid, loc: &Loc, seq: u64) -> Result<Incarnation> {
        let zone = self
            .zone_of(loc.block)
            .ok_or_else(|| slot_damage(pid, loc, SlotDamage::Incarnation { seq }))?;
        Ok(Incarnation {
            db_id: self.db_id,
            zone,
            seq,
        })
    }

    /// Read the packed slot holding the copy of `pid` at `loc` (a zone of incarnation `seq`)
    /// into `tmp` and find its entry (same pid, generation and codec, in a slot of that
    /// incarnation): the entry's LSN and payload range. The one slot check of every packed
    /// read (pages, chain elements, DB GC of deltas).
    pub(super) fn read_entry(
        &self,
        pid: Pid,
        loc: Loc,
        seq: u64,
        tmp: &mut [u8],
    ) -> Result<(u64, std::ops::Range<usize>)> {
        let bad = |damage| slot_damage(pid, &loc, damage);
        let inc = self.incarnation_of(pid, &loc, seq)?;
        self.dev.read_at(loc.block * BS, tmp)?;
        let e = zone::parse_packed(tmp, inc)
            .ok_or(bad(SlotDamage::Incarnation { seq }))?
            .into_iter()
            .find(|e| e.pid == pid && e.gen == loc.gen.get() && e.codec == loc.codec)
            .ok_or(bad(SlotDamage::Version {
                expected: u64::from(loc.ver),
                found: 0,
            }))?;
        let (o, n) = (usize::from(e.off), usize::from(e.len));
        // Checked when written (the mapped length is the entry's) and again here.
        if o + n > PAGE_SIZE || e.len != loc.len {
            return Err(bad(SlotDamage::EntryBounds {
                off: e.off,
                len: e.len,
            }));
        }
        Ok((e.lsn, o..o + n))
    }
}

/// The error of a slot that does not hold the expected copy of `pid` at `loc`.
fn slot_damage(pid: Pid, loc: &Loc, damage: SlotDamage) -> EngineError {
    EngineError::Corrupt(Corruption::Slot {
        block: loc.block,
        pid,
        damage,
    })
}
