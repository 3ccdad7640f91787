//! DB GC: the GC reserve, victim choice, foreground GC, zone relocation, and the background
//! GC thread with its wake-up / stop signal.

use super::{edt, gc_order, Loc, OopConfig, OutOfPlaceStore, State, BS, GC_BATCH, NO_BLOCK};
use crate::error::{EngineError, Pid, Result};
use crate::page::{self, PAGE_SIZE};
use crate::stats::Counters;
use crate::store::WriteKind;
use nowa_device::DeviceError;
use parking_lot::{Condvar, Mutex};
use std::sync::{Arc, Weak};
use std::time::Duration;

#[derive(Default)]
struct BgFlags {
    stop: bool,
    kick: bool,
    /// Background GC rounds and passes finished (writers waiting for space watch these).
    rounds: u64,
    passes: u64,
    /// The thread is running (cleared when it exits).
    alive: bool,
}

/// Wakes the background GC thread (a writer saw free zones below the high watermark) or
/// stops it (close / drop).
#[derive(Default)]
pub(super) struct BgSignal {
    m: Mutex<BgFlags>,
    /// Wakes the thread.
    cv: Condvar,
    /// Signals a finished round or pass (to writers waiting for free zones).
    done: Condvar,
}

impl BgSignal {
    fn stopped(&self) -> bool {
        self.m.lock().stop
    }
    fn progress(&self, round: bool) {
        let mut f = self.m.lock();
        if round {
            f.rounds += 1;
        } else {
            f.passes += 1;
        }
        self.done.notify_all();
    }
}

/// How long a writer that would have to run GC itself waits for the background GC first.
const BG_WAIT: Duration = Duration::from_millis(50);

/// The background GC thread: a pass whenever kicked (or every 20 ms), until stopped or the
/// store is gone. It holds the store only during a pass.
fn bg_loop(weak: Weak<OutOfPlaceStore>, sig: Arc<BgSignal>) {
    struct Alive(Arc<BgSignal>);
    impl Drop for Alive {
        fn drop(&mut self) {
            self.0.m.lock().alive = false;
            self.0.done.notify_all();
        }
    }
    let _alive = Alive(sig.clone());
    loop {
        {
            let mut f = sig.m.lock();
            if !f.stop && !f.kick {
                sig.cv.wait_for(&mut f, Duration::from_millis(20));
            }
            if f.stop {
                return;
            }
            f.kick = false;
        }
        let Some(s) = weak.upgrade() else { return };
        let r = s.bg_pass();
        sig.progress(false);
        if let Err(e) = r {
            tracing::warn!(error = %e, "background DB GC stopped; foreground GC takes over");
            *s.bg_error.lock() = Some(e.to_string());
            return;
        }
    }
}

impl OutOfPlaceStore {
    /// Free zones GC keeps. NoWA: one active group (the relocated pages of a whole victim
    /// group may need a fresh group, and the group's zones come back free afterwards) plus one
    /// zone of slack for packing differences. Every zone kept free is DB over-provisioning
    /// lost: 2 x group + 1 cost DB WAF 9.6 instead of 7.2 in the uncompressed Table 1 row.
    pub(super) fn reserve_for(cfg: &OopConfig, open_limit: u32) -> u32 {
        if cfg.nowa {
            cfg.gc_reserve_zones.max(open_limit + 1)
        } else {
            cfg.gc_reserve_zones.max(2)
        }
    }

    /// The victims of one GC round: the greedy zone, or (NoWA) a whole group.
    pub(super) fn pick_victims(&self, st: &mut State) -> Result<Vec<(u32, WriteKind)>> {
        if self.cfg.nowa {
            self.pick_group(st)
        } else {
            let space = st.space.get_mut();
            let v = space.pick_victim().map_err(|_| {
                EngineError::Full("out-of-place: no GC victim (every zone fully valid)".into())
            })?;
            let mut out = vec![(v, WriteKind::Gc)];
            if self.cfg.gdt {
                // GDT GC (section 4.2): greedy victims until their garbage adds up to one
                // zone, relocated together in EDT order. Bounded so that their valid data
                // (a next victim counted as fully valid) fits the free zones but one.
                let cap = space.unit_capacity() as u64;
                let budget = (space.free_units() as u64).saturating_sub(1) * cap;
                let mut valid = space.valid(v) as u64;
                while (out.len() as u64 * cap - valid) < cap && valid + cap <= budget {
                    let Ok(n) = space.pick_victim() else { break };
                    valid += space.valid(n) as u64;
                    out.push((n, WriteKind::Gc));
                }
            }
            Ok(out)
        }
    }

