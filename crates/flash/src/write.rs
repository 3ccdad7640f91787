//! The host write path: user writes (with or without a placement scheme), trims,
//! preconditioning, and the frontier bookkeeping shared with GC.

use crate::{prefetch, FlashError, Frontier, Ftl, NEVER, NONE};

impl Ftl {
    /// A checked LBA as the 32-bit index the tables use (the layout keeps the device below
    /// 2^32 pages).
    fn page32(&self, lba: u64) -> Result<u32, FlashError> {
        u32::try_from(lba).map_err(|_| FlashError::LbaOutOfRange {
            lba,
            logical: self.layout.logical_pages,
        })
    }

    fn needs_future(&self) -> Result<(), FlashError> {
        match self.placer.as_ref().map(nowa_logspace::Placer::placement) {
            Some(p) if p.needs_future() => Err(FlashError::NeedsFuture {
                placement: p.name(),
            }),
            _ => Ok(()),
        }
    }

    /// Host write of one page to `lba` on `stream` (0 on a conventional SSD).
    ///
    /// # Errors
    /// Out-of-range LBA or stream, zone rule violations, a full device, a placement scheme
    /// that needs future knowledge ([`Ftl::write_hinted`]).
    pub fn write(&mut self, lba: u64, stream: u16) -> Result<(), FlashError> {
        self.needs_future()?;
        self.write_hinted(lba, stream, NEVER)
    }

    /// [`Ftl::write`] telling the placement how many user writes remain until `lba` is
    /// overwritten next ([`NEVER`] if it is not): what the FK oracles need.
    ///
    /// # Errors
    /// As [`Ftl::write`].
    pub fn write_hinted(
        &mut self,
        lba: u64,
        stream: u16,
        next_write_in: u64,
    ) -> Result<(), FlashError> {
        self.check_lba(lba)?;
        self.check_stream(stream)?;
        if !self.zones.is_empty() {
            return self.zone_write(lba);
        }
        self.host_write(self.page32(lba)?, stream, next_write_in, true)
    }

    /// A host request of `len` consecutive pages from `start` (a trace record): the placement
    /// sees one request (SFR's sequentiality, MultiQueue's chunk counts), then each page.
    ///
    /// # Errors
    /// As [`Ftl::write`].
    pub fn write_extent(&mut self, start: u64, len: u64, stream: u16) -> Result<(), FlashError> {
        self.needs_future()?;
        self.check_stream(stream)?;
        if len == 0 {
            return Ok(());
        }
        self.check_lba(start.saturating_add(len - 1))?;
        if !self.zones.is_empty() {
            for l in start..start + len {
                self.zone_write(l)?;
            }
            return Ok(());
        }
        if let Some(p) = self.placer.as_mut() {
            p.request(&self.space, start, len);
        }
        for l in start..start + len {
            self.host_write(self.page32(l)?, stream, NEVER, false)?;
        }
        Ok(())
    }

    /// Host writes of many pages on one stream: the fast path. Looks the batch's mapping entries
    /// up before applying the writes so their cache misses overlap.
    ///
    /// # Errors
    /// As [`Ftl::write`].
    pub fn write_batch(&mut self, lbas: &[u32], stream: u16) -> Result<(), FlashError> {
        self.needs_future()?;
        self.batch(lbas, None, stream)
    }

    /// [`Ftl::write_batch`] with each page's next-overwrite distance (see
    /// [`Ftl::write_hinted`]).
    ///
    /// # Errors
    /// As [`Ftl::write`], and [`FlashError::HintCount`] when the slices differ in length.
    pub fn write_batch_hinted(
        &mut self,
        lbas: &[u32],
        next_write_in: &[u64],
        stream: u16,
    ) -> Result<(), FlashError> {
        if lbas.len() != next_write_in.len() {
            return Err(FlashError::HintCount {
                pages: lbas.len(),
                hints: next_write_in.len(),
            });
        }
        self.batch(lbas, Some(next_write_in), stream)
    }

    fn batch(
        &mut self,
        lbas: &[u32],
        hints: Option<&[u64]>,
        stream: u16,
    ) -> Result<(), FlashError> {
        assert!(
            hints.is_none_or(|h| h.len() == lbas.len()),
            "one hint per page"
        );
        self.check_stream(stream)?;
        if !self.zones.is_empty() {
            for &l in lbas {
                self.zone_write(u64::from(l))?;
            }
            return Ok(());
        }
        let n = self.layout.logical_pages;
        // A bad LBA refuses the whole batch before any page is written.
        if let Some(&l) = lbas.iter().find(|&&l| u64::from(l) >= n) {
            return Err(FlashError::LbaOutOfRange {
                lba: u64::from(l),
                logical: n,
            });
        }
        for &l in lbas.iter().take(prefetch::AHEAD) {
            self.prefetch_page(l);
        }
        for (i, &l) in lbas.iter().enumerate() {
            // The mapping line of the write AHEAD from here (and the placement's state for
            // it): its miss overlaps this write.
            if let Some(&next) = lbas.get(i + prefetch::AHEAD) {
                self.prefetch_page(next);
            }
            let hint = hints.map_or(NEVER, |h| h[i]);
            self.host_write(l, stream, hint, true)?;
        }
        Ok(())
    }

