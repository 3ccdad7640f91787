//! Reads checked against the model, restarts (clean and after a crash) and the checks after
//! every open.

use super::{explained, read_all, Check, Sim, Step, Stop};
use crate::model::{show, Bytes};
use crate::workload;
use nowa_device::BlockDevice;
use nowa_engine::Engine;
use rand::RngExt;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Hash of a value for the trace (None = absent).
fn value_hash(v: Option<&[u8]>) -> u64 {
    v.map_or(0x0abe_5e47, |v| {
        v.iter()
            .fold(v.len() as u64, |h, &b| nowa_units::mix64(h ^ u64::from(b)))
    })
}

impl Sim {
    pub(super) fn check_get(&mut self, e: &Engine, key: &[u8]) -> Step {
        let got = match e.get(key) {
            Ok(v) => v,
            Err(err) => return Err(self.failed(&err)),
        };
        self.trace(value_hash(got.as_deref()));
        let want = self.model.get(key);
        if self.media {
            // Media faults: data may be lost or aged (documented), never invented.
            if !self.model.plausible(key, got.as_deref()) {
                return Err(Stop::Fail(format!(
                    "get {}: returned a value of {} bytes that was never written",
                    show(key),
                    got.as_ref().map_or(0, Vec::len)
                )));
            }
        } else if got.as_ref() != want {
            return Err(Stop::Fail(format!(
                "get {}: expected {} bytes ({:x}), the engine returned {} ({:x})",
                show(key),
                want.map_or(-1, |v| i64::try_from(v.len()).unwrap_or(-1)),
                value_hash(want.map(Vec::as_slice)),
                got.as_ref()
                    .map_or(-1, |v| i64::try_from(v.len()).unwrap_or(-1)),
                value_hash(got.as_deref()),
            )));
        }
        Ok(())
    }