    /// Foreground DB GC: greedy victims (logspace) until `reserve` zones are free (the low
    /// watermark). Caller holds `io`.
    pub(super) fn gc(&self) -> Result<()> {
        let reserve = Self::reserve_for(&self.cfg, self.open_limit);
        let mut rounds = 0u32;
        loop {
            let victims: Vec<(u32, WriteKind)> = {
                let mut guard = self.st.write();
                let st: &mut State = &mut guard;
                let due = self.due_compensation(st, false);
                if !due.is_empty() {
                    due
                } else {
                    if st.space.get_mut().free_units() >= reserve {
                        return Ok(());
                    }
                    rounds += 1;
                    if rounds > self.geo.zones * 2 {
                        return Err(EngineError::Full(
                            "out-of-place: GC cannot free a zone (data does not fit)".into(),
                        ));
                    }
                    match self.pick_victims(st) {
                        Err(EngineError::Full(_)) if !st.pending.is_empty() => {
                            self.due_compensation(st, true)
                        }
                        r => r?,
                    }
                }
            };
            Counters::add(&self.counters.gc_rounds_foreground, 1);
            self.relocate_zones(&victims)?;
        }
    }

    /// High watermark of the background GC (free zones).
    pub(super) fn high_watermark(&self) -> u32 {
        let low = Self::reserve_for(&self.cfg, self.open_limit);
        if self.cfg.gc_high_zones > low {
            self.cfg.gc_high_zones
        } else {
            low + 1
        }
    }

    /// Free zones the background GC aims for: the high watermark, but at most what the live
    /// data allows minus a margin of two zones (otherwise it would keep compacting almost
    /// fully valid zones for nothing when the store is nearly full).
    pub(super) fn bg_target(&self, st: &mut State) -> u32 {
        let open = st.open.len() as u64;
        let space = st.space.get_mut();
        let cap = space.unit_capacity().max(1) as u64;
        let valid: u64 = (0..self.geo.zones).map(|z| space.valid(z) as u64).sum();
        let reachable = (self.geo.zones as u64).saturating_sub(open + valid.div_ceil(cap) + 2);
        (self.high_watermark() as u64).min(reachable) as u32
    }

    /// One background GC pass: rounds while fewer than the target free zones are free.
    /// Takes `io` per round (one victim zone or NoWA group), so foreground writers interleave
    /// between rounds; the relocation itself is the foreground one (same crash behaviour).
    pub(super) fn bg_pass(&self) -> Result<()> {
        let mut rounds = 0u32;
        loop {
            if self.bg_sig.stopped() {
                return Ok(());
            }
            let io = self.io.lock();
            let victims: Vec<(u32, WriteKind)> = {
                let mut guard = self.st.write();
                let st: &mut State = &mut guard;
                let due = self.due_compensation(st, false);
                if !due.is_empty() {
                    due
                } else {
                    let target = self.bg_target(st);
                    if st.space.get_mut().free_units() >= target {
                        return Ok(());
                    }
                    rounds += 1;
                    if rounds > self.geo.zones * 2 {
                        return Ok(());
                    }
                    match self.pick_victims(st) {
                        Ok(v) => v,
                        // Nothing worth reclaiming now; the foreground GC decides if it is
                        // fatal.
                        Err(EngineError::Full(_)) => return Ok(()),
                        Err(e) => return Err(e),
                    }
                }
            };
            Counters::add(&self.counters.gc_rounds_background, 1);
            self.relocate_zones(&victims)?;
            parking_lot::MutexGuard::unlock_fair(io);
            self.bg_sig.progress(true);
        }
    }

    /// Start the background GC thread (no-op when `background_gc` is off or it runs).
    pub fn start_background_gc(self: &Arc<Self>) {
        if !self.cfg.background_gc {
            return;
        }
        let mut h = self.bg.lock();
        if h.is_some() || self.bg_sig.stopped() {
            return;
        }
        let weak = Arc::downgrade(self);
        let sig = self.bg_sig.clone();
        self.bg_sig.m.lock().alive = true;
        match std::thread::Builder::new()
            .name("nowa-db-gc".into())
            .spawn(move || bg_loop(weak, sig))
        {
            Ok(j) => *h = Some(j),
            Err(e) => {
                self.bg_sig.m.lock().alive = false;
                tracing::warn!(error = %e, "cannot start the background DB GC thread");
                *self.bg_error.lock() = Some(e.to_string());
            }
        }
    }