    /// Ask for the mapping line of `lba`, and the placement scheme's state for it.
    #[inline(always)]
    pub(crate) fn prefetch_page(&self, lba: u32) {
        prefetch::line(&self.l2p, lba as usize);
        if let Some(p) = self.placer.as_ref() {
            p.prefetch(u64::from(lba));
        }
    }

    #[inline]
    fn host_write(
        &mut self,
        lba: u32,
        stream: u16,
        hint: u64,
        announce: bool,
    ) -> Result<(), FlashError> {
        if !self.plain {
            return self.special_write(lba, stream, hint, announce);
        }
        self.native_write(lba, stream)
    }

    /// A write with a placement scheme or the garbage-proportion trigger (kept out of the
    /// plain path so that one flag test is all it pays).
    #[inline(never)]
    fn special_write(
        &mut self,
        lba: u32,
        stream: u16,
        hint: u64,
        announce: bool,
    ) -> Result<(), FlashError> {
        if self.placer.is_some() {
            return self.placed_write(lba, hint, announce);
        }
        self.native_write(lba, stream)?;
        match self.gp {
            Some(t) => self.gp_check(t),
            None => Ok(()),
        }
    }

    /// A host write through the streams and the write buffer.
    #[inline]
    fn native_write(&mut self, lba: u32, stream: u16) -> Result<(), FlashError> {
        self.c.host_pages += 1;
        self.space.tick(1);
        if let Some(buf) = self.buffer.as_mut() {
            if buf.touch(lba, stream) {
                self.c.buffer_absorbed += 1;
                return Ok(());
            }
            // The buffered copy is now the newest: the flash copy is garbage.
            self.invalidate(lba);
            let evicted = self.buffer.as_mut().and_then(|b| b.insert(lba, stream));
            if let Some((l, s)) = evicted {
                self.host_programs += 1;
                self.program(l, usize::from(s))?;
            }
            return Ok(());
        }
        self.host_programs += 1;
        self.program(lba, usize::from(stream))
    }

    /// A user write through the placement scheme (its `Placer` keeps the live-page count):
    /// the old copy is unmapped, then the placer runs SepBIT's `Log.append` order (the
    /// request, the clock, the invalidation, the `append` hook, `classify`) and counts the
    /// write in its class; the page is appended to that class's frontier.
    #[inline(never)]
    fn placed_write(&mut self, lba: u32, hint: u64, announce: bool) -> Result<(), FlashError> {
        self.c.host_pages += 1;
        let old = self.l2p[lba as usize];
        let old_unit = (old != 0).then(|| self.unit_of(old - 1));
        if let Some(u) = old_unit {
            self.space.sub_valid(u, 1);
            self.l2p[lba as usize] = 0;
        }
        let p = self
            .placer
            .as_mut()
            .expect("placed_write needs a placement");
        let page = u64::from(lba);
        let class = if announce {
            p.user_write(&mut self.space, page, old_unit, hint)
        } else {
            p.user_write_in_request(&mut self.space, page, old_unit, hint)
        };
        debug_assert!(
            usize::from(class) < self.frontiers.len(),
            "class {class} out of range"
        );
        self.host_programs += 1;
        self.append(lba, usize::from(class))?;
        if let Some(t) = self.gp {
            self.gp_check(t)?;
        }
        Ok(())
    }

    /// Unmap `lba` (its flash copy becomes garbage). Returns whether it was mapped.
    #[inline]
    pub(crate) fn invalidate(&mut self, lba: u32) -> bool {
        let old = self.l2p[lba as usize];
        if old == 0 {
            return false;
        }
        debug_assert_eq!(
            self.p2l.lba(old - 1),
            lba,
            "LBA {lba} -> page {} but the reverse map disagrees",
            old - 1
        );
        let u = self.unit_of(old - 1);
        self.space.sub_valid(u, 1);
        self.l2p[lba as usize] = 0;
        true
    }

    /// Write the newest version of `lba` into frontier `f`.
    #[inline]
    fn program(&mut self, lba: u32, f: usize) -> Result<(), FlashError> {
        // Unmap first: a GC round triggered below must not relocate the stale copy.
        self.invalidate(lba);
        self.append(lba, f)
    }

