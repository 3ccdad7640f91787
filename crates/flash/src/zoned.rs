//! Zoned mode (ZNS): zones are units, writes must land on the zone's write pointer, at most
//! `max_open_zones` are open, the host resets zones, and the device never collects garbage.

use crate::{FlashError, Ftl, Mode, Zone, NONE};
use nowa_logspace::UnitState;

impl Ftl {
    /// Pages per zone.
    #[must_use]
    pub fn zone_pages(&self) -> u64 {
        u64::from(self.unit_pages)
    }
    /// Zones (0 on a conventional device).
    #[must_use]
    pub fn zone_count(&self) -> u64 {
        self.zones.len() as u64
    }
    /// Zone write pointer (pages into the zone).
    #[must_use]
    pub fn zone_write_pointer(&self, zone: u64) -> Option<u64> {
        let z = usize::try_from(zone).ok()?;
        self.zones.get(z).map(|z| u64::from(z.wp))
    }

    pub(crate) fn zone_write(&mut self, lba: u64) -> Result<(), FlashError> {
        self.check_lba(lba)?;
        let zp = u64::from(self.unit_pages);
        let (z, off) = (lba / zp, lba % zp);
        let zi = usize::try_from(z).expect("zone index below the unit count");
        let zone = self.zones[zi];
        if off != u64::from(zone.wp) {
            return Err(FlashError::ZoneViolation {
                zone: z,
                expected: u64::from(zone.wp),
                got: off,
            });
        }
        let unit = if zone.unit == NONE {
            let Mode::Zoned { max_open_zones } = self.cfg.mode else {
                unreachable!("zones exist only in zoned mode")
            };
            if self.open_zones >= max_open_zones {
                return Err(FlashError::TooManyOpenZones {
                    zone: z,
                    max: max_open_zones,
                });
            }
            // A zone's data lives in a physical unit of its own, picked from the free list.
            let u = self.space.open_unit(0)?;
            self.open_zones += 1;
            assert!(self.open_zones <= max_open_zones, "open zone limit");
            self.zones[zi].unit = u;
            u
        } else {
            zone.unit
        };
        assert_eq!(
            self.space.state(unit),
            UnitState::Open,
            "zone {z} written into unit {unit} that is not open"
        );
        let ppn = unit * self.unit_pages + zone.wp;
        let l = u32::try_from(lba).expect("checked against the logical pages");
        debug_assert_eq!(self.l2p[l as usize], 0, "zoned LBA {lba} written twice");
        self.p2l.set(ppn, l);
        self.l2p[l as usize] = ppn + 1;
        self.space.add_valid(unit, 1);
        self.c.host_pages += 1;
        self.c.media_pages += 1;
        self.host_programs += 1;
        self.space.tick(1);
        let wp = zone.wp + 1;
        self.zones[zi].wp = wp;
        if wp == self.unit_pages {
            self.seal_unit(unit);
            self.open_zones -= 1;
        }
        Ok(())
    }

    pub(crate) fn zone_trim(&mut self, start: u64, len: u64) -> Result<(), FlashError> {
        let zp = u64::from(self.unit_pages);
        if start % zp != 0 || len % zp != 0 {
            return Err(FlashError::Unsupported(
                "partial-zone trim on a zoned device (reset whole zones)",
            ));
        }
        for z in start / zp..(start + len) / zp {
            self.zone_reset(z)?;
        }
        Ok(())
    }

    /// Reset a zone: its data is gone and its write pointer returns to the start.
    ///
    /// # Errors
    /// On a conventional device, or for a zone beyond the device.
    ///
    /// # Panics
    /// If the zone's valid count disagrees with its write pointer (a bug).
    pub fn zone_reset(&mut self, zone: u64) -> Result<(), FlashError> {
        if self.zones.is_empty() {
            return Err(FlashError::Unsupported(
                "zone reset on a conventional device",
            ));
        }
        let Some(&z) = usize::try_from(zone).ok().and_then(|i| self.zones.get(i)) else {
            return Err(FlashError::LbaOutOfRange {
                lba: zone * u64::from(self.unit_pages),
                logical: self.layout.logical_pages,
            });
        };
        if z.unit == NONE {
            return Ok(());
        }
        let base_lba = zone * u64::from(self.unit_pages);
        for i in 0..u64::from(z.wp) {
            let l = crate::to_usize(base_lba + i);
            debug_assert_eq!(
                self.l2p[l].checked_sub(1).map(|p| self.unit_of(p)),
                Some(z.unit),
                "zone {zone}'s LBA {l} maps outside its unit"
            );
            self.l2p[l] = 0;
        }
        let v = self.space.valid(z.unit);
        // A zone is written once up to its pointer and never partly overwritten or trimmed.
        assert_eq!(v, z.wp, "zone {zone}: valid pages != write pointer");
        self.space.sub_valid(z.unit, v);
        if self.space.state(z.unit) == UnitState::Open {
            assert!(self.open_zones > 0, "zone {zone} open but no zone counted");
            self.open_zones -= 1;
        }
        self.c.trimmed_pages += u64::from(z.wp);
        self.erase_unit(z.unit);
        self.zones[crate::to_usize(zone)] = Zone { unit: NONE, wp: 0 };
        Ok(())
    }
}