    /// Stop the background GC thread and wait for it (its current round finishes first).
    pub fn stop_background_gc(&self) {
        {
            let mut f = self.bg_sig.m.lock();
            f.stop = true;
            self.bg_sig.cv.notify_all();
        }
        let h = self.bg.lock().take();
        if let Some(h) = h {
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }

    /// Is the background GC thread running?
    pub fn background_gc_running(&self) -> bool {
        self.bg.lock().as_ref().is_some_and(|h| !h.is_finished())
    }

    /// Why the background GC thread stopped on its own (a device error), if it did.
    pub fn background_gc_error(&self) -> Option<String> {
        self.bg_error.lock().clone()
    }

    /// A writer about to run foreground GC (fewer than `reserve` free zones) first waits up
    /// to `BG_WAIT` for the background GC: until enough zones are free, or a background pass
    /// ends without getting there (then the foreground GC does the rest), or the thread is
    /// gone. So foreground GC stays the fallback and rarely runs.
    pub(super) fn wait_for_bg(&self) {
        if !self.cfg.background_gc {
            return;
        }
        let reserve = Self::reserve_for(&self.cfg, self.open_limit);
        let deadline = std::time::Instant::now() + BG_WAIT;
        let sig = &*self.bg_sig;
        let mut f = sig.m.lock();
        let passes = f.passes;
        loop {
            if f.stop || !f.alive || f.passes > passes + 1 {
                return;
            }
            if self.st.read().space.lock().free_units() >= reserve {
                return;
            }
            f.kick = true;
            sig.cv.notify_one();
            if sig.done.wait_until(&mut f, deadline).timed_out() {
                return;
            }
        }
    }

    /// Wake the background GC if free zones are below the high watermark.
    pub(super) fn kick_bg(&self, free: u32) {
        if self.cfg.background_gc && free < self.high_watermark() {
            let mut f = self.bg_sig.m.lock();
            if !f.kick {
                f.kick = true;
                self.bg_sig.cv.notify_one();
            }
        }
    }

    /// Rewrite every valid page of the victim zones (InGc) in one pass, then trim and free
    /// them. With GDT the valid pages of *all* victims are sorted by descending EDT together
    /// (section 4.2: the victims' pages are "loaded, sorted in descending EDT, grouped and
    /// packed"), so pages of equal deathtime from different victims land in the same zone.
    /// Each page keeps its victim's write kind (GC or compensation). Caller holds `io`, so
    /// the locations read here cannot change underneath.
    pub(super) fn relocate_zones(&self, victims: &[(u32, WriteKind)]) -> Result<()> {
        let valid: Vec<(Pid, Loc, WriteKind)> = {
            let mut st = self.st.write();
            let mut all = Vec::new();
            for &(v, kind) in victims {
                let mut pids = std::mem::take(&mut st.rev[v as usize]);
                pids.sort_unstable();
                pids.dedup();
                all.extend(
                    pids.into_iter()
                        .map(|p| (p, st.map[p as usize], kind))
                        .filter(|(_, l, _)| {
                            l.block != NO_BLOCK && self.zone_of(l.block) == Some(v)
                        }),
                );
            }
            all
        };
        // GDT: relocate in descending EDT order (never-rewritten pages are the coldest);
        // GC writes do not update the write history.
        let edts: Vec<u64> = if self.cfg.gdt {
            let st = self.st.read();
            valid
                .iter()
                .map(|&(p, _, _)| {
                    let wh = st.wh[p as usize];
                    let last = wh.iter().copied().max().unwrap_or(0);
                    edt(&wh, last)
                })
                .collect()
        } else {
            vec![u64::MAX; valid.len()]
        };
        // Descending EDT; without GDT every EDT is MAX and the order stays as it is.
        let order = gc_order(&edts);
        let valid: Vec<(Pid, Loc, WriteKind, u64)> = order
            .iter()
            .map(|&i| (valid[i].0, valid[i].1, valid[i].2, edts[i]))
            .collect();
        let cache = self.cache.lock().as_ref().and_then(|w| w.upgrade());
        let mut tmp = vec![0u8; PAGE_SIZE];
        let mut img = vec![0u8; PAGE_SIZE];
        for chunk in valid.chunks(GC_BATCH) {
            let mut items: [Vec<super::Item>; 2] = [Vec::new(), Vec::new()];
            for &(pid, loc, kind, page_edt) in chunk {
                // Sharing the buffer pool: a clean cached copy of this version saves the read.
                let hit = cache
                    .as_ref()
                    .is_some_and(|c| c.copy_if_clean(pid, &mut img));
                if hit && page::lsn(&img) == loc.lsn {
                    page::seal(&mut img);
                    Counters::add(&self.counters.gc_pool_hits, 1);
                } else {
                    self.read_loc(pid, loc, &mut img, &mut tmp)?;
                    Counters::add(&self.counters.gc_page_reads, 1);
                }
                page::validate(&img, pid)?;
                let k = usize::from(kind == WriteKind::Compensation);
                items[k].push(self.prepare(pid, &img, page_edt));
            }
            let [gc, comp] = items;
            self.write_items(gc, WriteKind::Gc)?;
            self.write_items(comp, WriteKind::Compensation)?;
        }
        for &(v, _) in victims {
            self.reclaim_zone(v)?;
        }
        Ok(())
    }

    /// Trim (ZNS: reset) and free a victim zone whose valid pages were all rewritten.
    fn reclaim_zone(&self, v: u32) -> Result<()> {
        let zb = self.zone_block(v);
        {
            let st = self.st.read();
            let left = st.space.lock().valid(v);
            if left != 0 {
                return Err(EngineError::Full(format!(
                    "GC of zone {v} left {left} valid bytes"
                )));
            }
        }
        if self.zoned {
            self.dev.zone_reset(zb * BS)?;
        } else {
            match self.dev.trim(zb * BS, self.geo.zone_pages * BS) {
                Ok(()) | Err(DeviceError::Unsupported(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let mut st = self.st.write();
        st.space.get_mut().erase(v);
        st.rev[v as usize].clear();
        Counters::add(&self.counters.zones_reclaimed, 1);
        Ok(())
    }
}