    /// Append a user-written `lba` (already unmapped) to frontier `f`.
    #[inline]
    pub(crate) fn append(&mut self, lba: u32, f: usize) -> Result<(), FlashError> {
        let mut fr = self.frontiers[f];
        if fr.unit == NONE || fr.wp == self.unit_pages {
            self.make_room(f)?;
            fr = self.frontiers[f];
        }
        debug_assert!(fr.wp < self.unit_pages, "room made in frontier {f}");
        debug_assert_eq!(
            self.l2p[lba as usize], 0,
            "LBA {lba} appended while still mapped (its old copy would stay valid)"
        );
        let ppn = fr.unit * self.unit_pages + fr.wp;
        self.p2l.set(ppn, lba);
        self.l2p[lba as usize] = ppn + 1;
        self.space.add_valid(fr.unit, 1);
        self.frontiers[f].wp = fr.wp + 1;
        self.c.media_pages += 1;
        Ok(())
    }

    /// Frontier `f` is full or has no unit: seal it, collect garbage if free units ran low,
    /// and open a fresh unit.
    #[cold]
    pub(crate) fn make_room(&mut self, f: usize) -> Result<(), FlashError> {
        if self.compact.is_some() {
            return self.compact_make_room();
        }
        let mut rounds = 0u32;
        loop {
            let fr = self.frontiers[f];
            let low = !self.in_gc && self.space.free_units() <= self.layout.reserved_units;
            if fr.unit != NONE && fr.wp < self.unit_pages {
                // GC may have opened a unit for this very frontier. With a placement scheme it
                // also filled others: keep collecting until the reserve is back, or free units
                // drift down one host unit at a time.
                if !(low && self.placer.is_some() && self.frontiers.len() > 1) {
                    return Ok(());
                }
            } else if fr.unit != NONE {
                self.seal_unit(fr.unit);
                self.frontiers[f].unit = NONE;
            }
            if low {
                rounds += 1;
                if rounds > 2 * self.layout.units || self.gc_round()? == 0 {
                    return Err(FlashError::DeviceFull);
                }
                // In shared mode the GC may have opened a unit for this very frontier.
                continue;
            }
            let class = u16::try_from(f).expect("fewer than 2^16 frontiers");
            let u = self.space.open_unit(class)?;
            assert_eq!(self.space.valid(u), 0, "opened unit {u} holds data");
            self.frontiers[f] = Frontier { unit: u, wp: 0 };
            if let Some(p) = self.placer.as_mut() {
                p.opened(&self.space, u);
            }
            return Ok(());
        }
    }

    /// Deallocate `len` pages from `start`. Unmapped pages are a no-op. In zoned mode only whole
    /// zones can be trimmed (= reset).
    ///
    /// # Errors
    /// Out-of-range pages; a partial-zone trim in zoned mode.
    pub fn trim(&mut self, start: u64, len: u64) -> Result<(), FlashError> {
        if len == 0 {
            return Ok(());
        }
        let end = start.saturating_add(len);
        if end > self.layout.logical_pages {
            return Err(FlashError::LbaOutOfRange {
                lba: end - 1,
                logical: self.layout.logical_pages,
            });
        }
        if !self.zones.is_empty() {
            return self.zone_trim(start, len);
        }
        for lba in start..end {
            let lba = self.page32(lba)?;
            if let Some(b) = self.buffer.as_mut() {
                if b.remove(lba) {
                    self.c.trimmed_pages += 1;
                    self.buffer_trimmed += 1;
                    continue;
                }
            }
            let old = self.l2p[lba as usize];
            if old != 0 {
                let u = self.unit_of(old - 1);
                self.invalidate(lba);
                self.c.trimmed_pages += 1;
                if let Some(p) = self.placer.as_mut() {
                    p.release(&self.space, u64::from(lba), u);
                }
            }
        }
        Ok(())
    }

    /// Write the first `pages` LBAs sequentially once (ssd-iq.md 3.1 preconditioning).
    ///
    /// # Errors
    /// As [`Ftl::write_batch`].
    pub fn precondition_sequential(&mut self, pages: u64) -> Result<(), FlashError> {
        let pages = pages.min(self.layout.logical_pages);
        let mut batch = Vec::with_capacity(4096);
        let mut lba = 0u64;
        while lba < pages {
            batch.clear();
            let end = (lba + 4096).min(pages);
            batch.extend(self.page32(lba)?..=self.page32(end - 1)?);
            self.write_batch(&batch, 0)?;
            lba = end;
        }
        Ok(())
    }
}