    pub(super) fn check_scan(
        &mut self,
        e: &Engine,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> Step {
        let got = match e.scan(start, end, limit) {
            Ok(v) => v,
            Err(err) => return Err(self.failed(&err)),
        };
        self.trace(got.len() as u64);
        let want = self.model.scan(start, end, limit);
        assert!(want.len() <= limit, "the model honours the limit");
        if self.media {
            if let Some((k, _)) = got.iter().find(|(k, v)| !self.model.plausible(k, Some(v))) {
                return Err(Stop::Fail(format!(
                    "scan from {}: key {} holds a value that was never written",
                    show(start),
                    show(k)
                )));
            }
        } else if got != want {
            let first = got
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            return Err(Stop::Fail(format!(
                "scan from {} (limit {limit}): {} pairs returned, {} expected; first difference \
                 at position {first}",
                show(start),
                got.len(),
                want.len()
            )));
        }
        Ok(())
    }

    /// The epoch ended without a crash: close (everything durable), reopen, check.
    pub(super) fn clean_restart(&mut self, e: Arc<Engine>) -> Check<Option<Arc<Engine>>> {
        self.check_classes_before_close(&e)?;
        let closed = match self.close_quiet(&e) {
            Ok(r) => r,
            Err(Stop::Fail(w)) => return Err(format!("before close: {w}")),
            Err(Stop::Crash | Stop::Explained(_)) => {
                drop(e);
                return self.crash_restart();
            }
        };
        match closed {
            Ok(()) => {
                self.model.durable();
                self.remember_classes();
            }
            Err(err) => {
                return match self.failed(&err) {
                    Stop::Fail(w) => Err(format!("close: {w}")),
                    Stop::Crash | Stop::Explained(_) => {
                        drop(e);
                        self.crash_restart()
                    }
                }
            }
        }
        drop(e);
        self.reopen()
    }

    /// After a power loss: power on, maybe crash again inside recovery, then open and check.
    pub(super) fn crash_restart(&mut self) -> Check<Option<Arc<Engine>>> {
        self.out.crashes += 1;
        assert!(
            self.out.crashes <= u64::from(self.epoch) + 1,
            "one crash per epoch at most"
        );
        self.power.power_loss();
        for d in self.power.devices() {
            d.clear_write_faults();
            d.clear_read_faults();
        }
        self.power.restart();
        self.check_zone_pointers("after the power loss")?;
        if self.r.random_range(0..100) < self.s.faults.recovery_crash_pct {
            self.out.recovery_crashes += 1;
            let n = self.r.random_range(1..=40);
            self.power.crash_after_writes(n);
            let res = self.open();
            self.trace(u64::from(res.is_ok()));
            if self.verbose {
                eprintln!(
                    "  crash at write {n} of recovery: open {}",
                    match &res {
                        Ok(_) => "completed first".to_string(),
                        Err(e) => format!("stopped: {e}"),
                    }
                );
            }
            drop(res);
            self.power.power_loss();
            self.power.restart();
            self.check_zone_pointers("after the crash inside recovery")?;
        }
        // The WAL damaged in the middle before some opens (more often with salvage on).
        let pct = if self.s.cfg.wal_damage == nowa_engine::WalDamage::Salvage {
            25
        } else {
            3
        };
        // After earlier media faults (a lost write of a later WAL block, say) the damaged
        // record may really be the log's last on the media: a torn tail is then explained
        // (seed 10,000,977).
        let clean_media = !self.media;
        self.unmarked_damage = false;
        let damaged = self.damage_wal(pct) == super::damage::WalHit::Vouched && clean_media;
        let out = self.reopen()?;
        self.unmarked_damage = false;
        if let (true, Some(e)) = (damaged, &out) {
            // Records follow the damaged block: never a torn tail, never unnoticed.
            let stop = e.recovery_report().map(|r| r.wal_stop);
            let salvaged = matches!(stop, Some(nowa_engine::WalStop::Salvaged { .. }));
            if !salvaged || self.s.cfg.wal_damage == nowa_engine::WalDamage::Refuse {
                return Err(format!(
                    "a damaged block in the middle of the WAL ({:?} mode) opened with {stop:?}",
                    self.s.cfg.wal_damage
                ));
            }
        }
        Ok(out)
    }

    /// Zoned devices: the fault injector's write pointers must equal the device's.
    fn check_zone_pointers(&self, when: &str) -> Check<()> {
        for d in self.power.devices() {
            let (Ok(shadow), Ok(inner)) = (d.zone_report(), d.inner().zone_report()) else {
                continue;
            };
            if self.verbose {
                let wp: Vec<u64> = shadow
                    .iter()
                    .map(|z| (z.write_pointer - z.start) / 4096)
                    .collect();
                let wi: Vec<u64> = inner
                    .iter()
                    .map(|z| (z.write_pointer - z.start) / 4096)
                    .collect();
                eprintln!("  {when}: shadow {wp:?}\n  {when}: inner  {wi:?}");
            }
            for (a, b) in shadow.iter().zip(&inner) {
                if a.write_pointer != b.write_pointer {
                    return Err(format!(
                        "{when}: zone at byte {}: the fault injector's write pointer is {}, \
                         the device's {}",
                        a.start, a.write_pointer, b.write_pointer
                    ));
                }
            }
        }
        Ok(())
    }

    fn trace_devices(&mut self) {
        for d in self.power.devices() {
            let c = d.counters();
            self.trace(c.host_bytes_written);
            self.trace(c.flushes);
            self.trace(c.trimmed_bytes);
        }
    }

    /// Open and check; None when the database refuses to open for a reason the faults
    /// explain (the seed ends there).
    fn reopen(&mut self) -> Check<Option<Arc<Engine>>> {
        self.check_zone_pointers("before open")?;
        self.trace_devices();
        let damaged = self.damage_snapshot(15);
        let opened = self.open();
        for d in self.power.devices() {
            d.clear_read_faults();
        }
        match opened {
            Ok(e) if damaged && !self.media => {
                let fell_back = e
                    .recovery_report()
                    .is_some_and(|r| r.snapshot_fallback.is_some());
                if !fell_back {
                    return Err("an unreadable block of the current mapping snapshot went \
                                unnoticed at open"
                        .into());
                }
                self.verify(e)
            }
            Ok(e) => self.verify(e),
            Err(err)
                if damaged
                    && matches!(err, nowa_engine::EngineError::Corrupt(_))
                    && !self.media =>
            {
                // Both snapshots unusable (the older superblock copy or its snapshot was
                // torn by the crash): refused, naming them.
                self.out.explained_errors += 1;
                self.out.refused = Some(format!("open with a damaged snapshot: {err}"));
                Ok(None)
            }
            Err(
                err @ (nowa_engine::EngineError::WalDamaged { .. }
                | nowa_engine::EngineError::SalvageRefused { .. }),
            ) if self.unmarked_damage => {
                // Damage past the last flush mark that a page on disk proves durable (or
                // later records do): refused, naming it.
                self.out.coverage.pages_ahead += u64::from(matches!(
                    err,
                    nowa_engine::EngineError::WalDamaged {
                        damage: nowa_engine::RecordDamage::PageAhead { .. },
                        ..
                    }
                ));
                self.out.explained_errors += 1;
                self.out.refused = Some(format!("open after damage past the last mark: {err}"));
                Ok(None)
            }
            Err(err) if explained(&err, self.media, self.torn_pages()) => {
                self.out.explained_errors += 1;
                self.out.refused = Some(format!("open: {err}"));
                if self.verbose {
                    eprintln!("  open refused (explained by the faults): {err}");
                }
                Ok(None)
            }
            Err(err) => Err(format!("open failed: {err}")),
        }
    }

    /// The freshly opened database against the model.
    fn verify(&mut self, e: Arc<Engine>) -> Check<Option<Arc<Engine>>> {
        assert!(!self.power.is_off(), "verified with power on");
        let store = self.slot.lock().clone();
        if let Some(st) = store.filter(|_| self.s.oop.is_some()) {
            if let Err(d) = st.check_consistency() {
                if !self.media {
                    return Err(format!("store metadata inconsistent after open: {d}"));
                }
            }
            if !self.media {
                self.check_classes_after_open(&st)?;
            }
        }
        self.classes_at_close = None;
        self.check_oracle()?;
        let db: BTreeMap<Bytes, Bytes> = match read_all(&e) {
            Ok(db) => db,
            Err(err) if explained(&err, self.media, self.torn_pages()) => {
                self.out.explained_errors += 1;
                self.out.refused = Some(format!("full scan: {err}"));
                return Ok(None);
            }
            Err(err) => return Err(format!("full scan after open failed: {err}")),
        };
        self.trace(db.len() as u64);
        for (k, v) in &db {
            self.trace(value_hash(Some(k)) ^ value_hash(Some(v)));
        }
        if self.media {
            self.model.recover_weak(db)?;
        } else {
            let lost = self.model.recover(db)?;
            self.out.lost_async += u64::try_from(lost).expect("a count");
        }
        for _ in 0..64 {
            let id = self.r.random_range(0..self.s.work.keys);
            let k = workload::key(&self.s.work, id);
            if let Err(stop) = self.check_get(&e, &k) {
                return match stop {
                    Stop::Fail(w) => Err(format!("after open: {w}")),
                    // Media faults (a lost write leaving an old inner node, say) may surface
                    // on a point read the full scan did not make (seed 3010253).
                    Stop::Explained(w) => {
                        self.out.refused = Some(format!("read after open: {w}"));
                        Ok(None)
                    }
                    Stop::Crash => Err("the power went off during the checks after open".into()),
                };
            }
        }
        Ok(Some(e))
    }

    /// After the last epoch: close, reopen, everything must be there.
    pub(super) fn final_check(&mut self, e: Arc<Engine>) -> Check<()> {
        self.liveness(&e)?;
        self.absorb(&e);
        self.check_classes_before_close(&e)?;
        self.close_quiet(&e)
            .map_err(|stop| format!("before the final close: {}", stop.what()))?
            .map_err(|err| format!("final close: {err}"))?;
        self.model.durable();
        self.remember_classes();
        drop(e);
        let Some(e) = self.reopen()? else {
            return Ok(());
        };
        self.close_quiet(&e)
            .map_err(|stop| format!("before the close after the final check: {}", stop.what()))?
            .map_err(|err| format!("close after the final check: {err}"))?;
        self.trace_devices();
        self.check_oracle()?;
        Ok(())
    }
}
